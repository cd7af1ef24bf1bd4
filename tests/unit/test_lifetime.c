/* SPDX-License-Identifier: MIT */
/*
 * test_lifetime.c - a thread's run and off-CPU time fit inside the
 * lifetime the profile reports for it, at the recording's start and end:
 * records before the first sample and after the last (a per-task
 * recording's last child runs on to its exit after the last sample) are
 * charged only inside the profile's span.
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
#include "util/error.h"

/* One record of a per-task recording of process 100 on CPU 0: a cpu-clock
 * sample of @tid, its switch in or out, or its FORK or EXIT. */
enum lt_kind { LT_SAMPLE, LT_IN, LT_OUT, LT_FORK, LT_EXIT };

struct lt_rec {
	enum lt_kind kind;
	uint64_t time;
	uint32_t tid;
};

#define LT_ST (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static void lt_sample_id(struct pdw *w, uint32_t tid, uint64_t time)
{
	pdw_u32(w, 100);                /* pid, tid */
	pdw_u32(w, tid);
	pdw_u64(w, time);
	pdw_u32(w, 0);                  /* cpu, res */
	pdw_u32(w, 0);
}

/*
 * The records @rec (@n) as a file-mode recording of one cpu-clock event
 * with switch records; with @first and @last (not 0) its header's
 * SAMPLE_TIME says when its samples began and ended.
 */
static struct pdw lt_file(const struct lt_rec *rec, size_t n, uint64_t first, uint64_t last)
{
	struct pdw w = { 0 };
	size_t data_off, data_end, at;

	pdw_bytes(&w, "PERFILE2", 8);
	pdw_u64(&w, 104);               /* header size */
	pdw_u64(&w, 128 + 16);          /* attr entry size */
	for (int i = 0; i < 10; i++)    /* attrs, data, event types, features */
		pdw_u64(&w, 0);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100, LT_ST,
		 PERF_ATTR_FLAG_SAMPLE_ID_ALL | PERF_ATTR_FLAG_CONTEXT_SWITCH, 0, 0, 0, 0, 0);
	pdw_u64(&w, 0);                 /* no ids: one event */
	pdw_u64(&w, 0);
	data_off = w.n;
	for (size_t i = 0; i < n; i++) {
		const struct lt_rec *r = &rec[i];

		switch (r->kind) {
		case LT_SAMPLE:
			at = pdw_begin(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
			pdw_u32(&w, 100);
			pdw_u32(&w, r->tid);
			pdw_u64(&w, r->time);
			pdw_u32(&w, 0);
			pdw_u32(&w, 0);
			pdw_u64(&w, 100);       /* period */
			break;
		case LT_IN:
		case LT_OUT:
			at = pdw_begin(&w, PERF_RECORD_SWITCH,
				       r->kind == LT_OUT ? PERF_MISC_SWITCH_OUT : 0);
			lt_sample_id(&w, r->tid, r->time);
			break;
		default:
			at = pdw_begin(&w, r->kind == LT_FORK ? PERF_RECORD_FORK : PERF_RECORD_EXIT, 0);
			pdw_u32(&w, 100);       /* pid, ppid, tid, ptid, time */
			pdw_u32(&w, 100);
			pdw_u32(&w, r->tid);
			pdw_u32(&w, 101);
			pdw_u64(&w, r->time);
			lt_sample_id(&w, r->tid, r->time);
			break;
		}
		pdw_end(&w, at);
	}
	data_end = w.n;
	if (first) {
		size_t sec = w.n;       /* SAMPLE_TIME's section, then its two times */

		pdw_u64(&w, sec + 16);
		pdw_u64(&w, 16);
		pdw_u64(&w, first);
		pdw_u64(&w, last);
		pdw_patch_u64(&w, 72, 1ULL << PERF_FEAT_SAMPLE_TIME);
	}
	pdw_patch_u64(&w, 24, 104);     /* the attrs, the data */
	pdw_patch_u64(&w, 32, 128 + 16);
	pdw_patch_u64(&w, 40, data_off);
	pdw_patch_u64(&w, 48, data_end - data_off);
	return w;
}

