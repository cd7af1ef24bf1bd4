/* SPDX-License-Identifier: MIT */
/*
 * buf.c - the growing byte buffer (buf.h).
 */
#include <stdlib.h>

#include "buf.h"

bool buf_add(struct buf *b, const void *d, size_t n)
{
	if (b->err)
		return false;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = true;
			return false;
		}
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = 0;
	return true;
}
