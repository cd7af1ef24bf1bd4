/* SPDX-License-Identifier: MIT */
/*
 * test_profile.c - the call tree (interning, finishing into the flat view,
 * walking) and the off-CPU state rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pdw.h"
#include "perf/perf.h"
#include "profile/profile.h"
#include "profile/rules.h"
#include "profile/syscall.h"
#include "profile/tree.h"
#include "util/error.h"

static uint32_t path(struct tree *t, const char *const *fns, size_t n)
{
	uint32_t node = TREE_ROOT;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		const char *f = tree_intern(t, fns[i], &err);
		const char *m = tree_intern(t, "/bin/x", &err);

		node = tree_child(t, node, tree_frame(t, f, m, NULL, 0, FRAME_F_USER));
	}
	assert_int_equal(err, 0);
	return node;
}

/* Children come out sorted by name, subtrees with nothing counted are
 * dropped, totals add up, and `end` closes each subtree. */
static void test_tree_finish(void **state)
{
	static const char *const a[] = { "main", "zeta" };
	static const char *const b[] = { "main", "alpha", "leaf" };
	static const char *const c[] = { "main", "empty" };
	struct profile_frame *frames;
	struct profile_node *nodes;
	struct profile_counts *self, *total;
	struct profile_slice *slices;
	size_t nf, nn, ns;
	struct tree t;

	(void)state;
	assert_int_equal(tree_init(&t), 0);
	tree_add(&t, path(&t, a, 2), CNT_ON_CPU, 3, 300);
	tree_add(&t, path(&t, b, 3), CNT_LOCK, 1, 1000);
	tree_add(&t, path(&t, b, 3), CNT_LOCK, 1, 500);
	/* by time: zeta in slices 4 and 1, leaf in slice 1 twice (summed) */
	assert_int_equal(tree_add_slice(&t, 4, path(&t, a, 2), CNT_ON_CPU, 2, 200), 0);
	assert_int_equal(tree_add_slice(&t, 1, path(&t, a, 2), CNT_ON_CPU, 1, 100), 0);
	assert_int_equal(tree_add_slice(&t, 1, path(&t, b, 3), CNT_LOCK, 1, 1000), 0);
	assert_int_equal(tree_add_slice(&t, 1, path(&t, b, 3), CNT_LOCK, 1, 500), 0);
	assert_int_equal(tree_add_slice(&t, 2, path(&t, c, 2), CNT_LOCK, 0, 0), 0);
	/* in time, out of order: the lock interval (tid 9) at 50, zeta's at 70
	 * and 20 (tid 7) */
	assert_int_equal(tree_add_timed(&t, path(&t, b, 3), &(struct profile_timed){
		.time = 50, .ns = 1000, .tid = 9, .counter = CNT_LOCK, .count = 1 }), 0);
	assert_int_equal(tree_add_timed(&t, path(&t, a, 2), &(struct profile_timed){
		.time = 70, .ns = 100, .tid = 7, .counter = CNT_ON_CPU, .count = 1 }), 0);
	assert_int_equal(tree_add_timed(&t, path(&t, a, 2), &(struct profile_timed){
		.time = 20, .ns = 200, .tid = 7, .counter = CNT_ON_CPU, .count = 1 }), 0);
	path(&t, c, 2); /* nothing counted */
	assert_int_equal(tree_finish(&t, &frames, &nf, &nodes, &self, &total, &nn, &slices, &ns), 0);
	assert_int_equal(nn, 5); /* root, main, alpha, leaf, zeta */
	assert_string_equal(frames[nodes[1].frame].function, "main");
	assert_string_equal(frames[nodes[2].frame].function, "alpha");
	assert_string_equal(frames[nodes[3].frame].function, "leaf");
	assert_string_equal(frames[nodes[4].frame].function, "zeta");
	assert_int_equal(nodes[3].parent, 2);
	assert_int_equal(nodes[4].parent, 1);
	assert_int_equal(nodes[0].end, 5);
	assert_int_equal(nodes[2].end, 4);
	assert_int_equal(nodes[3].depth, 3);
	assert_int_equal(total[0].ns[CNT_LOCK], 1500);
	assert_int_equal(total[0].count[CNT_LOCK], 2);
	assert_int_equal(total[1].ns[CNT_ON_CPU], 300);
	assert_int_equal(self[3].ns[CNT_LOCK], 1500);
	assert_int_equal(self[1].ns[CNT_LOCK], 0);
	/* frames renumbered in order of first use: main, alpha, leaf, zeta */
	assert_int_equal(nodes[1].frame, 0);
	assert_int_equal(nodes[4].frame, 3);
	/* slices: renumbered nodes (leaf 3, zeta 4), sorted by slice then node;
	 * the pruned node's slice is gone */
	assert_int_equal(ns, 3);
	assert_int_equal(slices[0].slice, 1);
	assert_int_equal(slices[0].node, 3);
	assert_int_equal(slices[0].count, 2);
	assert_int_equal(slices[0].ns, 1500);
	assert_int_equal(slices[1].slice, 1);
	assert_int_equal(slices[1].node, 4);
	assert_int_equal(slices[1].ns, 100);
	assert_int_equal(slices[2].slice, 4);
	assert_int_equal(slices[2].node, 4);
	assert_int_equal(slices[2].count, 2);
	/* timed records: renumbered (leaf 3, zeta 4) and sorted by time */
	assert_int_equal(t.nr_timed, 3);
	assert_int_equal(t.timed[0].time, 20);
	assert_int_equal(t.timed[0].node, 4);
	assert_int_equal(t.timed[0].ns, 200);
	assert_int_equal(t.timed[1].time, 50);
	assert_int_equal(t.timed[1].node, 3);
	assert_int_equal(t.timed[1].tid, 9);
	assert_int_equal(t.timed[1].counter, CNT_LOCK);
	assert_int_equal(t.timed[2].time, 70);
	assert_int_equal(t.timed[2].node, 4);
	free(slices);
	free(frames);
	free(nodes);
	free(self);
	free(total);
	tree_release(&t);
}

/* Equal frames are interned once; nodes are keyed by (parent, frame). */
/* by_line (profile_opts.frames_by_line): a function is one frame per
 * file:line, the tree split by them; without it the first line stays. */
static void test_tree_by_line(void **state)
{
	(void)state;
	for (int by = 0; by < 2; by++) {
		struct tree t;
		int err = 0;
		const char *f, *m, *x, *y;
		uint32_t a, b, c;

		assert_int_equal(tree_init(&t), 0);
		t.by_line = by;
		f = tree_intern(&t, "work", &err);
		m = tree_intern(&t, "/bin/x", &err);
		x = tree_intern(&t, "x.c", &err);
		y = tree_intern(&t, "y.h", &err);
		assert_int_equal(err, 0);
		a = tree_frame(&t, f, m, x, 11, FRAME_F_USER);
		b = tree_frame(&t, f, m, x, 12, FRAME_F_USER);
		c = tree_frame(&t, f, m, y, 11, FRAME_F_USER);
		assert_int_equal(tree_frame(&t, f, m, x, 12, FRAME_F_USER), b);
		if (by) {
			assert_true(a != b && a != c && b != c);
			assert_int_equal(t.frames[b].line, 12);
			assert_true(tree_child(&t, TREE_ROOT, a) != tree_child(&t, TREE_ROOT, b));
		} else {
			assert_true(a == b && a == c);
			assert_int_equal(t.frames[a].line, 11);
		}
		tree_release(&t);
	}
}

static void test_tree_intern(void **state)
{
	static const char *const a[] = { "main", "f" };
	struct tree t;

	(void)state;
	assert_int_equal(tree_init(&t), 0);
	assert_int_equal(path(&t, a, 2), path(&t, a, 2));
	assert_int_equal(t.nr_frames, 2);
	assert_int_equal(t.nr_nodes, 3);
	for (int i = 0; i < 5000; i++) { /* growth of both tables */
		char name[32];
		const char *n[] = { "main", name };

		snprintf(name, sizeof(name), "f%d", i);
		path(&t, n, 2);
	}
	assert_int_equal(t.nr_frames, 5002);
	assert_int_equal(path(&t, a, 2), 2);
	tree_release(&t);
}

/* The counter of rule set @set on @side for a stack of the functions @fns
 * (NULL-terminated) in state @st, -1 when none of its rules matches. */
static int verdict(const struct rules *rs, enum rule_set set, enum rule_side side, char st,
		   const char *const *fns)
{
	uint32_t m[64], tmp[64];
	size_t n = 0;
	long r;

	for (; *fns; fns++) {
		size_t k = rules_frame_matches(rs, *fns, tmp, 64);

		for (size_t i = 0; i < k && n < 64; i++)
			m[n++] = tmp[i];
	}
	/* ascending, as the accounting merges them */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && m[j - 1] > m[j]; j--) {
			uint32_t t = m[j];

			m[j] = m[j - 1];
			m[j - 1] = t;
		}
	r = rules_first(rs, set, side, st, m, n);
	/* a "defer" rule: -2, the set has no word (the accounting's -1) */
	return r < 0 ? -1 : rs->r[r].defer ? -2 : rs->r[r].counter;
}

#define STACK(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The built-in rules: the kernel's by state, then stack patterns, first
 * match wins; the programs' by their wait functions; wakers by theirs. */
static void test_rules_builtin(void **state)
{
	struct rules rs;
	const char *const *none = STACK("main");

	(void)state;
	assert_int_equal(rules_setup(&rs, NULL), 0);
	/* kernel: R is preempted whatever the stack; D is io; S untimed sleep */
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'R', STACK("__lll_lock_wait")),
			 CNT_PREEMPTED);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'S', STACK("hrtimer_nanosleep")),
			 CNT_TIMED_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'D', none), CNT_IO);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'D', STACK("__mutex_lock.constprop.0")),
			 CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'S', none), CNT_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'I', none), CNT_SLEEP);
	/* programs: glibc's lock paths (with its prefixes), CPython's GIL,
	 * PostgreSQL's heavyweight locks over its client reads */
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("__GI___lll_lock_wait")),
			 CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("__futex_abstimed_wait_common", "___pthread_cond_timedwait64",
				       "take_gil")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("__futex_abstimed_wait_common", "___pthread_cond_timedwait64")),
			 CNT_TIMED_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("epoll_wait", "WaitEventSetWait", "WaitLatch", "ProcSleep",
				       "LockAcquireExtended")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("epoll_wait", "WaitEventSetWait", "secure_read")), CNT_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("ObjectMonitor::EnterI(JavaThread*)")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("std::sys::sync::mutex::futex::Mutex::lock_contended")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'R', STACK("take_gil")), -1);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', none), -1);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("pthread_rwlock_unlock")),
			 -1);
	/* wakers: a timer's, a release's, an I/O's completion */
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'S', STACK("hrtimer_wakeup")),
			 CNT_TIMED_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'S', STACK("process_timeout")),
			 CNT_TIMED_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'D', STACK("blk_mq_end_request")),
			 CNT_IO);
	/* an interruptible wait's completion: the completion, not a timer, ended it */
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'S', STACK("io_req_complete_post")),
			 CNT_IO);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'S',
				 STACK("task_work_add", "__io_req_task_work_add", "io_poll_wake",
				       "anon_pipe_write")),
			 CNT_IO);
	/* another task's event: sleep (a program's release in its stack says
	 * more: the accounting asks the programs' rules then) */
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'S', STACK("futex_wake", "write")),
			 CNT_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'S', STACK("pipe_write")),
			 CNT_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'D', STACK("futex_wake")), -1);
	/* a vfork's parent waits for its child's exec or exit, in D */
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_WAKER, 'D', STACK("mm_release")),
			 CNT_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'D',
				 STACK("schedule", "wait_for_completion_state", "kernel_clone")),
			 CNT_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_KERNEL, RULE_BLOCKED, 'D',
				 STACK("schedule", "rwsem_down_write_slowpath", "kernel_clone")),
			 CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_WAKER, 'S', STACK("__lll_lock_wake")),
			 CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_WAKER, 'S', STACK("drop_gil")), CNT_LOCK);
	/* no user rules */
	assert_int_equal(verdict(&rs, RULE_SET_USER, RULE_BLOCKED, 'S', STACK("take_gil")), -1);
	assert_true(rules_is_interrupt(&rs, "asm_sysvec_apic_timer_interrupt"));
	assert_true(rules_is_interrupt(&rs, "handle_softirqs"));
	assert_false(rules_is_interrupt(&rs, "do_syscall_64"));
	/* each runtime is named, with the modules that tell it */
	{
		bool pg = false, py = false;

		for (size_t i = 0; i < rs.nrt; i++) {
			pg = pg || (!strcmp(rs.rt[i].name, "PostgreSQL") && rs.rt[i].nr_modules);
			py = py || (!strcmp(rs.rt[i].name, "CPython") && rs.rt[i].advice);
		}
		assert_true(pg && py);
	}
	rules_free(&rs);
}

