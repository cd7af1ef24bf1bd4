#!/usr/bin/env bash
# The datakit exporter's directory (../shared/seeds/002):
# - profile.lp read back by a line-protocol parser written here from the
#   grammar (not perfport's code), with hostile label values (spaces, commas,
#   equals, quotes, backslashes, a newline): exactly the tags and fields
#   written; start/end/duration in us by default, ns by option;
# - every flame graph: a frame's value = its own value + its sub_frames';
#   the root = the counter's total; each frame's own value = the folded
#   export's value for that stack; one file per counter with data;
# - cpu.pprof, delta-mutex.pprof, delta-block.pprof (Go's profiles, what the
#   studio reads): gzip, decoded by protoc, totals = the tree's;
# - event.json: its keys, RFC 3339 times, the attachment listed;
# - refusals: stdout, a dimension the profile cannot give (nothing left).
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
[ -f "$PROTO" ] || skip "profile.proto is not installed (apt-get install golang-github-google-pprof-dev)"
record_shape "$WORK/sw.data"
"$PERFPORT" -q report --json -i "$WORK/sw.data" >"$WORK/tree.json" || fail "report: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f folded -o "$WORK/all.folded" -O counter=all \
	-O annotate=false -O value=ns || fail "export folded: exit $?"

SVC=$'my svc,a=b "q" \\x\nline2'
"$PERFPORT" export -i "$WORK/sw.data" -f datakit -o "$WORK/dk" --label "service=$SVC" \
	--label 'env=prod test' --label 'team=a,b=c' --label 'version=1.2' --label 'k8s:app=web' 2>"$WORK/dk.err" ||
	fail "export datakit: exit $?: $(said "$WORK/dk.err")"
grep -q "line break" "$WORK/dk.err" || fail "no warning for the newline in a tag"
"$PERFPORT" -q export -i "$WORK/sw.data" -f datakit -o "$WORK/dkns" -O time_unit=ns \
	--label service=plain || fail "export datakit time_unit=ns: exit $?"
"$PERFPORT" -q export -i "$WORK/sw.data" -f datakit -o "$WORK/dkdef" ||
	fail "export datakit without labels: exit $?"
grep -q '^profile,host=[^ ]*,service=shape,' "$WORK/dkdef/profile.lp" ||
	fail "without --label service, the service is not the one process's command: $(cat "$WORK/dkdef/profile.lp")"
# Go's CPU, mutex and block profiles, the pprof files Guance's studio reads
for f in event.json cpu.pprof delta-mutex.pprof delta-block.pprof profile.lp; do
	[ -s "$WORK/dk/$f" ] || fail "no $f in the directory"
done
for f in cpu delta-mutex delta-block; do
	gzip -t "$WORK/dk/$f.pprof" || fail "$f.pprof is not gzip"
	zcat "$WORK/dk/$f.pprof" | protoc --decode=perftools.profiles.Profile \
		--proto_path="$(dirname "$PROTO")" profile.proto >"$WORK/$f.decoded.txt" ||
		fail "protoc cannot decode $f.pprof"
done
$PY - "$WORK" <<'PY' || fail "pprof attachments"
import json, sys
sys.path.insert(0, __import__("os").environ["TOP"] + "/tests/e2e/lib")
from pprof_check import parse, one
w = sys.argv[1]
totals = json.load(open(w + "/tree.json"))["totals"]
def tot(names, what):
    return sum(totals.get(n, {}).get(what, 0) for n in names)
want = {"cpu": {("samples", "count"): tot(["on-cpu"], "count"), ("cpu", "nanoseconds"): tot(["on-cpu"], "ns")},
        "delta-mutex": {("contentions", "count"): tot(["lock"], "count"), ("delay", "nanoseconds"): tot(["lock"], "ns")},
        "delta-block": {("contentions", "count"): tot(["io", "sleep", "timed-sleep"], "count"),
                        ("delay", "nanoseconds"): tot(["io", "sleep", "timed-sleep"], "ns")}}
