/* SPDX-License-Identifier: MIT */
/*
 * test_namer.c - the namer (src/symbols/namer.c): names on its thread are
 * the names without one; tickets are dense; a frame is named with the
 * machine as it was when it was given, even when the machine changes before
 * the thread gets to it. The compact line tables (lineidx.c) give libdw's
 * lines; a trimmed symbolizer names as one that never let go.
 */
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdwelf.h>

#include "../../src/machine/machine.h"
#include "../../src/symbols/namer.h"
#include "../../src/symbols/priv.h"
#include "../../src/symbols/roots.h"
#include "../../src/util/error.h"
#include "../../src/symbols/symbols.h"
#include "symstate.h"

static const struct perf_header_info hdr; /* no build ids */

/* A function of this binary, with a name the symbol table keeps. */
__attribute__((noinline)) int namer_test_marker(int x);
__attribute__((noinline)) int namer_test_marker(int x)
{
	return x * 3 + 1;
}

/* Where this binary's text holding @fn is mapped: start, end, file offset. */
static void self_map(const void *fn, uint64_t *start, uint64_t *end, uint64_t *pgoff, char *path,
		     size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	uintptr_t a = (uintptr_t)fn;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char perms[8], file[4096] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &s, &e, perms, &off, file) < 4)
			continue;
		if (a >= s && a < e) {
			*start = s;
			*end = e;
			*pgoff = off;
			snprintf(path, len, "%s", file);
			fclose(f);
			return;
		}
	}
	fclose(f);
	fail_msg("no map holds %p", fn);
}

/* Map the text holding @fn into @m for pid @pid, as it is mapped here:
 * its path into @path, where into *@start and *@end. */
static void map_text(struct machine *m, uint32_t pid, const void *fn, char *path, size_t len,
		     uint64_t *start, uint64_t *end)
{
	struct perf_event ev = { .type = PERF_RECORD_MMAP2 };
	uint64_t pgoff;

	self_map(fn, start, end, &pgoff, path, len);
	ev.u.mmap.pid = ev.u.mmap.tid = pid;
	ev.u.mmap.start = *start;
	ev.u.mmap.len = *end - *start;
	ev.u.mmap.pgoff = pgoff;
	ev.u.mmap.prot = PROT_READ | PROT_EXEC;
	ev.u.mmap.filename = path;
	assert_int_equal(machine_event(m, &ev), 0);
}

/* @a and @b, @nr names each, are the same. */
static void assert_names_equal(char **a, char **b, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		assert_string_equal(a[i], b[i]);
}

/* A machine where pid 100 maps this binary's text as it is mapped here. */
static struct machine *machine_with_self(uint64_t *start, uint64_t *end)
{
	struct machine *m = machine_new(&hdr);
	static char path[4096];

	assert_non_null(m);
	map_text(m, 100, (const void *)namer_test_marker, path, sizeof(path), start, end);
	return m;
}

/* Names of @nr addresses through a namer (@threaded or not), "fn@module" each. */
static char **name_all(bool threaded, const uint64_t *addrs, size_t nr)
{
	uint64_t start, end;
	struct machine *m = machine_with_self(&start, &end);
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct symbolizer *s = sym_new(&o, &hdr);
	struct namer *n;
	char **out = calloc(nr, sizeof(*out));

	assert_non_null(s);
	assert_non_null(out);
	n = namer_new(s, threaded);
	assert_non_null(n);
	for (size_t i = 0; i < nr; i++) {
		struct raw_frame f;

		assert_int_equal(machine_user_frames(m, 100, &addrs[i], 1, &f, 1), 1);
		f.ret = false;
		/* the same frame given twice is two tickets: the caller dedups */
		assert_int_equal(namer_submit(n, &f, 0), (uint32_t)i);
	}
	namer_drain(n);
	for (size_t i = 0; i < nr; i++) {
		const struct sym_frame *fr;
		const struct raw_frame *rf;
		size_t k = namer_result(n, (uint32_t)i, &fr, &rf);
		char buf[1024];

		assert_true(k >= 1);
		assert_int_equal(rf->addr, addrs[i]);
		snprintf(buf, sizeof(buf), "%s@%s", fr[k - 1].function ? fr[k - 1].function : "?",
			 fr[k - 1].module ? fr[k - 1].module : "?");
		out[i] = strdup(buf);
	}
	{
		const struct sym_frame *fr;

		assert_int_equal(namer_result(n, (uint32_t)nr, &fr, NULL), 0); /* no such ticket */
	}
	namer_free(n);
	sym_free(s);
	machine_free(m);
	return out;
}

static void test_threaded_names_are_unthreaded_names(void **state)
{
	uint64_t start, end, addrs[600];
	struct machine *m;
	char **a, **b;
	bool marker = false;

	(void)state;
	m = machine_with_self(&start, &end);
	machine_free(m);
	/* addresses all through the text, and the marker itself */
	for (size_t i = 0; i < 599; i++)
		addrs[i] = start + (end - start) * i / 599;
	addrs[599] = (uint64_t)(uintptr_t)namer_test_marker + 1;
	a = name_all(false, addrs, 600);
	b = name_all(true, addrs, 600);
	for (size_t i = 0; i < 600; i++) {
		assert_string_equal(a[i], b[i]);
		marker |= strncmp(a[i], "namer_test_marker@", 18) == 0;
		free(a[i]);
		free(b[i]);
	}
	assert_true(marker);
	free(a);
	free(b);
}

/*
 * A file's first frame reads its dso (path, build id, mapping process).
 * Changed right after the frame is given - as the pass changes the machine
 * while the thread works - the name must still come from what it was.
 */
static void test_named_as_given(void **state)
{
	for (int threaded = 0; threaded <= 1; threaded++) {
		struct machine *m = machine_new(&hdr);
		struct perf_event ev = { .type = PERF_RECORD_MMAP2 };
		struct sym_opts o = { .use_proc_kallsyms = false };
		struct symbolizer *s = sym_new(&o, &hdr);
		struct namer *n = namer_new(s, threaded);
		const struct sym_frame *fr;
		uint64_t addr = 0x7000010;
		struct raw_frame f;
		struct dso *d;
		char *path;
		size_t k;

		(void)state;
		assert_non_null(m);
		assert_non_null(n);
		ev.u.mmap.pid = ev.u.mmap.tid = 7;
		ev.u.mmap.start = 0x7000000;
		ev.u.mmap.len = 0x1000;
		ev.u.mmap.prot = PROT_READ | PROT_EXEC;
		ev.u.mmap.filename = "/nonexistent/libgiven.so";
		assert_int_equal(machine_event(m, &ev), 0);
		assert_int_equal(machine_user_frames(m, 7, &addr, 1, &f, 1), 1);
		assert_int_equal(namer_submit(n, &f, 0), 0);
		/* the machine changes under it (a later record would) */
		d = (struct dso *)f.dso;
		path = d->path;
		d->path = "/nonexistent/libchanged.so";
		k = namer_result(n, 0, &fr, NULL);
		assert_int_equal(k, 1);
		assert_string_equal(fr[0].module, "/nonexistent/libgiven.so");
		assert_int_equal(fr[0].cause, SYM_NO_FILE);
		d->path = path;
		namer_free(n);
		sym_free(s);
		machine_free(m);
	}
}

