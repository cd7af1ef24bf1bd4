/* SPDX-License-Identifier: MIT */
/*
 * flamegraph.c - the "flamegraph" exporter: a flame graph people open in a
 * browser.
 *
 * format=html (default): one self-contained page (viewer.html, compiled in)
 * with the profile embedded as JSON - every node, its frame and its own
 * value and count per counter present - drawn on a canvas by the page's
 * script: flame or icicle, a counter switch, colours by module or by kind,
 * tooltips, zoom with the browser's history, search.
 *
 * format=svg: one counter as a static SVG (boxes narrower than 0.1 px left
 * out), each box with a <title> tooltip, for places that show only images.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/json.h"
#include "perfport/plugin.h"

static const char viewer[] =
#include "flamegraph-viewer.h"
	;

#define DATA_MARKER "/*@PERFPORT_DATA@*/"
#define ROW 16                  /* SVG: pixels per frame row */
#define MIN_BOX 0.1             /* SVG: narrower boxes are left out */
#define HEAD 64.0               /* SVG: title, subtitle and legend above the boxes */

static const struct perfport_option_def options[] = {
	{ "format", PERFPORT_OPT_ENUM, "html", "html,svg",
	  "html: an interactive page; svg: a static image of one counter" },
	{ "counter", PERFPORT_OPT_ENUM, NULL,
	  "on-cpu,preempted,lock,io,sleep,timed-sleep,idle,all",
	  "the counter shown (first); default on-cpu if it has data, else the first that has; "
	  "all: every counter but idle" },
	{ "color", PERFPORT_OPT_ENUM, "auto", "auto,module,kind,change",
	  "colours by module, by kind (kernel, user, JIT, inlined), or by change against "
	  "export --base (red: a larger share than in the base, blue: smaller); auto: change "
	  "with --base, else module" },
	{ "icicle", PERFPORT_OPT_BOOL, "false", NULL, "root at the top instead of the bottom" },
	{ "title", PERFPORT_OPT_STRING, NULL, NULL,
	  "title (default: the program and host; the command and time span below it)" },
	{ "width", PERFPORT_OPT_INT, "1200", NULL, "svg: the image's width in pixels" },
	{ "wakers", PERFPORT_OPT_BOOL, "false", NULL,
	  "an off-wake flame graph: each blocked stack with the stack that woke it above it, "
	  "sized by blocked time (needs sched_waking recorded with stacks)" },
};

struct fg {
	const struct perfport_host *host;
	bool svg, by_kind, icicle, wakers;
	int by_change;               /* 1 yes, 0 no, -1 auto: when the profile has a base */
	const char *counter, *title;
	long width;
};

enum kind { K_USER, K_KERNEL, K_JIT, K_INLINED, K_UNKNOWN, K_SYNTHETIC };

static enum kind kind_of(const struct perfport_frame *f)
{
	if (f->flags & (PERFPORT_FRAME_PROCESS | PERFPORT_FRAME_THREAD | PERFPORT_FRAME_SYNTHETIC))
		return K_SYNTHETIC;
	if (f->flags & PERFPORT_FRAME_UNKNOWN)
		return K_UNKNOWN;
	if (f->flags & PERFPORT_FRAME_KERNEL)
		return K_KERNEL;
	if (f->flags & PERFPORT_FRAME_JIT)
		return K_JIT;
	if (f->flags & PERFPORT_FRAME_INLINED)
		return K_INLINED;
	return K_USER;
}

/* The counter shown first: the option's, else on-cpu if present, else the
 * first present; -1 for "all", -2 if none has data. */
static int first_counter(const struct fg *g, const struct perfport_profile *p)
{
	if (g->counter && !strcmp(g->counter, "all"))
		return -1;
	for (unsigned c = 0; g->counter && c < p->nr_counters && c < 64; c++)
		if (!strcmp(p->counter_names[c], g->counter))
			return (p->counters_present >> c & 1) ? (int)c : -2;
	if (p->counters_present & 1)
		return 0;
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
		if (p->counters_present >> c & 1)
			return (int)c;
	return -2;
}

static const struct perfport_profile *base_of(const struct perfport_profile *p)
{
	return PERFPORT_PROFILE_HAS_BASE(p) ? p->base : NULL;
}

/* Colour by change: asked for, or by default when there is a base. */
static bool change_colours(const struct fg *g, const struct perfport_profile *p)
{
	return base_of(p) && g->by_change != 0;
}

