/* SPDX-License-Identifier: MIT */
/*
 * rules.h - the off-CPU state rules: tables, read from text in the form
 * users write (src/profile/state-rules, src/profile/waits/NN-NAME.rules, a
 * --state-rules file), that turn a switch-out's state and stack - or the
 * stack of what woke the thread - into a counter. Internal to src/profile.
 *
 * Every rule belongs to one set: the user's, the programs' (what a runtime
 * or server waits for, by its own wait functions) or the kernel's (the
 * thread state and kernel paths). Within a set and a side the first rule
 * whose states and pattern match decides; which set is asked first is the
 * accounting's business (verdict.c, docs/wait-states.md).
 */
#ifndef PROFILE_RULES_H
#define PROFILE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* Where a rule came from; the order in which rules_setup() reads them. */
enum rule_set {
	RULE_SET_USER,          /* --state-rules FILE */
	RULE_SET_PROGRAM,       /* src/profile/waits/: runtimes' wait functions */
	RULE_SET_KERNEL,        /* src/profile/state-rules: thread state, kernel paths */
	RULE_SETS,
};

/* Which stack a rule reads. */
enum rule_side {
	RULE_BLOCKED,           /* the thread's own stack at the switch-out */
	RULE_WAKER,             /* "woken-by": the stack of the sched_waking that ended it */
	RULE_SIDES,
};

/* How a pattern is matched: most are a literal at a place, tried without fnmatch. */
enum rule_match {
	MATCH_ANY,              /* "*": every frame, and a stack that is not known */
	MATCH_EXACT,
	MATCH_PREFIX,           /* "lit*" */
	MATCH_SUFFIX,           /* "*lit" */
	MATCH_INFIX,            /* "*lit*" */
	MATCH_GLOB,             /* anything else: fnmatch() */
};

struct rule {
	char *pattern;          /* as written; NULL for "*" */
	const char *lit;        /* the literal of a non-glob match, inside pattern */
	size_t lit_len;
	uint64_t states;        /* bit (c - '@') per state letter c; all bits for * */
	uint32_t line;          /* where it was written */
	uint32_t also;          /* FUNCTION&ALSO: r[also - 1] (ALSO's pattern, a rule
				 * of no states) must match a frame too; 0 none */
	uint32_t caller_of;     /* FUNCTION^CALLER: this is CALLER's rule, and counts
				 * only at the frame just outside one r[caller_of -
				 * 1] matched (its direct caller); 0 any frame */
	uint16_t runtime;       /* runtimes[runtime - 1] it is for; 0 none */
	uint8_t set;            /* enum rule_set */
	uint8_t side;           /* enum rule_side */
	uint8_t counter;        /* enum counter */
	uint8_t match;          /* enum rule_match */
	bool defer;             /* COUNTER "defer": the set decides nothing; the
				 * next evidence does */
};

/* A runtime or server a set of rules is written for ("runtime" lines). */
struct rule_runtime {
	char *name;
	char **modules;         /* fnmatch patterns on a module's file name */
	size_t nr_modules;
	char *advice;           /* what gives its rules the names they read; NULL none */
	char *note;             /* what a report of its threads should say; NULL none */
	uint8_t set;
	bool wrappers;          /* "wrappers": its functions wrap system calls for a
				 * program; where a program waits is its innermost
				 * frame outside them (the C library) */
};

/* "syscall FUNCTION CALL": a user function (a C library's wrapper) that
 * makes system call CALL, for stacks whose kernel frames are not named. */
struct rule_syscall {
	char *pattern;          /* fnmatch pattern on the function's name */
	int call;               /* sys_call_of()'s number */
	uint16_t runtime;       /* runtimes[runtime - 1] it is for; 0 none */
};

/* "park FUNCTION KEY VALUE...": the function all of a runtime's waits park
 * in, told apart only by the names of the code above it (HotSpot's
 * Unsafe_Park), and what names that code where nothing does. */
struct rule_park {
	char *function;         /* the park: a function's name, exact */
	char *interpreted;      /* "interpreted": the one name a perf map gives all of
				 * the runtime's interpreted code; NULL none */
	char *waits;            /* "waits": whose waits park there, for a reader */
	char *compile;          /* "compile": what names interpreted callers; NULL
				 * where interpreted is */
	char *map;              /* "map": what names a JIT's code without a perf map */
	uint16_t runtime;       /* runtimes[runtime - 1] it is for */
};

/* The patterns of "interrupt" or "yield" lines (fnmatch, on a function's name). */
struct rule_patterns {
	char **p;
	size_t n, cap;
};

struct rules {
	struct rule *r;         /* in order: user, program, kernel rules */
	size_t n, cap;
	struct rule_runtime *rt;
	size_t nrt, cap_rt;
	struct rule_syscall *sys;  /* "syscall" lines, in order */
	size_t nr_sys, cap_sys;
	struct rule_park *parks;   /* "park" lines, in order */
	size_t nr_parks, cap_parks;
	struct rule_patterns interrupts; /* "interrupt": kernel frames of interrupt handling */
	struct rule_patterns yields;     /* "yield": functions giving up the CPU by choice */
	/* per set, side and state letter: the first rule without a pattern,
	 * SIZE_MAX none (rules_setup() fills it) */
	size_t any_first[RULE_SETS][RULE_SIDES][64];
};

