#!/usr/bin/env bash
# Off-CPU states decided by evidence: progs/waits.c runs 35 wait primitives,
# one per thread, each in a function of its own name (poll, epoll_wait and
# select with and without a timeout, semaphores and condition variables
# timed and not, nanosleep, flock, OFD locks, normal, recursive, PI and
# timed mutexes, a rwlock, a barrier, pipe, socket and eventfd reads,
# waitpid, sigwait, sigtimedwait, fsync, fdatasync, msync, cold buffered and
# O_DIRECT reads, page faults on a cold mapping, an adaptive mutex, io_uring
# waits with and without a timeout, a POSIX lockf held by another process). Where the
# recording holds the user registers (--call-graph dwarf, or -g with
# --user-regs), at least 95% of each one's waiting time lands in its state:
# the system call's arguments decide timed or not (poll(-1) and poll(10)
# sleep in the same kernel function). With -g alone the rules decide, and
# report says what evidence is missing; the primitives the rules know still
# land right.
. "$(dirname "$0")/lib/common.sh"
need_python
need_perf
need_tracepoint
[ "$(uname -m)" = x86_64 ] || [ "$(uname -m)" = aarch64 ] || skip "syscall arguments are read on x86_64 and aarch64 only"
cc -O2 -g -fno-omit-frame-pointer -pthread -o "$WORK/waits" "$TOP/tests/e2e/progs/waits.c" ||
	fail "cannot build progs/waits.c"
REGS=di,si,dx,r10,r8,r9
[ "$(uname -m)" = aarch64 ] && REGS=x0,x1,x2,x3,x4,x5
EV="-e cpu-clock/freq=99/ -e sched:sched_switch --switch-events"
# record_whole OUTPUT ARGS...: as record, made again while perf lost
# records (3 tries): a lost sched_switch loses its wait's stack, a lost
# waking its waker, and the checks below hold each thread's waits to 95%.
# On a busy machine (CI's two cores, another job beside) the dwarf
# recording lost 94 samples with its large buffer and passed, and once
# lost enough that every rule-decided thread fell to 80%.
record_whole() {
	local out=$1 try lost
	for try in 1 2 3; do
		record "$@"
		lost=$("$PERFPORT" -q info --json -i "$out" | $PY -c 'import json, sys; print(json.load(sys.stdin)["lost"])')
		[ "$lost" = 0 ] && return 0
		echo "note: $(basename "$out"): perf lost $lost samples, try $try of 3"
	done
}
# each with the wakers (sched_waking): what woke a wait is evidence too.
# (a large buffer: 38 threads' switches and wakings with their stacks
# overflow the default one)
record_whole "$WORK/dwarf.data" $EV -e sched:sched_waking -m 4096 --call-graph dwarf,8192 -- \
	"$WORK/waits" 1.5 "$WORK"
record_whole "$WORK/regs.data" $EV -e sched:sched_waking -m 1024 -g --user-regs=$REGS -- "$WORK/waits" 1.5 "$WORK"
record_whole "$WORK/fp.data" $EV -e sched:sched_waking -m 1024 -g -- "$WORK/waits" 1.5 "$WORK"
# without the wakers: what the rules alone decide, and what info advises
record_whole "$WORK/bare.data" $EV -g -- "$WORK/waits" 1.5 "$WORK"
ln -s dwarf.data "$WORK/wake.data"

for v in dwarf regs fp bare; do
	for c in lock sleep timed-sleep io preempted; do
		"$PERFPORT" -q export -i "$WORK/$v.data" -f folded -O counter=$c -O value=ns \
			-O annotate=false --group-by thread -o "$WORK/$v-$c.folded" ||
			fail "export $v $c: exit $?"
	done
	"$PERFPORT" -q report -i "$WORK/$v.data" --no-tree --no-threads --top 1 >"$WORK/$v.report" ||
		fail "report $v: exit $?"
done
grep -q "off-CPU states decided by:.* syscall arguments [0-9.]* s" "$WORK/dwarf.report" ||
	fail "report does not say states came from syscall arguments: $(grep off-CPU "$WORK/dwarf.report")"
grep -q "off-CPU states decided by:.* wakeup [0-9.]* s" "$WORK/fp.report" ||
	fail "report does not say states came from the wakeups: $(grep off-CPU "$WORK/fp.report")"
