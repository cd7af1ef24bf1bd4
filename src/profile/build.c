/* SPDX-License-Identifier: MIT */
/*
 * build.c - profile_build(): the reader, the machine, the unwinding pool and
 * the symbolizer composed into one pass, whose records the accounting
 * consumes in time order; then the finished profile.
 */
#include "priv.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../symbols/upool.h"
#include "../util/error.h"
#include "../util/log.h"
#include "../util/threadtime.h"

struct profile_priv {
	struct tree tree;            /* owns every string of the profile */
	struct profile_frame *frames;
	struct profile_node *nodes;
	struct profile_counts *self, *total;
	struct profile_thread *threads;
	struct profile_source *sources;
	struct profile_module *modules;
	struct profile_runtime *runtimes;
	struct profile_park *parks;
	struct profile_slice *slices;
	struct tree wtree;           /* the off-wake tree (its frames' strings are tree's) */
	struct profile_frame *wframes;
	struct profile_node *wnodes;
	struct profile_counts *wself, *wtotal;
};

struct build_ctx {
	struct perf_reader *r;
	bool chosen;                       /* acct_choose_sources() done */
	bool unwinds;                      /* else nothing goes through the pool */
	struct machine *m;
	struct upool *pool;
	struct namer *namer;
	struct symbolizer *sym;
	const struct profile_opts *o;
	const char *path;
	struct account acct;
	bool acct_ready;
	struct profile *p;                 /* being built (acct counts into its meta) */
	uint64_t span_first, span_last;    /* the samples' times where the header has none
					    * (scan_span()); 0 unknown */
	/* profile_build_windows(): the current window ends at window_hi */
	uint64_t window_ns, window_hi;
	uint64_t skipped_told;             /* records skipped, told in a window before */
	profile_window_fn fn;
	void *fn_ctx;
	bool time_warned;
	/* an estimated wall clock (no clock data): perf's time + est_offset,
	 * fixed at the pass's first profile, so that each window has its own
	 * range, in order, rather than all ending at the same moment */
	bool est_fixed;
	uint64_t est_offset;
	int err;
};

static int window_cut(struct build_ctx *c, const struct perf_event *ev);

static const char *const counter_names[CNT_COUNT] = {
	[CNT_ON_CPU] = "on-cpu",
	[CNT_PREEMPTED] = "preempted",
	[CNT_LOCK] = "lock",
	[CNT_IO] = "io",
	[CNT_SLEEP] = "sleep",
	[CNT_TIMED_SLEEP] = "timed-sleep",
	[CNT_IDLE] = "idle",
};

const char *counter_name(enum counter c)
{
	return (unsigned)c < CNT_COUNT ? counter_names[c] : "?";
}

const char *state_layer_name(enum state_layer l)
{
	static const char *const names[STATE_BY_COUNT] = {
		[STATE_BY_USER] = "user rules",
		[STATE_BY_PROGRAM] = "program rules",
		[STATE_BY_WAKEUP] = "wakeup",
		[STATE_BY_ARGS] = "syscall arguments",
		[STATE_BY_KERNEL] = "kernel rules",
	};

	return (unsigned)l < STATE_BY_COUNT ? names[l] : "?";
}

int counter_parse(const char *name)
{
	for (int i = 0; i < CNT_COUNT; i++)
		if (strcmp(name, counter_names[i]) == 0)
			return i;
	return -1;
}

const char *profile_time_source_name(enum time_source t)
{
	switch (t) {
	case TIME_REALTIME: return "realtime";
	case TIME_CLOCK_DATA: return "clock-data";
	case TIME_ESTIMATED: return "estimated";
	case TIME_GIVEN: return "given";
	}
	return "?";
}

const char *profile_role_name(enum source_role r)
{
	switch (r) {
	case ROLE_ON_CPU: return "on-cpu";
	case ROLE_SCHED_SWITCH: return "sched-switch";
	case ROLE_WAKEUP: return "wakeup";
	case ROLE_OFFCPU_TIME: return "offcpu-time";
	case ROLE_IGNORED: return "ignored";
	}
	return "?";
}

/* --- filters --- */

static int parse_u32_list(const char *s, const char *opt, uint32_t **out, size_t *nr)
{
	size_t n = 1;
	char *end;

	for (const char *p = s; *p; p++)
		n += *p == ',';
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return PP_ENOMEM;
	for (*nr = 0; *nr < n; s = end + 1) {
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (end == s || errno || v > UINT32_MAX || (*end && *end != ',')) {
			pp_error("%s takes numbers separated by commas, not '%s'", opt, s);
			return PP_EUSAGE;
		}
		(*out)[(*nr)++] = (uint32_t)v;
		if (!*end)
			break;
	}
	return 0;
}

/* "SECONDS[.FRACTION]" in perf time into ns; empty is @dflt. */
static int parse_time(const char *s, size_t len, uint64_t dflt, uint64_t *out)
{
	uint64_t sec = 0, ns = 0, scale = 100000000;
	size_t i = 0;

	if (!len) {
		*out = dflt;
		return 0;
	}
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (sec > UINT64_MAX / 10 / 1000000000)
			return -1;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, scale /= 10)
			ns += (uint64_t)(s[i] - '0') * scale;
	if (i != len || (i == 0))
		return -1;
	*out = sec * 1000000000 + ns;
	return 0;
}

/* "A%-B%": a slice of the recording's sample time. */
static int parse_percent(const char *s, const struct perf_header_info *hdr, uint64_t *t0,
			 uint64_t *t1)
{
	double a, b;
	int used = 0;
	uint64_t span;

	if (sscanf(s, "%lf%%-%lf%%%n", &a, &b, &used) != 2 || s[used] || a < 0 || b > 100 ||
	    a > b)
		return -1;
	if (!hdr->sample_time_last || hdr->sample_time_last < hdr->sample_time_first) {
		pp_error("--time '%s': percentages need the recording's sample time range "
			 "(perf's SAMPLE_TIME header, or a file to read it from: not a stream on "
			 "standard input); give times instead", s);
		return -2;
	}
	span = hdr->sample_time_last - hdr->sample_time_first;
	*t0 = hdr->sample_time_first + (uint64_t)((double)span * a / 100.0);
	*t1 = hdr->sample_time_first + (uint64_t)((double)span * b / 100.0);
	return 0;
}

