#!/usr/bin/python3
"""waits_check.py DIR VARIANT... [--skip NAME,...] [--with-lock NAME,...]

The wait primitives of progs/waits.c (one thread each, named after its
primitive) against the state each one's waiting time must land in. Reads
DIR/VARIANT-COUNTER.folded (perfport export -f folded -O counter=COUNTER
-O value=ns --group-by thread) for the counters lock, sleep, timed-sleep,
io and preempted. What a variant must get right depends on what its
recording holds: dwarf (the stack copy) everything; regs (-g --user-regs)
everything but what lies in memory (io_uring's timeout); fp (-g with the
wakers) what the rules and the wakers know; bare (-g alone) what the rules
know. --skip leaves primitives out (say why where it is used);
--with-lock counts a primitive's lock waits as its own (a condition wait
whose mutex its signaller held: recordings of the waits.c that broadcast
under the mutex). Prints a
line per variant and primitive; exits 1 naming those below 95%.
"""
import collections
import re
import sys

args = sys.argv[1:]
skip, with_lock = set(), set()
for opt, into in (("--skip", skip), ("--with-lock", with_lock)):
    if opt in args:
        i = args.index(opt)
        into.update(args[i + 1].split(","))
        del args[i:i + 2]
w, variants = args[0], args[1:]
WANT = {
    "poll_untimed": "sleep", "poll_timed": "timed-sleep",
    "epoll_untimed": "sleep", "epoll_timed": "timed-sleep",
    "select_untimed": "sleep", "select_timed": "timed-sleep",
    "sem_untimed": "sleep", "sem_timed": "timed-sleep",
    "cond_untimed": "sleep", "cond_timed": "timed-sleep",
    "nanosleep": "timed-sleep", "flock": "lock", "ofd_lock": "lock", "mutex": "lock",
    "rwlock": "lock", "mutex_recursive": "lock", "mutex_pi": "lock", "mutex_timed": "lock",
    "barrier": "sleep", "pipe_read": "sleep", "socket_read": "sleep", "eventfd_read": "sleep",
    "waitpid": "sleep", "sigwait": "sleep", "sigtimedwait": "timed-sleep", "fsync": "io",
    "fdatasync": "io", "msync": "io", "read_cold": "io", "read_direct": "io", "page_fault": "io",
    "mutex_adaptive": "lock", "uring_untimed": "io", "uring_timed": "timed-sleep",
    "posix_lock": "lock", "semop": "sleep", "mutex_clocklock": "lock", "vfork": "sleep",
    "timerfd_read": "timed-sleep",
}
LOCKS = ("flock", "ofd_lock", "mutex", "rwlock", "mutex_recursive", "mutex_pi", "mutex_timed",
         "mutex_adaptive", "posix_lock", "mutex_clocklock")
# -g alone (fp, bare): what the rules decide without registers, and with
# the wakers (fp) what their stacks add: a mutex's or rwlock's unlock ended
# the lock waits whose glibc frames -g loses (Debian's glibc has no frame
# pointers); the rest is best effort (a timed wait's timer, fired from an
# idle CPU, is not in a recording of the workload's own threads)
RULES_KNOW = {"cond_untimed", "nanosleep", "sem_untimed", "poll_timed", "epoll_timed",
              "select_timed", "flock", "ofd_lock", "mutex", "mutex_pi", "barrier", "pipe_read",
              "socket_read", "eventfd_read", "waitpid", "fsync", "fdatasync", "msync",
              "read_cold", "read_direct", "page_fault", "mutex_adaptive", "uring_untimed",
              "posix_lock", "vfork", "timerfd_read"}
# and another task's event (a write to the pipe polled, a signal, a
# semaphore's post) says an untimed wait was not ended by a timer
WAKERS_KNOW = RULES_KNOW | {"rwlock", "mutex_timed", "mutex_clocklock", "poll_untimed",
                            "epoll_untimed", "select_untimed", "sigwait", "semop"}
