#!/usr/bin/env bash
# One rule for "function": report's default top functions by self are perf
# report --no-children's (code inlined into a function charged to that
# function, as its symbol column has it), each function on one line, on the
# README's first recipe (perf record -g) of CPython compiling a tree of
# modules (libpython's debug info names many inlined functions). With
# --inlined own, inlined functions are charged to themselves: still one
# line each, and the header says which rule was used.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python

# the standard library's email, json, asyncio, unittest and xml packages:
# some 4-5 s of CPU, enough samples that the top 12 seldom tie
mkdir -p "$WORK/src"
for d in email json asyncio unittest xml logging; do
	cp -r "/usr/lib/python3.11/$d" "$WORK/src/" 2>/dev/null || true
done
[ -d "$WORK/src/email" ] || skip "no /usr/lib/python3.11 to compile"
record "$WORK/py.data" -g -F 999 -e cpu-clock -- $PY -m compileall -f -q "$WORK/src" "$WORK/src" "$WORK/src"
"$PERFPORT" -q stacks -i "$WORK/py.data" >"$WORK/stacks" || fail "stacks: exit $?"
has -F "(inlined)" "$WORK/stacks" || skip "no inlined frames named in this python3 (python3-dbg not installed?)"

"$PERFPORT" -q report -i "$WORK/py.data" --no-tree --no-threads --top 12 >"$WORK/ours" || fail "report: exit $?"
"$PERFPORT" -q report -i "$WORK/py.data" --no-tree --no-threads --top 12 --inlined own >"$WORK/own" ||
	fail "report --inlined own: exit $?"
perf report -i "$WORK/py.data" --no-children --sort dso,sym -g none --stdio --percent-limit 0 \
	>"$WORK/perf" 2>"$WORK/stderr.txt" || fail "perf report: exit $?: $(said "$WORK/stderr.txt")"

$PY - "$WORK/ours" "$WORK/own" "$WORK/perf" <<'PY' || { grep -v '^$' "$WORK/ours" "$WORK/perf" | head -60; fail "report's top functions are not perf report --no-children's"; }
import re, sys
def ours(path):
    rows, on = [], False
    for l in open(path):
        if l.startswith("## on-cpu: top functions by self"):
            on = True
            continue
        if on and l.startswith("##"):
            break
        m = re.match(r"\s*([\d.]+)%\s+[\d.]+\s+[\d.]+%\s+[\d.]+\s+(.*) \((.*)\)$", l.rstrip("\n"))
        if on and m:
            rows.append((m.group(2), m.group(3), float(m.group(1))))
    return rows
def perf(path):
    rows = []
    for l in open(path):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[[.k]\] (.*\S)\s*$", l)
        if m:
            rows.append((m.group(3), m.group(2), float(m.group(1))))
    return rows
mine, own, ref = ours(sys.argv[1]), ours(sys.argv[2]), perf(sys.argv[3])
known = lambda r: not r[0].startswith("0x") and r[0] != "[unknown]"
mine, own, ref = [r for r in mine if known(r)], [r for r in own if known(r)], [r for r in ref if known(r)]
for name, rows in (("default", mine), ("--inlined own", own)):
    names = [r[0] + " (" + r[1] + ")" for r in rows]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit("%s: a function on two lines: %s" % (name, sorted(dup)))
    if any("(inlined)" in n for n in names):
        sys.exit("%s: an (inlined) line in a top table: %s" % (name, names))
top = 10
refd = {(r[0], r[1]): r[2] for r in ref}
mined = {(r[0], r[1]): r[2] for r in mine}
bad = []
# each of ours in perf's list at the same share (0.02 %: rounding), and
# perf's top 10 in ours (ties at the 10th place aside: 12 listed)
for f, m, pct in mine[:top]:
    if (f, m) not in refd or abs(refd[(f, m)] - pct) > 0.02:
        bad.append("ours %s (%s) %.2f%%, perf %s" % (f, m, pct, refd.get((f, m))))
last = mine[-1][2] if mine else 0
for f, m, pct in ref[:top]:
    if (f, m) not in mined and pct > last + 0.02:
        bad.append("perf's %s (%s) %.2f%% not in our top 12" % (f, m, pct))
if bad:
    sys.exit("\n".join(bad))
print("top %d equal to perf report --no-children's: %s" % (top, ", ".join(r[0] for r in mine[:top])))
if [r[:2] for r in own[:top]] == [r[:2] for r in mine[:top]]:
    print("note: --inlined own lists the same top %d here" % top)
PY
has "^# functions: .*charged to that one, as the symbol table and perf report --no-children" "$WORK/ours" ||
	fail "the header does not say the rule: $(grep '^# functions' "$WORK/ours")"
has "^# functions: .*charged to itself (--inlined own" "$WORK/own" || fail "the header of --inlined own"
rc=0; "$PERFPORT" report --inlined mine -i "$WORK/py.data" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && has -F "takes caller or own" "$WORK/err" || fail "--inlined mine: exit $rc, $(cat "$WORK/err")"
# --wakers on a recording without wakeups: said first (stderr, and above the
# tables), not after the whole report
"$PERFPORT" report --wakers -i "$WORK/py.data" >"$WORK/wakers.txt" 2>"$WORK/wakers.err" || fail "report --wakers: exit $?: $(said "$WORK/wakers.err")"
has -F "no wakeups with stacks recorded (record with -e sched:sched_waking" "$WORK/wakers.err" ||
	fail "report --wakers: no warning: $(cat "$WORK/wakers.err")"
w=$(grep -n '^## wakers: none recorded' "$WORK/wakers.txt" | cut -d: -f1)
t=$(grep -n '^## on-cpu: top functions' "$WORK/wakers.txt" | head -1 | cut -d: -f1)
[ -n "$w" ] && [ -n "$t" ] && [ "$w" -lt "$t" ] || fail "report --wakers: the note at line ${w:-none}, the first table at $t"
echo "ok: --wakers without wakeups said at line $w, before the tables"

# info's advice is from the recording: no "install its debug symbols" for a
# module whose debug info named its frames
"$PERFPORT" -q info -i "$WORK/py.data" >"$WORK/info.txt" || fail "info: exit $?"
$PY - "$WORK/info.txt" <<'PY' || fail "info advises installing debug info it used"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
for i, l in enumerate(lines[:-1]):
    if ", debug info " in l and "addresses in no symbol" in lines[i + 1] and "(Debian: " in lines[i + 1]:
        sys.exit("%s\n%s" % (l, lines[i + 1]))
PY
echo "ok: report's functions as perf report's"
