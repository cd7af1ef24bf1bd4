/* SPDX-License-Identifier: MIT */
/*
 * test_windows.c - profile_build_windows(): a recording cut into windows
 * of its time, each sample counted in the window it falls in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pdw.h"
#include "perf/perf.h"
#include "profile/profile.h"

#define WINDOWS_MAX 8

struct windows_seen {
	size_t n;
	uint64_t samples[WINDOWS_MAX];
};

/* profile_build_windows()'s consumer: each window's on-CPU samples. */
static int windows_count(void *ctx, struct profile *p, bool partial)
{
	struct windows_seen *seen = ctx;

	(void)partial;
	if (seen->n < WINDOWS_MAX)
		seen->samples[seen->n] = p->total[0].count[CNT_ON_CPU];
	seen->n++;
	profile_free(p);
	return 0;
}

/* A recording of one cpu-clock event whose samples (tid 101) come at @times. */
static struct pdw windows_file(const uint64_t *times, size_t n)
{
	const uint64_t st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	struct pdw w = { 0 };
	size_t data_off, at;

	pdw_bytes(&w, "PERFILE2", 8);
	pdw_u64(&w, 104);               /* header size */
	pdw_u64(&w, 128 + 16);          /* attr entry size */
	for (int i = 0; i < 10; i++)    /* attrs, data, event types, features */
		pdw_u64(&w, 0);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000, st,
		 PERF_ATTR_FLAG_SAMPLE_ID_ALL, 0, 0, 0, 0, 0);
	pdw_u64(&w, 0);                 /* no ids: one event */
	pdw_u64(&w, 0);
	data_off = w.n;
	for (size_t i = 0; i < n; i++) {
		at = pdw_begin(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		pdw_u32(&w, 100);
		pdw_u32(&w, 101);
		pdw_u64(&w, times[i]);
		pdw_end(&w, at);
	}
	pdw_patch_u64(&w, 24, 104);     /* the attrs */
	pdw_patch_u64(&w, 32, 128 + 16);
	pdw_patch_u64(&w, 40, data_off); /* the data */
	pdw_patch_u64(&w, 48, w.n - data_off);
	return w;
}

/* The windows of @times cut every @window_ns: their sample counts in @seen. */
static void windows_of(const uint64_t *times, size_t n, uint64_t window_ns,
		       struct windows_seen *seen)
{
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	char path[] = "/tmp/test_windows.XXXXXX";
	struct pdw w = windows_file(times, n);
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, w.b, w.n), (ssize_t)w.n);
	close(fd);
	memset(seen, 0, sizeof(*seen));
	assert_int_equal(profile_build_windows(path, &o, window_ns, windows_count, seen), 0);
	profile_settle();
	unlink(path);
	free(w.b);
}

/* Windows count from the first sample; an empty one is not handed on. */
static void test_windows_cut(void **state)
{
	static const uint64_t t[] = { 1000, 1500, 1999, 2000, 5100, 5200 };
	struct windows_seen seen;

	(void)state;
	windows_of(t, sizeof(t) / sizeof(t[0]), 1000, &seen);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.samples[0], 3);  /* [1000, 2000) */
	assert_int_equal(seen.samples[1], 1);  /* [2000, 3000) */
	assert_int_equal(seen.samples[2], 2);  /* [5000, 6000) */
}

/*
 * Sample times at the clock's end (a damaged or crafted recording's): the
 * window that would end past 2^64 - 1 lasts to it, and holds every later
 * sample, UINT64_MAX's too. A window end that wrapped around cut each of
 * them into a window of its own.
 */
static void test_windows_clock_end(void **state)
{
	static const uint64_t t[] = { 1000, UINT64_MAX - 500, UINT64_MAX - 10, UINT64_MAX };
	struct windows_seen seen;

	(void)state;
	windows_of(t, sizeof(t) / sizeof(t[0]), 1000, &seen);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.samples[0], 1);
	assert_int_equal(seen.samples[1], 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_windows_cut),
		cmocka_unit_test(test_windows_clock_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
