#!/usr/bin/env bash
# arm64 recordings read on this host. Debian's arm64 kernel, booted under
# qemu-system-aarch64 (TCG, with pointer authentication), recorded with
# Debian's arm64 perf: a C program (tests/arm64/progs/stacks.c: leaves
# that keep their caller in lr, qsort calling back, the vDSO, a second
# thread), the same built with -mbranch-protection=standard (signed
# return addresses), the C++ inlining program (progs/inl.cc) and the wait
# primitives (progs/waits.c), each with -g and with --call-graph dwarf, the
# waits with --user-regs, sched_switch and sched_waking; perf script's
# output made inside the VM and perf archive's tarball came out with them
# (tests/arm64/make-fixtures.sh makes them all again; tests/arm64/README.md).
#  - stacks: frame by frame as the VM's perf script names them (>= 99%,
#    user and kernel; where perf 6.1's own arm64 unwinding is wrong,
#    lib/arm64_frames.py takes its error out on evidence of its own and
#    says how many)
#  - inline chains as llvm-addr2line -i names them on the arm64 binary
#  - off-CPU states of each wait primitive >= 95% right, dwarf and --user-regs
#  - pprof, OTLP, Firefox, Pyroscope, flame graph and folded exports read back as the
#    tree, as for x86_64 recordings (88-conformance runs the backends'
#    checkers on them too)
. "$(dirname "$0")/lib/common.sh"
need_python
D=$TOP/tests/arm64/data
[ -f "$D/archive.tar.xz" ] || skip "no arm64 fixtures in tests/arm64/data (tests/arm64/make-fixtures.sh makes them)"
command -v xz >/dev/null || skip "xz is not installed (apt-get install xz-utils)"
command -v aarch64-linux-gnu-readelf >/dev/null ||
	skip "aarch64-linux-gnu-readelf is not installed (apt-get install binutils-aarch64-linux-gnu): no reading of the arm64 CFI"
export XDG_CACHE_HOME="$WORK/cache"
for f in "$D"/*.data.xz "$D"/*.script.xz; do
	xz -dc "$f" >"$WORK/$(basename "${f%.xz}")"
done
for f in "$WORK"/*.data; do ln -s "$D/archive.tar.xz" "$f.tar.xz"; done # perf archive's, beside each
mkdir "$WORK/debug"
tar -xJf "$D/archive.tar.xz" -C "$WORK/debug"
echo "recorded with $(xz -dc "$D/perf-version.txt.xz" 2>/dev/null || cat "$D/perf-version.txt") on $(cat "$D/uname.txt")"

# --- stacks against the VM's perf script ---
for n in stacks-fp stacks-pac-fp inl-fp stacks-dwarf stacks-pac-dwarf inl-dwarf; do
	"$PERFPORT" -q stacks -i "$WORK/$n.data" >"$WORK/$n.stacks" || fail "stacks $n: exit $?"
	mode=
	case $n in *dwarf) mode=--dwarf ;; esac
	echo "$n:"
	$PY "$TOP/tests/e2e/lib/arm64_frames.py" $mode "$WORK/$n.script" "$WORK/$n.stacks" "$WORK/debug" \
		"$WORK/$n.fixed" || fail "$n: arm64_frames.py"
	$PY "$CHECK" frames "$WORK/$n.fixed.ours" "$WORK/$n.fixed" 99 k=99 || fail "$n: frames differ from perf script's"
done
# kernel aliases at one address (clear_page and __pi_clear_page; memset,
# __memset and __pi_memset): perf names them by the last in kallsyms'
# order (only it gets a size), and so does perfport - as recorded, and
# with that last one moved first in a copy of kallsyms (another then last)
K=$(ls "$WORK"/debug/\[kernel.kallsyms\]/*/kallsyms)
"$PERFPORT" -q stacks -i "$WORK/stacks-fp.data" --kallsyms "$K" >"$WORK/k1.stacks" || fail "stacks --kallsyms"
$PY - "$K" "$WORK/k1.stacks" "$WORK/kallsyms.moved" >"$WORK/alias.want" <<'PY' || fail "no alias group to try"
import collections, re, sys
kall, stacks, out = sys.argv[1:4]
lines = open(kall).read().splitlines()
groups = collections.defaultdict(list)
for i, l in enumerate(lines):
    f = l.split()
    if len(f) >= 3 and f[1] in "tTwW":
        groups[int(f[0], 16)].append(i)