grep -q "whose arguments were not recorded.*--user-regs" "$WORK/fp.report" ||
	fail "report on a -g recording does not say the arguments are missing"
"$PERFPORT" -q info -i "$WORK/bare.data" | has "^off-CPU: .*syscall arguments (user registers) no (add --call-graph dwarf" ||
	fail "info on a -g recording does not say how to record the syscall arguments"
"$PERFPORT" -q info -i "$WORK/bare.data" | has "^off-CPU: .*wakeups no (add -e sched:sched_waking" ||
	fail "info on a recording without wakeups does not say how to record them"
# what decided the states adds up to the off-CPU total
for v in dwarf regs fp bare; do
	"$PERFPORT" -q report -i "$WORK/$v.data" --json --no-tree >"$WORK/$v-decided.json" || fail "report --json $v"
	$PY - "$WORK/$v-decided.json" "$v" <<'PY' || fail "$v: the states' deciders do not add up"
import json, sys
r = json.load(open(sys.argv[1]))
off = sum(r["totals"].get(c, {}).get("ns", 0) for c in ("preempted", "lock", "io", "sleep", "timed-sleep"))
by = r["meta"]["states_decided_by"]
got = sum(v["ns"] for v in by.values())
print("%s: decided by %s; %.3f s of %.3f s off CPU" % (sys.argv[2], ", ".join(
    "%s %.3f s" % (k, v["ns"] / 1e9) for k, v in by.items() if v["count"]), got / 1e9, off / 1e9))
assert got == off, (got, off)
PY
done
# thin evidence: an untimed wait on a futex word or a semaphore (a
# condition variable's, a semaphore's) says only that no timer ends it -
# a lock's and an event's look alike - so its sleep is called thin; a
# poll, a select, a wait for a child or a signal say what they await and
# are not (each set's threads alone, --comm). (A barrier's is glibc's
# rule's: sleep, not thin.)
for v in dwarf regs; do
	"$PERFPORT" -q report -i "$WORK/$v.data" --json --no-tree \
		--comm sem_untimed,cond_untimed,semop >"$WORK/$v-unsaid.json" &&
	"$PERFPORT" -q report -i "$WORK/$v.data" --json --no-tree \
		--comm poll_untimed,epoll_untimed,select_untimed,waitpid,sigwait >"$WORK/$v-said.json" ||
		fail "report --comm $v: exit $?"
	$PY - "$WORK/$v-unsaid.json" "$WORK/$v-said.json" "$v" <<'PY' || fail "$v: the sleep called thin"
import json, sys
def split(path):
    r = json.load(open(path))
    return (r["totals"].get("sleep", {}).get("ns", 0),
            r["meta"]["states_thin"].get("sleep", {}).get("ns", 0))
us, ut = split(sys.argv[1])
ss, st = split(sys.argv[2])
print("%s: futex and semaphore waits: sleep %.3f s, thin %.3f s; polls, waitpid, sigwait: sleep %.3f s, "
      "thin %.3f s" % (sys.argv[3], us / 1e9, ut / 1e9, ss / 1e9, st / 1e9))
assert us > 0.5e9 and ss > 0.5e9, "the waits did not run"
assert ut >= 0.95 * us, "the futex and semaphore waits' sleep is not all called thin"
assert st <= 0.05 * ss, "the polls', waitpid's or sigwait's sleep is called thin"
PY
done
"$PERFPORT" -q info -i "$WORK/dwarf.data" | has "^off-CPU: .*syscall arguments (user registers) yes" ||
	fail "info on a dwarf recording does not say it holds the syscall arguments"

$PY "$TOP/tests/e2e/lib/waits_check.py" "$WORK" dwarf regs fp bare || fail "wait states"
echo "ok: every wait's time in its state where the arguments are recorded"

