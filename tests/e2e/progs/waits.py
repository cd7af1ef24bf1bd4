"""waits.py - CPython threads that wait for the GIL, sleep, and block on a
queue, each in an OS thread named for what it does; every wait is timed
by the program itself. usage: waits.py SECONDS OUT.json
  gil-N     (4) pure-Python loops: off CPU only to wait for the GIL
  sleeper   a loop of work, then time.sleep(0.01): timed sleeps, and the
            GIL taken back after each
  consumer  queue.get() without a timeout, fed every 10 ms by producer
  producer  time.sleep(0.01), then queue.put()
It runs SECONDS at least, and on until it has done enough to be judged, by
its own count: MIN_CALLS sleeps and gets, and every gil-N blocked (off CPU
and not runnable, by the kernel's /proc/thread-self/schedstat) MIN_BLOCKED
seconds - on a loaded machine the loops get the CPU so seldom that in
SECONDS the sleeper may not finish one sleep - but no longer than
SECONDS * 20. OUT.json says what each did, and "ended" why it stopped.
"""
import ctypes
import json
import queue
import sys
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)
SECS = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
START = time.monotonic()
END = START + SECS
LAST = START + SECS * 20
MIN_CALLS = 20
MIN_BLOCKED = 0.6
spent = {}
done = {"sleeper": 0, "consumer": 0}    # sleeps and gets completed so far
ended = []


def blocked():
    """This thread's seconds off CPU and not runnable since it started
    (wall time less its run time and its wait on a run queue), or None
    where the kernel has no schedstat."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            ran, queued = (int(v) / 1e9 for v in f.read().split()[:2])
    except (OSError, ValueError):
        return None
    return time.monotonic() - threading.current_thread().born - ran - queued


def enough():
    """Whether every thread has done enough: SECONDS gone, and every count
    at its least; or the last moment reached."""
    if ended:
        return True
    now = time.monotonic()
    if now < END:
        return False
    short = [k for k, n in done.items() if n < MIN_CALLS]
    short += [k for k in LOOPS if spent[k]["blocked"] is not None and
              spent[k]["blocked"] < MIN_BLOCKED]
    if short and now < LAST:
        return False
    ended.append("short of its count at %.0f s: %s" % (now - START, ", ".join(sorted(short)))
                 if short else "done at %.1f s" % (now - START))
    return True


def name(n):
    libc.prctl(15, n.encode(), 0, 0, 0)     # PR_SET_NAME: the thread's comm


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def born():
    threading.current_thread().born = time.monotonic()


def gil(n):
    born()
    name("gil-%d" % n)
    me = spent["gil-%d" % n]
    while not enough():
        spin(20000)
        me["blocked"] = blocked()
        me["rounds"] += 1


def sleeper():
    name("sleeper")
    calls, t = 0, 0.0
    while not enough():
        spin(20000)
        t0 = time.perf_counter()
        time.sleep(0.01)
        t += time.perf_counter() - t0
        calls += 1
        done["sleeper"] = calls
    spent["sleeper"] = {"calls": calls, "s": t}


q = queue.Queue()


def producer():
    name("producer")
    while not ended:
        time.sleep(0.01)
        q.put(1)
    q.put(None)


def consumer():
    name("consumer")
    calls, t = 0, 0.0
    while True:
        t0 = time.perf_counter()
        item = q.get()
        t += time.perf_counter() - t0
        if item is None:
            break
        calls += 1
        done["consumer"] = calls
    # its life too, from before it was started: a new thread waits for the
    # GIL before its first line, and a GIL request seen between gets makes
    # it wait outside them
    spent["consumer"] = {"calls": calls, "s": t, "life": time.perf_counter() - STARTED}


# a loop not yet started has blocked 0 s; without schedstat its own
# "blocked" is None and only its time counts
LOOPS = ["gil-%d" % i for i in range(4)]
for k in LOOPS:
    spent[k] = {"blocked": 0.0, "rounds": 0}
threads = [threading.Thread(target=gil, args=(i,)) for i in range(4)]
threads += [threading.Thread(target=f) for f in (sleeper, producer, consumer)]
STARTED = time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
spent["ended"] = ended[0]
json.dump(spent, open(sys.argv[2], "w"))
