// SPDX-License-Identifier: MIT
/*
 * lineidx.c - the source line at an address, from a compact copy of each
 * compile unit's line table made at its first lookup: 16 bytes a row where
 * libdw keeps some 64, and its file names interned once. The copy belongs
 * to the module's state, not to its Dwarf: when sym_trim() ends the Dwfl
 * of a module in use, a unit named before needs no new parse of its line
 * program (on a long stream that parse was most of what a window cost).
 *
 * A lookup is the one dwfl_module_getsrc() does on libdw's table: the last
 * row at or below the address, none when that row ends its sequence.
 *
 * Symbolizers naming side by side share a file's tables (shared.c): one
 * of them copies a unit's table, the others read the copy (its file names
 * then its own, not any one symbolizer's), and libdw parses the unit's
 * line program once rather than once per lane.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

#define ROW_END 0x80000000u        /* in file: the row ends a sequence */
#define ROW_NO_FILE 0x7fffffffu

struct line_row {
	uint64_t addr;
	uint32_t line;
	uint32_t file;              /* index into the unit's names | ROW_END */
};

struct line_unit {
	struct line_row *rows;      /* libdw's order: by address */
	size_t nrows;
	const char **names;         /* its file table, interned; NULL entries unnamed */
	size_t nnames;
	const struct line_unit *shared; /* the table's, when it is shared (the rest empty) */
	char *name_block;           /* a shared table's: its names, one after the other */
	bool in_libdw;              /* parsed in the module's Dwarf, which keeps it */
};

struct line_index {
	struct wordmap map;         /* a unit DIE's offset -> its index + 1 in units */
	uint32_t next;
	struct line_unit *units;
	size_t cap;
	size_t bytes;               /* what the units' tables hold */
	uint64_t rows;              /* rows copied by this index */
	Dwarf *own;                 /* where line programs are parsed (scratch_get()) */
	Elf *own_elf;               /* the module's Elf it is on */
	uint64_t own_rows;          /* rows libdw parsed in it */
	uint64_t module_rows;       /* rows libdw parsed in the module's Dwarf, kept there */
	Dwarf_CU *own_last;         /* the last unit it found (own_find()), NULL none */
	Dwarf_Off own_at;           /* that unit's offset */
	bool own_done;              /* no unit after it */
	Elf *zip_elf;               /* the last Elf asked of (elf_zipped()) */
	bool zip;                   /* whether it has compressed debug sections */
};

/* @u's file names as @files has them (@nf), copied into one block of its
 * own: a table shared by several symbolizers is no one's strings' */
static bool names_own(struct line_unit *u, Dwarf_Files *files, size_t nf)
{
	size_t len = 0;
	char *at;

	for (size_t i = 0; i < nf; i++) {
		const char *f = dwarf_filesrc(files, i, NULL, NULL);

		len += f ? strlen(f) + 1 : 0;
	}
	u->name_block = at = malloc(len ? len : 1);
	if (!at)
		return false;
	for (size_t i = 0; i < nf; i++) {
		const char *f = dwarf_filesrc(files, i, NULL, NULL);

		if (!f)
			continue;
		u->names[i] = at;
		at = stpcpy(at, f) + 1;
	}
	return true;
}

bool lineidx_own_dwarf = true;
size_t lineidx_module_max = 1u << 20;

/*
 * Where unit @cu's line program is parsed: in a Dwarf of @x's own on the
 * unit's file (the unit in it into *@scu), begun at the first unit and
 * kept for the next ones, as libdw finds a unit by its offset by reading
 * the header of every unit before it (once a Dwarf). libdw keeps a table
 * it parsed (some 48 bytes a row, and its file table) as long as its
 * Dwarf lives, and the module's lives as long as it names; this one is
 * ended, and begun anew at the next unit, once its tables hold more than
 * OWN_MIN and a quarter of what the copies (16 bytes a row) made so far
 * hold. On a --call-graph dwarf JVM recording, libdw's tables of libjvm's
 * units were 58 of report's 111 MB of heap at its peak. Return: NULL
 * where the unit is not a plain one of the module's file (a split unit:
 * parsed in the module's Dwarf, which keeps it, as before).
 *
 * A file's first tables, until they pass lineidx_module_max of libdw's
 * (1 MiB), are parsed in the module's Dwarf all the same (NULL): its
 * units are found already (libdwfl read the address ranges, which reads
 * every unit's header), where a Dwarf of lineidx's own reads every
 * header again up to the unit - the same for a file whose few units are
 * named once per run: a -g export of one program named libc's in 0.8-1.0
 * ms of CPU less (of a naming lane's 5-8 ms).
 */