# your rules decide first: over the programs' (glibc's mutex: lock), the
# wakeup's and the call's arguments (poll's timeout), the kernel's
# (nanosleep); a woken-by rule of yours over the programs' (a rwlock wait
# that lock_holder's unlock ended) but after your rules on the blocked
# stack, and never on the user frames an interrupt ran over (the ticks'
# timers); report says how much your rules decided
cat >"$WORK/user.rules" <<'EOF2'
S,I       wait_mutex          io
S,I       wait_poll_timed     lock
S,I       wait_nanosleep      io
woken-by S,I lock_holder      preempted
EOF2
"$PERFPORT" -q report -i "$WORK/dwarf.data" --state-rules "$WORK/user.rules" --json --no-tree \
	>"$WORK/user.json" || fail "report --state-rules: exit $?"
"$PERFPORT" -q report -i "$WORK/dwarf.data" --state-rules "$WORK/user.rules" --no-tree --top 1 \
	>"$WORK/user.txt" || fail "report --state-rules: exit $?"
has "^# off-CPU states decided by: user rules [0-9.]* s" "$WORK/user.txt" ||
	fail "report does not say the user's rules decided: $(grep decided "$WORK/user.txt")"
for c in lock sleep timed-sleep io; do
	"$PERFPORT" -q export -i "$WORK/dwarf.data" --state-rules "$WORK/user.rules" -f folded -O counter=$c \
		-O value=ns -O annotate=false --group-by thread -o "$WORK/user-$c.folded" ||
		fail "export --state-rules: exit $?"
done
"$PERFPORT" -q report -i "$WORK/dwarf.data" --wakers --json --no-tree >"$WORK/dwarf-wakers.json" ||
	fail "report --wakers: exit $?"
"$PERFPORT" -q report -i "$WORK/dwarf.data" --state-rules "$WORK/user.rules" --wakers --json --no-tree \
	>"$WORK/user-wakers.json" || fail "report --state-rules --wakers: exit $?"
# judged on what a rule can match: a wait whose sched_switch sample perf
# lost (a busy machine: 6,961 samples lost once, and poll_timed's waits
# fell to 83.4 % lock) has no stack, and report says so per thread
# (threads[].without_stack); a woken-by rule needs the waking's stack
$PY - "$WORK" <<'PY' || fail "the user's rules do not override"
import collections, json, re, sys
w = sys.argv[1]
u, d = (json.load(open("%s/%s.json" % (w, f))) for f in ("user", "dwarf-decided"))
def thread(r, comm, key="counters"):
    return {c: v["ns"] for c, v in [t for t in r["threads"] if t["comm"] == comm][0][key].items()}
folded = {c: [l.rsplit(" ", 1) for l in open("%s/user-%s.folded" % (w, c))]
          for c in ("lock", "sleep", "timed-sleep", "io")}
bad = []
for comm, want in (("mutex", "io"), ("poll_timed", "lock"), ("nanosleep", "io")):
    # the thread's waits in its primitive's function (a page fault on the
    # way waits for the address space's lock in D state, which the rules'
    # S,I do not cover), and its time without a stack
    by, nostack = collections.Counter(), 0
    for c, lines in folded.items():
        for s, v in lines:
            f = s.split(";")
            if len(f) < 2 or not re.fullmatch(re.escape(comm) + r" \[\d+\]", f[1]):
                continue
            if f[2:] == ["[off-cpu: stack not recorded]"]:
                nostack += int(v)
            elif "wait_" + comm in f and "exc_page_fault" not in f and "do_page_fault" not in f:
                by[c] += int(v)
    said = thread(u, comm, "without_stack")
    said = sum(v for k, v in said.items() if k not in ("on-cpu", "preempted"))
    t = sum(by.values())
    print("%-10s %-5s %5.1f%% of %.0f ms waiting in wait_%s (%s); %.0f ms without a stack" % (
        comm, want, 100 * by[want] / t if t else 0, t / 1e6, comm,
        ", ".join("%s %.0f ms" % (c, n / 1e6) for c, n in by.most_common()), said / 1e6))
    # report's per-thread time without a stack is the export's
    if said != nostack:
        bad.append("%s: %d ns without a stack in report, %d in export" % (comm, said, nostack))
    if t < 200e6 or by[want] < 0.95 * t:
        bad.append(comm)
# the rwlock's lock waits that lock_holder's unlock ended (their waking
# recorded with its stack) became the woken-by rule's; its ticks stay timed
def woken(r):
    by = collections.Counter()
    for x in r["wakers"]:
        s = x["stack"]
        i = s.index("--- woken by ---")
        if "wait_rwlock" in s[:i] and "lock_holder" in s[i + 1:]:
            by[x["counter"]] += x["ns"]
    return by
