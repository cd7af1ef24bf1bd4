// SPDX-License-Identifier: MIT
/*
 * cleanup.c - one handler for the signals that end perfport (cleanup.h).
 */
#include "cleanup.h"

#include <signal.h>
#include <stddef.h>

#define CLEANUP_MAX 16

static void (*volatile fns[CLEANUP_MAX])(void);
static volatile sig_atomic_t nr;

void cleanup_run(void)
{
	/* newest first; each taken off before it runs, so it runs once */
	for (sig_atomic_t i = nr; i-- > 0;) {
		void (*fn)(void) = fns[i];

		fns[i] = NULL;
		if (fn)
			fn();
	}
}

static void on_signal(int sig)
{
	cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

int cleanup_on_signal(void (*fn)(void))
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	for (sig_atomic_t i = 0; i < nr; i++)
		if (fns[i] == fn)
			return 0;
	if (nr == CLEANUP_MAX)
		return -1;
	if (!nr) {
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			struct sigaction sa = { .sa_handler = on_signal };

			sigemptyset(&sa.sa_mask);
			for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
				sigaddset(&sa.sa_mask, sigs[k]);   /* one at a time */
			sigaction(sigs[i], &sa, NULL);
		}
	}
	fns[nr] = fn;
	nr = nr + 1;
	return 0;
}
