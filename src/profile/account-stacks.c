/* SPDX-License-Identifier: MIT */
/*
 * account-stacks.c - a sample's stack as a node of the tree: its key
 * hashed and looked up, a new stack's raw frames sent to be named and its
 * node made once they are (pending stacks), on-CPU samples summed per
 * stack; counts put on a node, by time slice and in a timeline when they
 * are kept; the nodes of waits without a stack of their own.
 */
#include "priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* XXH3 inlined: the stack key's hash is per sample, and the library's
 * entry costs as much as a short key's hashing */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../util/error.h"
#include "../util/hash.h"

/* --- counts on a node --- */

/*
 * Count @count and @ns of @node for @c in the tree, and by time slice when
 * slices are kept: a sample's in the slice of @b (= @e); an off-CPU
 * interval's time is spread over the slices [@b, @e) covers (clipped to
 * --time), and its count goes to the slice it ends in.
 */
void acct_count_at(struct account *a, uint32_t node, enum counter c, uint64_t count, uint64_t ns,
		   uint64_t b, uint64_t e, uint32_t tid)
{
	uint64_t len = a->opts->slice_ns, left = ns;

	tree_add(&a->tree, node, c, count, ns);
	if (a->opts->timeline && !a->err) {
		struct profile_timed r = {
			.time = a->filter.has_time && b < a->filter.t0 ? a->filter.t0 : b,
			.ns = ns, .tid = tid, .counter = (uint32_t)c, .count = (uint32_t)count,
		};

		if (tree_add_timed(&a->tree, node, &r))
			a->err = PP_ENOMEM;
	}
	if (!len || a->err)
		return;
	if (!a->slice_origin)
		a->slice_origin = a->first_time ? a->first_time : b;
	if (a->filter.has_time) {
		b = b < a->filter.t0 ? a->filter.t0 : b;
		e = e > a->filter.t1 ? a->filter.t1 : e;
	}
	b = b < a->slice_origin ? a->slice_origin : b;
	e = e < b ? b : e;
	for (uint64_t s = (b - a->slice_origin) / len, last = (e - a->slice_origin) / len; s <= last; s++) {
		uint64_t s0 = a->slice_origin + s * len, s1 = s0 + len;
		uint64_t part = s == last ? left :
			(e > b ? (uint64_t)((double)ns * (double)((s1 < e ? s1 : e) - (s0 > b ? s0 : b)) /
					    (double)(e - b)) : 0);

		if (part > left)
			part = left;
		left -= part;
		if ((part || s == last) && s <= UINT32_MAX &&
		    tree_add_slice(&a->tree, (uint32_t)s, node, c, s == last ? count : 0, part)) {
			a->err = PP_ENOMEM;
			return;
		}
	}
}

/* --- stacks --- */

static uint32_t group_root(struct account *a, struct acct_thread *th)
{
	char buf[64];
	const char *name, *comm = th->comm ? th->comm : "[unknown]", *pcomm;
	uint32_t node = TREE_ROOT, f;

	if (a->opts->group_by == GROUP_NONE)
		return TREE_ROOT;
	/* a process is named by its main thread, so its threads share one frame */
	pcomm = th->pid != th->tid && th->pid != UINT32_MAX ? machine_comm(a->m, th->pid) : NULL;
	snprintf(buf, sizeof(buf), " [%" PRIu32 "]", th->pid);
	{
		char full[sizeof(buf) + 256];

		snprintf(full, sizeof(full), "%.255s%s", pcomm ? pcomm : comm, buf);
		name = tree_intern(&a->tree, full, &a->err);
	}
	f = name ? tree_frame(&a->tree, name, NULL, NULL, 0, FRAME_F_PROCESS) : TREE_NONE;
	node = f == TREE_NONE ? TREE_NONE : tree_child(&a->tree, node, f);
	if (node == TREE_NONE || a->opts->group_by == GROUP_PROCESS)
		return node;
	{
		char full[sizeof(buf) + 256];

		snprintf(full, sizeof(full), "%.255s [%" PRIu32 "]", comm, th->tid);
		name = tree_intern(&a->tree, full, &a->err);
	}
	f = name ? tree_frame(&a->tree, name, NULL, NULL, 0, FRAME_F_THREAD) : TREE_NONE;
	return f == TREE_NONE ? TREE_NONE : tree_child(&a->tree, node, f);
}