/* Every frame of each of @nr addresses (inlined calls too), as "fn file:line;..." */
static char **names_full(struct namer *n, struct machine *m, const uint64_t *addrs, size_t nr)
{
	char **out = calloc(nr, sizeof(*out));

	assert_non_null(out);
	for (size_t i = 0; i < nr; i++) {
		struct raw_frame f;

		assert_int_equal(machine_user_frames(m, 100, &addrs[i], 1, &f, 1), 1);
		f.ret = false;
		assert_int_equal(namer_submit(n, &f, 0), (uint32_t)i); /* from 0 each time */
	}
	for (size_t i = 0; i < nr; i++) {
		const struct sym_frame *fr;
		size_t k = namer_result(n, (uint32_t)i, &fr, NULL), at = 0;
		char buf[4096];

		assert_true(k >= 1);
		buf[0] = '\0';
		for (size_t j = 0; j < k && at < sizeof(buf); j++)
			at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s %s:%u;",
					       fr[j].function ? fr[j].function : "?",
					       fr[j].file ? fr[j].file : "?", fr[j].line);
		out[i] = strdup(buf);
	}
	return out;
}

static void free_names(char **v, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(v[i]);
	free(v);
}

/*
 * A stream's window boundary: the namer forgets its requests (tickets
 * start again from 0) and the symbolizer lets go of libdw's memory
 * (sym_trim()); the frames of later windows - new addresses, which open
 * the file again, and ones named before - must be named exactly as a
 * symbolizer that never let go names them: function, inlined calls, files
 * and lines.
 */
/*
 * A symbolizer with @o (*@s) whose namer (returned, @threaded) named @nr
 * of @addrs (*@names), then forgot its requests; trimmed, letting go of
 * something.
 */
static struct namer *named_and_trimmed(const struct sym_opts *o, bool threaded,
				       struct machine *m, const uint64_t *addrs, size_t nr,
				       struct symbolizer **s, char ***names)
{
	struct namer *n;

	*s = sym_new(o, &hdr);
	assert_non_null(*s);
	n = namer_new(*s, threaded);
	assert_non_null(n);
	*names = names_full(n, m, addrs, nr);
	namer_reset(n);
	assert_true(sym_trim(*s) >= 1);
	return n;
}

static void test_reset_and_trim(void **state)
{
	enum { NR = 600, HALF = 300 };
	uint64_t start, end, addrs[NR];
	struct machine *m;
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct sym_opts tight = { .use_proc_kallsyms = false, .dwarf_max = 1 };
	struct sym_opts roomy = { .use_proc_kallsyms = false, .dwarf_max = SIZE_MAX };
	struct sym_opts mid = { .use_proc_kallsyms = false };

	(void)state;
	/* libdw's part as big as the indexes' (its line tables kept in the
	 * module's Dwarf: parsed by libdw, not dwline.c), so that a budget
	 * can be past by less than it */
	lineidx_own_dwarf = false;
	lineidx_by_libdw = true;
	m = machine_with_self(&start, &end);
	for (size_t i = 0; i < NR; i++)
		addrs[i] = start + (end - start) * i / NR;
	for (int threaded = 0; threaded <= 1; threaded++) {
		struct symbolizer *s = sym_new(&o, &hdr), *s2 = sym_new(&tight, &hdr);
		struct symbolizer *s3 = sym_new(&roomy, &hdr);
		struct namer *n = namer_new(s, threaded), *n2 = namer_new(s2, threaded);
		struct namer *n3 = namer_new(s3, threaded), *n4;
		struct symbolizer *s4;
		uint64_t dw, idx, nm, sy, dw2, idx2, nm2, sy2;
		char **ref, **a, **b;
		bool lines = false;

		assert_non_null(n);
		assert_non_null(n2);
		assert_non_null(n3);
		ref = names_full(n, m, addrs, NR);
		assert_int_equal(sym_trim(s), 0); /* not bounded */
		/* within its budget: kept */
		b = names_full(n3, m, addrs, HALF);
		namer_reset(n3);
		assert_int_equal(sym_trim(s3), 0);
		free_names(b, HALF);
		/* past it by less than libdw's part: that is let go, the units'
		 * indexes are kept, and the file opened again names the units
		 * seen before from them (the addresses named then, and more) */
		sym_held(s3, &dw, &idx, &nm, &sy);
		assert_true(dw > 0 && idx > 0 && nm > 0);
		mid.dwarf_max = (idx + nm + sy) / 3 * 4 + 4096;
		assert_true(mid.dwarf_max < dw + idx + nm + sy);
		n4 = named_and_trimmed(&mid, threaded, m, addrs, HALF, &s4, &a);
		sym_held(s4, &dw2, &idx2, &nm2, &sy2);
		assert_int_equal(idx2, idx);
		assert_int_equal(nm2, nm);
		assert_true(dw2 < dw);
		b = names_full(n4, m, addrs, NR);
		for (size_t i = 0; i < NR; i++) {
			if (i < HALF)
				assert_string_equal(a[i], ref[i]);
			assert_string_equal(b[i], ref[i]);
		}
		free_names(a, HALF);
		free_names(b, NR);
		namer_free(n4);
		sym_free(s4);
		/* past it by more than libdw's part, less than the names made
		 * too: those are let go as well, the indexes kept, and names
		 * asked again are made from them */
		b = names_full(n3, m, addrs, NR);
		namer_reset(n3);
		free_names(b, NR);
		sym_held(s3, &dw, &idx, &nm, &sy);
		assert_true(nm >= 64 << 10); /* worth letting go */
		mid.dwarf_max = (idx + sy) / 3 * 4 + 4096;
		n4 = named_and_trimmed(&mid, threaded, m, addrs, NR, &s4, &a);
		sym_held(s4, &dw2, &idx2, &nm2, &sy2);
		assert_int_equal(idx2, idx);
		assert_int_equal(nm2, 0);
		assert_int_equal(dw2, 0);
		b = names_full(n4, m, addrs, NR);
		for (size_t i = 0; i < NR; i++) {
			assert_string_equal(a[i], ref[i]);
			assert_string_equal(b[i], ref[i]);
		}
		sym_held(s4, &dw2, &idx2, &nm2, &sy2);
		assert_int_equal(idx2, idx); /* nothing parsed again */
		free_names(a, NR);
		free_names(b, NR);
		namer_free(n4);
		sym_free(s4);
		/* past it: let go, indexes too, then opened again for the new addresses */
		a = names_full(n2, m, addrs, HALF);
		namer_reset(n2);
		assert_true(sym_trim(s2) >= 1);
		sym_held(s2, &dw2, &idx2, &nm2, &sy2);
		assert_int_equal(dw2 + idx2 + nm2, 0);
		b = names_full(n2, m, addrs, NR);
		for (size_t i = 0; i < NR; i++) {
			if (i < HALF)
				assert_string_equal(a[i], ref[i]);
			assert_string_equal(b[i], ref[i]);
			lines |= strstr(ref[i], ".c:") != NULL;
		}
		assert_true(lines); /* the comparison saw DWARF lines */
		namer_reset(n2);
		sym_trim(s2); /* let go again, if it holds enough to be worth it */
		free_names(b, NR);
		b = names_full(n2, m, addrs, NR);
		for (size_t i = 0; i < NR; i++)
			assert_string_equal(b[i], ref[i]);
		free_names(ref, NR);
		free_names(a, HALF);
		free_names(b, NR);
		namer_free(n);
		namer_free(n2);
		namer_free(n3);
		sym_free(s);
		sym_free(s2);
		sym_free(s3);
	}
	machine_free(m);
	lineidx_own_dwarf = true;
	lineidx_by_libdw = false;
}

