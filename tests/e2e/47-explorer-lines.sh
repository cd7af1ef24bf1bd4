#!/usr/bin/env bash
# The explorer's cost per source line (issue 56): a fresh recording of
# progs/hotline.c (-O0 -g, a loop whose inner statement is marked HOT),
# exported with -f explorer alone (the host keys frames by file:line, ABI
# 1.7's PERFPORT_EXPORTER_LINES), opened in Debian's headless Chromium over
# the DevTools protocol (tests/e2e/lib/browser.py). Checked against perf:
# - work()'s lines' self sample counts (plus main()'s) are `perf report
#   --sort srcline`'s sample counts for hotline.c's lines, and the HOT line
#   has the most;
# - main()'s CALL line's total is work()'s total as its caller, for the
#   whole recording and for a range selected on the page;
# - off CPU (a second recording, with sched_switch and DWARF stacks: libc
#   has no frame pointers to walk from clock_nanosleep to main): main()'s
#   SLEEP line's timed-sleep total is the page's whole timed-sleep total,
#   and `perfport report`'s;
# - the caller/callee view shows the lines' table (the link #v=callers&fn=work);
# - with -O explorer.source=true the page carries the source: the HOT line's
#   row shows its text; without it, no text;
# - with another format asked for beside it (-f explorer,folded) the folded
#   output is -f folded's byte for byte and the page says it has no lines.
# No console error. A screenshot in $TEST_OUT.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v chromium >/dev/null || skip "chromium is not installed (apt-get install chromium)"
cc -O0 -g -fno-omit-frame-pointer -o "$WORK/hotline" "$TOP/tests/e2e/progs/hotline.c" ||
	fail "cannot build progs/hotline.c"
record "$WORK/h.data" -e cpu-clock -F 2000 -g -- "$WORK/hotline" 40000000
"$PERFPORT" -q export -i "$WORK/h.data" -f explorer -o "$WORK/h.html" || fail "export explorer: exit $?"
record "$WORK/s.data" -e cpu-clock -F 2000 -e sched:sched_switch --switch-events --call-graph dwarf -- \
	"$WORK/hotline" 1000000
"$PERFPORT" -q export -i "$WORK/s.data" -f explorer -o "$WORK/s.html" || fail "export explorer (off-CPU): exit $?"
"$PERFPORT" -q report --json -i "$WORK/s.data" >"$WORK/s.json" || fail "report (off-CPU): exit $?"
"$PERFPORT" -q export -i "$WORK/h.data" -f explorer -O explorer.source=true -o "$WORK/hs.html" ||
	fail "export explorer with source: exit $?"
"$PERFPORT" -q export -i "$WORK/h.data" -f explorer,folded -o "$WORK/both" ||
	fail "export explorer,folded: exit $?"
"$PERFPORT" -q export -i "$WORK/h.data" -f folded -o "$WORK/h.folded" || fail "export folded: exit $?"
cmp -s "$WORK/both/profile.folded" "$WORK/h.folded" ||
	fail "-f explorer,folded's folded output is not -f folded's"
perf report -i "$WORK/h.data" --stdio --no-children --sort srcline -F sample,srcline -g none \
	>"$WORK/srcline.txt" 2>"$WORK/stderr.txt" || fail "perf report --sort srcline: exit $?: $(said "$WORK/stderr.txt")"
HOT=$(grep -n '/\* HOT \*/' "$TOP/tests/e2e/progs/hotline.c" | cut -d: -f1)
CALL=$(grep -n '/\* CALL \*/' "$TOP/tests/e2e/progs/hotline.c" | cut -d: -f1)
SLEEP=$(grep -n '/\* SLEEP \*/' "$TOP/tests/e2e/progs/hotline.c" | cut -d: -f1)
ART=${TEST_OUT:-$WORK}
mkdir -p "$ART"

$PY - "$WORK" "$ART" "$TOP/tests/e2e/lib" "$HOT" "$CALL" "$SLEEP" <<'PY' || fail "explorer lines in chromium (log: $ART/chromium-lines.log)"
import json, re, sys
w, art, lib = sys.argv[1:4]
hot, call, sleep = (int(x) for x in sys.argv[4:7])
sys.path.insert(0, lib)
from browser import Browser

perf = {}
for l in open(w + "/srcline.txt"):
    m = re.match(r"\s*(\d+)\s+hotline\.c:(\d+)\s*$", l)
    if m:
        perf[int(m.group(2))] = perf.get(int(m.group(2)), 0) + int(m.group(1))
