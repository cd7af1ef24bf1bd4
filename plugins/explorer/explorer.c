/* SPDX-License-Identifier: MIT */
/*
 * explorer.c - the "explorer" exporter: one self-contained HTML page to
 * explore a recording in a browser, offline.
 *
 * The page (viewer.html, compiled in) gets the tree (frames, nodes), the
 * threads, and every sample and off-CPU interval with its time, thread,
 * node, counter and value (perfport_profile.samples, ABI 1.5), so that it
 * can add up any time range and set of threads itself: a timeline of the
 * threads' states, and the flame graph, top-down and bottom-up trees and
 * caller/callee of that selection. With sched_waking recorded with stacks
 * the off-wake tree (perfport_profile.offwake) and its blocked intervals in
 * time come too, for the wakers of any selection;
 * with export --base, the base's tree and values, for the diff.
 *
 * The tables (threads, trees, strings) go as JSON and the samples, the
 * bulk, as columns of LEB128 numbers, thread by thread (times as deltas),
 * each gzipped by the host and base64-encoded; the page inflates them with
 * the browser's DecompressionStream.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/json.h"
#include "perfport/map.h"
#include "perfport/plugin.h"

static const char viewer[] =
#include "explorer-viewer.h"
	;

#define DATA_MARKER "/*@PERFPORT_DATA@*/"

static const struct perfport_option_def options[] = {
	{ "title", PERFPORT_OPT_STRING, NULL, NULL,
	  "the page's title (default: the program and host)" },
	{ "counter", PERFPORT_OPT_ENUM, NULL,
	  "on-cpu,preempted,lock,io,sleep,timed-sleep,idle",
	  "the counter shown first (default on-cpu if it has data, else the first that has)" },
	{ "source", PERFPORT_OPT_BOOL, "false", NULL,
	  "embed the text of the source files the lines name, where readable (each up to "
	  "1 MiB, 16 MiB in all), beside the cost per line" },
};

/* Bounds on the source text a page carries (option source). */
#define SOURCE_FILE_MAX (1u << 20)
#define SOURCE_ALL_MAX (16u << 20)

struct ex {
	const struct perfport_host *host;
	const char *title, *counter;
	bool source;
};

/* --- a growing byte buffer --- */

struct bytes {
	unsigned char *v;
	size_t len, cap;
	bool oom;
};

static void bytes_put(struct bytes *b, const void *data, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *v;

		while (cap < b->len + n)
			cap *= 2;
		v = realloc(b->v, cap);
		if (!v) {
			b->oom = true;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	memcpy(b->v + b->len, data, n);
	b->len += n;
}

/* @x as an unsigned LEB128 number */
static void bytes_uleb(struct bytes *b, uint64_t x)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n] = x & 0x7f;
		x >>= 7;
		if (x)
			tmp[n] |= 0x80;
		n++;
	} while (x);
	bytes_put(b, tmp, n);
}

/* --- interned strings: the page's string table --- */

struct strtab {
	struct perfport_map map;     /* string -> its index */
	const char **v;              /* by index: the map's copies */
	size_t nr, cap;
	bool oom;
};

/* The index of @s in @t (added if new); -1 for NULL or out of memory. */
static long intern(struct strtab *t, const char *s)
{
	const char *key;
	uint32_t id;
	bool added;

	if (!s || t->oom)
		return -1;
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
	if (!perfport_map_get(&t->map, s, strlen(s), (uint32_t)t->nr, &id, &added, &key)) {
		t->oom = true;
		return -1;
	}
	if (added)
		t->v[t->nr++] = key;
	return id;
}

static void strtab_free(struct strtab *t)
{
	perfport_map_free(&t->map);
	free(t->v);
}

static void put_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	perfport_json_chars_ex(out, s, PERFPORT_JSON_HTML);
	fputc('"', out);
}

/* --- a function's frames as one (the host's frames_by_line) --- */

/*
 * The tree the page shows: the host's nodes merged where they differ only
 * by the line of their frames (a host that keys frames by line, ABI 1.7's
 * frames_by_line, splits a function's node by line; otherwise nothing
 * merges). Nodes in pre-order; a node's frame is that of the first host
 * node merged into it, children in the order the host's first come.
 */
