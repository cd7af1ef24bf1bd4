/* SPDX-License-Identifier: MIT */
/*
 * test_reader.c - the perf.data reader on recordings built byte by byte:
 * file and pipe mode, both byte orders, every sample field, time order
 * across FINISHED_ROUND, zstd with records split across chunks, and
 * truncation at every offset.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include <zstd.h>
#include <traceevent/event-parse.h>

#include "pdw.h"
#include "perf/bytes.h"
#include "perf/perf.h"
#include "perf/priv.h"
#include "util/error.h"
#include "util/log.h"

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
#define ID_CPU 101
#define ID_TASK 202

/* --- records in the test layout --- */

static void trailer(struct pdw *w, uint32_t pid, uint32_t tid, uint64_t time, uint64_t id)
{
	pdw_u32(w, pid);
	pdw_u32(w, tid);
	pdw_u64(w, time);
	pdw_u32(w, 1);  /* cpu */
	pdw_u32(w, 0);
	pdw_u64(w, id);
}

static void rec_sample(struct pdw *w, uint64_t id, uint32_t tid, uint64_t time, uint64_t ip)
{
	size_t at = pdw_begin(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);

	pdw_u64(w, id);
	pdw_u64(w, ip);
	pdw_u32(w, 100);
	pdw_u32(w, tid);
	pdw_u64(w, time);
	pdw_u32(w, 1);
	pdw_u32(w, 0);
	pdw_u64(w, 250000);             /* period */
	pdw_u64(w, 3);                  /* callchain */
	pdw_u64(w, (uint64_t)PERF_CONTEXT_USER);
	pdw_u64(w, ip);
	pdw_u64(w, 0x401000);
	pdw_end(w, at);
}

static void rec_comm(struct pdw *w, uint32_t tid, const char *name, uint64_t time)
{
	size_t at = pdw_begin(w, PERF_RECORD_COMM, 0);
	size_t s;

	pdw_u32(w, 100);
	pdw_u32(w, tid);
	s = w->n;
	pdw_bytes(w, name, strlen(name) + 1);
	while ((w->n - s) % 8)
		pdw_u8(w, 0);
	trailer(w, 100, tid, time, ID_CPU);
	pdw_end(w, at);
}

static void rec_mmap2(struct pdw *w, uint64_t start, const char *path, uint64_t time)
{
	size_t at = pdw_begin(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	size_t s;

	pdw_u32(w, 100);
	pdw_u32(w, 100);
	pdw_u64(w, start);
	pdw_u64(w, 0x2000);
	pdw_u64(w, 0x1000);
	pdw_u32(w, 8);      /* maj */
	pdw_u32(w, 1);      /* min */
	pdw_u64(w, 1234);   /* ino */
	pdw_u64(w, 0);
	pdw_u32(w, 5);      /* prot */
	pdw_u32(w, 2);      /* flags */
	s = w->n;
	pdw_bytes(w, path, strlen(path) + 1);
	while ((w->n - s) % 8)
		pdw_u8(w, 0);
	trailer(w, 100, 100, time, ID_CPU);
	pdw_end(w, at);
}

static void rec_round(struct pdw *w)
{
	pdw_end(w, pdw_begin(w, PERF_REC_FINISHED_ROUND, 0));
}

/* The standard data: out of order within rounds, as perf writes per-CPU buffers. */
static void std_data(struct pdw *w)
{
	rec_comm(w, 100, "app", 900);
	rec_mmap2(w, 0x400000, "/usr/bin/app", 950);
	rec_sample(w, ID_CPU, 100, 1000, 0x401010);
	rec_sample(w, ID_TASK, 101, 3000, 0x401020);
	rec_sample(w, ID_CPU, 101, 2000, 0x401030);
	rec_round(w);
	rec_sample(w, ID_TASK, 100, 1500, 0x401040); /* older than the previous round's max */
	rec_sample(w, ID_CPU, 100, 4000, 0x401050);
	rec_round(w);
	rec_sample(w, ID_CPU, 100, 3500, 0x401060);
	rec_round(w);
}

#define NR_STD_SAMPLES 6

/* A file-mode recording with two events and a few features. */
static struct pdw build_file(bool swap, void (*data)(struct pdw *))
{
	struct pdw w = { .swap = swap };
	size_t attrs_off = 104, ids_off, data_off, data_end, feat_off;
	uint64_t flags = PERF_ATTR_FLAG_SAMPLE_ID_ALL | PERF_ATTR_FLAG_MMAP2 | PERF_ATTR_FLAG_COMM;

	/* header, patched below */
	pdw_bytes(&w, swap ? "2ELIFREP" : "PERFILE2", 8);
	pdw_u64(&w, 104);
	pdw_u64(&w, 128 + 16);
	for (int i = 0; i < 6; i++)
		pdw_u64(&w, 0);
	for (int i = 0; i < 4; i++)
		pdw_u64(&w, 0);

	ids_off = attrs_off + 2 * (128 + 16);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 4000, ST,
		 flags | PERF_ATTR_FLAG_FREQ, 0, 0, 0, 0, 0);
	pdw_u64(&w, ids_off);
	pdw_u64(&w, 8);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 100000, ST, flags, 0, 0, 0, 0, 0);
	pdw_u64(&w, ids_off + 8);
	pdw_u64(&w, 8);
	pdw_u64(&w, ID_CPU);
	pdw_u64(&w, ID_TASK);

	data_off = w.n;
	data(&w);
	data_end = w.n;

	/* features HOSTNAME (3), NRCPUS (7), CMDLINE (11), EVENT_DESC (12) */
	feat_off = w.n;
	for (int i = 0; i < 4; i++) {
		pdw_u64(&w, 0);
		pdw_u64(&w, 0);
	}
	{
		size_t s[4], e[4];

		s[0] = w.n;
		pdw_str(&w, "testhost");
		e[0] = w.n;
		s[1] = w.n;
		pdw_u32(&w, 4);
		pdw_u32(&w, 2);
		e[1] = w.n;
		s[2] = w.n;
		pdw_u32(&w, 3);
		pdw_str(&w, "perf");
		pdw_str(&w, "record");
		pdw_str(&w, "./app");
		e[2] = w.n;
		s[3] = w.n;
		pdw_u32(&w, 2);
		pdw_u32(&w, 128);
		pdw_attr(&w, PERF_TYPE_SOFTWARE, 0, 4000, ST, flags, 0, 0, 0, 0, 0);
		pdw_u32(&w, 1);
		pdw_str(&w, "cpu-clock:u");
		pdw_u64(&w, ID_CPU);
		pdw_attr(&w, PERF_TYPE_SOFTWARE, 1, 4000, ST, flags, 0, 0, 0, 0, 0);
		pdw_u32(&w, 1);
		pdw_str(&w, "task-clock:u");
		pdw_u64(&w, ID_TASK);
		e[3] = w.n;
		for (int i = 0; i < 4; i++) {
			pdw_patch_u64(&w, feat_off + 16 * i, s[i]);
			pdw_patch_u64(&w, feat_off + 16 * i + 8, e[i] - s[i]);
		}
	}
	pdw_patch_u64(&w, 24, attrs_off);
	pdw_patch_u64(&w, 32, 2 * (128 + 16));
	pdw_patch_u64(&w, 40, data_off);
	pdw_patch_u64(&w, 48, data_end - data_off);
	pdw_patch_u64(&w, 72, (1ULL << 3) | (1ULL << 7) | (1ULL << 11) | (1ULL << 12));
	return w;
}

/* --- a collecting consumer --- */

struct got {
	uint64_t times[64];
	uint32_t tids[64];
	uint64_t ips[64];
	const char *events[64];
	unsigned nr;
	unsigned comms, mmaps, others;
	char comm[16];
	char mmap_file[64];
	uint64_t mmap_start, mmap_pgoff, mmap_ino;
	uint64_t chain_last;
	uint64_t trailer_time;
};

static int collect(void *ctx, const struct perf_event *ev)
{
	struct got *g = ctx;

	if (ev->type == PERF_RECORD_SAMPLE && g->nr < 64) {
		g->times[g->nr] = ev->sample.time;
		g->tids[g->nr] = ev->sample.tid;
		g->ips[g->nr] = ev->sample.ip;
		g->events[g->nr] = ev->evsel->name;
		if (ev->sample.callchain_nr == 3)
			g->chain_last = ev->sample.callchain[2];
		g->nr++;
	} else if (ev->type == PERF_RECORD_COMM) {
		g->comms++;
		snprintf(g->comm, sizeof(g->comm), "%s", ev->u.comm.comm);
		g->trailer_time = ev->sample.time;
	} else if (ev->type == PERF_RECORD_MMAP2) {
		g->mmaps++;
		snprintf(g->mmap_file, sizeof(g->mmap_file), "%s", ev->u.mmap.filename);
		g->mmap_start = ev->u.mmap.start;
		g->mmap_pgoff = ev->u.mmap.pgoff;
		g->mmap_ino = ev->u.mmap.ino;
	} else {
		g->others++;
	}
	return 0;
}