/* Not a program of the recording: perf itself, the idle task. */
static bool not_program(const char *comm)
{
	return !comm || !strcmp(comm, "perf") || !strcmp(comm, "perf-exec") ||
	       !strncmp(comm, "swapper", 7);
}

/*
 * What was profiled, for the title: the workload perf started - its word in
 * perf's command line beginning with a recorded process's name (which the
 * kernel cuts to 15 bytes) - else the one process recorded, else how many
 * there were. "" when none is known.
 */
static void program_name(const struct perfport_profile *p, char *buf, size_t max)
{
	const char *one = NULL;
	size_t procs = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct perfport_thread *t = perfport_thread_at(p, i);
		bool seen = false;

		if (not_program(t->comm) || !t->pid)
			continue;
		for (size_t k = 0; k < i && !seen; k++) {
			const struct perfport_thread *u = perfport_thread_at(p, k);

			seen = u->pid == t->pid && !not_program(u->comm);
		}
		if (seen)
			continue;
		procs++;
		one = t->comm;
		for (const char *w = p->cmdline; w && *w;) {
			size_t n = strcspn(w, " "), clen = strlen(t->comm);
			const char *b = w;

			for (const char *q = w; q < w + n; q++)
				if (*q == '/')
					b = q + 1;
			/* the comm whole, or its 15 bytes the kernel kept of a longer
			 * name (not a word it merely begins: "deep.data" is not "deep") */
			if (w != p->cmdline && !strncmp(b, t->comm, clen) &&
			    ((size_t)(w + n - b) == clen || ((size_t)(w + n - b) > clen && clen == 15))) {
				snprintf(buf, max, "%.*s", (int)(w + n - b), b);
				return;
			}
			w += n;
			w += strspn(w, " ");
		}
	}
	if (procs == 1)
		snprintf(buf, max, "%s", one);
	else if (procs > 1)
		snprintf(buf, max, "%zu processes", procs);
}

/* Was every CPU recorded (perf record -a, --all-cpus, or -a in a cluster)? */
static bool system_wide(const char *cmdline)
{
	for (const char *w = cmdline; w && *w;) {
		size_t n = strcspn(w, " ");

		if (n == 2 && !strncmp(w, "--", 2))
			return false;   /* the workload's own words follow */
		if ((n == 10 && !strncmp(w, "--all-cpus", 10)) ||
		    (n >= 2 && w[0] == '-' && w[1] != '-' && memchr(w + 1, 'a', n - 1) &&
		     strspn(w + 1, "agqvsRTdknBNF") == n - 1))
			return true;
		w += n;
		w += strspn(w, " ");
	}
	return false;
}

/* "Flame graph of PROGRAM on HOST" (the command and the time span go below
 * it); an off-wake profile says so */
static void default_title(const struct perfport_profile *p, char *buf, size_t max)
{
	bool offwake = false;
	char prog[256];

	for (size_t i = 0; i < p->nr_frames && !offwake && i < 64; i++)
		offwake = (perfport_frame_at(p, i)->flags & PERFPORT_FRAME_SYNTHETIC) &&
			  !strcmp(perfport_frame_at(p, i)->function, "--- woken by ---");
	/* every CPU: the workload perf ran is one program of many */
	if (system_wide(p->cmdline))
		snprintf(prog, sizeof(prog), "every CPU");
	else
		program_name(p, prog, sizeof(prog));
	snprintf(buf, max, "%s of %s%s%s", offwake ? "Off-wake flame graph (blocked time, waker above)" :
		 base_of(p) ? "Differential flame graph (against the base)" : "Flame graph", prog,
		 prog[0] ? " on " : "", p->hostname ? p->hostname : "a perf recording");
}

/* --- html --- */

/* Interned strings for the page's string table. */
struct strtab {
	const char **v;
	size_t nr, cap;
	uint32_t *slots;             /* index + 1; 0 empty */
	size_t slots_cap;
	bool oom;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ^ h >> 31;
}

static long intern(struct strtab *t, const char *s)
{
	size_t j;

	if (!s)
		return -1;
	if ((t->nr + 1) * 2 > t->slots_cap) {
		size_t cap = t->slots_cap ? t->slots_cap * 2 : 1024;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (!n) {
			t->oom = true;
			return -1;
		}
		for (size_t i = 0; i < t->nr; i++) {
			for (j = str_hash(t->v[i]) & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
				;
			n[j] = (uint32_t)i + 1;
		}
		free(t->slots);
		t->slots = n;
		t->slots_cap = cap;
	}
	for (j = str_hash(s) & (t->slots_cap - 1); t->slots[j]; j = (j + 1) & (t->slots_cap - 1))
		if (!strcmp(t->v[t->slots[j] - 1], s))
			return t->slots[j] - 1;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		const char **v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			t->oom = true;
			return -1;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->nr] = s;
	t->slots[j] = (uint32_t)++t->nr;
	return (long)t->nr - 1;
}

