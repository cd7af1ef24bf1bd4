# Sourced by the e2e scripts. Gives: $PERFPORT, $WORK (a fresh directory),
# skip MSG, fail MSG, need_perf, need_python, build_workload, record ARGS...
set -euo pipefail
: "${PERFPORT:?run through tests/run.sh or set PERFPORT}"
: "${TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"
: "${CORPUS:=$TOP/../shared/corpus}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfport-test.XXXXXX")
SERVER_PID=
# work_done STATUS - removes $WORK at the end (KEEP=1 keeps it); a failed
# run's (STATUS neither 0 nor 77) is moved beside the runner's logs, as
# $TEST_OUT/NAME.work.PID, with its recordings: a failure seen once under
# load can be read afterwards
work_done() {
	[ -z "${KEEP:-}" ] || return 0
	if [ "$1" -ne 0 ] && [ "$1" -ne 77 ] && [ -d "${TEST_OUT:-}" ]; then
		local to
		to="$TEST_OUT/$(basename "$0" .sh).work.$$"
		if mv "$WORK" "$to" 2>/dev/null; then echo "kept: $to" >&2; return 0; fi
	fi
	rm -rf "$WORK"
}
trap '__rc=$?; [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null; work_done $__rc' EXIT
PY=/usr/bin/python3
CHECK="$TOP/tests/e2e/lib/check.py"

# A command that ends the test by failing under set -e says which, and
# where (set -E: in functions too; not in a subshell, whose status its
# caller judges)
set -E
trap '__rc=$?; [ "$BASH_SUBSHELL" -ne 0 ] || echo "FAIL: exit $__rc at ${BASH_SOURCE[0]##*/} line $LINENO: $BASH_COMMAND" >&2' ERR

skip() { echo "SKIP: $*"; exit 77; }
# has GREP-ARGS... - grep's status for its input, reading it all: 'cmd |
# grep -q' stops reading at the first match, and under pipefail the
# writer's SIGPIPE then fails the pipe (it did, now and then, in CI).
has() { grep "$@" >/dev/null; }
fail() { echo "FAIL: $*"; exit 1; }

need_python() { [ -x "$PY" ] || skip "Debian's /usr/bin/python3 is not installed"; }

# A failing command's own words: every helper that fails or skips on a
# command's exit prints what the command printed (perf's -q silences its
# errors too, "Couldn't create thread/CPU maps: No such process" among
# them, so no helper passes -q: the messages go to a log, printed on failure).
# said FILE: FILE's last lines, one line, for a message
said() { tail -5 "$1" 2>/dev/null | tr '\n' ' ' | sed 's/ *$//'; }

# perf must exist and be allowed to record software events here.
need_perf() {
	command -v perf >/dev/null || skip "perf is not installed (apt-get install linux-perf)"
	if ! perf record -e cpu-clock -o "$WORK/probe.data" true >"$WORK/probe.log" 2>&1; then
		skip "perf cannot record here (needs root or perf_event_paranoid <= 1): $(said "$WORK/probe.log")"
	fi
	rm -f "$WORK/probe.data"
}

need_tracepoint() {
	perf record -e sched:sched_switch -o "$WORK/probe.data" true >"$WORK/probe.log" 2>&1 ||
		skip "perf cannot record sched:sched_switch here (needs root and tracefs): $(said "$WORK/probe.log")"
	rm -f "$WORK/probe.data"
}

build_workload() {
	WORKLOAD="$WORK/workload"
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORKLOAD" "$TOP/samples/workload.c" ||
		fail "cc samples/workload.c: exit $? (its errors above)"
}

# record OUTPUT PERF-RECORD-ARGS... -- runs the workload under perf record;
# on failure prints perf's messages (and the workload's)
record() {
	local out=$1 rc=0; shift
	perf record -o "$out" "$@" >"$WORK/record.log" 2>&1 || rc=$?
	[ $rc -eq 0 ] || { cat "$WORK/record.log"; fail "perf record $* failed (exit $rc): $(said "$WORK/record.log")"; }
}

# test_server SERVER.py ARGS... - (re)start a loopback test server of
# tests/e2e/lib as "SERVER.py $WORK/srv ARGS..."; it writes $WORK/srv/port
# when it listens. Sets SERVER_PID and URL; the EXIT trap stops it.
test_server() {
	local script=$1; shift
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK/srv"
	mkdir -p "$WORK/srv"
	$PY "$TOP/tests/e2e/lib/$script" "$WORK/srv" "$@" 2>"$WORK/srv.log" &
	SERVER_PID=$!
	for _ in $(seq 100); do [ -f "$WORK/srv/port" ] && break; sleep 0.05; done
	[ -f "$WORK/srv/port" ] || { cat "$WORK/srv.log"; fail "the test server did not start: $(said "$WORK/srv.log")"; }
	URL="http://127.0.0.1:$(cat "$WORK/srv/port")"
}

# build_shape - compile tests/e2e/progs/shape.c, a workload whose profile is
# known in advance, as $SHAPE.
build_shape() {
	SHAPE="$WORK/shape"
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$SHAPE" "$TOP/tests/e2e/progs/shape.c" ||
		fail "cc tests/e2e/progs/shape.c: exit $? (its errors above)"
}

# record_shape OUTPUT - shape for 1 s under on-CPU sampling (997 Hz),
# sched_switch and switch events, with frame-pointer stacks.
record_shape() {
	build_shape
	record "$1" -e cpu-clock/freq=997/ -e sched:sched_switch --switch-events -g -- \
		"$SHAPE" 1 "$WORK"
}

# prepare_tree DATA NAME - what an exporter's output is checked against:
# $WORK/NAME.tree.json (perfport report --json) and $WORK/NAME.folded/C.folded
# per counter C (folded, in ns, without annotations; empty for a counter
# the recording has none of)
prepare_tree() {
	"$PERFPORT" -q report --json -i "$1" >"$WORK/$2.tree.json" 2>"$WORK/$2.tree.err" ||
		fail "report $2: exit $?: $(said "$WORK/$2.tree.err")"
	mkdir -p "$WORK/$2.folded"
	for c in on-cpu preempted lock io sleep timed-sleep idle; do
		"$PERFPORT" -q export -i "$1" -f folded -O annotate=false -O value=ns -O counter=$c \
			-o "$WORK/$2.folded/$c.folded" 2>/dev/null || : >"$WORK/$2.folded/$c.folded"
	done
}
