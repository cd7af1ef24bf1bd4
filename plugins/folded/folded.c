/* SPDX-License-Identifier: MIT */
/*
 * folded.c - the "folded" exporter: one line per stack, root first,
 * frames joined by ';', a space, and the stack's value:
 *
 *   main;work;compute 1234
 *
 * the input of flamegraph.pl, inferno-flamegraph and speedscope. Kernel
 * frames get "_[k]" and inlined ones "_[i]" (as stackcollapse-perf.pl
 * writes them with --kernel / --inline), JIT frames "_[j]". A ';' or a
 * line break inside a name would break the grammar and becomes '_'.
 * -O wakers=true writes the off-wake stacks instead (blocked stack, a
 * "--- woken by ---" frame, the waker's stack leaf first), as off-wake
 * flame graphs take them.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/plugin.h"

static const struct perfport_option_def options[] = {
	{ "counter", PERFPORT_OPT_LIST, NULL,
	  "on-cpu,preempted,lock,io,sleep,timed-sleep,idle,all",
	  "counters summed into each line's value; default on-cpu if it has data, else every "
	  "off-CPU one that has (a recording of sched_switch alone); all: every counter present" },
	{ "value", PERFPORT_OPT_ENUM, "ns", "ns,ms,samples",
	  "what a value counts: nanoseconds, milliseconds, or samples/intervals" },
	{ "annotate", PERFPORT_OPT_BOOL, "true", NULL,
	  "suffix kernel frames _[k], inlined _[i], JIT _[j]" },
	{ "module", PERFPORT_OPT_BOOL, "false", NULL,
	  "name frames function [module] (module base name)" },
	{ "wakers", PERFPORT_OPT_BOOL, "false", NULL,
	  "off-wake stacks: blocked stack, --- woken by ---, waker stack (leaf first), "
	  "valued by blocked time (counter default: every off-CPU one)" },
};

enum { OPT_COUNTER }; /* its index in options[] */

/* a growing run of text */
struct text {
	char *s;
	size_t len, cap;
};

/*
 * A frame as a line shows it: its text (in struct folded's pieces text)
 * and that text's hash; made at the frame's first line, for one write().
 */
struct piece {
	size_t off, len;
	uint64_t hash;
	bool made;
};

/*
 * A line: its frames (in a block of struct folded's), value and hash. The
 * frames, not the text: a line's text is rebuilt as it is written, from
 * the frames' texts, and it is tens of times their size (C++ names).
 */
struct fline {
	const uint32_t *frames;
	size_t depth;
	uint64_t v, hash;
};

#define LINE_BLOCK (1u << 16) /* the lines' frames are kept in blocks of this many */

struct folded {
	const struct perfport_host *host;
	char *want;           /* the counter option's list; NULL: the default */
	uint64_t counters;    /* bit per counter; all bits: every one present */
	int value;            /* 0 ns, 1 ms, 2 samples */
	bool annotate, module, wakers;
	int err;
	/* each frame's text, made once: most frames are on many lines */
	struct piece *pieces;
	size_t nr_pieces;
	struct text ptext;
	/* the line being written */
	struct text line;
	/* the previous line's frames, and (as lines are written) where each
	 * began in line, or (as they are gathered) the hash of the text
	 * before it: stacks come in pre-order, so the next line mostly
	 * repeats them, and only what differs is hashed or written */
	uint32_t *prev;
	size_t *prev_at;
	uint64_t *prev_hash;
	size_t nr_prev, cap_prev;
	/* the lines, merged: two stacks can print alike (frames that differ
	 * only in what a line does not show: a module, a kind) */
	struct fline *lines;
	size_t nr_lines, cap_lines;
	uint32_t *slots;      /* open addressing on the hash: index + 1 */
	size_t slots_cap;
	uint32_t **blocks;    /* the lines' frames */
	size_t nr_blocks;
	uint32_t *block_at;   /* free room in the last block */
	size_t block_left;
};

#define TEXT_HASH_SEED 0xcbf29ce484222325ULL
#define TEXT_HASH_MUL 0x9e3779b97f4a7c15ULL