static void put_html_string(FILE *out, const char *s)
{
	fputc('"', out);
	perfport_json_chars_ex(out, s, PERFPORT_JSON_HTML);
	fputc('"', out);
}

/* --- the base profile (export --base), on this profile's nodes --- */

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static uint64_t node_key(uint32_t parent, const struct perfport_frame *f)
{
	return str_hash(f->function ? f->function : "") * 31 ^ str_hash(f->module ? f->module : "") ^
	       (uint64_t)parent * 0x9e3779b97f4a7c15ULL;
}

/*
 * The base's self values on @p's nodes, matched by path (each frame's
 * function and module from the root): out[node * nc + c], nc counters;
 * lost[c]: the base's values in stacks @p has none of (drawn nowhere).
 * Return: the array (the caller frees), NULL out of memory.
 */
static uint64_t *base_on_nodes(const struct perfport_profile *p, const struct perfport_profile *b,
			       unsigned nc, uint64_t *lost)
{
	size_t cap = 16;
	uint32_t *slots, *map = malloc((b->nr_nodes + 1) * sizeof(*map));
	uint64_t *out = calloc(p->nr_nodes * nc + 1, sizeof(*out));

	while (cap < p->nr_nodes * 2)
		cap *= 2;
	slots = calloc(cap, sizeof(*slots));
	if (!slots || !map || !out) {
		free(slots);
		free(map);
		free(out);
		return NULL;
	}
	for (size_t i = 1; i < p->nr_nodes; i++) {
		const struct perfport_node *n = perfport_node_at(p, i);
		size_t j;

		if (n->frame >= p->nr_frames)
			continue;
		for (j = node_key(n->parent, perfport_frame_at(p, n->frame)) & (cap - 1); slots[j];
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = (uint32_t)i + 1;
	}
	map[0] = 0;
	for (size_t i = 1; i < b->nr_nodes; i++) {
		const struct perfport_node *n = perfport_node_at(b, i);
		const struct perfport_frame *f = n->frame < b->nr_frames ? perfport_frame_at(b, n->frame) : NULL;
		uint32_t up = n->parent < i ? map[n->parent] : UINT32_MAX;

		map[i] = UINT32_MAX;
		if (f && up != UINT32_MAX)
			for (size_t j = node_key(up, f) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1)) {
				uint32_t k = slots[j] - 1;
				const struct perfport_node *m = perfport_node_at(p, k);
				const struct perfport_frame *g = perfport_frame_at(p, m->frame);

				if (m->parent == up && same_str(g->function, f->function) &&
				    same_str(g->module, f->module) && g->flags == f->flags) {
					map[i] = k;
					break;
				}
			}
	}
	for (size_t i = 0; i < b->nr_nodes; i++)
		for (unsigned c = 0; c < nc && c < b->nr_counters; c++) {
			uint64_t v = perfport_self_value(b, i, c);

			if (map[i] != UINT32_MAX)
				out[(size_t)map[i] * nc + c] += v;
			else
				lost[c] += v;
		}
	free(slots);
	free(map);
	return out;
}