# with the registers (regs): everything but io_uring_enter's timeout, which
# is in a structure on the stack (dwarf copies it); a timed mutex lock is a
# futex wait for a lock word's contended value, a rwlock's is ended by its
# unlock
NEED_STACK = {"uring_timed"}
# the primitives whose waits are page faults (the mapping's, the cold
# file's reads through it)
FAULTS = {"page_fault", "msync", "read_cold", "read_direct"}
# the slow paths of the kernel's sleeping locks: where the I/O threads wait
# for the journal's or the process's mmap lock (state-rules' D rules)
KERNEL_LOCKS = ("rwsem_down_", "__mutex_lock", "rt_mutex_slowlock")
bad = []
for v in variants:
    kind = v.split("-")[-1]
    for name, want in WANT.items():
        if name in skip:
            continue
        tot = collections.Counter()
        for c in ("lock", "sleep", "timed-sleep", "io", "preempted"):
            for line in open("%s/%s-%s.folded" % (w, v, c)):
                s, val = line.rsplit(" ", 1)
                frames = s.split(";")
                # the thread's own time (each primitive runs in a thread of
                # its name); a lock waiter's pause between two waits is no wait
                if not any(re.fullmatch(re.escape(name) + r" \[\d+\]", f) for f in frames[:2]):
                    continue
                if name in LOCKS and any("nanosleep" in f or f == "tick" for f in frames):
                    continue
                # a switch seen without its sched_switch sample has no stack
                # and so no evidence (about one per thread)
                if "[off-cpu: stack not recorded]" in frames:
                    continue
                # a page fault taken on the way (returning to user space,
                # touching the stack) is not the primitive's wait: its wait
                # for the address space's lock (contended when the
                # page_fault thread maps and unmaps, most in a slow VM) is
                # a lock wait, rightly, of another thing
                if name not in FAULTS and any(f in ("do_page_fault", "exc_page_fault") for f in frames):
                    continue
                # nor is a fork's wait for that lock (waitpid's child)
                if "dup_mmap" in frames:
                    continue
                # nor a wait for the C library's own lock (its thread stack
                # cache's, as threads start and end; malloc's arenas'): the
                # thread's, rightly lock, not its primitive's (the sigwait
                # thread's 110 ms once, its holder preempted by two busy
                # loops per CPU)
                if want != "lock" and "__lll_lock_wait_private" in frames:
                    continue
                tot[c] += int(val)
                if c == "lock" and any(f.startswith(KERNEL_LOCKS) for f in frames):
                    tot["kernel-lock"] += int(val)
        # the waiting time: runnable (preempted) time is no wait, and the
        # state of none (a forking waitpid is preempted while its child runs)
        t = sum(v for c, v in tot.items() if c not in ("preempted", "kernel-lock"))
        share = tot[want] / t if t else 0
        if name in with_lock:
            share = (tot[want] + tot["lock"]) / t if t else 0
        if want == "io":
            # the I/O threads also wait for kernel locks they contend on
            # (the journal, the process's mmap lock, which the page_fault
            # thread takes to map and unmap): lock waits, rightly, where
            # the stack is in a kernel lock's slow path, however much of
            # their time the machine's load makes that. Any other lock is
            # wrong: a disk flush's 275 ms wait charged lock (it ran across
            # lost records to a fork's up_write) passed as io + lock
            share = (tot["io"] + tot["kernel-lock"]) / t if t else 0
        print("%-6s %-15s %-12s %5.1f%%  (%s)" % (v, name, want, 100 * share,
              ", ".join("%s %.0f ms" % (c, n / 1e6) for c, n in tot.most_common())))
        if t < 50e6:
            bad.append("%s %s: only %.0f ms off CPU" % (v, name, t / 1e6))
        elif share < 0.95 and (kind == "dwarf" or (kind == "regs" and name not in NEED_STACK) or
                               (kind == "fp" and name in WAKERS_KNOW) or name in RULES_KNOW):
            bad.append("%s %s: %.1f%% %s" % (v, name, 100 * share, want))
if bad:
    sys.exit("; ".join(bad))
