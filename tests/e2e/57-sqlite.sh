#!/usr/bin/env bash
# SQLite's lock waits (src/profile/waits/35-sqlite.rules): two Python
# processes write one database (progs/sqlitewaits.py), each waiting for
# the other's write lock in SQLite's busy handler, which sleeps and tries
# again. Those sleeps are a wait for the lock: perfport's lock time of
# each process is held to the time the program measured in its BEGIN
# IMMEDIATE (at least 90 % of it; at most 110 % plus its COMMITs' time,
# which may wait for the other's read lock too), and not timed-sleep.
# --call-graph dwarf (-g loses the frames above the C library's sleep).
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
$PY -c 'import sqlite3' 2>/dev/null || skip "Python's sqlite3 module is not installed"
cat >"$WORK/two.sh" <<EOS
$PY "$TOP/tests/e2e/progs/sqlitewaits.py" 2 holder "$WORK/db" &
$PY "$TOP/tests/e2e/progs/sqlitewaits.py" 2 waiter "$WORK/db"
wait
EOS
record "$WORK/dwarf.data" -m 2048 -e cpu-clock/freq=99/ -e sched:sched_switch -e sched:sched_waking \
	--switch-events --call-graph dwarf,8192 -- sh "$WORK/two.sh"
grep "^ACCT" "$WORK/record.log" >"$WORK/acct.txt" || fail "the processes printed no accounting: $(cat "$WORK/record.log")"
"$PERFPORT" -q export -i "$WORK/dwarf.data" -f folded -O annotate=false -O counter=all -o "$WORK/all.folded" ||
	fail "export: exit $?"
grep -q "sqlite3InvokeBusyHandler\|sqliteDefaultBusyCallback" "$WORK/all.folded" ||
	skip "SQLite's busy handler is not named (a stripped libsqlite3 without its symbols: install its debug symbols)"
"$PERFPORT" -q report -i "$WORK/dwarf.data" --json --no-tree >"$WORK/dwarf.json" || fail "report: exit $?"
"$PERFPORT" -q report -i "$WORK/dwarf.data" --no-tree --top 1 >"$WORK/report.txt" || fail "report: exit $?"
$PY - "$WORK/acct.txt" "$WORK/dwarf.json" <<'PY' || fail "SQLite's lock waits"
import collections, json, sys
acct = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "ACCT":
        acct[f[1]] = (float(f[3]) * 1e6, float(f[4]) * 1e6)
r = json.load(open(sys.argv[2]))
got = collections.defaultdict(collections.Counter)
for t in r["threads"]:
    if t["comm"] in acct:
        for c, v in t["counters"].items():
            got[t["comm"]][c] += v["ns"]
bad = []
for comm, (want, commit) in sorted(acct.items()):
    c = got[comm]
    print("%s: waited %.3f s for the lock by its own clock (and %.3f s in COMMIT); perfport lock %.3f s, "
          "timed-sleep %.3f s" % (comm, want / 1e9, commit / 1e9, c["lock"] / 1e9, c["timed-sleep"] / 1e9))
    if want > 0.3e9 and not 0.9 * want <= c["lock"] <= 1.1 * want + commit:
        bad.append("%s: lock %.3f s against %.3f s (+ %.3f s in COMMIT)" % (
            comm, c["lock"] / 1e9, want / 1e9, commit / 1e9))
if sum(w for w, _ in acct.values()) < 0.5e9:
    bad.append("the processes hardly waited: %s" % acct)
if bad:
    sys.exit("; ".join(bad))
PY
has "^# runtime SQLite: its rules decided" "$WORK/report.txt" ||
	fail "report does not name SQLite's rules: $(grep '^# runtime' "$WORK/report.txt")"
echo "ok: SQLite's busy waits are lock waits"