static enum perfport_status write_data(const struct fg *g, const struct perfport_profile *p,
				       FILE *out)
{
	struct strtab st = { 0 };
	long *ids = malloc((p->nr_frames * 3 + 1) * sizeof(*ids));
	int first = first_counter(g, p);
	char title[1024];
	bool comma;

	if (!ids)
		return PERFPORT_ERROR;
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct perfport_frame *f = perfport_frame_at(p, i);

		ids[3 * i] = intern(&st, f->function);
		ids[3 * i + 1] = intern(&st, f->module);
		ids[3 * i + 2] = intern(&st, f->file);
	}
	if (st.oom) {
		free(ids);
		free(st.v);
		free(st.slots);
		return PERFPORT_ERROR;
	}
	default_title(p, title, sizeof(title));
	fputs("{\"meta\":{\"title\":", out);
	put_html_string(out, g->title ? g->title : title);
	fputs(",\"host\":", out);
	put_html_string(out, p->hostname ? p->hostname : "");
	fputs(",\"cmdline\":", out);
	put_html_string(out, p->cmdline ? p->cmdline : "");
	fprintf(out, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"time_source\":", p->start_ns,
		p->end_ns);
	put_html_string(out, p->time_source ? p->time_source : "");
	fputs(",\"version\":", out);
	put_html_string(out, g->host->version);
	/* ABI 1.6: what changes the numbers' meaning, for the header */
	fputs(",\"warnings\":[", out);
	for (size_t i = 0; PERFPORT_PROFILE_HAS_WARNINGS(p) && i < p->nr_warnings; i++) {
		if (i)
			fputc(',', out);
		put_html_string(out, p->warnings[i]);
	}
	fputs("]},\"counters\":[", out);
	comma = false;
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
		if (!(p->counters_present >> c & 1))
			continue;
		fprintf(out, "%s{\"name\":", comma ? "," : "");
		put_html_string(out, p->counter_names[c]);
		fputs(",\"unit\":", out);
		put_html_string(out, p->counter_units[c]);
		fputs("}", out);
		comma = true;
	}
	fputs("],\"initial\":{\"counter\":", out);
	put_html_string(out, first == -1 ? "all" : first >= 0 ? p->counter_names[first] : "");
	fprintf(out, ",\"color\":\"%s\",\"icicle\":%s},\"strings\":[",
		change_colours(g, p) ? "change" : g->by_kind ? "kind" : "module",
		g->icicle ? "true" : "false");
	for (size_t i = 0; i < st.nr; i++) {
		if (i)
			fputc(',', out);
		put_html_string(out, st.v[i]);
	}
	/* frames: function, module, file (string indexes, -1 none), line, kind */
	fputs("],\"frames\":[", out);
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct perfport_frame *f = perfport_frame_at(p, i);

		fprintf(out, "%s%ld,%ld,%ld,%" PRIu32 ",%d", i ? "," : "", ids[3 * i], ids[3 * i + 1],
			ids[3 * i + 2], f->line, (int)kind_of(f));
	}
	/* nodes in pre-order: parent and frame (-1 for the root) */
	fputs("],\"parent\":[", out);
	for (size_t i = 0; i < p->nr_nodes; i++) {
		uint32_t par = perfport_node_at(p, i)->parent;

		fprintf(out, "%s%ld", i ? "," : "", par == UINT32_MAX ? -1L : (long)par);
	}
	fputs("],\"frame\":[", out);
	for (size_t i = 0; i < p->nr_nodes; i++) {
		uint32_t fr = perfport_node_at(p, i)->frame;

		fprintf(out, "%s%ld", i ? "," : "", fr >= p->nr_frames ? -1L : (long)fr);
	}
	/* per counter present: each node's own value and count, sparse pairs */
	fputs("]", out);
	for (int what = 0; what < 2; what++) {
		fputs(what ? ",\"counts\":{" : ",\"values\":{", out);
		comma = false;
		for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
			bool first_pair = true;

			if (!(p->counters_present >> c & 1))
				continue;
			fprintf(out, "%s\"%s\":[", comma ? "," : "", p->counter_names[c]);
			for (size_t i = 0; i < p->nr_nodes; i++) {
				uint64_t v = what ? perfport_self_count(p, i, c) : perfport_self_value(p, i, c);

				if (!v)
					continue;
				fprintf(out, "%s%zu,%" PRIu64, first_pair ? "" : ",", i, v);
				first_pair = false;
			}
			fputs("]", out);
			comma = true;
		}
		fputs("}", out);
	}
	if (base_of(p)) {
		const struct perfport_profile *b = base_of(p);
		unsigned nc = p->nr_counters < 64 ? p->nr_counters : 64;
		uint64_t lost[64] = { 0 }, *bv = base_on_nodes(p, b, nc, lost);

		if (!bv) {
			free(ids);
			free(st.v);
			free(st.slots);
			return PERFPORT_ERROR;
		}
		/* per counter: the base's values on these nodes (pairs), its
		 * whole total, and what of it lies in stacks not drawn */
		fputs(",\"base\":{\"values\":{", out);
		comma = false;
		for (unsigned c = 0; c < nc; c++) {
			bool first_pair = true;

			if (!(p->counters_present >> c & 1))
				continue;
			fprintf(out, "%s\"%s\":[", comma ? "," : "", p->counter_names[c]);
			for (size_t i = 0; i < p->nr_nodes; i++) {
				if (!bv[i * nc + c])
					continue;
				fprintf(out, "%s%zu,%" PRIu64, first_pair ? "" : ",", i, bv[i * nc + c]);
				first_pair = false;
			}
			fputs("]", out);
			comma = true;
		}
		fputs("},\"whole\":{", out);
		comma = false;
		for (unsigned c = 0; c < nc; c++) {
			if (!(p->counters_present >> c & 1))
				continue;
			fprintf(out, "%s\"%s\":%" PRIu64, comma ? "," : "", p->counter_names[c],
				c < b->nr_counters && b->nr_nodes ? perfport_total_value(b, 0, c) : 0);
			comma = true;
		}
		fputs("},\"lost\":{", out);
		comma = false;
		for (unsigned c = 0; c < nc; c++) {
			if (!(p->counters_present >> c & 1))
				continue;
			fprintf(out, "%s\"%s\":%" PRIu64, comma ? "," : "", p->counter_names[c], lost[c]);
			comma = true;
		}
		fputs("}}", out);
		free(bv);
	}
	fputs("}", out);
	free(ids);
	free(st.v);
	free(st.slots);
	return PERFPORT_OK;
}