static uint64_t hash_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * TEXT_HASH_MUL;
	return h ^ h >> 31;
}

/* The hash of @n bytes at @s, eight at a time. */
static uint64_t text_hash(const char *s, size_t n)
{
	uint64_t h = TEXT_HASH_SEED, w = 0;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = hash_mix(h, w);
	}
	/* the last 0-7 bytes, and how many (only this process reads the hash) */
	w = 0;
	memcpy(&w, s, n);
	return hash_mix(h, w ^ (uint64_t)n << 56);
}

/* Room for @more bytes after what @t holds. false out of memory. */
static bool text_reserve(struct text *t, size_t more)
{
	size_t cap;
	char *s;

	if (t->len + more <= t->cap)
		return true;
	cap = t->cap ? t->cap : 4096;
	while (cap < t->len + more)
		cap *= 2;
	if (!(s = realloc(t->s, cap)))
		return false;
	t->s = s;
	t->cap = cap;
	return true;
}

static bool text_put(struct text *t, const char *s, size_t n)
{
	if (!text_reserve(t, n))
		return false;
	memcpy(t->s + t->len, s, n);
	t->len += n;
	return true;
}

/* Append name @s: a ';' or a line break in it would break the grammar. */
static bool text_put_name(struct text *t, const char *s)
{
	size_t n = strlen(s);
	char *d;

	if (!text_put(t, s, n))
		return false;
	d = t->s + t->len - n;
	/* names rarely hold what breaks a line: look, then mend */
	for (size_t i = strcspn(s, ";\n\r"); i < n; i++)
		if (d[i] == ';' || d[i] == '\n' || d[i] == '\r')
			d[i] = '_';
	return true;
}

/* Frame @i as lines show it, made at its first use; NULL out of memory. */
static const struct piece *piece_of(struct folded *f, const struct perfport_profile *p,
				    uint32_t i)
{
	const struct perfport_frame *fr;
	struct text *t = &f->ptext;
	struct piece *pc;
	size_t start = t->len;
	bool ok;

	if (i >= f->nr_pieces)
		return NULL; /* the host gave a frame it does not have */
	pc = &f->pieces[i];
	if (pc->made)
		return pc;
	fr = perfport_frame_at(p, i);
	ok = text_put_name(t, fr->function);
	if (ok && f->module && fr->module && !(fr->flags & PERFPORT_FRAME_INLINED)) {
		const char *base = strrchr(fr->module, '/');
		bool bracketed = fr->module[0] == '['; /* [kernel.kallsyms], [vdso] */

		ok = text_put(t, bracketed ? " " : " [", bracketed ? 1 : 2) &&
		     text_put_name(t, base && !bracketed ? base + 1 : fr->module) &&
		     (bracketed || text_put(t, "]", 1));
	}
	if (ok && f->annotate) {
		const char *sfx = fr->flags & PERFPORT_FRAME_INLINED ? "_[i]"
				  : fr->flags & PERFPORT_FRAME_KERNEL ? "_[k]"
				  : fr->flags & PERFPORT_FRAME_JIT ? "_[j]" : NULL;

		ok = !sfx || text_put(t, sfx, 4);
	}
	if (!ok)
		return NULL;
	pc->off = start;
	pc->len = t->len - start;
	pc->hash = text_hash(t->s + start, pc->len);
	pc->made = true;
	return pc;
}

/* A copy of @depth frames in the lines' blocks; NULL out of memory. */
static const uint32_t *line_keep(struct folded *f, const uint32_t *frames, size_t depth)
{
	uint32_t *d;

	if (depth > f->block_left) {
		size_t size = depth > LINE_BLOCK ? depth : LINE_BLOCK;
		uint32_t **bl = realloc(f->blocks, (f->nr_blocks + 1) * sizeof(*bl));

		if (!bl)
			return NULL;
		f->blocks = bl;
		if (!(bl[f->nr_blocks] = malloc(size * sizeof(**bl))))
			return NULL;
		f->block_at = bl[f->nr_blocks++];
		f->block_left = size;
	}
	d = f->block_at;
	if (depth)
		memcpy(d, frames, depth * sizeof(*d));
	f->block_at += depth;
	f->block_left -= depth;
	return d;
}