/* The raw frames of a sample, leaf first, kernel part first when unwound. */
static size_t raw_frames(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
			 size_t n)
{
	size_t k;

	if (!n)
		return machine_sample_frames(a->m, ev, a->raw, ACCT_MAX_FRAMES);
	k = machine_kernel_frames(a->m, ev, a->raw, ACCT_MAX_FRAMES);
	return k + machine_user_frames(a->m, ev->sample.pid, pcs, n, a->raw + k,
				       ACCT_MAX_FRAMES - k);
}

static int rawf_grow(struct account *a)
{
	size_t cap = a->rawf_cap ? a->rawf_cap * 2 : 256;
	struct rawf_entry *n = calloc(cap, sizeof(*n));

	if (!n)
		return PP_ENOMEM;
	for (size_t i = 0; i < a->rawf_cap; i++) {
		size_t j;

		if (!a->rawf[i].hash)
			continue;
		for (j = a->rawf[i].hash & (cap - 1); n[j].hash; j = (j + 1) & (cap - 1))
			;
		n[j] = a->rawf[i];
	}
	free(a->rawf);
	a->rawf = n;
	a->rawf_cap = cap;
	return 0;
}

/*
 * Note the base of @rf's module at its first frame seen (pprof's addresses
 * and mappings): the base of the first process it was seen in, so a module
 * keeps one layout whatever process it came from. 0 out of memory.
 */
static int dso_base_note(struct account *a, const struct raw_frame *rf)
{
	unsigned id;

	if (!rf->dso || rf->kind != FRAME_USER)
		return 0;
	id = rf->dso->id;
	if (id >= a->dso_base_cap) {
		size_t cap = a->dso_base_cap ? a->dso_base_cap : 64;
		uint64_t *n;

		while (cap <= id)
			cap *= 2;
		n = realloc(a->dso_base, cap * sizeof(*n));
		if (!n)
			return PP_ENOMEM;
		memset(n + a->dso_base_cap, 0, (cap - a->dso_base_cap) * sizeof(*n));
		a->dso_base = n;
		a->dso_base_cap = cap;
	}
	if (!a->dso_base[id])
		a->dso_base[id] = rf->addr - rf->offset + 1;
	return 0;
}

/*
 * Where @rf is in the recording's terms: kernel and unmapped frames at
 * their address; a user frame at its file offset from its module's base
 * (dso_base_note()).
 */
static void frame_where(const struct account *a, const struct raw_frame *rf, uint64_t *addr,
			uint64_t *base)
{
	*addr = rf->addr;
	*base = 0;
	if (!rf->dso || rf->kind != FRAME_USER || rf->dso->id >= a->dso_base_cap ||
	    !a->dso_base[rf->dso->id])
		return;
	*base = a->dso_base[rf->dso->id] - 1;
	*addr = *base + rf->offset;
}

/*
 * The ticket of one raw frame: a frame seen first here goes to the namer,
 * then is found in a cache keyed by what decides the name (the file and
 * the offset in it, or the bare address when nothing is mapped), so a
 * frame shared by many stacks is named once.
 * Return: the ticket, UINT32_MAX on error (a->err set).
 */
static uint32_t raw_frame_ticket(struct account *a, const struct raw_frame *rf, uint64_t ktext)
{
	/* code outside files (JIT, anonymous maps) is named per process, by
	 * its address: the same offset in two processes is other code */
	bool per_pid = !rf->dso || rf->dso->kind == DSO_ANON;
	uint64_t where = rf->dso && !per_pid ? rf->offset : rf->addr;
	uint32_t pid = per_pid ? rf->pid : 0;
	uint64_t h = mix64(where ^ mix64((uint64_t)(uintptr_t)rf->dso ^
					 ((uint64_t)rf->kind << 1 | rf->ret) ^ (uint64_t)pid << 32));
	struct rawf_entry *e;
	uint32_t t;
	size_t j;

	if (!h)
		h = 1;
	if ((a->nr_rawf + 1) * 2 > a->rawf_cap && rawf_grow(a))
		goto nomem;
	for (j = h & (a->rawf_cap - 1); a->rawf[j].hash; j = (j + 1) & (a->rawf_cap - 1)) {
		e = &a->rawf[j];
		if (e->hash == h && e->where == where && e->dso == rf->dso && e->kind == rf->kind &&
		    e->ret == rf->ret && e->pid == pid)
			return e->ticket;
	}
	if (dso_base_note(a, rf))
		goto nomem;
	t = namer_submit(a->namer, rf, ktext);
	if (t == UINT32_MAX)
		goto nomem;
	if (t >= a->tick_cap) {
		size_t cap = a->tick_cap ? a->tick_cap * 2 : 4096;
		struct tick_ids *n;

		while (cap <= t)
			cap *= 2;
		n = realloc(a->tick, cap * sizeof(*n));
		if (!n)
			goto nomem;
		memset(n + a->tick_cap, 0, (cap - a->tick_cap) * sizeof(*n));
		a->tick = n;
		a->tick_cap = cap;
	}
	a->rawf[j] = (struct rawf_entry){ .hash = h, .where = where, .dso = rf->dso, .pid = pid,
					  .ticket = t, .kind = rf->kind, .ret = rf->ret };
	a->nr_rawf++;
	return t;
nomem:
	a->err = PP_ENOMEM;
	return UINT32_MAX;
}

