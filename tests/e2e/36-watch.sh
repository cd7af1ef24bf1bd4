#!/usr/bin/env bash
# perfport watch: perf record --switch-output=1s writes a file a second
# while the watcher follows the directory and uploads each file to a
# loopback Pyroscope and a loopback OTLP collector at once (the stand-ins
# of 86 and 89). Checked: one upload per file to each, in order; each
# upload's totals equal 'perfport report' of its file (on-CPU and every
# off-CPU state); the windows follow each other in time (OTLP's start and
# duration); SIGTERM lets the watcher finish and exit 0; a restart sends
# nothing twice (the state file) and sends what came while it was down;
# a backend down for several requests gets every file once, in order,
# through the watcher's own spool; --keep removes only files sent; bad
# command lines are refused.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
$PY -c 'import google.protobuf, grpc' 2>/dev/null ||
	skip "python3-protobuf and python3-grpcio are not installed"
command -v protoc >/dev/null || skip "protoc is not installed (apt-get install protobuf-compiler)"
command -v go >/dev/null || skip "go is not installed (apt-get install golang-go): go tool pprof decodes"
export XDG_STATE_HOME="$WORK/state"
build_shape

# start_server NAME SCRIPT.py ARGS...: a stand-in in $WORK/NAME; its PID in PIDS
PIDS=()
trap '[ ${#PIDS[@]} -eq 0 ] || kill "${PIDS[@]}" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
start_server() {
	local name=$1 script=$2; shift 2
	rm -rf "${WORK:?}/$name"
	mkdir -p "$WORK/$name"
	$PY "$TOP/tests/e2e/lib/$script" "$WORK/$name" "$@" 2>"$WORK/$name.log" &
	PIDS+=($!)
	for _ in $(seq 200); do [ -f "$WORK/$name/port" ] && break; sleep 0.05; done
	[ -f "$WORK/$name/port" ] || { cat "$WORK/$name.log"; fail "the $name stand-in did not start"; }
}
start_server pyro pyroscope_server.py ok "$WORK/gen-pyro"
start_server otlp otlp_server.py ok "$WORK/gen-otlp"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
OTLP="http://127.0.0.1:$(cat "$WORK/otlp/port")"

# rotate DIR SECONDS: shape under perf, a new file every second. The test
# cuts the files itself (--switch-output=signal, a SIGUSR2 a second):
# perf's own --switch-output=1s arms its one-second alarm before its setup
# (the threads' synthesis) is over and drops an alarm that comes before it
# is; on a loaded machine the setup outlasts the second and the whole run
# was one file (three runs of fifty here). A SIGUSR2 is sent only once perf
# catches it (SigCgt): before, it would end perf.
rotate() {
	local p rc=0 cgt
	perf record -k CLOCK_MONOTONIC --switch-output=signal -e cpu-clock/freq=997/ \
		-e sched:sched_switch --switch-events -g -o "$1/perf.data" -- "$SHAPE" "$2" "$WORK" \
		>"$WORK/record.log" 2>&1 &
	p=$!
	while kill -0 "$p" 2>/dev/null; do
		sleep 1
		cgt=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null) || true
		[ -n "$cgt" ] && (( 0x$cgt & (1 << 11) )) && kill -USR2 "$p" 2>/dev/null || true
	done
	wait "$p" || rc=$?
	[ $rc -eq 0 ] || { cat "$WORK/record.log"; fail "perf record --switch-output: exit $rc"; }
}
# sent DIR: how many files the state file lists
sent() {
	local c
	c=$(grep -vc '^#' "$1/.perfport-watch" 2>/dev/null) || true
	echo "${c:-0}"
}
# wait_sent DIR N: until the watcher ($WATCH) has sent N files, for as long
# as it runs (a loaded machine slows it, it does not stop it; 10 minutes
# at most, against a hang)
wait_sent() {
	for _ in $(seq 6000); do
		[ "$(sent "$1")" -ge "$2" ] && return 0
		kill -0 "$WATCH" 2>/dev/null || break
		sleep 0.1
	done
	[ "$(sent "$1")" -ge "$2" ] && return 0
	fail "the watcher sent $(sent "$1") of $2 files: $(cat "$WORK/watch.err" "$WORK/k9.err" "$WORK/hup.err" 2>/dev/null | tail -20)"
}
# oncpu_files DIR: how many of DIR's files have on-CPU samples (a file
# has a process_cpu series only then: perf may cut a last file of a few
# ms with none)
oncpu_files() {
	local c=0 f
	for f in $(ls "$1" | grep '^perf\.data\.[0-9]*$'); do
		"$PERFPORT" -q report --json -i "$1/$f" >"$WORK/oncpu.json" || fail "report $f: exit $?"
		$PY -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["totals"].get("on-cpu", {}).get("count") else 1)' \
			"$WORK/oncpu.json" && c=$((c + 1))
	done
	echo "$c"
}

