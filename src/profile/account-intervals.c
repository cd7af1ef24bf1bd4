/* SPDX-License-Identifier: MIT */
/*
 * account-intervals.c - off-CPU intervals: opened at a switch-out, closed
 * at the thread's switch-in (or bounded by other evidence that it ran),
 * cut where records were lost, and charged to the switch-out stack - and,
 * when its waking was seen, the off-wake stack - under the counter the
 * evidence decides (verdict.c); and the thread's runs between them.
 */
#include "priv.h"

#include <stdlib.h>
#include <string.h>

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

/*
 * An off-CPU interval closed, as it was then: what its charge reads. Its
 * charge may wait (acct_iv_close()) while a loss still to be reported may
 * cut it, and the thread's entry goes on meanwhile.
 */
struct acct_closed {
	uint64_t out, end;                 /* charged from out to end */
	uint64_t ended;                    /* where it ended (its switch-in) */
	uint64_t wake;                     /* its waking, 0 none */
	uint64_t lo;                       /* the recording's start then (window_start()) */
	uint64_t timeout_ns;
	uint32_t thread;                   /* index in a->threads */
	uint32_t node, waker_node;
	int8_t verdict[STATE_BY_COUNT];
	int8_t untimed;
	uint16_t rule_prog, rule_wake;
	char state;
	uint8_t how;                       /* enum acct_iv_end */
	uint8_t no_stack;                  /* enum acct_no_stack */
	bool runnable, kernel_any, wake_generic, args_unsaid;
	bool cut;                          /* end is before ended: records were lost */
};

/* the closed intervals held at most: beyond, the oldest is charged as cut so far */
#define ACCT_CLOSED_MAX 8192

/*
 * The part of [b, e] inside the recording (from @lo, the start as it was
 * then) and the --time window. The recording ends at its last sample, as
 * it begins at its first (the profile spans its samples, where the header
 * says when they were): a task's switch and exit records after it (a
 * per-task recording's last child runs on to its exit) are not charged,
 * as its lifetime ends there. Where the header does not say (perf record
 * -B writes 0), build.c reads the times from the records first
 * (scan_span()); of a stream on standard input, the last sample is not
 * known when a record after it is charged, and what is charged is not
 * taken back.
 */