for f, types in want.items():
    pb = parse(open("%s/%s.decoded.txt" % (w, f)).read())
    st = pb["string_table"]
    got = [(st[one(t, "type")], st[one(t, "unit")]) for t in pb["sample_type"]]
    if got != list(types):
        sys.exit("%s.pprof: sample types %s, want %s" % (f, got, list(types)))
    sums = [0] * len(got)
    for smp in pb.get("sample", []):
        for i, v in enumerate(smp.get("value", [])):
            sums[i] += v
    for (t, want_v), v in zip(types.items(), sums):
        print("%-12s %-12s %14d  tree %14d" % (f, t[0], v, want_v))
        if v != want_v or not v:
            sys.exit("%s.pprof %s: %d, the tree's %d" % (f, t[0], v, want_v))
PY

$PY - "$WORK" "$SVC" <<'PY' || fail "datakit files"
import datetime, glob, json, os, re, sys
w, svc = sys.argv[1], sys.argv[2]
tree = json.load(open(w + "/tree.json"))
totals = tree["totals"]

def parse_lp(line):
    """One point, by InfluxDB's line-protocol grammar: measurement[,tag=v]*
    SP field=v[,field=v]* [SP timestamp]. In names and tag values '\\' before
    ',', '=' or ' ' escapes it, else it is literal; string fields are "..."
    with \\" and \\\\ escaped; integers end in i."""
    pos = 0
    def name(stops):
        nonlocal pos
        out = []
        while pos < len(line) and line[pos] not in stops:
            if line[pos] == "\\" and pos + 1 < len(line) and line[pos + 1] in ",= ":
                out.append(line[pos + 1]); pos += 2
            else:
                out.append(line[pos]); pos += 1
        return "".join(out)
    meas = name(", ")
    tags = {}
    while line[pos] == ",":
        pos += 1
        k = name("=")
        assert line[pos] == "=", "tag without ="
        pos += 1
        tags[k] = name(", ")
    assert line[pos] == " ", "no space before the fields"
    pos += 1
    fields = {}
    while True:
        k = name("=")
        pos += 1
        if line[pos] == '"':
            pos += 1
            out = []
            while line[pos] != '"':
                if line[pos] == "\\" and line[pos + 1] in '"\\':
                    pos += 1
                out.append(line[pos]); pos += 1
            pos += 1
            fields[k] = out and "".join(out) or ""
        else:
            m = re.compile(r"(-?\d+)i|(-?[0-9.eE+-]+)|(t|f|true|false)").match(line, pos)
            assert m, "bad field value at %r" % line[pos:pos + 20]
            fields[k] = int(m.group(1)) if m.group(1) else m.group(0)
            pos = m.end()
        if line[pos] == ",":
            pos += 1
            continue
        break
    ts = None
    if line[pos] == " ":
        ts = int(line[pos + 1:])
    return meas, tags, fields, ts

lines = open(w + "/dk/profile.lp").read().split("\n")
if len(lines) != 2 or lines[1] != "":
    sys.exit("profile.lp: want one line, got %d" % (len(lines) - 1))
meas, tags, fields, ts = parse_lp(lines[0])
event = json.load(open(w + "/dk/event.json"))
want_tags = {"service": svc.replace("\n", " ").rstrip("\\"), "env": "prod test", "version": "1.2",
             "team": "a,b=c", "language": "golang", "runtime": "linux-perf", "runtime_os": "linux",
             "k8s:app": "web"}
if meas != "profile":
    sys.exit("measurement %r" % meas)
for k, v in want_tags.items():
    if tags.get(k) != v:
        sys.exit("tag %s: %r, want %r" % (k, tags.get(k), v))
extra = set(tags) - set(want_tags) - {"host", "runtime_arch"}
if extra or not tags.get("host") or tags.get("runtime_arch") != {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine):
    sys.exit("tags %r" % tags)
want_fields = {"profile_id", "agent_ver", "start", "end", "duration", "pid", "format", "__file_size"}
if set(fields) != want_fields:
    sys.exit("fields %s" % sorted(set(fields) ^ want_fields))