wb, wa = (woken(json.load(open("%s/%s-wakers.json" % (w, f)))) for f in ("dwarf", "user"))
before, after = thread(d, "rwlock"), thread(u, "rwlock")
print("rwlock: waits lock_holder ended: %s -> %s; timed-sleep %.0f -> %.0f ms" % (
    ", ".join("%s %.0f ms" % (c, n / 1e6) for c, n in wb.most_common()),
    ", ".join("%s %.0f ms" % (c, n / 1e6) for c, n in wa.most_common()),
    before.get("timed-sleep", 0) / 1e6, after.get("timed-sleep", 0) / 1e6))
# (a tick's timer that fired over lock_holder's user frames looks woken by
# it too: it stays timed-sleep, as the thread's timed-sleep total says)
if wb["lock"] < 50e6 or sum(wa.values()) != sum(wb.values()) or \
   wa["preempted"] < 0.95 * wb["lock"] or wa["lock"] > 0.05 * wb["lock"] or \
   abs(after.get("timed-sleep", 0) - before.get("timed-sleep", 0)) > 0.05 * before.get("timed-sleep", 1):
    bad.append("rwlock")
if bad:
    sys.exit("not as the user's rules say: " + ", ".join(bad))
PY
echo "ok: the user's rules override every layer"

# a recv() ended by its socket's SO_RCVTIMEO: no argument says it had a
# timeout, its waker does - the timer. System-wide, so that the timers an
# idle CPU fires are recorded too (a recording of the workload alone holds
# only the wakeups its own threads made); of the waits whose waking was
# recorded, the timer's are timed-sleep
record "$WORK/all.data" -a $EV -e sched:sched_waking -m 1024 -g -- "$WORK/waits" 1.5 "$WORK"
"$PERFPORT" -q report -i "$WORK/all.data" --comm recv_timeout --wakers --json --no-tree \
	>"$WORK/rcvtimeo.json" || fail "report --wakers: exit $?"
$PY - "$WORK/rcvtimeo.json" <<'PY' || fail "SO_RCVTIMEO's waits are not timed-sleep"
import collections, json, sys
r = json.load(open(sys.argv[1]))
by = collections.Counter()
for w in r["wakers"]:
    # its own waits (not a page fault's lock wait: for the address space's
    # lock, that a fork's dup_mmap holds, preempted on a busy machine -
    # 10.3 % of the time once, with two busy loops per CPU), by counter
    if "--- woken by ---" not in w["stack"]:
        continue
    blocked = w["stack"][:w["stack"].index("--- woken by ---")]
    if "exc_page_fault" in blocked or "do_page_fault" in blocked:
        continue
    if any("recv" in f for f in w["stack"]):
        by[w["counter"]] += w["ns"]
t = sum(by.values())
print("recv_timeout's waits with their waking recorded: %.0f ms, %s" % (t / 1e6,
      ", ".join("%s %.1f%%" % (c, 100 * v / t) for c, v in by.most_common())))
assert t > 300e6 and by["timed-sleep"] >= 0.95 * t, dict(by)
PY
echo "ok: a wait its socket's timeout ended is timed-sleep where its waking was recorded"

# --no-kernel hides the kernel's frames after the states are decided: every
# thread's time by state is the same as with them (the syscall entry points
# and kernel lock paths that decided them are kernel frames)
for v in dwarf fp; do
	"$PERFPORT" -q report -i "$WORK/$v.data" --json --no-tree >"$WORK/$v-k.json" || fail "report $v: exit $?"
	"$PERFPORT" -q report -i "$WORK/$v.data" --json --no-kernel >"$WORK/$v-nok.json" ||
		fail "report --no-kernel $v: exit $?"
	$PY - "$WORK/$v-k.json" "$WORK/$v-nok.json" <<'PY' || fail "$v: --no-kernel changed the states"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ta = {(t["tid"]): t["counters"] for t in a["threads"]}
