/* SPDX-License-Identifier: MIT */
/*
 * hash.h - the hashes perfport's open-addressing tables share: mix64(), a
 * 64-bit finaliser for one word, and hash_words(), for keys of many words
 * (raw stacks, pprof locations) hashed once per sample.
 */
#ifndef UTIL_HASH_H
#define UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/** mix64() - scramble one word (murmur3's finaliser). */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static inline uint64_t hash_rotl64(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

/**
 * hash_words() - hash @n words: four independent lanes of one multiply
 * each, so the multiplier's latency overlaps, folded and finished with
 * mix64(). Never 0, so tables may use 0 for an empty slot.
 */
static inline uint64_t hash_words(const uint64_t *w, size_t n)
{
	const uint64_t m = 0x9e3779b97f4a7c15ULL;
	uint64_t h0 = n, h1 = ~(uint64_t)n, h2 = 0x243f6a8885a308d3ULL, h3 = 0x13198a2e03707344ULL;
	uint64_t h;
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		h0 = hash_rotl64((h0 ^ w[i]) * m, 29);
		h1 = hash_rotl64((h1 ^ w[i + 1]) * m, 29);
		h2 = hash_rotl64((h2 ^ w[i + 2]) * m, 29);
		h3 = hash_rotl64((h3 ^ w[i + 3]) * m, 29);
	}
	for (; i < n; i++)
		h0 = hash_rotl64((h0 ^ w[i]) * m, 29);
	h = mix64(h0 ^ hash_rotl64(h1, 16) ^ hash_rotl64(h2, 32) ^ hash_rotl64(h3, 48));
	return h ? h : 1;
}

#endif /* UTIL_HASH_H */
