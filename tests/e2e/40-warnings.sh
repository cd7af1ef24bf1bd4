#!/usr/bin/env bash
# perfport info warns about recordings that will give poor profiles, each
# with the perf command that records it right, and is silent on good ones.
. "$(dirname "$0")/lib/common.sh"
need_perf
need_python
need_tracepoint
build_workload

# one write, so a reader that stops at its first match (grep -q) cannot make
# it fail with EPIPE under pipefail (PYTHONUNBUFFERED makes print() write per line)
warnings() { "$PERFPORT" info --json -i "$1" | $PY -c 'import json,sys; sys.stdout.write("".join(w + "\n" for w in json.load(sys.stdin)["warnings"]))'; }

record "$WORK/good.data" -g -e cpu-clock/freq=999/ -e sched:sched_switch "$WORKLOAD" 0.3 cpu
[ -z "$(warnings "$WORK/good.data")" ] || fail "warnings on a good recording: $(warnings "$WORK/good.data")"
echo "ok: no warning on a good recording"

record "$WORK/freq.data" -F 999 -e cpu-clock -e sched:sched_switch "$WORKLOAD" 0.3
warnings "$WORK/freq.data" | has "sched:sched_switch' was recorded in frequency mode.*perf record -e cpu-clock/freq=999/ -e sched:sched_switch" ||
	fail "no frequency-mode tracepoint warning: $(warnings "$WORK/freq.data")"
echo "ok: tracepoint in frequency mode"

# the warning counts the samples whose unwinding stopped at the end of a
# full stack copy (a full copy may still hold every frame), as info's
# unwinding figures say; --no-symbols (no unwinding) says "may"
# (deep: 60 frames down, more than 1 KB of stack)
record "$WORK/dwarf.data" --call-graph dwarf,1024 -F 499 -e cpu-clock "$WORKLOAD" 0.3 deep
"$PERFPORT" info --json -i "$WORK/dwarf.data" >"$WORK/dwarf.json" || fail "info dwarf: exit $?"
$PY - "$WORK/dwarf.json" <<'PY' || fail "DWARF truncation warning"
import json, re, sys
j = json.load(open(sys.argv[1]))
s = j["symbols"]
w = [x for x in j["warnings"] if "stopped early at the end of their stack copy" in x]
if not w or "--call-graph dwarf,65528" not in w[0] or "stack copy (1024 bytes)" not in w[0]:
    sys.exit("no truncation warning: %s" % j["warnings"])
n, of = map(int, re.match(r"(\d+) of (\d+) ", w[0]).groups())
if n != s["dwarf_unwind_truncated"] or of != s["dwarf_unwound"] or n > s["dwarf_unwind_stopped"] or not n:
    sys.exit("warning says %d of %d; unwinding: %s" % (n, of, s))
print("%d of %d samples stopped at the end of their stack copy" % (n, of))
PY
"$PERFPORT" info --no-symbols --json -i "$WORK/dwarf.data" | has "filled their buffer (1024 bytes; not unwound with --no-symbols" ||
	fail "no may-stop warning without symbols"
# a copy large enough: the same workload unwinds whole, no warning; a
# shallow one fills 1 KB copies but unwinds whole: no warning either
record "$WORK/dwarf-big.data" --call-graph dwarf,65528 -F 499 -e cpu-clock "$WORKLOAD" 0.3 deep
warnings "$WORK/dwarf-big.data" | has "stack copy" && fail "truncation warning with 64 KB copies: $(warnings "$WORK/dwarf-big.data")"
record "$WORK/dwarf-flat.data" --call-graph dwarf,1024 -F 499 -e cpu-clock "$WORKLOAD" 0.3 cpu
warnings "$WORK/dwarf-flat.data" | has "stack copy" && fail "truncation warning on whole stacks: $(warnings "$WORK/dwarf-flat.data")"
echo "ok: DWARF stack copies too small"

# dd spends its time in libc, which has no frame pointers on Debian.
record "$WORK/fp.data" -g -F 999 -e cpu-clock -- dd if=/dev/zero of=/dev/null bs=1 count=3000000
warnings "$WORK/fp.data" | has "frame-pointer user callchains have no caller.*--call-graph dwarf" ||
	fail "no frame-pointer warning: $(warnings "$WORK/fp.data")"
