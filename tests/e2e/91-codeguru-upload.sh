#!/usr/bin/env bash
# perfport upload -f codeguru against a loopback PostAgentProfile that checks
# every request itself (tests/e2e/lib/codeguru_server.py: path, token,
# content type, body, and the SigV4 signature recomputed with botocore):
# the body equals the offline export; 500 then 204, 429 with Retry-After, a
# connection reset and a timeout are retried to one stored profile; a 400 is
# not retried and its message shown; a persistent failure is spooled (exit
# 4) and `perfport resend` delivers the same bytes with the same
# profileToken; no secret appears in any output or in the spool.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
$PY -c 'import botocore' 2>/dev/null || skip "python3-botocore is not installed"
export AWS_ACCESS_KEY_ID=AKIDPERFPORTTEST AWS_SECRET_ACCESS_KEY=SeCrEt/perfport+test/KEY0123456789
export AWS_SESSION_TOKEN=TOKENperfportSESSION0123456789abcdef
unset AWS_PROFILE AWS_REGION AWS_DEFAULT_REGION
export XDG_STATE_HOME="$WORK/state"
build_workload
record "$WORK/on.data" -e cpu-clock/freq=997/ -g -- "$WORKLOAD" 0.5 cpu
"$PERFPORT" -q export -i "$WORK/on.data" -f codeguru -o "$WORK/offline.json" || fail "export: exit $?"

start_server() { # SCRIPT [PORT]
	test_server codeguru_server.py "$@"
}
upload() { # OUT-PREFIX ARGS...
	local out=$1; shift
	rc=0
	"$PERFPORT" -v upload -i "$WORK/on.data" -f codeguru -O profiling_group=perfport-test \
		-O region=us-west-2 -O "endpoint=$URL" "$@" >"$WORK/$out.stdout" 2>"$WORK/$out.stderr" || rc=$?
}
requests() { ls "$WORK/srv"/req-*.json 2>/dev/null | wc -l; }
check_requests() { # the server's verdicts: no request was wrong
	$PY - "$WORK/srv" <<'PY' || fail "the server found a bad request: $(cat "$WORK"/srv/req-*.json)"
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/req-*.json")):
    r = json.load(open(f))
    if r["errors"]:
        sys.exit("%s: %s" % (f, r["errors"]))
PY
}

start_server 204
upload ok
[ $rc -eq 0 ] || { cat "$WORK/ok.stderr"; fail "upload: exit $rc"; }
[ "$(requests)" -eq 1 ] || fail "upload sent $(requests) requests, want 1"
check_requests
cmp -s "$WORK/srv/body-0" "$WORK/offline.json" || fail "the uploaded body differs from the offline export"
echo "ok: uploaded, signature verified by botocore, body = offline export"

# ConfigureAgent first: checked and signed as well; shouldProfile false posts nothing
start_server 204
upload cfg -O configure_agent=true
[ $rc -eq 0 ] || { cat "$WORK/cfg.stderr"; fail "upload with configure_agent: exit $rc"; }
check_requests
ls "$WORK/srv" | has . || fail "no request"
$PY - "$WORK/srv" <<'PY' || fail "ConfigureAgent then PostAgentProfile expected"
import glob, json, sys
paths = [json.load(open(f))["path"] for f in sorted(glob.glob(sys.argv[1] + "/req-*.json"))]
if len(paths) != 2 or not paths[0].endswith("/configureAgent") or "/agentProfile?" not in paths[1]:
    sys.exit("requests: %s" % paths)
PY
CG_SHOULD_PROFILE=false start_server 204
upload cfgno -O configure_agent=true
[ $rc -eq 0 ] || fail "shouldProfile false: exit $rc"
[ "$(requests)" -eq 1 ] || fail "shouldProfile false: $(requests) requests, want only ConfigureAgent"
echo "ok: ConfigureAgent first; shouldProfile false posts nothing"

