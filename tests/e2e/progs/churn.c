/*
 * churn.c - starts N short-lived threads one after another, each spinning a
 * little in exit_spin() before it exits. An exiting thread's last samples
 * and its last sched_switch carry tid -1 (the kernel has released it), which
 * the accounting test (70-accounting) checks perfport gives to the thread.
 * usage: churn N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *exit_spin(void *arg)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < 100000; i++)
		x += i;
	return arg;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;

	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, exit_spin, NULL) || pthread_join(t, NULL)) {
			fprintf(stderr, "churn: cannot run thread %ld\n", i);
			return 1;
		}
	}
	return 0;
}