groups = {a: g for a, g in groups.items() if len(g) > 1}
starts = sorted(groups)
seen = set()
for m in re.finditer(r"^\s+([0-9a-f]{16}) \S+ \(\[kernel\.kallsyms\]\)", open(stacks).read(), re.M):
    a = int(m.group(1), 16)
    # the symbol containing it: the alias group at the greatest start <= a
    lo = [s for s in starts if s <= a]
    if lo and a - lo[-1] < 0x1000:
        seen.add(lo[-1])
if not seen:
    # no frame in an alias group: try the first group a kallsyms has
    seen.add(starts[0])
a = sorted(seen)[0]
g = groups[a]
names = [lines[i].split()[2] for i in g]
moved = lines[:]
last = moved.pop(g[-1])
moved.insert(g[0], last)
open(out, "w").write("\n".join(moved) + "\n")
# as recorded: the last; moved: the one before it
print("%x %s %s" % (a, names[-1], names[-2]))
PY
read -r addr want1 want2 <"$WORK/alias.want"
n1=$("$PERFPORT" -q stacks -i "$WORK/stacks-fp.data" --kallsyms "$K" | grep -c " $want1+0x" || true)
n2=$("$PERFPORT" -q stacks -i "$WORK/stacks-fp.data" --kallsyms "$WORK/kallsyms.moved" | grep -c " $want2+0x" || true)
echo "aliases at $addr: $want1 as recorded ($n1 frames), $want2 when $want1 is moved first ($n2 frames)"
if grep -q "^ *[0-9a-f]* $want1+0x" "$WORK/k1.stacks"; then
	[ "$n2" -ge 1 ] && [ "$n1" = "$n2" ] || fail "kernel aliases are not chosen as perf chooses them"
fi
# a pipe (perf record -o -) carries no build ids: the files by --symfs and
# the kernel's symbols by --kallsyms (the vDSO stays unnamed: it has no file)
for p in opt/pp/stacks lib/aarch64-linux-gnu/libc.so.6 lib/aarch64-linux-gnu/ld-linux-aarch64.so.1; do
	mkdir -p "$WORK/symfs/$(dirname $p)"
	cp "$WORK"/debug/$p/*/elf "$WORK/symfs/$p"
done
rm "$WORK/stacks-pipe.data.tar.xz"
"$PERFPORT" -q stacks -i "$WORK/stacks-pipe.data" --symfs "$WORK/symfs" \
	--kallsyms "$(ls "$WORK"/debug/\[kernel.kallsyms\]/*/kallsyms)" >"$WORK/stacks-pipe.stacks" ||
	fail "stacks of the pipe: exit $?"
echo "stacks-pipe:"
$PY "$TOP/tests/e2e/lib/arm64_frames.py" "$WORK/stacks-pipe.script" "$WORK/stacks-pipe.stacks" "$WORK/debug" \
	"$WORK/stacks-pipe.fixed" || fail "stacks-pipe: arm64_frames.py"
$PY "$CHECK" frames "$WORK/stacks-pipe.fixed.ours" "$WORK/stacks-pipe.fixed" 99 k=99 ||
	fail "stacks-pipe: frames differ from perf script's"
# -g takes the caller of a leaf from lr where the CFI says it is still there:
# the frameless leaf_mix's caller (cmp_ulong, recurse, level3) is in the stacks
$PY - "$WORK/stacks-fp.stacks" <<'PY' || fail "-g: the callers of frameless leaves are missing"
import re, sys
blocks = open(sys.argv[1]).read().split("\n\n")
leaf = [b for b in blocks if re.search(r"^\s+[0-9a-f]+ leaf_mix\+0x", b, re.M)]
caller = [b for b in leaf if re.search(r"leaf_mix\+0x.*\n\s+[0-9a-f]+ (cmp_ulong|recurse|level3)\+0x", b)]
print("leaf_mix samples: %d, with their caller: %d" % (len(leaf), len(caller)))
sys.exit(0 if leaf and len(caller) >= 0.99 * len(leaf) else 1)
PY
# the vDSO has no CFI: its clock_gettime is a leaf whose caller is in lr,
# and the unwinding goes on from there (libc's clock_gettime, ask_time)
for n in stacks-fp stacks-dwarf; do
	$PY - "$WORK/$n.stacks" "$n" <<'PY' || fail "$n: stacks through the vDSO"
