/* SPDX-License-Identifier: MIT */
/*
 * cmd_info.c - `perfport info`: what a recording holds and how good a
 * profile it will make.
 */
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../perf/perf.h"
#include "../util/error.h"
#include "../util/log.h"
#include "../util/wordmap.h"
#include "../machine/machine.h"
#include "../symbols/symbols.h"
#include "../profile/profile.h"
#include "advice.h"
#include "cli.h"
#include "symopts.h"

struct thread {
	uint32_t pid, tid;
	uint64_t samples;
	char comm[16];
	bool used;
};

struct info_ctx {
	struct thread *threads;  /* open addressing on tid */
	size_t cap, nr;
	struct thread *last;     /* the last one found: samples come in runs */
	uint64_t user_chains, shallow_user_chains;
	uint64_t dwarf_samples, dwarf_full;
	uint64_t first_time, last_time;
	bool oom;
	/* the symbol pass; NULL with --no-symbols */
	struct machine *m;
	struct symbolizer *sym;
	struct upool *pool;
	struct raw_frame frames[1024];
	/* stacks named before, by what was recorded: a repeat adds what its
	 * first naming counted instead of naming every frame again */
	struct wordmap seen;          /* stack key -> 1 + index in named */
	uint32_t next_seen;
	struct named_stack *named;
	size_t named_cap;
	uint64_t key[2048 + 8];
	struct sym_stats repeats;     /* frames and causes of the repeats */
	uint64_t outside;             /* stacks that left every mapping (FRAME_F_OUTSIDE) */
	uint64_t interp;              /* frames of a runtime's interpreter (advice_interpreted()) */
	const struct profile_park *interp_site; /* whose */
	const struct profile_park *parks; /* the built-in rules' (profile_parks()) */
	size_t nr_parks;
	/* the off-CPU intervals counted as report counts them, without
	 * stacks (offcpu_account()); NULL: no switches recorded, or a pipe */
	struct profile *offcpu;
};

struct named_stack {
	uint32_t frames;              /* sym_stats.frames its naming added */
	uint32_t by_cause[SYM_CAUSE_COUNT];
	uint32_t interp;              /* frames of a runtime's interpreter */
	bool outside;                 /* it ended at an address outside every mapping */
};

/* The key of a sample's stack: what decides its frames' names. 0 words: too long. */
static size_t stack_key(struct info_ctx *c, const struct perf_event *ev, const uint64_t *pcs,
			size_t npcs)
{
	if (machine_stack_key_max(ev, npcs) > sizeof(c->key) / sizeof(c->key[0]))
		return 0;
	return machine_stack_key(c->m, ev, pcs, npcs, c->key);
}

/* Called by the pool in sample order, with the unwound user stack if any. */
static int symbolize(void *ctx, const struct perf_event *ev, const uint64_t *pcs, size_t npcs)
{
	struct info_ctx *c = ctx;
	size_t len = stack_key(c, ev, pcs, npcs), n;
	struct sym_stats before;
	const struct sym_stats *after;
	struct sym_frame f[16];
	struct named_stack *e;
	uint32_t id = 0, interp = 0;
	bool fresh = false;
	int end = 0;

	if (!c->next_seen)
		c->next_seen = 1;
	if (c->next_seen > c->named_cap) { /* room for a new stack's counts */
		size_t cap = c->named_cap ? c->named_cap * 2 : 1024;

		e = realloc(c->named, cap * sizeof(*e));
		if (e) {
			c->named = e;
			c->named_cap = cap;
		}
	}
	if (len && c->next_seen <= c->named_cap)
		id = wordmap_get(&c->seen, c->key, len, &c->next_seen, &fresh);
	if (id && !fresh) {
		e = &c->named[id - 1];
		c->repeats.frames += e->frames;
		for (int k = 0; k < SYM_CAUSE_COUNT; k++)
			c->repeats.by_cause[k] += e->by_cause[k];
		c->outside += e->outside;
		c->interp += e->interp;
		return 0;
	}
	/* a new stack: what its naming counts is kept for its repeats */
	before = *sym_stats(c->sym);
	n = cli_sample_frames(c->m, ev, pcs, npcs, c->frames, 1024);
	/* named from the leaf to where the stack ends (a runtime's root, an
	 * address outside every mapping), as a profile has it */
	for (size_t i = 0; i < n && !end; i++) {
		size_t k = sym_resolve(c->sym, &c->frames[i], machine_kernel_text(c->m), f, 16);

		for (size_t j = 0; j < k && !end; j++) {
			const struct profile_park *st =
				advice_interpreted(f[j].function, f[j].module, f[j].flags,
						   c->parks, c->nr_parks);

			if (st) {
				interp++;
				c->interp_site = st;
			}
			end = sym_frame_ends(f[j].flags, npcs > 0);
		}
	}
	c->outside += end == 2;
	c->interp += interp;
	if (!id)
		return 0; /* not kept: named each time it comes */
	after = sym_stats(c->sym);
	e = &c->named[id - 1];
	e->frames = (uint32_t)(after->frames - before.frames);
	e->outside = end == 2;
	e->interp = interp;
	for (int k = 0; k < SYM_CAUSE_COUNT; k++)
		e->by_cause[k] = (uint32_t)(after->by_cause[k] - before.by_cause[k]);
	return 0;
}

/* The symbolizer's counts with the repeats' and the unwinding pool's. */
static struct sym_stats info_sym_stats(const struct info_ctx *c)
{
	struct sym_stats all = *sym_stats(c->sym);

	all.frames += c->repeats.frames;
	for (int k = 0; k < SYM_CAUSE_COUNT; k++)
		all.by_cause[k] += c->repeats.by_cause[k];
	upool_add_stats(c->pool, &all);
	return all;
}

static struct thread *thread_get(struct info_ctx *c, uint32_t tid)
{
	size_t mask, i;

	if (c->last && c->last->tid == tid)
		return c->last;
	if (c->nr * 2 >= c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct thread *n = calloc(cap, sizeof(*n));

		if (!n) {
			c->oom = true;
			return NULL;
		}
		for (size_t j = 0; j < c->cap; j++) {
			if (!c->threads[j].used)
				continue;
			i = (c->threads[j].tid * 2654435761u) & (cap - 1);
			while (n[i].used)
				i = (i + 1) & (cap - 1);
			n[i] = c->threads[j];
		}
		free(c->threads);
		c->threads = n;
		c->last = NULL;
		c->cap = cap;
	}
	mask = c->cap - 1;
	for (i = (tid * 2654435761u) & mask; c->threads[i].used; i = (i + 1) & mask)
		if (c->threads[i].tid == tid)
			return c->last = &c->threads[i];
	c->threads[i].used = true;
	c->threads[i].tid = tid;
	c->threads[i].pid = UINT32_MAX;
	c->nr++;
	return c->last = &c->threads[i];
}

