#!/usr/bin/python3
"""Check perfport report --json of the shape workload against what the
workload is known to do and against perf's own records.

usage: account_check.py MODE REPORT.json TASKS.txt [TIMEHIST.txt SCHED.txt] [--stacks STACKS.txt]
       account_check.py switches REPORT.json SCRIPT.txt
       account_check.py released REPORT.json SCRIPT.txt PID
  MODE       per-task or system-wide (tolerance for lifetimes: 2% or 5%)
  TASKS.txt  perf script --show-task-events --show-lost-events -F tid,time
             output: thread names, forks and exits (an independent reading
             of the file); exit 3 if perf lost records; per task, with
             --show-switch-events and -F tid,time,event,trace (the
             sched_switch lines: preempted time)
  TIMEHIST   perf sched timehist output (system-wide only)
  SCHED      perf script -F tid,cpu,time,event,trace of the sched events
  STACKS     perf script -F tid,event,ip,sym of the recording: heavy()'s
             and light()'s on-CPU samples counted from perf's own stacks
"""
import json
import math
import os
import re
import sys

EXPECT = {  # thread name -> the counter its off-CPU time belongs to
    "lockA": "lock",
    "lockB": "lock",
    "napper": "timed-sleep",
    "waiter": "sleep",
    "io": "io",
}
# the waits a thread also makes, by the program's design, besides its main
# one: the napper takes the lockers' mutexes and the condition's, the
# waiter the condition's; on a quiet machine their holders let go at once,
# on a busy one a holder is preempted holding it and the wait is a real
# lock wait (a busy run, issue 52: the napper 0.213 s of lock while lockA
# was preempted 0.210 s). The main state must still be most of the rest,
# so that a misread of the main wait (nanosleep as lock) fails.
ALSO = {
    "napper": ("lock",),
    "waiter": ("lock",),
}
OFF = ("preempted", "lock", "io", "sleep", "timed-sleep")

failures = []


# recording the whole system may catch another shape (tests run at once):
# $SHAPE_PID, when set, is the one recorded
WORKLOAD = int(os.environ["SHAPE_PID"]) if os.environ.get("SHAPE_PID") else None


def ours(t):
    return WORKLOAD is None or t["pid"] == WORKLOAD


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def ns(counters, name):
    return counters.get(name, {}).get("ns", 0)


LOST = re.compile(r"PERF_RECORD_LOST lost (\d+)")


def lost(path):
    """Records perf lost, by the PERF_RECORD_LOST lines of perf script
    --show-lost-events output."""
    return sum(int(m.group(1)) for m in map(LOST.search, open(path)) if m)


def complete(path):
    """Exit 3 (record again) when perf lost records: the forks, exits and
    switches the checks compare are then missing on both sides, each side
    bridging the gap its own way (seen once with two busy loops per CPU:
    30,846 lost, two threads without fork or exit, two others' off-CPU time
    1.19 s more than perf sched timehist's, which had lost their intervals)."""
    n = lost(path)
    if n:
        print("UNJUDGED: perf lost %d records of this recording" % n)
        sys.exit(3)


def tasks(path):
    """tid -> {name, fork, exit, first} from perf script's task events; the
    workload's exec stands for its main thread's fork (perf record enables
    a per-task recording's events there); first: the thread's first sample
    (system-wide, perf's child is recorded before it execs the workload)."""
    out = {}
    for line in open(path):
        m = re.match(r"\s*(\d+)\s+([\d.]+): ", line)
        if m:
            k = out.setdefault(int(m.group(1)), {})
            k.setdefault("first", int(round(float(m.group(2)) * 1e9)))
        m = re.search(r"^\s*\d+\s+([\d.]+): PERF_RECORD_COMM exec: (.+):(\d+)/(\d+)", line)
        if m and m.group(2) == "shape":
            k = out.setdefault(int(m.group(4)), {})
            k["fork"] = k["exec"] = int(round(float(m.group(1)) * 1e9))
        m = re.search(r"^\s*\d+\s+([\d.]+): PERF_RECORD_(FORK|EXIT)\((\d+):(\d+)\)", line)
        if m:
            t = int(round(float(m.group(1)) * 1e9))
            tid = int(m.group(4))
            out.setdefault(tid, {})[m.group(2).lower()] = t
            continue
        m = re.search(r"PERF_RECORD_COMM: (.+):(\d+)/(\d+)", line)
        if m:
            out.setdefault(int(m.group(3)), {})["name"] = m.group(1)
    return out