static void test_rules_parse(void **state)
{
	struct rules rs;

	(void)state;
	memset(&rs, 0, sizeof(rs));
	assert_int_equal(rules_parse(&rs, "# c\n\nS,D  foo*  lock # why\n*  *  io\n", "t",
				     RULE_SET_USER), 0);
	assert_int_equal(rs.n, 2);
	rules_index(&rs);
	assert_int_equal(verdict(&rs, RULE_SET_USER, RULE_BLOCKED, 'D', STACK("foobar")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_USER, RULE_BLOCKED, 'R', STACK("foobar")), CNT_IO);
	assert_int_equal(verdict(&rs, RULE_SET_USER, RULE_WAKER, 'S', STACK("foobar")), -1);
	rules_free(&rs);
	/* directives, woken-by, each kind of pattern */
	assert_int_equal(rules_parse(&rs, "runtime Db db* libdb.so\nadvice install db-dbg  # x\n"
				     "S  exact  lock\nS  *suffix  io\nS  *infix*  timed-sleep\n"
				     "S  a?c  preempted\nwoken-by S  waker*  lock\n"
				     "interrupt irq_*\n", "t", RULE_SET_PROGRAM), 0);
	rules_index(&rs);
	assert_int_equal(rs.nrt, 1);
	assert_string_equal(rs.rt[0].name, "Db");
	assert_int_equal(rs.rt[0].nr_modules, 2);
	assert_string_equal(rs.rt[0].advice, "install db-dbg");
	assert_int_equal(rs.r[0].runtime, 1);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("exact")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("exactly")), -1);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("a_suffix")), CNT_IO);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("suffix_not")), -1);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("xinfixy")),
			 CNT_TIMED_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("abc")), CNT_PREEMPTED);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("waker1")), -1);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_WAKER, 'S', STACK("waker1")), CNT_LOCK);
	assert_true(rules_is_interrupt(&rs, "irq_exit"));
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S foo on-cpu\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S foo\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S1 foo lock\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "# only a comment\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S foo lock extra\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "woken-by foo lock\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	/* FUNCTION&ALSO: both on the stack, in any frames; "defer" first */
	assert_int_equal(rules_parse(&rs, "S  py::wait:*  defer\nS  acq*&py::*  lock\n"
				     "S  acq*  sleep\n", "t", RULE_SET_PROGRAM), 0);
	rules_index(&rs);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("sem_wait", "acquire", "py::worker:x.py")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("py::worker:x.py", "acquire")), CNT_LOCK);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("acquire")),
			 CNT_SLEEP);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S',
				 STACK("acquire", "py::wait:threading.py")), -2);
	/* ALSO alone decides nothing */
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'S', STACK("py::x:y")), -1);
	assert_int_equal(verdict(&rs, RULE_SET_PROGRAM, RULE_BLOCKED, 'D',
				 STACK("acquire", "py::worker:x.py")), -1);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S &b lock\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S a& lock\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S a&b&c lock\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S *&b lock\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "S a&* lock\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "advice no runtime\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
	assert_int_equal(rules_parse(&rs, "runtime\n", "t", RULE_SET_USER), PP_ERULES);
	rules_free(&rs);
}

static void test_counter_names(void **state)
{
	(void)state;
	for (int c = 0; c < CNT_COUNT; c++)
		assert_int_equal(counter_parse(counter_name(c)), c);
	assert_int_equal(counter_parse("oncpu"), -1);
}


/*
 * A perf.data file of one event, written by hand: the file header, the
 * event's attr (no ids), then the caller's records from the returned
 * offset; one_event_data() says where they end.
 */
static size_t one_event_head(struct pdw *w, uint32_t type, uint64_t config, uint64_t period,
			     uint64_t sample_type, uint64_t flags)
{
	pdw_bytes(w, "PERFILE2", 8);
	pdw_u64(w, 104);                /* header size */
	pdw_u64(w, 128 + 16);           /* attr entry size */
	for (int i = 0; i < 10; i++)    /* attrs, data, event types, features */
		pdw_u64(w, 0);
	pdw_attr(w, type, config, period, sample_type, flags, 0, 0, 0, 0, 0);
	pdw_u64(w, 0);                  /* no ids: one event */
	pdw_u64(w, 0);
	return w->n;
}

static void one_event_data(struct pdw *w, size_t data_off, size_t data_end)
{
	pdw_patch_u64(w, 24, 104);      /* the attrs */
	pdw_patch_u64(w, 32, 128 + 16);
	pdw_patch_u64(w, 40, data_off); /* the data */
	pdw_patch_u64(w, 48, data_end - data_off);
}

/*
 * Many stacks, each sampled twice, the second time after it was made
 * while reading (pend_catch_up(): 3,000 new stacks hold 1,024 back): every
 * sample lands in the tree, and -j 3 (with --call-graph dwarf samples,
 * delivered on the pool's own thread) builds the tree -j 1 builds.
 */
#define MANY_STACKS 3000

static struct pdw many_stacks_file(bool dwarf)
{
	const uint64_t regs = (1u << 6) | (1u << 7) | (1u << 8); /* x86 bp, sp, ip */
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
		      PERF_SAMPLE_CALLCHAIN;
	struct pdw w = { 0 };
	size_t data_off, at;

	if (dwarf)
		st |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	pdw_bytes(&w, "PERFILE2", 8);
	pdw_u64(&w, 104);
	pdw_u64(&w, 128 + 16);
	for (int i = 0; i < 10; i++)
		pdw_u64(&w, 0);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000000, st, 0, 0, 0,
		 dwarf ? regs : 0, dwarf ? 64 : 0, 0);
	pdw_u64(&w, 0);
	pdw_u64(&w, 0);
	data_off = w.n;
	for (uint64_t pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < MANY_STACKS; i++) {
			uint64_t ip = 0x401000 + 16 * i;

			at = pdw_begin(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
			pdw_u64(&w, ip);
			pdw_u32(&w, 100);
			pdw_u32(&w, 100);
			pdw_u64(&w, 1000 + pass * 1000000 + i);
			pdw_u64(&w, 1000000);
			pdw_u64(&w, 3);
			pdw_u64(&w, PERF_CONTEXT_USER);
			pdw_u64(&w, ip);
			pdw_u64(&w, 0x400800 + 8 * (i % 7));
			if (dwarf) {
				pdw_u64(&w, 2);         /* abi 64 */
				pdw_u64(&w, 0x7ffd0000); /* bp, sp, ip */
				pdw_u64(&w, 0x7ffd0000);
				pdw_u64(&w, ip);
				pdw_u64(&w, 64);         /* the stack copy */
				for (int k = 0; k < 8; k++)
					pdw_u64(&w, 0);
				pdw_u64(&w, 64);
			}
			pdw_end(&w, at);
		}
	}
	one_event_data(&w, data_off, w.n);
	return w;
}

static void test_stacks_made_while_reading(void **state)
{
	(void)state;
	for (int dwarf = 0; dwarf < 2; dwarf++) {
		struct pdw w = many_stacks_file(dwarf);
		struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent",
					  .has_start_time = true, .start_time_ns = 1700000000000000000ULL };
		struct profile *one = NULL, *three = NULL;

		assert_int_equal(profile_build_mem(w.b, w.n, "many", &o, &one), 0);
		assert_int_equal(one->meta.stacks_unique, MANY_STACKS);
		assert_int_equal(one->total[0].count[CNT_ON_CPU], 2 * MANY_STACKS);
		o.jobs = 3;
		assert_int_equal(profile_build_mem(w.b, w.n, "many", &o, &three), 0);
		assert_int_equal(three->total[0].count[CNT_ON_CPU], 2 * MANY_STACKS);
		assert_int_equal(three->nr_nodes, one->nr_nodes);
		assert_int_equal(three->nr_frames, one->nr_frames);
		for (size_t i = 0; i < one->nr_nodes; i++) {
			assert_int_equal(three->nodes[i].frame, one->nodes[i].frame);
			assert_int_equal(three->nodes[i].parent, one->nodes[i].parent);
			assert_memory_equal(&three->self[i], &one->self[i], sizeof(one->self[i]));
		}
		profile_free(one);
		profile_free(three);
		free(w.b);
	}
}

/*
 * One stack sampled as idle (tid 0) and on CPU (another task of pid 0,
 * as a damaged or crafted file may say), interleaved: a stack's entry
 * sums one counter at a time, and each change of counter counts what it
 * summed on. Both counters end at the stack's one node, whole.
 */
static void test_stack_two_counters(void **state)
{
	const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	static const uint32_t tids[] = { 7, 7, 7, 0, 0, 7, 0, 7, 7, 0 };
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent",
				  .group_by = GROUP_NONE, .has_start_time = true,
				  .start_time_ns = 1700000000000000000ULL };
	struct profile *p = NULL;
	struct pdw w = { 0 };
	size_t data_off, at, leaves = 0;

	(void)state;
	data_off = one_event_head(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000000, st, 0);
	for (size_t i = 0; i < sizeof(tids) / sizeof(tids[0]); i++) {
		at = pdw_begin(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
		pdw_u64(&w, 0xffffffff81001000ULL);
		pdw_u32(&w, 0);
		pdw_u32(&w, tids[i]);
		pdw_u64(&w, 1000 + i * 1000);
		pdw_u64(&w, 1000000 + i);  /* each sample's weight its own */
		pdw_u64(&w, 3);
		pdw_u64(&w, PERF_CONTEXT_KERNEL);
		pdw_u64(&w, 0xffffffff81001000ULL);
		pdw_u64(&w, 0xffffffff81000800ULL);
		pdw_end(&w, at);
	}
	one_event_data(&w, data_off, w.n);
	assert_int_equal(profile_build_mem(w.b, w.n, "two", &o, &p), 0);
	assert_int_equal(p->meta.stacks_unique, 1);
	assert_int_equal(p->total[0].count[CNT_ON_CPU], 6);
	assert_int_equal(p->total[0].count[CNT_IDLE], 4);
	/* weights: the on-CPU samples' are 0, 1, 2, 5, 7, 8 above 1e6 */
	assert_int_equal(p->total[0].ns[CNT_ON_CPU], 6 * 1000000 + 23);
	assert_int_equal(p->total[0].ns[CNT_IDLE], 4 * 1000000 + 22);
	for (size_t i = 0; i < p->nr_nodes; i++) {
		if (!p->self[i].count[CNT_ON_CPU] && !p->self[i].count[CNT_IDLE])
			continue;
		leaves++;
		assert_int_equal(p->self[i].count[CNT_ON_CPU], 6);
		assert_int_equal(p->self[i].count[CNT_IDLE], 4);
	}
	assert_int_equal(leaves, 1);
	profile_free(p);
	free(w.b);
}

