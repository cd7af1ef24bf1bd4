#!/usr/bin/env bash
# report's views: the caller tree's children largest first (as perf report
# sorts them); the callee (inverted) tree; top tables by module agreeing with
# perf report --sort dso; off-CPU self time charged to the user function the
# thread waited in, not to the scheduler, and --sort state's one table of it
# by state; the thread table of a system-wide recording; --top below 1 and an
# unknown --sort refused.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
need_tracepoint
build_workload

record "$WORK/all.data" -g -e cpu-clock/freq=999/ -e sched:sched_switch "$WORKLOAD" 0.5 all
"$PERFPORT" -q report -i "$WORK/all.data" --no-threads --min-percent 0.5 >"$WORK/caller.txt" || fail "report: exit $?"
"$PERFPORT" -q report -i "$WORK/all.data" --no-threads --min-percent 0 --callee >"$WORK/callee.txt" ||
	fail "report --callee: exit $?"
"$PERFPORT" -q report -i "$WORK/all.data" --json --no-tree >"$WORK/all.json" || fail "report --json: exit $?"

$PY - "$WORK" <<'PY' || fail "report trees"
import collections, json, re, sys
w = sys.argv[1]
j = json.load(open(w + "/all.json"))
totals = {c: v["ns"] for c, v in j["totals"].items()}

