#!/usr/bin/env bash
# The explorer page (plugins/explorer) in a real browser: Debian's headless
# Chromium over the DevTools protocol (tests/e2e/lib/browser.py), on a fresh
# on+off-CPU recording of progs/waits.c with its wakers. Every figure the
# page shows is checked against perfport's own report of the same file:
# - a time range brushed with the mouse on the timeline: the flame graph's
#   total, and every counter's, equal `report --time` for that range;
# - one thread chosen by clicking its lane: `report --tid`'s totals;
# - a function clicked in the top-down tree opens its caller/callee view,
#   whose callers and callees equal those computed from `report --json
#   --time`'s tree;
# - the wakers of the lock waits in __GI___lll_lock_wait, of the thread
#   clicked, of it in the brushed range, of the range, and of the whole
#   recording, equal `report --wakers --json`'s off-wake stacks with the same
#   --tid and --time, and name the unlocking function (libc's lock wake,
#   called by pthread_mutex_unlock);
# - search highlights matching rows and frames, with the share `report`'s
#   tree gives;
# - the bottom-up tree's functions have report's self times;
# - the URL fragment brings back the view, counter, selection and zoom;
# - with --base, the diff view's totals by function are both report's;
# - no console error, no network fetch. Screenshots in $TEST_OUT.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v chromium >/dev/null || skip "chromium is not installed (apt-get install chromium)"
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/waits" "$TOP/tests/e2e/progs/waits.c" ||
	fail "cannot build progs/waits.c"
# (a large buffer: 38 threads' switches and wakings with their stacks; what
# perf loses does not matter here, the page is checked against perfport's
# report of the same file)
record "$WORK/w.data" -e cpu-clock/freq=997/ -e sched:sched_switch --switch-events \
	-e sched:sched_waking -m 1024 -g -- "$WORK/waits" 1.5 "$WORK"
"$PERFPORT" -q report --json -i "$WORK/w.data" >"$WORK/tree.json" || fail "report: exit $?"
"$PERFPORT" -q export -i "$WORK/w.data" -f explorer -o "$WORK/ex.html" || fail "export explorer: exit $?"
# a second, shorter recording as the base of a diff
record "$WORK/base.data" -e cpu-clock/freq=997/ -e sched:sched_switch --switch-events -g -- \
	"$WORK/waits" 0.5 "$WORK"
"$PERFPORT" -q report --json -i "$WORK/base.data" >"$WORK/base.json" || fail "report base: exit $?"
"$PERFPORT" -q export -i "$WORK/w.data" --base "$WORK/base.data" -f explorer -o "$WORK/diff.html" ||
	fail "export explorer --base: exit $?"
ART=${TEST_OUT:-$WORK}
mkdir -p "$ART"

$PY - "$WORK" "$ART" "$TOP/tests/e2e/lib" "$PERFPORT" <<'PY' || fail "explorer in chromium (log: $ART/chromium.log)"
import json, re, subprocess, sys
w, art, lib, perfport = sys.argv[1:5]
sys.path.insert(0, lib)
from browser import Browser

full = json.load(open(w + "/tree.json"))
first = full["meta"]["first_time"]
COUNTERS = ("on-cpu", "preempted", "lock", "io", "sleep", "timed-sleep", "idle")

def report(*args):
    out = subprocess.run([perfport, "-q", "report", "--json", "-i", w + "/w.data", "--min-percent", "0"]
                         + list(args), check=True, capture_output=True, text=True).stdout
    return json.loads(out)

