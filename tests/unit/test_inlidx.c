/* SPDX-License-Identifier: MIT */
/*
 * test_inlidx.c - the inline index's order of ranges (inlidx.c): the radix
 * sort gives qsort()'s order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../../src/symbols/priv.h"

/* inlidx_range_sort() on @n ranges of @v equals qsort() with the sweep's
 * comparison, range for range. */
static void assert_ranges_as_qsort(const struct inl_range *v, size_t n)
{
	struct inl_range *a = malloc((n ? n : 1) * sizeof(*a)), *b = malloc((n ? n : 1) * sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	memcpy(a, v, n * sizeof(*a));
	memcpy(b, v, n * sizeof(*b));
	qsort(a, n, sizeof(*a), inlidx_range_cmp); /* the order before inlidx_range_sort() */
	inlidx_range_sort(b, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].lo, b[i].lo);
		assert_int_equal(a[i].hi, b[i].hi);
		assert_int_equal(a[i].entry, b[i].entry);
		assert_int_equal(a[i].depth, b[i].depth);
	}
	free(a);
	free(b);
}

/*
 * A unit's ranges are sorted as qsort() sorted them: by start, the outer
 * first, the longer first, then by entry. Nested ranges of inlined calls
 * (runs of 1 to 40 starting at one address: the long ones go to qsort()),
 * a range of one entry repeated (equal ranges), starts over several bytes,
 * within one byte, and more than 2^40 apart (left to qsort()), and the
 * smallest arrays (below 64: qsort()).
 */
static void test_ranges_sorted_as_qsort(void **state)
{
	enum { N = 20000 };
	struct inl_range *v = calloc(N, sizeof(*v));
	uint64_t seed = 0x2545f4914f6cdd1dull;

	(void)state;
	assert_non_null(v);
	for (unsigned round = 0; round < 4; round++) {
		size_t n = 0;

		while (n < N) {
			uint64_t lo, run;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			run = (seed >> 60) == 0 ? 33 + (seed >> 20) % 8 : 1 + (seed >> 33) % 4;
			lo = round == 0 ? 0x1000 + (seed >> 16) % 0x4000000 :
			     round == 1 ? 0x4000 + (seed >> 40) % 200 :
			     round == 2 ? (seed >> 40) % 2 ? 0x1000 : (1ull << 41) + (seed >> 20) % 1000 :
			     0x400000 + (seed >> 24) % 5000 * 16;
			for (uint64_t r = 0; r < run && n < N; r++, n++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				v[n].lo = lo;
				v[n].hi = lo + 1 + (seed >> 50) % 64;
				v[n].depth = (uint32_t)((seed >> 40) % 5);
				v[n].entry = (seed >> 61) == 0 && n ? v[n - 1].entry : (uint32_t)n + 1;
				if ((seed >> 58) == 1 && n)
					v[n] = v[n - 1]; /* the same range twice */
			}
		}
		/* the ranges in no order */
		for (size_t i = N - 1; i > 0; i--) {
			struct inl_range t;
			size_t j;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			j = (size_t)(seed >> 33) % (i + 1);
			t = v[i];
			v[i] = v[j];
			v[j] = t;
		}
		assert_ranges_as_qsort(v, N);
		assert_ranges_as_qsort(v, 100);
	}
	assert_ranges_as_qsort(v, 0);
	assert_ranges_as_qsort(v, 1);
	assert_ranges_as_qsort(v, 63);
	assert_ranges_as_qsort(v, 64);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_sorted_as_qsort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