static void note_callchain(struct info_ctx *c, const struct perf_sample *s)
{
	uint64_t user = 0;
	bool in_user = false;

	for (uint64_t i = 0; i < s->callchain_nr; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			in_user = ip == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (in_user)
			user++;
	}
	if (in_user || user) {
		c->user_chains++;
		if (user <= 1)
			c->shallow_user_chains++;
	}
}

static int on_event(void *ctx, const struct perf_event *ev)
{
	struct info_ctx *c = ctx;
	struct thread *t;

	switch (ev->type) {
	case PERF_RECORD_SAMPLE: {
		const struct perf_sample *s = &ev->sample;
		uint64_t st = ev->evsel->attr.sample_type;

		if (st & PERF_SAMPLE_TID) {
			t = thread_get(c, s->tid);
			if (t) {
				t->pid = s->pid;
				t->samples++;
			}
		}
		if (st & PERF_SAMPLE_TIME) {
			if (!c->first_time || s->time < c->first_time)
				c->first_time = s->time;
			if (s->time > c->last_time)
				c->last_time = s->time;
		}
		if ((st & PERF_SAMPLE_CALLCHAIN) && !(st & PERF_SAMPLE_STACK_USER))
			note_callchain(c, s);
		if (c->pool && upool_add(c->pool, ev))
			c->oom = true;
		if ((st & PERF_SAMPLE_STACK_USER) && s->user_stack_size) {
			c->dwarf_samples++;
			if (s->user_stack_dyn_size >= s->user_stack_size)
				c->dwarf_full++;
		}
		break;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_NAMESPACES:
		if (c->m && upool_machine_event(c->pool, c->m, ev))
			c->oom = true;
		break;
	case PERF_RECORD_COMM:
		if (c->m && upool_machine_event(c->pool, c->m, ev))
			c->oom = true;
		t = thread_get(c, ev->u.comm.tid);
		if (t) {
			t->pid = ev->u.comm.pid;
			snprintf(t->comm, sizeof(t->comm), "%s", ev->u.comm.comm);
		}
		break;
	case PERF_RECORD_FORK:
		if (c->m && upool_machine_event(c->pool, c->m, ev))
			c->oom = true;
		t = thread_get(c, ev->u.task.tid);
		if (t)
			t->pid = ev->u.task.pid;
		break;
	default:
		break;
	}
	return c->oom;
}

static void sample_type_str(uint64_t t, char *buf, size_t len)
{
	static const char *const names[] = {
		"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
		"STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
		"DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR", "PHYS_ADDR", "AUX",
		"CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
	};
	size_t used = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < 64; i++) {
		int n;

		if (!(t & (1ULL << i)))
			continue;
		if (i < sizeof(names) / sizeof(*names))
			n = snprintf(buf + used, len - used, "%s%s", used ? "|" : "", names[i]);
		else
			n = snprintf(buf + used, len - used, "%sbit%u", used ? "|" : "", i);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static const char *type_name(uint32_t type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE: return "hardware";
	case PERF_TYPE_SOFTWARE: return "software";
	case PERF_TYPE_TRACEPOINT: return "tracepoint";
	case PERF_TYPE_HW_CACHE: return "hw-cache";
	case PERF_TYPE_RAW: return "raw";
	case PERF_TYPE_BREAKPOINT: return "breakpoint";
	default: return "pmu";
	}
}

static const char *clock_desc(const struct perf_header_info *h, struct perf_evsel *const *ev,
			      size_t nr)
{
	int32_t clk = -1;

	for (size_t i = 0; i < nr; i++)
		if (ev[i]->attr.flags & PERF_ATTR_FLAG_USE_CLOCKID)
			clk = ev[i]->attr.clockid;
	if (h->has_clock_data)
		clk = (int32_t)h->clock_data_clockid;
	switch (clk) {
	case -1: return "perf (sched_clock)";
	case 0: return "realtime";
	case 1: return "monotonic";
	case 4: return "monotonic_raw";
	case 7: return "boottime";
	case 11: return "tai";
	default: return "other clockid";
	}
}

/*
 * What the recording holds to decide off-CPU states (docs/wait-states.md):
 * switch-out stacks, the user registers that give a waiting system call's
 * arguments, and wakeups. Into @buf: one line, with the perf record options
 * that add what is missing; "" without sched_switch.
 */
static void offcpu_evidence(struct perf_evsel *const *ev, size_t nr, const char *arch, char *buf,
			    size_t len)
{
	bool sw = false, stacks = false, regs = false, wake = false, waking = false;
	bool x86 = arch && !strcmp(arch, "x86_64"), arm = arch && !strcmp(arch, "aarch64");

	buf[0] = 0;
	for (size_t i = 0; i < nr; i++) {
		const struct perf_attr *a = &ev[i]->attr;

		if (!ev[i]->name)
			continue;
		if (!strcmp(ev[i]->name, "sched:sched_switch")) {
			sw = true;
			stacks = a->sample_type & PERF_SAMPLE_CALLCHAIN;
			regs = (a->sample_type & PERF_SAMPLE_REGS_USER) && a->sample_regs_user;
		} else if (!strcmp(ev[i]->name, "sched:sched_wakeup")) {
			wake = true;
		} else if (!strcmp(ev[i]->name, "sched:sched_waking")) {
			waking = true;
		}
	}
	if (!sw)
		return;
	snprintf(buf, len, "switch-out stacks %s; syscall arguments (user registers) %s; wakeups %s",
		 stacks ? "yes" : "no (add -g)",
		 regs ? "yes" :
		 x86 ? "no (add --call-graph dwarf, or --user-regs=di,si,dx,r10,r8,r9)" :
		 arm ? "no (add --call-graph dwarf, or --user-regs=x0,x1,x2,x3,x4,x5)" :
		 "not read on this arch",
		 waking ? "yes (sched_waking: the wakers' own stacks)" :
		 wake ? "yes (sched_wakeup: a remote wakeup's stack may be the woken CPU's interrupt; "
			"-e sched:sched_waking records the waker's)" :
		 "no (add -e sched:sched_waking -g)");
}

/*
 * The off-CPU waits of the recording at @path (read once already: @r) that
 * lost their stack, counted as report counts them: the accounting's pass
 * without stacks (profile_opts.no_stacks), which pairs each switch-out
 * record with its sched_switch sample as the profile does. Only where
 * switches were recorded, and not on a pipe (read once). Into c->offcpu.
 */
static void offcpu_account(struct info_ctx *c, const char *path, const struct perf_reader *r,
			   const struct cli_sym *so)
{
	const struct perf_stats *st = perf_reader_stats(r);
	struct profile_opts po = { .sym = so->o, .jobs = symopts_jobs(so), .no_stacks = true };
	struct perf_evsel *const *ev;
	bool sw = st->records[PERF_RECORD_SWITCH] || st->records[PERF_RECORD_SWITCH_CPU_WIDE];
	int level = pp_log_get_level(), ret;
	struct profile *p = NULL;
	size_t nr;

	if (perf_reader_header(r)->pipe || !strcmp(path, "-"))
		return;
	ev = perf_reader_evsels(r, &nr);
	for (size_t i = 0; i < nr && !sw; i++)
		sw = ev[i]->name && !strcmp(ev[i]->name, "sched:sched_switch");
	if (!sw)
		return;
	/* what the profile would warn of is not info's to say (its own
	 * pass said what was read) */
	pp_log_set_level(PP_LOG_ERROR);
	ret = profile_build(path, &po, &p);
	pp_log_set_level(level);
	if (ret == PP_OK || ret == PP_EPARTIAL)
		c->offcpu = p;
	else
		profile_free(p);
}

/* A warning about how the file was recorded, with the command that fixes it. */
struct advice {
	char text[512];
};

static size_t collect_advice(const struct info_ctx *c, const struct perf_stats *st,
			     struct perf_evsel *const *ev, size_t nr, const char *cmdline,
			     struct advice *out, size_t max)
{
	size_t n = 0;
	char mm[32];
	uint32_t copied = 0;
	const char *larger;

	/* a larger buffer, from the recording's own -m; never "a smaller
	 * dwarf size" beside a warning that asks for a larger one */
	advice_mmap(cmdline, mm, sizeof(mm));
	if (perf_stats_lost(st) && n < max)
		snprintf(out[n++].text, sizeof(out->text),
			 "the kernel lost %" PRIu64 " samples (its buffer was full): what they "
			 "held is missing - on-CPU time, and the stacks of the switches among "
			 "them (their off-CPU time is charged without its stack, and a wait "
			 "whose switch-in was lost may be bounded by a later event); record "
			 "with a larger buffer (perf record %s ...)%s", perf_stats_lost(st), mm,
			 cmdline && strstr(cmdline, "dwarf") ? ", a lower -F or fewer events" :
			 " or fewer events");

	for (size_t i = 0; i < nr && n < max; i++) {
		const struct perf_attr *a = &ev[i]->attr;

		if (a->type == PERF_TYPE_TRACEPOINT && (a->flags & PERF_ATTR_FLAG_FREQ))
			snprintf(out[n++].text, sizeof(out->text),
				 "tracepoint '%s' was recorded in frequency mode (a global -F "
				 "applied to it), so most of its events were not sampled; record "
				 "with: perf record -e cpu-clock/freq=999/ -e %s ...",
				 ev[i]->name, ev[i]->name);
	}
	{
		bool sampled = false, stacks = false;

		for (size_t i = 0; i < nr; i++) {
			const struct perf_attr *a = &ev[i]->attr;

			if (a->type == PERF_TYPE_SOFTWARE || a->type == PERF_TYPE_HARDWARE ||
			    a->type == PERF_TYPE_TRACEPOINT || a->type == PERF_TYPE_HW_CACHE ||
			    a->type == PERF_TYPE_RAW) {
				sampled = true;
				stacks = stacks || (a->sample_type & (PERF_SAMPLE_CALLCHAIN |
								       PERF_SAMPLE_STACK_USER));
			}
		}
		if (n < max && sampled && !stacks)
			snprintf(out[n++].text, sizeof(out->text),
				 "no event was recorded with call stacks, so profiles show each "
				 "sampled function without its callers; record with: perf record "
				 "-g ... (or --call-graph dwarf)");
		/* stacks, but not on the switches (-e sched:sched_switch/call-graph=no/) */
		for (size_t i = 0; i < nr && n < max && stacks; i++)
			if (ev[i]->attr.type == PERF_TYPE_TRACEPOINT && ev[i]->name &&
			    !strcmp(ev[i]->name, "sched:sched_switch") &&
			    !(ev[i]->attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)))
				snprintf(out[n++].text, sizeof(out->text),
					 "'%s' was recorded without call stacks (other events have "
					 "them): off-CPU time is charged to where the kernel switched, "
					 "and a lock wait counts as sleep; record it with the same -g "
					 "or --call-graph as the others", ev[i]->name);
	}
	if (n < max && c->user_chains >= 10 && c->shallow_user_chains * 5 > c->user_chains)
		snprintf(out[n++].text, sizeof(out->text),
			 "%" PRIu64 " of %" PRIu64 " frame-pointer user callchains have no caller "
			 "(code without frame pointers, such as Debian's glibc, breaks the chain); "
			 "for full stacks record with: perf record --call-graph dwarf ...",
			 c->shallow_user_chains, c->user_chains);
	/* a larger copy, unless the recording took the largest already */
	for (size_t i = 0; i < nr; i++)
		if (ev[i]->attr.sample_stack_user > copied)
			copied = ev[i]->attr.sample_stack_user;
	larger = copied >= 65528 ? "the copies are perf's largest (65528 bytes) already: for deeper "
		 "stacks record with -g where the code keeps frame pointers" :
		 "record with: perf record --call-graph dwarf,65528 ...";
	if (n < max && c->sym) {
		/* unwound: the samples whose unwinding really stopped early with
		 * a full stack copy (a full copy may still hold every frame) */
		struct sym_stats all = info_sym_stats(c);

		if (all.unwound >= 10 && all.unwind_truncated * 20 > all.unwound)
			snprintf(out[n++].text, sizeof(out->text),
				 "%" PRIu64 " of %" PRIu64 " DWARF-unwound samples stopped early "
				 "at the end of their stack copy (%u bytes), so their callers "
				 "are missing; %s", all.unwind_truncated, all.unwound, copied, larger);
	} else if (n < max && c->dwarf_samples >= 10 && c->dwarf_full * 20 > c->dwarf_samples) {
		snprintf(out[n++].text, sizeof(out->text),
			 "%" PRIu64 " of %" PRIu64 " DWARF stack copies filled their buffer (%u "
			 "bytes; not unwound with --no-symbols: some may hold every frame), so their "
			 "unwinding may stop early; %s", c->dwarf_full, c->dwarf_samples, copied,
			 larger);
	}
	if (n < max && c->sym && sym_stats(c->sym)->by_cause[SYM_NO_KALLSYMS])
		snprintf(out[n++].text, sizeof(out->text), "kernel frames are not named: %s",
			 sym_kernel_why(c->sym));
	return n;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The used slots, sorted by (pid, tid); the caller frees. */
static struct thread *threads_sorted(const struct info_ctx *c, size_t *nr, size_t *procs)
{
	struct thread *t = malloc((c->nr ? c->nr : 1) * sizeof(*t));
	size_t n = 0;

	*nr = *procs = 0;
	if (!t)
		return NULL;
	for (size_t i = 0; i < c->cap; i++)
		if (c->threads[i].used)
			t[n++] = c->threads[i];
	qsort(t, n, sizeof(*t), cmp_thread);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || t[i].pid != t[i - 1].pid)
			(*procs)++;
	*nr = n;
	return t;
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

/* What would name a module that was not found. */
static const char *module_hint(const struct dso *d, const struct sym_where *w)
{
	if (d->mapper && d->mapper->mnt && !d->mapper->mnt->host && w->cause != SYM_BUILD_ID)
		return "it was in a container's filesystem (another mount namespace) and no process "
		       "of that container runs here now: run 'perf archive' on the recording host "
		       "while the container runs, or give its root filesystem with --symfs DIR";
	if (w->cause == SYM_NOT_SAME)
		return "the recording has no build id for it, and the file at its path here is not "
		       "known to be the recorded one (recorded on another host, or another device "
		       "and inode than recorded): give the recorded files with --symfs DIR, or "
		       "--trust-paths if the files at the recorded paths are the recorded ones; "
		       "record with build ids (perf record without --no-buildid, or "
		       "--buildid-mmap) to name them anywhere";
	return w->cause == SYM_BUILD_ID ?
	       "only a file with another build id is here: give the recorded one with --symfs, "
	       "or run 'perf archive' on the recording host and keep its tarball beside the recording" :
	       "run 'perf archive' on the recording host and keep its tarball beside the recording "
	       "(or --archive FILE), or give the files with --symfs DIR";
}

/* Each module whose frames were looked up: where its symbols came from. */
static void modules_each(const struct info_ctx *c,
			 void (*fn)(void *ctx, const struct dso *d, const struct sym_where *w), void *ctx)
{
	size_t nr = 0;
	struct dso *const *d = c->m ? machine_dsos(c->m, &nr) : NULL;

	for (size_t i = 0; i < nr; i++) {
		struct sym_where w;

		if (d[i]->kind != DSO_USER && d[i]->kind != DSO_VDSO)
			continue;
		sym_dso_where(c->sym, d[i], &w);
		if (w.tried)
			fn(ctx, d[i], &w);
	}
}

/* The build id of @d in hex into @buf ("" when the recording has none). */
static const char *build_id_hex(const struct dso *d, char *buf, size_t len)
{
	buf[0] = 0;
	for (size_t b = 0; b < d->build_id_size && 2 * b + 2 < len; b++)
		snprintf(buf + 2 * b, 3, "%02x", d->build_id[b]);
	return buf;
}

static void module_json(void *ctx, const struct dso *d, const struct sym_where *w)
{
	json_object *o = json_object_new_object();
	const char *advice, *rt = profile_runtime_of(d->path, &advice);

	if (!rt)
		rt = w->runtime;
	add_str(o, "path", d->path);
	add_str(o, "source", w->found ? sym_from_name(w->from) : NULL);
	add_str(o, "file", w->file);
	add_str(o, "debug_file", w->debug);
	json_object_object_add(o, "debuginfod", json_object_new_boolean(w->debuginfod));
	add_str(o, "missing", w->found ? NULL : sym_cause_name(w->cause));
	add_str(o, "same_file", w->same);
	add_str(o, "hint", w->found ? NULL : module_hint(d, w));
	json_object_object_add(o, "addresses", json_object_new_uint64(w->frames));
	json_object_object_add(o, "unnamed_addresses", json_object_new_uint64(w->unnamed));
	add_str(o, "runtime", rt);
	json_object_array_add(ctx, o);
}

static void module_text(void *ctx, const struct dso *d, const struct sym_where *w)
{
	(void)ctx;
	if (!w->found) {
		printf("  %s: not named (%s): %s\n", d->path, sym_cause_name(w->cause), module_hint(d, w));
		return;
	}
	printf("  %s: %s%s%s", d->path, sym_from_name(w->from),
	       w->from == SYM_FROM_PATH ? "" : " (", w->from == SYM_FROM_PATH ? "" : w->file);
	printf("%s", w->from == SYM_FROM_PATH ? "" : ")");
	if (w->same)
		printf(" (%s)", w->same);
	if (w->debug)
		printf(", debug info %s%s", w->debuginfod ? "from debuginfod: " : "", w->debug);
	putchar('\n');
	if (w->unnamed) {
		char bid[2 * PERF_MAX_BUILD_ID + 1];
		const char *advice;

		/* debug information of its own (Go's, compressed or not)
		 * names what it can as much as a separate file would */
		bool dwarf = w->debug || w->dwarf;

		profile_runtime_of(d->path, &advice);
		printf("    %" PRIu64 " of %" PRIu64 " addresses in no symbol (named MODULE+0xSTART, "
		       "the function's start address)%s: %s%s%s\n", w->unnamed, w->frames,
		       dwarf ? "" : "; no debug info", dwarf ? "its debug info does not name them"
		       : "its debug symbols would name them",
		       /* the runtime's advice is to install what is loaded already */
		       advice && !dwarf ? " - " : "", advice && !dwarf ? advice : "");
		if (!dwarf && d->build_id_size)
			printf("    (build id %s: debuginfod, or /usr/lib/debug/.build-id/)\n",
			       build_id_hex(d, bid, sizeof(bid)));
	}
}

/* The runtimes the modules are (the program rules know their waits), with
 * what decides more of their states. */
static void runtimes_text(void *ctx, const struct dso *d, const struct sym_where *w)
{
	const char *advice, *note = NULL, *rt = profile_runtime_of(d->path, &advice);

	/* a runtime linked into the program (Go's): known by the roots of
	 * its stacks named in it (src/symbols/roots/) */
	if (!rt && w->runtime && *w->runtime) {
		rt = w->runtime;
		advice = NULL;
		note = profile_runtime_note(rt);
	}
	if (!rt)
		return;
	printf("  %s (%s): its wait functions decide its threads' off-CPU states%s%s\n", rt, d->path,
	       w->unnamed && !w->debug && !w->dwarf && advice ? "; " : "",
	       w->unnamed && !w->debug && !w->dwarf && advice ? advice : "");
	if (note)
		printf("    %s\n", note);
	(*(unsigned *)ctx)++;
}

static void print_json(const char *path, const struct perf_reader *r, const struct info_ctx *c,
		       const struct advice *adv, size_t nadv)
{
	const struct perf_header_info *h = perf_reader_header(r);
	const struct perf_stats *st = perf_reader_stats(r);
	json_object *root = json_object_new_object(), *a, *o;
	struct perf_evsel *const *ev;
	struct thread *th;
	size_t nr, nth, nproc;
	char buf[512];

	ev = perf_reader_evsels(r, &nr);
	add_str(root, "file", path);
	add_str(root, "mode", h->pipe ? "pipe" : h->directory ? "directory" : "file");
	json_object_object_add(root, "byte_swapped", json_object_new_boolean(h->swapped));
	add_str(root, "hostname", h->hostname);
	add_str(root, "os_release", h->osrelease);
	add_str(root, "arch", h->arch);
	add_str(root, "perf_version", h->version);
	add_str(root, "cmdline", h->cmdline);
	add_str(root, "cpu_desc", h->cpudesc);
	add_str(root, "core_siblings", h->core_siblings);
	add_str(root, "thread_siblings", h->thread_siblings);
	a = json_object_new_array();
	for (size_t i = 0; i < h->nr_groups; i++) {
		o = json_object_new_object();
		add_str(o, "name", h->groups[i].name);
		json_object_object_add(o, "leader", json_object_new_int64(h->groups[i].leader_idx));
		json_object_object_add(o, "members", json_object_new_int64(h->groups[i].nr_members));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "groups", a);
	json_object_object_add(root, "nr_cpus_online", json_object_new_int64(h->nr_cpus_online));
	json_object_object_add(root, "nr_cpus_avail", json_object_new_int64(h->nr_cpus_avail));
	add_str(root, "clock", clock_desc(h, ev, nr));
	json_object_object_add(root, "clock_data", json_object_new_boolean(h->has_clock_data));
	if (h->features[PERF_FEAT_SAMPLE_TIME / 64] & (1ULL << (PERF_FEAT_SAMPLE_TIME % 64))) {
		o = json_object_new_object();
		json_object_object_add(o, "first", json_object_new_uint64(h->sample_time_first));
		json_object_object_add(o, "last", json_object_new_uint64(h->sample_time_last));
		json_object_object_add(root, "header_sample_time", o);
	}
	json_object_object_add(root, "first_sample_time", json_object_new_uint64(c->first_time));
	json_object_object_add(root, "last_sample_time", json_object_new_uint64(c->last_time));
	json_object_object_add(root, "samples", json_object_new_uint64(st->samples));

	a = json_object_new_array();
	for (size_t i = 0; i < nr; i++) {
		o = json_object_new_object();
		add_str(o, "name", ev[i]->name);
		add_str(o, "type", type_name(ev[i]->attr.type));
		json_object_object_add(o, "config", json_object_new_uint64(ev[i]->attr.config));
		sample_type_str(ev[i]->attr.sample_type, buf, sizeof(buf));
		add_str(o, "sample_type", buf);
		if (ev[i]->attr.flags & PERF_ATTR_FLAG_FREQ)
			json_object_object_add(o, "frequency",
					       json_object_new_uint64(ev[i]->attr.sample_period));
		else
			json_object_object_add(o, "period",
					       json_object_new_uint64(ev[i]->attr.sample_period));
		json_object_object_add(o, "samples", json_object_new_uint64(ev[i]->nr_samples));
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "events", a);

	o = json_object_new_object();
	for (uint32_t t = 0; t < PERF_REC_TYPE_MAX; t++) {
		const char *name = perf_record_type_name(t);

		if (!st->records[t])
			continue;
		if (name)
			snprintf(buf, sizeof(buf), "PERF_RECORD_%s", name);
		else
			snprintf(buf, sizeof(buf), "type_%u", t);
		json_object_object_add(o, buf, json_object_new_uint64(st->records[t]));
	}
	json_object_object_add(root, "records", o);

	th = threads_sorted(c, &nth, &nproc);
	a = json_object_new_array();
	for (size_t i = 0; th && i < nth; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int64((int32_t)th[i].pid));
		json_object_object_add(o, "tid", json_object_new_int64((int32_t)th[i].tid));
		add_str(o, "comm", th[i].comm[0] ? th[i].comm : NULL);
		json_object_object_add(o, "samples", json_object_new_uint64(th[i].samples));
		json_object_array_add(a, o);
	}
	free(th);
	json_object_object_add(root, "threads", a);
	json_object_object_add(root, "processes", json_object_new_uint64(nproc));
	json_object_object_add(root, "lost", json_object_new_uint64(perf_stats_lost(st)));
	{
		size_t nev;
		struct perf_evsel *const *evs = perf_reader_evsels(r, &nev);
		char ev_buf[512];

		offcpu_evidence(evs, nev, perf_reader_header(r)->arch, ev_buf, sizeof(ev_buf));
		if (*ev_buf)
			add_str(root, "offcpu_evidence", ev_buf);
	}
	if (c->offcpu) {
		const struct profile_meta *m = &c->offcpu->meta;
		char line[1024];

		/* as report's meta.offcpu_intervals.without_stack* */
		o = json_object_new_object();
		json_object_object_add(o, "intervals", json_object_new_uint64(
			m->iv_exact + m->iv_inferred + m->iv_approx + m->iv_open_at_end));
		json_object_object_add(o, "count", json_object_new_uint64(m->iv_no_stack));
		json_object_object_add(o, "lost", json_object_new_uint64(m->iv_no_stack_lost));
		json_object_object_add(o, "unrecorded",
				       json_object_new_uint64(m->iv_no_stack_unrecorded));
		json_object_object_add(o, "other", json_object_new_uint64(
			m->iv_no_stack - m->iv_no_stack_lost - m->iv_no_stack_unrecorded));
		json_object_object_add(o, "ns", json_object_new_uint64(m->iv_no_stack_ns));
		json_object_object_add(o, "offcpu_ns", json_object_new_uint64(advice_offcpu_ns(m)));
		advice_no_stack(m, line, sizeof(line));
		add_str(o, "text", *line ? line : NULL);
		json_object_object_add(root, "offcpu_without_stack", o);
	}
	json_object_object_add(root, "unknown_records", json_object_new_uint64(st->unknown_records));
	json_object_object_add(root, "skipped_records", json_object_new_uint64(st->skipped_records));
	json_object_object_add(root, "skipped_bytes", json_object_new_uint64(st->skipped_bytes));
	json_object_object_add(root, "message_bytes", json_object_new_uint64(st->message_bytes));
	json_object_object_add(root, "truncated", json_object_new_boolean(st->truncated));
	a = json_object_new_array();
	for (unsigned i = 0; i < st->nr_skips_kept; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "offset", json_object_new_uint64(st->skips[i].offset));
		json_object_object_add(o, "type", json_object_new_int64(st->skips[i].type));
		add_str(o, "reason", st->skips[i].why);
		json_object_array_add(a, o);
	}
	json_object_object_add(root, "skips", a);
	if (h->has_compressed || st->compressed_in) {
		o = json_object_new_object();
		json_object_object_add(o, "level", json_object_new_int64(h->comp_level));
		json_object_object_add(o, "compressed_bytes", json_object_new_uint64(st->compressed_in));
		json_object_object_add(o, "decompressed_bytes", json_object_new_uint64(st->compressed_out));
		json_object_object_add(root, "compression", o);
	}
	if (c->sym) {
		struct sym_stats all = info_sym_stats(c);
		const struct sym_stats *ss = &all;
		json_object *u = json_object_new_object();

		o = json_object_new_object();
		json_object_object_add(o, "frames", json_object_new_uint64(ss->frames));
		json_object_object_add(o, "named", json_object_new_uint64(ss->by_cause[SYM_NAMED]));
		for (int k = 1; k < SYM_CAUSE_COUNT; k++)
			json_object_object_add(u, sym_cause_name(k),
					       json_object_new_uint64(ss->by_cause[k]));
		json_object_object_add(o, "unknown", u);
		json_object_object_add(o, "dwarf_unwound", json_object_new_uint64(ss->unwound));
		json_object_object_add(o, "dwarf_unwind_stopped", json_object_new_uint64(ss->unwind_stopped));
		json_object_object_add(o, "dwarf_unwind_truncated", json_object_new_uint64(ss->unwind_truncated));
		json_object_object_add(o, "dwarf_unwind_failed", json_object_new_uint64(ss->unwind_failed));
		json_object_object_add(o, "stacks_outside_mappings", json_object_new_uint64(c->outside));
		json_object_object_add(o, "interpreted_frames", json_object_new_uint64(c->interp));
		add_str(o, "interpreted_runtime", c->interp_site ? c->interp_site->runtime : NULL);
		json_object_object_add(o, "dwarf_unwind_released",
				       json_object_new_uint64(ss->unwind_released));
		json_object_object_add(o, "dwarf_unwind_libdw", json_object_new_uint64(ss->unwind_fallbacks));
		add_str(o, "kernel_symbols", sym_kernel_source(c->sym));
		u = json_object_new_array();
		modules_each(c, module_json, u);
		json_object_object_add(o, "modules", u);
		json_object_object_add(root, "symbols", o);
	}
	a = json_object_new_array();
	for (size_t i = 0; i < nadv; i++)
		json_object_array_add(a, json_object_new_string(adv[i].text));
	json_object_object_add(root, "warnings", a);
	puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

