/* SPDX-License-Identifier: MIT */
/*
 * mem.h - memory that is about to be written whole: allocated and its
 * pages faulted in by the kernel in one call, instead of one fault (a trap,
 * costly under virtualization) per 4 KiB page as it is first touched.
 */
#ifndef UTIL_MEM_H
#define UTIL_MEM_H

#include <stddef.h>

/* Below this, pages are left to fault one by one (the call costs more). */
#define MEM_POPULATE_MIN (256u << 10)

/**
 * mem_populate() - fault in the pages wholly inside [@p, @p + @n) for
 * writing (MADV_POPULATE_WRITE, Linux 5.14). A hint: nothing happens for
 * small ranges, older kernels or when the memory is short.
 */
void mem_populate(void *p, size_t n);

#endif /* UTIL_MEM_H */