static enum perfport_status write_html(const struct fg *g, const struct perfport_profile *p,
				       FILE *out)
{
	const char *mark = strstr(viewer, DATA_MARKER);
	enum perfport_status st;

	if (!mark)
		return PERFPORT_ERROR;
	fwrite(viewer, 1, (size_t)(mark - viewer), out);
	st = write_data(g, p, out);
	fputs(mark + strlen(DATA_MARKER), out);
	return st;
}

/* --- svg --- */

/* Text for XML: escaped; control characters and bytes that are not UTF-8
 * become '?' (XML 1.0 cannot hold them). At most @max characters, then "..". */
static void put_xml(FILE *out, const char *s, size_t max)
{
	const unsigned char *q = (const unsigned char *)s;
	size_t chars = 0;

	while (*q) {
		unsigned char ch = *q;
		int n = perfport_utf8_seq(q);

		if (chars++ == max) {
			fputs("..", out);
			return;
		}
		if (!n || ch < 0x20 || ch == 0x7f) {
			fputc('?', out);
			q++;
			continue;
		}
		if (n > 1) {
			fwrite(q, 1, (size_t)n, out);
			q += n;
			continue;
		}
		switch (ch) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fputc(ch, out);
		}
		q++;
	}
}

static const char *const kind_colours[] = {
	[K_USER] = "#e8a04c", [K_KERNEL] = "#d9534f", [K_JIT] = "#5cb85c",
	[K_INLINED] = "#5bc0de", [K_UNKNOWN] = "#aaaaaa", [K_SYNTHETIC] = "#c9c9e0",
};
static const char *const kind_names[] = {
	[K_USER] = "user", [K_KERNEL] = "kernel", [K_JIT] = "JIT",
	[K_INLINED] = "inlined", [K_UNKNOWN] = "unknown", [K_SYNTHETIC] = "group",
};

/*
 * The page's hash of a module name (viewer.html's hash(): 32-bit FNV-1a
 * over the name's UTF-16 code units), so that the SVG and the page colour a
 * module alike.
 */
static uint32_t page_hash(const char *s)
{
	const unsigned char *q = (const unsigned char *)s;
	uint32_t h = 2166136261u;

	while (*q) {
		int n = perfport_utf8_seq(q);
		uint32_t cp;

		if (!n) {
			cp = 0xfffd;            /* as a browser decodes a bad byte */
			n = 1;
		} else if (n == 1) {
			cp = q[0];
		} else {
			cp = q[0] & (0x7f >> n);
			for (int k = 1; k < n; k++)
				cp = cp << 6 | (q[k] & 0x3f);
		}
		q += n;
		if (cp > 0xffff) {
			h = (h ^ (0xd800 + ((cp - 0x10000) >> 10))) * 16777619u;
			h = (h ^ (0xdc00 + ((cp - 0x10000) & 0x3ff))) * 16777619u;
		} else {
			h = (h ^ cp) * 16777619u;
		}
	}
	return h;
}

static const char *base_name(const char *path)
{
	const char *m = strrchr(path, '/');

	return m ? m + 1 : path;
}

static void module_colour(const char *module, char *buf, size_t max)
{
	uint32_t h = page_hash(base_name(module));

	snprintf(buf, max, "hsl(%u,%u%%,%u%%)", 35 + h % 260, 55 + (h >> 20) % 25, 62 + (h >> 12) % 14);
}

/* By module, the kernel, unknown frames and groups keep their kind's colour. */
static bool coloured_by_kind(const struct fg *g, const struct perfport_frame *f)
{
	enum kind k = kind_of(f);

	return g->by_kind || k == K_KERNEL || k == K_SYNTHETIC || k == K_UNKNOWN || !f->module;
}

