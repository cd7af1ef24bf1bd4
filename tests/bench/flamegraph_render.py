#!/usr/bin/python3
"""make bench: how fast the flame graph page renders in headless Chromium.

usage: flamegraph_render.py PAGE.html WORKDIR
Prints, for PAGE (a perfport export) and for the same page holding a
synthetic tree of 200,000 nodes: the file's size, the time from navigation
to the first frame drawn (the page's own performance.now()), and how long a
hover (tooltip) and a click (zoom and redraw) take, measured in the page.
"""
import json
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e/lib"))
from browser import Browser  # noqa: E402

page, work = sys.argv[1], sys.argv[2]


def synthetic(html, nodes=200_000, functions=5000, seed=7):
    """The page with a random tree of @nodes nodes in pre-order."""
    rnd = random.Random(seed)
    parent, frame = [-1], [-1]
    stack = [(0, 0)]                 # (node, depth)
    while len(parent) < nodes:
        p, d = stack[-1]
        if d > 60 or (len(stack) > 1 and rnd.random() < 0.35):
            stack.pop()
            continue
        parent.append(p)
        frame.append(rnd.randrange(functions))
        stack.append((len(parent) - 1, d + 1))
    values, counts = [], []
    for i in range(1, nodes):
        if rnd.random() < 0.5:
            v = rnd.randrange(1, 50)
            values += [i, v * 1000000]
            counts += [i, v]
    data = {
        "meta": {"title": "synthetic %d nodes" % nodes, "host": "bench", "cmdline": "", "start_ns": 0,
                 "end_ns": 10**9, "time_source": "given", "version": "bench"},
        "counters": [{"name": "on-cpu", "unit": "nanoseconds"}],
        "initial": {"counter": "on-cpu", "color": "module", "icicle": False},
        "strings": ["function_%d" % k for k in range(functions)] + ["/usr/lib/libbench%d.so" % k for k in range(20)],
        "frames": [x for k in range(functions) for x in (k, functions + k % 20, -1, 0, 0)],
        "parent": parent, "frame": frame, "values": {"on-cpu": values}, "counts": {"on-cpu": counts},
    }
    body = json.dumps(data, separators=(",", ":"))
    return re.sub(r'(<script id="perfport-data" type="application/json">).*?(</script>)',
                  lambda m: m.group(1) + body + m.group(2), html, count=1, flags=re.S)


def measure(b, path, label):
    t = time.time()
    b.open("file://" + path)
    wall = time.time() - t
    rendered = b.eval("window.perfportRenderedMs")
    n = b.eval("perfport.nodes")
    # a hover and a click on the widest box of the second row, timed in the page
    timing = b.eval("""(() => {
        const c = document.getElementById('fg'), r = c.getBoundingClientRect();
        const y = r.top + perfport.row(1) + perfport.rowHeight / 2, x = r.left + perfport.width() / 3;
        let t = performance.now();
        c.dispatchEvent(new MouseEvent('mousemove', {clientX: x, clientY: y, bubbles: true}));
        const hover = performance.now() - t;
        t = performance.now();
        c.dispatchEvent(new MouseEvent('click', {clientX: x, clientY: y, bubbles: true}));
        const click = performance.now() - t;
        return {hover, click, zoom: perfport.zoomed().node};
    })()""")
    print("%-34s %8d nodes %7.1f MB  rendered %6.0f ms after navigation (load %.2f s); "
          "hover %.1f ms, click-zoom %.0f ms" % (label, n, os.path.getsize(path) / 1048576, rendered, wall,
                                                 timing["hover"], timing["click"]))


html = open(page).read()
syn = os.path.join(work, "flame-synthetic.html")
with open(syn, "w") as f:
    f.write(synthetic(html))
with Browser(log=os.path.join(work, "chromium.log")) as b:
    measure(b, page, "flame graph of the recording")
    measure(b, syn, "flame graph, synthetic tree")
