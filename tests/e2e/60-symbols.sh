#!/usr/bin/env bash
# Frame names: perfport's stacks agree with perf script frame by frame, with
# and without frame pointers; a rebuilt binary gives unknown frames, never
# wrong names; JIT code is named from /tmp/perf-PID.map; untyped assembly
# entry points are named as perf names them; kernel frames of recordings
# made on another kernel stay unknown.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
build_workload

stacks_both() { # NAME FILE: perfport's stacks in NAME.ours, perf script's in NAME.perf
	"$PERFPORT" stacks -i "$2" >"$WORK/$1.ours" || fail "$1: perfport stacks exit $?"
	perf script -i "$2" -F comm,tid,time,event,ip,sym,dso >"$WORK/$1.perf" 2>/dev/null
}

compare() { # NAME FILE [check.py frames thresholds...]
	local name=$1 file=$2; shift 2
	stacks_both "$name" "$file"
	$PY "$CHECK" frames "$WORK/$name.ours" "$WORK/$name.perf" "$@" || fail "$name: frame names"
}

record "$WORK/fp.data" -g -F 999 -e cpu-clock "$WORKLOAD" 0.5
compare fp "$WORK/fp.data" 99 k=99

cc -O2 -g -fomit-frame-pointer -pthread -o "$WORK/nofp" "$TOP/samples/workload.c"
record "$WORK/nofp.data" -g -F 999 -e cpu-clock "$WORK/nofp" 0.5
compare no-frame-pointers "$WORK/nofp.data" 99

# --call-graph dwarf: unwound with libdwfl from the copied registers and stack.
# 95% of the workload's samples must reach main or the thread start, and 98%
# of names agree with perf (compared one frame per address: perf shows
# inlined calls in DWARF mode only, sometimes without their containing
# function, e.g. "__GI_fsync (inlined)" where perfport says fsync).
record "$WORK/dwarf.data" --call-graph dwarf -F 499 -e cpu-clock "$WORKLOAD" 0.5
compare dwarf "$WORK/dwarf.data" 98
grep -q "(inlined)" "$WORK/dwarf.ours" || echo "note: no inlined frames in this recording"
"$PERFPORT" info --json -i "$WORK/dwarf.data" >"$WORK/dwarf.json"
# every sample's stack unwound (a share of the samples, not a count: a
# loaded machine gave the half second 94 samples, not the 100 once wanted)
$PY - "$WORK/dwarf.json" <<'PY' || fail "DWARF unwinding: $(cat "$WORK/dwarf.json" | head -c 600)"
import json, sys
j = json.load(open(sys.argv[1]))
s, n = j["symbols"], j["records"].get("PERF_RECORD_SAMPLE", 0)
print("dwarf: %d of %d samples unwound, %d failed" % (s["dwarf_unwound"], n, s["dwarf_unwind_failed"]))
if not (n > 0 and s["dwarf_unwound"] >= 0.9 * n and s["dwarf_unwind_failed"] == 0):
    sys.exit("dwarf_unwound %d of %d samples, %d failed" % (s["dwarf_unwound"], n, s["dwarf_unwind_failed"]))
PY
# Unwinding on worker threads changes nothing in the output.
"$PERFPORT" stacks -j 1 -i "$WORK/dwarf.data" >"$WORK/j1.ours"
"$PERFPORT" stacks -j 3 -i "$WORK/dwarf.data" >"$WORK/j3.ours"
cmp -s "$WORK/j1.ours" "$WORK/j3.ours" || fail "stacks -j 3 differs from -j 1"
echo "ok: -j 3 output identical to -j 1 ($(grep -c '^[^	]' "$WORK/j1.ours") samples)"
rc=0; "$PERFPORT" stacks -j 0 -i "$WORK/dwarf.data" >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "-j 0: exit $rc, want 1"
$PY "$CHECK" reach "$WORK/dwarf.ours" workload 95 main start_thread clone3 \
	__libc_start_main _start || fail "dwarf: stacks do not reach main or the thread start"
cc -O2 -g -fomit-frame-pointer -pthread -o "$WORK/nofp-dwarf" "$TOP/samples/workload.c"
record "$WORK/nofpd.data" --call-graph dwarf -F 499 -e cpu-clock "$WORK/nofp-dwarf" 0.5
"$PERFPORT" stacks -i "$WORK/nofpd.data" >"$WORK/nofpd.ours"
$PY "$CHECK" reach "$WORK/nofpd.ours" nofp-dwarf 95 main start_thread clone3 \
	__libc_start_main _start || fail "dwarf without frame pointers: stacks do not reach main"

