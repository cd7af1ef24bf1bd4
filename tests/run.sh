#!/usr/bin/env bash
# Runs every test: cmocka unit tests, the robustness driver, then the
# numbered end-to-end scripts. Ends with "N passed, N failed, N skipped".
# An e2e script exits 0 (pass), 77 (skip, after printing why) or else (fail).
#
# tests/run.sh [-n N] [--busy[=K]] TEST... - the repeat runner: only the
# e2e tests named (36-watch, 36, or a glob of names: '3*'), each N times
# (1), in turn; --busy keeps every CPU busy meanwhile (K shell loops per
# CPU, 1 unless said, started before the first run and stopped after the
# last). Reports each test's runs, failures and skips; a failed run's log
# is kept as $TEST_OUT/NAME.runK.log and its tail printed, its WORK
# directory (recordings) as $TEST_OUT/NAME.work.PID. 'make stress' runs it.
set -u
cd "$(dirname "$0")/.."
REPEAT=1 BUSY=0 CHOSEN=()
while [ $# -gt 0 ]; do
	case $1 in
	-n) REPEAT=${2:?-n takes a count}; shift 2;;
	-n*) REPEAT=${1#-n}; shift;;
	--busy) BUSY=1; shift;;
	--busy=*) BUSY=${1#--busy=}; shift;;
	-h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
	-*) echo "run.sh: unknown option '$1' (-n N, --busy[=K], then tests)" >&2; exit 2;;
	*) CHOSEN+=("$1"); shift;;
	esac
done
case $REPEAT in ''|*[!0-9]*|0) echo "run.sh: -n takes a count of 1 or more, not '$REPEAT'" >&2; exit 2;; esac
case $BUSY in ''|*[!0-9]*) echo "run.sh: --busy= takes a count of busy loops per CPU, not '$BUSY'" >&2; exit 2;; esac
BUILD=${BUILD:-build}
export PERFPORT=$PWD/$BUILD/perfport
export TOP=$PWD
export CORPUS=${CORPUS:-$PWD/../shared/corpus}
OUT=${TEST_OUT:-$PWD/tests/out}
rm -rf "$OUT" && mkdir -p "$OUT"
export TEST_OUT=$OUT
pass=0 fail=0 skip=0
failed=()