static uint64_t clip_from(const struct account *a, uint64_t lo, uint64_t b, uint64_t e)
{
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

/* Whether an interval [@out, @end] charging @d is outside what is
 * profiled (before the recording's start @lo, from its last sample on,
 * or outside the --time window), charged to no stack and not counted:
 * a switch-out at or after the last sample is no wait of the profile's,
 * as one that ended before its first is not (a consumer drawing the
 * profile's range shows no interval there). */
static bool iv_outside(const struct account *a, uint64_t lo, uint64_t out, uint64_t end,
		       uint64_t d)
{
	return !d && (end < lo || (a->hdr_last && out >= a->hdr_last) ||
		      (a->filter.has_time && (end < a->filter.t0 || out > a->filter.t1)));
}

/* @th's interval without a stack ends, charged: counted, with why (whether
 * a sched_switch event was recorded at all is said at the end). */
static void no_stack_count(struct account *a, uint8_t why)
{
	a->meta->iv_no_stack++;
	if (why == ACCT_NO_STACK_LOST)
		a->meta->iv_no_stack_lost++;
	else if (why == ACCT_NO_STACK_UNPAIRED)
		a->no_stack_unpaired++;
}

/* Charge the closed interval @e (its thread's entry in a->threads), in
 * the state its evidence decides, up to where a loss cut it. */
static void iv_charge(struct account *a, struct acct_closed *e)
{
	struct acct_thread *th = &a->threads[e->thread];
	uint64_t out = e->out, end = e->end, wake = e->wake, d;
	struct profile_meta *meta = a->meta;
	enum state_layer by;
	enum counter cnt;
	unsigned rt;

	/* records were lost meanwhile: it may have run (and waited again)
	 * where they were, so only its time up to the loss is known to be
	 * this wait's, in its state; the rest is not charged */
	if (e->cut) {
		meta->iv_lost_cut++;
		meta->iv_lost_cut_ns += clip_from(a, e->lo, end, e->ended);
		/* a waking after the loss may be of a later wait */
		if (wake > end) {
			e->verdict[STATE_BY_WAKEUP] = -1;
			e->rule_wake = 0;
			e->wake_generic = false;
		}
	}
	if (wake < out || wake > end)
		wake = 0;
	d = clip_from(a, e->lo, out, end);
	if (e->how == ACCT_IV_AT_END) {
		meta->iv_open_ns += d;
		th->open_at_end++;
	}
	/* runnable from the switch-out (preempted, or yielding): waiting for
	 * a CPU all along, whatever its state is judged for */
	if (e->runnable) {
		th->delay_ns += d;
	} else if (wake) {
		th->blocked_ns += clip_from(a, e->lo, out, wake);
		th->delay_ns += clip_from(a, e->lo, wake, end);
	} else {
		th->blocked_ns += d;
	}
	if (iv_outside(a, e->lo, out, end, d))
		return;
	if (e->no_stack)
		no_stack_count(a, e->no_stack);
	/* a timeout far longer than the wait (twice as long, or longer than
	 * what the recording saw of it) did not end it: the wait was not
	 * timed, whatever the call allowed */
	if (e->verdict[STATE_BY_ARGS] == CNT_TIMED_SLEEP && e->timeout_ns &&
	    e->timeout_ns / 2 > (wake ? wake : end) - out)
		e->verdict[STATE_BY_ARGS] = e->untimed;
	cnt = acct_decide(e->verdict, &by);
	th->out_cnt = cnt;
	meta->decided_count[by]++;
	meta->decided_ns[by] += d;
	if (e->state != 'R' && ((by == STATE_BY_KERNEL && e->kernel_any) ||
				(by == STATE_BY_WAKEUP && e->wake_generic) ||
				(by == STATE_BY_ARGS && e->args_unsaid && cnt == CNT_SLEEP))) {
		meta->thin_count[cnt]++;
		meta->thin_ns[cnt] += d;
	}
	if (by == STATE_BY_ARGS)
		meta->iv_by_syscall++;
	rt = by == STATE_BY_PROGRAM ? e->rule_prog : by == STATE_BY_WAKEUP ? e->rule_wake : 0;
	if (rt && rt <= a->rules.nrt) {
		a->rt_count[rt - 1]++;
		a->rt_ns[rt - 1] += d;
	}
	th->c.count[cnt]++;
	th->c.ns[cnt] += d;
	if (e->no_stack) {
		meta->iv_no_stack_ns += d;
		th->no_stack.count[cnt]++;
		th->no_stack.ns[cnt] += d;
	}
	if (e->node != TREE_NONE)
		acct_count_at(a, e->node, cnt, 1, d, out, end, th->tid);
	if (wake && e->state != 'R' && e->node != TREE_NONE && e->waker_node != TREE_NONE)
		offwake_add(a, e->node, e->waker_node, cnt, clip_from(a, e->lo, out, wake), out,
			    th->tid);
}

/* Restore the heap order below @i of a->cpu_heap. */
static void cpu_heap_down(struct account *a, size_t i)
{
	struct acct_cpu_key *h = a->cpu_heap, k = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= a->nr_cpu_heap)
			break;
		if (c + 1 < a->nr_cpu_heap && h[c + 1].last < h[c].last)
			c++;
		if (k.last <= h[c].last)
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = k;
}

/* Make a->cpu_heap anew from every CPU seen; false: no memory. */
static bool cpu_heap_make(struct account *a)
{
	struct acct_cpu_key *h = realloc(a->cpu_heap, (a->nr_cpus ? a->nr_cpus : 1) * sizeof(*h));
	size_t n = 0;

	if (!h)
		return false;
	for (size_t i = 0; i < a->nr_cpus; i++)
		if (a->cpus[i].last)
			h[n++] = (struct acct_cpu_key){ a->cpus[i].last, (uint32_t)i };
	a->cpu_heap = h;
	a->nr_cpu_heap = n;
	for (size_t i = n / 2; i-- > 0;)
		cpu_heap_down(a, i);
	a->cpu_heap_stale = false;
	return true;
}

/*
 * Where a LOST record still to come could cut an interval at the earliest:
 * the earliest last record of the CPUs seen (a LOST record cuts at its
 * CPU's last record before it, and each CPU's comes later). A CPU not seen
 * yet is not waited for: its first record comes after all that was taken.
 *
 * The heap's keys are each CPU's last record when it was last looked at,
 * never later than its last now: while the top's key is out of date it is
 * brought up and sunk, and a top whose key is its CPU's last is the
 * earliest. Each refresh follows a record of that CPU, so a recording pays
 * O(log CPUs) at most per record, not a pass over every CPU per wait.
 */