int acct_filter_parse(struct acct_filter *f, const struct profile_opts *o,
		      const struct perf_header_info *hdr)
{
	int ret;

	memset(f, 0, sizeof(*f));
	if (o->pids && (ret = parse_u32_list(o->pids, "--pid", &f->pids, &f->nr_pids)))
		return ret;
	if (o->tids && (ret = parse_u32_list(o->tids, "--tid", &f->tids, &f->nr_tids)))
		return ret;
	if (o->comms) {
		const char *p = o->comms;

		f->comms = calloc(strlen(p) + 1, sizeof(char *));
		if (!f->comms)
			return PP_ENOMEM;
		while (p) {
			const char *c = strchr(p, ',');
			size_t len = c ? (size_t)(c - p) : strlen(p);

			if (len && !(f->comms[f->nr_comms++] = strndup(p, len)))
				return PP_ENOMEM;
			p = c ? c + 1 : NULL;
		}
	}
	if (o->time) {
		const char *comma = strchr(o->time, ',');
		int r;

		f->has_time = true;
		if (strchr(o->time, '%')) {
			r = parse_percent(o->time, hdr, &f->t0, &f->t1);
			if (r == -2)
				return PP_EUSAGE;
		} else {
			r = !comma ? -1 : parse_time(o->time, (size_t)(comma - o->time), 0, &f->t0);
			if (!r)
				r = parse_time(comma + 1, strlen(comma + 1), UINT64_MAX, &f->t1);
			if (!r && f->t1 < f->t0)
				r = -1;
		}
		if (r) {
			pp_error("--time takes START,END in seconds as perf prints them (either "
				 "may be empty) or A%%-B%%, not '%s'", o->time);
			return PP_EUSAGE;
		}
	}
	return 0;
}

/* --- the pass --- */

/* Whether an event of @r records what unwinding reads (sym_unwind_event()). */
static bool unwinds(const struct perf_reader *r)
{
	size_t nr;
	struct perf_evsel *const *evs = perf_reader_evsels(r, &nr);

	for (size_t i = 0; i < nr; i++)
		if (sym_unwind_event(evs[i]))
			return true;
	return false;
}

static int on_pooled(void *ctx, const struct perf_event *ev, const uint64_t *pcs, size_t n)
{
	struct build_ctx *c = ctx;
	int ret = c->window_ns ? window_cut(c, ev) : 0;

	return ret ? ret : acct_event(&c->acct, ev, pcs, n);
}

static int on_event(void *ctx, const struct perf_event *ev)
{
	struct build_ctx *c = ctx;
	int ret = 0;

	if (ev->type == PERF_RECORD_SAMPLE && !c->chosen) {
		size_t nr;
		struct perf_evsel *const *evs = perf_reader_evsels(c->r, &nr);

		/* a pipe announces its events before their samples; what was
		 * queued before is accounted first, and no thread accounts now */
		c->chosen = true;
		ret = upool_flush(c->pool);
		if (ret) {
			c->err = ret;
			return ret;
		}
		acct_choose_sources(&c->acct, evs, nr);
	}
	if (ev->type == PERF_RECORD_SAMPLE && c->o->no_stacks) {
		struct perf_event bare = *ev;  /* counted as a sample with no stack */

		bare.sample.ip = 0;
		bare.sample.callchain = NULL;
		bare.sample.callchain_nr = 0;
		bare.sample.branch = NULL;
		bare.sample.branch_nr = 0;
		bare.sample.user_stack = NULL;
		bare.sample.user_stack_size = bare.sample.user_stack_dyn_size = 0;
		ret = on_pooled(c, &bare, NULL, 0);
		if (ret)
			c->err = ret;
		return ret;
	}
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		ret = c->unwinds ? upool_add(c->pool, ev) : on_pooled(c, ev, NULL, 0);
		break;
	default:
		if (!machine_event_applies(ev))
			break;
		/* threads and maps: after what the pool holds and once the namer
		 * no longer reads the machine as it is, applied, then accounted */
		ret = upool_flush(c->pool);
		if (!ret) {
			namer_drain(c->namer);
			ret = upool_machine_event(c->pool, c->m, ev);
		}
		if (!ret && c->window_ns)
			ret = window_cut(c, ev);
		if (!ret)
			ret = acct_event(&c->acct, ev, NULL, 0);
		break;
	}
	if (ret)
		c->err = ret;
	return ret;
}

/* --- the finished profile --- */

static int thread_cmp(const void *pa, const void *pb)
{
	const struct profile_thread *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static bool thread_empty(const struct acct_thread *t)
{
	for (int i = 0; i < CNT_COUNT; i++)
		if (t->c.count[i])
			return false;
	return true;
}

static int finish_threads(struct profile *p, struct profile_priv *pv, const struct account *a)
{
	size_t n = 0;

	pv->threads = calloc(a->nr_threads ? a->nr_threads : 1, sizeof(*pv->threads));
	if (!pv->threads)
		return PP_ENOMEM;
	for (size_t i = 0; i < a->nr_threads; i++) {
		const struct acct_thread *t = &a->threads[i];
		struct profile_thread *o = &pv->threads[n];

		if (t->filtered || thread_empty(t))
			continue;
		o->pid = t->pid == UINT32_MAX ? t->tid : t->pid;
		o->tid = t->tid;
		o->comm = t->comm;
		/* the lifetime within the recording: a thread perf found
		 * running when it began has no start of its own (time 0) */
		o->start = t->start > a->first_time ? t->start : a->first_time;
		o->end = t->end < a->last_time ? t->end : a->last_time;
		/* a thread first seen in a record after the last sample (a
		 * system-wide recording's late switch) ends where the profile does */
		if (o->start > a->last_time)
			o->start = a->last_time;
		if (o->end < o->start)
			o->end = o->start;
		o->forked = t->forked;
		o->exited = t->exited;
		o->c = t->c;
		o->no_stack = t->no_stack;
		o->run_known = a->switches_seen;
		o->run_ns = a->switches_seen ? t->run_ns : 0;
		o->bounded = t->bounded;
		o->blocked_ns = t->blocked_ns;
		o->delay_ns = t->delay_ns;
		o->open_at_end = t->open_at_end;
		n++;
	}
	qsort(pv->threads, n, sizeof(*pv->threads), thread_cmp);
	p->threads = pv->threads;
	p->nr_threads = n;
	return 0;
}

static int finish_sources(struct profile *p, struct profile_priv *pv, struct account *a,
			  struct perf_reader *r)
{
	size_t nr;
	struct perf_evsel *const *ev = perf_reader_evsels(r, &nr);
	int err = 0;

	pv->sources = calloc(nr ? nr : 1, sizeof(*pv->sources));
	if (!pv->sources)
		return PP_ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct acct_src *s = acct_src(a, ev[i]);
		struct profile_source *o = &pv->sources[i];

		if (!s)
			return PP_ENOMEM;
		o->name = tree_intern(&pv->tree, ev[i]->name ? ev[i]->name : "?", &err);
		o->role = s->role;
		o->freq = s->freq;
		o->period_or_freq = ev[i]->attr.sample_period;
		o->unit = (s->role == ROLE_ON_CPU || s->left_out) && !s->ns ? "events" : "ns";
		o->samples = s->used;
		o->recorded = ev[i]->nr_samples;
		o->left_out = s->left_out;
		o->stacks = ev[i]->attr.sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER);
		if (s->role == ROLE_WAKEUP && o->recorded && o->stacks)
			p->meta.wakers = true;
		if (s->role == ROLE_SCHED_SWITCH || s->role == ROLE_OFFCPU_TIME) {
			p->meta.stack_copies |= !!(ev[i]->attr.sample_type & PERF_SAMPLE_STACK_USER);
			p->meta.user_regs |= !!(ev[i]->attr.sample_type & PERF_SAMPLE_REGS_USER);
		}
	}
	p->meta.sources = pv->sources;
	p->meta.nr_sources = nr;
	return err;
}