# [vdso] code is named from the copy perf keeps in its build-id cache.
cat >"$WORK/vd.c" <<'C'
#include <time.h>
int main(void)
{
	struct timespec t;
	long s = 0;

	for (long i = 0; i < 10000000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		s += t.tv_nsec;
	}
	return s == 42;
}
C
cc -O2 -o "$WORK/vd" "$WORK/vd.c"
record "$WORK/vd.data" -g -F 999 -e cpu-clock "$WORK/vd"
compare vdso "$WORK/vd.data" 99
grep -q "__vdso_clock_gettime+0x[0-9a-f]* (\[vdso\])" "$WORK/vdso.ours" || fail "vdso frames not named"

# Assembly entry points without .type (untyped symbols in code, like
# ld.so's _start) name their code as perf does; a label inside a function
# does not take the function's place.
if [ "$(uname -m)" = x86_64 ]; then
	cat >"$WORK/label.c" <<'C'
__asm__(".text\n"
	".globl spin_label\n"
	"spin_label:\n"        /* untyped: no .type, no .size */
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	ret\n");
void spin_label(long n);
__attribute__((noinline)) long typed(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++) {
		__asm__ volatile("inner_label_%=:" ::: "memory");
		s += i ^ (s >> 3);
	}
	return s;
}
int main(void)
{
	long s = 0;

	for (int i = 0; i < 40; i++) {
		spin_label(10000000);
		s += typed(5000000);
	}
	return s == 42;
}
C
	cc -O1 -g -fno-omit-frame-pointer -o "$WORK/label" "$WORK/label.c" ||
		fail "the label workload does not build"
	readelf -s "$WORK/label" | has ' NOTYPE .* spin_label$' ||
		fail "spin_label is not an untyped symbol in this build"
	record "$WORK/label.data" -g -F 999 -e cpu-clock "$WORK/label"
	stacks_both label "$WORK/label.data"
	# leaf names, counted: perf's and ours agree on spin_label; inside
	# typed(), perf names the code by the label (its symbols overlap), ours
	# by the function
	leaves() { awk '/^[^\t]/ { top = 1; next } top && /^\t/ { n = $2; sub(/\+0x.*/, "", n); c[n]++; top = 0 }
		END { for (k in c) print k, c[k] }' "$1" | sort; }
	leaves "$WORK/label.ours" >"$WORK/label.ours.leaves"
	leaves "$WORK/label.perf" >"$WORK/label.perf.leaves"
	ours_spin=$(awk '$1 == "spin_label" { print $2 }' "$WORK/label.ours.leaves")
	perf_spin=$(awk '$1 == "spin_label" { print $2 }' "$WORK/label.perf.leaves")
	ours_typed=$(awk '$1 == "typed" { print $2 }' "$WORK/label.ours.leaves")
	perf_typed=$(awk '$1 == "typed" || $1 ~ /^inner_label/ { s += $2 } END { print s + 0 }' "$WORK/label.perf.leaves")
	echo "untyped spin_label: perfport ${ours_spin:-0} samples, perf ${perf_spin:-0}; typed(): perfport ${ours_typed:-0}, perf ${perf_typed} (with its inner label)"
	[ -n "$ours_spin" ] && [ "$ours_spin" = "$perf_spin" ] || fail "untyped spin_label: ${ours_spin:-0} samples, perf ${perf_spin:-0}"
	[ -n "$ours_typed" ] && [ "$ours_typed" = "$perf_typed" ] || fail "typed(): ${ours_typed:-0} samples, perf ${perf_typed}"
	! grep -q "inner_label" "$WORK/label.ours" || fail "a label inside typed() named its code"

	# PLT entries are named FUNCTION@plt, as objdump names them
	cat >"$WORK/plt.c" <<'C'
#include <stdlib.h>
int main(void)
{
	long t = 0;

	for (long i = 0; i < 200000000; i++)    /* a third of the time in labs@plt */
		t += labs(i - t);
	return t == 42;
}
C
	cc -O1 -fno-builtin -fno-omit-frame-pointer -o "$WORK/plt" "$WORK/plt.c" ||
		fail "the PLT workload does not build"
	record "$WORK/plt.data" -g -F 999 -e cpu-clock "$WORK/plt"
	stacks_both plt "$WORK/plt.data"
	objdump -d "$WORK/plt" >"$WORK/plt.objdump" || fail "objdump failed"
	$PY "$CHECK" plt "$WORK/plt.ours" "$WORK/plt.perf" "$WORK/plt.objdump" plt ||
		fail "PLT entries"
fi

# --vmlinux: an image of the recorded kernel, linked elsewhere than it ran
# (as KASLR does), names the same kernel frames as the matching kallsyms; an
# image with another build id is refused. The image is built from this
# machine's /proc/kallsyms, linked at a base that forces a shift.
kid=$(perf buildid-list -i "$WORK/fp.data" 2>/dev/null | awk '$2 == "[kernel.kallsyms]" { print $1 }')
if [ -n "$kid" ] && command -v as >/dev/null && command -v ld >/dev/null &&
	[ "$(awk '$3 == "_text" { print $1 }' /proc/kallsyms)" != 0000000000000000 ]; then
	$PY "$TOP/tests/e2e/progs/fake_vmlinux.py" /proc/kallsyms ffffffff80000000 >"$WORK/vm.s"
	as -o "$WORK/vm.o" "$WORK/vm.s"
	ld -e 0 --build-id=0x"$kid" -o "$WORK/vmlinux" "$WORK/vm.o"
	ld -e 0 --build-id=0x0011223344556677889900112233445566778899 -o "$WORK/vmlinux.other" "$WORK/vm.o"
	"$PERFPORT" stacks -i "$WORK/fp.data" | grep -E '^	ffff' >"$WORK/k.kallsyms"
	"$PERFPORT" stacks --vmlinux "$WORK/vmlinux" -i "$WORK/fp.data" | grep -E '^	ffff' >"$WORK/k.vmlinux"
	# (an unnamed frame is MODULE+0xOFFSET+0x0)
	# as many as kallsyms names (how many the workload's samples hold
	# depends on the machine's load: 80 once, at load 12)
	n=$(grep -Evc ' (\[unknown\]|\S+\+0x[0-9a-f]+\+0x0) ' "$WORK/k.vmlinux" || true)
	nk=$(grep -Evc ' (\[unknown\]|\S+\+0x[0-9a-f]+\+0x0) ' "$WORK/k.kallsyms" || true)
	[ "$nk" -ge 10 ] || fail "kallsyms: only $nk kernel frames named in $(wc -l <"$WORK/k.kallsyms")"
	[ $((n * 100)) -ge $((nk * 99)) ] || fail "vmlinux: only $n kernel frames named, kallsyms $nk"
	# The stand-in image holds one symbol per name (kallsyms repeats static
	# names), so a few frames may differ; 99% must not.
	d=$(diff "$WORK/k.kallsyms" "$WORK/k.vmlinux" | grep -c '^<' || true)
	t=$(wc -l <"$WORK/k.kallsyms")
	[ $((d * 100)) -le "$t" ] ||
		fail "vmlinux names differ from kallsyms names in $d of $t frames: $(diff "$WORK/k.kallsyms" "$WORK/k.vmlinux" | head -4)"
	"$PERFPORT" stacks --vmlinux "$WORK/vmlinux.other" -i "$WORK/fp.data" 2>"$WORK/vo.err" |
		grep -E '^	ffff' | grep -Evq ' (\[unknown\]|\S+\+0x[0-9a-f]+\+0x0) ' &&
		fail "vmlinux with another build id was used"
	grep -q "is not the recorded kernel" "$WORK/vo.err" || fail "no warning for a foreign vmlinux"
	echo "ok: --vmlinux: $n kernel frames named, $d of $t differ from kallsyms (duplicate static names); a foreign image refused"
else
	echo "note: --vmlinux not checked (no kernel build id in the recording, or no binutils)"
fi

# A kallsyms file is parsed once: its symbols are kept in perfport's cache
# ($XDG_CACHE_HOME/perfport) and mapped the next time, naming the same
# frames; a damaged cache or a changed file is not used (and is rewritten)
if [ "$(awk '$3 == "_text" { print $1 }' /proc/kallsyms)" != 0000000000000000 ]; then
	cp /proc/kallsyms "$WORK/ks"
	kc() { XDG_CACHE_HOME="$WORK/xc" "$PERFPORT" -v stacks --kallsyms "$WORK/ks" -i "$WORK/fp.data" \
		2>"$WORK/kc.err" | grep -E '^	ffff' >"$WORK/kc.$1"; }
	kc 1
	grep -q "parsed before" "$WORK/kc.err" && fail "kallsyms cache: used before it was made"
	c=$(ls "$WORK"/xc/perfport/kallsyms-* 2>/dev/null | head -1)
	[ -n "$c" ] || fail "kallsyms cache: not written"
	kc 2
	grep -q "parsed before, from perfport's cache" "$WORK/kc.err" || fail "kallsyms cache: not used: $(grep kernel "$WORK/kc.err")"
	cmp -s "$WORK/kc.1" "$WORK/kc.2" || fail "kallsyms cache: other names: $(diff "$WORK/kc.1" "$WORK/kc.2" | head -3)"
	[ "$(grep -Evc ' (\[unknown\]|\S+\+0x[0-9a-f]+\+0x0) ' "$WORK/kc.2")" -gt 0 ] ||
		fail "kallsyms cache: no kernel frame named"
	size=$(stat -c %s "$c")
	truncate -s $((size / 2)) "$c"
	kc 3
	grep -q "parsed before" "$WORK/kc.err" && fail "kallsyms cache: a damaged cache was used"
	cmp -s "$WORK/kc.1" "$WORK/kc.3" || fail "kallsyms cache: a damaged cache changed the names"
	[ "$(stat -c %s "$c")" = "$size" ] || fail "kallsyms cache: not rewritten after damage"
	touch -d '1 hour ago' "$WORK/ks"
	kc 4
	grep -q "parsed before" "$WORK/kc.err" && fail "kallsyms cache: used for a changed file"
	echo "ok: kallsyms parsed once and mapped from perfport's cache after; damaged or stale caches ignored"
fi

# A distribution's compressed debug file (libc6-dbg) is inflated once into
# perfport's cache and read from there after; the names are those libdw
# gives from the original, the copy holds no compressed section, and a
# damaged copy is not used (it is made again)
libc=$(awk '$NF ~ /\/libc\.so\.6$/ { print $NF; exit }' /proc/self/maps)
lid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
ldbg=/usr/lib/debug/.build-id/${lid:0:2}/${lid:2}.debug
if [ -n "$lid" ] && [ -f "$ldbg" ] && readelf -SW "$ldbg" 2>/dev/null | has ' \.debug_info .* C '; then
	: >"$WORK/nodir" # a cache directory that cannot be made: libdw reads the original
	# a recording that is mostly libc (dd's reads and writes: a count of
	# work, so its on-CPU samples do not shrink on a loaded machine), not
	# the fp recording, whose half second held no libc frame once
	record "$WORK/dc.data" -g -F 999 -e cpu-clock -- dd if=/dev/zero of=/dev/null bs=1k count=300000
	dc() { XDG_CACHE_HOME="$1" "$PERFPORT" -vv export -f folded -O annotate=false -o "$WORK/dc.$2" \
		-i "$WORK/dc.data" 2>"$WORK/dc.err" || fail "export with cache $1: exit $?"; }
	dc "$WORK/nodir" 0
	grep -q "__GI_\|libc" "$WORK/dc.0" || grep -q "pthread\|lll_" "$WORK/dc.0" || fail "debug cache: no libc frame in the recording"
	dc "$WORK/dcache" 1
	copy="$WORK/dcache/perfport/debug/$lid.debug"
	[ -f "$copy" ] || fail "debug cache: no copy made ($(grep -i debug "$WORK/dc.err" | head -2))"
	grep -q "inflated once" "$WORK/dc.err" || fail "debug cache: the copy was not said to be made"
	cmp -s "$WORK/dc.0" "$WORK/dc.1" || fail "debug cache: other names while making the copy: $(diff "$WORK/dc.0" "$WORK/dc.1" | head -3)"
	! readelf -SW "$copy" | has ' \.debug_[a-z_]* .* [A-Z]*C[A-Z]* ' || fail "debug cache: the copy still has compressed sections"
	[ "$(readelf -n "$copy" | awk '/Build ID/ { print $3 }')" = "$lid" ] || fail "debug cache: the copy's build id"
	dc "$WORK/dcache" 2
	grep -q "from perfport's uncompressed copy" "$WORK/dc.err" || fail "debug cache: the copy was not used"
	cmp -s "$WORK/dc.0" "$WORK/dc.2" || fail "debug cache: the copy names otherwise: $(diff "$WORK/dc.0" "$WORK/dc.2" | head -3)"
	XDG_CACHE_HOME="$WORK/dcache" "$PERFPORT" info -i "$WORK/dc.data" 2>"$WORK/stderr.txt" | has "debug info $ldbg" ||
		fail "debug cache: info does not name the original debug file: $(said "$WORK/stderr.txt")"
	size=$(stat -c %s "$copy")
	truncate -s $((size / 3)) "$copy"
	dc "$WORK/dcache" 3
	cmp -s "$WORK/dc.0" "$WORK/dc.3" || fail "debug cache: a damaged copy changed the names"
	[ "$(stat -c %s "$copy")" = "$size" ] || fail "debug cache: a damaged copy was not made again"
	echo "ok: $ldbg inflated once into perfport's cache, then read from the copy; same names; a damaged copy made again"
else
	echo "note: the debug file cache not checked (no compressed debug file for libc: apt-get install libc6-dbg)"
fi

# Rebuilt after recording, with perf's build-id cache out of the way: the
# recorded build id no longer matches, so no frame of it may carry a name.
cp "$WORKLOAD" "$WORK/rebuilt"
record "$WORK/rebuilt.data" -g -F 999 -e cpu-clock "$WORK/rebuilt" 0.3 cpu
cc -O0 -g -fno-omit-frame-pointer -pthread -o "$WORK/rebuilt" "$TOP/samples/workload.c"
mkdir -p "$WORK/empty-cache"
"$PERFPORT" stacks --buildid-dir "$WORK/empty-cache" -i "$WORK/rebuilt.data" >"$WORK/rebuilt.ours"
n=$(grep -c "($WORK/rebuilt)" "$WORK/rebuilt.ours" || true)
[ "$n" -gt 10 ] || fail "rebuilt: only $n frames in the rebuilt binary"
rebuilt_frames=$n
# an unnamed frame is named by its module and file offset, one name an address
named=$(grep "($WORK/rebuilt)" "$WORK/rebuilt.ours" | grep -Evc ' rebuilt\+0x[0-9a-f]+\+0x0 ' || true)
[ "$named" -eq 0 ] || fail "rebuilt: $named frames named from a binary with another build id"
addrs=$(grep "($WORK/rebuilt)" "$WORK/rebuilt.ours" | awk '{ print $2 }' | sort -u | wc -l)
[ "$addrs" -gt 1 ] || fail "rebuilt: the unnamed frames are one ($addrs distinct names)"
echo "ok: rebuilt binary: $n frames, all unknown, $addrs distinct module+offset names"
# ... and with the cache perf filled at record time, the right copy is found.
"$PERFPORT" stacks -i "$WORK/rebuilt.data" >"$WORK/cached.ours"
grep -q "hot_inner+0x[0-9a-f]* ($WORK/rebuilt)" "$WORK/cached.ours" ||
	fail "rebuilt: the build-id cache copy was not used"
echo "ok: the build-id cache has the recorded copy"

# JIT code named from a perf map written by the program.
if [ "$(uname -m)" = x86_64 ]; then
	cc -O2 -o "$WORK/jit" "$TOP/tests/e2e/progs/jit.c"
	record "$WORK/jit.data" -F 999 -e cpu-clock "$WORK/jit" 0.3
	"$PERFPORT" stacks -i "$WORK/jit.data" >"$WORK/jit.ours"
	n=$(grep -c "jitted_counting_loop+0x" "$WORK/jit.ours" || true)
	all=$(grep -c '^[^ 	]' "$WORK/jit.ours" || true)
	# a share of the samples, not a count: 0.3 s on a loaded machine gave
	# 30 frames in the loop where 50 were once wanted
	[ "$n" -gt 0 ] && [ $((n * 2)) -ge "$all" ] ||
		fail "jit: only $n frames of $all samples named from the perf map"
	echo "ok: $n JIT frames named from /tmp/perf-PID.map"
	# a perf map anyone could have planted is not read: a FIFO (would block),
	# a link (to /dev/zero: endless), another user's file, a world-writable
	# one - each refused with a warning, in bounded time, its frames unknown
	JPID=$(grep -m1 -oE ' [0-9]+/' "$WORK/jit.ours" | tr -d ' /')
	MAP=/tmp/perf-$JPID.map
	for kind in fifo link owner writable; do
		rm -f "$MAP"
		case $kind in
		fifo) mkfifo "$MAP" ;;
		link) ln -s /dev/zero "$MAP" ;;
		owner) printf '%x 100 planted\n' 0 >"$MAP"; chown nobody "$MAP" 2>/dev/null || { rm -f "$MAP"; continue; } ;;
		writable) printf '0 ffffffffffff planted\n' >"$MAP"; chmod 666 "$MAP" ;;
		esac
		rc=0; timeout 20 "$PERFPORT" stacks -i "$WORK/jit.data" >"$WORK/hostile.ours" 2>"$WORK/hostile.err" || rc=$?
		rm -f "$MAP"
		[ $rc -eq 0 ] || fail "a $kind perf map: exit $rc (124: it hung)"
		grep -q "not read for JIT names" "$WORK/hostile.err" || fail "a $kind perf map: no warning: $(cat "$WORK/hostile.err")"
		grep -q "planted" "$WORK/hostile.ours" && fail "a $kind perf map's names were used"
		echo "ok: a $kind perf map refused"
	done