/*
 * Thread 101 is seen first switching out at 400 (before the first sample,
 * at 1000: a system-wide recording's switch records come before its
 * samples), in at 700, forks 102 at 1500 and sleeps at 2000, when 102
 * runs; 102 is sampled at 2500 (the last sample) and exits at 3000; 101
 * runs again from 3200 to its exit at 3500.
 */
static const struct lt_rec lt_rec[] = {
	{ LT_OUT, 400, 101 },
	{ LT_IN, 700, 101 },
	{ LT_SAMPLE, 1000, 101 },
	{ LT_FORK, 1500, 102 },
	{ LT_OUT, 2000, 101 },
	{ LT_IN, 2000, 102 },
	{ LT_SAMPLE, 2500, 102 },
	{ LT_EXIT, 3000, 102 },
	{ LT_IN, 3200, 101 },
	{ LT_EXIT, 3500, 101 },
};

static uint64_t lt_off(const struct profile_thread *t)
{
	uint64_t off = 0;

	for (int c = 0; c < CNT_COUNT; c++)
		if (c != CNT_ON_CPU && c != CNT_IDLE)
			off += t->c.ns[c];
	return off;
}

/* The profile of lt_rec, its header's SAMPLE_TIME @first to @last (0:
 * none), read from memory or, with @file, from a file written for it. */
static struct profile *lt_profile(uint64_t first, uint64_t last, bool file)
{
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	struct pdw w = lt_file(lt_rec, sizeof(lt_rec) / sizeof(lt_rec[0]), first, last);
	struct profile *p = NULL;

	if (file) {
		char path[] = "/tmp/perfport-test-lifetime-XXXXXX";
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, w.b, w.n), (ssize_t)w.n);
		close(fd);
		assert_int_equal(profile_build(path, &o, &p), 0);
		unlink(path);
	} else {
		assert_int_equal(profile_build_mem(w.b, w.n, "lifetime", &o, &p), 0);
	}
	free(w.b);
	assert_non_null(p);
	assert_int_equal(p->nr_threads, 2);
	/* every thread's run and off-CPU time inside its lifetime, inside
	 * the profile's span */
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct profile_thread *t = &p->threads[i];

		assert_true(t->run_known);
		assert_true(p->meta.first_time <= t->start);
		assert_true(t->start <= t->end);
		assert_true(t->end <= p->meta.last_time);
		assert_int_equal(t->run_ns + lt_off(t), t->end - t->start);
	}
	assert_int_equal(p->threads[0].tid, 101);
	assert_int_equal(p->threads[1].tid, 102);
	return p;
}

/*
 * The header says when the samples began and ended: the profile spans
 * them, and nothing before 1000 or after 2500 is charged. 101: run 1000
 * (of 700-2000), asleep 500 (of 2000-3200); 102: its wait for its first
 * run 500, run 500 (of 2000-3000). Before, 101 had run 1300 and slept
 * 1200 in a lifetime of 1500, 102 ran 1000 in one of 1000.
 */
static void test_lifetime_header(void **state)
{
	struct profile *p = lt_profile(1000, 2500, false);
	const struct profile_thread *a = &p->threads[0], *b = &p->threads[1];

	(void)state;
	assert_int_equal(p->meta.first_time, 1000);
	assert_int_equal(p->meta.last_time, 2500);
	assert_int_equal(a->start, 1000);
	assert_int_equal(a->end, 2500);
	assert_int_equal(a->run_ns, 1000);
	assert_int_equal(a->c.ns[CNT_SLEEP], 500);
	assert_int_equal(b->start, 1500);
	assert_int_equal(b->end, 2500);
	assert_int_equal(b->run_ns, 500);
	assert_int_equal(b->c.ns[CNT_PREEMPTED], 500);
	profile_free(p);
}

/*
 * A file without SAMPLE_TIME (perf record -B writes 0 there) is read for
 * the samples' times first: the same profile, charged nothing before 1000
 * or after 2500. Before, 101 was charged 300 ns of sleep before the first
 * sample, run 300 and sleep 700 after the last: run 1300 + off 1500 in a
 * lifetime of 1500. (A stream, as one in memory, is read once: what came
 * after its last sample is charged.)
 */