import re, sys
blocks = [b for b in open(sys.argv[1]).read().split("\n\n") if re.search(r"^\s+[0-9a-f]+ __kernel_clock_gettime\+", b, re.M)]
good = [b for b in blocks if re.search(r"__kernel_clock_gettime\+\S+ \(\[vdso\]\)\n\s+[0-9a-f]+ clock_gettime\+\S+ \(\S+libc.so.6\)\n"
                                       r"\s+[0-9a-f]+ ask_time\+", b)]
print("%s: %d samples in the vDSO, %d through clock_gettime to ask_time" % (sys.argv[2], len(blocks), len(good)))
sys.exit(0 if blocks and len(good) >= 0.95 * len(blocks) else 1)
PY
done
"$PERFPORT" -q info -i "$WORK/stacks-fp.data" | has "^lr callers: *[1-9][0-9]* -g samples" ||
	fail "info does not say how many callers came from lr"
# signed return addresses: perf 6.1's libunwind stops at the first one;
# perfport unwinds the -mbranch-protection build as deep as the plain one
for n in stacks-dwarf stacks-pac-dwarf; do
	c=stacks
	[ $n = stacks-pac-dwarf ] && c=stacks-pac
	$PY "$CHECK" reach "$WORK/$n.stacks" "$c" 90 worker >"$WORK/$n.reach" || fail "$n: $(cat "$WORK/$n.reach")"
	cat "$WORK/$n.reach"
done
grep -E "0x[0-9a-f]{13,} " "$WORK"/stacks-pac-*.stacks | grep -v "kernel.kallsyms" | head -3 | grep . &&
	fail "a user frame keeps its pointer authentication code"
echo "ok: stacks as perf script's, the pointer-authenticated build unwound whole"