/*
 * The tree frames of ticket @t, interned at the first call (waiting for
 * the namer if it is not done with it).
 * Return: the number of ids at *@ids, 0 on error (a->err set).
 */
static uint32_t ticket_ids(struct account *a, uint32_t t, const uint32_t **ids)
{
	struct tick_ids *ti = &a->tick[t];
	const struct sym_frame *f;
	const struct raw_frame *rf;
	size_t k;

	if (ti->n) {
		*ids = a->rawf_ids + ti->first;
		return ti->n;
	}
	k = namer_result(a->namer, t, &f, &rf);
	if (!k)
		goto nomem;
	if (a->rawf_ids_len + k > a->rawf_ids_cap) {
		size_t cap = a->rawf_ids_cap ? a->rawf_ids_cap * 2 : 16384;
		uint32_t *n;

		while (cap < a->rawf_ids_len + k)
			cap *= 2;
		n = realloc(a->rawf_ids, cap * sizeof(*n));
		if (!n)
			goto nomem;
		a->rawf_ids = n;
		a->rawf_ids_cap = cap;
	}
	ti->end[0] = ti->end[1] = 0;
	for (size_t i = 0; i < k; i++) {
		const char *fn = tree_intern(&a->tree, f[i].function ? f[i].function : "[unknown]",
					     &a->err);
		const char *mod = tree_intern(&a->tree, f[i].module, &a->err);
		const char *file = tree_intern(&a->tree, f[i].file, &a->err);
		uint32_t id;

		if (a->err)
			return 0;
		/* where the stack ends is the symbols stage's word, kept
		 * beside the frame: not a frame of its own kind */
		for (int u = 0; u < 2; u++) {
			int end = sym_frame_ends(f[i].flags, u);

			if (end && !ti->end[u])
				ti->end[u] = end == 2 ? UINT32_MAX : (uint32_t)i + 1;
		}
		id = tree_frame(&a->tree, fn, mod, file, f[i].line,
				f[i].flags & ~(unsigned)FRAME_F_ENDS);
		if (id == TREE_NONE)
			goto nomem;
		if (!a->tree.frames[id].addr)
			frame_where(a, rf, &a->tree.frames[id].addr, &a->tree.frames[id].base);
		a->rawf_ids[a->rawf_ids_len + i] = id;
	}
	ti->first = (uint32_t)a->rawf_ids_len;
	ti->n = (uint32_t)k;
	a->rawf_ids_len += k;
	*ids = a->rawf_ids + ti->first;
	return ti->n;
nomem:
	a->err = PP_ENOMEM;
	return 0;
}

/*
 * A new stack: its raw frames are sent to be named, and its tree node is
 * made later (pend_make()). Return: the index into pend, UINT32_MAX on
 * error (a->err set).
 */
