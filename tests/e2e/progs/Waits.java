/*
 * Waits.java - HotSpot threads that contend for a monitor, sleep, and wait
 * on one, each a thread named for what it does (the JVM gives the OS
 * thread its name). usage: java Waits.java SECONDS
 *   contend-N  (4) synchronized (LOCK) { ~2 ms of work }, then ~0.5 ms
 *              outside: blocked only entering the monitor
 *   sleeper    Thread.sleep(10)
 *   waiter     LOCK2.wait() without a timeout, notified every 10 ms by notifier
 */
public class Waits {
	static final Object LOCK = new Object(), LOCK2 = new Object();
	static volatile long sink;
	static long end;
	static int ticks;

	static void work(long nanos) {
		long t0 = System.nanoTime(), x = 0;
		while (System.nanoTime() - t0 < nanos)
			x += x * 31 + 7;
		sink += x;
	}

	static Thread named(String name, Runnable r) {
		Thread t = new Thread(r, name);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
		end = System.nanoTime() + (long) (secs * 1e9);
		java.util.List<Thread> all = new java.util.ArrayList<>();
		for (int i = 0; i < 4; i++)
			all.add(named("contend-" + i, () -> {
				while (System.nanoTime() < end) {
					synchronized (LOCK) {
						work(2000000);
					}
					work(500000);
				}
			}));
		all.add(named("sleeper", () -> {
			try {
				while (System.nanoTime() < end)
					Thread.sleep(10);
			} catch (InterruptedException e) {
			}
		}));
		all.add(named("waiter", () -> {
			synchronized (LOCK2) {
				try {
					while (System.nanoTime() < end)
						LOCK2.wait();
				} catch (InterruptedException e) {
				}
			}
		}));
		all.add(named("notifier", () -> {
			try {
				while (System.nanoTime() < end + 50000000L) {
					Thread.sleep(10);
					synchronized (LOCK2) {
						LOCK2.notifyAll();
					}
				}
			} catch (InterruptedException e) {
			}
		}));
		for (Thread t : all)
			t.join();
	}
}
