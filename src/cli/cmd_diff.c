/* SPDX-License-Identifier: MIT */
/*
 * cmd_diff.c - `perfport diff BASE NEW`: what changed between two
 * recordings, per counter - the functions whose share of the counter moved
 * most (and by how much time), the stacks that are new and those that
 * vanished. Both profiles are built with the same options; it only reads
 * them.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/profile.h"
#include "../util/error.h"
#include "../util/hash.h"
#include "../util/log.h"
#include "../util/strtab.h"
#include "cli.h"
#include "profopts.h"
#include "report.h"

enum { BASE = 0, NEW = 1 };

/* A function (by name and module) or a stack (by its frames' names), with
 * its value in each recording. */
struct item {
	const char *key;             /* interned: "function\x1fmodule", or the stack's frames */
	uint64_t self[2], total[2];
};

/* Items by key: the keys interned, so a slot compares pointers. */
struct items {
	struct strtab keys;
	struct item *v;
	size_t nr, cap;
	uint32_t *slots;             /* open addressing on the key's address: index + 1 */
	size_t slots_cap;
	bool oom;
};

static size_t slot_of(const uint32_t *slots, size_t cap, const struct item *v, const char *key)
{
	size_t j = mix64((uint64_t)(uintptr_t)key) & (cap - 1);

	while (slots[j] && v[slots[j] - 1].key != key)
		j = (j + 1) & (cap - 1);
	return j;
}

/* The item of @key, added if new; NULL out of memory (t->oom set). */
static struct item *item_of(struct items *t, const char *text)
{
	const char *key = strtab_intern(&t->keys, text);
	size_t j;

	if (!key)
		goto oom;
	if ((t->nr + 1) * 2 > t->slots_cap) {
		size_t cap = t->slots_cap ? t->slots_cap * 2 : 1024;
		uint32_t *s = calloc(cap, sizeof(*s));

		if (!s)
			goto oom;
		for (size_t i = 0; i < t->nr; i++)
			s[slot_of(s, cap, t->v, t->v[i].key)] = (uint32_t)i + 1;
		free(t->slots);
		t->slots = s;
		t->slots_cap = cap;
	}
	j = slot_of(t->slots, t->slots_cap, t->v, key);
	if (t->slots[j])
		return &t->v[t->slots[j] - 1];
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct item *n = realloc(t->v, cap * sizeof(*n));

		if (!n)
			goto oom;
		t->v = n;
		t->cap = cap;
	}
	t->v[t->nr] = (struct item){ .key = key };
	t->slots[j] = (uint32_t)++t->nr;
	return &t->v[t->nr - 1];
oom:
	t->oom = true;
	return NULL;
}

static void items_free(struct items *t)
{
	strtab_free(&t->keys);
	free(t->v);
	free(t->slots);
}

static void frame_key(const struct profile *p, uint32_t f, char *buf, size_t len)
{
	const struct profile_frame *fr = &p->frames[f];

	snprintf(buf, len, "%s\x1f%s", fr->function ? fr->function : "?",
		 fr->module && !(fr->flags & (FRAME_F_SYNTHETIC | FRAME_F_PROCESS | FRAME_F_THREAD)) ?
		 fr->module : "");
}

/* The functions of @p for counter @c into @t's side @side: self where the
 * threads waited off CPU, as report's tables have it. */
static int add_functions(struct items *t, const struct profile *p, enum counter c, int side)
{
	size_t nr;
	struct func_sum *fs = report_function_sums(p, SORT_FUNCTION, true, INLINE_TO_CALLER, &nr);
	char key[1024];

	if (!fs)
		return -1;
	for (size_t i = 0; i < nr && !t->oom; i++) {
		struct item *it;

		if (!fs[i].self.ns[c] && !fs[i].total.ns[c])
			continue;
		if (p->frames[fs[i].frame].flags & (FRAME_F_PROCESS | FRAME_F_THREAD))
			continue;
		frame_key(p, fs[i].frame, key, sizeof(key));
		if ((it = item_of(t, key))) {
			it->self[side] += fs[i].self.ns[c];
			it->total[side] += fs[i].total.ns[c];
		}
	}
	free(fs);
	return t->oom ? -1 : 0;
}

struct stacks_ctx {
	struct items *t;
	enum counter c;
	int side;
	char buf[65536];
};