# --- live: the watcher follows while perf writes ---
mkdir -p "$WORK/rot"
"$PERFPORT" watch "$WORK/rot" -f pyroscope,otlp -O pyroscope.server="$PYRO" \
	-O otlp.endpoint="$OTLP" --label env=ci >"$WORK/watch.out" 2>"$WORK/watch.err" &
WATCH=$!
PIDS+=($WATCH)
rotate "$WORK/rot" 5
n=$(ls "$WORK/rot" | grep -c '^perf\.data\.[0-9]*$' || true)
# (a file a second is perf's doing, not perfport's: two are enough to check)
[ "$n" -ge 2 ] || fail "perf record --switch-output=1s for 5 s wrote $n files: $(ls "$WORK/rot"); $(said "$WORK/record.log")"
wait_sent "$WORK/rot" "$n"
kill -TERM "$WATCH"
rc=0
wait "$WATCH" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/watch.err"; fail "watch after SIGTERM: exit $rc"; }
[ "$(wc -l <"$WORK/watch.out")" -eq "$n" ] || fail "not a line per file: $(cat "$WORK/watch.out")"
grep -q 'samples, on-cpu [0-9.]* s.*; [0-9]* requests, [0-9.]* KiB sent; [0-9.]* s$' "$WORK/watch.out" ||
	fail "a file's line: $(head -1 "$WORK/watch.out")"
for f in $(ls "$WORK/rot" | grep '^perf\.data\.[0-9]*$' | sort); do
	"$PERFPORT" -q report --json -i "$WORK/rot/$f" >"$WORK/rot-$f.json" || fail "report $f: exit $?"
done

# check DIR [RUNS]: the stand-ins' requests against the reports of DIR's
# files; the windows of each of RUNS recordings (1) follow one another
check() {
	$PY - "$WORK" "$1" "${2:-1}" <<'PY' || fail "${CHECKING:-the uploads}"
import glob, json, os, re, subprocess, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
from otlp_check import load
w, d, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(f for f in os.listdir(d) if re.fullmatch(r"perf\.data\.[0-9]+", f))
reports = [json.load(open("%s/rot-%s.json" % (w, f)))["totals"] for f in files]
def reqs(name, ext):
    out = []
    for p in glob.glob("%s/%s/req-*.%s" % (w, name, ext)):
        out.append((int(re.search(r"req-([0-9]+)", p).group(1)), p))
    return [p for _, p in sorted(out)]
# Pyroscope: the requests answered ok, each file's process_cpu once, in order
pyro = []
for p in reqs("pyro", "json"):
    r = json.load(open(p))
    if r.get("step") != "ok":
        continue
    for s in r["series"]:
        if s["labels"]["__name__"] == "process_cpu":
            pyro.append((s["types"]["process_cpu:cpu:nanoseconds:cpu:nanoseconds"]["total"],
                         s["types"]["process_cpu:samples:count:cpu:nanoseconds"]["total"],
                         s["labels"].get("env")))
# a file without on-CPU samples (perf's last, cut short) has no process_cpu
want = [(t["on-cpu"]["ns"], t["on-cpu"]["count"], "ci") for t in reports if t.get("on-cpu", {}).get("count")]
if pyro != want:
    sys.exit("pyroscope got (ns, samples, env) %s\nthe files' reports: %s" % (pyro, want))
# OTLP: one export per file, in order, every state's total as the report says
spans, otlp = [], []
for p in reqs("otlp", "bin"):
    meta = json.load(open(p[:-4] + ".json"))
    if meta.get("step") != "ok":
        continue
    req = load(os.path.join(w, "gen-otlp"), open(p, "rb").read(), "protobuf")
    d_ = req.dictionary
    got, t0, t1 = {}, None, None
    for sp in req.resource_profiles[0].scope_profiles:
        for prof in sp.profiles:
            state = None
            for i in prof.attribute_indices:
                a = d_.attribute_table[i]
                if d_.string_table[a.key_strindex] == "thread.state":
                    state = a.value.string_value
            got[state] = sum(sum(s.values) for s in prof.samples)
            t0, t1 = prof.time_unix_nano, prof.time_unix_nano + prof.duration_nano
    otlp.append(got)
    if t0 is not None:  # a file with no sample (perf's last, cut short) has no span
        spans.append((t0, t1))
want = [{c: v["ns"] for c, v in t.items()} for t in reports]
if otlp != want:
    sys.exit("otlp got %s\nthe files' reports: %s" % (otlp, want))
# in order, and overlapping no more than the files do: a file's window is
# its samples' span, so a gap between two is the time no sample came (a
# workload not scheduled for a second on a loaded machine: 1123 ms once),
# and an overlap perf's (at a switch it drains one CPU's buffer after
# another: an event of the second CPU's that came meanwhile is written to
# the old file, the first's to the new; 7.3 ms once at load 13); what each
# file holds is checked above against its report
def own_span(f):
    out = subprocess.run(["perf", "script", "-i", os.path.join(d, f), "-F", "time", "--ns"],
                         capture_output=True, text=True).stdout
    ts = [round(float(m) * 1e9) for m in re.findall(r"([0-9]+\.[0-9]+):", out)]
    return (min(ts), max(ts)) if ts else None
owns = [s for s in (own_span(f) for f in files) if s]
if len(owns) != len(spans):
    sys.exit("%d windows sent, %d files with samples (perf script)" % (len(spans), len(owns)))
for (a0, a1), (b0, b1), (f0, f1), (g0, g1) in zip(spans, spans[1:], owns, owns[1:]):
    gap, own = b0 - a1, g0 - f1
    if not (b0 > a0 and gap >= own - 1e6):
        sys.exit("windows [%d, %d] and [%d, %d]: not one after the other (gap %.1f ms; "
                 "the files' own samples %.1f ms)" % (a0, a1, b0, b1, gap / 1e6, own / 1e6))
print("%d files: one upload each to pyroscope and otlp, in order, totals equal their reports; "
      "gaps between windows %s ms, between the files' samples %s ms" %
      (len(files), [round((b0 - a1) / 1e6, 1) for (_, a1), (b0, _) in zip(spans, spans[1:])],
       [round((g0 - f1) / 1e6, 1) for (_, f1), (g0, _) in zip(owns, owns[1:])]))
PY
}
CHECKING="live rotation" check "$WORK/rot"
echo "ok: live: $n files, each sent once to pyroscope and otlp"

