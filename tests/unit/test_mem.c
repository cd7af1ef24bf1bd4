/* SPDX-License-Identifier: MIT */
/*
 * test_mem.c - the heap's policy (util/mem.h): with two working threads at
 * most, a thread's blocks come from the huge-page heap that main() grew;
 * with more, from an arena of the thread's own. Each case runs in a child
 * of its own: the policy holds for a whole process, from its first thread.
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

static void *thread_block(void *arg)
{
	(void)arg;
	return malloc(1000);
}

/* The brk heap's bounds, from /proc/self/maps. Return: false if not found. */
static bool heap_bounds(uintptr_t *lo, uintptr_t *hi)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &a, &b) == 2) {
			*lo = a;
			*hi = b;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * In a child: the heap grown, mem_heap_share(@threads), then a thread's
 * first block. Exit: 0 the block lies in the heap, 1 outside it, 77 the
 * heap could not be set up here (no glibc brk heap on THP "madvise", or a
 * sanitizer's allocator).
 */
static int child(unsigned threads)
{
	uintptr_t before = (uintptr_t)sbrk(0), lo, hi, p;
	pthread_t t;
	void *block;
	bool shared;

	mem_heap_hugepages(64);
	shared = mem_heap_share(threads);
	if ((uintptr_t)sbrk(0) <= before)
		return 77;
	if (pthread_create(&t, NULL, thread_block, NULL) || pthread_join(t, &block) || !block)
		return 2;
	if (!heap_bounds(&lo, &hi) || (threads <= MEM_SHARE_MAX_THREADS && !shared))
		return 77;
	p = (uintptr_t)block;
	return p >= lo && p < hi ? 0 : 1;
}

static int run(unsigned threads)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid)
		_exit(child(threads));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_two_threads_share_the_heap(void **state)
{
	int rc = run(2);

	(void)state;
	if (rc == 77)
		skip();
	assert_int_equal(rc, 0);
}

static void test_more_threads_keep_their_arenas(void **state)
{
	int rc = run(MEM_SHARE_MAX_THREADS + 1);

	(void)state;
	if (rc == 77)
		skip();
	assert_int_equal(rc, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_threads_share_the_heap),
		cmocka_unit_test(test_more_threads_keep_their_arenas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