else
	echo "note: the JIT check is x86_64 only"
fi

# JIT code of a real JIT through perf inject --jit: node's jitdump turned
# into jitted-PID-N.so files (their one segment is not at address 0), named
# as perf report names them. HOME is the work directory: perf inject fills
# the build-id cache under it.
if command -v node >/dev/null; then
	cat >"$WORK/hot.js" <<'JS'
function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003; return s; }
function outer() { let t = 0; for (let k = 0; k < 300; k++) t += hotLoop(200000); return t; }
console.log(outer());
JS
	(cd "$WORK" && HOME="$WORK" record "$WORK/node.data" -k 1 -g -F 499 -e cpu-clock -- \
		node --perf-prof --interpreted-frames-native-stack hot.js >/dev/null)
	(cd "$WORK" && HOME="$WORK" perf inject --jit -i node.data -o node.jit.data) ||
		fail "perf inject --jit failed"
	HOME="$WORK" "$PERFPORT" stacks -i "$WORK/node.jit.data" >"$WORK/node.ours" || fail "stacks node: exit $?"
	HOME="$WORK" perf script -i "$WORK/node.jit.data" -F comm,tid,time,event,ip,sym,dso \
		>"$WORK/node.perf" 2>/dev/null
	n=$(grep -c "JS:\*hotLoop .*(.*jitted-[0-9]*-[0-9]*\.so)" "$WORK/node.ours" || true)
	[ "$n" -gt 20 ] || fail "perf inject --jit: only $n frames named JS:*hotLoop from the jitted .so"
	$PY "$CHECK" frames "$WORK/node.ours" "$WORK/node.perf" 98 || fail "node jit: frame names"
	echo "ok: perf inject --jit: $n frames in JS:*hotLoop, names as perf script's"
	# the same recording without perf inject: the jitdump node mapped
	# (jit-PID.dump) is read as it is; names as perf script's of the
	# injected recording, sample by sample
	HOME="$WORK" "$PERFPORT" stacks -i "$WORK/node.data" >"$WORK/node-raw.ours" || fail "stacks node: exit $?"
	n=$(grep -c "JS:\*hotLoop " "$WORK/node-raw.ours" || true)
	[ "$n" -gt 20 ] || fail "jitdump without perf inject: only $n frames named JS:*hotLoop"
	$PY "$CHECK" frames "$WORK/node-raw.ours" "$WORK/node.perf" 98 || fail "node jitdump: frame names"
	rm -f "$WORK"/jit-*.dump "$WORK"/jitted-*.so
	echo "ok: jitdump read without perf inject: $n frames in JS:*hotLoop"