static void print_text(const char *path, const struct perf_reader *r, const struct info_ctx *c,
		       const struct advice *adv, size_t nadv)
{
	const struct perf_header_info *h = perf_reader_header(r);
	const struct perf_stats *st = perf_reader_stats(r);
	struct perf_evsel *const *ev;
	size_t nr, nth, nproc;
	struct thread *th;
	char buf[512];

	ev = perf_reader_evsels(r, &nr);
	printf("file:          %s (%s mode%s)\n", path,
	       h->pipe ? "pipe" : h->directory ? "directory" : "file",
	       h->swapped ? ", other byte order" : "");
	printf("host:          %s\n", h->hostname ? h->hostname : "(not recorded)");
	printf("os release:    %s\n", h->osrelease ? h->osrelease : "(not recorded)");
	printf("arch:          %s\n", h->arch ? h->arch : "(not recorded)");
	printf("perf version:  %s\n", h->version ? h->version : "(not recorded)");
	printf("command:       %s\n", h->cmdline ? h->cmdline : "(not recorded)");
	if (h->nr_cpus_online || h->nr_cpus_avail)
		printf("cpus:          %u online, %u available%s%s\n", h->nr_cpus_online,
		       h->nr_cpus_avail, h->cpudesc ? ": " : "", h->cpudesc ? h->cpudesc : "");
	if (h->core_siblings)
		printf("topology:      cores %s; threads %s\n", h->core_siblings,
		       h->thread_siblings ? h->thread_siblings : "?");
	printf("clock:         %s%s\n", clock_desc(h, ev, nr),
	       h->has_clock_data ? " (with CLOCK_DATA: wall times are exact)"
				 : " (no CLOCK_DATA: wall times will be estimated)");
	if (c->last_time > c->first_time)
		printf("span:          %.3f s (samples from %" PRIu64 " to %" PRIu64 ")\n",
		       (double)(c->last_time - c->first_time) / 1e9, c->first_time, c->last_time);
	if (h->has_compressed || st->compressed_in)
		printf("compression:   zstd level %u, %" PRIu64 " bytes -> %" PRIu64 " bytes (ratio %.1f)\n",
		       h->comp_level, st->compressed_in, st->compressed_out,
		       st->compressed_in ? (double)st->compressed_out / (double)st->compressed_in : 0.0);
	printf("samples:       %" PRIu64 "\n", st->samples);
	offcpu_evidence(ev, nr, h->arch, buf, sizeof(buf));
	if (*buf)
		printf("off-CPU:       %s\n", buf);
	if (c->offcpu) {
		const struct profile_meta *m = &c->offcpu->meta;
		char line[1024];

		advice_no_stack(m, line, sizeof(line));
		if (*line)
			printf("               waits without their stack: %s\n", line);
		else
			printf("               waits without their stack: none of %" PRIu64 "\n",
			       m->iv_exact + m->iv_inferred + m->iv_approx + m->iv_open_at_end);
	}

	printf("\nevents:\n");
	for (size_t i = 0; i < nr; i++) {
		const struct perf_attr *a = &ev[i]->attr;
		bool freq = a->flags & PERF_ATTR_FLAG_FREQ;
		char every[24];

		/* a counter that never samples by itself is read by samples of
		 * its group (its samples are those reads) */
		if (freq || a->sample_period)
			snprintf(every, sizeof(every), "%s %-8" PRIu64, freq ? "freq  " : "period",
				 a->sample_period);
		else
			snprintf(every, sizeof(every), "read by group");
		sample_type_str(a->sample_type, buf, sizeof(buf));
		printf("  %-24s %-10s %-15s samples %-9" PRIu64 " %s\n", ev[i]->name,
		       type_name(a->type), every, ev[i]->nr_samples, buf);
	}
	for (size_t i = 0; i < h->nr_groups; i++)
		printf("  group %s: leader %s, %u members\n", h->groups[i].name,
		       h->groups[i].leader_idx < nr ? ev[h->groups[i].leader_idx]->name : "?",
		       h->groups[i].nr_members);
	printf("\nrecords:\n");
	for (uint32_t t = 0; t < PERF_REC_TYPE_MAX; t++) {
		const char *name = perf_record_type_name(t);

		if (st->records[t])
			printf("  %-20s %" PRIu64 "\n", name ? name : "(unknown)", st->records[t]);
	}
	th = threads_sorted(c, &nth, &nproc);
	free(th);
	printf("\nthreads:       %zu in %zu processes\n", nth, nproc);
	printf("lost:          %" PRIu64 " samples (%" PRIu64 " in %" PRIu64 " LOST records, %" PRIu64
	       " in %" PRIu64 " LOST_SAMPLES records%s)\n",
	       perf_stats_lost(st), st->lost, st->records[PERF_RECORD_LOST], st->lost_samples,
	       st->records[PERF_RECORD_LOST_SAMPLES], st->lost && st->lost_samples ?
	       ": one loss told twice, the larger counts" : "");
	printf("skipped:       %" PRIu64 " records, %" PRIu64 " bytes%s\n", st->skipped_records,
	       st->skipped_bytes, st->truncated ? " (the file is truncated)" : "");
	if (st->message_bytes)
		printf("               %" PRIu64 " bytes of perf record's own messages, not "
		       "records (its stderr went to the same file)\n", st->message_bytes);
	if (st->reads_unattributed)
		printf("               %" PRIu64 " counter values read by samples name no known "
		       "event (not counted)\n", st->reads_unattributed);
	for (unsigned i = 0; i < st->nr_skips_kept; i++) {
		const char *name = perf_record_type_name(st->skips[i].type);

		printf("  at offset %" PRIu64 " (%s): %s\n", st->skips[i].offset,
		       name ? name : "?", st->skips[i].why);
	}
	if (c->sym) {
		struct sym_stats all = info_sym_stats(c);
		const struct sym_stats *ss = &all;

		if (ss->unwound || ss->unwind_failed)
			printf("dwarf unwind:  %" PRIu64 " samples, %" PRIu64 " stopped early (%" PRIu64
			       " at the end of a full stack copy), %" PRIu64 " not unwindable\n",
			       ss->unwound, ss->unwind_stopped, ss->unwind_truncated, ss->unwind_failed);
		if (ss->unwind_fallbacks)
			printf("               %" PRIu64 " of them by libdwfl (a frame the CFI rows "
			       "cannot follow: a DWARF expression, a signal frame)\n",
			       ss->unwind_fallbacks);
		if (ss->leaf_callers)
			printf("lr callers:    %" PRIu64 " -g samples whose leaf had not saved its "
			       "caller: taken from lr (aarch64)\n", ss->leaf_callers);
		printf("frames:        %" PRIu64 ", named %" PRIu64 " (%.1f%%)\n", ss->frames,
		       ss->by_cause[SYM_NAMED],
		       ss->frames ? 100.0 * (double)ss->by_cause[SYM_NAMED] / (double)ss->frames : 0.0);
		for (int k = 1; k < SYM_CAUSE_COUNT; k++)
			if (ss->by_cause[k])
				printf("  unknown, %s: %" PRIu64 "\n", sym_cause_name(k), ss->by_cause[k]);
		if (c->outside)
			printf("  %" PRIu64 " stacks ended at an address outside every mapping (a "
			       "frame-pointer chain past its root: not drawn as frames)\n",
			       c->outside);
		if (ss->by_cause[SYM_JIT_NO_MAP])
			printf("    (%.1f%% of the frames are a JIT's code, unnamed: its perf map, "
			       "/tmp/perf-PID.map, names them - HotSpot: java "
			       "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, or jcmd PID "
			       "Compiler.perfmap while it runs, and -XX:+PreserveFramePointer for -g; "
			       "Node: --perf-basic-prof; Python 3.12: -X perf; or a jitdump read by "
			       "perf inject --jit)\n",
			       100.0 * (double)ss->by_cause[SYM_JIT_NO_MAP] / (double)ss->frames);
		/* a JIT's warm-up leaves some (1.6% of the frames of a -Xcomp
		 * run): worth the line where it is a share of its own, as
		 * advice's warnings (5%) */
		if (c->interp && 20 * c->interp >= ss->frames)
			printf("  %s's interpreter: %" PRIu64 " frames (%.1f%%), named as one "
			       "('%s') by its perf map, not by their methods: %s waits under them "
			       "(in %s) cannot be told apart, and report says which and how long "
			       "('off-CPU waits under interpreted code'); to name the methods, %s\n",
			       c->interp_site->runtime, c->interp,
			       ss->frames ? 100.0 * (double)c->interp / (double)ss->frames : 0.0,
			       c->interp_site->interpreted, c->interp_site->waits,
			       c->interp_site->park, c->interp_site->compile);
		printf("kernel names:  %s\n", sym_kernel_source(c->sym));
		printf("modules (where their symbols came from):\n");
		modules_each(c, module_text, NULL);
		{
			unsigned n = 0;

			printf("runtimes (src/profile/waits/ knows their waits):\n");
			modules_each(c, runtimes_text, &n);
			if (!n)
				printf("  none recognised\n");
		}
	}
	if (nadv) {
		printf("\nwarnings:\n");
		for (size_t i = 0; i < nadv; i++)
			printf("  - %s\n", adv[i].text);
	}
}

