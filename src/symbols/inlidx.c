// SPDX-License-Identifier: MIT
/*
 * inlidx.c - the inlined calls at an address, from an index of each
 * compile unit built once: one pass over the unit's DIEs gathers every
 * function and inlined call with code (its ranges, the one it nests in),
 * and a sweep over their ranges turns them into sorted segments, each
 * naming the innermost one that covers it. A lookup is then a binary
 * search and a walk up the nesting, where dwarf_getscopes() walked the
 * unit's DIEs again for every address.
 *
 * A unit is indexed the first time an address in it is named, so a module
 * costs what the units its samples touch cost.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

/* A function or an inlined call with code. */
struct inl_entry {
	Dwarf_Off die;              /* its DIE, in the unit's Dwarf */
	uint32_t parent;            /* the one it nests in: index + 1, 0 none */
	uint8_t inlined;            /* DW_TAG_inlined_subroutine (else subprogram) */
};

/* [lo, the next segment's lo): innermost entry + 1, 0 none. */
struct inl_seg {
	uint64_t lo;
	uint32_t entry;
};

struct inl_unit {
	uint64_t key;               /* unit_key(), 0: an empty slot */
	Dwarf_Die cu;               /* in the Dwarf of its last lookup */
	Dwarf *dbg;                 /* that Dwarf: compared, never read (it may be gone) */
	struct inl_entry *e;
	size_t ne;
	struct inl_seg *seg;
	size_t nseg;
	/* every DIE of the unit in order (by offset, as the walk meets them)
	 * with the index of its parent: a DIE's scopes without a walk */
	Dwarf_Off *die_off;
	uint32_t *die_parent;       /* index into die_off; the unit's own: itself */
	size_t ndie;
	size_t bytes;               /* what its arrays hold */
};

struct inl_index {
	struct inl_unit *units;     /* open addressing on key */
	size_t cap, nr;
	size_t bytes;               /* what the units' indexes hold */
};

/* A range of an entry, as the sweep reads them. */
struct inl_range {
	uint64_t lo, hi;
	uint32_t entry;             /* + 1 */
	uint32_t depth;
};

struct gather {
	struct inl_entry *e;
	size_t ne, cap_e;
	struct inl_range *r;
	size_t nr, cap_r;
	Dwarf_Off *off;
	uint32_t *parent;
	size_t nd, cap_off, cap_par;
	bool oom;
};

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

/* The entries and ranges below @die (its children, recursively), and
 * every DIE with its parent (@die_index: @die's). */
static void gather(struct gather *g, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		   uint32_t die_index)
{
	Dwarf_Die child;

	if (depth > 256 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		uint32_t in = parent, me = (uint32_t)g->nd;

		if (!grow((void **)&g->off, &g->cap_off, g->nd + 1, sizeof(*g->off)) ||
		    !grow((void **)&g->parent, &g->cap_par, g->nd + 1, sizeof(*g->parent))) {
			g->oom = true;
			return;
		}
		g->off[g->nd] = dwarf_dieoffset(&child);
		g->parent[g->nd++] = die_index;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			bool code = false;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (!code) {
					if (!grow((void **)&g->e, &g->cap_e, g->ne + 1, sizeof(*g->e))) {
						g->oom = true;
						return;
					}
					g->e[g->ne] = (struct inl_entry){
						.die = dwarf_dieoffset(&child), .parent = parent,
						.inlined = tag == DW_TAG_inlined_subroutine };
					in = (uint32_t)++g->ne;
					code = true;
				}
				if (!grow((void **)&g->r, &g->cap_r, g->nr + 1, sizeof(*g->r))) {
					g->oom = true;
					return;
				}
				g->r[g->nr++] = (struct inl_range){ lo, hi, in, depth };
			}
		}
		/* a function's or a block's body, a namespace, a class: what
		 * holds code may lie anywhere below */
		gather(g, &child, in, depth + 1, me);
		if (g->oom)
			return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int cmp_range(const void *a, const void *b)
{
	const struct inl_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)        /* the outer one first */
		return x->depth < y->depth ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static bool seg_add(struct inl_unit *u, size_t *cap, uint64_t lo, uint32_t entry)
{
	if (u->nseg && u->seg[u->nseg - 1].lo == lo) {
		u->seg[u->nseg - 1].entry = entry;   /* the later word on one point wins */
		return true;
	}
	if (u->nseg && u->seg[u->nseg - 1].entry == entry)
		return true;
	if (!grow((void **)&u->seg, cap, u->nseg + 1, sizeof(*u->seg)))
		return false;
	u->seg[u->nseg++] = (struct inl_seg){ lo, entry };
	return true;
}

