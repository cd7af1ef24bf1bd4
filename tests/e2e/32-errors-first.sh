#!/usr/bin/env bash
# Every usage error, output path and format option is refused before the
# recording is read: the recording here is a FIFO nobody writes to, so a
# check made after the first read never comes (the command would wait on
# open() until the timeout, which only bounds a failure). Then the same
# errors with a real recording as input: the exit status and message hold.
. "$(dirname "$0")/lib/common.sh"

FIFO="$WORK/never.data"
mkfifo "$FIFO"
unset AWS_REGION AWS_DEFAULT_REGION
export HOME="$WORK/home" && mkdir -p "$HOME"   # no ~/.aws/config region

# early WANT-RC MESSAGE ARGS... - refused with WANT-RC and MESSAGE on stderr,
# without opening the recording
early() {
	local want=$1 msg=$2 rc=0; shift 2
	timeout 60 "$PERFPORT" "$@" -i "$FIFO" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
	[ $rc -ne 124 ] || fail "'$*': still waiting for the recording after 60 s: the check comes after the read"
	[ $rc -eq "$want" ] || fail "'$*': exit $rc, want $want: $(cat "$WORK/err")"
	has -F -- "$msg" "$WORK/err" || fail "'$*': no '$msg' said: $(cat "$WORK/err")"
	echo "ok: $* -> exit $rc before the read: $(head -1 "$WORK/err")"
}

early 1 "skywalking: -O skywalking.task=ID is required" upload -f skywalking
early 1 "skywalking: -O skywalking.task=ID is required" export -f skywalking --upload -o "$WORK/sw.json"
early 1 "codeguru: upload needs -O codeguru.profiling_group=NAME" upload -f codeguru
early 1 "codeguru: no AWS region" upload -f codeguru -O codeguru.profiling_group=g
early 1 "arms: upload needs -O arms.endpoint=HOST" upload -f arms
early 1 "arms: signature v4 needs -O arms.region=REGION" upload -f arms -O arms.endpoint=h -O arms.project=p
early 1 "otlp: 'encoding=json' is for OTLP/HTTP" export -f otlp -O otlp.protocol=grpc -O otlp.encoding=json -o "$WORK/o"
early 1 "otlp: endpoint 'localhost:4318' is not an http:// or https:// URL" upload -f otlp -O otlp.endpoint=localhost:4318
early 1 "pyroscope: app 'a:b' is not a Pyroscope service name" upload -f pyroscope -O pyroscope.app=a:b
early 2 "cannot write '$WORK/nodir/flame.html': no directory '$WORK/nodir'" export -f flamegraph -o "$WORK/nodir/flame.html"
early 2 "cannot make directory '$WORK/nodir/x': no directory '$WORK/nodir'" export -f pprof,folded -o "$WORK/nodir/x"
early 2 "cannot make directory '$WORK/nodir/dk': no directory '$WORK/nodir'" export -f datakit -o "$WORK/nodir/dk"
mkdir "$WORK/adir"
early 2 "cannot write '$WORK/adir': Is a directory" export -f folded -o "$WORK/adir"
: >"$WORK/afile"
early 2 "cannot make directory '$WORK/afile': Not a directory" export -f folded,pprof -o "$WORK/afile"
early 2 "cannot open '$WORK/missing.data': No such file or directory" export -f folded -o "$WORK/f" --base "$WORK/missing.data"
# diff: either recording missing is said before the other is read
for args in "$FIFO $WORK/missing.data" "$WORK/missing.data $FIFO"; do
	rc=0; timeout 60 "$PERFPORT" diff $args >/dev/null 2>"$WORK/err" || rc=$?
	[ $rc -eq 2 ] && has -F "cannot open '$WORK/missing.data'" "$WORK/err" ||
		fail "diff $args: exit $rc (124: it read the other first), $(cat "$WORK/err")"
done
echo "ok: diff with a missing recording: said before the other is read"

# what is not the user's mistake still reads the recording: skywalking's
# file needs no task, codeguru's file no group
F="$TOP/samples/oncpu.perf.data"
"$PERFPORT" -q export -f skywalking,codeguru -o "$WORK/files" -i "$F" ||
	fail "skywalking and codeguru files without upload options: exit $?"
[ -s "$WORK/files/$(ls "$WORK/files" | head -1)" ] || fail "no file written"
echo "ok: files need no upload option"
# a real recording: the same refusal
rc=0; "$PERFPORT" upload -f skywalking -i "$F" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && has -F "task=ID is required" "$WORK/err" || fail "upload without a task: exit $rc, $(cat "$WORK/err")"
[ "$(grep -c 'task=ID is required' "$WORK/err")" -eq 1 ] || fail "the missing task said more than once: $(cat "$WORK/err")"
echo "ok: errors before the read"

# non-root: a recording root made (perf record writes it 0600) says what was
# denied and the command that fixes it
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$WORK" && cp "$F" "$WORK/root.data" && chmod 600 "$WORK/root.data"
	for c in "report" "export -f folded -o /dev/null" "stacks"; do
		rc=0; setpriv --reuid=nobody --regid=nogroup --clear-groups "$PERFPORT" $c -i "$WORK/root.data" \
			>/dev/null 2>"$WORK/err" || rc=$?
		[ $rc -eq 2 ] && has -F "cannot read '$WORK/root.data': Permission denied: it is root's, mode 0600" "$WORK/err" &&
			has -F "sudo chmod a+r '$WORK/root.data'" "$WORK/err" ||
			fail "'$c' as nobody on root's 0600 file: exit $rc, $(cat "$WORK/err")"
	done
	echo "ok: a recording this user cannot read: whose it is and the fix"
	# readable, made here: this machine's kernel, whose kallsyms hides its
	# addresses from this user - said as such, not as another kernel
	# (dd: its samples are in the kernel, whose frames are what is named)
	if perf record -q -N -o "$WORK/here.data" -e cpu-clock -g -- dd if=/dev/zero of=/dev/null bs=1M count=300 >/dev/null 2>&1 &&
	   chmod 644 "$WORK/here.data" &&
	   [ "$(sed -n '1p' /proc/kallsyms | cut -c1-16)" != 0000000000000000 ] &&
	   [ "$(setpriv --reuid=nobody --regid=nogroup --clear-groups sed -n '1p' /proc/kallsyms | cut -c1-16)" = 0000000000000000 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$PERFPORT" info -i "$WORK/here.data" \
			>"$WORK/nobody.info" 2>&1 || true
		has "this machine's, but /proc/kallsyms shows this user no addresses" "$WORK/nobody.info" &&
			! has "is not this machine's" "$WORK/nobody.info" ||
			fail "kallsyms hidden from nobody read as another kernel: $(grep -i kernel "$WORK/nobody.info")"
		echo "ok: kallsyms hidden from this user is told apart from another kernel"
	fi
else
	echo "note: not root or no setpriv: the non-root case is not tried"
fi
