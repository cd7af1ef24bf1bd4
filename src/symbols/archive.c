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
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cachedir.h"
#include "../util/cleanup.h"
#include "../util/error.h"
#include "../util/hash.h"
#include "../util/log.h"
#include "priv.h"
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
 * A member's name without the "./" that a tarball made with "tar -C DIR ."
 * puts before every name ("./.build-id/ab/..."); "" for that "./" itself.
 */
static const char *member_name(const char *name)
{
	while (name[0] == '.' && (name[1] == '/' || !name[1])) {
		name++;
		while (*name == '/')
			name++;
	}
	return name;
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

/* The data of the entry at hand written to @fd, which is closed. */
static int write_data(struct archive *a, int fd)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

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

/*
 * The build id an archive entry is for: the component of its path that is
 * one ("usr/lib/libc.so.6/ID/elf"), or the name a ".build-id/xx/rest" link
 * makes. False for an entry of none (a directory above them).
 */
static bool entry_build_id(const char *name, char *hex, size_t len)
{
	const char *p = name;

	if (!strncmp(name, ".build-id/", 10) && strlen(name) > 13 && name[12] == '/') {
		snprintf(hex, len, "%.2s%s", name + 10, name + 13);
		return strspn(hex, "0123456789abcdef") == strlen(hex) && strlen(hex) >= 16;
	}
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n >= 16 && n <= 2 * PERF_MAX_BUILD_ID && n < len &&
		    strspn(p, "0123456789abcdef") >= n) {
			snprintf(hex, len, "%.*s", (int)n, p);
			return true;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return false;
}

/* Whether @hex is among @want (NULL: every build id is wanted). */
static bool wanted(const char *hex, const char *const *want)
{
	if (!want)
		return true;
	for (; *want; want++)
		if (!strcmp(*want, hex))
			return true;
	return false;
}

/*
 * The directory a signal's cleanup removes: a hidden one of the cache
 * while it is unpacked, or the run's private one until sym_archive_remove()
 * removes it. Under the cleanup lock, as is every entry's making: the
 * cleanup runs on its own thread while this one may be unpacking, and a
 * file made in a directory after nftw() read it would keep it.
 */
static char unpacking[PATH_MAX];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

static void remove_tree(const char *root)
{
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* At a signal that ends the run (the cleanup lock held). */
static void remove_unpacking(void)
{
	if (unpacking[0])
		remove_tree(unpacking);
	unpacking[0] = '\0';
}

void sym_archive_remove(const char *root)
{
	if (!root || !*root)
		return;
	cleanup_lock();
	remove_tree(root);
	if (!strcmp(root, unpacking))
		unpacking[0] = '\0';
	cleanup_unlock();
}

/* mkdtemp(@dir), noted as the directory a signal removes when made. */
static bool make_noted(char *dir)
{
	bool made;

	cleanup_on_signal(remove_unpacking);
	cleanup_lock();
	made = mkdtemp(dir) != NULL;
	if (made)
		snprintf(unpacking, sizeof(unpacking), "%s", dir);
	cleanup_unlock();
	return made;
}

int sym_archive_unpack(const char *tarball, char *root, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, len, "%s/perfport-archive.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!make_noted(root)) {
		pp_error("cannot make a directory for '%s': %s", tarball, strerror(errno));
		root[0] = '\0';
		return PP_EIO;
	}
	if (sym_archive_unpack_into(tarball, root, NULL)) {
		root[0] = '\0';        /* removed, and forgotten, by it */
		return PP_EIO;
	}
	/* still noted: a signal removes it, as sym_archive_remove() at the end */
	return PP_OK;
}

/*
 * Make the entry @name of type @type at @path (its directories too),
 * under the cleanup lock. Return: -1 when it is not made; else 0, with
 * @fd open on a new regular file (else -1).
 */
static int make_entry(struct archive_entry *e, int type, const char *name, char *path,
		      size_t root_len, int *fd)
{
	int ret = -1;

	*fd = -1;
	cleanup_lock();
	if (make_parents(path, root_len))
		goto out;
	if (type == AE_IFDIR) {
		if (mkdir(path, 0700) && errno != EEXIST)
			goto out;
	} else if (type == AE_IFREG) {
		*fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (*fd < 0)
			goto out;
	} else if (type == AE_IFLNK && la.entry_symlink(e) && link_ok(name, la.entry_symlink(e))) {
		if (symlink(la.entry_symlink(e), path))
			goto out;
	} else {
		goto out;
	}
	ret = 0;
out:
	cleanup_unlock();
	return ret;
}

int sym_archive_unpack_into(const char *tarball, const char *root, const char *const *want)
{
	struct archive *a = archive_load() ? la.read_new() : NULL;
	struct archive_entry *e;
	unsigned files = 0, skipped = 0, others = 0;
	int ret = PP_EIO, r, fd;

	if (!a) {
		sym_archive_remove(root);
		return la.ok ? PP_ENOMEM : PP_EIO;
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

		if (name)
			name = member_name(name);
		if (name && !*name && type == AE_IFDIR)
			continue;       /* "./": the root itself */
		if (!name || !path_ok(name) || strlen(root) + strlen(name) + 2 > PATH_MAX) {
			skipped++;
			continue;
		}
		{
			char hex[2 * PERF_MAX_BUILD_ID + 1];

			/* a member of a build id the recording does not need */
			if (want && entry_build_id(name, hex, sizeof(hex)) && !wanted(hex, want)) {
				others++;
				continue;
			}
		}
		snprintf(path, sizeof(path), "%s/%s", root, name);
		if (make_entry(e, type, name, path, strlen(root), &fd))
			skipped++;
		else if (fd >= 0 && write_data(a, fd))
			skipped++;
		else if (fd >= 0)
			files++;
	}
	if (r != ARCHIVE_EOF) {
		pp_warn("'%s': read partly: %s", tarball, la.error_string(a));
		if (!files)
			goto out;
	}
	if (skipped)
		pp_warn("'%s': %u entries not unpacked (absolute, with '..', a link out of it, "
			"or neither a file, a directory nor a link)", tarball, skipped);
	pp_info("'%s': %u files unpacked into '%s'%s", tarball, files, root,
		others ? " (the others are of build ids the recording does not need)" : "");
	ret = PP_OK;
out:
	la.read_free(a);
	if (ret)
		sym_archive_remove(root);
	return ret;
}


/*
 * --- the cache: an archive unpacked once ---
 *
 * An archive is unpacked into perfport's cache directory, under a name made
 * from its identity (device, inode, size, modification time) and the build
 * ids the recording needs from it, and read there by later runs. Unpacking
 * goes to a hidden directory renamed into place when whole; one a signal
 * interrupted is removed, one whose process died is removed by the next run.
 */

/* The build ids of @ids (hex) whose files are not here with that id. */
static char **needed_ids(const struct perf_build_id *ids, size_t n)
{
	char **want = calloc(n + 1, sizeof(*want));
	size_t k = 0;

	if (!want)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint8_t id[PERF_MAX_BUILD_ID];
		int len;
		char hex[2 * PERF_MAX_BUILD_ID + 1];

		if (!ids[i].size || ids[i].size > PERF_MAX_BUILD_ID)
			continue;
		for (size_t b = 0; b < ids[i].size; b++)
			snprintf(hex + 2 * b, 3, "%02x", ids[i].id[b]);
		/* the file at hand with the same build id: its member not needed */
		if (ids[i].filename && ids[i].filename[0] == '/' &&
		    (len = sym_file_build_id(ids[i].filename, id, sizeof(id))) == ids[i].size &&
		    !memcmp(id, ids[i].id, (size_t)len))
			continue;
		if (!(want[k] = strdup(hex))) {
			for (size_t j = 0; j < k; j++)
				free(want[j]);
			free(want);
			return NULL;
		}
		k++;
	}
	return want;
}

