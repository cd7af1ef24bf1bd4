/* SPDX-License-Identifier: MIT */
/*
 * bytes.h - bounds-checked little cursors over perf.data bytes, aware of the
 * file's byte order. Every read is a memcpy: pipe-mode records are not
 * aligned, and hostile sizes must never read past the end.
 */
#ifndef PERF_BYTES_H
#define PERF_BYTES_H

#include <byteswap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cur {
	uint8_t *p;     /* next byte */
	uint8_t *end;   /* one past the last byte */
	bool swap;      /* the data is in the other byte order */
	bool bad;       /* a read went past the end; sticky */
};

static inline struct cur cur_make(void *p, size_t len, bool swap)
{
	struct cur c = { .p = p, .end = (uint8_t *)p + len, .swap = swap };
	return c;
}

static inline size_t cur_left(const struct cur *c)
{
	return c->bad ? 0 : (size_t)(c->end - c->p);
}

static inline bool cur_need(struct cur *c, uint64_t n)
{
	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return false;
	}
	return true;
}

static inline uint64_t load_u64(const void *p, bool swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? bswap_64(v) : v;
}

static inline uint32_t load_u32(const void *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? bswap_32(v) : v;
}

static inline uint16_t load_u16(const void *p, bool swap)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return swap ? bswap_16(v) : v;
}

static inline void store_u64(void *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static inline void store_u32(void *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Read a u64 and, in a swapped file, leave it native in the buffer. */
static inline uint64_t cur_u64(struct cur *c)
{
	uint64_t v;

	if (!cur_need(c, 8))
		return 0;
	v = load_u64(c->p, c->swap);
	if (c->swap)
		store_u64(c->p, v);
	c->p += 8;
	return v;
}

static inline uint32_t cur_u32(struct cur *c)
{
	uint32_t v;

	if (!cur_need(c, 4))
		return 0;
	v = load_u32(c->p, c->swap);
	if (c->swap)
		store_u32(c->p, v);
	c->p += 4;
	return v;
}

/* Skip n bytes, returning where they start (NULL past the end). */
static inline uint8_t *cur_skip(struct cur *c, uint64_t n)
{
	uint8_t *at = c->p;

	if (!cur_need(c, n))
		return NULL;
	c->p += n;
	return at;
}

/* Swap n u64 in place (when swapped) and skip them. */
static inline uint8_t *cur_u64_array(struct cur *c, uint64_t n)
{
	uint8_t *at = c->p;

	if (n > SIZE_MAX / 8 || !cur_need(c, n * 8))
		return NULL;
	if (c->swap)
		for (uint64_t i = 0; i < n; i++)
			store_u64(at + i * 8, load_u64(at + i * 8, true));
	c->p += n * 8;
	return at;
}

#endif /* PERF_BYTES_H */
