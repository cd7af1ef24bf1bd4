// SPDX-License-Identifier: MIT
/*
 * outfile.c - outputs written to a temporary and renamed into place.
 */
#include "outfile.h"

#define OUTFILE_BUF (256u << 10)

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "error.h"
#include "log.h"

/* The temporaries being written, for the cleanup at a signal (a few at
 * most: one per format, plus the files of a directory format); under the
 * cleanup lock. */
#define OUTFILE_PENDING 64
static char *pending[OUTFILE_PENDING];

/* At a signal that ends the run: the temporaries in flight removed (the
 * cleanup lock held). */
static void remove_pending(void)
{
	for (size_t i = 0; i < OUTFILE_PENDING; i++) {
		char *t = pending[i];

		if (t)
			unlink(t);
	}
}

/* Note @tmp as in flight (@add) or no longer (the cleanup lock held). */
static void track(char *tmp, bool add)
{
	for (size_t i = 0; i < OUTFILE_PENDING; i++)
		if (add ? !pending[i] : pending[i] == tmp) {
			pending[i] = add ? tmp : NULL;
			return;
		}
}

int outfile_open(struct outfile *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	bool exists;
	mode_t mask;
	int fd, err;

	memset(o, 0, sizeof(*o));
	/* a symbolic link to a regular file: that file is replaced (beside
	 * it), the link stays */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) == 0 &&
	    S_ISREG(st.st_mode) && (o->path = realpath(path, NULL)) != NULL) {
		path = o->path;
		slash = strrchr(path, '/');
	} else {
		o->path = strdup(path);
	}
	if (!o->path)
		goto nomem;
	exists = lstat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		/* a device, a pipe, a symbolic link: written as it is, kept
		 * whatever happens (it is not perfport's to remove) */
		o->f = fopen(path, "w");
		if (!o->f)
			goto fail;
		return PP_OK;
	}
	if (asprintf(&o->tmp, "%.*s.%s.perfport-XXXXXX", slash ? (int)(slash - path + 1) : 0, path,
		     slash ? slash + 1 : path) < 0) {
		o->tmp = NULL;
		goto nomem;
	}
	/* made and noted at once: a signal between them would leave it */
	cleanup_on_signal(remove_pending);
	cleanup_lock();
	fd = mkstemp(o->tmp);
	err = errno;
	if (fd >= 0)
		track(o->tmp, true);
	cleanup_unlock();
	if (fd < 0 && (err == ENAMETOOLONG || ((err == EACCES || err == EPERM || err == EROFS) &&
						access(path, W_OK) == 0))) {
		/* no room for the temporary's longer name, or a writable file in a
		 * directory we may not add to: in place */
		free(o->tmp);
		o->tmp = NULL;
		o->f = fopen(path, "w");
		if (!o->f)
			goto fail;
		o->created = !exists;
		return PP_OK;
	}
	if (fd < 0) {
		errno = err;
		goto fail;
	}
	/* the mode of the file it replaces, else what the umask gives a new one */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask) || !(o->f = fdopen(fd, "w"))) {
		int e = errno;

		close(fd);
		cleanup_lock();
		unlink(o->tmp);
		track(o->tmp, false);
		cleanup_unlock();
		errno = e;
		goto fail;
	}
	/* profiles run to megabytes: written 256 KiB at a time, not 4 (glibc
	 * takes a size only with a buffer) */
	o->buf = malloc(OUTFILE_BUF);
	if (o->buf)
		setvbuf(o->f, o->buf, _IOFBF, OUTFILE_BUF);
	return PP_OK;
fail:
	pp_error("cannot write '%s': %s", path, strerror(errno));
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return PP_EIO;
nomem:
	pp_error("%s", pp_strerror(PP_ENOMEM));
	free(o->path);
	memset(o, 0, sizeof(*o));
	return PP_ENOMEM;
}

int outfile_close(struct outfile *o, bool keep)
{
	int ret = PP_OK, rename_err = 0;

	if (!o->f)
		return PP_OK;
	/* a write that failed earlier (ENOSPC while the buffer drained) is
	 * known by the stream's error flag: fclose() then only flushes */
	errno = 0;
	if ((fflush(o->f) || ferror(o->f)) && keep) {
		pp_error("cannot write '%s': %s", o->path, errno ? strerror(errno) : "a write failed");
		keep = false;
		ret = PP_EIO;
	}
	if (fclose(o->f) && keep) {
		pp_error("cannot write '%s': %s", o->path, strerror(errno));
		keep = false;
		ret = PP_EIO;
	}
	/* put in place (or removed) and forgotten at once */
	cleanup_lock();
	if (keep && o->tmp && rename(o->tmp, o->path)) {
		rename_err = errno;
		keep = false;
	}
	if (!keep && (o->tmp || o->created))
		unlink(o->tmp ? o->tmp : o->path);
	if (o->tmp)
		track(o->tmp, false);
	cleanup_unlock();
	if (rename_err) {
		pp_error("cannot write '%s': %s", o->path, strerror(rename_err));
		ret = PP_EIO;
	}
	free(o->buf); /* after fclose(), which wrote it */
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return ret;
}
