/* SPDX-License-Identifier: MIT */
/*
 * test_trimest.c - what sym_held() counts of libdw's part for --dwarf-max
 * (src/symbols/trim.c) against what the process really holds: the pages
 * of the files libdw mapped that are resident (the kernel's smaps, read
 * independently of trim.c's pagemap), the heap naming grew by (mallinfo2()),
 * and the call frame entries libdw interns in each of its two ways.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "../../src/machine/machine.h"
#include "../../src/symbols/namer.h"
#include "../../src/symbols/priv.h"
#include "../../src/symbols/symbols.h"
#include "symstate.h"

static const struct perf_header_info hdr; /* no build ids */

/* A function of this binary, to find its text by. */
__attribute__((noinline)) int trimest_marker(int x);
__attribute__((noinline)) int trimest_marker(int x)
{
	return x * 5 + 2;
}

/* A machine where pid 100 maps this binary's text as it is mapped here:
 * where into *@start and *@end. */
static struct machine *machine_with_self(uint64_t *start, uint64_t *end)
{
	struct perf_event ev = { .type = PERF_RECORD_MMAP2 };
	struct machine *m = machine_new(&hdr);
	static char path[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	uintptr_t a = (uintptr_t)trimest_marker;
	bool found = false;

	assert_non_null(m);
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &s, &e, perms, &off, path) < 5 ||
		    a < s || a >= e)
			continue;
		*start = s;
		*end = e;
		ev.u.mmap.pgoff = off;
		found = true;
	}
	fclose(f);
	assert_true(found);
	ev.u.mmap.pid = ev.u.mmap.tid = 100;
	ev.u.mmap.start = *start;
	ev.u.mmap.len = *end - *start;
	ev.u.mmap.prot = PROT_READ | PROT_EXEC;
	ev.u.mmap.filename = path;
	assert_int_equal(machine_event(m, &ev), 0);
	return m;
}

/* The resident bytes of the mapping holding @at, as smaps says; 0 none. */
static uint64_t smaps_rss(const void *at)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4096];
	uintptr_t a = (uintptr_t)at;
	bool in = false;
	uint64_t rss = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, kb;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, ' ') &&
		    !strstr(line, " kB")) {
			in = a >= s && a < e;
			continue;
		}
		if (in && sscanf(line, "Rss: %lu kB", &kb) == 1) {
			rss = (uint64_t)kb << 10;
			break;
		}
	}
	fclose(f);
	return rss;
}

