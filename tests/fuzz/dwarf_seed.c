/* SPDX-License-Identifier: MIT */
/*
 * dwarf_seed.c - a small program whose debug information seeds the DWARF
 * readers' fuzz target (make fuzz): inlined calls in several levels, a
 * function in two parts (a range list), lexical blocks, two files' lines.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dwarf_seed.h"

static inline int seed_leaf(int x)
{
	return x * 3 + (x >> 2);
}

static inline int seed_mid(int x)
{
	int s = 0;

	for (int i = 0; i < x; i++) {
		int t = seed_leaf(i);

		s += t & 1 ? t : seed_twice(t);
	}
	return s;
}

__attribute__((noinline, cold)) static void seed_fail(const char *why)
{
	fprintf(stderr, "%s\n", why);
	exit(2);
}

__attribute__((noinline)) static int seed_top(int n)
{
	if (n < 0)
		seed_fail("negative");
	return seed_mid(n) + seed_leaf(n);
}

int main(int argc, char **argv)
{
	struct seed_pair p = { argc, argc * 2 };

	(void)argv;
	printf("%d\n", seed_top(p.a + p.b));
	return 0;
}
