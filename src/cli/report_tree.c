/* SPDX-License-Identifier: MIT */
/*
 * report_tree.c - the trees of `perfport report`: the caller tree with each
 * node's children largest first (as perf report sorts them), and the callee
 * tree (bottom-up: each function where time was spent, under it its callers).
 * They only read the finished profile.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/hash.h"
#include "report.h"

#define MAX_INDENT 120

void report_frame_label(const struct profile *p, uint32_t f, char *buf, size_t len)
{
	const struct profile_frame *fr;
	const char *mod;

	if (f == UINT32_MAX) {
		snprintf(buf, len, "[root]");
		return;
	}
	fr = &p->frames[f];
	mod = fr->module ? strrchr(fr->module, '/') : NULL;
	mod = mod ? mod + 1 : fr->module;
	if (fr->flags & (FRAME_F_PROCESS | FRAME_F_THREAD | FRAME_F_SYNTHETIC) || !mod)
		snprintf(buf, len, "%s%s", fr->function, fr->flags & FRAME_F_INLINED ? " (inlined)" : "");
	else
		snprintf(buf, len, "%s (%s)%s", fr->function, mod,
			 fr->flags & FRAME_F_INLINED ? " (inlined)" : "");
}

int report_parse_inlined(const char *s, enum inline_rule *out)
{
	if (!strcmp(s, "caller"))
		*out = INLINE_TO_CALLER;
	else if (!strcmp(s, "own"))
		*out = INLINE_OWN;
	else
		return -1;
	return 0;
}

void report_function_label(const struct profile *p, uint32_t f, char *buf, size_t len)
{
	const struct profile_frame *fr = &p->frames[f];
	const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;

	mod = mod ? mod + 1 : fr->module;
	if (fr->flags & (FRAME_F_PROCESS | FRAME_F_THREAD | FRAME_F_SYNTHETIC) || !mod)
		snprintf(buf, len, "%s", fr->function);
	else
		snprintf(buf, len, "%s (%s)", fr->function, mod);
}

/* What makes two frames one function: name, module, kind (not INLINED). */
#define FUNCTION_FLAGS (FRAME_F_KERNEL | FRAME_F_PROCESS | FRAME_F_THREAD | FRAME_F_SYNTHETIC)

static uint64_t function_hash(const struct profile_frame *f)
{
	uint64_t h = 1469598103934665603ULL;

	for (const unsigned char *c = (const unsigned char *)f->function; *c; c++)
		h = (h ^ *c) * 1099511628211ULL;
	return mix64(h ^ (uint64_t)(uintptr_t)f->module ^ (uint64_t)(f->flags & FUNCTION_FLAGS) << 56);
}

static bool same_function(const struct profile_frame *a, const struct profile_frame *b)
{
	return a->module == b->module && (a->flags & FUNCTION_FLAGS) == (b->flags & FUNCTION_FLAGS) &&
	       strcmp(a->function, b->function) == 0;
}

uint32_t *report_function_ids(const struct profile *p)
{
	size_t cap = 16;
	uint32_t *id, *slots;

	while (cap < (size_t)p->nr_frames * 2)
		cap *= 2;
	id = malloc(((size_t)p->nr_frames + 1) * sizeof(*id));
	slots = calloc(cap, sizeof(*slots));       /* frame + 1 of each function's first frame */
	if (!id || !slots) {
		free(id);
		free(slots);
		return NULL;
	}
	for (uint32_t i = 0; i < p->nr_frames; i++) {
		size_t j = function_hash(&p->frames[i]) & (cap - 1);

		for (; slots[j]; j = (j + 1) & (cap - 1))
			if (same_function(&p->frames[slots[j] - 1], &p->frames[i]))
				break;
		if (!slots[j])
			slots[j] = i + 1;
		id[i] = slots[j] - 1;
	}
	free(slots);
	return id;
}

bool report_is_user(const struct profile_frame *f)
{
	return !(f->flags & (FRAME_F_KERNEL | FRAME_F_SYNTHETIC | FRAME_F_PROCESS | FRAME_F_THREAD));
}

bool report_is_program(const struct profile_frame *f)
{
	/* modules are interned: one answer per module, kept for the next */
	static const char *last;
	static bool last_wrapper;

	if (!report_is_user(f))
		return false;
	if (!f->module)
		return true;
	if (f->module != last) {
		last = f->module;
		last_wrapper = profile_module_is_wrapper(f->module);
	}
	return !last_wrapper;
}

bool report_offcpu(enum counter c)
{
	return c != CNT_ON_CPU && c != CNT_IDLE;
}

