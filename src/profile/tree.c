/* SPDX-License-Identifier: MIT */
#include "tree.h"

#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/hash.h"

static uint64_t frame_hash(const char *function, const char *module, uint32_t flags)
{
	return mix64((uint64_t)(uintptr_t)function ^ mix64((uint64_t)(uintptr_t)module) ^
		     ((uint64_t)flags << 48));
}

static uint64_t node_hash(uint32_t parent, uint32_t frame)
{
	return mix64(((uint64_t)parent << 32) | frame);
}

static int grow_nodes(struct tree *t)
{
	size_t cap = t->cap_nodes ? t->cap_nodes * 2 : 1024;
	struct tree_node *n = realloc(t->nodes, cap * sizeof(*n));
	struct profile_counts *c;

	if (!n)
		return PP_ENOMEM;
	t->nodes = n;
	c = realloc(t->self, cap * sizeof(*c));
	if (!c)
		return PP_ENOMEM;
	t->self = c;
	t->cap_nodes = cap;
	return 0;
}

int tree_init(struct tree *t)
{
	memset(t, 0, sizeof(*t));
	if (grow_nodes(t))
		return PP_ENOMEM;
	t->nodes[0] = (struct tree_node){ TREE_NONE, TREE_NONE, TREE_NONE, TREE_NONE };
	memset(&t->self[0], 0, sizeof(t->self[0]));
	t->nr_nodes = 1;
	return 0;
}

void tree_release(struct tree *t)
{
	strtab_free(&t->strings);
	free(t->frames);
	free(t->frame_slots);
	free(t->nodes);
	free(t->self);
	free(t->node_slots);
	free(t->slices);
	free(t->slice_slots);
	free(t->timed);
	memset(t, 0, sizeof(*t));
}

const char *tree_intern(struct tree *t, const char *s, int *err)
{
	uintptr_t k = (uintptr_t)s;
	__typeof__(&t->interned[0]) c = &t->interned[((k >> 3) ^ (k >> 11)) % TREE_INTERN_SLOTS];
	const char *r;

	if (!s)
		return NULL;
	/* the same names come frame after frame, from the symbolizers'
	 * tables: a compare where interning hashes the whole text */
	if (c->src == s && strcmp(c->dst, s) == 0)
		return c->dst;
	r = strtab_intern_text(&t->strings, s);
	if (!r) {
		*err = PP_ENOMEM;
		return NULL;
	}
	c->src = s;
	c->dst = r;
	return r;
}

/* Rehash @slots (indexes + 1) into a table twice as large. */
static int rehash(uint32_t **slots, size_t *cap, size_t min,
		  uint64_t (*hash)(const struct tree *, uint32_t), const struct tree *t)
{
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *n;

	while (ncap < min * 2)
		ncap *= 2;
	n = calloc(ncap, sizeof(*n));
	if (!n)
		return PP_ENOMEM;
	for (size_t i = 0; i < *cap; i++) {
		size_t j;

		if (!(*slots)[i])
			continue;
		j = hash(t, (*slots)[i] - 1) & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = (*slots)[i];
	}
	free(*slots);
	*slots = n;
	*cap = ncap;
	return 0;
}

/* by_line: the line joins the key (the file too, compared in tree_frame()) */
static uint64_t frame_key(const struct tree *t, const char *function, const char *module,
			  uint32_t line, uint32_t flags)
{
	return frame_hash(function, module, flags) ^ (t->by_line ? mix64((uint64_t)line + 1) : 0);
}

static uint64_t frame_hash_at(const struct tree *t, uint32_t i)
{
	return frame_key(t, t->frames[i].function, t->frames[i].module, t->frames[i].line,
			 t->frames[i].flags);
}

static uint64_t node_hash_at(const struct tree *t, uint32_t i)
{
	return node_hash(t->nodes[i].parent, t->nodes[i].frame);
}

uint32_t tree_frame(struct tree *t, const char *function, const char *module, const char *file,
		    uint32_t line, uint32_t flags)
{
	size_t j;

	if ((t->nr_frames + 1) * 2 > t->frame_slots_cap &&
	    rehash(&t->frame_slots, &t->frame_slots_cap, t->nr_frames + 1, frame_hash_at, t))
		return TREE_NONE;
	j = frame_key(t, function, module, line, flags) & (t->frame_slots_cap - 1);
	for (; t->frame_slots[j]; j = (j + 1) & (t->frame_slots_cap - 1)) {
		const struct profile_frame *f = &t->frames[t->frame_slots[j] - 1];

		if (f->function == function && f->module == module && f->flags == flags &&
		    (!t->by_line || (f->file == file && f->line == line)))
			return t->frame_slots[j] - 1;
	}
	if (t->nr_frames == t->cap_frames) {
		size_t cap = t->cap_frames ? t->cap_frames * 2 : 256;
		struct profile_frame *n = realloc(t->frames, cap * sizeof(*n));

		if (!n)
			return TREE_NONE;
		t->frames = n;
		t->cap_frames = cap;
	}
	t->frames[t->nr_frames] = (struct profile_frame){ function, module, file, line, flags, 0, 0 };
	t->frame_slots[j] = (uint32_t)++t->nr_frames;
	return (uint32_t)(t->nr_frames - 1);
}

uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t frame)
{
	struct tree_node *n;
	size_t j;

	if ((t->nr_nodes + 1) * 2 > t->node_slots_cap &&
	    rehash(&t->node_slots, &t->node_slots_cap, t->nr_nodes + 1, node_hash_at, t))
		return TREE_NONE;
	j = node_hash(parent, frame) & (t->node_slots_cap - 1);
	for (; t->node_slots[j]; j = (j + 1) & (t->node_slots_cap - 1)) {
		n = &t->nodes[t->node_slots[j] - 1];
		if (n->parent == parent && n->frame == frame)
			return t->node_slots[j] - 1;
	}
	if (t->nr_nodes == t->cap_nodes && grow_nodes(t))
		return TREE_NONE;
	n = &t->nodes[t->nr_nodes];
	n->parent = parent;
	n->frame = frame;
	n->first_child = TREE_NONE;
	n->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = (uint32_t)t->nr_nodes;
	memset(&t->self[t->nr_nodes], 0, sizeof(t->self[0]));
	t->node_slots[j] = (uint32_t)++t->nr_nodes;
	return (uint32_t)(t->nr_nodes - 1);
}

static int cmp_str(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a)
		return -1;
	if (!b)
		return 1;
	return strcmp(a, b);
}

static int frame_cmp(const struct profile_frame *a, const struct profile_frame *b)
{
	int c;

	if ((c = cmp_str(a->function, b->function)) || (c = cmp_str(a->module, b->module)) ||
	    (c = cmp_str(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->flags < b->flags ? -1 : a->flags > b->flags;
}

static int child_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct tree *t = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return frame_cmp(&t->frames[t->nodes[a].frame], &t->frames[t->nodes[b].frame]);
}

static bool counts_zero(const struct profile_counts *c)
{
	for (int i = 0; i < CNT_COUNT; i++)
		if (c->count[i] || c->ns[i])
			return false;
	return true;
}

static void counts_add(struct profile_counts *to, const struct profile_counts *c)
{
	for (int i = 0; i < CNT_COUNT; i++) {
		to->count[i] += c->count[i];
		to->ns[i] += c->ns[i];
	}
}

static uint64_t slice_hash(uint32_t slice, uint32_t node, uint32_t c)
{
	return mix64(((uint64_t)slice << 32 | node) ^ mix64(c + 1));
}

static uint64_t slice_hash_at(const struct tree *t, uint32_t i)
{
	return slice_hash(t->slices[i].slice, t->slices[i].node, t->slices[i].counter);
}

int tree_add_slice(struct tree *t, uint32_t slice, uint32_t node, enum counter c,
		   uint64_t count, uint64_t ns)
{
	struct profile_slice *e;
	size_t j;

	if ((t->nr_slices + 1) * 2 > t->slice_slots_cap &&
	    rehash(&t->slice_slots, &t->slice_slots_cap, t->nr_slices + 1, slice_hash_at, t))
		return PP_ENOMEM;
	j = slice_hash(slice, node, c) & (t->slice_slots_cap - 1);
	for (; t->slice_slots[j]; j = (j + 1) & (t->slice_slots_cap - 1)) {
		e = &t->slices[t->slice_slots[j] - 1];
		if (e->slice == slice && e->node == node && e->counter == (uint32_t)c) {
			e->count += count;
			e->ns += ns;
			return 0;
		}
	}
	if (t->nr_slices == t->cap_slices) {
		size_t cap = t->cap_slices ? t->cap_slices * 2 : 1024;
		struct profile_slice *n = realloc(t->slices, cap * sizeof(*n));

		if (!n)
			return PP_ENOMEM;
		t->slices = n;
		t->cap_slices = cap;
	}
	t->slices[t->nr_slices] = (struct profile_slice){ slice, node, (uint32_t)c, 0, count, ns };
	t->slice_slots[j] = (uint32_t)++t->nr_slices;
	return 0;
}

int tree_add_timed(struct tree *t, uint32_t node, const struct profile_timed *r)
{
	if (t->nr_timed == t->cap_timed) {
		size_t cap = t->cap_timed ? t->cap_timed * 2 : 4096;
		struct profile_timed *n = realloc(t->timed, cap * sizeof(*n));

		if (!n)
			return PP_ENOMEM;
		t->timed = n;
		t->cap_timed = cap;
	}
	t->timed[t->nr_timed] = *r;
	t->timed[t->nr_timed++].node = node;
	return 0;
}

int tree_strip(struct tree *t, uint32_t flags)
{
	uint32_t *map = malloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*map));
	struct tree n;

	if (!map || tree_init(&n)) {
		free(map);
		return PP_ENOMEM;
	}
	n.by_line = t->by_line;
	/* a parent always comes before its children */
	map[TREE_ROOT] = TREE_ROOT;
	counts_add(&n.self[TREE_ROOT], &t->self[TREE_ROOT]);
	for (size_t i = 1; i < t->nr_nodes; i++) {
		const struct profile_frame *f = &t->frames[t->nodes[i].frame];
		uint32_t p = map[t->nodes[i].parent], fr;

		if (f->flags & flags) {
			map[i] = p;
		} else {
			fr = tree_frame(&n, f->function, f->module, f->file, f->line, f->flags);
			map[i] = fr == TREE_NONE ? TREE_NONE : tree_child(&n, p, fr);
			if (map[i] == TREE_NONE)
				goto fail;
		}
		counts_add(&n.self[map[i]], &t->self[i]);
	}
	for (size_t i = 0; i < t->nr_slices; i++) {
		const struct profile_slice *s = &t->slices[i];

		if (tree_add_slice(&n, s->slice, map[s->node], (enum counter)s->counter, s->count,
				   s->ns))
			goto fail;
	}
	/* the timed records move over with their nodes renumbered */
	for (size_t i = 0; i < t->nr_timed; i++)
		t->timed[i].node = map[t->timed[i].node];
	n.timed = t->timed;
	n.nr_timed = t->nr_timed;
	n.cap_timed = t->cap_timed;
	t->timed = NULL;
	t->nr_timed = t->cap_timed = 0;
	free(map);
	n.strings = t->strings;
	memset(&t->strings, 0, sizeof(t->strings));
	tree_release(t);
	*t = n;
	return 0;
fail:
	free(map);
	tree_release(&n);
	return PP_ENOMEM;
}