static void check_std(struct pdw *w, bool ordered)
{
	struct perf_reader_opts o = { .ordered = ordered };
	const struct perf_header_info *h;
	struct perf_evsel *const *ev;
	struct perf_reader *r;
	struct got g = { 0 };
	size_t nr;

	assert_int_equal(perf_reader_open_mem(w->b, w->n, &o, &r), PP_OK);
	assert_int_equal(perf_reader_run(r, collect, &g), PP_OK);
	h = perf_reader_header(r);
	assert_int_equal(h->swapped, w->swap);
	assert_string_equal(h->hostname, "testhost");
	assert_string_equal(h->cmdline, "perf record ./app");
	assert_int_equal(h->nr_cpus_avail, 4);
	assert_int_equal(h->nr_cpus_online, 2);
	ev = perf_reader_evsels(r, &nr);
	assert_int_equal(nr, 2);
	assert_string_equal(ev[0]->name, "cpu-clock:u");
	assert_string_equal(ev[1]->name, "task-clock:u");
	assert_true(ev[0]->attr.flags & PERF_ATTR_FLAG_FREQ);
	assert_false(ev[1]->attr.flags & PERF_ATTR_FLAG_FREQ);
	assert_true(ev[0]->attr.flags & PERF_ATTR_FLAG_SAMPLE_ID_ALL);
	assert_int_equal(ev[0]->attr.sample_period, 4000);
	assert_int_equal(ev[0]->attr.sample_type, ST);
	assert_int_equal(ev[0]->nr_samples, 4);
	assert_int_equal(ev[1]->nr_samples, 2);
	assert_int_equal(g.nr, NR_STD_SAMPLES);
	assert_int_equal(g.comms, 1);
	assert_string_equal(g.comm, "app");
	assert_int_equal(g.trailer_time, 900);
	assert_int_equal(g.mmaps, 1);
	assert_string_equal(g.mmap_file, "/usr/bin/app");
	assert_int_equal(g.mmap_start, 0x400000);
	assert_int_equal(g.mmap_pgoff, 0x1000);
	assert_int_equal(g.mmap_ino, 1234);
	assert_int_equal(g.chain_last, 0x401000);
	if (ordered) {
		static const uint64_t want[] = { 1000, 1500, 2000, 3000, 3500, 4000 };

		for (unsigned i = 0; i < NR_STD_SAMPLES; i++)
			assert_int_equal(g.times[i], want[i]);
		assert_string_equal(g.events[1], "task-clock:u");
		assert_int_equal(g.ips[1], 0x401040);
	} else {
		assert_int_equal(g.times[1], 3000);
	}
	assert_int_equal(perf_reader_stats(r)->skipped_records, 0);
	assert_int_equal(perf_reader_stats(r)->records[PERF_REC_FINISHED_ROUND], 3);
	perf_reader_close(r);
}

static void test_file_mode(void **state)
{
	struct pdw w = build_file(false, std_data);

	(void)state;
	check_std(&w, true);
	check_std(&w, false);
	free(w.b);
}

static void test_file_swapped(void **state)
{
	struct pdw w = build_file(true, std_data);

	(void)state;
	check_std(&w, true);
	free(w.b);
}

/* Pipe mode: attrs, features and tracing data arrive as records. */
static struct pdw build_pipe(bool swap)
{
	struct pdw w = { .swap = swap };
	uint64_t flags = PERF_ATTR_FLAG_SAMPLE_ID_ALL;
	size_t at;

	pdw_bytes(&w, swap ? "2ELIFREP" : "PERFILE2", 8);
	pdw_u64(&w, 16);
	at = pdw_begin(&w, PERF_REC_HEADER_ATTR, 0);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, 0, 4000, ST, flags | PERF_ATTR_FLAG_FREQ, 0, 0, 0, 0, 0);
	pdw_u64(&w, ID_CPU);
	pdw_end(&w, at);
	at = pdw_begin(&w, PERF_REC_HEADER_ATTR, 0);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, 1, 100000, ST, flags, 0, 0, 0, 0, 0);
	pdw_u64(&w, ID_TASK);
	pdw_end(&w, at);
	/* An unaligned feature record (84 bytes, as perf 6.x writes some). */
	at = pdw_begin(&w, PERF_REC_HEADER_FEATURE, 0);
	pdw_u64(&w, PERF_FEAT_HOSTNAME);
	pdw_u32(&w, 64);
	{
		char host[64] = "pipehost";
		pdw_bytes(&w, host, 64);
	}
	pdw_end(&w, at);
	std_data(&w);
	return w;
}

static void test_pipe_mode(void **state)
{
	for (int swap = 0; swap < 2; swap++) {
		struct pdw w = build_pipe(swap);
		struct perf_reader_opts o = { .ordered = true };
		struct perf_evsel *const *ev;
		struct perf_reader *r;
		struct got g = { 0 };
		size_t nr;

		(void)state;
		assert_int_equal(perf_reader_open_mem(w.b, w.n, &o, &r), PP_OK);
		assert_int_equal(perf_reader_run(r, collect, &g), PP_OK);
		assert_true(perf_reader_header(r)->pipe);
		assert_string_equal(perf_reader_header(r)->hostname, "pipehost");
		ev = perf_reader_evsels(r, &nr);
		assert_int_equal(nr, 2);
		/* named as perf names an attr without exclude_guest */
		assert_string_equal(ev[0]->name, "cpu-clock:HG");
		assert_int_equal(ev[0]->nr_samples, 4);
		assert_int_equal(ev[1]->nr_samples, 2);
		assert_int_equal(g.nr, NR_STD_SAMPLES);
		assert_int_equal(g.times[1], 1500);
		assert_int_equal(perf_reader_stats(r)->skipped_records, 0);
		perf_reader_close(r);
		free(w.b);
	}
}

