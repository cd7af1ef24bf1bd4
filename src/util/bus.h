/* SPDX-License-Identifier: MIT */
/*
 * bus.h - a file mapping cut short under perfport (a build or a package
 * manager writing a binary again in place, a recording truncated while it
 * is read) no longer ends the process with SIGBUS: the missing page reads
 * as zeros, which every reader of the mapping checks as damaged data.
 */
#ifndef UTIL_BUS_H
#define UTIL_BUS_H

#include <stddef.h>

#define BUS_WATCH_MAX 8 /* mappings counted apart at once */

/**
 * bus_guard() - from the first call on, a SIGBUS for a page of a file
 * mapping beyond the file's end (BUS_ADRERR) puts a private page of zeros
 * in its place and is counted; any other SIGBUS ends the process as
 * before. Idempotent, thread-safe.
 */
void bus_guard(void);

/**
 * bus_watch() - count the pages replaced in [@base, @base + @len) apart
 * from the others (bus_watched_pages()), until bus_unwatch().
 * Return: the slot, or -1 when all BUS_WATCH_MAX are taken (the pages are
 * then counted with the others).
 */
int bus_watch(const void *base, size_t len);

/** bus_watched_pages() - pages replaced so far in @slot's range (0: -1). */
unsigned bus_watched_pages(int slot);

/** bus_unwatch() - let go of @slot (-1: nothing). */
void bus_unwatch(int slot);

/** bus_other_pages() - pages replaced so far outside every watched range. */
unsigned bus_other_pages(void);

#endif