#define OWN_ROW_BYTES 48u
#define OWN_MIN (4u << 20)

/*
 * Have @x's own Dwarf find the units up to the one at @start (its header's
 * offset) one by one, letting go of the pages read every OWN_STEP bytes
 * of headers passed (dwpages_drop(), on @dbg, the module's Dwarf on the
 * same file): the kernel maps tens of KiB around each header read, and
 * libdw reads all those before a unit the first time one is asked of it.
 * A unit libdw cannot read ends the walk (libdw then looks for it itself).
 */
#define OWN_STEP (4u << 20)

static void own_find(struct line_index *x, Dwarf *dbg, Dwarf_Off start)
{
	Dwarf_Off from = x->own_at;

	while (!x->own_done && (!x->own_last || x->own_at < start)) {
		Dwarf_CU *next;
		Dwarf_Die die;

		if (dwarf_get_units(x->own, x->own_last, &next, NULL, NULL, &die, NULL) != 0) {
			x->own_done = true; /* the last, or one libdw cannot read */
			break;
		}
		x->own_last = next;
		x->own_at = dwarf_dieoffset(&die) - dwarf_cuoffset(&die);
		if (x->own_at - from >= OWN_STEP) {
			dwpages_drop(dbg);
			from = x->own_at;
		}
	}
}

/*
 * Whether @elf holds compressed debug sections (SHF_COMPRESSED, or GNU's
 * .zdebug_*): a second Dwarf on it decompresses them again, and libelf
 * frees the data the module's Dwarf reads (Go's binaries compress theirs:
 * report of every Go program aborted, a double free in elf_end).
 */
static bool elf_zipped(struct line_index *x, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf == x->zip_elf)
		return x->zip;
	x->zip_elf = elf;
	x->zip = true;          /* unreadable: as compressed, no second Dwarf */
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return true;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (!sh || (sh->sh_flags & SHF_COMPRESSED) || (name && !strncmp(name, ".zdebug", 7)))
			return true;
	}
	x->zip = false;
	return false;
}

static Dwarf *scratch_get(struct line_index *x, Dwarf_Die *cu, Dwarf_Die *scu)
{
	Dwarf *dbg = dwarf_cu_getdwarf(cu->cu), *alt;
	Elf *elf = dbg ? dwarf_getelf(dbg) : NULL;
	uint64_t held = x->own_rows * OWN_ROW_BYTES, copies = x->rows * sizeof(struct line_row);
	uint8_t type = 0;

	if (!lineidx_own_dwarf || !elf ||
	    dwarf_cu_info(cu->cu, NULL, &type, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    (type != DW_UT_compile && type != DW_UT_partial))
		return NULL;
	if (!x->own && x->module_rows * OWN_ROW_BYTES < lineidx_module_max)
		return NULL;
	if (elf_zipped(x, elf))
		return NULL;
	if (x->own && (x->own_elf != elf || (held > OWN_MIN && held > copies / 4)))
		lineidx_end_dwarf(x);
	if (!x->own) {
		x->own = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (!x->own)
			return NULL;
		x->own_elf = elf;
		/* names in a dwz file's strings: the module's alternate */
		alt = dwarf_getalt(dbg);
		if (alt)
			dwarf_setalt(x->own, alt);
	}
	own_find(x, dbg, dwarf_dieoffset(cu) - dwarf_cuoffset(cu));
	if (!dwarf_offdie(x->own, dwarf_dieoffset(cu), scu) || dwarf_tag(scu) != dwarf_tag(cu))
		return NULL;
	return x->own;
}

void lineidx_end_dwarf(struct line_index *x)
{
	if (x)
		x->zip_elf = NULL;  /* the module's Elf ends with it */
	if (!x || !x->own)
		return;
	dwarf_end(x->own);
	x->own = NULL;
	x->own_elf = NULL;
	x->own_rows = 0;
	x->own_last = NULL;
	x->own_at = 0;
	x->own_done = false;
}

/* Copy @cu's line table and file names into @u (names interned into
 * @strings, or with none, a block of @u's own): false out of memory (a
 * unit without a table, or whose table libdw cannot read, has no rows). */
static bool unit_copy(struct line_unit *u, struct strtab *strings, Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t n = 0, nf = 0;

	if (dwarf_getsrcfiles(cu, &files, &nf) != 0)
		nf = 0;
	if (nf) {
		u->names = calloc(nf, sizeof(*u->names));
		if (!u->names)
			return false;
		u->nnames = nf;
		if (!strings && !names_own(u, files, nf))
			return false;
		for (size_t i = 0; i < nf && strings; i++) {
			const char *f = dwarf_filesrc(files, i, NULL, NULL);

			u->names[i] = f ? strtab_intern_text(strings, f) : NULL;
		}
	}
	if (dwarf_getsrclines(cu, &lines, &n) != 0 || !n)
		return true;
	u->rows = malloc(n * sizeof(*u->rows));
	if (!u->rows)
		return false;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct line_row *r = &u->rows[i];
		Dwarf_Addr a = 0;
		Dwarf_Files *lf;
		size_t fi = ROW_NO_FILE;
		bool end = false;
		int ln = 0;

		if (!l) {
			*r = (struct line_row){ .file = ROW_NO_FILE };
			continue;
		}
		if (dwarf_lineaddr(l, &a) != 0)
			a = 0;
		if (dwarf_lineno(l, &ln) != 0)
			ln = 0;
		dwarf_lineendsequence(l, &end);
		/* the rows' file table is the unit's */
		if (dwarf_line_file(l, &lf, &fi) != 0 || lf != files || fi >= nf)
			fi = ROW_NO_FILE;
		r->addr = a;
		r->line = ln > 0 ? (uint32_t)ln : 0;
		r->file = (uint32_t)fi | (end ? ROW_END : 0);
	}
	u->nrows = n;
	return true;
}