if fields["format"] != "pprof" or fields["profile_id"] != event["profile_id"]:
    sys.exit("format/profile_id %r" % fields)
if fields["__file_size"] != sum(os.path.getsize(w + "/dk/%s.pprof" % f) for f in ("cpu", "delta-mutex", "delta-block")):
    sys.exit("__file_size %d" % fields["__file_size"])
start_ns = int(tree["meta"]["start_ns"]) if "start_ns" in tree["meta"] else None
if fields["end"] - fields["start"] != fields["duration"] or fields["duration"] <= 0:
    sys.exit("start/end/duration %r" % fields)
if abs(ts // 1000 - fields["start"]) > 1:
    sys.exit("start %d us, timestamp %d ns" % (fields["start"], ts))
pids = {t["pid"] for t in tree["threads"] if t["pid"]}
if fields["pid"] != str(pids.pop()) or pids:
    sys.exit("pid %r" % fields["pid"])
# time_unit=ns
_, tags_ns, f_ns, _ = parse_lp(open(w + "/dkns/profile.lp").read().rstrip("\n"))
if abs(f_ns["duration"] - fields["duration"] * 1000) > 1000 or tags_ns["service"] != "plain":
    sys.exit("time_unit=ns: duration %d ns vs %d us" % (f_ns["duration"], fields["duration"]))
print("line protocol: %d tags, %d fields read back exactly" % (len(tags), len(fields)))

# event.json
if set(event) < {"attachments", "tags_profiler", "start", "end", "format", "language"}:
    sys.exit("event keys %s" % sorted(event))
if event["attachments"] != ["cpu.pprof", "delta-mutex.pprof", "delta-block.pprof"] or event["format"] != "pprof":
    sys.exit("event %r" % event)
# Datakit adds the event's keys to the tags it lacks: a "version" key would
# become the service's version
if "version" in event:
    sys.exit("event.json has a version key: %r" % event["version"])
t0 = datetime.datetime.fromisoformat(event["start"][:26] + "+00:00")
t1 = datetime.datetime.fromisoformat(event["end"][:26] + "+00:00")
if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z", event["start"]) or t1 <= t0:
    sys.exit("event times %s %s" % (event["start"], event["end"]))
if abs(t0.timestamp() * 1e6 - fields["start"]) > 2:
    sys.exit("event start %s, point start %d us" % (event["start"], fields["start"]))
tp = dict(kv.split(":", 1) for kv in event["tags_profiler"].split(","))
if tp.get("env") != "prod test" or tp.get("process_id") != fields["pid"] or "service" not in tp:
    sys.exit("tags_profiler %r" % tp)
# Datakit splits each tag at its first ':': a key holding one is written with '_'
if tp.get("k8s_app") != "web" or tp.get("version") != "1.2":
    sys.exit("tags_profiler: a key with ':' %r" % tp)

# flame graphs against the folded export (ns, every counter, root first)
folded = {}
for l in open(w + "/all.folded"):
    s, v = l.rsplit(" ", 1)
    folded[s] = folded.get(s, 0) + int(v)
present = {c for c, t in totals.items() if t["count"]}
files = {os.path.basename(f)[len("flamegraph-"):-5]: f for f in glob.glob(w + "/dk/flamegraph-*.json")}
if set(files) != present:
    sys.exit("flame graphs for %s, counters with data %s" % (sorted(files), sorted(present)))
selfs = {}
for c, f in files.items():
    g = json.load(open(f))
    if g["unit"] != "nanoseconds" or g["dimension"] != "method" or "method" not in g["available_dimension"]:
        sys.exit("%s: unit/dimension %r" % (f, {k: g[k] for k in ("unit", "dimension", "available_dimension")}))
    root = g["root_frame"]
    if root["value"] != totals[c]["ns"]:
        sys.exit("%s: root %d, the %s total %d" % (f, root["value"], c, totals[c]["ns"]))
    keys = {"value", "method", "line", "sub_frame", "thread", "modifier", "library", "package", "class"}
    def walk(fr, path):
        if not keys <= set(fr):
            sys.exit("%s: frame keys %s" % (f, sorted(fr)))
        sub = sum(s["value"] for s in fr["sub_frame"])
        own = fr["value"] - sub
        if own < 0 or fr["value"] <= 0:
            sys.exit("%s: %s: value %d, sub_frames %d" % (f, fr["method"], fr["value"], sub))
        if own and path:
            k = ";".join(path)
            selfs[k] = selfs.get(k, 0) + own
        for s in fr["sub_frame"]:
            walk(s, path + [s["method"]])
    walk(root, [])
if selfs != folded:
    diff = set(selfs.items()) ^ set(folded.items())
    sys.exit("flame graph self values differ from the folded export: %s" % sorted(diff)[:4])
print("flame graphs: %s; %d stacks = the folded export" % (sorted(files), len(selfs)))
PY

# refusals
rc=0; "$PERFPORT" -q export -i "$WORK/sw.data" -f datakit -o - >/dev/null 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "directory" "$WORK/err" || fail "-o - with datakit: exit $rc, $(cat "$WORK/err")"
rc=0; "$PERFPORT" -q export -i "$WORK/sw.data" -f datakit -O dimension=thread -o "$WORK/bad" \
	2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] || fail "dimension=thread without --group-by: exit $rc"