# --- a restart: nothing sent twice; what came while it was down is sent ---
rotate "$WORK/rot" 2
m=$(ls "$WORK/rot" | grep -c '^perf\.data\.[0-9]*$' || true)
rc=0
"$PERFPORT" watch "$WORK/rot" --once -f pyroscope,otlp -O pyroscope.server="$PYRO" \
	-O otlp.endpoint="$OTLP" --label env=ci >"$WORK/watch.out" 2>"$WORK/watch.err" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/watch.err"; fail "watch --once: exit $rc"; }
[ "$(wc -l <"$WORK/watch.out")" -eq $((m - n)) ] ||
	fail "the restart sent $(wc -l <"$WORK/watch.out") files, $((m - n)) were new"
for f in $(ls "$WORK/rot" | grep '^perf\.data\.[0-9]*$' | sort); do
	[ -f "$WORK/rot-$f.json" ] || "$PERFPORT" -q report --json -i "$WORK/rot/$f" >"$WORK/rot-$f.json"
done
CHECKING="after a restart" check "$WORK/rot" 2
echo "ok: a restart sent the $((m - n)) new files and none twice"

# --- kill -9 between two files, then a restart: none lost, none twice ---
start_server pyro pyroscope_server.py ok "$WORK/gen-pyro"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
mkdir -p "$WORK/k9"
watch_k9() {
	"$PERFPORT" watch "$WORK/k9" -f pyroscope -O server="$PYRO" >>"$WORK/k9.out" 2>>"$WORK/k9.err" &
	WATCH=$!
	PIDS+=($WATCH)
}
watch_k9
rotate "$WORK/k9" 5 &
REC=$!
wait_sent "$WORK/k9" 2
# between two files, for certain: perf stopped (no file comes), the watcher
# done with every file there is (its state file and its lines), then kill -9
PERF=$(pgrep -P "$REC" -x perf) || fail "perf record of the kill -9 case is not found"
kill -STOP "$PERF"
have=$(ls "$WORK/k9" | grep -c '^perf\.data\.[0-9]*$' || true)
wait_sent "$WORK/k9" "$have"
for _ in $(seq 6000); do [ "$(wc -l <"$WORK/k9.out")" -ge "$have" ] && break; sleep 0.1; done
kill -9 "$WATCH"
wait "$WATCH" 2>/dev/null || true
kill -CONT "$PERF"
sleep 1.5                  # files may arrive while no watcher runs (or not: either is checked)
watch_k9
wait "$REC"
n=$(ls "$WORK/k9" | grep -c '^perf\.data\.[0-9]*$' || true)
wait_sent "$WORK/k9" "$n"
n=$(oncpu_files "$WORK/k9")
kill -TERM "$WATCH"
wait "$WATCH" || true
$PY - "$WORK" "$n" <<'PY' || fail "kill -9 and a restart"
import glob, json, re, sys
w, n = sys.argv[1], int(sys.argv[2])
got = []
for p in sorted(glob.glob(w + "/pyro/req-*.json"), key=lambda p: int(re.search(r"req-([0-9]+)", p).group(1))):
    r = json.load(open(p))
    for s in r.get("series", []):
        if s["labels"]["__name__"] == "process_cpu":
            got.append((r["query"]["from"], r["query"]["until"],
                        s["types"]["process_cpu:samples:count:cpu:nanoseconds"]["total"]))
