/* SPDX-License-Identifier: MIT */
/*
 * test_machine.c - the machine's namespaces: one path in two mount
 * namespaces is two files, each knowing a process of its namespace; a
 * JIT's dump names its pid in its pid namespace; children inherit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "../../src/machine/machine.h"

static const struct perf_header_info hdr; /* no build ids */

static void ns_event(struct machine *m, uint32_t pid, uint64_t pid_ino, uint64_t mnt_ino)
{
	struct perf_event ev = { .type = PERF_RECORD_NAMESPACES };

	ev.u.ns.pid = ev.u.ns.tid = pid;
	ev.u.ns.pid_dev = ev.u.ns.mnt_dev = 4;
	ev.u.ns.pid_ino = pid_ino;
	ev.u.ns.mnt_ino = mnt_ino;
	assert_int_equal(machine_event(m, &ev), 0);
}

static const struct dso *mmap_event(struct machine *m, uint32_t pid, uint64_t start,
				    const char *path)
{
	struct perf_event ev = { .type = PERF_RECORD_MMAP2 };
	struct raw_frame f;
	uint64_t addr = start + 0x10;

	ev.u.mmap.pid = ev.u.mmap.tid = pid;
	ev.u.mmap.start = start;
	ev.u.mmap.len = 0x1000;
	ev.u.mmap.prot = PROT_READ | PROT_EXEC;
	ev.u.mmap.filename = path;
	assert_int_equal(machine_event(m, &ev), 0);
	assert_int_equal(machine_user_frames(m, pid, &addr, 1, &f, 1), 1);
	assert_non_null(f.proc);
	assert_int_equal(f.proc->pid, pid);
	return f.dso;
}

static void fork_event(struct machine *m, uint32_t pid, uint32_t ppid)
{
	struct perf_event ev = { .type = PERF_RECORD_FORK };

	ev.u.task.pid = ev.u.task.tid = pid;
	ev.u.task.ppid = ev.u.task.ptid = ppid;
	assert_int_equal(machine_event(m, &ev), 0);
}

static void test_mount_namespaces(void **state)
{
	struct machine *m = machine_new(&hdr);
	const struct dso *host, *ctr, *again, *child;
	const struct mount_ns *const *mns;
	size_t nr;

	(void)state;
	assert_non_null(m);
	ns_event(m, 1, 0xeffffffc, 0xeffffff8);       /* init: the host */
	ns_event(m, 200, 0xf0000151, 0xf0000150);     /* a container */
	host = mmap_event(m, 1, 0x400000, "/usr/bin/app");
	ctr = mmap_event(m, 200, 0x400000, "/usr/bin/app");
	assert_ptr_not_equal(host, ctr);               /* same path, two files */
	assert_int_equal(host->mapper->pid, 1);
	assert_int_equal(ctr->mapper->pid, 200);
	assert_true(host->mapper->mnt->host);
	assert_false(ctr->mapper->mnt->host);
	assert_true(ctr->mapper->other_pid_ns);
	assert_false(host->mapper->other_pid_ns);

	/* a child of the container's process is in its namespaces, and maps
	 * the container's file, not the host's */
	fork_event(m, 201, 200);
	child = mmap_event(m, 201, 0x500000, "/usr/bin/app");
	assert_ptr_equal(child, ctr);
	again = mmap_event(m, 1, 0x500000, "/usr/bin/app");
	assert_ptr_equal(again, host);

	mns = machine_mount_ns(m, &nr);
	assert_int_equal(nr, 2);
	assert_int_equal(mns[1]->nr, 1);               /* pid 200 recorded in it */
	assert_int_equal(mns[1]->pids[0], 200);
	machine_free(m);
}

