/* SPDX-License-Identifier: MIT */
/*
 * test_inlidx.c - the inline index's order of ranges (inlidx.c): the radix
 * sort gives qsort()'s order; a unit's DIEs read in order (dwwalk.c) give
 * the index libdw's walk gives, whole and in parts, their ranges as
 * dwarf_ranges() gives them.
 */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../../src/symbols/priv.h"
#include "dwhand.h"

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

/* Every unit of @path indexed three ways (test_walk_as_libdw()); *@units,
 * *@walked: how many there are, and how many were read in order through,
 * whole and in parts. False where @path cannot be read. */
static bool units_as_libdw(const char *path, size_t *units, size_t *walked)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dbg = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dbg) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		uint64_t d0, d1, d2;
		bool w0, w1, w2;

		assert_non_null(dwarf_offdie(dbg, off + hsize, &cu));
		d0 = inlidx_unit_digest(&cu, 0, &w0);
		d1 = inlidx_unit_digest(&cu, 1, &w1);
		d2 = inlidx_unit_digest(&cu, 2, &w2);
		assert_false(w0);
		assert_true(d0 != 0);
		assert_int_equal(d1, d0);
		assert_int_equal(d2, d0);
		(*units)++;
		*walked += w1 && w2;
		off = next;
	}
	dwarf_end(dbg);
	close(fd);
	return true;
}

/*
 * Every unit of this test's program and of perfport beside it (-O2 -g:
 * inlined calls, lexical blocks, DWARF 5 forms of gcc or clang) indexed
 * three ways - by libdw's walk, read in order by dwwalk.c, and read in
 * order in parts of its top-level DIEs as the lanes gather a big unit -
 * gives one index: the same entries, segments, DIEs and parents. The walk
 * reads every unit through (no form it does not know), and the parts are
 * taken (a span of 0 cuts every unit of two top-level DIEs or more).
 */
static void test_walk_as_libdw(void **state)
{
	char self[4096], tool[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t span = inlidx_part_min_span, units = 0, walked = 0;
	char *slash;

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	inlidx_part_min_span = 0;
	assert_true(units_as_libdw(self, &units, &walked));
	/* build/tests/test_inlidx: build/perfport, where it was built */
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = 0;
	snprintf(tool, sizeof(tool), "%s/../perfport", self);
	if (!units_as_libdw(tool, &units, &walked))
		print_message("no %s: this program's units only\n", tool);
	print_message("%zu units, %zu read in order\n", units, walked);
	assert_true(units > 5);
	assert_int_equal(walked, units);
	/* by hand: other producers, DWARF 4's .debug_ranges (':' between) */
	if (getenv("PERFPORT_TEST_DWARF")) {
		char *list = strdup(getenv("PERFPORT_TEST_DWARF")), *save = NULL;

		assert_non_null(list);
		for (char *f = strtok_r(list, ":", &save); f; f = strtok_r(NULL, ":", &save)) {
			size_t u = 0, w = 0;

			assert_true(units_as_libdw(f, &u, &w));
			print_message("%s: %zu units, %zu read in order\n", f, u, w);
		}
		free(list);
	}
	inlidx_part_min_span = span;
}

/*
 * Bad debug information (dwhand.h: a unit's length past .debug_info's
 * end with its DIEs cut there, abbreviation code 0 in the middle of a
 * list, a ULEB of 20 bytes, a strp offset past .debug_str, a range list
 * with no end, 3,000 nested blocks) read in order, whole and in parts,
 * gives the index libdw's walk gives (the walk's read, or libdw's where it
 * leaves the unit to it), and lookups in it come back; the unit made
 * right, and with its nested blocks, is read in order all through, with
 * its two inlined calls where they are. Under ASan, the walk before it
 * kept to .debug_info's bytes read past them here.
 */
static void test_bad_dwarf(void **state)
{
	size_t span = inlidx_part_min_span;

	(void)state;
	inlidx_part_min_span = 0;
	for (int b = 0; b < DWH_NBREAK; b++) {
		struct dwhand h;
		Dwarf *dbg = dwhand_open(&h, (enum dwhand_break)b);
		Dwarf_Off off = 0, next;
		size_t hsize, units = 0;

		assert_non_null(dbg);
		while (units < 4 && dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			static const uint64_t at[] = { 0x1000, 0x1015, 0x1034, 0x1044, 0x1050, 0x2000 };
			static const size_t want[] = { 1, 2, 2, 2, 1, 0 };
			struct inl_index *x = NULL;
			Dwarf_Die cu;
			uint64_t d0, d1, d2;
			bool w0, w1, w2;

			units++;
			if (!dwarf_offdie(dbg, off + hsize, &cu))
				break;
			off = next;
			d0 = inlidx_unit_digest(&cu, 0, &w0);
			d1 = inlidx_unit_digest(&cu, 1, &w1);
			d2 = inlidx_unit_digest(&cu, 2, &w2);
			assert_int_equal(d1, d0);
			assert_int_equal(d2, d0);
			if (b == DWH_NONE || b == DWH_DEEP) {
				assert_true(d0 != 0);
				assert_true(w1 && w2);
			}
			if (b == DWH_LEB20)    /* a code libdw reads as UINT64_MAX: its walk */
				assert_false(w1 || w2);
			for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
				Dwarf_Die out[8], cu_out;
				size_t n = inlidx_chain(&x, NULL, 0, &cu, at[i], out, 8, &cu_out);

				assert_true(n <= 8);
				if (b == DWH_NONE || b == DWH_DEEP)
					assert_int_equal(n, want[i]);
			}
			inlidx_free(x);
		}
		print_message("break %d: %zu units\n", b, units);
		if (b != DWH_CODE0)
			assert_int_equal(units, 1);
		dwhand_close(&h);
	}
	inlidx_part_min_span = span;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_sorted_as_qsort),
		cmocka_unit_test(test_walk_as_libdw),
		cmocka_unit_test(test_bad_dwarf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
