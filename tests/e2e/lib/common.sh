# Sourced by the e2e scripts. Gives: $PERFPORT, $WORK (a fresh directory),
# skip MSG, fail MSG, need_perf, need_python, build_workload, record ARGS...
set -euo pipefail
: "${PERFPORT:?run through tests/run.sh or set PERFPORT}"
: "${TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}"
: "${CORPUS:=$TOP/../shared/corpus}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/perfport-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PY=/usr/bin/python3
CHECK="$TOP/tests/e2e/lib/check.py"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

need_python() { [ -x "$PY" ] || skip "Debian's /usr/bin/python3 is not installed"; }

# perf must exist and be allowed to record software events here.
need_perf() {
	command -v perf >/dev/null || skip "perf is not installed (apt-get install linux-perf)"
	if ! perf record -q -e cpu-clock -o "$WORK/probe.data" true >/dev/null 2>&1; then
		skip "perf cannot record here (needs root or perf_event_paranoid <= 1)"
	fi
	rm -f "$WORK/probe.data"
}

need_tracepoint() {
	perf record -q -e sched:sched_switch -o "$WORK/probe.data" true >/dev/null 2>&1 ||
		skip "perf cannot record sched:sched_switch here (needs root and tracefs)"
	rm -f "$WORK/probe.data"
}

build_workload() {
	WORKLOAD="$WORK/workload"
	cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORKLOAD" "$TOP/samples/workload.c"
}

# record OUTPUT PERF-RECORD-ARGS... -- runs the workload under perf record
record() {
	local out=$1; shift
	perf record -q -o "$out" "$@" >"$WORK/record.log" 2>&1 || {
		cat "$WORK/record.log"; fail "perf record $* failed"; }
}
