/* SPDX-License-Identifier: MIT */
/*
 * trim.c - what naming in a file holds (the pages of its files libdw
 * mapped and what libdw keeps of them, the indexes made from its units,
 * the names made, the symbol table), counted - measured where the process
 * can say (resident pages), else estimated from what naming asked of
 * libdw - and let go of by sym_trim(), least recently used file first,
 * cheapest to make again first.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/log.h"
#include "priv.h"

/*
 * What libdw keeps per unit looked up, measured on libdw 0.188 (mallinfo2()
 * around its calls): the unit's Dwarf_CU (1,034-1,069 bytes: libc's 2,063
 * units, libpython's 146, perfport's 82) and the abbreviations read with
 * its DIEs (1,163, 4,202 and 3,015 bytes a unit read whole), ~3 KiB; a
 * line table libdw parsed (Dwarf_Line, and libdwfl's index of it), an
 * address range of its table (massif, on a window stream naming libc and a
 * C++ program).
 */
#define DW_LINE_BYTES 64u
#define DW_UNIT_BYTES 3072u
#define DW_ARANGE_BYTES 48u
/*
 * A call frame entry libdw interned (struct dwarf_fde and its tsearch
 * node, with the CIEs and the frame worked out): 61-72 bytes a lookup
 * through .eh_frame_hdr's table (cc1 5,059 lookups, libc 342, libpython
 * 571), 80 an entry read in order (libLLVM-14: 7.6 MB for its 95 k).
 */
#define DW_FDE_BYTES 80u
/*
 * An open Dwfl's module: libdwfl's and libelf's structures for the file
 * (dwfl_report_elf(): 6.5-10.1 KiB for bash, libz, libcrypto, libstdc++,
 * python3.11 and perfport) and its symbol table's (dwfl_module_getsymtab():
 * 6.1-9.3 KiB beyond the 231 KiB the process's first one costs once).
 */
#define DW_MODULE_BYTES (16u << 10)
#define DW_RELEASE_MIN (64u << 10) /* sym_trim() lets go of files holding more */

/*
 * Count what a lookup in unit @cu (NULL: none) makes libdw keep: the unit,
 * once a Dwfl, and the line table it parsed for lineidx (@rows, 0: none).
 */
void dw_account(struct dso_state *st, Dwarf_Die *cu, size_t rows)
{
	uint64_t key;
	bool fresh = false;

	if (!st->dw_bytes) {
		/* the module's address ranges, read with its first lookup */
		Dwarf_Addr dbias;
		Dwarf *dw = dwfl_module_getdwarf(st->mod, &dbias);
		Dwarf_Aranges *ar;
		size_t nar = 0;

		st->dw_bytes = DW_UNIT_BYTES;
		/* as many as libdw's table would hold, without making it */
		if (dw && aranges_of(st, dw))
			st->dw_bytes += aranges_count(st->aranges) * DW_ARANGE_BYTES;
		else if (dw && dwarf_getaranges(dw, &ar, &nar) == 0)
			st->dw_bytes += nar * DW_ARANGE_BYTES;
	}
	st->dw_bytes += rows * DW_LINE_BYTES;
	st->dw_measured = false; /* what it read is mapped: measured again */
	if (!cu)
		return;
	key = (uint64_t)(uintptr_t)cu->cu;
	if (!st->dw_units_next)
		st->dw_units_next = 1;
	if (wordmap_get(&st->dw_units, &key, 1, &st->dw_units_next, &fresh) && fresh)
		st->dw_bytes += DW_UNIT_BYTES;
}

/*
 * Whether libdw reads @elf's .eh_frame in order, interning every entry up
 * to the one asked for, rather than through .eh_frame_hdr's table: its
 * dwarf_getcfi_elf() (0.188) takes the sections in their order and uses
 * the table only when .eh_frame_hdr comes before .eh_frame (GNU ld's
 * order; lld puts it after: libLLVM, Chromium). A file without section
 * names is read through PT_GNU_EH_FRAME, with the table.
 */
static bool cfi_in_order(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	bool hdr = false;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0 || !shstrndx)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (!name)
			continue;
		if (!strcmp(name, ".eh_frame_hdr"))
			hdr = true;
		else if (!strcmp(name, ".eh_frame"))
			return sh->sh_type != SHT_NOBITS && !hdr;
	}
	return false;
}