/*
 * perf record --off-cpu writes "offcpu-time" samples (a BPF output event)
 * whose period is the time off CPU, in ns, with the stack at the switch-out.
 * This machine's perf cannot record them (no BPF skeleton), so a file is
 * written here: each sample is charged whole, as sleep with the built-in
 * rules, to its thread's blocked time.
 */
static struct pdw offcpu_file(void)
{
	const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	static const struct { uint32_t tid; uint64_t time, period, ip; } smp[] = {
		{ 101, 1000000, 5000000, 0x401000 },
		{ 101, 9000000, 7000000, 0x401000 },
		{ 102, 9500000, 3000000, 0x402000 },
	};
	struct pdw w = { 0 };
	size_t data_off, data_end, feat_off, fs, at;

	data_off = one_event_head(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 1, st, 0);
	for (size_t i = 0; i < sizeof(smp) / sizeof(smp[0]); i++) {
		at = pdw_begin(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		pdw_u64(&w, smp[i].ip);
		pdw_u32(&w, 100);
		pdw_u32(&w, smp[i].tid);
		pdw_u64(&w, smp[i].time);
		pdw_u64(&w, smp[i].period);
		pdw_u64(&w, 3);
		pdw_u64(&w, PERF_CONTEXT_USER);
		pdw_u64(&w, smp[i].ip);
		pdw_u64(&w, 0x400800);
		pdw_end(&w, at);
	}
	data_end = w.n;
	feat_off = w.n;                 /* EVENT_DESC (12): the event's name */
	pdw_u64(&w, 0);
	pdw_u64(&w, 0);
	fs = w.n;
	pdw_u32(&w, 1);
	pdw_u32(&w, 128);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 1, st, 0, 0, 0, 0, 0, 0);
	pdw_u32(&w, 0);
	pdw_str(&w, "offcpu-time");
	pdw_patch_u64(&w, feat_off, fs);
	pdw_patch_u64(&w, feat_off + 8, w.n - fs);
	one_event_data(&w, data_off, data_end);
	pdw_patch_u64(&w, 72, 1ULL << 12);
	return w;
}

static void test_offcpu_time(void **state)
{
	struct pdw w = offcpu_file();
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent",
				  .has_start_time = true, .start_time_ns = 1700000000000000000ULL };
	struct profile *p = NULL;
	uint64_t t101 = 0, t102 = 0;

	(void)state;
	assert_int_equal(profile_build_mem(w.b, w.n, "offcpu", &o, &p), 0);
	assert_non_null(p);
	assert_int_equal(p->total[0].ns[CNT_SLEEP], 15000000);
	assert_int_equal(p->total[0].count[CNT_SLEEP], 3);
	assert_int_equal(p->total[0].ns[CNT_ON_CPU], 0);
	for (size_t i = 0; i < p->nr_threads; i++) {
		if (p->threads[i].tid == 101)
			t101 = p->threads[i].blocked_ns;
		if (p->threads[i].tid == 102)
			t102 = p->threads[i].c.ns[CNT_SLEEP];
	}
	assert_int_equal(t101, 12000000);
	assert_int_equal(t102, 3000000);
	assert_int_equal(p->meta.nr_sources, 1);
	assert_int_equal(p->meta.sources[0].role, ROLE_OFFCPU_TIME);
	profile_free(p);
	/* --offcpu-states=simple changes nothing here: it is all sleep */
	o.offcpu_simple = true;
	assert_int_equal(profile_build_mem(w.b, w.n, "offcpu", &o, &p), 0);
	assert_int_equal(p->total[0].ns[CNT_SLEEP], 15000000);
	profile_free(p);
	free(w.b);
}

/*
 * A thread whose switch-in was not recorded (its CPU's events were enabled
 * after it began to run there): its run starts at its first on-CPU sample,
 * not at its first switch-out. Fork at 1000, samples at 1500 and 20000,
 * out at 30000, in at 40000, exit at 50000.
 */
static void test_sampled_run(void **state)
{
	const uint64_t st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	static const struct { uint32_t type; uint16_t misc; uint64_t time; } rec[] = {
		{ PERF_RECORD_FORK, 0, 1000 },
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 1500 },
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 20000 },
		{ PERF_RECORD_SWITCH, PERF_MISC_SWITCH_OUT, 30000 },
		{ PERF_RECORD_SWITCH, 0, 40000 },
		{ PERF_RECORD_EXIT, 0, 50000 },
	};
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	const struct profile_thread *t = NULL;
	struct profile *p = NULL;
	struct pdw w = { 0 };
	size_t data_off, at;

	(void)state;
	data_off = one_event_head(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100000, st,
				  PERF_ATTR_FLAG_SAMPLE_ID_ALL);
	for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		at = pdw_begin(&w, rec[i].type, rec[i].misc);
		if (rec[i].type == PERF_RECORD_FORK || rec[i].type == PERF_RECORD_EXIT) {
			pdw_u32(&w, 100);       /* pid, ppid, tid, ptid, time */
			pdw_u32(&w, 100);
			pdw_u32(&w, 101);
			pdw_u32(&w, 100);
			pdw_u64(&w, rec[i].time);
		}
		pdw_u32(&w, 100);               /* sample (or sample_id): pid, tid, time */
		pdw_u32(&w, 101);
		pdw_u64(&w, rec[i].time);
		pdw_end(&w, at);
	}
	one_event_data(&w, data_off, w.n);
	assert_int_equal(profile_build_mem(w.b, w.n, "sampled", &o, &p), 0);
	assert_non_null(p);
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 101)
			t = &p->threads[i];
	assert_non_null(t);
	assert_int_equal(t->run_ns, (30000 - 1500) + (50000 - 40000));
	assert_int_equal(t->blocked_ns + t->delay_ns, 10000);
	profile_free(p);
	free(w.b);
}

/*
 * A thread's first run starts at its first switch-in, not at a switch-out
 * (its fork is none), and a task's at its exec (perf record enables the
 * workload's events there): a file with exec, fork, switches and exits,
 * written here so the times are exact, gives each thread all its runs.
 */
static struct pdw switch_file(void)
{
	const uint64_t st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	static const struct { uint32_t type; uint16_t misc; uint32_t tid; uint64_t time; } rec[] = {
		{ PERF_RECORD_COMM, PERF_MISC_COMM_EXEC, 100, 500 },
		{ PERF_RECORD_FORK, 0, 101, 1000 },
		{ PERF_RECORD_SWITCH, 0, 101, 2000 },                      /* in */
		{ PERF_RECORD_SWITCH, PERF_MISC_SWITCH_OUT, 100, 3500 },    /* out */
		{ PERF_RECORD_SWITCH, PERF_MISC_SWITCH_OUT, 101, 52000 },   /* out */
		{ PERF_RECORD_SWITCH, 0, 101, 60000 },                     /* in */
		{ PERF_RECORD_EXIT, 0, 101, 100000 },
		/* its last switch-out, after its exit (a system-wide
		 * recording's): no wait */
		{ PERF_RECORD_SWITCH, PERF_MISC_SWITCH_OUT, 101, 100200 },
		{ PERF_RECORD_SWITCH, 0, 100, 100500 },                    /* in */
		{ PERF_RECORD_EXIT, 0, 100, 101000 },
	};
	struct pdw w = { 0 };
	size_t data_off, at;

	data_off = one_event_head(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100000, st,
				  PERF_ATTR_FLAG_SAMPLE_ID_ALL);
	for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		at = pdw_begin(&w, rec[i].type, rec[i].misc);
		if (rec[i].type == PERF_RECORD_COMM) {
			pdw_u32(&w, 100);       /* pid, tid, comm */
			pdw_u32(&w, rec[i].tid);
			pdw_bytes(&w, "work\0\0\0\0", 8);
		} else if (rec[i].type != PERF_RECORD_SWITCH) {
			pdw_u32(&w, 100);       /* pid, ppid, tid, ptid, time */
			pdw_u32(&w, 100);
			pdw_u32(&w, rec[i].tid);
			pdw_u32(&w, 100);
			pdw_u64(&w, rec[i].time);
		}
		pdw_u32(&w, 100);               /* sample_id: pid, tid, time */
		pdw_u32(&w, rec[i].tid);
		pdw_u64(&w, rec[i].time);
		pdw_end(&w, at);
	}
	one_event_data(&w, data_off, w.n);
	return w;
}

static void test_first_run(void **state)
{
	struct pdw w = switch_file();
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	struct profile *p = NULL;
	const struct profile_thread *t = NULL, *m = NULL;

	(void)state;
	assert_int_equal(profile_build_mem(w.b, w.n, "switches", &o, &p), 0);
	assert_non_null(p);
	for (size_t i = 0; i < p->nr_threads; i++) {
		if (p->threads[i].tid == 101)
			t = &p->threads[i];
		if (p->threads[i].tid == 100)
			m = &p->threads[i];
	}
	assert_non_null(t);
	assert_int_equal(t->run_ns, 50000 + 40000);
	/* from its fork to its first switch-in it waited for a CPU */
	assert_int_equal(t->blocked_ns + t->delay_ns, 1000 + 8000);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 1000);
	assert_int_equal(t->open_at_end, 0);
	assert_int_equal(t->end - t->start, 99000);
	assert_non_null(m);
	assert_int_equal(m->run_ns, 3000 + 500);
	assert_int_equal(m->blocked_ns + m->delay_ns, 97000);
	assert_int_equal(m->start, 500);
	assert_int_equal(m->end, 101000);
	profile_free(p);
	free(w.b);
}

/*
 * A thread switched out twice from the same place, preempted and then not:
 * each interval has its own state (the verdicts kept per stack are kept per
 * state too), and switch records carry no stack, so both share one node.
 */