/* @cu's table as dwline.c read it (@l, emptied) into @u, as unit_copy()
 * copies libdw's: false out of memory. */
static bool unit_take(struct line_unit *u, struct strtab *strings, struct dwline *l)
{
	bool ok = false;

	u->names = calloc(l->nnames ? l->nnames : 1, sizeof(*u->names));
	if (!u->names)
		goto out;
	u->nnames = l->nnames;
	if (!strings) {
		/* a block of its own, as names_own() makes it */
		size_t len = 0;
		char *at;

		for (size_t i = 0; i < l->nnames; i++)
			len += strlen(l->names[i]) + 1;
		u->name_block = at = malloc(len ? len : 1);
		if (!at)
			goto out;
		for (size_t i = 0; i < l->nnames; i++) {
			u->names[i] = at;
			at = stpcpy(at, l->names[i]) + 1;
		}
	}
	for (size_t i = 0; i < l->nnames && strings; i++)
		if (!(u->names[i] = strtab_intern_text(strings, l->names[i])))
			goto out;
	if (l->nrows) {
		u->rows = malloc(l->nrows * sizeof(*u->rows));
		if (!u->rows)
			goto out;
	}
	for (size_t i = 0; i < l->nrows; i++) {
		const struct dwline_row *r = &l->rows[i];

		u->rows[i] = (struct line_row){
			.addr = r->addr, .line = r->line > 0 ? (uint32_t)r->line : 0,
			.file = (r->file < l->nnames ? r->file : ROW_NO_FILE) |
				(r->end ? ROW_END : 0) };
	}
	u->nrows = l->nrows;
	ok = true;
out:
	dwline_free(l);
	return ok;
}

bool lineidx_by_libdw;

/* unit_copy() for @x: the table read by dwline.c, else parsed by libdw
 * in @x's own Dwarf (scratch_get()), else in the module's, which keeps it
 * (@u->in_libdw). */
static bool unit_build(struct line_index *x, struct line_unit *u, struct strtab *strings,
		       Dwarf_Die *cu)
{
	Dwarf_Die scu;
	Dwarf *own;
	struct dwline l;
	bool ok;

	if (!lineidx_by_libdw && dwline_read(cu, &l) == 0) {
		ok = unit_take(u, strings, &l);
		u->in_libdw = false;
		x->rows += u->nrows;
		dwpages_drop(dwarf_cu_getdwarf(cu->cu));
		return ok;
	}
	own = scratch_get(x, cu, &scu);
	ok = unit_copy(u, strings, own ? &scu : cu);

	u->in_libdw = !own;
	x->rows += u->nrows;
	if (own)
		x->own_rows += u->nrows;
	else
		x->module_rows += u->nrows;
	/* what the parse read is in the copy now */
	dwpages_drop(dwarf_cu_getdwarf(cu->cu));
	return ok;
}

static void unit_free(struct line_unit *u)
{
	free(u->rows);
	free(u->names);
	free(u->name_block);
}

/* A unit to copy for the shared table, by the index of the lane that asked. */
struct build_arg {
	struct line_index *x;
	Dwarf_Die *cu;
};