def trees(path, kind):
    """{counter: [(depth, seconds, label)]} of each '## C: KIND tree' section"""
    out, cur = {}, None
    for line in open(path):
        m = re.match(r"## (\S+): (caller|callee) tree", line)
        if m:
            cur = out.setdefault(m.group(1), []) if m.group(2) == kind else None
            continue
        if line.startswith("##"):
            cur = None
            continue
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)  ( *)(\S.*)$", line)
        if cur is not None and m:
            cur.append((len(m.group(3)) // 2, float(m.group(2)), m.group(4)))
    return out

# caller trees: every node's children in non-increasing order, none larger
# than its parent
caller = trees(w + "/caller.txt", "caller")
if set(caller) != set(totals):
    sys.exit("caller trees for %s, counters %s" % (sorted(caller), sorted(totals)))
for c, rows in caller.items():
    for i, (d, v, label) in enumerate(rows):
        kids = []
        for d2, v2, l2 in rows[i + 1:]:
            if d2 <= d:
                break
            if d2 == d + 1:
                kids.append((v2, l2))
        vals = [k[0] for k in kids]
        if vals != sorted(vals, reverse=True):
            sys.exit("%s: children of %r not largest first: %s" % (c, label, kids[:6]))
        if vals and max(vals) > v + 0.0015:
            sys.exit("%s: a child of %r larger than it" % (c, label))
print("caller trees: %s, children largest first" % ", ".join("%s %d nodes" % (c, len(r)) for c, r in caller.items()))

# callee trees: the top level sums to the counter's total (nothing left out
# at --min-percent 0) and is largest first; off CPU it starts at user code
callee = trees(w + "/callee.txt", "callee")
for c, rows in callee.items():
    top = [(v, l) for d, v, l in rows if d == 0]
    s = sum(v for v, _ in top)
    if abs(s - totals[c] / 1e9) > 0.002 * len(top) + 0.002:
        sys.exit("%s: callee tree's top level sums to %.3f s, total %.3f s" % (c, s, totals[c] / 1e9))
    if [v for v, _ in top] != sorted((v for v, _ in top), reverse=True):
        sys.exit("%s: callee top level not largest first" % c)
    if c in ("lock", "io", "sleep", "timed-sleep"):
        k = [l for v, l in top if "[kernel.kallsyms]" in l]
        if k and sum(v for v, l in top if "[kernel.kallsyms]" in l) > 0.05 * s:
            sys.exit("%s: the callee tree starts in the kernel: %s" % (c, k[:3]))
print("callee trees: top levels sum to each counter's total")
PY
echo "ok: caller and callee trees"

# off-CPU top tables: where the threads waited (a user function), not the
# scheduler's leaf, which the JSON's per-frame self still holds
grep -A3 "^## lock: top functions by self" "$WORK/caller.txt" | sed -n 3p | has "kernel.kallsyms" &&
	fail "lock's top function by self is a kernel function: $(grep -A3 '^## lock: top functions by self' "$WORK/caller.txt")"
grep -A3 "^## lock: top functions by self" "$WORK/caller.txt" | sed -n 3p | has -E "libc|wlx|workload" ||
	fail "lock's top function by self is not a user function: $(grep -A3 '^## lock: top functions by self' "$WORK/caller.txt")"
echo "ok: off-CPU self time where the threads waited"

# --sort state: one off-CPU table, a column per state, each column adding up
# to its counter's total (every row listed), rows where the threads waited
"$PERFPORT" -q report -i "$WORK/all.data" --sort state --no-tree --no-threads --top 100000 >"$WORK/state.txt" ||
	fail "report --sort state: exit $?"
$PY - "$WORK/state.txt" "$WORK/all.json" <<'PY' || fail "--sort state"
import json, re, sys
lines = open(sys.argv[1]).read().split("\n")
totals = {c: v["ns"] / 1e9 for c, v in json.load(open(sys.argv[2]))["totals"].items()}
i = next(k for k, l in enumerate(lines) if l.startswith("## off-CPU: where the threads waited, by state"))
cols = lines[i + 1].split()[2:-1]
sums, rows = dict.fromkeys(cols, 0.0), 0
for l in lines[i + 2:]:
    if not l.strip():
        break
    f = l.split()
    for c, v in zip(cols, f[2:2 + len(cols)]):
        sums[c] += float(v)
    rows += 1
want = [c for c in ("preempted", "lock", "io", "sleep", "timed-sleep") if c in totals]
if cols != want:
    sys.exit("columns %s, counters %s" % (cols, want))
for c in cols:
    if abs(sums[c] - totals[c]) > 0.0006 * rows + 0.001:
        sys.exit("%s: the column sums to %.3f s, the total is %.3f s" % (c, sums[c], totals[c]))
if any(l.startswith("## lock: top") for l in lines):
    sys.exit("per-counter off-CPU tables printed too")
print("%d rows, columns %s = the totals" % (rows, ", ".join(cols)))
PY
echo "ok: --sort state"

# by module: the on-CPU self shares as perf report --sort dso gives them
record "$WORK/cpu.data" -g -e cpu-clock/freq=999/ "$WORKLOAD" 0.5 all
"$PERFPORT" -q report -i "$WORK/cpu.data" --sort module --no-tree --no-threads >"$WORK/module.txt" ||
	fail "report --sort module: exit $?"
perf report -i "$WORK/cpu.data" --stdio --no-children --sort dso -g none 2>/dev/null >"$WORK/module.perf"
$PY - "$WORK" <<'PY' || fail "--sort module"
import re, sys
w = sys.argv[1]
perf = {}
for line in open(w + "/module.perf"):
    m = re.match(r"\s+([\d.]+)%\s+(\S+)", line)
    if m:
        perf[m.group(2)] = float(m.group(1))
ours, on = {}, False
for line in open(w + "/module.txt"):
    if line.startswith("## on-cpu: top modules by self"):
        on = True
        continue
    if line.startswith("##"):
        on = False
    m = re.match(r"\s+([\d.]+)%\s+[\d.]+\s+[\d.]+%\s+[\d.]+\s+(\S+)", line)
    if on and m:
        ours[m.group(2).rsplit("/", 1)[-1]] = float(m.group(1))
if not ours:
    sys.exit("no module table")
for mod, share in perf.items():
    if share >= 1 and abs(ours.get(mod, 0) - share) > 1.0:
        sys.exit("%s: perfport %.2f%%, perf report %.2f%%" % (mod, ours.get(mod, 0), share))
print("modules: %s" % ", ".join("%s %.1f%%" % kv for kv in sorted(ours.items(), key=lambda kv: -kv[1])[:4]))
PY
echo "ok: --sort module agrees with perf report --sort dso"

rc=0; "$PERFPORT" -q report -i "$WORK/cpu.data" --top 0 >/dev/null 2>"$WORK/top.err" || rc=$?
[ $rc -eq 1 ] && grep -q "1 or more" "$WORK/top.err" || fail "--top 0: exit $rc, $(cat "$WORK/top.err")"
rc=0; "$PERFPORT" -q report -i "$WORK/cpu.data" --sort thread >/dev/null 2>"$WORK/sort.err" || rc=$?
[ $rc -eq 1 ] && grep -q "function, module or state" "$WORK/sort.err" || fail "--sort thread: exit $rc"
echo "ok: --top 0 and an unknown --sort refused"

# the thread table of a system-wide recording without switches: lifetimes
# within the recording (a thread running before it began has no start of
# its own), run time unknown rather than its wall time
"$WORKLOAD" 3 cpu &
BG=$!
sleep 0.3
record "$WORK/sw.data" -a -g -F 199 -e cpu-clock -- sleep 0.5
kill "$BG" 2>/dev/null || true; wait "$BG" 2>/dev/null || true
"$PERFPORT" -q report -i "$WORK/sw.data" --json --no-tree >"$WORK/sw.json" || fail "report -a: exit $?"
"$PERFPORT" -q report -i "$WORK/sw.data" --no-tree --top 1 >"$WORK/sw.txt" || fail "report -a: exit $?"
$PY - "$WORK/sw.json" "$WORK/sw.txt" <<'PY' || fail "system-wide thread table"
import json, re, sys
j = json.load(open(sys.argv[1]))
span = (j["meta"]["last_time"] - j["meta"]["first_time"]) / 1e9
bad = [t for t in j["threads"] if (t["end"] - t["start"]) / 1e9 > span + 1e-6 or t["run_ns"] is not None]
if bad:
    sys.exit("threads with a lifetime past the %.3f s recording or a run time: %s" % (span, bad[:2]))
rows = [l for l in open(sys.argv[2]) if re.match(r"\s+\d+\s+\d+ ", l)]
# the run column, counted from the end: a comm may hold spaces ("C1 CompilerThre")
odd = [l for l in rows if l.split()[-10] != "-"]
if not rows or odd:
    sys.exit("run column not '-': %s" % (odd or "no rows")[:2])
print("%d threads within the %.3f s recording, run unknown" % (len(j["threads"]), span))
PY
echo "ok: system-wide thread table"
