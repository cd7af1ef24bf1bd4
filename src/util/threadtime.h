/* SPDX-License-Identifier: MIT */
/*
 * threadtime.h - how much CPU each of perfport's threads used, for make
 * bench's scaling figures: with PERFPORT_THREAD_TIMES=FILE in the
 * environment, each thread notes its CPU time when it ends, and the run
 * writes them to FILE at its end, one "ROLE SECONDS" line each.
 */
#ifndef UTIL_THREADTIME_H
#define UTIL_THREADTIME_H

/**
 * thread_role() - name the calling thread "pp-@role" (as top -H, ps -L and
 * perf show it; @role is cut to 12 characters).
 */
void thread_role(const char *role);

/** thread_time_note() - note the calling thread's CPU time so far, as @role (static). */
void thread_time_note(const char *role);

/** thread_time_report() - write what was noted to $PERFPORT_THREAD_TIMES, if set. */
void thread_time_report(void);

#endif /* UTIL_THREADTIME_H */
