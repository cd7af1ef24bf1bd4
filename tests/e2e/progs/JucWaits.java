/*
 * JucWaits.java - java.util.concurrent's waits, one thread each, named for
 * what it does (the JVM gives the OS thread its name); a feeder thread ends
 * each untimed wait every 10 ms. usage: java JucWaits SECONDS
 *   latch      CountDownLatch.await(), a fresh latch counted down by feeder
 *   condition  Condition.await() on a ReentrantLock, signalled by feeder
 *   queue      BlockingQueue.take(), fed by feeder
 *   rlock-N    (2) ReentrantLock.lock() while holder holds it ~5 ms of 6
 *   reader     ReentrantReadWriteLock's read lock while holder holds the
 *              write lock ~5 ms of 6
 * Every wait parks in LockSupport.park (Unsafe_Park): only the Java frames
 * above it say which it is.
 */
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

public class JucWaits {
	static volatile long sink;
	static long end;

	static boolean running() {
		return System.nanoTime() < end;
	}

	static void work(long nanos) {
		long t0 = System.nanoTime(), x = 0;
		while (System.nanoTime() - t0 < nanos)
			x += x * 31 + 7;
		sink += x;
	}

	static void nap(long millis) {
		try {
			Thread.sleep(millis);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
	}

	static Thread named(String name, Runnable r) {
		Thread t = new Thread(r, name);
		t.setDaemon(true);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
		end = System.nanoTime() + (long) (secs * 1e9);
		AtomicReference<CountDownLatch> latch = new AtomicReference<>(new CountDownLatch(1));
		ReentrantLock condLock = new ReentrantLock();
		Condition cond = condLock.newCondition();
		long[] signals = { 0 };
		BlockingQueue<Integer> queue = new ArrayBlockingQueue<>(16);
		ReentrantLock rlock = new ReentrantLock();
		ReentrantReadWriteLock rw = new ReentrantReadWriteLock();
		java.util.List<Thread> all = new java.util.ArrayList<>();

		all.add(named("latch", () -> {
			while (running()) {
				CountDownLatch l = latch.get();
				try {
					l.await();
				} catch (InterruptedException e) {
					return;
				}
				latch.compareAndSet(l, new CountDownLatch(1));
			}
		}));
		all.add(named("condition", () -> {
			long seen = 0;
			while (running()) {
				condLock.lock();
				try {
					while (signals[0] == seen && running())
						cond.await();
					seen = signals[0];
				} catch (InterruptedException e) {
					return;
				} finally {
					condLock.unlock();
				}
			}
		}));
		all.add(named("queue", () -> {
			while (running()) {
				try {
					queue.take();
				} catch (InterruptedException e) {
					return;
				}
			}
		}));
		for (int i = 0; i < 2; i++)
			all.add(named("rlock-" + i, () -> {
				while (running()) {
					rlock.lock();
					try {
						work(200000);
					} finally {
						rlock.unlock();
					}
					nap(1);
				}
			}));
		all.add(named("reader", () -> {
			while (running()) {
				rw.readLock().lock();
				try {
					work(100000);
				} finally {
					rw.readLock().unlock();
				}
				nap(1);
			}
		}));
		all.add(named("holder", () -> {
			while (running()) {
				rlock.lock();
				rw.writeLock().lock();
				try {
					work(5000000);
				} finally {
					rw.writeLock().unlock();
					rlock.unlock();
				}
				nap(1);
			}
		}));
		/* ends each untimed wait once */
		Runnable feed = () -> {
			latch.get().countDown();
			condLock.lock();
			try {
				signals[0]++;
				cond.signalAll();
			} finally {
				condLock.unlock();
			}
			queue.offer(1);
		};
		Thread feeder = named("feeder", () -> {
			while (running()) {
				nap(10);
				feed.run();
			}
			/* the untimed waits see the end */
			for (int k = 0; k < 3; k++) {
				feed.run();
				nap(10);
			}
		});
		feeder.join();
		for (Thread t : all)
			t.join(1000);
	}
}