def switches(report, script):
    """Off-CPU time per thread against the file's own switch records:
    each interval runs from the switch-out (the sched_switch sample, else
    the SWITCH OUT record) to the thread's next SWITCH IN, counted inside
    the profile's span (its samples': nothing is charged outside it)."""
    out, off, n = {}, {}, 0
    rep = json.load(open(report))
    lo, hi = rep["meta"]["first_time"], rep["meta"]["last_time"]
    for line in open(script):
        m = re.match(r"\s*(\d+)\s+([\d.]+):\s+(.*)", line)
        if not m:
            continue
        tid, t, what = int(m.group(1)), round(float(m.group(2)) * 1e9), m.group(3)
        if "sched:sched_switch" in what or "SWITCH OUT" in what:
            out.setdefault(tid, t)
        elif "SWITCH IN" in what and tid in out:
            off[tid] = off.get(tid, 0) + max(0, min(t, hi) - max(out.pop(tid), lo))
            n += 1
    iv = rep["meta"]["offcpu_intervals"]
    got = iv["switch_in"]
    print("intervals: %d from the records, perfport %d ended by a switch-in" % (n, got))
    if got != n:
        fail("interval count %d != %d" % (got, n))
    for t in rep["threads"]:
        mine = sum(ns(t["counters"], k) for k in OFF)
        want = off.get(t["tid"], 0)
        # perf script prints microseconds: allow 1 us per interval
        if abs(mine - want) > 1000 * (1 + n):
            fail("tid %d: off-CPU %d ns, the switch records say %d ns" % (t["tid"], mine, want))
    if failures:
        sys.exit(1)
    print("ok")


def released(report, script, pid):
    """Samples of a thread the kernel has released carry tid -1: each counts
    for the task running on its CPU then, as perf's own records show it
    (perf script --show-task-events -F pid,tid,cpu,time,event,trace of
    cpu-clock and sched_switch): the task of the CPU's last sample, or the
    one its last sched_switch switched in, when that task is of the same
    process (or the sample's pid is -1 too: the kernel released the whole
    process before its last switch) and not the idle task;
    else it stays on tid -1 (a switch perf throttled away leaves the CPU's
    task unknown). Per thread of process
    PID, perfport's on-CPU sample counts equal that reading's, and its
    thread of tid -1 holds the samples of any process left unknown.
    Exit 3: no cpu-clock sample with tid -1 was given to a thread, or perf
    lost records."""
    complete(script)
    line_re = re.compile(r"\s*(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+[\d.]+:\s+(\S+):(.*)")
    task_re = re.compile(r"PERF_RECORD_FORK\((\d+):(\d+)\)|PERF_RECORD_COMM(?: exec)?: .*:(\d+)/(\d+)\s*$")
    cur, pid_of, want = {}, {}, {}
    unknown = given = left = 0
    for line in open(script):
        m = task_re.search(line)
        if m:
            p, tid = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            pid_of[int(tid)] = int(p)
            continue
        m = line_re.match(line)
        if not m:
            continue
        p, tid, cpu, event, rest = (int(m.group(1)), int(m.group(2)), int(m.group(3)),
                                    m.group(4), m.group(5))
        if tid != -1:
            pid_of[tid] = p
        if event == "cpu-clock":
            if tid == -1:
                unknown += 1
                cp, ct = cur.get(cpu, (None, -1))
                # pid -1 too: the kernel has released the whole process,
                # and there is no process to disagree with (a shell of
                # another job, seen once: its -1/-1 sample, then its last
                # sched_switch, prev_pid its pid, prev_state X)
                if ct not in (-1, 0) and (p == -1 or cp in (None, p)):
                    tid = ct
                    given += 1
                else:
                    left += 1
            if p == pid and tid != -1:
                want[tid] = want.get(tid, 0) + 1
            if tid != -1:
                cur[cpu] = (p, tid)
        elif event == "sched:sched_switch":
            nxt = int(re.search(r"next_pid=(-?\d+)", rest).group(1))
            cur[cpu] = (0 if nxt == 0 else pid_of.get(nxt), nxt)
    if not given:
        print("released: no cpu-clock sample with tid -1 to give this time (%d seen)" % unknown)
        sys.exit(3)
    rep = json.load(open(report))
    def on_cpu(t):
        return t["counters"].get("on-cpu", {}).get("count", 0)
    got = {t["tid"]: on_cpu(t) for t in rep["threads"]
           if t["pid"] == pid and t["tid"] < 2**31 and on_cpu(t)}
    got_left = sum(on_cpu(t) for t in rep["threads"] if t["tid"] == 2**32 - 1)
    if got_left != left:  # one thread of tid -1 holds what no process's thread could take
        fail("%d samples left on tid -1, not %d" % (got_left, left))
    if got != want:
        diff = {t: (got.get(t), want.get(t)) for t in set(got) | set(want)
                if got.get(t) != want.get(t)}
        fail("on-CPU samples per thread differ (perfport, reference): %s" % diff)
    if failures:
        sys.exit(1)
    print("released ok: %d of %d samples with tid -1 given to their thread; process %d: %d samples, "
          "%d threads" % (given, unknown, pid, sum(want.values()), len(want)))