static uint32_t pend_new(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
			 size_t n, uint32_t root)
{
	uint64_t ktext = machine_kernel_text(a->m);
	size_t nraw = raw_frames(a, ev, pcs, n);
	struct acct_pend *p;

	if (a->nr_pend >= STACK_PENDING - 1)
		goto nomem;
	if (a->nr_pend == a->cap_pend) {
		size_t cap = a->cap_pend ? a->cap_pend * 2 : 1024;
		struct acct_pend *np = realloc(a->pend, cap * sizeof(*np));

		if (!np)
			goto nomem;
		a->pend = np;
		a->cap_pend = cap;
	}
	if (a->pend_tickets_len + nraw > a->pend_tickets_cap) {
		size_t cap = a->pend_tickets_cap ? a->pend_tickets_cap * 2 : 65536;
		uint32_t *nt;

		while (cap < a->pend_tickets_len + nraw)
			cap *= 2;
		nt = realloc(a->pend_tickets, cap * sizeof(*nt));
		if (!nt)
			goto nomem;
		a->pend_tickets = nt;
		a->pend_tickets_cap = cap;
	}
	for (size_t i = 0; i < nraw; i++) {
		uint32_t t = raw_frame_ticket(a, &a->raw[i], ktext);

		if (t == UINT32_MAX)
			return UINT32_MAX;
		a->pend_tickets[a->pend_tickets_len + i] = t;
	}
	p = &a->pend[a->nr_pend];
	*p = (struct acct_pend){ .root = root, .first = (uint32_t)a->pend_tickets_len,
				 .n = (uint32_t)nraw, .node = TREE_NONE, .unwound = n > 0 };
	a->pend_tickets_len += nraw;
	return (uint32_t)a->nr_pend++;
nomem:
	a->err = PP_ENOMEM;
	return UINT32_MAX;
}

/*
 * The tree node of pending stack @i, made now if it is not yet: its frames
 * (named) walked into the tree from its root, and what it counted so far
 * added there. Return: the node, TREE_NONE on error (a->err set).
 */
static uint32_t pend_make(struct account *a, uint32_t i)
{
	struct acct_pend *p = &a->pend[i];
	const size_t max = sizeof(a->path) / sizeof(a->path[0]);
	uint32_t node = p->root;
	size_t np = 0;

	if (p->node != TREE_NONE)
		return p->node;
	for (uint32_t r = 0; r < p->n; r++) {
		const uint32_t *ids;
		uint32_t k = ticket_ids(a, a->pend_tickets[p->first + r], &ids), end;

		if (!k)
			return TREE_NONE;
		/* a runtime's root, or a return address outside every
		 * mapping, ends the stack (the symbols stage says which) */
		end = a->tick[a->pend_tickets[p->first + r]].end[p->unwound];
		if (end == UINT32_MAX && np)
			break;
		if (end && end != UINT32_MAX) {
			r = p->n - 1; /* its frames up to the root, then no more */
			k = end;
		}
		for (uint32_t j = 0; j < k && np < max; j++) {
			/* a run of frames nothing named in one module is one
			 * frame: the depth of what could not be named says
			 * nothing (a frame named by its address is kept) */
			if (np && a->path[np - 1] == ids[j] &&
			    (a->tree.frames[ids[j]].flags & FRAME_F_UNKNOWN) &&
			    !strcmp(a->tree.frames[ids[j]].function, "[unknown]"))
				continue;
			a->path[np++] = ids[j];
		}
	}
	/* leaf first in path: walk from the outermost */
	while (np && node != TREE_NONE)
		node = tree_child(&a->tree, node, a->path[--np]);
	if (node == TREE_NONE || node >= STACK_PENDING) {
		a->err = PP_ENOMEM;
		return TREE_NONE;
	}
	p->node = node;
	if (p->count)
		tree_add(&a->tree, node, (enum counter)p->counter, p->count, p->ns);
	p->count = p->ns = 0;
	return node;
}

/*
 * Make every pending stack's node, in the order the stacks were seen (the
 * stack entries keep pointing at pend: nothing looks them up after this).
 */
void acct_pend_make_all(struct account *a)
{
	for (; a->pend_done < a->nr_pend && !a->err; a->pend_done++)
		pend_make(a, (uint32_t)a->pend_done);
}

/*
 * Pending stacks are made as the pass goes, in the order they were seen,
 * once PEND_LAG newer ones wait behind them: by then their names are
 * usually there (the namer works ahead), and what is made while reading
 * is not left for the end. The points depend only on the records, so the
 * tree is the same at every -j.
 */
#define PEND_LAG 1024

static void pend_catch_up(struct account *a)
{
	if (a->nr_pend - a->pend_done < 2 * PEND_LAG)
		return;
	for (; a->pend_done < a->nr_pend - PEND_LAG && !a->err; a->pend_done++)
		pend_make(a, (uint32_t)a->pend_done);
}

static int stacks_grow(struct account *a)
{
	size_t cap = a->stacks_cap ? a->stacks_cap * 2 : 256;
	struct stack_entry *n = calloc(cap, sizeof(*n));

	if (!n)
		return PP_ENOMEM;
	for (size_t i = 0; i < a->stacks_cap; i++) {
		size_t j;

		if (!a->stacks[i].hash && !a->stacks[i].check)
			continue;
		for (j = a->stacks[i].hash & (cap - 1); n[j].hash || n[j].check;
		     j = (j + 1) & (cap - 1))
			;
		n[j] = a->stacks[i];
	}
	free(a->stacks);
	a->stacks = n;
	a->stacks_cap = cap;
	return 0;
}

