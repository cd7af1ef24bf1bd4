#!/usr/bin/env bash
# The flame graph page in a real browser: Debian's headless Chromium, driven
# over the DevTools protocol (tests/e2e/lib/browser.py, standard library
# only). The page of a fresh recording loads from file:// with no network;
# the hot function's boxes take its share of the width (within 1% of the
# tree's); hovering it shows a tooltip with its name, module, source line,
# self and total; a click zooms to it and the browser's back button unzooms;
# search reports the share it matches; switching the counter changes the
# total to that counter's. A screenshot is kept in $TEST_OUT.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v chromium >/dev/null || skip "chromium is not installed (apt-get install chromium)"
record_shape "$WORK/sw.data"
"$PERFPORT" -q report --json -i "$WORK/sw.data" >"$WORK/tree.json" || fail "report: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f flamegraph -o "$WORK/fg.html" ||
	fail "export flamegraph: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f flamegraph -O format=svg -o "$WORK/fg.svg" ||
	fail "export flamegraph svg: exit $?"
ART=${TEST_OUT:-$WORK}
mkdir -p "$ART"

$PY - "$WORK" "$ART" "$TOP/tests/e2e/lib" <<'PY' || fail "flame graph in chromium (log: $ART/chromium.log)"
import json, re, sys
w, art, lib = sys.argv[1:4]
sys.path.insert(0, lib)
from browser import Browser

tree = json.load(open(w + "/tree.json"))
nodes, frames = tree["nodes"], tree["frames"]

def share(counter, name):
    total = [n["self"].get(counter, {}).get("ns", 0) for n in nodes]
    for i in range(len(nodes) - 1, 0, -1):
        total[nodes[i]["parent"]] += total[i]
    hot = sum(total[i] for i, n in enumerate(nodes) if i and frames[n["frame"]]["function"] == name)
    return hot / total[0]

