#!/usr/bin/env bash
# Uploads: nothing lost, nothing let in.
# - SIGTERM, SIGINT or SIGHUP during an upload (a server that takes the
#   connection and never answers): every request not delivered is kept in
#   the spool, and perfport ends with the signal (exit 128 + N); resend
#   delivers them.
. "$(dirname "$0")/lib/common.sh"
need_python
F="$TOP/samples/offcpu.perf.data"
export XDG_STATE_HOME="$WORK/state"
SPOOL="$XDG_STATE_HOME/perfport/spool"
HANG_PID=

# a server that accepts connections and never answers
hang_server() {
	$PY - "$WORK/hang.port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
PY
	HANG_PID=$!
	for _ in $(seq 100); do [ -f "$WORK/hang.port" ] && break; sleep 0.05; done
	HANG="http://127.0.0.1:$(cat "$WORK/hang.port")"
}
trap 'rc=$?; [ -z "$HANG_PID" ] || kill "$HANG_PID" 2>/dev/null; [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; exit $rc' EXIT

hang_server
for sig in TERM INT HUP; do
	rm -rf "$SPOOL"
	"$PERFPORT" -q upload -i "$F" -f pyroscope -O server="$HANG" 2>"$WORK/$sig.err" &
	up=$!
	sleep 1
	kill -$sig $up
	rc=0; wait $up || rc=$?
	want=$((128 + $(kill -l $sig)))
	[ $rc -eq $want ] || { cat "$WORK/$sig.err"; fail "SIG$sig during an upload: exit $rc, want $want"; }
	n=$(ls "$SPOOL" 2>/dev/null | grep -vc '^\.' || true)
	[ "$n" -eq 2 ] || { cat "$WORK/$sig.err"; fail "SIG$sig during an upload: $n of 2 requests in the spool"; }
	has "interrupted by .*kept in the spool" "$WORK/$sig.err" || fail "SIG$sig: nothing said"
done
echo "ok: SIGTERM, SIGINT, SIGHUP during an upload: both requests spooled, exit 128+N"
# resend to a server that answers delivers them
test_server pyroscope_server.py ok "$WORK/gen"
for e in "$SPOOL"/*; do sed -i "s|^url $HANG|url $URL|" "$e/request"; done
"$PERFPORT" -q resend >"$WORK/resend.out" 2>&1 || { cat "$WORK/resend.out"; fail "resend: exit $?"; }
[ -f "$WORK/srv/req-1.json" ] && [ -z "$(ls "$SPOOL")" ] || fail "resend did not deliver the interrupted upload"
echo "ok: the interrupted upload's requests delivered by resend"