echo "ok: frame-pointer chains through libc"

# lost samples: one count in info, info --json and report --json, the one
# perf report prints as "Total Lost Samples" (LOST_SAMPLES records here)
for f in "$CORPUS/quipper/perf.data.lost_samples-4.4" "$CORPUS/quipper/perf.data.piped.lost_samples-4.4"; do
	[ -f "$f" ] || { echo "(no $f: lost counts not compared)"; continue; }
	want=$(perf report -i "$f" --stdio 2>/dev/null | sed -n 's/^# Total Lost Samples: //p')
	info=$("$PERFPORT" -q info --json -i "$f" | $PY -c 'import json,sys; print(json.load(sys.stdin)["lost"])')
	rep=$("$PERFPORT" -q report --json -i "$f" | $PY -c 'import json,sys; print(json.load(sys.stdin)["meta"]["lost"])')
	text=$("$PERFPORT" -q info -i "$f" | sed -n 's/^lost: *\([0-9]*\) samples.*/\1/p')
	[ -n "$want" ] && [ "$info" = "$want" ] && [ "$rep" = "$want" ] && [ "$text" = "$want" ] ||
		fail "$(basename "$f"): lost $text (info), $info (info --json), $rep (report --json); perf report: $want"
	echo "ok: $(basename "$f"): $want lost samples everywhere"
done

# a recording that lost samples (a tiny buffer under dwarf stacks): info
# warns with what to record, report's header says it, with the same count
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/waits" "$TOP/tests/e2e/progs/waits.c" ||
	fail "cannot build progs/waits.c"
record "$WORK/lost.data" -m 2 -e sched:sched_switch -e cpu-clock/freq=999/ --call-graph dwarf,4096 \
	-- "$WORK/waits" 0.5 "$WORK"
lost=$("$PERFPORT" -q info -i "$WORK/lost.data" | sed -n 's/^lost: *\([0-9]*\) samples.*/\1/p')
if [ "${lost:-0}" -gt 0 ]; then
	warnings "$WORK/lost.data" | has "the kernel lost $lost samples (its buffer was full).*perf record -m 4096" ||
		fail "info does not warn of $lost lost samples: $(warnings "$WORK/lost.data")"
	"$PERFPORT" -q report -i "$WORK/lost.data" --no-tree --top 1 >"$WORK/lost.txt" || fail "report: exit $?"
	has "^# lost: $lost samples the kernel could not write.*record with -m 4096" "$WORK/lost.txt" ||
		fail "report does not say $lost samples were lost: $(grep '^#' "$WORK/lost.txt")"
	# export says it too, with the same advice (its -m 2 doubled is under 4096)
	"$PERFPORT" export -i "$WORK/lost.data" -f folded -o "$WORK/lost.folded" 2>"$WORK/lost.err" ||
		fail "export: exit $?: $(said "$WORK/lost.err")"
	has "lost samples: the kernel lost $lost samples .*perf record -m 4096" "$WORK/lost.err" ||
		fail "export does not say $lost samples were lost: $(cat "$WORK/lost.err")"
	echo "ok: $lost lost samples said by info, report and export"
else
	echo "(perf lost nothing with -m 2: the lost-samples warning is not tried)"
fi

# kernel frames that cannot be named: info says why and what would name them
f="$CORPUS/quipper/perf.data.piped.target-3.8"
if [ -f "$f" ]; then
	warnings "$f" | has "kernel frames are not named: the recording has no kernel build id.*--kallsyms" ||
		fail "no unnamed-kernel warning on $(basename "$f"): $(warnings "$f")"
	f="$CORPUS/quipper/perf.data.forkexit-3.8"
	warnings "$f" | has "kernel frames are not named: the recorded kernel (build id [0-9a-f]*) is not this machine's.*perf archive" ||
		fail "no unnamed-kernel warning on $(basename "$f"): $(warnings "$f")"
	echo "ok: unnamed kernel frames: why, and what names them"
