/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader.c - libFuzzer target for the perf.data reader. Reads the
 * input in time order and touches every decoded field a consumer would, so
 * the sanitizers see any pointer the reader hands out past its record.
 */
#include <stddef.h>
#include <stdint.h>

#include "perf/perf.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static int touch(void *ctx, const struct perf_event *ev)
{
	const struct perf_sample *s = &ev->sample;
	uint64_t acc = ev->type + ev->size;

	(void)ctx;
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		acc += s->callchain[i];
	for (uint64_t i = 0; i < s->branch_nr; i++)
		acc += s->branch[i].from + s->branch[i].to;
	if (s->user_regs)
		for (int i = 0; i < __builtin_popcountll(s->user_regs_mask); i++)
			acc += s->user_regs[i];
	if (s->intr_regs)
		for (int i = 0; i < __builtin_popcountll(s->intr_regs_mask); i++)
			acc += s->intr_regs[i];
	for (uint64_t i = 0; s->user_stack && i < s->user_stack_size; i += 64)
		acc += s->user_stack[i];
	if (s->read.values)
		for (uint64_t i = 0; i < s->read.nr * s->read.stride; i++)
			acc += s->read.values[i];
	if (s->raw && s->raw_size)
		acc += ((const uint8_t *)s->raw)[s->raw_size - 1];
	if (ev->evsel && ev->evsel->tp) {
		const struct tep_format_field *f = perf_tp_field(ev->evsel, "prev_state");
		uint64_t v;

		if (f && perf_tp_read_u64(f, s, &v) == 0)
			acc += v;
	}
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		for (const char *p = ev->u.mmap.filename; *p; p++)
			acc += (uint8_t)*p;
		break;
	case PERF_RECORD_COMM:
		for (const char *p = ev->u.comm.comm; *p; p++)
			acc += (uint8_t)*p;
		break;
	case PERF_RECORD_KSYMBOL:
		for (const char *p = ev->u.ksym.name; *p; p++)
			acc += (uint8_t)*p;
		break;
	}
	sink += acc;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_reader_opts o = { .ordered = true, .queue_limit = 1 << 20 };
	struct perf_reader *r;

	pp_log_set_level(-1);
	if (perf_reader_open_mem(data, size, &o, &r) == 0) {
		perf_reader_run(r, touch, NULL);
		perf_reader_close(r);
	}
	return 0;
}
