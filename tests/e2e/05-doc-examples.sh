#!/usr/bin/env bash
# Every README and man-page example is accepted as written: each `perfport`
# command of the README's sh blocks and of the man page's EXAMPLES is
# extracted and run with `perfport` on PATH (as the README's set-up gives),
# in a directory where every recording it names (perf.data, *.data) is a
# FIFO nobody writes to and stdin is a FIFO that never gets data. perfport checks every
# option, format option and output path before it reads (test 32), so an
# example that is not accepted exits 1 or 2 at once; one that is reaches the
# read and waits there until the timeout ends it (exit 124), or finishes
# (resend, formats). Its uploads never start: nothing is read.
. "$(dirname "$0")/lib/common.sh"
need_python

# the set-up puts perfport on PATH: 'make install', or the PATH line it gives
has '^make install .*perfport on PATH' "$TOP/README.md" || fail "the README's set-up does not install perfport"
line=$(grep -o 'export PATH=\$PWD/build:\$PATH' "$TOP/README.md" | head -1)
[ -n "$line" ] || fail "the README gives no PATH line for an uninstalled build"
if [ -x "$TOP/build/perfport" ]; then
	got=$(cd "$TOP" && eval "$line" && command -v perfport)
	[ "$got" = "$TOP/build/perfport" ] || fail "after the README's '$line': perfport is '$got'"
	echo "ok: the README's '$line' gives $got"
fi

D="$WORK/run"
mkdir -p "$D/bin" "$D/prof" "$D/out" "$D/home"
ln -s "$PERFPORT" "$D/bin/perfport"
ln -s "$(dirname "$PERFPORT")/plugins" "$D/bin/plugins"
export PATH="$D/bin:$PATH" HOME="$D/home" AWS_REGION=us-east-1 XDG_STATE_HOME="$D/state"

# the examples, one per line: README sh blocks and the man page's EXAMPLES
$PY - "$TOP/README.md" "$TOP/docs/perfport.1" >"$WORK/examples" <<'PY'
import re, sys
readme, man = sys.argv[1:3]
lines, block, cont = [], False, ""
for l in open(readme):
    if l.startswith("```"):
        block = not block and l.strip() == "```sh"
        continue
    if block:
        l = cont + l.rstrip("\n")
        if l.endswith("\\"):
            cont = l[:-1]
            continue
        cont = ""
        lines.append(l)
text = open(man).read()
ex = re.search(r"^\.SH EXAMPLES\n(.*?)^\.SH ", text, re.S | re.M).group(1)
ex = ex.replace("\\-", "-").replace("\\e\n", " ")
lines += [l for l in ex.splitlines() if not l.startswith(".")]
for l in lines:
    # the perfport commands of the line: after '&&' or '|', before '#', '|', '>'
    code = re.sub(r"\s+#.*$", "", l) if not l.lstrip().startswith("#") else ""
    for part in re.split(r"&&|\|", code):
        part = part.strip()
        m = re.match(r"((?:[A-Z_]+=\S+\s+)*)perfport\s", part)
        if m:
            print(re.split(r"\s[<>]", part)[0])
PY
n=$(wc -l <"$WORK/examples")
[ "$n" -ge 30 ] || fail "only $n perfport examples found in README.md and docs/perfport.1"

cd "$D"
# stdin: a FIFO held open here, so a read of '-i -' waits instead of ending
mkfifo "$D/stdin"
exec 3<>"$D/stdin"
# what the examples name: recordings (FIFOs), a rules file, an archive
bad=0
while IFS= read -r ex; do
	for w in $ex; do
		case $w in
		*.data) [ -p "$w" ] || mkfifo "$w" ;;
		*.rules) printf 'S,I  MyQueueWait*  lock\n' >"$w" ;;
		esac
	done
	[ -p perf.data ] || mkfifo perf.data
	# as written, but the watch directory made here
	cmd=${ex//\/var\/tmp\/prof/$D/prof}
	rc=0
	timeout 5 env $cmd >"$WORK/out.txt" 2>"$WORK/err.txt" <&3 || rc=$?
	case $rc in
	124|0) ;;
	*) bad=$((bad + 1)); echo "NOT ACCEPTED (exit $rc): $ex"; sed 's/^/    /' "$WORK/err.txt" | head -3 ;;
	esac
done <"$WORK/examples"
[ "$bad" -eq 0 ] || fail "$bad of $n README and man-page examples are refused as written"
echo "ok: $n README and man-page perfport examples accepted as written"