else
	echo "note: node is not installed: the perf inject --jit check is not run"
fi

# A signal frame: the handler's "return address" is the first byte of
# glibc's __restore_rt, whose byte before no symbol covers: it is looked up
# at itself, as perf names it, not as libc.so.6+0x...+0x1 one byte early.
cc -O1 -g -fno-omit-frame-pointer -o "$WORK/sigframe" "$TOP/tests/e2e/progs/sigframe.c"
record "$WORK/sig.data" -g -F 999 -e cpu-clock "$WORK/sigframe" 0.5
"$PERFPORT" -q stacks -i "$WORK/sig.data" >"$WORK/sig.ours"
perf script -i "$WORK/sig.data" -F ip,sym 2>/dev/null >"$WORK/sig.perf"
want=$(awk '/spin_in_handler/ { getline; print $2 }' "$WORK/sig.perf" | sort | uniq -c | sort -rn | head -1)
got=$(awk '/spin_in_handler/ { getline; sub(/\+0x[0-9a-f]+$/, "", $2); print $2 }' "$WORK/sig.ours" |
	sort | uniq -c | sort -rn | head -1)
case $want in
*__restore_rt)
	[ "$got" = "$want" ] || fail "signal frame: perfport '$got', perf '$want'"
	echo "ok: signal frames named as perf names them: $got" ;;