struct funcs_ctx {
	struct func_sum *f;          /* by key */
	uint32_t *key;               /* per frame: its line's index in f */
	uint32_t *active;            /* per key: open nodes with it on the path */
	uint32_t *waits_in;          /* per depth: the innermost user frame's key, or none */
	uint32_t *prog_in;           /* ... the innermost program frame's (report_is_program()) */
	uint32_t *real_in;           /* ... the innermost frame not inlined */
	bool *counted;               /* per depth: the node's total was counted */
	bool by_wait;                /* off-CPU self to where the thread waited */
	enum inline_rule rule;
};

static void counts_add(struct profile_counts *to, const struct profile_counts *c)
{
	for (int i = 0; i < CNT_COUNT; i++) {
		to->count[i] += c->count[i];
		to->ns[i] += c->ns[i];
	}
}

/*
 * Total counts a function (module) once per stack, however often it
 * recurses. Self time off CPU goes to the innermost user function of the
 * stack, where the thread waited: its leaf is always the scheduler's.
 */
static int funcs_visit(void *ctx, const struct profile *p, uint32_t node, bool leave)
{
	struct funcs_ctx *c = ctx;
	uint32_t f = p->nodes[node].frame, d = p->nodes[node].depth, k, w;
	bool inl;

	if (f == UINT32_MAX) {
		c->waits_in[0] = c->prog_in[0] = c->real_in[0] = UINT32_MAX;
		return 0;
	}
	k = c->key[f];
	if (leave) {
		if (c->counted[d])
			c->active[k]--;
		return 0;
	}
	/* --inlined caller: a function inlined into another is that one's
	 * code, as the symbol table has it (and perf report's symbol column):
	 * its self time is charged there, it has no line of its own */
	inl = c->rule == INLINE_TO_CALLER && (p->frames[f].flags & FRAME_F_INLINED) &&
	      c->real_in[d - 1] != UINT32_MAX;
	c->real_in[d] = inl ? c->real_in[d - 1] : k;
	/* where it waited: the program's innermost frame, outside the C
	 * library's wrappers; else the innermost user frame */
	c->waits_in[d] = report_is_user(&p->frames[f]) && !inl ? k : c->waits_in[d - 1];
	c->prog_in[d] = report_is_program(&p->frames[f]) && !inl ? k : c->prog_in[d - 1];
	w = c->prog_in[d] != UINT32_MAX ? c->prog_in[d] : c->waits_in[d];
	for (int i = 0; i < CNT_COUNT; i++) {
		uint32_t to = c->by_wait && report_offcpu((enum counter)i) && w != UINT32_MAX ? w :
			      c->real_in[d];

		c->f[to].self.count[i] += p->self[node].count[i];
		c->f[to].self.ns[i] += p->self[node].ns[i];
	}
	c->counted[d] = !inl;
	if (!inl && !c->active[k]++)
		counts_add(&c->f[k].total, &p->total[node]);
	return 0;
}

/*
 * The top tables' lines (@nr set), by function or by module; @by_wait:
 * off-CPU self time where the threads waited, else at each stack's leaf.
 */
struct func_sum *report_function_sums(const struct profile *p, enum sort_key sort, bool by_wait,
				      enum inline_rule rule, size_t *nr)
{
	struct funcs_ctx c = { .by_wait = by_wait, .rule = rule };
	uint32_t maxd = 0, nkeys = 0, *fid = NULL;

	for (size_t i = 0; i < p->nr_nodes; i++)
		if (p->nodes[i].depth > maxd)
			maxd = p->nodes[i].depth;
	c.f = calloc(p->nr_frames + 1, sizeof(*c.f));
	c.key = calloc(p->nr_frames + 1, sizeof(*c.key));
	c.active = calloc(p->nr_frames + 1, sizeof(*c.active));
	c.waits_in = calloc((size_t)maxd + 1, sizeof(*c.waits_in));
	c.prog_in = calloc((size_t)maxd + 1, sizeof(*c.prog_in));
	c.real_in = calloc((size_t)maxd + 1, sizeof(*c.real_in));
	c.counted = calloc((size_t)maxd + 1, sizeof(*c.counted));
	if (sort == SORT_FUNCTION)
		fid = report_function_ids(p);
	if (!c.f || !c.key || !c.active || !c.waits_in || !c.prog_in || !c.real_in || !c.counted ||
	    (sort == SORT_FUNCTION && !fid))
		goto fail;
	for (uint32_t i = 0; i < p->nr_frames; i++) {
		uint32_t k = nkeys;

		/* a function's frames (plain, inlined, other lines) are one line */
		if (fid && fid[i] != i) {
			c.key[i] = c.key[fid[i]];
			continue;
		}

		/* a module's key is its first frame's; modules are few (SORT_FRAME:
		 * each frame its own) */
		if (sort == SORT_MODULE)
			for (uint32_t j = 0; j < nkeys; j++)
				if (p->frames[c.f[j].frame].module == p->frames[i].module &&
				    (p->frames[i].flags & (FRAME_F_PROCESS | FRAME_F_THREAD)) ==
				    (p->frames[c.f[j].frame].flags & (FRAME_F_PROCESS | FRAME_F_THREAD))) {
					k = j;
					break;
				}
		if (k == nkeys)
			c.f[nkeys++].frame = i;
		c.key[i] = k;
	}
	if (profile_walk(p, funcs_visit, &c))
		goto fail;
	free(fid);
	free(c.counted);
	free(c.real_in);
	free(c.prog_in);
	free(c.waits_in);
	free(c.active);
	free(c.key);
	*nr = nkeys;
	return c.f;
fail:
	free(fid);
	free(c.counted);
	free(c.real_in);
	free(c.prog_in);
	free(c.waits_in);
	free(c.active);
	free(c.key);
	free(c.f);
	return NULL;
}