if len(got) != n or len(set(got)) != n:
    sys.exit("%d files with on-CPU samples, %d process_cpu uploads: %s" % (n, len(got), got))
print("kill -9 between two files, a restart: %d files with on-CPU samples, each sent once" % n)
PY
echo "ok: kill -9 and a restart"

# --- --keep 1: only files sent are removed, the newest kept ---
"$PERFPORT" -q watch "$WORK/rot" --once --keep 1 -f pyroscope -O server="$PYRO" ||
	fail "watch --keep 1: exit $?"
[ "$(ls "$WORK/rot" | grep -c '^perf\.data\.[0-9]*$')" -eq 1 ] || fail "--keep 1 left: $(ls "$WORK/rot")"
[ "$(sent "$WORK/rot")" -eq 1 ] || fail "the state file still names removed files"
echo "ok: --keep 1"

# --- the backend down for three requests: the spool, then in order ---
start_server pyro pyroscope_server.py unavailable,unavailable,unavailable,ok "$WORK/gen-pyro"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
mkdir -p "$WORK/down"
"$PERFPORT" watch "$WORK/down" -f pyroscope -O server="$PYRO" --label env=ci --retries 1 \
	--resend-every 1 >"$WORK/watch.out" 2>"$WORK/watch.err" &
WATCH=$!
PIDS+=($WATCH)
rotate "$WORK/down" 4
n=$(ls "$WORK/down" | grep -c '^perf\.data\.[0-9]*$' || true)
wait_sent "$WORK/down" "$n"
for _ in $(seq 300); do
	[ -z "$(ls -A "$WORK/down/.perfport-watch.spool" 2>/dev/null)" ] && break
	sleep 0.1
done
kill -TERM "$WATCH"
wait "$WATCH" || true
for f in $(ls "$WORK/down" | grep '^perf\.data\.[0-9]*$' | sort); do
	"$PERFPORT" -q report --json -i "$WORK/down/$f" >"$WORK/rot-$f.json"
done
$PY - "$WORK" "$n" <<'PY' || fail "the backend down, then up"
import glob, json, os, re, sys
w, n = sys.argv[1], int(sys.argv[2])
# what each file's uploads hold, from its report: a process_cpu series
# when it has on-CPU samples (their ns), a wall one when it has off-CPU
# time (on- and off-CPU ns); perf may cut a last file with either alone
files = sorted(f for f in os.listdir(w + "/down") if re.fullmatch(r"perf\.data\.[0-9]+", f))
want = []
for f in files:
    t = json.load(open("%s/rot-%s.json" % (w, f)))["totals"]
    on = t.get("on-cpu", {}).get("ns", 0)
    off = sum(v["ns"] for k, v in t.items() if k not in ("on-cpu", "idle"))
    if t.get("on-cpu", {}).get("count"):
        want.append(("process_cpu", on))
    if off:
        want.append(("wall", off + on))
steps = []
for p in sorted(glob.glob(w + "/pyro/req-*.json"), key=lambda p: int(re.search(r"req-([0-9]+)", p).group(1))):
    r = json.load(open(p))
    got = None
    for s in r.get("series", []):
        name = s["labels"]["__name__"]
        key = [k for k in s["types"] if k.split(":")[1] == ("cpu" if name == "process_cpu" else "wall")]
        got = (name, s["types"][key[0]]["total"])
    steps.append((r["step"], r["query"]["from"] if r.get("query") else None, got))
if [s[0] for s in steps[:3]] != ["unavailable"] * 3:
    sys.exit("the first three requests: %s" % steps[:3])
ok = [s[2] for s in steps if s[0] == "ok"]
if ok != want:
    sys.exit("%d files: delivered %s\nthe files' reports want, in order: %s" % (n, ok, want))
froms = [int(s[1]) for s in steps if s[0] == "ok"]
if froms != sorted(froms):
    sys.exit("delivered out of order: %s" % froms)
print("down for 3 requests: %d requests in all, %d files delivered once each, in order "
      "(%d series)" % (len(steps), n, len(want)))
PY
grep -q 'the spool' "$WORK/watch.err" || fail "the log says nothing of the spool: $(cat "$WORK/watch.err")"
echo "ok: a backend down, then up: every file once, in order"

