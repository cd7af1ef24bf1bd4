"""locks.py - CPython threads that wait on threading's locks and on what
threading builds from them, each in an OS thread named for what it does;
every wait is timed by the program itself. usage: locks.py SECONDS OUT.json
  holder     takes the lock, sleeps 4 ms in it, lets go, sleeps 1 ms
  lock-N     (2) take the contended threading.Lock (`with`, .acquire())
  rholder    as holder, with an RLock
  rlock      takes the contended RLock
  consumer   queue.get() without a timeout (a Condition's wait), fed every
             10 ms by producer
  producer   time.sleep(0.01), then queue.put()
  event      Event.wait(0.01) on an event never set: its timer ends each wait
The main thread joins them (Thread.join).
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


lock = threading.Lock()
rlock = threading.RLock()


def holder(lk, n):
    name(n)
    while time.monotonic() < END:
        with lk:
            time.sleep(0.004)
        time.sleep(0.001)


def contender(n, lk, how):
    name(n)
    calls, t = 0, 0.0
    while time.monotonic() < END:
        t0 = time.perf_counter()
        if how == "with":
            with lk:
                t += time.perf_counter() - t0
        else:
            lk.acquire()
            t += time.perf_counter() - t0
            lk.release()
        calls += 1
        time.sleep(0.0005)
    spent[n] = {"calls": calls, "s": t}


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
        if item is None:
            break
        calls += 1
    spent["consumer"] = {"calls": calls, "s": t}


def event():
    name("event")
    ev = threading.Event()
    calls, t = 0, 0.0
    while time.monotonic() < END:
        t0 = time.perf_counter()
        ev.wait(0.01)
        t += time.perf_counter() - t0
        calls += 1
    spent["event"] = {"calls": calls, "s": t}


threads = [threading.Thread(target=holder, args=(lock, "holder")),
           threading.Thread(target=contender, args=("lock-0", lock, "with")),
           threading.Thread(target=contender, args=("lock-1", lock, "acquire")),
           threading.Thread(target=holder, args=(rlock, "rholder")),
           threading.Thread(target=contender, args=("rlock", rlock, "with")),
           threading.Thread(target=producer), threading.Thread(target=consumer),
           threading.Thread(target=event)]
for th in threads:
    th.start()
for th in threads:
    th.join()
json.dump(spent, open(sys.argv[2], "w"))