/* --- the caller tree --- */

struct caller_print {
	const struct profile *p;
	enum counter c;
	uint64_t whole;
	double min;
	uint32_t *kids;              /* scratch: children of the nodes on the path */
};

static const struct profile *cmp_p;
static enum counter cmp_c;

/* Children largest first; equal ones in the profile's order (by frame). */
static int kid_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	uint64_t x = cmp_p->total[a].ns[cmp_c], y = cmp_p->total[b].ns[cmp_c];

	if (x != y)
		return x > y ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * Print @node and its subtree; @kids has room for every node below it (the
 * children of the nodes on the path are stacked in it). Iterative over
 * siblings, recursive in depth, which profile stacks bound.
 */
static void caller_node(struct caller_print *t, uint32_t node, uint32_t *kids)
{
	const struct profile *p = t->p;
	uint64_t v = p->total[node].ns[t->c];
	uint32_t n = 0, depth = p->nodes[node].depth;
	char label[512];

	report_frame_label(p, p->nodes[node].frame, label, sizeof(label));
	printf("%7.2f%% %10.3f  %*s%s\n", report_pct(v, t->whole), (double)v / 1e9,
	       (int)(depth * 2 > MAX_INDENT ? MAX_INDENT : depth * 2), "", label);
	for (uint32_t k = node + 1; k < p->nodes[node].end; k = p->nodes[k].end) {
		uint64_t kv = p->total[k].ns[t->c];

		if (kv && report_pct(kv, t->whole) >= t->min)
			kids[n++] = k;
	}
	cmp_p = p;
	cmp_c = t->c;
	qsort(kids, n, sizeof(*kids), kid_cmp);
	for (uint32_t i = 0; i < n; i++)
		caller_node(t, kids[i], kids + n);
}

int report_caller_tree(const struct profile *p, enum counter c, double min)
{
	struct caller_print t = { p, c, p->total[0].ns[c], min, NULL };

	t.kids = malloc((p->nr_nodes + 1) * sizeof(*t.kids));
	if (!t.kids)
		return -1;
	if (p->total[0].ns[c])
		caller_node(&t, 0, t.kids);
	free(t.kids);
	return 0;
}

/* --- the callee tree --- */

struct inode {
	uint32_t frame;
	uint32_t parent, first_child, next_sibling;
	uint64_t ns;
};

struct itree {
	struct inode *n;
	size_t nr, cap;
	uint32_t *slots;             /* open addressing on (parent, frame): node + 1 */
	size_t slots_cap;
};

static uint64_t ihash(uint32_t parent, uint32_t frame)
{
	return mix64((uint64_t)parent << 32 | frame);
}

static int islots_grow(struct itree *t)
{
	size_t cap = t->slots_cap ? t->slots_cap * 2 : 1024;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < t->slots_cap; i++) {
		const struct inode *e;
		size_t j;

		if (!t->slots[i])
			continue;
		e = &t->n[t->slots[i] - 1];
		for (j = ihash(e->parent, e->frame) & (cap - 1); s[j]; j = (j + 1) & (cap - 1))
			;
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->slots_cap = cap;
	return 0;
}

