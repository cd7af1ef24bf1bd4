/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growing byte buffer, always NUL-terminated once anything was
 * added (so it can hold text too). The first failed allocation sets err and
 * every later add does nothing: callers check once at the end.
 */
#ifndef UTIL_BUF_H
#define UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct buf {
	char *p;                     /* free() when done; NULL until something was added */
	size_t len, cap;
	bool err;
};

/**
 * buf_add() - append @n bytes at @d to @b.
 * Return: false if @b could not grow (then and ever after, b->err is set).
 */
bool buf_add(struct buf *b, const void *d, size_t n);

/** buf_adds() - append the string @s. */
static inline bool buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

#endif /* UTIL_BUF_H */
