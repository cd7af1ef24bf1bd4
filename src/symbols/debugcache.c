/* SPDX-License-Identifier: MIT */
/*
 * debugcache.c - uncompressed copies of compressed debug files.
 *
 * Distributions compress their separate debug files (SHF_COMPRESSED
 * .debug_* sections), and libdw inflates every such section each time it
 * opens one: for Debian's libc6-dbg, ~90 ms before the first libc frame
 * can be named, on every run. The first time such a file is found, its
 * sections are inflated once into a copy kept in perfport's cache
 * (debug/BUILDID.debug, the original's path beside it in BUILDID.debug.source;
 * see util/cachedir.h), which libdw then reads as it is; later runs open
 * the copy. Only the distribution's files by build id
 * (/usr/lib/debug/.build-id/) are copied; a debug file found otherwise is
 * left to libdwfl's own search. The copy is the original with each
 * compressed debug section written again, uncompressed, at the end (and
 * the section headers after them): every other byte, the notes and the
 * build id included, stays where it was.
 *
 * A copy is used only when it is a regular file of this user, is ELF,
 * holds the same build id and no compressed debug section; anything else
 * is made again. Failing to make one is harmless: libdw gets the original.
 */
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cachedir.h"
#include "../util/log.h"
#include "priv.h"

/* Larger sections are left to libdw: the copy would cost more disk than
 * the time it saves is worth. */
#define DEBUGCACHE_MAX (512ull << 20)

/* Is @scn a compressed .debug_* section holding data? @sh is set. */
static bool compressed_debug(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh)
{
	const char *name;

	if (!gelf_getshdr(scn, sh) || !(sh->sh_flags & SHF_COMPRESSED) || sh->sh_type == SHT_NOBITS)
		return false;
	name = elf_strptr(elf, shstrndx, sh->sh_name);
	return name && strncmp(name, ".debug_", 7) == 0;
}

/*
 * How many bytes @elf's compressed debug sections hold uncompressed (0:
 * none), and its build id into @id (*@id_len its length).
 */
static uint64_t compressed_size(Elf *elf, uint8_t *id, size_t *id_len)
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);
	size_t shstrndx;
	uint64_t total = 0;
	Elf_Scn *scn = NULL;

	*id_len = 0;
	if (n <= 0 || n > PERF_MAX_BUILD_ID || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	memcpy(id, p, (size_t)n);
	*id_len = (size_t)n;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;

		if (!compressed_debug(elf, shstrndx, scn, &sh))
			continue;
		if (!gelf_getchdr(scn, &ch))
			return 0; /* not a compression libelf knows: leave it */
		total += ch.ch_size;
	}
	return total;
}

/* Whether every section of @elf lies inside its @size bytes and it has
 * DWARF (a copy cut short keeps its header and notes, not its sections). */
static bool whole(Elf *elf, uint64_t size)
{
	size_t shstrndx, nr;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	bool info = false;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &nr) || !nr ||
	    eh.e_shoff + (uint64_t)nr * eh.e_shentsize > size || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			return false;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		info = info || (name && strcmp(name, ".debug_info") == 0 && sh.sh_type != SHT_NOBITS);
	}
	return info;
}