struct merged {
	size_t n;
	uint32_t *of;                /* per host node: the merged node it is in */
	uint32_t *parent, *frame;    /* per merged node */
};

static void merged_free(struct merged *m)
{
	free(m->of);
	free(m->parent);
	free(m->frame);
}

/* @p's frame index for each frame: the first with its function, module and
 * flags. Return: false out of memory. */
static bool canon_frames(const struct perfport_profile *p, uint32_t *canon)
{
	struct perfport_map map = { 0 };
	char *key = NULL;
	size_t cap = 0;
	bool ok = true;

	for (size_t i = 0; i < p->nr_frames && ok; i++) {
		const struct perfport_frame *f = perfport_frame_at(p, i);
		const char *mod = f->module ? f->module : "";
		size_t lf = strlen(f->function), lm = strlen(mod), len = lf + lm + 2 + sizeof(f->flags);
		bool added;

		if (len > cap) {
			char *k = realloc(key, len * 2);

			if (!k) {
				ok = false;
				break;
			}
			key = k;
			cap = len * 2;
		}
		memcpy(key, f->function, lf + 1);
		memcpy(key + lf + 1, mod, lm + 1);
		memcpy(key + lf + lm + 2, &f->flags, sizeof(f->flags));
		ok = perfport_map_get(&map, key, len, (uint32_t)i, &canon[i], &added, NULL);
	}
	free(key);
	perfport_map_free(&map);
	return ok;
}

/* @m for @p. Return: false out of memory (@m then holds nothing). */
static bool merge_tree(const struct perfport_profile *p, struct merged *m)
{
	size_t n = p->nr_nodes ? p->nr_nodes : 1;
	uint32_t *canon = calloc(p->nr_frames + 1, sizeof(*canon));
	uint32_t *tmp = calloc(n, sizeof(*tmp)), *tparent = calloc(n, sizeof(*tparent));
	uint32_t *tframe = calloc(n, sizeof(*tframe)), *first = calloc(n, sizeof(*first));
	uint32_t *next = calloc(n, sizeof(*next)), *stack = calloc(n, sizeof(*stack));
	uint32_t *final = calloc(n, sizeof(*final));
	struct perfport_map map = { 0 };
	size_t nt = 1, sp = 0;
	bool ok = false;

	memset(m, 0, sizeof(*m));
	m->of = calloc(n, sizeof(*m->of));
	m->parent = calloc(n, sizeof(*m->parent));
	m->frame = calloc(n, sizeof(*m->frame));
	if (!canon || !tmp || !tparent || !tframe || !first || !next || !stack || !final ||
	    !m->of || !m->parent || !m->frame || !canon_frames(p, canon))
		goto out;
	/* merged nodes numbered as first met: (merged parent, canonical frame) */
	tparent[0] = tframe[0] = UINT32_MAX;
	for (size_t i = 1; i < p->nr_nodes; i++) {
		const struct perfport_node *nd = perfport_node_at(p, i);
		uint32_t key[2] = { tmp[nd->parent], canon[nd->frame] }, id;
		bool added;

		if (!perfport_map_get(&map, key, sizeof(key), (uint32_t)nt, &id, &added, NULL))
			goto out;
		if (added) {
			tparent[nt] = key[0];
			tframe[nt] = nd->frame;
			nt++;
		}
		tmp[i] = id;
	}
	/* children lists in the order met, then pre-order */
	for (size_t i = 0; i < nt; i++)
		first[i] = next[i] = UINT32_MAX;
	for (size_t i = nt; i-- > 1;) {
		next[i] = first[tparent[i]];
		first[tparent[i]] = (uint32_t)i;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t t = stack[--sp], kids = 0;

		final[t] = (uint32_t)m->n;
		m->parent[m->n] = t ? final[tparent[t]] : UINT32_MAX;
		m->frame[m->n] = tframe[t];
		m->n++;
		/* pushed in reverse so that the first child comes out first */
		for (uint32_t c = first[t]; c != UINT32_MAX; c = next[c])
			kids++;
		sp += kids;
		for (uint32_t c = first[t], k = 1; c != UINT32_MAX; c = next[c], k++)
			stack[sp - k] = c;
	}
	for (size_t i = 0; i < p->nr_nodes; i++)
		m->of[i] = final[tmp[i]];
	ok = true;
out:
	perfport_map_free(&map);
	free(final);
	free(stack);
	free(next);
	free(first);
	free(tframe);
	free(tparent);
	free(tmp);
	free(canon);
	if (!ok)
		merged_free(m);
	return ok;
}