# --- a stream: perf record -o - | perfport watch -i - --window 1s ---
start_server pyro pyroscope_server.py ok "$WORK/gen-pyro"
start_server otlp otlp_server.py ok "$WORK/gen-otlp"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
OTLP="http://127.0.0.1:$(cat "$WORK/otlp/port")"
# stream OUT ARGS...: shape for 4 s, piped through tee (the oracle's copy) into watch -i -;
# the oracle is report of that copy read as the watcher reads it, once, on
# standard input: of a file, report first reads when the samples ended and
# charges nothing after the last (docs/wait-states.md), and a busy run
# (issue 52) had the threads' ends 32 ms of off-CPU time past it
stream() {
	local out=$1; shift
	rc=0
	perf record -k CLOCK_MONOTONIC -e cpu-clock/freq=997/ -e sched:sched_switch \
		--switch-events -g -o - -- "$SHAPE" 4 "$WORK" 2>"$WORK/record.log" |
		tee "$WORK/stream.data" |
		"$PERFPORT" watch -i - --window 1s "$@" >"$WORK/$out.out" 2>"$WORK/$out.err" || rc=$?
	"$PERFPORT" -q report --json -i - <"$WORK/stream.data" >"$WORK/stream.json" ||
		fail "report of the stream: exit $?"
}
stream pipe -f pyroscope,otlp -O pyroscope.server="$PYRO" -O otlp.endpoint="$OTLP" --label env=ci
[ $rc -eq 0 ] || { cat "$WORK/record.log" "$WORK/pipe.err"; fail "watch -i -: exit $rc"; }
cat "$WORK/pipe.out"
$PY - "$WORK" <<'PY' || fail "the stream's windows"
import glob, json, os, re, subprocess, sys
sys.path.insert(0, os.environ["TOP"] + "/tests/e2e/lib")
from otlp_check import load
w = sys.argv[1]
tot = json.load(open(w + "/stream.json"))["totals"]
threads = len(json.load(open(w + "/stream.json"))["threads"])
def reqs(name, ext):
    ps = glob.glob("%s/%s/req-*.%s" % (w, name, ext))
    return sorted(ps, key=lambda p: int(re.search(r"req-([0-9]+)", p).group(1)))
pyro = []
for p in reqs("pyro", "json"):
    for s in json.load(open(p)).get("series", []):
        if s["labels"]["__name__"] == "process_cpu":
            pyro.append(s["types"]["process_cpu:samples:count:cpu:nanoseconds"]["total"])
windows, spans = [], []
for p in reqs("otlp", "bin"):
    req = load(os.path.join(w, "gen-otlp"), open(p, "rb").read(), "protobuf")
    d, got = req.dictionary, {}
    for prof in req.resource_profiles[0].scope_profiles[0].profiles:
        state = [d.attribute_table[i].value.string_value for i in prof.attribute_indices
                 if d.string_table[d.attribute_table[i].key_strindex] == "thread.state"][0]
        got[state] = sum(sum(s.values) for s in prof.samples)
        span = (prof.time_unix_nano, prof.time_unix_nano + prof.duration_nano)
    windows.append(got)
    spans.append(span)
n = len(windows)
# a window without on-CPU samples (the last, of a few ms, may be one) has
# no process_cpu series: Pyroscope's count is that of the others
on_windows = sum(1 for x in windows if x.get("on-cpu"))
if n < 4 or len(pyro) != on_windows:
    sys.exit("%d OTLP windows, %d of them with on-CPU samples, %d Pyroscope ones, for 4 s in 1 s windows"
             % (n, on_windows, len(pyro)))
# on CPU: every sample in exactly one window
if sum(pyro) != tot["on-cpu"]["count"] or sum(x.get("on-cpu", 0) for x in windows) != tot["on-cpu"]["ns"]:
    sys.exit("on-CPU: windows %d samples %d ns, the stream %d %d" % (
        sum(pyro), sum(x.get("on-cpu", 0) for x in windows), tot["on-cpu"]["count"], tot["on-cpu"]["ns"]))
# off CPU: an interval open at a boundary goes on in the next window; what
# it was decided to be may differ at each boundary (evidence came later)
off = [c for c in tot if c not in ("on-cpu", "idle")]
got_off = sum(x.get(c, 0) for x in windows for c in off)
want_off = sum(tot[c]["ns"] for c in off)
if abs(got_off - want_off) > 1e6 * threads * (n - 1):
    sys.exit("off-CPU: windows %d ns, the stream %d" % (got_off, want_off))
for c in off:
    g = sum(x.get(c, 0) for x in windows)
    print("%-12s windows %.4f s, the stream %.4f s" % (c, g / 1e9, tot[c]["ns"] / 1e9))
for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
    if b0 != a1:
        sys.exit("windows [%d, %d] and [%d, %d] are not contiguous" % (a0, a1, b0, b1))
