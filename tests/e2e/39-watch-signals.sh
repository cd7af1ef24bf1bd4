#!/usr/bin/env bash
# perfport watch and its signals, each sent while an upload is in flight:
# a loopback backend (lib/held_server.py) holds its answers until the test
# lets them go, so the signal comes during the upload however loaded the
# machine. Checked, as docs/perfport.1 says:
# - a stream, SIGTERM while its first window's upload waits and the
#   windows read behind it fill the queue (put off into the spool, behind
#   the slow backend): the upload in flight finishes, the stream ends, and
#   every window read is delivered (the spool tried once more, as at the
#   stream's end), exit 0, the spool empty (the build before exited 4 with
#   the windows kept);
# - --archive unpacked into a private directory (no cache): one SIGTERM
#   ends the watcher with exit 0 and the directory removed; a second one
#   during the upload ends it at once (143), the directory removed too (the
#   build before left it); SIGHUP's new image leaves none of the old one's
#   behind (the build before left one per SIGHUP).
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
build_shape

# until COND...: wait for a condition while the watcher ($W) runs (a
# loaded machine slows it; 10 minutes at most, against a hang)
until_true() {
	for _ in $(seq 6000); do
		"$@" && return 0
		kill -0 "$W" 2>/dev/null || break
		sleep 0.1
	done
	"$@" && return 0
	fail "waited in vain for: $*: $(said "$WORK/w.err")"
}
filled() { has -F "the uploads are slower than the windows come" "$WORK/w.err"; }
got() { [ -f "$WORK/srv/got-$1" ]; }
# taken SIG: the watcher's pending signals no longer hold SIG (it was
# handled: two sent at once would make one)
taken() {
	local p
	p=$(sed -n 's/^ShdPnd:[[:space:]]*//p' "/proc/$W/status" 2>/dev/null) || return 0
	[ -n "$p" ] || return 0
	(( (0x$p & (1 << ($1 - 1))) == 0 ))
}
spooled() { find "$1" -maxdepth 1 -type f ! -name '.*' 2>/dev/null | wc -l; }

# --- a stream: SIGTERM during an upload, the windows behind it put off ---
# the stream is a recording fed through a FIFO held open after it, so the
# watcher reads every window but never the stream's end: only the signal
# ends it. 4 s in 200 ms windows: 20 windows, more than the 8 queued.
# A window is read once perf's rounds show nothing earlier can come, and
# the stream's last round waits for its end, which never comes: with a
# 16-page buffer a loaded run's perf woke twice in 4 s (3 rounds, 654
# samples) and only the first window was ever read. A 2-page buffer makes
# a round every few KiB however loaded the machine.
perf record -m 2 -k CLOCK_MONOTONIC -e cpu-clock/freq=997/ -g -o - -- "$SHAPE" 4 "$WORK" \
	>"$WORK/s.pipe" 2>"$WORK/s.rec" || { cat "$WORK/s.rec"; fail "perf record -o -: exit $?"; }
test_server held_server.py
touch "$WORK/srv/hold"
mkfifo "$WORK/fifo"
( cat "$WORK/s.pipe"; until [ -f "$WORK/eof" ]; do sleep 0.05; done ) >"$WORK/fifo" &
FEED=$!
trap 'touch "$WORK/eof"; [ -z "${W:-}" ] || kill -9 "$W" 2>/dev/null || true
	kill "$SERVER_PID" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
XDG_STATE_HOME="$WORK/state" "$PERFPORT" -v watch -i "$WORK/fifo" --window 200ms -f pyroscope \
	-O server="$URL" --spool "$WORK/s.spool" >"$WORK/w.out" 2>"$WORK/w.err" &
W=$!
# the first window's upload held, and the queue behind it full
until_true got 1
until_true filled
kill -TERM "$W"
rm "$WORK/srv/hold"
rc=0; wait "$W" || rc=$?
touch "$WORK/eof"
wait "$FEED" || true
[ $rc -eq 0 ] || { cat "$WORK/w.err"; fail "watch -i: SIGTERM during an upload: exit $rc, want 0"; }
n=$(wc -l <"$WORK/w.out")
[ "$n" -ge 10 ] || fail "watch -i: $n windows read before the signal took, want the 9 held and more"
[ -f "$WORK/srv/done-1" ] || fail "the upload in flight was not answered"
reqs=$(find "$WORK/srv" -name 'got-*' | wc -l)
[ "$reqs" -eq "$n" ] || fail "$n windows, $reqs requests delivered: $(cat "$WORK/w.err")"
[ "$(spooled "$WORK/s.spool")" -eq 0 ] || fail "the spool still holds $(spooled "$WORK/s.spool") windows"
echo "ok: SIGTERM during a stream's upload: $n windows, each delivered, exit 0"

