/* SPDX-License-Identifier: MIT */
/*
 * rules.h - the off-CPU state rules: a table, read from a file or the
 * built-in copy of src/profile/state-rules, that turns a switch-out's state
 * and stack into a counter. Internal to src/profile.
 */
#ifndef PROFILE_RULES_H
#define PROFILE_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

#define RULES_MAX 64

struct rule {
	uint64_t states;        /* bit (c - '@') per state letter c; all bits for * */
	char *pattern;          /* fnmatch pattern, NULL for * */
	enum counter counter;
};

struct rules {
	struct rule r[RULES_MAX];
	unsigned n;
};

/* The built-in rules (generated from src/profile/state-rules). */
extern const char profile_default_rules[];

/**
 * rules_parse() - parse rules text into @rs.
 * @name: where the text came from, for error messages.
 * Return: 0, PP_ERULES (the line and the problem were logged) or PP_ENOMEM.
 */
int rules_parse(struct rules *rs, const char *text, const char *name);

/** rules_load() - rules_parse() on the file @path, or the built-in rules when NULL. */
int rules_load(struct rules *rs, const char *path);

/** rules_free() - free the patterns @rs holds. */
void rules_free(struct rules *rs);

/** rules_frame_mask() - bit i set when rule i's pattern matches @function. */
uint64_t rules_frame_mask(const struct rules *rs, const char *function);

/**
 * rules_classify() - the counter for an interval.
 * @state: the prev_state letter ('R', 'S', 'D', ...).
 * @stack_mask: rules_frame_mask() of every frame of the stack, or-ed.
 * Return: the first matching rule's counter; CNT_SLEEP when none matches.
 */
enum counter rules_classify(const struct rules *rs, char state, uint64_t stack_mask);

#endif /* PROFILE_RULES_H */