print("%d windows: on-CPU equal to the stream's (%d samples), off-CPU within %.3f ms, contiguous" % (
    n, sum(pyro), abs(got_off - want_off) / 1e6))
PY
echo "ok: a stream cut into 1 s windows"

# the backend down for three requests: the windows wait in the spool, in order
start_server pyro pyroscope_server.py unavailable,unavailable,unavailable,ok "$WORK/gen-pyro"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
stream pipedown -f pyroscope -O server="$PYRO" --retries 1 --resend-every 1 --spool "$WORK/pspool"
[ $rc -eq 4 ] || [ $rc -eq 0 ] || { cat "$WORK/pipedown.err"; fail "watch -i - with the backend down: exit $rc"; }
# exit 4: the stream ended before a resend found the backend up (a loaded
# machine's timing: the third failure can be the stream's last try); what
# was not delivered is in the spool, and 'perfport resend' sends it, in order
if [ $rc -eq 4 ]; then
	[ -n "$(ls -A "$WORK/pspool" 2>/dev/null)" ] || fail "exit 4 with an empty spool: $(said "$WORK/pipedown.err")"
	has "kept in the spool" "$WORK/pipedown.out" "$WORK/pipedown.err" ||
		fail "exit 4 without saying what was kept: $(said "$WORK/pipedown.err")"
	"$PERFPORT" resend "$WORK/pspool" >"$WORK/presend.out" 2>"$WORK/presend.err" ||
		fail "perfport resend of the stream's spool: exit $?: $(said "$WORK/presend.err")"
fi
[ -z "$(ls -A "$WORK/pspool" 2>/dev/null)" ] || fail "the spool is not empty (watch exit $rc): $(ls "$WORK/pspool")"
$PY - "$WORK" <<'PY' || fail "the stream's windows through the spool"
import glob, json, re, sys
w = sys.argv[1]
tot = json.load(open(w + "/stream.json"))["totals"]
ok = []
for p in sorted(glob.glob(w + "/pyro/req-*.json"), key=lambda p: int(re.search(r"req-([0-9]+)", p).group(1))):
    r = json.load(open(p))
    if r["step"] != "ok":
        continue
    for s in r["series"]:
        if s["labels"]["__name__"] == "process_cpu":
            ok.append((int(r["query"]["from"]), s["types"]["process_cpu:samples:count:cpu:nanoseconds"]["total"]))
if sum(v for _, v in ok) != tot["on-cpu"]["count"]:
    sys.exit("delivered %d samples in %d windows, the stream has %d" % (sum(v for _, v in ok), len(ok), tot["on-cpu"]["count"]))
if [f for f, _ in ok] != sorted(f for f, _ in ok):
    sys.exit("out of order: %s" % ok)
print("%d windows delivered once each, in order, after three failures" % len(ok))
PY
echo "ok: a stream with the backend down, then up"

# SIGTERM while a stream goes on: the window being read is finished and sent
# (-m 16: perf hands its samples on every few tens of ms, not when 256 KiB
# have piled up)
start_server pyro pyroscope_server.py ok "$WORK/gen-pyro"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
(
	set +e
	perf record -m 16 -k CLOCK_MONOTONIC -e cpu-clock/freq=997/ -g -o - -- "$SHAPE" 20 "$WORK" 2>"$WORK/term.rec" |
		"$PERFPORT" watch -i - --window 1s -f pyroscope -O server="$PYRO" \
			--spool "$WORK/term.spool" >"$WORK/term.out" 2>"$WORK/term.err"
	echo "${PIPESTATUS[1]}" >"$WORK/term.rc"
) &
WATCH=$!
# three windows sent (however long a loaded machine takes), and half a
# second of the fourth read, before the signal
for _ in $(seq 6000); do
	[ "$(wc -l <"$WORK/term.out" 2>/dev/null || echo 0)" -ge 3 ] && break
	kill -0 "$WATCH" 2>/dev/null || break
	sleep 0.1
done
sleep 0.5
# this test's watcher (a child of the subshell), not another run's beside it
kill -TERM $(pgrep -P "$WATCH" -x perfport) 2>/dev/null || true
wait "$WATCH" || true
pkill -f "$SHAPE 20" || true
rc=$(cat "$WORK/term.rc")
[ $rc -eq 0 ] || { cat "$WORK/term.rec" "$WORK/term.err"; fail "watch -i - after SIGTERM: exit $rc"; }
w=$(wc -l <"$WORK/term.out")
last=$(tail -1 "$WORK/term.out")
[ "$w" -ge 4 ] || fail "SIGTERM after 3 windows sent: $w windows sent in all"
case $last in *" 0 samples"*) fail "the last window is empty: $last";; esac
echo "ok: SIGTERM: $w windows sent, the last one cut short ($last)"

