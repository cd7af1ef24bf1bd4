/* SPDX-License-Identifier: MIT */
/*
 * test_util.c - the signal cleanups: every registered one runs (newest
 * first) when SIGTERM ends the process, which then ends by the signal;
 * an output's temporary and the archive's directory both go; a run that
 * reaches exit() with a signal noted ends by it too; nothing made under the
 * cleanup lock escapes the cleanup; a signal that interrupts malloc()
 * (the cleanups allocate) ends the run by the signal, never an abort.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/cleanup.h"
#include "util/outfile.h"

static char dir[] = "/tmp/perfport-test-util.XXXXXX";
static char order[64];

static void first(void)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/first", dir);
	fclose(fopen(p, "w"));
	strcat(order, "1");
}

static void second(void)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/second-%s", dir, order);   /* runs before first */
	fclose(fopen(p, "w"));
	strcat(order, "2");
}

static void test_cleanups_at_sigterm(void **state)
{
	struct outfile o;
	char out[256], p[256];
	int st;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out.txt", dir);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* an output in flight (its temporary tracked), two more cleanups */
		if (outfile_open(&o, out))
			_exit(1);
		fputs("half", o.f);
		fflush(o.f);
		cleanup_on_signal(first);
		cleanup_on_signal(second);
		cleanup_on_signal(second);          /* once only */
		alarm(60);                          /* a hang guard only */
		raise(SIGTERM);
		/* the handler only noted it: the run goes on until the
		 * cleanups' thread ends it */
		for (;;)
			pause();
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	snprintf(p, sizeof(p), "%s/first", dir);
	assert_int_equal(access(p, F_OK), 0);
	snprintf(p, sizeof(p), "%s/second-", dir);   /* second ran first */
	assert_int_equal(access(p, F_OK), 0);
	assert_int_not_equal(access(out, F_OK), 0);  /* never put in place */
	{
		char cmd[512];
		FILE *f;
		int n = -1;

		/* the output's temporary gone too: only the two markers remain */
		snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
		f = popen(cmd, "r");
		assert_non_null(f);
		assert_int_equal(fscanf(f, "%d", &n), 1);
		pclose(f);
		assert_int_equal(n, 2);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

static char marker[256];

static void remove_marker(void)
{
	unlink(marker);
}

/* fork(): the child runs @child; its end (signal number, or 0). */
static int child_end(void (*child)(void))
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		alarm(60);                          /* a hang guard only */
		child();
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

/* A signal, then exit() at once: the run still ends by it, cleaned up. */
static void exit_after_signal(void)
{
	cleanup_on_signal(remove_marker);
	raise(SIGTERM);
	exit(0);
}

/* What the cleanup removes: set under the cleanup lock. */
static const char *noted;

static void remove_noted(void)
{
	if (noted)
		unlink(noted);
}

/* The marker made, the signal, the marker noted, all under the cleanup
 * lock: the cleanup waits for the lock, so it sees the marker noted and
 * removes it (a cleanup run in the handler saw nothing noted, and left it). */
static void made_under_lock(void)
{
	cleanup_on_signal(remove_noted);
	cleanup_lock();
	fclose(fopen(marker, "w"));
	raise(SIGTERM);
	noted = marker;
	cleanup_unlock();
	for (;;)
		pause();
}

static void test_cleanups_in_order(void **state)
{
	char d[] = "/tmp/perfport-test-util.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(d));
	snprintf(marker, sizeof(marker), "%s/marker", d);
	fclose(fopen(marker, "w"));
	assert_int_equal(child_end(exit_after_signal), SIGTERM);
	assert_int_not_equal(access(marker, F_OK), 0);
	assert_int_equal(child_end(made_under_lock), SIGTERM);
	assert_int_not_equal(access(marker, F_OK), 0);
	assert_int_equal(rmdir(d), 0);
}

/* A cleanup that allocates, as nftw() does, enough to grow the heap. */
static void allocating(void)
{
	void *p[64];

	for (int i = 0; i < 64; i++)
		p[i] = malloc(64 + (size_t)i * 2000);
	for (int i = 0; i < 64; i++)
		free(p[i]);
}

/* The child allocates without end; the parent's SIGTERM comes at once. */
static void churn(void)
{
	static void *keep[4096];

	cleanup_on_signal(allocating);
	printf("\n");          /* the parent's cue: registered */
	fflush(stdout);
	for (unsigned i = 0;; i++) {
		size_t k = (i * 7919u) % 4096;

		free(keep[k]);
		keep[k] = malloc(16 + (i * 131u) % 60000);
	}
}

static void test_signal_in_malloc(void **state)
{
	int aborts = 0, others = 0;

	(void)state;
	for (int n = 0; n < 200; n++) {
		int p[2], st;
		char c;
		pid_t pid;

		assert_int_equal(pipe(p), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (!pid) {
			alarm(60);                  /* a hang guard only */
			dup2(p[1], 1);
			close(p[0]);
			churn();
		}
		close(p[1]);
		assert_int_equal(read(p[0], &c, 1), 1);
		close(p[0]);
		kill(pid, SIGTERM);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT)
			aborts++;
		else if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
			others++;
	}
	printf("200 SIGTERMs during malloc(): %d aborts, %d other ends\n", aborts, others);
	assert_int_equal(aborts, 0);
	assert_int_equal(others, 0);
}

/* The command's taker (as watch's): SIGHUP and the first SIGTERM are its
 * own, the second is left to end the run. */
static volatile sig_atomic_t terms;

static bool take(int sig)
{
	if (sig == SIGHUP)
		return true;
	return ++terms == 1;
}

static void mark(const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fclose(fopen(p, "w"));
}

/*
 * A command that takes the signals itself, and a cleanup registered after
 * it (as an archive unpacked or an output opened once watch runs): the
 * registration replaces nothing, so the first SIGTERM and a SIGHUP are the
 * command's (the run goes on, nothing removed), and the second ends the
 * run by the signal, the cleanup run first. Before, the command's own
 * handler and the cleanups' replaced one another.
 */
static void test_taker_then_cleanup(void **state)
{
	char p[256];
	int st;
	pid_t pid;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/perfport-test-util.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(marker, sizeof(marker), "%s/marker", dir);
	fclose(fopen(marker, "w"));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		alarm(60);                          /* a hang guard only */
		assert_null(cleanup_take_signals(take));
		cleanup_on_signal(remove_marker);
		raise(SIGTERM);
		raise(SIGHUP);
		if (terms == 1 && !access(marker, F_OK))
			mark("went-on");
		raise(SIGTERM);
		for (;;)
			pause();
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGTERM);
	snprintf(p, sizeof(p), "%s/went-on", dir);
	assert_int_equal(access(p, F_OK), 0);
	assert_int_not_equal(access(marker, F_OK), 0);
	unlink(p);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cleanups_at_sigterm),
		cmocka_unit_test(test_cleanups_in_order),
		cmocka_unit_test(test_signal_in_malloc),
		cmocka_unit_test(test_taker_then_cleanup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