/*
 * A symbol table's names are made clean (demangled, interned) when a frame
 * is named in their function, not when the file is opened: naming a few
 * addresses interns a few names, whatever the file holds. A trim that ends
 * the file's Dwfl copies the others out of it (they lived in the module):
 * later frames in functions never named before get the names a symbolizer
 * that never let go gives (under ASan, a copy skipped reads freed memory).
 */
static void test_names_made_when_used(void **state)
{
	enum { FEW = 8, NR = 400 };
	uint64_t start, end, few[FEW], addrs[NR];
	struct machine *m;
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct sym_opts tight = { .use_proc_kallsyms = false, .dwarf_max = 1 };
	struct symbolizer *s, *ref_s;
	struct namer *n, *ref_n;
	struct dso_state *big;
	char **a, **b, **ref;
	size_t clean = 0, interned;
	uint64_t dw, idx, nm, tabs;

	(void)state;
	lineidx_by_libdw = true;        /* libdw's part holds its line tables */
	m = machine_with_self(&start, &end);
	for (size_t i = 0; i < FEW; i++)
		few[i] = start + (end - start) * (2 * i + 1) / (2 * FEW);
	for (size_t i = 0; i < NR; i++)
		addrs[i] = start + (end - start) * i / NR + 3;
	s = sym_new(&tight, &hdr);
	ref_s = sym_new(&o, &hdr);
	n = namer_new(s, false);
	ref_n = namer_new(ref_s, false);
	assert_non_null(n);
	assert_non_null(ref_n);
	a = names_full(n, m, few, FEW);
	big = symstate_biggest(s);
	assert_true(big->nr_syms > 200);
	/* clean: the functions named; not counted, the PLT's entries (made
	 * whole) */
	for (size_t i = 0; i < big->nr_syms; i++) {
		const char *at = strstr(big->syms[i].name, "@plt");

		clean += big->syms[i].clean && !(at && !at[4]);
	}
	/* (and aliases sharing an address, made clean to be compared: here
	 * one or two) */
	assert_true(clean >= 1 && clean <= FEW + big->nr_syms / 50);
	/* every name of the table interned would be at least as many */
	interned = s->strings.nr;
	assert_true(interned < big->nr_syms);
	/* its Dwfl ended: the names not yet clean are copied out of it. The
	 * budget keeps the symbol tables, however many functions this test
	 * binary has (ASan's -O1 build: over sym_trim()'s 64 KiB): libdw's
	 * part alone is let go of */
	namer_reset(n);
	sym_held(s, &dw, &idx, &nm, &tabs);
	s->opts.dwarf_max = (idx + nm + tabs) / 3 * 4 + 4096;
	assert_true(dw >= 64u << 10);
	assert_true(sym_trim(s) >= 1);
	assert_null(big->dwfl);
	assert_non_null(big->sym_names);
	b = names_full(n, m, addrs, NR);
	ref = names_full(ref_n, m, addrs, NR);
	for (size_t i = 0; i < NR; i++)
		assert_string_equal(b[i], ref[i]);
	assert_true(s->strings.nr > interned); /* the new functions' names */
	free_names(a, FEW);
	free_names(b, NR);
	free_names(ref, NR);
	namer_free(n);
	namer_free(ref_n);
	sym_free(s);
	sym_free(ref_s);
	machine_free(m);
	lineidx_by_libdw = false;
}

/* dl_iterate_phdr(): the program's load bias into *@data. */
static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr; /* the program comes first */
	return 1;
}

/* Where this program's section @want is, as loaded, its size in *@size
 * (0: it has none). */
static uint64_t self_section(const char *want, uint64_t *size)
{
	uint64_t bias = 0, at = 0;
	int fd = open("/proc/self/exe", O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	assert_true(fd >= 0);
	dl_iterate_phdr(first_object, &bias);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (strcmp(name, want) == 0 && sh.sh_size) {
			at = sh.sh_addr + bias;
			*size = sh.sh_size;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return at;
}

/*
 * A frame in the PLT is named after its jump slot ("FUNCTION@plt"), and no
 * unit is searched for it: the linker wrote the stub, no unit describes
 * it. (Before, an address libdwfl's .debug_aranges had no unit for read
 * every unit's ranges: ~4 ms a run for libc.so.6's PLT.)
 */
static void test_plt_frame_searches_no_unit(void **state)
{
	uint64_t start, end, size = 0, plt = self_section(".plt.sec", &size), addr;
	struct machine *m;
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct symbolizer *s;
	struct namer *n;
	struct dso_state *st;
	char **names;

	(void)state;
	if (plt) {
		addr = plt + 4; /* .plt.sec: entries from its start */
	} else {
		plt = self_section(".plt", &size);
		if (!plt || size < 48)
			skip();
		addr = plt + 16 + 4; /* .plt: entries after a 16-byte header */
	}
	m = machine_with_self(&start, &end);
	assert_true(addr >= start && addr < end);
	s = sym_new(&o, &hdr);
	assert_non_null(s);
	n = namer_new(s, false);
	assert_non_null(n);
	names = names_full(n, m, &addr, 1);
	assert_non_null(strstr(names[0], "@plt ?:0;"));
	st = symstate_biggest(s);
	assert_false(st->cu_ranges_built);
	/* a function of the text still has its unit, and so its line */
	addr = (uint64_t)(uintptr_t)namer_test_marker;
	free_names(names, 1);
	namer_reset(n);
	names = names_full(n, m, &addr, 1);
	assert_null(strstr(names[0], "?:0;"));
	free_names(names, 1);
	namer_free(n);
	sym_free(s);
	machine_free(m);
}

/* fsym_sort() on @n symbols of @v equals the reference sort, symbol for
 * symbol (each has a size of its own, 0 aside, to tell equal ones apart). */
static void assert_sorts_as_qsort(const struct fsym *v, size_t n)
{
	struct fsym *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	memcpy(a, v, n * sizeof(*a));
	memcpy(b, v, n * sizeof(*b));
	qsort(a, n, sizeof(*a), fsym_cmp); /* the order before fsym_sort() */
	fsym_sort(b, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].addr, b[i].addr);
		assert_int_equal(a[i].size, b[i].size);
		assert_ptr_equal(a[i].name, b[i].name);
		assert_int_equal(a[i].label, b[i].label);
	}
	free(a);
	free(b);
}

/*
 * A symbol table is sorted as qsort() sorted it: by address, the aliases
 * at one address best first, equal ones in the table's order. Tables with
 * many aliases (runs of 1 to 40 at one address: the long ones go to
 * qsort()), addresses over several bytes, one byte, and above 2^40 (left
 * to qsort()), and the smallest tables.
 */