static void test_jitdump_nspid(void **state)
{
	struct machine *m = machine_new(&hdr);
	struct raw_frame f;
	uint64_t addr = 0x7000010;

	(void)state;
	assert_non_null(m);
	ns_event(m, 1, 0xeffffffc, 0xeffffff8);
	ns_event(m, 300, 0xf0000151, 0xf0000150);
	mmap_event(m, 300, 0x6000000, "/tmp/jit-7.dump");
	mmap_event(m, 300, 0x7000000, "//anon");
	assert_int_equal(machine_user_frames(m, 300, &addr, 1, &f, 1), 1);
	assert_non_null(f.jitdump);
	assert_string_equal(f.jitdump->path, "/tmp/jit-7.dump");
	assert_int_equal(f.proc->nspid, 7);

	/* not a dump: no pid taken from it */
	mmap_event(m, 1, 0x6000000, "/tmp/jit-x.dump");
	mmap_event(m, 1, 0x6100000, "/tmp/jit-0.dump");
	mmap_event(m, 1, 0x7000000, "//anon");
	assert_int_equal(machine_user_frames(m, 1, &addr, 1, &f, 1), 1);
	assert_null(f.jitdump);
	assert_int_equal(f.proc->nspid, 0);
	machine_free(m);
}

#define PAGES 2048

static uint32_t lcg(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 8;
}

/* Every page of the space against a painter's model: the newest map
 * covering it names it, at its own file offset. */
static void check_pages(struct machine *m, const int *owner, const uint64_t *start,
			const uint64_t *pgoff, char paths[][32])
{
	for (uint64_t pg = 0; pg < PAGES; pg++) {
		uint64_t addr = 0x10000000 + pg * 0x1000 + 0x10;
		struct raw_frame f;

		assert_int_equal(machine_user_frames(m, 42, &addr, 1, &f, 1), 1);
		if (owner[pg] < 0) {
			assert_null(f.dso);
			continue;
		}
		assert_non_null(f.dso);
		assert_string_equal(f.dso->path, paths[owner[pg] % 8]);
		assert_int_equal(f.offset, addr - start[owner[pg]] + pgoff[owner[pg]]);
	}
}

/* Maps landing between others, overlapping, in any order (issue 21: the
 * array was copied at each one): lookups stay right while they arrive and
 * after they are merged, and the merged array is sorted and disjoint. */
static void test_maps_any_order(void **state)
{
	struct machine *m = machine_new(&hdr);
	static int owner[PAGES];
	static uint64_t start[4000], pgoff[4000];
	char paths[8][32];
	uint32_t seed = 7;
	const struct map *maps;
	size_t nr;
	uint64_t gen;

	(void)state;
	assert_non_null(m);
	for (int i = 0; i < 8; i++)
		snprintf(paths[i], sizeof(paths[i]), "/lib/l%d.so", i);
	for (int i = 0; i < PAGES; i++)
		owner[i] = -1;
	for (int i = 0; i < 4000; i++) {
		struct perf_event ev = { .type = PERF_RECORD_MMAP2 };
		uint64_t pg = lcg(&seed) % PAGES, len = 1 + lcg(&seed) % (i % 10 == 0 ? 200 : 6);

		if (pg + len > PAGES)
			len = PAGES - pg;
		start[i] = 0x10000000 + pg * 0x1000;
		pgoff[i] = (uint64_t)(lcg(&seed) % 64) * 0x1000;
		ev.u.mmap.pid = ev.u.mmap.tid = 42;
		ev.u.mmap.start = start[i];
		ev.u.mmap.len = len * 0x1000;
		ev.u.mmap.pgoff = pgoff[i];
		ev.u.mmap.prot = PROT_READ | PROT_EXEC;
		ev.u.mmap.filename = paths[i % 8];
		assert_int_equal(machine_event(m, &ev), 0);
		for (uint64_t k = pg; k < pg + len; k++)
			owner[k] = i;
		if (i % 499 == 0)
			check_pages(m, owner, start, pgoff, paths);
	}
	check_pages(m, owner, start, pgoff, paths);
	assert_int_equal(machine_maps_settle(m), 0);
	maps = machine_process_maps(m, 42, &nr, &gen);
	assert_true(nr > 0);
	for (size_t i = 1; i < nr; i++) {
		assert_true(maps[i - 1].start < maps[i - 1].end);
		assert_true(maps[i - 1].end <= maps[i].start);
	}
	check_pages(m, owner, start, pgoff, paths);
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maps_any_order),
		cmocka_unit_test(test_mount_namespaces),
		cmocka_unit_test(test_jitdump_nspid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
