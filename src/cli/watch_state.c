/* SPDX-License-Identifier: MIT */
/*
 * watch_state.c - the watcher's set of files sent and its state file,
 * and the small files it reads, on a host other users share: the state
 * is a hash set (a state of 100 k names is read in linear time), written
 * through a temporary file created exclusively beside it, never through
 * a link another user planted there; nothing is opened that could block.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/error.h"
#include "../util/hash.h"
#include "../util/log.h"
#include "watch_state.h"

#define WSTATE_MAX ((size_t)256 << 20) /* a state file larger is none perfport wrote */

static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 0x100000001b3ULL;
	return mix64(h);
}

/* The slot of @name in @s: where it is, or the empty one it would take. */
static size_t slot_of(const struct wset *s, const char *name)
{
	size_t mask = s->nslots - 1, i = (size_t)name_hash(name) & mask;

	while (s->slots[i] && strcmp(s->names[s->slots[i] - 1], name))
		i = (i + 1) & mask;
	return i;
}

/* (Re)build the index for @nslots slots. */
static int rehash(struct wset *s, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return PP_ENOMEM;
	free(s->slots);
	s->slots = slots;
	s->nslots = nslots;
	for (size_t k = 0; k < s->n; k++)
		s->slots[slot_of(s, s->names[k])] = (uint32_t)(k + 1);
	return 0;
}

bool wset_has(const struct wset *s, const char *name)
{
	return s->n && s->slots[slot_of(s, name)];
}

int wset_add(struct wset *s, const char *name)
{
	char *copy;

	if (wset_has(s, name))
		return 0;
	if (s->n >= UINT32_MAX - 1)
		return PP_ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **v = realloc(s->names, cap * sizeof(*v));

		if (!v)
			return PP_ENOMEM;
		s->names = v;
		s->cap = cap;
	}
	/* at most half full */
	if ((s->n + 1) * 2 > s->nslots && rehash(s, s->nslots ? s->nslots * 2 : 128))
		return PP_ENOMEM;
	copy = strdup(name);
	if (!copy)
		return PP_ENOMEM;
	s->names[s->n++] = copy;
	s->slots[slot_of(s, copy)] = (uint32_t)s->n;
	return 0;
}

size_t wset_retain(struct wset *s, bool (*keep)(const char *name, void *ctx), void *ctx)
{
	size_t kept = 0, dropped;

	for (size_t i = 0; i < s->n; i++) {
		if (keep(s->names[i], ctx))
			s->names[kept++] = s->names[i];
		else
			free(s->names[i]);
	}
	dropped = s->n - kept;
	s->n = kept;
	if (dropped && s->nslots) {
		/* the same slots, filled again: the index is a fresh one */
		memset(s->slots, 0, s->nslots * sizeof(*s->slots));
		for (size_t k = 0; k < s->n; k++)
			s->slots[slot_of(s, s->names[k])] = (uint32_t)(k + 1);
	}
	return dropped;
}