# ConfigureAgent's periodInSeconds: a recording longer than the period is
# posted as one profile per period, as the agents report, each with its own
# times and rounds; together they hold what the whole profile holds
record "$WORK/long.data" -e cpu-clock/freq=199/ -g -- "$WORKLOAD" 11 cpu
"$PERFPORT" -q export -i "$WORK/long.data" -f codeguru -o "$WORK/long.json" || fail "export: exit $?"
CG_PERIOD=5 start_server 204
rc=0; "$PERFPORT" -v upload -i "$WORK/long.data" -f codeguru -O profiling_group=perfport-test \
	-O region=us-west-2 -O "endpoint=$URL" -O configure_agent=true >"$WORK/period.stdout" \
	2>"$WORK/period.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/period.stderr"; fail "upload with periodInSeconds 5: exit $rc"; }
check_requests
$PY - "$WORK" <<'PY' || fail "profiles per period"
import glob, json, sys
w = sys.argv[1]
def counts(node, acc):
    for t, v in node.get("counts", {}).items():
        acc[t] = acc.get(t, 0) + v
    for ch in node.get("children", {}).values():
        counts(ch, acc)
    return acc
whole = json.load(open(w + "/long.json"))
reqs = sorted(glob.glob(w + "/srv/req-*.json"), key=lambda f: int(f.split("-")[-1][:-5]))
posts = []
for f in reqs:
    r = json.load(open(f))
    if "/agentProfile?" in r["path"]:
        posts.append((r["token"], json.load(open(f.replace("req-", "body-").replace(".json", "")))))
if len(posts) < 2:
    sys.exit("%d profiles posted for an 11 s recording with a 5 s period" % len(posts))
total, last_end = {}, 0
for tok, p in posts:
    md = p["agentMetadata"]
    if not p["start"] < p["end"] <= p["start"] + 5000 or p["start"] < last_end:
        sys.exit("profile %s spans %d..%d" % (tok, p["start"], p["end"]))
    last_end = p["end"]
    if abs(md["numTimesSampled"] - round(md["durationInMs"] / 1000 * 199)) > 1:
        sys.exit("profile %s: numTimesSampled %d for %d ms" % (tok, md["numTimesSampled"], md["durationInMs"]))
    for t, v in counts(p["callgraph"], {}).items():
        total[t] = total.get(t, 0) + v
if total != counts(whole["callgraph"], {}):
    sys.exit("the periods hold %s, the whole profile %s" % (total, counts(whole["callgraph"], {})))
if len({t for t, _ in posts}) != len(posts):
    sys.exit("two profiles with one token")
if not (whole["start"] <= posts[0][1]["start"] and posts[-1][1]["end"] <= whole["end"]):
    sys.exit("the periods lie outside the recording")
print("%d profiles of 5 s, counts %s = the whole" % (len(posts), total))
PY
echo "ok: periodInSeconds: one profile per period"

start_server 500,204
upload retry
[ $rc -eq 0 ] || fail "500 then 204: exit $rc"
[ "$(requests)" -eq 2 ] || fail "500 then 204: $(requests) requests"
check_requests
cmp -s "$WORK/srv/body-0" "$WORK/srv/body-1" || fail "the retry's body differs"
$PY -c 'import json,sys; a,b=(json.load(open(sys.argv[i]))["token"] for i in (1,2)); sys.exit(a!=b)' \
	"$WORK/srv/req-0.json" "$WORK/srv/req-1.json" || fail "the retry has another profileToken"
echo "ok: 500 then 204: retried with the same token and body"

start_server 429:2,204
upload r429
[ $rc -eq 0 ] || fail "429 then 204: exit $rc"
$PY -c 'import json,sys; a,b=(json.load(open(sys.argv[i]))["time"] for i in (1,2)); sys.exit(not 1.9 < b - a < 10)' \
	"$WORK/srv/req-0.json" "$WORK/srv/req-1.json" || fail "Retry-After: 2 not honoured"
