/* SPDX-License-Identifier: MIT */
/*
 * test_aranges.c - a file's unit at an address from perfport's own table
 * of .debug_aranges (aranges.c) against libdwfl's dwfl_module_addrdie(),
 * the oracle, and the sections it leaves to libdwfl.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <elfutils/libdwfl.h>
#include "../../src/symbols/priv.h"

/* Every address of @mod's [lo, hi) and past it: the same unit (or none)
 * as libdwfl's. Return: the addresses a unit was found at (0: its file
 * has no .debug_aranges, when @may_lack). */
static size_t compare_module(Dwfl_Module *mod, bool may_lack)
{
	Dwarf_Addr lo = 0, hi = 0, dbias = 0;
	Dwarf *dw = dwfl_module_getdwarf(mod, &dbias);
	struct aranges *a;
	size_t found = 0;

	assert_non_null(dw);
	a = aranges_read(dw);
	if (!a && may_lack)
		return 0;
	assert_non_null(a); /* read here, not left to libdwfl */
	assert_non_null(dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL));
	for (Dwarf_Addr addr = lo ? lo - 64 : 0; addr < hi + 64; addr++) {
		Dwarf_Addr bias = 0;
		Dwarf_Die *want = dwfl_module_addrdie(mod, addr, &bias), *got = NULL;

		assert_int_equal(aranges_find(a, dw, addr - dbias, &got), 0);
		assert_int_equal(bias, dbias);
		assert_true(!got == !want);
		if (got) {
			assert_int_equal(dwarf_dieoffset(got), dwarf_dieoffset(want));
			assert_ptr_equal(got->cu, want->cu);
			found++;
		}
	}
	aranges_free(a);
	return found;
}

/* find_debuginfo for libc's debug file: perfport's uncompressed copy (its
 * sections read in place), made in the test's own cache */
static int uncompressed_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &id, &vaddr);

	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink_file;
	(void)debuglink_crc;
	return n > 0 ? sym_debug_uncompressed(id, (size_t)n, debuginfo_file_name) : -1;
}

/*
 * This binary's units, and libc's from its distribution debug file where
 * it is installed: at every address of their code and a little around it,
 * the unit found is the one dwfl_module_addrdie() finds, its DIE in the
 * same unit of the same Dwarf, and none where it finds none (gaps between
 * one unit's ranges are that unit's, as libdwfl has them).
 */