/* Every sample field, in both byte orders. */
static void test_sample_all_fields(void **state)
{
	const uint64_t all = PERF_SAMPLE_KNOWN_MASK & ~(uint64_t)PERF_SAMPLE_WEIGHT;
	(void)state;

	for (int swap = 0; swap < 2; swap++) {
		struct pdw w = { .swap = swap };
		struct perf_evsel e = { 0 };
		struct perf_sample s;
		uint8_t attr[128];

		pdw_attr(&w, PERF_TYPE_RAW, 0, 1, all, 0,
			 PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
				 PERF_FORMAT_LOST,
			 PERF_SAMPLE_BRANCH_HW_INDEX, 0x7 /* 3 regs */, 64, 0x3 /* 2 regs */);
		memcpy(attr, w.b, 128);
		perf_attr_decode(&e.attr, attr, 128, swap);
		perf_evsel_layout(&e);
		assert_int_equal(e.attr.sample_type, all);
		assert_int_equal(e.attr.sample_stack_user, 64);
		w.n = 0;

		pdw_u64(&w, 77);                /* IDENTIFIER */
		pdw_u64(&w, 0x1111);            /* IP */
		pdw_u32(&w, 10); pdw_u32(&w, 11);  /* TID */
		pdw_u64(&w, 123456789);         /* TIME */
		pdw_u64(&w, 0xadd00);           /* ADDR */
		pdw_u64(&w, 77);                /* ID */
		pdw_u64(&w, 78);                /* STREAM_ID */
		pdw_u32(&w, 3); pdw_u32(&w, 0); /* CPU */
		pdw_u64(&w, 999);               /* PERIOD */
		pdw_u64(&w, 2);                 /* READ: nr, enabled, {value, id, lost} x2 */
		pdw_u64(&w, 5000);
		pdw_u64(&w, 1); pdw_u64(&w, 77); pdw_u64(&w, 0);
		pdw_u64(&w, 2); pdw_u64(&w, 79); pdw_u64(&w, 1);
		pdw_u64(&w, 2);                 /* CALLCHAIN */
		pdw_u64(&w, 0xa); pdw_u64(&w, 0xb);
		pdw_u32(&w, 12);                /* RAW: 4 + 12 = 16 */
		{
			uint8_t raw[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
			pdw_bytes(&w, raw, sizeof(raw));
		}
		pdw_u64(&w, 1);                 /* BRANCH_STACK: nr, hw_idx, entries */
		pdw_u64(&w, 42);
		pdw_u64(&w, 0xf0); pdw_u64(&w, 0xf1); pdw_u64(&w, 0);
		pdw_u64(&w, 2);                 /* REGS_USER abi 64, 3 regs */
		pdw_u64(&w, 100); pdw_u64(&w, 101); pdw_u64(&w, 102);
		pdw_u64(&w, 16);                /* STACK_USER size, data, dyn_size */
		{
			uint8_t stack[16] = { 0xee };
			pdw_bytes(&w, stack, sizeof(stack));
		}
		pdw_u64(&w, 8);
		pdw_u64(&w, 55);                /* WEIGHT_STRUCT */
		pdw_u64(&w, 0xd5);              /* DATA_SRC */
		pdw_u64(&w, 0x7a);              /* TRANSACTION */
		pdw_u64(&w, 2);                 /* REGS_INTR, 2 regs */
		pdw_u64(&w, 200); pdw_u64(&w, 201);
		pdw_u64(&w, 0xbeef);            /* PHYS_ADDR */
		pdw_u64(&w, 9);                 /* CGROUP */
		pdw_u64(&w, 4096);              /* DATA_PAGE_SIZE */
		pdw_u64(&w, 2097152);           /* CODE_PAGE_SIZE */
		pdw_u64(&w, 8);                 /* AUX */
		pdw_u64(&w, 0x0123456789abcdefULL);

		assert_int_equal(perf_sample_parse(&e, w.b, w.n, swap, &s), 0);
		assert_int_equal(s.id, 77);
		assert_int_equal(s.ip, 0x1111);
		assert_int_equal(s.pid, 10);
		assert_int_equal(s.tid, 11);
		assert_int_equal(s.time, 123456789);
		assert_int_equal(s.addr, 0xadd00);
		assert_int_equal(s.stream_id, 78);
		assert_int_equal(s.cpu, 3);
		assert_int_equal(s.period, 999);
		assert_int_equal(s.read.nr, 2);
		assert_int_equal(s.read.time_enabled, 5000);
		assert_int_equal(s.read.stride, 3);
		assert_int_equal(s.read.values[3], 2);
		assert_int_equal(s.read.values[4], 79);
		assert_int_equal(s.callchain_nr, 2);
		assert_int_equal(s.callchain[1], 0xb);
		assert_int_equal(s.raw_size, 12);
		assert_int_equal(((const uint8_t *)s.raw)[11], 12);
		assert_int_equal(s.branch_nr, 1);
		assert_true(s.branch_has_hw_idx);
		assert_int_equal(s.branch_hw_idx, 42);
		assert_int_equal(s.branch[0].to, 0xf1);
		assert_int_equal(s.user_regs_abi, 2);
		assert_int_equal(s.user_regs[2], 102);
		assert_int_equal(s.user_stack_size, 16);
		assert_int_equal(s.user_stack[0], 0xee);
		assert_int_equal(s.user_stack_dyn_size, 8);
		assert_int_equal(s.weight, 55);
		assert_int_equal(s.data_src, 0xd5);
		assert_int_equal(s.transaction, 0x7a);
		assert_int_equal(s.intr_regs[1], 201);
		assert_int_equal(s.phys_addr, 0xbeef);
		assert_int_equal(s.cgroup, 9);
		assert_int_equal(s.data_page_size, 4096);
		assert_int_equal(s.code_page_size, 2097152);
		assert_int_equal(s.aux_size, 8);

		/* A RAW size that would misalign what follows is malformed. */
		if (!swap) {
			struct pdw bad = { 0 };
			size_t raw_at = 8 * 20; /* 20 u64 precede RAW in this layout */

			pdw_bytes(&bad, w.b, w.n);
			assert_int_equal(load_u32(bad.b + raw_at, false), 12);
			store_u32(bad.b + raw_at, 11);
			assert_int_equal(perf_sample_parse(&e, bad.b, bad.n, false, &s), -1);
			free(bad.b);
		}

		/* Every shorter length fails cleanly. */
		for (size_t cut = 0; cut < w.n; cut += 4) {
			struct pdw c = { .swap = swap };

			pdw_bytes(&c, w.b, cut);
			/* parse of a swapped buffer swaps it: work on copies */
			if (!swap)
				assert_int_equal(perf_sample_parse(&e, c.b, cut, false, &s), -1);
			free(c.b);
		}
		free(w.b);
	}
}

/*
 * The shorter parse of events with only fixed slots and a callchain gives
 * what the general one gives, on every such layout, for whole, cut and
 * lying (callchain too long) samples.
 */
static void test_sample_simple_same(void **state)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
		PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
		PERF_SAMPLE_PERIOD, PERF_SAMPLE_CALLCHAIN,
	};
	const size_t nbits = sizeof(bits) / sizeof(bits[0]);
	uint64_t body[64];
	unsigned seed = 12345;
	size_t tried = 0;

	(void)state;
	for (uint32_t m = 0; m < (1u << nbits); m++) {
		struct perf_evsel e = { 0 };

		for (size_t b = 0; b < nbits; b++)
			if (m & (1u << b))
				e.attr.sample_type |= bits[b];
		perf_evsel_layout(&e);
		assert_true(e.simple);
		for (int round = 0; round < 6; round++) {
			for (size_t i = 0; i < 64; i++) {
				seed = seed * 1103515245u + 12345u;
				body[i] = ((uint64_t)seed << 32) ^ seed ^ i;
			}
			/* a callchain length that fits, or one that lies */
			{
				size_t at = (size_t)__builtin_popcountll(e.attr.sample_type &
									 ~(uint64_t)PERF_SAMPLE_CALLCHAIN);

				body[at] = round == 5 ? 1000 : (uint64_t)(round * 3);
			}
			for (size_t len = 0; len <= 8 * 40; len += (round & 1) ? 4 : 8) {
				struct perf_sample a, g;
				int ra, rg;

				e.simple = true;
				ra = perf_sample_parse(&e, body, len, false, &a);
				e.simple = false;
				rg = perf_sample_parse(&e, body, len, false, &g);
				assert_int_equal(ra, rg);
				tried++;
				if (ra)
					continue;
				assert_int_equal(a.id, g.id);
				assert_int_equal(a.ip, g.ip);
				assert_int_equal(a.pid, g.pid);
				assert_int_equal(a.tid, g.tid);
				assert_int_equal(a.time, g.time);
				assert_int_equal(a.addr, g.addr);
				assert_int_equal(a.stream_id, g.stream_id);
				assert_int_equal(a.cpu, g.cpu);
				assert_int_equal(a.period, g.period);
				assert_int_equal(a.callchain_nr, g.callchain_nr);
				assert_ptr_equal(a.callchain, g.callchain);
				assert_null(a.raw);
				assert_null(a.branch);
				assert_null(a.user_stack);
				assert_int_equal(a.read.nr, 0);
			}
		}
	}
	assert_true(tried > 100000);
	/* anything else takes the general parse */
	{
		struct perf_evsel e = { 0 };

		e.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_RAW;
		perf_evsel_layout(&e);
		assert_false(e.simple);
		e.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER;
		perf_evsel_layout(&e);
		assert_false(e.simple);
	}
}

static void test_layout_positions(void **state)
{
	struct perf_evsel e = { 0 };

	(void)state;
	e.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			     PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	e.attr.flags = PERF_ATTR_FLAG_SAMPLE_ID_ALL;
	perf_evsel_layout(&e);
	assert_int_equal(e.id_pos, 3);     /* IP, TID, TIME, then ID */
	assert_int_equal(e.is_pos, 2);     /* from the end: CPU, then ID */
	assert_int_equal(e.time_pos, 2);
	assert_int_equal(e.trailer_size, 32);
	e.attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
	perf_evsel_layout(&e);
	assert_int_equal(e.id_pos, 0);
	assert_int_equal(e.is_pos, 1);
	assert_int_equal(e.time_pos, 3);
	e.attr.flags = 0;
	perf_evsel_layout(&e);
	assert_int_equal(e.trailer_size, 0);
}

/* Old (64-byte) and new (136-byte) attrs decode; missing fields are zero. */
static void test_attr_sizes(void **state)
{
	struct pdw w = { 0 };
	struct perf_attr a;

	(void)state;
	pdw_attr(&w, PERF_TYPE_HARDWARE, 1, 1000, PERF_SAMPLE_IP, PERF_ATTR_FLAG_FREQ, 0, 0, 5, 8192, 0);
	perf_attr_decode(&a, w.b, 64, false);
	assert_int_equal(a.config, 1);
	assert_true(a.flags & PERF_ATTR_FLAG_FREQ);
	assert_int_equal(a.sample_regs_user, 0);
	assert_int_equal(a.sample_stack_user, 0);
	perf_attr_decode(&a, w.b, 128, false);
	assert_int_equal(a.sample_regs_user, 5);
	assert_int_equal(a.sample_stack_user, 8192);
	free(w.b);
}

/*
 * zstd: the records compressed into two chunks that split a record, as
 * COMPRESSED (unpadded, perf before 6.15) or COMPRESSED2 (data_size, padded).
 */
/*
 * @data compressed in chunks of @chunk bytes of plain data (0: two halves,
 * cut 3 bytes past the middle), each ending inside a record.
 */
