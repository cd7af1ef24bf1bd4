/* SPDX-License-Identifier: MIT */
/*
 * radix.h - a least-significant-byte-first radix sort of 64-bit words,
 * for tables sorted by an address or a start: each word is the key
 * shifted above a few low bits that hold the entry's index, so the
 * sorted words say where each entry goes (stable, as the index breaks
 * no tie: equal keys keep their order).
 */
#ifndef UTIL_RADIX_H
#define UTIL_RADIX_H

#include <stddef.h>
#include <stdint.h>

/**
 * radix_sort_words() - sort the @n words of *@key by their bits above
 * @low_bits, a byte at a time, skipping the bytes in which no two keys
 * differ (@diff: any word with a bit set wherever two keys, unshifted,
 * differ). *@tmp is an array of @n words to sort through.
 * Ownership: both arrays stay the caller's; on return *@key points to
 * the sorted words and *@tmp to the other array (the two may have been
 * swapped).
 */
void radix_sort_words(uint64_t **key, uint64_t **tmp, size_t n, unsigned low_bits,
		      uint64_t diff);

#endif /* UTIL_RADIX_H */
