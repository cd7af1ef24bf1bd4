/* SPDX-License-Identifier: MIT */
/* dwarf_seed.h - a second file of lines for dwarf_seed.c. */
struct seed_pair {
	int a, b;
};

static inline int seed_twice(int x)
{
	return x * 2 + 1;
}