static struct pdw build_zstd_of(int version, void (*data)(struct pdw *), size_t chunk,
				size_t *plain_len)
{
	struct pdw plain = { 0 }, w = { 0 };
	struct pdw file = build_file(false, data);
	size_t data_off, data_size, tail_off, tail_len, shift;
	uint8_t *tail;

	data(&plain);
	*plain_len = plain.n;
	if (!chunk)
		chunk = plain.n / 2 + 3; /* inside a record */
	memcpy(&data_off, file.b + 40, 8);
	memcpy(&data_size, file.b + 48, 8);
	tail_off = data_off + data_size;
	tail_len = file.n - tail_off;
	tail = malloc(tail_len);
	memcpy(tail, file.b + tail_off, tail_len);
	pdw_bytes(&w, file.b, data_off);
	for (size_t from = 0; from < plain.n; from += chunk) {
		const uint8_t *src = plain.b + from;
		size_t len = plain.n - from < chunk ? plain.n - from : chunk;
		size_t cap = ZSTD_compressBound(len);
		uint8_t *z = malloc(cap);
		size_t zn = ZSTD_compress(z, cap, src, len, 3);
		size_t at;

		assert_false(ZSTD_isError(zn));
		at = pdw_begin(&w, version == 2 ? PERF_REC_COMPRESSED2 : PERF_REC_COMPRESSED, 0);
		if (version == 2)
			pdw_u64(&w, zn);
		pdw_bytes(&w, z, zn);
		if (version == 2)
			pdw_pad8(&w);
		pdw_end(&w, at);
		assert_true(w.n - at <= UINT16_MAX); /* a record's size is 16 bits */
		free(z);
	}
	data_size = w.n - data_off;
	shift = w.n - tail_off;
	pdw_bytes(&w, tail, tail_len);
	for (int i = 0; i < 4; i++) {
		uint64_t off;

		memcpy(&off, w.b + w.n - tail_len + 16 * i, 8);
		off += shift;
		memcpy(w.b + w.n - tail_len + 16 * i, &off, 8);
	}
	memcpy(w.b + 48, &data_size, 8);
	free(tail);
	free(plain.b);
	free(file.b);
	return w;
}

static struct pdw build_zstd(int version, size_t *plain_len)
{
	return build_zstd_of(version, std_data, 0, plain_len);
}

static void test_zstd_split(void **state)
{
	(void)state;
	for (int version = 1; version <= 2; version++) {
		size_t plain_len;
		struct pdw w = build_zstd(version, &plain_len);
		uint32_t type = version == 2 ? PERF_REC_COMPRESSED2 : PERF_REC_COMPRESSED;
		struct perf_reader *r;

		if (getenv("PDW_DUMP")) {
			FILE *f = fopen(getenv("PDW_DUMP"), "wb");
			fwrite(w.b, 1, w.n, f);
			fclose(f);
		}
		check_std(&w, true);
		assert_int_equal(perf_reader_open_mem(w.b, w.n, NULL, &r), PP_OK);
		assert_int_equal(perf_reader_run(r, NULL, NULL), PP_OK);
		assert_int_equal(perf_reader_stats(r)->records[type], 2);
		assert_int_equal(perf_reader_stats(r)->compressed_out, plain_len);
		assert_int_equal(perf_reader_stats(r)->skipped_records, 0);
		perf_reader_close(r);
		free(w.b);
	}
}
/* Cut at every byte: never a crash, and what precedes the cut is kept. */
static void test_truncation(void **state)
{
	struct pdw w = build_file(false, std_data);
	size_t data_off;
	unsigned prev = 0;

	(void)state;
	memcpy(&data_off, w.b + 40, 8);
	for (size_t cut = 0; cut <= w.n; cut++) {
		struct perf_reader_opts o = { .ordered = true };
		struct perf_reader *r;
		struct got g = { 0 };
		uint8_t *copy = malloc(cut ? cut : 1);
		int ret;

		memcpy(copy, w.b, cut);
		ret = perf_reader_open_mem(copy, cut, &o, &r);
		if (ret == PP_OK) {
			perf_reader_run(r, collect, &g);
			if (cut < w.n && cut > data_off)
				assert_true(perf_reader_stats(r)->truncated ||
					    perf_reader_stats(r)->skipped_records ||
					    g.nr == NR_STD_SAMPLES);
			perf_reader_close(r);
		}
		if (cut > data_off && cut < data_off + 400)
			assert_true(g.nr >= prev); /* more data, never fewer samples */
		if (cut > data_off)
			prev = g.nr;
		free(copy);
	}
	free(w.b);
}

/* Unknown record types are counted and skipped by their size. */
static void unknown_data(struct pdw *w)
{
	size_t at = pdw_begin(w, 50, 0);

	pdw_u64(w, 1);
	pdw_end(w, at);
	at = pdw_begin(w, 200, 0);
	pdw_u64(w, 2);
	pdw_u64(w, 3);
	pdw_end(w, at);
	std_data(w);
}

/* Build a file around @data, read it all (unordered), return its stats. */
static struct perf_stats read_stats(void (*data)(struct pdw *), struct got *g)
{
	struct pdw w = build_file(false, data);
	struct perf_stats st;
	struct perf_reader *r;

	assert_int_equal(perf_reader_open_mem(w.b, w.n, NULL, &r), PP_OK);
	assert_int_equal(perf_reader_run(r, collect, g), PP_OK);
	st = *perf_reader_stats(r);
	perf_reader_close(r);
	free(w.b);
	return st;
}

static void test_unknown_records(void **state)
{
	struct got g = { 0 };
	struct perf_stats st = read_stats(unknown_data, &g);

	(void)state;
	assert_int_equal(g.nr, NR_STD_SAMPLES);
	assert_int_equal(st.unknown_records, 1);
	assert_int_equal(st.records_other, 1);
	assert_int_equal(st.skipped_records, 0);
}

/* Two LOST records (5 and 7 lost) and one LOST_SAMPLES (10): the same
 * loss told twice, as perf 6.x writes it. */
static void lost_data(struct pdw *w)
{
	size_t at;

	std_data(w);
	for (int i = 0; i < 2; i++) {
		at = pdw_begin(w, PERF_RECORD_LOST, 0);
		pdw_u64(w, ID_CPU);
		pdw_u64(w, i ? 7 : 5);
		trailer(w, 100, 100, 9000 + (uint64_t)i, ID_CPU);
		pdw_end(w, at);
	}
	at = pdw_begin(w, PERF_RECORD_LOST_SAMPLES, 0);
	pdw_u64(w, 10);
	trailer(w, 100, 100, 9100, ID_CPU);
	pdw_end(w, at);
}

/* LOST and LOST_SAMPLES are summed apart; the loss is the larger, never the sum. */
static void test_lost(void **state)
{
	struct got g = { 0 };
	struct perf_stats st = read_stats(lost_data, &g);

	(void)state;
	assert_int_equal(st.records[PERF_RECORD_LOST], 2);
	assert_int_equal(st.lost, 12);
	assert_int_equal(st.records[PERF_RECORD_LOST_SAMPLES], 1);
	assert_int_equal(st.lost_samples, 10);
	assert_int_equal(perf_stats_lost(&st), 12);
	st.lost = 0;
	assert_int_equal(perf_stats_lost(&st), 10);
}

/* A sample naming an id no attr has is reported, not guessed. */
static void bad_id_data(struct pdw *w)
{
	rec_sample(w, 9999, 100, 10, 0x1);
	std_data(w);
}

static void test_unknown_id(void **state)
{
	struct got g = { 0 };
	struct perf_stats st = read_stats(bad_id_data, &g);

	(void)state;
	assert_int_equal(g.nr, NR_STD_SAMPLES);
	assert_int_equal(st.samples_unattributed, 1);
	assert_int_equal(st.skipped_records, 1);
}

/* A queue limit smaller than a round forces flushes; nothing is lost. */
/*
 * Records kept where they were read: 4,000 samples of 576 bytes (2.3 MB,
 * so the input window fills and moves on many times; from memory, and
 * from a file read ahead on a thread, whose buffers take the record cut by
 * their start in the room before them), each round in
 * reverse time order so that the queue holds records across windows, and
 * every 7th record held by the consumer to the end. Each sample's callchain
 * says which sample it is: a record written over or freed while queued or
 * held shows up here (or under ASan).
 */
#define HELD_ROUNDS 40
#define HELD_PER_ROUND 100
#define HELD_CHAIN 64