/* The child of @parent for @frame, added if new; UINT32_MAX out of memory. */
static uint32_t ichild(struct itree *t, uint32_t parent, uint32_t frame)
{
	size_t j;

	if ((t->nr + 1) * 2 > t->slots_cap && islots_grow(t))
		return UINT32_MAX;
	for (j = ihash(parent, frame) & (t->slots_cap - 1); t->slots[j]; j = (j + 1) & (t->slots_cap - 1)) {
		const struct inode *e = &t->n[t->slots[j] - 1];

		if (e->parent == parent && e->frame == frame)
			return t->slots[j] - 1;
	}
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct inode *n = realloc(t->n, cap * sizeof(*n));

		if (!n)
			return UINT32_MAX;
		t->n = n;
		t->cap = cap;
	}
	t->n[t->nr] = (struct inode){ frame, parent, UINT32_MAX, t->n[parent].first_child, 0 };
	t->n[parent].first_child = (uint32_t)t->nr;
	t->slots[j] = (uint32_t)++t->nr;
	return (uint32_t)(t->nr - 1);
}

static const struct itree *icmp_t;

static int icmp(const void *pa, const void *pb)
{
	const struct inode *a = &icmp_t->n[*(const uint32_t *)pa], *b = &icmp_t->n[*(const uint32_t *)pb];

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return a->frame < b->frame ? -1 : a->frame > b->frame;
}

struct callee_print {
	const struct profile *p;
	const struct itree *t;
	uint64_t whole;
	double min;
};

static void callee_node(const struct callee_print *cp, uint32_t i, uint32_t depth, uint32_t *kids)
{
	const struct inode *e = &cp->t->n[i];
	uint32_t n = 0;
	char label[512];

	if (i) {
		report_function_label(cp->p, e->frame, label, sizeof(label));
		printf("%7.2f%% %10.3f  %*s%s\n", report_pct(e->ns, cp->whole), (double)e->ns / 1e9,
		       (int)(depth * 2 > MAX_INDENT ? MAX_INDENT : depth * 2), "", label);
	}
	for (uint32_t k = e->first_child; k != UINT32_MAX; k = cp->t->n[k].next_sibling)
		if (cp->t->n[k].ns && report_pct(cp->t->n[k].ns, cp->whole) >= cp->min)
			kids[n++] = k;
	icmp_t = cp->t;
	qsort(kids, n, sizeof(*kids), icmp);
	for (uint32_t k = 0; k < n; k++)
		callee_node(cp, kids[k], i ? depth + 1 : 0, kids + n);
}

int report_callee_tree(const struct profile *p, enum counter c, double min, enum inline_rule rule)
{
	struct itree t = { 0 };
	uint32_t *path = malloc((p->nr_nodes + 1) * sizeof(*path)), *kids = NULL;
	uint32_t *fid = report_function_ids(p);
	struct callee_print cp = { p, &t, p->total[0].ns[c], min };
	int ret = -1;

	if (!path || !fid || !(t.n = malloc(1024 * sizeof(*t.n))))
		goto out;
	t.cap = 1024;
	t.n[0] = (struct inode){ UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX, 0 };
	t.nr = 1;
	/* each node's self time, along its path read from the leaf up: for an
	 * off-CPU counter from the innermost user function, where it waited
	 * (the kernel's scheduler frames below it say nothing) */
	for (uint32_t node = 1; node < p->nr_nodes; node++) {
		uint64_t v = p->self[node].ns[c];
		uint32_t np = 0, at = 0, start = 0;

		if (!v)
			continue;
		/* each function once for its frames; --inlined caller: the
		 * functions inlined into another are left to it */
		for (uint32_t k = node; k && k != UINT32_MAX; k = p->nodes[k].parent) {
			uint32_t pa = p->nodes[k].parent;

			if (rule == INLINE_TO_CALLER && (p->frames[p->nodes[k].frame].flags & FRAME_F_INLINED) &&
			    pa && pa != UINT32_MAX)
				continue;
			path[np++] = fid[p->nodes[k].frame];
		}
		if (report_offcpu(c)) {
			/* the program's innermost frame, else the innermost user one */
			while (start < np && !report_is_program(&p->frames[path[start]]))
				start++;
			if (start == np)
				for (start = 0; start < np && !report_is_user(&p->frames[path[start]]);)
					start++;
		}
		if (start == np)
			start = 0;      /* no user frame: a kernel thread */
		t.n[0].ns += v;
		for (uint32_t i = start; i < np; i++) {
			at = ichild(&t, at, path[i]);
			if (at == UINT32_MAX)
				goto out;
			t.n[at].ns += v;
		}
	}
	kids = malloc((t.nr + 1) * sizeof(*kids));
	if (!kids)
		goto out;
	callee_node(&cp, 0, 0, kids);
	ret = 0;
out:
	free(kids);
	free(t.slots);
	free(t.n);
	free(fid);
	free(path);
	return ret;
}