*) echo "note: perf does not name the signal frame __restore_rt here ('$want'): not checked" ;;
esac

# A recording without build ids (to a pipe; or -z --no-buildid) made on
# this very boot: its kernel frames are named from /proc/kallsyms (same
# release, the kernel at the recorded address), as perf script names them.
perf record -o - -g -F 999 -e cpu-clock -- dd if=/dev/zero of=/dev/null bs=1k count=300000 \
	>"$WORK/pipe.data" 2>"$WORK/pipe.log" || fail "perf record -o -: $(cat "$WORK/pipe.log")"
record "$WORK/nobid.data" -z --no-buildid -g -F 999 -e cpu-clock -- dd if=/dev/zero of=/dev/null bs=1k count=300000
for v in pipe nobid; do
	"$PERFPORT" info -i "$WORK/$v.data" | has "^kernel names:  /proc/kallsyms (same release and boot" ||
		fail "$v: kernel names not from this boot's kallsyms: $("$PERFPORT" info -i "$WORK/$v.data" | grep "kernel names")"
	compare "$v" "$WORK/$v.data" 95 k=95
done
echo "ok: recordings without build ids name their kernel frames on the same boot"

# Kernel frames of recordings made on another kernel: unknown, not this
# machine's names.
if [ -d "$CORPUS" ]; then
	for f in perfparser/vector_static_gcc/perf.data quipper/perf.data.callgraph-3.8; do
		"$PERFPORT" stacks -i "$CORPUS/$f" >"$WORK/k.ours"
		k=$(grep -cE '^	ffff[0-9a-f]{12} ' "$WORK/k.ours" || true)
		# unnamed: by module and offset ([kernel.kallsyms]+0xADDR,
		# MODULE.ko+0xOFFSET), or [unknown] where no map covers it
		named=$(grep -E '^	ffff[0-9a-f]{12} ' "$WORK/k.ours" |
			grep -Evc '^	ffff[0-9a-f]{12} (\[unknown\]|\S+\+0x[0-9a-f]+\+0x0) ' || true)
		[ "$named" -eq 0 ] || fail "$f: $named of $k kernel frames named from this machine"
		echo "ok: $f: $k kernel frames, none named"
	done
