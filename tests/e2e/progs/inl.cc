// inl.cc - deep inlining at -O2 for the inline-chain test (61-inline):
// templates inlined 17 levels deep, lambdas, std::function, and a recursive
// function inlined into itself.
// usage: inl ROUNDS
#include <cstdlib>
#include <functional>
#include <string>
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

namespace ns {
// lambdas in a namespace's function: one of a class type's reference, one
// with a lambda inside it (numbered in the function in order, as GCC does)
__attribute__((noinline)) unsigned long func(int n)
{
	auto a = [](const std::string &s, const char *p) {
		unsigned long x = 0;
		for (int k = 0; k < 200; k++)
			x = x * 31 + s.size() + static_cast<unsigned long>(p[0]);
		return x;
	};
	auto b = [&a](long i) {
		auto inner = [i](int z) {
			unsigned long y = 1;
			for (int k = 0; k < 200; k++)
				y = y * 7 + static_cast<unsigned long>(i + z);
			return y;
		};
		return inner(3) + a(std::string("xy"), "q");
	};
	unsigned long t = 0;
	for (int r = 0; r < n; r++)
		t += b(r);
	return t;
}
} // namespace ns

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 2000000;
	std::vector<unsigned long> v(64, 1);
	// (the lambdas do work of their own, so that samples land in them)
	auto square = [&v](long i) {
		unsigned long x = v[static_cast<size_t>(i) & 63];
		for (int k = 0; k < 40; k++)
			x = x * static_cast<unsigned long>(i) + 7;
		return x;
	};
	auto twice = [&square](long i) { return square(i) + square(i + 1); };
	std::function<unsigned long(long)> call = [](long n) { return helper(n); };
	for (long r = 0; r < rounds; r++) {
		sink = sink + twice(r) + Chain<16>::step(static_cast<unsigned long>(r));
		sink = sink + call(r) + fib(static_cast<unsigned>(r & 15));
		if ((r & 1023) == 0)
			sink = sink + ns::func(16);
	}
	return 0;
}
