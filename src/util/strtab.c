/* SPDX-License-Identifier: MIT */
#include "strtab.h"

#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define BLOCK (64u << 10)

/*
 * A string's slot: XXH3 over its bytes, the length found first by libc's
 * vector strlen(). Names are long where naming costs most (a C++
 * template's name is hundreds of bytes): FNV-1a a byte at a time took
 * 4-5 cycles a byte, one multiply waiting on the one before.
 */
static uint64_t hash_str(const char *s, size_t len)
{
	return XXH3_64bits(s, len);
}

static char *store(struct strtab *t, const char *s, size_t len)
{
	char *at;

	if (len + 1 > t->block_cap - t->block_used) {
		size_t cap = len + 1 > BLOCK ? len + 1 : BLOCK;
		char **bl = realloc(t->blocks, (t->nr_blocks + 1) * sizeof(*bl));

		if (!bl)
			return NULL;
		t->blocks = bl;
		t->block = malloc(cap);
		if (!t->block)
			return NULL;
		t->blocks[t->nr_blocks++] = t->block;
		t->block_cap = cap;
		t->block_used = 0;
	}
	at = t->block + t->block_used;
	memcpy(at, s, len + 1);
	t->block_used += len + 1;
	return at;
}

/* strtab_intern() of @s, whose length is @len. */
static const char *intern_len(struct strtab *t, const char *s, size_t len)
{
	size_t i, mask;

	if ((t->nr + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		const char **n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			const char *o = t->slots[j];

			if (!o)
				continue;
			for (i = hash_str(o, strlen(o)) & (cap - 1); n[i]; i = (i + 1) & (cap - 1))
				;
			n[i] = o;
		}
		free(t->slots);
		t->slots = n;
		t->cap = cap;
	}
	mask = t->cap - 1;
	for (i = hash_str(s, len) & mask; t->slots[i]; i = (i + 1) & mask)
		if (strcmp(t->slots[i], s) == 0)
			return t->slots[i];
	t->slots[i] = store(t, s, len);
	if (t->slots[i])
		t->nr++;
	return t->slots[i];
}

const char *strtab_intern(struct strtab *t, const char *s)
{
	return intern_len(t, s, strlen(s));
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->nr_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/*
 * Whether the @len bytes at @s hold a control byte (a name that would
 * drive a terminal). Eight bytes at a time: a word with a byte below 0x20
 * has ((w - 0x20..) & ~w & 0x80..) non-zero, one with a 0x7f byte the same
 * of w ^ 0x7f.. against 0x01.. (either exact as to whether, not where: a
 * word so flagged is looked at a byte at a time).
 */
static bool has_control(const char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w, d;

		memcpy(&w, s + i, 8);
		d = w ^ (0x7f * ones);
		if ((((w - 0x20 * ones) & ~w) | ((d - ones) & ~d)) & highs)
			break;
	}
	for (; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

const char *strtab_intern_text(struct strtab *t, const char *s)
{
	size_t len = strlen(s);
	char *clean;
	const char *r;

	if (!has_control(s, len))
		return intern_len(t, s, len);
	clean = strdup(s);
	if (!clean)
		return NULL;
	for (char *c = clean; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	r = strtab_intern(t, clean);
	free(clean);
	return r;
}