tb = {(t["tid"]): t["counters"] for t in b["threads"]}
if a["totals"] != b["totals"] or ta != tb:
    diff = [(t, ta[t], tb.get(t)) for t in ta if ta[t] != tb.get(t)]
    sys.exit("totals %s vs %s; threads differ: %s" % (a["totals"], b["totals"], diff[:3]))
k = [f["function"] for f in b["frames"] if f["flags"] & 1]   # FRAME_F_KERNEL
if k:
    sys.exit("--no-kernel left kernel frames: %s" % k[:5])
print("%d threads, the same time by state with and without kernel frames" % len(ta))
PY
done
echo "ok: --no-kernel changes no state"

# without the recorded kernel's names (a recording read on another host,
# no perf archive: here a --kallsyms of one symbol), the system call is
# told from the user side, by the C library's wrapper the thread sits in,
# and its arguments decide as with the names: each primitive's state is
# the same, dwarf and -g --user-regs. io_uring's are left out: waits.c
# enters it through the C library's generic syscall(), which names no
# call, and the kernel's io_uring path is what says io. So is
# recv_timeout: no argument holds its timeout, only its waker's kernel
# frames (the timer) do, and those are unnamed here - where the timer's
# waking was recorded (a busy CPU fires it, not an idle one) the named
# report says timed-sleep and the unnamed one cannot. And the children of
# vfork and waitpid, helpers each living one 10 ms nanosleep (under the 50
# ms judged here), unless load stretches one: with two busy loops per CPU
# a vfork child's sleep lasted 616 ms once, its sample with no user stack
# (perf script shows none either), so nothing named its call without the
# kernel's names. And timerfd_read: read() says nothing of the file it
# reads, the kernel's timerfd_read does (its timer's expiry).
printf 'ffffffff81000000 T _stext\n' >"$WORK/one.kallsyms"
for v in dwarf regs; do
	"$PERFPORT" -q report -i "$WORK/$v.data" --kallsyms "$WORK/one.kallsyms" --json --no-tree \
		>"$WORK/$v-hidden.json" || fail "report --kallsyms $v: exit $?"
	$PY - "$WORK/$v-decided.json" "$WORK/$v-hidden.json" "$v" <<'PY' || fail "$v: the states differ without kernel names"
import json, sys
named, hidden = (json.load(open(f)) for f in sys.argv[1:3])
assert not any(f["function"].startswith("__x64_sys_") or f["function"].startswith("__arm64_sys_")
               for f in hidden["frames"]), "kernel frames still named"
def states(r):
    out = {}
    for t in r["threads"]:
        c = {k: v["ns"] for k, v in t["counters"].items() if k not in ("on-cpu", "preempted")}
        if sum(c.values()) > 50e6:
            out[t["comm"]] = max(c, key=c.get)
    return out
a, b = states(named), states(hidden)
skip = {"uring_timed", "uring_untimed", "recv_timeout", "vfork_child", "waitpid_child",
        "timerfd_read"}
bad = ["%s %s -> %s" % (k, a[k], b.get(k)) for k in sorted(a) if k not in skip and a[k] != b.get(k)]
print("%s: %d of %d threads in the same state without kernel names" % (
    sys.argv[3], len([k for k in a if k not in skip]) - len(bad), len([k for k in a if k not in skip])))
if bad:
    sys.exit("; ".join(bad))
PY
done
echo "ok: the same states without the kernel's names"

# who woke them: report --wakers pairs each blocked interval with the stack
# of the sched_waking that ended it (fired in the waker's context); the untimed waits are ended by the
# waker thread's wake_all(), the lock waits by lock_holder(); the pairs
# count the wakeups perf script shows from that function to that thread
"$PERFPORT" -q report -i "$WORK/wake.data" --wakers --json >"$WORK/wake.json" || fail "report --wakers: exit $?"
"$PERFPORT" -q report -i "$WORK/wake.data" --wakers --no-tree --no-threads >"$WORK/wake.txt" ||
	fail "report --wakers: exit $?"
grep -q "blocked time by who ended it" "$WORK/wake.txt" || fail "report --wakers prints no waker table"
perf script -i "$WORK/wake.data" -F tid,event,trace,ip,sym 2>"$WORK/stderr.txt" >"$WORK/wake.script" ||
	fail "perf script on the wakeup recording: $(said "$WORK/stderr.txt")"