/* --- the tree --- */

/*
 * "frames":{"fn":[..],"mod":[..],"file":[..],"line":[..],"flags":[..]} and
 * "nodes":{"parent":[..],"frame":[..]} (@m's merged nodes), strings as
 * indexes into @st (-1 none); "of":[..], per node of @p (what the samples
 * name) its merged node; with @lines, @p's own nodes as "lines":{"parent":
 * [..],"frame":[..]} (their frames' lines are those of the samples); the
 * merged nodes' self values per counter with data: "self":{"c":[..]}.
 */
static void put_tree(FILE *out, const struct perfport_profile *p, const struct merged *m,
		     struct strtab *st, bool values, bool lines)
{
	static const char *const cols[] = { "fn", "mod", "file", "line", "flags" };

	fputs("{\"frames\":{", out);
	for (unsigned k = 0; k < 5; k++) {
		fprintf(out, "%s\"%s\":[", k ? "," : "", cols[k]);
		for (size_t i = 0; i < p->nr_frames; i++) {
			const struct perfport_frame *f = perfport_frame_at(p, i);

			if (i)
				fputc(',', out);
			if (k == 0)
				fprintf(out, "%ld", intern(st, f->function));
			else if (k == 1)
				fprintf(out, "%ld", intern(st, f->module));
			else if (k == 2)
				fprintf(out, "%ld", intern(st, f->file));
			else if (k == 3)
				fprintf(out, "%" PRIu32, f->line);
			else
				fprintf(out, "%" PRIu32, f->flags);
		}
		fputc(']', out);
	}
	fputs("},\"nodes\":{\"parent\":[", out);
	for (size_t i = 0; i < m->n; i++)
		fprintf(out, "%s%ld", i ? "," : "", i ? (long)m->parent[i] : -1L);
	fputs("],\"frame\":[", out);
	for (size_t i = 0; i < m->n; i++)
		fprintf(out, "%s%ld", i ? "," : "", i ? (long)m->frame[i] : -1L);
	fputs("]},\"of\":[", out);
	for (size_t i = 0; i < p->nr_nodes; i++)
		fprintf(out, "%s%" PRIu32, i ? "," : "", m->of[i]);
	fputc(']', out);
	if (lines) {
		fputs(",\"lines\":{\"parent\":[", out);
		for (size_t i = 0; i < p->nr_nodes; i++)
			fprintf(out, "%s%ld", i ? "," : "",
				i ? (long)perfport_node_at(p, i)->parent : -1L);
		fputs("],\"frame\":[", out);
		for (size_t i = 0; i < p->nr_nodes; i++)
			fprintf(out, "%s%ld", i ? "," : "",
				i ? (long)perfport_node_at(p, i)->frame : -1L);
		fputs("]}", out);
	}
	if (values) {
		uint64_t *v = calloc(m->n, sizeof(*v));

		fputs(",\"self\":{", out);
		for (unsigned c = 0, first = 1; v && c < p->nr_counters && c < 64; c++) {
			if (!(p->counters_present >> c & 1))
				continue;
			fprintf(out, "%s\"%s\":[", first ? "" : ",", p->counter_names[c]);
			first = 0;
			memset(v, 0, m->n * sizeof(*v));
			for (size_t i = 0; i < p->nr_nodes; i++)
				v[m->of[i]] += perfport_self_value(p, i, c);
			for (size_t i = 0; i < m->n; i++)
				fprintf(out, "%s%" PRIu64, i ? "," : "", v[i]);
			fputc(']', out);
		}
		fputc('}', out);
		if (!v)
			st->oom = true;
		free(v);
	}
	fputc('}', out);
}