/* Room for a stack key of @need words. Return: 0, or -1 (a->err set). */
static __attribute__((noinline)) int key_grow(struct account *a, size_t need)
{
	size_t cap = a->key_cap ? a->key_cap : 256;
	uint64_t *k;

	while (cap < need)
		cap *= 2;
	k = realloc(a->key, cap * sizeof(*k));
	if (!k) {
		a->err = PP_ENOMEM;
		return -1;
	}
	a->key = k;
	a->key_cap = cap;
	return 0;
}

/* A stack seen first, of hash @h, entered pending at the free slot @e
 * (out of stack_find()'s way: a few samples in a hundred are new). */
static __attribute__((noinline)) struct stack_entry *
stack_new(struct account *a, const struct perf_event *ev, const uint64_t *pcs, size_t n,
	  struct acct_thread *th, struct stack_entry *e, XXH128_hash_t h)
{
	uint32_t root = group_root(a, th), idx;

	if (root == TREE_NONE) {
		if (!a->err)
			a->err = PP_ENOMEM;
		return NULL;
	}
	idx = pend_new(a, ev, pcs, n, root);
	if (idx == UINT32_MAX)
		return NULL;
	*e = (struct stack_entry){ .hash = h.low64, .check = h.high64,
				   .node = STACK_PENDING | idx };
	a->nr_stacks++;
	a->meta->stacks_unique++;
	pend_catch_up(a);
	return a->err ? NULL : e;
}

/*
 * The entry of a sample's stack. A stack is known by what was recorded
 * (callchain, unwound addresses, branch stack) with the process, its map
 * generation and the group root: a sample whose key was seen before costs
 * a hash, not a symbolization and a tree walk. A new stack is entered
 * pending (pend_new()).
 *
 * The table holds each key's 128-bit hash, not the key: comparing the
 * stored key was a cache miss per sample (the keys of a recording's
 * stacks do not stay in cache while the file streams through it), and
 * keeping them the biggest part of the pass's memory. Two keys of one
 * recording share a hash with a chance of about n^2 / 2^129 (1e-25 for
 * ten million stacks); a file made to collide would merge two stacks'
 * counts, nothing worse.
 *
 * Return: the entry (valid until the next new stack), NULL on error
 * (a->err set).
 */
static struct stack_entry *stack_find(struct account *a, const struct perf_event *ev,
				      const uint64_t *pcs, size_t n, struct acct_thread *th)
{
	const struct perf_sample *s = &ev->sample;
	size_t need = 2 + machine_stack_key_max(ev, n), len = 0, j;
	XXH128_hash_t h;
	uint64_t *k;

	if (need > a->key_cap && key_grow(a, need))
		return NULL;
	/* the tree the stack goes in (its group), then what decides its frames */
	k = a->key;
	k[len++] = a->opts->group_by == GROUP_THREAD ? s->tid : 0;
	k[len++] = a->opts->group_by != GROUP_NONE ? (uint64_t)(uintptr_t)th->comm : 0;
	len += machine_stack_key(a->m, ev, pcs, n, k + len);
	h = XXH3_128bits(k, len * sizeof(*k));
	if (!h.low64 && !h.high64)
		h.low64 = 1;
	if ((a->nr_stacks + 1) * 2 > a->stacks_cap && stacks_grow(a)) {
		a->err = PP_ENOMEM;
		return NULL;
	}
	for (j = h.low64 & (a->stacks_cap - 1); a->stacks[j].hash || a->stacks[j].check;
	     j = (j + 1) & (a->stacks_cap - 1)) {
		struct stack_entry *e = &a->stacks[j];

		if (e->hash == h.low64 && e->check == h.high64) {
			a->meta->stacks_cached++;
			return e;
		}
	}
	return stack_new(a, ev, pcs, n, th, &a->stacks[j], h);
}

/* @e's node, if its pending stack was made meanwhile (pend_catch_up()). */
static void stack_resolve(const struct account *a, struct stack_entry *e)
{
	if ((e->node & STACK_PENDING) && a->pend[e->node & ~STACK_PENDING].node != TREE_NONE)
		e->node = a->pend[e->node & ~STACK_PENDING].node;
}