static void held_data(struct pdw *w)
{
	for (uint64_t round = 0; round < HELD_ROUNDS; round++) {
		for (uint64_t k = 0; k < HELD_PER_ROUND; k++) {
			uint64_t i = round * HELD_PER_ROUND + k;
			size_t at = pdw_begin(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);

			pdw_u64(w, ID_CPU);
			pdw_u64(w, i);                              /* ip: the sample's number */
			pdw_u32(w, 100);
			pdw_u32(w, 100);
			pdw_u64(w, 1000 + round * 1000 + (HELD_PER_ROUND - k)); /* time */
			pdw_u32(w, 1);
			pdw_u32(w, 0);
			pdw_u64(w, 1);
			pdw_u64(w, HELD_CHAIN);
			for (uint64_t j = 0; j < HELD_CHAIN; j++)
				pdw_u64(w, i * 1000 + j);
			pdw_end(w, at);
		}
		rec_round(w);
	}
}

struct held {
	unsigned seen, nr, bad;
	uint64_t last_time;
	void *hold[HELD_ROUNDS * HELD_PER_ROUND / 7 + 1];
	struct perf_sample sample[HELD_ROUNDS * HELD_PER_ROUND / 7 + 1];
};

static bool held_intact(const struct perf_sample *s)
{
	if (s->callchain_nr != HELD_CHAIN)
		return false;
	for (uint64_t j = 0; j < HELD_CHAIN; j++)
		if (s->callchain[j] != s->ip * 1000 + j)
			return false;
	return true;
}

static int collect_held(void *ctx, const struct perf_event *ev)
{
	struct held *h = ctx;

	if (ev->type != PERF_RECORD_SAMPLE)
		return 0;
	if (!held_intact(&ev->sample) || ev->sample.time < h->last_time)
		h->bad++;
	h->last_time = ev->sample.time;
	if (h->seen++ % 7 == 0) {
		h->hold[h->nr] = perf_event_hold(ev);
		h->sample[h->nr] = ev->sample;
		if (h->hold[h->nr])
			h->nr++;
	}
	return 0;
}

/* @w read from memory, or (@ahead) from a file, read ahead on a thread
 * (and with @threaded cut on one) */
static void check_held(const struct pdw *w, bool ahead, bool threaded)
{
	struct perf_reader_opts o = { .ordered = true, .read_ahead = ahead, .threaded = threaded };
	char path[] = "/tmp/test_reader-XXXXXX";
	struct perf_reader *r;
	struct held *h = calloc(1, sizeof(*h));

	if (ahead) {
		int fd = mkstemp(path);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, w->b, w->n), (ssize_t)w->n);
		close(fd);
		assert_int_equal(perf_reader_open(path, &o, &r), PP_OK);
		unlink(path);
	} else {
		assert_int_equal(perf_reader_open_mem(w->b, w->n, &o, &r), PP_OK);
	}
	assert_int_equal(perf_reader_run(r, collect_held, h), PP_OK);
	assert_int_equal(h->seen, HELD_ROUNDS * HELD_PER_ROUND);
	assert_int_equal(h->bad, 0);
	/* every record can be held (they are aligned in the reader's buffers) */
	assert_int_equal(h->nr, (HELD_ROUNDS * HELD_PER_ROUND + 6) / 7);
	for (unsigned i = 0; i < h->nr; i++) {
		unsigned n = 7 * i; /* delivered n-th: each round comes out reversed */

		assert_true(held_intact(&h->sample[i]));
		assert_int_equal(h->sample[i].ip, n / HELD_PER_ROUND * HELD_PER_ROUND +
						  HELD_PER_ROUND - 1 - n % HELD_PER_ROUND);
	}
	for (unsigned i = 0; i < h->nr; i++)
		perf_event_release(h->hold[i]);
	perf_reader_close(r);
	free(h);
}

static void test_held_records(void **state)
{
	struct pdw w = build_file(false, held_data);
	size_t plain_len;

	(void)state;
	check_held(&w, false, false);
	check_held(&w, true, false);
	check_held(&w, true, true);
	free(w.b);
	for (int version = 1; version <= 2; version++) {
		w = build_zstd_of(version, held_data, 30000, &plain_len);
		check_held(&w, false, false);
		check_held(&w, true, false);
		check_held(&w, true, true);
		free(w.b);
	}
}

/*
 * Records cut on a thread of the reader's (opts.threaded) are delivered
 * as when cut on the caller's: the same records, in the same order, seeing
 * the same events (an EVENT_UPDATE renames one in the middle: what was
 * delivered before it keeps the old name), with the same counts (a sample
 * of no known event skipped where it is cut, one that does not fit its
 * layout where it is decoded). 18,000 samples in rounds of 600 out of
 * time order: more than the batches between the two threads hold.
 */
#define TH_ROUNDS 30
#define TH_PER_ROUND 600
#define TH_SAMPLES (TH_ROUNDS * TH_PER_ROUND)

static void rec_event_update(struct pdw *w, uint64_t id, const char *name)
{
	size_t at = pdw_begin(w, PERF_REC_EVENT_UPDATE, 0);

	pdw_u64(w, 2); /* NAME */
	pdw_u64(w, id);
	pdw_bytes(w, name, strlen(name) + 1);
	pdw_pad8(w);
	pdw_end(w, at);
}

static void threaded_data(struct pdw *w)
{
	rec_comm(w, 100, "app", 900);
	rec_mmap2(w, 0x400000, "/usr/bin/app", 950);
	for (uint64_t round = 0; round < TH_ROUNDS; round++) {
		for (uint64_t k = 0; k < TH_PER_ROUND; k++) {
			/* a permutation of the round's times (7919 is prime) */
			uint64_t t = 1000 + round * 100000 + (k * 7919 % TH_PER_ROUND) * 10;
			uint64_t n = round * TH_PER_ROUND + k;

			rec_sample(w, k % 2 ? ID_TASK : ID_CPU, 100 + (uint32_t)(k % 3), t,
				   0x500000 + n);
			if (round == 10 && k == 300)
				rec_event_update(w, ID_TASK, "renamed");
		}
		if (round == 5) {
			/* a callchain longer than its record: does not decode */
			size_t at = pdw_begin(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);

			pdw_u64(w, ID_CPU);
			pdw_u64(w, 0x1);
			pdw_u32(w, 100);
			pdw_u32(w, 100);
			pdw_u64(w, 1000 + round * 100000 + 5);
			pdw_u32(w, 1);
			pdw_u32(w, 0);
			pdw_u64(w, 1);
			pdw_u64(w, 1000);
			pdw_u64(w, 0x401000);
			pdw_end(w, at);
		}
		if (round == 7)
			rec_sample(w, 9999, 100, 1000 + round * 100000 + 7, 0x2); /* no such id */
		rec_round(w);
	}
}

struct trace {
	char *text;
	size_t len, cap;
	unsigned calls, stop_at;
	unsigned nr_held;
	void *hold[TH_SAMPLES];
	struct perf_sample held[TH_SAMPLES];
};

static int trace_event(void *ctx, const struct perf_event *ev)
{
	struct trace *t = ctx;
	char line[160];
	int n = snprintf(line, sizeof(line), "%u %" PRIu64 " %" PRIu64 " %" PRIx64 " %s\n",
			 ev->type, ev->offset, ev->sample.time,
			 ev->type == PERF_RECORD_SAMPLE ? ev->sample.ip : 0,
			 ev->evsel && ev->evsel->name ? ev->evsel->name : "-");

	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->text = realloc(t->text, t->cap);
		assert_non_null(t->text);
	}
	memcpy(t->text + t->len, line, (size_t)n + 1);
	t->len += (size_t)n;
	if (t->nr_held < TH_SAMPLES && ev->type == PERF_RECORD_SAMPLE && t->stop_at == UINT32_MAX) {
		/* every sample held to the end: the batches cannot come back */
		t->hold[t->nr_held] = perf_event_hold(ev);
		t->held[t->nr_held] = ev->sample;
		assert_non_null(t->hold[t->nr_held]);
		t->nr_held++;
	}
	return ++t->calls == t->stop_at;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* @w through a reader (threaded or not) into @t; returns its stats. */
static struct perf_stats trace_file(const struct pdw *w, bool threaded, struct trace *t,
				    int want)
{
	struct perf_reader_opts o = { .ordered = true, .read_ahead = threaded,
				      .threaded = threaded };
	char path[] = "/tmp/test_reader-XXXXXX";
	int fd = mkstemp(path);
	struct perf_reader *r;
	struct perf_stats st;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, w->b, w->n), (ssize_t)w->n);
	close(fd);
	assert_int_equal(perf_reader_open(path, &o, &r), PP_OK);
	unlink(path);
	assert_int_equal(perf_reader_run(r, trace_event, t), want);
	st = *perf_reader_stats(r);
	/* what was held is intact after the run, until released */
	for (unsigned i = 0; i < t->nr_held; i++) {
		assert_int_equal(t->held[i].callchain_nr, 3);
		assert_int_equal(t->held[i].callchain[1], t->held[i].ip);
		perf_event_release(t->hold[i]);
	}
	t->nr_held = 0;
	perf_reader_close(r);
	return st;
}

