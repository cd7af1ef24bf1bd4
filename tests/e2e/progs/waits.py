"""waits.py - CPython threads that wait for the GIL, sleep, and block on a
queue, each in an OS thread named for what it does; every wait is timed
by the program itself. usage: waits.py SECONDS OUT.json
  gil-N     (4) pure-Python loops: off CPU only to wait for the GIL
  sleeper   a loop of work, then time.sleep(0.01): timed sleeps, and the
            GIL taken back after each
  consumer  queue.get() without a timeout, fed every 10 ms by producer
  producer  time.sleep(0.01), then queue.put()
"""
import ctypes
import json
import queue
import sys
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)
SECS = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
END = time.monotonic() + SECS
spent = {}


def name(n):
    libc.prctl(15, n.encode(), 0, 0, 0)     # PR_SET_NAME: the thread's comm


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def gil(n):
    name("gil-%d" % n)
    while time.monotonic() < END:
        spin(20000)


def sleeper():
    name("sleeper")
    calls, t = 0, 0.0
    while time.monotonic() < END:
        spin(20000)
        t0 = time.perf_counter()
        time.sleep(0.01)
        t += time.perf_counter() - t0
        calls += 1
    spent["sleeper"] = {"calls": calls, "s": t}


q = queue.Queue()


def producer():
    name("producer")
    while time.monotonic() < END + 0.05:
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
        calls += 1
        if item is None:
            break
    # its life too, from before it was started: a new thread waits for the
    # GIL before its first line, and a GIL request seen between gets makes
    # it wait outside them
    spent["consumer"] = {"calls": calls, "s": t, "life": time.perf_counter() - STARTED}


threads = [threading.Thread(target=gil, args=(i,)) for i in range(4)]
threads += [threading.Thread(target=f) for f in (sleeper, producer, consumer)]
STARTED = time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
json.dump(spent, open(sys.argv[2], "w"))
