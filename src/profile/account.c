/* SPDX-License-Identifier: MIT */
/*
 * account.c - what each record means: on-CPU samples charged with their
 * weight, off-CPU intervals opened at a switch-out and closed at the
 * thread's switch-in (or bounded when the switch-in is missing), each
 * charged to the switch-out stack under the counter the state rules give.
 */
#include "priv.h"
#include "syscall.h"

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
#include "../util/log.h"

#define PERF_COUNT_SW_CPU_CLOCK 0
#define PERF_COUNT_SW_TASK_CLOCK 1
#define PERF_COUNT_SW_DUMMY 9
#define PERF_COUNT_SW_BPF_OUTPUT 10

/* prev_state letters of recent kernels, for formats without a flags table */
static const struct perf_tp_flag default_flags[] = {
	{ 0x1, 'S' }, { 0x2, 'D' }, { 0x4, 'T' }, { 0x8, 't' },
	{ 0x10, 'X' }, { 0x20, 'Z' }, { 0x40, 'P' }, { 0x80, 'I' },
};

/* --- threads --- */

static struct acct_thread *thread_find(struct account *a, uint32_t tid)
{
	size_t j;

	if (!a->tid_slots_cap)
		return NULL;
	for (j = mix64(tid) & (a->tid_slots_cap - 1); a->tid_slots[j];
	     j = (j + 1) & (a->tid_slots_cap - 1))
		if (a->threads[a->tid_slots[j] - 1].tid == tid)
			return &a->threads[a->tid_slots[j] - 1];
	return NULL;
}

static int tid_slots_grow(struct account *a)
{
	size_t cap = a->tid_slots_cap ? a->tid_slots_cap * 2 : 256;
	uint32_t *n = calloc(cap, sizeof(*n));

	if (!n)
		return PP_ENOMEM;
	for (size_t i = 0; i < a->tid_slots_cap; i++) {
		uint32_t v = a->tid_slots[i];
		size_t j;

		if (!v)
			continue;
		for (j = mix64(a->threads[v - 1].tid) & (cap - 1); n[j]; j = (j + 1) & (cap - 1))
			;
		n[j] = v;
	}
	free(a->tid_slots);
	a->tid_slots = n;
	a->tid_slots_cap = cap;
	return 0;
}

/* A new thread entry for @tid, replacing any older one with that tid. */
static struct acct_thread *thread_new(struct account *a, uint32_t pid, uint32_t tid, uint64_t t)
{
	struct acct_thread *th;
	size_t j;

	if (a->nr_threads == a->cap_threads) {
		size_t cap = a->cap_threads ? a->cap_threads * 2 : 64;
		struct acct_thread *n = realloc(a->threads, cap * sizeof(*n));

		if (!n)
			return NULL;
		a->threads = n;
		a->cap_threads = cap;
	}
	if ((a->nr_threads + 1) * 2 > a->tid_slots_cap && tid_slots_grow(a))
		return NULL;
	for (size_t i = 0; i < a->nr_cpus; i++)   /* a CPU's task may be the older one */
		if (a->cpus[i].tid == tid)
			a->cpus[i].thread = 0;
	th = &a->threads[a->nr_threads];
	memset(th, 0, sizeof(*th));
	th->pid = pid;
	th->tid = tid;
	th->start = t;
	th->end = t;
	th->out_node = TREE_NONE;
	th->waker_node = TREE_NONE;
	memset(th->verdict, -1, sizeof(th->verdict));
	for (j = mix64(tid) & (a->tid_slots_cap - 1); a->tid_slots[j];
	     j = (j + 1) & (a->tid_slots_cap - 1))
		if (a->threads[a->tid_slots[j] - 1].tid == tid)
			break;
	a->tid_slots[j] = (uint32_t)++a->nr_threads;
	return th;
}

static bool list_has(const uint32_t *l, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == v)
			return true;
	return false;
}

/* Does the thread pass --pid, --tid and --comm? */
static bool thread_passes(const struct account *a, const struct acct_thread *th)
{
	const struct acct_filter *f = &a->filter;

	if (f->nr_pids && !list_has(f->pids, f->nr_pids, th->pid))
		return false;
	if (f->nr_tids && !list_has(f->tids, f->nr_tids, th->tid))
		return false;
	if (f->nr_comms) {
		for (size_t i = 0; i < f->nr_comms; i++)
			if (th->comm && strcmp(th->comm, f->comms[i]) == 0)
				return true;
		return false;
	}
	return true;
}

/* The comm of @tid now, interned in the tree. */
static const char *current_comm(struct account *a, uint32_t tid)
{
	const char *c = machine_comm(a->m, tid);

	return tree_intern(&a->tree, c ? c : (tid ? NULL : "swapper"), &a->err);
}

/* Take the thread's comm from the machine and check the filters again. */
static void thread_refresh(struct account *a, struct acct_thread *th)
{
	th->comm = current_comm(a, th->tid);
	th->filtered = !thread_passes(a, th);
}

static struct acct_thread *thread_get(struct account *a, uint32_t pid, uint32_t tid, uint64_t t)
{
	struct acct_thread *th = thread_find(a, tid);

	if (!th) {
		th = thread_new(a, pid, tid, t);
		if (!th) {
			a->err = PP_ENOMEM;
			return NULL;
		}
		thread_refresh(a, th);
	}
	if (pid != UINT32_MAX && th->pid == UINT32_MAX)
		th->pid = pid;
	return th;
}

/*
 * Where the recording begins: its first sample (the header says when, in
 * a file; else the first seen so far), 0 while none is known. perf enables
 * its side-band records (switches) before its sampling events: a
 * system-wide recording's first switch records come some 60 ms before its
 * first sample, without the stacks the samples give. A recording without
 * any sample (switch records alone) begins at its first record.
 */
static uint64_t window_start(const struct account *a)
{
	return a->hdr_first ? a->hdr_first : a->first_time;
}

/* The part of [b, e] inside the --time window. */
static uint64_t clip(const struct account *a, uint64_t b, uint64_t e)
{
	uint64_t lo = window_start(a);

	if (b < lo)
		b = lo;
	if (a->filter.has_time) {
		if (b < a->filter.t0)
			b = a->filter.t0;
		if (e > a->filter.t1)
			e = a->filter.t1;
	}
	return e > b ? e - b : 0;
}

/*
 * Count @count and @ns of @node for @c in the tree, and by time slice when
 * slices are kept: a sample's in the slice of @b (= @e); an off-CPU
 * interval's time is spread over the slices [@b, @e) covers (clipped to
 * --time), and its count goes to the slice it ends in.
 */
