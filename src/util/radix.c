/* SPDX-License-Identifier: MIT */
/*
 * radix.c - the radix sort of radix.h.
 */
#include "radix.h"

void radix_sort_words(uint64_t **key, uint64_t **tmp, size_t n, unsigned low_bits,
		      uint64_t diff)
{
	uint64_t *k = *key, *t = *tmp;

	for (unsigned shift = low_bits; shift < 64; shift += 8) {
		size_t at[256] = { 0 }, sum = 0;
		uint64_t *swap;

		if (!((diff << low_bits >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			at[(k[i] >> shift) & 0xff]++;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = at[d];

			at[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			t[at[(k[i] >> shift) & 0xff]++] = k[i];
		swap = k;
		k = t;
		t = swap;
	}
	*key = k;
	*tmp = t;
}
