#!/usr/bin/env bash
# The command line: help, version, usage errors, and a man page in step with --help.
. "$(dirname "$0")/lib/common.sh"

"$PERFPORT" --help | grep -q '^usage: perfport' || fail "--help has no usage line"
"$PERFPORT" --version | grep -Eq '^perfport [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"
rc=0; "$PERFPORT" 2>/dev/null || rc=$?; [ $rc -eq 1 ] || fail "no command: exit $rc, want 1"
rc=0; "$PERFPORT" frobnicate 2>"$WORK/err" || rc=$?
[ $rc -eq 1 ] || fail "unknown command: exit $rc, want 1"
grep -q "'frobnicate' is not a command" "$WORK/err" || fail "unknown command message"
rc=0; "$PERFPORT" info --bogus 2>/dev/null || rc=$?; [ $rc -eq 1 ] || fail "bad option: exit $rc"

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

# -j is --jobs everywhere (it once turned on info's --json)
"$PERFPORT" info -j 1 -i "$TOP/samples/oncpu.perf.data" 2>/dev/null | grep -q '^{' &&
	fail "info -j 1 printed JSON"
"$PERFPORT" info --json -j 1 -i "$TOP/samples/oncpu.perf.data" 2>/dev/null | grep -q '^{' ||
	fail "info --json -j 1 printed no JSON"

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
	printf '%s\n' $cmds | grep -qx "$c" || fail "man page documents '$c', which --help does not list"
done
echo "ok: help, version, usage errors, man page in step for: $cmds"
