/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `perfport report`: the profile for people at a terminal
 * (top functions, a caller tree, threads by state) or as JSON for scripts.
 * It only reads the finished profile.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../profile/profile.h"
#include "../util/error.h"
#include "../util/log.h"
#include "advice.h"
#include "cli.h"
#include "profopts.h"
#include "report.h"

struct report_opts {
	unsigned counters;           /* bit per counter to show; 0: every one present */
	unsigned top;
	double min_percent;
	enum sort_key sort;
	bool json, no_tree, no_threads, wakers, callee;
	enum inline_rule inlined;
};

static enum counter sort_counter;
static bool sort_by_total;

static int func_cmp(const void *pa, const void *pb)
{
	const struct func_sum *a = pa, *b = pb;
	uint64_t x = sort_by_total ? a->total.ns[sort_counter] : a->self.ns[sort_counter];
	uint64_t y = sort_by_total ? b->total.ns[sort_counter] : b->self.ns[sort_counter];

	if (x != y)
		return x > y ? -1 : 1;
	return a->frame < b->frame ? -1 : a->frame > b->frame;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* What the on-CPU sources weigh in: "s", "events" (each is a count of
 * events: perf record -c N, or a counter read by a group), or both. */
static const char *unit_of(const struct profile *p)
{
	bool ns = false, events = false;

	for (size_t i = 0; i < p->meta.nr_sources; i++) {
		const struct profile_source *s = &p->meta.sources[i];

		if (s->role != ROLE_ON_CPU || !s->samples)
			continue;
		if (strcmp(s->unit, "ns"))
			events = true;
		else
			ns = true;
	}
	if (events && ns)
		return "mixed units: see the events";
	return events ? "events" : "s";
}

/* A value of counter @c as shown: seconds, or on-CPU events as counted
 * (mixed units stay in the seconds column: their sum has no unit). */
static double amount(const struct profile *p, enum counter c, uint64_t v)
{
	if (c == CNT_ON_CPU && !strcmp(unit_of(p), "events"))
		return (double)v;
	return secs(v);
}

/* What decided the off-CPU states (their times add up to the off-CPU
 * total), and the runtimes whose rules decided some. */
static void print_decided(const struct profile_meta *m)
{
	bool any = false;

	for (int l = 0; l < STATE_BY_COUNT; l++)
		any = any || m->decided_count[l];
	if (!any || m->offcpu_simple)
		return;
	printf("# off-CPU states decided by:");
	for (int l = 0, n = 0; l < STATE_BY_COUNT; l++)
		if (m->decided_count[l])
			printf("%s %s %.3f s (%" PRIu64 ")", n++ ? "," : "",
			       state_layer_name((enum state_layer)l), secs(m->decided_ns[l]),
			       m->decided_count[l]);
	putchar('\n');
	for (size_t i = 0; i < m->nr_runtimes; i++) {
		const struct profile_runtime *rt = &m->runtimes[i];

		if (rt->count)
			printf("# runtime %s%s%s%s: its rules decided %.3f s (%" PRIu64 " intervals)%s%s\n",
			       rt->name, rt->module ? " (" : "", rt->module ? rt->module : "",
			       rt->module ? ")" : "", secs(rt->ns), rt->count,
			       rt->note ? "; " : "", rt->note ? rt->note : "");
	}
}

/*
 * The off-CPU time whose state rests on thin evidence (the kernel's
 * catch-all for the thread's state, or only that another task woke it),
 * per state, and what would decide it better, from what the recording
 * lacks.
 */
static void print_thin(const struct profile_meta *m)
{
	uint64_t all = 0;
	int n = 0;

	for (int c = 0; c < CNT_COUNT; c++)
		all += m->thin_ns[c];
	if (!all || m->offcpu_simple)
		return;
	printf("# off-CPU states on thin evidence (no program's rule, no specific waker, no "
	       "system call that says what was awaited; the kernel's default for the state, "
	       "only that another task woke it, or only that a futex or semaphore wait had "
	       "no timeout: a lock's and an event's look alike):");
	for (int c = 0; c < CNT_COUNT; c++)
		if (m->thin_ns[c])
			printf("%s %s %.3f s", n++ ? "," : "", counter_name(c), secs(m->thin_ns[c]));
	if (!m->stack_copies)
		printf("; to decide them, record with --call-graph dwarf (the C library keeps "
		       "no frame pointers: -g loses the program's frames above a wait)%s",
		       m->wakers ? "" : " and -e sched:sched_waking");
	else if (!m->wakers)
		printf("; to decide them, add -e sched:sched_waking with a call graph (what "
		       "ended each wait)");
	else
		printf("; report --sort state lists where they waited (the program's innermost "
		       "function): a rule file naming those (--state-rules, docs/wait-states.md) "
		       "decides them");
	putchar('\n');
}

/*
 * The waits in a runtime's park whose callers no name tells apart (the
 * interpreter's code, a JIT's without a map): their time by state, that no
 * rule of the runtime could decide them, and what names their callers.
 */
static void print_parks(const struct profile *p)
{
	struct advice_parks k;
	const struct profile_park *st;
	uint64_t n = 0, ns = 0;
	int j = 0;

	if (p->meta.offcpu_simple || !advice_parks(p, &k))
		return;
	st = k.site;
	for (int c = 0; c < CNT_COUNT; c++) {
		n += k.count[c];
		ns += k.ns[c];
	}
	if (n) {
		printf("# off-CPU waits under interpreted code: %" PRIu64 " waits in %s's %s "
		       "(%.3f s:", n, st->runtime, st->park, secs(ns));
		for (int c = 0; c < CNT_COUNT; c++)
			if (k.count[c])
				printf("%s %s %.3f s, %.1f%% of it", j++ ? "," : "", counter_name(c),
				       secs(k.ns[c]), p->total[0].ns[c] ?
				       100.0 * (double)k.ns[c] / (double)p->total[0].ns[c] : 0.0);
		printf(") whose callers run in the interpreter, which its perf map names as one "
		       "('%s'): no rule for %s waits could tell them apart, the system call's "
		       "arguments, the kernel's default or the waker decided; to decide them, %s\n",
		       st->interpreted, st->waits, st->compile);
	}
	if (k.nomap_count)
		printf("# off-CPU waits under unnamed JIT code: %" PRIu64 " waits in %s's %s "
		       "(%.3f s) whose callers are a JIT's code without a perf map: no rule for %s "
		       "waits could tell them apart; to decide them, %s\n", k.nomap_count,
		       st->runtime, st->park, secs(k.nomap_ns), st->waits, st->map);
}

static void print_header(const struct profile *p, const char *path, enum inline_rule rule)
{
	const struct profile_meta *m = &p->meta;
	const struct profile_counts *t = &p->total[0];
	char a[32], b[32];
	/* the span the profile describes: the samples', within --time */
	uint64_t w0 = m->start_ns + (m->window_lo > m->first_time ? m->window_lo - m->first_time : 0);
	uint64_t w1 = m->start_ns + (m->window_hi > m->first_time ? m->window_hi - m->first_time : 0);
	time_t s0 = (time_t)(w0 / 1000000000), s1 = (time_t)(w1 / 1000000000);
	struct tm tm;

	strftime(a, sizeof(a), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&s0, &tm));
	strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&s1, &tm));
	printf("# perfport report of '%s'\n", path);
	printf("# host %s, kernel %s, %s, %" PRIu32 " CPUs, perf %s\n",
	       m->hostname ? m->hostname : "?", m->osrelease ? m->osrelease : "?",
	       m->arch ? m->arch : "?", m->nr_cpus, m->perf_version ? m->perf_version : "?");
	printf("# time %s .. %s (%.3f s", a, b, secs(w1 > w0 ? w1 - w0 : 0));
	if (m->window_lo > m->first_time || m->window_hi < m->last_time)
		printf(", --time's part of %.3f s", secs(m->last_time - m->first_time));
	printf(", %s)\n", profile_time_source_name(m->time_source));
	for (size_t i = 0; i < m->nr_sources; i++) {
		const struct profile_source *s = &m->sources[i];

		if (s->left_out && s->recorded) {
			printf("# event %s: left out, %" PRIu64 " samples recorded (the on-CPU profile "
			       "counts one event; --event '%s' counts this one)\n", s->name,
			       s->recorded, s->name);
			continue;
		}
		if (s->role == ROLE_IGNORED && !s->samples)
			continue;
		printf("# event %s: %s, %" PRIu64 " samples", s->name, profile_role_name(s->role),
		       s->samples);
		if (s->role == ROLE_ON_CPU && !s->freq && !s->period_or_freq)
			printf(", read by its group's samples, weight in %s", s->unit);
		else if (s->role == ROLE_ON_CPU)
			printf(", %s %" PRIu64 "%s, weight in %s", s->freq ? "frequency" : "period",
			       s->period_or_freq, s->freq ? " Hz" : "", s->unit);
		putchar('\n');
	}
	if (m->iv_exact + m->iv_inferred + m->iv_approx + m->iv_open_at_end)
		printf("# off-CPU intervals: %" PRIu64 " ended by a switch-in, %" PRIu64
		       " bounded (switch-in missing), %" PRIu64 " approximated by the next sample, %"
		       PRIu64 " open at the end (%.3f s)%s\n", m->iv_exact, m->iv_inferred,
		       m->iv_approx, m->iv_open_at_end, secs(m->iv_open_ns),
		       m->offcpu_simple ? "; states: simple" : "");
	print_decided(m);
	print_thin(m);
	print_parks(p);
	if (m->iv_no_stack) {
		char line[1024];

		advice_no_stack(m, line, sizeof(line));
		printf("# off-CPU waits without their stack: %s\n", line);
	}
	if (m->lost) {
		char mm[32];

		advice_mmap(m->cmdline, mm, sizeof(mm));
		printf("# lost: %" PRIu64 " samples the kernel could not write (its buffer was "
		       "full): their on-CPU time is missing, and the switches among them were "
		       "charged without their stacks", m->lost);
		if (m->iv_lost_cut)
			printf("; %.3f s of %" PRIu64 " waits open across a loss is charged to no "
			       "state (the thread may have run where the records were lost)",
			       (double)m->iv_lost_cut_ns / 1e9, m->iv_lost_cut);
		if (m->run_lost_cut)
			printf("; %.3f s of %" PRIu64 " runs on a CPU whose records were lost is "
			       "not charged as run (the thread may have left its CPU there)",
			       (double)m->run_lost_cut_ns / 1e9, m->run_lost_cut);
		printf(" (record with %s, %s)\n", mm,
		       m->cmdline && strstr(m->cmdline, "dwarf") ? "a lower -F or fewer events" :
		       "or fewer events");
	}
	{
		struct advice_list adv;

		/* what changes the numbers' meaning (lost samples: the line above) */
		advice_of_profile(p, &adv);
		for (size_t i = 0; i < adv.n; i++)
			if (adv.kind[i] != ADVICE_LOST)
				printf("# warning: %s\n", adv.text[i]);
	}
	if (m->iv_syscall_no_regs)
		printf("# off-CPU states: %" PRIu64 " in a system call whose arguments were not "
		       "recorded, decided by the rules (record with --call-graph dwarf or "
		       "--user-regs=di,si,dx,r10,r8,r9 on x86_64 to read them)\n", m->iv_syscall_no_regs);
	{
		bool sampled = false, stacks = false;
		const char *bare = NULL;

		for (size_t i = 0; i < m->nr_sources; i++)
			if (m->sources[i].samples && (m->sources[i].role == ROLE_ON_CPU ||
						      m->sources[i].role == ROLE_SCHED_SWITCH)) {
				sampled = true;
				stacks = stacks || m->sources[i].stacks;
				if (m->sources[i].role == ROLE_SCHED_SWITCH && !m->sources[i].stacks)
					bare = m->sources[i].name;
			}
		if (sampled && !stacks)
			printf("# stacks: none recorded (perf record without -g or --call-graph): each "
			       "function is shown without its callers, and off-CPU states are decided "
			       "without the stack\n");
		else if (bare)
			printf("# stacks: none recorded with %s: off-CPU time is charged to where "
			       "the kernel switched, and its states are decided without the stack "
			       "(a lock wait counts as sleep)\n", bare);
	}
	printf("# functions: one line each, its inlined and called code together; %s\n",
	       rule == INLINE_TO_CALLER ? "code inlined into another function is charged to that one, "
	       "as the symbol table and perf report --no-children have it (--inlined own: to itself)"
	       : "code inlined into another function is charged to itself (--inlined own; "
	       "perf report --no-children charges it to the function it was inlined into)");
	printf("# totals:");
	for (int c = 0; c < CNT_COUNT; c++)
		if (t->count[c])
			printf("  %s %.3f %s (%" PRIu64 ")", counter_name(c), amount(p, c, t->ns[c]),
			       c == CNT_ON_CPU ? unit_of(p) : "s", t->count[c]);
	putchar('\n');
}

