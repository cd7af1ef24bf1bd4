#!/usr/bin/env bash
# An event that nothing in the file names (perf 3.x-4.x files, pipe mode of
# that time) is named from its attr as perf names it. A fresh pipe-mode
# recording is patched: its attr's type and config (and a breakpoint's
# address and type) rewritten, the names perf wrote (EVENT_UPDATE records,
# the EVENT_DESC feature) taken out. perf script then makes each name from
# the attr, and perfport's must be the same - hardware cache events by cache,
# operation and result, raw, breakpoint, unknown types - and --event must
# take it. Hardware events cannot be recorded here; the patched type only
# changes the name, the samples stay the clock's.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
build_workload
perf record -o - -e cpu-clock -c 200000 -- "$WORKLOAD" 0.2 cpu \
	>"$WORK/pipe.data" 2>"$WORK/rec.err" || { cat "$WORK/rec.err"; fail "perf record -o -: $(said "$WORK/rec.err")"; }

# type config bp_addr bp_type flags (- keeps the recording's; the bits are
# listed in lib/patch_attrs.py)
cases="
3 0x10000 0 0 -
3 0x0 0 0 -
3 0x10001 0 0 -
3 0x10202 0 0 -
3 0x10103 0 0 -
3 0x10005 0 0 0x108000
3 0x6 0 0 0x60
3 0x101 0 0 -
3 0x7 0 0 -
3 0x300 0 0 -
3 0x20000 0 0 -
4 0x1a2b 0 0 0x100040
0 0x4 0 0 0x10000
0 0x40 0 0 -
1 0x40 0 0 -
1 0x1 0 0 0x80000
5 0 0x401000 2 -
5 0 0x1234 7 0x20
5 0 0x1234 1 0x50
9 0x1 0 0 -
"
n=0
while read -r typ cfg addr bpt flags; do
	[ -n "$typ" ] || continue
	n=$((n + 1))
	spec="type=$typ,config=$cfg,bp_addr=$addr,bp_type=$bpt"
	[ "$flags" = - ] || spec="$spec,flags=$flags"
	$PY "$TOP/tests/e2e/lib/patch_attrs.py" "$WORK/pipe.data" "$WORK/$n.data" --drop-names "$spec" ||
		fail "patching case $n"
	perf script -i "$WORK/$n.data" -F event >"$WORK/$n.script" 2>"$WORK/$n.err" ||
		fail "perf script of case $n ($typ $cfg): $(tail -1 "$WORK/$n.err")"
	want=$(sed 's/: *$//' "$WORK/$n.script" | sort -u)
	[ "$(printf '%s\n' "$want" | wc -l)" = 1 ] && [ -n "$want" ] ||
		fail "case $n: perf script names $(printf '%s\n' "$want" | wc -l) events"
	"$PERFPORT" -q info --json -i "$WORK/$n.data" >"$WORK/$n.json" || fail "info case $n: exit $?"
	got=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"][0]["name"])' "$WORK/$n.json")
	[ "$got" = "$want" ] || fail "type $typ config $cfg (bp $addr/$bpt, flags $flags): perfport names it '$got', perf script '$want'"
	samples=$(wc -l <"$WORK/$n.script")
	"$PERFPORT" -q export -i "$WORK/$n.data" --event "$got" -f folded -O value=samples \
		-o "$WORK/$n.folded" || fail "export --event '$got': exit $?"
	total=$(awk '{s += $NF} END {print s + 0}' "$WORK/$n.folded")
	[ "$total" = "$samples" ] || fail "export --event '$got': $total samples, perf script $samples"
	echo "  $typ $cfg $flags -> $got ($samples samples)"
done <<<"$cases"
[ "$n" -ge 20 ] || fail "only $n cases ran"
echo "ok: $n made-up event names equal perf script's"
