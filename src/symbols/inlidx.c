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
 *
 * Symbolizers naming side by side (the namer's lanes, each with its own
 * libdw) share what they build (shared.c): a unit of a file, known by the
 * file's build id and the offset of the unit's DIE, is built by the first
 * to need it, and then read by all: an index holds offsets, never libdw's
 * structures, so it serves every Dwarf of the same file. The others that
 * need it meanwhile do not wait idle: a big unit is cut into parts by its
 * top-level DIEs, which they gather with their own Dwarfs and the first
 * joins (on the C++ bench program, one unit of 335 k DIEs was most of
 * what its naming cost).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "../util/radix.h"
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

/* A unit's index as built: never changed after, so read by any thread. */
struct inl_built {
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

struct inl_unit {
	uint64_t key;               /* unit_key(), 0: an empty slot */
	Dwarf_Die cu;               /* in the Dwarf of its last lookup */
	Dwarf *dbg;                 /* that Dwarf: compared, never read (it may be gone) */
	struct inl_built *b;        /* NULL: none (out of memory); read only */
	bool owned;                 /* b is this index's (else the shared table's: shared.c) */
};

struct inl_index {
	struct inl_unit *units;     /* open addressing on key */
	size_t cap, nr;
	size_t bytes;               /* what the units' own indexes hold */
	size_t built;               /* units it built (its own, or for the shared table) */
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

static void gather(struct gather *g, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		   uint32_t die_index);

/* Range [@lo, @hi) of the entry @in (made now if it is @d's first: *@code) at @depth. */
static bool range_add(struct gather *g, Dwarf_Off off, int tag, uint32_t parent, uint32_t depth,
		      uint64_t lo, uint64_t hi, bool *code, uint32_t *in)
{
	if (!*code) {
		if (!grow((void **)&g->e, &g->cap_e, g->ne + 1, sizeof(*g->e)))
			return false;
		g->e[g->ne] = (struct inl_entry){
			.die = off, .parent = parent,
			.inlined = tag == DW_TAG_inlined_subroutine };
		*in = (uint32_t)++g->ne;
		*code = true;
	}
	if (!grow((void **)&g->r, &g->cap_r, g->nr + 1, sizeof(*g->r)))
		return false;
	g->r[g->nr++] = (struct inl_range){ lo, hi, *in, depth };
	return true;
}

#define RANGES_MAX 64      /* a DIE's ranges read by the walk; more: libdw's */

/*
 * @d (at @off, of @tag, with children or not) with its parent
 * (@die_index), as an entry if it holds code (nested in entry @parent);
 * its own ranges from @w's read of it (@wd) where that has them, else
 * libdw's. *@me: the DIE index its children have for parent. Return: the
 * entry they nest in; g->oom set out of memory.
 */
static uint32_t visit_one(struct gather *g, Dwarf_Die *d, Dwarf_Off off, int tag, bool children,
			  struct dwwalk *w, const struct dwwalk_die *wd, uint32_t parent,
			  uint32_t depth, uint32_t die_index, uint32_t *me)
{
	/* kept: what a scope is asked of (a function) and what can hold one
	 * (a DIE with children); a leaf - a member, a parameter, an
	 * enumerator, a base type, most of a C++ unit's DIEs - is never
	 * asked of, and one that were would be walked for by libdw */
	bool keep = tag == DW_TAG_subprogram || children;
	uint32_t in = parent;

	*me = keep ? (uint32_t)g->nd : die_index;
	if (keep) {
		if (!grow((void **)&g->off, &g->cap_off, g->nd + 1, sizeof(*g->off)) ||
		    !grow((void **)&g->parent, &g->cap_par, g->nd + 1, sizeof(*g->parent))) {
			g->oom = true;
			return in;
		}
		g->off[g->nd] = off;
		g->parent[g->nd++] = die_index;
	}

	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t at = 0;
		bool code = false;

		int known = w ? dwwalk_pc(w, wd, &lo, &hi) : -1;
		uint64_t los[RANGES_MAX], his[RANGES_MAX];

		if (known >= 0) {
			/* no ranges, or dwarf_ranges()'s one of a low and high pc */
			if (known && hi > lo &&
			    !range_add(g, off, tag, parent, depth, lo, hi, &code, &in))
				g->oom = true;
			return in;
		}
		/* a list of ranges, as dwarf_ranges() gives them */
		known = w ? dwwalk_ranges(w, wd, los, his, RANGES_MAX) : -1;
		for (int i = 0; i < known; i++)
			if (his[i] > los[i] &&
			    !range_add(g, off, tag, parent, depth, los[i], his[i], &code, &in)) {
				g->oom = true;
				return in;
			}
		if (known >= 0)
			return in;
		while ((at = dwarf_ranges(d, at, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (!range_add(g, off, tag, parent, depth, lo, hi, &code, &in)) {
				g->oom = true;
				return in;
			}
		}
	}
	return in;
}

/* @d with its parent (@die_index), as an entry if it holds code (nested
 * in entry @parent), and what is below it: libdw's walk. */
static void visit(struct gather *g, Dwarf_Die *d, uint32_t parent, uint32_t depth,
		  uint32_t die_index)
{
	uint32_t me, in = visit_one(g, d, dwarf_dieoffset(d), dwarf_tag(d),
				     dwarf_haschildren(d) > 0, NULL, NULL, parent, depth,
				     die_index, &me);

	if (g->oom)
		return;
	/* a function's or a block's body, a namespace, a class: what holds
	 * code may lie anywhere below */
	gather(g, d, in, depth + 1, me);
}

/* Children below this depth are not gathered (gather()'s bound). */
#define DEPTH_MAX 256

/*
 * What visit() (@one: the DIE at @pos and all below it) or gather() (a
 * list of children starting at @pos) gather, read in order by @w
 * (dwwalk.c): the same DIEs in the same order with the same parents, each
 * read once. Return: false where @w cannot read them (@g is then as it
 * was, for libdw's walk), true else (g->oom set out of memory).
 */
static bool walk_gather(struct gather *g, struct dwwalk *w, const unsigned char *pos, bool one,
			uint32_t parent, uint32_t depth, uint32_t die_index)
{
	struct frame {
		uint32_t in, me, depth;
		bool skip;              /* below DEPTH_MAX: read, not gathered */
	} *st = NULL;
	size_t ns = 0, cap = 0, ne = g->ne, nr = g->nr, nd = g->nd;
	bool ok = false;

	if (!grow((void **)&st, &cap, 64, sizeof(*st)))
		goto out;
	st[ns++] = (struct frame){ parent, die_index, depth, !one && depth > DEPTH_MAX };
	while (ns) {
		struct dwwalk_die wd;
		struct frame f = st[ns - 1];
		uint32_t in = 0, me = 0;
		int r = dwwalk_next(w, &pos, &wd);

		if (r < 0 || (r == 0 && one && ns == 1))
			goto out;
		if (r == 0) {
			/* a list's end; one DIE's walk ends with its own list */
			if (--ns == 1 && one)
				break;
			continue;
		}
		if (!f.skip) {
			Dwarf_Die d;

			dwwalk_die(w, &wd, &d);
			in = visit_one(g, &d, dwwalk_off(w, wd.addr), wd.tag, wd.children, w, &wd,
				       f.in, f.depth, f.me, &me);
			if (g->oom) {
				ok = true;
				goto out;
			}
		}
		if (wd.children) {
			if (!grow((void **)&st, &cap, ns + 1, sizeof(*st)))
				goto out;
			st[ns++] = (struct frame){ in, me, f.depth + 1,
						   f.skip || f.depth + 1 > DEPTH_MAX };
		} else if (one && ns == 1) {
			break;
		}
	}
	ok = true;
out:
	free(st);
	if (!ok) {
		g->ne = ne;
		g->nr = nr;
		g->nd = nd;
		g->oom = false;
	}
	return ok;
}

/* The entries and ranges below @die (its children, recursively), and
 * every DIE with its parent (@die_index: @die's). */
static void gather(struct gather *g, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		   uint32_t die_index)
{
	Dwarf_Die child;

	if (depth > DEPTH_MAX || dwarf_child(die, &child) != 0)
		return;
	do {
		visit(g, &child, parent, depth, die_index);
		if (g->oom)
			return;
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void gather_free(struct gather *g)
{
	free(g->e);
	free(g->r);
	free(g->off);
	free(g->parent);
}

/*
 * The sweep's order: by start, the outer first, the longer first, then in
 * the order the walk met them (the entry: so the order is the same with
 * any sort, and a unit gathered in parts sorts each part on its own and
 * merges them).
 */
int inlidx_range_cmp(const void *a, const void *b)
{
	const struct inl_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)        /* the outer one first */
		return x->depth < y->depth ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* @r (@n ranges that all start at one address) in inlidx_range_cmp()'s order. */
static void range_sort_run(struct inl_range *r, size_t n)
{
	if (n > 32) {
		qsort(r, n, sizeof(*r), inlidx_range_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct inl_range x = r[i];
		size_t j = i;

		for (; j && inlidx_range_cmp(&r[j - 1], &x) > 0; j--)
			r[j] = r[j - 1];
		r[j] = x;
	}
}

/*
 * By start first, with a radix sort of one word a range (its start less
 * the lowest, above; its place, below: ranges starting at one address keep
 * their order), a byte at a time where the starts differ; then each run
 * starting at one address sorted by inlidx_range_cmp(). glibc's qsort()
 * (a merge sort calling the comparison) took ~2 % of the CPU of a C++
 * DWARF export (35,615 ranges in 15 units, a quarter of them after one
 * that starts later). The order is qsort()'s: inlidx_range_cmp() orders
 * any two ranges that differ. Fewer than 64 ranges, more than 2^24, or
 * starts more than 2^40 apart are left to qsort().
 */
#define RANGE_IDX_BITS 24

void inlidx_range_sort(struct inl_range *r, size_t n)
{
	uint64_t *key = NULL, *tmp = NULL, lo = UINT64_MAX, diff = 0;
	const uint64_t mask = (1ull << RANGE_IDX_BITS) - 1;
	struct inl_range *out = NULL;
	size_t i, j;

	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		if (r[i].lo < lo)
			lo = r[i].lo;
	for (i = 0; i < n; i++)
		diff |= r[i].lo - lo;
	if (n < 64 || n > mask || diff >> (64 - RANGE_IDX_BITS) ||
	    !(key = malloc(n * sizeof(*key))) || !(tmp = malloc(n * sizeof(*tmp))) ||
	    !(out = malloc(n * sizeof(*out)))) {
		free(tmp);
		free(key);
		qsort(r, n, sizeof(*r), inlidx_range_cmp);
		return;
	}
	for (i = 0; i < n; i++)
		key[i] = (r[i].lo - lo) << RANGE_IDX_BITS | i;
	/* the least significant byte first; bytes no two keys differ in are
	 * skipped */
	radix_sort_words(&key, &tmp, n, RANGE_IDX_BITS, diff);
	for (i = 0; i < n; i++)
		out[i] = r[key[i] & mask];
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && out[j].lo == out[i].lo; j++)
			;
		if (j - i > 1)
			range_sort_run(out + i, j - i);
	}
	memcpy(r, out, n * sizeof(*r));
	free(out);
	free(tmp);
	free(key);
}

static void built_free(struct inl_built *b)
{
	if (!b)
		return;
	free(b->e);
	free(b->seg);
	free(b->die_off);
	free(b->die_parent);
	free(b);
}

/* *@p (room for *@cap) cut to @n elements of @size; kept as it is if that fails. */
static void fit(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (!n || n >= *cap)
		return;
	q = realloc(*p, n * size);
	if (q) {
		*p = q;
		*cap = n;
	}
}

static bool seg_add(struct inl_built *b, size_t *cap, uint64_t lo, uint32_t entry)
{
	if (b->nseg && b->seg[b->nseg - 1].lo == lo) {
		b->seg[b->nseg - 1].entry = entry;   /* the later word on one point wins */
		return true;
	}
	if (b->nseg && b->seg[b->nseg - 1].entry == entry)
		return true;
	if (!grow((void **)&b->seg, cap, b->nseg + 1, sizeof(*b->seg)))
		return false;
	b->seg[b->nseg++] = (struct inl_seg){ lo, entry };
	return true;
}

/*
 * A unit's index from what was gathered of it (@g, whose arrays it takes;
 * out of memory or not, @g is emptied; @sorted: its ranges are in
 * inlidx_range_cmp()'s order already): a sweep over the ranges sorted by start
 * (the outer first), with a stack of the ranges open: a range
 * starting makes a segment of its own entry, one ending gives the point
 * back to the range below it on the stack. Return: the index (free with
 * built_free()), NULL out of memory.
 */
static struct inl_built *unit_sweep(struct gather *g, bool sorted)
{
	struct inl_range *stack = NULL;
	struct inl_built *b = g->oom ? NULL : calloc(1, sizeof(*b));
	size_t ns = 0, cap_s = 0, cap_seg = 0;
	bool ok = false;

	if (!b)
		goto out;
	if (!sorted && g->nr)
		inlidx_range_sort(g->r, g->nr);
	if (!grow((void **)&stack, &cap_s, g->nr + 1, sizeof(*stack)))
		goto out;
	for (size_t i = 0; i <= g->nr; i++) {
		uint64_t at = i < g->nr ? g->r[i].lo : UINT64_MAX;

		/* the ranges that end before this one starts */
		while (ns && stack[ns - 1].hi <= at) {
			uint64_t end = stack[--ns].hi;

			while (ns && stack[ns - 1].hi <= end)
				ns--;   /* ended at the same point, or before (malformed) */
			if (!seg_add(b, &cap_seg, end, ns ? stack[ns - 1].entry : 0))
				goto out;
		}
		if (i == g->nr)
			break;
		stack[ns++] = g->r[i];
		if (!seg_add(b, &cap_seg, g->r[i].lo, g->r[i].entry))
			goto out;
	}
	/* kept as long as the unit is: at their size, not their growth's */
	fit((void **)&g->e, &g->cap_e, g->ne, sizeof(*g->e));
	fit((void **)&b->seg, &cap_seg, b->nseg, sizeof(*b->seg));
	fit((void **)&g->off, &g->cap_off, g->nd, sizeof(*g->off));
	fit((void **)&g->parent, &g->cap_par, g->nd, sizeof(*g->parent));
	b->bytes = sizeof(*b) + g->cap_e * sizeof(*g->e) + cap_seg * sizeof(*b->seg) +
		   g->cap_off * sizeof(*g->off) + g->cap_par * sizeof(*g->parent);
	b->e = g->e;
	b->ne = g->ne;
	b->die_off = g->off;
	b->die_parent = g->parent;
	b->ndie = g->nd;
	g->e = NULL;
	g->off = NULL;
	g->parent = NULL;
	ok = true;
out:
	gather_free(g);
	memset(g, 0, sizeof(*g));
	free(stack);
	if (!ok) {
		built_free(b);
		b = NULL;
	}
	return b;
}

/* The unit's own DIE first in @g: index 0, its own parent. */
static bool gather_root(struct gather *g, Dwarf_Die *cu)
{
	if (!grow((void **)&g->off, &g->cap_off, 1, sizeof(*g->off)) ||
	    !grow((void **)&g->parent, &g->cap_par, 1, sizeof(*g->parent)))
		return false;
	g->off[0] = dwarf_dieoffset(cu);
	g->parent[0] = 0;
	g->nd = 1;
	return true;
}

/* Index unit @cu on this thread alone; @by_libdw: with libdw's walk
 * (tests), else read in order where it can be; *@walked: it was. Return:
 * as unit_sweep(). */
static struct inl_built *unit_build_by(Dwarf_Die *cu, bool by_libdw, bool *walked)
{
	struct gather g = { 0 };
	struct dwwalk w;
	Dwarf_Die child;

	*walked = false;
	if (!gather_root(&g, cu)) {
		g.oom = true;
	} else if (!by_libdw && dwwalk_open(&w, cu) == 0) {
		if (dwarf_child(cu, &child) == 0) {
			*walked = walk_gather(&g, &w, child.addr, false, 0, 0, 0);
			if (!*walked)
				gather(&g, cu, 0, 0, 0);
		}
		dwwalk_close(&w);
	} else {
		gather(&g, cu, 0, 0, 0);
	}
	dwpages_drop(dwarf_cu_getdwarf(cu->cu)); /* what the walk read is in the index now */
	return unit_sweep(&g, false);
}

static struct inl_built *unit_build(Dwarf_Die *cu)
{
	bool walked;

	return unit_build_by(cu, false, &walked);
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

/* --- a big unit gathered in parts, by the symbolizers waiting for it --- */

/*
 * A unit whose top-level DIEs span inlidx_part_min_span bytes or more is
 * cut into parts of them, about PARTS (a DIE and all below it is in one
 * part: a namespace may be a part of its own), which the symbolizers that
 * want the unit meanwhile take one by one and gather, each with its own
 * Dwarf of the file; the builder then merges them in order - the same
 * arrays one thread's walk makes - and sweeps. Offsets are the file's, so
 * parts from different Dwarfs of the file join up.
 */
#define PARTS 32u
size_t inlidx_part_min_span = 256u << 10;
#define CU_INDEX UINT32_MAX         /* in a part: the unit's DIE, the parent of its top */

struct inl_part {
	size_t first, count;        /* its top-level DIEs, in the job's top */
	struct gather g;            /* DIE and entry numbers its own */
};

struct inl_job {
	Dwarf_Off *top;             /* the unit's top-level DIEs */
	size_t ntop;
	struct inl_part *parts;
	size_t nparts;
	size_t next;                /* the next part to take (under the lock) */
	size_t left;                /* parts not gathered yet (under the lock) */
};

static void job_free(struct inl_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nparts; i++)
		gather_free(&j->parts[i].g);
	free(j->parts);
	free(j->top);
	free(j);
}

/* Unit @cu cut into parts; NULL when it is too small to be worth it (or
 * out of memory): it is then gathered by one thread. */
static struct inl_job *job_make(Dwarf_Die *cu)
{
	struct inl_job *j = calloc(1, sizeof(*j));
	size_t cap = 0, k = 0;
	uint64_t span;
	Dwarf_Die child;

	if (!j || dwarf_child(cu, &child) != 0)
		goto none;
	do {
		if (!grow((void **)&j->top, &cap, j->ntop + 1, sizeof(*j->top)))
			goto none;
		j->top[j->ntop++] = dwarf_dieoffset(&child);
	} while (dwarf_siblingof(&child, &child) == 0);
	span = j->top[j->ntop - 1] - j->top[0];
	if (j->ntop < 2 || span < inlidx_part_min_span)
		goto none;
	j->parts = calloc(PARTS, sizeof(*j->parts));
	if (!j->parts)
		goto none;
	/* part k: the DIEs that start in the k-th PARTS-th of the span */
	for (size_t i = 0; i < j->ntop; i++) {
		uint64_t at = (j->top[i] - j->top[0]) * PARTS / span;
		size_t want = at < PARTS ? (size_t)at : PARTS - 1;

		if (!j->nparts || (want != k && j->parts[j->nparts - 1].count)) {
			j->parts[j->nparts].first = i;
			j->nparts++;
		}
		k = want;
		j->parts[j->nparts - 1].count++;
	}
	j->left = j->nparts;
	return j;
none:
	job_free(j);
	return NULL;
}

/* Gather part @pt of @j with @dbg, a Dwarf of the unit's file; each of
 * its DIEs read in order where it can be (*@walked: all were). */
static void part_gather(const struct inl_job *j, struct inl_part *pt, Dwarf *dbg, bool *walked)
{
	struct dwwalk w;
	bool walk = false;

	*walked = true;
	for (size_t i = pt->first; i < pt->first + pt->count && !pt->g.oom; i++) {
		const unsigned char *at;
		Dwarf_Die d, cu;

		if (!dwarf_offdie(dbg, j->top[i], &d)) {
			pt->g.oom = true; /* a DIE one walk met and another not: no index */
			break;
		}
		if (i == pt->first)
			walk = dwarf_cu_die(d.cu, &cu, NULL, NULL, NULL, NULL, NULL, NULL) &&
			       dwwalk_open(&w, &cu) == 0;
		if (!walk || !(at = dwwalk_at(&w, j->top[i])) ||
		    !walk_gather(&pt->g, &w, at, true, 0, 0, CU_INDEX)) {
			visit(&pt->g, &d, 0, 0, CU_INDEX);
			*walked = false;
		}
	}
	if (walk)
		dwwalk_close(&w);
	dwpages_drop(dbg);
}

/* Under @sh's lock: take @j's next part, gather it unlocked (and sort its
 * ranges), and count it done. */
static void part_take(struct sym_shared *sh, struct inl_job *j, Dwarf *dbg)
{
	struct inl_part *pt = &j->parts[j->next++];
	bool walked;

	shared_unlock(sh);
	part_gather(j, pt, dbg, &walked);
	if (pt->g.nr)
		inlidx_range_sort(pt->g.r, pt->g.nr);
	shared_lock(sh);
	if (--j->left == 0)
		shared_wake(sh);
}

/*
 * @r (@n ranges): @j's parts' ranges one after the other, each part's
 * sorted; merged into one sorted array, two runs at a time. False out of
 * memory.
 */
static bool runs_merge(const struct inl_job *j, struct inl_range *r, size_t n)
{
	size_t *at = malloc((j->nparts + 1) * sizeof(*at)), runs = 0, pos = 0;
	struct inl_range *tmp = malloc((n ? n : 1) * sizeof(*tmp)), *src = r, *dst = tmp;

	if (!at || !tmp) {
		free(at);
		free(tmp);
		return false;
	}
	for (size_t i = 0; i < j->nparts; i++) {
		if (!j->parts[i].g.nr)
			continue;
		at[runs++] = pos;
		pos += j->parts[i].g.nr;
	}
	at[runs] = n;
	while (runs > 1) {
		size_t out = 0;

		for (size_t i = 0; i < runs; i += 2) {
			/* runs i and i + 1 (none past the last: an odd one is copied) */
			size_t a = at[i], ae = at[i + 1], b = ae, be = i + 2 <= runs ? at[i + 2] : ae, o = a;

			while (a < ae && b < be)
				dst[o++] = inlidx_range_cmp(&src[b], &src[a]) < 0 ? src[b++] : src[a++];
			while (a < ae)
				dst[o++] = src[a++];
			while (b < be)
				dst[o++] = src[b++];
			at[out++] = at[i];
		}
		at[out] = n;
		runs = out;
		{
			struct inl_range *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != r)
		memcpy(r, src, n * sizeof(*r));
	free(tmp);
	free(at);
	return true;
}

/* The parts of @j, every one gathered, joined in order: the unit's index. */
static struct inl_built *job_merge(struct inl_job *j, Dwarf_Die *cu)
{
	struct gather g = { 0 };
	size_t nd = 1, ne = 0, nr = 0;

	g.oom = !gather_root(&g, cu);
	for (size_t i = 0; i < j->nparts; i++) {
		g.oom |= j->parts[i].g.oom;
		nd += j->parts[i].g.nd;
		ne += j->parts[i].g.ne;
		nr += j->parts[i].g.nr;
	}
	if (!g.oom && (!grow((void **)&g.off, &g.cap_off, nd, sizeof(*g.off)) ||
		       !grow((void **)&g.parent, &g.cap_par, nd, sizeof(*g.parent)) ||
		       !grow((void **)&g.e, &g.cap_e, ne, sizeof(*g.e)) ||
		       !grow((void **)&g.r, &g.cap_r, nr, sizeof(*g.r))))
		g.oom = true;
	for (size_t i = 0; i < j->nparts && !g.oom; i++) {
		const struct gather *p = &j->parts[i].g;
		uint32_t dbase = (uint32_t)g.nd, ebase = (uint32_t)g.ne;

		for (size_t k = 0; k < p->nd; k++) {
			g.off[g.nd] = p->off[k];
			g.parent[g.nd++] = p->parent[k] == CU_INDEX ? 0 : p->parent[k] + dbase;
		}
		for (size_t k = 0; k < p->ne; k++) {
			g.e[g.ne] = p->e[k];
			if (g.e[g.ne].parent)
				g.e[g.ne].parent += ebase;
			g.ne++;
		}
		for (size_t k = 0; k < p->nr; k++) {
			g.r[g.nr] = p->r[k];
			g.r[g.nr++].entry += ebase;
		}
	}
	/* each part's ranges sorted by the part's taker: merge the runs */
	if (!g.oom && !runs_merge(j, g.r, g.nr))
		g.oom = true;
	return unit_sweep(&g, true);
}

/*
 * Build the index of unit @arg (a Dwarf_Die of the unit) for the table
 * @sh: a big one in parts, offered to those who want it meanwhile (each
 * gathers with the Dwarf of its own unit DIE) and taken here too.
 */
static void *inl_build(struct sym_shared *sh, uint64_t file, uint64_t key, void *arg)
{
	Dwarf_Die *cu = arg;
	Dwarf *dbg = dwarf_cu_getdwarf(cu->cu);
	struct inl_job *j = job_make(cu);
	struct inl_built *b;
	size_t mine = 0;

	if (!j)
		return unit_build(cu);
	shared_lock(sh);
	shared_offer(sh, SHARED_INLINES, file, key, j);
	while (j->next < j->nparts) {
		part_take(sh, j, dbg);
		mine++;
	}
	while (j->left)
		shared_wait(sh);
	shared_offer(sh, SHARED_INLINES, file, key, NULL); /* it is freed below */
	shared_unlock(sh);
	pp_debug("the unit at DIE 0x%" PRIx64 " (%zu top-level DIEs) gathered in %zu parts, "
		 "%zu of them by other lanes", key - 1, j->ntop, j->nparts, j->nparts - mine);
	b = job_merge(j, cu);
	job_free(j);
	return b;
}

/* A lane waiting for a unit: take a part of @job, if one is left. */
static bool inl_help(struct sym_shared *sh, void *job, void *arg)
{
	struct inl_job *j = job;
	Dwarf_Die *cu = arg;

	if (j->next >= j->nparts)
		return false;
	part_take(sh, j, dwarf_cu_getdwarf(cu->cu));
	return true;
}

static void inl_destroy(void *obj)
{
	built_free(obj);
}

static const struct shared_build inl_shared = {
	.kind = SHARED_INLINES, .build = inl_build, .help = inl_help, .destroy = inl_destroy,
};

/*
 * The unit of @cu, indexed at its first use (from @sh when @file is
 * known: a build id); NULL out of memory.
 */
static struct inl_unit *unit_of(struct inl_index *x, struct sym_shared *sh, uint64_t file,
				Dwarf_Die *cu)
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
		/* no index (out of memory): no inlined calls */
		if (sh && file) {
			bool here;

			u->b = shared_get(sh, &inl_shared, file, key, cu, &here);
			x->built += here;
		} else {
			u->b = unit_build(cu);
			x->built++;
			u->owned = true;
			x->bytes += u->b ? u->b->bytes : 0;
		}
	}
	return u;
}

size_t inlidx_chain(struct inl_index **xp, struct sym_shared *sh, uint64_t file, Dwarf_Die *cu,
		    uint64_t addr, Dwarf_Die *out, size_t max, Dwarf_Die *cu_out)
{
	struct inl_index *x = *xp;
	const struct inl_built *b;
	struct inl_unit *u;
	Dwarf *dbg;
	size_t lo = 0, hi, n = 0;
	uint32_t e;

	if (!x && !(x = *xp = calloc(1, sizeof(*x))))
		return 0;
	u = unit_of(x, sh, file, cu);
	if (!u || !u->b || !u->b->nseg)
		return 0;
	b = u->b;
	*cu_out = u->cu;
	hi = b->nseg;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->seg[mid].lo <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (b->seg[lo].lo > addr)
		return 0;
	dbg = dwarf_cu_getdwarf(u->cu.cu);
	/* the innermost first, up to (not past) the function it is in */
	for (e = b->seg[lo].entry; e && n < max; e = b->e[e - 1].parent) {
		if (!dwarf_offdie(dbg, b->e[e - 1].die, &out[n]))
			break;
		n++;
		if (!b->e[e - 1].inlined)
			break;
	}
	return n;
}

int inlidx_scopes(struct inl_index *x, Dwarf_Die *die, Dwarf_Die **scopes)
{
	Dwarf_Off off = dwarf_dieoffset(die);
	const struct inl_built *b = NULL;
	Dwarf *dbg = dwarf_cu_getdwarf(die->cu);
	size_t lo = 0, hi, n = 0, i;
	Dwarf_Die *sc, cudie;
	uint64_t key;

	if (!x || !x->cap || !dwarf_diecu(die, &cudie, NULL, NULL))
		return dwarf_getscopes_die(die, scopes);
	key = unit_key(&cudie);
	for (i = unit_slot(key, x->cap); x->units[i].key; i = (i + 1) & (x->cap - 1))
		if (x->units[i].key == key) {
			/* a unit of the same offset in another file (a dwz
			 * file's), or one not looked up since its module was
			 * opened again: libdw's walk */
			if (x->units[i].dbg == dbg)
				b = x->units[i].b;
			break;
		}
	if (!b || !b->ndie)
		return dwarf_getscopes_die(die, scopes);
	hi = b->ndie;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->die_off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->ndie || b->die_off[lo] != off)
		return dwarf_getscopes_die(die, scopes);
	/* @die, its parents, the unit */
	for (size_t k = lo; ; k = b->die_parent[k]) {
		n++;
		if (!k || n > b->ndie)
			break;
	}
	sc = malloc(n * sizeof(*sc));
	if (!sc)
		return -1;
	n = 0;
	for (size_t k = lo; ; k = b->die_parent[k]) {
		if (!dwarf_offdie(dbg, b->die_off[k], &sc[n])) {
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

/* FNV-1a of @n bytes at @p, on @h. */
static uint64_t digest(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

uint64_t inlidx_unit_digest(Dwarf_Die *cu, int how, bool *walked)
{
	struct inl_built *b = NULL;
	struct inl_job *j;
	uint64_t h = 0xcbf29ce484222325ull;

	*walked = false;
	if (how == 2 && (j = job_make(cu))) {
		*walked = true;
		for (size_t i = 0; i < j->nparts; i++) {
			bool w;

			part_gather(j, &j->parts[i], dwarf_cu_getdwarf(cu->cu), &w);
			*walked &= w;
			if (j->parts[i].g.nr)
				inlidx_range_sort(j->parts[i].g.r, j->parts[i].g.nr);
		}
		b = job_merge(j, cu);
		job_free(j);
	} else {
		b = unit_build_by(cu, how == 0, walked);
	}
	if (!b)
		return 0;
	for (size_t i = 0; i < b->ne; i++) {
		h = digest(h, &b->e[i].die, sizeof(b->e[i].die));
		h = digest(h, &b->e[i].parent, sizeof(b->e[i].parent));
		h = digest(h, &b->e[i].inlined, sizeof(b->e[i].inlined));
	}
	for (size_t i = 0; i < b->nseg; i++) {
		h = digest(h, &b->seg[i].lo, sizeof(b->seg[i].lo));
		h = digest(h, &b->seg[i].entry, sizeof(b->seg[i].entry));
	}
	h = digest(h, b->die_off, b->ndie * sizeof(*b->die_off));
	h = digest(h, b->die_parent, b->ndie * sizeof(*b->die_parent));
	h = digest(h, &b->ne, sizeof(b->ne));
	h = digest(h, &b->nseg, sizeof(b->nseg));
	h = digest(h, &b->ndie, sizeof(b->ndie));
	built_free(b);
	return h;
}

size_t inlidx_bytes(const struct inl_index *x)
{
	return x ? x->bytes + x->cap * sizeof(*x->units) : 0;
}

size_t inlidx_units_built(const struct inl_index *x)
{
	return x ? x->built : 0;
}

void inlidx_free(struct inl_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->cap; i++)
		if (x->units[i].owned)
			built_free(x->units[i].b);
	free(x->units);
	free(x);
}
