/* SPDX-License-Identifier: MIT */
/*
 * aranges.c - a file's unit at an address, found as libdwfl finds it
 * (dwfl_module_addrdie()) from .debug_aranges, without libdw's reading of
 * every unit.
 *
 * libdw's dwarf_getaranges() finds the unit of every set of ranges as it
 * reads them, and finding a unit reads the header of every unit before
 * it, once a Dwarf: for libc's debug file, 2,063 units, some 1.8 ms of
 * CPU at the first frame named in libc, in every run. Here the section is
 * read into one sorted array of (start, unit's header offset), and a unit
 * is found when an address in it is first named (dwarf_offdie(): libdw
 * reads the headers up to that unit only).
 *
 * The lookup is libdwfl's (0.188, libdwfl/cu.c addrarange()): ranges
 * sorted by start; consecutive ranges of one unit are one run; an address
 * is the unit of the last run starting at or below it, the gaps between
 * runs included, and past the last range's end (that end included) none.
 * Where that order could be another than libdw's - two ranges of
 * different units at one start (libdw's sort leaves their order to
 * qsort()), starts 2 GiB apart or more (its comparison returns their
 * difference as an int), or a section libdw reads otherwise (another
 * byte order, compressed, a version, an address or segment size it
 * rejects, anything after a set's end marker) - the file is left to
 * libdwfl (aranges_find() returns -1).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "../util/radix.h"
#include "priv.h"

struct arange_run {
	uint64_t start;             /* the run's first range's start */
	uint64_t cu;                /* its unit's header offset in .debug_info */
	Dwarf_Die die;              /* the unit's DIE, once found */
	uint8_t state;              /* 0 not looked for, 1 found, 2 none */
};

struct aranges {
	struct arange_run *runs;
	size_t nr_runs;
	uint64_t last_end;          /* the last range's start + length */
	size_t nr_ranges;           /* ranges read (sym_trim()'s estimate) */
};

/* one range as read: its start, the header offset of its unit, in order */
struct arange_raw {
	uint64_t start, len, cu;
};

static uint64_t get_u(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	/* the host's byte order only (checked by the caller) */
	if (n == 2) {
		uint16_t x;

		memcpy(&x, p, 2);
		v = x;
	} else if (n == 4) {
		uint32_t x;

		memcpy(&x, p, 4);
		v = x;
	} else {
		memcpy(&v, p, 8);
	}
	return v;
}

static bool host_order(Elf *elf)
{
	GElf_Ehdr eh;
	const union { uint16_t u; uint8_t b[2]; } probe = { 1 };

	if (!gelf_getehdr(elf, &eh))
		return false;
	return eh.e_ident[EI_DATA] == (probe.b[0] ? ELFDATA2LSB : ELFDATA2MSB);
}

/* @elf's section @want and its header (NULL: none). */
static Elf_Scn *section_find(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, sh) && (name = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* A section as libdw reads it in place: not compressed, in the file. */
static bool plain(const GElf_Shdr *sh)
{
	return !(sh->sh_flags & SHF_COMPRESSED) && sh->sh_type != SHT_NOBITS;
}

/*
 * Read @d's sets into *@out (*@n ranges, malloc'd). Return: 0, or -1
 * where libdw would read the section otherwise (or out of memory).
 */
static int read_sets(const unsigned char *p, size_t size, size_t info_size,
		     struct arange_raw **out, size_t *n)
{
	const unsigned char *end = p + size;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	while (p < end) {
		const unsigned char *hdr = p, *set_end;
		uint64_t length, offset;
		unsigned asize, seg, tuple;

		if (end - p < 4)
			return -1;
		length = get_u(p, 4);
		p += 4;
		if (length >= 0xfffffff0u)
			return -1; /* 64-bit DWARF, or reserved: libdw's to read */
		if ((uint64_t)(end - p) < length || length < 2 + 4 + 1 + 1)
			return -1;
		set_end = p + length;
		if (get_u(p, 2) != 2)
			return -1;
		offset = get_u(p + 2, 4);
		asize = p[6];
		seg = p[7];
		p += 8;
		if ((asize != 4 && asize != 8) || seg != 0 || offset >= info_size)
			return -1;
		tuple = 2 * asize;
		/* the first tuple at a multiple of its size from the set's start */
		p += (tuple - (size_t)(p - hdr) % tuple) % tuple;
		for (;;) {
			uint64_t start, len;

			if (set_end - p < (ptrdiff_t)tuple)
				return -1; /* no end marker in the set */
			start = get_u(p, asize);
			len = get_u(p + asize, asize);
			p += tuple;
			if (!start && !len)
				break;
			if (*n == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct arange_raw *v = realloc(*out, ncap * sizeof(*v));

				if (!v)
					return -1;
				*out = v;
				cap = ncap;
			}
			(*out)[(*n)++] = (struct arange_raw){ start, len, offset };
		}
		if (p != set_end)
			return -1; /* something after the end marker */
	}
	return 0;
}

/* Make @a's runs from the ranges @r (@n, in the order read): -1 where
 * libdw's order could differ from a sort by start (see the top). */
static int runs_make(struct aranges *a, struct arange_raw *r, size_t n)
{
	uint64_t *key = malloc((n ? n : 1) * sizeof(*key)), *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	uint64_t lo = UINT64_MAX, hi = 0, diff = 0;
	unsigned bits = 0;
	int rc = -1;

	if (!key || !tmp)
		goto out;
	for (size_t i = 0; i < n; i++) {
		lo = r[i].start < lo ? r[i].start : lo;
		hi = r[i].start > hi ? r[i].start : hi;
	}
	if (n && hi - lo >= (1ull << 31))
		goto out;
	while (bits < 64 && ((uint64_t)1 << bits) < n)
		bits++;
	if (bits + 31 > 64)
		goto out;
	/* by start (less the lowest: under 2^31), then the order read */
	for (size_t i = 0; i < n; i++) {
		key[i] = ((r[i].start - lo) << bits) | i;
		diff |= r[i].start ^ r[0].start;
	}
	radix_sort_words(&key, &tmp, n, bits, diff);
	a->runs = malloc((n ? n : 1) * sizeof(*a->runs));
	if (!a->runs)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const struct arange_raw *x = &r[key[k] & (((uint64_t)1 << bits) - 1)];

		if (k) {
			const struct arange_raw *prev =
				&r[key[k - 1] & (((uint64_t)1 << bits) - 1)];

			/* libdw's order of the two is qsort()'s */
			if (prev->start == x->start && (prev->cu != x->cu || prev->len != x->len))
				goto out;
		}
		if (!a->nr_runs || a->runs[a->nr_runs - 1].cu != x->cu)
			a->runs[a->nr_runs++] = (struct arange_run){ .start = x->start, .cu = x->cu };
		if (k == n - 1)
			a->last_end = x->start + x->len;
	}
	a->nr_ranges = n;
	rc = 0;
out:
	free(key);
	free(tmp);
	return rc;
}

