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
 */
#include <elfutils/libdw.h>
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
	uint64_t key;               /* the unit DIE's offset + 1; 0: an empty slot */
	struct line_row *rows;      /* libdw's order: by address */
	size_t nrows;
	const char **names;         /* its file table, interned; NULL entries unnamed */
	size_t nnames;
};

struct line_index {
	struct line_unit *units;    /* open addressing on key */
	size_t cap, nr;
	size_t bytes;               /* what the units' tables hold */
};

static size_t unit_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 40) & (cap - 1);
}

/* Copy @cu's line table and file names into @u: false out of memory (a
 * unit without a table, or whose table libdw cannot read, has no rows). */
static bool unit_build(struct line_unit *u, struct strtab *strings, Dwarf_Die *cu)
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
		for (size_t i = 0; i < nf; i++) {
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

		if (!l || dwarf_lineaddr(l, &a) != 0)
			a = 0;
		if (l && dwarf_lineno(l, &ln) != 0)
			ln = 0;
		if (l)
			dwarf_lineendsequence(l, &end);
		/* the rows' file table is the unit's */
		if (!l || dwarf_line_file(l, &lf, &fi) != 0 || lf != files || fi >= nf)
			fi = ROW_NO_FILE;
		r->addr = a;
		r->line = ln > 0 ? (uint32_t)ln : 0;
		r->file = (uint32_t)fi | (end ? ROW_END : 0);
	}
	u->nrows = n;
	return true;
}

/* The unit of @cu, its table copied at its first use; NULL out of memory. */
static struct line_unit *unit_of(struct line_index *x, struct strtab *strings, Dwarf_Die *cu,
				 size_t *fresh_rows)
{
	uint64_t key = dwarf_dieoffset(cu) + 1;
	struct line_unit *u;
	size_t i;

	if ((x->nr + 1) * 2 > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		struct line_unit *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < x->cap; j++) {
			if (!x->units[j].key)
				continue;
			for (i = unit_slot(x->units[j].key, cap); n[i].key; i = (i + 1) & (cap - 1))
				;
			n[i] = x->units[j];
		}
		free(x->units);
		x->units = n;
		x->cap = cap;
	}
	for (i = unit_slot(key, x->cap); x->units[i].key; i = (i + 1) & (x->cap - 1))
		if (x->units[i].key == key)
			return &x->units[i];
	u = &x->units[i];
	if (!unit_build(u, strings, cu)) {
		free(u->rows);
		free(u->names);
		memset(u, 0, sizeof(*u));
		return NULL;
	}
	u->key = key;
	x->nr++;
	x->bytes += u->nrows * sizeof(*u->rows) + u->nnames * sizeof(*u->names);
	*fresh_rows = u->nrows;
	return u;
}

bool lineidx_find(struct line_index **xp, struct strtab *strings, Dwarf_Die *cu, uint64_t addr,
		  const char **file, unsigned *line, size_t *fresh_rows)
{
	struct line_index *x = *xp;
	const struct line_row *r;
	struct line_unit *u;
	size_t lo = 0, hi;

	*fresh_rows = 0;
	if (!x && !(x = *xp = calloc(1, sizeof(*x))))
		return false;
	u = unit_of(x, strings, cu, fresh_rows);
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

const char *lineidx_file(const struct line_index *x, Dwarf_Die *cu, uint64_t idx)
{
	uint64_t key = dwarf_dieoffset(cu) + 1;

	if (!x || !x->cap)
		return NULL;
	for (size_t i = unit_slot(key, x->cap); x->units[i].key; i = (i + 1) & (x->cap - 1))
		if (x->units[i].key == key)
			return idx < x->units[i].nnames ? x->units[i].names[idx] : NULL;
	return NULL;
}

size_t lineidx_bytes(const struct line_index *x)
{
	return x ? x->bytes + x->cap * sizeof(*x->units) : 0;
}

void lineidx_free(struct line_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->cap; i++) {
		free(x->units[i].rows);
		free(x->units[i].names);
	}
	free(x->units);
	free(x);
}
