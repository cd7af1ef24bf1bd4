// SPDX-License-Identifier: MIT
/*
 * dwpages.c - the pages of a debug file that indexing a unit read, let go
 * of once the index is built.
 *
 * libdwfl opens a module's files with libelf, which maps each whole
 * (ELF_C_READ_MMAP_PRIVATE), and libdw reads the debug sections in place.
 * Every page it touched stays mapped, and counted in the process's RSS,
 * as long as the module is open: indexing a unit reads all of its DIEs
 * and its line program, finding a unit by its offset reads the header of
 * every unit before it (and the kernel maps the pages around each page
 * read, tens of KiB), while what is looked up after is a few DIEs. On a
 * --call-graph dwarf JVM recording, libjvm's debug file was 107 of
 * report's 128 MB of file-backed pages at its peak, 65 of them around
 * unit headers.
 *
 * So once a unit is indexed (or its line table copied), the file's pages
 * are let go of. They are clean copies of the file (libelf writes into its
 * image only to convert another byte order in place, libdwfl only to
 * relocate an ET_REL file: neither is let go of), so MADV_DONTNEED does
 * what the kernel does under memory pressure: a page read again is mapped
 * again from the page cache (or read again from the file). The unit
 * headers are read once per Dwarf (libdw keeps the units it found), so
 * what is read again is what lookups read: a few pages.
 *
 * Letting go costs too: the pages are unmapped (on a VM, with other
 * threads of the process running, a TLB shootdown each time) and those
 * read again are mapped again. Every unit indexed let go of the whole
 * file: 46 times for libc's debug file on a -g recording of one program,
 * 3.6 ms of the naming lane's 13 (median of 7). So a thread lets go only
 * once the process's file-backed resident memory (/proc/self/statm's
 * shared pages: RssFile and RssShmem) has grown by dwpages_slack (4 MiB)
 * since its own last time: at a call, what the walks mapped since is
 * dropped when it may be more than that, and the resident set is at most
 * that much above what it was with every call dropping, for each thread
 * that names. Where statm cannot be read, every call lets go.
 *
 * sym_trim() lets go of a file's pages at once (dwpages_release()), its
 * Dwfl kept open, when the pages it counts in libdw's part go past
 * --dwarf-max.
 */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "priv.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DWPAGES_HOST_DATA ELFDATA2LSB
#else
#define DWPAGES_HOST_DATA ELFDATA2MSB
#endif

/*
 * Whether [@lo, @hi) lies inside one private mapping of a file: libelf's
 * own image of the file (not a copy it read into memory when it could not
 * map it, nor anything else). A mapping of exactly that range is a link
 * in /proc/self/map_files, a lookup that costs the same with any number of
 * mappings; else /proc/self/maps is read (a line a mapping).
 */
static bool file_mapping(uintptr_t lo, uintptr_t hi)
{
	char line[4608];
	FILE *f;
	bool ok = false;
	struct stat st;

	snprintf(line, sizeof(line), "/proc/self/map_files/%" PRIxPTR "-%" PRIxPTR, lo, hi);
	if (lstat(line, &st) == 0 && S_ISLNK(st.st_mode))
		return true;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start, end;
		unsigned long long inode;
		char perms[8];

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*s %*s %llu", &start, &end, perms,
			   &inode) != 4)
			continue;
		if (lo < start || lo >= end)
			continue;
		ok = hi <= end && perms[3] == 'p' && inode != 0;
		break;
	}
	fclose(f);
	return ok;
}

size_t dwpages_slack = 4u << 20;

static pthread_once_t statm_once = PTHREAD_ONCE_INIT;
static int statm_fd = -1;

static void statm_open(void)
{
	statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
}

/* The process's file-backed resident bytes (statm's third field); 0: unknown. */
static uint64_t rss_file(long page)
{
	char buf[160];
	ssize_t n;
	unsigned long long size, resident, shared;

	pthread_once(&statm_once, statm_open);
	if (statm_fd < 0 || (n = pread(statm_fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu %llu", &size, &resident, &shared) != 3)
		return 0;
	return (uint64_t)shared * (uint64_t)page;
}

/* What rss_file() read after this thread last let go of pages. */
static _Thread_local uint64_t dropped_at;

/*
 * libelf's image of @elf where its pages may be let go of (a host-order
 * file that is not ET_REL, mapped at a page): its start, its length in
 * whole pages into *@len; NULL where not.
 */
static char *image_of(Elf *elf, size_t *len)
{
	long page = sysconf(_SC_PAGESIZE);
	GElf_Ehdr eh;
	size_t size = 0;
	char *base;

	if (!elf || page <= 0 || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL ||
	    eh.e_ident[EI_DATA] != DWPAGES_HOST_DATA)
		return NULL;
	base = elf_rawfile(elf, &size);
	if (!base || !size || (uintptr_t)base % (uintptr_t)page)
		return NULL;
	*len = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
	return base;
}

bool dwpages_release(Elf *elf)
{
	size_t len = 0;
	char *base = image_of(elf, &len);

	return base && file_mapping((uintptr_t)base, (uintptr_t)base + len) &&
	       madvise(base, len, MADV_DONTNEED) == 0;
}

void dwpages_drop(Dwarf *dbg)
{
	Elf *elf = dbg ? dwarf_getelf(dbg) : NULL;
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	uint64_t now;

	if (!image_of(elf, &len))
		return;
	now = rss_file(page);
	if (now && dropped_at && now < dropped_at + dwpages_slack)
		return;
	dwpages_release(elf);
	dropped_at = rss_file(page);
}
