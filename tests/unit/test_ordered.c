/* SPDX-License-Identifier: MIT */
/*
 * test_ordered.c - the time-ordering queue: pops in (time, arrival) order,
 * keeps record copies intact across chunk boundaries, accounts its bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perf/ordered.h"

static void test_order_and_ties(void **state)
{
	struct oqueue q = { 0 };
	uint64_t rec[4];
	uint64_t prev_time = 0, prev_seq = 0;
	unsigned n = 0;

	(void)state;
	srand(7);
	for (unsigned i = 0; i < 20000; i++) {
		uint64_t t = (uint64_t)(rand() % 500); /* many equal times */

		rec[0] = t;
		rec[1] = i;
		assert_int_equal(oq_push(&q, t, i, rec, sizeof(rec), NULL, NULL), 0);
	}
	assert_true(q.bytes >= 20000 * sizeof(rec));
	while (oq_peek(&q)) {
		const struct oq_item *it = oq_peek(&q);
		uint64_t copy[4];

		memcpy(copy, it->rec, sizeof(copy));
		assert_int_equal(copy[0], it->time);     /* the copy is intact */
		assert_int_equal(copy[1], it->offset);
		assert_true(it->time >= prev_time);
		if (n && it->time == prev_time)
			assert_true(it->seq > prev_seq); /* ties keep arrival order */
		prev_time = it->time;
		prev_seq = it->seq;
		oq_pop(&q);
		n++;
	}
	assert_int_equal(n, 20000);
	assert_int_equal(q.bytes, 0);
	oq_free(&q);
}

/* Interleaved sorted streams (one per CPU buffer, as perf writes them),
 * popped in part between pushes as the FINISHED_ROUND rule does, then a
 * late record older than everything queued. Times repeat within and
 * across streams: ties come out in arrival order. With one and two
 * streams the queue's shortcuts are taken (the run appended to last, two
 * runs compared without the heap's walk). */
static void streams(unsigned ncpu, uint64_t step)
{
	struct oqueue q = { 0 };
	uint64_t next[5] = { 0 }, last = 0, last_seq = 0, rec[2];
	unsigned pushed = 0, popped = 0;

	srand(11 + ncpu);
	for (unsigned round = 0; round < 200; round++) {
		for (unsigned i = 0; i < 500; i++) {
			unsigned cpu = (unsigned)rand() % ncpu;

			next[cpu] += (uint64_t)(rand() % step);
			rec[0] = next[cpu];
			rec[1] = pushed;
			assert_int_equal(oq_push(&q, next[cpu], pushed++, rec, sizeof(rec), NULL, NULL), 0);
		}
		/* deliver what is older than every stream's newest */
		uint64_t limit = next[0];

		for (unsigned c = 1; c < ncpu; c++)
			if (next[c] < limit)
				limit = next[c];
		while (oq_peek(&q) && oq_peek(&q)->time <= limit) {
			const struct oq_item *it = oq_peek(&q);

			memcpy(rec, it->rec, sizeof(rec));
			assert_int_equal(rec[0], it->time);
			assert_int_equal(rec[1], it->offset);
			assert_true(it->time >= last);
			if (popped && it->time == last)
				assert_true(it->seq > last_seq);
			last = it->time;
			last_seq = it->seq;
			oq_pop(&q);
			popped++;
		}
	}
	assert_int_equal(q.nr, pushed - popped);
	assert_int_equal(oq_push(&q, 0, pushed++, rec, sizeof(rec), NULL, NULL), 0);
	assert_int_equal(oq_peek(&q)->time, 0);
	last = 0;
	while (oq_peek(&q)) {
		assert_true(oq_peek(&q)->time >= last);
		last = oq_peek(&q)->time;
		oq_pop(&q);
		popped++;
	}
	assert_int_equal(popped, pushed);
	assert_int_equal(q.bytes, 0);
	oq_free(&q);
}

static void test_streams(void **state)
{
	(void)state;
	for (unsigned ncpu = 1; ncpu <= 5; ncpu++) {
		streams(ncpu, 100);
		streams(ncpu, 3); /* many equal times */
	}
}

