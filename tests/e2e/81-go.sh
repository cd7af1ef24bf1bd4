#!/usr/bin/env bash
# A Go program's threads off CPU (progs/gowaits.go: goroutines on a
# sync.Mutex, a channel, time.Sleep). Go parks waiting goroutines in its
# scheduler: the kernel sees its threads (Ms) with nothing to run, in
# runtime.findRunnable (stopm's note, the network poller), and those are
# idle, not sleep or timed-sleep; report says that goroutine waits are
# invisible to the kernel and where Go counts them. --call-graph dwarf and -g.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
command -v go >/dev/null || skip "go is not installed (apt-get install golang-go)"
export GOCACHE="$WORK/gocache" GOPATH="$WORK/gopath" GO111MODULE=off GOFLAGS= HOME="$WORK"
go build -o "$WORK/gowaits" "$TOP/tests/e2e/progs/gowaits.go" || fail "go build"
for mode in dwarf fp; do
	cg="--call-graph dwarf,8192"
	[ $mode = fp ] && cg=-g
	record "$WORK/$mode.data" -m 1024 -e cpu-clock/freq=99/ -e sched:sched_switch \
		-e sched:sched_waking --switch-events $cg -- "$WORK/gowaits" 2
	"$PERFPORT" -q report -i "$WORK/$mode.data" --no-tree --top 1 >"$WORK/$mode.txt" || fail "report $mode: exit $?"
	for c in idle sleep timed-sleep lock io; do
		"$PERFPORT" -q export -i "$WORK/$mode.data" -f folded -O counter=$c -O value=ns \
			-O annotate=false -o "$WORK/$mode-$c.folded" || fail "export $mode $c: exit $?"
		sed "s/^/$c /" "$WORK/$mode-$c.folded"
	done >"$WORK/$mode.folded"
	$PY - "$WORK/$mode.folded" "$mode" <<'PY' || fail "$mode: the scheduler's idle threads are not idle"
import collections, sys
by = collections.Counter()
for line in open(sys.argv[1]):
    state, rest = line.split(" ", 1)
    stack, val = rest.rsplit(" ", 1)
    if "runtime.findRunnable" in stack.split(";") or "runtime.findrunnable" in stack.split(";"):
        by[state] += int(val)
t = sum(by.values())
print("%s: the scheduler with nothing to run: %.3f s off CPU, %s" % (sys.argv[2], t / 1e9,
      ", ".join("%s %.1f%%" % (c, 100 * v / t) for c, v in by.most_common()) if t else "none"))
assert t > 0.5e9 and by["idle"] >= 0.95 * t, dict(by)
PY
	has "^# runtime Go: its rules decided .*goroutine waits .* the kernel does not see them; Go's block and mutex profiles" \
		"$WORK/$mode.txt" || fail "$mode: report does not say where goroutine waits are counted: $(grep '^# runtime' "$WORK/$mode.txt")"
done
echo "ok: Go's idle scheduler threads are idle, and report points to Go's own profiles"