static void colour(const struct fg *g, const struct perfport_frame *f, char *buf, size_t max)
{
	if (coloured_by_kind(g, f))
		snprintf(buf, max, "%s", kind_colours[kind_of(f)]);
	else
		module_colour(f->module, buf, max);
}

/*
 * The legend of the colour mode in use, on one row at @y: the kinds, or the
 * modules of the counter drawn (largest self value first, ten at most) and
 * the kinds kept as they are.
 */
static void svg_legend(const struct fg *g, const struct perfport_profile *p, const uint64_t *total,
		       double y, double width, FILE *out)
{
	struct entry { const char *key; int kind; uint64_t v; } e[16];
	size_t ne = 0, more = 0;
	double x = 8;

	if (g->by_kind) {
		for (int k = 0; k <= K_SYNTHETIC; k++)
			e[ne++] = (struct entry){ NULL, k, 1 };
	} else {
		for (size_t i = 1; i < p->nr_nodes; i++) {
			const struct perfport_node *n = perfport_node_at(p, i);
			const struct perfport_frame *f = n->frame < p->nr_frames ?
							 perfport_frame_at(p, n->frame) : NULL;
			uint64_t self = total[i];
			bool found = false;
			const char *key;
			int kind;

			if (!f)
				continue;
			/* self: the total less the children's */
			for (size_t k = i + 1; k < n->end && k < p->nr_nodes; k = perfport_node_at(p, k)->end)
				self -= total[k];
			if (!self)
				continue;
			kind = coloured_by_kind(g, f) ? (int)kind_of(f) : -1;
			key = kind < 0 ? base_name(f->module) : NULL;
			for (size_t k = 0; k < ne && !found; k++)
				if (e[k].kind == kind && (kind >= 0 || !strcmp(e[k].key, key))) {
					e[k].v += self;
					found = true;
				}
			if (!found && ne < sizeof(e) / sizeof(e[0]))
				e[ne++] = (struct entry){ key, kind, self };
			else if (!found)
				more++;
		}
		/* largest first */
		for (size_t a = 1; a < ne; a++)
			for (size_t b = a; b > 0 && e[b].v > e[b - 1].v; b--) {
				struct entry t = e[b];

				e[b] = e[b - 1];
				e[b - 1] = t;
			}
		if (ne > 10) {
			more += ne - 10;
			ne = 10;
		}
	}
	fputs("<g class=\"legend\">", out);
	if (change_colours(g, p)) {
		static const char *const sw[][2] = {
			{ "hsl(0,75%,50%)", "larger share than the base" },
			{ "hsl(215,75%,50%)", "smaller" },
			{ "hsl(0,75%,94%)", "as in the base" },
		};

		for (size_t k = 0; k < 3; k++) {
			size_t len = strlen(sw[k][1]);

			fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" rx=\"3\" "
				"fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>", x, y,
				7.0 * (double)len + 10, sw[k][0], x + 5, y + 10, sw[k][1]);
			x += 7.0 * (double)len + 16;
		}
		fputs("</g>\n", out);
		return;
	}
	for (size_t k = 0; k < ne && x < width - 60; k++) {
		const char *text = e[k].kind >= 0 ? kind_names[e[k].kind] : e[k].key;
		char fill[48];
		size_t len = strlen(text) > 40 ? 40 : strlen(text);

		if (e[k].kind >= 0)
			snprintf(fill, sizeof(fill), "%s", kind_colours[e[k].kind]);
		else
			module_colour(e[k].key, fill, sizeof(fill));
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"13\" rx=\"3\" "
			"fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">", x, y, 7.0 * (double)len + 10, fill,
			x + 5, y + 10);
		put_xml(out, text, 40);
		fputs("</text>", out);
		x += 7.0 * (double)len + 16;
	}
	if (more)
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">+%zu more</text>", x, y + 10, more);
	fputs("</g>\n", out);
}

static void format_value(uint64_t v, const char *unit, char *buf, size_t max)
{
	if (strcmp(unit, "nanoseconds") == 0)
		snprintf(buf, max, "%.3f ms", v / 1e6);
	else
		snprintf(buf, max, "%" PRIu64 " %s", v, unit);
}

