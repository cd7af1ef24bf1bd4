/* SPDX-License-Identifier: MIT */
/*
 * arms.c - the "arms" exporter: Alibaba ARMS continuous profiling logs, as
 * Simple Log Service stores them (../shared/seeds/003, the log data format):
 * one log per distinct stack and value type, every value a string, written
 * as JSON lines:
 *
 *   {"aggTypes":"sum","dataType":"CallStack","durationNs":"...","labels":"{...}",
 *    "language":"native","name":"leaf /file.c","profileID":"<uuid>",
 *    "stack":"caller /file.c\ncaller's caller ...","stackID":"<16 hex>",
 *    "type":"profile_cpu","units":"nanoseconds","val":"...","valueTypes":"cpu"}
 *
 * Types: profile_cpu/cpu (on-CPU time) and profile_wall_clock/wall_clock
 * (on-CPU time plus every off-CPU state but idle: the seed's "CPU execution
 * time plus blocking, I/O waiting and lock competition"). A frame is
 * "function position", position the source file if known, else the module,
 * else "?"; stack runs from the leaf's parent down to the root, one frame a
 * line; stackID is 16 hex digits of FNV-1a 64 over the whole stack.
 * Uploading to SLS (PutLogs) is still to come (issue 7).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/plugin.h"

static const struct perfport_option_def options[] = {
	{ "language", PERFPORT_OPT_STRING, "native", NULL, "the language field" },
	{ "types", PERFPORT_OPT_LIST, "cpu,wall_clock", "cpu,wall_clock",
	  "profile types to write: cpu (profile_cpu), wall_clock (profile_wall_clock)" },
};

struct arms {
	const struct perfport_host *host;
	const char *language;
	bool cpu, wall;
	FILE *out;
	char *labels;             /* the labels field: a JSON object as a string */
	uint64_t duration_ns;
	const struct perfport_profile *p;
	int err;
};

/* JSON string body (no quotes): escaped; bytes that are not UTF-8 become '?'. */
static void put_json(FILE *out, const char *s)
{
	const unsigned char *q = (const unsigned char *)s;

	while (*q) {
		unsigned char ch = *q;
		int n = ch < 0x80 ? 0 : (ch & 0xe0) == 0xc0 ? 1 : (ch & 0xf0) == 0xe0 ? 2
			: (ch & 0xf8) == 0xf0 ? 3 : -1;
		bool ok = n >= 0;

		for (int k = 1; ok && k <= n; k++)
			ok = (q[k] & 0xc0) == 0x80;
		if (!ok) {
			fputc('?', out);
			q++;
		} else if (n) {
			fwrite(q, 1, (size_t)n + 1, out);
			q += n + 1;
		} else {
			if (ch == '"' || ch == '\\')
				fprintf(out, "\\%c", ch);
			else if (ch == '\n')
				fputs("\\n", out);
			else if (ch < 0x20)
				fprintf(out, "\\u%04x", ch);
			else
				fputc(ch, out);
			q++;
		}
	}
}

static void put_field(FILE *out, bool first, const char *key, const char *value)
{
	fprintf(out, "%s\"%s\":\"", first ? "" : ",", key);
	put_json(out, value);
	fputc('"', out);
}

static const char *position(const struct perfport_frame *f)
{
	return f->file ? f->file : f->module ? f->module : "?";
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* A text buffer that grows. */
struct text {
	char *p;
	size_t len, cap;
};

static bool text_add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		char *q;

		while (cap < t->len + n + 1)
			cap *= 2;
		q = realloc(t->p, cap);
		if (!q)
			return false;
		t->p = q;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n + 1);
	t->len += n;
	return true;
}

static void put_log(struct arms *a, const char *type, const char *vtype, uint64_t val,
		    const char *name, const char *stack, const char *id)
{
	char num[32];

	fputc('{', a->out);
	put_field(a->out, true, "aggTypes", "sum");
	put_field(a->out, false, "dataType", "CallStack");
	snprintf(num, sizeof(num), "%" PRIu64, a->duration_ns);
	put_field(a->out, false, "durationNs", num);
	put_field(a->out, false, "labels", a->labels);
	put_field(a->out, false, "language", a->language);
	put_field(a->out, false, "name", name);
	put_field(a->out, false, "profileID", a->p->profile_id);
	put_field(a->out, false, "stack", stack);
	put_field(a->out, false, "stackID", id);
	put_field(a->out, false, "type", type);
	put_field(a->out, false, "units", "nanoseconds");
	snprintf(num, sizeof(num), "%" PRIu64, val);
	put_field(a->out, false, "val", num);
	put_field(a->out, false, "valueTypes", vtype);
	fputs("}\n", a->out);
}