static bool realtime_clock(struct perf_reader *r)
{
	size_t nr;
	struct perf_evsel *const *ev = perf_reader_evsels(r, &nr);

	for (size_t i = 0; i < nr; i++)
		if ((ev[i]->attr.flags & PERF_ATTR_FLAG_USE_CLOCKID) && ev[i]->attr.clockid == 0)
			return true;
	return false;
}

static void wall_clock(struct build_ctx *c, struct profile_meta *m, const struct profile_opts *o,
		       bool warn, const struct perf_header_info *hdr, struct perf_reader *r,
		       const char *path)
{
	uint64_t span = m->last_time - m->first_time;

	if (o->has_start_time) {
		m->time_source = TIME_GIVEN;
		m->start_ns = o->start_time_ns;
	} else if (realtime_clock(r)) {
		m->time_source = TIME_REALTIME;
		m->start_ns = m->first_time;
	} else if (hdr->has_clock_data && hdr->clock_data_wall_ns) {
		m->time_source = TIME_CLOCK_DATA;
		m->start_ns = hdr->clock_data_wall_ns + (m->first_time - hdr->clock_data_clk_ns);
	} else {
		uint64_t end = hdr->mtime_ns;

		if (!end) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			end = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
		m->time_source = TIME_ESTIMATED;
		if (!c->est_fixed) {
			/* the reference (the file's modification time, else now)
			 * is taken as the end of the recording's last sample
			 * when the header says when that was, of the profile
			 * made first otherwise (a stream's window, ending about
			 * now); later windows keep that offset */
			uint64_t at = c->window_ns && hdr->sample_time_last > m->last_time &&
				      hdr->sample_time_last - m->last_time < end
				      ? hdr->sample_time_last : m->last_time;

			c->est_offset = end - at;
			c->est_fixed = true;
		}
		m->start_ns = m->first_time + c->est_offset;
		if (warn)
			pp_warn("'%s' holds no wall-clock reference: its start and end are "
				"estimated from the %s; record with 'perf record -k CLOCK_MONOTONIC' "
				"(or -k realtime) for exact times, or give --start-time", path,
				hdr->mtime_ns ? "file's modification time" : "current time");
	}
	m->end_ns = m->start_ns + span;
}

/*
 * Widen @m's address span to hold @f's address. A user module's span
 * starts at the page of its lowest frame, with that page's file offset, as
 * the executable mapping perf recorded does (pprof finds the program header
 * by it); the kernel's addresses are its own (file offset = address).
 */
static void module_span(struct profile_module *m, const struct profile_frame *f)
{
	uint64_t lo = f->addr, hi = f->addr + 1;

	if (!f->addr)
		return;
	if (f->base)
		lo = f->base + ((f->addr - f->base) & ~(uint64_t)0xfff);
	if (!m->limit || lo < m->start)
		m->start = lo;
	if (hi > m->limit)
		m->limit = hi;
	m->file_offset = f->base ? m->start - f->base : m->start;
}

/* The modules frames name, with the build ids the recording gave them and
 * the span of their frames' addresses. */
/* By path, then as recorded: of two files at one path, the first is found. */
static int cmp_dso_path(const void *x, const void *y)
{
	const struct dso *a = *(struct dso *const *)x, *b = *(struct dso *const *)y;
	int r = strcmp(a->path, b->path);

	return r ? r : (a->id > b->id) - (a->id < b->id);
}

/* The first dso of @sorted (by path) whose path is @path, else NULL. */
static const struct dso *dso_by_path(struct dso **sorted, size_t n, const char *path)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(sorted[mid]->path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(sorted[lo]->path, path) ? sorted[lo] : NULL;
}

/*
 * The modules frames name, in order of first use, with their build ids
 * and spans; @by_module maps a module's (interned) name to its index + 1.
 * Linear in frames and files (a recording of 200,000 mapped files was
 * quadratic here: each frame scanned the modules, each module the files).
 */
static int finish_modules(struct profile *p, struct profile_priv *pv, const struct machine *m,
			  struct wordmap *by_module)
{
	struct dso *const *dsos;
	struct dso **with_id;
	size_t nr_dsos, nr_with = 0, n = 0;
	uint32_t next = 1;
	int err = 0;

	dsos = machine_dsos(m, &nr_dsos);
	pv->modules = calloc(p->nr_frames + 1, sizeof(*pv->modules));
	with_id = calloc(nr_dsos + 1, sizeof(*with_id));
	if (!pv->modules || !with_id) {
		free(with_id);
		return PP_ENOMEM;
	}
	for (size_t d = 0; d < nr_dsos; d++)
		if (dsos[d] && dsos[d]->build_id_size && dsos[d]->path)
			with_id[nr_with++] = dsos[d];
	qsort(with_id, nr_with, sizeof(*with_id), cmp_dso_path);
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct profile_frame *f = &p->frames[i];
		uint64_t key = (uint64_t)(uintptr_t)f->module;
		struct profile_module *pm;
		const struct dso *d;
		bool fresh = false;
		uint32_t id;

