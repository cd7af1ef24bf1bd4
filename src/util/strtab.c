/* SPDX-License-Identifier: MIT */
#include "strtab.h"

#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK (64u << 10)

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
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

const char *strtab_intern(struct strtab *t, const char *s)
{
	size_t i, mask;


	if ((t->nr + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		const char **n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->slots[j])
				continue;
			for (i = hash_str(t->slots[j]) & (cap - 1); n[i]; i = (i + 1) & (cap - 1))
				;
			n[i] = t->slots[j];
		}
		free(t->slots);
		t->slots = n;
		t->cap = cap;
	}
	mask = t->cap - 1;
	for (i = hash_str(s) & mask; t->slots[i]; i = (i + 1) & mask)
		if (strcmp(t->slots[i], s) == 0)
			return t->slots[i];
	t->slots[i] = store(t, s, strlen(s));
	if (t->slots[i])
		t->nr++;
	return t->slots[i];
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->nr_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* Whether @s holds a control byte (a name that would drive a terminal). */
static bool has_control(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return true;
	return false;
}

const char *strtab_intern_text(struct strtab *t, const char *s)
{
	char *clean;
	const char *r;

	if (!has_control(s))
		return strtab_intern(t, s);
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