void wset_free(struct wset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

int watch_open_regular(const char *path, bool follow)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	/* a regular file's reads never wait: O_NONBLOCK is cleared only so
	 * that nothing downstream sees it */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* Read @fd whole, at most @max bytes, into a new NUL-terminated buffer. */
static int read_fd(int fd, size_t max, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fstat(fd, &st))
		return -1;
	if ((uint64_t)st.st_size > max) {
		errno = EFBIG;
		return -1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -1;
	/* what was there at fstat(): a file that grows meanwhile is read
	 * to that size, never on and on */
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static const char *open_error(int e)
{
	return e == EINVAL ? "not a regular file (a FIFO, device or directory is never read)"
	       : e == EFBIG ? "too large"
	       : e == ELOOP ? "a symbolic link" : strerror(e);
}

int watch_read_small(const char *path, const char *what, size_t max, char **out, size_t *len)
{
	int fd = watch_open_regular(path, true);

	if (fd < 0 || read_fd(fd, max, out, len)) {
		int e = errno;

		if (e == EFBIG)
			pp_error("cannot read %s '%s': larger than %zu KiB", what, path, max >> 10);
		else
			pp_error("cannot read %s '%s': %s", what, path, open_error(e));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * Decode one line of the state file into @out (NAME_MAX + 2 bytes): a
 * name, or '/' and a name for "!name". Return: false when it holds none.
 */
static bool decode_line(const char *line, size_t len, char *out)
{
	size_t o = 0, i = 0;

	if (!len || line[0] == '#')
		return false;
	if (line[0] == '!') {
		out[o++] = '/';
		i = 1;
	}
	for (; i < len; i++) {
		char c = line[i];

		if (c == '\\') {
			int hi, lo;

			if (i + 3 >= len)
				return false;
			if (line[i + 1] != 'x' || (hi = hexval(line[i + 2])) < 0 ||
			    (lo = hexval(line[i + 3])) < 0)
				return false;
			c = (char)(hi << 4 | lo);
			i += 3;
		}
		if (c == '/' || c == '\0' || o > NAME_MAX + (out[0] == '/'))
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return o > (out[0] == '/');
}

int wstate_load(const char *path, struct wset *s)
{
	int fd = watch_open_regular(path, true);
	char *buf = NULL, name[NAME_MAX + 3];
	struct stat st;
	size_t len = 0;
	int ret = 0;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || read_fd(fd, WSTATE_MAX, &buf, &len)) {
		int e = errno;

		pp_error("cannot read the state file '%s': %s", path, open_error(e));
		if (e == EFBIG)
			pp_error("the state file '%s' is larger than %zu MiB: not one perfport "
				 "wrote (remove it, or give --state FILE)", path, WSTATE_MAX >> 20);
		if (fd >= 0)
			close(fd);
		return PP_EIO;
	}
	/* one planted by another user would name files never to send */
	if (fstat(fd, &st) == 0 && st.st_uid != geteuid()) {
		pp_error("the state file '%s' is owned by another user (uid %u): its names are not "
			 "trusted (remove it, or give --state FILE)", path, (unsigned)st.st_uid);
		close(fd);
		free(buf);
		return PP_EIO;
	}
	close(fd);
	for (size_t at = 0; !ret && at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (buf + at)) : len - at;

		if (n <= 4 * (NAME_MAX + 1) && decode_line(buf + at, n, name))
			ret = wset_add(s, name);
		at += n + 1;
	}
	free(buf);
	if (ret)
		pp_error("%s", pp_strerror(ret));
	return ret;
}

/* @name as a line of the state file (see wstate_save()). */
static void encode_name(FILE *f, const char *name)
{
	if (name[0] == '/') {
		fputc('!', f);
		name++;
	}
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		bool lead = c == (const unsigned char *)name && (*c == '#' || *c == '!');

		if (*c < 0x20 || *c == 0x7f || *c == '\\' || lead)
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
	}
	fputc('\n', f);
}

int wstate_save(const char *path, const char *about, const struct wset *s)
{
	char dir[PATH_MAX], base[PATH_MAX], tmp[NAME_MAX + 1];
	int dfd = -1, fd = -1, ret = PP_EIO;
	FILE *f = NULL;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    snprintf(base, sizeof(base), "%s", path) >= (int)sizeof(base)) {
		pp_error("the state file's path '%s' is too long", path);
		return PP_EIO;
	}
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		pp_error("cannot write the state file '%s': its directory: %s", path,
			 strerror(errno));
		return PP_EIO;
	}
	/* a fresh name each try: one planted there (a link, a file) is never
	 * opened, only stepped past */
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		unsigned r = 0;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (unsigned)tries;
		if (snprintf(tmp, sizeof(tmp), "%s%.200s.tmp-%ld-%08x",
			     basename(base)[0] == '.' ? "" : ".", basename(base), (long)getpid(),
			     r) >= (int)sizeof(tmp))
			break;
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		pp_error("cannot write the state file '%s': %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlinkat(dfd, tmp, 0);
		}
		close(dfd);
		return PP_EIO;
	}
	fprintf(f, "# %s\n", about);
	for (size_t i = 0; i < s->n; i++)
		encode_name(f, s->names[i]);
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		pp_error("cannot write the state file '%s': %s", path, strerror(errno));
		fclose(f);
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	fclose(f);
	if (renameat(dfd, tmp, dfd, basename(base))) {
		pp_error("cannot replace the state file '%s': %s", path, strerror(errno));
		unlinkat(dfd, tmp, 0);
		goto out;
	}
	ret = 0;
out:
	close(dfd);
	return ret;
}