# --- inline chains ---
A2L=$(command -v llvm-addr2line || ls /usr/lib/llvm-*/bin/llvm-addr2line 2>/dev/null | tail -1 || true)
INL=$(ls "$WORK"/debug/opt/pp/inl/*/elf)
if [ -n "$A2L" ]; then
	for v in fp dwarf; do
		$PY "$TOP/tests/e2e/lib/inline_cmp.py" "$WORK/inl-$v.stacks" "$WORK/inl-$v.data" \
			"/opt/pp/inl=$INL" "$A2L" 99 || fail "inl-$v: inline chains differ from llvm-addr2line -i"
	done
else
	echo "(llvm-addr2line is not installed, apt-get install llvm: inline chains not checked)"
fi
# binutils' aarch64 addr2line, for the record: it names some inlined calls
# after the function they were inlined into (fib's body as main), as on
# x86_64 (61-inline)
if command -v aarch64-linux-gnu-addr2line >/dev/null; then
	$PY "$TOP/tests/e2e/lib/inline_cmp.py" "$WORK/inl-fp.stacks" "$WORK/inl-fp.data" "/opt/pp/inl=$INL" \
		aarch64-linux-gnu-addr2line 0 >"$WORK/binutils.a2l" || fail "inline_cmp.py with binutils"
	head -1 "$WORK/binutils.a2l"
fi

# --- off-CPU states ---
for v in dwarf regs; do
	for c in lock sleep timed-sleep io preempted; do
		"$PERFPORT" -q export -i "$WORK/waits-$v.data" -f folded -O counter=$c -O value=ns \
			-O annotate=false --group-by thread -o "$WORK/arm64-$v-$c.folded" ||
			fail "export waits-$v $c: exit $?"
	done
done
"$PERFPORT" -q report -i "$WORK/waits-dwarf.data" --no-tree --top 1 | grep "decided by"
# (read_cold: the VM's disk answers from the host's page cache, so its
# reads hardly wait; 71-wait-states judges it on a real disk. vfork and
# timerfd_read: the fixtures' waits.c had none. Their waits.c broadcast its condition under
# the mutex: the woken waiter's wait for that mutex is a lock wait, which
# pairing each switch record with its sample under the emulator's slow
# clock now gives its stack, 5% of the condition's waiting)
$PY "$TOP/tests/e2e/lib/waits_check.py" "$WORK" arm64-dwarf arm64-regs --skip read_cold,vfork,timerfd_read \
	--with-lock cond_untimed ||
	fail "arm64 wait states"
echo "ok: every wait's time in its state, from arm64's registers and stack"

# --- exports ---
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
for n in stacks-dwarf waits-regs; do
	prepare_tree "$WORK/$n.data" "$n"
	"$PERFPORT" -q export -i "$WORK/$n.data" -f firefox -o "$WORK/$n.ff.json.gz" || fail "firefox $n: exit $?"
	$PY "$TOP/tests/e2e/lib/firefox_check.py" "$WORK/$n.ff.json.gz" "$WORK/$n.tree.json" "$WORK/$n.folded" ||
		fail "$n: the Firefox profile does not read back as the tree"
	"$PERFPORT" -q export -i "$WORK/$n.data" -f flamegraph -O format=svg -o "$WORK/$n.svg" ||
		fail "flamegraph $n: exit $?"
	$PY - "$WORK/$n.svg" <<'PY' || fail "$n: the flame graph is not a well-formed SVG of named frames"
import sys, xml.etree.ElementTree as ET
titles = [t.text or "" for t in ET.parse(sys.argv[1]).iter("{http://www.w3.org/2000/svg}title")]
named = [t for t in titles if "worker" in t or "start_thread" in t or "run" in t]
print("flame graph: %d frames, %d of worker/run" % (len(titles), len(named)))
sys.exit(0 if titles and named else 1)
PY
	if command -v protoc >/dev/null && [ -f "$PROTO" ]; then
		"$PERFPORT" -q export -i "$WORK/$n.data" -f pprof -O gzip=false -o "$WORK/$n.pb" || fail "pprof $n: exit $?"
		protoc --decode=perftools.profiles.Profile --proto_path="$(dirname "$PROTO")" profile.proto \
			<"$WORK/$n.pb" >"$WORK/$n.pb.txt" || fail "$n: protoc cannot decode the pprof profile"
		perf buildid-list -i "$WORK/$n.data" >"$WORK/$n.ids" 2>/dev/null || : >"$WORK/$n.ids"
		$PY "$TOP/tests/e2e/lib/pprof_check.py" "$WORK/$n.pb.txt" "$WORK/$n.tree.json" "$WORK/$n.ids" ||
			fail "$n: pprof"
	else
		echo "(protoc or profile.proto missing: pprof not decoded)"
	fi
	if command -v protoc >/dev/null && $PY -c 'import google.protobuf' 2>/dev/null; then
		"$PERFPORT" -q export -i "$WORK/$n.data" -f otlp -o "$WORK/$n.otlp.pb" || fail "otlp $n: exit $?"
		$PY "$TOP/tests/e2e/lib/otlp_check.py" "$WORK/gen" "$WORK/$n.otlp.pb" protobuf "$WORK/$n.tree.json" \
			"$WORK/$n.folded" || fail "$n: the OTLP profile does not read back as the tree"
	else
		echo "(protoc or python3-protobuf missing: OTLP not decoded)"
	fi
	if command -v go >/dev/null && $PY -c 'import google.protobuf' 2>/dev/null; then
		"$PERFPORT" -q export -i "$WORK/$n.data" -f pyroscope -o "$WORK/$n.pyro" || fail "pyroscope $n: exit $?"
		$PY - "$WORK/$n.pyro" "$WORK/$n.tree.json" <<'PY' || fail "$n: the Pyroscope series do not sum to the tree"
import json, os, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
from pyroscope_server import series_types
d, tree = sys.argv[1], json.load(open(sys.argv[2]))
tot = {c: v["ns"] for c, v in tree["totals"].items() if c != "idle"}
got = {}
for f in ("process_cpu", "wall"):
    if os.path.exists("%s/%s.pb.gz" % (d, f)):
        got.update(series_types(None, open("%s/%s.pb.gz" % (d, f), "rb").read())[1])
# (a recording of on-CPU samples alone has no wall series)
want = {"wall:wall:nanoseconds:cpu:nanoseconds": sum(tot.values())} if set(tot) - {"on-cpu"} else {}
if "on-cpu" in tot:
    want["process_cpu:cpu:nanoseconds:cpu:nanoseconds"] = tot["on-cpu"]
for c, v in tot.items():
    if c != "on-cpu":
        want["wall:%s:nanoseconds:cpu:nanoseconds" % c.replace("-", "_")] = v
bad = [(t, got.get(t, {}).get("total"), v) for t, v in want.items() if got.get(t, {}).get("total") != v]
print("pyroscope: %d series types, totals %s" % (len(got), "equal the tree's" if not bad else bad))
sys.exit(1 if bad else 0)
PY
	fi
done
echo "ok: the arm64 recordings' exports read back as their trees"
