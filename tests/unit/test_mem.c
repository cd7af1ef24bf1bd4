/* SPDX-License-Identifier: MIT */
/*
 * test_mem.c - the heap's huge pages (util/mem.h): a thread that calls
 * mem_thread_hugepages() has its malloc arena's heap advised for
 * transparent huge pages ("hg" in its mapping's VmFlags); one that does
 * not, not. Each case runs in a child of its own (the heap's policy holds
 * for a whole process).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/mem.h"

/* Is the mapping that holds @addr advised for huge pages? -1: not found. */
static int advised(uintptr_t addr)
{
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "re");
	bool in = false;
	int ret = -1;

	if (!f)
		return -1;
	while (ret < 0 && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		/* a mapping's line: "start-end perms ..."; its fields: "Name: ..." */
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2)
			in = addr >= a && addr < b;
		else if (in && !strncmp(line, "VmFlags:", 8))
			ret = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return ret;
}

static void *thread_block(void *arg)
{
	if (*(bool *)arg)
		mem_thread_hugepages();
	return malloc(1000);
}

/*
 * In a child: the heap set up, then a thread (advising its arena when
 * @advise) allocates. Exit: 0 its block's mapping is advised, 1 not, 77 no
 * huge-page heap here (THP not "madvise", not glibc's malloc: a sanitizer's,
 * or no smaps).
 */
static int child(bool advise)
{
	uintptr_t before = (uintptr_t)sbrk(0);
	pthread_t t;
	void *block;
	int a;

	mem_heap_hugepages(64);
	if ((uintptr_t)sbrk(0) <= before || !mem_thp_on_advice())
		return 77;
	if (pthread_create(&t, NULL, thread_block, &advise) || pthread_join(t, &block) || !block)
		return 2;
	a = advised((uintptr_t)block);
	return a < 0 ? 77 : a ? 0 : 1;
}

static int run(bool advise)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid)
		_exit(child(advise));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_thread_arena_advised(void **state)
{
	int rc = run(true);

	(void)state;
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

static void test_thread_arena_not_advised_unasked(void **state)
{
	int rc = run(false);

	(void)state;
	if (rc == 77)
		skip();
	assert_int_equal(rc, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_arena_advised),
		cmocka_unit_test(test_thread_arena_not_advised_unasked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
