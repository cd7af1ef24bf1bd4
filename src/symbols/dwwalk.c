// SPDX-License-Identifier: MIT
/*
 * dwwalk.c - a unit's DIEs read in the order they are written, each once.
 *
 * inlidx's index of a unit meets every DIE of it. Walked with libdw
 * (dwarf_child(), dwarf_siblingof()), a DIE's attributes are read to find
 * its first child and again to find its next sibling, its abbreviation is
 * looked up in libdw's hash under a lock at each step, and a DIE with
 * children but no DW_AT_sibling (GCC gives none to the last of a list) is
 * read through once more, with all below it, to find what follows: on the
 * C++ bench program (one unit of 208 k DIEs) this walk was a third of the
 * instructions of a DWARF export.
 *
 * Here the unit's bytes are read once from its first DIE on: an
 * abbreviation's tag, its children flag and its attributes' forms are
 * taken from libdw once a code (dwarf_getabbrevattr_data()), and a DIE is
 * stepped over by its forms' sizes (the table below, DWARF 2-5 and GNU's).
 * What this cannot read exactly as libdw would - a form not in the table,
 * another byte order, a unit other than a compile or partial unit, bytes
 * past the unit's end, an LEB128 number of more than ten bytes - is said by
 * dwwalk_open() or dwwalk_next() failing, and the caller walks with libdw.
 * A unit ends where its length says or at .debug_info's end, the first;
 * every read is checked against the end of the bytes it lies in (a debug
 * file may be cut short, damaged or made to do harm: fuzz_dwarf.c).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

/* How a form's value is stepped over. */
enum form_kind {
	FK_UNKNOWN = 0,             /* not in the table: libdw walks the unit */
	FK_FIXED,                   /* n bytes */
	FK_ADDR,                    /* the unit's address size */
	FK_OFFSET,                  /* the unit's offset size (4 or 8) */
	FK_REF_ADDR,                /* DWARF 2: an address; later an offset */
	FK_LEB,                     /* an LEB128 number */
	FK_STRING,                  /* a NUL-terminated string */
	FK_BLOCK,                   /* a length of n bytes (0: an LEB128), then that many */
	FK_INDIRECT,                /* the form itself first, as an LEB128 */
};

struct form_rule {
	unsigned form;
	uint8_t kind;
	uint8_t n;
};

