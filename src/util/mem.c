/* SPDX-License-Identifier: MIT */
/*
 * mem.c - populating memory that is about to be written; the heap on huge
 * pages (mem.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "mem.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void mem_populate(void *p, size_t n)
{
	static long page;
	uintptr_t b, e;

	if (!p || n < MEM_POPULATE_MIN)
		return;
	if (!page)
		page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	b = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	e = ((uintptr_t)p + n) & ~((uintptr_t)page - 1);
	if (e > b)
		(void)madvise((void *)b, e - b, MADV_POPULATE_WRITE);
}

/* mem_heap_hugepages() advised the heap. */
static bool heap_huge;

bool mem_thp_on_advice(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strstr(buf, "[madvise]") != NULL;
}

void mem_heap_hugepages(size_t mb)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE) && defined(M_TOP_PAD)
	const uintptr_t huge = 2u << 20;
	size_t pad = mb << 20;
	uintptr_t lo, hi;
	void *volatile block;

	if (!mb || mb > 1024 || !mem_thp_on_advice())
		return;
	/*
	 * Every page first touched is a trap into the kernel; under
	 * virtualization a costly one (12-16 us on the PVM guest issue 20 was
	 * measured on, where a whole 2 MiB page costs about what a dozen
	 * small ones do: 0.35 ms for 4 MiB against 18-27 ms).
	 * So: the heap grows @pad at a time and keeps what it has; blocks up
	 * to 32 MiB come from it rather than from mappings of their own; and
	 * the part grown here is advised for huge pages. glibc's malloc grows
	 * the heap with brk only: a block allocated and freed moves the break,
	 * and the memory between the old and the new break is the heap's.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, (int)(pad > (256u << 20) ? pad : 256u << 20));
	mallopt(M_TOP_PAD, (int)pad);
	lo = (uintptr_t)sbrk(0);
	block = malloc(pad / 2 < (16u << 20) ? pad / 2 : 16u << 20);
	free(block);
	hi = (uintptr_t)sbrk(0);
	if (lo == (uintptr_t)-1 || hi == (uintptr_t)-1 || hi <= lo)
		return;         /* the heap did not grow: not glibc's brk heap */
	lo = (lo + huge - 1) & ~(huge - 1);
	hi &= ~(huge - 1);
	if (hi > lo && !madvise((void *)lo, hi - lo, MADV_HUGEPAGE))
		heap_huge = true;
#else
	(void)mb;
#endif
}

/* glibc's HEAP_MAX_SIZE where pointers are 64-bit: a thread arena's heap
 * is a reservation of this size, aligned to it */
#define GLIBC_HEAP_MAX ((uintptr_t)64 << 20)

/*
 * Is [@base, @base + @len) one reservation of anonymous memory: mappings
 * without a file, the first starting at @base, each where the one before
 * ends, the last ending at @base + @len (a thread arena's heap: its used
 * part read-write, the rest PROT_NONE)?
 */
static bool anon_reservation(uintptr_t base, uintptr_t len)
{
	char line[512];
	uintptr_t next = base;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return false;
	while (next < base + len && fgets(line, sizeof(line), f)) {
		unsigned long a, b, inode;
		int path = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %n", &a, &b, &inode, &path) < 3)
			break;
		if (b <= base)
			continue;
		if (a != next || inode || (path && line[path] && line[path] != '\n'))
			break;
		next = b;
	}
	fclose(f);
	return next == base + len;
}

void mem_thread_hugepages(void)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
	uintptr_t addr, base;
	void *p;

	if (!heap_huge || sizeof(void *) != 8)
		return;
	/* the thread's arena is made at its first block */
	if (!(p = malloc(1)))
		return;
	addr = (uintptr_t)p;
	free(p);
	/* a block of the heap itself (the arenas all taken): thread arenas
	 * are mappings above it */
	if (addr < (uintptr_t)sbrk(0))
		return;
	base = addr & ~(GLIBC_HEAP_MAX - 1);
	if (anon_reservation(base, GLIBC_HEAP_MAX))
		(void)madvise((void *)base, GLIBC_HEAP_MAX, MADV_HUGEPAGE);
#endif
}
