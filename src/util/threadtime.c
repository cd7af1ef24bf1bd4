// SPDX-License-Identifier: MIT
/*
 * threadtime.c - the threads' CPU times, for make bench (threadtime.h).
 */
#include "threadtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOTES_MAX 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const char *role;
	double s;
} notes[NOTES_MAX];
static size_t nr;

void thread_role(const char *role)
{
	char name[16]; /* the kernel's limit, with the NUL */

	snprintf(name, sizeof(name), "pp-%s", role);
	pthread_setname_np(pthread_self(), name);
}

void thread_time_note(const char *role)
{
	struct timespec ts;

	if (!getenv("PERFPORT_THREAD_TIMES") || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return;
	pthread_mutex_lock(&lock);
	if (nr < NOTES_MAX) {
		notes[nr].role = role;
		notes[nr++].s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	}
	pthread_mutex_unlock(&lock);
}

void thread_time_report(void)
{
	const char *path = getenv("PERFPORT_THREAD_TIMES");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "w")))
		return;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "%s %.6f\n", notes[i].role, notes[i].s);
	pthread_mutex_unlock(&lock);
	fclose(f);
}