static void test_symbols_sorted_as_qsort(void **state)
{
	static const char *const names[] = { "memcpy", "__memcpy", "_memcpy", "memcpy_avx",
					     "a", "b", "__libc_start_main", "x" };
	enum { N = 20000 };
	struct fsym *v = calloc(N, sizeof(*v));
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	(void)state;
	assert_non_null(v);
	for (unsigned round = 0; round < 4; round++) {
		size_t n = 0;

		while (n < N) {
			/* a run of aliases at one address */
			uint64_t addr, run;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			run = (seed >> 60) == 0 ? 33 + (seed >> 20) % 8 : 1 + (seed >> 33) % 4;
			addr = round == 0 ? 0x1000 + (seed >> 16) % 0x40000000 :
			       round == 1 ? 0x4000 + (seed >> 40) % 200 :
			       round == 2 ? (1ull << 41) + (seed >> 20) % 100000 :
			       0x400000 + (seed >> 24) % 5000 * 16;
			for (uint64_t r = 0; r < run && n < N; r++, n++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				v[n].addr = addr;
				v[n].size = (seed >> 62) ? n + 1 : 0;
				v[n].bind = (uint8_t)((seed >> 50) % 3); /* local, global, weak */
				v[n].label = (seed >> 45) % 7 == 0;
				v[n].name = names[(seed >> 40) % 8];
			}
		}
		/* the table in no order: its symbols shuffled */
		for (size_t i = N - 1; i > 0; i--) {
			struct fsym t;
			size_t j;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			j = (seed >> 33) % (i + 1);
			t = v[i];
			v[i] = v[j];
			v[j] = t;
		}
		assert_sorts_as_qsort(v, N);
	}
	assert_sorts_as_qsort(v, 1);
	assert_sorts_as_qsort(v, 2);
	assert_sorts_as_qsort(v, 3);
	free(v);
}

static char **names_in(struct symbolizer *s, struct machine *m, const uint64_t *addrs, size_t nr);

/*
 * Naming on several lanes, each with a symbolizer of its own: every frame
 * named as on one (function, inlined calls, files, lines), and the counts
 * of all the lanes add up to one's. A sibling symbolizer names from the
 * unit indexes the first one built, and builds none itself.
 */
static void test_lanes_name_as_one(void **state)
{
	enum { NR = 900 };
	uint64_t start, end, addrs[NR];
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct symbolizer *ref_s, *s, *sib;
	struct machine *m;
	struct sym_stats ref_st;
	char **ref, **a, **b;
	size_t inlined = 0;

	(void)state;
	m = machine_with_self(&start, &end);
	for (size_t i = 0; i < NR; i++)
		addrs[i] = start + (end - start) * i / NR + 5;
	ref_s = sym_new(&o, &hdr);
	assert_non_null(ref_s);
	ref = names_in(ref_s, m, addrs, NR);
	ref_st = *sym_stats(ref_s);
	for (size_t i = 0; i < NR; i++)
		inlined += strchr(strchr(ref[i], ';') + 1, ';') != NULL;
	assert_true(inlined > 0); /* the comparison sees inlined calls */
	/* 2, 5 and 8 lanes, and 11 asked for (as many as there may be);
	 * then with every unit gathered in parts, taken by the lanes that
	 * want it while it is built and joined by the one building it */
	static const struct {
		unsigned lanes;
		bool parts;
	} cases[] = { { 2, false }, { 5, false }, { 8, false }, { 11, false },
		      { 2, true }, { 8, true } };
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		unsigned lanes = cases[c].lanes;
		struct namer *n;
		struct sym_stats st;

		inlidx_part_min_span = cases[c].parts ? 0 : 256u << 10;
		s = sym_new(&o, &hdr);
		assert_non_null(s);
		n = namer_new(s, lanes);
		assert_non_null(n);
		assert_int_equal(namer_lanes(n), lanes < NAMER_MAX_LANES ? lanes : NAMER_MAX_LANES);
		a = names_full(n, m, addrs, NR);
		for (size_t i = 0; i < NR; i++)
			assert_string_equal(a[i], ref[i]);
		namer_finish(n);
		st = *sym_stats(s);
		assert_true(st.frames < ref_st.frames); /* the other lanes named some */
		namer_add_stats(n, &st);
		assert_int_equal(st.frames, ref_st.frames);
		for (unsigned k = 0; k < SYM_CAUSE_COUNT; k++)
			assert_int_equal(st.by_cause[k], ref_st.by_cause[k]);
		free_names(a, NR);
		namer_free(n);
		sym_free(s);
	}
	/* siblings: the units indexed once, by the one naming first; the
	 * sibling outlives the symbolizer that made it, and still reads them */
	s = sym_new(&o, &hdr);
	assert_non_null(s);
	sib = sym_new_sibling(s);
	assert_non_null(sib);
	inlidx_part_min_span = 0; /* built in parts, by one thread: joined as one walk */
	a = names_in(s, m, addrs, NR);
	assert_true(inlidx_units_built(symstate_biggest(s)->inlidx) >= 1);
	sym_free(s);
	b = names_in(sib, m, addrs, NR);
	assert_int_equal(inlidx_units_built(symstate_biggest(sib)->inlidx), 0);
	for (size_t i = 0; i < NR; i++) {
		assert_string_equal(a[i], ref[i]);
		assert_string_equal(b[i], ref[i]);
	}
	inlidx_part_min_span = 256u << 10;
	free_names(a, NR);
	free_names(b, NR);
	sym_free(sib);
	free_names(ref, NR);
	sym_free(ref_s);
	machine_free(m);
}

/* Map a file that is not there at @start for pid @pid: a dso first. */
static void map_missing(struct machine *m, uint32_t pid, uint64_t start)
{
	struct perf_event ev = { .type = PERF_RECORD_MMAP2 };

	ev.u.mmap.pid = ev.u.mmap.tid = pid;
	ev.u.mmap.start = start;
	ev.u.mmap.len = 4096;
	ev.u.mmap.prot = PROT_READ | PROT_EXEC;
	ev.u.mmap.filename = "/nonexistent/perfport-test/libgone.so";
	assert_int_equal(machine_event(m, &ev), 0);
}

/* The dso pid 100 of @m maps at @addr. */
static const struct dso *dso_at(struct machine *m, uint64_t addr)
{
	struct raw_frame f;

	assert_int_equal(machine_user_frames(m, 100, &addr, 1, &f, 1), 1);
	assert_non_null(f.dso);
	return f.dso;
}

/* Names of @nr addresses of pid 100 in @m through @s, unthreaded. */
static char **names_in(struct symbolizer *s, struct machine *m, const uint64_t *addrs, size_t nr)
{
	struct namer *n = namer_new(s, false);
	char **out;

	assert_non_null(n);
	out = names_full(n, m, addrs, nr);
	namer_free(n);
	return out;
}

/*
 * One symbolizer over two recordings of the same machine (perf's rotated
 * files), which number their dsos differently: the second names this
 * binary (found by its build id) from what the first made of it - the
 * same state, no new lookup - and names as a symbolizer of its own; a
 * file without a build id, or not found, is let go and looked for again;
 * the counts are each recording's.
 */