static void test_state_per_switch(void **state)
{
	const uint64_t st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	static const struct { uint32_t type; uint16_t misc; uint64_t time; } rec[] = {
		{ PERF_RECORD_FORK, 0, 1000 },
		{ PERF_RECORD_SWITCH, 0, 2000 },                                            /* in */
		{ PERF_RECORD_SWITCH, PERF_MISC_SWITCH_OUT | PERF_MISC_SWITCH_OUT_PREEMPT, 10000 },
		{ PERF_RECORD_SWITCH, 0, 13000 },
		{ PERF_RECORD_SWITCH, PERF_MISC_SWITCH_OUT, 20000 },                        /* sleeps */
		{ PERF_RECORD_SWITCH, 0, 27000 },
		{ PERF_RECORD_SWITCH, PERF_MISC_SWITCH_OUT | PERF_MISC_SWITCH_OUT_PREEMPT, 28000 },
		{ PERF_RECORD_SWITCH, 0, 29000 },
		{ PERF_RECORD_EXIT, 0, 30000 },
	};
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	struct pdw w = { 0 };
	struct profile *p = NULL;
	const struct profile_thread *t = NULL;
	size_t data_off, at;

	(void)state;
	data_off = one_event_head(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100000, st,
				  PERF_ATTR_FLAG_SAMPLE_ID_ALL);
	for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		at = pdw_begin(&w, rec[i].type, rec[i].misc);
		if (rec[i].type != PERF_RECORD_SWITCH) {
			pdw_u32(&w, 100);       /* pid, ppid, tid, ptid, time */
			pdw_u32(&w, 100);
			pdw_u32(&w, 101);
			pdw_u32(&w, 100);
			pdw_u64(&w, rec[i].time);
		}
		pdw_u32(&w, 100);               /* sample_id: pid, tid, time */
		pdw_u32(&w, 101);
		pdw_u64(&w, rec[i].time);
		pdw_end(&w, at);
	}
	one_event_data(&w, data_off, w.n);
	assert_int_equal(profile_build_mem(w.b, w.n, "switches", &o, &p), 0);
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 101)
			t = &p->threads[i];
	assert_non_null(t);
	/* (and its wait for its first run, from its fork: no stack was
	 * lost there, and none is counted missing) */
	assert_int_equal(t->c.count[CNT_PREEMPTED], 1 + 2);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 1000 + 3000 + 1000);
	assert_int_equal(t->c.count[CNT_SLEEP], 1);
	assert_int_equal(t->c.ns[CNT_SLEEP], 7000);
	/* no sched_switch event: no interval has its stack, each counted
	 * with its time, in all and for its thread by state */
	assert_int_equal(p->meta.iv_no_stack, 3);
	assert_int_equal(p->meta.iv_no_stack_unrecorded, 3);
	assert_int_equal(p->meta.iv_no_stack_lost, 0);
	assert_int_equal(p->meta.iv_no_stack_ns, 3000 + 1000 + 7000);
	assert_int_equal(t->no_stack.count[CNT_PREEMPTED], 2);
	assert_int_equal(t->no_stack.ns[CNT_PREEMPTED], 3000 + 1000);
	assert_int_equal(t->no_stack.ns[CNT_SLEEP], 7000);
	profile_free(p);
	/* and counted the same without the samples' stacks (what info runs) */
	o.no_stacks = true;
	assert_int_equal(profile_build_mem(w.b, w.n, "switches", &o, &p), 0);
	assert_int_equal(p->meta.iv_no_stack, 3);
	assert_int_equal(p->meta.iv_no_stack_unrecorded, 3);
	assert_int_equal(p->meta.iv_no_stack_ns, 3000 + 1000 + 7000);
	profile_free(p);
	free(w.b);
}

/*
 * The kernel writes tid -1 (pid -1 once the process is gone) in samples of
 * an exiting task after it was released: the task running on that CPU, the
 * last one seen there or switched in, is the sample's thread, unless its
 * process disagrees or the CPU was idle.
 */
static struct pdw released_file(void)
{
	const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	static const struct {
		uint32_t type;
		uint16_t misc;
		uint32_t pid, tid, cpu, np, nt;   /* np/nt: SWITCH_CPU_WIDE's next/prev */
		uint64_t time;
	} rec[] = {
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 200, 201, 0, 0, 0, 1000 },
		{ PERF_RECORD_SWITCH_CPU_WIDE, 0, 300, 301, 1, 0, 0, 1500 },      /* in */
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 200, UINT32_MAX, 0, 0, 0, 2000 },
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 300, UINT32_MAX, 1, 0, 0, 2500 },
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, 999, UINT32_MAX, 0, 0, 0, 3000 },
		{ PERF_RECORD_SWITCH_CPU_WIDE, PERF_MISC_SWITCH_OUT, 300, 301, 1, 0, 0, 4000 },
		{ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, UINT32_MAX, UINT32_MAX, 1, 0, 0, 4500 },
	};
	struct pdw w = { 0 };
	size_t data_off, at;

	data_off = one_event_head(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100000, st,
				  PERF_ATTR_FLAG_SAMPLE_ID_ALL);
	for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		at = pdw_begin(&w, rec[i].type, rec[i].misc);
		if (rec[i].type == PERF_RECORD_SAMPLE) {
			pdw_u64(&w, 0xffffffff81000000ULL);
		} else {
			pdw_u32(&w, rec[i].np);
			pdw_u32(&w, rec[i].nt);
		}
		pdw_u32(&w, rec[i].pid);        /* sample or sample_id: pid, tid, time, cpu */
		pdw_u32(&w, rec[i].tid);
		pdw_u64(&w, rec[i].time);
		pdw_u32(&w, rec[i].cpu);
		pdw_u32(&w, 0);
		pdw_end(&w, at);
	}
	one_event_data(&w, data_off, w.n);
	return w;
}

static void test_released_task(void **state)
{
	struct pdw w = released_file();
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	struct profile *p = NULL;
	uint64_t n201 = 0, n301 = 0, nnone = 0, all = 0;

	(void)state;
	assert_int_equal(profile_build_mem(w.b, w.n, "released", &o, &p), 0);
	assert_non_null(p);
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct profile_thread *t = &p->threads[i];

		all += t->c.count[CNT_ON_CPU];
		if (t->tid == 201)
			n201 = t->c.count[CNT_ON_CPU];
		else if (t->tid == 301)
			n301 = t->c.count[CNT_ON_CPU];
		else if (t->tid == UINT32_MAX)
			nnone = t->c.count[CNT_ON_CPU];
	}
	assert_int_equal(all, 5);
	assert_int_equal(n201, 2);      /* last seen on CPU 0 */
	assert_int_equal(n301, 1);      /* switched in on CPU 1 */
	assert_int_equal(nnone, 2);     /* pid 999 is not 201's; CPU 1 went idle */
	profile_free(p);
	free(w.b);
}

/*
 * Samples without a callchain are named by their mode: the same address in
 * one process is the host kernel's, a guest kernel's or the program's. A
 * stack seen before is counted without naming it again, so its key must
 * hold the mode: three samples of one address in three modes are three
 * frames, and a repeat of the first is counted with it.
 */
static void test_mode_key(void **state)
{
	const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	static const uint16_t modes[] = { PERF_RECORD_MISC_KERNEL, PERF_RECORD_MISC_GUEST_KERNEL,
					  PERF_RECORD_MISC_USER, PERF_RECORD_MISC_KERNEL };
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent" };
	struct profile *p = NULL;
	struct pdw w = { 0 };
	size_t data_off, at, leaves = 0;
	uint64_t kernel = 0, guest = 0, user = 0;

	(void)state;
	data_off = one_event_head(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 100000, st, 0);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		at = pdw_begin(&w, PERF_RECORD_SAMPLE, modes[i]);
		pdw_u64(&w, 0xffffffff81000100ULL);
		pdw_u32(&w, 100);
		pdw_u32(&w, 100);
		pdw_end(&w, at);
	}
	one_event_data(&w, data_off, w.n);
	assert_int_equal(profile_build_mem(w.b, w.n, "modes", &o, &p), 0);
	assert_non_null(p);
	for (uint32_t i = 1; i < p->nr_nodes; i++) {
		const struct profile_frame *f = &p->frames[p->nodes[i].frame];
		uint64_t n = p->self[i].count[CNT_ON_CPU];

		if (!n)
			continue;
		leaves++;
		if (f->flags & FRAME_F_KERNEL)
			kernel += n;
		else if (f->flags & FRAME_F_USER)
			user += n;
		else
			guest += n;     /* neither: not nameable */
	}
	assert_int_equal(leaves, 3);
	assert_int_equal(kernel, 2);
	assert_int_equal(guest, 1);
	assert_int_equal(user, 1);
	profile_free(p);
	free(w.b);
}

/* Syscall evidence: entry points named, arguments from the sampled
 * registers by mask, timeouts deciding timed or not. */