/* Hidden directories of unpacks whose process is gone: removed. */
static void remove_stale(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		long pid;

		if (strncmp(e->d_name, ".tmp-", 5) || !strchr(e->d_name + 5, '-'))
			continue;
		pid = strtol(strchr(e->d_name + 5, '-') + 1, NULL, 10);
		if (pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < sizeof(path))
			sym_archive_remove(path);
	}
	closedir(d);
}

int sym_archive_open(const char *tarball, const struct perf_build_id *ids, size_t nr_ids,
		     bool ids_known, char *root, size_t len, bool *temporary)
{
	char dir[PATH_MAX], key[64], tmp[PATH_MAX], done[PATH_MAX + 16];
	char **want = NULL;
	uint64_t w[8];
	struct stat st;
	size_t nw = 0;
	int ret;

	*temporary = false;
	if (stat(tarball, &st) || !S_ISREG(st.st_mode)) {
		pp_error("cannot read '%s': %s", tarball, strerror(errno ? errno : EINVAL));
		root[0] = '\0';
		return PP_EIO;
	}
	if (ids_known && !(want = needed_ids(ids, nr_ids))) {
		root[0] = '\0';
		return PP_ENOMEM;
	}
	/* the archive's identity and what is wanted of it */
	w[nw++] = (uint64_t)st.st_dev;
	w[nw++] = (uint64_t)st.st_ino;
	w[nw++] = (uint64_t)st.st_size;
	w[nw++] = (uint64_t)st.st_mtim.tv_sec;
	w[nw++] = (uint64_t)st.st_mtim.tv_nsec;
	w[nw] = want ? 1 : 0;
	for (size_t i = 0; want && want[i]; i++)
		for (const char *c = want[i]; *c; c++)
			w[nw] = mix64(w[nw] ^ (uint64_t)(unsigned char)*c);
	nw++;
	snprintf(key, sizeof(key), "%016llx", (unsigned long long)hash_words(w, nw));
	if (!cache_dir(dir, sizeof(dir), "archives", true) ||
	    (size_t)snprintf(root, len, "%s/%s", dir, key) >= len) {
		/* no cache: a private directory, removed when the run ends */
		ret = sym_archive_unpack(tarball, root, len);
		*temporary = ret == PP_OK;
		goto out;
	}
	snprintf(done, sizeof(done), "%s/.complete", root);
	if (!access(done, F_OK)) {
		pp_info("'%s': read from perfport's cache '%s'", tarball, root);
		ret = PP_OK;
		goto out;
	}
	remove_stale(dir);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s/.tmp-%s-%d-XXXXXX", PATH_MAX - 100, dir, key,
			     (int)getpid()) >= sizeof(tmp) || !make_noted(tmp)) {
		pp_error("cannot make a directory in perfport's cache '%s': %s", dir, strerror(errno));
		root[0] = '\0';
		ret = PP_EIO;
		goto out;
	}
	pp_warn("unpacking the perf archive '%s' into perfport's cache, once: later runs read it "
		"there ('%s')", tarball, root);
	ret = sym_archive_unpack_into(tarball, tmp, (const char *const *)want);
	if (ret == PP_OK) {
		char marker[PATH_MAX + 16];
		bool moved;
		int fd;

		/* marked whole and put in place, and forgotten, at once */
		snprintf(marker, sizeof(marker), "%s/.complete", tmp);
		cleanup_lock();
		fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || close(fd))
			ret = PP_EIO;
		moved = ret == PP_OK && !rename(tmp, root);
		if (moved)
			unpacking[0] = '\0';
		cleanup_unlock();
		if (!moved) {
			/* another run put it there first (theirs is whole too), or
			 * the mark failed */
			sym_archive_remove(tmp);
			snprintf(done, sizeof(done), "%s/.complete", root);
			if (ret == PP_OK && access(done, F_OK))
				ret = PP_EIO;
		}
	}
	if (ret) {
		pp_error("cannot unpack '%s' into perfport's cache '%s'", tarball, dir);
		root[0] = '\0';
	}
out:
	for (size_t i = 0; want && want[i]; i++)
		free(want[i]);
	free(want);
	return ret;
}