LOST=$("$PERFPORT" -q info -i "$WORK/wake.data" | sed -n 's/^lost: *\([0-9]*\) samples.*/\1/p')
$PY - "$WORK" "${LOST:-0}" <<'PY' || fail "wakers"
import collections, json, re, sys
w = sys.argv[1]
rep = json.load(open(w + "/wake.json"))
lost = int(sys.argv[2])
tids = {t["comm"]: t["tid"] for t in rep["threads"]}
pairs = collections.defaultdict(collections.Counter)     # blocked -> waker -> ns
counts = collections.Counter()
for p in rep["wakers"]:
    if "--- woken by ---" not in p["stack"]:
        sys.exit("an off-wake stack without its separator: %r" % p["stack"])
    blocked_side = p["stack"][:p["stack"].index("--- woken by ---")]
    # a lock waiter's pause between two waits (tick, a nanosleep) is ended
    # by its timer: no lock wait
    if any(f == "tick" or "nanosleep" in f for f in blocked_side):
        continue
    pairs[p["blocked"]][p["waker"]] += p["ns"]
    counts[(p["blocked"], p["waker"])] += p["count"]
WANT = {"wait_poll_untimed": "wake_all", "wait_epoll_untimed": "wake_all",
        "wait_select_untimed": "wake_all", "wait_sem_untimed": "wake_all",
        "wait_cond_untimed": "wake_all", "wait_flock": "lock_holder",
        "wait_ofd_lock": "lock_holder", "wait_mutex": "lock_holder"}
for blocked, waker in WANT.items():
    tot = sum(pairs[blocked].values())
    share = pairs[blocked][waker] / tot if tot else 0
    print("%-20s woken by %-12s %5.1f%% of %.0f ms" % (blocked, waker, 100 * share, tot / 1e6))
    # a lost sched_switch sample (a lossy recording) loses its wait's stack
    # and the next wait's first waking may be its timer's: the lock waits'
    # shares are judged on a lossless recording only
    if (waker == "wake_all" or not lost) and share < 0.90:
        sys.exit("%s: %.1f%% of its blocked time woken by %s (%s)" % (blocked, 100 * share, waker, dict(pairs[blocked])))
# perf script, replayed: per target thread, the first sched_waking while it
# is switched out (after its sched_switch out, before its switch-in) whose
# waker's stack holds wake_all - a wakeup of a thread not yet asleep ends no
# wait, and perfport pairs the first one of a wait only
script = collections.Counter()
off, woken = {}, {}
for block in open(w + "/wake.script").read().split("\n\n"):
    m = re.search(r"sched:sched_switch:.* prev_pid=(\d+) .*prev_state=(\S+) ==> .* next_pid=(\d+)", block)
    if m:
        prev, state, nxt = int(m.group(1)), m.group(2), int(m.group(3))
        if not state.startswith("R"):
            off[prev], woken[prev] = True, False
        off[nxt] = False
        continue
    m = re.search(r"sched:sched_waking:.* pid=(\d+)", block)
    if m:
        t = int(m.group(1))
        if off.get(t) and not woken.get(t):
            woken[t] = True
            for fn in ("wake_all", "lock_holder"):
                if re.search(r"\s%s\b" % fn, block):
                    script[(t, fn)] += 1
# (the lock waits' pairs too: when perf recorded a timer's waking as the
# first after a lock wait's switch-out, perf script shows it the same way)
for thread, blocked, waker in (("poll_untimed", "wait_poll_untimed", "wake_all"),
                               ("sem_untimed", "wait_sem_untimed", "wake_all"),
                               ("flock", "wait_flock", "lock_holder"),
                               ("mutex", "wait_mutex", "lock_holder")):
    got, want = counts[(blocked, waker)], script[(tids[thread], waker)]
    print("%s: %d wakeups by %s, perf script %d" % (thread, got, waker, want))
    # a few wakings race their switch-out; a lost sched_switch sample loses
    # its wait's stack (perfport still sees the switch in the SWITCH record,
    # perf script does not), so a lossy recording is compared loosely
    slack = 0.1 * want + 3 if not lost else 0.5 * want + 3
    if lost:
        print("(%d samples lost: compared loosely)" % lost)
    if not want or not got or abs(got - want) > slack:
        sys.exit("%s: %d wakeups by %s, perf script shows %d" % (thread, got, waker, want))
