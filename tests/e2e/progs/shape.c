/* SPDX-License-Identifier: MIT */
/*
 * shape.c - a workload whose profile is known in advance, for the
 * accounting tests. Each thread is named after what it does:
 *
 *   cpu      heavy() and light() in turn, the same loop 3:1, at nice 19
 *            (ON_CPU 3:1)
 *   lockA/B  wait for the mutex the napper sleeps holding  (LOCK)
 *   napper   nanosleep holding a mutex, then signals      (TIMED_SLEEP)
 *   waiter   pthread_cond_wait until signalled            (SLEEP)
 *   io       write 4 KiB + fsync on a file in DIR         (IO)
 *
 * usage: shape SECONDS DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int signalled;
static const char *dir;

#define UNIT 200000

__attribute__((noinline)) static double heavy(double x)
{
	for (int i = 0; i < 3 * UNIT; i++)
		x = x * 1.0000001 + 0.5 / (x + 1.0);
	return x;
}

__attribute__((noinline)) static double light(double x)
{
	for (int i = 0; i < UNIT; i++)
		x = x * 1.0000001 + 0.5 / (x + 1.0);
	return x;
}

static void *cpu(void *arg)
{
	double x = 1.0;

	(void)arg;
	/* lowest priority: the CPU it does not need goes to the others at once */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	while (!stop) {
		x = heavy(x);
		x = light(x);
	}
	return x > 0 ? NULL : arg;
}

/*
 * The napper sleeps holding one of two mutexes, and swaps them each time it
 * wakes: it takes the other one, then lets go of the one it held. Each
 * locker takes and drops the mutexes in turn, so it is off CPU almost only
 * while waiting for the one the napper holds, and needs no CPU otherwise.
 */
static pthread_mutex_t turn[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };

static void *locker(void *arg)
{
	int k = 0;

	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&turn[k]);
		pthread_mutex_unlock(&turn[k]);
		k ^= 1;
	}
	return NULL;
}

static void *napper(void *arg)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	int k = 0;

	(void)arg;
	pthread_mutex_lock(&turn[k]);
	while (!stop) {
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&turn[k ^ 1]);
		pthread_mutex_unlock(&turn[k]);
		k ^= 1;
		pthread_mutex_lock(&cv_lock);
		signalled = 1;
		pthread_mutex_unlock(&cv_lock);
		pthread_cond_signal(&cv);
	}
	pthread_mutex_unlock(&turn[k]);
	pthread_mutex_lock(&cv_lock);
	signalled = 2;
	pthread_mutex_unlock(&cv_lock);
	pthread_cond_signal(&cv);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (;;) {
		int s;

		pthread_mutex_lock(&cv_lock);
		while (!signalled)
			pthread_cond_wait(&cv, &cv_lock);
		s = signalled;
		signalled = 0;
		pthread_mutex_unlock(&cv_lock);
		if (s == 2 || stop)
			break;
	}
	return NULL;
}

static void *io(void *arg)
{
	char path[4096], buf[4096];
	int fd;

	(void)arg;
	snprintf(path, sizeof(path), "%s/shape-io.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		perror(path);
		return NULL;
	}
	unlink(path);
	memset(buf, 'x', sizeof(buf));
	while (!stop) {
		if (write(fd, buf, sizeof(buf)) < 0)
			perror("write");
		fsync(fd);
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void *(*fn)(void *);
	} threads[] = {
		{ "napper", napper }, { "cpu", cpu }, { "lockA", locker },
		{ "lockB", locker }, { "waiter", waiter }, { "io", io },
	};
	pthread_t th[6];
	double seconds;

	if (argc != 3) {
		fprintf(stderr, "usage: shape SECONDS DIR\n");
		return 2;
	}
	seconds = atof(argv[1]);
	dir = argv[2];
	{
		/* DIR/shape.pid: which process was the workload, for tests that
		 * record the whole system */
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/shape.pid", dir);
		f = fopen(path, "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	for (int i = 0; i < 6; i++) {
		pthread_create(&th[i], NULL, threads[i].fn, (void *)(long)(i + 1));
		pthread_setname_np(th[i], threads[i].name);
	}
	usleep((useconds_t)(seconds * 1e6));
	stop = 1;
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	return 0;
}
