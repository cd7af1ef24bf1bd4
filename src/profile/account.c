/* SPDX-License-Identifier: MIT */
/*
 * account.c - what each record means: on-CPU samples charged with their
 * weight, off-CPU intervals opened at a switch-out and closed at the
 * thread's switch-in (or bounded when the switch-in is missing), each
 * charged to the switch-out stack under the counter the state rules give.
 * Each record is taken here (acct_event()); the files beside it keep the
 * threads and CPUs (account-threads.c), the stacks and their counts
 * (account-stacks.c), the off-CPU intervals (account-intervals.c) and the
 * evidence on them (verdict.c), what each event is for (account-setup.c),
 * and what goes from one window to the next (account-carry.c).
 */
#include "priv.h"

#include "../util/error.h"
#include "../util/log.h"

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
		acct_iv_evidence(a, th, s->time, s->cpu);
		/* on CPU now, whether or not its switch-in was recorded */
		acct_run_begin(a, th, s->time, s->cpu);
	}
	if (th->filtered || !in_time(a, s->time)) {
		a->meta->samples_filtered++;
		return;
	}
	acct_stack_count(a, ev, pcs, n, th, c, w);
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
	state = have_state ? acct_state_letter(src, prev_state) : 'S';
	if ((uint32_t)prev_pid != s->tid)
		prev = acct_thread_get(a, UINT32_MAX, (uint32_t)prev_pid, s->time);
	src->used++;
	if (prev && prev->tid != 0 && !prev->exited && state != 'X' && state != 'Z') {
		bool same = acct_same_switch(a, prev, s->cpu, false);

		if (!same)
			acct_iv_evidence(a, prev, s->time, s->cpu);
		if (!prev->filtered && prev == th)
			node = acct_stack_node(a, ev, pcs, n, prev);
		else if (!prev->filtered)
			node = acct_no_stack_node(a, prev);
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
			acct_iv_open(a, prev, s->time, s->cpu, state, node, false);
			if (prev != th)
				acct_no_stack_why(a, prev, s->cpu, true);
		}
		if (prev == th && !prev->filtered)
			acct_syscall_evidence(a, prev, s, node, prev->out_state);
	}
	if (next_pid < UINT32_MAX) {
		next = next_pid ? acct_thread_find(a, (uint32_t)next_pid) : NULL;
		if (next) {
			acct_iv_close(a, next, s->time, ACCT_IV_EXACT);
			acct_run_begin(a, next, s->time, s->cpu);
		}
		acct_cpu_running(a, s->cpu, next ? next->pid : next_pid ? UINT32_MAX : 0,
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
	node = acct_stack_node(a, ev, pcs, n, th);
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
	acct_count_at(a, node, c, 1, ev->sample.period, ev->sample.time, ev->sample.time,
		      th->tid);
	th->c.count[c]++;
	th->c.ns[c] += ev->sample.period;
	th->blocked_ns += ev->sample.period;
	src->used++;
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
			ev = acct_sample_task(a, src, ev, &fixed);
		s = &ev->sample;
		note_time(a, s->time, true);
		th = acct_thread_on_cpu(a, s->cpu, s->pid, s->tid, s->time);
	} else {
		s = &ev->sample;
		th = acct_thread_get(a, s->pid, s->tid, s->time);
	}
	if (!th)
		return;
	/* its lifetime ends at its exit record: a sample of its teardown
	 * (its last switch-out) does not move the end past it */
	if (s->time > th->end && !th->exited)
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
			struct acct_thread *w = acct_thread_find(a, (uint32_t)v);

			/* the first wakeup since the switch-out: the delay runs
			 * from when the thread became runnable (as perf sched
			 * timehist counts it) */
			if (w && w->off && !w->wake_time) {
				w->wake_time = s->time;
				/* who woke it: the stack of this sample, the waker's,
				 * whether or not the waker passes --pid/--comm (the
				 * filters choose the blocked threads, not their wakers) */
				w->waker_node = w->filtered || (!s->callchain && !n) ? TREE_NONE :
						acct_stack_node(a, ev, pcs, n, th);
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
	acct_cpu_seen(a, s->cpu, s->time);
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
	ev = acct_sample_task(a, NULL, ev, &fixed);
	s = &ev->sample;
	if (!ev->u.sw.out)
		acct_cpu_running(a, s->cpu, s->pid, s->tid, NULL);
	else if (ev->type == PERF_RECORD_SWITCH_CPU_WIDE)
		acct_cpu_running(a, s->cpu, ev->u.sw.next_prev_pid, ev->u.sw.next_prev_tid, NULL);
	else
		acct_cpu_running(a, s->cpu, UINT32_MAX, UINT32_MAX, NULL);
	/* the idle task's, or a task released on its way out (-1, that no
	 * running task explains): no wait */
	if (!s->tid || s->tid == UINT32_MAX)
		return;
	note_time(a, s->time, false);
	th = acct_thread_get(a, s->pid, s->tid, s->time);
	if (!th)
		return;
	if (s->time > th->end && !th->exited)
		th->end = s->time;
	if (!ev->u.sw.out) {
		acct_iv_close(a, th, s->time, ACCT_IV_EXACT);
		acct_run_begin(a, th, s->time, s->cpu);
	} else if (!th->exited && !acct_same_switch(a, th, s->cpu, true)) {
		/* (a task's last switch-out, after its exit, opens no wait: a
		 * system-wide recording sees it, and charged each exited
		 * thread a wait to the end of the recording) */
		char state = ev->u.sw.preempt ? 'R' : 'S';

		acct_iv_evidence(a, th, s->time, s->cpu);
		acct_iv_open(a, th, s->time, s->cpu, state,
			     th->filtered ? TREE_NONE : acct_no_stack_node(a, th), true);
		acct_no_stack_why(a, th, s->cpu, false);
	}
	acct_cpu_seen(a, s->cpu, s->time);
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
		acct_lost_record(a, ev);
		break;
	case PERF_RECORD_FORK:
		if (ev->u.task.pid == ev->u.task.ppid && ev->u.task.tid == ev->u.task.ptid)
			break;       /* not a new task */
		note_time(a, ev->u.task.time, false);
		th = acct_thread_new(a, ev->u.task.pid, ev->u.task.tid, ev->u.task.time);
		if (!th)
			return a->err = PP_ENOMEM;
		th->forked = ev->u.task.time != 0; /* perf's synthesized tasks have no time */
		acct_thread_refresh(a, th);
		/* runnable from its fork until its first switch-in: waiting for a
		 * CPU (320 ms of two threads' once, with two busy loops per CPU) */
		if (th->forked) {
			acct_iv_open(a, th, ev->u.task.time,
				     ev->has_sample_id ? ev->sample.cpu : UINT32_MAX, 'R',
				     th->filtered ? TREE_NONE : acct_fork_wait_node(a, th), false);
			th->out_fork = true;
		}
		break;
	case PERF_RECORD_EXIT:
		note_time(a, ev->u.task.time, false);
		th = acct_thread_find(a, ev->u.task.tid);
		if (th && !th->exited) {
			acct_iv_evidence(a, th, ev->u.task.time,
					 ev->has_sample_id ? ev->sample.cpu : UINT32_MAX);
			acct_run_end(a, th, ev->u.task.time);
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
			th = acct_thread_get(a, ev->u.comm.pid, ev->u.comm.tid, ev->sample.time);
			if (!th)
				return a->err;
			acct_iv_evidence(a, th, ev->sample.time, ev->sample.cpu);
			acct_run_begin(a, th, ev->sample.time, ev->sample.cpu);
		} else {
			th = acct_thread_find(a, ev->u.comm.tid);
		}
		if (th)
			acct_thread_refresh(a, th);
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
	acct_pend_make_all(a);
	acct_stack_flush_all(a);
	/* no loss can be reported any more: what was held for one is charged */
	acct_iv_settle(a, true);
	for (size_t i = 0; i < a->nr_threads; i++) {
		struct acct_thread *th = &a->threads[i];

		acct_iv_close(a, th, a->last_time, ACCT_IV_AT_END);
		if (!th->exited)
			acct_run_end(a, th, a->last_time);
		if (!th->exited && a->last_time > th->end)
			th->end = a->last_time;
	}
	if (!a->switch_event)
		a->meta->iv_no_stack_unrecorded += a->no_stack_unpaired;
}