grep -q "group-by" "$WORK/err" || fail "dimension=thread: the message does not say --group-by"
[ ! -e "$WORK/bad" ] || fail "a failed export left $(ls "$WORK/bad")"
# into a directory of an earlier export: the failed one leaves it as it was
"$PERFPORT" -q export -i "$WORK/sw.data" -f datakit -o "$WORK/again" || fail "export datakit: exit $?"
(cd "$WORK/again" && md5sum *) >"$WORK/again.md5"
rc=0; "$PERFPORT" -q export -i "$WORK/sw.data" -f datakit -O dimension=thread -o "$WORK/again" \
	2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] || fail "dimension=thread into an earlier export: exit $rc"
(cd "$WORK/again" && md5sum -c --quiet "$WORK/again.md5") || fail "a failed export changed the earlier files"
[ "$(ls -A "$WORK/again" | wc -l)" -eq "$(wc -l <"$WORK/again.md5")" ] ||
	fail "a failed export left files: $(ls -A "$WORK/again")"
"$PERFPORT" -q export -i "$WORK/sw.data" -f datakit -O dimension=thread --group-by thread \
	-O unit=ms -O counter=on-cpu,lock -o "$WORK/th" || fail "dimension=thread --group-by thread: exit $?"
$PY - "$WORK/th" <<'PY' || fail "dimension=thread"
import glob, json, os, sys
files = sorted(os.path.basename(f) for f in glob.glob(sys.argv[1] + "/flamegraph-*.json"))
if files != ["flamegraph-lock.json", "flamegraph-on-cpu.json"]:
    sys.exit("counter=on-cpu,lock: %s" % files)
g = json.load(open(sys.argv[1] + "/flamegraph-on-cpu.json"))
if g["dimension"] != "thread" or "thread" not in g["available_dimension"] or g["unit"] != "milliseconds":
    sys.exit("dimension/unit %r" % g)
def walk(fr, th):
    if th and fr["thread"] != th:
        sys.exit("%s: thread %r under %r" % (fr["method"], fr["thread"], th))
    if fr["value"] < sum(s["value"] for s in fr["sub_frame"]):
        sys.exit("ms: a frame below its sub_frames")
    for s in fr["sub_frame"]:
        walk(s, th or s["thread"])
nt = 0
for proc in g["root_frame"]["sub_frame"]:
    if proc["thread"] or "[" not in proc["method"]:
        sys.exit("a process frame %r (thread %r)" % (proc["method"], proc["thread"]))
    for top in proc["sub_frame"]:
        if top["thread"] != top["method"] or "[" not in top["method"]:
            sys.exit("a thread frame %r" % top["method"])
        walk(top, top["thread"])
        nt += 1
print("dimension=thread: %d threads" % nt)
PY
echo "ok: datakit"
