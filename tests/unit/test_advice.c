/* SPDX-License-Identifier: MIT */
/*
 * test_advice.c - the warnings every view shows (src/cli/advice.c, compiled
 * in): the -m suggested after lost samples is twice the recording's own
 * (a power of two, 4096 at least, the workload's own -m ignored); broken
 * stacks are the on-CPU share under an unnamed user root, below the
 * --group-by frames, and the kernel's unnamed roots are not counted; JIT
 * code unnamed is on-CPU self time in anonymous memory without a name;
 * the waits in a runtime's park under interpreted or unnamed JIT code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/cli/advice.c"

static void mmap_advice(void **state)
{
	char b[32];

	(void)state;
	advice_mmap(NULL, b, sizeof(b));
	assert_string_equal(b, "-m 4096");
	advice_mmap("perf record -g ./prog", b, sizeof(b));
	assert_string_equal(b, "-m 4096");
	advice_mmap("perf record -m 8192 -g ./prog", b, sizeof(b));
	assert_string_equal(b, "-m 16384");
	advice_mmap("perf record -m8192 -g ./prog", b, sizeof(b));
	assert_string_equal(b, "-m 16384");
	advice_mmap("perf record --mmap-pages=64M -a", b, sizeof(b));
	assert_string_equal(b, "-m 32768");     /* 64 MiB: 16384 pages */
	advice_mmap("perf record --mmap-pages 6000 -a", b, sizeof(b));
	assert_string_equal(b, "-m 8192");
	advice_mmap("perf record -m 2 --call-graph dwarf ./waits", b, sizeof(b));
	assert_string_equal(b, "-m 4096");
	advice_mmap("perf record -g -- python3 -m 9000", b, sizeof(b));
	assert_string_equal(b, "-m 4096");      /* the workload's -m */
}

/* root; [unknown] (user) 60; main 30 > [unknown] (kernel-only root) 10 */
static void broken_stacks(void **state)
{
	struct profile_frame fr[] = {
		{ .function = "[unknown]", .module = "/usr/bin/python3", .flags = FRAME_F_USER | FRAME_F_UNKNOWN },
		{ .function = "main", .module = "/usr/bin/python3", .flags = FRAME_F_USER },
		{ .function = "[unknown]", .flags = FRAME_F_KERNEL | FRAME_F_UNKNOWN },
		{ .function = "prog [12]", .flags = FRAME_F_PROCESS },
	};
	struct profile_node nodes[] = {
		{ UINT32_MAX, UINT32_MAX, 0, 4 }, { 0, 0, 1, 2 }, { 0, 1, 1, 3 }, { 0, 2, 1, 4 },
	};
	struct profile_counts total[4] = { 0 }, self[4] = { 0 };
	struct profile_node g[] = {
		{ UINT32_MAX, UINT32_MAX, 0, 5 }, { 0, 3, 1, 5 }, { 1, 0, 2, 3 }, { 1, 1, 2, 4 },
		{ 1, 2, 2, 5 },
	};
	struct profile_counts gt[5] = { 0 };
	struct profile p = { .nr_frames = 4, .frames = fr, .nr_nodes = 4, .nodes = nodes,
			     .total = total, .self = self };
	struct advice_list a;

	(void)state;
	total[0].ns[CNT_ON_CPU] = 100;
	total[1].ns[CNT_ON_CPU] = self[1].ns[CNT_ON_CPU] = 60;
	total[2].ns[CNT_ON_CPU] = self[2].ns[CNT_ON_CPU] = 30;
	total[3].ns[CNT_ON_CPU] = self[3].ns[CNT_ON_CPU] = 10;
	advice_of_profile(&p, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.kind[0], ADVICE_BROKEN_STACKS);
	assert_non_null(strstr(a.text[0], "60.00% of on-cpu time"));
	assert_non_null(strstr(a.text[0], "--call-graph dwarf"));
	assert_ptr_equal(a.ptr[0], a.text[0]);

	/* under a --group-by process frame: the same (the arrays outlive the
	 * block: the profile keeps pointing at them below) */
	{
		gt[0].ns[CNT_ON_CPU] = gt[1].ns[CNT_ON_CPU] = 100;
		gt[2].ns[CNT_ON_CPU] = 60;
		gt[3].ns[CNT_ON_CPU] = 30;
		gt[4].ns[CNT_ON_CPU] = 10;
		p.nodes = g;
		p.nr_nodes = 5;
		p.total = gt;
		p.self = gt;
		advice_of_profile(&p, &a);
		assert_int_equal(a.n, 1);
		assert_non_null(strstr(a.text[0], "60.00% of on-cpu time"));
	}
	/* recorded with dwarf: a larger stack copy, not dwarf again */
	p.meta.cmdline = "perf record --call-graph dwarf ./prog";
	advice_of_profile(&p, &a);
	assert_non_null(strstr(a.text[0], "dwarf,65528"));
	/* whole stacks: nothing to say */
	fr[0].flags = FRAME_F_USER;
	advice_of_profile(&p, &a);
	assert_int_equal(a.n, 0);
}