static void info_usage(FILE *out)
{
	fprintf(out,
		"usage: perfport info [-i FILE] [--json] [--strict] [--no-symbols]\n"
		"                     [--symfs DIR] [--buildid-dir DIR] [--kallsyms FILE]\n"
		"                     [--no-inline] [-j N]\n"
		"\n"
		"Describe a recording: host, OS release, arch, perf version, command line,\n"
		"CPUs, clock, span; each event with its sample count; records by type;\n"
		"threads and processes; lost and skipped data; the off-CPU waits whose\n"
		"stack was not recorded, why, and their share of the off-CPU time; how\n"
		"many frames could be named and why the others could not (a JIT's code\n"
		"without a perf map, a runtime's interpreter its map names as a whole);\n"
		"recording problems, each with the perf command line that records it\n"
		"right.\n"
		"\n"
		"options:\n"
		"  -i, --input FILE        the recording: a perf.data file, a 'perf record\n"
		"                          --threads' directory, or - for standard input\n"
		"                          (default ./perf.data)\n"
		"      --json              print machine-readable JSON\n"
		"      --strict            treat a partly readable file as an error (exit 2)\n"
		"      --no-symbols        skip naming frames (a quicker pass)\n"
		SYMOPTS_HELP
		"  -h, --help              show this help\n");
}