static void test_rebind_keeps_files(void **state)
{
	enum { NR = 200 };
	static char path[4096];
	struct perf_header_info h1 = { 0 }, h2 = { 0 };
	struct perf_build_id bid = { 0 };
	struct sym_opts o = { .use_proc_kallsyms = false, .dwarf_max = SIZE_MAX };
	uint64_t start, end, pgoff, addrs[NR], frames1;
	struct machine *m1, *m2, *m3;
	struct symbolizer *s, *fresh;
	const struct dso_state *st;
	size_t cached, idx;
	char **a, **b, **ref;
	const void *id;
	ssize_t n;
	Elf *elf;
	int fd;

	(void)state;
	/* this binary's build id, as perf's header would list it */
	self_map((const void *)namer_test_marker, &start, &end, &pgoff, path, sizeof(path));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n <= 0 || n > PERF_MAX_BUILD_ID) {
		elf_end(elf);
		close(fd);
		skip(); /* built without a build id */
	}
	bid.size = (uint8_t)n;
	memcpy(bid.id, id, (size_t)n);
	bid.filename = path;
	elf_end(elf);
	close(fd);
	h1.build_ids = h2.build_ids = &bid;
	h1.nr_build_ids = h2.nr_build_ids = 1;
	for (size_t i = 0; i < NR; i++)
		addrs[i] = start + (end - start) * i / NR + 1;

	s = sym_new(&o, NULL);
	assert_non_null(s);
	/* the first recording: this binary is its dso 0 */
	m1 = machine_new(&h1);
	assert_non_null(m1);
	map_text(m1, 100, (const void *)namer_test_marker, path, sizeof(path), &start, &end);
	sym_rebind(s, &h1);
	a = names_in(s, m1, addrs, NR);
	frames1 = sym_stats(s)->frames;
	assert_true(frames1 >= NR);
	st = sym_dso_loaded(s, dso_at(m1, start));
	assert_non_null(st);
	assert_true(st->kept != 0);
	idx = (size_t)(st - s->states);
	cached = st->cache_nr;
	assert_true(cached > 0);

	/* the second: a file not there comes first, this binary is dso 1 */
	m2 = machine_new(&h2);
	assert_non_null(m2);
	map_missing(m2, 100, 0x1000);
	map_text(m2, 100, (const void *)namer_test_marker, path, sizeof(path), &start, &end);
	sym_rebind(s, &h2);
	assert_int_equal(sym_stats(s)->frames, 0);
	b = names_in(s, m2, addrs, NR);
	st = sym_dso_loaded(s, dso_at(m2, start));
	assert_non_null(st);
	assert_int_equal((size_t)(st - s->states), idx); /* the same state */
	assert_int_equal(st->cache_nr, cached);            /* nothing named anew */
	assert_int_equal(sym_stats(s)->frames, frames1);    /* this recording's own */
	fresh = sym_new(&o, &h2);
	assert_non_null(fresh);
	ref = names_in(fresh, m2, addrs, NR);
	for (size_t i = 0; i < NR; i++) {
		assert_string_equal(a[i], ref[i]);
		assert_string_equal(b[i], ref[i]);
	}
	free_names(a, NR);
	free_names(b, NR);

	/* a third without build ids: the file's state is another, looked
	 * up anew, and the missing file's is let go (its slot reused) */
	{
		uint64_t missing = 0x1000;
		struct raw_frame f;

		assert_int_equal(machine_user_frames(m2, 100, &missing, 1, &f, 1), 1);
		(void)sym_dso_loaded(s, f.dso); /* looked for: not found */
	}
	m3 = machine_with_self(&start, &end);
	sym_rebind(s, &hdr);
	assert_int_equal(s->nr_free_states, 1);
	a = names_in(s, m3, addrs, NR);
	st = sym_dso_loaded(s, dso_at(m3, start));
	assert_non_null(st);
	assert_int_equal(st->kept, 0);
	assert_names_equal(a, ref, NR);
	free_names(a, NR);
	free_names(ref, NR);
	sym_free(fresh);
	sym_free(s);
	machine_free(m1);
	machine_free(m2);
	machine_free(m3);
}

/*
 * Past the budget by more than everything else, a file's symbol table goes
 * too (a program without debug information holds little else: its table
 * and the pages of the file it read), and the file is opened anew when
 * named again: libc's names, from this process's own mapping of it, are
 * the same before and after.
 */
static void test_trim_symbol_table(void **state)
{
	enum { NR = 64 };
	static char path[4096];
	uint64_t start, end, addrs[NR], dw, idx, nm, sy, sy2;
	struct sym_opts tight = { .use_proc_kallsyms = false, .dwarf_max = 1 };
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct machine *m = machine_new(&hdr);
	struct symbolizer *s = sym_new(&tight, &hdr), *ref_s = sym_new(&o, &hdr);
	const struct dso_state *st;
	char **a, **b, **ref;

	(void)state;
	assert_non_null(m);
	/* libc's text, where this process has it */
	map_text(m, 100, (const void *)(uintptr_t)&fopen, path, sizeof(path), &start, &end);
	for (size_t i = 0; i < NR; i++)
		addrs[i] = start + (end - start) * i / NR + 7;
	a = names_in(s, m, addrs, NR);
	st = sym_dso_loaded(s, dso_at(m, start));
	assert_non_null(st);
	assert_true(st->nr_syms > 1000);
	sym_held(s, &dw, &idx, &nm, &sy);
	assert_true(sy >= 64 << 10);
	assert_true(sym_trim(s) >= 1);
	sym_held(s, &dw, &idx, &nm, &sy2);
	assert_int_equal(sy2, 0);
	assert_false(st->syms_built);
	b = names_in(s, m, addrs, NR);
	ref = names_in(ref_s, m, addrs, NR);
	for (size_t i = 0; i < NR; i++) {
		assert_string_equal(a[i], ref[i]);
		assert_string_equal(b[i], ref[i]);
	}
	assert_true(st->syms_built); /* built again */
	free_names(a, NR);
	free_names(b, NR);
	free_names(ref, NR);
	sym_free(s);
	sym_free(ref_s);
	machine_free(m);
}

/*
 * A file no frame was named in for sym_opts.idle_s is let go altogether at
 * the next trim, whatever the budget; one named in since is kept; names
 * asked again are the same.
 */
static void test_trim_idle(void **state)
{
	enum { NR = 64 };
	uint64_t start, end, addrs[NR], dw, idx, nm, sy;
	struct sym_opts o = { .use_proc_kallsyms = false, .dwarf_max = SIZE_MAX, .idle_s = 1 };
	struct machine *m = machine_with_self(&start, &end);
	struct symbolizer *s = sym_new(&o, &hdr);
	const struct dso_state *st;
	char **a, **b;

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < NR; i++)
		addrs[i] = start + (end - start) * i / NR + 5;
	a = names_in(s, m, addrs, NR);
	st = sym_dso_loaded(s, dso_at(m, start));
	assert_non_null(st);
	assert_int_equal(sym_trim(s), 0); /* used since the last trim */
	sleep(1);
	/* named again: still in use */
	free_names(names_in(s, m, addrs, 1), 1);
	assert_int_equal(sym_trim(s), 0);
	sleep(2);
	assert_int_equal(sym_trim(s), 1);
	sym_held(s, &dw, &idx, &nm, &sy);
	assert_int_equal(dw + idx + nm + sy, 0);
	assert_false(st->syms_built);
	b = names_in(s, m, addrs, NR);
	assert_names_equal(b, a, NR);
	free_names(a, NR);
	free_names(b, NR);
	sym_free(s);
	machine_free(m);
}

/* The name sym_resolve() gives kernel address @addr, @text the recording's _text. */
static const char *kname(struct symbolizer *s, uint64_t addr, uint64_t text)
{
	struct raw_frame f = { .addr = addr, .offset = addr, .kind = FRAME_KERNEL };
	struct sym_frame out[4];

	assert_int_equal(sym_resolve(s, &f, text, out, 4), 1);
	return out[0].function ? out[0].function : "?";
}

/*
 * The kernel's symbols stay from one recording to the next while its
 * kernel is the same (the same _text: the same boot), and are loaded anew
 * for another: a kernel moved by KASLR names its addresses from where it
 * is now.
 */