# --- a configuration file, read again at SIGHUP ---
start_server pyro pyroscope_server.py ok "$WORK/gen-pyro"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
conf() { # ENV: the configuration, labelling with env=ENV
	printf '# perfport watch, as a service has it\nformat = pyroscope\noption = pyroscope.server=%s\nlabel env=%s\nresend-every = 5\n' \
		"$PYRO" "$1" >"$WORK/watch.conf"
}
# envs: the env label of each process_cpu upload, in order
envs() {
	$PY - "$WORK" <<'PY'
import glob, json, re, sys
w = sys.argv[1]
out = []
for p in sorted(glob.glob(w + "/pyro/req-*.json"), key=lambda p: int(re.search(r"req-([0-9]+)", p).group(1))):
    for s in json.load(open(p)).get("series", []):
        if s["labels"]["__name__"] == "process_cpu":
            out.append(s["labels"].get("env", "-"))
print(" ".join(out))
PY
}
# files: the watcher re-runs itself, the state file carries on
conf one
mkdir -p "$WORK/hup"
"$PERFPORT" watch "$WORK/hup" --config "$WORK/watch.conf" >"$WORK/hup.out" 2>"$WORK/hup.err" &
WATCH=$!
PIDS+=($WATCH)
rotate "$WORK/hup" 5 &
REC=$!
wait_sent "$WORK/hup" 2
conf two
kill -HUP "$WATCH"
wait "$REC"
n=$(ls "$WORK/hup" | grep -c '^perf\.data\.[0-9]*$' || true)
wait_sent "$WORK/hup" "$n"
kill -TERM "$WATCH"
wait "$WATCH" || true
e=$(envs)
case "$e" in "one one"*two) ;; *) fail "files before and after SIGHUP labelled: $e";; esac
# (a process_cpu upload a file with on-CPU samples: perf's last may have none)
non=$(oncpu_files "$WORK/hup")
[ "$(echo "$e" | wc -w)" -eq "$non" ] ||
	fail "$n files, $non with on-CPU samples, $(echo "$e" | wc -w) process_cpu uploads after SIGHUP: $e"
echo "ok: SIGHUP with files: the configuration read again ($e)"
# a stream: its windows go on, the formats' options and labels are read again
start_server pyro pyroscope_server.py ok "$WORK/gen-pyro"
PYRO="http://127.0.0.1:$(cat "$WORK/pyro/port")"
conf one
# the workload runs until two windows have been sent after the SIGHUP,
# then is ended: not a fixed 5 s, which a busy run (issue 52) spent before
# the watcher had read one window, every window then sent before the
# SIGHUP came ("one one one one one one"); a 2-page buffer, so that perf's
# rounds come every few KiB however loaded the machine (as in e2e 39)
rm -f "$WORK/shape.pid"
(
	set +e
	perf record -m 2 -k CLOCK_MONOTONIC -e cpu-clock/freq=997/ -g -o - -- "$SHAPE" 600 "$WORK" 2>"$WORK/hup2.rec" |
		"$PERFPORT" watch -i - --window 1s --config "$WORK/watch.conf" >"$WORK/hup2.out" 2>"$WORK/hup2.err"
	echo "${PIPESTATUS[1]}" >"$WORK/hup2.rc"
) &
STREAM=$!
windows() { wc -l <"$WORK/hup2.out" 2>/dev/null || echo 0; }
# wait_windows N: until the watcher has sent N windows (10 minutes at most)
wait_windows() {
	for _ in $(seq 6000); do
		[ "$(windows)" -ge "$1" ] && [ -s "$WORK/shape.pid" ] && return 0
		kill -0 "$STREAM" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# a window sent with the first configuration, then the second
wait_windows 1 || fail "the stream sent no window: $(said "$WORK/hup2.err")"
conf two
n0=$(windows)
kill -HUP $(pgrep -P "$STREAM" -x perfport) || fail "no watcher to send SIGHUP to"
wait_windows $((n0 + 2)) || fail "no two windows after SIGHUP: $(said "$WORK/hup2.err")"
kill -TERM "$(cat "$WORK/shape.pid")" 2>/dev/null || true
wait "$STREAM" || true
[ "$(cat "$WORK/hup2.rc")" = 0 ] || { cat "$WORK/hup2.rec" "$WORK/hup2.err"; fail "watch -i - with SIGHUP: exit $(cat "$WORK/hup2.rc")"; }
e=$(envs)
case "$e" in one*two) ;; *) fail "windows before and after SIGHUP labelled: $e";; esac
echo "ok: SIGHUP with a stream: the formats' options read again ($e)"

# a slow pipe is read in batches: the stream written 2 KiB at a time every
# 5 ms, cut into 200 ms windows (a wait of 50 ms after each small read),
# takes a few reads, not one per write
if command -v strace >/dev/null; then
	# (the writer's status and strace's, which is perfport's, said on failure)
	st=
	if $PY - "$WORK/stream.data" <<'PY' |