/* A module's line: its file name. */
static void module_label(const struct profile *p, uint32_t f, char *buf, size_t len)
{
	const struct profile_frame *fr = &p->frames[f];

	if (!fr->module || fr->flags & FRAME_F_SYNTHETIC)
		snprintf(buf, len, "%s", fr->module ? fr->module : "[no module]");
	else
		snprintf(buf, len, "%s", fr->module);
}

/*
 * An off-CPU line's label: a function of the program, or - where the
 * stacks end in the C library, so no program frame was recorded (-g
 * through a library without frame pointers) - says so, not as if the
 * library's function were the program's. Returns whether it did.
 */
static bool wait_label(const struct profile *p, uint32_t f, char *buf, size_t len)
{
	const struct profile_frame *fr = &p->frames[f];
	const char *mod = fr->module ? strrchr(fr->module, '/') : NULL;

	if (report_is_program(fr) || !report_is_user(fr)) {
		report_function_label(p, f, buf, len);
		return false;
	}
	mod = mod ? mod + 1 : fr->module;
	snprintf(buf, len, "[no program frame: the stacks end in %s, at %s]", mod ? mod : "?",
		 fr->function);
	return true;
}

#define WAIT_LABEL_NOTE "\n# [no program frame]: these stacks end in the C library (frame-pointer " \
	"stacks stop in a library built without them): record with --call-graph dwarf to see the " \
	"program's function\n"