static void test_threaded_cutting(void **state)
{
	struct pdw w = build_file(false, threaded_data);
	struct trace *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct perf_stats sa, sb;
	uint64_t oa[PERF_SKIP_KEEP], ob[PERF_SKIP_KEEP];

	(void)state;
	alarm(120); /* a cutter waiting for batches the caller holds hangs */
	a->stop_at = b->stop_at = UINT32_MAX;
	sa = trace_file(&w, false, a, PP_OK);
	sb = trace_file(&w, true, b, PP_OK);
	assert_non_null(strstr(a->text, " renamed\n"));
	assert_non_null(strstr(a->text, " task-clock:u\n"));
	assert_string_equal(a->text, b->text);
	assert_int_equal(sa.samples, TH_SAMPLES);
	assert_int_equal(sb.samples, sa.samples);
	assert_int_equal(sa.samples_unattributed, 1);
	assert_int_equal(sb.samples_unattributed, 1);
	assert_int_equal(sa.skipped_records, 2);
	assert_int_equal(sb.skipped_records, sa.skipped_records);
	assert_int_equal(sb.skipped_bytes, sa.skipped_bytes);
	assert_int_equal(sb.out_of_order, sa.out_of_order);
	assert_int_equal(sb.records[PERF_RECORD_SAMPLE], sa.records[PERF_RECORD_SAMPLE]);
	/* the same skips kept (the decoding thread's come last) */
	assert_int_equal(sb.nr_skips_kept, sa.nr_skips_kept);
	for (unsigned i = 0; i < sa.nr_skips_kept; i++) {
		oa[i] = sa.skips[i].offset;
		ob[i] = sb.skips[i].offset;
	}
	qsort(oa, sa.nr_skips_kept, sizeof(*oa), compare_u64);
	qsort(ob, sb.nr_skips_kept, sizeof(*ob), compare_u64);
	assert_memory_equal(oa, ob, sa.nr_skips_kept * sizeof(*oa));

	/* a consumer that stops: nothing more is delivered, either way */
	free(a->text);
	free(b->text);
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->stop_at = b->stop_at = 5000;
	trace_file(&w, false, a, PP_ESTOPPED);
	trace_file(&w, true, b, PP_ESTOPPED);
	assert_int_equal(a->calls, 5000);
	assert_int_equal(b->calls, 5000);
	assert_string_equal(a->text, b->text);
	free(a->text);
	free(b->text);
	free(a);
	free(b);
	free(w.b);
	alarm(0);
}

/*
 * PERFPORT_MMAP=1: a regular file's records are cut from a read-only
 * mapping of it, through views handed back behind the reader: the same
 * records in the same order as read() gives, on the caller's thread and on
 * the cutting one, and held records intact after the run (their views
 * kept). A file truncated while it is read: the pages past its new end
 * read as zeros (no SIGBUS), where the reading stops, truncated.
 */
struct cut {
	const char *path;
	uint64_t to;
	unsigned calls;
	bool mapped;
};

static int cut_event(void *ctx, const struct perf_event *ev)
{
	struct cut *c = ctx;
	char line[512];
	FILE *f;

	(void)ev;
	if (c->calls++)
		return 0;
	/* the file is mapped, then cut under the reader */
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		c->mapped = c->mapped || strstr(line, c->path);
	fclose(f);
	assert_int_equal(truncate(c->path, (off_t)c->to), 0);
	return 0;
}

static void test_mapped(void **state)
{
	struct pdw w = build_file(false, threaded_data), hw = build_file(false, held_data);
	struct trace *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct perf_reader_opts o = { .ordered = true };
	char path[] = "/tmp/test_reader-XXXXXX";
	struct cut c = { .path = path };
	struct perf_reader *r;
	const struct perf_stats *st;
	int fd;

	(void)state;
	alarm(120);
	for (int threaded = 0; threaded < 2; threaded++) {
		a->stop_at = b->stop_at = UINT32_MAX;
		unsetenv("PERFPORT_MMAP");
		trace_file(&w, threaded, a, PP_OK);
		setenv("PERFPORT_MMAP", "1", 1);
		trace_file(&w, threaded, b, PP_OK);
		assert_int_equal(a->calls, b->calls);
		assert_string_equal(a->text, b->text);
		free(a->text);
		free(b->text);
		memset(a, 0, sizeof(*a));
		memset(b, 0, sizeof(*b));
	}
	check_held(&hw, true, false);
	check_held(&hw, true, true);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, w.b, w.n), (ssize_t)w.n);
	close(fd);
	assert_int_equal(perf_reader_open(path, &o, &r), PP_OK);
	c.to = perf_reader_header(r)->data_offset + 8192;
	assert_true(c.to + 65536 < w.n);
	assert_int_equal(perf_reader_run(r, cut_event, &c), PP_OK);
	st = perf_reader_stats(r);
	assert_true(c.mapped);
	assert_true(st->truncated);
	assert_true(st->samples > 0 && st->samples < TH_SAMPLES);
	perf_reader_close(r);
	unlink(path);
	unsetenv("PERFPORT_MMAP");
	free(a);
	free(b);
	free(w.b);
	free(hw.b);
	alarm(0);
}

static void test_queue_limit(void **state)
{
	struct pdw w = build_file(false, std_data);
	struct perf_reader_opts o = { .ordered = true, .queue_limit = 300 };
	struct perf_reader *r;
	struct got g = { 0 };

	(void)state;
	assert_int_equal(perf_reader_open_mem(w.b, w.n, &o, &r), PP_OK);
	assert_int_equal(perf_reader_run(r, collect, &g), PP_OK);
	assert_int_equal(g.nr, NR_STD_SAMPLES);
	assert_true(perf_reader_stats(r)->forced_flushes > 0);
	assert_true(perf_reader_stats(r)->queue_peak > 0);
	perf_reader_close(r);
	free(w.b);
}

static void test_not_perf_data(void **state)
{
	static const char junk[] = "this is not a perf.data file at all, not even close";
	struct perf_reader *r;

	(void)state;
	assert_int_equal(perf_reader_open_mem(junk, sizeof(junk), NULL, &r), PP_EMAGIC);
	assert_null(r);
	assert_int_equal(perf_reader_open_mem(junk, 4, NULL, &r), PP_EMAGIC);
}

static void test_event_listed(void **state)
{
	/* a name without perf's modifiers matches the event with them; a
	 * tracepoint only itself; a list is comma-separated */
	static const struct { const char *list, *event; bool listed; } cases[] = {
		{ "cpu-clock", "cpu-clock", true },
		{ "cpu-clock", "cpu-clock/freq=997/", true },
		{ "cpu-clock", "cpu-clock:u", true },
		{ "cpu-clock:u", "cpu-clock:u", true },
		{ "x,cpu-clock", "cpu-clock:ppp", true },
		{ "sched:sched_switch", "sched:sched_switch", true },
		{ "sched:sched_switch", "sched:sched_switch:k", true },
		{ "sched", "sched:sched_switch", false },
		{ "cpu", "cpu-clock", false },
		{ "cpu-clock/freq=99/", "cpu-clock/freq=997/", false },
		{ "task-clock", "cpu-clock", false },
		{ "", "cpu-clock", false },
		{ ",", "cpu-clock", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("'%s' lists '%s': %d\n", cases[i].list, cases[i].event, cases[i].listed);
		assert_int_equal(perf_event_listed(cases[i].list, cases[i].event), cases[i].listed);
	}
}

/* --- counters read by samples (a group sampled by its leader) --- */

#define RD_ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
	       PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ)
#define ID_LEAD 11
#define ID_MEMBER 22

struct reads_got {
	unsigned samples;
	unsigned nr;
	const char *event[16];
	uint64_t period[16];
	uint32_t tid[16];
};

static int collect_reads(void *ctx, const struct perf_event *ev)
{
	struct reads_got *g = ctx;

	if (ev->type != PERF_RECORD_SAMPLE)
		return 0;
	g->samples++;
	assert_true(ev->has_reads);
	for (size_t i = 0; i < ev->nr_reads && g->nr < 16; i++, g->nr++) {
		g->event[g->nr] = ev->reads[i].evsel->name;
		g->period[g->nr] = ev->reads[i].period;
		g->tid[g->nr] = ev->sample.tid;
	}
	return 0;
}

/* A sample of tid at time reading the group's two counters (or, without
 * group, the leader alone: value and id). */
static void read_sample(struct pdw *w, bool group, uint32_t tid, uint64_t time, uint64_t lead,
			uint64_t member)
{
	size_t at = pdw_begin(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);

	pdw_u64(w, 0x401000);           /* ip */
	pdw_u32(w, 100);
	pdw_u32(w, tid);
	pdw_u64(w, time);
	pdw_u64(w, ID_LEAD);
	pdw_u64(w, 250000);             /* period, replaced by the read's */
	if (group) {
		pdw_u64(w, 2);
		pdw_u64(w, lead);
		pdw_u64(w, ID_LEAD);
		pdw_u64(w, member);
		pdw_u64(w, ID_MEMBER);
	} else {
		pdw_u64(w, lead);
		pdw_u64(w, ID_LEAD);
	}
	pdw_end(w, at);
}

