/* SPDX-License-Identifier: MIT */
/*
 * topcsv.c - a small out-of-tree perfport exporter: the top functions of
 * each counter with data, by self value, as CSV:
 *
 *   counter,rank,function,module,self_ns,self_count,percent
 *
 * It shows what every exporter does: declare options, read the profile
 * through the accessors, use a host service (walk), write to the stream
 * the host opened. Build it with this folder's Makefile (pkg-config
 * perfport-plugin) and run: perfport export -f topcsv -O topcsv.top=5
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <perfport/plugin.h>

static const struct perfport_option_def options[] = {
	{ "top", PERFPORT_OPT_INT, "10", NULL, "functions listed per counter" },
};

struct topcsv {
	const struct perfport_host *host;
	long top;
};

/* Self value per function name, summed over every node of that function. */
struct func {
	const char *name, *module;
	uint64_t value, count;
};

struct sums {
	struct func *f;           /* by frame index: frames of one name share a slot */
	size_t nr;
	unsigned counter;
};

static enum perfport_status top_init(const struct perfport_host *host,
				     const struct perfport_option *opts, size_t nr, void **state)
{
	struct topcsv *t = calloc(1, sizeof(*t));

	if (!t)
		return PERFPORT_ERROR;
	t->host = host;
	t->top = 10;
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(opts[i].name, "top") && opts[i].value)
			t->top = strtol(opts[i].value, NULL, 10);
	*state = t;
	return PERFPORT_OK;
}

static int add_self(void *ctx, const struct perfport_profile *p, uint32_t node, int leave)
{
	struct sums *s = ctx;
	const struct perfport_node *n = perfport_node_at(p, node);
	const struct perfport_frame *fr;

	if (leave || node == 0)
		return 0;
	fr = perfport_frame_at(p, n->frame);
	for (size_t i = 0; i < s->nr; i++)
		if (!strcmp(s->f[i].name, fr->function)) {
			s->f[i].value += perfport_self_value(p, node, s->counter);
			s->f[i].count += perfport_self_count(p, node, s->counter);
			return 0;
		}
	s->f[s->nr].name = fr->function;
	s->f[s->nr].module = fr->module;
	s->f[s->nr].value = perfport_self_value(p, node, s->counter);
	s->f[s->nr].count = perfport_self_count(p, node, s->counter);
	s->nr++;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* A CSV field (RFC 4180): quoted, with quotes doubled (C++ names have commas). */
static void csv_field(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static enum perfport_status top_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct topcsv *t = state;
	struct sums s = { .f = calloc(p->nr_nodes + 1, sizeof(*s.f)) };

	if (!s.f)
		return PERFPORT_ERROR;
	fprintf(out, "counter,rank,function,module,self_ns,self_count,percent\n");
	for (unsigned c = 0; c < p->nr_counters; c++) {
		uint64_t total = perfport_total_value(p, 0, c);

		if (!(p->counters_present >> c & 1) || !total)
			continue;
		s.nr = 0;
		s.counter = c;
		t->host->walk(p, add_self, &s);
		qsort(s.f, s.nr, sizeof(*s.f), by_value);
		for (size_t i = 0; i < s.nr && (long)i < t->top && s.f[i].value; i++) {
			fprintf(out, "%s,%zu,", p->counter_names[c], i + 1);
			csv_field(out, s.f[i].name);
			fputc(',', out);
			csv_field(out, s.f[i].module ? s.f[i].module : "");
			fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%.2f\n", s.f[i].value, s.f[i].count,
				100.0 * (double)s.f[i].value / (double)total);
		}
	}
	free(s.f);
	return ferror(out) ? PERFPORT_ERROR : PERFPORT_OK;
}

static void top_fini(void *state)
{
	free(state);
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "topcsv",
	.description = "top functions per counter by self time, as CSV (sample plugin)",
	.default_output = "top.csv",
	.options = options,
	.nr_options = 1,
	.init = top_init,
	.write = top_write,
	.fini = top_fini,
};
