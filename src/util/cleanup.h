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
 */
#ifndef UTIL_CLEANUP_H
#define UTIL_CLEANUP_H

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

/** cleanup_unlock() - release what cleanup_lock() took. */
void cleanup_unlock(void);

/**
 * cleanup_run() - run every registered cleanup now, once, in the caller's
 * context (the caller must not hold the cleanup lock).
 */
void cleanup_run(void);

#endif /* UTIL_CLEANUP_H */
