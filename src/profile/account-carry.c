/* SPDX-License-Identifier: MIT */
/*
 * account-carry.c - from one window's accounting to the next
 * (profile_build_windows()): each live thread's open off-CPU interval, or
 * that it is running, copied out at a window's end and opened again in
 * the next window's accounting; and each CPU's last record.
 */
#include "priv.h"

#include <stdlib.h>
#include <string.h>

#include "../util/error.h"

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
	bool lost_cut;                     /* cut at a loss before it: nothing more is charged */
	uint8_t out_no_stack;              /* enum acct_no_stack */
	size_t depth;                      /* the blocked stack, root first */
	struct acct_carried_frame *frames;
};

struct acct_carry {
	struct acct_carried *t;
	size_t n;
	/* each CPU's last record's time (0: none): a loss a CPU reports in
	 * the next window reaches back to it, and the waits closed there are
	 * held until each of these CPUs has a record after them, as in the
	 * whole recording (acct_iv_close()) */
	uint64_t *cpu_last;
	size_t nr_cpus;
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
	free(c->cpu_last);
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
	c->cpu_last = calloc(a->nr_cpus ? a->nr_cpus : 1, sizeof(*c->cpu_last));
	if (!c->t || !c->cpu_last) {
		acct_carry_free(c);
		return PP_ENOMEM;
	}
	c->nr_cpus = a->nr_cpus;
	for (size_t i = 0; i < a->nr_cpus; i++)
		c->cpu_last[i] = a->cpus[i].last;
	for (size_t i = 0; i < a->nr_threads && !ret; i++) {
		const struct acct_thread *th = &a->threads[i];
		struct acct_carried *o;

		if (th->exited || (!th->off && !th->in_time))
			continue;
		/* the newest entry of a tid is the live one (tid_slots) */
		if (acct_thread_find((struct account *)a, th->tid) != th)
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
		o->lost_cut = th->lost_cut;
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
	for (size_t i = 0; c && i < c->nr_cpus; i++) {
		struct acct_cpu *cpu;

		if (!c->cpu_last[i])
			continue;
		cpu = acct_cpu_at(a, (uint32_t)i);
		if (!cpu)
			return PP_ENOMEM;
		if (cpu->last < c->cpu_last[i]) {
			a->cpu_heap_stale |= !cpu->last;
			cpu->last = c->cpu_last[i];
		}
	}
	for (size_t i = 0; c && i < c->n; i++) {
		const struct acct_carried *cf = &c->t[i];
		struct acct_thread *th = acct_thread_get(a, cf->pid, cf->tid, t);

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
		/* cut at a loss in an earlier window: charged up to it there,
		 * as the whole stream charges it, and no further here */
		th->lost_cut = cf->lost_cut;
		th->lost_end = t;
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