static enum perfport_status write_svg(const struct fg *g, const struct perfport_profile *p,
				      FILE *out)
{
	int c = first_counter(g, p);
	double width = (double)g->width, *x = NULL, *change = NULL, max_change = 0;
	uint64_t *total = NULL, root;
	uint32_t depth_max = 0;
	char title[1024], fill[48], val[64];
	const char *unit;
	double height, head;
	size_t nr_warn;

	if (c == -2 || !p->nr_nodes) {
		g->host->log(g->host, PERFPORT_LOG_ERROR, "flamegraph: no counter with data to draw");
		return PERFPORT_ERROR;
	}
	total = calloc(p->nr_nodes, sizeof(*total));
	x = calloc(p->nr_nodes, sizeof(*x));
	if (!total || !x) {
		free(total);
		free(x);
		return PERFPORT_ERROR;
	}
	unit = c >= 0 ? p->counter_units[c] : "nanoseconds";
	for (size_t i = 0; i < p->nr_nodes; i++) {
		if (c >= 0) {
			total[i] = perfport_total_value(p, i, (unsigned)c);
			continue;
		}
		for (unsigned k = 0; k < p->nr_counters && k < 64; k++)
			if (k != PERFPORT_COUNTER_IDLE && (p->counters_present >> k & 1))
				total[i] += perfport_total_value(p, i, k);
	}
	root = total[0];
	if (change_colours(g, p)) {
		/* each node's share against the base's at the same path */
		const struct perfport_profile *b = base_of(p);
		unsigned nc = p->nr_counters < 64 ? p->nr_counters : 64;
		uint64_t lost[64] = { 0 }, bwhole = 0, *bv = base_on_nodes(p, b, nc, lost);
		double *bt = calloc(p->nr_nodes, sizeof(*bt));

		change = calloc(p->nr_nodes, sizeof(*change));
		if (!bv || !bt || !change) {
			free(bv);
			free(bt);
			free(total);
			free(x);
			free(change);
			return PERFPORT_ERROR;
		}
		for (unsigned k = 0; k < nc; k++) {
			if (c >= 0 ? (int)k != c : (k == PERFPORT_COUNTER_IDLE || !(p->counters_present >> k & 1)))
				continue;
			bwhole += k < b->nr_counters && b->nr_nodes ? perfport_total_value(b, 0, k) : 0;
			for (size_t i = 0; i < p->nr_nodes; i++)
				bt[i] += (double)bv[i * nc + k];
		}
		for (size_t i = p->nr_nodes; i-- > 1;)
			bt[perfport_node_at(p, i)->parent] += bt[i];
		for (size_t i = 0; i < p->nr_nodes; i++) {
			change[i] = (root ? (double)total[i] / (double)root : 0) -
				    (bwhole ? bt[i] / (double)bwhole : 0);
			if (i && fabs(change[i]) > max_change)
				max_change = fabs(change[i]);
		}
		free(bv);
		free(bt);
	}
	for (size_t i = 0; i < p->nr_nodes; i++) {
		const struct perfport_node *n = perfport_node_at(p, i);

		if (root && total[i] * width / root >= MIN_BOX && n->depth > depth_max)
			depth_max = n->depth;
	}
	/* ABI 1.6: a line per warning under the legend */
	nr_warn = PERFPORT_PROFILE_HAS_WARNINGS(p) ? p->nr_warnings : 0;
	head = HEAD + (double)nr_warn * 14;
	height = (depth_max + 1) * ROW + head;
	default_title(p, title, sizeof(title));
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"monospace\" font-size=\"11\">\n"
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fdfdf6\"/>\n"
		"<text x=\"%.1f\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">",
		width, height, width, height, width, height, width / 2);
	put_xml(out, g->title ? g->title : title, 200);
	format_value(root, unit, val, sizeof(val));
	fprintf(out, "</text>\n<text x=\"%.1f\" y=\"36\" text-anchor=\"middle\">%s: %s, perfport %s"
		"</text>\n", width / 2, c >= 0 ? p->counter_names[c] : "all but idle", val,
		g->host->version);
	svg_legend(g, p, total, 44, width, out);
	for (size_t k = 0; k < nr_warn; k++) {
		fprintf(out, "<text class=\"warning\" x=\"10\" y=\"%.0f\" fill=\"#a94442\">warning: ",
			HEAD + 8 + (double)k * 14);
		put_xml(out, p->warnings[k], width > 120 ? (size_t)(width / 6.7) - 10 : 8);
		fputs("</text>\n", out);
	}
	for (size_t i = 0; i < p->nr_nodes && root;) {
		const struct perfport_node *n = perfport_node_at(p, i);
		const struct perfport_frame *f = n->frame < p->nr_frames ? perfport_frame_at(p, n->frame)
									  : NULL;
		double w = total[i] * width / root, y;

		if (i) {
			/* after the siblings before it: x[parent] is where the next
			 * child goes (the parent's own box was written already) */
			x[i] = x[n->parent];
			x[n->parent] += w;
		}
		if (w < MIN_BOX) {
			i = n->end > i ? n->end : i + 1;
			continue;
		}
		y = g->icicle ? head + n->depth * ROW : height - (n->depth + 1) * ROW;
		if (change) {
			double t = max_change > 0 ? fabs(change[i]) / max_change : 0;

			snprintf(fill, sizeof(fill), "hsl(%d,75%%,%d%%)", change[i] >= 0 ? 0 : 215,
				 (int)lround(94 - 44 * (t < 1 ? t : 1)));
		} else if (f) {
			colour(g, f, fill, sizeof(fill));
		} else {
			snprintf(fill, sizeof(fill), "#e0e0e0");
		}
		format_value(total[i], unit, val, sizeof(val));
		fputs("<g><title>", out);
		put_xml(out, f ? f->function : "all", 500);
		if (f && f->module) {
			fputs(" (", out);
			put_xml(out, f->module, 200);
			fputc(')', out);
		}
		fprintf(out, " %s, %.2f%%</title><rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" "
			"height=\"%d\" fill=\"%s\" data-v=\"%" PRIu64 "\" data-d=\"%" PRIu32 "\"/>", val,
			100.0 * total[i] / root, x[i], y, w, ROW - 1, fill, total[i], n->depth);
		if (w > 24) {
			fprintf(out, "<text x=\"%.3f\" y=\"%.1f\">", x[i] + 3, y + ROW - 4);
			put_xml(out, f ? f->function : "all", (size_t)((w - 6) / 7));
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
		i++;
	}
	fputs("</svg>\n", out);
	free(change);
	free(total);
	free(x);
	return PERFPORT_OK;
}