static int stack_one(void *ctx, const struct profile *p, const uint32_t *frames, size_t depth,
		     uint32_t node)
{
	struct stacks_ctx *s = ctx;
	size_t used = 0;
	struct item *it;

	if (!p->self[node].ns[s->c])
		return 0;
	s->buf[0] = '\0';
	for (size_t i = 0; i < depth && used + 2 < sizeof(s->buf); i++) {
		const struct profile_frame *f = &p->frames[frames[i]];
		int n = snprintf(s->buf + used, sizeof(s->buf) - used, "%s%s", i ? ";" : "",
				 f->function ? f->function : "?");

		if (n < 0)
			break;
		used += (size_t)n < sizeof(s->buf) - used ? (size_t)n : sizeof(s->buf) - used - 1;
	}
	it = item_of(s->t, s->buf);
	if (!it)
		return PP_ENOMEM;
	it->self[s->side] += p->self[node].ns[s->c];
	return 0;
}

struct diff_opts {
	unsigned counters;
	unsigned top;
	bool json;
};

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static uint64_t whole[2];
static double share(uint64_t v, int side)
{
	return whole[side] ? (double)v / (double)whole[side] : 0.0;
}

/* The change of a function's share: of its total (itself and its callees),
 * which moves with the work it is responsible for; for a stack its own. */
static double delta_share(const struct item *it)
{
	return share(it->total[NEW], NEW) - share(it->total[BASE], BASE);
}

