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
 * mem_thp_on_advice() - is the kernel's transparent huge page mode
 * "madvise" (the bracketed word in /sys/kernel/mm/transparent_hugepage/enabled)?
 */
bool mem_thp_on_advice(void);

/**
 * mem_heap_hugepages() - grow the malloc heap ahead (@mb MiB) and advise it
 * for transparent huge pages, so that what the program allocates from it is
 * faulted in 2 MiB at a time rather than 4 KiB. For programs (main()), not
 * libraries: it sets malloc's policy for the whole process (allocations up
 * to 32 MiB come from the heap, which is not trimmed). Does nothing unless
 * glibc's malloc owns the heap and the kernel's THP mode is "madvise".
 */
void mem_heap_hugepages(size_t mb);

/**
 * mem_thread_hugepages() - at the start of a thread: advise the heap of its
 * malloc arena for transparent huge pages, as mem_heap_hugepages() did the
 * main heap's (glibc's thread arenas are reservations of 64 MiB, grown in
 * place: what the thread allocates is then faulted in 2 MiB at a time).
 * Does nothing unless mem_heap_hugepages() took effect, the thread's first
 * block lies in such a reservation (checked in /proc/self/maps), and
 * pointers are 64-bit.
 */
void mem_thread_hugepages(void);

#endif /* UTIL_MEM_H */
