#!/usr/bin/env bash
# --time: every format's time metadata describes the window exported, not
# the whole recording: CodeGuru start/end/durationInMs (and numTimesSampled,
# rounds in that time), pprof time_nanos/duration_nanos, ARMS durationNs,
# Datakit's event start/end, SkyWalking's timeRange. A window of 25%-75%
# is half the recording's span, and starts a quarter in.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
[ -f "$PROTO" ] || skip "profile.proto is not installed (apt-get install golang-github-google-pprof-dev)"
record_shape "$WORK/sw.data"
for w in all half; do
	sel=; [ $w = half ] && sel="--time 25%-75%"
	"$PERFPORT" -q export -i "$WORK/sw.data" $sel -f codeguru,pprof,arms,datakit,skywalking \
		-o "$WORK/$w" -O pprof.gzip=false 2>"$WORK/$w.err" || { cat "$WORK/$w.err"; fail "export $w: exit $?"; }
	protoc --decode=perftools.profiles.Profile --proto_path="$(dirname "$PROTO")" profile.proto \
		<"$WORK/$w/profile.pb.gz" >"$WORK/$w.pprof.txt" || fail "protoc cannot decode the $w pprof"
done
$PY - "$WORK" <<'PY' || fail "time metadata of the window"
import datetime, json, re, sys
w = sys.argv[1]
def spans(d):
    out = {}
    cg = json.load(open(d + "/profile.codeguru.json"))
    out["codeguru"] = (cg["start"] * 1e6, cg["end"] * 1e6)
    if abs((cg["end"] - cg["start"]) - cg["agentMetadata"]["durationInMs"]) > 1:
        sys.exit("codeguru durationInMs")
    out["codeguru rounds"] = (0, cg["agentMetadata"]["numTimesSampled"] / 997 * 1e9)
    txt = open(d + ".pprof.txt").read()
    t = int(re.search(r"^time_nanos: (\d+)", txt, re.M).group(1))
    out["pprof"] = (t, t + int(re.search(r"^duration_nanos: (\d+)", txt, re.M).group(1)))
    arms = [json.loads(l) for l in open(d + "/profile.arms.jsonl")]
    out["arms"] = (0, int(arms[0]["durationNs"]))
    ev = json.load(open(d + "/datakit/event.json"))
    ts = [datetime.datetime.fromisoformat(ev[k][:26] + "+00:00").timestamp() * 1e9 for k in ("start", "end")]
    out["datakit"] = tuple(ts)
    sw = json.load(open(d + "/profile.skywalking.json"))
    tr = sw["timeRange"]
    out["skywalking"] = (tr["start"] * 1e6, tr["end"] * 1e6)
    return out
full, half = spans(w + "/all"), spans(w + "/half")
for k in full:
    f0, f1 = full[k]
    h0, h1 = half[k]
    ratio = (h1 - h0) / (f1 - f0)
    print("%-16s whole %.3f s, window %.3f s (%.2f)" % (k, (f1 - f0) / 1e9, (h1 - h0) / 1e9, ratio))
    if not 0.45 <= ratio <= 0.55:
        sys.exit("%s: the window's metadata spans %.2f of the recording, want 0.5" % (k, ratio))
    if f0 and not 0.2 <= (h0 - f0) / (f1 - f0) <= 0.3:
        sys.exit("%s: the window starts %.2f into the recording, want 0.25" % (k, (h0 - f0) / (f1 - f0)))
PY
echo "ok: every format's time metadata is the window's"