fi

# perfport info counts named frames and why the others are unknown.
"$PERFPORT" info --json -i "$WORK/fp.data" >"$WORK/fp.json"
# (a share of the frames named, not counts: half a second's samples on a
# loaded machine may be a few hundred frames, not the 1000 once wanted)
$PY "$CHECK" json "$WORK/fp.json" symbols.frames=">0" "symbols.unknown.build-id mismatch=0"
$PY - "$WORK/fp.json" <<'PY' || fail "perfport info's frame counts"
import json, sys
s = json.load(open(sys.argv[1]))["symbols"]
print("fp: %d of %d frames named" % (s["named"], s["frames"]))
if s["named"] < 0.95 * s["frames"]:
    sys.exit("%d of %d frames named" % (s["named"], s["frames"]))
PY
# Every frame of every sample is counted, also where info counts a stack
# seen before from its first naming: the frames of the raw callchains that
# dump --samples prints (context markers left out).
"$PERFPORT" dump --samples -i "$WORK/fp.data" >"$WORK/fp.dump" 2>/dev/null
$PY - "$WORK/fp.json" "$WORK/fp.dump" <<'PY' || fail "info's frame count is not the callchains'"
import json, sys
info = json.load(open(sys.argv[1]))["symbols"]
n = samples = 0
for line in open(sys.argv[2]):
    if " SAMPLE " not in line:
        continue
    samples += 1
    i = line.find(" chain=")
    if i < 0:
        n += 1  # the ip alone
        continue
    n += sum(int(a, 16) < 0xfffffffffffff000 for a in line[i + 7:].split()[0].split(","))