static void test_syscall_evidence(void **state)
{
	/* x86_64: di(5) si(4) dx(3) r10(18) r8(16) r9(17), plus ax(0) and ip(8) */
	uint64_t mask = 1ull << 0 | 1ull << 3 | 1ull << 4 | 1ull << 5 | 1ull << 8 | 1ull << 16 |
			1ull << 17 | 1ull << 18;
	/* values in bit order: ax dx si di ip r8 r9 r10 */
	uint64_t regs[] = { 0xa, 0xd, 0x5, 0x7, 0x1, 0x8, 0x9, 0x10 };
	uint64_t args[6], poll_inf[6] = { 0, 1, (uint64_t)-1 }, poll_10[6] = { 0, 1, 10 };
	uint64_t futex_wait[6] = { 0, 128 | 0, 1, 0 }, futex_timed[6] = { 0, 128 | 9, 1, 0x7ff0 };
	uint64_t futex_pi[6] = { 0, 6 }, flock_nb[6] = { 3, 2 | 4 }, flock_ex[6] = { 3, 2 };
	uint64_t futex_lll[6] = { 0, 128 | 0, 2, 0 }, futex_lll_timed[6] = { 0, 128 | 9, 2, 0x7ff0 };
	uint64_t sem_untimed[6] = { 1, 0x7ff0, 1, 0 }, sem_timed[6] = { 1, 0x7ff0, 1, 0x7fe0 };
	uint64_t setlkw[6] = { 3, 7 }, setlk[6] = { 3, 6 };
	int semtimedop = sys_call_of("__x64_sys_semtimedop");
	int poll = sys_call_of("__x64_sys_poll"), futex = sys_call_of("__se_sys_futex");
	int flock = sys_call_of("__do_sys_flock"), fcntl = sys_call_of("__arm64_sys_fcntl");

	(void)state;
	assert_true(poll > 0 && futex > 0 && flock > 0 && fcntl > 0);
	assert_string_equal(sys_call_name(poll), "poll");
	assert_int_equal(sys_call_of("do_sys_poll"), 0);
	assert_int_equal(sys_call_of("__x64_sys_pollx"), 0);
	assert_int_equal(sys_call_of("__x64_sys_read"), 0);
	assert_int_equal(sys_arch_of("x86_64"), SYS_ARCH_X86_64);
	assert_int_equal(sys_arch_of("riscv64"), SYS_ARCH_NONE);
	assert_true(sys_args(SYS_ARCH_X86_64, mask, regs, args));
	assert_int_equal(args[0], 0x7);   /* di */
	assert_int_equal(args[1], 0x5);   /* si */
	assert_int_equal(args[2], 0xd);   /* dx */
	assert_int_equal(args[3], 0x10);  /* r10 */
	assert_int_equal(args[4], 0x8);   /* r8 */
	assert_int_equal(args[5], 0x9);   /* r9 */
	assert_false(sys_args(SYS_ARCH_X86_64, mask & ~(1ull << 18), regs, args)); /* no r10 */
	assert_false(sys_args(SYS_ARCH_NONE, mask, regs, args));
	assert_int_equal(sys_counter(poll, poll_inf, 'S', NULL), CNT_SLEEP);
	assert_int_equal(sys_counter(poll, poll_10, 'S', NULL), CNT_TIMED_SLEEP);
	assert_int_equal(sys_counter(poll, poll_10, 'D', NULL), -1);    /* D: the rules */
	assert_int_equal(sys_counter(poll, poll_10, 'R', NULL), -1);
	assert_int_equal(sys_counter(futex, futex_wait, 'S', NULL), CNT_SLEEP);
	/* waiting for 2, a lock word's contended state, timed or not: a lock */
	assert_int_equal(sys_counter(futex, futex_lll, 'S', NULL), CNT_LOCK);
	assert_int_equal(sys_counter(futex, futex_lll_timed, 'S', NULL), CNT_LOCK);
	/* glibc's semop() is semtimedop(), seen by do_semtimedop where the
	 * entry point tail-called it */
	assert_int_equal(sys_call_of("do_semtimedop"), semtimedop);
	assert_int_equal(sys_call_of("kernel_wait4"), sys_call_of("__x64_sys_wait4"));
	assert_true(sys_call_of("kernel_wait4") > 0);
	assert_int_equal(sys_counter(semtimedop, sem_untimed, 'S', NULL), CNT_SLEEP);
	assert_int_equal(sys_counter(semtimedop, sem_timed, 'S', NULL), CNT_TIMED_SLEEP);
	assert_int_equal(sys_counter(futex, futex_timed, 'S', NULL), CNT_TIMED_SLEEP);
	assert_int_equal(sys_counter(futex, futex_pi, 'S', NULL), CNT_LOCK);
	assert_int_equal(sys_counter(flock, flock_ex, 'S', NULL), CNT_LOCK);
	assert_int_equal(sys_counter(flock, flock_nb, 'S', NULL), -1);
	assert_int_equal(sys_counter(fcntl, setlkw, 'S', NULL), CNT_LOCK);
	assert_int_equal(sys_counter(fcntl, setlk, 'S', NULL), -1);
	/* the timeout's length, where the wait's length can be held against
	 * it: a poll's milliseconds; a relative time in the copied memory */
	assert_int_equal(sys_timeout_ns(poll, poll_10, NULL), 10000000);
	assert_int_equal(sys_timeout_ns(poll, poll_inf, NULL), 0);
	{
		uint64_t words[4] = { 2, 500000000, 0, 0 };       /* 2.5 s */
		struct sys_mem mem = { 0x7fe0, (const uint8_t *)words, sizeof(words) };
		uint64_t futex_rel[6] = { 0, 128 | 0, 1, 0x7fe0 };
		uint64_t futex_abs[6] = { 0, 128 | 9, 1, 0x7fe0 };

		assert_int_equal(sys_timeout_ns(semtimedop, sem_timed, &mem), 2500000000ull);
		assert_int_equal(sys_timeout_ns(futex, futex_rel, &mem), 2500000000ull);
		assert_int_equal(sys_timeout_ns(futex, futex_abs, &mem), 0);      /* absolute */
		assert_int_equal(sys_timeout_ns(semtimedop, sem_timed, NULL), 0); /* not copied */
		assert_int_equal(sys_timeout_ns(futex, futex_timed, &mem), 0);    /* WAIT_BITSET too */
	}
	assert_int_equal(sys_untimed(poll), CNT_SLEEP);
	assert_int_equal(sys_untimed(sys_call_of("__x64_sys_io_getevents")), CNT_IO);
	/* what a wait awaited, its arguments say for a poll, a PI futex, a
	 * lock word's 2, a file lock; not for any other futex word or a
	 * semaphore (a lock's and an event's look alike) */
	assert_true(sys_awaits_unsaid(futex, futex_wait));
	assert_true(sys_awaits_unsaid(futex, futex_timed));
	assert_true(sys_awaits_unsaid(semtimedop, sem_untimed));
	assert_false(sys_awaits_unsaid(futex, futex_lll));
	assert_false(sys_awaits_unsaid(futex, futex_pi));
	assert_false(sys_awaits_unsaid(poll, poll_inf));
	assert_false(sys_awaits_unsaid(flock, flock_ex));
	assert_false(sys_awaits_unsaid(0, poll_inf));
}

/* io_uring_enter's timeout lies in a structure on the user stack: read from
 * the sample's stack bytes, undecided without them */
static void test_syscall_uring(void **state)
{
	int uring = sys_call_of("__do_sys_io_uring_enter");
	/* sp (7) only: its value is the stack copy's base */
	uint64_t mask = 1ull << 7, regs[] = { 0x7ffc1000 };
	uint8_t stack[64] = { 0 };
	uint64_t ts = 0x7ffc2000;
	struct sys_mem mem;
	/* fd, to_submit, min_complete, flags, arg, argsz */
	uint64_t plain[6] = { 3, 1, 1, 1 }, no_wait[6] = { 3, 1, 0, 0 };
	uint64_t ext[6] = { 3, 0, 1, 1 | 8, 0x7ffc1008, 24 }, ext_far[6] = { 3, 0, 1, 1 | 8, 0x7ffc1038, 24 };
	uint64_t ext_reg[6] = { 3, 0, 1, 1 | 8 | 64, 0, 24 };

	(void)state;
	assert_true(uring > 0);
	assert_string_equal(sys_call_name(uring), "io_uring_enter");
	assert_false(sys_mem_of(SYS_ARCH_X86_64, 1ull << 5, regs, stack, sizeof(stack), &mem));
	assert_false(sys_mem_of(SYS_ARCH_X86_64, mask, regs, NULL, 0, &mem));
	assert_true(sys_mem_of(SYS_ARCH_X86_64, mask, regs, stack, sizeof(stack), &mem));
	assert_int_equal(mem.base, 0x7ffc1000);
	assert_int_equal(sys_counter(uring, plain, 'S', NULL), CNT_IO);
	assert_int_equal(sys_counter(uring, no_wait, 'S', &mem), -1);
	assert_int_equal(sys_counter(uring, ext_reg, 'S', &mem), -1);
	/* the arg at sp + 8: its ts (at +16) is 0, then set */
	assert_int_equal(sys_counter(uring, ext, 'S', NULL), -1);
	assert_int_equal(sys_counter(uring, ext, 'S', &mem), CNT_IO);
	memcpy(stack + 8 + 16, &ts, sizeof(ts));
	assert_int_equal(sys_counter(uring, ext, 'S', &mem), CNT_TIMED_SLEEP);
	/* past the copy's end: undecided, never a read beyond it */
	assert_int_equal(sys_counter(uring, ext_far, 'S', &mem), -1);
}

/* --- sched_switch recordings, written here --- */

#define SW_ID 300               /* the sched_switch format's id */
#define SW_KTEXT 0xffffffff81000000ULL

static const char sw_format[] =
	"name: sched_switch\nID: 300\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid\n";

/* Kernel functions at SW_KTEXT + 0x100 * (i + 1), for the stacks below. */
static const char *const sw_kfuncs[] = { "__schedule", "do_sched_yield", "__x64_sys_sched_yield",
					 "irqentry_exit", "do_nanosleep", "futex_wait" };
#define KF(i) (SW_KTEXT + 0x100 * ((i) + 1) + 0x10)

/* One record of a sched_switch recording: a sched_switch sample (@prev
 * switched out in @state, its kernel stack @chain, @next in), or a
 * task's FORK or EXIT, or LOST (@prev: lost records). */
struct sw_rec {
	uint32_t type;
	uint64_t time;
	uint32_t prev, next;
	char state;
	uint64_t chain[4];      /* kernel functions (KF()), 0-ended */
};

/* The CPU of each record the next sw_file() writes, by index (for that
 * one recording); NULL: all CPU 0. */
static const uint32_t *sw_cpus;

/* The records @rec (@n) as a file-mode recording of thread 101.. of
 * process 100, one CPU, sched_switch with stacks and states. */
static struct pdw sw_file(const struct sw_rec *rec, size_t n, bool cpu)
{
	const uint64_t st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | (cpu ? PERF_SAMPLE_CPU : 0) |
			    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
	struct pdw w = { 0 };
	size_t data_off, data_end, feat_off, fs, at;

	data_off = one_event_head(&w, PERF_TYPE_TRACEPOINT, SW_ID, 1, st,
				  PERF_ATTR_FLAG_SAMPLE_ID_ALL);
	for (size_t i = 0; i < n; i++) {
		const struct sw_rec *r = &rec[i];
		uint32_t pid = r->prev ? 100 : 0, rcpu = sw_cpus ? sw_cpus[i] : 0;

		if (r->type == PERF_RECORD_SAMPLE) {
			uint8_t raw[68] = { 0 };
			long st_bits = r->state == 'R' ? 0 : r->state == 'S' ? 1 : 2;
			size_t nk = 0;

			while (nk < 4 && r->chain[nk])
				nk++;
			at = pdw_begin(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
			pdw_u32(&w, pid);
			pdw_u32(&w, r->prev);
			pdw_u64(&w, r->time);
			if (cpu) {
				pdw_u32(&w, rcpu);      /* cpu */
				pdw_u32(&w, 0);
			}
			pdw_u64(&w, 1);                 /* period */
			pdw_u64(&w, nk + 1);
			pdw_u64(&w, PERF_CONTEXT_KERNEL);
			for (size_t k = 0; k < nk; k++)
				pdw_u64(&w, r->chain[k]);
			raw[0] = SW_ID & 0xff;
			raw[1] = SW_ID >> 8;
			memcpy(raw + 24, &r->prev, 4);
			memcpy(raw + 32, &st_bits, 8);
			memcpy(raw + 56, &r->next, 4);
			pdw_u32(&w, sizeof(raw));
			pdw_bytes(&w, raw, sizeof(raw));
			pdw_end(&w, at);
			continue;
		}
		at = pdw_begin(&w, r->type, 0);
		if (r->type == PERF_RECORD_LOST) {
			pdw_u64(&w, 1);                 /* id, lost */
			pdw_u64(&w, r->prev);
		} else {
			pdw_u32(&w, 100);               /* pid, ppid, tid, ptid, time */
			pdw_u32(&w, 100);
			pdw_u32(&w, r->prev);
			pdw_u32(&w, 100);
			pdw_u64(&w, r->time);
		}
		pdw_u32(&w, 100);                       /* sample_id: pid, tid, time, cpu */
		pdw_u32(&w, r->type == PERF_RECORD_LOST ? 100 : r->prev);
		pdw_u64(&w, r->time);
		if (cpu) {
			pdw_u32(&w, rcpu);
			pdw_u32(&w, 0);
		}
		pdw_end(&w, at);
	}
	data_end = w.n;
	feat_off = w.n;                 /* TRACING_DATA (1): sched_switch's format */
	pdw_u64(&w, 0);
	pdw_u64(&w, 0);
	fs = w.n;
	pdw_bytes(&w, "\x17\x08\x44tracing0.6", 14);     /* magic, version */
	pdw_u8(&w, 0);                  /* little-endian */
	pdw_u8(&w, 8);                  /* long size */
	pdw_u32(&w, 4096);
	pdw_bytes(&w, "header_page", 12);
	pdw_u64(&w, 0);
	pdw_bytes(&w, "header_event", 13);
	pdw_u64(&w, 0);
	pdw_u32(&w, 0);                 /* ftrace formats */
	pdw_u32(&w, 1);                 /* systems */
	pdw_bytes(&w, "sched", 6);
	pdw_u32(&w, 1);
	pdw_u64(&w, sizeof(sw_format) - 1);
	pdw_bytes(&w, sw_format, sizeof(sw_format) - 1);
	pdw_u32(&w, 0);                 /* kallsyms */
	pdw_u32(&w, 0);                 /* printk */
	pdw_patch_u64(&w, feat_off, fs);
	pdw_patch_u64(&w, feat_off + 8, w.n - fs);
	one_event_data(&w, data_off, data_end);
	pdw_patch_u64(&w, 72, 1ULL << 1);
	sw_cpus = NULL;
	return w;
}

/* The profile of @rec, its kernel frames named by a kallsyms of
 * sw_kfuncs; *@t: thread @tid's entry. */
/* Write the kernel's symbols of sw_kfuncs to a new file at @path (a
 * mkstemp() template). */
static void sw_kallsyms(char *path)
{
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "%llx T _text\n", (unsigned long long)SW_KTEXT);
	for (size_t i = 0; i < sizeof(sw_kfuncs) / sizeof(sw_kfuncs[0]); i++)
		fprintf(f, "%llx T %s\n", (unsigned long long)(SW_KTEXT + 0x100 * (i + 1)),
			sw_kfuncs[i]);
	fprintf(f, "%llx T _etext\n", (unsigned long long)(SW_KTEXT + 0x10000));
	fclose(f);
}