static void test_rebind_kernel(void **state)
{
	char path[] = "/tmp/perfport-test-kallsyms-XXXXXX";
	const char text[] = "ffffffff81000000 T _text\nffffffff81000100 T kfunc_a\n"
			    "ffffffff81000200 T kfunc_b\nffffffff81000300 T kfunc_c\n"
			    "ffffffff81000400 T _etext\n";
	struct sym_opts o = { .use_proc_kallsyms = false, .kallsyms = path };
	struct perf_header_info h = { 0 };
	struct symbolizer *s;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	s = sym_new(&o, NULL);
	assert_non_null(s);
	sym_rebind(s, &h);
	assert_string_equal(kname(s, 0xffffffff81000150, 0xffffffff81000000), "kfunc_a");
	/* the same kernel: kept (the file gone, it is not read again) */
	unlink(path);
	sym_rebind(s, &h);
	assert_string_equal(kname(s, 0xffffffff81000250, 0xffffffff81000000), "kfunc_b");
	/* moved: read again, for where it is now */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	sym_rebind(s, &h);
	assert_string_equal(kname(s, 0xffffffff82000250, 0xffffffff82000000), "kfunc_b");
	assert_string_equal(kname(s, 0xffffffff82000350, 0xffffffff82000000), "kfunc_c");
	unlink(path);
	sym_free(s);
}

/* @f (a kernel frame at @addr, @ret a return address) named: "function+0xOFF". */
static const char *kname_ret(struct symbolizer *s, uint64_t addr, bool ret, char *buf, size_t len)
{
	struct raw_frame f = { .addr = addr, .offset = addr, .kind = FRAME_KERNEL, .ret = ret };
	struct sym_frame out[4];

	assert_int_equal(sym_resolve(s, &f, 0xffffffff81000000, out, 4), 1);
	snprintf(buf, len, "%s+0x%llx", out[0].function ? out[0].function : "?",
		 (unsigned long long)out[0].sym_offset);
	return buf;
}

/*
 * A kernel frame the unwinder gives as a return address but at a
 * function's first byte is where an interrupt stopped (no call returns to
 * a function's entry): it is that function's, +0x0, as perf names it, not
 * the __pfx_ padding's (or, without padding, the function before's) +0x10.
 * At padding's first byte it is a return address (a call that does not
 * return ended the function before: start_kernel's caller's frame).
 * Return addresses inside a function are still looked up one byte early,
 * and the leaf (not a return address) one byte before an entry is the
 * padding's: the lookups of both kinds at one address are kept apart.
 */
static void test_kernel_frame_at_entry(void **state)
{
	char path[] = "/tmp/perfport-test-kallsyms-XXXXXX", buf[128];
	const char text[] = "ffffffff81000000 T _text\nffffffff81000100 T kfunc_a\n"
			    "ffffffff810001f0 T __pfx_kfunc_b\nffffffff81000200 T kfunc_b\n"
			    "ffffffff810002f0 T __pfx_kfunc_c\n"
			    "ffffffff81000300 T kfunc_c\nffffffff81000400 T _etext\n";
	struct sym_opts o = { .use_proc_kallsyms = false, .kallsyms = path };
	struct perf_header_info h = { 0 };
	struct symbolizer *s;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	s = sym_new(&o, NULL);
	assert_non_null(s);
	sym_rebind(s, &h);
	for (int pass = 0; pass < 2; pass++) { /* the second from the cache */
		assert_string_equal(kname_ret(s, 0xffffffff81000200, true, buf, sizeof(buf)),
				    "kfunc_b+0x0");
		assert_string_equal(kname_ret(s, 0xffffffff81000300, true, buf, sizeof(buf)),
				    "kfunc_c+0x0");
		/* at padding: a call that did not return ended kfunc_b */
		assert_string_equal(kname_ret(s, 0xffffffff810002f0, true, buf, sizeof(buf)),
				    "kfunc_b+0xf0");
		assert_string_equal(kname_ret(s, 0xffffffff81000201, true, buf, sizeof(buf)),
				    "kfunc_b+0x1");
		assert_string_equal(kname_ret(s, 0xffffffff81000250, true, buf, sizeof(buf)),
				    "kfunc_b+0x50");
		assert_string_equal(kname_ret(s, 0xffffffff810001ff, false, buf, sizeof(buf)),
				    "__pfx_kfunc_b+0xf");
		assert_string_equal(kname_ret(s, 0xffffffff81000200, false, buf, sizeof(buf)),
				    "kfunc_b+0x0");
	}
	unlink(path);
	sym_free(s);
}

/*
 * A frame nothing names keeps its identity: its module's file name and its
 * offset there (the file offset, as perf report shows it), one name per
 * address, so two addresses of a file that is not here stay two frames; a
 * kernel frame without kallsyms likewise, by its address.
 */
static void test_unnamed_keeps_offset(void **state)
{
	struct machine *m = machine_new(&hdr);
	struct perf_event ev = { .type = PERF_RECORD_MMAP2 };
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct symbolizer *s = sym_new(&o, &hdr);
	uint64_t addrs[2] = { 0x7000010, 0x7000abc };
	struct raw_frame f[2], kf = { .addr = 0xffffffff81234567, .offset = 0xffffffff81234567,
				      .kind = FRAME_KERNEL };
	struct sym_frame out[4];

	(void)state;
	assert_non_null(m);
	assert_non_null(s);
	ev.u.mmap.pid = ev.u.mmap.tid = 7;
	ev.u.mmap.start = 0x7000000;
	ev.u.mmap.len = 0x1000;
	ev.u.mmap.pgoff = 0x3000;
	ev.u.mmap.prot = PROT_READ | PROT_EXEC;
	ev.u.mmap.filename = "/nonexistent/lib/libgone.so.1";
	assert_int_equal(machine_event(m, &ev), 0);
	assert_int_equal(machine_user_frames(m, 7, addrs, 2, f, 2), 2);
	assert_int_equal(sym_resolve(s, &f[0], 0, out, 4), 1);
	assert_int_equal(out[0].cause, SYM_NO_FILE);
	assert_true(out[0].flags & FRAME_F_UNKNOWN);
	assert_string_equal(out[0].function, "libgone.so.1+0x3010");
	/* a return address: still its own address (perf's), not one before */
	assert_int_equal(sym_resolve(s, &f[1], 0, out, 4), 1);
	assert_string_equal(out[0].function, "libgone.so.1+0x3abc");
	assert_int_equal(sym_resolve(s, &kf, 0xffffffff81000000, out, 4), 1);
	assert_int_equal(out[0].cause, SYM_NO_KALLSYMS);
	assert_string_equal(out[0].function, "[kernel.kallsyms]+0xffffffff81234567");
	sym_free(s);
	machine_free(m);
}

/* Functions named as Go's assembler names them in ELF (asm labels). */
__attribute__((noinline)) int go_asm_fn(int x) __asm__("ppgo.fn.abi0");
__attribute__((noinline)) int go_asm_fn(int x)
{
	return x * 5 + 2;
}

__attribute__((noinline)) int go_root_fn(int x) __asm__("runtime.goexit.abi0");
__attribute__((noinline)) int go_root_fn(int x)
{
	return x * 7 + 3;
}

__attribute__((noinline)) int go_switch_fn(int x) __asm__("runtime.systemstack.abi0");
__attribute__((noinline)) int go_switch_fn(int x)
{
	return x * 9 + 4;
}

