/* SPDX-License-Identifier: MIT */
/*
 * perfport/map.h - a byte-string keyed index for plugins that build
 * dictionaries (string tables, deduplicated functions), header only.
 *
 * Keys are copied (NUL-terminated, so string keys can be used as strings
 * for as long as the map lives); values are uint32_t. Open addressing,
 * FNV-1a, grown at half full.
 */
#ifndef PERFPORT_MAP_H
#define PERFPORT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfport_map_slot {
	char *key;              /* NULL: empty */
	size_t len;
	uint32_t val;
};

struct perfport_map {
	struct perfport_map_slot *slots;
	size_t cap, n;
};

static inline uint64_t perfport_map_hash(const void *d, size_t n)
{
	const unsigned char *p = (const unsigned char *)d;
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ *p++) * 1099511628211ull;
	return h;
}

/** perfport_map_slot() - the slot of @key, or the empty slot it would take. */
static inline struct perfport_map_slot *perfport_map_slot(const struct perfport_map *m,
							   const void *key, size_t len)
{
	size_t j = perfport_map_hash(key, len) & (m->cap - 1);

	for (; m->slots[j].key; j = (j + 1) & (m->cap - 1))
		if (m->slots[j].len == len && memcmp(m->slots[j].key, key, len) == 0)
			break;
	return &m->slots[j];
}

/**
 * perfport_map_find() - the value under @key. Return: false when absent.
 */
static inline bool perfport_map_find(const struct perfport_map *m, const void *key, size_t len,
				     uint32_t *val)
{
	const struct perfport_map_slot *s;

	if (!m->cap)
		return false;
	s = perfport_map_slot(m, key, len);
	if (s->key)
		*val = s->val;
	return s->key != NULL;
}

/**
 * perfport_map_get() - the value under @key, or, when absent, @val stored
 * under a copy of it (*@added set). *@keyp (if not NULL) receives the
 * map's copy of the key. Return: false out of memory.
 */
static inline bool perfport_map_get(struct perfport_map *m, const void *key, size_t len,
				    uint32_t val, uint32_t *out, bool *added, const char **keyp)
{
	struct perfport_map_slot *s;

	if ((m->n + 1) * 2 > m->cap) {
		struct perfport_map old = *m;
		size_t cap = m->cap ? m->cap * 2 : 1024;

		m->slots = (struct perfport_map_slot *)calloc(cap, sizeof(*m->slots));
		if (!m->slots) {
			*m = old;
			return false;
		}
		m->cap = cap;
		for (size_t i = 0; i < old.cap; i++)
			if (old.slots[i].key)
				*perfport_map_slot(m, old.slots[i].key, old.slots[i].len) = old.slots[i];
		free(old.slots);
	}
	s = perfport_map_slot(m, key, len);
	*added = !s->key;
	if (!s->key) {
		s->key = (char *)malloc(len + 1);
		if (!s->key)
			return false;
		memcpy(s->key, key, len);
		s->key[len] = 0;
		s->len = len;
		s->val = val;
		m->n++;
	}
	*out = s->val;
	if (keyp)
		*keyp = s->key;
	return true;
}

/** perfport_map_free() - release the map and its keys. */
static inline void perfport_map_free(struct perfport_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

#ifdef __cplusplus
}
#endif

#endif /* PERFPORT_MAP_H */