static void count_at(struct account *a, uint32_t node, enum counter c, uint64_t count, uint64_t ns,
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
static void pend_make_all(struct account *a)
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
static uint32_t stack_node(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
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
static void stack_count(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
			size_t n, struct acct_thread *th, enum counter c, uint64_t w)
{
	struct stack_entry *e;
	uint32_t node;

	if (a->opts->timeline || a->opts->slice_ns) {
		node = stack_node(a, ev, pcs, n, th);
		if (node != TREE_NONE)
			count_at(a, node, c, 1, w, ev->sample.time, ev->sample.time, th->tid);
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
static void stack_flush_all(struct account *a)
{
	for (size_t i = 0; i < a->stacks_cap && !a->err; i++)
		stack_flush(a, &a->stacks[i]);
}

/* The node for an off-CPU interval whose stack is unknown. */
static uint32_t no_stack_node(struct account *a, struct acct_thread *th)
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
static uint32_t fork_wait_node(struct account *a, struct acct_thread *th)
{
	uint32_t root = group_root(a, th), f;
	const char *name = tree_intern(&a->tree, "[off-cpu: new thread, before its first run]",
				       &a->err);

	if (root == TREE_NONE || !name)
		return TREE_NONE;
	f = tree_frame(&a->tree, name, NULL, NULL, 0, FRAME_F_SYNTHETIC);
	return f == TREE_NONE ? TREE_NONE : tree_child(&a->tree, root, f);
}

/* @src's prev_state letters (the format's, else default_flags), *@n of them. */
static const struct perf_tp_flag *state_flags(const struct acct_src *src, size_t *n)
{
	*n = src->nr_flags ? src->nr_flags : sizeof(default_flags) / sizeof(default_flags[0]);
	return src->nr_flags ? src->flags : default_flags;
}

/* The bits @src's prev_state letters cover, into src->known_flags. */
static void flags_known(struct acct_src *src)
{
	size_t n;
	const struct perf_tp_flag *fl = state_flags(src, &n);

	src->known_flags = 0;
	for (size_t i = 0; i < n; i++)
		src->known_flags |= fl[i].value;
}

static char state_letter(const struct acct_src *src, uint64_t st)
{
	size_t n;
	const struct perf_tp_flag *fl = state_flags(src, &n);

	st &= src->known_flags;  /* bits above the table: "+", preempted */
	if (!st)
		return 'R';
	for (uint64_t b = 1; b; b <<= 1)
		if (st & b)
			for (size_t i = 0; i < n; i++)
				if (fl[i].value == b)
					return fl[i].letter;
	return 'S';
}

/* --- off-wake stacks --- */

#define OFFWAKE_SEPARATOR "--- woken by ---"

/* The frame of the main tree's frame @f in the off-wake tree. */
static uint32_t wframe(struct account *a, uint32_t f)
{
	const struct profile_frame *pf = &a->tree.frames[f];

	return tree_frame(&a->wtree, pf->function, pf->module, pf->file, pf->line, pf->flags);
}

/*
 * Charge @ns of blocked time (@c) to the off-wake stack of @blocked (a node
 * of the main tree, the switch-out stack) and @waker (the stack that woke
 * it): the blocked frames root first, a separator, then the waker's frames
 * leaf first, as off-wake flame graphs draw them; with a timeline, the
 * interval from @out (thread @tid) is kept in time too.
 */
static void offwake_add(struct account *a, uint32_t blocked, uint32_t waker, enum counter c,
			uint64_t ns, uint64_t out, uint32_t tid)
{
	uint32_t chain[ACCT_MAX_FRAMES * 8], n = 0, node = TREE_ROOT, f;
	const char *sep;

	if (!a->wtree_ready) {
		if (tree_init(&a->wtree)) {
			a->err = PP_ENOMEM;
			return;
		}
		a->wtree.by_line = a->opts->frames_by_line;
		a->wtree_ready = true;
	}
	for (uint32_t x = blocked; x != TREE_ROOT && x != TREE_NONE && n < sizeof(chain) / sizeof(chain[0]);
	     x = a->tree.nodes[x].parent)
		chain[n++] = a->tree.nodes[x].frame;
	while (n-- > 0 && node != TREE_NONE)
		node = tree_child(&a->wtree, node, wframe(a, chain[n]));
	sep = tree_intern(&a->tree, OFFWAKE_SEPARATOR, &a->err);
	if (!sep || node == TREE_NONE ||
	    (f = tree_frame(&a->wtree, sep, NULL, NULL, 0, FRAME_F_SYNTHETIC)) == TREE_NONE ||
	    (node = tree_child(&a->wtree, node, f)) == TREE_NONE) {
		a->err = a->err ? a->err : PP_ENOMEM;
		return;
	}
	/* the waker leaf first: skip its process and thread frames (--group-by) */
	for (uint32_t x = waker; x != TREE_ROOT && x != TREE_NONE && node != TREE_NONE;
	     x = a->tree.nodes[x].parent) {
		uint32_t fr = a->tree.nodes[x].frame;

		if (a->tree.frames[fr].flags & (FRAME_F_PROCESS | FRAME_F_THREAD))
			continue;
		node = tree_child(&a->wtree, node, wframe(a, fr));
	}
	if (node == TREE_NONE) {
		a->err = PP_ENOMEM;
		return;
	}
	tree_add(&a->wtree, node, c, 1, ns);
	/* in time too, as count_at() keeps the main tree's (issue 56's explorer) */
	if (a->opts->timeline && !a->err) {
		struct profile_timed r = {
			.time = a->filter.has_time && out < a->filter.t0 ? a->filter.t0 : out,
			.ns = ns, .tid = tid, .counter = (uint32_t)c, .count = 1,
		};

		if (tree_add_timed(&a->wtree, node, &r))
			a->err = PP_ENOMEM;
	}
}

/* --- off-CPU intervals --- */

/* @th's interval without a stack ends, charged: counted, with why (whether
 * a sched_switch event was recorded at all is said at the end). */
static void no_stack_count(struct account *a, const struct acct_thread *th)
{
	a->meta->iv_no_stack++;
	if (th->out_no_stack == ACCT_NO_STACK_LOST)
		a->meta->iv_no_stack_lost++;
	else if (th->out_no_stack == ACCT_NO_STACK_UNPAIRED)
		a->no_stack_unpaired++;
}

enum iv_end { IV_EXACT, IV_INFERRED, IV_APPROX, IV_AT_END };

static void iv_close(struct account *a, struct acct_thread *th, uint64_t end, enum iv_end how)
{
	uint64_t out = th->out_time, wake = th->wake_time, d;
	struct profile_meta *meta = a->meta;
	enum state_layer by;
	unsigned rt;

	if (!th->off)
		return;
	th->off = false;
	/* a new thread's wait for its first run, at the end of a recording
	 * with no switch at all: no switch-in could have ended it */
	if (th->out_fork && how == IV_AT_END && !a->switches_seen) {
		th->out_fork = false;
		return;
	}
	th->out_fork = false;
	if (end < out)
		end = out;
	th->in_time = how == IV_AT_END ? 0 : end;
	if (how == IV_INFERRED || how == IV_APPROX)
		th->bounded++;
	/* records were lost meanwhile: it may have run (and waited again)
	 * where they were, so only its time up to the loss is known to be
	 * this wait's, in its state; the rest is not charged */
	if (th->lost_cut && th->lost_end < end) {
		end = th->lost_end;
		/* a waking after the loss may be of a later wait */
		if (th->wake_time > end) {
			th->verdict[STATE_BY_WAKEUP] = -1;
			th->rule_wake = 0;
			th->wake_generic = false;
		}
	}
	th->lost_cut = false;
	if (wake < out || wake > end)
		wake = 0;
	switch (how) {
	case IV_EXACT: meta->iv_exact++; break;
	case IV_INFERRED: meta->iv_inferred++; break;
	case IV_APPROX: meta->iv_approx++; break;
	case IV_AT_END: meta->iv_open_at_end++; break;
	}
	if (th->filtered)
		return;
	d = clip(a, out, end);
	if (how == IV_AT_END) {
		meta->iv_open_ns += d;
		th->open_at_end++;
	}
	/* runnable from the switch-out (preempted, or yielding): waiting for
	 * a CPU all along, whatever its state is judged for */
	if (th->out_runnable) {
		th->delay_ns += d;
	} else if (wake) {
		th->blocked_ns += clip(a, out, wake);
		th->delay_ns += clip(a, wake, end);
	} else {
		th->blocked_ns += d;
	}
	if (!d && (end < window_start(a) ||
		   (a->filter.has_time && (end < a->filter.t0 || out > a->filter.t1))))
		return;
	if (th->out_no_stack)
		no_stack_count(a, th);
	/* a timeout far longer than the wait (twice as long, or longer than
	 * what the recording saw of it) did not end it: the wait was not
	 * timed, whatever the call allowed */
	if (th->verdict[STATE_BY_ARGS] == CNT_TIMED_SLEEP && th->timeout_ns &&
	    th->timeout_ns / 2 > (wake ? wake : end) - out)
		th->verdict[STATE_BY_ARGS] = th->untimed;
	th->out_cnt = acct_decide(th->verdict, &by);
	meta->decided_count[by]++;
	meta->decided_ns[by] += d;
	if (th->out_state != 'R' && ((by == STATE_BY_KERNEL && th->kernel_any) ||
				     (by == STATE_BY_WAKEUP && th->wake_generic))) {
		meta->thin_count[th->out_cnt]++;
		meta->thin_ns[th->out_cnt] += d;
	}
	if (by == STATE_BY_ARGS)
		meta->iv_by_syscall++;
	rt = by == STATE_BY_PROGRAM ? th->rule_prog : by == STATE_BY_WAKEUP ? th->rule_wake : 0;
	if (rt && rt <= a->rules.nrt) {
		a->rt_count[rt - 1]++;
		a->rt_ns[rt - 1] += d;
	}
	th->c.count[th->out_cnt]++;
	th->c.ns[th->out_cnt] += d;
	if (th->out_no_stack) {
		meta->iv_no_stack_ns += d;
		th->no_stack.count[th->out_cnt]++;
		th->no_stack.ns[th->out_cnt] += d;
	}
	if (th->out_node != TREE_NONE)
		count_at(a, th->out_node, th->out_cnt, 1, d, out, end, th->tid);
	if (wake && th->out_state != 'R' && th->out_node != TREE_NONE && th->waker_node != TREE_NONE)
		offwake_add(a, th->out_node, th->waker_node, th->out_cnt, clip(a, out, wake), out,
			    th->tid);
}

/*
 * @th ran at @t on @cpu while it was thought off CPU: its switch-in was not
 * recorded. The interval ended by its wakeup if one was seen, else (whole
 * system recorded) by the CPU's last event before this one; with no source
 * of switch-ins at all, at @t itself, the documented approximation.
 */
static void iv_evidence(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu)
{
	uint64_t end = t;
	enum iv_end how = IV_APPROX;

	if (!th->off)
		return;
	/* a new thread runs, its first switch-in not recorded (its CPU's
	 * events enabled after, or no switches recorded): when it began to
	 * run is unknown, and its wait for that is not charged */
	if (th->out_fork) {
		th->off = false;
		th->out_fork = false;
		return;
	}
	if (th->wake_time > th->out_time && th->wake_time <= t) {
		end = th->wake_time;
		how = IV_INFERRED;
	} else if (a->system_wide && cpu < a->nr_cpus && a->cpus[cpu].last > th->out_time &&
		   a->cpus[cpu].last <= t) {
		end = a->cpus[cpu].last;
		how = IV_INFERRED;
	} else if (a->system_wide) {
		how = IV_INFERRED;
	}
	iv_close(a, th, end, how);
}

/* @th leaves the CPU at @t: what it ran since its switch-in is measured. */
static void run_end(struct account *a, struct acct_thread *th, uint64_t t)
{
	if (th->in_time && t > th->in_time && !th->filtered)
		th->run_ns += clip(a, th->in_time, t);
	th->in_time = 0;
}

/*
 * @th is on CPU from @t: switched in, exec'ing, or sampled on CPU. After an
 * off-CPU interval, iv_close() starts the run; this covers a thread seen
 * running without having been seen leaving, as a new thread on its first
 * run (its fork is no switch-out), perf record's workload at its exec, or a
 * thread whose switch-in its CPU did not record (its events were enabled
 * later: measured once, a thread forked onto the second CPU of a system-wide
 * recording ran 187 ms there before that CPU's first event), from its
 * first on-CPU sample.
 */
static void run_begin(struct acct_thread *th, uint64_t t)
{
	if (!th->off && !th->in_time && !th->exited)
		th->in_time = t;
}

/* The LOST records so far that may have held @cpu's events. */
static uint64_t cpu_lost(const struct account *a, uint32_t cpu)
{
	return a->lost_any + (cpu < a->nr_cpus ? a->cpus[cpu].lost : 0);
}

static void iv_open(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu,
		    char state, uint32_t node, bool from_record)
{
	run_end(a, th, t);
	th->off = true;
	th->out_fork = false;
	th->lost_cut = false;
	th->out_from_record = from_record;
	th->out_cpu = cpu;
	th->out_lost = cpu_lost(a, cpu);
	th->out_lost_all = a->lost_all;
	th->out_time = t;
	th->wake_time = 0;
	th->out_runnable = state == 'R';
	th->out_state = acct_switch_state(a, state, node);
	th->out_node = node;
	th->out_no_stack = ACCT_STACK_KNOWN;
	th->waker_node = TREE_NONE;
	acct_classify(a, th);
}

/* --- records --- */

/* Room for CPU @cpu's state; NULL for an absurd number or no memory. */
static struct acct_cpu *cpu_grow(struct account *a, uint32_t cpu)
{
	size_t n = a->nr_cpus ? a->nr_cpus : 8;
	struct acct_cpu *c;

	while (n <= cpu)
		n *= 2;
	c = realloc(a->cpus, n * sizeof(*c));
	if (!c)
		return NULL;
	for (size_t i = a->nr_cpus; i < n; i++)
		c[i] = (struct acct_cpu){ .pid = UINT32_MAX, .tid = UINT32_MAX };
	a->cpus = c;
	a->nr_cpus = n;
	return &a->cpus[cpu];
}

/*
 * The state of @cpu, NULL when the number is unknown or absurd (or memory
 * ran out). Unknown is every sample of a recording without -a (no
 * PERF_SAMPLE_CPU): said here, not in a call per sample to cpu_grow().
 */
static inline struct acct_cpu *cpu_at(struct account *a, uint32_t cpu)
{
	if (cpu < a->nr_cpus)
		return &a->cpus[cpu];
	return cpu < 4096 ? cpu_grow(a, cpu) : NULL;
}

/*
 * Whether a switch-out of @th seen on @cpu (a sched_switch sample, or a
 * switch-out record, @from_record) is the switch that opened its interval,
 * seen the other way: the kernel writes both for one switch, the sample
 * first, on the one CPU, and how far apart depends on the host (40 us to
 * 1.7 ms measured under emulation). A thread cannot switch out twice
 * without a switch-in between, so while the interval the other kind opened
 * is open, and nothing of that CPU's was lost since (of any CPU's, where
 * a record does not say its CPU: a per-task recording's switch records),
 * it is the same one. No time window decides it.
 */
static bool same_switch(const struct account *a, const struct acct_thread *th, uint32_t cpu,
			bool from_record)
{
	if (!th->off || th->out_fork || th->out_from_record == from_record)
		return false;
	if (cpu != UINT32_MAX && th->out_cpu != UINT32_MAX)
		return th->out_cpu == cpu && th->out_lost == cpu_lost(a, cpu);
	return th->out_lost_all == a->lost_all;
}

/*
 * @th's interval, just opened on @cpu, has no stack: no sched_switch sample
 * of the same switch came first (@other: one came, but of another task).
 * Why, as far as the recording says, is counted when it ends (iv_close()):
 * records of its CPU were lost before it, no sched_switch event was
 * recorded, or neither.
 */
static void no_stack_why(struct account *a, struct acct_thread *th, uint32_t cpu, bool other)
{
	if (other)
		th->out_no_stack = ACCT_NO_STACK_OTHER;
	else if (cpu == UINT32_MAX ? a->lost_all : cpu_lost(a, cpu))
		th->out_no_stack = ACCT_NO_STACK_LOST;
	else
		th->out_no_stack = ACCT_NO_STACK_UNPAIRED;
}

/* A LOST record: what @ev's CPU (or, naming none, every CPU) wrote since
 * its last record may be missing. */
static void lost_record(struct account *a, const struct perf_event *ev)
{
	struct acct_cpu *c = ev->has_sample_id && ev->sample.cpu != UINT32_MAX ?
				     cpu_at(a, ev->sample.cpu) : NULL;

	/*
	 * The open intervals the lost records may have ended: any thread off
	 * CPU may have been switched in on that CPU (a woken thread runs
	 * where it is sent), run and switched out again there, its records
	 * lost; where that CPU's records are whole it cannot have. Each is
	 * charged up to that CPU's last record before the loss (of a loss
	 * naming no CPU - a per-task recording's records may carry none - the
	 * last record of any). Not of a LOST_SAMPLES record: samples the
	 * kernel could not take, or perf record's count of them at the end
	 * (of time 0), which says nothing of when or where.
	 */
	for (size_t i = 0; ev->type == PERF_RECORD_LOST && i < a->nr_threads; i++) {
		struct acct_thread *th = &a->threads[i];

		if (!th->off || th->lost_cut)
			continue;
		th->lost_cut = true;
		th->lost_end = c ? c->last : a->rec_last;
		if (th->lost_end < th->out_time)
			th->lost_end = th->out_time;
	}
	a->lost_all++;
	if (c)
		c->lost++;
	else
		a->lost_any++;
}

static void cpu_seen(struct account *a, uint32_t cpu, uint64_t t)
{
	struct acct_cpu *c = cpu_at(a, cpu);

	if (c && t > c->last)
		c->last = t;
}

/* From here on, task @pid/@tid (UINT32_MAX: unknown) runs on @cpu; @th is
 * its entry if known. */
static void cpu_running(struct account *a, uint32_t cpu, uint32_t pid, uint32_t tid,
			const struct acct_thread *th)
{
	struct acct_cpu *c = cpu_at(a, cpu);

	if (c) {
		c->pid = pid;
		c->tid = tid;
		c->thread = th ? (uint32_t)(th - a->threads) + 1 : 0;
	}
}

/* thread_get() for the task of a sample taken on @cpu, which is running
 * there from now: consecutive samples on a CPU are mostly of one task. */
static struct acct_thread *thread_on_cpu(struct account *a, uint32_t cpu, uint32_t pid,
					 uint32_t tid, uint64_t t)
{
	struct acct_thread *th;

	if (cpu < a->nr_cpus && a->cpus[cpu].thread && a->cpus[cpu].tid == tid) {
		th = &a->threads[a->cpus[cpu].thread - 1];
		if (pid != UINT32_MAX) {
			a->cpus[cpu].pid = pid;
			if (th->pid == UINT32_MAX)
				th->pid = pid;
		}
		return th;
	}
	th = thread_get(a, pid, tid, t);
	cpu_running(a, cpu, pid, tid, th);
	return th;
}

/*
 * The task of @ev (a sample, or a record's sample_id), its tid filled in
 * when the recording left it out: the kernel writes tid -1 (and pid -1 once
 * the whole process is gone) for a task already released but not yet
 * switched out for the last time, an exiting thread's final moments
 * (perf_event_pid_type() on a task that is not pid_alive). That task is the
 * one running on the CPU: a sched_switch names it in prev_pid; otherwise it
 * is the task last seen there, if its process agrees. Returns @ev, or
 * @fixed holding a copy of @ev with the task filled in.
 */
static const struct perf_event *sample_task(struct account *a, const struct acct_src *src,
					    const struct perf_event *ev, struct perf_event *fixed)
{
	const struct perf_sample *s = &ev->sample;
	uint32_t pid = s->pid, tid = UINT32_MAX;
	uint64_t v;

	if (s->tid != UINT32_MAX)
		return ev;
	if (src && src->role == ROLE_SCHED_SWITCH && src->prev_pid &&
	    !perf_tp_read_u64(src->prev_pid, s, &v) && v <= UINT32_MAX - 1) {
		tid = (uint32_t)v;
	} else if (s->cpu < a->nr_cpus && a->cpus[s->cpu].tid != UINT32_MAX &&
		   a->cpus[s->cpu].tid != 0) {  /* the idle task never exits */
		const struct acct_cpu *c = &a->cpus[s->cpu];

		if (pid != UINT32_MAX && c->pid != UINT32_MAX && c->pid != pid)
			return ev;      /* not the task it knows of */
		tid = c->tid;
		if (pid == UINT32_MAX)
			pid = c->pid;
	}
	if (tid == UINT32_MAX)
		return ev;
	if (pid == UINT32_MAX) {
		const struct acct_thread *th = thread_find(a, tid);

		if (th)
			pid = th->pid;
	}
	*fixed = *ev;
	fixed->sample.pid = pid;
	fixed->sample.tid = tid;
	return fixed;
}

static bool in_time(const struct account *a, uint64_t t)
{
	return !a->filter.has_time || (t >= a->filter.t0 && t <= a->filter.t1);
}

static uint64_t sample_weight(const struct acct_src *src, const struct perf_sample *s)
{
	return src->freq_ns ? src->freq_ns : s->period;
}

/* A record at @t: a sample's sets the profile's span, any record's the
 * span of a recording without samples. */
static void note_time(struct account *a, uint64_t t, bool sample)
{
	if (!t)
		return;
	if (!a->rec_first || t < a->rec_first)
		a->rec_first = t;
	if (t > a->rec_last)
		a->rec_last = t;
	if (!sample)
		return;
	if (!a->first_time || t < a->first_time)
		a->first_time = t;
	if (t > a->last_time)
		a->last_time = t;
}

static void on_cpu_sample(struct account *a, struct acct_src *src, const struct perf_event *ev,
			  const uint64_t *pcs, size_t n, struct acct_thread *th)
{
	const struct perf_sample *s = &ev->sample;
	enum counter c = s->tid == 0 ? CNT_IDLE : CNT_ON_CPU;
	uint64_t w = sample_weight(src, s);

	if (s->tid == 0) {
		a->system_wide = true;
	} else {
		iv_evidence(a, th, s->time, s->cpu);
		/* on CPU now, whether or not its switch-in was recorded */
		run_begin(th, s->time);
	}
	if (th->filtered || !in_time(a, s->time)) {
		a->meta->samples_filtered++;
		return;
	}
	stack_count(a, ev, pcs, n, th, c, w);
	if (a->err)
		return;
	th->c.count[c]++;
	th->c.ns[c] += w;
	src->used++;
}

static void switch_sample(struct account *a, struct acct_src *src, const struct perf_event *ev,
			  const uint64_t *pcs, size_t n, struct acct_thread *th)
{
	const struct perf_sample *s = &ev->sample;
	uint64_t prev_pid = s->tid, prev_state = 0, next_pid = UINT64_MAX;
	struct acct_thread *prev = th, *next;
	uint32_t node = TREE_NONE;
	char state;

	bool have_state = false;

	if (src->prev_pid)
		perf_tp_read_u64(src->prev_pid, s, &prev_pid);
	if (src->prev_state) {
		have_state = !perf_tp_read_u64(src->prev_state, s, &prev_state);
		if (!have_state && !src->state_unreadable) {
			src->state_unreadable = true;
			pp_warn("a sched_switch record's prev_state field lies outside its "
				"data: those switches' states are unknown, and taken for waits "
				"(their stacks decide what for), not for preemption");
		}
	}
	if (src->next_pid)
		perf_tp_read_u64(src->next_pid, s, &next_pid);
	/* without prev_state the thread's state is unknown: a wait (the
	 * stack's layers decide what for), never taken for preemption */
	state = have_state ? state_letter(src, prev_state) : 'S';
	if ((uint32_t)prev_pid != s->tid)
		prev = thread_get(a, UINT32_MAX, (uint32_t)prev_pid, s->time);
	src->used++;
	if (prev && prev->tid != 0 && !prev->exited && state != 'X' && state != 'Z') {
		bool same = same_switch(a, prev, s->cpu, false);

		if (!same)
			iv_evidence(a, prev, s->time, s->cpu);
		if (!prev->filtered && prev == th)
			node = stack_node(a, ev, pcs, n, prev);
		else if (!prev->filtered)
			node = no_stack_node(a, prev);
		if (same) {          /* the switch record came first: give it the stack */
			int8_t wake = prev->verdict[STATE_BY_WAKEUP];

			prev->out_runnable = state == 'R';
			prev->out_state = acct_switch_state(a, state, node);
			prev->out_node = node;
			acct_classify(a, prev);
			prev->verdict[STATE_BY_WAKEUP] = wake;
			prev->out_from_record = false;
			if (prev == th) /* its stack after all */
				prev->out_no_stack = ACCT_STACK_KNOWN;
		} else {
			iv_open(a, prev, s->time, s->cpu, state, node, false);
			if (prev != th)
				no_stack_why(a, prev, s->cpu, true);
		}
		if (prev == th && !prev->filtered)
			acct_syscall_evidence(a, prev, s, node, prev->out_state);
	}
	if (next_pid < UINT32_MAX) {
		next = next_pid ? thread_find(a, (uint32_t)next_pid) : NULL;
		if (next) {
			iv_close(a, next, s->time, IV_EXACT);
			run_begin(next, s->time);
		}
		cpu_running(a, s->cpu, next ? next->pid : next_pid ? UINT32_MAX : 0,
			    (uint32_t)next_pid, next);
	}
}

static void offcpu_sample(struct account *a, struct acct_src *src, const struct perf_event *ev,
			  const uint64_t *pcs, size_t n, struct acct_thread *th)
{
	int8_t v[STATE_BY_COUNT];
	enum state_layer by;
	uint32_t node;
	enum counter c;
	bool any;
	long pr;

	if (th->filtered) {
		a->meta->samples_filtered++;
		return;
	}
	node = stack_node(a, ev, pcs, n, th);
	if (node == TREE_NONE)
		return;
	acct_blocked_verdicts(a, 'S', node, v, &pr, &any);
	c = acct_decide(v, &by);
	if (by == STATE_BY_KERNEL && any) {
		a->meta->thin_count[c]++;
		a->meta->thin_ns[c] += ev->sample.period;
	}
	a->meta->decided_count[by]++;
	a->meta->decided_ns[by] += ev->sample.period;
	if (by == STATE_BY_PROGRAM && pr >= 0 && a->rules.r[pr].runtime) {
		a->rt_count[a->rules.r[pr].runtime - 1]++;
		a->rt_ns[a->rules.r[pr].runtime - 1] += ev->sample.period;
	}
	count_at(a, node, c, 1, ev->sample.period, ev->sample.time, ev->sample.time,
		 th->tid);
	th->c.count[c]++;
	th->c.ns[c] += ev->sample.period;
	th->blocked_ns += ev->sample.period;
	src->used++;
}

static void src_setup(struct account *a, struct acct_src *src, const struct perf_evsel *e);

/* acct_src() the first time: room for @e's source, set up. */
static __attribute__((noinline)) struct acct_src *src_make(struct account *a,
							   const struct perf_evsel *e)
{
	if (!e)
		return NULL;
	if (e->idx >= a->nr_srcs) {
		size_t n = a->nr_srcs ? a->nr_srcs : 4;
		struct acct_src *s;

		if (e->idx >= 65536)
			return NULL;
		while (n <= e->idx)
			n *= 2;
		s = realloc(a->srcs, n * sizeof(*s));
		if (!s) {
			a->err = PP_ENOMEM;
			return NULL;
		}
		memset(s + a->nr_srcs, 0, (n - a->nr_srcs) * sizeof(*s));
		a->srcs = s;
		a->nr_srcs = n;
	}
	if (!a->srcs[e->idx].ready) {
		src_setup(a, &a->srcs[e->idx], e);
		a->srcs[e->idx].ready = true;
	}
	return &a->srcs[e->idx];
}

struct acct_src *acct_src(struct account *a, const struct perf_evsel *e)
{
	/* per sample: set up already, mostly */
	if (e && e->idx < a->nr_srcs && a->srcs[e->idx].ready)
		return &a->srcs[e->idx];
	return src_make(a, e);
}

static void sample_one(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
		       size_t n)
{
	const struct perf_sample *s;
	struct perf_event fixed;
	struct acct_src *src;
	struct acct_thread *th;
	uint64_t v;

	src = acct_src(a, ev->evsel);
	if (!src || src->role == ROLE_IGNORED)
		return;
	if (src->role != ROLE_OFFCPU_TIME) {
		/* the sample's task was on its CPU (a switch then says who is next) */
		if (ev->sample.tid == UINT32_MAX)
			ev = sample_task(a, src, ev, &fixed);
		s = &ev->sample;
		note_time(a, s->time, true);
		th = thread_on_cpu(a, s->cpu, s->pid, s->tid, s->time);
	} else {
		s = &ev->sample;
		th = thread_get(a, s->pid, s->tid, s->time);
	}
	if (!th)
		return;
	if (s->time > th->end)
		th->end = s->time;
	switch (src->role) {
	case ROLE_ON_CPU:
		on_cpu_sample(a, src, ev, pcs, n, th);
		break;
	case ROLE_SCHED_SWITCH:
		a->switches_seen = true;
		switch_sample(a, src, ev, pcs, n, th);
		break;
	case ROLE_WAKEUP:
		if (src->wake_pid && !perf_tp_read_u64(src->wake_pid, s, &v)) {
			struct acct_thread *w = thread_find(a, (uint32_t)v);

			/* the first wakeup since the switch-out: the delay runs
			 * from when the thread became runnable (as perf sched
			 * timehist counts it) */
			if (w && w->off && !w->wake_time) {
				w->wake_time = s->time;
				/* who woke it: the stack of this sample, the waker's,
				 * whether or not the waker passes --pid/--comm (the
				 * filters choose the blocked threads, not their wakers) */
				w->waker_node = w->filtered || (!s->callchain && !n) ? TREE_NONE :
						stack_node(a, ev, pcs, n, th);
				acct_wake_verdicts(a, w, w->waker_node);
			}
		}
		src->used++;
		break;
	case ROLE_OFFCPU_TIME:
		offcpu_sample(a, src, ev, pcs, n, th);
		break;
	case ROLE_IGNORED:
		break;
	}
	cpu_seen(a, s->cpu, s->time);
}

/*
 * A sample counts once per counter it read (the reader's reads: a group
 * sampled by its leader), each with that counter's event and increase as
 * its period; the stack is the sample's, unwound once. A counter that does
 * not sample by itself is a source only when --event names it.
 */
static __attribute__((noinline)) void sample_reads(struct account *a, const struct perf_event *ev,
						   const uint64_t *pcs, size_t n)
{
	struct perf_event one;

	one = *ev;
	one.has_reads = false;
	one.reads = NULL;
	one.nr_reads = 0;
	for (size_t i = 0; i < ev->nr_reads && !a->err; i++) {
		one.evsel = ev->reads[i].evsel;
		one.sample.id = ev->reads[i].id;
		one.sample.period = ev->reads[i].period;
		sample_one(a, &one, pcs, n);
	}
}

static void sample(struct account *a, const struct perf_event *ev, const uint64_t *pcs, size_t n)
{
	if (ev->has_reads)
		sample_reads(a, ev, pcs, n);
	else
		sample_one(a, ev, pcs, n);
}

static void switch_record(struct account *a, const struct perf_event *ev)
{
	const struct perf_sample *s;
	struct perf_event fixed;
	struct acct_thread *th;

	if (!ev->has_sample_id)
		return;
	ev = sample_task(a, NULL, ev, &fixed);
	s = &ev->sample;
	if (!ev->u.sw.out)
		cpu_running(a, s->cpu, s->pid, s->tid, NULL);
	else if (ev->type == PERF_RECORD_SWITCH_CPU_WIDE)
		cpu_running(a, s->cpu, ev->u.sw.next_prev_pid, ev->u.sw.next_prev_tid, NULL);
	else
		cpu_running(a, s->cpu, UINT32_MAX, UINT32_MAX, NULL);
	/* the idle task's, or a task released on its way out (-1, that no
	 * running task explains): no wait */
	if (!s->tid || s->tid == UINT32_MAX)
		return;
	note_time(a, s->time, false);
	th = thread_get(a, s->pid, s->tid, s->time);
	if (!th)
		return;
	if (s->time > th->end && !th->exited)
		th->end = s->time;
	if (!ev->u.sw.out) {
		iv_close(a, th, s->time, IV_EXACT);
		run_begin(th, s->time);
	} else if (!th->exited && !same_switch(a, th, s->cpu, true)) {
		/* (a task's last switch-out, after its exit, opens no wait: a
		 * system-wide recording sees it, and charged each exited
		 * thread a wait to the end of the recording) */
		char state = ev->u.sw.preempt ? 'R' : 'S';

		iv_evidence(a, th, s->time, s->cpu);
		iv_open(a, th, s->time, s->cpu, state,
			th->filtered ? TREE_NONE : no_stack_node(a, th), true);
		no_stack_why(a, th, s->cpu, false);
	}
	cpu_seen(a, s->cpu, s->time);
}

int acct_event(struct account *a, const struct perf_event *ev, const uint64_t *pcs, size_t n)
{
	struct acct_thread *th;

	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		sample(a, ev, pcs, n);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		a->switches_seen = true;
		switch_record(a, ev);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		lost_record(a, ev);
		break;
	case PERF_RECORD_FORK:
		if (ev->u.task.pid == ev->u.task.ppid && ev->u.task.tid == ev->u.task.ptid)
			break;       /* not a new task */
		note_time(a, ev->u.task.time, false);
		th = thread_new(a, ev->u.task.pid, ev->u.task.tid, ev->u.task.time);
		if (!th)
			return a->err = PP_ENOMEM;
		th->forked = ev->u.task.time != 0; /* perf's synthesized tasks have no time */
		thread_refresh(a, th);
		/* runnable from its fork until its first switch-in: waiting for a
		 * CPU (320 ms of two threads' once, with two busy loops per CPU) */
		if (th->forked) {
			iv_open(a, th, ev->u.task.time,
				ev->has_sample_id ? ev->sample.cpu : UINT32_MAX, 'R',
				th->filtered ? TREE_NONE : fork_wait_node(a, th), false);
			th->out_fork = true;
		}
		break;
	case PERF_RECORD_EXIT:
		note_time(a, ev->u.task.time, false);
		th = thread_find(a, ev->u.task.tid);
		if (th && !th->exited) {
			iv_evidence(a, th, ev->u.task.time, ev->has_sample_id ? ev->sample.cpu : UINT32_MAX);
			run_end(a, th, ev->u.task.time);
			th->exited = true;
			th->end = ev->u.task.time;
		}
		break;
	case PERF_RECORD_COMM:
		if (ev->u.comm.exec && ev->has_sample_id && ev->sample.time) {
			/* a task execs on CPU: its run is known from here, which
			 * for perf record's workload (enabled at exec) is where
			 * the recording of it begins */
			note_time(a, ev->sample.time, false);
			th = thread_get(a, ev->u.comm.pid, ev->u.comm.tid, ev->sample.time);
			if (!th)
				return a->err;
			iv_evidence(a, th, ev->sample.time, ev->sample.cpu);
			run_begin(th, ev->sample.time);
		} else {
			th = thread_find(a, ev->u.comm.tid);
		}
		if (th)
			thread_refresh(a, th);
		break;
	default:
		break;
	}
	return a->err;
}

void acct_finish(struct account *a)
{
	/* a recording of records alone spans them */
	if (!a->first_time) {
		a->first_time = a->rec_first;
		a->last_time = a->rec_last;
	}
	pend_make_all(a);
	stack_flush_all(a);
	for (size_t i = 0; i < a->nr_threads; i++) {
		struct acct_thread *th = &a->threads[i];

		iv_close(a, th, a->last_time, IV_AT_END);
		if (!th->exited)
			run_end(a, th, a->last_time);
		if (!th->exited && a->last_time > th->end)
			th->end = a->last_time;
	}
	if (!a->switch_event)
		a->meta->iv_no_stack_unrecorded += a->no_stack_unpaired;
}

/* --- set-up --- */

/*
 * Whether an event's samples weigh time: a clock's period is ns; a
 * hardware (or PMU) event sampled at a frequency stands for 1/frequency of
 * its task's time (the kernel keeps adjusting its period to that rate). A
 * software event other than the clocks (page faults, context switches),
 * a breakpoint, or any event sampled every N events counts events.
 */
static bool counts_time(const struct perf_attr *at)
{
	if (at->type == PERF_TYPE_SOFTWARE)
		return at->config == PERF_COUNT_SW_CPU_CLOCK || at->config == PERF_COUNT_SW_TASK_CLOCK;
	return (at->flags & PERF_ATTR_FLAG_FREQ) && at->sample_period &&
	       at->type != PERF_TYPE_BREAKPOINT && at->type != PERF_TYPE_TRACEPOINT;
}

/* Whether @e, unless --event says otherwise, is an on-CPU sampling event. */
static bool on_cpu_candidate(const struct perf_evsel *e)
{
	const struct perf_attr *at = &e->attr;

	if ((e->name && strcmp(e->name, "offcpu-time") == 0) ||
	    (!(at->flags & PERF_ATTR_FLAG_FREQ) && !at->sample_period) ||
	    at->type == PERF_TYPE_TRACEPOINT || !(at->sample_type & PERF_SAMPLE_TID))
		return false;
	return !(at->type == PERF_TYPE_SOFTWARE &&
		 (at->config == PERF_COUNT_SW_DUMMY || at->config == PERF_COUNT_SW_BPF_OUTPUT));
}

/* The privilege levels an event samples in (user, kernel, hypervisor),
 * then the contexts (host, guest), from its exclude_* bits. */
static unsigned event_modes(const struct perf_attr *a)
{
	return !(a->flags & PERF_ATTR_FLAG_EXCLUDE_USER) << 0 |
	       !(a->flags & PERF_ATTR_FLAG_EXCLUDE_KERNEL) << 1 |
	       !(a->flags & PERF_ATTR_FLAG_EXCLUDE_HV) << 2;
}

static unsigned event_contexts(const struct perf_attr *a)
{
	return !(a->flags & PERF_ATTR_FLAG_EXCLUDE_HOST) << 0 |
	       !(a->flags & PERF_ATTR_FLAG_EXCLUDE_GUEST) << 1;
}

/*
 * Whether @x counts with the chosen event @y: the same event (type and
 * config, less the PMU a hybrid CPU's generic events carry in config's
 * upper half) sampling where @y does not - on another PMU (cpu_core/cycles/
 * and cpu_atom/cycles/: a CPU is one or the other) or in other modes
 * (cycles:u with cycles:k). cycles with cycles:u, or the same event twice,
 * would count the same moments twice.
 */
static bool counts_with(const struct perf_attr *x, const struct perf_attr *y)
{
	bool hw = x->type == PERF_TYPE_HARDWARE || x->type == PERF_TYPE_HW_CACHE;
	uint64_t mask = hw ? 0xffffffffull : UINT64_MAX;

	if (x->type != y->type || (x->config & mask) != (y->config & mask))
		return false;
	if (hw && x->config >> 32 != y->config >> 32)
		return true;
	return !(event_modes(x) & event_modes(y)) || !(event_contexts(x) & event_contexts(y));
}

void acct_choose_sources(struct account *a, struct perf_evsel *const *ev, size_t nr)
{
	const struct perf_evsel *pick = NULL;

	for (size_t i = 0; i < nr; i++) {
		const char *name = ev[i]->name ? ev[i]->name : "";
		size_t l = strlen(name);

		if (ev[i]->attr.type == PERF_TYPE_TRACEPOINT && l >= 12 &&
		    !strcmp(name + l - 12, "sched_switch"))
			a->switch_event = true;
	}
	if (a->opts->events || a->on_cpu_chosen)
		return;
	for (size_t i = 0; i < nr; i++) {
		if (!on_cpu_candidate(ev[i]))
			continue;
		if (counts_time(&ev[i]->attr)) {
			pick = ev[i];
			break;
		}
		if (!pick)
			pick = ev[i];
	}
	if (pick) {
		a->on_cpu_chosen = true;
		a->on_cpu_idx = pick->idx;
		a->on_cpu_event = pick->attr;
	}
}

static void src_setup(struct account *a, struct acct_src *src, const struct perf_evsel *e)
{
	const struct perf_attr *at = &e->attr;
	const char *name = e->name ? e->name : "";

	src->freq = at->flags & PERF_ATTR_FLAG_FREQ;
	src->ns = counts_time(at);
	/* a clock's period is already ns; only a hardware event at a frequency
	 * stands for 1/frequency (counts_time() saw a non-zero frequency) */
	src->freq_ns = src->ns && at->type != PERF_TYPE_SOFTWARE ?
			       1000000000ull / at->sample_period : 0;
	if (strcmp(name, "offcpu-time") == 0) {
		src->role = ROLE_OFFCPU_TIME;
	} else if (!src->freq && !at->sample_period) {
		/* a counter that never samples (a group's member read by its
		 * leader's samples): its counts are a profile of their own,
		 * in other units, so only when asked for */
		src->role = a->opts->events && perf_event_listed(a->opts->events, name) &&
				    (at->sample_type & PERF_SAMPLE_TID) ? ROLE_ON_CPU : ROLE_IGNORED;
	} else if (at->type == PERF_TYPE_TRACEPOINT) {
		const char *ev = strchr(name, ':') ? strchr(name, ':') + 1 : name;

		src->role = ROLE_IGNORED;
		if (strcmp(ev, "sched_switch") == 0) {
			src->role = ROLE_SCHED_SWITCH;
			src->prev_pid = perf_tp_field(e, "prev_pid");
			src->prev_state = perf_tp_field(e, "prev_state");
			src->next_pid = perf_tp_field(e, "next_pid");
			src->nr_flags = perf_tp_print_flags(e, "prev_state", src->flags,
							    ACCT_MAX_FLAGS);
			flags_known(src);
			if (!src->prev_state)
				pp_warn("'%s' has no prev_state field in the recording's format: "
					"the switched-out threads' states are unknown, so no "
					"off-CPU time is told preempted (runnable) from waiting; "
					"their waits are decided by their stacks", name);
			if (src->freq) {
				a->meta->freq_trap = true;
				pp_warn("'%s' was recorded in frequency mode (a global -F applies to "
					"tracepoints too): most switches were not sampled; record "
					"with -e cpu-clock/freq=N/ -e %s instead", name, name);
			}
		} else if (strcmp(ev, "sched_wakeup") == 0 || strcmp(ev, "sched_wakeup_new") == 0 ||
			   strcmp(ev, "sched_waking") == 0) {
			/* sched_waking fires in the waker's context; sched_wakeup may fire
			 * on the wakee's CPU (a queued remote wakeup, in its interrupt), so
			 * its stack is not always the waker's. The first of a wait wins. */
			src->role = ROLE_WAKEUP;
			src->wake_pid = perf_tp_field(e, "pid");
		}
	} else if (!on_cpu_candidate(e)) {
		src->role = ROLE_IGNORED;   /* dummy, bpf-output, or no TID to count it by */
	} else {
		src->role = ROLE_ON_CPU;
		if (a->opts->events && !perf_event_listed(a->opts->events, name)) {
			src->role = ROLE_IGNORED;
		} else if (!a->opts->events && a->on_cpu_chosen && e->idx != a->on_cpu_idx &&
			   !counts_with(at, &a->on_cpu_event)) {
			src->role = ROLE_IGNORED;
			src->left_out = true;
		}
	}
}

int acct_init(struct account *a, const struct profile_opts *opts, const struct machine *m,
	      struct namer *nm, const struct perf_header_info *hdr, struct profile_meta *meta)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->opts = opts;
	a->m = m;
	a->namer = nm;
	a->meta = meta;
	ret = tree_init(&a->tree);
	if (ret)
		return ret;
	a->tree.by_line = opts->frames_by_line;
	ret = rules_setup(&a->rules, opts->state_rules);
	if (ret)
		return ret;
	a->stack_rules_next = 1;
	a->rt_count = calloc(a->rules.nrt + 1, sizeof(*a->rt_count));
	a->rt_ns = calloc(a->rules.nrt + 1, sizeof(*a->rt_ns));
	if (!a->rt_count || !a->rt_ns)
		return PP_ENOMEM;
	ret = acct_filter_parse(&a->filter, opts, hdr);
	if (ret)
		return ret;
	a->sys_arch = sys_arch_of(hdr->arch);
	a->hdr_first = hdr->sample_time_first;
	if (hdr->cmdline && (strstr(hdr->cmdline, " -a") || strstr(hdr->cmdline, " --all-cpus") ||
			     strstr(hdr->cmdline, " -C")))
		a->system_wide = true;
	return 0;
}

void acct_release(struct account *a)
{
	if (a->wtree_ready)
		tree_release(&a->wtree);
	rules_free(&a->rules);
	free(a->filter.pids);
	free(a->filter.tids);
	for (size_t i = 0; i < a->filter.nr_comms; i++)
		free(a->filter.comms[i]);
	free(a->filter.comms);
	free(a->srcs);
	free(a->threads);
	free(a->tid_slots);
	free(a->cpus);
	free(a->stacks);
	free(a->key);
	free(a->rawf);
	free(a->tick);
	free(a->rawf_ids);
	free(a->pend);
	free(a->pend_tickets);
	free(a->dso_base);
	free(a->frame_sys);
	free(a->frame_rules);
	free(a->rule_ids);
	wordmap_free(&a->stack_rules_map);
	free(a->stack_rules);
	free(a->blocked);
	free(a->rt_count);
	free(a->rt_ns);
}

/* --- from one window's accounting to the next --- */

struct acct_carried_frame {
	char *function, *module, *file;
	uint32_t line, flags;
};

struct acct_carried {
	uint32_t pid, tid;
	bool off, out_from_record, running, out_runnable, out_fork;
	char out_state;
	int8_t verdict[STATE_BY_COUNT];
	uint16_t rule_prog, rule_wake;
	bool woken;                        /* woken before the boundary */
	uint8_t out_no_stack;              /* enum acct_no_stack */
	size_t depth;                      /* the blocked stack, root first */
	struct acct_carried_frame *frames;
};

struct acct_carry {
	struct acct_carried *t;
	size_t n;
};

void acct_carry_free(struct acct_carry *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		for (size_t k = 0; k < c->t[i].depth; k++) {
			free(c->t[i].frames[k].function);
			free(c->t[i].frames[k].module);
			free(c->t[i].frames[k].file);
		}
		free(c->t[i].frames);
	}
	free(c->t);
	free(c);
}

static char *dup_or_null(const char *s, bool *bad)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*bad = true;
	return d;
}

