#!/usr/bin/env bash
# The flame graph as SVG: well-formed XML (Python's XML parser); every box's
# width is its value's share of the image; the boxes are exactly the tree's
# nodes (report --json, totals summed here from each node's own values) that
# are at least 0.1 px wide, by depth, function and value; orientation and
# counter options; a counter with no data is refused. And the HTML page's
# embedded data is well-formed JSON that survives hostile names.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
record_shape "$WORK/sw.data"
"$PERFPORT" -q report --json -i "$WORK/sw.data" >"$WORK/tree.json" || fail "report: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f flamegraph -O format=svg -o "$WORK/cpu.svg" ||
	fail "export svg: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f flamegraph -O format=svg -O counter=lock -O icicle=true \
	-O width=800 -o "$WORK/lock.svg" || fail "export svg counter=lock: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f flamegraph -o "$WORK/fg.html" -O 'title=</script><b>&"x' ||
	fail "export html: exit $?"

$PY - "$WORK" <<'PY' || fail "flame graph svg"
import collections, json, re, sys
import xml.etree.ElementTree as ET
w = sys.argv[1]
tree = json.load(open(w + "/tree.json"))
NS = "{http://www.w3.org/2000/svg}"

def tree_boxes(counter, width):
    nodes, frames = tree["nodes"], tree["frames"]
    total = [n["self"].get(counter, {}).get("ns", 0) for n in nodes]
    for i in range(len(nodes) - 1, 0, -1):
        total[nodes[i]["parent"]] += total[i]
    depth = [0] * len(nodes)
    for i in range(1, len(nodes)):
        depth[i] = depth[nodes[i]["parent"]] + 1
    root = total[0]
    keep = [False] * len(nodes)
    out = collections.Counter()
    for i, n in enumerate(nodes):
        if total[i] * width / root < 0.1 or (i and not keep[n["parent"]]):
            continue
        keep[i] = True
        out[(depth[i], frames[n["frame"]]["function"] if i else "all", total[i])] += 1
    return out, root

def svg_boxes(path, width, icicle):
    root_el = ET.parse(path).getroot()
    if root_el.tag != NS + "svg" or float(root_el.get("width")) != width:
        sys.exit("%s: not an svg of width %d" % (path, width))
    out, rows = collections.Counter(), {}
    vmax = None
    boxes = [g for g in root_el.iter(NS + "g") if g.get("class") != "legend"]
    legend = [g for g in root_el.iter(NS + "g") if g.get("class") == "legend"]
    if len(legend) != 1 or not legend[0].findall(NS + "rect"):
        sys.exit("%s: no legend" % path)
    for g in boxes:
        r, t = g.find(NS + "rect"), g.find(NS + "title")
        v, d = int(r.get("data-v")), int(r.get("data-d"))
        vmax = v if d == 0 else vmax
        name = re.match(r"(.*?)(?: \(.*\))? \S+ \S+, [0-9.]+%$", t.text).group(1)
        out[(d, name, v)] += 1
        rows.setdefault(d, set()).add(float(r.get("y")))
    for g in boxes:
        r = g.find(NS + "rect")
        want = int(r.get("data-v")) * width / vmax
        if abs(float(r.get("width")) - want) > 0.002:
            sys.exit("%s: a box %s px wide for %s px" % (path, r.get("width"), want))
    if any(len(ys) != 1 for ys in rows.values()):
        sys.exit("%s: a depth drawn on two rows" % path)
    ys = [rows[d].pop() for d in sorted(rows)]
    if (ys == sorted(ys)) != icicle:
        sys.exit("%s: root at the %s" % (path, "bottom" if icicle else "top"))
    return out, vmax

for path, counter, width, icicle in ((w + "/cpu.svg", "on-cpu", 1200, False),
                                     (w + "/lock.svg", "lock", 800, True)):
    got, root = svg_boxes(path, width, icicle)
    want, wroot = tree_boxes(counter, width)
    if root != wroot or root != tree["totals"][counter]["ns"]:
        sys.exit("%s: root %d, the tree's %s %d" % (path, root, counter, wroot))
    if got != want:
        diff = set(got.items()) ^ set(want.items())
        sys.exit("%s: boxes differ from the tree: %s" % (path, sorted(diff)[:4]))
    print("%s: %d boxes = the tree's nodes of %s >= 0.1 px" % (path.split("/")[-1], sum(got.values()), counter))

html = open(w + "/fg.html").read()
m = re.search(r'<script id="perfport-data" type="application/json">(.*?)</script>', html, re.S)
if not m or "</script><b>" in m.group(1):
    sys.exit("the page's data is not one <script> element, or a name broke out of it")
data = json.loads(m.group(1))
if data["meta"]["title"] != '</script><b>&"x':
    sys.exit("title %r" % data["meta"]["title"])
if len(data["parent"]) != len(tree["nodes"]) or len(data["frames"]) != 5 * len(tree["frames"]):
    sys.exit("the page holds %d nodes, the tree %d" % (len(data["parent"]), len(tree["nodes"])))
for c, t in tree["totals"].items():
    if sum(data["values"][c][1::2]) != t["ns"] or sum(data["counts"][c][1::2]) != t["count"]:
        sys.exit("page data for %s differs from the tree" % c)
print("html: %d nodes, values and counts per counter = the tree" % len(data["parent"]))
PY
rc=0; "$PERFPORT" -q export -i "$WORK/sw.data" -f flamegraph -O format=svg -O counter=idle \
	-o "$WORK/idle.svg" 2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] && grep -q "'idle' has no data" "$WORK/err" || fail "counter=idle without data: exit $rc"
[ ! -e "$WORK/idle.svg" ] || fail "a failed export left its file"
echo "ok: flamegraph svg"