static void print_top(const struct profile *p, const struct func_sum *fs, size_t nr,
		      enum counter c, const struct report_opts *ro)
{
	struct func_sum *sorted = malloc((nr + 1) * sizeof(*sorted));
	uint64_t whole = p->total[0].ns[c];
	const char *what = ro->sort == SORT_MODULE ? "modules" : "functions";
	char label[512];
	bool noted = false;

	if (!sorted)
		return;
	memcpy(sorted, fs, nr * sizeof(*sorted));
	for (int by_total = 0; by_total < 2; by_total++) {
		sort_counter = c;
		sort_by_total = by_total;
		qsort(sorted, nr, sizeof(*sorted), func_cmp);
		printf("\n## %s: top %s by %s%s\n", counter_name(c), what, by_total ? "total" : "self",
		       !by_total && report_offcpu(c) ? " (where the threads waited: the program's "
		       "innermost function, outside the C library; the kernel's path is in the "
		       "trees)" : "");
		printf("%8s %10s %8s %10s  %s\n", "self%", "self", "total%", "total",
		       ro->sort == SORT_MODULE ? "module" : "function");
		for (size_t i = 0, shown = 0; i < nr && shown < ro->top; i++) {
			const struct func_sum *f = &sorted[i];
			uint64_t v = by_total ? f->total.ns[c] : f->self.ns[c];

			if (!v || p->frames[f->frame].flags & (FRAME_F_PROCESS | FRAME_F_THREAD))
				continue;
			shown++;
			if (ro->sort == SORT_MODULE)
				module_label(p, f->frame, label, sizeof(label));
			else if (!by_total && report_offcpu(c))
				noted |= wait_label(p, f->frame, label, sizeof(label));
			else
				report_function_label(p, f->frame, label, sizeof(label));
			printf("%7.2f%% %10.3f %7.2f%% %10.3f  %s\n", report_pct(f->self.ns[c], whole),
			       amount(p, c, f->self.ns[c]), report_pct(f->total.ns[c], whole),
			       amount(p, c, f->total.ns[c]),
			       label);
		}
		if (noted && !by_total)
			printf(WAIT_LABEL_NOTE);
		noted = false;
	}
	free(sorted);
}

static void print_threads(const struct profile *p)
{
	printf("\n## threads (seconds): lifetime within the recording; run: on CPU from its "
	       "switches (- where none were recorded); on-cpu and idle: sampled; preempted to "
	       "timed-sleep: off-CPU time by state; blocked: switch-out to wakeup; sch-delay: "
	       "runnable, waiting for a CPU\n"
	       "%8s %8s %-16s %9s %9s", "pid", "tid", "comm", "lifetime", "run");
	for (int c = 0; c < CNT_COUNT; c++)
		printf(" %11s", counter_name(c));
	printf(" %9s %9s\n", "blocked", "sch-delay");
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct profile_thread *t = &p->threads[i];

		printf("%8" PRIu32 " %8" PRIu32 " %-16.16s %9.3f", t->pid, t->tid,
		       t->comm ? t->comm : "?", secs(t->end - t->start));
		if (t->run_known)
			printf(" %9.3f", secs(t->run_ns));
		else
			printf(" %9s", "-");
		for (int c = 0; c < CNT_COUNT; c++)
			printf(" %11.3f", secs(t->c.ns[c]));
		printf(" %9.3f %9.3f\n", secs(t->blocked_ns), secs(t->delay_ns));
	}
}

/* --- wakers --- */

/* One off-wake stack: who blocked where, and who woke it. */
struct wake_pair {
	const char *blocked;          /* the function named for the blocked side (side_name()) */
	char waker[256];              /* and for the waker's (a copy: pairs are sorted by value) */
	int counter;
	uint64_t ns, count;
	uint32_t node;                /* the off-wake tree's leaf */
};

/* A frame of the program rather than of a shared library (libc, libstdc++...). */

