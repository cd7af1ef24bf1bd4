#!/usr/bin/env bash
# Containers: processes in mount and pid namespaces of their own, recorded
# with -a from the host (with and without --namespaces). Their binary lies
# only in the container's filesystem (a tmpfs mounted over a directory whose
# host copy is a decoy with other functions); a JIT writes
# /tmp/perf-NSPID.map in the container's own /tmp under its pid there;
# another maps jit-NSPID.dump; a third, in a pid namespace only, writes its
# map in the host's /tmp under its namespace pid.
#   - while the container runs: perfport names every frame as perf script
#     does (perf reads the files through the namespace too);
#   - after its processes end, while the namespace lives on (one process
#     left): perfport still names them (perf no longer can);
#   - after the container is gone: its frames stay unknown, never the
#     decoy's names, and info says why and what would name them.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
build_workload
[ "$(id -u)" = 0 ] || skip "containers need root (unshare --mount, mount -t tmpfs)"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
unshare --pid --mount --fork --mount-proc true 2>/dev/null ||
	skip "this machine cannot make pid and mount namespaces (unshare --pid --mount failed)"
command -v node >/dev/null || skip "node is not installed: the container's JITs need it"

CTR=$WORK/ctr
# the container's binary directory must not lie under /tmp, which the
# container covers with its own
BOX=$(mktemp -d /var/tmp/perfport-ctr.XXXXXX) || fail "mktemp in /var/tmp"
mkdir -p "$CTR/src"
cat >"$CTR/src/burn.c" <<'C'
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) static long ctr_inner(long n)
{
	volatile long s = 0;
	for (long i = 0; i < n; i++)
		s += i * i;
	return s;
}
__attribute__((noinline)) long ctr_outer(long n) { return ctr_inner(n) + 1; }
int main(int argc, char **argv)
{
	time_t end = time(0) + (argc > 1 ? atoi(argv[1]) : 3);
	long t = 0;
	while (time(0) < end)
		t += ctr_outer(1000000);
	return (int)(t & 1);
}
C
cat >"$CTR/src/decoy.c" <<'C'
__attribute__((noinline)) long decoy_one(long n) { volatile long s = n; while (s--) ; return s; }
__attribute__((noinline)) long decoy_two(long n) { return decoy_one(n) * 3; }
int main(void) { return (int)decoy_two(5); }
C
cat >"$CTR/src/hot.js" <<'JS'
function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003; return s; }
const end = Date.now() + Number(process.argv[2]) * 1000;
let t = 0;
while (Date.now() < end) t += hotLoop(100000);
console.log(t > 0);
JS
cc -O1 -g -fno-omit-frame-pointer -o "$CTR/src/burn" "$CTR/src/burn.c" || fail "cc burn"
# the host's file at the container's path: a decoy with other functions
cc -O1 -g -fno-omit-frame-pointer -o "$BOX/burn" "$CTR/src/decoy.c" || fail "cc decoy"

# The container: a private tmpfs over box/ (its binary) and over /tmp (its
# JIT's perf map); it says it is ready through fd 3, opened
# before /tmp is covered, then lives until killed.
cat >"$CTR/ctr.sh" <<'SH'
#!/bin/sh
src=$1 box=$2 secs=$3
exec 3>"$src/pids"
mount -t tmpfs none "$box" && cp "$src/burn" "$src/hot.js" "$box/" && cd "$box" &&
	mount -t tmpfs none /tmp || exit 1
