/* SPDX-License-Identifier: MIT */
/*
 * wordmap.h - a hash map from keys of u64 words to ids: open addressing
 * over copies of the keys kept in one arena.
 */
#ifndef UTIL_WORDMAP_H
#define UTIL_WORDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wordmap {
	struct wordmap_slot *slots;
	size_t cap, nr;
	uint64_t *keys;
	size_t keys_len, keys_cap;
};

/**
 * wordmap_get() - the id of the @n words at @key; if unseen, the key is
 * copied and given *@next_id, which is then incremented, and *@fresh is set.
 * Return: the id, 0 out of memory (ids start where the caller's counter
 * does: start it at 1).
 */
uint32_t wordmap_get(struct wordmap *m, const uint64_t *key, size_t n, uint32_t *next_id,
		     bool *fresh);

/** wordmap_free() - release @m's memory; it is then empty. */
void wordmap_free(struct wordmap *m);

#endif /* UTIL_WORDMAP_H */