static int slice_cmp(const void *a, const void *b)
{
	const struct profile_slice *x = a, *y = b;

	if (x->slice != y->slice)
		return x->slice < y->slice ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->counter < y->counter ? -1 : x->counter > y->counter;
}

/* The slice values with @newid's node numbers, sorted; pruned nodes
 * (nothing counted) have none. */
static int finish_slices(const struct tree *t, const uint32_t *newid,
			 struct profile_slice **out, size_t *nr)
{
	struct profile_slice *v;
	size_t n = 0;

	*out = NULL;
	*nr = 0;
	if (!t->nr_slices)
		return 0;
	v = malloc(t->nr_slices * sizeof(*v));
	if (!v)
		return PP_ENOMEM;
	for (size_t i = 0; i < t->nr_slices; i++) {
		if (newid[t->slices[i].node] == TREE_NONE)
			continue;
		v[n] = t->slices[i];
		v[n++].node = newid[t->slices[i].node];
	}
	qsort(v, n, sizeof(*v), slice_cmp);
	*out = v;
	*nr = n;
	return 0;
}

static int timed_cmp(const void *a, const void *b)
{
	const struct profile_timed *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* The timed records with @newid's node numbers, sorted by time (a record
 * counts 1, so its node is never pruned). */
static void finish_timed(struct tree *t, const uint32_t *newid)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nr_timed; i++) {
		if (newid[t->timed[i].node] == TREE_NONE)
			continue;
		t->timed[n] = t->timed[i];
		t->timed[n++].node = newid[t->timed[i].node];
	}
	t->nr_timed = n;
	if (n > 1)
		qsort(t->timed, n, sizeof(*t->timed), timed_cmp);
}

