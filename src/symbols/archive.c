/* SPDX-License-Identifier: MIT */
/*
 * archive.c - perf archive's tarballs (perf.data.tar.bz2, .tar.gz, .tar.xz,
 * .tar.zst), read with libarchive into a private directory laid out as
 * perf's build-id cache, which the symbolizer searches first.
 *
 * A tarball is input like any other: an entry is unpacked only when its
 * path is relative, free of "..", a regular file, a directory or a symbolic
 * link whose target stays inside the directory; anything else is skipped
 * with a warning. Sizes are bounded by what the archive holds.
 */
#define _XOPEN_SOURCE 700
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/error.h"
#include "../util/log.h"
#include "symbols.h"

/* A relative path without "." or ".." components, and not empty. */
static bool path_ok(const char *p)
{
	if (!*p || *p == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		while (*p == '/')
			p++;
	}
	return true;
}

/*
 * A link at @name to @target stays inside the root. perf's links are
 * "../../usr/lib/libc.so.6/ID": some ".." and then names. The link's own
 * directories are real ones (make_parents() refuses to go through a link),
 * so its depth is its path's; each name of the target is then inside the
 * root wherever it leads, as every link in the tree is checked the same way.
 */
static bool link_ok(const char *name, const char *target)
{
	int depth = 0, up = 0;
	bool names = false;

	if (!*target || *target == '/')
		return false;
	for (const char *p = name; (p = strchr(p, '/')); p++)
		depth++;
	for (const char *p = target; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 1 && p[0] == '.')
			return false;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (names)
				return false;       /* a ".." after a name */
			up++;
		} else if (n) {
			names = true;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return names && up <= depth;
}

/* Make the directories of @path (under an existing root), never through a
 * link an earlier entry made. */
static int make_parents(char *path, size_t root_len)
{
	for (char *p = strchr(path + root_len + 1, '/'); p; p = strchr(p + 1, '/')) {
		struct stat st;

		*p = '\0';
		if (lstat(path, &st) == 0 ? !S_ISDIR(st.st_mode) : mkdir(path, 0700) != 0) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/*
 * libarchive, loaded with dlopen() when a perf archive is unpacked: linked,
 * it and what it needs (libxml2, ICU, the C++ runtime...) would be mapped
 * at the start of every command.
 */
static struct {
	bool tried, ok;
	struct archive *(*read_new)(void);
	int (*read_free)(struct archive *a);
	int (*read_support_filter_all)(struct archive *a);
	int (*read_support_format_tar)(struct archive *a);
	int (*read_open_filename)(struct archive *a, const char *name, size_t block);
	int (*read_next_header)(struct archive *a, struct archive_entry **e);
	int (*read_data_block)(struct archive *a, const void **buf, size_t *len, la_int64_t *off);
	const char *(*error_string)(struct archive *a);
	const char *(*entry_pathname)(struct archive_entry *e);
	__LA_MODE_T (*entry_filetype)(struct archive_entry *e);
	const char *(*entry_symlink)(struct archive_entry *e);
} la;

/* Load libarchive once. Return: false (said why) when it cannot be used. */
static bool archive_load(void)
{
	void *h;

	if (la.tried)
		return la.ok;
	la.tried = true;
	h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libarchive.so", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pp_error("cannot load libarchive to unpack a perf archive: %s "
			 "(apt-get install libarchive13)", dlerror());
		return false;
	}
#define LA_SYM(field) (*(void **)&la.field = dlsym(h, "archive_" #field)) != NULL
	la.ok = LA_SYM(read_new) && LA_SYM(read_free) && LA_SYM(read_support_filter_all) &&
		LA_SYM(read_support_format_tar) && LA_SYM(read_open_filename) &&
		LA_SYM(read_next_header) && LA_SYM(read_data_block) && LA_SYM(error_string) &&
		LA_SYM(entry_pathname) && LA_SYM(entry_filetype) && LA_SYM(entry_symlink);
#undef LA_SYM
	if (!la.ok)
		pp_error("the libarchive found lacks a function perfport uses: %s", dlerror());
	return la.ok;
}

static int write_file(struct archive *a, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

	if (fd < 0)
		return -1;
	while ((r = la.read_data_block(a, &buf, &len, &off)) == ARCHIVE_OK) {
		if (lseek(fd, (off_t)off, SEEK_SET) < 0 || write(fd, buf, len) != (ssize_t)len) {
			close(fd);
			return -1;
		}
	}
	if (close(fd) || r != ARCHIVE_EOF)
		return -1;
	return 0;
}

int sym_archive_unpack(const char *tarball, char *root, size_t len)
{
	struct archive *a = archive_load() ? la.read_new() : NULL;
	struct archive_entry *e;
	const char *tmp = getenv("TMPDIR");
	unsigned files = 0, skipped = 0;
	int ret = PP_EIO, r;

	if (!a) {
		root[0] = '\0';
		return la.ok ? PP_ENOMEM : PP_EIO;
	}
	snprintf(root, len, "%s/perfport-archive.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		pp_error("cannot make a directory for '%s': %s", tarball, strerror(errno));
		root[0] = '\0';
		la.read_free(a);
		return PP_EIO;
	}
	la.read_support_filter_all(a);
	la.read_support_format_tar(a);
	if (la.read_open_filename(a, tarball, 1 << 16) != ARCHIVE_OK) {
		pp_error("cannot read '%s': %s", tarball, la.error_string(a));
		goto out;
	}
	while ((r = la.read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = la.entry_pathname(e);
		char path[PATH_MAX * 2];
		int type = la.entry_filetype(e);

		if (!name || !path_ok(name) || strlen(root) + strlen(name) + 2 > PATH_MAX) {
			skipped++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", root, name);
		if (make_parents(path, strlen(root))) {
			skipped++;
			continue;
		}
		if (type == AE_IFDIR) {
			if (mkdir(path, 0700) && errno != EEXIST)
				skipped++;
		} else if (type == AE_IFREG) {
			if (write_file(a, path))
				skipped++;
			else
				files++;
		} else if (type == AE_IFLNK && la.entry_symlink(e) &&
			   link_ok(name, la.entry_symlink(e))) {
			if (symlink(la.entry_symlink(e), path))
				skipped++;
		} else {
			skipped++;
		}
	}
	if (r != ARCHIVE_EOF) {
		pp_warn("'%s': read partly: %s", tarball, la.error_string(a));
		if (!files)
			goto out;
	}
	if (skipped)
		pp_warn("'%s': %u entries not unpacked (absolute, with '..', a link out of it, "
			"or neither a file, a directory nor a link)", tarball, skipped);
	pp_info("'%s': %u files unpacked into '%s'", tarball, files, root);
	ret = PP_OK;
out:
	la.read_free(a);
	if (ret) {
		sym_archive_remove(root);
		root[0] = '\0';
	}
	return ret;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

void sym_archive_remove(const char *root)
{
	if (root && *root)
		nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