# --- a stream: a second SIGTERM while the upload is still held ---
# the stream's windows are nowhere but in the watcher: the upload in
# flight ends, it and every window read are kept in the spool, and the
# watcher ends by the signal (143), saying so; 'perfport resend' then
# delivers them all. The build before ended at once with nothing kept
# (16 windows of a dwarf stream lost, no spool made).
rm -f "$WORK/eof"
base=$(find "$WORK/srv" -name 'done-*' | wc -l)
touch "$WORK/srv/hold"
( cat "$WORK/s.pipe"; until [ -f "$WORK/eof" ]; do sleep 0.05; done ) >"$WORK/fifo" &
FEED=$!
XDG_STATE_HOME="$WORK/state" "$PERFPORT" -v watch -i "$WORK/fifo" --window 200ms -f pyroscope \
	-O server="$URL" --spool "$WORK/s2.spool" >"$WORK/w.out" 2>"$WORK/w.err" &
W=$!
until_true got $((base + 1))
until_true filled
kill -TERM "$W"
until_true taken 15
kill -TERM "$W"
rc=0; wait "$W" || rc=$?
touch "$WORK/eof"
wait "$FEED" || true
answered=$(find "$WORK/srv" -name 'done-*' | wc -l)
rm "$WORK/srv/hold"
[ $rc -eq 143 ] || fail "watch -i: a second SIGTERM during an upload: exit $rc, want 143: $(said "$WORK/w.err")"
has -F "interrupted by Terminated: what was not delivered is kept in the spool" "$WORK/w.err" ||
	fail "watch -i: a second SIGTERM: no word of the spool: $(said "$WORK/w.err")"
# the requests kept untried after the signal are told in that one line, not
# a line each (the build before wrote two lines for each: 23 windows, 46)
untried=$(grep -o ', [0-9]* requests\{0,1\} of it not tried after the signal' "$WORK/w.err" |
	grep -o '[0-9]*') || true
! grep -q 'not sent: interrupted' "$WORK/w.err" ||
	fail "watch -i: a second SIGTERM: a line for each request kept: $(said "$WORK/w.err")"
n=$(grep -c '^window ' "$WORK/w.out") || true
# a request kept is a directory of the spool's
entries() { find "$1" -mindepth 1 -maxdepth 1 -type d ! -name '.*' 2>/dev/null | wc -l; }
kept=$(entries "$WORK/s2.spool")
[ "$n" -ge 2 ] && [ "$kept" -ge "$n" ] ||
	fail "watch -i: a second SIGTERM: $n windows read, $kept requests kept in the spool"
[ "${untried:-0}" -ge $((n - 2)) ] && [ "${untried:-0}" -le "$kept" ] ||
	fail "watch -i: a second SIGTERM: $kept requests kept, the stop's line says ${untried:-no} untried: $(said "$WORK/w.err")"
[ "$answered" -eq "$base" ] || fail "an upload was answered while the backend held it"
"$PERFPORT" resend "$WORK/s2.spool" >"$WORK/r.out" 2>"$WORK/r.err" ||
	fail "perfport resend after the second SIGTERM: exit $?: $(said "$WORK/r.err")"
[ "$(entries "$WORK/s2.spool")" -eq 0 ] || fail "the resend left $(entries "$WORK/s2.spool") requests in the spool"
done=$(($(find "$WORK/srv" -name 'done-*' | wc -l) - base))
[ "$done" -ge "$kept" ] || fail "$kept requests kept, $done answered after the resend"
echo "ok: a second SIGTERM during a stream's upload: exit 143, $n windows' $kept requests kept in the spool ($untried untried, told in one line), then resent"

# --- --archive into a private directory, and the signals ---
mkdir -p "$WORK/t/.build-id/ab" "$WORK/tmp" "$WORK/rot"
head -c 4096 /dev/urandom >"$WORK/t/.build-id/ab/cdef0123456789abcdef0123456789abcdef01"
tar -cjf "$WORK/a.tar.bz2" -C "$WORK/t" .build-id
cp "$WORK/s.pipe" "$WORK/rot/perf.data.2026010100000001"
unpacked() { find "$WORK/tmp" -mindepth 1 -maxdepth 1 | sort; }
# watch_archive NAME ARGS...: a watcher of $WORK/rot with the archive in
# a private directory ($WORK/tmp: XDG_CACHE_HOME cannot be made); W its PID
watch_archive() {
	local name=$1; shift
	rm -rf "$WORK/rot/.perfport-watch" "$WORK/rot/.perfport-watch.spool" "$WORK/$name.spool"
	TMPDIR="$WORK/tmp" XDG_CACHE_HOME=/dev/null/none XDG_STATE_HOME="$WORK/state" \
		"$PERFPORT" -v watch "$WORK/rot" --archive "$WORK/a.tar.bz2" -f pyroscope \
		-O server="$URL" --spool "$WORK/$name.spool" "$@" >"$WORK/w.out" 2>"$WORK/w.err" &
	W=$!
}