		if (!f->module)
			continue;
		/* interned: one pointer per name */
		id = wordmap_get(by_module, &key, 1, &next, &fresh);
		if (!id) {
			err = PP_ENOMEM;
			break;
		}
		pm = &pv->modules[id - 1];
		if (fresh) {
			pm->path = f->module;
			d = dso_by_path(with_id, nr_with, f->module);
			if (d) {
				char hex[2 * PERF_MAX_BUILD_ID + 1];

				for (size_t b = 0; b < d->build_id_size; b++)
					snprintf(hex + 2 * b, 3, "%02x", d->build_id[b]);
				pm->build_id = tree_intern(&pv->tree, hex, &err);
			}
			n++;
		}
		module_span(pm, f);
	}
	free(with_id);
	p->modules = pv->modules;
	p->nr_modules = n;
	return err;
}

/* The runtimes the rules know: which one a module of the profile is, how
 * many of that module's frames have names, and what their rules decided. */
static int finish_runtimes(struct profile *p, struct profile_priv *pv, const struct account *a,
			   struct wordmap *by_module)
{
	const struct rules *rs = &a->rules;
	uint16_t *rt_of = calloc(p->nr_modules + 1, sizeof(*rt_of));  /* runtime + 1 */
	int err = 0;

	pv->runtimes = calloc(rs->nrt + 1, sizeof(*pv->runtimes));
	if (!pv->runtimes || !rt_of) {
		free(rt_of);
		return PP_ENOMEM;
	}
	for (size_t i = 0; i < rs->nrt; i++) {
		struct profile_runtime *pr = &pv->runtimes[i];
		const struct rule_runtime *rt = &rs->rt[i];

		pr->name = tree_intern(&pv->tree, rt->name, &err);
		pr->advice = rt->advice ? tree_intern(&pv->tree, rt->advice, &err) : NULL;
		pr->note = rt->note ? tree_intern(&pv->tree, rt->note, &err) : NULL;
		pr->count = a->rt_count[i];
		pr->ns = a->rt_ns[i];
	}
	/* each module once: the runtime it is, the first module of each */
	for (size_t k = 0; k < p->nr_modules; k++) {
		const struct rule_runtime *rt = rules_runtime_of(rs, p->modules[k].path);

		if (!rt)
			continue;
		rt_of[k] = (uint16_t)(rt - rs->rt + 1);
		if (!pv->runtimes[rt - rs->rt].module)
			pv->runtimes[rt - rs->rt].module = p->modules[k].path;
	}
	/* the frames of a runtime's first module, and the unnamed ones */
	for (size_t f = 0; f < p->nr_frames; f++) {
		uint64_t key = (uint64_t)(uintptr_t)p->frames[f].module;
		uint32_t next = 0, id;
		bool fresh = false;
		struct profile_runtime *pr;

		if (!p->frames[f].module)
			continue;
		id = wordmap_get(by_module, &key, 1, &next, &fresh);
		if (!id || fresh || !rt_of[id - 1])
			continue;
		pr = &pv->runtimes[rt_of[id - 1] - 1];
		if (pr->module != p->frames[f].module)
			continue;
		pr->frames++;
		pr->unnamed += !!(p->frames[f].flags & FRAME_F_UNKNOWN);
	}
	free(rt_of);
	p->meta.runtimes = pv->runtimes;
	p->meta.nr_runtimes = rs->nrt;
	/* the parks of the rules used (a --state-rules file's too), the
	 * profile's own copies */
	pv->parks = calloc(rs->nr_parks + 1, sizeof(*pv->parks));
	if (!pv->parks)
		return PP_ENOMEM;
	for (size_t i = 0; i < rs->nr_parks; i++) {
		struct profile_park *k = &pv->parks[i], v;

		rules_park_view(rs, i, &v);
		k->runtime = tree_intern(&pv->tree, v.runtime, &err);
		k->park = tree_intern(&pv->tree, v.park, &err);
		k->interpreted = v.interpreted ? tree_intern(&pv->tree, v.interpreted, &err) : NULL;
		k->waits = tree_intern(&pv->tree, v.waits, &err);
		k->compile = v.compile ? tree_intern(&pv->tree, v.compile, &err) : NULL;
		k->map = tree_intern(&pv->tree, v.map, &err);
	}
	p->meta.parks = pv->parks;
	p->meta.nr_parks = rs->nr_parks;
	return err;
}

static int finish(struct profile *p, struct profile_priv *pv, struct build_ctx *c,
		  struct perf_reader *r, const struct profile_opts *o, const char *path)
{
	const struct perf_header_info *hdr = perf_reader_header(r);
	struct profile_meta *m = &p->meta;
	struct account *a = &c->acct;
	size_t nr_nodes, nr_frames;
	int ret, err = 0;

