/* A tiny "JIT": copies a counting loop into an anonymous executable page,
 * runs it for SECONDS, and describes it in /tmp/perf-PID.map as a JIT would.
 * x86_64 only. usage: jit SECONDS */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	/* mov rcx, 2000000; L: dec rcx; jnz L; ret */
	static const uint8_t code[] = { 0x48, 0xb9, 0x80, 0x84, 0x1e, 0, 0, 0, 0, 0,
					0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec t0, t;
	char path[64];
	FILE *f;

	if (page == MAP_FAILED)
		return 1;
	memcpy(page + 64, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jitted_counting_loop\n", (unsigned long)(page + 64), sizeof(code));
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		((void (*)(void))(page + 64))();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("%d\n", getpid());
	return 0;
}