/* The leaf node of a sample's stack, made now if it waits for names. */
uint32_t acct_stack_node(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
			 size_t n, struct acct_thread *th)
{
	struct stack_entry *e = stack_find(a, ev, pcs, n, th);

	if (!e)
		return TREE_NONE;
	stack_resolve(a, e);
	if (e->node & STACK_PENDING) {
		uint32_t node = pend_make(a, e->node & ~STACK_PENDING);

		if (node == TREE_NONE)
			return TREE_NONE;
		e->node = node;
	}
	return e->node;
}

/*
 * Count @count samples of @c weighing @ns for @e's stack: in the tree when
 * its node is made, else with the pending stack, whose node is made once
 * names are there (or now, for a second counter).
 */
static void stack_add(struct account *a, struct stack_entry *e, enum counter c, uint64_t count,
		      uint64_t ns)
{
	struct acct_pend *p;
	uint32_t node;

	stack_resolve(a, e);
	if (!(e->node & STACK_PENDING)) {
		tree_add(&a->tree, e->node, c, count, ns);
		return;
	}
	p = &a->pend[e->node & ~STACK_PENDING];
	if (!p->count || p->counter == (uint32_t)c) {
		p->counter = (uint32_t)c;
		p->count += count;
		p->ns += ns;
		return;
	}
	node = pend_make(a, e->node & ~STACK_PENDING);
	if (node == TREE_NONE)
		return;
	e->node = node;
	tree_add(&a->tree, node, c, count, ns);
}

/* Count on what @e has summed (stack_add()). */
static void stack_flush(struct account *a, struct stack_entry *e)
{
	uint64_t count = e->count, ns = e->ns;

	if (!count)
		return;
	e->count = 0;
	e->ns = 0;
	stack_add(a, e, (enum counter)e->counter, count, ns);
}

/*
 * Count one on-CPU sample of @c: summed in its stack's entry (the tree's
 * counters and the pending stacks are elsewhere in memory, a cache miss
 * per sample), counted from there when a sample of another counter
 * comes and at the end. Time slices and a timeline need the node and the
 * time of each sample: counted at once.
 */
void acct_stack_count(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
		      size_t n, struct acct_thread *th, enum counter c, uint64_t w)
{
	struct stack_entry *e;
	uint32_t node;

	if (a->opts->timeline || a->opts->slice_ns) {
		node = acct_stack_node(a, ev, pcs, n, th);
		if (node != TREE_NONE)
			acct_count_at(a, node, c, 1, w, ev->sample.time, ev->sample.time, th->tid);
		return;
	}
	e = stack_find(a, ev, pcs, n, th);
	if (!e)
		return;
	if (e->count && e->counter != (uint32_t)c) {
		/* as counted before entries summed: the second counter's
		 * sample makes the pending stack's node now */
		stack_flush(a, e);
		stack_add(a, e, c, 1, w);
		return;
	}
	if (e->count == STACK_COUNT_MAX)
		stack_flush(a, e);
	e->counter = (uint32_t)c & 7;
	e->count++;
	e->ns += w;
}

/* Count on what every entry has summed (the stacks' nodes are made). */
void acct_stack_flush_all(struct account *a)
{
	for (size_t i = 0; i < a->stacks_cap && !a->err; i++)
		stack_flush(a, &a->stacks[i]);
}

/* The node for an off-CPU interval whose stack is unknown. */
uint32_t acct_no_stack_node(struct account *a, struct acct_thread *th)
{
	uint32_t root = group_root(a, th), f;
	const char *name = tree_intern(&a->tree, "[off-cpu: stack not recorded]", &a->err);

	if (root == TREE_NONE || !name)
		return TREE_NONE;
	f = tree_frame(&a->tree, name, NULL, NULL, 0, FRAME_F_SYNTHETIC);
	return f == TREE_NONE ? TREE_NONE : tree_child(&a->tree, root, f);
}

/* The node for a new thread's wait for its first run (its fork is no
 * switch-out: no stack of its own). */
uint32_t acct_fork_wait_node(struct account *a, struct acct_thread *th)
{
	uint32_t root = group_root(a, th), f;
	const char *name = tree_intern(&a->tree, "[off-cpu: new thread, before its first run]",
				       &a->err);

	if (root == TREE_NONE || !name)
		return TREE_NONE;
	f = tree_frame(&a->tree, name, NULL, NULL, 0, FRAME_F_SYNTHETIC);
	return f == TREE_NONE ? TREE_NONE : tree_child(&a->tree, root, f);
}
