/* SPDX-License-Identifier: MIT */
/*
 * cmd_stacks.c - `perfport stacks`: every sample with its named stack, in
 * perf script's layout, so the two can be compared line by line.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../machine/machine.h"
#include "../perf/perf.h"
#include "../symbols/symbols.h"
#include "../util/error.h"
#include "../util/log.h"
#include "cli.h"
#include "symopts.h"

#define MAX_FRAMES 1024

struct stacks_ctx {
	struct machine *m;
	struct symbolizer *sym;
	struct upool *pool;
	const char *event;                /* only samples of these events */
	const struct perf_evsel *last;    /* the last sample's event, and whether listed */
	bool last_listed;
	struct raw_frame frames[MAX_FRAMES];
	int err;
};

static void print_frame(const struct raw_frame *rf, const struct sym_frame *f)
{
	printf("\t%16" PRIx64 " ", rf->addr);
	if (f->function && (f->flags & FRAME_F_INLINED))
		printf("%s", f->function);
	else if (f->function)
		printf("%s+0x%" PRIx64, f->function, f->sym_offset);
	else
		printf("[unknown]");
	if (f->flags & FRAME_F_INLINED)
		printf(" (inlined)");
	else
		printf(" (%s)", f->module ? f->module : "[unknown]");
	if (f->file)
		printf(" %s:%u", f->file, f->line);
	putchar('\n');
}

static void print_one(struct stacks_ctx *c, const struct perf_event *ev, const uint64_t *pcs,
		      size_t npcs, const struct perf_evsel *evsel, uint64_t period)
{
	const struct perf_sample *s = &ev->sample;
	const char *comm = machine_comm(c->m, s->tid);
	size_t n;

	printf("%s %" PRId32 "/%" PRId32 " %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:\n",
	       comm ? comm : ":-1", (int32_t)s->pid, (int32_t)s->tid, s->time / 1000000000,
	       s->time % 1000000000 / 1000, period, evsel->name);
	n = cli_sample_frames(c->m, ev, pcs, npcs, c->frames, MAX_FRAMES);
	/* to where the stack ends: a runtime's root (printed), an address
	 * outside every mapping (not) */
	for (size_t i = 0, end = 0; i < n && !end; i++) {
		struct sym_frame f[32];
		size_t k = sym_resolve(c->sym, &c->frames[i], machine_kernel_text(c->m), f, 32);

		for (size_t j = 0; j < k && !end; j++) {
			end = (size_t)sym_frame_ends(f[j].flags, npcs > 0);
			if (end != 2)
				print_frame(&c->frames[i], &f[j]);
		}
	}
	putchar('\n');
}

static bool listed(struct stacks_ctx *c, const struct perf_evsel *e)
{
	if (!c->event)
		return true;
	if (e != c->last) {
		c->last = e;
		c->last_listed = perf_event_listed(c->event, e->name ? e->name : "");
	}
	return c->last_listed;
}

/*
 * Called by the pool in sample order, with the unwound user stack if any.
 * A sample that read counters is printed once per counter that moved, with
 * its event and increase, as perf script prints it.
 */
static int print_sample(void *ctx, const struct perf_event *ev, const uint64_t *pcs, size_t npcs)
{
	struct stacks_ctx *c = ctx;

	if (!ev->has_reads) {
		print_one(c, ev, pcs, npcs, ev->evsel, ev->sample.period);
		return 0;
	}
	for (size_t i = 0; i < ev->nr_reads; i++)
		if (listed(c, ev->reads[i].evsel))
			print_one(c, ev, pcs, npcs, ev->reads[i].evsel, ev->reads[i].period);
	return 0;
}

static int on_event(void *ctx, const struct perf_event *ev)
{
	struct stacks_ctx *c = ctx;

	if (ev->type != PERF_RECORD_SAMPLE) {
		c->err = upool_machine_event(c->pool, c->m, ev);
		return c->err;
	}
	/* the counters a sample read are picked when it is printed */
	if (ev->has_reads || listed(c, ev->evsel))
		c->err = upool_add(c->pool, ev);
	return c->err;
}

