/* SPDX-License-Identifier: MIT */
/*
 * cleanup.h - what to undo when SIGINT, SIGTERM or SIGHUP ends perfport: one
 * handler runs every registered cleanup (the newest first), then ends the
 * process with the signal as it would have ended without them. Modules
 * register instead of installing handlers of their own, so that none
 * replaces another's (an output's temporary and the archive's directory).
 */
#ifndef UTIL_CLEANUP_H
#define UTIL_CLEANUP_H

/**
 * cleanup_on_signal() - run @fn when a SIGINT, SIGTERM or SIGHUP ends the
 * process (installing the handler at the first call). @fn runs in the
 * signal handler: it should do little (unlink, rmdir), and must bear being
 * run while its module is midway.
 * Return: 0, or -1 when no room is left (CLEANUP_MAX: a program error).
 */
int cleanup_on_signal(void (*fn)(void));

/** cleanup_run() - run every registered cleanup now, once (the handler does, then exits). */
void cleanup_run(void);

#endif /* UTIL_CLEANUP_H */