void dw_account_cfi(struct dso_state *st, uint64_t vaddr, bool found)
{
	size_t lo;

	st->dw_measured = false; /* libdw read the module's .eh_frame */
	if (!st->nr_fde_starts || vaddr < st->fde_starts[0])
		return; /* before the first entry: none read */
	if (!st->cfi_linear) {
		GElf_Addr bias;

		st->cfi_linear = cfi_in_order(dwfl_module_getelf(st->mod, &bias)) ? 1 : -1;
	}
	lo = fde_start_at(st, vaddr); /* the entry at or before @vaddr */
	if (st->cfi_linear > 0) {
		/* read up to it, or (none covers it) to the section's end */
		size_t upto = found ? lo + 1 : st->nr_fde_starts;

		if (upto > st->cfi_fdes)
			st->cfi_fdes = upto;
		return;
	}
	/* the table's entry at or before it is interned, covering it or not */
	if (!st->cfi_seen && !(st->cfi_seen = calloc((st->nr_fde_starts + 7) / 8, 1)))
		return;
	if (!(st->cfi_seen[lo / 8] & (1u << (lo % 8)))) {
		st->cfi_seen[lo / 8] |= (uint8_t)(1u << (lo % 8));
		st->cfi_fdes++;
	}
}

/* What libdw's call frame entries for @st hold (and the bits saying which). */
static uint64_t dso_cfi_bytes(const struct dso_state *st)
{
	return st->cfi_fdes * (uint64_t)DW_FDE_BYTES +
	       (st->cfi_seen ? (st->nr_fde_starts + 7) / 8 : 0);
}

static pthread_once_t pagemap_once = PTHREAD_ONCE_INIT;
static int pagemap_fd = -1;

static void pagemap_open(void)
{
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
}

/*
 * The bytes of [@base, @base + @size) this process has resident (each
 * page's entry in /proc/self/pagemap: bit 63, present). Return: false
 * where pagemap cannot be read.
 */
static bool resident_bytes(const void *base, size_t size, uint64_t *bytes)
{
	uint64_t buf[512];
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at, end;

	*bytes = 0;
	pthread_once(&pagemap_once, pagemap_open);
	if (pagemap_fd < 0 || page <= 0)
		return false;
	at = (uintptr_t)base / (uintptr_t)page;
	end = ((uintptr_t)base + size + (uintptr_t)page - 1) / (uintptr_t)page;
	while (at < end) {
		size_t want = end - at < 512 ? end - at : 512;
		ssize_t n = pread(pagemap_fd, buf, want * sizeof(*buf), (off_t)(at * sizeof(*buf)));

		if (n < (ssize_t)sizeof(*buf))
			return false;
		for (size_t i = 0; i < (size_t)n / sizeof(*buf); i++)
			*bytes += (buf[i] >> 63) * (uint64_t)page;
		at += (size_t)n / sizeof(*buf);
	}
	return true;
}

/*
 * What @elf holds in this process: the pages of its file image resident
 * (libelf maps the whole file; what libdwfl and libdw read of it stays
 * mapped while the Dwfl lives: into *@pages), and with @sections, its
 * debug sections' data that is not in the image (inflated from compressed
 * sections by libdw, or converted), all of it into *@bytes. Return: false
 * where the pages cannot be counted.
 */
