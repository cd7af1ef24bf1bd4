/* SPDX-License-Identifier: MIT */
/*
 * pdw.h - a tiny perf.data writer for unit tests: builds file- and pipe-mode
 * recordings in memory, in either byte order, so each layout rule of the
 * reader can be tested without perf.
 */
#ifndef TESTS_PDW_H
#define TESTS_PDW_H

#include <byteswap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf/abi.h"

struct pdw {
	uint8_t *b;
	size_t n, cap;
	bool swap;
};

static inline void pdw_bytes(struct pdw *w, const void *p, size_t len)
{
	if (!len)
		return;
	if (w->n + len > w->cap) {
		w->cap = (w->n + len) * 2 + 256;
		w->b = realloc(w->b, w->cap);
	}
	memcpy(w->b + w->n, p, len);
	w->n += len;
}

static inline void pdw_u8(struct pdw *w, uint8_t v) { pdw_bytes(w, &v, 1); }
static inline void pdw_u16(struct pdw *w, uint16_t v) { v = w->swap ? bswap_16(v) : v; pdw_bytes(w, &v, 2); }
static inline void pdw_u32(struct pdw *w, uint32_t v) { v = w->swap ? bswap_32(v) : v; pdw_bytes(w, &v, 4); }
static inline void pdw_u64(struct pdw *w, uint64_t v) { v = w->swap ? bswap_64(v) : v; pdw_bytes(w, &v, 8); }

static inline void pdw_patch_u64(struct pdw *w, size_t off, uint64_t v)
{
	v = w->swap ? bswap_64(v) : v;
	memcpy(w->b + off, &v, 8);
}

static inline void pdw_patch_u16(struct pdw *w, size_t off, uint16_t v)
{
	v = w->swap ? bswap_16(v) : v;
	memcpy(w->b + off, &v, 2);
}

static inline void pdw_pad8(struct pdw *w)
{
	while (w->n % 8)
		pdw_u8(w, 0);
}

/* Start a record; pdw_end() fills in its size. Returns its offset. */
static inline size_t pdw_begin(struct pdw *w, uint32_t type, uint16_t misc)
{
	size_t at = w->n;

	pdw_u32(w, type);
	pdw_u16(w, misc);
	pdw_u16(w, 0);
	return at;
}

static inline void pdw_end(struct pdw *w, size_t at)
{
	pdw_patch_u16(w, at + 6, (uint16_t)(w->n - at));
}

static uint64_t pdw_bitrev(uint64_t v)
{
	uint64_t r = 0;
	for (int i = 0; i < 64; i++, v >>= 1)
		r = (r << 1) | (v & 1);
	return r;
}

/* A 128-byte (VER7) attr. Big-endian bitfields start at the top bit. */
static inline void pdw_attr(struct pdw *w, uint32_t type, uint64_t config, uint64_t period,
			    uint64_t sample_type, uint64_t flags, uint64_t read_format,
			    uint64_t branch_type, uint64_t regs_user, uint32_t stack_user,
			    uint64_t regs_intr)
{
	size_t start = w->n;

	pdw_u32(w, type);
	pdw_u32(w, 128);
	pdw_u64(w, config);
	pdw_u64(w, period);
	pdw_u64(w, sample_type);
	pdw_u64(w, read_format);
	{
		uint64_t f = w->swap ? pdw_bitrev(flags) : flags;
		pdw_u64(w, f);
	}
	pdw_u32(w, 0);           /* wakeup */
	pdw_u32(w, 0);           /* bp_type */
	pdw_u64(w, 0);           /* config1 */
	pdw_u64(w, 0);           /* config2 */
	pdw_u64(w, branch_type);
	pdw_u64(w, regs_user);
	pdw_u32(w, stack_user);
	pdw_u32(w, 0);           /* clockid */
	pdw_u64(w, regs_intr);
	while (w->n - start < 128)
		pdw_u8(w, 0);
}

/* A perf header string: u32 padded length, then the bytes. */
static inline void pdw_str(struct pdw *w, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 7) & ~7u);
	size_t at;

	pdw_u32(w, len);
	at = w->n;
	pdw_bytes(w, s, strlen(s));
	while (w->n - at < len)
		pdw_u8(w, 0);
}

#endif /* TESTS_PDW_H */
