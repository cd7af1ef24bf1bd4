/* SPDX-License-Identifier: MIT */
/*
 * report.h - what cmd_report.c shares with report_tree.c.
 */
#ifndef CLI_REPORT_H
#define CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../profile/profile.h"

/* SORT_FRAME: a line per frame of the profile, in its order (report --json) */
enum sort_key { SORT_FUNCTION, SORT_MODULE, SORT_STATE, SORT_FRAME };

/*
 * Where a function inlined into another is charged (--inlined): to the
 * function it was inlined into (as the symbol table and perf report's
 * symbol column see the code), or to itself. Either way a function is one
 * line, its inlined and called instances together.
 */
enum inline_rule { INLINE_TO_CALLER, INLINE_OWN };

/** report_parse_inlined() - "caller" or "own" into *@out. Return: 0, or -1 for another word. */
int report_parse_inlined(const char *s, enum inline_rule *out);

/* One line of a top table: a function (a frame), or a module. */
struct func_sum {
	uint32_t frame;              /* the frame, or for a module one of its frames */
	struct profile_counts self, total;
};

/**
 * report_function_sums() - the top tables' lines (@nr set), by function or
 * by module: self and total per counter, a function's total counted once
 * per stack however often it recurses; @by_wait: off-CPU self time where
 * the threads waited (the program's innermost function), else at each leaf.
 * Return: an array the caller frees, NULL out of memory.
 */
struct func_sum *report_function_sums(const struct profile *p, enum sort_key sort, bool by_wait,
				      enum inline_rule rule, size_t *nr);

/**
 * report_function_ids() - per frame of @p, the first frame of the same
 * function (name, module and kind; inlined or not, any line).
 * Return: an array the caller frees, NULL out of memory.
 */
uint32_t *report_function_ids(const struct profile *p);

/** report_function_label() - "function (module)" for frame @f, without "(inlined)": a function's line. */
void report_function_label(const struct profile *p, uint32_t f, char *buf, size_t len);

static inline double report_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/** report_frame_label() - "function (module)" for frame @f (UINT32_MAX: the root). */
void report_frame_label(const struct profile *p, uint32_t f, char *buf, size_t len);

/** report_is_user() - a frame of user code: not kernel, synthetic, process or thread. */
bool report_is_user(const struct profile_frame *f);

/**
 * report_is_program() - a user frame outside the C library's wrappers
 * (profile_module_is_wrapper()): the frames "where a program waited" is
 * read from - its innermost one - by every view (--sort state, the top
 * tables' off-CPU self time, the callee tree, --wakers).
 */
bool report_is_program(const struct profile_frame *f);

/** report_offcpu() - whether counter @c is time off CPU, charged where the thread waits. */
bool report_offcpu(enum counter c);

/**
 * report_caller_tree() - print counter @c's caller tree, each node's
 * children largest first, nodes under @min percent left out.
 * Return: 0, or -1 out of memory.
 */
int report_caller_tree(const struct profile *p, enum counter c, double min);

/**
 * report_callee_tree() - print counter @c's callee (inverted) tree: the
 * functions where time was spent (for an off-CPU counter, the innermost
 * user function: where the thread waited), under each its callers.
 * Return: 0, or -1 out of memory.
 */
int report_callee_tree(const struct profile *p, enum counter c, double min, enum inline_rule rule);

#endif /* CLI_REPORT_H */