static uint64_t heap_now(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * Name @nr addresses between @start and @end through @n (the next ones
 * after those named first, with @next) and check them against a
 * symbolizer of their own that never let go.
 */
static void name_more(struct namer *n, struct machine *m, uint64_t start, uint64_t end,
		      size_t nr, bool next)
{
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct symbolizer *ref_s = sym_new(&o, &hdr);
	struct namer *ref = ref_s ? namer_new(ref_s, false) : NULL;

	assert_non_null(ref);
	for (size_t i = 0; i < nr; i++) {
		uint64_t a = start + (end - start) * i / nr + (next ? 11 : 3);
		const struct sym_frame *fr, *rf;
		struct raw_frame f;
		size_t k;

		assert_int_equal(machine_user_frames(m, 100, &a, 1, &f, 1), 1);
		f.ret = false;
		assert_int_equal(namer_submit(n, &f, 0), (uint32_t)i);
		assert_int_equal(namer_submit(ref, &f, 0), (uint32_t)i);
		k = namer_result(n, (uint32_t)i, &fr, NULL);
		assert_int_equal(namer_result(ref, (uint32_t)i, &rf, NULL), k);
		for (size_t j = 0; j < k; j++) {
			assert_string_equal(fr[j].function ? fr[j].function : "?",
					    rf[j].function ? rf[j].function : "?");
			assert_string_equal(fr[j].file ? fr[j].file : "?",
					    rf[j].file ? rf[j].file : "?");
			assert_int_equal(fr[j].line, rf[j].line);
		}
	}
	namer_free(ref);
	sym_free(ref_s);
}

/*
 * Naming 400 addresses of this binary (its lines read by dwline.c, not by
 * libdw) makes libdw map the binary and read its symbol table, units and
 * line programs: libdw's part counts at least the pages of the files it
 * mapped that the kernel says are resident, and, where malloc can say
 * (not under ASan), no more than those and the heap naming grew by. The
 * estimate before counted libdw's line tables and units only: a few KiB.
 * A budget just short of what is held lets go of those pages alone, the
 * Dwfl kept, and names as a symbolizer that never let go.
 */
static void test_held_counts_files(void **state)
{
	enum { NR = 400 };
	struct sym_opts o = { .use_proc_kallsyms = false, .dwarf_max = (uint64_t)1 << 40 };
	uint64_t start, end, dw, idx, nm, tabs, files = 0, heap0, grown, held;
	size_t slack = dwpages_slack;
	struct symbolizer *s;
	struct dso_state *st;
	struct machine *m;
	struct namer *n;
	GElf_Addr bias;
	Dwarf_Addr dbias;
	Dwarf *dbg;
	Elf *elf, *delf;
	size_t size = 0;

	(void)state;
	dwpages_slack = (size_t)1 << 40; /* what naming reads stays mapped */
	m = machine_with_self(&start, &end);
	heap0 = heap_now();
	s = sym_new(&o, &hdr);
	assert_non_null(s);
	n = namer_new(s, false);
	assert_non_null(n);
	for (size_t i = 0; i < NR; i++) {
		uint64_t a = start + (end - start) * i / NR + 3;
		const struct sym_frame *fr;
		struct raw_frame f;

		assert_int_equal(machine_user_frames(m, 100, &a, 1, &f, 1), 1);
		f.ret = false;
		assert_int_equal(namer_submit(n, &f, 0), (uint32_t)i);
		assert_true(namer_result(n, (uint32_t)i, &fr, NULL) >= 1);
	}
	grown = heap_now() - heap0;
	namer_reset(n);
	st = symstate_biggest(s);
	assert_non_null(st->dwfl);
	assert_true(st->lineidx && lineidx_bytes(st->lineidx) > 0); /* lines were read */
	elf = dwfl_module_getelf(st->mod, &bias);
	dbg = dwfl_module_getdwarf(st->mod, &dbias);
	assert_non_null(elf);
	assert_non_null(dbg);
	/* counted first: a page the kernel took back meanwhile is in neither */
	sym_held(s, &dw, &idx, &nm, &tabs);
	files = smaps_rss(elf_rawfile(elf, &size));
	delf = dwarf_getelf(dbg);
	if (delf != elf)
		files += smaps_rss(elf_rawfile(delf, &size));
	assert_true(files >= 64u << 10);
	print_message("libdw's part %" PRIu64 " KiB; its files' pages resident %" PRIu64
		      " KiB, heap grown %" PRIu64 " KiB (indexes %" PRIu64 ", names %" PRIu64
		      ", tables %" PRIu64 ")\n", dw >> 10, files >> 10, grown >> 10, idx >> 10,
		      nm >> 10, tabs >> 10);
	assert_true(dw >= files);
	if (grown)
		assert_true(dw <= files + grown);
	/* a budget just short: the pages alone are let go, the Dwfl kept,
	 * and what is named next is named as before */
	s->opts.dwarf_max = dw + idx + nm + tabs - 1;
	assert_int_equal(sym_trim(s), 1);
	assert_non_null(st->dwfl);
	assert_true(smaps_rss(elf_rawfile(elf, &size)) < 64u << 10);
	held = dw;
	sym_held(s, &dw, &idx, &nm, &tabs);
	assert_true(dw + files <= held + (64u << 10));
	name_more(n, m, start, end, NR, false);
	namer_reset(n);
	name_more(n, m, start, end, NR, true);
	namer_reset(n);
	/* its Dwfl ended, libdw holds nothing of it */
	s->opts.dwarf_max = 1;
	assert_true(sym_trim(s) >= 1);
	assert_null(st->dwfl);
	sym_held(s, &dw, &idx, &nm, &tabs);
	assert_true(dw < 64u << 10);
	namer_free(n);
	sym_free(s);
	machine_free(m);
	dwpages_slack = slack;
}

/*
 * The call frame entries libdw interns for address_name(): through
 * .eh_frame_hdr's table, one per entry looked up (the entry at or before
 * the address, covering it or not), however often; read in order, every
 * entry up to the one found, and all of them when none covers the address.
 */
static void test_cfi_entries(void **state)
{
	enum { NR = 1000 };
	struct sym_opts o = { .use_proc_kallsyms = false, .dwarf_max = (uint64_t)1 << 40 };
	struct symbolizer *s = sym_new(&o, &hdr);
	uint64_t dw, idx, nm, tabs, one, table;
	struct dso_state *st;

	(void)state;
	assert_non_null(s);
	s->states = calloc(1, sizeof(*s->states));
	assert_non_null(s->states);
	s->nr_states = s->states_used = 1;
	st = &s->states[0];
	st->fde_starts = calloc(NR, sizeof(*st->fde_starts));
	assert_non_null(st->fde_starts);
	for (size_t i = 0; i < NR; i++)
		st->fde_starts[i] = 0x1000 + 0x40 * i;
	st->nr_fde_starts = NR;
	tabs = NR * sizeof(*st->fde_starts);

	st->cfi_linear = -1; /* through the table */
	sym_held(s, &dw, &idx, &nm, &one);
	assert_int_equal(dw, 0);
	dw_account_cfi(st, 0x800, false); /* before the first entry: none read */
	dw_account_cfi(st, 0x1000 + 0x40 * 10 + 4, true);
	dw_account_cfi(st, 0x1000 + 0x40 * 10 + 8, true);
	sym_held(s, &dw, &idx, &nm, &one);
	table = (NR + 7) / 8;
	one = dw - table;
	assert_true(one >= 48 && one <= 128); /* one entry: 61-80 bytes measured */
	dw_account_cfi(st, 0x1000 + 0x40 * 500, true);
	dw_account_cfi(st, 0x1000 + 0x40 * 900 + 0x30, false);
	sym_held(s, &dw, &idx, &nm, &tabs);
	assert_int_equal(dw, table + 3 * one);

	dso_dwarf_release(st);
	st->cfi_linear = 1; /* in order */
	dw_account_cfi(st, 0x1000 + 0x40 * 99 + 4, true);
	sym_held(s, &dw, &idx, &nm, &tabs);
	assert_int_equal(dw, 100 * one);
	dw_account_cfi(st, 0x1000 + 0x40 * 10, true); /* read already */
	sym_held(s, &dw, &idx, &nm, &tabs);
	assert_int_equal(dw, 100 * one);
	dw_account_cfi(st, 0x1000 + 0x40 * 200 + 4, false); /* read to the end */
	sym_held(s, &dw, &idx, &nm, &tabs);
	assert_int_equal(dw, NR * one);
	sym_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_counts_files),
		cmocka_unit_test(test_cfi_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