with Browser(log=art + "/chromium.log") as b:
    b.open("file://" + w + "/fg.html")
    if b.eval("document.body.dataset.rendered") is None:
        sys.exit("the page did not render")
    print("rendered in %.0f ms after navigation" % b.eval("window.perfportRenderedMs"))
    if b.eval("performance.getEntriesByType('resource').length") != 0:
        sys.exit("the page fetched something")
    title = b.eval("document.title")
    if b.eval("document.getElementById('title').textContent") != "Flame graph of shape on %s" % tree["meta"]["hostname"]:
        sys.exit("heading %r does not name the program and host" % b.eval("document.getElementById('title').textContent"))
    if tree["meta"]["hostname"] not in title or "perf record" not in title or \
            not re.search(r"\d{4}-\d\d-\d\dT.* \+[0-9.]+ s .*perfport \d+\.\d+", title):
        sys.exit("title %r: not host, command, time span and version" % title)

    # the hot function's width share
    boxes = b.eval("perfport.boxes('heavy')")
    width = b.eval("perfport.width()")
    got, want = sum(x["width"] for x in boxes) / width, share("on-cpu", "heavy")
    print("heavy: %.2f%% of the width, %.2f%% of the tree's on-CPU time" % (100 * got, 100 * want))
    if not boxes or abs(got - want) > 0.01 * want:
        sys.exit("heavy's boxes take %.4f of the width, the tree %.4f" % (got, want))

    # hover it: the tooltip
    big = max(boxes, key=lambda x: x["width"])
    pos = b.eval("""(() => {
        const c = document.getElementById('fg'), y = perfport.row(%d) + perfport.rowHeight / 2;
        let r = c.getBoundingClientRect();
        window.scrollTo(0, window.scrollY + r.top + y - innerHeight / 2);
        r = c.getBoundingClientRect();
        return {x: r.left + %f, y: r.top + y};
    })()""" % (big["depth"], big["left"] + big["width"] / 2))
    b.mouse("mouseMoved", pos["x"], pos["y"])
    tip = b.eval("document.getElementById('tip').hidden ? null : document.getElementById('tip').textContent")
    print("tooltip:\n  " + (tip or "(none)").replace("\n", "\n  "))
    if not tip or not tip.startswith("heavy\n") or "shape" not in tip or "shape.c:" not in tip \
            or "total:" not in tip or "self:" not in tip or "%" not in tip:
        sys.exit("the tooltip does not describe heavy")
    b.screenshot(art + "/flamegraph-hover.png")

    # click: zoomed to it; back: unzoomed
    b.click(pos["x"], pos["y"])
    z = b.eval("perfport.zoomed()")
    if z["name"] != "heavy" or b.eval("location.hash") != "#zoom=%d" % z["node"]:
        sys.exit("click: zoomed to %r, hash %r" % (z, b.eval("location.hash")))
    after = b.eval("perfport.boxes('heavy')")
    if not any(abs(x["width"] - width) < 1 for x in after):
        sys.exit("zoomed to heavy, but its box is not the full width: %r" % after)
    b.screenshot(art + "/flamegraph-zoomed.png")
    b.eval("history.back()")
    b.eval("new Promise(r => setTimeout(r, 200))")
    if b.eval("perfport.zoomed().node") != 0:
        sys.exit("back: still zoomed to %r" % b.eval("perfport.zoomed()"))
    print("click zoomed to heavy (full width); back unzoomed")

    # search
    b.eval("(() => { const s = document.getElementById('search'); s.value = '^heavy$'; "
           "s.dispatchEvent(new Event('input')); })()")
    b.eval("new Promise(r => setTimeout(r, 400))")
    text = b.eval("document.getElementById('match').textContent")
    shown = float(text.split("matched: ")[1].split("%")[0]) / 100
    if abs(shown - want) > 0.0001 + 0.001 * want:
        sys.exit("search: %r, the tree's share %.4f" % (text, want))
    print("search '^heavy$': %s" % text)

    # another counter: the total is that counter's
    for c in ("lock", "io"):
        b.eval("(() => { const s = document.getElementById('counter'); s.value = '%s'; "
               "s.dispatchEvent(new Event('change')); })()" % c)
        if b.eval("perfport.counter()") != c or b.eval("perfport.total()") != tree["totals"][c]["ns"]:
            sys.exit("counter %s: total %r, the tree's %d" % (c, b.eval("perfport.total()"), tree["totals"][c]["ns"]))
        if c not in b.eval("document.getElementById('status').textContent"):
            sys.exit("counter %s: the status line does not say so" % c)
    print("counter switch: lock and io totals = the tree's")

    # the legend is the colour mode's: by module (the default), the modules of
    # the counter shown with the colours their boxes have - the SVG's too
    b.eval("(() => { const s = document.getElementById('search'); s.value = ''; "
           "s.dispatchEvent(new Event('input')); })()")
    b.eval("new Promise(r => setTimeout(r, 400))")
    b.eval("(() => { const s = document.getElementById('counter'); s.value = 'on-cpu'; "
           "s.dispatchEvent(new Event('change')); })()")
    leg = b.eval("perfport.legend()")
    names = [e["text"] for e in leg]
    if "shape" not in names or "user" in names:
        sys.exit("module legend %r: no 'shape', or kinds for user code" % names)
    box = b.eval("perfport.boxes('heavy')")[0]
    page = b.eval("perfport.colourOf(%d)" % box["node"])
    shown = b.eval("(() => { const d = document.createElement('div'); d.style.background = %r; "
                   "return d.style.background; })()" % page)
    if next(e["colour"] for e in leg if e["text"] == "shape") != shown:
        sys.exit("the legend's colour for shape %r is not heavy's %r" % (leg, shown))
    svg = open(w + "/fg.svg").read()
    m = re.search(r"<title>heavy \(.*?</title><rect [^>]*fill=\"([^\"]+)\"", svg)
    lm = re.search(r"<rect [^>]*fill=\"([^\"]+)\"/><text [^>]*>shape</text>", svg)
    if not m or m.group(1) != page or not lm or lm.group(1) != page:
        sys.exit("svg colours heavy %r and its legend %r, the page %r" %
                 (m and m.group(1), lm and lm.group(1), page))
    b.eval("(() => { const s = document.getElementById('color'); s.value = 'kind'; "
           "s.dispatchEvent(new Event('change')); })()")
    kinds = [e["text"] for e in b.eval("perfport.legend()")]
    if kinds[:4] != ["user", "kernel", "JIT", "inlined"]:
        sys.exit("kind legend %r" % kinds)
    print("legend by module %s; by kind %s; svg and page colour shape %s" % (names, kinds, page))
    b.screenshot(art + "/flamegraph-io.png")
PY
echo "ok: flamegraph in chromium (screenshots in $ART)"
