#!/usr/bin/env bash
# perfport diff BASE NEW: two recordings of a program whose hot function
# moved (progs/moves.c: base ~80% alpha, ~20% beta; new ~20% alpha, ~80%
# gamma_). The diff names gamma_ first with the right sign and size, then
# alpha; beta is vanished and gamma_ new, in text and JSON; each side's share
# is what perf report --children gives that recording.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
cc -O2 -g -fno-omit-frame-pointer -o "$WORK/moves" "$TOP/tests/e2e/progs/moves.c" || fail "cannot build progs/moves.c"
record "$WORK/base.data" -g -F 999 -e cpu-clock -- "$WORK/moves" base 0.6
record "$WORK/new.data" -g -F 999 -e cpu-clock -- "$WORK/moves" new 0.6
"$PERFPORT" -q diff "$WORK/base.data" "$WORK/new.data" --top 10 >"$WORK/diff.txt" || fail "diff: exit $?"
"$PERFPORT" -q diff "$WORK/base.data" "$WORK/new.data" --top 1000 --json >"$WORK/diff.json" || fail "diff --json: exit $?"
for v in base new; do
	perf report -i "$WORK/$v.data" --stdio --children --sort sym -g none 2>/dev/null >"$WORK/$v.perf"
done
$PY - "$WORK" <<'PY' || fail "diff"
import json, re, sys
w = sys.argv[1]
j = json.load(open(w + "/diff.json"))
fn = j["counters"]["on-cpu"]["functions"]
names = [f["function"].split(".")[0] for f in fn]
if names[:2] != ["gamma_", "alpha"]:
    sys.exit("the largest changes: %s, want gamma_ then alpha" % names[:4])
g, a = fn[0], fn[1]
if not (0.5 < g["delta_share"] < 0.95) or not (-0.8 < a["delta_share"] < -0.3) or g["base_share"] != 0:
    sys.exit("gamma_ %+.3f from %.3f, alpha %+.3f" % (g["delta_share"], g["base_share"], a["delta_share"]))
if g["delta_ns"] <= 0 or a["delta_ns"] >= 0:
    sys.exit("absolute changes: gamma_ %d ns, alpha %d ns" % (g["delta_ns"], a["delta_ns"]))
# each side's share is perf report's Children column for that recording
def children(path):
    out = {}
    for l in open(path):
        m = re.match(r"\s+([\d.]+)%\s+[\d.]+%\s+\[.\] (\S+)", l)
        if m:
            out[m.group(2)] = float(m.group(1))
    return out
pb, pn = children(w + "/base.perf"), children(w + "/new.perf")
for f in fn[:3]:
    for side, perf in (("base", pb), ("new", pn)):
        want = perf.get(f["function"], 0.0)
        if abs(100 * f[side + "_share"] - want) > 1.0:
            sys.exit("%s %s: %.2f%%, perf report --children %.2f%%" % (f["function"], side, 100 * f[side + "_share"], want))
stacks_new = [s["stack"] for s in j["counters"]["on-cpu"]["new_stacks"]]
stacks_gone = [s["stack"] for s in j["counters"]["on-cpu"]["vanished_stacks"]]
if not any(any(x.startswith("gamma_") for x in s) for s in stacks_new[:3]):
    sys.exit("gamma_'s stack is not among the first new ones: %s" % stacks_new[:3])
if not any(any(x.startswith("beta") for x in s) for s in stacks_gone[:3]):
    sys.exit("beta's stack is not among the first vanished ones: %s" % stacks_gone[:3])
text = open(w + "/diff.txt").read()
if not re.search(r"\+\s*[5-9]\d\.\d\d%.*gamma_\S* \(moves\) \[new\]", text) or "[vanished]" not in text:
    sys.exit("the text does not mark gamma_ new with its change, or beta vanished:\n" + text[:1500])
print("gamma_ %+.1f points, alpha %+.1f points; shares as perf report --children" %
      (100 * g["delta_share"], 100 * a["delta_share"]))
PY
echo "ok: diff names the moved hot function first, with its sign and size"
rc=0; "$PERFPORT" diff "$WORK/base.data" 2>/dev/null || rc=$?
[ $rc -eq 1 ] || fail "diff with one recording: exit $rc"

# the differential flame graph: export NEW --base BASE; widths from NEW,
# colours by each stack's change of share (gamma_ red, alpha blue), the
# base's values on NEW's nodes adding up with what lies in stacks NEW lacks
# (beta) to the base's total; the same colours in the SVG
"$PERFPORT" -q export -i "$WORK/new.data" --base "$WORK/base.data" -f flamegraph -o "$WORK/diff.html" ||
	fail "export --base flamegraph: exit $?"
"$PERFPORT" -q export -i "$WORK/new.data" --base "$WORK/base.data" -f flamegraph -O format=svg \
	-o "$WORK/diff.svg" || fail "export --base flamegraph svg: exit $?"
