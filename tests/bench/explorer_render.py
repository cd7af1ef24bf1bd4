#!/usr/bin/python3
"""make bench: the explorer page (perfport export -f explorer) in headless
Chromium.

usage: explorer_render.py PAGE.html
Prints the page's size, the samples and intervals it holds, the time from
navigation to its first full drawing (timeline and flame graph; the page's
own performance.now()), and the time a time range brushed on the timeline
with the mouse takes to re-aggregate and redraw every view (the page's
perfportLastAggregateMs, best and median of 7 brushes), and the same for a
click on a thread's lane.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../e2e/lib"))
from browser import Browser  # noqa: E402

page = sys.argv[1]
size = os.path.getsize(page)
with Browser() as b:
    b.open("file://" + os.path.abspath(page))
    b.eval("new Promise(ok => { const f = () => document.body.dataset.rendered ? ok() : setTimeout(f, 20); f(); })")
    first = b.eval("window.perfportRenderedMs")
    n = b.eval("perfport.samples()")
    geo = b.eval("""(() => { const r = document.getElementById('tl').getBoundingClientRect();
        return {x: r.left, y: r.top, lw: perfport.labelWidth, w: perfport.timelineWidth()}; })()""")
    brushed, summed = [], []
    for k in range(7):
        a = 0.05 + 0.1 * k
        x0, x1 = geo["x"] + geo["lw"] + a * geo["w"], geo["x"] + geo["lw"] + (a + 0.25) * geo["w"]
        y = geo["y"] + 30
        b.mouse("mouseMoved", x0, y)
        b.mouse("mousePressed", x0, y, button="left", clickCount=1)
        b.mouse("mouseMoved", x1, y, button="left")
        b.mouse("mouseReleased", x1, y, button="left", clickCount=1)
        brushed.append(b.eval("window.perfportLastAggregateMs"))
        summed.append(b.eval("window.perfportAggregateOnlyMs"))
    lanes = [l for l in b.eval("perfport.lanes()") if "tid" in l]
    clicked = []
    for l in lanes[:7]:
        y = b.eval("""(() => { const w = document.getElementById('tlwrap'); w.scrollTop = %d - 20;
            return document.getElementById('tl').getBoundingClientRect().top + %d + %d / 2; })()"""
                   % (l["y"], l["y"], l["h"]))
        b.click(geo["x"] + 20, y)
        clicked.append(b.eval("window.perfportLastAggregateMs"))
print("explorer page: %.1f MB, %d samples and intervals, %d threads; first drawn %.0f ms after navigation"
      % (size / 1048576, n, len(lanes), first))
print("  a brushed range re-aggregated and redrawn: best %.0f ms, median %.0f ms (7 brushes; "
      "adding up the samples alone %.0f/%.0f)"
      % (min(brushed), statistics.median(brushed), min(summed), statistics.median(summed)))
if clicked:
    print("  a thread clicked: best %.0f ms, median %.0f ms (%d threads)"
          % (min(clicked), statistics.median(clicked), len(clicked)))