/*
 * Index @u: its entries, then the segments - a sweep over the ranges
 * sorted by start (the outer first), with a stack of the ranges open: a
 * range starting makes a segment of its own entry, one ending gives the
 * point back to the range below it on the stack.
 */
static bool unit_build(struct inl_unit *u)
{
	struct gather g = { 0 };
	struct inl_range *stack = NULL;
	size_t ns = 0, cap_s = 0, cap_seg = 0;
	bool ok = false;

	/* the unit's own DIE first: index 0, its own parent */
	if (!grow((void **)&g.off, &g.cap_off, 1, sizeof(*g.off)) ||
	    !grow((void **)&g.parent, &g.cap_par, 1, sizeof(*g.parent)))
		goto out;
	g.off[0] = dwarf_dieoffset(&u->cu);
	g.parent[0] = 0;
	g.nd = 1;
	gather(&g, &u->cu, 0, 0, 0);
	if (g.oom)
		goto out;
	qsort(g.r, g.nr, sizeof(*g.r), cmp_range);
	if (!grow((void **)&stack, &cap_s, g.nr + 1, sizeof(*stack)))
		goto out;
	for (size_t i = 0; i <= g.nr; i++) {
		uint64_t at = i < g.nr ? g.r[i].lo : UINT64_MAX;

		/* the ranges that end before this one starts */
		while (ns && stack[ns - 1].hi <= at) {
			uint64_t end = stack[--ns].hi;

			while (ns && stack[ns - 1].hi <= end)
				ns--;   /* ended at the same point, or before (malformed) */
			if (!seg_add(u, &cap_seg, end, ns ? stack[ns - 1].entry : 0))
				goto out;
		}
		if (i == g.nr)
			break;
		stack[ns++] = g.r[i];
		if (!seg_add(u, &cap_seg, g.r[i].lo, g.r[i].entry))
			goto out;
	}
	u->bytes = g.cap_e * sizeof(*g.e) + cap_seg * sizeof(*u->seg) +
		   g.cap_off * sizeof(*g.off) + g.cap_par * sizeof(*g.parent);
	u->e = g.e;
	u->ne = g.ne;
	u->die_off = g.off;
	u->die_parent = g.parent;
	u->ndie = g.nd;
	g.e = NULL;
	g.off = NULL;
	g.parent = NULL;
	ok = true;
out:
	free(g.e);
	free(g.r);
	free(g.off);
	free(g.parent);
	free(stack);
	if (!ok) {
		free(u->seg);
		u->seg = NULL;
		u->nseg = 0;
	}
	return ok;
}

/*
 * A unit by the offset of its DIE in its file, not by libdw's struct: the
 * index outlives the Dwarf it was made from (sym_trim() ends a module's
 * Dwfl; its file opened again has the same offsets).
 */
static uint64_t unit_key(Dwarf_Die *cu)
{
	return dwarf_dieoffset(cu) + 1;
}

static size_t unit_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 40) & (cap - 1);
}

/* The unit of @cu, indexed at its first use; NULL out of memory. */
static struct inl_unit *unit_of(struct inl_index *x, Dwarf_Die *cu)
{
	uint64_t key = unit_key(cu);
	struct inl_unit *u;
	size_t i;

