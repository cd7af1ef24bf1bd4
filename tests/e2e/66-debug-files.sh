#!/usr/bin/env bash
# Separate debug files where libdwfl looks for them, with no debuginfod
# server: beside the binary by its .gnu_debuglink, in .debug/ under its
# directory, and as <name>.debug for a binary with no link. Each names the
# stripped binary's frames exactly as the unstripped file does. A binary
# whose debug file is nowhere is named from what it has left without
# loading libdw's debuginfod client (libdw 0.188 loads it, and ~25
# libraries with it, whenever a search finds nothing, even with no
# DEBUGINFOD_URLS to ask).
. "$(dirname "$0")/lib/common.sh"
need_perf
command -v objcopy >/dev/null || skip "objcopy (binutils) is not installed"
unset DEBUGINFOD_URLS
mkdir -p "$WORK/full" "$WORK/link" "$WORK/nolink" "$WORK/home"
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/full/dwl" "$TOP/samples/workload.c" ||
	fail "cannot build"
# a stripped binary that links its debug file by name and CRC
objcopy --only-keep-debug "$WORK/full/dwl" "$WORK/link/dwl.debug"
cp "$WORK/full/dwl" "$WORK/link/dwl" && strip --strip-all "$WORK/link/dwl"
(cd "$WORK/link" && objcopy --add-gnu-debuglink=dwl.debug dwl) || fail "objcopy --add-gnu-debuglink"
# and one with no link at all
cp "$WORK/full/dwl" "$WORK/nolink/dwl" && strip --strip-all "$WORK/nolink/dwl"
readelf -SW "$WORK/nolink/dwl" | has gnu_debuglink && fail "strip left a debuglink"
for d in link nolink; do
	(cd "$WORK/$d" && HOME="$WORK/home" perf record -g -F 999 -e cpu-clock -o perf.data \
		./dwl 0.4 cpu >"$WORK/record.log" 2>&1) ||
		{ cat "$WORK/record.log"; fail "perf record ($d): $(said "$WORK/record.log")"; }
done
# perf's build-id cache holds stripped copies: without it the recorded
# paths are where the files are looked for
rm -rf "$WORK/home/.debug"

names() { grep -E "^\s+[0-9a-f]+ " "$1" | grep "(/.*dwl)" | awk '{print $2}' | sed 's/+0x.*//' | sort | uniq -c; }
stacks() { HOME="$WORK/home" "$PERFPORT" -q stacks -i "$1" "${@:2}"; }

same_as_oracle() { # DATA WHAT
	# the oracle: the unstripped file, on the same recording
	stacks "$1" --symfs "$WORK/full" >"$WORK/oracle.out"
	names "$WORK/oracle.out" >"$WORK/oracle.names"
	grep -q "hot_inner" "$WORK/oracle.names" ||
		fail "the unstripped file names nothing: $(head -3 "$WORK/oracle.names")"
	stacks "$1" >"$WORK/got.out" || fail "stacks ($2): exit $?"
	names "$WORK/got.out" >"$WORK/got.names"
	cmp -s "$WORK/oracle.names" "$WORK/got.names" ||
		fail "$2: names differ from the unstripped file's: $(diff "$WORK/oracle.names" "$WORK/got.names" | head -5)"
	echo "ok: $2 ($(wc -l <"$WORK/got.names") functions)"
}
same_as_oracle "$WORK/link/perf.data" "debuglink, debug file beside the binary"
mkdir "$WORK/link/.debug" && mv "$WORK/link/dwl.debug" "$WORK/link/.debug/"
same_as_oracle "$WORK/link/perf.data" "debuglink, debug file in .debug/"
objcopy --only-keep-debug "$WORK/full/dwl" "$WORK/nolink/dwl.debug.tmp"
mkdir "$WORK/nolink/.debug" && mv "$WORK/nolink/dwl.debug.tmp" "$WORK/nolink/.debug/dwl.debug"
same_as_oracle "$WORK/nolink/perf.data" "no debuglink, .debug/dwl.debug"

# nowhere: nothing named from DWARF, and the debuginfod client not loaded
rm -rf "$WORK/nolink/.debug" "$WORK/link/.debug"
LD_DEBUG=files HOME="$WORK/home" "$PERFPORT" -q stacks -i "$WORK/link/perf.data" \
	>"$WORK/bare.out" 2>"$WORK/ld.log" || fail "stacks with no debug file: exit $?: $(said "$WORK/ld.log")"
grep -q "hot_inner" "$WORK/bare.out" && fail "named without debug info"
grep -q "file=.*dwl" "$WORK/ld.log" && fail "LD_DEBUG output is not the loader's"
grep -q "libdw" "$WORK/ld.log" || fail "LD_DEBUG=files shows no libdw: $(head -3 "$WORK/ld.log")"
if grep -q "libdebuginfod" "$WORK/ld.log"; then
	fail "libdebuginfod was loaded with no DEBUGINFOD_URLS: $(grep -m1 libdebuginfod "$WORK/ld.log")"
fi
echo "ok: no debug file: named from the symbols left, debuginfod client not loaded"
