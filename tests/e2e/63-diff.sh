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
