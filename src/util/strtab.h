/* SPDX-License-Identifier: MIT */
/*
 * strtab.h - interned strings: each distinct string stored once, compared by
 * pointer afterwards. Strings live until strtab_free().
 */
#ifndef UTIL_STRTAB_H
#define UTIL_STRTAB_H

#include <stddef.h>

struct strtab {
	const char **slots;  /* open addressing on the string's hash */
	size_t cap, nr;
	char *block;         /* current storage block */
	size_t block_used, block_cap;
	char **blocks;       /* every block, for freeing */
	size_t nr_blocks;
};

/**
 * strtab_intern() - the stored copy of @s, added if new.
 * Return: a pointer owned by @t, equal for equal strings; NULL out of memory.
 */
const char *strtab_intern(struct strtab *t, const char *s);

/** strtab_free() - release every string; @t is empty and reusable after. */
void strtab_free(struct strtab *t);

/**
 * strtab_intern_text() - strtab_intern() of a name from outside (a symbol,
 * a thread's comm, a file name): a control byte in it is kept as '?', so
 * that no output prints it raw to a terminal.
 */
const char *strtab_intern_text(struct strtab *t, const char *s);

#endif /* UTIL_STRTAB_H */
