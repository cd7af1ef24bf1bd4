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

# a server that accepts connections and never answers; it counts them in
# $WORK/hang.port.conn (the test's cue that an upload is under way)
hang_server() {
	$PY - "$WORK/hang.port" <<'PY' &
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    open(sys.argv[1] + ".conn.tmp", "w").write(str(len(held)))
    os.rename(sys.argv[1] + ".conn.tmp", sys.argv[1] + ".conn")
PY
	HANG_PID=$!
	for _ in $(seq 100); do [ -f "$WORK/hang.port" ] && break; sleep 0.05; done
	HANG="http://127.0.0.1:$(cat "$WORK/hang.port")"
}
trap 'rc=$?; [ -z "$HANG_PID" ] || kill "$HANG_PID" 2>/dev/null; [ -z "$SERVER_PID" ] || kill "$SERVER_PID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; exit $rc' EXIT

hang_server
for sig in TERM INT HUP; do
	rm -rf "$SPOOL"
	c0=$(cat "$WORK/hang.port.conn" 2>/dev/null || echo 0)
	"$PERFPORT" -q upload -i "$F" -f pyroscope -O server="$HANG" 2>"$WORK/$sig.err" &
	up=$!
	# the signal once the upload has connected (not after a fixed second:
	# a loaded machine may not have got there yet)
	until [ "$(cat "$WORK/hang.port.conn" 2>/dev/null || echo 0)" -gt "$c0" ]; do
		kill -0 $up 2>/dev/null || break
		sleep 0.02
	done
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

# - a connection that drops before the status line (the server read the
#   whole request): at-least-once - sent again on each attempt and on
#   resend - and every copy is the same bytes, so the run's ids in it (the
#   series' sample ID here; CodeGuru's profileToken, OTLP's profile_id,
#   Datakit's and ARMS's profile_id) are the same: a backend that drops
#   repeats by them can (docs/delivery.md)
$PY - "$WORK/drop" <<'PY' &
import http.server, os, socketserver, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
n = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        open("%s/body-%d" % (d, n[0]), "wb").write(body)
        n[0] += 1
        if os.path.exists(d + "/answer"):
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.close_connection = True
            self.connection.shutdown(2)   # read, then gone: no status line
    def log_message(self, *a):
        pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(d + "/port", "w").write(str(s.server_address[1]))
s.serve_forever()
PY
DROP_PID=$!
for _ in $(seq 100); do [ -f "$WORK/drop/port" ] && break; sleep 0.05; done
DROP="http://127.0.0.1:$(cat "$WORK/drop/port")"
rm -rf "$SPOOL"
rc=0
"$PERFPORT" -q upload -i "$F" -f pyroscope -O api=push -O server="$DROP" --retries 3 \
	2>"$WORK/drop.err" || rc=$?
[ $rc -eq 4 ] || { cat "$WORK/drop.err"; kill $DROP_PID; fail "a dropped connection: exit $rc, want 4 (spooled)"; }
touch "$WORK/drop/answer"
"$PERFPORT" -q resend >"$WORK/resend2.out" 2>&1 || { kill $DROP_PID; cat "$WORK/resend2.out"; fail "resend: exit $?"; }
kill $DROP_PID
n=$(ls "$WORK/drop" | grep -c '^body-')
[ "$n" -eq 4 ] || fail "a dropped connection: $n copies arrived, want 3 attempts and the resend's"
for i in 1 2 3; do
	cmp -s "$WORK/drop/body-0" "$WORK/drop/body-$i" || fail "copy $i differs from the first: its ids are not the same"
done
echo "ok: a connection dropped before the status: 3 attempts and the resend, the same bytes (the same ids) each time"

# - a spool entry whose writer was killed before renaming it into place
#   (a hidden .new-MS-PID-RAND): once its writer is gone, resend adopts a
#   whole one (and delivers it) and removes a part one; a writer still
#   running is left alone
rm -rf "$SPOOL"
rc=0
"$PERFPORT" -q upload -i "$F" -f pyroscope -O server="$HANG" --timeout 1 --retries 1 \
	2>"$WORK/hang.err" || rc=$?
