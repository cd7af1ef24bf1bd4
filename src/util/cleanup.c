// SPDX-License-Identifier: MIT
/*
 * cleanup.c - the signals that end perfport, and what is undone before it
 * ends (cleanup.h).
 *
 * The handler does nothing but note the signal and post a semaphore: it may
 * interrupt any code, malloc() and libarchive's inflating among them, so
 * it calls nothing that is not async-signal-safe. The work (nftw(),
 * unlink(), which allocate or may) is done by a thread that waits on the
 * semaphore, with the cleanup lock held, so that the modules' own threads
 * never change a cleanup's state while it runs, and it never sees a change
 * half made. That thread then ends the process by the signal, its default
 * action restored.
 *
 * A command that ends on its own at a signal (watch lets the window being
 * sent finish; an upload keeps what is left in the spool) installs no
 * handler of its own, which a later registration would replace (or which
 * would replace this one, and its cleanups with it): it gives a taker
 * (cleanup_take_signals()), which the handler asks first. A signal the
 * taker keeps is the command's; one it leaves ends the run here, the
 * cleanups first.
 */
#include "cleanup.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "threadtime.h"

#define CLEANUP_MAX 16

static const int cleanup_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define CLEANUP_NSIGS (sizeof(cleanup_sigs) / sizeof(cleanup_sigs[0]))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void (*fns[CLEANUP_MAX])(void);      /* under lock */
static size_t nr;                            /* under lock */
static bool installed;                       /* under lock: the handlers are in place */

/* written by the handler, read by the thread and at exit (a lock-free
 * atomic: safe in a handler, and ordered for the thread that reads it) */
static atomic_int caught;
static sem_t wake;
static pid_t owner;                          /* the process whose thread waits */
static atomic_bool thread_up;                /* that thread waits: set once */
static _Atomic(cleanup_taker) taker;         /* the command's, or NULL */

void cleanup_lock(void)
{
	pthread_mutex_lock(&lock);
}

void cleanup_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

/* Every cleanup, newest first, each taken off before it runs (lock held). */
static void run_locked(void)
{
	while (nr) {
		void (*fn)(void) = fns[--nr];

		fns[nr] = NULL;
		fn();
	}
}

void cleanup_run(void)
{
	pthread_mutex_lock(&lock);
	run_locked();
	pthread_mutex_unlock(&lock);
}

/* The cleanups, then the end by @sig (lock held; does not return). */
static _Noreturn void end_by(int sig)
{
	sigset_t set;

	run_locked();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);       /* not reached: the default action ends the process */
}

static void on_signal(int sig)
{
	int e = errno;
	cleanup_taker take = atomic_load(&taker);

	if (getpid() == owner && take && take(sig)) {
		errno = e;      /* the command's own: it ends when it is done */
		return;
	}
	if (getpid() != owner || !atomic_load(&thread_up)) {
		/* a child forked after the handlers were installed (it has no
		 * such thread, and the cleanups are its parent's), or no thread
		 * could be started: ended as if perfport had no handler */
		signal(sig, SIG_DFL);
		raise(sig);
		errno = e;
		return;
	}
	{
		int none = 0;

		atomic_compare_exchange_strong(&caught, &none, sig);
	}
	sem_post(&wake);
	errno = e;
}

static void *signal_thread(void *arg)
{
	(void)arg;
	thread_role("signal");
	while (!atomic_load(&caught))
		sem_wait(&wake);        /* EINTR or a spurious post: look again */
	pthread_mutex_lock(&lock);
	end_by(atomic_load(&caught));
}

/* exit() with a signal noted (its thread not yet at work, or at work on
 * another thread): the run ends by the signal, after the cleanups. */
static void at_exit(void)
{
	if (!atomic_load(&caught) || getpid() != owner)
		return;
	pthread_mutex_lock(&lock);  /* the thread, if at work, ends the process first */
	end_by(atomic_load(&caught));
}

/* Start the thread (lock held). Return: 0, or -1 when it cannot be. */
static int start_thread_locked(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (sem_init(&wake, 0, 0))
		return -1;
	/* the thread takes no signal itself: it is created with all blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256u << 10);
	err = pthread_create(&t, &attr, signal_thread, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		sem_destroy(&wake);
		return -1;
	}
	atexit(at_exit);
	atomic_store(&thread_up, true);
	return 0;
}

/*
 * Start the thread and install the handler, once (lock held). Return: 0,
 * or -1 when the thread cannot be started (the handler is installed all
 * the same: the signals a taker leaves then end the run as they would
 * without it, with nothing cleaned up).
 */
static int start_locked(void)
{
	if (installed)
		return atomic_load(&thread_up) ? 0 : -1;
	owner = getpid();
	start_thread_locked();
	for (size_t i = 0; i < CLEANUP_NSIGS; i++) {
		/* SIGINT and SIGTERM without SA_RESTART: a read the command
		 * waits in ends at once, for a taker that wants it to stop;
		 * SIGHUP (a reload, for a taker) breaks no system call */
		struct sigaction sa = { .sa_handler = on_signal,
					.sa_flags = cleanup_sigs[i] == SIGHUP ? SA_RESTART : 0 };

		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < CLEANUP_NSIGS; k++)
			sigaddset(&sa.sa_mask, cleanup_sigs[k]);   /* one at a time */
		sigaction(cleanup_sigs[i], &sa, NULL);
	}
	installed = true;
	return atomic_load(&thread_up) ? 0 : -1;
}

cleanup_taker cleanup_take_signals(cleanup_taker take)
{
	cleanup_taker old;

	pthread_mutex_lock(&lock);
	start_locked();
	old = atomic_exchange(&taker, take);
	pthread_mutex_unlock(&lock);
	return old;
}

int cleanup_on_signal(void (*fn)(void))
{
	int ret = 0;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nr; i++)
		if (fns[i] == fn)
			goto out;
	if (nr == CLEANUP_MAX || start_locked()) {
		ret = -1;
		goto out;
	}
	fns[nr++] = fn;
out:
	pthread_mutex_unlock(&lock);
	return ret;
}
