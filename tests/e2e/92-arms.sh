#!/usr/bin/env bash
# The arms exporter's JSON lines: every
# field of the log format document (../shared/seeds/003) and only those,
# every value a string of the documented type; per type the vals sum to the
# tree's totals; name and stack give back the tree's stacks (against the
# folded export of the same file); stackIDs are stable across runs and
# equal for equal stacks.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
record_shape "$WORK/sw.data"
"$PERFPORT" -q report --json -i "$WORK/sw.data" >"$WORK/tree.json" || fail "report: exit $?"
for n in 1 2; do
	"$PERFPORT" -q export -i "$WORK/sw.data" -f arms -o "$WORK/logs$n.jsonl" \
		--label service=shape --label env=test || fail "export arms: exit $?"
done
for c in on-cpu all; do
	"$PERFPORT" -q export -i "$WORK/sw.data" -f folded -o "$WORK/$c.folded" -O counter=$c \
		-O annotate=false || fail "export folded: exit $?"
done
$PY - "$WORK" <<'PY' || fail "arms logs"
import json, re, sys
w = sys.argv[1]
FIELDS = {"aggTypes", "dataType", "durationNs", "labels", "language", "name", "profileID",
          "stack", "stackID", "type", "units", "val", "valueTypes"}
tree = json.load(open(w + "/tree.json"))
def read(path):
    logs = [json.loads(l) for l in open(path)]
    for n, l in enumerate(logs, 1):
        if set(l) != FIELDS:
            sys.exit("%s:%d: fields %s" % (path, n, sorted(set(l) ^ FIELDS)))
        if not all(isinstance(v, str) for v in l.values()):
            sys.exit("%s:%d: a value is not a string" % (path, n))
        int(l["durationNs"]); float(l["val"])
        lab = json.loads(l["labels"])
        # __name__ is the application (loongcollector always writes it), the
        # stack's thread is a label, never a frame
        if (lab.get("__name__") != "shape" or lab.get("service") != "shape" or lab.get("env") != "test"
                or "host" not in lab or not lab.get("thread") or not lab.get("tid", "").isdigit()):
            sys.exit("labels %r" % lab)
        for fr in [l["name"]] + (l["stack"].split("\n") if l["stack"] else []):
            if fr.count(" ") != 1:
                sys.exit("frame %r is not 'function position'" % fr)
            if re.search(r" \[\d+\]$", fr.split(" ")[0]):
                sys.exit("a thread became a frame: %r" % fr)
        if (l["aggTypes"], l["dataType"], l["units"]) != ("sum", "CallStack", "nanoseconds"):
            sys.exit("aggTypes/dataType/units %r" % l)
        if (l["type"], l["valueTypes"]) not in (("profile_cpu", "cpu"),
                                                ("profile_wall_clock", "wall_clock")):
            sys.exit("type/valueTypes %s/%s" % (l["type"], l["valueTypes"]))
        if not re.fullmatch(r"[1-9a-f][0-9a-f]{0,15}|0", l["stackID"]):
            sys.exit("stackID %r" % l["stackID"])
        if not re.fullmatch(r"[0-9a-f-]{36}", l["profileID"]):
            sys.exit("profileID %r" % l["profileID"])
    return logs
a, b = read(w + "/logs1.jsonl"), read(w + "/logs2.jsonl")
totals = tree["totals"]
want = {"cpu": totals.get("on-cpu", {}).get("ns", 0),
        "wall_clock": sum(v["ns"] for k, v in totals.items() if k != "idle")}
for t in ("cpu", "wall_clock"):
    got = sum(int(l["val"]) for l in a if l["valueTypes"] == t)
    print("%-10s %d logs, vals %d = tree %d" % (t, sum(1 for l in a if l["valueTypes"] == t), got, want[t]))
    if got != want[t]:
        sys.exit("%s: vals sum to %d, the tree's total is %d" % (t, got, want[t]))
def stacks(logs, vt):
    out = {}
    for l in logs:
        if l["valueTypes"] != vt:
            continue
        frames = l["stack"].split("\n")[::-1] if l["stack"] else []
        frames.append(l["name"])
        key = ";".join(f.rsplit(" ", 1)[0].replace("\u00a0", " ") for f in frames)
        out[key] = out.get(key, 0) + int(l["val"])   # one log per thread
    return sorted(out.items())
def folded(path):
    return sorted((s.rsplit(" ", 1)[0], int(s.rsplit(" ", 1)[1])) for s in open(path).read().splitlines())
fold_cpu = folded(w + "/on-cpu.folded")
if stacks(a, "cpu") != fold_cpu:
    sys.exit("cpu stacks differ from the folded export's")
# wall_clock: folded counter=all also holds idle; compare without idle-only stacks
if not {s for s, _ in stacks(a, "wall_clock")} <= {s for s, _ in folded(w + "/all.folded")}:
    sys.exit("wall_clock stacks are not the tree's")
ida = {(l["name"], l["stack"]): l["stackID"] for l in a}
threads = {json.loads(l["labels"])["tid"] for l in a}
if len(threads) < 4:
    sys.exit("logs of %d threads; shape runs more" % len(threads))
idb = {(l["name"], l["stack"]): l["stackID"] for l in b}
if ida != idb:
    sys.exit("stackIDs differ between two runs")
for l in a:
    if ida[(l["name"], l["stack"])] != l["stackID"]:
        sys.exit("one stack, two stackIDs")
if a[0]["profileID"] == b[0]["profileID"] or len({l["profileID"] for l in a}) != 1:
    sys.exit("profileID: one per export")
print("ok")
PY
# --group-by process: the process is a label, not a frame
"$PERFPORT" -q export -i "$WORK/sw.data" -f arms -o "$WORK/proc.jsonl" --group-by process \
	-O app=myapp || fail "export arms --group-by process: exit $?"
$PY - "$WORK/proc.jsonl" <<'PY' || fail "arms --group-by process"
import json, re, sys
for l in map(json.loads, open(sys.argv[1])):
    lab = json.loads(l["labels"])
    if lab.get("__name__") != "myapp" or not lab.get("pid") or "tid" in lab:
        sys.exit("labels %r" % lab)
    for fr in [l["name"]] + l["stack"].split("\n"):
        if re.match(r"shape \[\d+\] ", fr):
            sys.exit("the process became a frame: %r" % fr)
print("ok: --group-by process")
PY
echo "ok: arms"