	acct_finish(a);
	/* --no-kernel: the states were decided on whole stacks; the kernel's
	 * frames leave only now (the off-wake tree's frame strings are the
	 * main tree's, which keeps them) */
	if (o->no_kernel && (tree_strip(&a->tree, FRAME_F_KERNEL) ||
			     (a->wtree_ready && tree_strip(&a->wtree, FRAME_F_KERNEL))))
		return PP_ENOMEM;
	pv->tree = a->tree;          /* the profile keeps the tree's strings */
	memset(&a->tree, 0, sizeof(a->tree));
	ret = tree_finish(&pv->tree, &pv->frames, &nr_frames, &pv->nodes, &pv->self, &pv->total,
			  &nr_nodes, &pv->slices, &p->nr_slices);
	if (ret)
		return ret;
	p->slices = pv->slices;
	p->timed = pv->tree.timed;
	p->nr_timed = pv->tree.nr_timed;
	p->slice_ns = o->slice_ns;
	p->slice_origin = a->slice_origin;
	if (a->wtree_ready) {
		struct profile_slice *none = NULL;
		size_t nr_none = 0;

		pv->wtree = a->wtree;
		a->wtree_ready = false;
		memset(&a->wtree, 0, sizeof(a->wtree));
		ret = tree_finish(&pv->wtree, &pv->wframes, &p->nr_waker_frames, &pv->wnodes,
				  &pv->wself, &pv->wtotal, &p->nr_waker_nodes, &none, &nr_none);
		free(none);
		if (ret)
			return ret;
		p->waker_frames = pv->wframes;
		p->waker_nodes = pv->wnodes;
		p->waker_self = pv->wself;
		p->waker_total = pv->wtotal;
		p->waker_timed = pv->wtree.timed;
		p->nr_waker_timed = pv->wtree.nr_timed;
	}
	p->frames = pv->frames;
	p->nr_frames = nr_frames;
	p->nodes = pv->nodes;
	p->self = pv->self;
	p->total = pv->total;
	p->nr_nodes = nr_nodes;
	for (int i = 0; i < CNT_COUNT; i++)
		if (p->total[0].count[i])
			m->counters_present |= 1u << i;
	m->first_time = a->first_time;
	m->last_time = a->last_time;
	m->window_lo = m->first_time;
	m->window_hi = m->last_time;
	if (a->filter.has_time) {
		if (a->filter.t0 > m->window_lo)
			m->window_lo = a->filter.t0 < m->window_hi ? a->filter.t0 : m->window_hi;
		if (a->filter.t1 < m->window_hi)
			m->window_hi = a->filter.t1 > m->window_lo ? a->filter.t1 : m->window_lo;
	}
	wall_clock(c, m, o, o->warn_estimated_time && !c->time_warned, hdr, r, path);
	c->time_warned = true; /* once a pass: every window is timed alike */
	m->hostname = tree_intern(&pv->tree, hdr->hostname, &err);
	m->osrelease = tree_intern(&pv->tree, hdr->osrelease, &err);
	m->arch = tree_intern(&pv->tree, hdr->arch, &err);
	m->perf_version = tree_intern(&pv->tree, hdr->version, &err);
	m->cmdline = tree_intern(&pv->tree, hdr->cmdline, &err);
	m->state_rules = tree_intern(&pv->tree, o->state_rules ? o->state_rules : "built-in", &err);
	m->nr_cpus = hdr->nr_cpus_online ? hdr->nr_cpus_online : hdr->nr_cpus_avail;
	m->offcpu_simple = o->offcpu_simple;
	m->group_by = o->group_by;
	if (err)
		return err;
	ret = finish_threads(p, pv, a);
	if (!ret)
		ret = finish_sources(p, pv, a, r);
	if (!ret) {
		struct wordmap by_module = { 0 };

		ret = finish_modules(p, pv, c->m, &by_module);
		if (!ret)
			ret = finish_runtimes(p, pv, a, &by_module);
		wordmap_free(&by_module);
	}
	return ret;
}

/* An empty profile (a filter that matched nothing, an event without
 * samples, a recording of nothing counted) leaves every output empty: say so. */
static void check_empty(const struct profile *p, const struct profile_opts *o, const char *path)
{
	char what[512];
	size_t used = 0;
	const struct {
		const char *opt, *value;
	} f[] = {
		{ "--pid", o->pids }, { "--tid", o->tids }, { "--comm", o->comms },
		{ "--time", o->time },
	};

	if (p->meta.counters_present)
		return;
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++) {
		int w;

		if (!f[i].value || used >= sizeof(what))
			continue;
		w = snprintf(what + used, sizeof(what) - used, "%s%s %s", used ? " " : "",
			     f[i].opt, f[i].value);
		used += w > 0 ? (size_t)w : 0;
	}
	if (used)
		pp_warn("nothing in '%s' matched %s: the profile is empty", path, what);
	else if (o->events)
		pp_warn("'%s' holds no samples of %s: the profile is empty", path, o->events);
	else
		pp_warn("'%s' holds nothing a profile counts (samples of a sampling event, "
			"sched_switch, switch records): the profile is empty", path);
}

/* Sampling events the default profile left out (it counts one event): say
 * which, and how to count them. */
static void check_left_out(const struct profile *p, const char *path)
{
	const struct profile_meta *m = &p->meta;
	char left[512], counted[256];
	size_t nl = 0, nc = 0, nr = 0;
	const char *first = NULL;

	left[0] = counted[0] = '\0';
	for (size_t i = 0; i < m->nr_sources; i++) {
		const struct profile_source *s = &m->sources[i];
		int w;

		if (s->left_out && s->recorded && nl < sizeof(left)) {
			w = snprintf(left + nl, sizeof(left) - nl, "%s'%s' (%" PRIu64 ")",
				     nl ? ", " : "", s->name, s->recorded);
			nl += w > 0 ? (size_t)w : 0;
			first = first ? first : s->name;
			nr++;
		} else if (s->role == ROLE_ON_CPU && s->samples && nc < sizeof(counted)) {
			w = snprintf(counted + nc, sizeof(counted) - nc, "%s'%s'", nc ? ", " : "",
				     s->name);
			nc += w > 0 ? (size_t)w : 0;
		}
	}
	if (nr)
		pp_warn("'%s' holds samples of several events: the on-CPU profile counts one, %s, "
			"and leaves out %s (summed, their weights would mix units or count the "
			"same time twice; --event picks, e.g. --event '%s')", path,
			nc ? counted : "none", left, first);
}

/* Start the profile of the recording, or of the window from @lo (0: its first sample). */
static int profile_open(struct build_ctx *c, uint64_t lo)
{
	struct profile_priv *pv;
	/* the header, with the samples' times read from the records where it
	 * has none (scan_span()): --time's percentages and the accounting's
	 * span read them as the header's */
	struct perf_header_info hdr = *perf_reader_header(c->r);
	int ret;

	if (c->span_last) {
		hdr.sample_time_first = c->span_first;
		hdr.sample_time_last = c->span_last;
	}
	c->p = calloc(1, sizeof(*c->p));
	pv = calloc(1, sizeof(*pv));
	if (!c->p || !pv) {
		free(c->p);
		free(pv);
		c->p = NULL;
		return PP_ENOMEM;
	}
	c->p->priv = pv;
	ret = acct_init(&c->acct, c->o, c->m, c->namer, &hdr, &c->p->meta);
	c->acct_ready = true;
	if (ret)
		return ret;
	if (lo) {
		/* a later window spans from its boundary, not from the
		 * recording's first sample (what the header says) */
		c->acct.hdr_first = lo;
		c->acct.first_time = lo;
	}
	if (c->chosen) {
		size_t nr;
		struct perf_evsel *const *evs = perf_reader_evsels(c->r, &nr);

		acct_choose_sources(&c->acct, evs, nr);
	}
	return 0;
}