import sys, time
d = open(sys.argv[1], "rb").read()
o = sys.stdout.buffer
for i in range(0, len(d), 2048):
    o.write(d[i:i + 2048])
    o.flush()
    time.sleep(0.005)
PY
		strace -f -qq -e trace=read -o "$WORK/reads" "$PERFPORT" watch -i - --window 200ms \
			-f pyroscope -O server="$PYRO" --spool "$WORK/gather.spool" \
			>"$WORK/gather.out" 2>"$WORK/gather.err"; then
		:
	else
		st="${PIPESTATUS[*]}"
	fi
	# what is checked is how the pipe is read; an upload kept in the spool
	# (exit 4: seen 3 times in 15 runs beside others' jobs, each window
	# "kept in the spool, in order" with nothing on stderr) is not its subject
	[ "$st" != "0 4" ] || echo "note: the slow pipe's windows were kept in the spool (exit 4): $(tail -n 1 "$WORK/gather.out")"
	case $st in "" | "0 4") ;; *)
		cat "$WORK/gather.err"; tail -n 3 "$WORK/gather.out" "$WORK/reads" || true
		fail "watch -i - of a slow pipe under strace: exit statuses (writer, strace) $st";;
	esac
	writes=$(( ($(stat -c %s "$WORK/stream.data") + 2047) / 2048 ))
	reads=$(grep -c 'read(0,' "$WORK/reads" || true)
	[ "$reads" -gt 0 ] && [ $((reads * 4)) -lt "$writes" ] ||
		fail "a slow pipe: $reads reads for $writes writes of 2 KiB"
	echo "ok: a slow pipe read in batches: $reads reads for $writes writes"
else
	echo "(strace is not installed: the slow pipe's reads not counted)"
fi
printf 'formt = pyroscope\n' >"$WORK/bad.conf"
rc=0
"$PERFPORT" watch -i - --config "$WORK/bad.conf" </dev/null 2>"$WORK/bad.err" || rc=$?
[ $rc -eq 1 ] && grep -q "line 1: 'formt' is not an option of perfport watch.*did you mean 'format'" "$WORK/bad.err" ||
	fail "an unknown key in the configuration: exit $rc, $(cat "$WORK/bad.err")"
echo "ok: a configuration's unknown key refused, with the nearest one"

# a backend that stays away and a spool bounded to 8 KiB: the oldest
# requests are dropped, counted, and the exit status says something was lost
rc=0
"$PERFPORT" watch -i "$WORK/stream.data" --window 200ms -f pyroscope --retries 1 --timeout 1 \
	--spool "$WORK/small" --spool-max 8K -O server=http://127.0.0.1:1 >/dev/null 2>"$WORK/small.err" || rc=$?
[ $rc -eq 2 ] || { tail -5 "$WORK/small.err"; fail "a bounded spool that dropped requests: exit $rc, not 2"; }
grep -q "holds more than 8 KiB: its [0-9]* oldest request.* dropped ([0-9]* in all)" "$WORK/small.err" ||
	fail "the drops are not said: $(grep spool "$WORK/small.err" | tail -3)"
held=$(find "$WORK/small" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
[ "$held" -le 8192 ] && [ "$held" -gt 0 ] || fail "the spool holds $held bytes, bounded to 8192"
echo "ok: the spool bounded: $held bytes kept"

# --- command lines refused ---
bad() { # MESSAGE ARGS...
	local msg=$1; shift
	rc=0
	"$PERFPORT" watch "$@" >/dev/null 2>"$WORK/bad.err" || rc=$?
	[ $rc -eq 1 ] || fail "watch $*: exit $rc, not 1"
	grep -q "$msg" "$WORK/bad.err" || fail "watch $*: $(cat "$WORK/bad.err")"
}
bad "say which directory" -f pyroscope
bad "not a directory" "$WORK/nope" -f pyroscope
bad "is read with -i -" - -f pyroscope
bad "window takes" -i - --window 0s -f pyroscope
bad "is for a directory" -i - --keep 3 -f pyroscope
bad "cuts a stream" "$WORK/rot" --window 1s -f pyroscope
bad "spool-max takes" -i - --spool-max 12Q -f pyroscope
bad "dwarf-max takes" -i - --dwarf-max 0 -f pyroscope
bad "cannot upload" "$WORK/rot" -f folded
bad "keep takes" "$WORK/rot" -f pyroscope --keep -1
bad "unrecognized\|unknown" "$WORK/rot" -f pyroscope --bogus
"$PERFPORT" watch --help | has -- '--switch-output' || fail "watch --help"
echo "ok: bad command lines refused"
