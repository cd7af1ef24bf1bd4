/* SPDX-License-Identifier: MIT */
/*
 * mem.c - populating memory that is about to be written (mem.h).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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
