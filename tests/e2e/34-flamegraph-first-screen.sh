#!/usr/bin/env bash
# The flame graph opens on the part worth seeing: a profile 128 frames deep
# (2,176 px of rows, far taller than the window) shows its root row and the
# widest boxes above it on the first screen, in headless Chromium; the
# legend by module names the colours that cover the drawing (the module
# whose boxes are widest first); a recording whose stacks are broken says so
# in the page's header, as report's header and export's warnings do; a
# system-wide recording is titled as every CPU's, not as the workload perf
# ran (sleep). The first screen is kept in
# $TEST_OUT/flamegraph-first-screen.png.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
command -v chromium >/dev/null || skip "chromium is not installed (apt-get install chromium)"

cat >"$WORK/deep.c" <<'C'
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i * i;
	return s;
}
__attribute__((noinline)) static unsigned long deep(int d, unsigned long n)
{
	unsigned long r = d ? deep(d - 1, n) : spin(n);
	sink += r;
	return r + 1;
}
int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 300;
	for (long k = 0; k < rounds; k++)
		sink += deep(300, 1000000);
	return 0;
}
C
cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$WORK/deep" "$WORK/deep.c" ||
	fail "cannot build the deep program"
# (perf keeps kernel.perf_event_max_stack frames, 127 by default: deep enough)
record "$WORK/deep.data" --call-graph fp -F 999 -e cpu-clock -- "$WORK/deep" 400
"$PERFPORT" -q export -i "$WORK/deep.data" -f flamegraph -o "$WORK/deep.html" || fail "export: exit $?"

# a broken-stack recording: CPython (no frame pointers in Debian's build) with -g
$PY -c 'print(1)' >/dev/null
record "$WORK/py.data" -g -F 999 -e cpu-clock -- $PY -c 'import json; [json.dumps(list(range(300))) for _ in range(40000)]'
"$PERFPORT" -q report -i "$WORK/py.data" --no-tree --no-threads --top 1 >"$WORK/py.txt" || fail "report: exit $?"
"$PERFPORT" export -i "$WORK/py.data" -f flamegraph -o "$WORK/py.html" 2>"$WORK/py.err" || fail "export: exit $?: $(said "$WORK/py.err")"
broken=$(sed -n 's/^# warning: broken stacks: \([0-9.]*\)%.*/\1/p' "$WORK/py.txt")
ART=${TEST_OUT:-$WORK}
mkdir -p "$ART"

$PY - "$WORK" "$ART" "$TOP/tests/e2e/lib" "$broken" <<'PY' || fail "flame graph's first screen (log: $ART/chromium-first.log)"
import sys
w, art, lib, broken = sys.argv[1:5]
sys.path.insert(0, lib)
from browser import Browser

with Browser(log=art + "/chromium-first.log") as b:
    b.open("file://" + w + "/deep.html")
    if b.eval("document.body.dataset.rendered") is None:
        sys.exit("the page did not render")
    rows = b.eval("perfport.row(0) / perfport.rowHeight + 1")
    inner = b.eval("innerHeight")
    head = b.eval("document.querySelector('header').getBoundingClientRect().bottom")
    top = b.eval("document.getElementById('fg').getBoundingClientRect().top")
    root_y = top + b.eval("perfport.row(0)")
    b.screenshot(art + "/flamegraph-first-screen.png")
    print("%d rows (%d px) in a %d px window; the root row at y=%.0f, the header ends at %.0f" %
          (rows, rows * b.eval("perfport.rowHeight"), inner, root_y, head))
    if rows * b.eval("perfport.rowHeight") < 2 * inner:
        sys.exit("the profile is only %d rows deep: not a deep one (perf_event_max_stack?)" % rows)
    if not (head <= root_y and root_y + b.eval("perfport.rowHeight") <= inner):
        sys.exit("the root row (y=%.0f) is not on the first screen (%.0f..%d)" % (root_y, head, inner))
    # the widest boxes: main and the first calls of deep, just above the root
    for d in (1, 2, 3):
        y = top + b.eval("perfport.row(%d)" % d)
        if not head <= y <= inner:
            sys.exit("row %d (y=%.0f) is not on the first screen" % (d, y))
    heading = b.eval("document.getElementById('title').textContent")
    if not heading.startswith("Flame graph of deep on "):
        sys.exit("heading %r: not the program (perf's -o deep.data is not it)" % heading)
    leg = [e["text"] for e in b.eval("perfport.legend()")]
    if not leg or leg[0] != "deep":
        sys.exit("legend %r: the program's module, which covers the drawing, is not first" % leg)

    b.open("file://" + w + "/py.html")
    warn = b.eval("Array.from(document.querySelectorAll('#warnings li'), (l) => l.textContent)")
    shown = b.eval("!document.getElementById('warnings').hidden")
    print("header warnings: %r" % warn)
    if broken:
        if not shown or not any(x.startswith("broken stacks: %s%%" % broken) for x in warn):
            sys.exit("report says %s%% of stacks are broken; the page's header says %r" % (broken, warn))
    elif warn:
        sys.exit("report has no broken-stack warning, the page %r" % warn)
PY
if [ -n "$broken" ]; then
	has "broken stacks: $broken%" "$WORK/py.err" || fail "export did not warn of broken stacks: $(cat "$WORK/py.err")"
	"$PERFPORT" -q export -i "$WORK/py.data" -f flamegraph -O format=svg -o "$WORK/py.svg" || fail "svg: exit $?"
	has "<text class=\"warning\"[^>]*>warning: broken stacks: $broken%" "$WORK/py.svg" ||
		fail "the svg's header does not say the stacks are broken"
	echo "ok: broken stacks ($broken% of on-CPU time) said by report, export, the page and the svg"
else
	echo "note: this python3's stacks were whole under -g: the warning is not tried"
fi
# a system-wide recording is every CPU's, not the workload perf ran
record "$WORK/sw.data" -a -g -F 499 -e cpu-clock -- sleep 0.3
"$PERFPORT" -q export -i "$WORK/sw.data" -f flamegraph -o "$WORK/sw.html" || fail "export -a: exit $?"
has -F '"title":"Flame graph of every CPU on ' "$WORK/sw.html" ||
	fail "system-wide title: $(grep -o '"title":"[^"]*"' "$WORK/sw.html" | head -1)"
echo "ok: the flame graph's first screen shows its root"
echo "ok: a system-wide recording is titled as every CPU's"