/* on-CPU self time in anonymous memory without a name: a JIT's code */
static void jit_unnamed(void **state)
{
	struct profile_frame fr[] = {
		{ .function = "main", .module = "/usr/bin/java", .flags = FRAME_F_USER },
		{ .function = "[unknown]", .module = "//anon", .flags = FRAME_F_USER | FRAME_F_UNKNOWN },
		{ .function = "Foo.bar", .module = "[jit]", .flags = FRAME_F_USER | FRAME_F_JIT },
	};
	struct profile_node nodes[] = {
		{ UINT32_MAX, UINT32_MAX, 0, 4 }, { 0, 0, 1, 4 }, { 1, 1, 2, 3 }, { 1, 2, 2, 4 },
	};
	struct profile_counts total[4] = { 0 }, self[4] = { 0 };
	struct profile p = { .nr_frames = 3, .frames = fr, .nr_nodes = 4, .nodes = nodes,
			     .total = total, .self = self };
	struct advice_list a;

	(void)state;
	total[0].ns[CNT_ON_CPU] = total[1].ns[CNT_ON_CPU] = 100;
	total[2].ns[CNT_ON_CPU] = self[2].ns[CNT_ON_CPU] = 25;
	total[3].ns[CNT_ON_CPU] = self[3].ns[CNT_ON_CPU] = 75;
	advice_of_profile(&p, &a);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.kind[0], ADVICE_JIT);
	assert_non_null(strstr(a.text[0], "25.00% of on-cpu time"));
	/* named: nothing to say */
	fr[1].flags = FRAME_F_USER | FRAME_F_JIT;
	fr[1].function = "Foo.baz";
	advice_of_profile(&p, &a);
	assert_int_equal(a.n, 0);
}

/*
 * The waits in HotSpot's Unsafe_Park by what the nearest JIT code above the
 * park is: the interpreter (counted, by state, the preempted left out), a
 * compiled method (not), a JIT's code without a map (counted apart); a
 * wait under the interpreter in no park is none of them. The tree:
 * call_helper > Interpreter > Unsafe_Park > __schedule (sleep 1000 in 2,
 * preempted 50); Interpreter > __schedule (sleep 400); ReentrantLock's
 * lock() > Unsafe_Park > __schedule (lock 700); [unknown] (anonymous) >
 * Unsafe_Park > __schedule (sleep 300).
 */