PY
echo "ok: report --wakers names who ended each wait, as perf script's wakeups show"

# off-wake stacks for flame graphs: folded -O wakers=true writes the same
# stacks and times as report --wakers; the flamegraph page draws them; a
# recording without wakeups is refused with what to record
"$PERFPORT" -q export -i "$WORK/wake.data" -f folded -O wakers=true -O annotate=false \
	-o "$WORK/offwake.folded" || fail "export folded wakers=true: exit $?"
"$PERFPORT" -q export -i "$WORK/wake.data" -f flamegraph -O wakers=true -o "$WORK/offwake.html" ||
	fail "export flamegraph wakers=true: exit $?"
grep -q -- "--- woken by ---" "$WORK/offwake.html" && grep -q "wake_all" "$WORK/offwake.html" ||
	fail "the off-wake flame graph lacks the separator or the waker"
rc=0; "$PERFPORT" -q export -i "$WORK/bare.data" -f folded -O wakers=true -o "$WORK/none.folded" \
	2>"$WORK/none.err" || rc=$?
[ $rc -eq 2 ] && grep -q "sched:sched_waking" "$WORK/none.err" || fail "wakers=true without wakeups: exit $rc"
$PY - "$WORK" <<'PY' || fail "off-wake folded stacks"
import collections, json, sys
w = sys.argv[1]
rep = json.load(open(w + "/wake.json"))
want = collections.Counter()
for p in rep["wakers"]:
    want[";".join(p["stack"])] += p["ns"]
got = collections.Counter()
for line in open(w + "/offwake.folded"):
    s, v = line.rsplit(" ", 1)
    if "--- woken by ---" not in s.split(";"):
        sys.exit("a line without the separator: %r" % s[:200])
    got[s] += int(v)
if got != want:
    sys.exit("folded wakers=true: %d stacks, report --wakers: %d; %d differ" %
             (len(got), len(want), len(set(got.items()) ^ set(want.items()))))
print("%d off-wake stacks, %.3f s = report --wakers" % (len(got), sum(got.values()) / 1e9))
PY
echo "ok: off-wake stacks for flame graphs"

# programs the rules were not written for: the C++ standard library's waits
# (progs/waits-cxx.cc: std::mutex, std::timed_mutex::try_lock_for,
# std::shared_mutex readers under a writer, std::condition_variable wait and
# wait_for, sleep_for, std::counting_semaphore acquire and try_acquire_for,
# std::future::get, std::barrier), each function's waiting time in its state
if command -v g++ >/dev/null && echo '#include <barrier>' | g++ -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
	g++ -std=c++20 -O1 -g -fno-omit-frame-pointer -pthread -o "$WORK/wcxx" "$TOP/tests/e2e/progs/waits-cxx.cc" ||
		fail "cannot build progs/waits-cxx.cc"
	record "$WORK/cxx.data" $EV -m 4096 --call-graph dwarf,16384 -- "$WORK/wcxx" 1.5
	for c in lock sleep timed-sleep io preempted; do
		"$PERFPORT" -q export -i "$WORK/cxx.data" -f folded -O counter=$c -O value=ns \
			-O annotate=false -o "$WORK/cxx-$c.folded" || fail "export cxx $c: exit $?"
	done
	$PY - "$WORK" <<'PY' || fail "C++ waits"
import collections, sys
w = sys.argv[1]
WANT = {"std_mutex": "lock", "timed_mutex": "lock", "shared_reader": "lock",
        "cv_untimed": "sleep", "cv_timed": "timed-sleep", "sleep_for": "timed-sleep",
        "sem_acquire": "sleep", "sem_try_for": "timed-sleep", "future_get": "sleep",
        "barrier": "sleep"}
tot = collections.defaultdict(collections.Counter)
for c in ("lock", "sleep", "timed-sleep", "io", "preempted"):
    for line in open("%s/cxx-%s.folded" % (w, c)):
        s, v = line.rsplit(" ", 1)
        frames = s.split(";")
        # a lock waiter's pause between waits (tick) is no lock wait
        if any(f.endswith("::tick") for f in frames):
            continue
        for name in WANT:
            # the function itself (future_get's helper thread runs a lambda
            # whose name holds the function's: not the function)
            if "(anonymous namespace)::wait_" + name in frames:
                tot[name][c] += int(v)
