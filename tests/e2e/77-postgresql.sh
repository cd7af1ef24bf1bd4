#!/usr/bin/env bash
# PostgreSQL's own accounting against perfport's states. A throwaway
# cluster (its own directory, a Unix socket there, no TCP) runs pgbench's
# TPC-B-like script with 12 clients on scale 1: every transaction updates
# one of one branch rows, so the backends wait mostly for row locks
# (transactionid, tuple), a little for LWLocks, WAL sync and the client.
# While perf records the 12 backends, pg_stat_activity is sampled every
# 20 ms; the share of the backends' time in each category must be within
# 5 points of perfport's states (Lock + LWLock = lock, IO = io, Client +
# Activity = sleep, Timeout = timed-sleep), with --call-graph dwarf and
# with -g --user-regs. The backends run on CPU 0, pgbench and the sampler
# on CPU 1: a sampler that competes with the backends for their CPU sees
# them when they are not running (measured: 5-8 points of lost CPU time).
# Also: report --wakers --pid keeps the wakers outside the filter (the
# clients that end the backends' reads).
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pgbench" ] ||
	skip "PostgreSQL is not installed (apt-get install postgresql)"
[ "$(id -u)" = 0 ] || skip "the cluster runs as the postgres user: needs root"
id postgres >/dev/null 2>&1 || skip "no postgres user (apt-get install postgresql creates it)"
[ "$(uname -m)" = x86_64 ] || skip "the -g --user-regs registers are x86_64's"

PG="$WORK/pg"
mkdir -p "$PG"
chmod 755 "$WORK"
chown postgres "$PG"
AS="runuser -u postgres --"
PGH=(-h "$PG" -U postgres)
PIN_PG= PIN_CL=
if [ "$(nproc)" -ge 2 ]; then PIN_PG="taskset -c 0"; PIN_CL="taskset -c 1"; fi
stop_pg() { $AS "$PGBIN/pg_ctl" -D "$PG/data" -m immediate stop >/dev/null 2>&1 || true; }
trap 'rc=$?; stop_pg; work_done $rc; exit $rc' EXIT
$AS "$PGBIN/initdb" -D "$PG/data" -A trust -U postgres >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log"; fail "initdb"; }
$AS $PIN_PG "$PGBIN/pg_ctl" -D "$PG/data" -l "$PG/log" -w \
	-o "-k $PG -c listen_addresses='' -c max_connections=40" start >/dev/null ||
	{ cat "$PG/log"; fail "the cluster did not start"; }
$AS "$PGBIN/pgbench" "${PGH[@]}" -i -s 1 postgres >"$WORK/init.log" 2>&1 ||
	{ cat "$WORK/init.log"; fail "pgbench -i"; }