/* Kernel frames of the wakeup machinery itself, never "the waker". */
static bool is_wake_helper(const char *fn)
{
	static const char *const prefixes[] = {
		"try_to_wake_up", "ttwu", "wake_up", "__wake_up", "default_wake_function",
		"autoremove_wake_function", "woken_wake_function", "wake_q", "__wake_q",
		"pollwake", "ep_poll_callback", "wake_page_function", "[unknown]",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* A kernel frame of interrupt handling: a wakeup under it was the
 * interrupt's (a timer's, a device's), not the interrupted thread's. */
static bool is_interrupt(const char *fn)
{
	return strstr(fn, "_interrupt") || !strncmp(fn, "asm_sysvec", 10) ||
	       !strncmp(fn, "__sysvec", 8) || !strncmp(fn, "sysvec_", 7) ||
	       !strncmp(fn, "irq_exit", 8) || !strncmp(fn, "__do_softirq", 12) ||
	       !strncmp(fn, "handle_softirqs", 15) || !strncmp(fn, "__irq_exit", 10) ||
	       !strncmp(fn, "el1_interrupt", 13) || !strncmp(fn, "el0_interrupt", 13);
}

/*
 * The function to name for one side of the off-wake stack @path (@k
 * frames, the separator at @sep): the blocked side (@waker false, read from
 * the separator towards the root) or the waker's (read leaf first): the
 * program's innermost frame, else a library's, else the first kernel frame
 * that is no wake helper; a wakeup from interrupt context is named by its
 * kernel frame, with " [irq]", into @buf.
 */
static const char *side_name(const struct profile *p, const uint32_t *path, size_t k, size_t sep,
			     bool waker, char *buf, size_t len)
{
	const char *prog = NULL, *user = NULL, *kern = NULL;
	bool irq = false;

	for (size_t n = 0; n < (waker ? k - sep - 1 : sep); n++) {
		size_t i = waker ? sep + 1 + n : sep - 1 - n;
		const struct profile_frame *f = &p->waker_frames[path[i]];

		if (!prog && report_is_program(f))
			prog = f->function;
		if (!user && report_is_user(f))
			user = f->function;
		if ((f->flags & FRAME_F_KERNEL) && !kern && !is_wake_helper(f->function))
			kern = f->function;
		irq = irq || ((f->flags & FRAME_F_KERNEL) && is_interrupt(f->function));
	}
	if (waker && irq && kern) {
		snprintf(buf, len, "%s [irq]", kern);
		return buf;
	}
	return prog ? prog : user ? user : kern ? kern :
	       waker || !sep ? "[unknown]" : p->waker_frames[path[sep - 1]].function;
}

/* The frames of off-wake node @n, root first, into @path; their number. */
static size_t waker_path(const struct profile *p, uint32_t n, uint32_t *path, size_t max)
{
	size_t k = 0;

	for (uint32_t x = n; x && x != UINT32_MAX && k < max; x = p->waker_nodes[x].parent)
		path[k++] = p->waker_nodes[x].frame;
	for (size_t i = 0; i < k / 2; i++) {
		uint32_t t = path[i];

		path[i] = path[k - 1 - i];
		path[k - 1 - i] = t;
	}
	return k;
}

/* Every off-wake leaf as (blocked, waker) with its counts, for @mask counters. */
static struct wake_pair *wake_pairs(const struct profile *p, unsigned mask, size_t *nr)
{
	struct wake_pair *v;
	uint32_t path[4096];
	size_t need = 0;

	*nr = 0;
	for (uint32_t n = 1; n < p->nr_waker_nodes; n++)
		for (int c = 0; c < CNT_COUNT; c++)
			need += (mask & (1u << c)) && p->waker_self[n].count[c];
	v = calloc(need + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (uint32_t n = 1; n < p->nr_waker_nodes; n++) {
		size_t k = 0, sep = SIZE_MAX;

		if (!p->waker_self[n].count[CNT_LOCK] && !p->waker_self[n].count[CNT_IO] &&
		    !p->waker_self[n].count[CNT_SLEEP] && !p->waker_self[n].count[CNT_TIMED_SLEEP] &&
		    !p->waker_self[n].count[CNT_PREEMPTED])
			continue;
		k = waker_path(p, n, path, sizeof(path) / sizeof(path[0]));
		for (size_t i = 0; i < k && sep == SIZE_MAX; i++)
			if (p->waker_frames[path[i]].flags & FRAME_F_SYNTHETIC &&
			    !strcmp(p->waker_frames[path[i]].function, "--- woken by ---"))
				sep = i;
		if (sep == SIZE_MAX)
			continue;
		for (int c = 0; c < CNT_COUNT; c++) {
			if (!(mask & (1u << c)) || !p->waker_self[n].count[c])
				continue;
			struct wake_pair *w = &v[(*nr)++];

			w->counter = c;
			w->ns = p->waker_self[n].ns[c];
			w->count = p->waker_self[n].count[c];
			w->node = n;
			w->blocked = side_name(p, path, k, sep, false, NULL, 0);
			{
				char buf[256];

				snprintf(w->waker, sizeof(w->waker), "%s",
					 side_name(p, path, k, sep, true, buf, sizeof(buf)));
			}
		}
	}
	return v;
}

static int cmp_pair_name(const void *a, const void *b)
{
	const struct wake_pair *x = a, *y = b;
	int r = x->counter - y->counter;

	if (!r)
		r = strcmp(x->blocked, y->blocked);
	if (!r)
		r = strcmp(x->waker, y->waker);
	return r;
}

static int cmp_pair_ns(const void *a, const void *b)
{
	const struct wake_pair *x = a, *y = b;

	if (x->counter != y->counter)
		return x->counter - y->counter;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : cmp_pair_name(a, b);
}

/* Pairs of one (counter, blocked, waker) merged; sorted by time. */
static size_t merge_pairs(struct wake_pair *v, size_t nr)
{
	size_t k = 0;

	qsort(v, nr, sizeof(*v), cmp_pair_name);
	for (size_t i = 0; i < nr; i++) {
		if (k && !cmp_pair_name(&v[k - 1], &v[i])) {
			v[k - 1].ns += v[i].ns;
			v[k - 1].count += v[i].count;
		} else {
			v[k++] = v[i];
		}
	}
	qsort(v, k, sizeof(*v), cmp_pair_ns);
	return k;
}

static void print_wakers(const struct profile *p, const struct report_opts *ro)
{
	size_t nr = 0, shown = 0;
	struct wake_pair *v;
	int last = -1;

	if (!p->nr_waker_nodes) {
		printf("\n## wakers: none recorded (record -e sched:sched_waking with stacks, -g or "
		       "--call-graph dwarf)\n");
		return;
	}
	v = wake_pairs(p, ro->counters, &nr);
	if (!v)
		return;
	nr = merge_pairs(v, nr);
	for (size_t i = 0; i < nr; i++) {
		if (v[i].counter != last) {
			printf("\n## %s: blocked time by who ended it (switch-out to wakeup)\n"
			       "%12s %8s  %-40s %s\n", counter_name(v[i].counter), "blocked", "count",
			       "blocked in", "woken by");
			last = v[i].counter;
			shown = 0;
		}
		if (shown++ >= ro->top)
			continue;
		printf("%12.6f %8" PRIu64 "  %-40s %s\n", (double)v[i].ns / 1e9, v[i].count,
		       v[i].blocked, v[i].waker);
	}
	free(v);
}

static uint64_t offcpu_ns(const struct profile_counts *c, unsigned mask)
{
	uint64_t v = 0;

	for (int k = 0; k < CNT_COUNT; k++)
		if (report_offcpu((enum counter)k) && (mask & (1u << k)))
			v += c->ns[k];
	return v;
}

static unsigned by_state_mask;

static int by_state_cmp(const void *pa, const void *pb)
{
	const struct func_sum *a = pa, *b = pb;
	uint64_t x = offcpu_ns(&a->self, by_state_mask), y = offcpu_ns(&b->self, by_state_mask);

	if (x != y)
		return x > y ? -1 : 1;
	return a->frame < b->frame ? -1 : a->frame > b->frame;
}

/*
 * --sort state: one table for the off-CPU counters - where the threads
 * waited (the program's innermost function: report_is_program()) and in
 * which state, a column each.
 */
static void print_by_state(const struct profile *p, const struct func_sum *fs, size_t nr,
			   const struct report_opts *ro)
{
	struct func_sum *sorted = malloc((nr + 1) * sizeof(*sorted));
	unsigned mask = 0;
	uint64_t whole;
	char label[512];
	bool noted = false;

	if (!sorted)
		return;
	for (int c = 0; c < CNT_COUNT; c++)
		if (report_offcpu((enum counter)c) && (ro->counters & (1u << c)) && p->total[0].count[c])
			mask |= 1u << c;
	whole = offcpu_ns(&p->total[0], mask);
	if (!mask) {
		free(sorted);
		return;
	}
	memcpy(sorted, fs, nr * sizeof(*sorted));
	by_state_mask = mask;
	qsort(sorted, nr, sizeof(*sorted), by_state_cmp);
	printf("\n## off-CPU: where the threads waited, by state (seconds; the program's innermost "
	       "function, outside the C library)\n%8s %10s", "off%", "off-cpu");
	for (int c = 0; c < CNT_COUNT; c++)
		if (mask & (1u << c))
			printf(" %11s", counter_name((enum counter)c));
	printf("  function\n");
	for (size_t i = 0, shown = 0; i < nr && shown < ro->top; i++) {
		const struct func_sum *f = &sorted[i];
		uint64_t v = offcpu_ns(&f->self, mask);

		if (!v || p->frames[f->frame].flags & (FRAME_F_PROCESS | FRAME_F_THREAD))
			continue;
		shown++;
		noted |= wait_label(p, f->frame, label, sizeof(label));
		printf("%7.2f%% %10.3f", report_pct(v, whole), secs(v));
		for (int c = 0; c < CNT_COUNT; c++)
			if (mask & (1u << c))
				printf(" %11.3f", secs(f->self.ns[c]));
		printf("  %s\n", label);
	}
	if (noted)
		printf(WAIT_LABEL_NOTE);
	free(sorted);
}

static void print_text(const struct profile *p, const char *path, const struct report_opts *ro)
{
	size_t nr = 0;
	struct func_sum *fs = report_function_sums(p, ro->sort == SORT_MODULE ? SORT_MODULE : SORT_FUNCTION,
					    true, ro->inlined, &nr);

	print_header(p, path, ro->inlined);
	/* asked for and not there: said first, not after the whole report */
	if (ro->wakers && !p->nr_waker_nodes)
		print_wakers(p, ro);
	if (ro->sort == SORT_STATE && fs)
		print_by_state(p, fs, nr, ro);
	for (int c = 0; c < CNT_COUNT && fs; c++) {
		if (!(ro->counters & (1u << c)) || !p->total[0].count[c])
			continue;
		if (ro->sort != SORT_STATE || !report_offcpu((enum counter)c))
			print_top(p, fs, nr, (enum counter)c, ro);
		if (ro->no_tree)
			continue;
		if (ro->callee) {
			printf("\n## %s: callee tree (self, each function with its callers below it%s; "
			       "nodes under %.1f%% left out)\n", counter_name(c),
			       report_offcpu((enum counter)c) ? ", from where the threads waited" : "",
			       ro->min_percent);
			report_callee_tree(p, (enum counter)c, ro->min_percent, ro->inlined);
			continue;
		}
		printf("\n## %s: caller tree (total, largest first; nodes under %.1f%% left out)\n",
		       counter_name(c), ro->min_percent);
		report_caller_tree(p, (enum counter)c, ro->min_percent);
	}
	if (ro->wakers && p->nr_waker_nodes)
		print_wakers(p, ro);
	if (!ro->no_threads)
		print_threads(p);
	free(fs);
}

/* --- JSON --- */

static json_object *counts_json(const struct profile_counts *c, unsigned mask)
{
	json_object *o = json_object_new_object();

	for (int i = 0; i < CNT_COUNT; i++) {
		json_object *e;

		if (!(mask & (1u << i)) || (!c->count[i] && !c->ns[i]))
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "count", json_object_new_uint64(c->count[i]));
		json_object_object_add(e, "ns", json_object_new_uint64(c->ns[i]));
		json_object_object_add(o, counter_name(i), e);
	}
	return o;
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static json_object *meta_json(const struct profile *p)
{
	const struct profile_meta *m = &p->meta;
	json_object *o = json_object_new_object(), *a = json_object_new_array(), *iv;

	add_str(o, "hostname", m->hostname);
	add_str(o, "os_release", m->osrelease);
	add_str(o, "arch", m->arch);
	add_str(o, "perf_version", m->perf_version);
	add_str(o, "cmdline", m->cmdline);
	json_object_object_add(o, "nr_cpus", json_object_new_int64(m->nr_cpus));
	json_object_object_add(o, "start_ns", json_object_new_uint64(m->start_ns));
	json_object_object_add(o, "end_ns", json_object_new_uint64(m->end_ns));
	add_str(o, "time_source", profile_time_source_name(m->time_source));
	json_object_object_add(o, "first_time", json_object_new_uint64(m->first_time));
	json_object_object_add(o, "last_time", json_object_new_uint64(m->last_time));
	add_str(o, "group_by", m->group_by == GROUP_NONE ? "none" :
			       m->group_by == GROUP_PROCESS ? "process" : "thread");
	add_str(o, "offcpu_states", m->offcpu_simple ? "simple" : "rules");
	add_str(o, "state_rules", m->state_rules);
	for (size_t i = 0; i < m->nr_sources; i++) {
		const struct profile_source *s = &m->sources[i];
		json_object *e = json_object_new_object();

		add_str(e, "name", s->name);
		add_str(e, "role", profile_role_name(s->role));
		json_object_object_add(e, s->freq ? "frequency" : "period",
				       json_object_new_uint64(s->period_or_freq));
		add_str(e, "unit", s->unit);
		json_object_object_add(e, "samples", json_object_new_uint64(s->samples));
		json_object_object_add(e, "recorded", json_object_new_uint64(s->recorded));
		json_object_object_add(e, "left_out", json_object_new_boolean(s->left_out));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "events", a);
	iv = json_object_new_object();
	json_object_object_add(iv, "switch_in", json_object_new_uint64(m->iv_exact));
	json_object_object_add(iv, "bounded", json_object_new_uint64(m->iv_inferred));
	json_object_object_add(iv, "next_sample", json_object_new_uint64(m->iv_approx));
	json_object_object_add(iv, "open_at_end", json_object_new_uint64(m->iv_open_at_end));
	json_object_object_add(iv, "open_at_end_ns", json_object_new_uint64(m->iv_open_ns));
	json_object_object_add(iv, "without_stack", json_object_new_uint64(m->iv_no_stack));
	json_object_object_add(iv, "without_stack_lost", json_object_new_uint64(m->iv_no_stack_lost));
	json_object_object_add(iv, "lost_cut", json_object_new_uint64(m->iv_lost_cut));
	json_object_object_add(iv, "lost_cut_ns", json_object_new_uint64(m->iv_lost_cut_ns));
	json_object_object_add(iv, "without_stack_unrecorded",
			       json_object_new_uint64(m->iv_no_stack_unrecorded));
	json_object_object_add(iv, "without_stack_ns", json_object_new_uint64(m->iv_no_stack_ns));
	json_object_object_add(iv, "state_by_syscall", json_object_new_uint64(m->iv_by_syscall));
	json_object_object_add(iv, "syscall_without_regs",
			       json_object_new_uint64(m->iv_syscall_no_regs));
	json_object_object_add(o, "offcpu_intervals", iv);
	iv = json_object_new_object();
	json_object_object_add(iv, "lost_cut", json_object_new_uint64(m->run_lost_cut));
	json_object_object_add(iv, "lost_cut_ns", json_object_new_uint64(m->run_lost_cut_ns));
	json_object_object_add(o, "runs", iv);
	iv = json_object_new_object();
	for (int c = 0; c < CNT_COUNT; c++) {
		json_object *e;

		if (!m->thin_count[c])
			continue;
		e = json_object_new_object();
		json_object_object_add(e, "count", json_object_new_uint64(m->thin_count[c]));
		json_object_object_add(e, "ns", json_object_new_uint64(m->thin_ns[c]));
		json_object_object_add(iv, counter_name(c), e);
	}
	json_object_object_add(o, "states_thin", iv);
	{
		struct advice_parks k;

		iv = json_object_new_object();
		if (!m->offcpu_simple && advice_parks(p, &k)) {
			struct profile_counts pc = { { 0 }, { 0 } };

			memcpy(pc.count, k.count, sizeof(pc.count));
			memcpy(pc.ns, k.ns, sizeof(pc.ns));
			add_str(iv, "runtime", k.site->runtime);
			add_str(iv, "park", k.site->park);
			json_object_object_add(iv, "interpreted", counts_json(&pc, ~0u));
			json_object_object_add(iv, "jit_unnamed_count",
					       json_object_new_uint64(k.nomap_count));
			json_object_object_add(iv, "jit_unnamed_ns", json_object_new_uint64(k.nomap_ns));
			add_str(iv, "compile", k.site->compile);
			add_str(iv, "map", k.site->map);
		}
		json_object_object_add(o, "parks_unnamed_callers", iv);
	}
	iv = json_object_new_object();
	for (int l = 0; l < STATE_BY_COUNT; l++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "count", json_object_new_uint64(m->decided_count[l]));
		json_object_object_add(e, "ns", json_object_new_uint64(m->decided_ns[l]));
		json_object_object_add(iv, state_layer_name((enum state_layer)l), e);
	}
	json_object_object_add(o, "states_decided_by", iv);
	a = json_object_new_array();
	for (size_t i = 0; i < m->nr_runtimes; i++) {
		const struct profile_runtime *rt = &m->runtimes[i];
		json_object *e = json_object_new_object();

		add_str(e, "name", rt->name);
		add_str(e, "module", rt->module);
		add_str(e, "note", rt->note);
		json_object_object_add(e, "frames", json_object_new_uint64(rt->frames));
		json_object_object_add(e, "unnamed_frames", json_object_new_uint64(rt->unnamed));
		json_object_object_add(e, "count", json_object_new_uint64(rt->count));
		json_object_object_add(e, "ns", json_object_new_uint64(rt->ns));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "runtimes", a);
	json_object_object_add(o, "freq_trap", json_object_new_boolean(m->freq_trap));
	json_object_object_add(o, "samples_filtered", json_object_new_uint64(m->samples_filtered));
	json_object_object_add(o, "lost", json_object_new_uint64(m->lost));
	json_object_object_add(o, "stacks_unique", json_object_new_uint64(m->stacks_unique));
	json_object_object_add(o, "stacks_cached", json_object_new_uint64(m->stacks_cached));
	return o;
}

static void print_json(const struct profile *p, const struct report_opts *ro)
{
	json_object *root = json_object_new_object(), *a;
	size_t nr_fs;
	/* JSON: per frame, its own self time (the leaf's), as the nodes have it */
	struct func_sum *fs = report_function_sums(p, SORT_FRAME, false, INLINE_OWN, &nr_fs);

	json_object_object_add(root, "meta", meta_json(p));
	json_object_object_add(root, "totals", counts_json(&p->total[0], ro->counters));
	a = json_object_new_array();
	for (uint32_t i = 0; i < p->nr_frames; i++) {
		const struct profile_frame *f = &p->frames[i];
		json_object *e = json_object_new_object();

		add_str(e, "function", f->function);
		add_str(e, "module", f->module);
		add_str(e, "file", f->file);
		json_object_object_add(e, "line", json_object_new_int64(f->line));
		json_object_object_add(e, "flags", json_object_new_int64(f->flags));
		if (fs) {
			json_object_object_add(e, "self", counts_json(&fs[i].self, ro->counters));
			json_object_object_add(e, "total", counts_json(&fs[i].total, ro->counters));
		}
		json_object_array_add(a, e);
	}
	json_object_object_add(root, "frames", a);
	if (!ro->no_tree) {
		a = json_object_new_array();
		for (uint32_t i = 0; i < p->nr_nodes; i++) {
			json_object *e = json_object_new_object();

			json_object_object_add(e, "parent", p->nodes[i].parent == UINT32_MAX ? NULL :
					       json_object_new_int64(p->nodes[i].parent));
			json_object_object_add(e, "frame", p->nodes[i].frame == UINT32_MAX ? NULL :
					       json_object_new_int64(p->nodes[i].frame));
			json_object_object_add(e, "self", counts_json(&p->self[i], ro->counters));
			json_object_array_add(a, e);
		}
		json_object_object_add(root, "nodes", a);
	}
	a = json_object_new_array();
	for (size_t i = 0; i < p->nr_threads && !ro->no_threads; i++) {
		const struct profile_thread *t = &p->threads[i];
		json_object *e = json_object_new_object();

		json_object_object_add(e, "pid", json_object_new_int64(t->pid));
		json_object_object_add(e, "tid", json_object_new_int64(t->tid));
		add_str(e, "comm", t->comm);
		json_object_object_add(e, "start", json_object_new_uint64(t->start));
		json_object_object_add(e, "end", json_object_new_uint64(t->end));
		json_object_object_add(e, "forked", json_object_new_boolean(t->forked));
		json_object_object_add(e, "exited", json_object_new_boolean(t->exited));
		json_object_object_add(e, "counters", counts_json(&t->c, ro->counters));
		/* of them, the intervals without their stack */
		json_object_object_add(e, "without_stack", counts_json(&t->no_stack, ro->counters));
		json_object_object_add(e, "run_ns", t->run_known ? json_object_new_uint64(t->run_ns) : NULL);
		json_object_object_add(e, "bounded", json_object_new_uint64(t->bounded));
		json_object_object_add(e, "blocked_ns", json_object_new_uint64(t->blocked_ns));
		json_object_object_add(e, "sched_delay_ns", json_object_new_uint64(t->delay_ns));
		json_object_object_add(e, "open_at_end", json_object_new_uint64(t->open_at_end));
		json_object_array_add(a, e);
	}
	json_object_object_add(root, "threads", a);
	if (ro->wakers) {
		size_t nr = 0;
		struct wake_pair *v = wake_pairs(p, ro->counters, &nr);
		uint32_t path[4096];

		a = json_object_new_array();
		for (size_t i = 0; v && i < nr; i++) {
			json_object *e = json_object_new_object();
			size_t k = waker_path(p, v[i].node, path, sizeof(path) / sizeof(path[0]));
			json_object *st = json_object_new_array();

			for (size_t j = 0; j < k; j++)
				json_object_array_add(st, json_object_new_string(
							p->waker_frames[path[j]].function));
			add_str(e, "counter", counter_name(v[i].counter));
			add_str(e, "blocked", v[i].blocked);
			add_str(e, "waker", v[i].waker);
			json_object_object_add(e, "ns", json_object_new_uint64(v[i].ns));
			json_object_object_add(e, "count", json_object_new_uint64(v[i].count));
			json_object_object_add(e, "stack", st);
			json_object_array_add(a, e);
		}
		free(v);
		json_object_object_add(root, "wakers", a);
	}
	puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	free(fs);
}

static void report_usage(FILE *out)
{
	fprintf(out,
		"usage: perfport report [-i FILE] [--counter LIST] [--top N] [--min-percent P]\n"
		"                       [--sort KEY] [--callee] [--no-tree] [--no-threads]\n"
		"                       [--wakers] [--inlined RULE] [--json] [profile options]\n"
		"\n"
		"Build the counter-typed call tree of a recording - on-CPU samples and\n"
		"off-CPU intervals by thread state - and print, for each counter, the top\n"
		"functions by self and total time and a caller tree with percentages\n"
		"(each node's children largest first), then each thread's time by state.\n"
		"Off CPU, a function's self time is the time threads waited in it: the\n"
		"program's innermost function of each stack, outside the C library's\n"
		"wrappers (the kernel's path below it, always ending in the scheduler, and\n"
		"the library's frames are in the trees).\n"
		"\n"
		"options:\n"
		"  -i, --input FILE        the recording (default ./perf.data; - for stdin)\n"
		"      --counter LIST      counters to show: on-cpu, preempted, lock, io, sleep,\n"
		"                          timed-sleep, idle (default: every one present)\n"
		"      --top N             functions listed per counter, 1 or more (default 20)\n"
		"      --sort KEY          top tables by function (default), module, or state:\n"
		"                          one off-CPU table, where the threads waited with\n"
		"                          a column per state\n"
		"      --inlined RULE      where a function inlined into another is charged:\n"
		"                          caller (default: to the function it was inlined\n"
		"                          into, as the symbol table and perf report's\n"
		"                          symbol column have it) or own (to itself); either\n"
		"                          way a function is one line\n"
		"      --callee            the callee (inverted) tree instead of the caller\n"
		"                          tree: each function where time was spent, its\n"
		"                          callers below it (also --inverted)\n"
		"      --min-percent P     leave tree nodes under P%% out (default 1)\n"
		"      --no-tree           no caller tree (in JSON: no nodes)\n"
		"      --no-threads        no thread summary\n"
		"      --wakers            who woke each blocked thread: blocked time by\n"
		"                          (blocked function, waker function), from\n"
		"                          sched_waking recorded with stacks (in JSON: wakers,\n"
		"                          each off-wake stack: blocked, separator, waker)\n"
		"      --json              the whole profile as JSON: meta, totals, frames with\n"
		"                          self and total, nodes in pre-order, threads\n"
		PROFOPTS_HELP
		"  -h, --help              show this help\n");
}

enum { OPT_COUNTER = 0x1200, OPT_TOP, OPT_MIN_PERCENT, OPT_NO_TREE, OPT_NO_THREADS, OPT_JSON,
       OPT_WAKERS, OPT_CALLEE, OPT_SORT, OPT_INLINED };

/* @s's counters into @out; on an unknown one, its name in @bad (@len bytes). */
static int parse_counters(const char *s, unsigned *out, char *bad, size_t bad_len)
{
	*out = 0;
	bad[0] = '\0';
	while (s && *s) {
		const char *c = strchr(s, ',');
		char name[32];
		size_t len = c ? (size_t)(c - s) : strlen(s);
		int k;

		if (len >= sizeof(name))
			return -1;
		memcpy(name, s, len);
		name[len] = '\0';
		k = counter_parse(name);
		if (k < 0) {
			snprintf(bad, bad_len, "%.31s", name);
			return -1;
		}
		*out |= 1u << k;
		s = c ? c + 1 : NULL;
	}
	return *out ? 0 : -1;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "counter", required_argument, NULL, OPT_COUNTER },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "min-percent", required_argument, NULL, OPT_MIN_PERCENT },
		{ "no-tree", no_argument, NULL, OPT_NO_TREE },
		{ "no-threads", no_argument, NULL, OPT_NO_THREADS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "wakers", no_argument, NULL, OPT_WAKERS },
		{ "callee", no_argument, NULL, OPT_CALLEE },
		{ "inverted", no_argument, NULL, OPT_CALLEE },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "inlined", required_argument, NULL, OPT_INLINED },
		PROFOPTS_LONG_OPTIONS,
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts ro = { .top = 20, .min_percent = 1.0 };
	char bad[32];
	struct cli_prof po = { .sym.o.use_proc_kallsyms = true };
	const char *path = "perf.data", *msg;
	struct profile *p;
	char *end;
	int opt, ret, shown = 0;

	while ((opt = getopt_long(argc, argv, ":i:h" CLI_GLOBAL_SHORT SYMOPTS_SHORT, opts, NULL)) != -1) {
		switch (opt) {
		case 'i': path = optarg; break;
		case OPT_COUNTER:
			if (parse_counters(optarg, &ro.counters, bad, sizeof(bad))) {
				const char *names[CNT_COUNT];
				char buf[512];

				for (int k = 0; k < CNT_COUNT; k++)
					names[k] = counter_name((enum counter)k);
				return cli_usage_error("report", "--counter takes counter names separated "
						       "by commas: '%s' is none%s", bad,
						       cli_choices(buf, sizeof(buf), bad, names, CNT_COUNT));
			}
			break;
		case OPT_TOP:
			ro.top = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !*optarg || *optarg == '-' || ro.top < 1)
				return cli_usage_error("report", "--top takes a number of 1 or more, not '%s'",
						       optarg);
			break;
		case OPT_MIN_PERCENT:
			ro.min_percent = strtod(optarg, &end);
			if (*end || !*optarg || ro.min_percent < 0 || ro.min_percent > 100)
				return cli_usage_error("report", "--min-percent takes 0 to 100");
			break;
		case OPT_NO_TREE: ro.no_tree = true; break;
		case OPT_NO_THREADS: ro.no_threads = true; break;
		case OPT_JSON: ro.json = true; break;
		case OPT_WAKERS: ro.wakers = true; break;
		case OPT_CALLEE: ro.callee = true; break;
		case OPT_SORT:
			if (!strcmp(optarg, "function"))
				ro.sort = SORT_FUNCTION;
			else if (!strcmp(optarg, "module"))
				ro.sort = SORT_MODULE;
			else if (!strcmp(optarg, "state"))
				ro.sort = SORT_STATE;
			else
				return cli_usage_error("report", "--sort takes function, module or state, "
						       "not '%s'", optarg);
			break;
		case OPT_INLINED:
			if (report_parse_inlined(optarg, &ro.inlined))
				return cli_usage_error("report", "--inlined takes caller or own, not '%s'",
						       optarg);
			break;
		case 'h':
			report_usage(stdout);
			return EXIT_FULL;
		default:
			if (cli_global_option(opt) || profopts_parse(opt, optarg, &po))
				break;
			return cli_bad_option("report", opt, argv, opts);
		}
	}
	if (optind < argc)
		return cli_usage_error("report", "unexpected argument '%s'", argv[optind]);
	msg = profopts_finish(&po);
	if (msg)
		return cli_usage_error("report", "%s", msg);
	if (profopts_prepare(&po, path))
		return EXIT_NOTHING;
	po.o.progress = cli_progress; /* drawn only on a terminal */
	po.o.progress_ctx = &shown;
	ret = profile_build(path, &po.o, &p);
	if (ret == PP_EUSAGE)
		return EXIT_USAGE;
	if (!p)
		return EXIT_NOTHING;
	if (!ro.counters)
		ro.counters = p->meta.counters_present;
	if (ro.wakers && !p->nr_waker_nodes)
		pp_warn("'%s': --wakers: no wakeups with stacks recorded (record with -e "
			"sched:sched_waking and -g or --call-graph dwarf)", path);
	if (ro.json)
		print_json(p, &ro);
	else
		print_text(p, path, &ro);
	if (ret == PP_EPARTIAL) {
		char why[512];

		perf_stats_partly(&p->read, why, sizeof(why));
		pp_warn_status("'%s': read partly: %s", path, why);
	}
	profile_free(p);
	return ret == PP_OK ? EXIT_FULL : EXIT_PARTIAL;
}