static void test_units_as_libdwfl(void **state)
{
	static const Dwfl_Callbacks self_cb = {
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	static const Dwfl_Callbacks libc_cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = uncompressed_debuginfo,
	};
	static const char *const libcs[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/aarch64-linux-gnu/libc.so.6" };
	char cache[] = "/tmp/test_aranges.XXXXXX", cmd[128];
	Dwfl *dwfl = dwfl_begin(&self_cb);
	Dwfl_Module *mod;
	size_t found, self_found, libc_found = 0;

	(void)state;
	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, "self", "/proc/self/exe", -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	/* libdwfl finds units in .debug_aranges only (0.188): a test built by
	 * clang has none unless asked (-gdwarf-aranges) */
	self_found = compare_module(mod, true);
	dwfl_end(dwfl);
	assert_true(!self_found || self_found > 10000);

	assert_non_null(mkdtemp(cache));
	setenv("XDG_CACHE_HOME", cache, 1);
	for (size_t i = 0; i < sizeof(libcs) / sizeof(libcs[0]); i++) {
		Dwarf_Addr bias;

		if (access(libcs[i], R_OK))
			continue;
		dwfl = dwfl_begin(&libc_cb);
		assert_non_null(dwfl);
		dwfl_report_begin(dwfl);
		mod = dwfl_report_elf(dwfl, "libc", libcs[i], -1, 0, false);
		dwfl_report_end(dwfl, NULL, NULL);
		if (mod && dwfl_module_getdwarf(mod, &bias)) {
			found = compare_module(mod, false);
			print_message("%s: a unit at %zu addresses\n", libcs[i], found);
			assert_true(found > 100000);
			libc_found += found;
		}
		dwfl_end(dwfl);
	}
	unsetenv("XDG_CACHE_HOME");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	assert_int_equal(system(cmd), 0);
	if (!self_found && !libc_found)
		skip();
}

/* A set of ranges of one unit (@cu: its header's offset), 64-bit. */
static size_t put_set(unsigned char *p, uint32_t cu, const uint64_t (*r)[2], size_t n,
		      uint16_t version, bool trailing)
{
	uint32_t len = (uint32_t)(2 + 4 + 1 + 1 + 4 + (n + 1) * 16 + (trailing ? 16 : 0));
	unsigned char *q = p;

	memcpy(q, &len, 4);
	memcpy(q + 4, &version, 2);
	memcpy(q + 6, &cu, 4);
	q[10] = 8;
	q[11] = 0;
	memset(q + 12, 0, 4); /* to a multiple of 16 */
	q += 16;
	for (size_t i = 0; i < n; i++, q += 16)
		memcpy(q, r[i], 16);
	memset(q, 0, 16);
	q += 16;
	if (trailing) {
		memset(q, 0xab, 16);
		q += 16;
	}
	return (size_t)(q - p);
}

/*
 * libdwfl's rule on a section made here: the gaps between a unit's runs
 * are the unit before's, past the last range's end (included) and before
 * the first start there is none. Left to libdwfl: two units' ranges at
 * one start (libdw's qsort() orders them), a set with bytes after its end
 * marker, a version libdw does not read, an offset past .debug_info.
 */
static void test_sections_left_to_libdwfl(void **state)
{
	static const uint64_t one[][2] = { { 0x1000, 0x100 }, { 0x1200, 0x10 } };
	static const uint64_t two[][2] = { { 0x1100, 0x20 }, { 0x3000, 0x8 } };
	static const uint64_t tie[][2] = { { 0x1000, 0x40 } };
	unsigned char buf[512];
	struct aranges *a;
	uint64_t cu = 0;
	size_t n;

	(void)state;
	n = put_set(buf, 0, one, 2, 2, false);
	n += put_set(buf + n, 0x80, two, 2, 2, false);
	a = aranges_parse(buf, n, 0x1000);
	assert_non_null(a);
	assert_int_equal(aranges_count(a), 4);
	assert_false(aranges_unit(a, 0xfff, &cu));
	assert_true(aranges_unit(a, 0x1000, &cu) && cu == 0);
	assert_true(aranges_unit(a, 0x1100, &cu) && cu == 0x80);
	/* a gap: the run before's, though only unit 0 covers 0x1200 */
	assert_true(aranges_unit(a, 0x1150, &cu) && cu == 0x80);
	assert_true(aranges_unit(a, 0x1200, &cu) && cu == 0);
	assert_true(aranges_unit(a, 0x2fff, &cu) && cu == 0);
	assert_true(aranges_unit(a, 0x3000, &cu) && cu == 0x80);
	assert_true(aranges_unit(a, 0x3008, &cu) && cu == 0x80); /* the end, included */
	assert_false(aranges_unit(a, 0x3009, &cu));
	aranges_free(a);

	n = put_set(buf, 0, one, 2, 2, false);
	n += put_set(buf + n, 0x80, tie, 1, 2, false);
	assert_null(aranges_parse(buf, n, 0x1000));
	n = put_set(buf, 0, one, 2, 2, true);
	assert_null(aranges_parse(buf, n, 0x1000));
	n = put_set(buf, 0, one, 2, 3, false);
	assert_null(aranges_parse(buf, n, 0x1000));
	n = put_set(buf, 0x2000, one, 2, 2, false);
	assert_null(aranges_parse(buf, n, 0x1000));
	/* cut short */
	n = put_set(buf, 0, one, 2, 2, false);
	assert_null(aranges_parse(buf, n - 8, 0x1000));
	/* an empty section: an empty table */
	a = aranges_parse(buf, 0, 0x1000);
	assert_non_null(a);
	assert_false(aranges_unit(a, 0x1000, &cu));
	aranges_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_as_libdwfl),
		cmocka_unit_test(test_sections_left_to_libdwfl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