int tree_finish(struct tree *t, struct profile_frame **frames_out, size_t *nr_frames,
		struct profile_node **nodes_out, struct profile_counts **self_out,
		struct profile_counts **total_out, size_t *nr_nodes,
		struct profile_slice **slices_out, size_t *nr_slices)
{
	size_t n = t->nr_nodes, kept = 0, nf = 0, sp = 0;
	/* a node is kept when something was counted at it or below: a byte
	 * each, not a second array of counts (on a VM every page first
	 * touched is a trap; the totals are summed in the new order below) */
	uint8_t *live = calloc(n, 1);
	uint32_t *nkids = calloc(n + 1, sizeof(uint32_t));
	uint32_t *kids = malloc(n * sizeof(uint32_t));
	uint32_t *fill = calloc(n + 1, sizeof(uint32_t));
	uint32_t *stack = malloc(n * sizeof(uint32_t));
	uint32_t *newid = malloc(n * sizeof(uint32_t));
	uint32_t *fmap = malloc((t->nr_frames + 1) * sizeof(uint32_t));
	struct profile_node *nodes = NULL;
	struct profile_counts *self = NULL, *total = NULL;
	struct profile_frame *frames = NULL;
	int ret = PP_ENOMEM;

	if (!live || !nkids || !kids || !fill || !stack || !newid || !fmap)
		goto out;
	/* children always come after their parents: bottom-up */
	for (size_t i = n; i-- > 0;) {
		live[i] |= !counts_zero(&t->self[i]);
		if (i)
			live[t->nodes[i].parent] |= live[i];
	}
	/* kept children of each node, grouped by parent (counting sort) */
	for (size_t i = 1; i < n; i++)
		if (live[i])
			nkids[t->nodes[i].parent + 1]++;
	for (size_t i = 0; i < n; i++)
		nkids[i + 1] += nkids[i];
	for (size_t i = 1; i < n; i++)
		if (live[i]) {
			uint32_t p = t->nodes[i].parent;

			kids[nkids[p] + fill[p]++] = (uint32_t)i;
		}
	for (size_t i = 0; i < n; i++)
		if (nkids[i + 1] - nkids[i] > 1)
			qsort_r(kids + nkids[i], nkids[i + 1] - nkids[i], sizeof(uint32_t),
				child_cmp, (void *)t);
	for (size_t i = 1; i < n; i++)
		kept += live[i];
	kept++;
	nodes = malloc(kept * sizeof(*nodes));
	self = malloc(kept * sizeof(*self));
	total = malloc(kept * sizeof(*total));
	frames = malloc((t->nr_frames ? t->nr_frames : 1) * sizeof(*frames));
	if (!nodes || !self || !total || !frames)
		goto out;
	for (size_t i = 0; i < t->nr_frames; i++)
		fmap[i] = TREE_NONE;
	for (size_t i = 0; i < n; i++)
		newid[i] = TREE_NONE;
	/* pre-order: pop a node, give it the next index, push its children reversed */
	stack[sp++] = TREE_ROOT;
	for (uint32_t k = 0; sp;) {
		uint32_t o = stack[--sp];
		uint32_t of = t->nodes[o].frame;

		newid[o] = k;
		nodes[k].parent = o ? newid[t->nodes[o].parent] : TREE_NONE;
		nodes[k].depth = o ? nodes[nodes[k].parent].depth + 1 : 0;
		if (of != TREE_NONE && fmap[of] == TREE_NONE) {
			fmap[of] = (uint32_t)nf;
			frames[nf++] = t->frames[of];
		}
		nodes[k].frame = of == TREE_NONE ? TREE_NONE : fmap[of];
		self[k] = t->self[o];
		total[k] = t->self[o];
		k++;
		for (uint32_t c = nkids[o + 1]; c > nkids[o];)
			stack[sp++] = kids[--c];
	}
	/* pre-order: a parent comes before its children, so sum bottom-up */
	for (size_t i = kept; i-- > 1;)
		counts_add(&total[nodes[i].parent], &total[i]);
	/* a subtree ends where the next node at its depth or above starts */
	for (size_t i = kept; i-- > 0;) {
		uint32_t e = (uint32_t)(i + 1);

		while (e < kept && nodes[e].depth > nodes[i].depth)
			e = nodes[e].end;
		nodes[i].end = e;
	}
	if (finish_slices(t, newid, slices_out, nr_slices))
		goto out;
	finish_timed(t, newid);
	*frames_out = frames;
	*nr_frames = nf;
	*nodes_out = nodes;
	*self_out = self;
	*total_out = total;
	*nr_nodes = kept;
	frames = NULL;
	nodes = NULL;
	self = total = NULL;
	ret = 0;
out:
	free(frames);
	free(total);
	free(self);
	free(nodes);
	free(fmap);
	free(newid);
	free(stack);
	free(fill);
	free(kids);
	free(nkids);
	free(live);
	return ret;
}