# ThreadSanitizer stops a run at its first report, with exit status 66;
# so does UndefinedBehaviorSanitizer (-fno-sanitize-recover=all leaves some
# checks, a null pointer given to qsort() among them, reporting and going on)
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1 ${UBSAN_OPTIONS:-}"
# busy_start, busy_stop: BUSY busy loops per CPU, for --busy
BUSY_PIDS=()
busy_stop() {
	[ ${#BUSY_PIDS[@]} -eq 0 ] || kill "${BUSY_PIDS[@]}" 2>/dev/null
	[ ${#BUSY_PIDS[@]} -eq 0 ] || wait "${BUSY_PIDS[@]}" 2>/dev/null
	BUSY_PIDS=()
}
busy_start() {
	for _ in $(seq $((BUSY * $(nproc)))); do
		( trap - TERM; while :; do :; done ) &
		BUSY_PIDS+=($!)
	done
}

# run_e2e SCRIPT LOG: the script's exit status
run_e2e() {
	local rc=0
	bash "$1" >"$2" 2>&1 || rc=$?
	return $rc
}

if [ ${#CHOSEN[@]} -gt 0 ]; then
	tests=()
	for c in "${CHOSEN[@]}"; do
		found=
		for t in tests/e2e/[0-9][0-9]-*.sh; do
			name=$(basename "$t" .sh)
			# shellcheck disable=SC2053 # a glob on purpose
			case $name in $c | $c-* ) tests+=("$t"); found=1;; esac
		done
		[ -n "$found" ] || { echo "run.sh: no e2e test '$c' in tests/e2e" >&2; exit 2; }
	done
	trap busy_stop EXIT
	trap 'busy_stop; exit 130' INT TERM
	[ "$BUSY" = 0 ] || { busy_start; echo "every CPU kept busy: ${#BUSY_PIDS[@]} busy loops"; }
	summary=()
	bad=0
	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		p=0 f=0 s=0 fails=
		for k in $(seq "$REPEAT"); do
			log="$OUT/$name.run$k.log"
			start=$(date +%s)
			rc=0; run_e2e "$t" "$log" || rc=$?
			secs=$(( $(date +%s) - start ))
			case $rc in
			0) p=$((p + 1)); rm -f "$log"; echo "ok   $name run $k of $REPEAT (${secs}s)";;
			77) s=$((s + 1)); echo "skip $name run $k: $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP:* *//')"; rm -f "$log";;
			*) f=$((f + 1)); fails="$fails $k"
			   echo "FAIL $name run $k of $REPEAT (exit $rc, ${secs}s; log: $log)"
			   tail -25 "$log" | sed 's/^/    /';;
			esac
		done
		echo "$name: $REPEAT runs, $f failed${fails:+ (runs$fails)}, $s skipped"
		summary+=("$(printf '%-24s %3d runs %3d passed %3d failed %3d skipped' "$name" "$REPEAT" "$p" "$f" "$s")")
		bad=$((bad + f))
	done
	echo "--- $REPEAT run(s) each$([ "$BUSY" = 0 ] || echo ", $BUSY busy loop(s) per CPU") ---"
	printf '%s\n' "${summary[@]}"
	[ "$bad" -eq 0 ]
	exit
fi

for t in "$BUILD"/tests/test_* build-asan/tests/test_* build-tsan/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	case $t in build-asan/*) name="$name-asan";; build-tsan/*) name="$name-tsan";; esac
	log="$OUT/$name.log"
	if "$t" >"$log" 2>&1; then rc=0; else rc=$?; fi
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	p=${p:-0}; f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	pass=$((pass + p)); fail=$((fail + f))
	if [ "$f" -ne 0 ]; then failed+=("$name"); echo "FAIL unit $name ($f failed; see $log)"; grep -E '^\[  (FAILED|ERROR)|error:|Error' "$log" | head -10
	else echo "ok   unit $name ($p tests)"; fi
done

if [ -x build-asan/robust ]; then
	log="$OUT/robust.log"
	if LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp PERFPORT_FUZZ_PLUGINS=$PWD/build-asan/plugins \
		build-asan/robust samples tests/fuzz/regress "$CORPUS" >"$log" 2>&1; then
		pass=$((pass + 1)); echo "ok   robust: corpus truncated and bit-flipped under ASan+UBSan ($(tail -1 "$log"))"
	else
		fail=$((fail + 1)); failed+=(robust); echo "FAIL robust (see $log)"; tail -20 "$log"
	fi
fi

# The threaded paths under ThreadSanitizer: exports with -j 6 (three naming
# lanes sharing unit indexes, prefetch, unwinding pool) of the samples and
# the corpus's smaller files; watches with -j 3 (one lane).
if [ -x build-tsan/perfport ]; then
	log="$OUT/tsan.log" n=0 bad=
	: >"$log"
	for f in samples/*.perf.data $(find "$CORPUS" -type f -size -20M 2>/dev/null | sort); do
		head -c 8 "$f" 2>/dev/null | grep -q PERFILE2 || continue
		rm -rf "$OUT/tsan"
		build-tsan/perfport export -j 6 -f folded,pprof,firefox -o "$OUT/tsan" -i "$f" >>"$log" 2>&1
		rc=$?
		n=$((n + 1))
		# 0 read, 3 partial (the corpus's damaged files); 66 is a report
		case $rc in 0|3) ;; *) bad="$bad $f (exit $rc)";; esac
	done
	# watch -i: windows built on one thread and sent on another, a backend
	# that refuses connections (every window spooled, in order)
	for f in samples/*.perf.data; do
		rm -rf "$OUT/tsan-spool"
		build-tsan/perfport watch -i "$f" --window 100ms -j 3 -f pyroscope --retries 1 \
			--timeout 1 --resend-every 1 --spool "$OUT/tsan-spool" \
			-O server=http://127.0.0.1:1 >>"$log" 2>&1
		rc=$?
		n=$((n + 1))
		case $rc in 4) ;; *) bad="$bad watch -i $f (exit $rc)";; esac
	done
	if [ -z "$bad" ] && ! grep -q "ThreadSanitizer" "$log"; then
		pass=$((pass + 1)); echo "ok   tsan: $n exports (-j 6) and watches (-j 3) under ThreadSanitizer"
	else
		fail=$((fail + 1)); failed+=(tsan); echo "FAIL tsan:$bad (see $log)"
		grep -m5 -A8 "WARNING: ThreadSanitizer" "$log"
	fi
fi

for t in tests/e2e/[0-9][0-9]-*.sh; do
	name=$(basename "$t" .sh)
	log="$OUT/$name.log"
	start=$(date +%s)
	if bash "$t" >"$log" 2>&1; then rc=0; else rc=$?; fi
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) pass=$((pass + 1)); echo "ok   $name (${secs}s)";;
	77) skip=$((skip + 1)); echo "skip $name: $(grep -m1 '^SKIP' "$log" | sed 's/^SKIP:* *//')";;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL $name (exit $rc, ${secs}s; log: $log)"; tail -25 "$log" | sed 's/^/    /';;
	esac
done

[ ${#failed[@]} -eq 0 ] || echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