/* A built-in rule text and the file it was made from. */
struct rules_text {
	const char *name;
	const char *text;
};

/* The built-in rule texts (generated from src/profile/state-rules and
 * src/profile/waits/ by the Makefile): the kernel's, and the programs' in
 * the order of their file names, ending with a NULL name. */
extern const char profile_default_rules[];
extern const struct rules_text profile_program_rules[];

/**
 * rules_parse() - parse rules text and append its rules to @rs, as @set.
 * @rs: zeroed before the first call; freed with rules_free().
 * @name: where the text came from, for error messages.
 *
 * A line is a rule, "STATES FUNCTION COUNTER", or "woken-by STATES FUNCTION
 * COUNTER" (a rule on the waker's stack), or a directive: "runtime NAME
 * [MODULE-PATTERN...]" (the rules below are NAME's), "advice TEXT" (what
 * gives NAME's rules their names), "note TEXT" (what a report where
 * NAME's rules decided should say of its waits), "wrappers" (NAME's functions wrap
 * system calls: where a program waits is its innermost frame outside
 * them), "syscall FUNCTION CALL" (NAME's function FUNCTION makes system
 * call CALL), "park FUNCTION KEY VALUE..." (NAME's waits all park in
 * FUNCTION: keys interpreted, waits, compile and map, each once; a VALUE
 * is a word or a "quoted text"; waits and map are required, interpreted
 * and compile go together), "interrupt PATTERN..." (kernel functions of interrupt
 * handling), "yield PATTERN..." (functions, user or kernel, by which a
 * thread gives up its CPU and stays runnable).
 * # starts a comment. A text holds at least one rule or runtime.
 * Return: 0, PP_ERULES (the line and the problem were logged) or PP_ENOMEM.
 */
int rules_parse(struct rules *rs, const char *text, const char *name, enum rule_set set);

/**
 * rules_setup() - the rules perfport decides with: the file @user_path
 * (NULL: none) as the user's set, then the built-in program and kernel
 * sets. @rs is then ready for rules_first(); free it with rules_free().
 * Return: 0, PP_ENOENT, PP_EIO, PP_ERULES (logged) or PP_ENOMEM.
 */
int rules_setup(struct rules *rs, const char *user_path);

/** rules_index() - fill any_first[] once every set is parsed (rules_setup() calls it). */
void rules_index(struct rules *rs);

/** rules_free() - free what @rs holds; it is then empty. */
void rules_free(struct rules *rs);

/** rules_match() - whether rule @i's pattern matches @function (a "*" rule matches all). */
bool rules_match(const struct rules *rs, size_t i, const char *function);

/**
 * rules_frame_matches() - the rules with a pattern that match @function,
 * ascending, into @out (at most @max). Return: how many there are.
 */
size_t rules_frame_matches(const struct rules *rs, const char *function, uint32_t *out,
			   size_t max);

/**
 * rules_wrapper_call() - the system call (sys_call_of()'s number) that the
 * user function @function of module @module makes, by the "syscall" lines
 * of its module's runtime (or of any runtime, for a module no runtime
 * claims); 0 when none says.
 */
int rules_wrapper_call(const struct rules *rs, const char *function, const char *module);

/** rules_is_interrupt() - whether @function is a kernel frame of interrupt handling. */
bool rules_is_interrupt(const struct rules *rs, const char *function);

/**
 * rules_is_yield() - whether @function (user or kernel) gives up the CPU by
 * the thread's own choice, leaving it runnable ("yield" lines: sched_yield
 * and the kernel's entry to it).
 */
bool rules_is_yield(const struct rules *rs, const char *function);

/**
 * rules_first() - the rule of @set and @side that decides a stack.
 * @state: the prev_state letter ('R', 'S', 'D', ...).
 * @matched: rules_frame_matches() of the stack's frames, merged, ascending.
 * Return: the first rule of @set and @side whose states hold @state and
 * that has no pattern or is in @matched (with, for FUNCTION&ALSO, ALSO's
 * rule in @matched too); -1 when none. A "defer" rule is returned as any
 * other: the caller takes it as no verdict.
 */
long rules_first(const struct rules *rs, enum rule_set set, enum rule_side side, char state,
		 const uint32_t *matched, size_t n);

/**
 * rules_park_view() - park @i of @rs as a profile gives it, into @out: its
 * strings are @rs's (valid until rules_free()).
 */
void rules_park_view(const struct rules *rs, size_t i, struct profile_park *out);

/** rules_runtime_of() - the runtime of @rs whose module patterns match @module's file name, or NULL. */
const struct rule_runtime *rules_runtime_of(const struct rules *rs, const char *module);

/** rules_state_bit() - a state letter's bit in rule.states (0 for a non-letter). */
uint64_t rules_state_bit(char c);

#endif /* PROFILE_RULES_H */
