#!/usr/bin/env bash
# debuginfod against a real server: Debian's debuginfod serving a directory
# on loopback. A recording of a stripped binary names its frames from the
# server's debug file exactly as with the unstripped file at hand, and info
# says where they came from; a server that is down or stalls costs a few
# seconds and one warning, never a wrong name.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
command -v debuginfod >/dev/null || skip "debuginfod (Debian's debuginfod package) is not installed"
mkdir -p "$WORK/srv" "$WORK/run" "$WORK/home" "$WORK/db"
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/srv/dwl" "$TOP/samples/workload.c" || fail "cannot build"
cp "$WORK/srv/dwl" "$WORK/run/dwl" && strip --strip-all "$WORK/run/dwl"
ID=$(readelf -n "$WORK/run/dwl" | awk '/Build ID/ {print $3}')
(cd "$WORK/run" && HOME="$WORK/home" perf record -g -F 999 -e cpu-clock -o perf.data ./dwl 0.4 cpu \
	>"$WORK/record.log" 2>&1) || { cat "$WORK/record.log"; fail "perf record: $(said "$WORK/record.log")"; }
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F "$WORK/srv" -p "$PORT" -d "$WORK/db/db.sqlite" >"$WORK/debuginfod.log" 2>&1 &
DPID=$!
SLOW=
trap 'kill $DPID $SLOW 2>/dev/null; rm -rf "$WORK"' EXIT
# wait for its scan: until it serves the debug file (30 s at most)
$PY - "http://127.0.0.1:$PORT/buildid/$ID/debuginfo" <<'PY' || fail "debuginfod did not serve the debug file: $(tail -3 "$WORK/debuginfod.log")"
import sys, time, urllib.request
for _ in range(150):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2).read(1)
        sys.exit(0)
    except Exception:
        time.sleep(0.2)
sys.exit(1)
PY

names() { grep -E "^\s+[0-9a-f]+ " "$1" | grep "(/.*dwl)" | awk '{print $2}' | sed 's/+0x.*//' | sort | uniq -c; }
# the oracle: the unstripped file at hand
HOME="$WORK/home" "$PERFPORT" -q stacks -i "$WORK/run/perf.data" --symfs "$WORK/srv" >"$WORK/local.ours"
names "$WORK/local.ours" >"$WORK/local.names"
grep -q "hot_inner" "$WORK/local.names" || fail "the local file names nothing: $(head -3 "$WORK/local.names")"
# only the stripped file here: nothing named without the server
HOME="$WORK/home" "$PERFPORT" -q stacks -i "$WORK/run/perf.data" >"$WORK/bare.ours"
grep -q "hot_inner" "$WORK/bare.ours" && fail "named without debug info"
# with the server
HOME="$WORK/home" DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_CACHE_PATH="$WORK/cache" \
	"$PERFPORT" -q stacks -i "$WORK/run/perf.data" >"$WORK/di.ours" || fail "stacks with debuginfod: exit $?"
names "$WORK/di.ours" >"$WORK/di.names"
cmp -s "$WORK/local.names" "$WORK/di.names" ||
	fail "names from debuginfod differ from the local file's: $(diff "$WORK/local.names" "$WORK/di.names" | head -5)"
HOME="$WORK/home" DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_CACHE_PATH="$WORK/cache" \
	"$PERFPORT" info -i "$WORK/run/perf.data" >"$WORK/info.txt"
grep -q "dwl: .*debug info from debuginfod: $WORK/cache/$ID/debuginfo" "$WORK/info.txt" ||
	fail "info does not say the debug info came from debuginfod: $(grep dwl "$WORK/info.txt")"
echo "ok: names from debuginfod = with the file at hand ($(wc -l <"$WORK/di.names") functions)"

# a server that is down, and one that accepts and never answers
$PY - "$WORK/slowport" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
held = []
end = time.time() + 120
while time.time() < end:
    s.settimeout(1)
    try:
        held.append(s.accept())
    except OSError:
        pass
PY
SLOW=$!
for _ in $(seq 50); do [ -s "$WORK/slowport" ] && break; sleep 0.1; done
DOWN=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for url in "http://127.0.0.1:$DOWN" "http://127.0.0.1:$(cat "$WORK/slowport")"; do
	t0=$(date +%s)
	HOME="$WORK/home" DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$WORK/cache2" \
		"$PERFPORT" stacks -i "$WORK/run/perf.data" >"$WORK/bad.ours" 2>"$WORK/bad.err" || fail "stacks: exit $?: $(said "$WORK/bad.err")"
	t=$(( $(date +%s) - t0 ))
	[ "$t" -le 10 ] || fail "$url cost $t s"
	[ "$(grep -c "debuginfod" "$WORK/bad.err")" -eq 1 ] || fail "$url: $(cat "$WORK/bad.err")"
	grep -q "hot_inner" "$WORK/bad.ours" && fail "$url: a name without debug info"
	echo "ok: $url costs $t s and one warning"
done

# a server that answers, then drips the debug file's bytes (one per half
# second, never done): every Dwfl asked it for the same build id (the
# namer's, the unwinders', info's: 60 s a binary); now once per run, bounded
# by DEBUGINFOD_MAXTIME
$PY - "$WORK/drip" <<'PY' &
import http.server, os, socketserver, sys, threading, time
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_HEAD(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_GET(self):
        if "/buildid/" not in self.path:
            return self.do_HEAD()
        with lock:
            open(d + "/requests", "a").write(self.path + "\n")
        self.send_response(200)
        self.send_header("Content-Length", str(10 << 20))
        self.end_headers()
        try:
            for _ in range(600):
                self.wfile.write(b"\x7f")
                self.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
open(d + "/port.tmp", "w").write(str(s.server_address[1]))
os.rename(d + "/port.tmp", d + "/port")
s.serve_forever()
PY
DRIP=$!
trap 'kill $DPID $SLOW $DRIP 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do [ -f "$WORK/drip/port" ] && break; sleep 0.05; done
t0=$(date +%s)
HOME="$WORK/home" DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$WORK/drip/port")" DEBUGINFOD_CACHE_PATH="$WORK/cache3" \
	DEBUGINFOD_TIMEOUT=2 DEBUGINFOD_MAXTIME=3 \
	"$PERFPORT" -q info -j 3 -i "$WORK/run/perf.data" >"$WORK/drip.out" 2>&1 || fail "info with a dripping debuginfod: exit $?"
t=$(( $(date +%s) - t0 ))
n=$(grep -c "/buildid/$ID/debuginfo" "$WORK/drip/requests" 2>/dev/null || true)
[ "${n:-0}" -eq 1 ] || fail "a dripping debuginfod was asked $n times for $ID's debug file (in $t s)"
echo "ok: a dripping debuginfod asked once for the build id, $t s"
