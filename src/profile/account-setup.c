/* SPDX-License-Identifier: MIT */
/*
 * account-setup.c - what each event of the recording is for (on-CPU
 * samples, sched_switch, wakeups, off-CPU time, or nothing), how its
 * samples weigh, and its prev_state letters; the accounting set up and
 * released.
 */
#include "priv.h"
#include "syscall.h"

#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/log.h"

#define PERF_COUNT_SW_CPU_CLOCK 0
#define PERF_COUNT_SW_TASK_CLOCK 1
#define PERF_COUNT_SW_DUMMY 9
#define PERF_COUNT_SW_BPF_OUTPUT 10

/* --- prev_state letters --- */

/* prev_state letters of recent kernels, for formats without a flags table */
static const struct perf_tp_flag default_flags[] = {
	{ 0x1, 'S' }, { 0x2, 'D' }, { 0x4, 'T' }, { 0x8, 't' },
	{ 0x10, 'X' }, { 0x20, 'Z' }, { 0x40, 'P' }, { 0x80, 'I' },
};

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

char acct_state_letter(const struct acct_src *src, uint64_t st)
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

/* --- what each event is for --- */

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

/* acct_src() the first time: room for @e's source, set up. */
struct acct_src *acct_src_make(struct account *a, const struct perf_evsel *e)
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

/* --- set-up --- */

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
	if (hdr->sample_time_last >= hdr->sample_time_first)
		a->hdr_last = hdr->sample_time_last;
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
	free(a->cpu_heap);
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
	free(a->closed);
}
