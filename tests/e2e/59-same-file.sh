#!/usr/bin/env bash
# A file the recording gave no build id names its frames only when it is
# the recorded file: recorded on this host, with the device and inode its
# MMAP2 records give; or --symfs gives it, or --trust-paths says so.
# Otherwise its frames stay unnamed (MODULE+0xOFFSET) and info says why.
. "$(dirname "$0")/lib/common.sh"
need_perf
mkdir -p "$WORK/home"
src=$TOP/samples/workload.c
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/prog" "$src"
HOME=$WORK/home record "$WORK/nobid.data" --no-buildid -g -F 999 -e cpu-clock -- "$WORK/prog" 0.5 cpu
perf buildid-list -i "$WORK/nobid.data" 2>/dev/null | has -E "^[0-9a-f]{20,} $WORK/prog\$" &&
	skip "perf record --no-buildid still wrote a build id for the program"
st() { HOME=$WORK/home "$PERFPORT" -q stacks -i "$WORK/nobid.data" "$@"; }
# frames in the program named by a function (not prog+0x...)
named() { grep -F "($WORK/prog)" | grep -vc " prog+0x[0-9a-f]*+0x" || true; }

# 1. the recorded file itself: named
n=$(st | named)
[ "$n" -gt 50 ] || fail "the recorded file (same host, device and inode): only $n frames named"
"$PERFPORT" info -i "$WORK/nobid.data" |
	has -F "$WORK/prog: recorded path (no build id recorded: the recorded device and inode)" ||
	fail "info does not say why the file at the recorded path was taken"
echo "ok: the recorded file at its path: $n frames named, info says why"

# 2. another file at the recorded path (built again: a new inode), not
#    the recorded one: nothing named from it
cc -O0 -g -fno-omit-frame-pointer -pthread -DPERFPORT_REBUILT -o "$WORK/prog.new" "$src"
mv "$WORK/prog.new" "$WORK/prog"
total=$(st | grep -cF "($WORK/prog)" || true)
n=$(st | named)
[ "$n" = 0 ] || fail "another file at the recorded path: $n of $total frames named from it"
"$PERFPORT" info -i "$WORK/nobid.data" >"$WORK/info.txt"
has -F "$WORK/prog: not named (not the recorded file)" "$WORK/info.txt" ||
	fail "info does not say why: $(grep -F "$WORK/prog" "$WORK/info.txt")"
echo "ok: another file at the recorded path: none of $total frames named from it; info says why"

# 3. the user says it is the same: --trust-paths, or --symfs
n=$(st --trust-paths | named)
[ "$n" -gt 50 ] || fail "--trust-paths: only $n frames named"
mkdir -p "$WORK/symfs"
cp "$WORK/prog" "$WORK/symfs/prog"
n2=$(st --symfs "$WORK/symfs" | named)
[ "$n2" -gt 50 ] || fail "--symfs: only $n2 frames named"
echo "ok: --trust-paths names $n frames, --symfs $n2"

# 4. a recording from another host, without build ids, whose libc and ld.so
#    paths exist here: not named from this machine's files
f=$CORPUS/quipper/perf.data.piped.header_features_aligned-6.12
if [ -f "$f" ]; then
	"$PERFPORT" info -i "$f" >"$WORK/other.txt"
	has -E "/libc\.so\.6: not named \(not the recorded file\)" "$WORK/other.txt" ||
		fail "another host's libc: $(grep libc "$WORK/other.txt")"
	"$PERFPORT" -q stacks -i "$f" | grep -F "libc.so.6)" | grep -vq " libc\.so\.6+0x" &&
		fail "another host's libc named from this machine's"
	"$PERFPORT" -q stacks --trust-paths -i "$f" | grep -F "libc.so.6)" | grep -vq " libc\.so\.6+0x" ||
		fail "--trust-paths: another host's libc not named from the file at its path"
	echo "ok: another host's recording without build ids: not named from this machine's libc but with --trust-paths"
fi
