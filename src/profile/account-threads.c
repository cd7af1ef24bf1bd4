/* SPDX-License-Identifier: MIT */
/*
 * account-threads.c - the accounting's threads and CPUs: a thread's
 * entry by tid (the newest of a reused tid), its comm and whether it
 * passes --pid, --tid and --comm; per CPU, the task running there, the
 * time of its last event and the records lost of it; the task of a
 * sample that left it out.
 */
#include "priv.h"

#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/hash.h"

/* --- threads --- */

struct acct_thread *acct_thread_find(struct account *a, uint32_t tid)
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
struct acct_thread *acct_thread_new(struct account *a, uint32_t pid, uint32_t tid,
				    uint64_t t)
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
	th->run_cpu = UINT32_MAX;
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
void acct_thread_refresh(struct account *a, struct acct_thread *th)
{
	th->comm = current_comm(a, th->tid);
	th->filtered = !thread_passes(a, th);
}

struct acct_thread *acct_thread_get(struct account *a, uint32_t pid, uint32_t tid,
				    uint64_t t)
{
	struct acct_thread *th = acct_thread_find(a, tid);

	if (!th) {
		th = acct_thread_new(a, pid, tid, t);
		if (!th) {
			a->err = PP_ENOMEM;
			return NULL;
		}
		acct_thread_refresh(a, th);
	}
	if (pid != UINT32_MAX && th->pid == UINT32_MAX)
		th->pid = pid;
	return th;
}

/* --- CPUs --- */

/* Room for CPU @cpu's state; NULL for an absurd number or no memory. */
struct acct_cpu *acct_cpu_grow(struct account *a, uint32_t cpu)
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

/* From here on, task @pid/@tid (UINT32_MAX: unknown) runs on @cpu; @th is
 * its entry if known. */
void acct_cpu_running(struct account *a, uint32_t cpu, uint32_t pid, uint32_t tid,
		      const struct acct_thread *th)
{
	struct acct_cpu *c = acct_cpu_at(a, cpu);

	if (c) {
		c->pid = pid;
		c->tid = tid;
		c->thread = th ? (uint32_t)(th - a->threads) + 1 : 0;
	}
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
const struct perf_event *acct_sample_task(struct account *a, const struct acct_src *src,
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
		const struct acct_thread *th = acct_thread_find(a, tid);

		if (th)
			pid = th->pid;
	}
	*fixed = *ev;
	fixed->sample.pid = pid;
	fixed->sample.tid = tid;
	return fixed;
}
