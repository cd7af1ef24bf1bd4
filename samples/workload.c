/* SPDX-License-Identifier: MIT */
/*
 * workload.c - a small program whose threads spend time in each state
 * perfport tells apart: on CPU, waiting for a lock, in I/O, sleeping on a
 * pipe, and in a timed sleep. Used by `make demo`, the samples and the tests.
 *
 * usage: workload [SECONDS] [cpu|lock|io|sleep|deep|main|all]   (default: 1 all)
 * (deep: CPU time 60 calls down, for unwinding benchmarks; main: the main
 * thread alone computes, faults pages in and sleeps, for a recording that
 * follows one thread; neither in all)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static int wake_pipe[2];

__attribute__((noinline)) static double hot_inner(double x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 1.0000001 + 0.5 / (x + 1.0);
	return x;
}

__attribute__((noinline)) static double burn_cpu(void)
{
	double x = 1.0;

	while (!stop)
		x = hot_inner(x);
	return x;
}

__attribute__((noinline)) static void hold_lock(void)
{
	pthread_mutex_lock(&big_lock);
	for (volatile int i = 0; i < 3000000; i++)
		;
	pthread_mutex_unlock(&big_lock);
}

static void *locker(void *arg)
{
	(void)arg;
	while (!stop)
		hold_lock();
	return NULL;
}

__attribute__((noinline)) static void do_io(int fd)
{
	char buf[4096];

	memset(buf, 'x', sizeof(buf));
	if (write(fd, buf, sizeof(buf)) < 0)
		perror("write");
	fsync(fd);
}

static void *io_worker(void *arg)
{
	char path[] = "/tmp/perfport-workload-XXXXXX";
	int fd = mkstemp(path);

	(void)arg;
	if (fd < 0)
		return NULL;
	unlink(path);
	while (!stop)
		do_io(fd);
	close(fd);
	return NULL;
}

__attribute__((noinline)) static void wait_on_pipe(void)
{
	char c;

	if (read(wake_pipe[0], &c, 1) < 0)
		perror("read");
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!stop)
		wait_on_pipe();
	return NULL;
}

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static void *napper(void *arg)
{
	(void)arg;
	while (!stop) {
		nap();
		if (write(wake_pipe[1], "x", 1) < 0)
			perror("write");
	}
	if (write(wake_pipe[1], "x", 1) < 0)
		perror("write");
	return NULL;
}

__attribute__((noinline)) static double recurse(int depth, double x)
{
	if (depth > 0)
		return recurse(depth - 1, x) + 1.0; /* not a tail call: keeps its frame */
	while (!stop)
		x = hot_inner(x);
	return x;
}

static void *deep_worker(void *arg)
{
	static double sink;

	(void)arg;
	sink = recurse(60, 1.0);
	(void)sink;
	return NULL;
}

static void *cpu_worker(void *arg)
{
	static double sink;

	(void)arg;
	sink = burn_cpu();
	(void)sink;
	return NULL;
}

/* The main thread alone, for @seconds: CPU, a page faulted in, a short sleep. */
__attribute__((noinline)) static double main_alone(double seconds)
{
	struct timespec now, end, nap = { 0, 200000 };
	double x = 1.0;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	do {
		char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		for (int i = 0; i < 200; i++)
			x = hot_inner(x);
		if (page != MAP_FAILED) {
			page[0] = (char)x;
			munmap(page, 4096);
		}
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	const char *what = argc > 2 ? argv[2] : "all";
	int all = strcmp(what, "all") == 0;
	pthread_t th[8];
	int n = 0;
	struct timespec ts;

	if (pipe(wake_pipe) < 0) {
		perror("pipe");
		return 1;
	}
	if (all || strcmp(what, "cpu") == 0)
		pthread_create(&th[n++], NULL, cpu_worker, NULL);
	if (all || strcmp(what, "lock") == 0) {
		pthread_create(&th[n++], NULL, locker, NULL);
		pthread_create(&th[n++], NULL, locker, NULL);
	}
	if (all || strcmp(what, "io") == 0)
		pthread_create(&th[n++], NULL, io_worker, NULL);
	if (all || strcmp(what, "sleep") == 0) {
		pthread_create(&th[n++], NULL, sleeper, NULL);
		pthread_create(&th[n++], NULL, napper, NULL);
	}
	if (strcmp(what, "main") == 0) {
		return main_alone(seconds) < 0;
	}
	if (strcmp(what, "deep") == 0) {
		pthread_create(&th[n++], NULL, deep_worker, NULL);
		pthread_create(&th[n++], NULL, deep_worker, NULL);
	}
	if (!n) {
		fprintf(stderr, "usage: workload [SECONDS] [cpu|lock|io|sleep|deep|main|all]\n");
		return 1;
	}
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