# run MODE CALL-GRAPH...: pgbench until the sampler and perf are done,
# stopped then (a pgbench -T 7 gave finding its backends and starting the
# sampler 4 s before perf had to attach, a window the machine's load
# decides; 0.8-1.0 s measured at load 10, printed in the log); perf records
# its 12 backends (and pgbench itself: its wakeups of them) for SECS while
# the sampler reads pg_stat_activity
SECS=3
run() {
	local mode=$1; shift
	local pids="" spid sampler bench bpid n t0
	t0=$(date +%s%N)
	# -T: only a bound, should the test die without stopping it
	$AS $PIN_CL "$PGBIN/pgbench" "${PGH[@]}" -c 12 -j 2 -T 600 -n postgres \
		>"$WORK/$mode.bench" 2>&1 &
	bench=$!
	for _ in $(seq 100); do
		pids=$($AS "$PGBIN/psql" "${PGH[@]}" -At -c "select string_agg(pid::text, ',') from
			pg_stat_activity where application_name = 'pgbench' and
			backend_type = 'client backend'" postgres)
		[ "$(echo "$pids" | tr ',' '\n' | grep -c .)" -ge 12 ] && break
		sleep 0.1
	done
	[ "$(echo "$pids" | tr ',' '\n' | grep -c .)" -ge 12 ] || fail "$mode: pgbench's 12 backends did not start"
	echo "$pids" >"$WORK/$mode.pids"
	# the sampler loops in its backend (no client round trip between its
	# sleep and its look), which runs on the backends' CPU, first when it wakes
	n=$((SECS * 50 - 10))
	cat >"$WORK/sample.sql" <<-EOF
		select 'PID|' || pg_backend_pid();
		select pg_sleep(0.2);
		create temp table s (pid int, type text, event text);
		do \$\$ begin
		  for i in 1..$n loop
		    perform pg_stat_clear_snapshot();
		    insert into s select pid, coalesce(wait_event_type, 'CPU'), coalesce(wait_event, '')
		      from pg_stat_activity where application_name = 'pgbench'
		      and backend_type = 'client backend';
		    perform pg_sleep(0.02);
		  end loop;
		end \$\$;
		select * from s;
	EOF
	$AS "$PGBIN/psql" "${PGH[@]}" -q -At -F '|' -f "$WORK/sample.sql" postgres \
		>"$WORK/$mode.raw" 2>"$WORK/$mode.sampler.err" &
	sampler=$!
	for _ in $(seq 100); do has '^PID|' "$WORK/$mode.raw" && break; sleep 0.02; done
	spid=$(sed -n 's/^PID|//p' "$WORK/$mode.raw")
	[ -z "$spid" ] || chrt -f -p 1 "$spid" 2>/dev/null || true
	# pgbench: this run's (runuser's child), not every pgbench of the machine:
	# another run's, beside this one, may end before perf attaches to it
	bpid=$(pgrep -x pgbench -P "$bench") || { cat "$WORK/$mode.bench"; fail "$mode: pgbench is not running"; }
	echo "$mode: perf attaches $(( ($(date +%s%N) - t0) / 1000000 )) ms after pgbench started"
	record "$WORK/$mode.data" -m 8192 -e cpu-clock/freq=499/ -e sched:sched_switch \
		-e sched:sched_waking --switch-events "$@" -p "$pids,$bpid" -- sleep $SECS
	wait "$sampler" || true
	# pgbench ran throughout: stopped now, it must not have failed before
	kill -0 "$bpid" 2>/dev/null || { cat "$WORK/$mode.bench"; fail "$mode: pgbench ended before it was stopped"; }
	kill "$bpid"
	wait "$bench" || true
	! has -i 'error\|abort' "$WORK/$mode.bench" || { cat "$WORK/$mode.bench"; fail "$mode: pgbench failed"; }
	grep -v '^PID\|^$\|^DO$\|^CREATE' "$WORK/$mode.raw" >"$WORK/$mode.samples" || true
	[ "$(wc -l <"$WORK/$mode.samples")" -gt 600 ] ||
		{ cat "$WORK/$mode.sampler.err"; fail "$mode: too few pg_stat_activity samples"; }
}

run dwarf --call-graph dwarf,4096
run regs -g --user-regs=di,si,dx,r10,r8,r9
stop_pg

for mode in dwarf regs; do
	"$PERFPORT" -q report -i "$WORK/$mode.data" --json --no-tree >"$WORK/$mode.json" ||
		fail "report $mode: exit $?"
	"$PERFPORT" -q report -i "$WORK/$mode.data" --pid "$(cat "$WORK/$mode.pids")" --no-tree \
		--top 3 >"$WORK/$mode.txt" || fail "report $mode: exit $?"
	$PY - "$WORK/$mode.samples" "$WORK/$mode.json" "$mode" <<'PY' || fail "$mode: perfport's states against pg_stat_activity"
import collections, json, sys
samples, report, mode = sys.argv[1:4]
# pg's wait event types as perfport's states; the ProcArray and CLOG group
# updates (IPC) wait for a leader that holds their LWLock: lock
STATE = {"Lock": "lock", "LWLock": "lock", "BufferPin": "lock", "IO": "io", "Client": "sleep",
         "Activity": "sleep", "Timeout": "timed-sleep", "CPU": "cpu"}
IPC_LOCK = {"ProcArrayGroupUpdate", "XactGroupUpdate"}
pg, events, pids = collections.Counter(), collections.Counter(), set()
for line in open(samples):
    f = line.rstrip("\n").split("|")
    if len(f) != 3:
        continue
    pids.add(int(f[0]))
    typ, name = f[1], f[2]
    pg["lock" if typ == "IPC" and name in IPC_LOCK else STATE.get(typ, "other")] += 1
    events[typ + (":" + name if name else "")] += 1
n = sum(pg.values())
r = json.load(open(report))
pp = collections.Counter()
for t in r["threads"]:
    if t["pid"] in pids:
        for c, v in t["counters"].items():
            pp["cpu" if c in ("on-cpu", "preempted") else c] += v["ns"]
tot = sum(pp.values())
assert len(pids) == 12 and tot > 0, (len(pids), tot)
print("%s: %d pg_stat_activity samples of %d backends; perfport %.1f s of their time" %
      (mode, n, len(pids), tot / 1e9))
print("  pg's wait events: " + ", ".join("%s %.1f%%" % (k, 100 * v / n) for k, v in events.most_common(8)))
bad = []
for c in ("lock", "io", "sleep", "timed-sleep", "cpu", "other"):
    a, b = 100 * pg[c] / n, 100 * pp[c] / tot
    print("  %-12s pg %5.1f%%  perfport %5.1f%%" % (c, a, b))
    if c not in ("cpu", "other") and abs(a - b) > 5:
        bad.append("%s: pg %.1f%%, perfport %.1f%%" % (c, a, b))
# the workload is what it should be: mostly row locks
assert pg["lock"] > 0.5 * n, "pgbench did not contend: %s" % dict(pg)
if bad:
    sys.exit("; ".join(bad))
PY
	has "^# off-CPU states decided by: .*program rules" "$WORK/$mode.txt" ||
		fail "$mode: report does not say the program rules decided: $(grep decided "$WORK/$mode.txt")"
	has "^# runtime PostgreSQL (.*postgres): its rules decided" "$WORK/$mode.txt" ||
		fail "$mode: report does not name the PostgreSQL rules"
done
echo "ok: the backends' states match pg_stat_activity's wait events (dwarf and -g --user-regs)"

# who ended the backends' waits, with --pid choosing the backends: the
# client (pgbench, outside the filter) ends their reads
"$PERFPORT" -q report -i "$WORK/regs.data" --pid "$(cat "$WORK/regs.pids")" --wakers --json \
	--no-tree >"$WORK/wakers.json" || fail "report --wakers --pid: exit $?"
$PY - "$WORK/wakers.json" <<'PY' || fail "report --wakers --pid dropped the waits ended by pgbench"
import json, sys
r = json.load(open(sys.argv[1]))
for c in ("sleep", "lock"):
    waits = sum(t["counters"].get(c, {}).get("count", 0) for t in r["threads"])
    paired = sum(w["count"] for w in r["wakers"] if w["counter"] == c)
    print("backends' %s waits: %d, %d of them paired with their waker" % (c, waits, paired))
    # (a wait whose waking the kernel did not trace stays unpaired)
    assert waits and paired >= 0.9 * waits, (c, waits, paired)
PY
"$PERFPORT" -q info -i "$WORK/regs.data" >"$WORK/info.txt" || fail "info: exit $?"
has "^  PostgreSQL (.*postgres): its wait functions decide" "$WORK/info.txt" ||
	fail "info does not say it recognised PostgreSQL: $(sed -n '/^runtimes/,$p' "$WORK/info.txt")"
echo "ok: wakers outside --pid kept; info recognises PostgreSQL"