/* DWARF 5 section 7.5.6 (and 7.5.5's classes), with GNU's extensions. */
static const struct form_rule form_rules[] = {
	{ DW_FORM_addr, FK_ADDR, 0 },
	{ DW_FORM_block2, FK_BLOCK, 2 },
	{ DW_FORM_block4, FK_BLOCK, 4 },
	{ DW_FORM_data2, FK_FIXED, 2 },
	{ DW_FORM_data4, FK_FIXED, 4 },
	{ DW_FORM_data8, FK_FIXED, 8 },
	{ DW_FORM_string, FK_STRING, 0 },
	{ DW_FORM_block, FK_BLOCK, 0 },
	{ DW_FORM_block1, FK_BLOCK, 1 },
	{ DW_FORM_data1, FK_FIXED, 1 },
	{ DW_FORM_flag, FK_FIXED, 1 },
	{ DW_FORM_sdata, FK_LEB, 0 },
	{ DW_FORM_strp, FK_OFFSET, 0 },
	{ DW_FORM_udata, FK_LEB, 0 },
	{ DW_FORM_ref_addr, FK_REF_ADDR, 0 },
	{ DW_FORM_ref1, FK_FIXED, 1 },
	{ DW_FORM_ref2, FK_FIXED, 2 },
	{ DW_FORM_ref4, FK_FIXED, 4 },
	{ DW_FORM_ref8, FK_FIXED, 8 },
	{ DW_FORM_ref_udata, FK_LEB, 0 },
	{ DW_FORM_indirect, FK_INDIRECT, 0 },
	{ DW_FORM_sec_offset, FK_OFFSET, 0 },
	{ DW_FORM_exprloc, FK_BLOCK, 0 },
	{ DW_FORM_flag_present, FK_FIXED, 0 },
	{ DW_FORM_strx, FK_LEB, 0 },
	{ DW_FORM_addrx, FK_LEB, 0 },
	{ DW_FORM_ref_sup4, FK_FIXED, 4 },
	{ DW_FORM_strp_sup, FK_OFFSET, 0 },
	{ DW_FORM_data16, FK_FIXED, 16 },
	{ DW_FORM_line_strp, FK_OFFSET, 0 },
	{ DW_FORM_ref_sig8, FK_FIXED, 8 },
	{ DW_FORM_implicit_const, FK_FIXED, 0 },   /* its value is the abbreviation's */
	{ DW_FORM_loclistx, FK_LEB, 0 },
	{ DW_FORM_rnglistx, FK_LEB, 0 },
	{ DW_FORM_ref_sup8, FK_FIXED, 8 },
	{ DW_FORM_strx1, FK_FIXED, 1 },
	{ DW_FORM_strx2, FK_FIXED, 2 },
	{ DW_FORM_strx3, FK_FIXED, 3 },
	{ DW_FORM_strx4, FK_FIXED, 4 },
	{ DW_FORM_addrx1, FK_FIXED, 1 },
	{ DW_FORM_addrx2, FK_FIXED, 2 },
	{ DW_FORM_addrx3, FK_FIXED, 3 },
	{ DW_FORM_addrx4, FK_FIXED, 4 },
	{ DW_FORM_GNU_addr_index, FK_LEB, 0 },
	{ DW_FORM_GNU_str_index, FK_LEB, 0 },
	{ DW_FORM_GNU_ref_alt, FK_OFFSET, 0 },
	{ DW_FORM_GNU_strp_alt, FK_OFFSET, 0 },
};

/* An attribute of an abbreviation, as stepped over. */
struct walk_attr {
	uint16_t name;
	uint16_t form;
	uint8_t kind;               /* enum form_kind, resolved for the unit */
	uint8_t n;                  /* FK_FIXED: bytes; FK_BLOCK: the length's */
};

struct walk_abbrev {
	bool known;
	bool children;
	bool pcs;                   /* names DW_AT_low_pc, DW_AT_high_pc or DW_AT_ranges */
	int tag;
	int32_t fixed;              /* all its values' bytes where all are fixed, else -1 */
	uint32_t first, n;          /* its attributes in the walk's at[] */
};

static const struct form_rule *form_rule(unsigned form)
{
	for (size_t i = 0; i < sizeof(form_rules) / sizeof(form_rules[0]); i++)
		if (form_rules[i].form == form)
			return &form_rules[i];
	return NULL;
}

/* @form resolved for @w's unit into *@a; false: not known. */
static bool attr_resolve(const struct dwwalk *w, unsigned form, struct walk_attr *a)
{
	const struct form_rule *r = form_rule(form);

	if (!r)
		return false;
	a->form = (uint16_t)form;
	a->kind = r->kind;
	a->n = r->n;
	switch (r->kind) {
	case FK_ADDR:
		a->kind = FK_FIXED;
		a->n = w->addr_size;
		break;
	case FK_OFFSET:
		a->kind = FK_FIXED;
		a->n = w->off_size;
		break;
	case FK_REF_ADDR:
		a->kind = FK_FIXED;
		a->n = w->version == 2 ? w->addr_size : w->off_size;
		break;
	default:
		break;
	}
	return true;
}

