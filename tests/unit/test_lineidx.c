/* SPDX-License-Identifier: MIT */
/*
 * test_lineidx.c - where the line index has libdw parse a unit's line
 * program (lineidx.c): a file's first tables in the module's own Dwarf,
 * the rest in one of the index's own, the lines the same either way; and
 * a unit's line table read by dwline.c is libdw's, row for row.
 */
#include <fcntl.h>
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
#include "dwhand.h"

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
	lineidx_by_libdw = true;        /* where libdw parses, this test's subject */
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
	lineidx_by_libdw = false;
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

/* Unit @cu: dwline_read()'s table is libdw's (rows: address, line, file,
 * end of sequence, in order; the files' names); *@rows counts its rows.
 * Return: whether dwline.c read it (else it is left to libdw). */
static bool unit_as_libdw(Dwarf_Die *cu, size_t *rows)
{
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t n = 0, nf = 0;
	struct dwline mine;

	if (dwline_read(cu, &mine) != 0)
		return false;
	assert_int_equal(dwarf_getsrclines(cu, &lines, &n), 0);
	assert_int_equal(dwarf_getsrcfiles(cu, &files, &nf), 0);
	assert_int_equal(mine.nrows, n);
	assert_int_equal(mine.nnames, nf);
	for (size_t i = 0; i < nf; i++)
		assert_string_equal(mine.names[i], dwarf_filesrc(files, i, NULL, NULL));
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Files *lf;
		Dwarf_Addr a;
		size_t fi;
		bool end;
		int ln;

		assert_non_null(l);
		assert_int_equal(dwarf_lineaddr(l, &a), 0);
		assert_int_equal(dwarf_lineno(l, &ln), 0);
		assert_int_equal(dwarf_lineendsequence(l, &end), 0);
		assert_int_equal(dwarf_line_file(l, &lf, &fi), 0);
		assert_int_equal(mine.rows[i].addr, a);
		assert_int_equal(mine.rows[i].line, ln);
		assert_int_equal(mine.rows[i].file, fi);
		assert_int_equal(mine.rows[i].end, end);
	}
	*rows += n;
	dwline_free(&mine);
	return true;
}

/* Every unit of @path as unit_as_libdw(). *@units, *@read: how many, and
 * how many dwline.c read (not left to libdw). */
static bool tables_as_libdw(const char *path, size_t *units, size_t *read, size_t *rows)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dbg = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dbg) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		assert_non_null(dwarf_offdie(dbg, off + hsize, &cu));
		off = next;
		(*units)++;
		*read += unit_as_libdw(&cu, rows);
	}
	dwarf_end(dbg);
	close(fd);
	return true;
}

/*
 * dwline.c's tables against libdw's over every unit of this test's
 * program and of perfport beside it (DWARF 5 of gcc or clang, the build's
 * compiler), and of the files PERFPORT_TEST_DWARF names (':' between; to
 * try other producers and DWARF 4 by hand): the same rows in the same
 * order, the same names; every unit of the two programs is read (none
 * left to libdw).
 */
static void test_tables_as_libdw(void **state)
{
	char self[4096], tool[4200], *extra = getenv("PERFPORT_TEST_DWARF");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t units = 0, read = 0, rows = 0;
	char *slash;

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	assert_true(tables_as_libdw(self, &units, &read, &rows));
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = 0;
	snprintf(tool, sizeof(tool), "%s/../perfport", self);
	if (!tables_as_libdw(tool, &units, &read, &rows))
		print_message("no %s: this program's units only\n", tool);
	print_message("%zu units, %zu read (%zu rows)\n", units, read, rows);
	assert_true(units > 5);
	assert_int_equal(read, units);
	assert_true(rows > 1000);
	if (extra) {
		char *list = strdup(extra), *save = NULL;

		assert_non_null(list);
		for (char *f = strtok_r(list, ":", &save); f; f = strtok_r(NULL, ":", &save)) {
			size_t u = 0, r = 0, k = 0;

			assert_true(tables_as_libdw(f, &u, &r, &k));
			print_message("%s: %zu units, %zu read (%zu rows)\n", f, u, r, k);
		}
		free(list);
	}
}

/*
 * Bad line programs (dwhand.h: a header length past the program's end,
 * one ending before the header's fixed fields, a DW_FORM_line_strp offset
 * past .debug_line_str, a ULEB of 20 bytes that libdw reads as ten, and
 * the unit's other breaks) are left to libdw by dwline.c, or read as libdw
 * reads them; a lookup comes back either way. The unit made right is read
 * by dwline.c: 0x1000-0x1010 line 1, 0x1010-0x1080 line 3 of /src/a.c.
 */
static void test_bad_line_programs(void **state)
{
	(void)state;
	for (int b = 0; b < DWH_NBREAK; b++) {
		struct dwhand h;
		Dwarf *dbg = dwhand_open(&h, (enum dwhand_break)b);
		Dwarf_Off off = 0, next;
		size_t hsize, units = 0, rows = 0;

		assert_non_null(dbg);
		while (units < 4 && dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			static const uint64_t at[] = { 0x1000, 0x100f, 0x1010, 0x107f, 0x1080 };
			static const unsigned want[] = { 1, 1, 3, 3, 0 };
			struct line_index *x = NULL;
			Dwarf_Die cu;
			bool read;

			units++;
			if (!dwarf_offdie(dbg, off + hsize, &cu))
				break;
			off = next;
			read = unit_as_libdw(&cu, &rows);
			if (b == DWH_NONE || b == DWH_DEEP)
				assert_true(read && rows == 3);
			if (b == DWH_HLEN_LONG || b == DWH_HLEN_SHORT || b == DWH_STRP_PAST ||
			    b == DWH_LEB20)
				assert_false(read);
			for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
				const char *file = NULL;
				unsigned line = 0;
				size_t fresh;
				bool found = lineidx_find(&x, NULL, 0, NULL, &cu, at[i], &file, &line,
							  &fresh);

				if (b == DWH_NONE || b == DWH_DEEP) {
					assert_int_equal(found, want[i] != 0);
					assert_int_equal(line, want[i]);
					if (found)
						assert_string_equal(file, "/src/a.c");
				}
			}
			lineidx_end_dwarf(x);
			lineidx_free(x);
		}
		print_message("break %d: %zu units, %zu rows read by dwline.c\n", b, units, rows);
		dwhand_close(&h);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_tables_in_module),
		cmocka_unit_test(test_tables_as_libdw),
		cmocka_unit_test(test_bad_line_programs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