static int cmp_delta(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	double x = delta_share(a), y = delta_share(b);

	x = x < 0 ? -x : x;
	y = y < 0 ? -y : y;
	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int sort_side;

static int cmp_side(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;

	if (a->self[sort_side] != b->self[sort_side])
		return a->self[sort_side] > b->self[sort_side] ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* "function (module)" from a function item's key. */
static void label_of(const char *key, char *buf, size_t len)
{
	const char *sep = strchr(key, '\x1f');
	const char *mod = sep && sep[1] ? strrchr(sep + 1, '/') : NULL;

	mod = mod ? mod + 1 : sep && sep[1] ? sep + 1 : NULL;
	if (mod)
		snprintf(buf, len, "%.*s (%s)", (int)(sep - key), key, mod);
	else
		snprintf(buf, len, "%.*s", sep ? (int)(sep - key) : (int)strlen(key), key);
}

static json_object *function_json(const struct item *it)
{
	const char *sep = strchr(it->key, '\x1f');
	json_object *o = json_object_new_object();

	json_object_object_add(o, "function", json_object_new_string_len(it->key, (int)(sep - it->key)));
	json_object_object_add(o, "module", sep[1] ? json_object_new_string(sep + 1) : NULL);
	json_object_object_add(o, "base_self_ns", json_object_new_uint64(it->self[BASE]));
	json_object_object_add(o, "new_self_ns", json_object_new_uint64(it->self[NEW]));
	json_object_object_add(o, "base_total_ns", json_object_new_uint64(it->total[BASE]));
	json_object_object_add(o, "new_total_ns", json_object_new_uint64(it->total[NEW]));
	json_object_object_add(o, "base_share", json_object_new_double(share(it->total[BASE], BASE)));
	json_object_object_add(o, "new_share", json_object_new_double(share(it->total[NEW], NEW)));
	json_object_object_add(o, "delta_share", json_object_new_double(delta_share(it)));
	json_object_object_add(o, "delta_ns", json_object_new_int64((int64_t)it->total[NEW] -
								  (int64_t)it->total[BASE]));
	return o;
}

static json_object *stack_json(const struct item *it, int side)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	for (const char *p = it->key; *p;) {
		size_t n = strcspn(p, ";");

		json_object_array_add(a, json_object_new_string_len(p, (int)n));
		p += n;
		p += *p == ';';
	}
	json_object_object_add(o, "stack", a);
	json_object_object_add(o, "ns", json_object_new_uint64(it->self[side]));
	json_object_object_add(o, "share", json_object_new_double(share(it->self[side], side)));
	return o;
}

/* One counter: its functions by change, its new and vanished stacks. */
static int diff_counter(const struct profile *const prof[2], enum counter c,
			const struct diff_opts *d, json_object *jc)
{
	struct items fn = { 0 }, st = { 0 };
	struct stacks_ctx *sc = malloc(sizeof(*sc));
	char label[1024];
	int ret = -1;

	whole[BASE] = prof[BASE]->total[0].ns[c];
	whole[NEW] = prof[NEW]->total[0].ns[c];
	if (!sc)
		return -1;
	for (int side = 0; side < 2; side++) {
		*sc = (struct stacks_ctx){ .t = &st, .c = c, .side = side };
		if (add_functions(&fn, prof[side], c, side) || profile_stacks(prof[side], stack_one, sc))
			goto out;
	}
	qsort(fn.v, fn.nr, sizeof(*fn.v), cmp_delta);
	if (jc) {
		json_object *a = json_object_new_array();

		json_object_object_add(jc, "base_ns", json_object_new_uint64(whole[BASE]));
		json_object_object_add(jc, "new_ns", json_object_new_uint64(whole[NEW]));
		for (size_t i = 0; i < fn.nr && i < d->top; i++)
			json_object_array_add(a, function_json(&fn.v[i]));
		json_object_object_add(jc, "functions", a);
	} else {
		printf("\n## %s: base %.3f s, new %.3f s (%+.1f%%)\n", counter_name(c), secs(whole[BASE]),
		       secs(whole[NEW]), whole[BASE] ? 100.0 * ((double)whole[NEW] - (double)whole[BASE]) /
		       (double)whole[BASE] : 0.0);
		printf("functions whose share changed most (total: itself and its callees; self: off "
		       "CPU where the threads waited)\n%8s %8s %9s %10s %10s %10s %8s %8s  %s\n",
		       "base%", "new%", "change", "base s", "new s", "change s", "self b%", "self n%",
		       "function");
		for (size_t i = 0; i < fn.nr && i < d->top; i++) {
			const struct item *it = &fn.v[i];

			if (!it->total[BASE] && !it->total[NEW])
				break;
			label_of(it->key, label, sizeof(label));
			printf("%7.2f%% %7.2f%% %+8.2f%% %10.3f %10.3f %+10.3f %7.2f%% %7.2f%%  %s%s\n",
			       100 * share(it->total[BASE], BASE), 100 * share(it->total[NEW], NEW),
			       100 * delta_share(it), secs(it->total[BASE]), secs(it->total[NEW]),
			       secs(it->total[NEW]) - secs(it->total[BASE]), 100 * share(it->self[BASE], BASE),
			       100 * share(it->self[NEW], NEW), label,
			       !it->total[BASE] ? " [new]" : !it->total[NEW] ? " [vanished]" : "");
		}
	}
	/* stacks only in one of them */
	for (int side = NEW; side >= BASE; side--) {
		json_object *a = jc ? json_object_new_array() : NULL;
		size_t shown = 0;

		sort_side = side;
		qsort(st.v, st.nr, sizeof(*st.v), cmp_side);
		if (!jc)
			printf("\n%s stacks (%s)\n", side == NEW ? "new" : "vanished",
			       side == NEW ? "in NEW only, by its time" : "in BASE only, by its time");
		for (size_t i = 0; i < st.nr && shown < d->top; i++) {
			const struct item *it = &st.v[i];

			if (!it->self[side] || it->self[!side])
				continue;
			shown++;
			if (a)
				json_object_array_add(a, stack_json(it, side));
			else
				printf("%7.2f%% %10.3f  %s\n", 100 * share(it->self[side], side),
				       secs(it->self[side]), it->key);
		}
		if (a)
			json_object_object_add(jc, side == NEW ? "new_stacks" : "vanished_stacks", a);
		else if (!shown)
			printf("  (none)\n");
	}
	ret = fn.oom || st.oom ? -1 : 0;
out:
	free(sc);
	items_free(&fn);
	items_free(&st);
	return ret;
}

static void diff_usage(FILE *out)
{
	fprintf(out,
		"usage: perfport diff BASE NEW [--counter LIST] [--top N] [--json] [profile options]\n"
		"\n"
		"What changed between two recordings of the same program (yesterday's and\n"
		"today's): per counter, the functions whose share of it changed most\n"
		"(normalised by each recording's total, and in absolute time; off CPU, a\n"
		"function's time is the time threads waited in it), then the stacks that\n"
		"are new in NEW and those that vanished from BASE. Both recordings are read\n"
		"with the same profile options.\n"
		"\n"
		"options:\n"
		"      --counter LIST      counters to compare: on-cpu, preempted, lock, io,\n"
		"                          sleep, timed-sleep, idle (default: every one present)\n"
		"      --top N             lines per table, 1 or more (default 20)\n"
		"      --json              the same as JSON: per counter the totals, functions\n"
		"                          (shares, their change, times), new and vanished stacks\n"
		PROFOPTS_HELP
		"  -h, --help              show this help\n");
}

enum { OPT_DIFF_COUNTER = 0x1300, OPT_DIFF_TOP, OPT_DIFF_JSON };

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "counter", required_argument, NULL, OPT_DIFF_COUNTER },
		{ "top", required_argument, NULL, OPT_DIFF_TOP },
		{ "json", no_argument, NULL, OPT_DIFF_JSON },
		PROFOPTS_LONG_OPTIONS,
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff_opts d = { .top = 20 };
	struct cli_prof po = { .sym.o.use_proc_kallsyms = true };
	struct profile *prof[2] = { NULL, NULL };
	const char *path[2], *msg;
	json_object *root = NULL, *jcs = NULL;
	int opt, ret = EXIT_USAGE, built[2];
	char *end;

	while ((opt = getopt_long(argc, argv, ":h" CLI_GLOBAL_SHORT SYMOPTS_SHORT, opts, NULL)) != -1) {
		switch (opt) {
		case OPT_DIFF_COUNTER:
			d.counters = 0;
			for (const char *s = optarg; *s;) {
				size_t n = strcspn(s, ",");
				char name[32];
				int k;

				snprintf(name, sizeof(name), "%.*s", (int)(n < 31 ? n : 31), s);
				k = counter_parse(name);
				if (k < 0) {
					const char *names[CNT_COUNT];
					char buf[512];

					for (int i = 0; i < CNT_COUNT; i++)
						names[i] = counter_name((enum counter)i);
					return cli_usage_error("diff", "--counter: '%s' is no counter%s", name,
							       cli_choices(buf, sizeof(buf), name, names,
									   CNT_COUNT));
				}
				d.counters |= 1u << k;
				s += n;
				s += *s == ',';
			}
			break;
		case OPT_DIFF_TOP:
			d.top = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !*optarg || *optarg == '-' || d.top < 1)
				return cli_usage_error("diff", "--top takes a number of 1 or more, not '%s'",
						       optarg);
			break;
		case OPT_DIFF_JSON: d.json = true; break;
		case 'h':
			diff_usage(stdout);
			return EXIT_FULL;
		default:
			if (cli_global_option(opt) || profopts_parse(opt, optarg, &po))
				break;
			return cli_bad_option("diff", opt, argv, opts);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("diff", argc - optind < 2 ? "BASE and NEW are required" :
				       "unexpected argument '%s'", argv[optind + 2]);
	path[BASE] = argv[optind];
	path[NEW] = argv[optind + 1];
	msg = profopts_finish(&po);
	if (msg)
		return cli_usage_error("diff", "%s", msg);
	/* both, before either is read */
	if (symopts_check_input(path[BASE]) || profopts_prepare(&po, path[NEW]))
		return EXIT_NOTHING;
	for (int side = 0; side < 2; side++) {
		built[side] = profile_build(path[side], &po.o, &prof[side]);
		if (built[side] == PP_EUSAGE) {
			ret = EXIT_USAGE;
			goto out;
		}
		if (!prof[side]) {
			ret = EXIT_NOTHING;
			goto out;
		}
	}
	if (!d.counters)
		d.counters = prof[BASE]->meta.counters_present | prof[NEW]->meta.counters_present;
	if (d.json) {
		root = json_object_new_object();
		jcs = json_object_new_object();
		json_object_object_add(root, "base", json_object_new_string(path[BASE]));
		json_object_object_add(root, "new", json_object_new_string(path[NEW]));
		json_object_object_add(root, "counters", jcs);
	} else {
		printf("# perfport diff: base '%s', new '%s'\n", path[BASE], path[NEW]);
	}
	ret = EXIT_FULL;
	for (int c = 0; c < CNT_COUNT; c++) {
		json_object *jc = NULL;

		if (!(d.counters & (1u << c)) ||
		    (!prof[BASE]->total[0].count[c] && !prof[NEW]->total[0].count[c]))
			continue;
		if (jcs) {
			jc = json_object_new_object();
			json_object_object_add(jcs, counter_name((enum counter)c), jc);
		}
		if (diff_counter((const struct profile *const *)prof, (enum counter)c, &d, jc)) {
			pp_error("%s", pp_strerror(PP_ENOMEM));
			ret = EXIT_NOTHING;
			goto out;
		}
	}
	if (root)
		printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
	for (int side = BASE; side <= NEW; side++)
		if (built[side] == PP_EPARTIAL) {
			char why[512];

			perf_stats_partly(&prof[side]->read, why, sizeof(why));
			pp_warn_status("'%s': read partly: %s", path[side], why);
			ret = EXIT_PARTIAL;
		}
out:
	json_object_put(root);
	profile_free(prof[BASE]);
	profile_free(prof[NEW]);
	return ret;
}
