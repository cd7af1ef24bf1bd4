/* SPDX-License-Identifier: MIT */
/*
 * cleanup.h - what to undo when SIGINT, SIGTERM or SIGHUP ends perfport: the
 * registered cleanups run (the newest first), then the process ends with
 * the signal as it would have ended without them. Modules register instead
 * of installing handlers of their own, so that none replaces another's (an
 * output's temporary and the archive's directory).
 *
 * Safe by construction: the handler only notes the signal and wakes a
 * thread of this module's (sem_post(), async-signal-safe); that thread runs
 * the cleanups in normal context, under the cleanup lock, and ends the
 * process with the signal. A module changes what its cleanup reads, and
 * makes what its cleanup must remove, under the same lock (cleanup_lock()),
 * so a cleanup never sees a half-made state and nothing is made after it.
 * A run that reaches exit() with a signal noted ends by the signal too,
 * after the cleanups.
 *
 * These are the only handlers of those signals: a command that ends on
 * its own at one (watch, an upload) gives a taker instead of a handler.
 */
#ifndef UTIL_CLEANUP_H
#define UTIL_CLEANUP_H

#include <stdbool.h>

/*
 * A command's part in a signal, called in the handler (so it may do only
 * what is async-signal-safe: set a flag of type volatile sig_atomic_t or
 * a lock-free atomic, pthread_kill()): true when the command takes the
 * signal and ends on its own, false when the signal is to end the run now.
 */
typedef bool (*cleanup_taker)(int sig);

/**
 * cleanup_on_signal() - run @fn when a SIGINT, SIGTERM or SIGHUP ends the
 * process (installing the handler and starting the thread that runs the
 * cleanups at the first call; a second registration of @fn is ignored).
 * @fn runs on that thread with the cleanup lock held: it must not take the
 * lock, and sees its module's state as the module left it when it last
 * released the lock.
 * Return: 0, or -1 when no room is left (CLEANUP_MAX: a program error) or
 * the thread cannot be started (the signals then end the run as they would
 * without perfport's handler, with nothing cleaned up).
 */
int cleanup_on_signal(void (*fn)(void));

/**
 * cleanup_lock() - hold off the cleanups while the caller changes what one
 * of them reads, or makes something one of them must remove (a directory,
 * a temporary file) and records it. Not recursive; hold it briefly.
 */
void cleanup_lock(void);

/**
 * cleanup_take_signals() - make @take (NULL: none) the command's part in
 * SIGINT, SIGTERM and SIGHUP: each is given to it first, and ends the run
 * (the cleanups first) only when it returns false. Installs the handler
 * and starts the cleanups' thread if not done yet; SIGINT and SIGTERM
 * interrupt a blocking system call (no SA_RESTART), SIGHUP does not.
 * Return: the taker there was, for the caller to give back.
 */
cleanup_taker cleanup_take_signals(cleanup_taker take);

/** cleanup_unlock() - release what cleanup_lock() took. */
void cleanup_unlock(void);

/**
 * cleanup_run() - run every registered cleanup now, once, in the caller's
 * context (the caller must not hold the cleanup lock).
 */
void cleanup_run(void);

#endif /* UTIL_CLEANUP_H */
