// waits-cxx.cc - the C++ standard library's wait primitives, one thread each
// (named after its function, less "wait_"), waiting about 10 ms at a time
// for SECONDS: the untimed ones ended by a notifier thread or a holder, the
// timed ones by their timeout. 71-wait-states checks where each one's
// waiting time lands; the rules were written for glibc's C names, not these.
// usage: waits-cxx SECONDS
#include <pthread.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <latch>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;
constexpr auto tick_len = std::chrono::milliseconds(10);

clk::time_point end_at;
std::atomic<bool> done{false};

std::mutex plain;
std::timed_mutex timed;
std::shared_mutex shared;
std::mutex cv_lock;
std::condition_variable cv;
unsigned long cv_ticks;
std::counting_semaphore<64> sem_posted{0}, sem_never{0};
std::barrier<> rounds_barrier{2};

bool running()
{
	return clk::now() < end_at;
}

// The pause between two lock waits: its own frame, so the test can tell it apart.
__attribute__((noinline)) void tick()
{
	std::this_thread::sleep_for(tick_len);
}

__attribute__((noinline)) void wait_std_mutex()
{
	while (running()) {
		{ std::lock_guard<std::mutex> g(plain); }
		tick();
	}
}

__attribute__((noinline)) void wait_timed_mutex()
{
	while (running()) {
		if (timed.try_lock_for(std::chrono::seconds(5)))
			timed.unlock();
		tick();
	}
}

// A reader while the writer (the holder) holds the lock.
__attribute__((noinline)) void wait_shared_reader()
{
	while (running()) {
		{ std::shared_lock<std::shared_mutex> g(shared); }
		tick();
	}
}

__attribute__((noinline)) void wait_cv_untimed()
{
	std::unique_lock<std::mutex> l(cv_lock);
	while (running()) {
		unsigned long seen = cv_ticks;
		cv.wait(l, [seen] { return cv_ticks != seen || done.load(); });
	}
}

__attribute__((noinline)) void wait_cv_timed()
{
	std::mutex m;
	std::condition_variable never;
	std::unique_lock<std::mutex> l(m);
	while (running())
		never.wait_for(l, tick_len);
}

__attribute__((noinline)) void wait_sleep_for()
{
	while (running())
		std::this_thread::sleep_for(tick_len);
}

__attribute__((noinline)) void wait_sem_acquire()
{
	while (running())
		sem_posted.acquire();
}

__attribute__((noinline)) void wait_sem_try_for()
{
	while (running())
		(void)sem_never.try_acquire_for(tick_len);
}

__attribute__((noinline)) void wait_future_get()
{
	while (running()) {
		std::promise<int> p;
		std::future<int> f = p.get_future();
		std::thread t([&p] {
			std::this_thread::sleep_for(tick_len);
			p.set_value(1);
		});
		(void)f.get();
		t.join();
	}
}

__attribute__((noinline)) void wait_barrier()
{
	while (!done.load())
		rounds_barrier.arrive_and_wait();
}

// Holds the locks 10 ms at a time against their waiters, letting go for
// 5 ms: a waiter's own 10 ms pause then ends while they are held again, so
// each of its rounds waits (with equal pauses, a waiter could fall in step
// with the holder and wait little: shared_reader once waited under 100 ms).
void holder()
{
	pthread_setname_np(pthread_self(), "holder");
	while (running()) {
		{
			std::scoped_lock<std::mutex, std::timed_mutex> g(plain, timed);
			std::unique_lock<std::shared_mutex> w(shared);
			tick();
		}
		std::this_thread::yield();
		std::this_thread::sleep_for(tick_len / 2);
	}
}

// Ends one wait of each untimed waiter every 10 ms.
void notifier()
{
	pthread_setname_np(pthread_self(), "notifier");
	while (running()) {
		tick();
		{
			std::lock_guard<std::mutex> g(cv_lock);
			cv_ticks++;
		}
		cv.notify_all();
		sem_posted.release();
		rounds_barrier.arrive_and_wait();
	}
	done = true;
	{
		std::lock_guard<std::mutex> g(cv_lock);
		cv_ticks++;
	}
	cv.notify_all();
	sem_posted.release(8);
	rounds_barrier.arrive_and_drop();
}

struct wait {
	void (*fn)();
	const char *name;
};

} // namespace

int main(int argc, char **argv)
{
#define W(f) wait{ wait_##f, #f }
	static const wait waits[] = {
		W(std_mutex), W(timed_mutex), W(shared_reader), W(cv_untimed), W(cv_timed),
		W(sleep_for), W(sem_acquire), W(sem_try_for), W(future_get), W(barrier),
	};
	double secs = argc > 1 ? std::atof(argv[1]) : 1.0;
	std::vector<std::thread> threads;

	end_at = clk::now() + std::chrono::microseconds(static_cast<long>(secs * 1e6));
	for (const wait &w : waits)
		threads.emplace_back([&w] {
			pthread_setname_np(pthread_self(), w.name);
			w.fn();
		});
	threads.emplace_back(holder);
	threads.emplace_back(notifier);
	for (auto &t : threads)
		t.join();
	return 0;
}