static void test_free_with_items(void **state)
{
	struct oqueue q = { 0 };
	uint8_t big[40000] = { 1 };

	(void)state;
	/* Spread over several chunks, then free without popping. */
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(oq_push(&q, 100 - i, i, big, sizeof(big), NULL, NULL), 0);
	for (unsigned i = 0; i < 50; i++)
		oq_pop(&q);
	oq_free(&q); /* LeakSanitizer checks this under make asan */
	assert_null(q.heap);
}

/*
 * A stream without rounds leaves a record or two in every input buffer:
 * the bound on the queue's bytes must see each such buffer whole (it is
 * not freed while one record in it waits), or memory grows with the
 * stream while the count stays small (53: 681 MB for a 786 MB stream).
 */
static void test_bytes_count_pinned_buffers(void **state)
{
	struct oqueue q = { 0 };
	const size_t cap = 1 << 20;
	struct oq_buf *b[8];

	(void)state;
	for (unsigned i = 0; i < 8; i++) {
		uint64_t *rec;

		b[i] = oq_buf_get(&q, cap);
		assert_non_null(b[i]);
		rec = (uint64_t *)b[i]->data;
		rec[0] = i;
		assert_int_equal(oq_push(&q, 2 * i, i, rec, 16, NULL, b[i]), 0);
		assert_int_equal(oq_push(&q, 2 * i + 1, i, rec + 2, 16, NULL, b[i]), 0);
		oq_buf_retire(b[i]); /* the reader has moved on */
		assert_true(q.bytes >= (i + 1) * b[i]->cap);
	}
	/* each buffer counts once, however many of its records wait */
	assert_true(q.bytes < 8 * cap + 64 * 1024);
	while (oq_peek(&q))
		oq_pop(&q);
	/* every buffer free again: only the runs' item arrays may remain */
	assert_true(q.bytes < 64 * 1024);
	oq_free(&q);
}

/* Push @n records of times @t0, @t0 + @step, ... in that order. */
static void push_stream(struct oqueue *q, uint64_t t0, uint64_t step, unsigned n)
{
	static const uint64_t rec[2] = { 1, 2 };

	for (unsigned i = 0; i < n; i++)
		assert_int_equal(oq_push(q, t0 + i * step, i, rec, sizeof(rec), NULL, NULL), 0);
}

/* Take everything, in time order; return how many. */
static size_t pop_all(struct oqueue *q)
{
	uint64_t last = 0;
	size_t n = 0;

	for (; oq_peek(q); n++) {
		assert_true(oq_peek(q)->time >= last);
		last = oq_peek(q)->time;
		oq_pop(q);
	}
	return n;
}

/*
 * A round's runs (one per CPU buffer) keep their arrays for the next
 * round's: perf's rounds of two CPUs, 3,000 records each, leave two big
 * arrays kept (not counted as queued), which the next round's runs take
 * again; many runs used up at once keep no more than OQ_RECENT of them.
 */
static void test_runs_kept_across_rounds(void **state)
{
	struct oqueue q = { 0 };

	(void)state;
	for (unsigned round = 0; round < 3; round++) {
		uint64_t base = 100000 * (uint64_t)(round + 1);

		push_stream(&q, base, 2, 3000);     /* CPU 0's buffer */
		push_stream(&q, base + 1, 2, 3000); /* then CPU 1's */
		/* the two runs kept from the round before are in use again */
		assert_int_equal(q.nr_free_big, 0);
		assert_int_equal(pop_all(&q), 6000);
		assert_int_equal(q.nr_free_big, 2);
		assert_true(q.bytes < 64 * 1024); /* kept arrays are not queued */
	}
	/* 40 runs of 300 at once (each block starts before the one before
	 * ends): only OQ_RECENT keep their arrays */
	for (unsigned k = 0; k < 40; k++)
		push_stream(&q, 1000000 - 1000 * (uint64_t)k, 1, 300);
	assert_int_equal(pop_all(&q), 12000);
	assert_int_equal(q.nr_free_big, OQ_RECENT);
	oq_free(&q); /* LeakSanitizer checks this under make asan */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_ties),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_free_with_items),
		cmocka_unit_test(test_bytes_count_pinned_buffers),
		cmocka_unit_test(test_runs_kept_across_rounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
