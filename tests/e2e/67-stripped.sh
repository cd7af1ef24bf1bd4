#!/usr/bin/env bash
# A stripped program whose unstripped build (the same build id) perf's
# build-id cache kept from an earlier recording: its frames are named from
# that copy's symbol table and debug info, as perf names them, not left
# unknown from the stripped file's dynamic symbols. Without the unstripped
# copy they stay unknown (perf too), and a copy with another build id is
# never used.
. "$(dirname "$0")/lib/common.sh"
need_perf
mkdir -p "$WORK/full" "$WORK/deploy" "$WORK/home" "$WORK/alone"
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/full/workload" "$TOP/samples/workload.c"
cp "$WORK/full/workload" "$WORK/deploy/workload"
strip "$WORK/deploy/workload"
rec() { HOME=${H:-$WORK/home} perf record -g -F 999 -e cpu-clock -o "$1" -- "$2" 0.3 cpu \
	>"$WORK/record.log" 2>&1 || { cat "$WORK/record.log"; fail "perf record $2"; }; }
leaves() { # the innermost named frame in the workload, per sample, as a sorted count
	HOME=${H:-$WORK/home} "$PERFPORT" -q stacks -i "$1" |
		awk '/\(.*\/deploy\/workload\)/ && !done { print $2; done = 1 } /^$/ { done = 0 }' |
		sed 's/+0x.*//' | sort | uniq -c | sort -rn
}

# 1. only the stripped program was ever recorded (a cache of its own): its
#    own functions have no names, but keep their addresses - each frame is
#    workload+0xSTART, its function's start (as nm gives it for the
#    unstripped build), so distinct functions stay distinct frames
H="$WORK/alone" rec "$WORK/alone.data" "$WORK/deploy/workload"
H="$WORK/alone" leaves "$WORK/alone.data" >"$WORK/alone.leaves"
grep -q hot_inner "$WORK/alone.leaves" && fail "a stripped program named without its symbols"
HOME="$WORK/alone" "$PERFPORT" -q stacks -i "$WORK/alone.data" |
	sed -n 's|.* \(workload+0x[0-9a-f]*\)+0x[0-9a-f]* (.*/deploy/workload)$|\1|p' | sort | uniq -c >"$WORK/alone.names"
nm "$WORK/full/workload" | awk '$2 ~ /^[tT]$/ { print $1, $3 }' |
	while read -r a f; do printf 'workload+0x%x %s\n' "$((16#$a))" "$f"; done >"$WORK/nm.names"
$PY - "$WORK/alone.names" "$WORK/nm.names" <<'PY' || fail "the stripped program's frames are not named by their functions' addresses"
import sys
got = {l.split()[1]: int(l.split()[0]) for l in open(sys.argv[1])}
nm = dict(l.split() for l in open(sys.argv[2]))
print("stripped frames: " + ", ".join("%s (%s) %d" % (n, nm.get(n, "?"), c) for n, c in sorted(got.items())))
assert got, "no workload+0x frame"
assert all(n in nm for n in got), [n for n in got if n not in nm]
assert {"hot_inner", "cpu_worker"} <= {nm[n] for n in got}, "hot_inner and cpu_worker not apart"
PY
H="$WORK/alone" "$PERFPORT" -q info -i "$WORK/alone.data" >"$WORK/alone.info"
has "^    [0-9]* of [0-9]* addresses in no symbol" "$WORK/alone.info" ||
	fail "info does not count the stripped program's unnamed addresses: $(grep -A2 deploy/workload "$WORK/alone.info")"

# 2. the unstripped build recorded first (perf caches it by build id), then
#    gone from disk: the stripped program's frames take its names
rec "$WORK/first.data" "$WORK/full/workload"
rm -rf "$WORK/full"
rec "$WORK/deploy.data" "$WORK/deploy/workload"
leaves "$WORK/deploy.data" >"$WORK/deploy.leaves"
grep -q hot_inner "$WORK/deploy.leaves" ||
	{ cat "$WORK/deploy.leaves"; fail "the cached unstripped copy's symbols were not used"; }
HOME="$WORK/home" "$PERFPORT" -q info -i "$WORK/deploy.data" >"$WORK/info.txt"
grep -q "deploy/workload: build-id cache (.*/.build-id/" "$WORK/info.txt" ||
	{ grep workload "$WORK/info.txt"; fail "info does not say the symbols came from the build-id cache"; }
# perf names them alike
HOME="$WORK/home" perf script -i "$WORK/deploy.data" -F ip,sym >"$WORK/perf.txt" 2>/dev/null || true
grep -q hot_inner "$WORK/perf.txt" ||
	fail "perf script does not name hot_inner either: the setup is wrong"
echo "ok: a stripped program is named from its cached unstripped build"