/* --- the samples --- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void put_base64(FILE *out, const unsigned char *v, size_t n)
{
	for (size_t i = 0; i < n; i += 3) {
		uint32_t w = (uint32_t)v[i] << 16 | (i + 1 < n ? (uint32_t)v[i + 1] << 8 : 0) |
			     (i + 2 < n ? v[i + 2] : 0);

		fputc(b64[w >> 18 & 63], out);
		fputc(b64[w >> 12 & 63], out);
		fputc(i + 1 < n ? b64[w >> 6 & 63] : '=', out);
		fputc(i + 2 < n ? b64[w & 63] : '=', out);
	}
}

/* The thread's index in p->threads for @tid (threads are few: a sorted copy
 * is searched). */
struct tid_ix {
	uint32_t tid, ix;
};

static int tid_cmp(const void *a, const void *b)
{
	const struct tid_ix *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* A sample's place in the packing: by thread, then time (then its order). */
struct packed {
	uint32_t thread;             /* index in p->threads; nr_threads: none */
	uint32_t i;                  /* index in p->samples */
};

static int packed_cmp(const void *a, const void *b)
{
	const struct packed *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;   /* p->samples is in time order */
}

/* @x as a zigzag (sign in the low bit) LEB128 number */
static void bytes_sleb(struct bytes *b, int64_t x)
{
	bytes_uleb(b, ((uint64_t)x << 1) ^ (uint64_t)(x >> 63));
}

/*
 * The samples, thread by thread in time order, as LEB128 columns: the
 * count, how many each thread has (p->threads' order, then those of no
 * known thread), then per sample its time (ns after the recording's start,
 * as a delta from the thread's sample before; an interval begun before the
 * recording starts at its start), its node (a zigzag delta from the
 * thread's node before), counter and value - gzipped into *@gz (free with
 * host->free()). A thread's samples repeat its stacks: by thread they
 * gzip to less than in time order. Return: PERFPORT_OK or PERFPORT_ERROR.
 */
static enum perfport_status pack_samples(const struct ex *e, const struct perfport_profile *p,
					 void **gz, size_t *gz_len)
{
	size_t n = PERFPORT_PROFILE_HAS_SAMPLES(p) ? p->nr_samples : 0;
	struct tid_ix *ix = calloc(p->nr_threads + 1, sizeof(*ix));
	struct packed *order = calloc(n + 1, sizeof(*order));
	uint32_t *runs = calloc(p->nr_threads + 1, sizeof(*runs));
	struct bytes b = { 0 };
	enum perfport_status st = PERFPORT_ERROR;

	if (!ix || !order || !runs) {
		e->host->log(e->host, PERFPORT_LOG_ERROR, "out of memory packing %zu samples", n);
		goto out;
	}
	for (size_t i = 0; i < p->nr_threads; i++)
		ix[i] = (struct tid_ix){ perfport_thread_at(p, i)->tid, (uint32_t)i };
	qsort(ix, p->nr_threads, sizeof(*ix), tid_cmp);
	for (size_t i = 0; i < n; i++) {
		struct tid_ix key = { perfport_sample_at(p, i)->tid, 0 };
		const struct tid_ix *t = bsearch(&key, ix, p->nr_threads, sizeof(*ix), tid_cmp);

		order[i] = (struct packed){ t ? t->ix : (uint32_t)p->nr_threads, (uint32_t)i };
		runs[order[i].thread]++;
	}
	qsort(order, n, sizeof(*order), packed_cmp);
	bytes_uleb(&b, n);
	for (size_t t = 0; t <= p->nr_threads; t++)
		bytes_uleb(&b, runs[t]);
	for (unsigned col = 0; col < 4; col++) {
		uint64_t prev = p->start_ns;
		int64_t prev_node = 0;

		for (size_t k = 0; k < n; k++) {
			const struct perfport_sample *s = perfport_sample_at(p, order[k].i);
			uint64_t at = s->time_ns < p->start_ns ? p->start_ns : s->time_ns;

			if (!k || order[k].thread != order[k - 1].thread) {
				prev = p->start_ns;
				prev_node = 0;
			}
			if (col == 0) {
				bytes_uleb(&b, at - prev);
				prev = at;
			} else if (col == 1) {
				bytes_sleb(&b, (int64_t)s->node - prev_node);
				prev_node = s->node;
			} else if (col == 2) {
				bytes_uleb(&b, s->counter);
			} else {
				bytes_uleb(&b, s->value);
			}
		}
	}
	if (b.oom) {
		e->host->log(e->host, PERFPORT_LOG_ERROR, "out of memory packing %zu samples", n);
		goto out;
	}
	st = e->host->gzip(b.v, b.len, gz, gz_len);
	if (st == PERFPORT_OK)
		e->host->log(e->host, PERFPORT_LOG_DEBUG, "%zu samples: %zu bytes, %zu gzipped", n,
			     b.len, *gz_len);
out:
	free(b.v);
	free(runs);
	free(order);
	free(ix);
	return st;
}

/* --- the page --- */

static bool not_program(const char *comm)
{
	return !comm || !strcmp(comm, "perf") || !strcmp(comm, "perf-exec") ||
	       !strncmp(comm, "swapper", 7);
}

/* "Explorer: PROGRAM on HOST": the workload perf started (the word after
 * " -- " in its command line), else the one process recorded, else how
 * many there were */
static void default_title(const struct perfport_profile *p, char *buf, size_t max)
{
	const char *one = NULL, *host = p->hostname ? p->hostname : "a recording";
	const char *w = p->cmdline ? strstr(p->cmdline, " -- ") : NULL;
	size_t procs = 0;

	if (w && w[4] && w[4] != ' ') {
		size_t n = strcspn(w + 4, " ");
		const char *b = w + 4;

		for (const char *q = w + 4; q < w + 4 + n; q++)
			if (*q == '/')
				b = q + 1;
		snprintf(buf, max, "Explorer: %.*s on %s", (int)(w + 4 + n - b), b, host);
		return;
	}

	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct perfport_thread *t = perfport_thread_at(p, i);
		bool seen = false;

		if (not_program(t->comm) || !t->pid)
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = perfport_thread_at(p, k)->pid == t->pid;
		if (seen)
			continue;
		procs++;
		if (t->tid == t->pid || !one)
			one = t->comm;
	}
	if (procs == 1)
		snprintf(buf, max, "Explorer: %s on %s", one, host);
	else
		snprintf(buf, max, "Explorer: %zu processes on %s", procs, host);
}