static struct pdw build_reads(bool group, bool inherit)
{
	struct pdw w = { 0 };
	uint64_t rf = PERF_FORMAT_ID | (group ? PERF_FORMAT_GROUP : 0);
	/* exclude_guest, as perf record sets it: the names stay bare */
	uint64_t flags = PERF_ATTR_FLAG_FREQ | PERF_ATTR_FLAG_EXCLUDE_GUEST |
			 (inherit ? PERF_ATTR_FLAG_INHERIT : 0);
	size_t at;

	pdw_bytes(&w, "PERFILE2", 8);
	pdw_u64(&w, 16);
	at = pdw_begin(&w, PERF_REC_HEADER_ATTR, 0);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 4000, RD_ST, flags, rf, 0, 0,
		 0, 0);
	pdw_u64(&w, ID_LEAD);
	pdw_end(&w, at);
	if (group) {
		at = pdw_begin(&w, PERF_REC_HEADER_ATTR, 0);
		pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, RD_ST,
			 PERF_ATTR_FLAG_EXCLUDE_GUEST | (inherit ? PERF_ATTR_FLAG_INHERIT : 0), rf,
			 0, 0, 0, 0);
		pdw_u64(&w, ID_MEMBER);
		pdw_end(&w, at);
	}
	if (inherit) {
		/* each thread's own counts */
		read_sample(&w, group, 100, 1000, 1000, 5);
		read_sample(&w, group, 101, 2000, 700, 9);
		read_sample(&w, group, 100, 3000, 1600, 5);  /* member unchanged: left out */
		read_sample(&w, group, 101, 4000, 1000, 12);
	} else {
		/* one counter for all */
		read_sample(&w, group, 100, 1000, 1000, 5);
		read_sample(&w, group, 101, 2000, 1700, 14);
		read_sample(&w, group, 100, 3000, 2300, 14);
		read_sample(&w, group, 101, 4000, 2600, 17);
	}
	return w;
}

static void test_sample_read(void **state)
{
	static const struct {
		bool group, inherit;
		unsigned nr;
		const char *event[8];
		uint64_t period[8];
	} cases[] = {
		{ true, true, 7,
		  { "cpu-clock", "page-faults", "cpu-clock", "page-faults", "cpu-clock",
		    "cpu-clock", "page-faults" },
		  { 1000, 5, 700, 9, 600, 300, 3 } },
		{ true, false, 7,
		  { "cpu-clock", "page-faults", "cpu-clock", "page-faults", "cpu-clock",
		    "cpu-clock", "page-faults" },
		  { 1000, 5, 700, 9, 600, 300, 3 } },
		{ false, false, 4,
		  { "cpu-clock", "cpu-clock", "cpu-clock", "cpu-clock" },
		  { 1000, 700, 600, 300 } },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct pdw w = build_reads(cases[c].group, cases[c].inherit);
		struct perf_reader_opts o = { .ordered = true };
		struct perf_evsel *const *ev;
		struct perf_reader *r;
		struct reads_got g = { 0 };
		size_t nr;

		print_message("group %d inherit %d\n", cases[c].group, cases[c].inherit);
		assert_int_equal(perf_reader_open_mem(w.b, w.n, &o, &r), PP_OK);
		assert_int_equal(perf_reader_run(r, collect_reads, &g), PP_OK);
		assert_int_equal(g.samples, 4);
		assert_int_equal(g.nr, cases[c].nr);
		for (unsigned i = 0; i < g.nr; i++) {
			assert_string_equal(g.event[i], cases[c].event[i]);
			assert_int_equal(g.period[i], cases[c].period[i]);
		}
		ev = perf_reader_evsels(r, &nr);
		if (cases[c].group) {
			assert_int_equal(nr, 2);
			assert_int_equal(ev[0]->nr_samples, 4);
			assert_int_equal(ev[1]->nr_samples, 3);
		}
		perf_reader_close(r);
		free(w.b);
	}
}

/* An event recorded without its name is named as perf names it: type and
 * config, then the modifiers its attr implies. */
/* prev_state's __print_flags() table, read from a print format's text as
 * kernels of several ages wrote it; damaged text gives what it can, safely. */
/* A field present in the format but unreadable in any record (a negative
 * offset, no size, a number wider than 8 bytes) is taken as absent, so its
 * reader decides as without it (prev_state read as 0 told every switch
 * preempted); a sound one is found. */
static void test_unreadable_field(void **state)
{
	static const char *const prev_state[] = {
		"offset:24;\tsize:16;", "offset:-8;\tsize:8;", "offset:24;\tsize:0;",
		"offset:24;\tsize:8;",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(prev_state) / sizeof(prev_state[0]); i++) {
		struct tep_handle *tep = tep_alloc();
		char fmt[1024];
		struct perf_evsel e = { 0 };
		int n = snprintf(fmt, sizeof(fmt),
				 "name: sched_switch\nID: 316\nformat:\n"
				 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
				 "\tfield:int prev_pid;\toffset:8;\tsize:4;\tsigned:1;\n"
				 "\tfield:long prev_state;\t%s\tsigned:1;\n"
				 "\nprint fmt: \"%%d\", REC->prev_pid\n", prev_state[i]);

		assert_non_null(tep);
		assert_int_equal(tep_parse_event(tep, fmt, (unsigned long)n, "sched"), 0);
		e.tp = tep_find_event_by_name(tep, "sched", "sched_switch");
		assert_non_null(e.tp);
		assert_non_null(perf_tp_field(&e, "prev_pid"));
		if (i < 3 && perf_tp_field(&e, "prev_state"))
			fail_msg("prev_state %s: found, though no record can hold it", prev_state[i]);
		if (i == 3)
			assert_non_null(perf_tp_field(&e, "prev_state"));
		tep_free(tep);
	}
}

static void test_print_flags(void **state)
{
	static const struct {
		const char *fmt;
		const char *want; /* value=letter pairs, hex */
	} cases[] = {
		/* 3.x: decimal values, "} ," spacing, a mask expression before */
		{ "print fmt: \"prev_state=%s%s\", REC->prev_state & (2048-1) ? "
		  "__print_flags(REC->prev_state & (2048-1), \"|\", { 1, \"S\"} , { 2, \"D\" }, "
		  "{ 4, \"T\" }, { 16, \"Z\" }, { 32, \"X\" }, { 1024, \"N\" }) : \"R\", "
		  "REC->prev_state & 2048 ? \"+\" : \"\"\n",
		  "1=S 2=D 4=T 10=Z 20=X 400=N" },
		/* 4.14 and later: hex, the mask as an expression of the states */
		{ "print fmt: \"s=%s\", (REC->prev_state & ((((0x0000 | 0x0001 | 0x0002) + 1) << 1) "
		  "- 1)) ? __print_flags(REC->prev_state & ((((0x0000 | 0x0001 | 0x0002) + 1) << 1) "
		  "- 1), \"|\", { 0x0001, \"S\" }, { 0x0002, \"D\" }, { 0x0080, \"I\" }) : \"R\"\n",
		  "1=S 2=D 80=I" },
		/* values as constant expressions; another field's table first */
		{ "print fmt: \"%s %s\", __print_flags(REC->prev_pid, \"|\", { 1, \"Q\" }), "
		  "__print_flags(REC->prev_state, \"|\", { (1 << 0), \"S\" }, {0x2,\"D\"}, "
		  "{ (0x100 | 0x200) >> 8, \"W\" }, { 4UL, \"T\" })\n",
		  "1=S 2=D 3=W 4=T" },
		/* a longer name that starts with the field's is not it */
		{ "print fmt: \"%s\", __print_flags(REC->prev_state2, \"|\", { 1, \"S\" })\n", "" },
		/* damaged: no table, cut short, a value that is no number, a
		 * division (not evaluated), an unclosed parenthesis */
		{ "print fmt: \"%s\", __print_flags(REC->prev_state", "" },
		{ "print fmt: \"%s\", __print_flags(REC->prev_state, \"|\", { 1, \"S\" }, { 2, \"D", "1=S" },
		{ "print fmt: \"%s\", __print_flags(REC->prev_state, \"|\", { x, \"S\" }, "
		  "{ 1 / 0, \"D\" }, { 4, \"T\" })", "4=T" },
		{ "print fmt: \"%s\", __print_flags((REC->prev_state, \"|\", { 1, \"S\" })", "" },
		{ "print fmt: \"%s\", __print_flags(REC->prev_state, \"|\", { ((((((((((((((((((((((((((("
		  "((((((((((((1)))))))))))))))))))))))))))))))))))))))), \"S\" }, { 2, \"D\" })", "2=D" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perf_evsel e = { .print_fmt = cases[i].fmt };
		struct perf_tp_flag f[16];
		char got[256] = "";
		size_t n = perf_tp_print_flags(&e, "prev_state", f, 16), at = 0;

		for (size_t k = 0; k < n; k++)
			at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%llx=%c", k ? " " : "",
					       (unsigned long long)f[k].value, f[k].letter);
		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: got '%s', want '%s'", i, got, cases[i].want);
	}
}

