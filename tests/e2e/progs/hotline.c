/* SPDX-License-Identifier: MIT */
/*
 * hotline.c - one function whose time goes mostly to one source line, for
 * the explorer's cost per source line (e2e 47), then 20 sleeps of 10 ms
 * from one line, for the off-CPU counters' lines. Built -O0 -g: each
 * statement keeps its own line. The lines the test looks for are marked.
 */
#include <stdlib.h>
#include <unistd.h>

volatile unsigned long sink;

static void work(unsigned long n)
{
	unsigned long a = 0, b = 0;

	for (unsigned long i = 0; i < n; i++) {
		a += i * 3;
		if ((i & 7) == 0)
			b += a ^ i;
		for (int k = 0; k < 6; k++)
			a = a * 1103515245u + 12345u; /* HOT */
	}
	sink = a + b;
}

int main(int argc, char **argv)
{
	work(argc > 1 ? strtoul(argv[1], NULL, 10) : 60000000ul); /* CALL */
	for (int i = 0; i < 20; i++)
		usleep(10000); /* SLEEP */
	return 0;
}
