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
