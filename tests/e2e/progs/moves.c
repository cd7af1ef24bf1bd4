/*
 * moves.c - a workload whose hot function moves between two versions, for
 * the diff test (63-diff): "base" spends ~80% of its time in alpha and ~20%
 * in beta; "new" ~20% in alpha and ~80% in gamma (beta is gone).
 * usage: moves base|new SECONDS
 * SECONDS of its own CPU time, not of the clock's: on a loaded machine a
 * wall-clock budget gave it a seventh of that and so too few samples for
 * its shares (issue 52: beta 7% of 83 samples, not ~20%).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

/* each its own constant: identical bodies would be folded into one */
static inline __attribute__((always_inline)) void spin(unsigned long n, unsigned long k)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + k;
	sink = x;
}

__attribute__((noinline)) static void alpha(unsigned long n) { spin(n, 1442695040888963407ul); }
__attribute__((noinline)) static void beta(unsigned long n) { spin(n, 1013904223ul); }
__attribute__((noinline)) static void gamma_(unsigned long n) { spin(n, 12345ul); }

int main(int argc, char **argv)
{
	int base = argc > 1 && !strcmp(argv[1], "base");
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	struct timespec t0, t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		if (base) {
			alpha(400000);
			beta(100000);
		} else {
			alpha(100000);
			gamma_(400000);
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
