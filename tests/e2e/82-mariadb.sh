#!/usr/bin/env bash
# MariaDB's own accounting against perfport's states. A throwaway server
# (its own data directory, a Unix socket there, no TCP) runs 6 clients that
# update one row in turn (BEGIN; UPDATE; DO SLEEP(0.005); COMMIT: each
# waits for the row lock the others hold) and 3 idle clients (connected,
# sending nothing: their threads wait in poll() with the 8-hour
# wait_timeout). While perf records the server, a stored procedure samples
# INFORMATION_SCHEMA.INNODB_TRX every 20 ms: the share of the updating
# connections' time in LOCK WAIT must be within 5 points of perfport's
# lock share of their threads' time (with --call-graph dwarf; with -g
# --user-regs the stack ends in glibc, which keeps no frame pointers, and
# report must call that time thin evidence and say how to record it); the
# idle connections' waiting must be >= 95% sleep, both ways. Debian's
# server without its debug symbols (InnoDB's own functions unnamed).
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null ||
	skip "MariaDB is not installed (apt-get install mariadb-server)"
[ "$(id -u)" = 0 ] || skip "the server runs as root here (--user=root): needs root"
[ "$(uname -m)" = x86_64 ] || skip "the -g --user-regs registers are x86_64's"

MY="$WORK/my"
mkdir -p "$MY"
SOCK="$MY/sock"
CLI=(mariadb --no-defaults -S "$SOCK" -uroot)
PIN_SRV= PIN_CL=
if [ "$(nproc)" -ge 2 ]; then PIN_SRV="taskset -c 0"; PIN_CL="taskset -c 1"; fi
CLIENTS=()
stop_all() {
	[ ${#CLIENTS[@]} -eq 0 ] || kill "${CLIENTS[@]}" 2>/dev/null || true
	[ -f "$MY/pid" ] && kill "$(cat "$MY/pid")" 2>/dev/null || true
	for _ in $(seq 100); do [ -f "$MY/pid" ] && kill -0 "$(cat "$MY/pid")" 2>/dev/null || break; sleep 0.1; done
}
trap 'rc=$?; stop_all; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; exit $rc' EXIT
mariadb-install-db --no-defaults --datadir="$MY/data" --user=root \
	--auth-root-authentication-method=normal >"$WORK/install.log" 2>&1 ||
	{ cat "$WORK/install.log"; fail "mariadb-install-db"; }
$PIN_SRV mariadbd --no-defaults --datadir="$MY/data" --socket="$SOCK" --skip-networking \
	--user=root --pid-file="$MY/pid" --innodb-buffer-pool-size=32M --performance-schema=ON \
	--innodb-lock-wait-timeout=50 --log-error="$MY/err.log" &
for _ in $(seq 300); do "${CLI[@]}" -e 'select 1' >/dev/null 2>&1 && break; sleep 0.1; done
"${CLI[@]}" -e 'select 1' >/dev/null 2>&1 || { cat "$MY/err.log"; fail "the server did not start"; }
"${CLI[@]}" -e "create database t; create table t.r (id int primary key, v int) engine=innodb;
	insert into t.r values (1, 0);" || fail "cannot create the table"
SRV=$(cat "$MY/pid")

# os_tid FILE: the OS thread of the connection whose id FILE's first line holds
os_tid() {
	"${CLI[@]}" -N -e "select thread_os_id from performance_schema.threads where
		processlist_id = $(head -1 "$1")"
}

# connected KIND FILE...: once each client has printed its connection id
# into its FILE (10 s at most), "KIND OS-TID ID" for each into $mode.tids
connected() {
	local kind=$1 f n; shift
	for _ in $(seq 200); do
		n=$(cat "$@" 2>/dev/null | grep -c '^[0-9]' || true)
		[ "$n" -ge $# ] && break
		sleep 0.05
	done
	[ "$n" -ge $# ] || fail "$mode: $(( $# - n )) of the $# $kind clients did not connect"
	for f in "$@"; do echo "$kind $(os_tid "$f") $(head -1 "$f")" >>"$WORK/$mode.tids"; done
}

# run MODE CALL-GRAPH...: the clients for a few seconds; perf records the
# server for SECS while the sampler reads INNODB_TRX
SECS=5
run() {
	local mode=$1; shift
	local i sampler n rec
	CLIENTS=()
	$PY -c 'print("select connection_id();")
for _ in range(100000): print("BEGIN; UPDATE t.r SET v = v + 1 WHERE id = 1; DO SLEEP(0.005); COMMIT;")' \
		>"$WORK/contend.sql"
	for i in 1 2 3 4 5 6; do
		$PIN_CL "${CLI[@]}" -N --unbuffered <"$WORK/contend.sql" >"$WORK/$mode.c$i" 2>"$WORK/$mode.c$i.err" &
		CLIENTS+=($!)
	done
	: >"$WORK/$mode.tids"
	connected contend "$WORK/$mode".c{1,2,3,4,5,6}
	# the sampler loops in the server (no client round trip between its
	# sleep and its look), into a MEMORY table (no InnoDB transaction),
	# every 110 ms: INNODB_TRX is a cache that InnoDB refreshes only when
	# it was not read for 100 ms (read every 20 ms, it never changed)
	n=$((SECS * 9 - 2))
	cat >"$WORK/sample.sql" <<-EOF
		create temporary table s (id bigint, state varchar(32)) engine=memory;
		delimiter //
		create procedure sample_trx()
		begin
		  declare i int default 0;
		  while i < $n do
		    insert into s select trx_mysql_thread_id, trx_state from information_schema.innodb_trx;
		    insert into s select 0, 'SAMPLE';
		    do sleep(0.11);
		    set i = i + 1;
		  end while;
		end //
		delimiter ;
		call sample_trx();
		select id, state from s;
	EOF
	"${CLI[@]}" -N -D t <"$WORK/sample.sql" >"$WORK/$mode.samples" 2>"$WORK/$mode.sampler.err" &
	sampler=$!
	# the idle clients connect once perf records (its file begun), so
	# that their threads are seen going to wait: a thread that waits from
	# before the recording to its end is never switched, and perf sees
	# nothing of it
	perf record -q -o "$WORK/$mode.data" -m 8192 -e cpu-clock/freq=499/ -e sched:sched_switch \
		-e sched:sched_waking --switch-events "$@" -p "$SRV" -- sleep $SECS \
		>"$WORK/$mode.record.log" 2>&1 &
	rec=$!
	for _ in $(seq 200); do [ -s "$WORK/$mode.data" ] && break; sleep 0.02; done
	for i in 1 2 3; do
		{ echo "select connection_id();"; while sleep 1; do echo "select 1;"; done; } |
			$PIN_CL "${CLI[@]}" -N --unbuffered >"$WORK/$mode.i$i" 2>&1 &
		CLIENTS+=($!)
	done
	connected idle "$WORK/$mode".i{1,2,3}
	wait "$rec" || { cat "$WORK/$mode.record.log"; fail "$mode: perf record -p $SRV failed"; }
	wait "$sampler" || { cat "$WORK/$mode.sampler.err"; fail "$mode: the sampler failed"; }
	"${CLI[@]}" -D t -e "drop procedure sample_trx" || true
	kill "${CLIENTS[@]}" 2>/dev/null || true
	wait "${CLIENTS[@]}" 2>/dev/null || true
	CLIENTS=()
	[ "$(grep -c SAMPLE "$WORK/$mode.samples")" -gt 30 ] ||
		{ cat "$WORK/$mode.sampler.err"; fail "$mode: too few INNODB_TRX samples"; }
}

run dwarf --call-graph dwarf,8192
run regs -g --user-regs=di,si,dx,r10,r8,r9

for mode in dwarf regs; do
	"$PERFPORT" -q report -i "$WORK/$mode.data" --json --no-tree >"$WORK/$mode.json" ||
		fail "report $mode: exit $?"
	"$PERFPORT" -q report -i "$WORK/$mode.data" --no-tree --top 3 >"$WORK/$mode.txt" ||
		fail "report $mode: exit $?"
	$PY - "$WORK/$mode.samples" "$WORK/$mode.tids" "$WORK/$mode.json" "$mode" <<'PY' || fail "$mode: perfport's states against INNODB_TRX"
import collections, json, sys
samples, tids, report, mode = sys.argv[1:5]
role, conn = {}, {}
for line in open(tids):
    kind, tid, cid = line.split()
    role[int(tid)] = kind
    conn[int(cid)] = kind
n = 0
wait = collections.Counter()
for line in open(samples):
    f = line.rstrip("\n").split("\t")
    if len(f) != 2:
        continue
    if f[1] == "SAMPLE":
        n += 1
    elif conn.get(int(f[0])) == "contend" and f[1] == "LOCK WAIT":
        wait[int(f[0])] += 1
contenders = [c for c, k in conn.items() if k == "contend"]
trx_share = 100 * sum(wait.values()) / (n * len(contenders))
r = json.load(open(report))
pp = {k: collections.Counter() for k in ("contend", "idle")}
for t in r["threads"]:
    if t["tid"] in role:
        for c, v in t["counters"].items():
            pp[role[t["tid"]]][c] += v["ns"]
tot = sum(pp["contend"].values())
lock = 100 * pp["contend"]["lock"] / tot if tot else 0
print("%s: %d INNODB_TRX samples of %d updating connections: LOCK WAIT %.1f%% of their time; "
      "perfport lock %.1f%% (%s)" % (mode, n, len(contenders), trx_share, lock,
      ", ".join("%s %.3f s" % (c, v / 1e9) for c, v in pp["contend"].most_common())))
idle = pp["idle"]
waiting = sum(v for c, v in idle.items() if c not in ("on-cpu", "preempted"))
sleep = 100 * idle["sleep"] / waiting if waiting else 0
print("%s: idle connections' waiting %.3f s, sleep %.1f%% (%s)" % (mode, waiting / 1e9, sleep,
      ", ".join("%s %.3f s" % (c, v / 1e9) for c, v in idle.most_common())))
bad = []
assert trx_share > 30, "the clients did not contend (LOCK WAIT %.1f%%)" % trx_share
thin = r["meta"]["states_thin"].get("sleep", {}).get("ns", 0)
if mode == "dwarf" and abs(trx_share - lock) > 5:
    bad.append("lock %.1f%%, INNODB_TRX's LOCK WAIT %.1f%%" % (lock, trx_share))
elif mode == "regs" and abs(trx_share - lock) > 5:
    # -g: Debian's glibc keeps no frame pointers, so a row lock's wait
    # ends at its futex wait in pthread_cond_timedwait, without the
    # server's frames, and its waker at pthread_cond_signal: nothing says
    # lock. perfport must say so: that sleep is on thin evidence
    print("%s: the row locks' %.3f s read as sleep; report calls %.3f s of sleep thin" %
          (mode, pp["contend"]["sleep"] / 1e9, thin / 1e9))
    if thin < 0.9 * pp["contend"]["sleep"]:
        bad.append("lock %.1f%% (INNODB_TRX %.1f%%), and only %.3f s of the %.3f s of sleep "
                   "called thin" % (lock, trx_share, thin / 1e9, pp["contend"]["sleep"] / 1e9))
if waiting < 1e9 or sleep < 95:
    bad.append("idle connections %.1f%% sleep of %.3f s" % (sleep, waiting / 1e9))
if bad:
    sys.exit("; ".join(bad))
PY
	has "^# runtime MariaDB (.*mariadbd): its rules decided" "$WORK/$mode.txt" ||
		fail "$mode: report does not name the MariaDB rules: $(grep '^# runtime' "$WORK/$mode.txt")"
done
has "^# off-CPU states on thin evidence.* sleep [0-9.]* s.*--call-graph dwarf" "$WORK/regs.txt" ||
	fail "report on -g does not say the waits rest on thin evidence: $(grep '^# off-CPU' "$WORK/regs.txt")"
echo "ok: the connections' row-lock waits match INNODB_TRX's LOCK WAIT with dwarf (-g: called thin, with the way to decide them); idle clients sleep"
