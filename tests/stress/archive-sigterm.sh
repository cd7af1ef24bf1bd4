#!/usr/bin/env bash
# archive-sigterm.sh [N] - SIGTERM while a perf archive is unpacked, N times
# (200 unless given), alternately into perfport's cache and into a private
# directory of TMPDIR (no HOME): each run must end by SIGTERM (143; an
# abort is 134) and leave no directory behind. Prints the counts; exits 1
# if any run failed. Run as the e2e tests are (PERFPORT, TOP), or by
# 'make stress-archive'.
. "$(dirname "$0")/../e2e/lib/common.sh"
N=${1:-200}
F="$TOP/samples/offcpu.perf.data"
# 150 MB of zeros: a few KB of bzip2 that takes seconds to unpack
mkdir -p "$WORK/arc/d"
head -c 150M /dev/zero >"$WORK/arc/d/big"
tar cjf "$WORK/arc/big.tar.bz2" -C "$WORK/arc/d" big
rm -f "$WORK/arc/d/big"
aborts=0 others=0 left=0 late=0
for i in $(seq "$N"); do
	rm -rf "$WORK/cache" "$WORK/tmp"
	mkdir -p "$WORK/tmp"
	if [ $((i % 2)) = 0 ]; then
		XDG_CACHE_HOME="$WORK/cache" "$PERFPORT" -q report -i "$F" \
			--archive "$WORK/arc/big.tar.bz2" >/dev/null 2>"$WORK/err" &
		watch="$WORK/cache/perfport/archives"
	else
		env -u HOME -u XDG_CACHE_HOME TMPDIR="$WORK/tmp" "$PERFPORT" -q report -i "$F" \
			--archive "$WORK/arc/big.tar.bz2" >/dev/null 2>"$WORK/err" &
		watch="$WORK/tmp"
	fi
	pid=$!
	# the signal once the directory is there: the unpack has begun (it
	# lasts seconds, so the wait is not a race the test can lose)
	until [ -n "$(ls -A "$watch" 2>/dev/null)" ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.005
	done
	kill -TERM $pid 2>/dev/null || true
	rc=0; wait $pid || rc=$?
	case $rc in
	143) ;;
	0) late=$((late + 1));;         # ended before the signal: not a failure
	134) aborts=$((aborts + 1)); echo "run $i: aborted: $(cat "$WORK/err")";;
	*) others=$((others + 1)); echo "run $i: exit $rc: $(cat "$WORK/err")";;
	esac
	if [ $rc != 0 ] && [ -n "$(ls -A "$watch" 2>/dev/null)" ]; then
		left=$((left + 1)); echo "run $i: left $(ls -A "$watch")"
	fi
done
echo "$N SIGTERMs while unpacking: $aborts aborts, $others other ends, $left left a directory ($late ended first)"
[ $aborts = 0 ] && [ $others = 0 ] && [ $left = 0 ]
