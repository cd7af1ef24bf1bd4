#!/usr/bin/env bash
# The skywalking exporter's thread-stack analysis (../shared/seeds/004):
# one tree per thread by default; ids unique; every parentId names an
# element of its tree or is "0"; durationChildExcluded = duration - the
# children's durations; a tree's top counts sum to its segment's count and
# the segments to the tree's (report --json); one signature once under a
# parent; with --time, the on-CPU counts per thread equal perf script's
# samples of that thread inside the window.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
record_shape "$WORK/sw.data"
"$PERFPORT" -q report --json -i "$WORK/sw.data" >"$WORK/tree.json" || fail "report: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f skywalking -o "$WORK/an.json" ||
	fail "export skywalking: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f skywalking -O counter=on-cpu -o "$WORK/cpu.json" ||
	fail "export skywalking counter=on-cpu: exit $?"
for g in process none; do
	"$PERFPORT" -q export -i "$WORK/sw.data" -f skywalking --group-by $g -o "$WORK/by-$g.json" ||
		fail "export skywalking --group-by $g: exit $?"
done

# a window in the middle of the recording, in perf's own timestamps
perf script -i "$WORK/sw.data" -F tid,time,event 2>/dev/null | awk '/cpu-clock/ { sub(":", "", $2); print $1, $2 }' \
	>"$WORK/samples.txt"
# between the 30th and 70th percentile samples: each bound halfway between two samples
read -r T0 T1 < <(sort -k2,2n "$WORK/samples.txt" | awk '{ t[NR] = $2 } END {
	a = int(NR * 0.3); b = int(NR * 0.7)
	printf "%.6f %.6f\n", (t[a] + t[a + 1]) / 2, (t[b] + t[b + 1]) / 2 }')
"$PERFPORT" -q export -i "$WORK/sw.data" -f skywalking -O counter=on-cpu --time "$T0,$T1" \
	-o "$WORK/window.json" || fail "export skywalking --time $T0,$T1: exit $?"

$PY - "$WORK" "$T0" "$T1" <<'PY' || fail "analysis"
import collections, json, re, sys
w, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
tree = json.load(open(w + "/tree.json"))
wall = [c for c in ("on-cpu", "preempted", "lock", "io", "sleep", "timed-sleep")]

def check(path, counters, whole=True):
    a = json.load(open(path))
    if a["unit"] != "ms" or a["counters"] != [c for c in counters if tree["totals"].get(c, {}).get("count")]:
        sys.exit("%s: unit/counters %r" % (path, (a["unit"], a["counters"])))
    total = 0
    per_tid = {}
    for t in a["trees"]:
        seg = t["segment"]
        els = t["elements"]
        ids = [e["id"] for e in els]
        if len(set(ids)) != len(ids):
            sys.exit("%s: ids repeat in the tree of %s" % (path, seg["name"]))
        byid = {e["id"]: e for e in els}
        kids = collections.defaultdict(list)
        for e in els:
            if e["parentId"] != "0" and e["parentId"] not in byid:
                sys.exit("%s: parentId %s names no element" % (path, e["parentId"]))
            kids[e["parentId"]].append(e)
        for pid, ch in kids.items():
            sigs = [c["codeSignature"] for c in ch]
            if len(set(sigs)) != len(sigs):
                sys.exit("%s: a signature twice under one parent: %s" % (path, sigs))
        for e in els:
            sub = sum(c["duration"] for c in kids[e["id"]])
            if e["durationChildExcluded"] != e["duration"] - sub or e["durationChildExcluded"] < 0:
                sys.exit("%s: %s: duration %d, children %d, excluded %d" % (
                    path, e["codeSignature"], e["duration"], sub, e["durationChildExcluded"]))
            if e["count"] < sum(c["count"] for c in kids[e["id"]]):
                sys.exit("%s: %s: count below its children's" % (path, e["codeSignature"]))
        top = sum(e["count"] for e in kids["0"])
        if top != t["count"]:
            sys.exit("%s: %s: top counts %d, segment %d" % (path, seg["name"], top, t["count"]))
        if "[%d]" % seg["tid"] not in seg["name"] or not seg["pid"]:
            sys.exit("%s: segment %r" % (path, seg))
        total += t["count"]
        # a thread renamed while recorded (shape names its threads after
        # they start) has a tree per name: add them up
        per_tid[seg["tid"]] = per_tid.get(seg["tid"], 0) + t["count"]
    want = sum(tree["totals"].get(c, {}).get("count", 0) for c in counters)
    if whole and total != want:
        sys.exit("%s: segments count %d, the tree %d" % (path, total, want))
    return a, per_tid

a, _ = check(w + "/an.json", wall)
threads = {t["tid"] for t in tree["threads"] if t["pid"]}
if {t["segment"]["tid"] for t in a["trees"]} - threads:
    sys.exit("a segment for a thread that is not in the recording")
print("wall: %d trees, %d elements" % (len(a["trees"]), sum(len(t["elements"]) for t in a["trees"])))
_, cpu = check(w + "/cpu.json", ["on-cpu"])
for g in ("process", "none"):
    t = json.load(open(w + "/by-%s.json" % g))["trees"]
    want = 1 if g == "none" else len({th["pid"] for th in tree["threads"] if th["pid"]})
    if len(t) != want or sum(x["count"] for x in t) != sum(
            tree["totals"].get(c, {}).get("count", 0) for c in wall):
        sys.exit("--group-by %s: %d trees, want %d, or the counts differ" % (g, len(t), want))
    if any(re.fullmatch(r".* \[\d+\]", e["codeSignature"]) for x in t for e in x["elements"]):
        sys.exit("--group-by %s: a process or thread frame became an element" % g)
print("--group-by process: one tree per process; none: one tree")
_, win = check(w + "/window.json", ["on-cpu"], whole=False)
oracle = collections.Counter()
for line in open(w + "/samples.txt"):
    tid, ts = line.split()
    if t0 <= float(ts) <= t1:
        oracle[int(tid)] += 1
oracle = {k: v for k, v in oracle.items() if v}
if win != oracle:
    sys.exit("--time %s,%s: per-thread on-CPU counts %s, perf script %s" % (t0, t1, win, dict(oracle)))
if sum(win.values()) >= sum(cpu.values()):
    sys.exit("the window holds every sample")
print("--time: %d of %d on-CPU samples, per thread = perf script" % (sum(win.values()), sum(cpu.values())))
PY
echo "ok: skywalking analysis"
