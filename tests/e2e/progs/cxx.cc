// cxx.cc - a C++ workload for the conformance tests: names with the spaces,
// templates, operators, lambdas and namespaces that backends split wrong,
// on CPU (a template, a std::function-called lambda, an operator()) and off
// CPU (a contended std::mutex, a condition variable with a timeout, sleep).
// usage: cxx SECONDS
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace {

std::mutex big_lock;
volatile unsigned long sink;

template <typename Key, typename Value>
struct Table {
	std::map<Key, Value> rows;

	// a member template instantiated with a space in its name
	unsigned long sum_rows(int rounds)
	{
		unsigned long s = 0;
		for (int r = 0; r < rounds; r++)
			for (auto &kv : rows)
				s += static_cast<unsigned long>(kv.first) * 31u + kv.second;
		return s;
	}
};

struct Hasher {
	unsigned long operator()(unsigned long x) const
	{
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		return x;
	}
};

bool until(std::chrono::steady_clock::time_point end)
{
	return std::chrono::steady_clock::now() < end;
}

void cpu_worker(std::chrono::steady_clock::time_point end)
{
	Table<int, unsigned long> t;
	for (int i = 0; i < 256; i++)
		t.rows[i] = static_cast<unsigned long>(i) * 7u;
	std::function<unsigned long(long)> step = [&t](long n) {
		return t.sum_rows(static_cast<int>(n)) + Hasher{}(static_cast<unsigned long>(n));
	};
	while (until(end))
		sink = sink + step(20);
}

void lock_worker(std::chrono::steady_clock::time_point end)
{
	while (until(end)) {
		std::lock_guard<std::mutex> g(big_lock);
		sink = sink + Hasher{}(sink);
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
	}
}

void wait_worker(std::chrono::steady_clock::time_point end)
{
	std::mutex m;
	std::condition_variable cv;
	std::unique_lock<std::mutex> l(m);
	while (until(end))
		cv.wait_for(l, std::chrono::milliseconds(5), [] { return false; });
}

} // namespace

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 1.0;
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::microseconds(static_cast<long>(secs * 1e6));
	std::vector<std::thread> threads;

	threads.emplace_back(cpu_worker, end);
	threads.emplace_back(lock_worker, end);
	threads.emplace_back(lock_worker, end);
	threads.emplace_back(wait_worker, end);
	for (auto &t : threads)
		t.join();
	return 0;
}