static void acct_drop(struct build_ctx *c)
{
	if (!c->acct_ready)
		return;
	acct_release(&c->acct);
	tree_release(&c->acct.tree);
	c->acct_ready = false;
}

/*
 * Finish the profile being built (up to @hi, perf clock; 0: its last
 * event) into c->p; the accounting is released. @partial: the pass so far
 * skipped something. Return: 0, or an error (c->p freed then).
 */
static int profile_close(struct build_ctx *c, uint64_t hi)
{
	struct profile *p = c->p;
	int ret;

	p->read = *perf_reader_stats(c->r);
	p->meta.lost = perf_stats_lost(&p->read);
	if (!hi) {
		/* the pass is over (namer_finish()): the naming's counts are
		 * whole; a window before the last has none (the naming
		 * threads are still counting) */
		p->sym = *sym_stats(c->sym);
		namer_add_stats(c->namer, &p->sym);
		upool_add_stats(c->pool, &p->sym);
	}
	if (hi && c->acct.first_time && c->acct.last_time < hi)
		c->acct.last_time = hi; /* the window spans to its end */
	if (!hi && c->acct.first_time) {
		/*
		 * The recording's last (or only) part spans its samples of
		 * every event where the header (or scan_span()) says when they
		 * were, not only those of the events counted: the time charged
		 * was clipped to that span (account-intervals.c), and each
		 * thread's lifetime is to hold it (an event left out, or a
		 * tracepoint perf's lost features leave unknown, sampled
		 * before the first counted sample or after the last).
		 */
		if (c->acct.hdr_first && c->acct.hdr_first < c->acct.first_time)
			c->acct.first_time = c->acct.hdr_first;
		if (c->acct.hdr_last > c->acct.last_time)
			c->acct.last_time = c->acct.hdr_last;
	}
	ret = finish(p, p->priv, c, c->r, c->o, c->path);
	acct_drop(c);
	if (ret) {
		profile_free(p);
		c->p = NULL;
	}
	return ret;
}

static bool pass_partial(struct build_ctx *c, int ret)
{
	const struct perf_stats *st = perf_reader_stats(c->r);

	return ret != PP_OK || st->skipped_records || st->truncated;
}

/*
 * What of the reading @p, a stream's window, says is its own: the records
 * skipped since the window before (each told once), and, in a window cut
 * before the stream's end (@last false), no end found early: the record
 * that cut it was read whole after every one of its own, and a stream
 * read ahead had often met its cut end already (each window after then
 * said 'the data ends early'). Return: whether @p was read partly.
 */
static bool window_read(struct build_ctx *c, struct profile *p, bool last)
{
	uint64_t seen = p->read.skipped_records;

	if (!last && !p->read.unfinished && p->read.truncated) {
		/* the end cut inside a record is the reader's last skip: the
		 * last window's */
		if (seen > c->skipped_told)
			seen--;
		p->read.truncated = false;
	}
	p->read.skipped_records = seen - c->skipped_told;
	c->skipped_told = seen;
	return p->read.skipped_records || p->read.truncated;
}

/* The end of a window that begins at @lo and lasts @len: the clock's
 * last value when that is past its range. */
static uint64_t window_end(uint64_t lo, uint64_t len)
{
	return lo > UINT64_MAX - len ? UINT64_MAX : lo + len;
}

/*
 * Before accounting @ev: when it is at or past the current window's end,
 * that window is finished and handed on, and the one @ev falls in begins.
 */
static int window_cut(struct build_ctx *c, const struct perf_event *ev)
{
	uint64_t t = ev->type == PERF_RECORD_SAMPLE || ev->has_sample_id ? ev->sample.time : 0;
	struct acct_carry *carry = NULL;
	uint64_t lo;
	struct profile *p;
	bool empty;
	int ret;

	if (!t)
		return 0;
	if (!c->window_hi) {
		if (ev->type != PERF_RECORD_SAMPLE)
			return 0;
		/* windows count from the first sample; one that would end past
		 * the clock's range lasts to its end (window_hi 0 is "none yet") */
		c->window_hi = window_end(t, c->window_ns);
		return 0;
	}
	if (t < c->window_hi || c->window_hi == UINT64_MAX)
		return 0;
	lo = c->window_hi + (t - c->window_hi) / c->window_ns * c->window_ns;
	/* every record before @ev was accounted (the pool delivers in
	 * order; a machine record comes after a flush): the pool's workers
	 * are let finish, what they unwind is delivered after this cut (a
	 * flush here delivered later samples into this window, and, called
	 * from the pool's delivery, again the batch being delivered: watch -i -
	 * of a dwarf stream recursed until its stack overflowed); what goes
	 * on into the next window, then this window's profile */
	upool_quiesce(c->pool);
	ret = acct_carry_take(&c->acct, &carry);
	if (ret)
		return ret;
	empty = !c->acct.first_time || c->acct.rec_first == 0;
	ret = profile_close(c, c->window_hi);
	if (ret)
		goto out;
	/* between windows, nothing holds a ticket: the requests are let go,
	 * then what libdw holds is bounded */
	namer_reset(c->namer);
	sym_trim(c->sym);
	p = c->p;
	c->p = NULL;
	empty = empty || !p->meta.counters_present;
	if (empty)
		profile_free(p);
	else if ((ret = c->fn(c->fn_ctx, p, window_read(c, p, false))))
		goto out;
	c->window_hi = window_end(lo, c->window_ns);
	ret = profile_open(c, lo);
	if (!ret)
		ret = acct_carry_put(&c->acct, carry, lo);
out:
	acct_carry_free(carry);
	return ret;
}

/*
 * The namer's lanes: none with -j 1 (naming in the pass), one thread with
 * -j 2 and 3, and from -j 4 one per two jobs: with the unwinding pool,
 * naming is what the pass waits for longest on a program with much
 * inlining. A stream's windows and rotated recordings keep one lane: the
 * memory naming holds between them is bounded for one symbolizer.
 */
static unsigned namer_threads(const struct profile_opts *o, uint64_t window_ns)
{
	if (o->jobs < 2)
		return 0;
	if (o->jobs < 4 || window_ns || o->sym_keep)
		return 1;
	return o->jobs / 2 < NAMER_MAX_LANES ? o->jobs / 2 : NAMER_MAX_LANES;
}