/* A user's rules file for sw_profile_cpu(), NULL none. */
static const char *sw_state_rules;

static struct profile *sw_profile_cpu(const struct sw_rec *rec, size_t n, bool cpu,
				      uint32_t tid, const struct profile_thread **t)
{
	char path[] = "/tmp/perfport-test-kallsyms-XXXXXX";
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent",
				  .sym.kallsyms = path, .state_rules = sw_state_rules };
	struct pdw w = sw_file(rec, n, cpu);
	struct profile *p = NULL;

	sw_kallsyms(path);
	assert_int_equal(profile_build_mem(w.b, w.n, "switches", &o, &p), 0);
	unlink(path);
	free(w.b);
	assert_non_null(p);
	*t = NULL;
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == tid)
			*t = &p->threads[i];
	assert_non_null(*t);
	return p;
}

static struct profile *sw_profile(const struct sw_rec *rec, size_t n, uint32_t tid,
				  const struct profile_thread **t)
{
	return sw_profile_cpu(rec, n, true, tid, t);
}

/*
 * A new thread is runnable from its fork until its first switch-in: that
 * wait for a CPU is charged to it as preempted, under its own frame (no
 * switch-out made it: no stack). Thread 102, forked at 500, first in at
 * 2500 (a sched_switch's next_pid), out asleep at 3000, in at 4000 (and
 * running to the end, 5000). Thread
 * 103, forked at 600, is first seen switching out at 3500 (its switch-in
 * was not recorded): when it began to run is unknown, and nothing is
 * charged for its fork; in at 4500.
 */
static void test_fork_wait(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },  /* the profile's start */
		{ PERF_RECORD_FORK, 500, 102, 0, 0, { 0 } },
		{ PERF_RECORD_FORK, 600, 103, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 2500, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 3000, 102, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 3500, 103, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 4000, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 4500, 0, 103, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 0, 'R', { KF(0) } },
	};
	const struct profile_thread *t, *u = NULL;
	struct profile *p = sw_profile(rec, sizeof(rec) / sizeof(rec[0]), 102, &t);
	bool framed = false;

	(void)state;
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 2000);
	assert_int_equal(t->c.count[CNT_PREEMPTED], 1);
	assert_int_equal(t->delay_ns, 2000);
	assert_int_equal(t->c.ns[CNT_SLEEP], 1000);
	assert_int_equal(t->run_ns, 500 + 1000);
	assert_int_equal(t->no_stack.count[CNT_PREEMPTED], 0);
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 103)
			u = &p->threads[i];
	assert_non_null(u);
	assert_int_equal(u->c.ns[CNT_PREEMPTED], 0);
	assert_int_equal(u->c.ns[CNT_SLEEP], 1000);
	/* its own frame, under its thread */
	for (uint32_t i = 1; i < p->nr_nodes; i++) {
		const struct profile_frame *f = &p->frames[p->nodes[i].frame];

		if (p->self[i].ns[CNT_PREEMPTED] == 2000 && f->function &&
		    !strcmp(f->function, "[off-cpu: new thread, before its first run]"))
			framed = true;
	}
	assert_true(framed);
	assert_int_equal(p->meta.iv_no_stack, 0);
	profile_free(p);
}

/*
 * A thread's lifetime ends at its exit record: what it does after (its
 * exit's teardown, even a preemption there, and its last switch-out) is
 * not charged to it, and its end is not moved past it. Thread 102, forked
 * at 500, in at 1000, exits at 2000, is preempted in its teardown at 2600,
 * in again at 3000 and switches out at 3200 for the last time: it ends at
 * 2000 (3200 before), run 1000 + preempted 500 = its lifetime.
 */
static void test_exit_end(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_FORK, 500, 102, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 1000, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_EXIT, 2000, 102, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 2600, 102, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 3000, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 3200, 102, 0, 'D', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 0, 'R', { KF(0) } },
	};
	const struct profile_thread *t;
	struct profile *p = sw_profile(rec, sizeof(rec) / sizeof(rec[0]), 102, &t);

	(void)state;
	assert_true(t->exited);
	assert_int_equal(t->start, 500);
	assert_int_equal(t->end, 2000);
	assert_int_equal(t->run_ns, 1000);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 500);
	assert_int_equal(t->c.count[CNT_PREEMPTED], 1);
	assert_int_equal(t->run_ns + t->c.ns[CNT_PREEMPTED], t->end - t->start);
	profile_free(p);
}

/*
 * Records lost while a thread is off CPU may have held its switch-in, a
 * run and another switch-out: only its time up to its CPU's last record
 * before the loss is known to be the wait it switched out for. Thread 101,
 * preempted at 1000 on CPU 0, whose last record is at 1500; 5 records lost
 * there (the LOST record at 3000); in at 5000: 500 ns preempted, not 4000.
 * Asleep at 6000, in at 7000, nothing lost: 1000 ns of sleep.
 */
static void test_lost_cut(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1000, 101, 0, 'R', { KF(0), KF(3) } },
		{ PERF_RECORD_SAMPLE, 1500, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_LOST, 3000, 5, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 6000, 101, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 7000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 8000, 0, 0, 'R', { KF(0) } },
	};
	const struct profile_thread *t;
	struct profile *p = sw_profile(rec, sizeof(rec) / sizeof(rec[0]), 101, &t);

	(void)state;
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 500);
	assert_int_equal(t->c.count[CNT_PREEMPTED], 1);
	assert_int_equal(t->delay_ns, 500);
	assert_int_equal(t->c.ns[CNT_SLEEP], 1000);
	assert_int_equal(t->run_ns, 1000 + 1000);
	assert_int_equal(p->meta.lost, 5);
	/* what the cut left uncharged is counted, for report to say */
	assert_int_equal(p->meta.iv_lost_cut, 1);
	assert_int_equal(p->meta.iv_lost_cut_ns, 5000 - 1500);
	profile_free(p);
}

/*
 * A loss that names no CPU (records without PERF_SAMPLE_CPU) may have held
 * any thread's events: each interval open then, preempted or blocked, is
 * charged up to the last record before the loss. Thread 101 preempted at
 * 1000, 102 asleep at 1200, the last record at 1500, a loss (at 3000); 101
 * in at 5000, 102 at 6000.
 */
static void test_lost_cut_no_cpu(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1000, 101, 0, 'R', { KF(0), KF(3) } },
		{ PERF_RECORD_SAMPLE, 1200, 102, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 1500, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_LOST, 3000, 5, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 6000, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 7000, 0, 0, 'R', { KF(0) } },
	};
	const struct profile_thread *t, *u = NULL;
	struct profile *p = sw_profile_cpu(rec, sizeof(rec) / sizeof(rec[0]), false, 101, &t);

	(void)state;
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 500);
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 102)
			u = &p->threads[i];
	assert_non_null(u);
	assert_int_equal(u->c.ns[CNT_SLEEP], 1500 - 1200);
	profile_free(p);
}

/*
 * A loss cuts the intervals that closed while the records were being lost
 * too: CPU 0's last record before its loss is at 1500, and its LOST record
 * (its next record) at 4000. Thread 101, asleep from 1000 (CPU 0), is
 * switched in at 3000 on CPU 1: it may have run on CPU 0 after 1500 and
 * slept again there, so only 1000-1500 is known to be this wait's (2000
 * charged before). Thread 102 on CPU 1: asleep 1100-1400, before the
 * loss, charged whole; preempted 2000-2500, within it, charged nothing
 * (500 before); asleep from 2800 to the end, open at the loss, nothing.
 * Without the loss, everything is charged whole, as it always was.
 */
static void test_lost_cut_closed(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 150, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1000, 101, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 1100, 102, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 1400, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1500, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 2000, 102, 0, 'R', { KF(0), KF(3) } },
		{ PERF_RECORD_SAMPLE, 2500, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 2800, 102, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 3000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_LOST, 4000, 5, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 4000, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 7000, 0, 0, 'R', { KF(0) } },
	};
	static const uint32_t cpus[] = { 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0 };
	const size_t n = sizeof(rec) / sizeof(rec[0]);
	struct sw_rec whole[sizeof(rec) / sizeof(rec[0])];
	uint32_t whole_cpus[sizeof(rec) / sizeof(rec[0])];
	const struct profile_thread *t, *u = NULL;
	struct profile *p;
	size_t k = 0;

	(void)state;
	sw_cpus = cpus;
	p = sw_profile(rec, n, 101, &t);
	assert_int_equal(t->c.ns[CNT_SLEEP], 1500 - 1000);
	assert_int_equal(t->c.count[CNT_SLEEP], 1);
	assert_int_equal(t->blocked_ns, 500);
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 102)
			u = &p->threads[i];
	assert_non_null(u);
	assert_int_equal(u->c.ns[CNT_SLEEP], 1400 - 1100);
	assert_int_equal(u->c.count[CNT_SLEEP], 2);
	assert_int_equal(u->c.ns[CNT_PREEMPTED], 0);
	assert_int_equal(u->c.count[CNT_PREEMPTED], 1);
	assert_int_equal(p->meta.iv_lost_cut, 3);
	assert_int_equal(p->meta.iv_lost_cut_ns, (3000 - 1500) + (2500 - 2000) + (7000 - 2800));
	profile_free(p);
	/* the same recording without its loss */
	for (size_t i = 0; i < n; i++)
		if (rec[i].type != PERF_RECORD_LOST) {
			whole_cpus[k] = cpus[i];
			whole[k++] = rec[i];
		}
	sw_cpus = whole_cpus;
	p = sw_profile(whole, k, 101, &t);
	assert_int_equal(t->c.ns[CNT_SLEEP], 3000 - 1000);
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 102)
			u = &p->threads[i];
	assert_int_equal(u->c.ns[CNT_SLEEP], (1400 - 1100) + (7000 - 2800));
	assert_int_equal(u->c.ns[CNT_PREEMPTED], 2500 - 2000);
	assert_int_equal(p->meta.iv_lost_cut, 0);
	assert_int_equal(p->meta.iv_lost_cut_ns, 0);
	assert_int_equal(p->meta.iv_exact, 3);
	profile_free(p);
}

