/* SPDX-License-Identifier: MIT */
/*
 * test_dwmem.c - what naming leaves mapped of a module's debug
 * information: the pages of the file that a walk read are let go of
 * (dwpages.c), and read again as they were.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/symbols/priv.h"

/* How many pages of [@p, @p + @len) are mapped in this process now. */
static size_t pages_present(const void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p / (uintptr_t)page, hi = ((uintptr_t)p + len - 1) / (uintptr_t)page;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	assert_true(fd >= 0);
	for (uintptr_t pg = lo; pg <= hi; pg++) {
		uint64_t e = 0;

		assert_int_equal(pread(fd, &e, sizeof(e), (off_t)(pg * sizeof(e))), sizeof(e));
		n += (e >> 63) & 1;
	}
	close(fd);
	return n;
}

/* Every DIE of every unit of @dbg read (names and tags), summed up. */
static uint64_t dies_digest(Dwarf *dbg)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	uint64_t sum = 0;

	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Die stack[64];
		int depth = 0;

		if (dwarf_offdie(dbg, off + hsize, &die)) {
			stack[depth++] = die;
			while (depth) {
				Dwarf_Die d = stack[--depth], child;
				const char *name = dwarf_diename(&d);

				sum = sum * 31 + (uint64_t)dwarf_tag(&d);
				for (; name && *name; name++)
					sum = sum * 31 + (unsigned char)*name;
				if (dwarf_child(&d, &child) == 0 && depth < 62)
					stack[depth++] = child;
				if (dwarf_siblingof(&d, &child) == 0 && depth < 63 && d.addr != die.addr)
					stack[depth++] = child;
			}
		}
		off = next;
	}
	return sum;
}

/*
 * dwpages_drop() lets go of every page of a module's file that reading it
 * mapped in this process (libelf's private mapping of the file), and
 * what is read after reads as before: mapped again from the page cache.
 */
static void test_debug_pages_dropped(void **state)
{
	static const Dwfl_Callbacks cb = {
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf *dbg;
	size_t size = 0, before;
	const char *base;
	uint64_t sum;

	(void)state;
	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, "self", "/proc/self/exe", -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	dbg = dwfl_module_getdwarf(mod, &bias);
	assert_non_null(dbg);
	base = elf_rawfile(dwarf_getelf(dbg), &size);
	assert_non_null(base);
	sum = dies_digest(dbg);
	before = pages_present(base, size);
	print_message("%zu of %zu pages of this binary's image mapped after reading its DIEs\n",
		      before, (size + 4095) / 4096);
	assert_true(before > 0);
	dwpages_slack = 0; /* at every call */
	dwpages_drop(dbg);
	assert_int_equal(pages_present(base, size), 0);
	assert_true(dies_digest(dbg) == sum);
	assert_true(pages_present(base, size) > 0);
	dwfl_end(dwfl);
}

/*
 * dwpages_drop() lets go only once the process's file-backed resident
 * memory grew by dwpages_slack since the thread last did: pages read
 * again after a drop stay while that is not reached, and go at a call
 * after it is (a slack of 0: at once).
 */
static void test_debug_pages_kept_within_slack(void **state)
{
	static const Dwfl_Callbacks cb = {
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf *dbg;
	size_t size = 0, again;
	const char *base;
	uint64_t sum;

	(void)state;
	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, "self", "/proc/self/exe", -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	dbg = dwfl_module_getdwarf(mod, &bias);
	assert_non_null(dbg);
	base = elf_rawfile(dwarf_getelf(dbg), &size);
	assert_non_null(base);
	sum = dies_digest(dbg);
	dwpages_slack = 0;
	dwpages_drop(dbg);          /* the thread's baseline: after a drop */
	assert_int_equal(pages_present(base, size), 0);
	assert_true(dies_digest(dbg) == sum);
	again = pages_present(base, size);
	assert_true(again > 0);
	/* read again: far less than the slack */
	dwpages_slack = (size_t)1 << 40;
	dwpages_drop(dbg);
	assert_true(pages_present(base, size) >= again); /* none let go (its header read) */
	dwpages_slack = 0;
	dwpages_drop(dbg);
	assert_int_equal(pages_present(base, size), 0);
	dwpages_slack = 4u << 20;
	dwfl_end(dwfl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debug_pages_dropped),
		cmocka_unit_test(test_debug_pages_kept_within_slack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