static void test_default_names(void **state)
{
	static const struct {
		uint32_t type;
		uint64_t config, flags;
		const char *name;
		uint32_t bp_type;
		uint64_t bp_addr;
	} cases[] = {
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, PERF_ATTR_FLAG_EXCLUDE_GUEST, "cpu-clock", 0, 0 },
		{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 0, "dummy:HG", 0, 0 },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
		  2ull << PERF_ATTR_PRECISE_SHIFT | PERF_ATTR_FLAG_EXCLUDE_GUEST, "cycles:ppH", 0, 0 },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		  2ull << PERF_ATTR_PRECISE_SHIFT | PERF_ATTR_FLAG_EXCLUDE_GUEST, "branches:ppH", 0, 0 },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
		  PERF_ATTR_FLAG_EXCLUDE_KERNEL | PERF_ATTR_FLAG_EXCLUDE_HV |
		  PERF_ATTR_FLAG_EXCLUDE_GUEST, "cycles:uH", 0, 0 },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
		  PERF_ATTR_FLAG_EXCLUDE_USER | PERF_ATTR_FLAG_EXCLUDE_HV, "instructions:k", 0, 0 },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
		  PERF_ATTR_FLAG_EXCLUDE_HOST | PERF_ATTR_FLAG_EXCLUDE_GUEST, "cycles", 0, 0 },
		{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, PERF_ATTR_FLAG_EXCLUDE_HOST, "cycles:G", 0, 0 },
		/* what perf script names each of these (a pipe recording's attr
		 * patched, its names taken out): cache events from their config */
		{ PERF_TYPE_HW_CACHE, 0x10000, PERF_ATTR_FLAG_EXCLUDE_GUEST, "L1-dcache-load-misses", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x0, PERF_ATTR_FLAG_EXCLUDE_GUEST, "L1-dcache-loads", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x10202, PERF_ATTR_FLAG_EXCLUDE_GUEST, "LLC-prefetch-misses", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x10103, PERF_ATTR_FLAG_EXCLUDE_GUEST, "dTLB-store-misses", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x10005, 1ull << PERF_ATTR_PRECISE_SHIFT | PERF_ATTR_FLAG_EXCLUDE_GUEST,
		  "branch-load-misses:pH", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x6, PERF_ATTR_FLAG_EXCLUDE_GUEST, "node-loads", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x101, PERF_ATTR_FLAG_EXCLUDE_GUEST, "invalid-cache", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x7, PERF_ATTR_FLAG_EXCLUDE_GUEST, "unknown-ext-hardware-cache-type", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x300, PERF_ATTR_FLAG_EXCLUDE_GUEST, "unknown-ext-hardware-cache-op", 0, 0 },
		{ PERF_TYPE_HW_CACHE, 0x20000, PERF_ATTR_FLAG_EXCLUDE_GUEST,
		  "unknown-ext-hardware-cache-result", 0, 0 },
		{ PERF_TYPE_RAW, 0x1234, PERF_ATTR_FLAG_EXCLUDE_GUEST, "raw 0x1234", 0, 0 },
		{ PERF_TYPE_HARDWARE, 0x20, PERF_ATTR_FLAG_EXCLUDE_GUEST, "unknown-hardware", 0, 0 },
		{ PERF_TYPE_SOFTWARE, 0x30, PERF_ATTR_FLAG_EXCLUDE_GUEST, "unknown-software", 0, 0 },
		{ PERF_TYPE_BREAKPOINT, 0, PERF_ATTR_FLAG_EXCLUDE_GUEST, "mem:0x401000:w", 2, 0x401000 },
		{ PERF_TYPE_BREAKPOINT, 0, PERF_ATTR_FLAG_EXCLUDE_GUEST, "mem:0x1234:rwx", 7, 0x1234 },
		{ PERF_TYPE_TRACEPOINT, 5, PERF_ATTR_FLAG_EXCLUDE_GUEST, "unknown tracepoint", 0, 0 },
		{ 9, 1, PERF_ATTR_FLAG_EXCLUDE_GUEST, "unknown attr type: 9", 0, 0 },
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	struct pdw w = { 0 };
	struct perf_evsel *const *ev;
	struct perf_reader *r;
	size_t nr, at;

	(void)state;
	pdw_bytes(&w, "PERFILE2", 8);
	pdw_u64(&w, 16);
	for (size_t i = 0; i < n; i++) {
		size_t a0;

		at = pdw_begin(&w, PERF_REC_HEADER_ATTR, 0);
		a0 = w.n;
		pdw_attr(&w, cases[i].type, cases[i].config, 1000, PERF_SAMPLE_IP | PERF_SAMPLE_ID,
			 cases[i].flags, 0, 0, 0, 0, 0);
		memcpy(w.b + a0 + 52, &cases[i].bp_type, 4);
		memcpy(w.b + a0 + 56, &cases[i].bp_addr, 8);
		pdw_u64(&w, 500 + i);
		pdw_end(&w, at);
	}
	assert_int_equal(perf_reader_open_mem(w.b, w.n, NULL, &r), PP_OK);
	assert_int_equal(perf_reader_run(r, NULL, NULL), PP_OK);
	ev = perf_reader_evsels(r, &nr);
	assert_int_equal(nr, n);
	for (size_t i = 0; i < n; i++) {
		print_message("%s\n", ev[i]->name);
		assert_string_equal(ev[i]->name, cases[i].name);
	}
	perf_reader_close(r);
	free(w.b);
}

/*
 * The wait before reading a live pipe again: long enough for it to half
 * fill at the rate just seen, at most the cap; a pipe found full halves
 * it (its writer may have waited: perf loses samples then); under 0.1 ms
 * none. The build before waited the whole cap (250 ms for 1 s windows)
 * after every small read: a stream fed fast was read at ~4 MB/s.
 */
static void test_gather_wait(void **state)
{
	const size_t cap = 1 << 20;
	const uint64_t max = 250000000u, ms = 1000000u;
	uint64_t w = max;

	(void)state;
	/* a slow stream: 8 KiB in 250 ms, the pipe far from half full */
	assert_int_equal(perf_gather_next(max, 8192, cap, max), max);
	/* nothing came: the longest wait */
	assert_int_equal(perf_gather_next(10 * ms, 0, cap, max), max);
	/* half the pipe in 10 ms: 10 ms again; a quarter: 20 ms */
	assert_int_equal(perf_gather_next(10 * ms, cap / 2, cap, max), 10 * ms);
	assert_int_equal(perf_gather_next(10 * ms, cap / 4, cap, max), 20 * ms);
	/* found full: halved, each time, down to none */
	for (int i = 0; i < 20 && w; i++) {
		uint64_t n = perf_gather_next(w, cap, cap, max);

		assert_true(n < w);
		w = n;
	}
	assert_int_equal(w, 0);
	/* a fast stream read at once (a few us since the read before) waits
	 * only what half a pipe takes at that rate */
	assert_int_equal(perf_gather_next(20000, 64 << 10, cap, max), 160000);
	/* a huge wait times a big pipe does not wrap */
	assert_int_equal(perf_gather_next(UINT64_MAX / 2, 1, cap, max), max);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_mode),
		cmocka_unit_test(test_file_swapped),
		cmocka_unit_test(test_pipe_mode),
		cmocka_unit_test(test_sample_all_fields),
		cmocka_unit_test(test_layout_positions),
		cmocka_unit_test(test_attr_sizes),
		cmocka_unit_test(test_sample_simple_same),
		cmocka_unit_test(test_zstd_split),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_unknown_records),
		cmocka_unit_test(test_unknown_id),
		cmocka_unit_test(test_queue_limit),
		cmocka_unit_test(test_held_records),
		cmocka_unit_test(test_not_perf_data),
		cmocka_unit_test(test_event_listed),
		cmocka_unit_test(test_lost),
		cmocka_unit_test(test_sample_read),
		cmocka_unit_test(test_default_names),
		cmocka_unit_test(test_print_flags),
		cmocka_unit_test(test_unreadable_field),
		cmocka_unit_test(test_threaded_cutting),
		cmocka_unit_test(test_mapped),
		cmocka_unit_test(test_gather_wait),
	};

	pp_log_set_level(PP_LOG_ERROR - 1); /* quiet: the tests provoke errors */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
