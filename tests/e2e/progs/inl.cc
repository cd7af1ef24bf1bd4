// inl.cc - deep inlining at -O2 for the inline-chain test (61-inline):
// templates inlined 17 levels deep, lambdas, std::function, and a recursive
// function inlined into itself.
// usage: inl ROUNDS
#include <cstdlib>
#include <functional>
#include <vector>

static volatile unsigned long sink;

template <int N> struct Chain {
	static inline unsigned long step(unsigned long x)
	{
		return Chain<N - 1>::step(x * 2654435761u + N) ^ (x >> 7);
	}
};
template <> struct Chain<0> {
	static inline unsigned long step(unsigned long x)
	{
		for (int i = 0; i < 50; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		return x;
	}
};

static inline unsigned long fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) unsigned long helper(long n)
{
	return Chain<12>::step(static_cast<unsigned long>(n));
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 2000000;
	std::vector<unsigned long> v(64, 1);
	auto square = [&v](long i) { return v[static_cast<size_t>(i) & 63] * static_cast<unsigned long>(i); };
	auto twice = [&square](long i) { return square(i) + square(i + 1); };
	std::function<unsigned long(long)> call = [](long n) { return helper(n); };
	for (long r = 0; r < rounds; r++) {
		sink = sink + twice(r) + Chain<16>::step(static_cast<unsigned long>(r));
		sink = sink + call(r) + fib(static_cast<unsigned>(r & 15));
	}
	return 0;
}
