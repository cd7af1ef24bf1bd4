/* SPDX-License-Identifier: MIT */
/*
 * test_symtab.c - a file's symbol table (symtab.c): which alias names an
 * address, and the names it makes clean while it is built.
 */
#include <gelf.h>
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

static const struct perf_header_info hdr; /* no build ids */

/* @st's file's functions at @addr (module addresses), their names clean:
 * the best by fsym_cmp() into *@best. Return: how many there are. */
static size_t best_alias(struct symbolizer *s, struct dso_state *st, uint64_t addr,
			 struct fsym *best)
{
	int n = dwfl_module_getsymtab(st->mod);
	size_t k = 0;

	for (int i = 1; i < n; i++) {
		GElf_Addr a;
		GElf_Word shndx;
		GElf_Sym sym;
		const char *name = dwfl_module_getsym_info(st->mod, i, &sym, &a, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		struct fsym f;

		if (a != addr || !name || !*name || !sym.st_value || shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		f = (struct fsym){ .addr = a, .size = sym.st_size,
				   .name = symtab_clean_name(s, name),
				   .bind = (uint8_t)GELF_ST_BIND(sym.st_info), .clean = true };
		assert_non_null(f.name);
		if (!k++ || fsym_cmp(&f, best) < 0)
			*best = f;
	}
	return k;
}

/*
 * libc's table (a C library of many aliases: __GI_*, weak names, and
 * versioned ones): at every address with two functions or more, the one
 * kept is the best by their clean names, as when each alias was made
 * clean to be compared; and only aliases whose names change when made
 * clean were made clean (interned) while it was built: a group of names
 * clean as they are is left as fsym_sort() ordered it.
 */
static void test_aliases_by_clean_names(void **state)
{
	static const char *const libcs[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/lib/aarch64-linux-gnu/libc.so.6" };
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct symbolizer *s;
	struct dso_state st = { 0 };
	size_t groups = 0, clean = 0, interned;
	const char *path = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(libcs) / sizeof(libcs[0]) && !path; i++)
		if (!access(libcs[i], R_OK))
			path = libcs[i];
	if (!path)
		skip();
	s = sym_new(&o, &hdr);
	assert_non_null(s);
	st.path = path;
	assert_non_null(dso_report(&st, "libc"));
	sym_build_symtab(s, &st);
	assert_true(st.nr_syms > 1000);
	interned = s->strings.nr;
	for (size_t i = 0; i < st.nr_syms; i++)
		clean += st.syms[i].clean;
	for (size_t i = 0; i < st.nr_syms; i++) {
		struct fsym best;

		if (st.syms[i].label || best_alias(s, &st, st.syms[i].addr, &best) < 2)
			continue;
		groups++;
		assert_string_equal(symtab_name(s, &st.syms[i]), best.name);
	}
	print_message("%zu functions, %zu of them with aliases; %zu names made clean, %zu interned\n",
		      st.nr_syms, groups, clean, interned);
	assert_true(groups > 100);
	/* before, every alias of a group was made clean: more than groups */
	assert_true(interned < groups);
	sym_dso_release(&st);
	sym_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aliases_by_clean_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
