# Two processes writing one SQLite database (tests/e2e/57-sqlite.sh):
# sqlitewaits.py SECONDS ROLE DB. Each takes the write lock (BEGIN
# IMMEDIATE) in turn, with a 10 s busy timeout (SQLite's busy handler
# sleeps and tries again while the other holds it); the holder keeps it
# 20 ms each time. Each times its own waits for the lock, and its COMMITs
# (which may wait for the other's read lock too, besides writing), and
# prints "ACCT sq_ROLE WAITS MS COMMIT-MS" (its thread is named sq_ROLE).
import ctypes
import sqlite3
import sys
import time

secs, role, db = float(sys.argv[1]), sys.argv[2], sys.argv[3]
ctypes.CDLL(None).prctl(15, ("sq_" + role).encode(), 0, 0, 0)   # PR_SET_NAME
c = sqlite3.connect(db, timeout=10.0, isolation_level=None)
c.execute("create table if not exists t (x)")
t0 = time.monotonic()
n, waited, committing = 0, 0.0, 0.0
while time.monotonic() - t0 < secs:
    a = time.monotonic()
    c.execute("begin immediate")
    waited += time.monotonic() - a
    n += 1
    c.execute("insert into t values (?)", (n,))
    if role == "holder":
        time.sleep(0.02)
    a = time.monotonic()
    c.execute("commit")
    committing += time.monotonic() - a
    time.sleep(0.005 if role == "holder" else 0.001)
print("ACCT sq_%s %d %.3f %.3f" % (role, n, waited * 1000, committing * 1000), flush=True)
