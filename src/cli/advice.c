/* SPDX-License-Identifier: MIT */
/*
 * advice.c - the warnings that change the meaning of a profile's numbers,
 * computed from the finished profile and the recording's own command line,
 * for report, export and the flame graph alike (advice.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../symbols/symbols.h"
#include "advice.h"

/* A share under which a warning is not worth its line. */
#define ADVICE_MIN_PERCENT 5.0

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The value of @opt in @cmdline's words ("-m 8", "-m8", "--mmap-pages=8",
 * "--mmap-pages 8"), into @buf; false when absent. */
static bool cmdline_value(const char *cmdline, const char *shrt, const char *lng, char *buf,
			  size_t len)
{
	const char *w = cmdline;

	while (w && *w) {
		size_t n;

		while (*w == ' ')
			w++;
		n = strcspn(w, " ");
		if (n == 2 && !strncmp(w, "--", 2))
			return false;   /* the workload's own options follow */
		if ((shrt && !strncmp(w, shrt, strlen(shrt))) ||
		    (lng && !strncmp(w, lng, strlen(lng)))) {
			const char *name = shrt && !strncmp(w, shrt, strlen(shrt)) ? shrt : lng;
			const char *v = w + strlen(name);

			if (*v == '=')
				v++;
			if (*v == ' ' || !*v) {   /* the value is the next word */
				while (*v == ' ')
					v++;
			}
			snprintf(buf, len, "%.*s", (int)strcspn(v, " "), v);
			return *buf != '\0';
		}
		w += n;
	}
	return false;
}

void advice_mmap(const char *cmdline, char *buf, size_t len)
{
	char v[64];
	unsigned long long pages = 0;

	if (cmdline && (cmdline_value(cmdline, "-m", "--mmap-pages", v, sizeof(v)))) {
		char *end;
		unsigned long long n = strtoull(v, &end, 10);

		if (*end == 'K' || *end == 'k')
			n /= 4;
		else if (*end == 'M' || *end == 'm')
			n *= 256;
		else if (*end == 'G' || *end == 'g')
			n *= 262144;
		pages = n;
	}
	/* twice as many, a power of two as perf wants; 16 MiB at least */
	{
		unsigned long long p2 = 1;

		while (p2 <= pages)
			p2 <<= 1;
		snprintf(buf, len, "-m %llu", p2 < 4096 ? 4096ULL : p2);
	}
}

static bool recorded_dwarf(const char *cmdline)
{
	return cmdline && strstr(cmdline, "dwarf");
}

uint64_t advice_offcpu_ns(const struct profile_meta *m)
{
	uint64_t ns = 0;

	for (int l = 0; l < STATE_BY_COUNT; l++)
		ns += m->decided_ns[l];
	return ns;
}

void advice_no_stack(const struct profile_meta *m, char *buf, size_t len)
{
	uint64_t other = m->iv_no_stack - m->iv_no_stack_lost - m->iv_no_stack_unrecorded;
	uint64_t off = advice_offcpu_ns(m);
	char mm[32];
	int n;

	*buf = '\0';
	if (!m->iv_no_stack)
		return;
	n = snprintf(buf, len, "%" PRIu64 " of %" PRIu64 " (%.3f s, %.2f%% of the off-CPU time; "
		     "charged to [off-cpu: stack not recorded], their states decided without "
		     "it): %" PRIu64 " after lost records of their CPU, %" PRIu64 " with no "
		     "sched_switch event recorded, %" PRIu64 " whose sched_switch sample was not "
		     "recorded", m->iv_no_stack, m->iv_exact + m->iv_inferred + m->iv_approx +
		     m->iv_open_at_end, (double)m->iv_no_stack_ns / 1e9,
		     pct(m->iv_no_stack_ns, off), m->iv_no_stack_lost, m->iv_no_stack_unrecorded,
		     other);
	if (n < 0 || (size_t)n >= len)
		return;
	buf += n;
	len -= (size_t)n;
	advice_mmap(m->cmdline, mm, sizeof(mm));
	if (m->iv_no_stack_lost) {
		n = snprintf(buf, len, "; perf lost them: record with a larger buffer (perf record "
			     "%s)%s", mm, recorded_dwarf(m->cmdline) ?
			     ", a dwarf call graph on sched_switch alone (-e sched:sched_switch/"
			     "call-graph=dwarf/ and -g for the other events), or fewer events" :
			     " or fewer events");
		if (n < 0 || (size_t)n >= len)
			return;
		buf += n;
		len -= (size_t)n;
	}
	if (m->iv_no_stack_unrecorded) {
		n = snprintf(buf, len, "; record -e sched:sched_switch with a call graph (-g) "
			     "beside --switch-events");
		if (n < 0 || (size_t)n >= len)
			return;
		buf += n;
		len -= (size_t)n;
	}
	if (other && m->freq_trap)
		snprintf(buf, len, "; record every sched_switch event (-c 1, not at a frequency)");
	else if (other)
		snprintf(buf, len, "; a wait begun before perf enabled sched_switch (in a "
			 "system-wide recording's first moments) has none");
}

