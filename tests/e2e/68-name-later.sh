#!/usr/bin/env bash
# Frames perfport cannot name keep their identity, and can be named later.
#
# 1. The corpus (recordings from other machines, their binaries absent):
#    every distinct unnamed user address is a frame of its own,
#    MODULE+0xOFFSET (the file offset), the same (module, offset) pairs as
#    perf report shows its [.] 0x... rows - never one [unknown] per module.
# 2. A recording exported to pprof with its program moved away: the
#    program's frames are apart (one location per address) and its mapping
#    says it is not symbolized (no [FN][FL][LN][IN]), with the build id and
#    file offset; pprof given the program (PPROF_BINARY_PATH) then names >=
#    99% of the samples as perfport's own export named them with the
#    program at hand. The folded output keeps the module of its frames.
. "$(dirname "$0")/lib/common.sh"
need_python
UCHECK="$TOP/tests/e2e/lib/unnamed_check.py"

if [ -d "$CORPUS/quipper" ]; then
	files=()
	# every recording but four: perf reads nothing of the corrupted pipe;
	# it names the 6.12 pipe's libc and ld.so frames from this machine's
	# files (no build ids recorded; e2e 69 checks perfport does not); an
	# LBR call stack's leaf is its newest branch's target (as perf's
	# callchain, not its report's sample ip); a uprobe's hits are no profile
	while IFS= read -r f; do
		case $f in
		*zero_size_sample* | *header_features_aligned-6.12 | *lbr* | *probe.data*) ;;
		*) files+=("$f") ;;
		esac
	done < <(find "$CORPUS" -type f -name '*data*' ! -name '*.txt' | sort)
	command -v perf >/dev/null || skip "perf is not installed (apt-get install linux-perf)"
	$PY "$UCHECK" corpus "$PERFPORT" "${files[@]}" || fail "corpus: unnamed frames differ from perf report's"
else
	echo "note: no corpus at $CORPUS: the corpus check is not run"
fi

need_perf
# pprof itself (github.com/google/pprof): go tool pprof cannot check a build
# id (Go's object reader gives none), so it ignores any binary it is given
PPROF=$WORK/pprof
GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= go build -o "$PPROF" github.com/google/pprof \
	>"$WORK/go.log" 2>&1 ||
	skip "cannot build pprof (apt-get install golang-go golang-github-google-pprof-dev): $(tail -1 "$WORK/go.log")"

mkdir -p "$WORK/bin" "$WORK/home" "$WORK/empty"
build_workload
HOME=$WORK/home record "$WORK/fp.data" -g -F 999 -e cpu-clock -- "$WORKLOAD" 1 all
# perf's build-id cache out of the way: only the file at its path names it
exp() { "$PERFPORT" export -q --buildid-dir "$WORK/empty" -i "$WORK/fp.data" "$@"; }
exp -f pprof -o "$WORK/named.pb.gz" || fail "export with the program: exit $?"
mv "$WORKLOAD" "$WORK/bin/"
exp -f pprof -o "$WORK/later.pb.gz" || fail "export without the program: exit $?"
exp -f folded -o "$WORK/later.folded" || fail "folded export without the program: exit $?"
# the fresh recording's unnamed frames, its program away (and perf's cache
# with it): the same (module, offset) pairs as perf report's
HOME=$WORK/empty $PY "$UCHECK" corpus "$PERFPORT" "$WORK/fp.data" ||
	fail "the program moved away: unnamed frames differ from perf report's"

"$PPROF" -raw "$WORK/later.pb.gz" >"$WORK/later.raw" 2>"$WORK/pprof.err" ||
	fail "pprof cannot read the export: $(head -3 "$WORK/pprof.err")"
id=$(readelf -n "$WORK/bin/workload" | awk '/Build ID/ { print $3 }')
awk '/^Mappings/ { m = 1; next } m' "$WORK/later.raw" >"$WORK/later.maps"
has -E "/workload $id *$" "$WORK/later.maps" ||
	fail "the program's mapping is not marked unsymbolized with its build id: $(cat "$WORK/later.maps")"
has -E "/libc\.so\.6 .*\[FN\]\[FL\]\[LN\]\[IN\]" "$WORK/later.maps" ||
	fail "a named module's mapping is not marked symbolized: $(cat "$WORK/later.maps")"
n=$(grep -o 'workload+0x[0-9a-f]*' "$WORK/later.folded" | sort -u | wc -l)
[ "$n" -ge 3 ] || fail "folded: $n distinct workload+0x frames (unnamed frames merged?)"
echo "ok: without the program: $n distinct workload+0xOFFSET frames; its pprof mapping marked unsymbolized"

"$PPROF" -traces -sample_index=samples "$WORK/named.pb.gz" >"$WORK/named.txt" 2>/dev/null
PPROF_BINARY_PATH=$WORK/bin "$PPROF" -traces -sample_index=samples "$WORK/later.pb.gz" \
	>"$WORK/later.txt" 2>"$WORK/later.err"
$PY "$UCHECK" traces "$WORK/named.txt" "$WORK/later.txt" 99 ||
	fail "named later by pprof: not as perfport names ($(head -2 "$WORK/later.err"))"

# --no-names: no user file opened, every user frame MODULE+0xOFFSET and its
# mapping unsymbolized, for pprof (or a backend) to name: the same names,
# but for libc's, which pprof names from this machine's libc its own way
# (aliases: write for __GI___libc_write; 96.8-99.6% of the samples here)
"$PERFPORT" export -q --no-names -i "$WORK/fp.data" -f pprof -o "$WORK/nonames.pb.gz" ||
	fail "export --no-names: exit $?"
"$PPROF" -raw "$WORK/nonames.pb.gz" 2>/dev/null | awk '/^Mappings/ { m = 1; next } m' >"$WORK/nonames.maps"
has -E "/workload $id *$" "$WORK/nonames.maps" || fail "--no-names: $(cat "$WORK/nonames.maps")"
PPROF_BINARY_PATH=$WORK/bin "$PPROF" -traces -sample_index=samples "$WORK/nonames.pb.gz" \
	>"$WORK/nonames.txt" 2>/dev/null
$PY "$UCHECK" traces "$WORK/named.txt" "$WORK/nonames.txt" 95 || fail "--no-names: named later by pprof"
