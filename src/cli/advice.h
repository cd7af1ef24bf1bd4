/* SPDX-License-Identifier: MIT */
/*
 * advice.h - what changes the meaning of a profile's numbers (broken
 * stacks, lost samples, off-CPU intervals without their switch-in, JIT
 * code unnamed), said by every view that shows them (report's header,
 * export's warnings, the flame graph's header), and the perf record
 * options that fix each, computed from how the recording was made.
 */
#ifndef CLI_ADVICE_H
#define CLI_ADVICE_H

#include <stddef.h>

#include "../profile/profile.h"

#define ADVICE_MAX 6
#define ADVICE_LEN 480

enum advice_kind { ADVICE_BROKEN_STACKS, ADVICE_LOST, ADVICE_INTERVALS, ADVICE_JIT };

struct advice_list {
	size_t n;
	enum advice_kind kind[ADVICE_MAX];
	char text[ADVICE_MAX][ADVICE_LEN];
	const char *ptr[ADVICE_MAX];   /* text[i], for a list of strings */
};

/**
 * advice_of_profile() - the warnings about @p's numbers into @out: each a
 * sentence, lowercase, saying how much of what is affected and the
 * command line that records it right (from @p's own perf record command
 * line: its -m doubled, --call-graph dwarf where frame pointers broke).
 */
void advice_of_profile(const struct profile *p, struct advice_list *out);

/**
 * advice_mmap() - the -m to suggest after lost samples, from the perf
 * record command line @cmdline (NULL: unknown): twice its -m / --mmap-pages
 * in pages (a power of two) when it gave one, at least 4096; into @buf as
 * "-m N".
 */
void advice_mmap(const char *cmdline, char *buf, size_t len);

/**
 * advice_no_stack() - the off-CPU waits of @m whose stack was not recorded
 * (meta.iv_no_stack*), as one line into @buf: how many of how many, why,
 * their time and its share of the off-CPU time, and what records them with their
 * stacks (from @m's own perf record command line: its -m doubled; a call
 * graph on sched_switch alone where dwarf copies every event's stack).
 * Report and info say the same. "" when every wait has its stack.
 */
void advice_no_stack(const struct profile_meta *m, char *buf, size_t len);

/**
 * advice_offcpu_ns() - the off-CPU time of @m: every interval's (and
 * offcpu-time sample's), as the layers that decided their states add up.
 */
uint64_t advice_offcpu_ns(const struct profile_meta *m);

/*
 * The off-CPU waits in a runtime's park whose callers no name tells apart:
 * the innermost code above the park is the interpreter's or a JIT's code
 * without a map. No rule for the runtime's waits can match them: what
 * decided their state was the system call's arguments, the kernel's
 * default or the waker.
 */
struct advice_parks {
	const struct profile_park *site; /* the first park that had any, @p's */
	uint64_t count[CNT_COUNT];  /* intervals under interpreted callers, by state */
	uint64_t ns[CNT_COUNT];
	uint64_t nomap_count, nomap_ns; /* under a JIT's code without a perf map */
};

/**
 * advice_parks() - count @p's off-CPU waits in a runtime's park (the parks
 * of the rules @p was built with, meta.parks, the first that has any)
 * whose callers are interpreted or unnamed JIT code, by state, into @out
 * (zeroed first; its site is @p's, valid while @p is). The waiting states
 * only (not preempted).
 * Return: whether there are any.
 */
bool advice_parks(const struct profile *p, struct advice_parks *out);

/**
 * advice_interpreted() - whether the frame @function in @module (FRAME_F_*
 * @flags) is a runtime's interpreted code that its perf map names as a
 * whole (HotSpot's "Interpreter"), not by the method, by the @n parks
 * @parks (profile_parks(), or a profile's meta.parks).
 * Return: that runtime's park (of @parks), or NULL.
 */
const struct profile_park *advice_interpreted(const char *function, const char *module,
					      unsigned flags, const struct profile_park *parks,
					      size_t n);

#endif /* CLI_ADVICE_H */