/* The copy at @path, opened, when it is one for @id; else -1. */
static int open_copy(const char *path, const uint8_t *id, size_t id_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	uint8_t cid[PERF_MAX_BUILD_ID];
	size_t cid_len;
	struct stat st;
	Elf *elf;
	bool ok;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || !st.st_size) {
		close(fd);
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = elf && elf_kind(elf) == ELF_K_ELF && whole(elf, (uint64_t)st.st_size) &&
	     compressed_size(elf, cid, &cid_len) == 0 && cid_len == id_len &&
	     memcmp(cid, id, id_len) == 0;
	elf_end(elf);
	if (!ok) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool copy_bytes(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;

	for (;;) {
		ssize_t r = pread(from, buf, sizeof(buf), off);

		if (r < 0)
			return false;
		if (r == 0)
			return true;
		if (!cache_write(to, buf, (size_t)r))
			return false;
		off += r;
	}
}

/*
 * Rewrite the copy open at @fd: each compressed debug section inflated and
 * placed after what the file holds, then the section headers.
 */
static bool inflate_sections(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_RDWR, NULL);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	struct stat st;
	uint64_t end;
	bool ok = false;

	if (!elf || fstat(fd, &st) || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	end = (uint64_t)st.st_size;
	/* offsets are perfport's to give: nothing else moves */
	elf_flagelf(elf, ELF_C_SET, ELF_F_LAYOUT);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		uint64_t align;

		if (!compressed_debug(elf, shstrndx, scn, &sh))
			continue;
		if (elf_compress(scn, 0, 0) != 1 || !gelf_getshdr(scn, &sh))
			goto out;
		align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
		end = (end + align - 1) / align * align;
		sh.sh_offset = end;
		end += sh.sh_size;
		if (!gelf_update_shdr(scn, &sh))
			goto out;
		elf_flagscn(scn, ELF_C_SET, ELF_F_DIRTY);
	}
	eh.e_shoff = (end + 7) & ~(uint64_t)7;
	ok = gelf_update_ehdr(elf, &eh) && elf_update(elf, ELF_C_WRITE) > 0;
out:
	if (!ok)
		pp_debug("cannot inflate a debug file copy: %s", elf_errmsg(-1));
	elf_end(elf);
	return ok;
}

/* Make the copy of @fd's file at @path. Return: true when it is there. */
static bool make_copy(int fd, const char *path)
{
	static unsigned seq;
	char tmp[4096 + 64];
	unsigned n = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	int out;
	bool ok;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.%u.tmp", path, (int)getpid(), n) >= (int)sizeof(tmp))
		return false;
	out = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out < 0)
		return false;
	ok = copy_bytes(fd, out) && inflate_sections(out);
	if (close(out) || !ok || rename(tmp, path)) {
		unlink(tmp);
		return false;
	}
	return true;
}

/* The original's path, kept beside the copy, into a malloc'd string. */
static char *source_name(const char *copy, const char *fallback)
{
	char side[4096 + 96], buf[4096];
	ssize_t n = -1;
	int fd;

	snprintf(side, sizeof(side), "%s.source", copy);
	fd = open(side, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 1 || buf[0] != '/' || memchr(buf, '\0', (size_t)n))
		return strdup(fallback);
	buf[n] = '\0';
	return strdup(buf);
}

static void save_source_name(const char *copy, const char *orig)
{
	char side[4096 + 96], tmp[4096 + 128];
	size_t len = strlen(orig);
	int fd;

	snprintf(side, sizeof(side), "%s.source", copy);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", side, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	if (!cache_write(fd, orig, len) || close(fd) || rename(tmp, side))
		unlink(tmp);
}

int sym_debug_uncompressed(const unsigned char *id, size_t id_len, char **name)
{
	char dir[4096], path[4096 + 2 * PERF_MAX_BUILD_ID + 16], hex[2 * PERF_MAX_BUILD_ID + 1];
	char orig[64 + 2 * PERF_MAX_BUILD_ID];
	uint8_t oid[PERF_MAX_BUILD_ID];
	size_t oid_len = 0;
	uint64_t size = 0;
	Elf *elf;
	int fd, copy;

	if (!id_len || id_len > PERF_MAX_BUILD_ID || !cache_dir(dir, sizeof(dir), "debug", false))
		return -1;
	sym_hex(id, id_len, hex);
	snprintf(path, sizeof(path), "%s/%s.debug", dir, hex);
	copy = open_copy(path, id, id_len);
	if (copy >= 0) {
		*name = source_name(path, path);
		pp_debug("'%s': debug sections from perfport's uncompressed copy '%s'",
			 *name ? *name : path, path);
		return copy;
	}
	/* the distribution's file for this build id, compressed: copied once */
	snprintf(orig, sizeof(orig), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	fd = open(orig, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		size = compressed_size(elf, oid, &oid_len);
	elf_end(elf);
	if (!size || size > DEBUGCACHE_MAX || oid_len != id_len || memcmp(oid, id, id_len) ||
	    !cache_dir(dir, sizeof(dir), "debug", true) || !make_copy(fd, path)) {
		close(fd);
		return -1;
	}
	close(fd);
	save_source_name(path, orig);
	copy = open_copy(path, id, id_len);
	if (copy < 0)
		return -1;
	pp_info("'%s': debug sections inflated once into '%s'", orig, path);
	*name = strdup(orig);
	return copy;
}