/* Where stacks begin: below the root and any --group-by frames. */
static bool stack_root(const struct profile *p, uint32_t node)
{
	uint32_t parent = p->nodes[node].parent;
	uint32_t f = p->nodes[node].frame;

	if (f == UINT32_MAX || p->frames[f].flags & (FRAME_F_PROCESS | FRAME_F_THREAD))
		return false;
	return parent == 0 || (p->nodes[parent].frame != UINT32_MAX &&
			       p->frames[p->nodes[parent].frame].flags & (FRAME_F_PROCESS | FRAME_F_THREAD));
}

/* Anonymous executable memory, where JIT compilers put their code. */
static bool anonymous(const char *module)
{
	return module && (!strncmp(module, "//anon", 6) || !strncmp(module, "[anon", 5) ||
			  !strncmp(module, "/memfd:", 7));
}

static void add(struct advice_list *out, enum advice_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(struct advice_list *out, enum advice_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (out->n == ADVICE_MAX)
		return;
	out->kind[out->n] = kind;
	va_start(ap, fmt);
	vsnprintf(out->text[out->n], ADVICE_LEN, fmt, ap);
	va_end(ap);
	out->ptr[out->n] = out->text[out->n];
	out->n++;
}

void advice_of_profile(const struct profile *p, struct advice_list *out)
{
	const struct profile_meta *m = &p->meta;
	uint64_t on = p->total[0].ns[CNT_ON_CPU], broken = 0, jit = 0, recorded = 0;
	uint64_t ivs = m->iv_exact + m->iv_inferred + m->iv_approx;
	char mm[32];

	out->n = 0;
	for (uint32_t i = 1; i < p->nr_nodes; i++) {
		const struct profile_frame *f = &p->frames[p->nodes[i].frame];

		if (!(f->flags & FRAME_F_KERNEL) && (f->flags & FRAME_F_UNKNOWN) && stack_root(p, i))
			broken += p->total[i].ns[CNT_ON_CPU];
		if ((f->flags & FRAME_F_UNKNOWN) && anonymous(f->module))
			jit += p->self[i].ns[CNT_ON_CPU];
	}
	if (pct(broken, on) >= ADVICE_MIN_PERCENT)
		add(out, ADVICE_BROKEN_STACKS, "broken stacks: %.2f%% of on-cpu time is under an unnamed root ('[unknown]'): "
		    "its callers are missing, so totals and the tree's upper levels are too small; %s",
		    pct(broken, on), recorded_dwarf(m->cmdline) ?
		    "record with a larger stack copy (perf record --call-graph dwarf,65528)" :
		    "code without frame pointers (such as Debian's libraries) broke them: record with "
		    "perf record --call-graph dwarf");
	for (size_t i = 0; i < m->nr_sources; i++)
		recorded += m->sources[i].recorded;
	if (m->lost) {
		advice_mmap(m->cmdline, mm, sizeof(mm));
		add(out, ADVICE_LOST, "lost samples: the kernel lost %" PRIu64 " samples (%.2f%% of those written; "
		    "its buffer was full): their time is missing; record with a larger buffer "
		    "(perf record %s)%s", m->lost, pct(m->lost, m->lost + recorded), mm,
		    recorded_dwarf(m->cmdline) ? " or at a lower -F" : ", or fewer events");
	}
	if (pct(m->iv_inferred + m->iv_approx, ivs) >= ADVICE_MIN_PERCENT)
		add(out, ADVICE_INTERVALS, "off-cpu intervals: %.2f%% had no switch-in recorded (%" PRIu64 " bounded by a "
		    "wakeup or a later event, %" PRIu64 " by the thread's next sample): their lengths "
		    "are estimates; record with -e sched:sched_switch -e sched:sched_waking",
		    pct(m->iv_inferred + m->iv_approx, ivs), m->iv_inferred, m->iv_approx);
	if (pct(jit, on) >= ADVICE_MIN_PERCENT)
		add(out, ADVICE_JIT, "jit code unnamed: %.2f%% of on-cpu time is in anonymous memory without a "
		    "name (a JIT compiler's code): have the runtime write /tmp/perf-PID.map (the "
		    "JVM: -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit; Node: "
		    "--perf-basic-prof; CPython 3.12: -X perf)", pct(jit, on));
}

/*
 * The runtimes' parks whose callers only names tell apart, and what names
 * them, are their rules' "park" lines (profile_meta.parks): HotSpot's in
 * src/profile/waits/50-hotspot.rules, a user's in a --state-rules file.
 */
enum { PARK_NONE, PARK_NAMED, PARK_INTERP, PARK_NOMAP };

/* Whether a frame is a JIT's code: named from a perf map or jitdump, or in
 * anonymous memory. */
static bool jit_code(const char *module, unsigned flags)
{
	return !(flags & FRAME_F_KERNEL) &&
	       ((flags & FRAME_F_JIT) || anonymous(module) || (module && !strcmp(module, "[jit]")));
}

/* What the JIT frame @f is, for @site: interpreted, unnamed, named; NONE
 * for a frame that is no JIT's code (the runtime's own, a library's). */
static int jit_kind(const struct profile_frame *f, const struct profile_park *site)
{
	if (!jit_code(f->module, f->flags))
		return PARK_NONE;
	if (site->interpreted && !strcmp(f->function, site->interpreted))
		return PARK_INTERP;
	return f->flags & FRAME_F_UNKNOWN ? PARK_NOMAP : PARK_NAMED;
}

bool advice_parks(const struct profile *p, struct advice_parks *out)
{
	uint8_t *above = NULL, *park = NULL;
	bool any = false;

	memset(out, 0, sizeof(*out));
	if (p->nr_nodes < 2)
		return false;
	above = calloc(p->nr_nodes, 1);  /* the innermost JIT code so far */
	park = calloc(p->nr_nodes, 1);   /* what that was at the park */
	if (!above || !park)
		goto out;
	for (size_t s = 0; s < p->meta.nr_parks && !any; s++) {
		const struct profile_park *site = &p->meta.parks[s];

		memset(above, 0, p->nr_nodes);
		memset(park, 0, p->nr_nodes);
		/* pre-order: a node's caller comes before it */
		for (uint32_t i = 1; i < p->nr_nodes; i++) {
			const struct profile_node *n = &p->nodes[i];
			const struct profile_frame *f = &p->frames[n->frame];
			uint32_t up = n->parent < p->nr_nodes ? n->parent : 0;
			int k = jit_kind(f, site);

			above[i] = k != PARK_NONE ? (uint8_t)k : above[up];
			park[i] = park[up];
			if (!park[i] && !strcmp(f->function, site->park))
				park[i] = above[up] ? above[up] : PARK_NAMED;
			if (park[i] != PARK_INTERP && park[i] != PARK_NOMAP)
				continue;
			for (int c = 0; c < CNT_COUNT; c++) {
				if (c == CNT_ON_CPU || c == CNT_IDLE || c == CNT_PREEMPTED ||
				    !p->self[i].count[c])
					continue;
				any = true;
				if (park[i] == PARK_INTERP) {
					out->count[c] += p->self[i].count[c];
					out->ns[c] += p->self[i].ns[c];
				} else {
					out->nomap_count += p->self[i].count[c];
					out->nomap_ns += p->self[i].ns[c];
				}
			}
		}
		if (any)
			out->site = site;
	}
out:
	free(above);
	free(park);
	return any;
}

const struct profile_park *advice_interpreted(const char *function, const char *module,
					      unsigned flags, const struct profile_park *parks,
					      size_t n)
{
	if (!function || !jit_code(module, flags))
		return NULL;
	for (size_t s = 0; s < n; s++)
		if (parks[s].interpreted && !strcmp(function, parks[s].interpreted))
			return &parks[s];
	return NULL;
}