static uint64_t cpus_seen_from(struct account *a)
{
	if (a->cpu_heap_stale && !cpu_heap_make(a)) {
		uint64_t lo = UINT64_MAX;   /* no memory: the pass over every CPU */

		for (size_t i = 0; i < a->nr_cpus; i++)
			if (a->cpus[i].last && a->cpus[i].last < lo)
				lo = a->cpus[i].last;
		return lo;
	}
	while (a->nr_cpu_heap) {
		struct acct_cpu_key *top = &a->cpu_heap[0];
		uint64_t last = a->cpus[top->cpu].last;

		if (top->last == last)
			return last;
		top->last = last;
		cpu_heap_down(a, 0);
	}
	return UINT64_MAX;
}

/* The held interval @i places after the oldest. */
static struct acct_closed *held(const struct account *a, size_t i)
{
	return &a->closed[(a->closed_head + i) & (a->cap_closed - 1)];
}

void acct_iv_settle(struct account *a, bool all)
{
	while (a->nr_closed) {
		struct acct_closed *e = held(a, 0);

		if (!all && e->end > a->closed_safe) {
			a->closed_safe = cpus_seen_from(a);
			if (e->end > a->closed_safe)
				break;
		}
		iv_charge(a, e);
		a->closed_head = (a->closed_head + 1) & (a->cap_closed - 1);
		a->nr_closed--;
	}
	if (all) {
		free(a->closed);
		a->closed = NULL;
		a->cap_closed = a->closed_head = 0;
	}
}

/*
 * Hold @e's charge: a loss reported later may cut it. Return: false where
 * it cannot be held (no memory), and is to be charged now.
 */
static bool iv_hold(struct account *a, const struct acct_closed *e)
{
	if (a->nr_closed == a->cap_closed && a->cap_closed < ACCT_CLOSED_MAX) {
		size_t cap = a->cap_closed ? a->cap_closed * 2 : 64;
		struct acct_closed *n = malloc(cap * sizeof(*n));

		if (!n)
			return false;
		for (size_t i = 0; i < a->nr_closed; i++)
			n[i] = *held(a, i);
		free(a->closed);
		a->closed = n;
		a->cap_closed = cap;
		a->closed_head = 0;
	}
	/* as many held as allowed: the oldest is charged as cut so far */
	if (a->nr_closed == a->cap_closed) {
		iv_charge(a, held(a, 0));
		a->closed_head = (a->closed_head + 1) & (a->cap_closed - 1);
		a->nr_closed--;
	}
	*held(a, a->nr_closed++) = *e;
	return true;
}