static void stacks_usage(FILE *out)
{
	fprintf(out,
		"usage: perfport stacks [-i FILE] [--event NAME[,NAME]] [--symfs DIR] [--buildid-dir DIR]\n"
		"                       [--kallsyms FILE] [--no-inline] [-j N]\n"
		"\n"
		"Print every sample with its stack, leaf first, one frame a line:\n"
		"address, function+offset, (module), and source file:line when known.\n"
		"The layout follows perf script's, so the two can be compared.\n"
		"\n"
		"options:\n"
		"  -i, --input FILE        the recording (default ./perf.data; - for stdin)\n"
		"      --event NAME[,NAME] samples of these events only (cpu-clock stands\n"
		"                          for cpu-clock/freq=997/ too)\n"
		SYMOPTS_HELP
		"  -h, --help              show this help\n");
}

int cmd_stacks(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "event", required_argument, NULL, 'e' },
		SYMOPTS_LONG_OPTIONS,
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_reader_opts ropts = { .ordered = true };
	struct cli_sym sopts = { .o.use_proc_kallsyms = true };
	struct stacks_ctx *c;
	const struct perf_stats *st;
	struct perf_reader *r;
	const char *path = "perf.data";
	int opt, ret, rc;

	c = calloc(1, sizeof(*c));
	if (!c)
		return EXIT_NOTHING;
	while ((opt = getopt_long(argc, argv, ":i:h" CLI_GLOBAL_SHORT SYMOPTS_SHORT, opts, NULL)) != -1) {
		switch (opt) {
		case 'i': path = optarg; break;
		case 'e': c->event = optarg; break;
		case 'h':
			stacks_usage(stdout);
			free(c);
			return EXIT_FULL;
		default:
			if (cli_global_option(opt) || symopts_parse(opt, optarg, &sopts))
				break;
			free(c);
			return cli_bad_option("stacks", opt, argv, opts);
		}
	}
	if (optind < argc) {
		free(c);
		return cli_usage_error("stacks", "unexpected argument '%s'", argv[optind]);
	}
	if (sopts.bad_jobs) {
		free(c);
		return cli_usage_error("stacks", "--jobs takes a number from 1 to 256");
	}
	if (symopts_prepare(&sopts, path)) {
		free(c);
		return EXIT_NOTHING;
	}
	ropts.events = c->event;
	ret = perf_reader_open(path, &ropts, &r);
	if (ret) {
		free(c);
		return ret == PP_EUSAGE ? EXIT_USAGE : EXIT_NOTHING;
	}
	c->m = machine_new(perf_reader_header(r));
	c->sym = sym_new(&sopts.o, perf_reader_header(r));
	if (c->sym && symopts_jobs(&sopts) > 1)
		sym_prefetch(c->sym, symopts_jobs(&sopts) - 1 < 4 ? symopts_jobs(&sopts) - 1 : 4);
	c->pool = c->m ? upool_new(symopts_jobs(&sopts), &sopts.o, perf_reader_header(r), c->m,
				   print_sample, c, 0) : NULL;
	if (!c->m || !c->sym || !c->pool) {
		ret = PP_ENOMEM;
	} else {
		ret = perf_reader_run(r, on_event, c);
		if (ret == PP_OK)
			ret = upool_flush(c->pool);
		if (c->err)
			ret = c->err;
	}
	st = perf_reader_stats(r);
	rc = EXIT_FULL;
	if (ret == PP_EUSAGE) {
		rc = EXIT_USAGE;
	} else if (ret != PP_OK || st->skipped_records || st->truncated) {
		char why[512];

		perf_stats_partly(st, why, sizeof(why));
		pp_warn_status("'%s': read partly: %s%s%s", path, why, ret != PP_OK ? ": " : "",
			       ret != PP_OK ? pp_strerror(ret) : "");
		rc = EXIT_PARTIAL;
	}
	upool_free(c->pool);
	sym_free(c->sym);
	machine_free(c->m);
	perf_reader_close(r);
	free(c);
	return rc;
}