static void test_lifetime_no_header(void **state)
{
	struct profile *p = lt_profile(0, 0, true);
	const struct profile_thread *a = &p->threads[0], *b = &p->threads[1];

	(void)state;
	assert_int_equal(p->meta.first_time, 1000);
	assert_int_equal(p->meta.last_time, 2500);
	assert_int_equal(a->run_ns, 1000);
	assert_int_equal(a->c.ns[CNT_SLEEP], 500);
	assert_int_equal(b->run_ns, 500);
	assert_int_equal(b->c.ns[CNT_PREEMPTED], 500);
	profile_free(p);
}

/*
 * The header's samples span more than the samples counted (800 to 2700:
 * another event's, left out of the profile, or a tracepoint a recording
 * cut short leaves unknown): the time charged is clipped to the header's
 * span, and so is each lifetime: the profile spans 800-2700. 101: run
 * 1200 (of 700-2000, from 800), asleep 700 (of 2000-3200, to 2700); 102:
 * waits 500 for its first run, runs 700 (of 2000-3000, to 2700). Before,
 * the lifetimes spanned the counted samples (1000-2500) and 101 was
 * charged 1900 in a lifetime of 1500.
 */
static void test_lifetime_header_wider(void **state)
{
	struct profile *p = lt_profile(800, 2700, false);
	const struct profile_thread *a = &p->threads[0], *b = &p->threads[1];

	(void)state;
	assert_int_equal(p->meta.first_time, 800);
	assert_int_equal(p->meta.last_time, 2700);
	assert_int_equal(a->start, 800);
	assert_int_equal(a->end, 2700);
	assert_int_equal(a->run_ns, 1200);
	assert_int_equal(a->c.ns[CNT_SLEEP], 700);
	assert_int_equal(b->start, 1500);
	assert_int_equal(b->end, 2700);
	assert_int_equal(b->run_ns, 700);
	assert_int_equal(b->c.ns[CNT_PREEMPTED], 500);
	profile_free(p);
}

/*
 * Thread 101 waits 1500-1700 inside the span (1000-2000), then switches
 * out at the last sample (2000-2300) and after it (2400-2600): those two
 * are no waits of the profile's, as a wait that ended before its first
 * sample is not, and are not counted (before, they were: 3 intervals of
 * 200 ns in all, two of 0 ns, which a consumer drawing the profile's range
 * has nowhere to show: the Firefox Profiler's reader listed a marker for
 * such a thread and showed none, issue 52).
 */
static void test_lifetime_after_last(void **state)
{
	static const struct lt_rec rec[] = {
		{ LT_SAMPLE, 1000, 101 },
		{ LT_OUT, 1500, 101 },
		{ LT_IN, 1700, 101 },
		{ LT_SAMPLE, 2000, 101 },
		{ LT_OUT, 2000, 101 },
		{ LT_IN, 2300, 101 },
		{ LT_OUT, 2400, 101 },
		{ LT_IN, 2600, 101 },
		{ LT_EXIT, 2700, 101 },
	};
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	struct pdw w = lt_file(rec, sizeof(rec) / sizeof(rec[0]), 1000, 2000);
	struct profile *p = NULL;
	uint64_t count = 0;

	(void)state;
	assert_int_equal(profile_build_mem(w.b, w.n, "after-last", &o, &p), 0);
	free(w.b);
	assert_non_null(p);
	assert_int_equal(p->nr_threads, 1);
	for (int c = 0; c < CNT_COUNT; c++)
		if (c != CNT_ON_CPU && c != CNT_IDLE)
			count += p->threads[0].c.count[c];
	assert_int_equal(count, 1);
	assert_int_equal(lt_off(&p->threads[0]), 200);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifetime_header),
		cmocka_unit_test(test_lifetime_no_header),
		cmocka_unit_test(test_lifetime_header_wider),
		cmocka_unit_test(test_lifetime_after_last),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
