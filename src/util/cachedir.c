/* SPDX-License-Identifier: MIT */
#include "cachedir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mkdir -p @path (mode 0700 for what is made) */
static bool make_dirs(const char *path)
{
	char p[4096];

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return false;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return false;
		*s = '/';
	}
	return !mkdir(p, 0700) || errno == EEXIST;
}

bool cache_dir(char *out, size_t size, const char *sub, bool make)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && *xdg) {
		n = snprintf(out, size, "%s/perfport%s%s", xdg, sub ? "/" : "", sub ? sub : "");
	} else if (home && *home) {
		n = snprintf(out, size, "%s/.cache/perfport%s%s", home, sub ? "/" : "",
			     sub ? sub : "");
	} else {
		return false;
	}
	if (n < 0 || (size_t)n >= size)
		return false;
	return !make || make_dirs(out);
}

bool cache_write(int fd, const void *p, size_t n)
{
	for (const char *c = p; n;) {
		ssize_t w = write(fd, c, n);

		if (w <= 0)
			return false;
		c += (size_t)w;
		n -= (size_t)w;
	}
	return true;
}
