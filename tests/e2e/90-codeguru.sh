#!/usr/bin/env bash
# The codeguru exporter's JSON (written offline; the upload is issue 6's
# next part): valid against a schema written from the format document
# (tests/e2e/schemas/codeguru.schema.json, checked with Debian's
# python3-jsonschema); counts per CodeGuru type equal the tree's totals
# (on-CPU samples exactly, off-CPU time as sample-equivalents at the
# sampling interval); an on-CPU-only recording has only RUNNABLE, a
# sched_switch one the off-CPU types; numTimesSampled and sampleWeights are
# sampling rounds as the official agents count them.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
$PY -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
build_shape
record "$WORK/on.data" -e cpu-clock/freq=997/ -g -- "$SHAPE" 1 "$WORK"
record "$WORK/off.data" -e cpu-clock/freq=997/ -e sched:sched_switch --switch-events -g -- \
	"$SHAPE" 1 "$WORK"
for f in on off; do
	"$PERFPORT" -q report --json -i "$WORK/$f.data" >"$WORK/$f.tree.json" || fail "report $f: exit $?"
	"$PERFPORT" -q export -i "$WORK/$f.data" -f codeguru -o "$WORK/$f.cg.json" \
		-O host_type=c5.xlarge || fail "export codeguru $f: exit $?"
done
"$PERFPORT" -q export -i "$WORK/off.data" -f codeguru -o "$WORK/id.cg.json" \
	-O fleet_instance_id=i-0abc123 -O interval_ms=5 || fail "export with options: exit $?"

$PY - "$TOP/tests/e2e/schemas/codeguru.schema.json" "$WORK" <<'PY' || fail "codeguru JSON"
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
w = sys.argv[2]
TYPE = {"on-cpu": "RUNNABLE", "preempted": "RUNNABLE", "lock": "BLOCKED", "io": "WAITING",
        "sleep": "WAITING", "timed-sleep": "TIMED_WAITING", "idle": "IDLE"}

def walk(node, acc, leaves):
    for t, v in node.get("counts", {}).items():
        acc[t] = acc.get(t, 0) + v
        leaves[t] = leaves.get(t, 0) + 1
    for child in node.get("children", {}).values():
        walk(child, acc, leaves)

def check(name, interval_ns=None):
    doc = json.load(open("%s/%s.cg.json" % (w, name)))
    tree = json.load(open("%s/%s.tree.json" % (w, name.split(".")[0] if name != "id" else "off")))
    jsonschema.validate(doc, schema)
    md = doc["agentMetadata"]
    if interval_ns is None:
        src = [s for s in tree["meta"]["events"] if s["role"] == "on-cpu"][0]
        interval_ns = 1e9 / src["frequency"] if src.get("frequency") else src["period"]
    got, leaves = {}, {}
    walk(doc["callgraph"], got, leaves)
    want = {}
    for c, v in tree["totals"].items():
        t = TYPE[c]
        want[t] = want.get(t, 0) + (v["count"] if c in ("on-cpu", "idle") else v["ns"] / interval_ns)
    for t in sorted(set(got) | set(want)):
        g, e = got.get(t, 0), want.get(t, 0)
        tol = 0.5 * leaves.get(t, 0) + 1   # each leaf's count is rounded
        print("%-6s %-14s %9d  tree %12.1f" % (name, t, g, e))
        if abs(g - e) > tol:
            sys.exit("%s %s: %d counted, the tree has %.1f" % (name, t, g, e))
    # as the official agents: numTimesSampled = sampling rounds over the
    # duration, sampleWeights = rounds per second for every type, so that
    # counts / sampleWeight is the time each type stands for
    secs = md["durationInMs"] / 1000
    rounds = round(secs * 1e9 / interval_ns)
    if abs(md["numTimesSampled"] - rounds) > 1:
        sys.exit("%s numTimesSampled %d, want %d rounds" % (name, md["numTimesSampled"], rounds))
    for t, wgt in md["sampleWeights"].items():
        if abs(wgt - md["numTimesSampled"] / secs) > 1e-6 * wgt:
            sys.exit("%s sampleWeights[%s] %.3f, want %.3f rounds/s" % (name, t, wgt, md["numTimesSampled"] / secs))
    for t in got:
        shown, meant = got[t] / md["sampleWeights"][t], got[t] * interval_ns / 1e9
        if abs(shown - meant) > 0.01 * meant + 0.01:
            sys.exit("%s %s: CodeGuru would show %.3f s, the counts stand for %.3f s" % (name, t, shown, meant))
    if md["fleetInfo"].get("vCPUs") != tree["meta"].get("nr_cpus", md["fleetInfo"].get("vCPUs")):
        sys.exit("%s fleetInfo.vCPUs %r" % (name, md["fleetInfo"].get("vCPUs")))
    if abs(md["cpuTimeInSeconds"] - tree["totals"].get("on-cpu", {}).get("ns", 0) / 1e9) > 1e-5:
        sys.exit("%s cpuTimeInSeconds %r" % (name, md["cpuTimeInSeconds"]))
    if doc["end"] - doc["start"] != md["durationInMs"] or md["durationInMs"] <= 0:
        sys.exit("%s: start/end/durationInMs disagree" % name)
    if md["agentInfo"]["type"] != "perfport":
        sys.exit("agentInfo.type")
    return doc, got

on, got = check("on")
if set(got) != {"RUNNABLE"}:
    sys.exit("an on-CPU-only recording has types %s" % sorted(got))
if on["agentMetadata"]["fleetInfo"]["hostType"] != "c5.xlarge":
    sys.exit("host_type option not used")
off, got = check("off")
for t in ("RUNNABLE", "BLOCKED", "WAITING", "TIMED_WAITING"):
    if not got.get(t):
        sys.exit("the sched_switch recording has no %s" % t)
idd, _ = check("id", interval_ns=5e6)
if idd["agentMetadata"]["fleetInfo"]["fleetInstanceId"] != "i-0abc123":
    sys.exit("fleet_instance_id option not used")
# frames of one name are one key: the known functions appear, kernel ones with _[k]
text = json.dumps(off)
for f in ("heavy", "light"):
    if '"%s"' % f not in text:
        sys.exit("function %s missing" % f)
if "_[k]" not in text:
    sys.exit("no kernel frame named _[k]")
print("ok")
PY
echo "ok: codeguru"