/* long-only options (-j is --jobs, from the symbol options) */
enum { OPT_INFO_JSON = 0x1300 };

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, OPT_INFO_JSON },
		{ "strict", no_argument, NULL, 's' },
		{ "no-symbols", no_argument, NULL, 'n' },
		SYMOPTS_LONG_OPTIONS,
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_reader_opts ropts = { .ordered = false };
	struct cli_sym sopts = { .o.use_proc_kallsyms = true };
	bool symbols = true;
	struct info_ctx ctx = { 0 };
	const struct perf_stats *st;
	struct perf_reader *r = NULL;
	struct advice adv[8];
	const char *path = "perf.data";
	bool json = false, strict = false, partial;
	struct perf_evsel *const *ev;
	int c, ret, shown = 0;
	size_t nr, nadv;

	while ((c = getopt_long(argc, argv, ":i:h" CLI_GLOBAL_SHORT SYMOPTS_SHORT, opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			path = optarg;
			break;
		case OPT_INFO_JSON:
			json = true;
			break;
		case 's':
			strict = true;
			break;
		case 'n':
			symbols = false;
			break;
		case 'h':
			info_usage(stdout);
			return EXIT_FULL;
		default:
			if (cli_global_option(c) || symopts_parse(c, optarg, &sopts))
				break;
			return cli_bad_option("info", c, argv, opts);
		}
	}
	if (optind < argc)
		return cli_usage_error("info", "unexpected argument '%s'", argv[optind]);
	if (sopts.bad_jobs)
		return cli_usage_error("info", "--jobs takes a number from 1 to 256");
	if (symbols && symopts_prepare(&sopts, path))
		return EXIT_NOTHING;

	ropts.progress = cli_progress;
	ropts.progress_ctx = &shown;
	ropts.ordered = symbols; /* naming needs the maps before the samples */
	ret = perf_reader_open(path, &ropts, &r);
	if (ret) {
		if (ret == PP_ENOMEM)
			pp_error("'%s': %s", path, pp_strerror(ret));
		return EXIT_NOTHING;
	}
	if (symbols) {
		/* info reads no --state-rules: the built-in rules' parks */
		ctx.parks = profile_parks(&ctx.nr_parks);
		ctx.m = machine_new(perf_reader_header(r));
		ctx.sym = sym_new(&sopts.o, perf_reader_header(r));
		if (ctx.sym && symopts_jobs(&sopts) > 1)
			sym_prefetch(ctx.sym, symopts_jobs(&sopts) - 1 < 4 ? symopts_jobs(&sopts) - 1 : 4);
		ctx.pool = ctx.m ? upool_new(symopts_jobs(&sopts), &sopts.o, perf_reader_header(r),
					     ctx.m, symbolize, &ctx, 0) : NULL;
		if (!ctx.m || !ctx.sym || !ctx.pool)
			ctx.oom = true;
	}
	ret = ctx.oom ? PP_ENOMEM : perf_reader_run(r, on_event, &ctx);
	if (ret == PP_OK && ctx.pool && upool_flush(ctx.pool))
		ctx.oom = true;
	if (ctx.oom)
		ret = PP_ENOMEM;
	if (ret == PP_OK && !ctx.oom)
		offcpu_account(&ctx, path, r, &sopts);
	st = perf_reader_stats(r);
	ev = perf_reader_evsels(r, &nr);
	nadv = collect_advice(&ctx, st, ev, nr, perf_reader_header(r)->cmdline, adv,
			      sizeof(adv) / sizeof(*adv));
	if (json)
		print_json(path, r, &ctx, adv, nadv);
	else
		print_text(path, r, &ctx, adv, nadv);

	partial = ret != PP_OK || st->skipped_records || st->truncated;
	if (ret != PP_OK)
		pp_warn("'%s': reading stopped early: %s", path, pp_strerror(ret));
	if (partial && ret == PP_OK) {
		char why[512];

		perf_stats_partly(st, why, sizeof(why));
		pp_warn_status("'%s': read partly: %s", path, why);
	}
	c = partial ? (strict ? EXIT_NOTHING : EXIT_PARTIAL) : EXIT_FULL;
	{
		uint64_t total = 0;

		for (uint32_t t = 0; t < PERF_REC_TYPE_MAX; t++)
			total += st->records[t];
		if (!total && !nr)
			c = EXIT_NOTHING;
	}
	perf_reader_close(r);
	profile_free(ctx.offcpu);
	profile_settle();
	free(ctx.threads);
	wordmap_free(&ctx.seen);
	free(ctx.named);
	upool_free(ctx.pool);
	sym_free(ctx.sym);
	machine_free(ctx.m);
	return c;
}