/*
 * A loss cuts a run on the lost CPU: a thread running there may have
 * switched out (or exited) where its records were lost, so its run is
 * charged only up to that CPU's last record before the loss, and not
 * again until new evidence that it runs. Thread 101 on CPU 0: asleep from
 * 100 (102 from 150 on CPU 1), in at 1000,
 * preempted 1400-1500, running; CPU 0's records lost after 1500 (its LOST
 * record at 4000, with its next record, 101 asleep at 4000); in again at
 * 6000 to the end (7000). Its run: 400 + 1000, not 400 + 2500 + 1000; the
 * 2500 ns from the cut to its switch-out are counted. Thread 102, running
 * on CPU 1 from 1100 to 7000, whose records are whole, is not cut. A loss
 * naming no CPU may be any CPU's: both runs are cut at the last record of
 * any (1500).
 */
static void test_lost_cut_run(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 101, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 150, 102, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 1000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1100, 0, 102, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1400, 101, 0, 'R', { KF(0), KF(3) } },
		{ PERF_RECORD_SAMPLE, 1500, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_LOST, 4000, 5, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 4000, 101, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 6000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 7000, 102, 0, 'S', { KF(0), KF(5) } },
	};
	static const uint32_t cpus[] = { 0, 1, 0, 1, 0, 0, 0, 0, 0, 1 };
	const size_t n = sizeof(rec) / sizeof(rec[0]);
	struct sw_rec whole[sizeof(rec) / sizeof(rec[0])];
	uint32_t whole_cpus[sizeof(rec) / sizeof(rec[0])];
	const struct profile_thread *t, *u = NULL;
	struct profile *p;
	size_t k = 0;

	(void)state;
	sw_cpus = cpus;
	p = sw_profile(rec, n, 101, &t);
	assert_int_equal(t->run_ns, (1400 - 1000) + (7000 - 6000));
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 1500 - 1400);
	assert_int_equal(t->c.ns[CNT_SLEEP], (1000 - 100) + (6000 - 4000));
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 102)
			u = &p->threads[i];
	assert_non_null(u);
	assert_int_equal(u->run_ns, 7000 - 1100);
	assert_int_equal(p->meta.run_lost_cut, 1);
	assert_int_equal(p->meta.run_lost_cut_ns, 4000 - 1500);
	assert_int_equal(p->meta.iv_lost_cut, 0);
	profile_free(p);
	/* the same recording without its loss: run whole, nothing cut */
	for (size_t i = 0; i < n; i++)
		if (rec[i].type != PERF_RECORD_LOST) {
			whole_cpus[k] = cpus[i];
			whole[k++] = rec[i];
		}
	sw_cpus = whole_cpus;
	p = sw_profile(whole, k, 101, &t);
	assert_int_equal(t->run_ns, (1400 - 1000) + (4000 - 1500) + (7000 - 6000));
	assert_int_equal(p->meta.run_lost_cut, 0);
	assert_int_equal(p->meta.run_lost_cut_ns, 0);
	profile_free(p);
	/* a loss naming no CPU: both cut at the last record before it */
	p = sw_profile_cpu(rec, n, false, 101, &t);
	assert_int_equal(t->run_ns, (1400 - 1000) + (7000 - 6000));
	u = NULL;
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == 102)
			u = &p->threads[i];
	assert_non_null(u);
	assert_int_equal(u->run_ns, 1500 - 1100);
	assert_int_equal(p->meta.run_lost_cut, 2);
	assert_int_equal(p->meta.run_lost_cut_ns, (4000 - 1500) + (7000 - 1500));
	profile_free(p);
}

/*
 * The waits held for a loss are bounded: CPU 1 silent from 150 holds every
 * wait of thread 101 on CPU 0 (9,000 preemptions of 10 ns, 1000 + 20 i to
 * 1010 + 20 i); beyond 8,192 held, the oldest is charged as it is, and
 * CPU 1's LOST record at the end cuts the 8,192 still held (at their
 * switch-out: CPU 1's last record is before them all).
 */
static void test_lost_cut_held_bound(void **state)
{
	const size_t waits = 9000, held = 8192, n = 2 * waits + 5;
	struct sw_rec *rec = calloc(n, sizeof(*rec));
	uint32_t *cpus = calloc(n, sizeof(*cpus));
	const struct profile_thread *t;
	struct profile *p;
	uint64_t end = 1000 + 20 * waits;
	size_t k = 0;

	(void)state;
	assert_non_null(rec);
	assert_non_null(cpus);
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } };
	cpus[k] = 1;
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 150, 0, 0, 'R', { KF(0) } };
	for (size_t i = 0; i < waits; i++) {
		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 1000 + 20 * i, 101, 0, 'R',
					    { KF(0), KF(3) } };
		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 1010 + 20 * i, 0, 101, 'R', { KF(0) } };
	}
	cpus[k] = 1;
	rec[k++] = (struct sw_rec){ PERF_RECORD_LOST, end, 5, 0, 0, { 0 } };
	cpus[k] = 1;
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, end, 0, 0, 'R', { KF(0) } };
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, end + 100, 0, 0, 'R', { KF(0) } };
	assert_int_equal(k, n);
	sw_cpus = cpus;
	p = sw_profile(rec, n, 101, &t);
	assert_int_equal(t->c.count[CNT_PREEMPTED], waits);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 10 * (waits - held));
	assert_int_equal(p->meta.iv_lost_cut, held);
	assert_int_equal(p->meta.iv_lost_cut_ns, 10 * held);
	profile_free(p);
	free(cpus);
	free(rec);
}

/* profile_build_windows()'s consumer: thread sw_window_tid's preempted
 * and sleep ns. */
static uint32_t sw_window_tid;

static int sw_window_sum(void *ctx, struct profile *p, bool partial)
{
	uint64_t *sum = ctx;

	(void)partial;
	for (size_t i = 0; i < p->nr_threads; i++)
		if (p->threads[i].tid == sw_window_tid)
			*sum += p->threads[i].c.ns[CNT_PREEMPTED] + p->threads[i].c.ns[CNT_SLEEP];
	profile_free(p);
	return 0;
}

/* Thread sw_window_tid's preempted and sleep ns in @rec's windows of @ns. */
static uint64_t sw_windows(const struct sw_rec *rec, size_t n, uint64_t ns)
{
	char ks[] = "/tmp/perfport-test-kallsyms-XXXXXX", data[] = "/tmp/perfport-test-win-XXXXXX";
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent", .sym.kallsyms = ks };
	struct pdw w = sw_file(rec, n, true);
	uint64_t sum = 0;
	int dfd = mkstemp(data);

	assert_true(dfd >= 0);
	sw_kallsyms(ks);
	assert_int_equal(write(dfd, w.b, w.n), (ssize_t)w.n);
	close(dfd);
	assert_int_equal(profile_build_windows(data, &o, ns, sw_window_sum, &sum), 0);
	profile_settle();
	unlink(data);
	unlink(ks);
	free(w.b);
	return sum;
}

/*
 * Windows charge what the whole recording charges: an interval cut at a
 * loss in one window (preempted at 1000 on CPU 0, its last record at 1500,
 * the loss at 1800) and still open at the window's end (2100: windows of
 * 2000 ns from the first record, 100) is charged no further in the next
 * (in at 5000): 500 ns in all, as test_lost_cut's stream; it was charged
 * again from the next window's start (4100 to 5000: 1400 ns in all).
 */
static void test_lost_cut_windows(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1000, 101, 0, 'R', { KF(0), KF(3) } },
		{ PERF_RECORD_SAMPLE, 1500, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_LOST, 1800, 5, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 6000, 0, 0, 'R', { KF(0) } },
	};
	const struct profile_thread *t;
	struct profile *whole;
	uint64_t sum;

	(void)state;
	sw_window_tid = 101;
	sum = sw_windows(rec, sizeof(rec) / sizeof(rec[0]), 2000);
	whole = sw_profile(rec, sizeof(rec) / sizeof(rec[0]), 101, &t);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 500);
	assert_int_equal(sum, t->c.ns[CNT_PREEMPTED]);
	profile_free(whole);
}

/*
 * A window's waits wait for the CPUs silent since an earlier window too:
 * CPU 0's last record is at 1500, in the first window (windows of 2000 ns
 * from 100), and its LOST record at 3000. Thread 101, asleep on CPU 1 at
 * 2200-2600 and 2700-2800, in the second window, within the gap: nothing
 * charged, in the windows as in the whole recording. The second window
 * knew no record of CPU 0 and charged the first wait whole (400 ns) once
 * CPU 1 had a record after it.
 */
static void test_lost_cut_windows_silent_cpu(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 150, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1500, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 2200, 101, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 2600, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 2700, 101, 0, 'S', { KF(0), KF(5) } },
		{ PERF_RECORD_SAMPLE, 2800, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_LOST, 3000, 5, 0, 0, { 0 } },
		{ PERF_RECORD_SAMPLE, 3000, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 0, 'R', { KF(0) } },
	};
	static const uint32_t cpus[] = { 0, 1, 0, 1, 1, 1, 1, 0, 0, 1 };
	const struct profile_thread *t;
	struct profile *whole;
	uint64_t sum;

	(void)state;
	sw_window_tid = 101;
	sw_cpus = cpus;
	sum = sw_windows(rec, sizeof(rec) / sizeof(rec[0]), 2000);
	sw_cpus = cpus;
	whole = sw_profile(rec, sizeof(rec) / sizeof(rec[0]), 101, &t);
	assert_int_equal(t->c.ns[CNT_SLEEP], 0);
	assert_int_equal(t->c.count[CNT_SLEEP], 2);
	assert_int_equal(whole->meta.iv_lost_cut, 2);
	assert_int_equal(sum, 0);
	profile_free(whole);
}

/*
 * A thread that yields its CPU (sched_yield: libstdc++'s atomic waits,
 * spin locks) is switched out runnable, R, as a preempted one is: its
 * stack says it chose to wait, and the evidence decides what for as for a
 * wait in S - here none but the kernel's rules, whose word for a yield no
 * program's rule names is a wait for a CPU, preempted (a cooperative
 * scheduler's yield; e2e 71 checks libstdc++'s semaphore and barrier
 * spins, which its rules call sleep). Its time off CPU is still waiting
 * for a CPU (delay), not blocked. Out yielding at 1000, in at 5000;
 * preempted at 6000, in at 8000; a nanosleep at 9000, in at 12000.
 */