	if ((x->nr + 1) * 2 > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		struct inl_unit *n = calloc(cap, sizeof(*n));

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
	for (i = unit_slot(key, x->cap); x->units[i].key && x->units[i].key != key;
	     i = (i + 1) & (x->cap - 1))
		;
	u = &x->units[i];
	u->cu = *cu;                    /* in the Dwarf of now */
	u->dbg = dwarf_cu_getdwarf(cu->cu);
	if (!u->key) {
		u->key = key;
		x->nr++;
		unit_build(u);          /* no index (out of memory): no inlined calls */
		x->bytes += u->bytes;
	}
	return u;
}

size_t inlidx_chain(struct inl_index **xp, Dwarf_Die *cu, uint64_t addr, Dwarf_Die *out,
		    size_t max, Dwarf_Die *cu_out)
{
	struct inl_index *x = *xp;
	struct inl_unit *u;
	Dwarf *dbg;
	size_t lo = 0, hi, n = 0;
	uint32_t e;

	if (!x && !(x = *xp = calloc(1, sizeof(*x))))
		return 0;
	u = unit_of(x, cu);
	if (!u || !u->nseg)
		return 0;
	*cu_out = u->cu;
	hi = u->nseg;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->seg[mid].lo <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (u->seg[lo].lo > addr)
		return 0;
	dbg = dwarf_cu_getdwarf(u->cu.cu);
	/* the innermost first, up to (not past) the function it is in */
	for (e = u->seg[lo].entry; e && n < max; e = u->e[e - 1].parent) {
		if (!dwarf_offdie(dbg, u->e[e - 1].die, &out[n]))
			break;
		n++;
		if (!u->e[e - 1].inlined)
			break;
	}
	return n;
}

int inlidx_scopes(struct inl_index *x, Dwarf_Die *die, Dwarf_Die **scopes)
{
	Dwarf_Off off = dwarf_dieoffset(die);
	struct inl_unit *u = NULL;
	Dwarf *dbg = dwarf_cu_getdwarf(die->cu);
	size_t lo = 0, hi, n = 0, i;
	Dwarf_Die *sc, cudie;
	uint64_t key;

	if (!x || !x->cap || !dwarf_diecu(die, &cudie, NULL, NULL))
		return dwarf_getscopes_die(die, scopes);
	key = unit_key(&cudie);
	for (i = unit_slot(key, x->cap); x->units[i].key; i = (i + 1) & (x->cap - 1))
		if (x->units[i].key == key) {
			u = &x->units[i];
			break;
		}
	/* a unit of the same offset in another file (a dwz file's), or one
	 * not looked up since its module was opened again: libdw's walk */
	if (!u || !u->ndie || u->dbg != dbg)
		return dwarf_getscopes_die(die, scopes);
	hi = u->ndie;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->die_off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == u->ndie || u->die_off[lo] != off)
		return dwarf_getscopes_die(die, scopes);
	/* @die, its parents, the unit */
	for (size_t k = lo; ; k = u->die_parent[k]) {
		n++;
		if (!k || n > u->ndie)
			break;
	}
	sc = malloc(n * sizeof(*sc));
	if (!sc)
		return -1;
	n = 0;
	for (size_t k = lo; ; k = u->die_parent[k]) {
		if (!dwarf_offdie(dbg, u->die_off[k], &sc[n])) {
			free(sc);
			return dwarf_getscopes_die(die, scopes);
		}
		n++;
		if (!k)
			break;
	}
	*scopes = sc;
	return (int)n;
}

size_t inlidx_bytes(const struct inl_index *x)
{
	return x ? x->bytes + x->cap * sizeof(*x->units) : 0;
}

void inlidx_free(struct inl_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->cap; i++) {
		free(x->units[i].e);
		free(x->units[i].seg);
		free(x->units[i].die_off);
		free(x->units[i].die_parent);
	}
	free(x->units);
	free(x);
}
