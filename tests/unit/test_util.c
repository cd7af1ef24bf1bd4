/* SPDX-License-Identifier: MIT */
/*
 * test_util.c - the signal cleanups: every registered one runs (newest
 * first) when SIGTERM ends the process, which then ends by the signal;
 * an output's temporary and the archive's directory both go.
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
		raise(SIGTERM);
		_exit(2);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cleanups_at_sigterm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