int dwwalk_open(struct dwwalk *w, Dwarf_Die *cu)
{
	Dwarf *dbg = dwarf_cu_getdwarf(cu->cu);
	Dwarf_Half version = 0;
	uint8_t unit_type = 0, addr_size = 0, off_size = 0;
	Dwarf_Off off = dwarf_dieoffset(cu), hdr, next = 0;
	Elf *elf = dbg ? dwarf_getelf(dbg) : NULL;
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;
	const Elf_Data *info;
	size_t room;

	memset(w, 0, sizeof(*w));
	/* LEB128 lengths, and values read in the host's order */
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || !ident || ident[EI_DATA] != ELFDATA2LSB)
		return -1;
	if (dwarf_cu_info(cu->cu, &version, &unit_type, NULL, NULL, NULL, &addr_size,
			  &off_size) != 0 ||
	    version < 2 || version > 5 ||
	    (unit_type != DW_UT_compile && unit_type != DW_UT_partial) ||
	    (addr_size != 4 && addr_size != 8) || (off_size != 4 && off_size != 8))
		return -1;
	hdr = off - dwarf_cuoffset(cu);
	if (dwarf_next_unit(dbg, hdr, &next, NULL, NULL, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    next <= off)
		return -1;
	/* the unit's end as its length says it, within the section's bytes
	 * (libdw gives a length past them as it is): where libdw holds the
	 * section's bytes elsewhere than the Elf does, its walk */
	info = dwwalk_section(elf, ".debug_info");
	if (!info || !info->d_buf || (const char *)cu->addr < (const char *)info->d_buf ||
	    (size_t)((const char *)cu->addr - (const char *)info->d_buf) >= info->d_size)
		return -1;
	room = info->d_size - (size_t)((const char *)cu->addr - (const char *)info->d_buf);
	w->cu = cu->cu;
	w->cudie = *cu;
	w->cu_addr = cu->addr;
	w->cu_off = off;
	w->end = w->cu_addr + (next - off < room ? next - off : room);
	w->version = (uint8_t)version;
	w->addr_size = addr_size;
	w->off_size = off_size;
	return 0;
}

void dwwalk_close(struct dwwalk *w)
{
	free(w->ab);
	free(w->at);
	memset(w, 0, sizeof(*w));
}

/* An LEB128 number of at most DWWALK_LEB_MAX bytes (libdw reads a longer
 * one as UINT64_MAX after its first ten: false, libdw's read). */
static bool leb(const unsigned char **pp, const unsigned char *end, uint64_t *v)
{
	const unsigned char *p = *pp;
	uint64_t r = 0;
	unsigned shift = 0;

	for (;;) {
		if (p >= end || shift >= 7 * DWWALK_LEB_MAX)
			return false;
		r |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
		if (!(*p++ & 0x80))
			break;
	}
	*pp = p;
	*v = r;
	return true;
}

