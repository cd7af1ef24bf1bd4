/* SPDX-License-Identifier: MIT */
/*
 * mem.h - memory that is about to be written whole: allocated and its
 * pages faulted in by the kernel in one call, instead of one fault (a trap,
 * costly under virtualization) per 4 KiB page as it is first touched.
 */
#ifndef UTIL_MEM_H
#define UTIL_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* Below this, pages are left to fault one by one (the call costs more). */
#define MEM_POPULATE_MIN (256u << 10)

/**
 * mem_populate() - fault in the pages wholly inside [@p, @p + @n) for
 * writing (MADV_POPULATE_WRITE, Linux 5.14). A hint: nothing happens for
 * small ranges, older kernels or when the memory is short.
 */
void mem_populate(void *p, size_t n);

/**
 * mem_heap_hugepages() - grow the malloc heap ahead (@mb MiB) and advise it
 * for transparent huge pages, so that what the program allocates from it is
 * faulted in 2 MiB at a time rather than 4 KiB. For programs (main()), not
 * libraries: it sets malloc's policy for the whole process (allocations up
 * to 32 MiB come from the heap, which is not trimmed). Does nothing unless
 * glibc's malloc owns the heap and the kernel's THP mode is "madvise".
 */
void mem_heap_hugepages(size_t mb);

/* Up to this many working threads share the one heap (mem_heap_share()). */
#define MEM_SHARE_MAX_THREADS 2

/**
 * mem_heap_share() - with @threads working threads at most
 * MEM_SHARE_MAX_THREADS, have every thread allocate from the heap that
 * mem_heap_hugepages() advised, not from an arena of its own (whose pages
 * fault in 4 KiB at a time, and which reuses none of what the others
 * freed). For programs, before their first thread: it sets malloc's policy
 * for the whole process. More threads keep their own arenas: one lock for
 * all of them would be contended (the unwinding threads allocate and free
 * about a hundred blocks a sample). Does nothing unless
 * mem_heap_hugepages() took effect.
 * Return: true when the threads are to share the heap.
 */
bool mem_heap_share(unsigned threads);

#endif /* UTIL_MEM_H */