fi

# no call stacks at all: info warns, report says so in its header
record "$WORK/flat.data" -F 499 -e cpu-clock "$WORKLOAD" 0.3 cpu
warnings "$WORK/flat.data" | has "no event was recorded with call stacks.*perf record -g" ||
	fail "no missing-stacks warning: $(warnings "$WORK/flat.data")"
"$PERFPORT" -q report -i "$WORK/flat.data" --no-threads | has "^# stacks: none recorded" ||
	fail "report does not say the recording has no stacks"
"$PERFPORT" -q report -i "$WORK/good.data" --no-threads | has "^# stacks: none" &&
	fail "report says a -g recording has no stacks"
echo "ok: a recording without call stacks"

# stacks on the samples but not on the switches: info warns, report says so
record "$WORK/bare-switch.data" -e cpu-clock/call-graph=fp,freq=499/ \
	-e sched:sched_switch/call-graph=no/ "$WORKLOAD" 0.3 lock
warnings "$WORK/bare-switch.data" | has "'sched:sched_switch' was recorded without call stacks" ||
	fail "no warning for sched_switch without stacks: $(warnings "$WORK/bare-switch.data")"
"$PERFPORT" -q report -i "$WORK/bare-switch.data" --no-threads |
	has "^# stacks: none recorded with sched:sched_switch" ||
	fail "report does not say sched_switch has no stacks"
warnings "$WORK/good.data" | has "without call stacks" && fail "the warning on a -g recording"
echo "ok: sched_switch recorded without stacks beside sampled stacks"

# an empty profile says why: nothing sampled, or no sample of the event asked for
record "$WORK/none.data" -e cpu-clock -c 1000000000 -- true
"$PERFPORT" export -f folded -o "$WORK/none.folded" -i "$WORK/none.data" 2>"$WORK/none.err" ||
	fail "export of a recording without samples: exit $?: $(said "$WORK/none.err")"
grep -q "none.data' holds nothing a profile counts.*the profile is empty" "$WORK/none.err" ||
	fail "no empty-profile warning: $(cat "$WORK/none.err")"
"$PERFPORT" export -f folded -o "$WORK/none.folded" --event cpu-clock -i "$WORK/flat.data" 2>"$WORK/ok.err"
grep -q "the profile is empty" "$WORK/ok.err" && fail "a profile with samples called empty"
echo "ok: an empty profile says why"

# A hardware trace (Intel PT, ARM SPE, CoreSight: AUXTRACE records) is not
# decoded: every command says so, with the perf command that decodes it. The
# trace is appended to a pipe recording, as perf record -e intel_pt// writes
# its AUXTRACE_INFO and AUXTRACE records (no PT hardware needed here).
perf record -q -o - -e cpu-clock -- "$WORKLOAD" 0.1 cpu >"$WORK/pipe.data" 2>/dev/null
$PY - "$WORK/pipe.data" "$WORK/pt.data" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
info = struct.pack("<IHHII", 70, 0, 16, 1, 0)               # AUXTRACE_INFO, type 1: Intel PT
payload = bytes(64)
aux = struct.pack("<IHHQQQIIII", 71, 0, 56, len(payload), 0, 1, 0, 0, 0, 0) + payload
open(sys.argv[2], "wb").write(d + info + aux)
PY
for cmd in "info" "report" "stacks" "export -f folded -o $WORK/pt.folded"; do
	"$PERFPORT" $cmd -i - <"$WORK/pt.data" >/dev/null 2>"$WORK/pt.err" || fail "$cmd of a trace: exit $?: $(said "$WORK/pt.err")"
	has "holds a hardware trace .* that perfport does not decode.*perf inject -i .* --itrace=" "$WORK/pt.err" ||
		fail "$cmd: no warning that the trace is not decoded: $(cat "$WORK/pt.err")"
done
"$PERFPORT" info -i "$WORK/pipe.data" 2>&1 >/dev/null | grep -q "hardware trace" && fail "a trace warning without a trace"
echo "ok: a hardware trace is said to be undecoded, with the command that decodes it"
