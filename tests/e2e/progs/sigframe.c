/* SPDX-License-Identifier: MIT */
/*
 * sigframe.c - time spent in a signal handler: a timer's SIGALRM interrupts
 * a loop, and the handler spins, so samples' stacks run through the signal
 * frame (glibc's __restore_rt, where the handler returns to).
 * usage: sigframe [SECONDS]
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin_in_handler(void)
{
	for (unsigned long i = 0; i < 3000000; i++)
		sink += i * 7;
}

static void on_alarm(int sig)
{
	(void)sig;
	spin_in_handler();
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct timespec t0, t;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
