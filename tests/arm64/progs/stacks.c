/* stacks.c - call chains for the arm64 fixtures (tests/arm64): noinline
 * functions three and four deep, a recursion, leaves that never save the
 * link register (their caller is only in lr), qsort() calling back into
 * the program from libc, memcpy and strlen leaves in libc through the PLT,
 * clock_gettime() in the vDSO, and a second thread doing the same.
 * Built once plain and once with -mbranch-protection=standard (return
 * addresses signed with pointer authentication).
 * usage: stacks SECONDS */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 1.0;

/* a leaf that needs no stack frame: lr still holds its caller */
__attribute__((noinline)) static unsigned long leaf_mix(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = leaf_mix(*(const unsigned long *)a) & 0xff;
	unsigned long y = leaf_mix(*(const unsigned long *)b) & 0xff;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void sort_some(void)
{
	unsigned long v[256];
	for (int i = 0; i < 256; i++)
		v[i] = (unsigned long)i * 2654435761u;
	qsort(v, 256, sizeof(v[0]), cmp_ulong);
	sink += v[7];
}

__attribute__((noinline)) static void copy_some(void)
{
	static char a[65536], b[65536];
	memset(a, 'x', sizeof(a) - 1);
	for (int i = 0; i < 16; i++) {
		memcpy(b, a, sizeof(a));
		sink += strlen(b);
	}
}

__attribute__((noinline)) static void ask_time(void)
{
	struct timespec ts;
	for (int i = 0; i < 200; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (unsigned long)ts.tv_nsec;
	}
}

__attribute__((noinline)) static unsigned long recurse(int n, unsigned long x)
{
	if (n == 0)
		return leaf_mix(x);
	x = recurse(n - 1, x + (unsigned long)n);
	sink += x;
	return x;
}

__attribute__((noinline)) static void level3(void)
{
	sink += leaf_mix(sink);
	sink += recurse(6, sink);
}

__attribute__((noinline)) static void level2(void)
{
	level3();
	sort_some();
}

__attribute__((noinline)) static void level1(void)
{
	level2();
	copy_some();
	ask_time();
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	double end = now() + seconds;
	(void)arg;
	while (now() < end)
		level1();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1)
		seconds = atof(argv[1]);
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	worker(NULL);
	pthread_join(t, NULL);
	return 0;
}