/* put_tree() of @p merged (out of memory: st->oom set) */
static void put_merged(FILE *out, const struct perfport_profile *p, struct strtab *st, bool values,
		       bool lines)
{
	struct merged m;

	if (!merge_tree(p, &m)) {
		st->oom = true;
		fputs("null", out);
		return;
	}
	put_tree(out, p, &m, st, values, lines);
	merged_free(&m);
}

/*
 * ,"sources":{"FILE":"TEXT",..}: the text of each source file a frame of @p
 * with a line names, where it is a readable regular file of at most
 * SOURCE_FILE_MAX bytes, up to SOURCE_ALL_MAX in all (what is left out is
 * logged). Out of memory: st->oom set.
 */
static void put_sources(const struct ex *e, const struct perfport_profile *p, FILE *out,
			struct strtab *st)
{
	struct perfport_map seen = { 0 };
	size_t all = 0, nr = 0, skipped = 0;
	char *buf = malloc(SOURCE_FILE_MAX + 1);

	if (!buf) {
		st->oom = true;
		return;
	}
	fputs(",\"sources\":{", out);
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct perfport_frame *f = perfport_frame_at(p, i);
		uint32_t id;
		bool added;
		FILE *src;
		size_t n;

		if (!f->file || !f->line)
			continue;
		if (!perfport_map_get(&seen, f->file, strlen(f->file), 0, &id, &added, NULL)) {
			st->oom = true;
			break;
		}
		if (!added)
			continue;
		src = fopen(f->file, "rb");
		n = src ? fread(buf, 1, SOURCE_FILE_MAX + 1, src) : 0;
		if (!src || ferror(src) || n > SOURCE_FILE_MAX || all + n > SOURCE_ALL_MAX) {
			e->host->log(e->host, PERFPORT_LOG_INFO, "source '%s' not embedded: %s", f->file,
				     !src || ferror(src) ? "not readable" :
				     n > SOURCE_FILE_MAX ? "over 1 MiB" : "the page's 16 MiB of sources are full");
			if (src)
				fclose(src);
			skipped++;
			continue;
		}
		fclose(src);
		buf[n] = 0;
		if (strlen(buf) != n) {
			e->host->log(e->host, PERFPORT_LOG_INFO, "source '%s' not embedded: not text",
				     f->file);
			skipped++;
			continue;
		}
		all += n;
		fprintf(out, "%s", nr++ ? "," : "");
		put_string(out, f->file);
		fputc(':', out);
		put_string(out, buf);
	}
	fputc('}', out);
	e->host->log(e->host, PERFPORT_LOG_DEBUG, "%zu source files embedded (%zu bytes), %zu not",
		     nr, all, skipped);
	perfport_map_free(&seen);
	free(buf);
}