if not perf or max(perf, key=perf.get) != hot:
    sys.exit("perf's own lines do not make line %d the hottest: %r" % (hot, perf))

def wait_rendered(b):
    b.eval("new Promise((ok, no) => { const t0 = performance.now(); const f = () => "
           "document.body.dataset.rendered ? ok() : performance.now() - t0 > 60000 ? no('not rendered') "
           ": setTimeout(f, 20); f(); })")

def check_console(b):
    bad = [e for e in b.events if e["method"] == "Runtime.exceptionThrown" or
           (e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))]
    if bad:
        sys.exit("console errors: %r" % bad)

def lines(b, fn):
    got = b.eval("perfport.lines(%r)" % fn)
    if got is None:
        sys.exit("the page has no lines per sample")
    return {e["line"]: e for e in got if e["file"] and e["file"].endswith("/hotline.c")}

with Browser(log=art + "/chromium-lines.log") as b:
    b.open("file://" + w + "/h.html#v=callers&fn=work")
    wait_rendered(b)
    check_console(b)
    work, main = lines(b, "work"), lines(b, "main")
    page = {}
    for d in (work, main):
        for ln, e in d.items():
            if e["selfCount"]["on-cpu"]:
                page[ln] = page.get(ln, 0) + e["selfCount"]["on-cpu"]
    print("perf report --sort srcline:", dict(sorted(perf.items())))
    print("page (work and main, self):", dict(sorted(page.items())))
    if max(page, key=page.get) != hot:
        sys.exit("the page's hottest line is %r, not %d" % (max(page, key=page.get), hot))
    if page != perf:
        sys.exit("the page's samples per line differ from perf's")
    share = page[hot] / sum(page.values())
    print("line %d: %.1f%% of the samples in hotline.c" % (hot, 100 * share))

    def caller_total():
        return b.eval("perfport.callerCallee('work')")["callers"]["main"]["on-cpu"]
    if call not in main or main[call]["total"]["on-cpu"] != caller_total():
        sys.exit("main's line %d: total %r, work's caller main %r" %
                 (call, main.get(call, {}).get("total"), caller_total()))
    # a range: the first 40% of the recording
    span = b.eval("perfport.span()")
    b.eval("perfport.select(0, %d, [])" % int(span * 0.4))
    main = lines(b, "main")
    if main[call]["total"]["on-cpu"] != caller_total() or not caller_total():
        sys.exit("in a range, main's line %d: total %r, work's caller main %r" %
                 (call, main[call]["total"], caller_total()))
    if b.eval("document.querySelector('table[data-kind=lines]') !== null") is not True:
        sys.exit("the caller/callee view shows no lines' table")
    if any(e.get("source") for e in b.eval("perfport.lines('work')")):
        sys.exit("a page exported without source=true carries source text")
    check_console(b)

    b.open("file://" + w + "/hs.html#v=callers&fn=work")
    wait_rendered(b)
    src = {e["line"]: e["source"] for e in b.eval("perfport.lines('work')")}
    if "/* HOT */" not in src.get(hot, ""):
        sys.exit("with source=true, line %d reads %r" % (hot, src.get(hot)))
    if "/* HOT */" not in b.eval("[...document.querySelectorAll('table[data-kind=lines] td.src')]"
                                 ".map(td => td.textContent).join('\\n')"):
        sys.exit("the lines' table shows no source text")
    b.screenshot(art + "/explorer-lines.png")
    check_console(b)

    b.open("file://" + w + "/s.html#v=callers&fn=main")
    wait_rendered(b)
    main, whole = lines(b, "main"), b.eval("perfport.total('timed-sleep')")
    rep = json.load(open(w + "/s.json"))["totals"].get("timed-sleep", {}).get("ns", 0)
    got = main.get(sleep, {}).get("total", {}).get("timed-sleep")
    print("off CPU: main's line %d timed-sleep %r ns, the page's %r, report's %r" % (sleep, got, whole, rep))
    if not got or got != whole or got != rep:
        sys.exit("main's line %d: timed-sleep %r ns, the page's total %r, report's %r" % (sleep, got, whole, rep))
    check_console(b)

    b.open("file://" + w + "/both/explorer.html#v=callers&fn=work")
    wait_rendered(b)
    if b.eval("perfport.lines('work')") is not None:
        sys.exit("a page exported beside folded has lines per sample")
    check_console(b)
PY
echo "PASS"