static bool elf_held(Elf *elf, bool sections, uint64_t *pages, uint64_t *bytes)
{
	size_t size = 0, shstrndx;
	char *image = elf_rawfile(elf, &size);
	Elf_Scn *scn = NULL;

	if (!image || !resident_bytes(image, size, pages))
		return false;
	*bytes = *pages;
	if (!sections || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return true;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
		Elf_Data *d;

		/* libdw read every debug section as it opened its Dwarf */
		if (!name || (strncmp(name, ".debug", 6) && strncmp(name, ".zdebug", 7)) ||
		    sh->sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		if ((char *)d->d_buf < image || (char *)d->d_buf >= image + size)
			*bytes += d->d_size;
	}
	return true;
}

/*
 * Measure what @st's open Dwfl holds in its files (elf_held(): the module's
 * file and its debug file), again once naming asked libdw for more (a
 * name from the file's cache reads nothing).
 */
static void dw_measure(struct dso_state *st)
{
	GElf_Addr bias;
	Dwarf_Addr dbias;
	Elf *elf, *delf = NULL;
	uint64_t a = 0, b = 0, pa = 0, pb = 0;

	if (!st->dwfl || !st->mod) {
		st->dw_mapped = st->dw_pages = 0;
		st->dw_measured = false;
		return;
	}
	if (st->dw_measured)
		return;
	elf = dwfl_module_getelf(st->mod, &bias);
	/* its Dwarf only once a lookup asked for it (dw_account()) */
	if (st->dw_bytes) {
		Dwarf *dw = dwfl_module_getdwarf(st->mod, &dbias);

		delf = dw ? dwarf_getelf(dw) : NULL;
	}
	st->dw_measured = elf && elf_held(elf, elf == delf, &pa, &a) &&
			  (!delf || delf == elf || elf_held(delf, true, &pb, &b));
	st->dw_mapped = st->dw_measured ? a + b : 0;
	st->dw_pages = st->dw_measured ? pa + pb : 0;
}

/*
 * Let go of the pages of @st's files that are resident, its Dwfl kept
 * open: libdw's units, call frame entries and the module's symbol table
 * stay, and what is read again is mapped again from the page cache (a
 * file opened again reads its unit headers and address ranges anew).
 */
static void dso_pages_release(struct dso_state *st)
{
	GElf_Addr bias;
	Dwarf_Addr dbias;
	Elf *elf = dwfl_module_getelf(st->mod, &bias);
	Dwarf *dw = st->dw_bytes ? dwfl_module_getdwarf(st->mod, &dbias) : NULL;
	Elf *delf = dw ? dwarf_getelf(dw) : NULL;
	bool all = dwpages_release(elf);

	if (delf && delf != elf)
		all = dwpages_release(delf) && all;
	/* none now: measured again once naming asks libdw for more; where
	 * an image may not be let go of (an ET_REL file libdwfl relocated,
	 * another byte order), at the next sym_held(), and this pass goes
	 * on to the next file */
	if (all)
		st->dw_mapped -= st->dw_pages;
	else
		st->dw_measured = false;
	st->dw_pages = 0;
}

/* libdw's part of @st: estimated as it was used, and measured. */
static uint64_t dso_dw_bytes(const struct dso_state *st)
{
	return (st->dwfl ? DW_MODULE_BYTES : 0) + st->dw_bytes + dso_cfi_bytes(st) +
	       st->dw_mapped;
}

/*
 * End what libdw holds for @st. What was named stays (the caches), and so
 * do the indexes made from its units: opened again, the module names a
 * unit seen before without libdw parsing it again.
 */
void dso_dwarf_release(struct dso_state *st)
{
	lineidx_end_dwarf(st->lineidx); /* on the module's Elf */
	if (st->dwfl)
		dwfl_end(st->dwfl);
	st->dwfl = NULL;
	st->mod = NULL;
	free(st->cu_ranges);
	st->cu_ranges = NULL;
	st->nr_cu_ranges = 0;
	st->cu_ranges_built = false;
	aranges_free(st->aranges); /* its units' DIEs are the Dwarf's */
	st->aranges = NULL;
	st->aranges_tried = false;
	/* qualified names are keyed by their units, which are gone */
	free(st->dwn);
	st->dwn = NULL;
	st->dwn_cap = st->dwn_nr = 0;
	wordmap_free(&st->dw_units);
	st->dw_units_next = 1;
	st->dw_bytes = 0;
	free(st->cfi_seen);
	st->cfi_seen = NULL;
	st->cfi_fdes = 0;
	st->cfi_linear = 0;
	st->dw_mapped = st->dw_pages = 0;
	st->dw_measured = false;
}

/* Let go of the indexes made from @st's units (its Dwfl released first). */
void dso_index_release(struct dso_state *st)
{
	inlidx_free(st->inlidx);
	st->inlidx = NULL;
	lineidx_free(st->lineidx);
	st->lineidx = NULL;
}

static uint64_t dso_index_bytes(const struct dso_state *st)
{
	return inlidx_bytes(st->inlidx) + lineidx_bytes(st->lineidx);
}

/* What the names made in @st hold: its address cache and inlined chains. */
static uint64_t dso_names_bytes(const struct dso_state *st)
{
	return st->cache_cap * sizeof(*st->cache) + st->cap_inl * sizeof(*st->inl);
}

/* Forget the names made in @st (made again from the indexes when asked). */
static void dso_names_release(struct dso_state *st)
{
	free(st->cache);
	st->cache = NULL;
	st->cache_cap = st->cache_nr = 0;
	free(st->inl);
	st->inl = NULL;
	st->nr_inl = st->cap_inl = 0;
}

/*
 * Open @st's file again after sym_trim() released it, as sym_load_dso()
 * found it (@module: the name it is reported under). Return: 0, or -1
 * when it cannot be (a container's root gone, the file replaced): said
 * once, and its new frames are named from the symbol table alone.
 */
int dso_reopen(struct dso_state *st, const char *module)
{
	GElf_Addr bias;

	st->dw_released = false;
	if (!dso_report(st, module) || !dwfl_module_getelf(st->mod, &bias) || bias != st->bias) {
		pp_warn("'%s': cannot be opened again for naming: %s", st->path,
			st->mod ? "it changed" : dwfl_errmsg(-1));
		if (st->dwfl)
			dwfl_end(st->dwfl);
		st->dwfl = NULL;
		st->mod = NULL;
		return -1;
	}
	return 0;
}

/*
 * What a file's symbol table holds: its sorted table and the names not
 * yet made clean, and the module's .symtab and .strtab pages it read
 * (mapped: resident while the Dwfl is open; ~24 bytes an entry and ~32 a
 * name, estimated), or once its Dwfl ended, the names copied out of them.
 * Where the module's pages are measured (dw_measure()), they are libdw's
 * part and the names alone are counted here. A file without debug
 * information holds little else, but a big program's table is megabytes.
 */
#define SYMTAB_FILE_BYTES 56u
#define SYMTAB_NAME_BYTES 32u

static uint64_t dso_symtab_bytes(const struct dso_state *st)
{
	uint64_t per = st->dwfl && st->dw_measured ? 0 :
		       st->dwfl || !st->sym_names ? SYMTAB_FILE_BYTES : SYMTAB_NAME_BYTES;
	uint64_t b = st->nr_syms * (sizeof(*st->syms) + per);

	return b + st->nr_fde_starts * sizeof(*st->fde_starts);
}

/* Let go of @st's symbol table (its Dwfl ended first): built again when
 * the file is opened again. */
static void dso_symtab_release(struct dso_state *st)
{
	free(st->syms);
	st->syms = NULL;
	st->nr_syms = 0;
	st->syms_built = false;
	free(st->sym_names);
	st->sym_names = NULL;
	free(st->fde_starts);
	st->fde_starts = NULL;
	st->nr_fde_starts = 0;
	st->fde_built = false;
}

/* What sym_trim() lets go of in a file, cheapest to make again first. */
enum trim_pass {
	TRIM_PAGES,   /* the files' pages resident: read again as asked */
	TRIM_DWARF,   /* libdw's part: the indexes make it cheap to open again */
	TRIM_NAMES,   /* the names made: looked up again in the indexes */
	TRIM_INDEXES, /* the indexes: libdw parses the units again */
	TRIM_FILE,    /* all of it, its symbol table too: the file is opened anew */
};

/* What letting go of @st at @pass frees (what earlier passes would have). */
static uint64_t trim_bytes(const struct dso_state *st, enum trim_pass pass)
{
	uint64_t b = pass == TRIM_PAGES ? st->dw_pages : dso_dw_bytes(st);

	if (pass >= TRIM_NAMES)
		b += dso_names_bytes(st);
	if (pass >= TRIM_INDEXES)
		b += dso_index_bytes(st);
	if (pass >= TRIM_FILE)
		b += dso_symtab_bytes(st);
	return b;
}

/* Let go of what @pass lets go of in @st (and what earlier passes do). */
static void dso_trim(struct dso_state *st, enum trim_pass pass)
{
	if (pass == TRIM_PAGES) {
		if (st->dwfl && st->mod)
			dso_pages_release(st);
		return;
	}
	if (pass >= TRIM_FILE)
		dso_symtab_release(st);
	if (st->dwfl) {
		/* what is left of its symbol table's names lives in the module */
		symtab_detach(st);
		dso_dwarf_release(st);
		st->dw_released = true;
	}
	if (pass >= TRIM_NAMES)
		dso_names_release(st);
	if (pass >= TRIM_INDEXES)
		dso_index_release(st);
}

/* The least recently used file holding at least DW_RELEASE_MIN of what
 * @pass lets go of (libdw's part: only an open Dwfl holds any), with
 * @idle, of those no frame was named in since the last trim; NULL none. */
static struct dso_state *trim_candidate(struct symbolizer *s, enum trim_pass pass, bool idle)
{
	struct dso_state *lru = NULL;

	for (size_t i = 0; i < s->nr_states; i++) {
		struct dso_state *st = &s->states[i];

		if (idle && st->dw_used > s->trim_seen)
			continue;
		uint64_t b = pass == TRIM_PAGES ? st->dw_pages :
			     pass == TRIM_DWARF ? dso_dw_bytes(st) :
			     pass == TRIM_NAMES ? dso_names_bytes(st) :
			     pass == TRIM_INDEXES ? dso_index_bytes(st) : dso_symtab_bytes(st);

		/* a file without debug information holds next to nothing:
		 * opening it again would cost more */
		if (b >= DW_RELEASE_MIN && (!lru || st->dw_used < lru->dw_used))
			lru = st;
	}
	return lru;
}

/*
 * Files no frame was named in for sym_opts.idle_s: let go altogether, and
 * the memory handed back. A program that ran once (a compiler, a cron job)
 * would else keep what naming made of it while it fits the budget - for
 * days. A file's last use is the time of the first sym_trim() after it.
 * Return: how many were let go.
 */
static size_t trim_idle(struct symbolizer *s)
{
	struct timespec ts;
	uint64_t now;
	size_t n = 0;

	if (!s->opts.idle_s)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec;
	for (size_t i = 0; i < s->states_used; i++) {
		struct dso_state *st = &s->states[i];

		if (st->status != 1)
			continue;
		if (st->dw_used > s->trim_clock || !st->used_at) {
			st->used_at = now;
			continue;
		}
		if (now - st->used_at < s->opts.idle_s || !trim_bytes(st, TRIM_FILE))
			continue;
		pp_debug("'%s': not named from for %" PRIu64 " s: let go (~%" PRIu64 " KiB)",
			 st->path, now - st->used_at, trim_bytes(st, TRIM_FILE) >> 10);
		dso_trim(st, TRIM_FILE);
		n++;
	}
	s->trim_clock = s->dw_clock;
#ifdef __GLIBC__
	if (n)
		malloc_trim(0); /* what they held goes back to the system */
#endif
	return n;
}

void sym_held(struct symbolizer *s, uint64_t *dwarf, uint64_t *indexes, uint64_t *names,
	      uint64_t *symtabs)
{
	*dwarf = *indexes = *names = *symtabs = 0;
	for (size_t i = 0; i < s->nr_states; i++) {
		if (s->opts.dwarf_max)
			dw_measure(&s->states[i]);
		*dwarf += dso_dw_bytes(&s->states[i]);
		*indexes += dso_index_bytes(&s->states[i]);
		*names += dso_names_bytes(&s->states[i]);
		*symtabs += dso_symtab_bytes(&s->states[i]);
	}
}

size_t sym_trim(struct symbolizer *s)
{
	/*
	 * The passes in order: a file named from since the last trim is
	 * likely to be named from in the next window, where what was let go
	 * of it is made again at once (its pages read again, its Dwfl opened
	 * again), so the other files' pages and libdw part go first.
	 */
	static const struct {
		enum trim_pass pass;
		bool idle;
	} order[] = {
		{ TRIM_PAGES, true }, { TRIM_DWARF, true }, { TRIM_PAGES, false },
		{ TRIM_DWARF, false }, { TRIM_NAMES, false }, { TRIM_INDEXES, false },
		{ TRIM_FILE, false },
	};
	static const char *const what[] = {
		[TRIM_PAGES] = ": its files' pages only, the Dwfl kept",
		[TRIM_DWARF] = "", [TRIM_NAMES] = ", names made too",
		[TRIM_INDEXES] = ", names made and indexes too",
		[TRIM_FILE] = ", and its symbol table: all of it",
	};
	uint64_t held, dw, idx, names, symtabs, budget = s->opts.dwarf_max;
	size_t released = 0;

	if (!budget)
		return 0;
	released = trim_idle(s);
	sym_held(s, &dw, &idx, &names, &symtabs);
	held = dw + idx + names + symtabs;
	pp_debug("naming holds ~%" PRIu64 " KiB (libdw ~%" PRIu64 ", indexes %" PRIu64
		 ", names %" PRIu64 ", symbol tables ~%" PRIu64 "; --dwarf-max %zu KiB)",
		 held >> 10, dw >> 10, idx >> 10, names >> 10, symtabs >> 10,
		 (size_t)(budget >> 10));
	if (held <= budget) {
		s->trim_seen = s->dw_clock;
		return released;
	}
	/* the least recently used first, down to three quarters of the budget
	 * (a module in use is not released at every window), what is
	 * cheapest to make again first */
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		enum trim_pass pass = order[k].pass;
		struct dso_state *lru;

		while (held > budget / 4 * 3 && (lru = trim_candidate(s, pass, order[k].idle))) {
			uint64_t b = trim_bytes(lru, pass);

			held -= b;
			pp_debug("'%s': its debug information let go (~%" PRIu64 " KiB%s)", lru->path,
				 b >> 10, what[pass]);
			dso_trim(lru, pass);
			released++;
		}
	}
	s->trim_seen = s->dw_clock;
	/* what libdw freed stays with malloc, for what is named next: the
	 * memory is flat rather than handed back and faulted in again */
	return released;
}