void acct_iv_close(struct account *a, struct acct_thread *th, uint64_t end,
		   enum acct_iv_end how)
{
	struct profile_meta *meta = a->meta;
	struct acct_closed e;

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
	if (end < th->out_time)
		end = th->out_time;
	th->in_time = how == ACCT_IV_AT_END ? 0 : end;
	if (how == ACCT_IV_INFERRED || how == ACCT_IV_APPROX)
		th->bounded++;
	switch (how) {
	case ACCT_IV_EXACT: meta->iv_exact++; break;
	case ACCT_IV_INFERRED: meta->iv_inferred++; break;
	case ACCT_IV_APPROX: meta->iv_approx++; break;
	case ACCT_IV_AT_END: meta->iv_open_at_end++; break;
	}
	if (th->filtered) {
		th->lost_cut = false;
		return;
	}
	e = (struct acct_closed){
		.out = th->out_time, .end = end, .ended = end, .wake = th->wake_time,
		.lo = window_start(a), .timeout_ns = th->timeout_ns,
		.thread = (uint32_t)(th - a->threads), .node = th->out_node,
		.waker_node = th->waker_node, .untimed = th->untimed,
		.rule_prog = th->rule_prog, .rule_wake = th->rule_wake, .state = th->out_state,
		.how = (uint8_t)how, .no_stack = th->out_no_stack, .runnable = th->out_runnable,
		.kernel_any = th->kernel_any, .wake_generic = th->wake_generic,
		.args_unsaid = th->args_unsaid,
	};
	memcpy(e.verdict, th->verdict, sizeof(e.verdict));
	/* records were lost while it was open: charged up to the loss */
	if (th->lost_cut && th->lost_end < end) {
		e.end = th->lost_end;
		e.cut = true;
	}
	th->lost_cut = false;
	/*
	 * A loss reported later may still cut it: a LOST record is its CPU's
	 * first record after the records it lost, and that CPU's last record
	 * before them may be earlier than this switch-in - the thread may
	 * have run there meanwhile. Its charge waits until every CPU seen has
	 * a record from its end on (none can report a loss before then any
	 * more); at the end, all is charged.
	 */
	if (how != ACCT_IV_AT_END && a->nr_cpus) {
		if (e.end > a->closed_safe)
			a->closed_safe = cpus_seen_from(a);
		if (e.end > a->closed_safe) {
			/* the first charge sets slice 0's start, as it would have now */
			if (a->opts->slice_ns && !a->slice_origin && e.node != TREE_NONE &&
			    !iv_outside(a, e.lo, e.out, e.end, clip_from(a, e.lo, e.out, e.end)))
				a->slice_origin = a->first_time ? a->first_time : e.out;
			if (iv_hold(a, &e)) {
				acct_iv_settle(a, false);
				return;
			}
		}
	}
	iv_charge(a, &e);
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

/*
 * @th, whose run a loss cut, is seen again at @t (running, leaving its CPU
 * or exiting, or the recording ends): what it did from the cut to here is
 * not known, and counted as not charged.
 */
static void run_uncut(struct account *a, struct acct_thread *th, uint64_t t)
{
	if (!th->run_cut)
		return;
	th->run_cut = false;
	if (!th->filtered)
		a->meta->run_lost_cut_ns += clip_from(a, window_start(a), th->run_cut_at, t);
}

void acct_run_begin(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu)
{
	if (th->off || th->exited)
		return;
	th->run_cpu = cpu;
	if (th->in_time)
		return;
	run_uncut(a, th, t);
	th->in_time = t;
}

/* @th leaves the CPU at @t: what it ran since its switch-in is measured. */
void acct_run_end(struct account *a, struct acct_thread *th, uint64_t t)
{
	if (th->in_time && t > th->in_time && !th->filtered)
		th->run_ns += clip_from(a, window_start(a), th->in_time, t);
	th->in_time = 0;
	run_uncut(a, th, t);
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
	uint64_t from = c ? c->last : a->rec_last;

	/*
	 * The intervals the lost records may have ended: any thread off CPU
	 * since before that CPU's last record may have been switched in on
	 * it (a woken thread runs where it is sent), run and switched out
	 * again there, its records lost; where that CPU's records are whole
	 * it cannot have. Each is charged up to that CPU's last record before
	 * the loss (of a loss naming no CPU - a per-task recording's records
	 * may carry none - the last record of any): those open now, and those
	 * closed since then (switched in on another CPU while these records
	 * were being lost: the LOST record comes after them in time), whose
	 * charge waits for it (acct_iv_close()). Not of a LOST_SAMPLES
	 * record: samples the kernel could not take, or perf record's count
	 * of them at the end (of time 0), which says nothing of when or where.
	 */
	for (size_t i = 0; ev->type == PERF_RECORD_LOST && i < a->nr_threads; i++) {
		struct acct_thread *th = &a->threads[i];

		if (!th->off || th->lost_cut)
			continue;
		th->lost_cut = true;
		th->lost_end = from;
		if (th->lost_end < th->out_time)
			th->lost_end = th->out_time;
	}
	for (size_t i = 0; ev->type == PERF_RECORD_LOST && i < a->nr_closed; i++) {
		struct acct_closed *e = held(a, i);
		uint64_t to = from > e->out ? from : e->out;

		if (to < e->end) {
			e->end = to;
			e->cut = true;
		}
	}
	/*
	 * The runs the lost records may have ended: a thread running on that
	 * CPU (its last switch-in, or its last sample, there; of a loss naming
	 * no CPU, or of a thread whose CPU is not known, any running thread)
	 * may have switched out, waited, or exited where the records were
	 * lost. Its run is charged up to the CPU's last record before the
	 * loss, and no further until new evidence that it runs (a sample of
	 * it, a switch-in); what ends it then (a switch-out, its exit, the
	 * end) leaves the time from the cut uncharged, counted
	 * (acct_run_end()). A thread running on another CPU, whose records
	 * are whole, is not cut: it could not have left its CPU unseen.
	 */
	for (size_t i = 0; ev->type == PERF_RECORD_LOST && i < a->nr_threads; i++) {
		struct acct_thread *th = &a->threads[i];
		uint64_t to;

		if (th->off || !th->in_time || th->exited ||
		    (c && th->run_cpu != ev->sample.cpu && th->run_cpu != UINT32_MAX))
			continue;
		to = from > th->in_time ? from : th->in_time;
		acct_run_end(a, th, to);
		th->run_cut = true;
		th->run_cut_at = to;
		if (!th->filtered)
			a->meta->run_lost_cut++;
	}
	a->lost_all++;
	if (c)
		c->lost++;
	else
		a->lost_any++;
}
