/* SPDX-License-Identifier: MIT */
/*
 * suggest.h - the nearest of a set of names to a mistyped one, for "did you
 * mean" in messages (as git and perf suggest commands).
 */
#ifndef UTIL_SUGGEST_H
#define UTIL_SUGGEST_H

#include <stddef.h>

/**
 * suggest_nearest() - the name in @names (@n of them, NULL ones skipped)
 * closest to @word by edit distance (insertions, deletions, substitutions,
 * adjacent swaps; case ignored), if close enough to be a typo: at most a
 * third of the longer name's length, at least 1; or one @word begins.
 * Return: that name (one of @names), or NULL.
 */
const char *suggest_nearest(const char *word, const char *const *names, size_t n);

#endif /* UTIL_SUGGEST_H */