echo "ok: 429 with Retry-After: 2 waited for it"

start_server reset,204
upload reset
[ $rc -eq 0 ] || fail "reset then 204: exit $rc"
[ "$(requests)" -eq 2 ] || fail "reset then 204: $(requests) requests"
echo "ok: a reset connection is retried"

start_server sleep:4,204
upload slow --timeout 1
[ $rc -eq 0 ] || fail "timeout then 204: exit $rc"
[ "$(requests)" -eq 2 ] || fail "timeout then 204: $(requests) requests"
echo "ok: a timed-out attempt is retried"

start_server 400
upload bad
[ $rc -eq 2 ] || fail "400: exit $rc, want 2"
[ "$(requests)" -eq 1 ] || fail "400 was retried ($(requests) requests)"
grep -q "answer 400 from the test" "$WORK/bad.stderr" || fail "the server's 400 message is not shown"
[ ! -d "$WORK/state/perfport/spool" ] || [ -z "$(ls "$WORK/state/perfport/spool")" ] ||
	fail "a 400 was spooled"
echo "ok: 400 not retried, its message shown, nothing spooled"

start_server 500
upload down --retries 2
[ $rc -eq 4 ] || fail "persistent 500: exit $rc, want 4 (spooled)"
spool="$WORK/state/perfport/spool"
[ "$(ls "$spool" | wc -l)" -eq 1 ] || fail "persistent 500: $(ls "$spool" | wc -l) spool entries"
token=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$WORK/srv/req-0.json")
start_server 204 "$(cat "$WORK/srv/port")"  # the spooled request names this port
rc=0; "$PERFPORT" -v resend >"$WORK/resend.stdout" 2>"$WORK/resend.stderr" || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/resend.stderr"; fail "resend: exit $rc"; }
[ "$(requests)" -eq 1 ] || fail "resend sent $(requests) requests"
check_requests
cmp -s "$WORK/srv/body-0" "$WORK/offline.json" || fail "the resent body differs"
[ "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$WORK/srv/req-0.json")" = "$token" ] ||
	fail "resend changed the profileToken"
[ -z "$(ls "$spool")" ] || fail "the delivered entry is still in the spool"
grep -qx "1 delivered, 0 kept in the spool '$spool'" "$WORK/resend.stdout" ||
	fail "resend's summary: $(cat "$WORK/resend.stdout")"
"$PERFPORT" resend >"$WORK/resend.stdout" || fail "resend of an empty spool: exit $?"
grep -qx "nothing to send: the spool '$spool' is empty" "$WORK/resend.stdout" ||
	fail "resend of an empty spool said: $(cat "$WORK/resend.stdout")"
rc=0; "$PERFPORT" resend "$WORK/no-such-spool" >/dev/null 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "no spool directory '$WORK/no-such-spool'" "$WORK/err" ||
	fail "resend of a missing DIR: exit $rc: $(cat "$WORK/err")"
echo "ok: a persistent failure is spooled; resend delivers the same bytes and token, then drops it"

# no secret anywhere: outputs, the spool (kept from a failed run), logs
start_server 500
upload leak --retries 1
[ $rc -eq 4 ] || fail "leak run: exit $rc"
rc=0; "$PERFPORT" -vv upload -i "$WORK/on.data" -f codeguru -O profiling_group=perfport-test \
	-O region=us-west-2 -O "endpoint=$URL" --retries 1 >"$WORK/vv.stdout" 2>"$WORK/vv.stderr" || rc=$?
grep -q 'Authorization: .*(redacted)' "$WORK/vv.stderr" || fail "-vv does not show the (redacted) request headers"
if grep -rqF -e "$AWS_SECRET_ACCESS_KEY" -e "$AWS_SESSION_TOKEN" "$WORK"/*.stdout "$WORK"/*.stderr \
	"$WORK/state" 2>/dev/null; then
	fail "a secret appears in the output or the spool"
fi
echo "ok: upload"