"$PERFPORT" -q report -i "$WORK/base.data" --json >"$WORK/base.json" || fail "report base"
$PY - "$WORK" <<'PY' || fail "differential flame graph"
import json, re, sys
w = sys.argv[1]
html = open(w + "/diff.html").read()
d = json.loads(re.search(r'<script id="perfport-data" type="application/json">(.*?)</script>', html, re.S).group(1))
if d["initial"]["color"] != "change" or "Differential flame graph" not in d["meta"]["title"]:
    sys.exit("not coloured by change, or title %r" % d["meta"]["title"])
base_total = json.load(open(w + "/base.json"))["totals"]["on-cpu"]["ns"]
pairs = d["base"]["values"]["on-cpu"]
mapped = sum(pairs[k + 1] for k in range(0, len(pairs), 2))
if mapped + d["base"]["lost"]["on-cpu"] != base_total or d["base"]["whole"]["on-cpu"] != base_total:
    sys.exit("base values %d + lost %d != the base's total %d" % (mapped, d["base"]["lost"]["on-cpu"], base_total))
if d["base"]["lost"]["on-cpu"] < 0.1 * base_total:
    sys.exit("beta's time (only in the base) is not among the lost: %d of %d" % (d["base"]["lost"]["on-cpu"], base_total))
svg = open(w + "/diff.svg").read()
def fill(fn):
    m = re.search(r"<title>%s[^<]*</title><rect [^>]*fill=\"hsl\((\d+),75%%,(\d+)%%\)\"" % fn, svg)
    return m and (int(m.group(1)), int(m.group(2)))
g, a = fill(r"gamma_\S*"), fill("alpha")
if not g or not a or g[0] != 0 or a[0] != 215 or g[1] > 60:
    sys.exit("svg colours: gamma_ %s (want deep red), alpha %s (want blue)" % (g, a))
print("base on NEW's nodes %d ns + %d ns in stacks NEW lacks = its total; gamma_ hsl%s, alpha hsl%s" %
      (mapped, d["base"]["lost"]["on-cpu"], g, a))
PY
if command -v chromium >/dev/null; then
	$PY - "$WORK" "$TOP/tests/e2e/lib" <<'PY' || fail "differential flame graph in chromium"
import sys
w, lib = sys.argv[1:3]
sys.path.insert(0, lib)
from browser import Browser
with Browser(log=w + "/chromium.log") as b:
    b.open("file://" + w + "/diff.html")
    if b.eval("document.body.dataset.rendered") is None:
        sys.exit("the page did not render")
    g = b.eval("perfport.boxes('gamma_.constprop.0').concat(perfport.boxes('gamma_'))")
    a = b.eval("perfport.boxes('alpha')")
    if not g or not a:
        sys.exit("no gamma_ or alpha boxes")
    cg, ca = b.eval("perfport.change(%d)" % g[0]["node"]), b.eval("perfport.change(%d)" % a[0]["node"])
    if not (cg > 0.5 and ca < -0.3):
        sys.exit("changes: gamma_ %+.3f, alpha %+.3f" % (cg, ca))
    names = [e["text"] for e in b.eval("perfport.legend()")]
    if "larger share than the base" not in names:
        sys.exit("legend %r" % names)
    print("page: gamma_ %+.1f points, alpha %+.1f points; legend %s" % (100 * cg, 100 * ca, names[:3]))
PY
fi
echo "ok: differential flame graph"

# pprof with the base subtracted: go tool pprof reads it as it reads
# -diff_base of the two recordings' own profiles (the same flat and cum
# times per function)
if command -v go >/dev/null; then
	"$PERFPORT" -q export -i "$WORK/new.data" --base "$WORK/base.data" -f pprof -o "$WORK/diff.pb.gz" ||
		fail "export --base pprof: exit $?"
	"$PERFPORT" -q export -i "$WORK/new.data" -f pprof -o "$WORK/new.pb.gz" || fail "export pprof new"
	"$PERFPORT" -q export -i "$WORK/base.data" -f pprof -o "$WORK/base.pb.gz" || fail "export pprof base"
	top() { go tool pprof -top -nodecount=100 -sample_index=on_cpu "$@" 2>/dev/null |
		awk '/flat  flat%/ {on = 1; next} on {print $1, $4, $6, $7}' | sort; }
	top "$WORK/diff.pb.gz" >"$WORK/diff.top"
	top -diff_base "$WORK/base.pb.gz" "$WORK/new.pb.gz" >"$WORK/want.top"
	[ -s "$WORK/want.top" ] || fail "go tool pprof -diff_base printed nothing"
	cmp -s "$WORK/diff.top" "$WORK/want.top" ||
		fail "pprof --base differs from -diff_base: $(diff "$WORK/diff.top" "$WORK/want.top" | head -6)"
	echo "ok: pprof --base reads as go tool pprof -diff_base ($(wc -l <"$WORK/want.top") functions)"
else
	echo "(go is not installed: the pprof diff is not checked)"
fi