/* --- the plugin --- */

static enum perfport_status fg_init(const struct perfport_host *host,
				    const struct perfport_option *opts, size_t nr, void **state)
{
	struct fg *g = calloc(1, sizeof(*g));

	if (!g)
		return PERFPORT_ERROR;
	g->host = host;
	g->width = 1200;
	for (size_t i = 0; i < nr; i++) {
		const char *k = opts[i].name, *v = opts[i].value;

		if (!v)
			continue;
		if (!strcmp(k, "format"))
			g->svg = !strcmp(v, "svg");
		else if (!strcmp(k, "counter"))
			g->counter = v;
		else if (!strcmp(k, "color")) {
			g->by_kind = !strcmp(v, "kind");
			g->by_change = !strcmp(v, "change") ? 1 : !strcmp(v, "auto") ? -1 : 0;
		}
		else if (!strcmp(k, "icicle"))
			g->icicle = !strcmp(v, "true");
		else if (!strcmp(k, "title"))
			g->title = v;
		else if (!strcmp(k, "width"))
			g->width = strtol(v, NULL, 10);
		else if (!strcmp(k, "wakers"))
			g->wakers = !strcmp(v, "true");
	}
	if (g->width < 100 || g->width > 100000) {
		host->log(host, PERFPORT_LOG_ERROR, "flamegraph: width must be 100 to 100000 pixels");
		free(g);
		return PERFPORT_ERROR;
	}
	*state = g;
	return PERFPORT_OK;
}

static enum perfport_status fg_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct fg *g = state;

	if (g->wakers) {
		if (!PERFPORT_HAS(p, struct perfport_profile, offwake) || !p->offwake) {
			g->host->log(g->host, PERFPORT_LOG_ERROR, "flamegraph: the recording has no "
				     "wakeups with stacks (perf record -e sched:sched_waking -g)");
			return PERFPORT_ERROR;
		}
		p = p->offwake;
	}
	if (first_counter(g, p) == -2 && g->counter) {
		g->host->log(g->host, PERFPORT_LOG_ERROR, "flamegraph: counter '%s' has no data",
			     g->counter);
		return PERFPORT_ERROR;
	}
	return g->svg ? write_svg(g, p, out) : write_html(g, p, out);
}

static void fg_fini(void *state)
{
	free(state);
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "flamegraph",
	.description = "an interactive flame graph: one self-contained HTML page (or SVG)",
	.default_output = "flamegraph.html",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = fg_init,
	.write = fg_write,
	.upload = NULL,
	.fini = fg_fini,
};