/*
 * The tables, as JSON: {"threads":[..],"tree":..,"offwake":..,"base":..,
 * "strings":[..]} (trees as put_tree(); offwake and base null when
 * absent), with option source its "sources" (put_sources()). Written to a memory stream, then gzipped.
 */
static void put_tables(const struct ex *e, const struct perfport_profile *p, FILE *out,
		       struct strtab *st)
{
	const struct perfport_profile *ow = p->offwake;

	fputs("{\"threads\":[", out);
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct perfport_thread *t = perfport_thread_at(p, i);

		fprintf(out, "%s{\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"comm\":", i ? "," : "",
			t->pid, t->tid);
		put_string(out, t->comm);
		fprintf(out, ",\"start\":%" PRId64 ",\"end\":%" PRId64 "}",
			(int64_t)(t->start_ns - p->start_ns), (int64_t)(t->end_ns - p->start_ns));
	}
	fputs("],\"tree\":", out);
	put_merged(out, p, st, false, PERFPORT_PROFILE_HAS_LINES(p) && p->frames_by_line);
	fputs(",\"offwake\":", out);
	if (ow && ow->nr_nodes > 1)
		put_merged(out, ow, st, true, false);
	else
		fputs("null", out);
	fputs(",\"base\":", out);
	if (PERFPORT_PROFILE_HAS_BASE(p) && p->base && p->base->nr_nodes > 1)
		put_merged(out, p->base, st, true, false);
	else
		fputs("null", out);
	if (e->source)
		put_sources(e, p, out, st);
	fputs(",\"strings\":[", out);
	for (size_t i = 0; i < st->nr; i++) {
		if (i)
			fputc(',', out);
		put_string(out, st->v[i]);
	}
	fputs("]}", out);
}

/* The tables, gzipped into *@gz (free with host->free()). Return:
 * PERFPORT_OK or PERFPORT_ERROR. */
static enum perfport_status pack_tables(const struct ex *e, const struct perfport_profile *p,
					void **gz, size_t *gz_len)
{
	struct strtab st = { 0 };
	char *json = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&json, &len);
	enum perfport_status ret = PERFPORT_ERROR;

	if (!mem) {
		e->host->log(e->host, PERFPORT_LOG_ERROR, "out of memory for the page's tables");
		return PERFPORT_ERROR;
	}
	put_tables(e, p, mem, &st);
	if (fclose(mem) || st.oom) {
		e->host->log(e->host, PERFPORT_LOG_ERROR, "out of memory for the page's tables");
		goto out;
	}
	ret = e->host->gzip(json, len, gz, gz_len);
	if (ret == PERFPORT_OK)
		e->host->log(e->host, PERFPORT_LOG_DEBUG, "tables: %zu bytes of JSON, %zu gzipped", len,
			     *gz_len);
out:
	free(json);
	strtab_free(&st);
	return ret;
}

/* The page's data: what it shows first as JSON, then the tables, the
 * samples and the off-wake tree's (@ow_len 0: none), each gzipped and
 * base64-encoded. */