/* Copy unit @arg (struct build_arg) for the shared table. */
static void *line_build(struct sym_shared *sh, uint64_t file, uint64_t key, void *arg)
{
	struct line_unit *u = calloc(1, sizeof(*u));
	struct build_arg *b = arg;

	(void)sh;
	(void)file;
	(void)key;
	if (u && !unit_build(b->x, u, NULL, b->cu)) {
		unit_free(u);
		free(u);
		u = NULL;
	}
	return u;
}

static void line_destroy(void *obj)
{
	unit_free(obj);
	free(obj);
}

static const struct shared_build line_shared = {
	.kind = SHARED_LINES, .build = line_build, .destroy = line_destroy,
};

/*
 * The unit of @cu, its table copied at its first use (*@fresh_rows: the
 * rows copied then), or found in @sh under @file; NULL out of memory. A
 * unit whose copy ran out of memory stays without rows.
 */
static const struct line_unit *unit_of(struct line_index *x, struct sym_shared *sh,
				       uint64_t file, struct strtab *strings, Dwarf_Die *cu,
				       size_t *fresh_rows)
{
	uint64_t key = dwarf_dieoffset(cu);
	struct line_unit *u;
	bool fresh = false;
	uint32_t id;

	if (!x->next)
		x->next = 1;
	id = wordmap_get(&x->map, &key, 1, &x->next, &fresh);
	if (!id)
		return NULL;
	if (id > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		struct line_unit *n;

		while (cap < id)
			cap *= 2;
		n = realloc(x->units, cap * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + x->cap, 0, (cap - x->cap) * sizeof(*n));
		x->bytes += (cap - x->cap) * sizeof(*n);
		x->units = n;
		x->cap = cap;
	}
	u = &x->units[id - 1];
	if (!fresh)
		return u->shared ? u->shared : u;
	if (sh && file) {
		struct build_arg arg = { x, cu };
		bool here;

		u->shared = shared_get(sh, &line_shared, file, key + 1, &arg, &here);
		if (!u->shared)
			return NULL; /* out of memory: the unit stays without rows */
		/* parsed by this one's libdw, and kept there */
		*fresh_rows = here && u->shared->in_libdw ? u->shared->nrows : 0;
		return u->shared;
	}
	if (!unit_build(x, u, strings, cu)) {
		unit_free(u);
		memset(u, 0, sizeof(*u));
		return NULL;
	}
	x->bytes += u->nrows * sizeof(*u->rows) + u->nnames * sizeof(*u->names);
	*fresh_rows = u->in_libdw ? u->nrows : 0;
	return u;
}

bool lineidx_find(struct line_index **xp, struct sym_shared *sh, uint64_t sfile,
		  struct strtab *strings, Dwarf_Die *cu, uint64_t addr, const char **file,
		  unsigned *line, size_t *fresh_rows)
{
	struct line_index *x = *xp;
	const struct line_row *r;
	const struct line_unit *u;
	size_t lo = 0, hi;

	*fresh_rows = 0;
	if (!x && !(x = *xp = calloc(1, sizeof(*x))))
		return false;
	u = unit_of(x, sh, sfile, strings, cu, fresh_rows);
	if (!u || !u->nrows)
		return false;
	/* the last row at or below @addr */
	hi = u->nrows - 1;
	while (lo < hi) {
		size_t mid = hi - (hi - lo) / 2;

		if (addr < u->rows[mid].addr)
			hi = mid - 1;
		else
			lo = mid;
	}
	r = &u->rows[lo];
	if ((r->file & ROW_END) || r->addr > addr)
		return false;
	*file = (r->file & ~ROW_END) < u->nnames ? u->names[r->file & ~ROW_END] : NULL;
	*line = r->line;
	return true;
}

const char *lineidx_file(struct line_index **xp, struct sym_shared *sh, uint64_t sfile,
			 struct strtab *strings, Dwarf_Die *cu, uint64_t idx)
{
	struct line_index *x = *xp;
	const struct line_unit *u;
	size_t rows;

	if (!x && !(x = *xp = calloc(1, sizeof(*x))))
		return NULL;
	u = unit_of(x, sh, sfile, strings, cu, &rows);
	return u && idx < u->nnames ? u->names[idx] : NULL;
}

size_t lineidx_bytes(const struct line_index *x)
{
	return x ? x->bytes + x->own_rows * OWN_ROW_BYTES : 0;
}

void lineidx_free(struct line_index *x)
{
	if (!x)
		return;
	lineidx_end_dwarf(x);
	for (size_t i = 0; i < x->cap; i++)
		unit_free(&x->units[i]); /* a shared one's are the table's */
	free(x->units);
	wordmap_free(&x->map);
	free(x);
}