/*
 * Whether frames @a and @b (@depth each, their pieces made) print alike:
 * frame by frame, as a frame's text holds no ';'.
 */
static bool line_same(const struct folded *f, const uint32_t *a, const uint32_t *b, size_t depth)
{
	for (size_t i = 0; i < depth; i++) {
		const struct piece *x = &f->pieces[a[i]], *y = &f->pieces[b[i]];

		if (a[i] != b[i] && (x->hash != y->hash || x->len != y->len ||
				     memcmp(f->ptext.s + x->off, f->ptext.s + y->off, x->len)))
			return false;
	}
	return true;
}

/*
 * Add @v to the line of @frames (@depth, their pieces made; hashed to
 * @hash), made if new. false out of memory.
 */
static bool line_add(struct folded *f, const uint32_t *frames, size_t depth, uint64_t hash,
		     uint64_t v)
{
	size_t j;

	if ((f->nr_lines + 1) * 2 > f->slots_cap) {
		size_t cap = f->slots_cap ? f->slots_cap * 2 : 1024;
		uint32_t *sl = calloc(cap, sizeof(*sl));

		if (!sl)
			return false;
		for (size_t i = 0; i < f->nr_lines; i++) {
			for (j = f->lines[i].hash & (cap - 1); sl[j];
			     j = (j + 1) & (cap - 1))
				;
			sl[j] = (uint32_t)i + 1;
		}
		free(f->slots);
		f->slots = sl;
		f->slots_cap = cap;
	}
	for (j = hash & (f->slots_cap - 1); f->slots[j]; j = (j + 1) & (f->slots_cap - 1)) {
		struct fline *l = &f->lines[f->slots[j] - 1];

		if (l->hash == hash && l->depth == depth && line_same(f, l->frames, frames, depth)) {
			l->v += v;
			return true;
		}
	}
	if (f->nr_lines == f->cap_lines) {
		size_t cap = f->cap_lines ? f->cap_lines * 2 : 1024;
		struct fline *nl = realloc(f->lines, cap * sizeof(*nl));

		if (!nl)
			return false;
		f->lines = nl;
		f->cap_lines = cap;
	}
	f->lines[f->nr_lines].frames = line_keep(f, frames, depth);
	if (!f->lines[f->nr_lines].frames)
		return false;
	f->lines[f->nr_lines].depth = depth;
	f->lines[f->nr_lines].v = v;
	f->lines[f->nr_lines].hash = hash;
	f->slots[j] = (uint32_t)++f->nr_lines;
	return true;
}

/* What one write() made: its lines and its frames' texts. */
static void lines_free(struct folded *f)
{
	for (size_t i = 0; i < f->nr_blocks; i++)
		free(f->blocks[i]);
	free(f->blocks);
	free(f->lines);
	free(f->slots);
	free(f->pieces);
	free(f->ptext.s);
	f->blocks = NULL;
	f->lines = NULL;
	f->slots = NULL;
	f->pieces = NULL;
	f->ptext = (struct text){ 0 };
	f->nr_blocks = f->block_left = f->nr_lines = f->cap_lines = f->slots_cap = 0;
	f->nr_pieces = 0;
	f->block_at = NULL;
}

static bool is_true(const char *v)
{
	return v && strcmp(v, "true") == 0;
}