static void put_data(const struct ex *e, const struct perfport_profile *p, FILE *out,
		     const unsigned char *tables, size_t tables_len, const unsigned char *samples,
		     size_t samples_len, const unsigned char *ow, size_t ow_len)
{
	char title[512];

	if (e->title)
		snprintf(title, sizeof(title), "%s", e->title);
	else
		default_title(p, title, sizeof(title));
	fputs("{\"title\":", out);
	put_string(out, title);
	fputs(",\"host\":", out);
	put_string(out, p->hostname);
	fputs(",\"cmdline\":", out);
	put_string(out, p->cmdline);
	fputs(",\"version\":", out);
	put_string(out, e->host->version);
	fprintf(out, ",\"start_ns\":\"%" PRIu64 "\",\"span_ns\":%" PRIu64 ",\"first\":", p->start_ns,
		p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0);
	put_string(out, e->counter);
	fputs(",\"counters\":[", out);
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
		fprintf(out, "%s{\"name\":", c ? "," : "");
		put_string(out, p->counter_names[c]);
		fputs(",\"unit\":", out);
		put_string(out, p->counter_units[c]);
		fprintf(out, ",\"present\":%s}", p->counters_present >> c & 1 ? "true" : "false");
	}
	fputs("],\"tables\":\"", out);
	put_base64(out, tables, tables_len);
	fputs("\",\"samples\":\"", out);
	put_base64(out, samples, samples_len);
	fputc('"', out);
	if (ow_len) {
		fputs(",\"owsamples\":\"", out);
		put_base64(out, ow, ow_len);
		fputc('"', out);
	}
	fputc('}', out);
}

static enum perfport_status ex_write(void *state, const struct perfport_profile *p, FILE *out)
{
	const struct ex *e = state;
	const char *mark = strstr(viewer, DATA_MARKER);
	const struct perfport_profile *ow = p->offwake;
	void *tables = NULL, *samples = NULL, *ow_samples = NULL;
	size_t tables_len = 0, samples_len = 0, ow_len = 0;
	enum perfport_status ret = PERFPORT_ERROR;

	if (!PERFPORT_PROFILE_HAS_SAMPLES(p)) {
		e->host->log(e->host, PERFPORT_LOG_ERROR,
			     "the host gives no samples in time (perfport ABI 1.5 or later needed)");
		return PERFPORT_ERROR;
	}
	if (!mark) {
		e->host->log(e->host, PERFPORT_LOG_ERROR, "the page has no data marker");
		return PERFPORT_ERROR;
	}
	if (pack_tables(e, p, &tables, &tables_len) != PERFPORT_OK)
		goto out;
	if (pack_samples(e, p, &samples, &samples_len) != PERFPORT_OK)
		goto out;
	/* the off-wake tree's blocked intervals in time (a host before issue
	 * 56 keeps none: the page then shows the wakers of the whole recording) */
	if (ow && ow->nr_nodes > 1 && PERFPORT_PROFILE_HAS_SAMPLES(ow) && ow->nr_samples &&
	    pack_samples(e, ow, &ow_samples, &ow_len) != PERFPORT_OK)
		goto out;
	fwrite(viewer, 1, (size_t)(mark - viewer), out);
	put_data(e, p, out, tables, tables_len, samples, samples_len, ow_samples, ow_len);
	fputs(mark + strlen(DATA_MARKER), out);
	ret = ferror(out) ? PERFPORT_ERROR : PERFPORT_OK;
out:
	if (ow_samples)
		e->host->free(ow_samples);
	if (samples)
		e->host->free(samples);
	if (tables)
		e->host->free(tables);
	return ret;
}

static enum perfport_status ex_init(const struct perfport_host *host,
				    const struct perfport_option *opts, size_t nr_opts, void **state)
{
	struct ex *e = calloc(1, sizeof(*e));

	if (!e)
		return PERFPORT_ERROR;
	e->host = host;
	for (size_t i = 0; i < nr_opts; i++) {
		if (!strcmp(opts[i].name, "title"))
			e->title = opts[i].value;
		else if (!strcmp(opts[i].name, "counter"))
			e->counter = opts[i].value;
		else if (!strcmp(opts[i].name, "source"))
			e->source = opts[i].value && (!strcmp(opts[i].value, "true") ||
						      !strcmp(opts[i].value, "yes") ||
						      !strcmp(opts[i].value, "1"));
	}
	*state = e;
	return PERFPORT_OK;
}

static void ex_fini(void *state)
{
	free(state);
}

__attribute__((visibility("default"))) const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "explorer",
	.description = "one HTML page to explore a recording offline: a timeline of the threads' "
		       "states, flame graph, trees, callers and source lines of any time range and threads",
	.default_output = "explorer.html",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = ex_init,
	.write = ex_write,
	.upload = NULL,
	.fini = ex_fini,
	.flags = PERFPORT_EXPORTER_SAMPLES | PERFPORT_EXPORTER_LINES,
};