static void parks_interpreted(void **state)
{
	struct profile_frame fr[] = {
		{ .function = "JavaCalls::call_helper", .module = "/usr/lib/jvm/libjvm.so" },
		{ .function = "Interpreter", .module = "//anon", .flags = FRAME_F_USER | FRAME_F_JIT },
		{ .function = "Unsafe_Park", .module = "/usr/lib/jvm/libjvm.so" },
		{ .function = "__schedule", .module = "[kernel.kallsyms]", .flags = FRAME_F_KERNEL },
		{ .function = "void java.util.concurrent.locks.ReentrantLock$Sync.lock()",
		  .module = "[jit]", .flags = FRAME_F_USER | FRAME_F_JIT },
		{ .function = "[unknown]", .module = "//anon", .flags = FRAME_F_USER | FRAME_F_UNKNOWN },
	};
	struct profile_node nodes[] = {
		{ UINT32_MAX, UINT32_MAX, 0, 12 }, { 0, 0, 1, 12 },
		{ 1, 1, 2, 6 }, { 2, 2, 3, 5 }, { 3, 3, 4, 5 }, { 2, 3, 3, 6 },
		{ 1, 4, 2, 9 }, { 6, 2, 3, 9 }, { 7, 3, 4, 9 },
		{ 1, 5, 2, 12 }, { 9, 2, 3, 12 }, { 10, 3, 4, 12 },
	};
	struct profile_counts total[12] = { 0 }, self[12] = { 0 };
	struct profile p = { .nr_frames = 6, .frames = fr, .nr_nodes = 12, .nodes = nodes,
			     .total = total, .self = self };
	struct advice_parks k;
	size_t np;

	(void)state;
	/* HotSpot's park, as src/profile/waits/50-hotspot.rules says it */
	p.meta.parks = profile_parks(&np);
	p.meta.nr_parks = np;
	assert_true(np >= 1);
	self[4].count[CNT_SLEEP] = 2;
	self[4].ns[CNT_SLEEP] = 1000;
	self[4].count[CNT_PREEMPTED] = 1;
	self[4].ns[CNT_PREEMPTED] = 50;
	self[5].count[CNT_SLEEP] = 1;
	self[5].ns[CNT_SLEEP] = 400;
	self[8].count[CNT_LOCK] = 1;
	self[8].ns[CNT_LOCK] = 700;
	self[11].count[CNT_SLEEP] = 1;
	self[11].ns[CNT_SLEEP] = 300;
	assert_true(advice_parks(&p, &k));
	assert_string_equal(k.site->runtime, "HotSpot");
	assert_string_equal(k.site->park, "Unsafe_Park");
	assert_non_null(strstr(k.site->compile, "-Xcomp"));
	assert_non_null(strstr(k.site->map, "DumpPerfMapAtExit"));
	assert_int_equal(k.count[CNT_SLEEP], 2);
	assert_int_equal(k.ns[CNT_SLEEP], 1000);
	assert_int_equal(k.ns[CNT_PREEMPTED], 0);
	assert_int_equal(k.ns[CNT_LOCK], 0);
	assert_int_equal(k.nomap_count, 1);
	assert_int_equal(k.nomap_ns, 300);
	/* the interpreter's frame in a library is no JIT's code */
	assert_ptr_equal(advice_interpreted("Interpreter", "//anon", FRAME_F_USER, p.meta.parks, np),
			 k.site);
	assert_null(advice_interpreted("Interpreter", "/usr/lib/libx.so", FRAME_F_USER,
				       p.meta.parks, np));
	assert_null(advice_interpreted("Foo.bar", "//anon", FRAME_F_USER | FRAME_F_JIT,
					p.meta.parks, np));
	/* a profile without parks (rules that name none) counts none */
	p.meta.nr_parks = 0;
	assert_false(advice_parks(&p, &k));
	p.meta.nr_parks = np;
	/* the first park's callers compiled: only the unmapped one is left */
	fr[1].function = "void java.util.concurrent.locks.LockSupport.park()";
	assert_true(advice_parks(&p, &k));
	assert_int_equal(k.ns[CNT_SLEEP], 0);
	assert_int_equal(k.nomap_ns, 300);
	fr[5].function = "void java.util.concurrent.CountDownLatch.await()";
	fr[5].flags = FRAME_F_USER | FRAME_F_JIT;
	assert_false(advice_parks(&p, &k));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mmap_advice),
		cmocka_unit_test(broken_stacks),
		cmocka_unit_test(jit_unnamed),
		cmocka_unit_test(parks_interpreted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