# (a stack that leaves every mapping - a frame-pointer chain past its
# root, a sample at a thread's start - is counted up to there, as a
# profile draws it: info says how many did)
out = info.get("stacks_outside_mappings", 0)
assert info["frames"] == n or (out and info["frames"] < n), \
    f"info counts {info['frames']} frames, the callchains hold {n} ({out} stacks left every mapping)"
assert info["named"] + sum(info["unknown"].values()) == info["frames"], f"named + unknown != frames: {info}"
print(f"ok: info counts {info['frames']} of the {n} frames of {samples} samples "
      f"({out} stacks left every mapping)")
PY
"$PERFPORT" info --json --buildid-dir "$WORK/empty-cache" -i "$WORK/rebuilt.data" >"$WORK/rb.json"
# every frame of the rebuilt binary, as many as the stacks hold (194 here;
# a loaded machine's 0.3 s may give fewer than the 100 once wanted)
$PY "$CHECK" json "$WORK/rb.json" "symbols.unknown.build-id mismatch=$rebuilt_frames"
"$PERFPORT" info --json --no-symbols -i "$WORK/fp.data" >"$WORK/nosym.json"
$PY - "$WORK/nosym.json" <<'PY' || fail "--no-symbols still symbolized"
import json, sys
assert "symbols" not in json.load(open(sys.argv[1]))
PY
if [ -d "$CORPUS" ]; then
	v="$CORPUS/perfparser/vector_static_gcc"
	"$PERFPORT" info --json -i "$v/perf.data" >"$WORK/v.json"
	$PY "$CHECK" json "$WORK/v.json" symbols.named=0 "symbols.unknown.file not found=>0" \
		"symbols.unknown.no matching kallsyms=>0" symbols.kernel_symbols=none
	# DWARF recordings from another machine, unwound through the static
	# binaries beside them, compared with perfparser's decoded output.
	for f in vector_static_gcc/perf.data vector_static_gcc/perf.data.zstd \
		parallel_static_gcc/perf.data.zstd; do
		d="$CORPUS/perfparser/$(dirname "$f")"
		"$PERFPORT" stacks --symfs "$d" -i "$CORPUS/perfparser/$f" >"$WORK/pp.ours"
		$PY "$CHECK" perfparser "$WORK/pp.ours" "$CORPUS/perfparser/$f.expected.txt" 95 ||
			fail "perfparser/$f: unwinding differs"
		[ "$f" != vector_static_gcc/perf.data ] || cp "$WORK/pp.ours" "$WORK/pp-vector.ours"
	done
	# --call-graph lbr: built as perf builds it (the running function's entry,
	# then the recorded call sites); perf reads this file, so compare with it.
	v="$CORPUS/perfparser/vector_static_gcc"
	"$PERFPORT" stacks --symfs "$v" -i "$v/perf.lbr.data" >"$WORK/lbr.ours"
	perf script -i "$v/perf.lbr.data" -F time,ip >"$WORK/lbr.perf" 2>/dev/null
	$PY "$CHECK" addrs "$WORK/lbr.ours" "$WORK/lbr.perf" vector_static_g || fail "lbr stacks"
	grep -q "__hypot+0x13" "$WORK/lbr.ours" || fail "lbr: no named caller"
	# Inlined calls are frames of their own, named from DWARF.
	grep -q "generate_n<.*(inlined) /usr/include/c++/9.1.0/bits/stl_algo.h:4449" "$WORK/pp-vector.ours" ||
		fail "vector_static_gcc: the inlined std::generate_n frame is missing"
	# The binary beside the recording, found by its base name under --symfs.
	"$PERFPORT" info --json --symfs "$v" -i "$v/perf.data" >"$WORK/vs.json"
	$PY "$CHECK" json "$WORK/vs.json" symbols.named=">30" "symbols.unknown.file not found=0"
fi
echo "ok: symbols"
