/*
 * Waits.java - HotSpot threads that contend for a monitor, sleep, and wait
 * on one, each a thread named for what it does (the JVM gives the OS
 * thread its name). usage: java Waits SECONDS [OUT.json]
 *   contend-N  (4) synchronized (LOCK) { ~2 ms of work }, then ~0.5 ms
 *              outside: blocked only entering the monitor
 *   sleeper    Thread.sleep(10)
 *   waiter     LOCK2.wait() without a timeout, notified every 10 ms by notifier
 * It runs SECONDS at least, and on until it has done enough to be judged,
 * by its own count: every contender blocked (off CPU and not runnable, by
 * the kernel's /proc/thread-self/schedstat) MIN_BLOCKED_MS in its loop,
 * MIN_CALLS sleeps and notified waits - on a loaded machine the threads get
 * the CPU so seldom that SECONDS may hold almost none of it - but no longer
 * than SECONDS * 20. OUT.json says what each did, and "ended" why it
 * stopped.
 */
import java.nio.file.Files;
import java.nio.file.Path;

public class Waits {
	static final Object LOCK = new Object(), LOCK2 = new Object();
	static final int MIN_CALLS = 20;
	static final long MIN_BLOCKED_MS = 600;
	static volatile long sink;
	static volatile boolean stop;
	static volatile int sleeps, waits;
	static long sleptNanos;
	static final long[] blockedNanos = new long[4];

	/* this thread's nanoseconds off CPU and not runnable since it began: wall
	 * time less its run time and its wait on a run queue (schedstat) */
	static long blocked(long born) {
		try {
			String[] f = Files.readString(Path.of("/proc/thread-self/schedstat")).trim().split(" ");
			return System.nanoTime() - born - Long.parseLong(f[0]) - Long.parseLong(f[1]);
		} catch (java.io.IOException | RuntimeException e) {
			return Long.MAX_VALUE; /* no schedstat: only the time counts */
		}
	}

	static void work(long nanos) {
		long t0 = System.nanoTime(), x = 0;
		while (System.nanoTime() - t0 < nanos)
			x += x * 31 + 7;
		sink += x;
	}

	/* contend-ME's loop; ME -1: one round, in the main thread */
	static void contend(int me) {
		/* the thread's blocked time before its loop (its start) left out */
		long born = System.nanoTime(), before = blocked(born);
		for (int k = 1; me < 0 ? k == 1 : !stop; k++) {
			synchronized (LOCK) {
				work(me < 0 ? 1000 : 2000000);
			}
			work(me < 0 ? 1000 : 500000);
			if (me >= 0 && k % 8 == 0)
				blockedNanos[me] = before == Long.MAX_VALUE ? before : blocked(born) - before;
		}
		if (me < 0)
			blocked(born);
	}

	static Thread named(String name, Runnable r) {
		Thread t = new Thread(r, name);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
		long start = System.nanoTime();
		long end = start + (long) (secs * 1e9), last = start + (long) (secs * 20e9);
		java.util.List<Thread> all = new java.util.ArrayList<>(), contenders = new java.util.ArrayList<>();
		/* once here first, so that the contenders find every class they use
		 * loaded and initialised: else, started together on a loaded
		 * machine, they wait for each other's loading of them (0.06-0.10 s
		 * of a contender's 1 s of waits) and not only for the monitor */
		contend(-1);
		for (int i = 0; i < 4; i++) {
			final int me = i;
			contenders.add(named("contend-" + i, () -> contend(me)));
		}
		all.addAll(contenders);
		all.add(named("sleeper", () -> {
			try {
				while (!stop) {
					long t0 = System.nanoTime();
					Thread.sleep(10);
					sleptNanos += System.nanoTime() - t0;
					sleeps++;
				}
			} catch (InterruptedException e) {
			}
		}));
		all.add(named("waiter", () -> {
			synchronized (LOCK2) {
				try {
					while (!stop) {
						LOCK2.wait();
						waits++;
					}
				} catch (InterruptedException e) {
				}
			}
		}));
		Thread notifier = named("notifier", () -> {
			try {
				/* on past the others' end: the waiter sees it */
				for (int after = 0; after < 5; after += stop ? 1 : 0) {
					Thread.sleep(10);
					synchronized (LOCK2) {
						LOCK2.notifyAll();
					}
				}
			} catch (InterruptedException e) {
			}
		});
		/* the main thread watches the counts, off CPU between looks */
		String ended = null, blocked = "";
		while (ended == null) {
			Thread.sleep(20);
			long now = System.nanoTime();
			java.util.List<String> shortOf = new java.util.ArrayList<>();
			StringBuilder b = new StringBuilder();
			for (int i = 0; i < 4; i++) {
				long ms = blockedNanos[i] / 1000000;
				b.append(String.format("\"contend-%d\": %d, ", i, ms));
				if (ms < MIN_BLOCKED_MS)
					shortOf.add("contend-" + i);
			}
			blocked = b.toString();
			if (sleeps < MIN_CALLS)
				shortOf.add("sleeper");
			if (waits < MIN_CALLS)
				shortOf.add("waiter");
			if (now < end)
				continue;
			if (shortOf.isEmpty())
				ended = String.format("done at %.1f s", (now - start) / 1e9);
			else if (now >= last)
				ended = String.format("short of its count at %.0f s: %s", (now - start) / 1e9,
						String.join(", ", shortOf));
		}
		stop = true;
		for (Thread t : all)
			t.join();
		notifier.join();
		String json = String.format("{\"ended\": \"%s\", \"blocked_ms\": {%s}, \"sleeper\": {\"calls\": %d, \"s\": %.6f}, \"waiter\": {\"calls\": %d}}\n",
				ended, blocked.replaceAll(", $", ""), sleeps, sleptNanos / 1e9, waits);
		if (args.length > 1)
			java.nio.file.Files.writeString(java.nio.file.Path.of(args[1]), json);
		else
			System.out.print(json);
	}
}