static enum perfport_status folded_init(const struct perfport_host *host,
					const struct perfport_option *opts, size_t nr,
					void **state)
{
	struct folded *f = calloc(1, sizeof(*f));

	if (!f)
		return PERFPORT_ERROR;
	f->host = host;
	for (size_t i = 0; i < nr; i++) {
		const char *v = opts[i].value;

		if (!v)
			continue;
		if (strcmp(opts[i].name, "counter") == 0) {
			continue; /* resolved against the profile's names in write() */
		} else if (strcmp(opts[i].name, "value") == 0) {
			f->value = strcmp(v, "ms") == 0 ? 1 : strcmp(v, "samples") == 0 ? 2 : 0;
		} else if (strcmp(opts[i].name, "annotate") == 0) {
			f->annotate = is_true(v);
		} else if (strcmp(opts[i].name, "module") == 0) {
			f->module = is_true(v);
		} else if (strcmp(opts[i].name, "wakers") == 0) {
			f->wakers = is_true(v);
		}
	}
	/* keep the list for write(): the profile names the counters */
	if (opts[OPT_COUNTER].value) {
		f->want = strdup(opts[OPT_COUNTER].value);
		if (!f->want) {
			free(f);
			return PERFPORT_ERROR;
		}
	}
	*state = f;
	return PERFPORT_OK;
}

static bool prev_reserve(struct folded *f, size_t n)
{
	size_t cap;
	uint32_t *fr;
	size_t *at;
	uint64_t *h;

	if (n <= f->cap_prev)
		return true;
	cap = f->cap_prev ? f->cap_prev : 64;
	while (cap < n)
		cap *= 2;
	fr = realloc(f->prev, cap * sizeof(*fr));
	if (!fr)
		return false;
	f->prev = fr;
	at = realloc(f->prev_at, cap * sizeof(*at));
	if (!at)
		return false;
	f->prev_at = at;
	h = realloc(f->prev_hash, cap * sizeof(*h));
	if (!h)
		return false;
	f->prev_hash = h;
	f->cap_prev = cap;
	return true;
}

static int one_stack(void *ctx, const struct perfport_profile *p, const uint32_t *frames,
		     size_t depth, uint32_t node)
{
	struct folded *f = ctx;
	uint64_t v = 0, h;
	size_t same = 0;

	for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
		if (!(f->counters >> c & 1))
			continue;
		v += f->value == 2 ? perfport_self_count(p, node, c) : perfport_self_value(p, node, c);
	}
	if (f->value == 1)
		v /= 1000000;
	if (!v)
		return 0;
	if (!prev_reserve(f, depth + 1))
		goto nomem;
	/* the frames this line shares with the one before are hashed */
	while (same < depth && same < f->nr_prev && frames[same] == f->prev[same])
		same++;
	h = same ? f->prev_hash[same] : TEXT_HASH_SEED;
	/*
	 * The line's hash is its frames' texts' hashes, mixed in order: a
	 * frame's text holds no ';' (text_put_name()), so where the text of
	 * a line splits into frames is the text's, and lines that print alike
	 * hash alike.
	 */
	for (size_t i = same; i < depth; i++) {
		const struct piece *pc = piece_of(f, p, frames[i]);

		if (!pc)
			goto nomem;
		h = hash_mix(h, pc->hash);
		f->prev[i] = frames[i];
		f->prev_hash[i + 1] = h;
	}
	f->nr_prev = depth;
	if (!line_add(f, frames, depth, h ^ h >> 29, v))
		goto nomem;
	return 0;
nomem:
	f->err = 1;
	return -1;
}

