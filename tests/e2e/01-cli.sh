#!/usr/bin/env bash
# The command line: help, version, usage errors, and a man page in step with --help.
. "$(dirname "$0")/lib/common.sh"

"$PERFPORT" --help | has '^usage: perfport' || fail "--help has no usage line"
"$PERFPORT" --version | grep -Eq '^perfport [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"
rc=0; "$PERFPORT" 2>"$WORK/stderr.txt" || rc=$?; [ $rc -eq 1 ] || fail "no command: exit $rc, want 1: $(said "$WORK/stderr.txt")"
rc=0; "$PERFPORT" frobnicate 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] || fail "unknown command: exit $rc, want 1"
grep -q "'frobnicate' is not a command" "$WORK/err" || fail "unknown command message"
rc=0; "$PERFPORT" info --bogus 2>"$WORK/stderr.txt" || rc=$?; [ $rc -eq 1 ] || fail "bad option: exit $rc: $(said "$WORK/stderr.txt")"

# a refused option is named once, with what was wrong (getopt's own message off)
bad_option() {
	local want=$1; shift
	rc=0; "$PERFPORT" "$@" 2>"$WORK/err" || rc=$?
	[ $rc -eq 1 ] || fail "'$*': exit $rc, want 1"
	[ "$(head -1 "$WORK/err")" = "$want" ] || fail "'$*' said '$(head -1 "$WORK/err")', want '$want'"
	[ "$(wc -l <"$WORK/err")" -eq 2 ] || fail "'$*': $(wc -l <"$WORK/err") lines, want the error and a hint"
}
bad_option "perfport report: unknown option '--bogus'" report --bogus
bad_option "perfport report: unknown option '--bogus'" report --bogus=1
bad_option "perfport report: option '--top' needs a value" report --top
bad_option "perfport report: option '-i' needs a value" report -i
bad_option "perfport report: unknown option '-x'" report -x
bad_option "perfport report: option '--json' takes no value" report --json=yes
bad_option "perfport report: option '--no' is ambiguous" report --no
bad_option "perfport export: option '--time' needs a value" export --time
bad_option "perfport upload: unknown option '-o'" upload -o x
bad_option "perfport resend: unknown option '--frob'" resend --frob
bad_option "perfport: unknown option '--frob'" --frob

# a wrong name lists the valid ones and suggests the nearest
bad_option "perfport: 'reprot' is not a command (one of: info, dump, stacks, report, diff, export, upload, resend, watch, formats; did you mean 'report'?)" reprot
bad_option "perfport report: unknown option '--tpo'; did you mean '--top'?" report --tpo 3
# a long option with one dash: getopt reads a cluster; the word is named
bad_option "perfport report: unknown option '-t' (in '-top'); did you mean '--top'?" report -top 5
# an output's name for a format: the format that writes it
bad_option "perfport export: no format 'svg': use -f flamegraph -O format=svg" export -f svg -o x.svg
bad_option "perfport report: --counter takes counter names separated by commas: 'lok' is none (one of: on-cpu, preempted, lock, io, sleep, timed-sleep, idle; did you mean 'lock'?)" report --counter on-cpu,lok
rc=0; "$PERFPORT" export -f pprf -o "$WORK/x" -i "$TOP/samples/oncpu.perf.data" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "^perfport export: no format 'pprf' (one of: .*pprof.*; did you mean 'pprof'?)$" "$WORK/err" ||
	fail "unknown format: exit $rc, $(cat "$WORK/err")"
rc=0; "$PERFPORT" export -f folded -O conter=lock -o "$WORK/x" -i "$TOP/samples/oncpu.perf.data" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "has no option 'conter'; did you mean 'counter'?" "$WORK/err" ||
	fail "unknown format option: exit $rc, $(cat "$WORK/err")"
rc=0; "$PERFPORT" export -f folded -O counter=lok -o "$WORK/x" -i "$TOP/samples/oncpu.perf.data" 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] && grep -q "not 'lok'; did you mean 'lock'?" "$WORK/err" ||
	fail "unknown format option value: exit $rc, $(cat "$WORK/err")"
echo "ok: wrong names list the valid ones and suggest the nearest"