struct aranges *aranges_parse(const void *buf, size_t size, uint64_t info_size)
{
	struct arange_raw *raw = NULL;
	struct aranges *a = calloc(1, sizeof(*a));
	size_t n = 0;

	if (!a)
		return NULL;
	if (read_sets(buf, size, info_size, &raw, &n) != 0 || runs_make(a, raw, n) != 0) {
		free(raw);
		aranges_free(a);
		return NULL;
	}
	free(raw);
	return a;
}

struct aranges *aranges_read(Dwarf *dw)
{
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr info, sh;
	size_t shstrndx;

	if (!elf || !host_order(elf) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	/* the sets' offsets are checked against .debug_info's size, as libdw does */
	if (!section_find(elf, shstrndx, ".debug_info", &info) || !plain(&info))
		return NULL;
	/* none: libdw reads no unit for an empty table (libdwfl's, then) */
	scn = section_find(elf, shstrndx, ".debug_aranges", &sh);
	if (!scn || !plain(&sh) || !(d = elf_rawdata(scn, NULL)))
		return NULL;
	return aranges_parse(d->d_buf, d->d_size, info.sh_size);
}

/* The run of @addr in @a, NULL none. */
static struct arange_run *run_at(const struct aranges *a, uint64_t addr)
{
	/* the last run starting at or below @addr */
	size_t lo = sym_count_at_or_below(a->runs, a->nr_runs, sizeof(*a->runs), addr);

	if (!lo || (lo == a->nr_runs && addr > a->last_end))
		return NULL;
	return &a->runs[lo - 1];
}

bool aranges_unit(const struct aranges *a, uint64_t addr, uint64_t *cu)
{
	const struct arange_run *r = a ? run_at(a, addr) : NULL;

	if (r)
		*cu = r->cu;
	return r != NULL;
}

int aranges_find(struct aranges *a, Dwarf *dw, uint64_t addr, Dwarf_Die **die)
{
	struct arange_run *r;

	*die = NULL;
	if (!a)
		return -1;
	if (!(r = run_at(a, addr)))
		return 0;
	if (!r->state) {
		Dwarf_Off next;
		size_t hsize;

		r->state = 2;
		if (dwarf_next_unit(dw, r->cu, &next, &hsize, NULL, NULL, NULL, NULL, NULL,
				    NULL) == 0 &&
		    dwarf_offdie(dw, r->cu + hsize, &r->die))
			r->state = 1;
	}
	if (r->state != 1)
		return -1; /* libdwfl's to say why (a bad offset) */
	*die = &r->die;
	return 0;
}

struct aranges *aranges_of(struct dso_state *st, Dwarf *dw)
{
	if (!st->aranges_tried && dw) {
		st->aranges_tried = true;
		st->aranges = aranges_read(dw);
	}
	return st->aranges;
}

size_t aranges_count(const struct aranges *a)
{
	return a ? a->nr_ranges : 0;
}

size_t aranges_bytes(const struct aranges *a)
{
	return a ? sizeof(*a) + a->nr_runs * sizeof(*a->runs) : 0;
}

void aranges_free(struct aranges *a)
{
	if (!a)
		return;
	free(a->runs);
	free(a);
}
