#!/usr/bin/env bash
# Inline chains: every level of inlined calls is a frame with its own call
# site line, as llvm-addr2line -i names them, on a C++ -O2 program with
# 17-deep template inlining, lambdas, std::function and a recursive function
# inlined into itself (progs/inl.cc), recorded with -g and with dwarf. The
# containing function gets the outermost call site's line (a line of its
# own body, never one inside a callee), and no line is past the end of the
# source file.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
command -v g++ >/dev/null || skip "g++ is not installed: the C++ program cannot be built"
A2L=$(command -v llvm-addr2line || ls /usr/lib/llvm-*/bin/llvm-addr2line 2>/dev/null | tail -1)
# (binutils' addr2line names some inlined calls of a partly inlined function
# after the function they were inlined into: not an oracle for every level)
[ -n "$A2L" ] || skip "llvm-addr2line (Debian's llvm package) is not installed: no oracle for inline chains"
g++ -O2 -g -fno-omit-frame-pointer -o "$WORK/inl" "$TOP/tests/e2e/progs/inl.cc" || fail "cannot build progs/inl.cc"

record "$WORK/fp.data" -g -F 999 -e cpu-clock -- "$WORK/inl" 2000000
record "$WORK/dwarf.data" --call-graph dwarf -F 499 -e cpu-clock -- "$WORK/inl" 1000000
for v in fp dwarf; do
	"$PERFPORT" -q stacks -i "$WORK/$v.data" >"$WORK/$v.stacks" || fail "stacks $v: exit $?"
	$PY "$TOP/tests/e2e/lib/inline_cmp.py" "$WORK/$v.stacks" "$WORK/$v.data" "$WORK/inl" "$A2L" 99 ||
		fail "$v: inline chains differ from llvm-addr2line -i"
done

$PY - "$WORK/fp.stacks" "$TOP/tests/e2e/progs/inl.cc" <<'PY' || fail "inline lines"
import re, sys
stacks, src = sys.argv[1:3]
text = open(src).read().splitlines()
nlines = len(text)
# main's own body: from "int main(" to the first "}" at the line's start
m0 = next(i for i, l in enumerate(text, 1) if l.startswith("int main("))
m1 = next(i for i, l in enumerate(text, 1) if i > m0 and l == "}")
levels, past, main_lines = 0, [], set()
for block in open(stacks).read().split("\n\n"):
    depth = 0
    for l in block.splitlines()[1:]:
        m = re.search(r"inl\.cc:(\d+)$", l)
        if m and int(m.group(1)) > nlines:
            past.append(l.strip())
        if "(inlined)" in l and m:
            depth += 1
        else:
            levels = max(levels, depth)
            depth = 0
        if re.search(r"\smain\+0x", l) and m:
            main_lines.add(int(m.group(1)))
if past:
    sys.exit("lines past the end of inl.cc (%d lines): %s" % (nlines, past[:3]))
# Chain<16>::step .. Chain<0>::step inlined into main: 17 levels
if levels < 17:
    sys.exit("at most %d inlined levels in one frame, the program has 17" % levels)
# a line of main outside its body is a callee's
if not main_lines or any(not m0 <= n <= m1 for n in main_lines):
    sys.exit("main shown at lines %s, its body is %d-%d" % (sorted(main_lines), m0, m1))
print("%d inlined levels at most; main at lines %s" % (levels, sorted(main_lines)))
PY
echo "ok: inline levels and lines"

# the functions inlined away are in the report and the exports: the
# std::function-called helper's chain, every Chain<N>::step, fib
"$PERFPORT" -q report -i "$WORK/fp.data" --top 100 --no-threads >"$WORK/report.txt" || fail "report: exit $?"
"$PERFPORT" -q export -i "$WORK/fp.data" -f folded -O annotate=false -o "$WORK/fp.folded" || fail "export: exit $?"
for fn in "helper" "Chain<0>::step" "Chain<8>::step" "Chain<16>::step" "fib"; do
	grep -qF "$fn" "$WORK/report.txt" || fail "report lacks $fn"
	grep -qF ";$fn;" "$WORK/fp.folded" || grep -qF ";$fn " "$WORK/fp.folded" || fail "folded stacks lack $fn"
done
echo "ok: inlined functions in report and exports"