/* The frames of @node, root first, copied out of @a's tree. */
static int carry_stack(const struct account *a, uint32_t node, struct acct_carried *out)
{
	const struct tree *t = &a->tree;
	size_t depth = 0, k;
	bool bad = false;

	for (uint32_t n = node; n != TREE_ROOT && n != TREE_NONE; n = t->nodes[n].parent)
		depth++;
	if (!depth)
		return 0;
	out->frames = calloc(depth, sizeof(*out->frames));
	if (!out->frames)
		return PP_ENOMEM;
	out->depth = depth;
	k = depth;
	for (uint32_t n = node; n != TREE_ROOT && n != TREE_NONE; n = t->nodes[n].parent) {
		const struct profile_frame *f = &t->frames[t->nodes[n].frame];
		struct acct_carried_frame *o = &out->frames[--k];

		o->function = dup_or_null(f->function, &bad);
		o->module = dup_or_null(f->module, &bad);
		o->file = dup_or_null(f->file, &bad);
		o->line = f->line;
		o->flags = f->flags;
	}
	return bad ? PP_ENOMEM : 0;
}

int acct_carry_take(const struct account *a, struct acct_carry **out)
{
	struct acct_carry *c = calloc(1, sizeof(*c));
	int ret = 0;

	*out = NULL;
	if (!c)
		return PP_ENOMEM;
	c->t = calloc(a->nr_threads ? a->nr_threads : 1, sizeof(*c->t));
	if (!c->t) {
		free(c);
		return PP_ENOMEM;
	}
	for (size_t i = 0; i < a->nr_threads && !ret; i++) {
		const struct acct_thread *th = &a->threads[i];
		struct acct_carried *o;

		if (th->exited || (!th->off && !th->in_time))
			continue;
		/* the newest entry of a tid is the live one (tid_slots) */
		if (thread_find((struct account *)a, th->tid) != th)
			continue;
		o = &c->t[c->n++];
		o->pid = th->pid;
		o->tid = th->tid;
		o->running = !th->off && th->in_time;
		o->off = th->off;
		if (!th->off)
			continue;
		o->out_from_record = th->out_from_record;
		o->out_state = th->out_state;
		o->out_runnable = th->out_runnable;
		o->out_fork = th->out_fork;
		memcpy(o->verdict, th->verdict, sizeof(o->verdict));
		o->rule_prog = th->rule_prog;
		o->rule_wake = th->rule_wake;
		o->woken = th->wake_time > th->out_time;
		o->out_no_stack = th->out_no_stack;
		if (th->out_node != TREE_NONE)
			ret = carry_stack(a, th->out_node, o);
	}
	if (ret) {
		acct_carry_free(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* @cf's frames as a node of @a's tree, made if new; TREE_NONE out of memory. */
static uint32_t carried_node(struct account *a, const struct acct_carried *cf)
{
	uint32_t node = TREE_ROOT;
	int err = 0;

	for (size_t k = 0; k < cf->depth && node != TREE_NONE; k++) {
		const struct acct_carried_frame *f = &cf->frames[k];
		const char *fn = tree_intern(&a->tree, f->function, &err);
		const char *mod = tree_intern(&a->tree, f->module, &err);
		const char *file = tree_intern(&a->tree, f->file, &err);
		uint32_t frame;

		if (err)
			return TREE_NONE;
		frame = tree_frame(&a->tree, fn, mod, file, f->line, f->flags);
		node = frame == TREE_NONE ? TREE_NONE : tree_child(&a->tree, node, frame);
	}
	return node;
}

int acct_carry_put(struct account *a, const struct acct_carry *c, uint64_t t)
{
	for (size_t i = 0; c && i < c->n; i++) {
		const struct acct_carried *cf = &c->t[i];
		struct acct_thread *th = thread_get(a, cf->pid, cf->tid, t);

		if (!th)
			return a->err ? a->err : PP_ENOMEM;
		if (cf->running) {
			th->in_time = t;
			continue;
		}
		th->off = true;
		th->out_from_record = cf->out_from_record;
		th->out_state = cf->out_state;
		th->out_runnable = cf->out_runnable;
		th->out_fork = cf->out_fork;
		th->out_time = t;
		/* woken before the boundary: what is left is the wait for a CPU */
		th->wake_time = cf->woken ? t : 0;
		memcpy(th->verdict, cf->verdict, sizeof(th->verdict));
		th->rule_prog = cf->rule_prog;
		th->rule_wake = cf->rule_wake;
		th->waker_node = TREE_NONE;
		th->out_no_stack = cf->out_no_stack;
		th->out_node = cf->depth ? carried_node(a, cf) : TREE_NONE;
		if (cf->depth && th->out_node == TREE_NONE)
			return PP_ENOMEM;
	}
	return 0;
}
