/* SPDX-License-Identifier: MIT */
/*
 * test_lineidx.c - where the line index has libdw parse a unit's line
 * program (lineidx.c): a file's first tables in the module's own Dwarf,
 * the rest in one of the index's own, the lines the same either way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <elfutils/libdwfl.h>
#include "../../src/symbols/priv.h"

/*
 * At every address of this binary's code, with room for 64 KiB of libdw's
 * tables in the module's Dwarf: the first units' tables are parsed there
 * (their rows come back as fresh, for sym_trim() to count), until they
 * pass the room; every unit after is parsed in the index's own Dwarf (no
 * fresh rows), and the line found is dwfl_module_getsrc()'s throughout.
 */
static void test_first_tables_in_module(void **state)
{
	static const Dwfl_Callbacks cb = {
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	const size_t room = 64u << 10, row_bytes = 48;
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod;
	struct line_index *x = NULL;
	struct strtab names = { 0 };
	Dwarf_Addr lo = 0, hi = 0;
	size_t with_line = 0, units = 0, in_module = 0, in_own = 0, fresh_total = 0;
	size_t last_fresh = 0;
	bool own_seen = false;

	(void)state;
	assert_non_null(dwfl);
	lineidx_module_max = room;
	mod = dwfl_report_offline(dwfl, "self", "/proc/self/exe", -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	assert_non_null(dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL));
	for (Dwarf_Addr a = lo; a < hi; a++) {
		Dwarf_Addr bias = 0;
		Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias);
		Dwfl_Line *l = dwfl_module_getsrc(mod, a);
		const char *file = NULL, *want = NULL;
		unsigned line = 0;
		int want_line = 0;
		size_t fresh = 0, before = lineidx_bytes(x);
		bool found = cu && lineidx_find(&x, NULL, 0, &names, cu, a - bias, &file, &line,
						&fresh);

		units += cu != NULL;
		if (lineidx_bytes(x) != before) { /* a unit's table copied now */
			if (fresh) {
				/* never back in the module's Dwarf once past its room */
				assert_false(own_seen);
				in_module++;
				fresh_total += fresh;
				last_fresh = fresh;
			} else {
				own_seen = true;
				in_own++;
			}
		}
		if (l)
			want = dwfl_lineinfo(l, NULL, &want_line, NULL, NULL, NULL);
		if (!want) {
			assert_true(!found || !file);
			continue;
		}
		assert_true(found);
		assert_non_null(file);
		assert_string_equal(file, want);
		assert_int_equal(line, want_line > 0 ? (unsigned)want_line : 0);
		with_line++;
	}
	lineidx_free(x);
	strtab_free(&names);
	dwfl_end(dwfl);
	lineidx_module_max = 1u << 20;
	/* libdw, the oracle, looks units up in .debug_aranges only (0.188) */
	if (!units)
		skip();
	print_message("%zu units in the module's Dwarf (%zu rows), %zu in lineidx's own\n",
		      in_module, fresh_total, in_own);
	assert_true(with_line > 1000);
	assert_true(in_module > 0 && in_own > 0);
	/* past the room only by the last unit parsed there */
	assert_true((fresh_total - last_fresh) * row_bytes < room);
	assert_true(fresh_total * row_bytes >= room);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_tables_in_module),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
