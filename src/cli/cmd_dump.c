/* SPDX-License-Identifier: MIT */
/*
 * cmd_dump.c - `perfport dump`: one line per record, in time order, for
 * looking at a recording and for checking the reader against perf script.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../perf/perf.h"
#include "../util/error.h"
#include "../util/log.h"
#include "cli.h"

struct dump_ctx {
	bool samples_only;
	const char *event;   /* only samples of these events */
	const struct perf_evsel *last; /* the last sample's event, and whether listed */
	bool last_listed;
};

static void print_callchain(const struct perf_sample *s)
{
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		printf("%s%" PRIx64, i ? "," : " chain=", s->callchain[i]);
}

/* Tracepoint samples: each numeric field as name=value (signed as declared). */
static void print_tp_fields(const struct perf_event *ev)
{
	const struct tep_format_field *f = NULL;

	while ((f = perf_tp_field_next(ev->evsel, f))) {
		uint64_t v;

		if (perf_tp_read_u64(f, &ev->sample, &v) == 0)
			printf(" %s=%" PRIu64, perf_tp_field_name(f), v);
	}
}

static int on_event(void *ctx, const struct perf_event *ev)
{
	struct dump_ctx *d = ctx;
	const struct perf_sample *s = &ev->sample;
	const char *name = perf_record_type_name(ev->type);

	if (d->samples_only && ev->type != PERF_RECORD_SAMPLE)
		return 0;
	if (d->event && ev->type == PERF_RECORD_SAMPLE && ev->evsel != d->last) {
		d->last = ev->evsel;
		d->last_listed = perf_event_listed(d->event, ev->evsel->name ? ev->evsel->name : "");
	}
	if (d->event && (ev->type != PERF_RECORD_SAMPLE || !d->last_listed))
		return 0;
	if (ev->type == PERF_RECORD_SAMPLE || ev->has_sample_id)
		printf("%" PRIu64 ".%09" PRIu64, s->time / 1000000000, s->time % 1000000000);
	else
		printf("-");
	printf(" %s", name ? name : "UNKNOWN");
	if (ev->type == PERF_RECORD_SAMPLE || ev->has_sample_id) {
		/* pid/tid -1 is real (a task the kernel could not name): print it. */
		uint64_t st = ev->evsel->attr.sample_type;

		if (st & PERF_SAMPLE_TID)
			printf(" %" PRId32 "/%" PRId32, (int32_t)s->pid, (int32_t)s->tid);
		if (st & PERF_SAMPLE_CPU)
			printf(" cpu=%" PRIu32, s->cpu);
	}
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		printf(" event=%s ip=%" PRIx64 " period=%" PRIu64, ev->evsel->name, s->ip, s->period);
		/* the counters it read that moved: event and increase */
		for (size_t i = 0; i < ev->nr_reads; i++)
			printf("%s%s:%" PRIu64, i ? "," : " reads=", ev->reads[i].evsel->name,
			       ev->reads[i].period);
		print_tp_fields(ev);
		print_callchain(s);
		for (uint64_t i = 0; i < s->branch_nr; i++)
			printf("%s%" PRIx64 ">%" PRIx64, i ? "," : " branches=", s->branch[i].from,
			       s->branch[i].to);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		printf(" pid=%" PRIu32 " start=%" PRIx64 " len=%" PRIx64 " pgoff=%" PRIx64 " %s",
		       ev->u.mmap.pid, ev->u.mmap.start, ev->u.mmap.len, ev->u.mmap.pgoff,
		       ev->u.mmap.filename);
		break;
	case PERF_RECORD_COMM:
		printf(" pid=%" PRIu32 " tid=%" PRIu32 " comm=%s%s", ev->u.comm.pid, ev->u.comm.tid,
		       ev->u.comm.comm, ev->u.comm.exec ? " exec" : "");
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		printf(" pid=%" PRIu32 " ppid=%" PRIu32 " tid=%" PRIu32 " ptid=%" PRIu32,
		       ev->u.task.pid, ev->u.task.ppid, ev->u.task.tid, ev->u.task.ptid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		printf(" %s%s", ev->u.sw.out ? "out" : "in", ev->u.sw.preempt ? " preempt" : "");
		if (ev->type == PERF_RECORD_SWITCH_CPU_WIDE)
			printf(" next_prev=%" PRIu32 "/%" PRIu32, ev->u.sw.next_prev_pid,
			       ev->u.sw.next_prev_tid);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		printf(" lost=%" PRIu64, ev->u.lost.lost);
		break;
	default:
		break;
	}
	putchar('\n');
	return 0;
}

static void dump_usage(FILE *out)
{
	fprintf(out,
		"usage: perfport dump [-i FILE] [--samples] [--event NAME[,NAME]] [--unordered]\n"
		"\n"
		"Print one line per record as perfport reads it: time, type, pid/tid, cpu,\n"
		"and the record's fields (samples: event, ip, period, callchain).\n"
		"\n"
		"options:\n"
		"  -i, --input FILE  the recording (default ./perf.data; - for stdin)\n"
		"      --samples     print samples only\n"
		"      --event NAME  print samples of these events only (comma-separated)\n"
		"      --unordered   print in file order instead of time order\n"
		"  -h, --help        show this help\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "samples", no_argument, NULL, 's' },
		{ "event", required_argument, NULL, 'e' },
		{ "unordered", no_argument, NULL, 'u' },
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_reader_opts ropts = { .ordered = true };
	struct dump_ctx d = { 0 };
	const struct perf_stats *st;
	struct perf_reader *r;
	const char *path = "perf.data";
	int c, ret;

	while ((c = getopt_long(argc, argv, ":i:h" CLI_GLOBAL_SHORT, opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			path = optarg;
			break;
		case 's':
			d.samples_only = true;
			break;
		case 'e':
			d.event = optarg;
			break;
		case 'u':
			ropts.ordered = false;
			break;
		case 'h':
			dump_usage(stdout);
			return EXIT_FULL;
		default:
			if (cli_global_option(c))
				break;
			return cli_bad_option("dump", c, argv, opts);
		}
	}
	if (optind < argc)
		return cli_usage_error("dump", "unexpected argument '%s'", argv[optind]);
	ropts.events = d.event;
	ret = perf_reader_open(path, &ropts, &r);
	if (ret)
		return ret == PP_EUSAGE ? EXIT_USAGE : EXIT_NOTHING;
	ret = perf_reader_run(r, on_event, &d);
	st = perf_reader_stats(r);
	c = EXIT_FULL;
	if (ret == PP_EUSAGE) {
		c = EXIT_USAGE;
	} else if (ret != PP_OK || st->skipped_records || st->truncated) {
		char why[512];

		perf_stats_partly(st, why, sizeof(why));
		pp_warn_status("'%s': read partly: %s%s%s", path, why, ret != PP_OK ? ": " : "",
			       ret != PP_OK ? pp_strerror(ret) : "");
		c = EXIT_PARTIAL;
	}
	perf_reader_close(r);
	return c;
}
