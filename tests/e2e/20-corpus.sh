#!/usr/bin/env bash
# Every recording of the shared corpus (other projects' files, perf 3.2 to
# 6.16, x86_64/i686/armv7/aarch64, file/pipe, zstd): where Debian's perf
# reads a file, perfport's per-event sample counts equal perf report --stats,
# and each sampling event's profile has perf script's event name, sample
# count and (where the weight is the period) period sum;
# where it cannot, perfport reads it fully and agrees with the file's own
# SAMPLE_TIME feature. The deliberately corrupted pipe file reads partly.
. "$(dirname "$0")/lib/common.sh"
need_python
[ -d "$CORPUS" ] || skip "no corpus at $CORPUS (it lives in ../shared/corpus beside the checkout)"
have_perf=1; command -v perf >/dev/null || have_perf=0
n=0
while IFS= read -r f; do
	case $f in *.txt|*/README.md) continue;; esac
	head -c 8 "$f" | has PERFILE2 || continue
	rel=${f#$CORPUS/}
	n=$((n + 1))
	rc=0; "$PERFPORT" info --json -i "$f" >"$WORK/i.json" 2>"$WORK/err" || rc=$?
	case $rel in
	*corrupted*)
		[ $rc -eq 3 ] || fail "$rel: exit $rc, want 3 (partial)"
		$PY "$CHECK" json "$WORK/i.json" samples=">0" skipped_records=">0" >/dev/null ||
			fail "$rel: want samples kept and the bad record reported"
		echo "ok: $rel partial, as it should be"
		continue;;
	linux-perf-data/sleep.compressed2.pipe.data)
		# perf's own stderr text was captured at the end of this pipe file
		# (143 bytes of "[ perf record: ... ]" lines): not records, said so
		[ $rc -eq 0 ] || { cat "$WORK/err"; fail "$rel: exit $rc, want 0 (all records read)"; }
		$PY "$CHECK" json "$WORK/i.json" samples=">0" skipped_records=0 message_bytes=143 \
			truncated=false >/dev/null || fail "$rel: perf record's messages not recognised"
		has "perf record's own messages, not records" <"$WORK/err" ||
			fail "$rel: no warning of the messages: $(cat "$WORK/err")";;
	*)
		[ $rc -eq 0 ] || { cat "$WORK/err"; fail "$rel: exit $rc"; };;
	esac
	stats=""
	[ $have_perf = 1 ] && stats=$(perf report --stats -i "$f" 2>/dev/null | grep -c "SAMPLE events" || true)
	if [ -n "$stats" ] && [ "$stats" -gt 0 ]; then
		perf report --stats -i "$f" >"$WORK/stats.txt" 2>/dev/null
		$PY "$CHECK" stats "$WORK/i.json" "$WORK/stats.txt" >/dev/null || {
			$PY "$CHECK" stats "$WORK/i.json" "$WORK/stats.txt"; fail "$rel"; }
		# each sampling event's profile: its samples and, where the weight
		# is the period (clock events, perf record -c N), their sum
		perf script -i "$f" -F event,period >"$WORK/script.txt" 2>/dev/null
		$PY - "$PERFPORT" "$f" "$WORK/i.json" "$WORK/script.txt" <<'PY' || fail "$rel: per-event profiles differ from perf script's"
import collections, json, subprocess, sys
perfport, data, info, script = sys.argv[1:]
count, period = collections.Counter(), collections.Counter()
for line in open(script):
    f = line.split()  # period, then "event:"
    if len(f) == 2 and f[1].endswith(":"):
        count[f[1][:-1]] += 1
        period[f[1][:-1]] += int(f[0])
def total(ev, value):
    out = subprocess.run([perfport, "-q", "export", "-i", data, "--event", ev, "-f", "folded",
                          "-O", "counter=on-cpu,idle", "-O", "value=" + value, "-o", "-"],
                         capture_output=True, text=True).stdout
    return sum(int(l.rsplit(" ", 1)[1]) for l in out.splitlines() if l.strip())
for e in json.load(open(info))["events"]:
    if not e["samples"] or e["type"] == "tracepoint" or e["name"].startswith("dummy"):
        continue
    ev = e["name"]
    if ev not in count:
        sys.exit(f"{ev}: perf script names the events {sorted(count)}")
    weighs_period = not ("frequency" in e) or (e["type"] == "software" and e["config"] in (0, 1))
    got = (total(ev, "samples"), total(ev, "ns") if weighs_period else None)
    want = (count[ev], period[ev] if weighs_period else None)
    if got != want:
        sys.exit(f"{ev}: perfport {got}, perf script {want} (samples, weight)")
PY
		echo "ok: $rel agrees with perf report --stats and perf script"
	else
		$PY - "$WORK/i.json" "$rel" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); rel = sys.argv[2]
assert d["samples"] > 0, f"{rel}: no samples"
assert sum(e["samples"] for e in d["events"]) == d["samples"], f"{rel}: events do not sum"
st = d.get("header_sample_time")
if st and st["last"]:  # perf -z leaves it zero
    assert st["first"] == d["first_sample_time"] and st["last"] == d["last_sample_time"], \
        f"{rel}: sample times {d['first_sample_time']}..{d['last_sample_time']} vs SAMPLE_TIME {st}"
print(f"ok: {rel} (perf cannot read it): {d['samples']} samples"
      + (", span matches SAMPLE_TIME" if st else ""))
PY
	fi
done < <(find "$CORPUS" -type f | sort)
[ $n -ge 30 ] || fail "only $n corpus recordings found"

# Feature sections decoded, as perf report --header-only shows them.
"$PERFPORT" info --json -i "$CORPUS/quipper/perf.data.group_desc-4.14" >"$WORK/g.json"
$PY "$CHECK" json "$WORK/g.json" "groups.0.name={anon_group}" groups.0.members=2 groups.0.leader=0 \
	core_siblings=0-3 "thread_siblings=0-1; 2-3" hostname=localhost
# Tracepoint fields of a file recorded on another kernel (perf 5.18, zstd).
"$PERFPORT" dump --samples --event sched:sched_switch \
	-i "$CORPUS/perfparser/parallel_static_gcc/perf.data.zstd" >"$WORK/p.fields"
grep -q "prev_pid=[0-9]* .*next_pid=[0-9]" "$WORK/p.fields" || fail "no sched_switch fields in the perfparser file"
echo "ok: $n corpus recordings"