# inlined lambdas keep the name the demangler gives them out of line
# (main::{lambda(long)#2}::operator(), not a bare operator(); in a namespace's
# function, with a class type's parameter, nested in another): each name's
# lines are the lines of that lambda in an -O0 build, where no lambda is
# inlined and each has its symbol
g++ -O0 -g -o "$WORK/inl0" "$TOP/tests/e2e/progs/inl.cc" || fail "cannot build progs/inl.cc at -O0"
$PY - "$WORK/fp.stacks" "$WORK/inl0" "$A2L" <<'PY' || fail "lambda names"
import collections, re, subprocess, sys
stacks, inl0, a2l = sys.argv[1:4]
lines = collections.defaultdict(set)     # lambda name -> its lines at -O0
for l in subprocess.run(["nm", "-C", "-S", inl0], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"([0-9a-f]+) ([0-9a-f]+) [tTwW] (.*\{lambda.*::operator\(\))\(.*\)( const)?$", l)
    if not m:
        continue
    start, size, name = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
    out = subprocess.run([a2l, "-e", inl0] + ["0x%x" % a for a in range(start, start + size)],
                         capture_output=True, text=True).stdout.split()
    lines[name] |= {int(x.rsplit(":", 1)[1]) for x in out if re.search(r"inl\.cc:\d+$", x)}
if len(lines) < 6:
    sys.exit("the -O0 build has %d lambda symbols, 6 expected" % len(lines))
seen = collections.Counter()
for l in open(stacks):
    m = re.search(r"^\s*[0-9a-f]+ (.*\{lambda.*::operator\(\)) \(inlined\) \S*inl\.cc:(\d+)$", l)
    if not m:
        continue
    name, line = m.group(1), int(m.group(2))
    if name not in lines or line not in lines[name]:
        sys.exit("%s at line %d: at -O0 that name has lines %s" % (name, line, sorted(lines.get(name, ()))))
    seen[name] += 1
if len(seen) < 4:
    sys.exit("inlined lambdas named: %s" % dict(seen))
for n, c in sorted(seen.items()):
    print("%s: %d frames, lines as at -O0" % (n, c))
PY
echo "ok: inlined lambdas keep their names"

# a program built by clang: no .debug_aranges unless asked (-gdwarf-aranges),
# where libdw 0.188 looks units up, so each unit's own address ranges find
# it; the same chains and lines as llvm-addr2line -i, with -g and dwarf
if command -v clang++ >/dev/null; then
	clang++ -O2 -g -fno-omit-frame-pointer -o "$WORK/inl-clang" "$TOP/tests/e2e/progs/inl.cc" ||
		fail "cannot build progs/inl.cc with clang++"
	readelf -S "$WORK/inl-clang" | grep -q '\.debug_aranges' &&
		echo "note: this clang++ writes .debug_aranges: units are found as for g++'s programs"
	record "$WORK/clang-fp.data" -g -F 999 -e cpu-clock -- "$WORK/inl-clang" 2000000
	record "$WORK/clang-dwarf.data" --call-graph dwarf -F 499 -e cpu-clock -- "$WORK/inl-clang" 1000000
	for v in fp dwarf; do
		"$PERFPORT" -q stacks -i "$WORK/clang-$v.data" >"$WORK/clang-$v.stacks" ||
			fail "stacks clang $v: exit $?"
		$PY "$TOP/tests/e2e/lib/inline_cmp.py" "$WORK/clang-$v.stacks" "$WORK/clang-$v.data" \
			"$WORK/inl-clang" "$A2L" 99 || fail "clang $v: inline chains differ from llvm-addr2line -i"
	done
	echo "ok: a clang-built program's lines and inlined calls"
else
	echo "note: clang++ is not installed: a clang-built program is not checked"
fi

# split DWARF (-gsplit-dwarf): the program holds skeleton units, their
# functions and inlined calls are in .dwo files beside it (found from the
# skeleton's DW_AT_comp_dir and DW_AT_dwo_name); DWARF 4 and 5, g++ and clang++
n=0
for cc in "g++ -gdwarf-4" "g++ -gdwarf-5" "clang++"; do
	set -- $cc
	command -v "$1" >/dev/null || continue
	n=$((n + 1))
	mkdir -p "$WORK/split$n"
	(cd "$WORK/split$n" && $cc -O2 -g -gsplit-dwarf -fno-omit-frame-pointer -o inl \
		"$TOP/tests/e2e/progs/inl.cc") || fail "cannot build progs/inl.cc with $cc -gsplit-dwarf"
	ls "$WORK/split$n"/*.dwo >/dev/null 2>&1 || fail "$cc -gsplit-dwarf made no .dwo file"
	record "$WORK/split$n.data" -g -F 999 -e cpu-clock -- "$WORK/split$n/inl" 2000000
	"$PERFPORT" -q stacks -i "$WORK/split$n.data" >"$WORK/split$n.stacks" || fail "stacks $cc -gsplit-dwarf: exit $?"
	$PY "$TOP/tests/e2e/lib/inline_cmp.py" "$WORK/split$n.stacks" "$WORK/split$n.data" "$WORK/split$n/inl" \
		"$A2L" 99 || fail "$cc -gsplit-dwarf: inline chains differ from llvm-addr2line -i"
done
echo "ok: split DWARF's lines and inlined calls ($n compilers)"