# global options after the command too, as perf and git take them: -q
# silences a warning, -v -v adds the debug lines
S="$TOP/samples/oncpu.perf.data"
[ -z "$("$PERFPORT" report -i "$S" --time 0,0.000001 --no-threads -q 2>&1 >/dev/null)" ] ||
	fail "report ... -q still warns"
"$PERFPORT" info -i "$S" --verbose -v 2>"$WORK/v.err" >/dev/null; grep -q "^perfport: debug: " "$WORK/v.err" ||
	fail "info ... --verbose -v says nothing more: $(said "$WORK/v.err")"
[ "$("$PERFPORT" -q report -i "$S" --top 1 | md5sum)" = "$("$PERFPORT" report -q -i "$S" --top 1 | md5sum)" ] ||
	fail "-q before and after the command differ"
echo "ok: -v and -q anywhere"

# an upload that lacks a required option is a usage error (exit 1), said once
for f in skywalking codeguru arms; do
	rc=0; "$PERFPORT" upload -f $f -i "$S" 2>"$WORK/err" || rc=$?
	[ $rc -eq 1 ] || fail "upload -f $f without its required options: exit $rc, want 1: $(cat "$WORK/err")"
	[ "$(grep -c "error" "$WORK/err")" -eq 1 ] || fail "upload -f $f: the error said $(grep -c error "$WORK/err") times"
	grep -q "^perfport: error: $f: " "$WORK/err" || fail "upload -f $f: not one prefix: $(cat "$WORK/err")"
done
echo "ok: a missing required upload option exits 1, said once"

# -j is --jobs everywhere (it once turned on info's --json)
"$PERFPORT" info -j 1 -i "$TOP/samples/oncpu.perf.data" 2>/dev/null | has '^{' &&
	fail "info -j 1 printed JSON"
"$PERFPORT" info --json -j 1 -i "$TOP/samples/oncpu.perf.data" 2>"$WORK/stderr.txt" | has '^{' ||
	fail "info --json -j 1 printed no JSON: $(said "$WORK/stderr.txt")"

# Every command in --help has its own --help, and every option named in any
# --help appears in the man page (and the other way round for commands).
man="$TOP/docs/perfport.1"
[ -f "$man" ] || fail "docs/perfport.1 is missing"
cmds=$("$PERFPORT" --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/commands:/ {print $1}')
[ -n "$cmds" ] || fail "--help lists no commands"
for c in "" $cmds; do
	help=$("$PERFPORT" $c --help)
	for opt in $(printf '%s\n' "$help" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$man" ||
			fail "man page lacks option $opt of 'perfport $c'"
	done
	[ -z "$c" ] || grep -q "^\.SS.*$c" "$man" || fail "man page has no section for '$c'"
done
for c in $(sed -n 's/^\.SS "*perfport \([a-z]*\).*/\1/p' "$man"); do
	printf '%s\n' $cmds | has -x "$c" || fail "man page documents '$c', which --help does not list"
done
echo "ok: help, version, usage errors, man page in step for: $cmds"

# several formats: the worst outcome decides - Datakit's request kept in the
# spool (4) does not hide SkyWalking's report that could not be kept (2);
# with only the kept one, 4; nothing listens on the ports
export XDG_STATE_HOME="$WORK/state"
rc=0; "$PERFPORT" -q upload -f datakit,skywalking -i "$S" -O datakit.url=http://127.0.0.1:9 \
	-O skywalking.address=127.0.0.1:9 -O skywalking.task=t --retries 1 --timeout 5 2>"$WORK/err" || rc=$?
[ $rc -eq 2 ] || fail "a spooled and a lost upload: exit $rc, want 2: $(cat "$WORK/err")"
rc=0; "$PERFPORT" -q upload -f datakit -i "$S" -O datakit.url=http://127.0.0.1:9 --retries 1 --timeout 5 \
	2>"$WORK/err" || rc=$?
[ $rc -eq 4 ] || fail "a spooled upload: exit $rc, want 4: $(cat "$WORK/err")"
[ "$(grep -c "error" "$WORK/err")" -eq 1 ] || fail "the failed request said $(grep -c error "$WORK/err") times: $(cat "$WORK/err")"
echo "ok: the worst outcome decides the exit status"