/* The containing function's frame of @addr (pid 100) named by @s; flags too. */
static const char *name_of(struct symbolizer *s, struct machine *m, uint64_t addr, bool ret,
			   unsigned *flags)
{
	struct raw_frame f;
	struct sym_frame out[8];
	size_t k;

	assert_int_equal(machine_user_frames(m, 100, &addr, 1, &f, 1), 1);
	f.ret = ret;
	k = sym_resolve(s, &f, 0, out, 8);
	assert_true(k >= 1);
	*flags = out[k - 1].flags;
	return out[k - 1].function;
}

/*
 * Go's ABI suffix is not in a name (Go's tools show none) but where raw
 * names are asked for; a runtime's root is flagged so (a frame-pointer
 * chain ends there), a stack switch so (a stack copy's unwinding ends
 * there); a return address outside every mapping of a known process is
 * flagged as where the chain left the stack, and counted as no frame.
 */
static void test_go_names_and_roots(void **state)
{
	uint64_t start, end;
	struct machine *m = machine_with_self(&start, &end);
	struct sym_opts o = { .use_proc_kallsyms = false }, raw = o;
	struct symbolizer *s = sym_new(&o, &hdr), *rs;
	struct raw_frame f[2];
	struct sym_frame out[4];
	uint64_t addrs[2] = { (uint64_t)(uintptr_t)go_asm_fn, 0x10 };
	unsigned flags;
	uint64_t frames;

	(void)state;
	raw.raw_names = true;
	rs = sym_new(&raw, &hdr);
	assert_non_null(s);
	assert_non_null(rs);
	assert_string_equal(name_of(s, m, (uint64_t)(uintptr_t)go_asm_fn, false, &flags), "ppgo.fn");
	assert_int_equal(sym_frame_ends(flags, true), 0);
	assert_string_equal(name_of(rs, m, (uint64_t)(uintptr_t)go_asm_fn, false, &flags),
			    "ppgo.fn.abi0");
	assert_string_equal(name_of(s, m, (uint64_t)(uintptr_t)go_root_fn + 1, true, &flags),
			    "runtime.goexit");
	assert_true(flags & FRAME_F_ROOT);
	assert_int_equal(sym_frame_ends(flags, false), 1);
	assert_string_equal(name_of(rs, m, (uint64_t)(uintptr_t)go_root_fn + 1, true, &flags),
			    "runtime.goexit.abi0");
	assert_true(flags & FRAME_F_ROOT);
	assert_string_equal(name_of(s, m, (uint64_t)(uintptr_t)go_switch_fn + 1, true, &flags),
			    "runtime.systemstack");
	assert_int_equal(sym_frame_ends(flags, false), 0);
	assert_int_equal(sym_frame_ends(flags, true), 1);
	/* a leaf outside every mapping stays a frame; a return address there ends it */
	assert_int_equal(machine_user_frames(m, 100, addrs, 2, f, 2), 2);
	assert_null(f[1].dso);
	frames = sym_stats(s)->frames;
	assert_int_equal(sym_resolve(s, &f[1], 0, out, 4), 1);
	assert_true(out[0].flags & FRAME_F_OUTSIDE);
	assert_int_equal(sym_frame_ends(out[0].flags, false), 2);
	assert_int_equal(sym_stats(s)->frames, frames);
	f[1].ret = false;
	assert_int_equal(sym_resolve(s, &f[1], 0, out, 4), 1);
	assert_false(out[0].flags & FRAME_F_OUTSIDE);
	assert_int_equal(sym_stats(s)->frames, frames + 1);
	sym_free(rs);
	sym_free(s);
	machine_free(m);
}

/* The roots' text: runtime, root and switch lines, comments, and what is refused. */
static void test_roots_parse(void **state)
{
	struct roots r = { 0 };
	const struct roots_entry *e;

	(void)state;
	assert_int_equal(roots_parse(&r, "# c\nroot a b # not c\nruntime Rt\nroot x\n"
				     "switch y z\n", "t"), PP_OK);
	assert_non_null(e = roots_find(&r, "a"));
	assert_string_equal(e->runtime, "");
	assert_null(roots_find(&r, "c"));
	assert_null(roots_find(&r, "#"));
	assert_non_null(e = roots_find(&r, "x"));
	assert_string_equal(e->runtime, "Rt");
	assert_false(e->switches);
	assert_non_null(e = roots_find(&r, "z"));
	assert_true(e->switches);
	assert_int_equal(roots_parse(&r, "roots a\n", "t"), PP_ERULES);
	assert_int_equal(roots_parse(&r, "runtime\n", "t"), PP_ERULES);
	assert_int_equal(roots_parse(&r, "runtime A B\n", "t"), PP_ERULES);
	roots_free(&r);
	/* the built-in texts parse, and name Go's roots */
	assert_non_null(e = sym_root_of("runtime.mstart"));
	assert_string_equal(e->runtime, "Go");
	assert_non_null(sym_root_of("runtime.goexit.abi0"));
	assert_null(sym_root_of("main.main"));
}

/*
 * At every address of this binary's code, the line lineidx finds is the
 * one dwfl_module_getsrc() finds in libdw's table: the same file, the same
 * line, and none where libdw has none - from a copy of its own, and from
 * a table shared between symbolizers, whose copies it makes once (read by
 * a second index, which copies nothing).
 */
static void test_lines_as_libdw(void **state)
{
	static const Dwfl_Callbacks cb = {
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	Dwfl_Module *mod;
	struct line_index *x = NULL, *shared_x[2] = { NULL, NULL };
	struct sym_shared *sh = shared_new();
	struct strtab names = { 0 };
	Dwarf_Addr lo = 0, hi = 0;
	size_t with_line = 0, without = 0, fresh_total = 0, fresh_shared[2] = { 0, 0 }, units = 0, bytes;

	(void)state;
	lineidx_module_max = 0; /* every table in a Dwarf of lineidx's own */
	assert_non_null(dwfl);
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
		size_t fresh = 0;
		bool found = cu && lineidx_find(&x, NULL, 0, &names, cu, a - bias, &file, &line,
						&fresh);

		fresh_total += fresh;
		units += cu != NULL;
		for (int k = 0; k < 2 && cu; k++) {
			const char *sfile = NULL;
			unsigned sline = 0;

			assert_int_equal(lineidx_find(&shared_x[k], sh, 7, &names, cu, a - bias, &sfile,
						      &sline, &fresh), found);
			fresh_shared[k] += fresh;
			assert_true(!sfile == !file);
			if (file) {
				assert_string_equal(sfile, file);
				assert_ptr_not_equal(sfile, file); /* the table's, not @names' */
			}
			assert_int_equal(sline, line);
		}
		if (l)
			want = dwfl_lineinfo(l, NULL, &want_line, NULL, NULL, NULL);
		if (!want) {
			assert_true(!found || !file);
			without++;
			continue;
		}
		assert_true(found);
		assert_non_null(file);
		assert_string_equal(file, want);
		assert_int_equal(line, want_line > 0 ? (unsigned)want_line : 0);
		with_line++;
	}
	bytes = lineidx_bytes(x);
	lineidx_free(x);
	lineidx_free(shared_x[0]);
	lineidx_free(shared_x[1]);
	shared_unref(sh);
	strtab_free(&names);
	dwfl_end(dwfl);
	lineidx_module_max = 1u << 20;
	/* libdw, the oracle, looks units up in .debug_aranges only (0.188):
	 * a test built by clang has none unless asked (-gdwarf-aranges) */
	if (!units)
		skip();
	/* the comparison saw lines, and places without any (padding, PLT) */
	assert_true(with_line > 1000);
	assert_true(without > 0);
	assert_true(bytes > 0);
	/* parsed in Dwarfs of their own: libdw keeps none of the tables */
	assert_int_equal(fresh_total, 0);
	assert_int_equal(fresh_shared[0], 0);
	assert_int_equal(fresh_shared[1], 0);
}