static void test_yield_is_a_wait(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 1000, 101, 0, 'R', { KF(0), KF(1), KF(2) } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 6000, 101, 0, 'R', { KF(0), KF(3) } },
		{ PERF_RECORD_SAMPLE, 8000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 9000, 101, 0, 'S', { KF(0), KF(4) } },
		{ PERF_RECORD_SAMPLE, 12000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 13000, 101, 0, 'R', { KF(0), KF(3) } },
		{ PERF_RECORD_SAMPLE, 14000, 0, 101, 'R', { KF(0) } },
	};
	const struct profile_thread *t;
	struct profile *p = sw_profile(rec, sizeof(rec) / sizeof(rec[0]), 101, &t);
	struct rules rs;

	(void)state;
	assert_int_equal(t->c.ns[CNT_SLEEP], 0);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 4000 + 2000 + 1000);
	assert_int_equal(t->c.count[CNT_PREEMPTED], 3);
	assert_int_equal(t->c.ns[CNT_TIMED_SLEEP], 3000);
	assert_int_equal(t->delay_ns, 4000 + 2000 + 1000);
	assert_int_equal(t->blocked_ns, 3000);
	profile_free(p);
	/* judged as a wait in S: a rule for S that names the yield decides
	 * it (as libstdc++'s do its atomic waits' spins), not the preemption */
	{
		char rules[] = "/tmp/perfport-test-rules-XXXXXX";
		int fd = mkstemp(rules);
		static const char text[] = "S do_sched_yield* lock\n";

		assert_true(fd >= 0);
		assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
		close(fd);
		sw_state_rules = rules;
		p = sw_profile(rec, sizeof(rec) / sizeof(rec[0]), 101, &t);
		sw_state_rules = NULL;
		unlink(rules);
		assert_int_equal(t->c.ns[CNT_LOCK], 4000);
		assert_int_equal(t->c.ns[CNT_PREEMPTED], 2000 + 1000);
		assert_int_equal(t->delay_ns, 4000 + 2000 + 1000);
		profile_free(p);
	}
	/* the "yield" lines: the C library's and the kernel's names */
	assert_int_equal(rules_setup(&rs, NULL), 0);
	assert_true(rules_is_yield(&rs, "__sched_yield"));
	assert_true(rules_is_yield(&rs, "sched_yield"));
	assert_true(rules_is_yield(&rs, "do_sched_yield"));
	assert_true(rules_is_yield(&rs, "__arm64_sys_sched_yield"));
	assert_false(rules_is_yield(&rs, "__schedule"));
	assert_false(rules_is_yield(&rs, "yield_to"));
	rules_free(&rs);
}

/*
 * Many CPUs, each seen early, advancing in a shuffled order: a closed wait
 * is held while some CPU seen has its last record before the wait's end,
 * so the held ones at the end are exactly those ending after the lowest
 * CPU's last record, and a loss on that CPU cuts them all. Thread 101
 * waits 10 ns every 20 ns on CPU 0 (1,000 waits from 1,000); CPU k of
 * 1..255 has a record at 100 + k and one more at a time of its own in
 * the waits' span, CPU 200 the earliest of them; then CPU 200 reports a
 * loss. A wrong minimum of the CPUs' last records holds too few (or too
 * many) waits, and the cut counts differ.
 */
static void test_lost_cut_many_cpus(void **state)
{
	enum { NCPU = 256, WAITS = 1000, LOW = 200 };
	const size_t n = 2 * (NCPU - 1) + 2 * WAITS + 4;
	struct sw_rec *rec = calloc(n, sizeof(*rec));
	uint32_t *cpus = calloc(n, sizeof(*cpus));
	uint64_t at[NCPU] = { 0 }, end = 1000 + 20 * WAITS;
	const struct profile_thread *t;
	struct profile *p;
	size_t k = 0, held = 0;

	(void)state;
	assert_non_null(rec);
	assert_non_null(cpus);
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 50, 0, 0, 'R', { KF(0) } };
	for (uint32_t c = 1; c < NCPU; c++) {
		cpus[k] = c;
		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 100 + c, 0, 0, 'R', { KF(0) } };
		/* a time of its own after wait 600's end, in a shuffled order */
		at[c] = 1000 + 20 * 600 + 15 + 20 * (1 + (c * 97) % (NCPU - 1));
	}
	at[LOW] = 1000 + 20 * 600 + 15;   /* moved down: the earliest */
	for (uint32_t c = 1; c < NCPU; c++)
		assert_true(c == LOW || at[c] > at[LOW]);
	for (size_t i = 0; i < WAITS; i++) {
		uint64_t out = 1000 + 20 * i;

		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, out, 101, 0, 'R', { KF(0), KF(3) } };
		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, out + 10, 0, 101, 'R', { KF(0) } };
		/* the CPUs whose own time falls in this wait's gap */
		for (uint32_t c = 1; c < NCPU; c++)
			if (at[c] > out + 10 && at[c] < out + 20) {
				cpus[k] = c;
				rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, at[c], 0, 0, 'R', { KF(0) } };
			}
		if (out + 10 > at[LOW])
			held++;
	}
	assert_int_equal(held, WAITS - 601);
	cpus[k] = LOW;
	rec[k++] = (struct sw_rec){ PERF_RECORD_LOST, end, 5, 0, 0, { 0 } };
	cpus[k] = LOW;
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, end, 0, 0, 'R', { KF(0) } };
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, end + 100, 0, 0, 'R', { KF(0) } };
	assert_true(k <= n);
	sw_cpus = cpus;
	p = sw_profile(rec, k, 101, &t);
	assert_int_equal(t->c.count[CNT_PREEMPTED], WAITS);
	assert_int_equal(p->meta.iv_lost_cut, held);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 10 * (WAITS - held));
	profile_free(p);
	free(cpus);
	free(rec);
}

/*
 * The cost of waiting for the CPUs seen: 1,024 CPUs seen once at the
 * start and silent after, 100,000 waits on CPU 0. Every wait is held (the
 * silent CPUs' last records come before it) until the 8,192 bound charges
 * the oldest, and each closed wait asks for the CPUs' earliest last
 * record: that must not be a pass over every CPU (it was: 2 x 1,024 reads
 * a wait). No timing is asserted; the counts are, and the test's run time
 * shows the cost (tests/unit's runner prints it).
 */
static void test_lost_cut_silent_cpus(void **state)
{
	enum { NCPU = 1024, WAITS = 100000, HELD = 8192 };
	const size_t n = NCPU + 2 * WAITS + 3;
	struct sw_rec *rec = calloc(n, sizeof(*rec));
	uint32_t *cpus = calloc(n, sizeof(*cpus));
	uint64_t end = 100000 + 20 * WAITS;
	const struct profile_thread *t;
	struct profile *p;
	size_t k = 0;

	(void)state;
	assert_non_null(rec);
	assert_non_null(cpus);
	for (uint32_t c = 0; c < NCPU; c++) {
		cpus[k] = c;
		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 100 + c, 0, 0, 'R', { KF(0) } };
	}
	for (size_t i = 0; i < WAITS; i++) {
		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 100000 + 20 * i, 101, 0, 'R',
					    { KF(0), KF(3) } };
		rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, 100010 + 20 * i, 0, 101, 'R',
					    { KF(0) } };
	}
	cpus[k] = 7;
	rec[k++] = (struct sw_rec){ PERF_RECORD_LOST, end, 5, 0, 0, { 0 } };
	cpus[k] = 7;
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, end, 0, 0, 'R', { KF(0) } };
	rec[k++] = (struct sw_rec){ PERF_RECORD_SAMPLE, end + 100, 0, 0, 'R', { KF(0) } };
	assert_int_equal(k, n);
	sw_cpus = cpus;
	p = sw_profile(rec, n, 101, &t);
	assert_int_equal(t->c.count[CNT_PREEMPTED], WAITS);
	assert_int_equal(p->meta.iv_lost_cut, HELD);
	assert_int_equal(t->c.ns[CNT_PREEMPTED], 10 * (WAITS - HELD));
	profile_free(p);
	free(cpus);
	free(rec);
}

/* The profile of @rec with the user's rules @text (thread 101's entry in *@t). */
static struct profile *sw_profile_rules(const struct sw_rec *rec, size_t n, const char *text,
					const struct profile_thread **t)
{
	char rules[] = "/tmp/perfport-test-rules-XXXXXX";
	int fd = mkstemp(rules);
	struct profile *p;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	sw_state_rules = rules;
	p = sw_profile(rec, n, 101, t);
	sw_state_rules = NULL;
	unlink(rules);
	return p;
}

/*
 * FUNCTION^CALLER: CALLER is FUNCTION's direct caller, the next frame
 * out, not any frame of the stack (FUNCTION&ALSO). Thread 101 sleeps
 * 1,000 ns in do_nanosleep called by futex_wait, then 2,000 ns in
 * do_nanosleep called by irqentry_exit, which futex_wait called: only the
 * first is the rule's; the second is the kernel's (a nanosleep:
 * timed-sleep). With '&' both are; named the other way round, neither.
 */
static void test_rule_caller(void **state)
{
	static const struct sw_rec rec[] = {
		{ PERF_RECORD_SAMPLE, 100, 0, 0, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 1000, 101, 0, 'S', { KF(0), KF(4), KF(5) } },
		{ PERF_RECORD_SAMPLE, 2000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 3000, 101, 0, 'S', { KF(0), KF(4), KF(3), KF(5) } },
		{ PERF_RECORD_SAMPLE, 5000, 0, 101, 'R', { KF(0) } },
		{ PERF_RECORD_SAMPLE, 6000, 0, 0, 'R', { KF(0) } },
	};
	const size_t n = sizeof(rec) / sizeof(rec[0]);
	const struct profile_thread *t;
	struct profile *p;

	(void)state;
	p = sw_profile_rules(rec, n, "S do_nanosleep^futex_wait lock\n", &t);
	assert_int_equal(t->c.ns[CNT_LOCK], 1000);
	assert_int_equal(t->c.ns[CNT_TIMED_SLEEP], 2000);
	profile_free(p);
	p = sw_profile_rules(rec, n, "S do_nanosleep&futex_wait lock\n", &t);
	assert_int_equal(t->c.ns[CNT_LOCK], 3000);
	profile_free(p);
	p = sw_profile_rules(rec, n, "S futex_wait^do_nanosleep lock\n", &t);
	assert_int_equal(t->c.ns[CNT_LOCK], 0);
	assert_int_equal(t->c.ns[CNT_TIMED_SLEEP], 3000);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_finish),
		cmocka_unit_test(test_tree_intern),
		cmocka_unit_test(test_tree_by_line),
		cmocka_unit_test(test_rules_builtin),
		cmocka_unit_test(test_rules_parse),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test(test_offcpu_time),
		cmocka_unit_test(test_first_run),
		cmocka_unit_test(test_sampled_run),
		cmocka_unit_test(test_state_per_switch),
		cmocka_unit_test(test_yield_is_a_wait),
		cmocka_unit_test(test_fork_wait),
		cmocka_unit_test(test_exit_end),
		cmocka_unit_test(test_lost_cut),
		cmocka_unit_test(test_lost_cut_no_cpu),
		cmocka_unit_test(test_lost_cut_closed),
		cmocka_unit_test(test_lost_cut_run),
		cmocka_unit_test(test_lost_cut_held_bound),
		cmocka_unit_test(test_lost_cut_windows),
		cmocka_unit_test(test_lost_cut_windows_silent_cpu),
		cmocka_unit_test(test_released_task),
		cmocka_unit_test(test_mode_key),
		cmocka_unit_test(test_syscall_evidence),
		cmocka_unit_test(test_syscall_uring),
		cmocka_unit_test(test_stacks_made_while_reading),
		cmocka_unit_test(test_stack_two_counters),
		cmocka_unit_test(test_lost_cut_many_cpus),
		cmocka_unit_test(test_lost_cut_silent_cpus),
		cmocka_unit_test(test_rule_caller),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