/*
 * What a pass made to read its recording, let go (and the reader closed);
 * with @keep_sym the symbolizer is the caller's (profile_opts.sym_keep).
 */
static void build_free(struct build_ctx *c, bool keep_sym)
{
	acct_drop(c);
	profile_free(c->p);
	upool_free(c->pool);
	namer_free(c->namer);
	if (keep_sym)
		sym_trim(c->sym); /* bounded between recordings as between windows */
	else
		sym_free(c->sym);
	machine_free(c->m);
	perf_reader_close(c->r);
	free(c);
}

/*
 * The last pass's teardown, when it runs beside what the caller does with
 * the profile (profile_build() with threads): the threads' symbolizers,
 * the naming's requests, the maps and the reader's buffers take a few
 * milliseconds to let go (6 ms of the main thread's 45 at -j 4 on the C++
 * bench), and the profile holds nothing of theirs. Only the caller's
 * thread starts and joins it.
 */
static pthread_t teardown_thread;
static bool teardown_running;

static void *teardown_main(void *arg)
{
	thread_role("teardown");
	build_free(arg, false);
	thread_time_note("teardown");
	return NULL;
}

void profile_settle(void)
{
	if (!teardown_running)
		return;
	pthread_join(teardown_thread, NULL);
	teardown_running = false;
}

/*
 * Build from the open reader @r (closed here, whatever happens): one
 * profile into *@out, or with @window_ns one per window handed to @fn.
 * With @defer, what the pass made is let go on a thread of its own, after
 * the return (profile_settle()). @span: the first and last sample's times
 * where the header has none (scan_span(); 0 or NULL: none read).
 */
static int build(struct perf_reader *r, const char *path, const struct profile_opts *o,
		 uint64_t window_ns, profile_window_fn fn, void *fn_ctx, struct profile **out,
		 bool defer, const uint64_t span[2])
{
	struct build_ctx *c;
	int ret;

	if (out)
		*out = NULL;
	if (o->shown)
		path = o->shown;  /* the name said, not the descriptor's path read */
	profile_settle(); /* one pass's teardown at a time (they share what symbols/ caches) */
	c = calloc(1, sizeof(*c));
	if (!c) {
		perf_reader_close(r);
		return PP_ENOMEM;
	}
	c->r = r;
	c->o = o;
	c->path = path;
	c->window_ns = window_ns;
	c->fn = fn;
	c->fn_ctx = fn_ctx;
	if (span) {
		c->span_first = span[0];
		c->span_last = span[1];
	}
	c->m = machine_new(perf_reader_header(r));
	if (o->sym_keep) {
		/* the caller's, from the recordings before: what it made of
		 * the same files is named from */
		c->sym = o->sym_keep;
		sym_rebind(c->sym, perf_reader_header(r));
	} else {
		/* a stream's windows: what libdw holds is bounded (sym_trim()) */
		struct sym_opts so = o->sym;

		if (window_ns && !so.dwarf_max)
			so.dwarf_max = SYM_DWARF_MAX_DEFAULT;
		if (window_ns && !so.idle_s)
			so.idle_s = SYM_IDLE_S_DEFAULT;
		c->sym = sym_new(&so, perf_reader_header(r));
	}
	if (c->sym && o->jobs > 1)
		sym_prefetch(c->sym, o->jobs - 1 < 4 ? o->jobs - 1 : 4);
	/* a file whose events record nothing to unwind is accounted straight
	 * from the reader, past the pool (a pipe announces its events later),
	 * which then starts no thread: its unwinding threads and the
	 * delivering one would only be started and stopped (1-4 ms of the
	 * main thread's start on the -g bench file) */
	c->unwinds = !o->no_stacks && (perf_reader_header(r)->pipe || unwinds(r));
	/* with threads, the pass's accounting runs on one of the pool's (a
	 * stream's windows are cut, read and sent by the reading thread) */
	c->pool = c->m ? upool_new(c->unwinds && o->jobs ? o->jobs : 1, &o->sym,
				   perf_reader_header(r), c->m, on_pooled, c,
				   window_ns ? 0 : UPOOL_DELIVER_THREAD) : NULL;
	c->namer = c->sym ? namer_new(c->sym, namer_threads(o, window_ns)) : NULL;
	if (!c->m || !c->sym || !c->pool || !c->namer) {
		ret = PP_ENOMEM;
		goto out;
	}
	ret = profile_open(c, 0);
	if (ret)
		goto out;
	ret = perf_reader_run(r, on_event, c);
	if (ret == PP_OK || ret == PP_ESTOPPED)
		ret = upool_flush(c->pool);
	else
		upool_wait(c->pool); /* no thread of the pool accounts any more */
	if (c->err)
		ret = c->err;
	namer_finish(c->namer); /* then the symbolizer's counts are whole */
	/* a window's consumer that failed ends the pass (one that asked to
	 * stop, PP_ESTOPPED, gets the last window) */
	if (ret == PP_ENOMEM || ret == PP_ERULES || ret == PP_EUSAGE || !c->p ||
	    (window_ns && c->err && c->err != PP_ESTOPPED))
		goto out;
	{
		int rr = window_ns && ret == PP_ESTOPPED ? PP_OK : ret;
		bool partial = pass_partial(c, rr), partial_ret = rr != PP_OK;
		struct profile *p;

		ret = profile_close(c, 0);
		if (ret)
			goto out;
		p = c->p;
		c->p = NULL;
		if (!window_ns) {
			check_empty(p, o, path);
			check_left_out(p, path);
			*out = p;
		} else if (p->meta.counters_present) {
			ret = fn(fn_ctx, p, window_read(c, p, true) || partial_ret);
			if (ret)
				goto out;
		} else {
			profile_free(p);
		}
		ret = partial ? PP_EPARTIAL : PP_OK;
	}
out:
	if (defer && !pthread_create(&teardown_thread, NULL, teardown_main, c))
		teardown_running = true;
	else
		build_free(c, o->sym_keep != NULL);
	return ret;
}

static int span_note(void *ctx, const struct perf_event *ev)
{
	uint64_t *span = ctx;

	if (ev->type == PERF_RECORD_SAMPLE && ev->sample.time) {
		if (!span[0] || ev->sample.time < span[0])
			span[0] = ev->sample.time;
		if (ev->sample.time > span[1])
			span[1] = ev->sample.time;
	}
	return 0;
}