def perf_time(rel):
    # the page's times are ns from the recording's first sample
    t = first + int(rel)
    return "%d.%09d" % (t // 10**9, t % 10**9)

errors = []

def check_console(b):
    for e in b.events:
        if e["method"] == "Runtime.exceptionThrown":
            errors.append(e["params"]["exceptionDetails"].get("text", "") + " " +
                          str(e["params"]["exceptionDetails"].get("exception", {}).get("description", "")))
        elif e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"):
            errors.append(" ".join(str(a.get("value", a.get("description"))) for a in e["params"]["args"]))
    if errors:
        sys.exit("console errors: %r" % errors)

def wait_rendered(b):
    b.eval("new Promise((ok, no) => { const t0 = performance.now(); const f = () => "
           "document.body.dataset.rendered ? ok() : performance.now() - t0 > 60000 ? no('not rendered') "
           ": setTimeout(f, 20); f(); })")

def totals_equal(b, want, what):
    for c in COUNTERS:
        got_ns, got_n = b.eval("perfport.total(%r)" % c), b.eval("perfport.count(%r)" % c)
        if got_ns is None:
            got_ns = got_n = 0
        ref = want.get(c, {"ns": 0, "count": 0})
        if got_ns != ref["ns"] or got_n != ref["count"]:
            sys.exit("%s: %s is %r ns (%r), report says %r ns (%r)" % (what, c, got_ns, got_n, ref["ns"], ref["count"]))

def tree_callers(tree, fn, counter):
    # callers and callees of fn from report's tree, each outermost call once
    nodes, frames = tree["nodes"], tree["frames"]
    name = lambda i: frames[nodes[i]["frame"]]["function"] if i else "[root]"
    total = [n["self"].get(counter, {}).get("ns", 0) for n in nodes]
    for i in range(len(nodes) - 1, 0, -1):
        total[nodes[i]["parent"]] += total[i]
    callers, callees = {}, {}
    for i in range(1, len(nodes)):
        if name(i) != fn:
            continue
        a, outer = nodes[i]["parent"], False
        while a:
            outer = outer or name(a) == fn
            a = nodes[a]["parent"]
        if outer:
            continue
        p = nodes[i]["parent"]
        callers[name(p)] = callers.get(name(p), 0) + total[i]
    for j in range(1, len(nodes)):
        p = nodes[j]["parent"]
        if p and name(p) == fn:
            a, outer = nodes[p]["parent"], False
            while a:
                outer = outer or name(a) == fn
                a = nodes[a]["parent"]
            if not outer:
                callees[name(j)] = callees.get(name(j), 0) + total[j]
    return ({k: v for k, v in callers.items() if v}, {k: v for k, v in callees.items() if v})

def by_function(tree, counter):
    # per function name: its outermost calls' total, as the page's diff
    nodes, frames = tree["nodes"], tree["frames"]
    name = lambda i: frames[nodes[i]["frame"]]["function"]
    total = [n["self"].get(counter, {}).get("ns", 0) for n in nodes]
    for i in range(len(nodes) - 1, 0, -1):
        total[nodes[i]["parent"]] += total[i]
    out = {}
    for i in range(1, len(nodes)):
        a, outer = nodes[i]["parent"], False
        while a:
            outer = outer or name(a) == name(i)
            a = nodes[a]["parent"]
        if total[i] and not outer:
            out[name(i)] = out.get(name(i), 0) + total[i]
    return total[0], out

with Browser(log=art + "/chromium.log") as b:
    b.open("file://" + w + "/ex.html")
    wait_rendered(b)
    print("rendered %d samples in %.0f ms after navigation" %
          (b.eval("perfport.samples()"), b.eval("window.perfportRenderedMs")))
    if b.eval("performance.getEntriesByType('resource').length") != 0:
        sys.exit("the page fetched something")
    if b.eval("document.getElementById('title').textContent") != "Explorer: waits on %s" % full["meta"]["hostname"]:
        sys.exit("title %r" % b.eval("document.getElementById('title').textContent"))
    totals_equal(b, full["totals"], "the whole recording")
    if b.eval("perfport.flameTotal()") != full["totals"]["on-cpu"]["ns"]:
        sys.exit("the flame graph's total %r is not the on-CPU total" % b.eval("perfport.flameTotal()"))
    check_console(b)

    # brush 30%-65% of the timeline with the mouse
    geo = b.eval("""(() => { const r = document.getElementById('tl').getBoundingClientRect();
        return {x: r.left, y: r.top, lw: perfport.labelWidth, w: perfport.timelineWidth()}; })()""")
    x0, x1 = geo["x"] + geo["lw"] + 0.30 * geo["w"], geo["x"] + geo["lw"] + 0.65 * geo["w"]
    y = geo["y"] + 40
    b.mouse("mouseMoved", x0, y)
    b.mouse("mousePressed", x0, y, button="left", clickCount=1)
    for k in range(1, 6):
        b.mouse("mouseMoved", x0 + (x1 - x0) * k / 5, y, button="left")
    b.mouse("mouseReleased", x1, y, button="left", clickCount=1)
    s = b.eval("perfport.selection()")
    if s["t0"] is None or not 0.25 < s["t0"] / b.eval("perfport.span()") < 0.35:
        sys.exit("the brush selected %r" % s)
    rng = "%s,%s" % (perf_time(s["t0"]), perf_time(s["t1"]))
    timed = report("--time", rng)
    totals_equal(b, timed["totals"], "brushed --time " + rng)
    ft = b.eval("perfport.flameTotal()")
    if ft != timed["totals"]["on-cpu"]["ns"] or ft == full["totals"]["on-cpu"]["ns"]:
        sys.exit("brushed: the flame graph's total %r, report --time %r" % (ft, timed["totals"]["on-cpu"]))
    print("brushed %s s: flame graph %d ns = report --time; lock %d ns, io %d ns, sleep %d ns equal too (%.1f ms to re-aggregate)"
          % (rng, ft, timed["totals"].get("lock", {}).get("ns", 0), timed["totals"].get("io", {}).get("ns", 0),
             timed["totals"].get("sleep", {}).get("ns", 0), b.eval("window.perfportLastAggregateMs")))
    b.screenshot(art + "/explorer-brushed.png")

    # click a function in the top-down tree: its caller/callee view, of the brushed range
    b.eval("document.querySelector('#views button[data-v=topdown]').click()")
    b.eval("(() => { const s = document.getElementById('counter'); s.value = 'lock'; "
           "s.dispatchEvent(new Event('change')); })()")
    for fn_open in ("start_thread", "run"):   # open the path down to run
        b.eval("""(() => { for (const tr of document.querySelectorAll('table.tree tr'))
            if (tr.querySelector('.fn') && tr.querySelector('.fn').textContent === %r) {
                tr.querySelector('.tog').click(); return; } })()""" % fn_open)
    pos = b.eval("""(() => { for (const e of document.querySelectorAll('table.tree .fn'))
        if (e.textContent === 'run') { e.scrollIntoView({block: 'center'});
            const r = e.getBoundingClientRect(); return {x: r.left + 5, y: r.top + r.height / 2}; }
        return null; })()""")
    if not pos:
        sys.exit("run is not in the top-down tree")
    b.screenshot(art + "/explorer-topdown.png")
    b.click(pos["x"], pos["y"])
    if b.eval("perfport.view()") != "callers" or not b.eval("document.querySelector('#view h3').textContent").startswith("run:"):
        sys.exit("clicking run did not open its caller/callee view")
    page = b.eval("perfport.callerCallee('run')")
    for c in ("lock", "on-cpu", "io"):
        want_callers, want_callees = tree_callers(timed, "run", c)
        got_callers = {k: v[c] for k, v in page["callers"].items() if v.get(c)}
        got_callees = {k: v[c] for k, v in page["callees"].items() if v.get(c)}
        if got_callers != want_callers or got_callees != want_callees:
            sys.exit("run's %s callers %r callees %r; report's tree: %r %r" %
                     (c, got_callers, got_callees, want_callers, want_callees))
    print("caller/callee of run (%s): callers %s, %d callees, as report --time's tree" %
          ("lock", tree_callers(timed, "run", "lock")[0], len(tree_callers(timed, "run", "lock")[1])))
    b.screenshot(art + "/explorer-callers.png")

    # one thread, chosen by clicking its lane's label
    b.eval("document.getElementById('clear').click()")
    tid = next(t["tid"] for t in full["threads"] if t["comm"] == "mutex")
    lane = next(l for l in b.eval("perfport.lanes()") if l.get("tid") == tid)
    pos = b.eval("""(() => { const wrap = document.getElementById('tlwrap');
        wrap.scrollTop = %d - 40; const r = document.getElementById('tl').getBoundingClientRect();
        return {x: r.left + 20, y: r.top + %d + %d / 2}; })()""" % (lane["y"], lane["y"], lane["h"]))
    b.click(pos["x"], pos["y"])
    if b.eval("perfport.selection()")["tids"] != [tid]:
        sys.exit("clicking mutex's lane selected %r" % b.eval("perfport.selection()"))
    one = report("--tid", str(tid))
    totals_equal(b, one["totals"], "thread %d" % tid)
    print("thread mutex (%d): lock %d ns, timed-sleep %d ns = report --tid" %
          (tid, one["totals"].get("lock", {}).get("ns", 0), one["totals"].get("timed-sleep", {}).get("ns", 0)))

    # the wakers of the lock waits in libc's lock wait, of the selection:
    # report --wakers's off-wake stacks for the same thread, range, both, none
    def wakers_ref(rep):
        ref = {}
        for x in rep["wakers"]:
            st = x["stack"]
            sep = st.index("--- woken by ---")
            if x["counter"] == "lock" and "__GI___lll_lock_wait" in st[:sep]:
                k = "\n".join(st[sep + 1:])
                ref[k] = ref.get(k, 0) + x["ns"]
        return ref
    b.eval("document.querySelector('#views button[data-v=wakers]').click()")
    b.eval("(() => { const s = document.getElementById('counter'); s.value = 'lock'; "
           "s.dispatchEvent(new Event('change')); })()")
    for args, sel_js in ((["--tid", str(tid)], None),   # the thread clicked above
                         (["--tid", str(tid), "--time", rng], "perfport.select(%d, %d, [%d])" % (s["t0"], s["t1"], tid)),
                         (["--time", rng], "perfport.select(%d, %d, [])" % (s["t0"], s["t1"])),
                         ([], "perfport.select(null, null, [])")):
        if sel_js:
            b.eval(sel_js)
        wk = b.eval("perfport.wakers('__GI___lll_lock_wait')")
        ref = wakers_ref(report("--no-tree", "--wakers", *args))
        if wk != ref or (not args or args == ["--tid", str(tid)]) and not wk:
            sys.exit("wakers of __GI___lll_lock_wait (%s): %d stacks %d ns, report --wakers %d stacks %d ns" %
                     (" ".join(args) or "all", len(wk), sum(wk.values()), len(ref), sum(ref.values())))
        print("wakers of the lock waits (%s): %d stacks, %d ns, as report --wakers" %
              (" ".join(args) or "whole recording", len(wk), sum(wk.values())))
    if "in the selection" not in b.eval("document.querySelector('#view p').textContent"):
        sys.exit("the wakers view does not say it follows the selection")
    top = max(wk, key=wk.get).split("\n")
    # (with -g, libc's frames hide the lock holder's own function: libc has
    # no frame pointers; its unlock's wake is the unlocking function here)
    if not any(re.search("lll_lock_wake|mutex_unlock", f) for f in top):
        sys.exit("the top waker of the lock waits does not unlock: %r" % top)
    print("the top waker (%d ns): %s" %
          (wk["\n".join(top)], " < ".join(f for f in top if not f.startswith(("try_", "wake_", "futex", "__x64", "do_", "entry")))))
    b.eval("(() => { const s = document.getElementById('search'); s.value = 'lll_lock_wake'; "
           "s.dispatchEvent(new Event('input')); })()")
    if not b.eval("document.querySelectorAll('#wakers tr.match').length"):
        sys.exit("search does not highlight the wakers naming __GI___lll_lock_wake")
    b.screenshot(art + "/explorer-wakers.png")

    # search in the flame graph: the share of the matching frames
    b.eval("document.getElementById('clear').click()")
    b.eval("(() => { const s = document.getElementById('counter'); s.value = 'on-cpu'; "
           "s.dispatchEvent(new Event('change')); })()")
    b.eval("document.querySelector('#views button[data-v=flame]').click()")
    b.eval("(() => { const s = document.getElementById('search'); s.value = '^wait_'; "
           "s.dispatchEvent(new Event('input')); })()")
    nodes, frames = full["nodes"], full["frames"]
    total = [n["self"].get("on-cpu", {}).get("ns", 0) for n in nodes]
    for i in range(len(nodes) - 1, 0, -1):
        total[nodes[i]["parent"]] += total[i]
    hit = 0   # each matching node's total, a match inside a match once
    for i in range(1, len(nodes)):
        a, inside = nodes[i]["parent"], False
        while a:
            inside = inside or frames[nodes[a]["frame"]]["function"].startswith("wait_")
            a = nodes[a]["parent"]
        if not inside and frames[nodes[i]["frame"]]["function"].startswith("wait_"):
            hit += total[i]
    if b.eval("perfport.matched()") != hit or "matched: %.2f%%" % (100 * hit / total[0]) not in \
            b.eval("document.getElementById('status').textContent"):
        sys.exit("search ^wait_: %r, report's tree %d" % (b.eval("perfport.matched()"), hit))
    hits = b.eval("perfport.timelineHits()")
    if not hits:
        sys.exit("search ^wait_ marks nothing on the timeline")
    print("search ^wait_: %s; %d thread-pixels marked on the timeline" %
          (b.eval("document.getElementById('status').textContent"), hits))

    # the bottom-up tree's first level: each function's self time, as report's frames
    b.eval("document.querySelector('#views button[data-v=bottomup]').click()")
    rows = b.eval("""[...document.querySelectorAll('table.tree tr')].slice(2, 8).map(tr =>
        [tr.querySelector('.fn').textContent, tr.children[1].textContent])""")
    selfs = {}
    for f in full["frames"]:
        selfs[f["function"]] = selfs.get(f["function"], 0) + f["self"].get("on-cpu", {}).get("ns", 0)
    for fn, shown in rows:
        if shown != "%.3f ms" % (selfs.get(fn, 0) / 1e6) and shown != "%.1f ms" % (selfs.get(fn, 0) / 1e6):
            sys.exit("bottom-up: %s self %s, report's frames %d ns" % (fn, shown, selfs.get(fn, 0)))
    print("bottom-up: the top %d functions' self as report's frames (%s %s)" % (len(rows), rows[0][0], rows[0][1]))
    b.eval("(() => { const s = document.getElementById('search'); s.value = 'zzz_no_such_frame'; "
           "s.dispatchEvent(new Event('input')); })()")
    if b.eval("perfport.timelineHits()") or b.eval("document.querySelectorAll('tr.match').length"):
        sys.exit("a search matching nothing marks the timeline or rows")
    b.eval("(() => { const s = document.getElementById('search'); s.value = '^wait_'; "
           "s.dispatchEvent(new Event('input')); })()")
    b.eval("document.querySelector('#views button[data-v=flame]').click()")

    # the fragment: view, counter, selection, zoom and search come back
    b.eval("(() => { const s = document.getElementById('counter'); s.value = 'io'; "
           "s.dispatchEvent(new Event('change')); })()")
    io_tid = max((t for t in full["threads"] if t["comm"] != "waits"),
                 key=lambda t: t["counters"].get("io", {}).get("ns", 0))["tid"]
    b.eval("perfport.select(%d, %d, [%d])" % (s["t0"], s["t1"], io_tid))
    box = max(b.eval("perfport.boxes('run')"), key=lambda x: x["w"])
    pos = b.eval("""(() => { const c = document.getElementById('fg'), y = perfport.rowMiddle(%d);
        let r = c.getBoundingClientRect(); window.scrollTo(0, window.scrollY + r.top + y - innerHeight / 2);
        r = c.getBoundingClientRect(); return {x: r.left + %f, y: r.top + y}; })()""" % (box["d"], box["x"] + box["w"] / 2))
    b.click(pos["x"], pos["y"])
    if b.eval("perfport.zoomed()")["name"] != "run":
        sys.exit("clicking run's box zoomed to %r" % b.eval("perfport.zoomed()"))
    b.screenshot(art + "/explorer-zoomed.png")
    before = {"sel": b.eval("perfport.selection()"), "io": b.eval("perfport.total('io')"),
              "view": b.eval("perfport.view()"), "counter": b.eval("perfport.counter()"),
              "zoom": b.eval("perfport.zoomed()"), "boxes": b.eval("perfport.boxes('run')")}
    url = b.eval("location.href")
    check_console(b)
    b.open("about:blank")
    b.open(url)
    wait_rendered(b)
    after = {"sel": b.eval("perfport.selection()"), "io": b.eval("perfport.total('io')"),
             "view": b.eval("perfport.view()"), "counter": b.eval("perfport.counter()"),
             "zoom": b.eval("perfport.zoomed()"), "boxes": b.eval("perfport.boxes('run')")}
    if before != after or b.eval("document.getElementById('search').value") != "^wait_":
        sys.exit("the link %s brought back %r, not %r" % (url, after, before))
    if not before["io"] or before["zoom"]["node"] == 0:
        sys.exit("the link's state is empty: %r" % before)
    print("link %s brings back the view, counter, selection, zoom and search" % url.split("#")[1])
    b.screenshot(art + "/explorer-link.png")
    check_console(b)

    # the diff against a base recording: each function's total in both, as report's trees
    b.open("file://" + w + "/diff.html#v=diff&c=on-cpu")
    wait_rendered(b)
    d = b.eval("perfport.diff()")
    base_all, base_fns = by_function(json.load(open(w + "/base.json")), "on-cpu")
    new_all, new_fns = by_function(full, "on-cpu")
    got_base = {k: v["base"] for k, v in d["rows"].items() if v["base"]}
    got_new = {k: v["now"] for k, v in d["rows"].items() if v["now"]}
    if d["baseAll"] != base_all or d["nowAll"] != new_all or got_base != base_fns or got_new != new_fns:
        sys.exit("diff: base %r/%d functions, new %r/%d; report's %r/%d and %r/%d" %
                 (d["baseAll"], len(got_base), d["nowAll"], len(got_new), base_all, len(base_fns),
                  new_all, len(new_fns)))
    if not b.eval("document.querySelectorAll('#diff tr').length") > 10:
        sys.exit("the diff view shows no rows")
    print("diff: %d functions, totals of both recordings as report's (base %d ns, new %d ns)" %
          (len(d["rows"]), base_all, new_all))
    b.screenshot(art + "/explorer-diff.png")
    check_console(b)
PY
echo "ok: explorer in chromium (screenshots in $ART)"