/* Abbreviation @code of the DIE at @addr, learnt from libdw the first time. */
static const struct walk_abbrev *abbrev_of(struct dwwalk *w, uint64_t code, const unsigned char *addr)
{
	Dwarf_Die d = { .addr = (void *)addr, .cu = w->cu };
	struct walk_abbrev *ab;
	size_t cnt = 0;
	int tag, kids;

	if (code < w->nab && w->ab[code].known)
		return &w->ab[code];
	if (code >= (1u << 20))
		return NULL;
	if (code >= w->nab) {
		size_t n = w->nab ? w->nab : 256;
		struct walk_abbrev *q;

		while (n <= code)
			n *= 2;
		q = realloc(w->ab, n * sizeof(*q));
		if (!q)
			return NULL;
		memset(q + w->nab, 0, (n - w->nab) * sizeof(*q));
		w->ab = q;
		w->nab = n;
	}
	ab = &w->ab[code];
	tag = dwarf_tag(&d);
	if (tag == DW_TAG_invalid || !d.abbrev || d.abbrev == (Dwarf_Abbrev *)-1l ||
	    dwarf_getabbrevcode(d.abbrev) != code)
		return NULL;
	kids = dwarf_abbrevhaschildren(d.abbrev);
	if (kids < 0)
		return NULL;
	ab->first = (uint32_t)w->nat;
	ab->fixed = 0;
	/* up to the end of its list (libdw 0.188's dwarf_getattrcnt() counts
	 * the pair of zeros that ends it) */
	for (;; cnt++) {
		struct walk_attr *a;
		unsigned int name, form;
		Dwarf_Sword data;
		Dwarf_Off aoff;

		if (dwarf_getabbrevattr_data(d.abbrev, cnt, &name, &form, &data, &aoff) != 0)
			break;
		if (w->nat + cnt + 1 > w->cap_at) {
			size_t n = w->cap_at ? w->cap_at * 2 : 1024;
			struct walk_attr *q = realloc(w->at, n * sizeof(*q));

			if (!q)
				return NULL;
			w->at = q;
			w->cap_at = n;
		}
		a = &w->at[w->nat + cnt];
		if (!attr_resolve(w, form, a))
			return NULL;
		a->name = (uint16_t)(name > 0xffff ? 0 : name);
		if (name == DW_AT_low_pc || name == DW_AT_high_pc || name == DW_AT_ranges)
			ab->pcs = true;
		if (a->kind == FK_FIXED && ab->fixed >= 0)
			ab->fixed += a->n;
		else
			ab->fixed = -1;
	}
	ab->n = (uint32_t)cnt;
	w->nat += cnt;
	ab->tag = tag;
	ab->children = kids > 0;
	ab->known = true;
	return ab;
}

/* Step over a value of @a (whose form may be indirect) at *@pp, its form
 * into *@form; false past the unit's end or of a form not known. */
static bool value_skip(const struct dwwalk *w, const struct walk_attr *a,
		       const unsigned char **pp, unsigned *form)
{
	const unsigned char *p = *pp, *end = w->end;
	struct walk_attr ind;
	uint64_t len = 0;

	*form = a->form;
	if (a->kind == FK_INDIRECT) {
		uint64_t f;

		if (!leb(&p, end, &f) || f > 0xffff || f == DW_FORM_indirect ||
		    f == DW_FORM_implicit_const || !attr_resolve(w, (unsigned)f, &ind))
			return false;
		a = &ind;
		*form = (unsigned)f;
		if (a->kind == FK_INDIRECT)
			return false;
	}
	switch (a->kind) {
	case FK_FIXED:
		if ((size_t)(end - p) < a->n)
			return false;
		p += a->n;
		break;
	case FK_LEB:
		if (!leb(&p, end, &len))
			return false;
		break;
	case FK_STRING: {
		const unsigned char *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;

		if (!z)
			return false;
		p = z + 1;
		break;
	}
	case FK_BLOCK:
		if (a->n == 0) {
			if (!leb(&p, end, &len))
				return false;
		} else {
			if ((size_t)(end - p) < a->n)
				return false;
			for (unsigned i = 0; i < a->n; i++)
				len |= (uint64_t)p[i] << (8 * i);
			p += a->n;
		}
		if (len > (uint64_t)(end - p))
			return false;
		p += len;
		break;
	default:
		return false;
	}
	if (p > end)
		return false;
	*pp = p;
	return true;
}

long dwwalk_form_size(unsigned form, unsigned addr_size, unsigned off_size,
		      const unsigned char *p, const unsigned char *end)
{
	struct dwwalk w = { .end = end, .version = 5, .addr_size = (uint8_t)addr_size,
			    .off_size = (uint8_t)off_size };
	struct walk_attr a;
	const unsigned char *q = p;
	unsigned f;

	if (!attr_resolve(&w, form, &a) || a.kind == FK_INDIRECT || form == DW_FORM_implicit_const ||
	    !value_skip(&w, &a, &q, &f))
		return -1;
	return (long)(q - p);
}