SWITCH_REC = re.compile(r"^\s*(-?\d+)\s+([\d.]+): PERF_RECORD_SWITCH (IN|OUT)")
SWITCH_ANY = re.compile(r"^\s*(-?\d+)\s+(?:\[\d+\]\s+)?([\d.]+): sched:sched_switch: .*prev_pid=(\d+) "
                        r"prev_prio=\d+ prev_state=(\S+) ==> .*next_pid=(\d+)")


def preempted(path, exits, lo=0, hi=math.inf):
    """tid -> (ns, intervals) preempted, from perf script's sched_switch
    lines (a switch-out while runnable: prev_state R...) to the thread's
    next switch-in (a sched_switch's next_pid, or a PERF_RECORD_SWITCH IN of
    --show-switch-events), if that is not after its exit record (exits:
    tid -> ns), counted inside the profile's span [lo, hi] (ns)."""
    out, got = {}, {}

    def switch_in(tid, t):
        if tid in out:
            t0 = out.pop(tid)
            if t0 is not None and t * 1e9 <= exits.get(tid, math.inf):
                ns_, n = got.get(tid, (0, 0))
                got[tid] = (ns_ + max(0, round(min(t * 1e9, hi) - max(t0 * 1e9, lo))), n + 1)
    for line in open(path):
        m = SWITCH_ANY.match(line)
        if m:
            t, prev, state, nxt = (float(m.group(2)), int(m.group(3)), m.group(4),
                                   int(m.group(5)))
            out[prev] = t if state.startswith("R") else None
            switch_in(nxt, t)
            continue
        m = SWITCH_REC.match(line)
        if m and m.group(3) == "IN":
            switch_in(int(m.group(1)), float(m.group(2)))
    return got


def fork_waits(known, path):
    """tid -> (fork, first switch-in) in ns: a new thread's wait for its
    first run, which perfport charges as preempted where the switch-in is
    the thread's first event after its fork (a per-task recording's SWITCH
    IN record; a system-wide one's sched_switch to it, before any sample
    of its own; path: perf script's switch lines). Not for the workload's
    main thread (its exec starts it)."""
    first_in = {}
    for line in open(path):
        m = SWITCH_ANY.match(line)
        if m:
            first_in.setdefault(int(m.group(5)), int(round(float(m.group(2)) * 1e9)))
            continue
        m = SWITCH_REC.match(line)
        if m and m.group(3) == "IN":
            first_in.setdefault(int(m.group(1)), int(round(float(m.group(2)) * 1e9)))
    out = {}
    for tid, k in known.items():
        if "fork" not in k or "exec" in k or "first" not in k:
            continue
        t = first_in.get(tid)
        if t is not None and k["fork"] <= t <= k["first"]:
            out[tid] = (k["fork"], t)
    return out