static enum perfport_status folded_write(void *state, const struct perfport_profile *p,
					 FILE *out)
{
	struct folded *f = state;
	char *save = NULL;

	if (f->wakers) {
		if (!PERFPORT_HAS(p, struct perfport_profile, offwake) || !p->offwake) {
			f->host->log(f->host, PERFPORT_LOG_ERROR, "folded: the recording has no wakeups "
				     "with stacks (perf record -e sched:sched_waking -g)");
			return PERFPORT_ERROR;
		}
		p = p->offwake;
	}
	f->counters = 0;
	if (f->want) {
		/* the counter list, by the names the profile gives */
		char *list = strdup(f->want);

		if (!list)
			return PERFPORT_ERROR;
		for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
			if (strcmp(w, "all") == 0) {
				f->counters |= p->counters_present;
				continue;
			}
			for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
				if (strcmp(p->counter_names[c], w) == 0)
					f->counters |= 1ull << c;
		}
		free(list);
		if (!f->counters)
			f->host->log(f->host, PERFPORT_LOG_WARN,
				     "folded: none of the counters asked for is known");
		else if (!(f->counters & p->counters_present) && p->counters_present)
			f->host->log(f->host, PERFPORT_LOG_WARN,
				     "folded: the counters asked for hold nothing in this "
				     "profile: the output is empty (counter=all writes what it has)");
	} else if (!f->wakers && (p->counters_present >> PERFPORT_COUNTER_ON_CPU & 1)) {
		f->counters = 1ull << PERFPORT_COUNTER_ON_CPU;
	} else {
		/* off-wake stacks, or no on-CPU samples (perf sched record):
		 * the time threads spent off the CPU, every state of it */
		f->counters = p->counters_present & ~(1ull << PERFPORT_COUNTER_ON_CPU |
						      1ull << PERFPORT_COUNTER_IDLE);
		if (!f->counters)
			f->counters = p->counters_present & 1ull << PERFPORT_COUNTER_IDLE;
		if (!f->wakers && f->counters)
			f->host->log(f->host, PERFPORT_LOG_INFO,
				     "folded: no on-CPU samples: each line holds off-CPU "
				     "time (counter= picks the states)");
	}
	f->nr_prev = 0;
	f->nr_pieces = p->nr_frames;
	if (!(f->pieces = calloc(p->nr_frames ? p->nr_frames : 1, sizeof(*f->pieces))) ||
	    f->host->stacks(p, one_stack, f) || f->err) {
		lines_free(f);
		f->err = 0;
		f->host->log(f->host, PERFPORT_LOG_ERROR, "folded: cannot write the stacks");
		return PERFPORT_ERROR;
	}
	f->nr_prev = 0;
	for (size_t i = 0; i < f->nr_lines; i++) {
		const struct fline *l = &f->lines[i];
		size_t same = 0, at, n;
		uint64_t v = l->v;
		char *d;

		/* the text this line shares with the one before is in line */
		while (same < l->depth && same < f->nr_prev && l->frames[same] == f->prev[same])
			same++;
		at = same ? f->prev_at[same] : 0;
		for (size_t k = same; k < l->depth; k++) {
			const struct piece *pc = &f->pieces[l->frames[k]];

			f->line.len = at;
			if (!text_reserve(&f->line, pc->len + 1))
				goto nomem;
			if (k)
				f->line.s[at++] = ';';
			memcpy(f->line.s + at, f->ptext.s + pc->off, pc->len);
			at += pc->len;
			f->prev[k] = l->frames[k];
			f->prev_at[k + 1] = at;
		}
		f->nr_prev = l->depth;
		/* " <value>\n" after it, digits from the end */
		f->line.len = at;
		if (!text_reserve(&f->line, 24))
			goto nomem;
		d = f->line.s + at + 23;
		*--d = '\n';
		do
			*--d = (char)('0' + v % 10);
		while ((v /= 10));
		*--d = ' ';
		n = (size_t)(f->line.s + at + 23 - d);
		memmove(f->line.s + at, d, n);
		if (fwrite(f->line.s, 1, at + n, out) != at + n) {
			lines_free(f);
			f->host->log(f->host, PERFPORT_LOG_ERROR, "folded: cannot write the stacks");
			return PERFPORT_ERROR;
		}
	}
	lines_free(f);
	return PERFPORT_OK;
nomem:
	lines_free(f);
	f->host->log(f->host, PERFPORT_LOG_ERROR, "folded: out of memory");
	return PERFPORT_ERROR;
}

static void folded_fini(void *state)
{
	struct folded *f = state;

	if (!f)
		return;
	free(f->want);
	free(f->line.s);
	free(f->prev);
	free(f->prev_at);
	free(f->prev_hash);
	free(f);
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "folded",
	.description = "folded stacks (frame;frame;... value) for flamegraph.pl, inferno, speedscope",
	.default_output = "profile.folded",
	.flags = PERFPORT_EXPORTER_NO_LINES,
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = folded_init,
	.write = folded_write,
	.upload = NULL,
	.fini = folded_fini,
};