static int one_stack(void *ctx, const struct perfport_profile *p, const uint32_t *frames,
		     size_t depth, uint32_t node)
{
	struct arms *a = ctx;
	uint64_t cpu = 0, wall = 0, h = 0xcbf29ce484222325ULL;
	struct text name = { 0 }, stack = { 0 };
	char id[17];

	for (unsigned c = 0; c < p->nr_counters; c++) {
		uint64_t v = perfport_self_value(p, node, c);

		if (!strcmp(p->counter_names[c], "on-cpu"))
			cpu += v;
		if (strcmp(p->counter_names[c], "idle") != 0)
			wall += v;
	}
	if (!(a->cpu && cpu) && !(a->wall && wall))
		return 0;
	/* the leaf as name; its callers, leaf's parent first, as stack */
	for (size_t i = depth; i-- > 0;) {
		const struct perfport_frame *f = perfport_frame_at(p, frames[i]);
		struct text *t = i == depth - 1 ? &name : &stack;

		if (t == &stack && stack.len && !text_add(t, "\n"))
			goto oom;
		if (!text_add(t, f->function) || !text_add(t, " ") || !text_add(t, position(f)))
			goto oom;
		h = fnv(fnv(fnv(h, f->function), " "), position(f));
		h = fnv(h, "\n");
	}
	snprintf(id, sizeof(id), "%016" PRIx64, h);
	if (a->cpu && cpu)
		put_log(a, "profile_cpu", "cpu", cpu, name.p, stack.p ? stack.p : "", id);
	if (a->wall && wall)
		put_log(a, "profile_wall_clock", "wall_clock", wall, name.p, stack.p ? stack.p : "", id);
	free(name.p);
	free(stack.p);
	return ferror(a->out) ? -1 : 0;
oom:
	free(name.p);
	free(stack.p);
	a->err = 1;
	return -1;
}

static enum perfport_status arms_init(const struct perfport_host *host,
				      const struct perfport_option *opts, size_t nr, void **state)
{
	struct arms *a = calloc(1, sizeof(*a));

	if (!a)
		return PERFPORT_ERROR;
	a->host = host;
	a->language = "native";
	a->cpu = a->wall = true;
	for (size_t i = 0; i < nr; i++) {
		const char *v = opts[i].value;

		if (!v)
			continue;
		if (!strcmp(opts[i].name, "language")) {
			a->language = v;
		} else if (!strcmp(opts[i].name, "types")) {
			/* validated by the host: words of "cpu,wall_clock" */
			a->cpu = a->wall = false;
			for (const char *w = v; *w;) {
				size_t n = strcspn(w, ",");

				if (n == 3 && !strncmp(w, "cpu", 3))
					a->cpu = true;
				else if (n == 10 && !strncmp(w, "wall_clock", 10))
					a->wall = true;
				w += n + (w[n] == ',');
			}
		}
	}
	*state = a;
	return PERFPORT_OK;
}

/* The labels field: --label pairs, then the host name, as a JSON object. */
static char *labels_json(const struct perfport_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool first = true;

	if (!m)
		return NULL;
	fputc('{', m);
	for (size_t i = 0; i < p->nr_labels; i++) {
		fprintf(m, "%s\"", first ? "" : ",");
		put_json(m, p->labels[i].key);
		fputs("\":\"", m);
		put_json(m, p->labels[i].value);
		fputc('"', m);
		first = false;
	}
	if (p->hostname) {
		fprintf(m, "%s\"host\":\"", first ? "" : ",");
		put_json(m, p->hostname);
		fputc('"', m);
	}
	fputc('}', m);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static enum perfport_status arms_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct arms *a = state;

	free(a->labels);
	a->labels = labels_json(p);
	if (!a->labels)
		return PERFPORT_ERROR;
	a->out = out;
	a->p = p;
	a->duration_ns = p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
	if (a->host->stacks(p, one_stack, a) || a->err || ferror(out)) {
		a->host->log(a->host, PERFPORT_LOG_ERROR, "arms: cannot write the logs");
		return PERFPORT_ERROR;
	}
	return PERFPORT_OK;
}

static void arms_fini(void *state)
{
	struct arms *a = state;

	if (!a)
		return;
	free(a->labels);
	free(a);
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "arms",
	.description = "Alibaba ARMS continuous-profiling logs (SLS fields) as JSON lines",
	.default_output = "profile.arms.jsonl",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = arms_init,
	.write = arms_write,
	.upload = NULL,
	.fini = arms_fini,
};