int dwwalk_next(struct dwwalk *w, const unsigned char **pp, struct dwwalk_die *d)
{
	const unsigned char *p = *pp;
	const struct walk_abbrev *ab;
	uint64_t code;

	if (!leb(&p, w->end, &code))
		return -1;
	if (code == 0) {
		*pp = p;
		return 0;
	}
	ab = abbrev_of(w, code, *pp);
	if (!ab)
		return -1;
	d->addr = *pp;
	d->tag = ab->tag;
	d->children = ab->children;
	d->lo = d->hi = NULL;
	d->lo_form = d->hi_form = 0;
	d->ranges = false;
	d->rng = NULL;
	d->rng_form = 0;
	if (ab->fixed >= 0 && !ab->pcs) {
		if ((size_t)(w->end - p) < (size_t)ab->fixed)
			return -1;
		p += ab->fixed;
	} else {
		for (uint32_t i = 0; i < ab->n; i++) {
			const struct walk_attr *a = &w->at[ab->first + i];
			const unsigned char *at = p;
			unsigned form;

			if (!value_skip(w, a, &p, &form))
				return -1;
			if (a->name == DW_AT_low_pc && !d->lo) {
				d->lo = at;
				d->lo_form = (uint16_t)form;
			} else if (a->name == DW_AT_high_pc && !d->hi) {
				d->hi = at;
				d->hi_form = (uint16_t)form;
			} else if (a->name == DW_AT_ranges && !d->ranges) {
				d->ranges = true;
				d->rng = at;
				d->rng_form = (uint16_t)form;
			}
		}
	}
	*pp = p;
	return 1;
}

static uint64_t read_le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int dwwalk_pc(const struct dwwalk *w, const struct dwwalk_die *d, uint64_t *lo, uint64_t *hi)
{
	const unsigned char *p;
	uint64_t l, h;

	/* dwarf_ranges() at offset 0 of a DIE not the unit's: none without
	 * any of the three; else dwarf_highpc() and dwarf_lowpc() of the
	 * DIE's own attributes, when both are there */
	if (!d->lo && !d->hi && !d->ranges)
		return 0;
	if (!d->lo || !d->hi || d->lo_form != DW_FORM_addr)
		return -1;
	l = read_le(d->lo, w->addr_size);
	switch (d->hi_form) {
	case DW_FORM_addr:
		h = read_le(d->hi, w->addr_size);
		break;
	case DW_FORM_data1:
		h = l + read_le(d->hi, 1);
		break;
	case DW_FORM_data2:
		h = l + read_le(d->hi, 2);
		break;
	case DW_FORM_data4:
		h = l + read_le(d->hi, 4);
		break;
	case DW_FORM_data8:
		h = l + read_le(d->hi, 8);
		break;
	case DW_FORM_udata:
		p = d->hi;
		if (!leb(&p, w->end, &h))
			return -1;
		h += l;
		break;
	default:
		return -1;
	}
	*lo = l;
	*hi = h;
	return 1;
}

const Elf_Data *dwwalk_section(Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (!name || strcmp(name, want))
			continue;
		if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_COMPRESSED))
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* Where @w's unit's range lists are, and its base address as libdw's
 * __libdw_cu_base_address() takes it (DW_AT_low_pc, else DW_AT_entry_pc,
 * else 0); false where libdw should read them (a relocatable file, a
 * unit with a base of its lists' offsets). */
static bool lists_open(struct dwwalk *w)
{
	Dwarf *dbg = dwarf_cu_getdwarf(w->cu);
	Elf *elf = dbg ? dwarf_getelf(dbg) : NULL;
	const Elf_Data *data;
	Dwarf_Attribute mem;
	GElf_Ehdr eh;
	Dwarf_Addr base;

	if (w->rl_state)
		return w->rl_state > 0;
	w->rl_state = -1;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL ||
	    dwarf_hasattr(&w->cudie, DW_AT_rnglists_base) ||
	    dwarf_hasattr(&w->cudie, DW_AT_GNU_ranges_base) ||
	    !(data = dwwalk_section(elf, w->version < 5 ? ".debug_ranges" : ".debug_rnglists")) ||
	    !data->d_buf)
		return false;
	if (dwarf_lowpc(&w->cudie, &base) != 0 &&
	    dwarf_formaddr(dwarf_attr(&w->cudie, DW_AT_entry_pc, &mem), &base) != 0)
		base = 0;
	if (base == (Dwarf_Addr)-1)
		return false;
	w->rl = data->d_buf;
	w->rl_size = data->d_size;
	w->rl_base = base;
	w->rl_state = 1;
	return true;
}