./burn "$secs" &
node --perf-basic-prof hot.js "$secs" >/dev/null &
node --perf-prof --interpreted-frames-native-stack hot.js "$secs" >/dev/null &
echo ready >&3
exec 3>&-
wait
exec sleep 600
SH
chmod +x "$CTR/ctr.sh"
CTR_PID=
PIDNS_PID=
stop_ctr() { # SIGKILL: unshare --fork ignores SIGTERM while it waits; --kill-child then takes its namespace's init, and so all of it
	local p
	for p in $CTR_PID $PIDNS_PID; do kill -KILL "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	CTR_PID= PIDNS_PID=
}
# a failed run's work directory is kept beside the runner's logs, as every
# test's is (work_done)
trap '__rc=$?; stop_ctr; rm -rf "$BOX" $HOST_MAP; work_done $__rc' EXIT
HOST_MAP=
# the JIT alone in a pid namespace is its pid 1 and writes the host's
# /tmp/perf-1.map: two runs of this test at once (the repeat runner's
# clones, issue 52) wrote and removed each other's; one at a time
exec 9>/tmp/perfport-e2e-65.lock
flock 9

# the processes run until the test ends them (step 2, or the EXIT trap's
# stop_ctr); 600 s only bounds them should the test itself be killed. Not
# 60 s: a busy run (issue 52) reached the exports 68 s in, after burn had
# ended, and the plain recording (no namespace records) could no longer
# name it, as perf cannot either
unshare --pid --mount --fork --mount-proc --kill-child "$CTR/ctr.sh" "$CTR/src" "$BOX" 600 &
CTR_PID=$!
# a JIT in a pid namespace only: its map is the host's /tmp/perf-NSPID.map
(cd "$CTR/src" && exec unshare --pid --fork --kill-child node --perf-basic-prof hot.js 600 >/dev/null) &
PIDNS_PID=$!
for _ in $(seq 100); do grep -q ready "$CTR/src/pids" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$CTR/src/pids" || fail "the container did not start"
# ours NAME: this test's processes called NAME (those working in its box
# or its directory), not another test's run beside it
ours() {
	local p
	for p in $(pgrep -x "$1"); do
		case $(readlink "/proc/$p/cwd" 2>/dev/null) in "$BOX" | "$CTR"/*) echo "$p";; esac
	done
}
jitted() { # PID: its hot loop is in its perf map or its jitdump
	local nspid
	nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$nspid" ] || return 1
	grep -qs 'JS:\*hotLoop' "/proc/$1/root/tmp/perf-$nspid.map" ||
		grep -aqs 'JS:\*hotLoop' "/proc/$1/cwd/jit-$nspid.dump"
}
# each node has optimized its hot loop (JS:*hotLoop, '*' for optimized
# code, in its perf map or its jitdump; '~hotLoop', interpreted, comes
# first) before the recordings begin, however long a loaded machine
# takes (not a second's sleep: a node that had not yet, once, gave
# 'only 0 frames in JIT code'); 60 s at most, the processes' life
for w in $(seq 600); do
	n=0 ready=0
	for p in $(ours node); do n=$((n + 1)); jitted "$p" && ready=$((ready + 1)); done
	[ "$n" -ge 3 ] && [ "$ready" = "$n" ] && break
	sleep 0.1
done
echo "nodes with their hot loop compiled: $ready of $n (after $w looks)"
# the host's own workload beside them: frames perf script names right
record "$WORK/ns.data" -a -g -k 1 --namespaces --no-buildid -F 499 -e cpu-clock -- "$WORKLOAD" 2
record "$WORK/plain.data" -a -g -k 1 -F 499 -e cpu-clock -- "$WORKLOAD" 2
BURN=$(ours burn | head -1)
[ -n "$BURN" ] || fail "burn is not running"
# The JITs' own files are the oracle for their frames: perf (6.1) names
# none of them (it looks for a container's perf map in the host's /tmp, and
# for a pid-namespaced one under the host pid), so their threads are left
# out of the comparison with perf script. Their maps are copied now, while
# they run, under the pid each names its map by.
NODES=$(ours node | tr '\n' ' ')
[ "$(echo $NODES | wc -w)" = 3 ] || fail "want 3 node processes, have: $NODES"
NODE_TIDS=" "
MAPPED= DUMPED= MAPPED_TIDS=" "
for n in $NODES; do
	NODE_TIDS="$NODE_TIDS$(ls /proc/"$n"/task | tr '\n' ' ')"
	nspid=$(awk '/^NSpid:/ { print $NF }' /proc/"$n"/status)
	if [ -f "/proc/$n/root/tmp/perf-$nspid.map" ]; then
		cp "/proc/$n/root/tmp/perf-$nspid.map" "$WORK/map.$n"
		MAPPED="$MAPPED $n"
		MAPPED_TIDS="$MAPPED_TIDS$(ls /proc/"$n"/task | tr '\n' ' ')"
		[ "$(readlink /proc/$n/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ] &&
			HOST_MAP="$HOST_MAP /tmp/perf-$nspid.map" # the pid-namespaced one's, in our /tmp
		echo "node $n: pid $nspid in its namespace, perf-$nspid.map"
	else
		DUMPED="$DUMPED $n"
		echo "node $n: pid $nspid in its namespace, jitdump"
	fi
done
[ "$(echo $MAPPED | wc -w)" = 2 ] && [ "$(echo $DUMPED | wc -w)" = 1 ] ||
	fail "want two nodes with perf maps and one with a jitdump: maps '$MAPPED', dumps '$DUMPED'"
only() { # TIDS FILE: its stack blocks of threads TIDS (" 1 2 ") alone
	awk -v tids="$1" '
		/^[^ \t]/ { t = $0; sub(/:.*/, "", t); n = split(t, w, " "); tid = w[n - 1];
			    sub(/.*\//, "", tid); keep = index(tids, " " tid " ") > 0 }
		keep' "$2"
}
without() { # TIDS FILE: its stack blocks but those of threads TIDS (" 1 2 ")
	awk -v tids="$1" '
		/^[^ \t]/ { t = $0; sub(/:.*/, "", t); n = split(t, w, " "); tid = w[n - 1];
			    sub(/.*\//, "", tid); skip = index(tids, " " tid " ") > 0 }
		!skip' "$2"
}
jit_leaves() { # FILE.ours PID -> "JS-LEAVES SAMPLES" of the process's main thread
	awk -v p="$2" '
		/^[^ \t]/ { inblk = ($0 ~ ("/" p " ")); first = 1; if (inblk) n++; next }
		inblk && first && NF { if ($0 ~ /JS:/) js++; first = 0 }
		END { printf "%d %d\n", js, n }' "$1"
}

# 1. live: names as perf script names them, in both recordings, but for
# the container's own binary: perf reads it from the host's path (the
# decoy: _fini, main) or not at all, depending on its build-id cache and
# timing. Its frames are checked with nm on the binary instead: the
# address, less where the recording says it was mapped, in the symbol nm
# gives for it.
perf script -i "$WORK/ns.data" --show-mmap-events 2>/dev/null |
	awk -v p="$BURN" '/PERF_RECORD_MMAP2/ && $0 ~ (" " p "/") && / r-xp / && /\/burn$/' |
	head -1 >"$WORK/burn.mmap"
nm -S --defined-only "$CTR/src/burn" >"$WORK/burn.nm"
check_burn() { # STACKS.ours
	$PY - "$1" "$BURN" "$WORK/burn.mmap" "$WORK/burn.nm" <<'PY'
import re, sys
ours, pid, mmap, nmf = sys.argv[1:5]
m = re.search(r"\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ 0x([0-9a-f]+)", open(mmap).read())
if not m:
    sys.exit("FAIL: no MMAP2 of burn in the recording")
start, pgoff = int(m.group(1), 16), int(m.group(3), 16)
syms = []
for line in open(nmf):
    w = line.split()
    if len(w) == 4 and w[2] in "tTwW":
        syms.append((int(w[0], 16), int(w[1], 16), w[3]))
head = re.compile(r"^\S.*? (-?\d+)/(-?\d+) \d+\.\d{6}:")
frame = re.compile(r"^\s+([0-9a-f]+) (.*?)(?:\+0x[0-9a-f]+)? \(([^()]*)\)")
good = total = 0
bad = {}
cur, first = None, False
for line in open(ours, errors="replace"):
    h = head.match(line)
    if h:
        cur, first = h.group(1), True
        continue
    f = frame.match(line)
    if not f:
        continue
    leaf, first = first, False
    if cur != pid or not f.group(3).endswith("burn"):
        continue
    va = int(f.group(1), 16) - start + pgoff - (0 if leaf else 1)
    want = [n for a, s, n in syms if a <= va < a + max(s, 1)]
    total += 1
    if want and f.group(2) == want[0]:
        good += 1
    else:
        bad[(f.group(2), want[0] if want else None)] = bad.get((f.group(2), want[0] if want else None), 0) + 1
print(f"burn: {good} of {total} frames named as nm names their addresses")
if total < 50 or good != total:
    sys.exit(f"FAIL: burn's frames: {sorted(bad.items(), key=lambda x: -x[1])[:4]}")
PY
}
for f in plain ns; do
	HOME=$WORK "$PERFPORT" stacks -i "$WORK/$f.data" >"$WORK/$f.live.ours" || fail "$f: stacks exit $?"
	HOME=$WORK perf script -i "$WORK/$f.data" -F comm,tid,time,event,ip,sym,dso \
		>"$WORK/$f.live.perf" 2>/dev/null
	# the host's workload alone: a system-wide recording holds whatever
	# else runs on the machine (another job's bash loops, which perf and
	# perfport name apart, pulled it below 95% once)
	# (its threads by perfport's headers, "workload PID/TID TIME: ...")
	host=" $(awk '$1 == "workload" && $2 ~ /\// { sub(/.*\//, "", $2); print $2 }' "$WORK/$f.live.ours" |
		sort -u | tr '\n' ' ')"
	[ "$host" != " " ] || fail "$f: no sample of the host's workload in perfport's stacks"
	only "$host" "$WORK/$f.live.ours" >"$WORK/$f.cmp.ours"
	only "$host" "$WORK/$f.live.perf" >"$WORK/$f.cmp.perf"
	$PY "$CHECK" frames "$WORK/$f.cmp.ours" "$WORK/$f.cmp.perf" 95 ||
		fail "$f: frame names differ from perf script's while the container runs"
	check_burn "$WORK/$f.live.ours" || fail "$f: the container's binary"
	if grep -q "decoy_" "$WORK/$f.live.ours"; then fail "$f: the host's decoy named container frames"; fi
	for n in $MAPPED; do
		$PY "$CHECK" jitmap "$WORK/$f.live.ours" "$n" "$WORK/map.$n" 98 || fail "$f: node $n's JIT names"
	done
	# the dump is read from the container's root; how much of it names
	# code depends on V8's moves (code whose range two records cover stays
	# unknown: the dump's records are not matched to the samples' times)
	HOME=$WORK "$PERFPORT" -vv stacks -i "$WORK/$f.data" 2>&1 >/dev/null |
		grep "'/proc/[0-9]*/root/.*/jit-[0-9]*\.dump': [1-9][0-9]* JIT code records" >"$WORK/$f.dump" ||
		fail "$f: the container's jitdump was not read through its root"
	for n in $DUMPED; do
		read -r js tot < <(jit_leaves "$WORK/$f.live.ours" "$n")
		echo "$f: node $n: $(cat "$WORK/$f.dump"); $js of $tot leaves named JS:*"
	done
done
# Profiles name new frames on the namer's thread (-j above 1), from copies
# of what the machine said when each frame was seen, waiting for it before
# the machine changes only where a copy cannot hold it (a mount namespace):
# the export of -j 2 and 3 is -j 1's, and names the container's code.
for f in plain ns; do
	for j in 1 2 3; do
		HOME=$WORK "$PERFPORT" export -j $j -f folded -o "$WORK/$f.j$j.folded" \
			-i "$WORK/$f.data" 2>"$WORK/stderr.txt" || fail "$f: export -j $j exit $?: $(said "$WORK/stderr.txt")"
	done
	for j in 2 3; do
		cmp -s "$WORK/$f.j1.folded" "$WORK/$f.j$j.folded" ||
			fail "$f: export -j $j differs from -j 1"
	done
	grep -q "ctr_inner" "$WORK/$f.j2.folded" || fail "$f: export does not name the container's binary"
	echo "ok: $f: export -j 2 and -j 3 equal -j 1, the container's code named"
done
HOME=$WORK "$PERFPORT" info -i "$WORK/ns.data" >"$WORK/ns.info" || fail "info exit $?"
grep -q "/perfport-ctr\.[A-Za-z0-9]*/burn: container root (/proc/[0-9]*/root" "$WORK/ns.info" ||
	{ grep -A30 "^modules" "$WORK/ns.info"; fail "info does not say the binary came from the container's root"; }

# 2. the processes end; the namespace lives on in the container's shell
# KILL: the JIT alone in a pid namespace is its pid 1, which ignores a
# TERM it has no handler for (it ended of itself at 60 s before)
kill -KILL $BURN $NODES 2>/dev/null || true   # the container (its shell) lives on
# until each is gone from /proc, reaped (a dying process's cwd can no
# longer be read, so ours() stops seeing it before it is gone; 60 s at most)
left() { local p; for p in $BURN $NODES; do [ -e "/proc/$p" ] && echo "$p"; done; }
for _ in $(seq 600); do [ -n "$(left)" ] || break; sleep 0.1; done
[ -z "$(left)" ] || fail "burn or node still runs: $(left)"
HOME=$WORK "$PERFPORT" stacks -i "$WORK/ns.data" >"$WORK/ns.ended.ours" || fail "stacks exit $?"
# the container's processes alone (burn, the nodes with perf maps): the
# recording is system-wide, and another job's process that ended meanwhile
# (its binary removed with its directory) loses its names too; the
# jitdump node's names depend on V8's moves between the two reads
only "$MAPPED_TIDS$BURN " "$WORK/ns.live.ours" >"$WORK/ns.live.ctr"
only "$MAPPED_TIDS$BURN " "$WORK/ns.ended.ours" >"$WORK/ns.ended.ctr"
[ -s "$WORK/ns.live.ctr" ] || fail "no stack of the container's processes in the live stacks"
cmp -s "$WORK/ns.live.ctr" "$WORK/ns.ended.ctr" ||
	{ diff "$WORK/ns.live.ctr" "$WORK/ns.ended.ctr" | head || true; \
	  fail "names changed once the container's processes ended (its namespace still lives)"; }
HOME=$WORK perf script -i "$WORK/ns.data" -F comm,tid,time,event,ip,sym,dso 2>/dev/null |
	grep -c ctr_inner >"$WORK/perf.ended.n" || true
echo "after the processes ended: perf script names ctr_inner in $(cat "$WORK/perf.ended.n") frames, perfport in $(grep -c ctr_inner "$WORK/ns.ended.ours")"

# 3. the container is gone: its frames are unknown, never the decoy's
stop_ctr
for f in ns plain; do
	HOME=$WORK "$PERFPORT" stacks -i "$WORK/$f.data" >"$WORK/$f.gone.ours" || fail "$f: stacks exit $?"
	if grep -q "decoy_" "$WORK/$f.gone.ours"; then
		fail "$f: the host's decoy at the container's path named its frames"
	fi
	HOME=$WORK "$PERFPORT" info -i "$WORK/$f.data" >"$WORK/$f.gone.info" || fail "info exit $?"
	grep "/perfport-ctr\.[A-Za-z0-9]*/burn: not named" "$WORK/$f.gone.info" >"$WORK/$f.hint" ||
		{ grep -A30 "^modules" "$WORK/$f.gone.info"; fail "$f: info does not say the binary is missing"; }
done
grep -q "container" "$WORK/ns.hint" || fail "the hint does not say the file was in a container: $(cat "$WORK/ns.hint")"
grep -q "build-id mismatch" "$WORK/plain.hint" ||
	fail "without --namespaces the decoy is refused by its build id: $(cat "$WORK/plain.hint")"
echo "gone: $(cat "$WORK/ns.hint")"
exit 0