def perf_counts(path, tids):
    """(function, "self" or "total") -> cpu-clock samples of heavy() and
    light() in perf script -F tid,event,ip,sym output, of threads tids: the
    leaf frame's, and those with the function anywhere in the stack."""
    out = {(f, p): 0 for f in ("heavy", "light") for p in ("self", "total")}
    for block in open(path).read().split("\n\n"):
        lines = block.strip("\n").split("\n")
        if not lines or "cpu-clock" not in lines[0] or int(lines[0].split()[0]) not in tids:
            continue
        syms = [(ln.split() + ["", ""])[1] for ln in lines[1:]]
        for f in ("heavy", "light"):
            if syms and syms[0] == f:
                out[f, "self"] += 1
            if f in syms:
                out[f, "total"] += 1
    return out


def main():
    if sys.argv[1] == "switches":
        return switches(sys.argv[2], sys.argv[3])
    if sys.argv[1] == "released":
        return released(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    stacks = None
    if "--stacks" in sys.argv:
        i = sys.argv.index("--stacks")
        stacks = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    mode, report, task_file = sys.argv[1:4]
    sched = sys.argv[5] if len(sys.argv) > 5 else None
    complete(task_file)
    tol = 0.02 if mode == "per-task" else 0.05
    rep = json.load(open(report))
    known = tasks(task_file)

    # ON_CPU split of heavy() and light(): 3:1 in the samples the timer
    # took inside them (their self time), within 5% or within what the
    # samples can tell (three standard errors of the ratio of two sample
    # counts: the nice-19 thread of a loaded machine is sampled little -
    # 3.165 of 3, from a few hundred samples, failed once). Not in their
    # total: a thread preempted often is sampled again as it is switched
    # back in (the timer ran out during the switch; the kernel restarts it
    # 10 us on, in finish_task_switch()), with the stack where it was
    # preempted, and where a nice-19 loop is preempted is not spread as its
    # time is: with two busy loops per CPU 234 of light()'s 471 samples and
    # 326 of heavy()'s 923 were such, a total of 1.960:1 and a self 2.930:1.
    # The totals are held to perf's own count of the same samples instead.
    # Per task only: there cpu-clock runs on the thread's own CPU time, so
    # its samples fall evenly through what it executes; system-wide it runs
    # on each CPU's wall clock, in step with the tick that hands the nice-19
    # thread its slices, and once gave 4.176:1 from 380 and 91 samples
    # (three standard errors: 35 %). System-wide, the counts are held to
    # perf's stacks alone.
    def on_cpu(f, part):
        return f.get(part, {}).get("on-cpu", {})
    # the shape run here ($SHAPE): a system-wide recording may hold another's
    frames = {f["function"]: f for f in rep["frames"] if f["function"] in ("heavy", "light") and
              (not os.environ.get("SHAPE") or f["module"] == os.environ["SHAPE"])}
    if "light" not in frames or not on_cpu(frames["light"], "self").get("ns"):
        fail("no on-CPU time in light()")
    elif "heavy" not in frames:
        fail("no on-CPU time in heavy()")
    else:
        h, l = on_cpu(frames["heavy"], "self"), on_cpu(frames["light"], "self")
        ratio = h.get("ns", 0) / l["ns"]
        hn, ln = h.get("count", 0), l["count"]
        rtol = max(0.05, 3 * math.sqrt(1 / hn + 1 / ln)) if hn and ln else 0.05
        print("on-cpu heavy:light = %.3f in their own code (%s 3 +- %.1f%%, from %d and %d "
              "samples); %.3f with what they called (%d and %d samples)" % (
                  ratio, "want" if mode == "per-task" else "not judged here:", 100 * rtol, hn, ln,
                  on_cpu(frames["heavy"], "total").get("ns", 0) /
                  max(1, on_cpu(frames["light"], "total").get("ns", 0)),
                  on_cpu(frames["heavy"], "total").get("count", 0),
                  on_cpu(frames["light"], "total").get("count", 0)))
        if mode == "per-task" and abs(ratio - 3.0) > 3.0 * rtol:
            fail("heavy:light is %.3f, not 3:1 within %.1f%%" % (ratio, 100 * rtol))
        if stacks:
            want = perf_counts(stacks, {t["tid"] for t in rep["threads"] if ours(t)})
            for fn in ("heavy", "light"):
                for part in ("self", "total"):
                    got = on_cpu(frames[fn], part).get("count", 0)
                    print("  %s %s: %d samples, perf's stacks %d" % (fn, part, got, want[fn, part]))
                    if got != want[fn, part]:
                        fail("%s(): %d on-CPU samples (%s), perf's own stacks hold %d" %
                             (fn, got, part, want[fn, part]))

    # Each thread's waits in its state: >= 90 % of its off-CPU time less
    # what it spent preempted (runnable, not waiting: a loaded machine's
    # share, 202 ms of the napper's 1.992 s in 313 preemptions once, 89.9 %
    # of the whole); that preempted time is held to perf's own switch
    # records: the intervals from a switch-out while runnable (prev_state R,
    # or a switch-out record's preempt flag) to the switch-in, up to the
    # thread's exit record, and inside the profile's span (the recording's
    # samples': perfport charges nothing after the last sample - a loaded
    # machine left the workload's threads 0.4 s between their last sample
    # and their exits once - nor before the first)
    exits = {tid: k["exit"] for tid, k in known.items() if "exit" in k}
    span_lo, span_hi = rep["meta"]["first_time"], rep["meta"]["last_time"]
    pre_ref = preempted(sched if sched else task_file, exits, span_lo, span_hi)
    # and a new thread's wait for its first run, from its fork
    forked = fork_waits(known, sched if sched else task_file)
    for tid, (f, t_in) in forked.items():
        if t_in <= exits.get(tid, math.inf):
            ns_, n = pre_ref.get(tid, (0, 0))
            pre_ref[tid] = (ns_ + max(0, min(t_in, span_hi) - max(f, span_lo)), n + 1)
    seen = set()
    for t in rep["threads"]:
        name = t["comm"]
        if name not in EXPECT and name not in ("cpu", "shape"):
            continue
        if not ours(t):
            continue
        seen.add(name)
        c = t["counters"]
        off = sum(ns(c, k) for k in OFF)
        if name in EXPECT:
            pre, (want, n) = ns(c, "preempted"), pre_ref.get(t["tid"], (0, 0))
            waiting = off - pre
            main = ns(c, EXPECT[name]) / waiting if waiting else 0
            also = sum(ns(c, k) for k in ALSO.get(name, ())) / waiting if waiting else 0
            share = main + also
            states = "/".join((EXPECT[name],) + ALSO.get(name, ()))
            print("%-7s off-CPU %.3f s: preempted %.3f s (%d times, the records %.3f s), of the "
                  "rest %.1f%% %s (%.1f%% %s)" % (name, off / 1e9, pre / 1e9, n, want / 1e9,
                                                 100 * share, states, 100 * main, EXPECT[name]))
            if share < 0.90 or main < 0.5:
                fail("%s: %.1f%% of its off-CPU time not preempted is %s (%.1f%% %s), want >= 90%% "
                     "and most %s (%s)" %
                     (name, 100 * share, states, 100 * main, EXPECT[name], EXPECT[name],
                      ", ".join("%s %.3f" % (k, ns(c, k) / 1e9) for k in OFF)))
            # perf script prints microseconds: 1 us an interval, and 1 %;
            # an interval whose switch-in was missing is perfport's bound
            if not t["bounded"] and abs(pre - want) > 1000 * (n + 1) + 0.01 * want:
                fail("%s: preempted %.6f s, the switch records say %.6f s" %
                     (name, pre / 1e9, want / 1e9))
        # lifetime from perf's own fork and exit records
        k = known.get(t["tid"], {})
        if "fork" not in k or "exit" not in k:
            fail("%s [%d]: no fork/exit in perf script's task events" % (name, t["tid"]))
            continue
        # perfport's thread lives from its fork where its first run's
        # switch-in was recorded (its wait for that run is charged: 320 ms
        # for the napper and the waiter once, with two busy loops per CPU
        # at load 17), else from its first switch-in or sample; the
        # workload's main thread from its exec or its first sample (of a
        # system-wide recording, perf's child before it execs the
        # workload: once on a loaded machine 2.293 s covered, 2.068 s from
        # the exec, 10.9 %)
        if "exec" in k:
            start = min(k["exec"], k.get("first", k["exec"]))
        elif t["tid"] in forked:
            start = k["fork"]
        else:
            start = max(k["fork"], k.get("first", k["fork"]))
        life = min(k["exit"], span_hi) - max(start, span_lo)
        covered = t["run_ns"] + off
        err = abs(covered - life) / life
        print("%-7s run %.3f + off %.3f = %.3f s, lifetime %.3f s (%.2f%%), %d bounded" %
              (name, t["run_ns"] / 1e9, off / 1e9, covered / 1e9, life / 1e9, 100 * err,
               t["bounded"]))
        if err > tol:
            fail("%s: on + off CPU %.3f s vs lifetime %.3f s: %.2f%% > %.0f%%" %
                 (name, covered / 1e9, life / 1e9, 100 * err, 100 * tol))
    missing = (set(EXPECT) | {"cpu", "shape"}) - seen
    if missing:
        fail("threads missing from the report: " + ", ".join(sorted(missing)))

    if len(sys.argv) > 5 and not timehist(rep, sys.argv[4], sys.argv[5], known, forked) and \
            not failures:
        # every thread lost a switch-in (this VM drops some): nothing to
        # compare with timehist, which is not a fault of the accounting
        print("UNCOMPARED: no thread with complete switch records")
        sys.exit(3)
    if failures:
        sys.exit(1)
    print("ok")


SWITCH = re.compile(r"^\s*(-?\d+)\s+\[\d+\]\s+([\d.]+): sched:sched_switch: .*prev_pid=(\d+) "
                    r"prev_prio=\d+ prev_state=(\S+) ==> .*next_pid=(\d+)")
WAKEUP = re.compile(r"^\s*-?\d+\s+\[\d+\]\s+([\d.]+): sched:sched_wakeup: .* pid=(\d+) ")


def delays(path, tids, exits):
    """Scheduling delay per thread from perf script's sched_switch and
    sched_wakeup lines: switch-in minus the first wakeup since the
    switch-out.

    Returns (ours, as_timehist). ours: perfport's definition, over the
    switch-outs that were not preemptions (R: a preempted thread's whole
    interval is its delay, and perfport counts it as preempted time).
    as_timehist: perf sched timehist's (perf 6.1): every switch-out, a
    preempted one too, delay only from a wakeup after it; and without what
    timehist cannot attribute: it charges a run's delay at the thread's next
    switch-out, to that sample's tid, and while a thread exits its samples
    carry tid -1.

    unseen: per thread, the waits (switch-out to switch-in) timehist cannot
    attribute, for the same reason: those before a run whose switch-out
    sample is not the thread's (as it exits: tid -1), or with no switch-out
    after it; only those that end before the thread's exit record (exits:
    tid -> ns), where its lifetime ends, for perfport as for the lifetime
    check (released, it may still be preempted before its last switch-out).
    """
    out, pending = {}, {}
    ours = {t: 0.0 for t in tids}
    as_th = {t: 0.0 for t in tids}
    unseen = {t: 0.0 for t in tids}
    for line in open(path):
        m = SWITCH.match(line)
        if m:
            tid, t, prev, state, nxt = (int(m.group(1)), float(m.group(2)), int(m.group(3)),
                                        m.group(4), int(m.group(5)))
            if prev in tids:
                if prev in pending:
                    d_ours, d_any, waited = pending.pop(prev)
                    ours[prev] += d_ours
                    if tid == prev:
                        as_th[prev] += d_any
                    elif waited:
                        unseen[prev] += waited[0]
                out[prev] = (state, None, t)
            if nxt in tids and nxt in out:
                state, woke, left = out.pop(nxt)
                d_any = t - woke if woke is not None else 0.0
                alive = t * 1e9 <= exits.get(nxt, math.inf)
                pending[nxt] = (d_any if state[0] != "R" else 0.0, d_any,
                                (t - left,) if alive else ())
            continue
        m = WAKEUP.match(line)
        if m:
            pid = int(m.group(2))
            if pid in out and out[pid][1] is None:
                out[pid] = (out[pid][0], float(m.group(1)), out[pid][2])
    for tid, (d_ours, _, waited) in pending.items():  # a last run with no switch-out after it
        ours[tid] += d_ours
        unseen[tid] += sum(waited)
    return tuple({t: v * 1e9 for t, v in d.items()} for d in (ours, as_th, unseen))


def timehist(rep, path, sched_path, known, forked):
    """Per-thread off-CPU time and scheduling delay against perf sched
    timehist (an independent computation from the same records).

    timehist prints, at each switch-out, the wait before that run (switch-out
    to switch-in) and the scheduling delay (first wakeup to switch-in). Only
    threads whose switch-ins were all recorded are compared. The off-CPU
    time is compared with timehist's waits plus those timehist cannot
    attribute (delays()' unseen): a thread's last switch-out, as it exits,
    is a sample of tid -1, which timehist charges to a task ":-1", with the
    wait before that run; and a new thread's wait for its first run, from
    its fork (forked: fork_waits()), which no switch-out opens; the shape's threads all exit at once, and on a
    loaded machine three of them waited 28 ms each for that last run, 1.40 %
    of their off-CPU time (a failure seen once before, four threads off by
    the same 56 ms, 2.85 % against 2 %, is this). The delay is
    checked twice: perfport against a reference computed from perf script's
    lines (2%), and that reference, counted as timehist counts, against
    timehist (2%, plus the microsecond each printed value may lose).
    """
    wait, delay, lines = {}, {}, {}
    for line in open(path):
        m = re.match(r"\s*[\d.]+\s+\[\d+\]\s+(\S+)\[(\d+)/\d+\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)",
                     line)
        if m:
            tid = int(m.group(2))
            wait[tid] = wait.get(tid, 0) + float(m.group(3)) * 1e6
            delay[tid] = delay.get(tid, 0) + float(m.group(4)) * 1e6
            lines[tid] = lines.get(tid, 0) + 1
    tids = {t["tid"] for t in rep["threads"] if t["comm"] in EXPECT and ours(t)}
    ref, ref_th, unseen = delays(sched_path, tids,
                                 {t: k["exit"] for t, k in known.items() if "exit" in k})
    for tid, (f, t_in) in forked.items():
        unseen[tid] = unseen.get(tid, 0) + t_in - f
    compared = 0
    for t in rep["threads"]:
        tid = t["tid"]
        if (t["comm"] not in EXPECT or not ours(t) or t["bounded"] or t["open_at_end"] or
                tid not in wait):
            continue
        compared += 1
        c = t["counters"]
        off = sum(ns(c, k) for k in OFF)
        woke = t["sched_delay_ns"] - ns(c, "preempted")
        seen_wait = wait[tid] + unseen[tid]
        err = abs(off - seen_wait) / seen_wait
        rerr = abs(woke - ref[tid]) / ref[tid] if ref[tid] else abs(woke) > 1e3
        terr = abs(ref_th[tid] - delay[tid]) / delay[tid] if delay[tid] else 0
        print("%-7s off-CPU %.3f s vs timehist wait %.3f s + %.3f s it cannot attribute "
              "(%.3f%%); sched delay %.3f ms vs %.3f ms from the records (%.2f%%); as timehist "
              "counts it %.3f ms from the records, %.3f ms by timehist (%.2f%%)" % (
                  t["comm"], off / 1e9, wait[tid] / 1e9, unseen[tid] / 1e9, 100 * err,
                  woke / 1e6, ref[tid] / 1e6, 100 * rerr, ref_th[tid] / 1e6,
                  delay[tid] / 1e6, 100 * terr))
        if err > 0.02:
            fail("%s: off-CPU time differs from perf sched timehist's (with the waits it "
                 "cannot attribute) by %.2f%%" % (t["comm"], 100 * err))
        if rerr > 0.02:
            fail("%s: scheduling delay differs from the records' by %.2f%%" %
                 (t["comm"], 100 * rerr))
        # timehist prints each delay cut to whole microseconds: up to 1 us
        # less per line, on top of the 2%
        if abs(ref_th[tid] - delay[tid]) > 0.02 * delay[tid] + 1000 * lines[tid]:
            fail("%s: the records' scheduling delay differs from perf sched timehist's "
                 "by %.2f%%, more than its rounding explains" % (t["comm"], 100 * terr))
    return compared


if __name__ == "__main__":
    main()