# one SIGTERM: the file being sent finishes, exit 0, the directory removed
test_server held_server.py
touch "$WORK/srv/hold"
watch_archive one
until_true got 1
[ -n "$(unpacked)" ] || fail "--archive: nothing unpacked into TMPDIR: $(said "$WORK/w.err")"
kill -TERM "$W"
rm "$WORK/srv/hold"
rc=0; wait "$W" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/w.err"; fail "watch --archive, SIGTERM: exit $rc, want 0"; }
[ -z "$(unpacked)" ] || fail "watch --archive, SIGTERM: left in TMPDIR: $(unpacked)"
echo "ok: --archive, SIGTERM: exit 0, the archive's directory removed"

# two: the second ends the watcher at once, by the signal, the directory removed
test_server held_server.py
touch "$WORK/srv/hold"
watch_archive two
until_true got 1
kill -TERM "$W"
until_true taken 15
kill -TERM "$W"
rc=0; wait "$W" || rc=$?
rm "$WORK/srv/hold"
[ $rc -eq 143 ] || { cat "$WORK/w.err"; fail "watch --archive, two SIGTERMs: exit $rc, want 143"; }
[ -z "$(unpacked)" ] || fail "watch --archive, two SIGTERMs: left in TMPDIR: $(unpacked)"
echo "ok: --archive, a second SIGTERM: exit 143 at once, the archive's directory removed"

# SIGHUP: the watcher runs itself anew; the old image's directory goes
test_server held_server.py
watch_archive hup
until_true got 1
first=$(unpacked)
[ -n "$first" ] || fail "--archive: nothing unpacked into TMPDIR: $(said "$WORK/w.err")"
kill -HUP "$W"
until_true has -F "SIGHUP: running again" "$WORK/w.err"
# the new image's own directory made (it was the old one's)
another() { [ -n "$(unpacked | grep -vxF "$first")" ]; }
until_true another
kill -TERM "$W"
rc=0; wait "$W" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/w.err"; fail "watch --archive, SIGHUP then SIGTERM: exit $rc, want 0"; }
[ -z "$(unpacked)" ] || fail "watch --archive, SIGHUP then SIGTERM: left in TMPDIR: $(unpacked)"
echo "ok: --archive, SIGHUP then SIGTERM: exit 0, no directory left"

# --- windows of a recording without clock data: each its own time range ---
# (no -k: the wall clock is estimated; the build before gave every window
# the same range, each ending at the file's modification time)
record "$WORK/noclock.data" -e cpu-clock/freq=997/ -g -- "$SHAPE" 2 "$WORK"
test_server held_server.py
W=
"$PERFPORT" watch -i "$WORK/noclock.data" --window 500ms -f pyroscope -O server="$URL" \
	--spool "$WORK/nc.spool" >"$WORK/nc.out" 2>"$WORK/nc.err" ||
	{ cat "$WORK/nc.err"; fail "watch -i of a recording without clock data: exit $?"; }
has -F "holds no wall-clock reference" "$WORK/nc.err" || fail "the recording has clock data: $(said "$WORK/nc.err")"
$PY - "$WORK/nc.out" <<'PY' || fail "windows without clock data: $(cut -d: -f1-4 "$WORK/nc.out" | tr '\n' ' ')"
import re, sys
def ms(t):
    h, m, s = t.split(":")
    return (int(h) * 3600 + int(m) * 60) * 1000 + round(float(s) * 1000)
r = [tuple(ms(t) for t in re.match(r"window (\S+)-(\S+):", l).groups()) for l in open(sys.argv[1])]
assert len(r) >= 3, r
# each its own, one after the other; a window with no sample is not sent
# (nor printed): a loaded machine stalled the workload for one once, and
# the next began 500 ms (a window) after the last one's end
for (a0, a1), (b0, b1) in zip(r, r[1:]):
    assert b0 >= a1 and (b0 - a1) % 500 == 0 and b1 > b0, (a0, a1, b0, b1)
print("%d windows, each its own range, one after the other" % len(r))
PY
echo "ok: windows without clock data: each its own time range"