bad = []
for name, want in WANT.items():
    t = sum(v for c, v in tot[name].items() if c != "preempted")
    share = tot[name][want] / t if t else 0
    print("C++ %-14s %-12s %5.1f%% of %.0f ms (%s)" % (name, want, 100 * share, t / 1e6,
          ", ".join("%s %.0f ms" % (c, n / 1e6) for c, n in tot[name].most_common())))
    if t < 100e6 or share < 0.95:
        bad.append(name)
if bad:
    sys.exit("C++ waits out of their state: " + ", ".join(bad))
PY
	echo "ok: C++ standard library waits in their states"
else
	echo "(g++ with C++20 is not installed: the C++ waits are not tried)"
fi

# Rust's standard library (progs/waits-rs.rs): a contended Mutex, a RwLock
# reader under a writer, Condvar wait and wait_timeout, thread::sleep. With
# dwarf each in its state; with the registers alone the Mutex too (a futex
# wait for a lock word's contended value), the rest but the RwLock (whose
# futex value says nothing)
if command -v rustc >/dev/null; then
	rustc -O -g -o "$WORK/wrs" "$TOP/tests/e2e/progs/waits-rs.rs" 2>"$WORK/rustc.log" ||
		{ cat "$WORK/rustc.log"; fail "cannot build progs/waits-rs.rs"; }
	record "$WORK/rs-dwarf.data" $EV -e sched:sched_waking -m 1024 --call-graph dwarf,8192 -- "$WORK/wrs" 1.5
	record "$WORK/rs-regs.data" $EV -e sched:sched_waking -m 1024 -g --user-regs=$REGS -- "$WORK/wrs" 1.5
	for v in dwarf regs; do
		for c in lock sleep timed-sleep io preempted; do
			"$PERFPORT" -q export -i "$WORK/rs-$v.data" -f folded -O counter=$c -O value=ns \
				-O annotate=false --group-by thread -o "$WORK/rs-$v-$c.folded" ||
				fail "export rs $v $c: exit $?"
		done
	done
	$PY - "$WORK" "$(rustc --version)" <<'PY' || fail "Rust waits"
import collections, re, sys
w = sys.argv[1]
WANT = {"rs_mutex": "lock", "rs_rwlock": "lock", "rs_condvar": "sleep",
        "rs_cv_timeout": "timed-sleep", "rs_sleep": "timed-sleep"}
bad = []
for v in ("dwarf", "regs"):
    tot = collections.defaultdict(collections.Counter)
    for c in ("lock", "sleep", "timed-sleep", "io", "preempted"):
        for line in open("%s/rs-%s-%s.folded" % (w, v, c)):
            s, val = line.rsplit(" ", 1)
            frames = s.split(";")
            m = re.fullmatch(r"(\S+) \[\d+\]", frames[1]) if len(frames) > 1 else None
            if not m or m.group(1) not in WANT:
                continue
            # a switch seen without its sched_switch sample (perf lost it)
            # has no stack for a rule to match: not judged
            if "[off-cpu: stack not recorded]" in frames:
                continue
            # the lock threads' pause between two locks is no lock wait
            if WANT[m.group(1)] == "lock" and any("sleep" in f for f in frames[2:]):
                continue
            tot[m.group(1)][c] += int(val)
    for name, want in WANT.items():
        t = sum(n for c, n in tot[name].items() if c != "preempted")
        share = tot[name][want] / t if t else 0
        print("%s %-6s %-14s %-12s %5.1f%% of %.0f ms" % (sys.argv[2].split()[1], v, name, want,
              100 * share, t / 1e6))
        if t < 100e6 or (share < 0.95 and not (v == "regs" and name == "rs_rwlock")):
            bad.append("%s %s: %.1f%% %s" % (v, name, 100 * share, want))
if bad:
    sys.exit("; ".join(bad))
PY
	echo "ok: Rust std's waits in their states"
else
	echo "(rustc is not installed: the Rust waits are not tried)"
fi
