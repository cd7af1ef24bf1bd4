/* SPDX-License-Identifier: MIT */
/*
 * account-intervals.c - off-CPU intervals: opened at a switch-out, closed
 * at the thread's switch-in (or bounded by other evidence that it ran),
 * cut where records were lost, and charged to the switch-out stack - and,
 * when its waking was seen, the off-wake stack - under the counter the
 * evidence decides (verdict.c); and the thread's runs between them.
 */
#include "priv.h"

#include "../util/error.h"

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

/*
 * The part of [b, e] inside the recording and the --time window. The
 * recording ends at its last sample, as it begins at its first (the
 * profile spans its samples, where the header says when they were): a
 * task's switch and exit records after it (a per-task recording's last
 * child runs on to its exit) are not charged, as its lifetime ends there.
 * Where the header does not say (perf record -B writes 0), build.c reads
 * the times from the records first (scan_span()); of a stream on standard
 * input, the last sample is not known when a record after it is charged,
 * and what is charged is not taken back.
 */
static uint64_t clip(const struct account *a, uint64_t b, uint64_t e)
{
	uint64_t lo = window_start(a);

	if (b < lo)
		b = lo;
	if (a->hdr_last && e > a->hdr_last)
		e = a->hdr_last;
	if (a->filter.has_time) {
		if (b < a->filter.t0)
			b = a->filter.t0;
		if (e > a->filter.t1)
			e = a->filter.t1;
	}
	return e > b ? e - b : 0;
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
	/* in time too, as acct_count_at() keeps the main tree's (issue 56's explorer) */
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

void acct_iv_close(struct account *a, struct acct_thread *th, uint64_t end,
		   enum acct_iv_end how)
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
	if (th->out_fork && how == ACCT_IV_AT_END && !a->switches_seen) {
		th->out_fork = false;
		return;
	}
	th->out_fork = false;
	if (end < out)
		end = out;
	th->in_time = how == ACCT_IV_AT_END ? 0 : end;
	if (how == ACCT_IV_INFERRED || how == ACCT_IV_APPROX)
		th->bounded++;
	/* records were lost meanwhile: it may have run (and waited again)
	 * where they were, so only its time up to the loss is known to be
	 * this wait's, in its state; the rest is not charged */
	if (th->lost_cut && th->lost_end < end) {
		if (!th->filtered) {
			meta->iv_lost_cut++;
			meta->iv_lost_cut_ns += clip(a, th->lost_end, end);
		}
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
	case ACCT_IV_EXACT: meta->iv_exact++; break;
	case ACCT_IV_INFERRED: meta->iv_inferred++; break;
	case ACCT_IV_APPROX: meta->iv_approx++; break;
	case ACCT_IV_AT_END: meta->iv_open_at_end++; break;
	}
	if (th->filtered)
		return;
	d = clip(a, out, end);
	if (how == ACCT_IV_AT_END) {
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
		acct_count_at(a, th->out_node, th->out_cnt, 1, d, out, end, th->tid);
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
void acct_iv_evidence(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu)
{
	uint64_t end = t;
	enum acct_iv_end how = ACCT_IV_APPROX;

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
		how = ACCT_IV_INFERRED;
	} else if (a->system_wide && cpu < a->nr_cpus && a->cpus[cpu].last > th->out_time &&
		   a->cpus[cpu].last <= t) {
		end = a->cpus[cpu].last;
		how = ACCT_IV_INFERRED;
	} else if (a->system_wide) {
		how = ACCT_IV_INFERRED;
	}
	acct_iv_close(a, th, end, how);
}

/* @th leaves the CPU at @t: what it ran since its switch-in is measured. */
void acct_run_end(struct account *a, struct acct_thread *th, uint64_t t)
{
	if (th->in_time && t > th->in_time && !th->filtered)
		th->run_ns += clip(a, th->in_time, t);
	th->in_time = 0;
}

/* The LOST records so far that may have held @cpu's events. */
static uint64_t cpu_lost(const struct account *a, uint32_t cpu)
{
	return a->lost_any + (cpu < a->nr_cpus ? a->cpus[cpu].lost : 0);
}

void acct_iv_open(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu,
		  char state, uint32_t node, bool from_record)
{
	acct_run_end(a, th, t);
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

/* --- a switch seen twice, records lost --- */

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
bool acct_same_switch(const struct account *a, const struct acct_thread *th, uint32_t cpu,
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
 * Why, as far as the recording says, is counted when it ends (acct_iv_close()):
 * records of its CPU were lost before it, no sched_switch event was
 * recorded, or neither.
 */
void acct_no_stack_why(struct account *a, struct acct_thread *th, uint32_t cpu, bool other)
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
void acct_lost_record(struct account *a, const struct perf_event *ev)
{
	struct acct_cpu *c = ev->has_sample_id && ev->sample.cpu != UINT32_MAX ?
				     acct_cpu_at(a, ev->sample.cpu) : NULL;

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
