/* SPDX-License-Identifier: MIT */
/*
 * suggest.c - the nearest name to a mistyped one (see suggest.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "suggest.h"

#define MAX_LEN 64

/* Optimal string alignment distance, case ignored; MAX_LEN + 1 if longer. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[MAX_LEN + 1][MAX_LEN + 1];

	if (la > MAX_LEN || lb > MAX_LEN)
		return MAX_LEN + 1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 &&
			    tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *suggest_nearest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, wl;

	if (!word || !*word)
		return NULL;
	wl = strlen(word);
	for (size_t i = 0; i < n; i++) {
		size_t d, l, limit;

		if (!names[i])
			continue;
		l = strlen(names[i]);
		if (wl >= 2 && l > wl && !strncasecmp(names[i], word, wl))
			d = 1;       /* a prefix: as close as one typo */
		else
			d = distance(word, names[i]);
		limit = (l > wl ? l : wl) / 3;
		if (limit < 1)
			limit = 1;
		if (d <= limit && d < best_d) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}