/*
 * A unit's line table is copied, and the module's Dwarf keeps no table of
 * libdw's for it (parsed in a Dwarf of lineidx's own, ended with
 * lineidx_end_dwarf()): what lineidx adds to the heap for every unit of
 * this binary is less than what libdw's tables of the same units hold in
 * the module's Dwarf (some 48 bytes a row, and the copies 16: before, it
 * added those tables and the copies besides).
 */
static void test_lines_not_kept_by_libdw(void **state)
{
#ifdef __GLIBC__
	static const Dwfl_Callbacks cb = {
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
	};
	Dwfl *dwfl = dwfl_begin(&cb);
	struct line_index *x = NULL;
	struct strtab names = { 0 };
	Dwarf_Die *cus = NULL, *cu = NULL;
	Dwarf_Addr bias;
	size_t ncu = 0, cap = 0, rows = 0, fresh_total = 0, copied, parsed, before, held;

	(void)state;
	assert_non_null(dwfl);
	assert_non_null(dwfl_report_offline(dwfl, "self", "/proc/self/exe", -1));
	dwfl_report_end(dwfl, NULL, NULL);
	while ((cu = dwfl_nextcu(dwfl, cu, &bias))) {
		if (ncu == cap) {
			cap = cap ? cap * 2 : 64;
			cus = realloc(cus, cap * sizeof(*cus));
			assert_non_null(cus);
		}
		cus[ncu++] = *cu;
	}
	assert_true(ncu > 10);
	assert_true(lineidx_own_dwarf);
	lineidx_by_libdw = true;        /* where libdw parses, this test's subject */
	lineidx_module_max = 0; /* every table in a Dwarf of lineidx's own */
	before = mallinfo2().uordblks;
	for (size_t i = 0; i < ncu; i++) {
		const char *file = NULL;
		unsigned line = 0;
		size_t fresh = 0;

		lineidx_find(&x, NULL, 0, &names, &cus[i], 0, &file, &line, &fresh);
		fresh_total += fresh;
	}
	/* its own Dwarf holds libdw's tables until it ends: counted meanwhile */
	held = lineidx_bytes(x);
	lineidx_end_dwarf(x);
	assert_true(lineidx_bytes(x) > 0 && lineidx_bytes(x) < held);
	copied = mallinfo2().uordblks - before;
	before = mallinfo2().uordblks;
	for (size_t i = 0; i < ncu; i++) {
		Dwarf_Lines *lines;
		size_t n = 0;

		if (dwarf_getsrclines(&cus[i], &lines, &n) == 0)
			rows += n;
	}
	parsed = mallinfo2().uordblks - before;
	/* a sanitizer's allocator: glibc's arenas do not see libdw's */
	if (!parsed) {
		lineidx_free(x);
		strtab_free(&names);
		free(cus);
		dwfl_end(dwfl);
		lineidx_module_max = 1u << 20;
		lineidx_by_libdw = false;
		skip();
	}
	print_message("%zu units, %zu rows: lineidx added %zu bytes, libdw's tables %zu\n", ncu,
		      rows, copied, parsed);
	assert_true(rows > 1000);
	assert_int_equal(fresh_total, 0); /* none left in the module's Dwarf */
	assert_true(copied < parsed);
	lineidx_free(x);
	strtab_free(&names);
	free(cus);
	dwfl_end(dwfl);
	lineidx_module_max = 1u << 20;
	lineidx_by_libdw = false;
#else
	(void)state;
	skip();
#endif
}

/* The functions of "fn file:line;..." @full, file and line left out. */
static void functions_of(const char *full, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (const char *p = full; *p && at + 1 < len;) {
		const char *sp = strchr(p, ' '), *semi = strchr(p, ';');

		if (!sp || !semi || sp > semi)
			break;
		at += (size_t)snprintf(out + at, len - at, "%.*s;", (int)(sp - p), p);
		p = semi + 1;
	}
}

/*
 * sym_opts.no_lines (formats that show no file or line, such as folded):
 * every frame of every address is the function, inlined call by inlined
 * call, that the symbolizer reading lines gives, and none has a file or
 * a line (the line tables and call sites were not read).
 */
static void test_no_lines(void **state)
{
	uint64_t start, end, addrs[400];
	struct machine *m;
	struct sym_opts o = { .use_proc_kallsyms = false };
	struct sym_opts nl = { .use_proc_kallsyms = false, .no_lines = true };
	struct symbolizer *s, *snl;
	struct namer *n, *nnl;
	char **full, **bare;
	size_t with_file = 0;

	(void)state;
	m = machine_with_self(&start, &end);
	for (size_t i = 0; i < 400; i++)
		addrs[i] = start + (end - start) * i / 400;
	s = sym_new(&o, &hdr);
	snl = sym_new(&nl, &hdr);
	assert_non_null(s);
	assert_non_null(snl);
	n = namer_new(s, 0);
	nnl = namer_new(snl, 0);
	assert_non_null(n);
	assert_non_null(nnl);
	full = names_full(n, m, addrs, 400);
	bare = names_full(nnl, m, addrs, 400);
	for (size_t i = 0; i < 400; i++) {
		char fa[4096], fb[4096];

		functions_of(full[i], fa, sizeof(fa));
		functions_of(bare[i], fb, sizeof(fb));
		assert_string_equal(fa, fb);
		assert_null(strstr(bare[i], ".c:"));
		assert_null(strstr(bare[i], ".h:"));
		for (const char *p = bare[i]; (p = strchr(p, ' ')); p++)
			assert_memory_equal(p, " ?:0;", 5);
		with_file += strstr(full[i], ".c:") != NULL;
	}
	assert_true(with_file > 100); /* lines were there to leave out */
	free_names(full, 400);
	free_names(bare, 400);
	namer_free(n);
	namer_free(nnl);
	sym_free(s);
	sym_free(snl);
	machine_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threaded_names_are_unthreaded_names),
		cmocka_unit_test(test_go_names_and_roots),
		cmocka_unit_test(test_roots_parse),
		cmocka_unit_test(test_named_as_given),
		cmocka_unit_test(test_reset_and_trim),
		cmocka_unit_test(test_names_made_when_used),
		cmocka_unit_test(test_plt_frame_searches_no_unit),
		cmocka_unit_test(test_symbols_sorted_as_qsort),
		cmocka_unit_test(test_lanes_name_as_one),
		cmocka_unit_test(test_trim_symbol_table),
		cmocka_unit_test(test_trim_idle),
		cmocka_unit_test(test_rebind_keeps_files),
		cmocka_unit_test(test_rebind_kernel),
		cmocka_unit_test(test_kernel_frame_at_entry),
		cmocka_unit_test(test_unnamed_keeps_offset),
		cmocka_unit_test(test_lines_as_libdw),
		cmocka_unit_test(test_lines_not_kept_by_libdw),
		cmocka_unit_test(test_no_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
