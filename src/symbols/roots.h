/* SPDX-License-Identifier: MIT */
/*
 * roots.h - where a runtime's stacks begin: the functions beyond which an
 * unwinder reads no caller (Go's runtime.goexit, runtime.mstart...), read
 * from text in the form of src/symbols/roots/NAME.roots. The symbolizer
 * flags a frame named so FRAME_F_ROOT; whoever walks a stack from its leaf
 * stops there. Internal to src/symbols (and its unit test).
 */
#ifndef SYMBOLS_ROOTS_H
#define SYMBOLS_ROOTS_H

#include <stdbool.h>
#include <stddef.h>

/* A built-in roots text and the file it was made from. */
struct roots_text {
	const char *name;
	const char *text;
};

/* The built-in texts (generated from src/symbols/roots/ by the Makefile),
 * in the order of their file names, ending with a NULL name. */
extern const struct roots_text sym_roots_texts[];

struct roots_entry {
	char *function;
	const char *runtime;    /* the runtime line above it: one of roots.runtimes */
	bool switches;          /* "switch": it moves onto another stack and calls
				 * there; a frame-pointer chain goes on through it,
				 * an unwinder of a stack copy (dwarf) cannot */
};

struct roots {
	struct roots_entry *e;  /* sorted by function once parsed */
	size_t n, cap;
	char **runtimes;
	size_t nr_runtimes;
};

/**
 * roots_parse() - add the roots of @text (named @name in error messages) to
 * @r (zeroed before the first call; freed with roots_free()). A line is
 * "runtime NAME" (whose roots follow), "root FUNCTION..." or "switch
 * FUNCTION..." (roots of a stack copy only); '#' starts a comment. Sorts
 * @r for roots_find() when it returns.
 * Return: PP_OK, PP_EPARSE (logged: the file and line) or PP_ENOMEM.
 */
int roots_parse(struct roots *r, const char *text, const char *name);

/**
 * roots_find() - the root @function is (its runtime: the "runtime" name
 * above it, owned by @r, "" for roots before any runtime line), or NULL
 * when it is none.
 */
const struct roots_entry *roots_find(const struct roots *r, const char *function);

void roots_free(struct roots *r);

/**
 * sym_root_of() - roots_find() in the built-in roots, parsed at the first
 * call (thread-safe). Return: static, or NULL.
 */
const struct roots_entry *sym_root_of(const char *function);

#endif /* SYMBOLS_ROOTS_H */
