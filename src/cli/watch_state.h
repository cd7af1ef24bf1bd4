/* SPDX-License-Identifier: MIT */
/*
 * watch_state.h - what `perfport watch` keeps about a directory it may
 * share with other users: the set of files sent (or found unreadable),
 * its state file read and written without following a planted link or
 * blocking on a FIFO, and small files (configuration, rules) read only
 * when they are regular files of a bounded size.
 */
#ifndef CLI_WATCH_STATE_H
#define CLI_WATCH_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A set of names: a file sent is kept as its name, a file that could not
 * be read as '/' and its name (a name never holds a '/').
 */
struct wset {
	char **names;                /* in the order added; owned */
	size_t n, cap;
	uint32_t *slots;             /* index + 1 into names; 0: empty */
	size_t nslots;               /* a power of two, or 0 */
};

/** wset_has() - is @name in @s. */
bool wset_has(const struct wset *s, const char *name);

/** wset_add() - add a copy of @name (nothing if there). Return: 0 or PP_ENOMEM. */
int wset_add(struct wset *s, const char *name);

/**
 * wset_retain() - keep only the names for which @keep says true; the
 * others are freed. Linear in the names. Return: how many were dropped.
 */
size_t wset_retain(struct wset *s, bool (*keep)(const char *name, void *ctx), void *ctx);

/** wset_free() - free every name and the set's arrays. */
void wset_free(struct wset *s);

/**
 * wstate_load() - add the names of the state file @path to @s. The file
 * must be a regular file (a FIFO or a device is refused, never waited on)
 * of at most 256 MiB, this user's (one another user planted would name
 * files never to send); absent, it is an empty state. Escaped bytes
 * (\xHH) are decoded; a line that decodes to no valid name is skipped.
 * Return: 0, PP_EIO or PP_ENOMEM (said).
 */
int wstate_load(const char *path, struct wset *s);

/**
 * wstate_save() - write @s as the state file @path, whole or not at all:
 * a new temporary file in @path's directory, created exclusively and
 * never through a link (openat(O_CREAT|O_EXCL|O_NOFOLLOW) on that
 * directory's descriptor), synced, then renamed over @path. A name's
 * control bytes, backslashes and a leading '#' or '!' are written as
 * \xHH, so that no name reads back as two or as a comment.
 * @about: the first line's comment (no line break). Return: 0 or PP_EIO (said).
 */
int wstate_save(const char *path, const char *about, const struct wset *s);

/**
 * watch_open_regular() - open @path for reading without blocking and
 * without following a final symbolic link, and keep it only if the
 * descriptor is a regular file (O_NONBLOCK cleared then). Return: the
 * descriptor (the caller closes it), or -1 with errno set (EINVAL: not a
 * regular file).
 */
int watch_open_regular(const char *path, bool follow);

/**
 * watch_read_small() - the whole of @path, a regular file of at most
 * @max bytes (followed if a link; never a FIFO or a device), NUL
 * terminated, into *@out (the caller frees it), its length in *@len.
 * @what names it in the error ("the configuration"). Return: 0 or -1 (said).
 */
int watch_read_small(const char *path, const char *what, size_t max, char **out, size_t *len);

#endif
