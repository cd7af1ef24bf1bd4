/* SPDX-License-Identifier: MIT */
#include "wordmap.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"

struct wordmap_slot {
	uint64_t hash;     /* 0: empty */
	uint32_t key_off, key_len, id;
};

static int grow(struct wordmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct wordmap_slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->slots[i].hash)
			continue;
		for (j = m->slots[i].hash & (cap - 1); s[j].hash; j = (j + 1) & (cap - 1))
			;
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return 0;
}

uint32_t wordmap_get(struct wordmap *m, const uint64_t *key, size_t n, uint32_t *next_id,
		     bool *fresh)
{
	uint64_t h = hash_words(key, n);
	size_t j;

	*fresh = false;
	if ((m->nr + 1) * 2 > m->cap && grow(m))
		return 0;
	for (j = h & (m->cap - 1); m->slots[j].hash; j = (j + 1) & (m->cap - 1)) {
		const struct wordmap_slot *s = &m->slots[j];

		if (s->hash == h && s->key_len == n &&
		    !memcmp(m->keys + s->key_off, key, n * sizeof(*key)))
			return s->id;
	}
	if (m->keys_len + n > m->keys_cap) {
		size_t cap = m->keys_cap ? m->keys_cap * 2 : 4096;
		uint64_t *k;

		while (cap < m->keys_len + n)
			cap *= 2;
		k = realloc(m->keys, cap * sizeof(*k));
		if (!k)
			return 0;
		m->keys = k;
		m->keys_cap = cap;
	}
	memcpy(m->keys + m->keys_len, key, n * sizeof(*key));
	m->slots[j] = (struct wordmap_slot){ h, (uint32_t)m->keys_len, (uint32_t)n, (*next_id)++ };
	m->keys_len += n;
	m->nr++;
	*fresh = true;
	return m->slots[j].id;
}

void wordmap_free(struct wordmap *m)
{
	free(m->slots);
	free(m->keys);
	memset(m, 0, sizeof(*m));
}