int dwwalk_ranges(struct dwwalk *w, const struct dwwalk_die *d, uint64_t *lo, uint64_t *hi,
		  int max)
{
	const unsigned char *p, *end;
	uint64_t off, base, b, e;
	unsigned as = w->addr_size;
	int n = 0;

	if (d->lo || d->hi || !d->ranges || !lists_open(w))
		return -1;
	/* initial_offset(): an offset into the section (DWARF 5's index
	 * form is libdw's) */
	if (d->rng_form == DW_FORM_sec_offset)
		off = read_le(d->rng, w->off_size);
	else if (w->version < 4 && d->rng_form == DW_FORM_data4)
		off = read_le(d->rng, 4);
	else if (w->version < 4 && d->rng_form == DW_FORM_data8)
		off = read_le(d->rng, 8);
	else
		return -1;
	if (off >= w->rl_size)
		return -1;
	p = w->rl + off;
	end = w->rl + w->rl_size;
	base = w->rl_base;
	for (;;) {
		/* dwarf_ranges()'s check before each entry */
		if ((size_t)(end - p) < 2 * (size_t)as)
			return -1;
		if (w->version < 5) {
			uint64_t escape = as == 8 ? UINT64_MAX : UINT32_MAX;

			b = read_le(p, as);
			e = read_le(p + as, as);
			p += 2 * as;
			if (b == escape) {
				if (e == escape)
					return -1;
				base = e;
				continue;
			}
			if (!b && !e)
				return n;
			b += base;
			e += base;
		} else {
			const unsigned char *q = p + 1;
			uint64_t v1, v2;

			switch (*p) {
			case DW_RLE_end_of_list:
				return n;
			case DW_RLE_base_address:
				base = read_le(q, as);
				p = q + as;
				continue;
			case DW_RLE_offset_pair:
				if (!leb(&q, end, &v1) || !leb(&q, end, &v2))
					return -1;
				b = base + v1;
				e = base + v2;
				break;
			case DW_RLE_start_end:
				if ((size_t)(end - q) < 2 * (size_t)as)
					return -1;
				b = read_le(q, as);
				e = read_le(q + as, as);
				q += 2 * as;
				break;
			case DW_RLE_start_length:
				b = read_le(q, as);
				q += as;
				if (!leb(&q, end, &v1))
					return -1;
				e = b + v1;
				break;
			default:        /* the address-index entries: libdw's */
				return -1;
			}
			p = q;
		}
		if (n == max)
			return -1;
		lo[n] = b;
		hi[n] = e;
		n++;
	}
}

void dwwalk_die(const struct dwwalk *w, const struct dwwalk_die *d, Dwarf_Die *out)
{
	memset(out, 0, sizeof(*out));
	out->addr = (void *)d->addr;
	out->cu = w->cu;
}

Dwarf_Off dwwalk_off(const struct dwwalk *w, const unsigned char *addr)
{
	return w->cu_off + (Dwarf_Off)(addr - w->cu_addr);
}

const unsigned char *dwwalk_at(const struct dwwalk *w, Dwarf_Off off)
{
	if (off < w->cu_off || off - w->cu_off >= (Dwarf_Off)(w->end - w->cu_addr))
		return NULL;
	return w->cu_addr + (off - w->cu_off);
}