[ $rc -eq 4 ] || { cat "$WORK/hang.err"; fail "a server that never answers: exit $rc, want 4"; }
set -- "$SPOOL"/*
[ $# -eq 2 ] || fail "a server that never answers: $# entries, want 2"
sleep 0 & dead=$!; wait $dead
sed -i "s|^url $HANG|url $URL|" "$1/request" "$2/request"
mv "$1" "$SPOOL/.new-1700000000000-$dead-0001"
sed -i '/^end$/d' "$2/request"
mv "$2" "$SPOOL/.new-1700000000001-$dead-0002"
mkdir "$SPOOL/.new-1700000000002-$$-0003"
n0=$(ls "$WORK/srv" | grep -c '^req-')
"$PERFPORT" resend >"$WORK/resend3.out" 2>&1 || { cat "$WORK/resend3.out"; fail "resend: exit $?"; }
[ "$(ls "$WORK/srv" | grep -c '^req-')" -eq $((n0 + 1)) ] || fail "the whole .new entry was not delivered"
[ "$(ls -A "$SPOOL")" = ".new-1700000000002-$$-0003" ] ||
	fail "the spool holds $(ls -A "$SPOOL" | tr '\n' ' '), want only the live writer's entry"
has "adopted" "$WORK/resend3.out" && has "removed" "$WORK/resend3.out" ||
	fail "resend does not say what it adopted and removed: $(cat "$WORK/resend3.out")"
echo "ok: a killed writer's whole spool entry adopted and delivered, a part one removed, a live one left"

# Let in:
# - a spool that others can write, or another user's, is refused (its
#   entries name URLs and secrets' variables): not written, not resent
mkdir -p "$WORK/open-spool"
chmod 777 "$WORK/open-spool"
rc=0
"$PERFPORT" -q upload -i "$F" -f pyroscope -O server="$HANG" --timeout 1 --retries 1 \
	--spool "$WORK/open-spool" 2>"$WORK/open.err" || rc=$?
[ $rc -eq 2 ] || { cat "$WORK/open.err"; fail "a world-writable spool: exit $rc, want 2 (nothing kept)"; }
has "spool '$WORK/open-spool' is refused: it is writable by other users" "$WORK/open.err" ||
	fail "no refusal of a world-writable spool: $(cat "$WORK/open.err")"
[ -z "$(ls -A "$WORK/open-spool")" ] || fail "a world-writable spool was written"
chmod 700 "$WORK/open-spool"
if chown nobody "$WORK/open-spool" 2>/dev/null; then
	rc=0; "$PERFPORT" -q resend "$WORK/open-spool" 2>"$WORK/other.err" || rc=$?
	[ $rc -ne 0 ] && has "is refused: it is owned by another user" "$WORK/other.err" ||
		fail "another user's spool: exit $rc, $(cat "$WORK/other.err")"
fi
echo "ok: a spool others can write, or another user's, refused"

# - a planted entry naming a credential perfport signs with as its secret
#   header's source: moved aside, nothing sent, the secret nowhere
rm -rf "$SPOOL"
"$PERFPORT" -q upload -i "$F" -f pyroscope -O server="$HANG" --timeout 1 --retries 1 2>/dev/null || true
set -- "$SPOOL"/*
sed -i -e "s|^url $HANG|url $URL|" -e 's|^end$|secret X-Leak=AWS_SECRET_ACCESS_KEY\nend|' "$1/request"
rm -rf "$2"
n0=$(ls "$WORK/srv" | grep -c '^req-')
rc=0; AWS_SECRET_ACCESS_KEY=planted-s3cret "$PERFPORT" resend >"$WORK/plant.out" 2>&1 || rc=$?
[ "$(ls "$WORK/srv" | grep -c '^req-')" -eq "$n0" ] || fail "a planted entry was sent"
! grep -rq planted-s3cret "$WORK/srv" "$WORK/plant.out" || fail "the credential went out"
has "names a credential perfport signs with" "$WORK/plant.out" && ls "$SPOOL" | has '^damaged-' ||
	fail "the planted entry is not refused and set aside: $(cat "$WORK/plant.out")"
rm -rf "$SPOOL"
echo "ok: a spool entry naming a signing credential refused, nothing sent"

# - endpoints that are not http(s), a user:password in an URL, a line break
#   in a header option: refused before anything is sent, not spooled, the
#   password never printed
for ep in "file:///etc/hostname" "gopher://127.0.0.1:1/" "dict://127.0.0.1:1/"; do
	rc=0; "$PERFPORT" -q upload -i "$F" -f otlp -O endpoint="$ep" 2>"$WORK/ep.err" || rc=$?
	{ [ $rc -eq 1 ] || [ $rc -eq 2 ]; } && has "not .*http:// or https://" "$WORK/ep.err" ||
		fail "endpoint $ep: exit $rc, $(cat "$WORK/ep.err")"
	! has "$(hostname)" "$WORK/ep.err" || fail "a file:// endpoint's contents were shown"
done
[ -z "$(ls "$SPOOL" 2>/dev/null)" ] || fail "a refused endpoint was spooled"
n0=$(ls "$WORK/srv" | grep -c '^req-')
rc=0; "$PERFPORT" -q upload -i "$F" -f pyroscope -O server="http://me:pa55w0rd@${URL#http://}" \
	>"$WORK/pw.out" 2>&1 || rc=$?
{ [ $rc -eq 1 ] || [ $rc -eq 2 ]; } && has "holds a user name or password" "$WORK/pw.out" ||
	fail "a password in the URL: exit $rc, $(cat "$WORK/pw.out")"
! has pa55w0rd "$WORK/pw.out" || fail "the URL's password was printed"
rc=0; "$PERFPORT" -q upload -i "$F" -f pyroscope -O server="$URL" -O tenant=$'t\r\nX-Injected: 1' \
	>"$WORK/crlf.out" 2>&1 || rc=$?
[ $rc -ne 0 ] && [ "$(ls "$WORK/srv" | grep -c '^req-')" -eq "$n0" ] ||
	fail "a line break in a header option: exit $rc, or it was sent"
[ -z "$(ls "$SPOOL" 2>/dev/null)" ] || fail "a refused request was spooled"
echo "ok: file://, gopher://, dict://, a password in the URL, a line break in a header: refused"

# - a server's message with control bytes is shown escaped
$PY - "$WORK/esc" <<'PY' &
import http.server, os, socketserver, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"message": "bad \x1b[2J\x1b]0;owned\x07 request"}'
        self.send_response(400)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(d + "/port", "w").write(str(s.server_address[1]))
s.serve_forever()
PY
ESC_PID=$!
for _ in $(seq 100); do [ -f "$WORK/esc/port" ] && break; sleep 0.05; done
rc=0; "$PERFPORT" -q upload -i "$F" -f pyroscope -O server="http://127.0.0.1:$(cat "$WORK/esc/port")" \
	2>"$WORK/esc.err" || rc=$?
kill $ESC_PID
[ $rc -ne 0 ] || fail "a 400: exit 0"
! grep -q $'\x1b' "$WORK/esc.err" && has 'bad \\x1b\[2J' "$WORK/esc.err" ||
	fail "the server's control bytes reached the terminal: $(od -c "$WORK/esc.err" | head -5)"
echo "ok: a server's message with control bytes shown escaped"

# Scale: a spool entry with a 1 GiB body (a sparse file) is streamed from
# its file, not read into memory (it was: 1.1 GB)
rm -rf "$SPOOL"
$PY - "$WORK/sink" <<'PY' &
import http.server, os, socketserver, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        left, got = int(self.headers.get("Content-Length", 0)), 0
        while left:
            b = self.rfile.read(min(left, 1 << 20))
            if not b:
                break
            left -= len(b)
            got += len(b)
        open(d + "/got", "w").write(str(got))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(d + "/port.tmp", "w").write(str(s.server_address[1]))
os.rename(d + "/port.tmp", d + "/port")
s.serve_forever()
PY
SINK_PID=$!
for _ in $(seq 100); do [ -f "$WORK/sink/port" ] && break; sleep 0.05; done
E="$SPOOL/1700000000000-pyroscope-0001"
mkdir -p "$E"
chmod 700 "$SPOOL"
truncate -s 1G "$E/body"
printf 'method POST\nurl http://127.0.0.1:%s/ingest\nsigv4 -\nsls -\nheader Content-Type: application/octet-stream\nsize %s\nend\n' \
	"$(cat "$WORK/sink/port")" $((1 << 30)) >"$E/request"
/usr/bin/time -f %M -o "$WORK/resend.rss" "$PERFPORT" -q resend >"$WORK/big.out" 2>&1 ||
	{ kill $SINK_PID; cat "$WORK/big.out"; fail "resend of a 1 GiB entry: exit $?"; }
kill $SINK_PID
[ "$(cat "$WORK/sink/got")" = $((1 << 30)) ] || fail "the 1 GiB body arrived as $(cat "$WORK/sink/got") bytes"
rss=$(cat "$WORK/resend.rss")
[ "$rss" -lt 204800 ] || fail "resend of a 1 GiB entry took $rss KB"
echo "ok: a 1 GiB spool entry resent in $rss KB"