/*
 * The first and last sample's times of @r's recording, where its header
 * does not give them (no SAMPLE_TIME, or 0 there: perf record -B does not
 * read its samples for their build-ids; a pipe-mode file has no header):
 * the accounting charges a thread nothing outside them, as with the
 * header's (a per-task fork storm's shell runs on after its last child's
 * exit, past the last sample). One quiet pass over the records, unordered,
 * before the real one, of the regular file or perf record --threads
 * directory at @path: a stream (standard input, a FIFO) is read once, as a
 * recording in memory is (profile_build_mem(): a stream's bytes). @span is
 * left 0 where that cannot be or fails (the real pass says why).
 */
static void scan_span(const struct perf_reader *r, const char *path,
		      const struct profile_opts *o, uint64_t span[2])
{
	struct perf_reader_opts ropts = { .stop = o->stop };
	struct perf_reader *scan;
	struct stat st;
	int level = pp_log_get_level();

	span[0] = span[1] = 0;
	if (perf_reader_header(r)->sample_time_last || strcmp(path, "-") == 0 ||
	    stat(path, &st) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return;
	pp_log_set_level(-1);      /* what it meets, the real pass says */
	if (!perf_reader_open(path, &ropts, &scan)) {
		if (perf_reader_run(scan, span_note, span))
			span[0] = span[1] = 0;
		perf_reader_close(scan);
	}
	pp_log_set_level(level);
}

int profile_build(const char *path, const struct profile_opts *o, struct profile **out)
{
	/* with threads, a file's data is read ahead on a thread of the reader's */
	struct perf_reader_opts ropts = {
		.ordered = true, .progress = o->progress, .progress_ctx = o->progress_ctx,
		.events = o->events, .stop = o->stop, .read_ahead = o->jobs > 1,
		.shown = o->shown,
	};
	struct perf_reader *r;
	uint64_t span[2];
	int ret;

	*out = NULL;
	ret = perf_reader_open(path, &ropts, &r);
	if (ret)
		return ret;
	/* and cut there, this thread only decoding and accounting, where this
	 * thread is the pass's bottleneck: not where the unwinding pool wants
	 * every core (a C++ --call-graph dwarf export at -j 2 took 1.14-1.17x
	 * as long with a cutting thread, on two cores) */
	perf_reader_set_threaded(r, o->jobs > 1 && (o->no_stacks || !unwinds(r)));
	scan_span(r, path, o, span);
	return build(r, path, o, 0, NULL, NULL, out, o->jobs > 1 && !o->sym_keep, span);
}

int profile_build_windows(const char *path, const struct profile_opts *o, uint64_t window_ns,
			  profile_window_fn fn, void *ctx)
{
	/* a slow live stream is read every quarter of a window, every 250 ms
	 * at most: few wake-ups (1 s windows of a system-wide -g stream here,
	 * the reading thread's median CPU a window in two 60 s runs each:
	 * 0.031/0.024 s reading at once, 0.008/0.017 s every 100 ms,
	 * 0.010/0.015 s every 250 ms), windows still cut on time */
	struct perf_reader_opts ropts = {
		.ordered = true, .progress = o->progress, .progress_ctx = o->progress_ctx,
		.events = o->events, .stop = o->stop,
		.gather_ms = window_ns >= 1000000000u ? 250 : (unsigned)(window_ns / 4000000u),
		.shown = o->shown,
	};
	struct perf_reader *r;
	int ret;

	if (!window_ns || !fn)
		return PP_EUSAGE;
	ret = perf_reader_open(path, &ropts, &r);
	return ret ? ret : build(r, path, o, window_ns, fn, ctx, NULL, false, NULL);
}

int profile_build_mem(const void *data, size_t size, const char *name,
		      const struct profile_opts *o, struct profile **out)
{
	struct perf_reader_opts ropts = { .ordered = true, .events = o->events };
	struct perf_reader *r;
	int ret;

	*out = NULL;
	ret = perf_reader_open_mem(data, size, &ropts, &r);
	return ret ? ret : build(r, name, o, 0, NULL, NULL, out, false, NULL);
}

void profile_free(struct profile *p)
{
	struct profile_priv *pv;

	if (!p)
		return;
	pv = p->priv;
	if (pv) {
		tree_release(&pv->tree);
		free(pv->frames);
		free(pv->nodes);
		free(pv->self);
		free(pv->total);
		free(pv->threads);
		free(pv->sources);
		free(pv->modules);
		free(pv->runtimes);
		free(pv->parks);
		free(pv->slices);
		tree_release(&pv->wtree);
		free(pv->wframes);
		free(pv->wnodes);
		free(pv->wself);
		free(pv->wtotal);
		free(pv);
	}
	free(p);
}

/* --- reading the view --- */

int profile_walk(const struct profile *p, profile_walk_fn fn, void *ctx)
{
	uint32_t *open, max = 0;
	size_t depth = 0;
	int ret = 0;

	for (uint32_t i = 0; i < p->nr_nodes; i++)
		if (p->nodes[i].depth > max)
			max = p->nodes[i].depth;
	open = malloc(((size_t)max + 1) * sizeof(*open));
	if (!open)
		return PP_ENOMEM;
	for (uint32_t i = 0; i < p->nr_nodes && !ret; i++) {
		while (depth && p->nodes[open[depth - 1]].end <= i && !ret)
			ret = fn(ctx, p, open[--depth], true);
		if (!ret)
			ret = fn(ctx, p, i, false);
		open[depth++] = i;
	}
	while (depth && !ret)
		ret = fn(ctx, p, open[--depth], true);
	free(open);
	return ret;
}

int profile_stacks(const struct profile *p, profile_stack_fn fn, void *ctx)
{
	uint32_t *frames;
	int ret = 0;

	if (!p->nr_nodes)
		return 0;
	frames = malloc((p->nr_nodes + 1) * sizeof(*frames));
	if (!frames)
		return PP_ENOMEM;
	for (uint32_t i = 0; i < p->nr_nodes && !ret; i++) {
		const struct profile_node *n = &p->nodes[i];
		bool any = false;

		if (n->depth)
			frames[n->depth - 1] = n->frame;
		for (int c = 0; c < CNT_COUNT; c++)
			any |= p->self[i].count[c] || p->self[i].ns[c];
		if (any)
			ret = fn(ctx, p, frames, n->depth, i);
	}
	free(frames);
	return ret;
}
