// SPDX-License-Identifier: MIT
/*
 * dwline.c - a unit's line table read from its line program, as libdw
 * (elfutils 0.188, dwarf_getsrclines()) reads it, for lineidx's copy.
 *
 * libdw's parse was most of what naming a big C++ unit cost after its
 * inline index (76 M of the C++ bench export's 495 M instructions): a
 * malloc a row past the first 2,048, a qsort() of them all calling its
 * comparison, and a table of ~64 bytes a row that lineidx then copied
 * row by row through five calls each. Here the program runs into an array
 * of 24 bytes a row, sorted as libdw sorts it (by address, an end of
 * sequence before a row at its address, then in the program's order:
 * a radix sort), the last row made an end of sequence as libdw makes it;
 * file names are made as libdw makes them (a name that is not absolute
 * after its directory and a '/', DWARF 2-4's directory 0 the unit's
 * DW_AT_comp_dir and its file 0 "???"), DWARF 5's strings read from
 * .debug_str and .debug_line_str as dwarf_formstring() reads them.
 *
 * What libdw would refuse or read another way is left to it (dwline_read()
 * returns -1 and the caller asks libdw): a row a field of libdw's table
 * cannot hold (a column past 65,535, a discriminator past 2^24 - 1, an isa
 * or op index past 255, a line past an int, is_stmt neither 0 nor 1), an
 * extended opcode other than end_sequence, set_address and
 * set_discriminator, a length libdw reads otherwise (one byte of it where
 * the LEB128 has more, set_address's not the address size + 1), a form
 * in a DWARF 5 entry other than those below, a header that does not end
 * where it says (or ends before its fixed fields), an LEB128 number of
 * more than ten bytes, a file of another byte order, a relocatable one, a
 * compressed section.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../util/radix.h"
#include "priv.h"

/* How a line program's header and rows are read. */
struct lp {
	const unsigned char *p, *end;
	unsigned addr_size, off_size;
	bool bad;                   /* read past the end, or something libdw reads otherwise */
};

static uint64_t lp_uleb(struct lp *l)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		if (l->p >= l->end || shift >= 7 * DWWALK_LEB_MAX) {
			l->bad = true;
			return 0;
		}
		v |= (uint64_t)(*l->p & 0x7f) << shift;
		shift += 7;
		if (!(*l->p++ & 0x80))
			return v;
	}
}

static int64_t lp_sleb(struct lp *l)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b;

	do {
		if (l->p >= l->end || shift >= 7 * DWWALK_LEB_MAX) {
			l->bad = true;
			return 0;
		}
		b = *l->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* @n bytes, little-endian (the file's order is checked). */
static uint64_t lp_fixed(struct lp *l, unsigned n)
{
	uint64_t v = 0;

	if ((size_t)(l->end - l->p) < n) {
		l->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)l->p[i] << (8 * i);
	l->p += n;
	return v;
}

static const char *lp_string(struct lp *l)
{
	const unsigned char *z = l->p < l->end ? memchr(l->p, 0, (size_t)(l->end - l->p)) : NULL;
	const char *s = (const char *)l->p;

	if (!z) {
		l->bad = true;
		return NULL;
	}
	l->p = z + 1;
	return s;
}

/* A name as libdw makes it: @f after @dir and a '/' unless absolute (or no @dir). */
static char *name_join(const char *dir, const char *f)
{
	size_t dl = dir && *f != '/' ? strlen(dir) : 0, fl = strlen(f);
	char *s = malloc(dl + 1 + fl + 1);

	if (!s)
		return NULL;
	if (dir && *f != '/') {
		memcpy(s, dir, dl);
		s[dl++] = '/';
	}
	memcpy(s + dl, f, fl + 1);
	return s;
}

/* The value of a DWARF 5 entry's field of form @form at l->p, as a string
 * (dwarf_formstring()'s: an offset into @str or @line_str, the sections
 * libdw reads) or a number; l->p past it. */
static const char *field_string(struct lp *l, const Elf_Data *str, const Elf_Data *line_str,
				unsigned form)
{
	const Elf_Data *d = form == DW_FORM_line_strp ? line_str : str;
	uint64_t off;

	switch (form) {
	case DW_FORM_string:
		return lp_string(l);
	case DW_FORM_strp:
	case DW_FORM_line_strp:
		off = lp_fixed(l, l->off_size);
		if (l->bad || !d || !d->d_buf || off >= d->d_size ||
		    !memchr((const char *)d->d_buf + off, 0, d->d_size - off)) {
			l->bad = true;
			return NULL;
		}
		return (const char *)d->d_buf + off;
	default:
		l->bad = true;
		return NULL;
	}
}

static uint64_t field_number(struct lp *l, unsigned form)
{
	switch (form) {
	case DW_FORM_data1:
		return lp_fixed(l, 1);
	case DW_FORM_data2:
		return lp_fixed(l, 2);
	case DW_FORM_udata:
		return lp_uleb(l);
	default:
		l->bad = true;
		return 0;
	}
}

static void field_skip(struct lp *l, unsigned form)
{
	long n = dwwalk_form_size(form, l->addr_size, l->off_size, l->p, l->end);

	if (n < 0 || n > l->end - l->p)
		l->bad = true;
	else
		l->p += n;
}

struct dirs {
	const char **v;
	size_t n;
};

/* DWARF 5's directory or file entry formats: *@path and *@idx the fields'
 * places (-1 none), @forms their forms. False where libdw would refuse. */
static bool formats_read(struct lp *l, unsigned *nforms, unsigned *forms, int *path, int *idx)
{
	*nforms = (unsigned)lp_fixed(l, 1);
	*path = *idx = -1;
	for (unsigned i = 0; i < *nforms && !l->bad; i++) {
		uint64_t desc = lp_uleb(l), form = lp_uleb(l);

		static const unsigned char zeros[32];

		forms[i] = (unsigned)(form > 0xffff ? 0 : form);
		/* a form libdw would refuse (or one not known here) */
		if (dwwalk_form_size(forms[i], l->addr_size, l->off_size, zeros,
				     zeros + sizeof(zeros)) < 0)
			return false;
		if (desc == DW_LNCT_path)
			*path = (int)i;
		else if (desc == DW_LNCT_directory_index)
			*idx = (int)i;
	}
	return !l->bad;
}

/* The header's directories and files (at l->p, up to l->end: the
 * header's end) into @d and @out's names. */
static bool files_read(struct lp *l, unsigned version, Dwarf_Die *cudie, Elf *elf,
		       struct dwline *out, struct dirs *d)
{
	const Elf_Data *str = NULL, *line_str = NULL;
	unsigned forms[256], nforms;
	int path, idx;
	size_t cap = 16;

	out->names = malloc(cap * sizeof(*out->names));
	if (!out->names)
		return false;
	if (version < 5) {
		Dwarf_Attribute mem, *cd = dwarf_attr(cudie, DW_AT_comp_dir, &mem);
		const unsigned char *q;
		size_t n = 1;

		/* directory 0: the unit's; then the header's, as they are */
		for (q = l->p; q < l->end && *q; q = memchr(q, 0, (size_t)(l->end - q)) + 1)
			if (!memchr(q, 0, (size_t)(l->end - q)))
				return false;
			else
				n++;
		d->v = malloc(n * sizeof(*d->v));
		if (!d->v)
			return false;
		d->v[0] = dwarf_formstring(cd);
		for (d->n = 1; d->n < n; d->n++)
			d->v[d->n] = lp_string(l);
		if (l->p >= l->end || *l->p)
			return false;
		l->p++;
		out->names[0] = strdup("???");
		out->nnames = 1;
		if (!out->names[0])
			return false;
		while (l->p < l->end && *l->p) {
			const char *f = lp_string(l);
			uint64_t di = lp_uleb(l);

			lp_uleb(l);     /* its time */
			lp_uleb(l);     /* its length */
			if (l->bad || di >= d->n)
				return false;
			if (out->nnames == cap) {
				const char **v = realloc(out->names, 2 * cap * sizeof(*v));

				if (!v)
					return false;
				out->names = v;
				cap *= 2;
			}
			if (!(out->names[out->nnames] = name_join(d->v[di], f)))
				return false;
			out->nnames++;
		}
		if (l->p >= l->end)
			return false;
		l->p++;
		return !l->bad;
	}
	/* DWARF 5: directories, then files, each in the formats given */
	str = dwwalk_section(elf, ".debug_str");
	line_str = dwwalk_section(elf, ".debug_line_str");
	if (!formats_read(l, &nforms, forms, &path, &idx) || (nforms && path < 0))
		return false;
	d->n = (size_t)lp_uleb(l);
	if (l->bad || (!nforms && d->n) || (nforms && d->n > (size_t)(l->end - l->p) / nforms))
		return false;
	d->v = calloc(d->n ? d->n : 1, sizeof(*d->v));
	if (!d->v)
		return false;
	for (size_t n = 0; n < d->n; n++) {
		for (unsigned m = 0; m < nforms && !l->bad; m++)
			if ((int)m == path)
				d->v[n] = field_string(l, str, line_str, forms[m]);
			else
				field_skip(l, forms[m]);
		if (l->bad || !d->v[n])
			return false;
	}
	if (!formats_read(l, &nforms, forms, &path, &idx) || (nforms && (path < 0 || idx < 0)))
		return false;
	{
		size_t nf = (size_t)lp_uleb(l);

		if (l->bad || (!nforms && nf) || (nforms && nf > (size_t)(l->end - l->p) / nforms))
			return false;
		/* libdw's table: as many as the header has, at least one
		 * ("???" where it has none) */
		if (nf > cap) {
			const char **v = realloc(out->names, nf * sizeof(*v));

			if (!v)
				return false;
			out->names = v;
		}
		for (size_t n = 0; n < nf; n++) {
			const char *f = NULL;
			uint64_t di = UINT64_MAX;

			for (unsigned m = 0; m < nforms && !l->bad; m++)
				if ((int)m == path)
					f = field_string(l, str, line_str, forms[m]);
				else if ((int)m == idx)
					di = field_number(l, forms[m]);
				else
					field_skip(l, forms[m]);
			if (l->bad || !f || di >= d->n)
				return false;
			if (!(out->names[n] = name_join(d->v[di], f)))
				return false;
			out->nnames = n + 1;
		}
		if (!nf) {
			if (!(out->names[0] = strdup("???")))
				return false;
			out->nnames = 1;
		}
	}
	return !l->bad;
}

/* The machine's state, as libdw keeps it (its types: what it truncates). */
struct lstate {
	uint64_t addr;
	uint32_t op_index, file, column, isa, discriminator;
	int64_t line;
	unsigned is_stmt;
};

static bool row_add(struct dwline *out, size_t *cap, const struct lstate *s, bool end)
{
	/* what libdw's table cannot hold: it refuses the whole table */
	if (s->op_index > 255 || s->isa > 255 || s->discriminator > 0xffffff ||
	    s->column > 0xffff || s->is_stmt > 1 || s->line < INT_MIN || s->line > INT_MAX)
		return false;
	if (out->nrows == *cap) {
		size_t n = *cap ? *cap * 2 : 1024;
		struct dwline_row *v = realloc(out->rows, n * sizeof(*v));

		if (!v)
			return false;
		out->rows = v;
		*cap = n;
	}
	out->rows[out->nrows++] = (struct dwline_row){
		.addr = s->addr, .line = (int32_t)s->line, .file = s->file, .end = end };
	return true;
}

/* libdw's order: by address, an end of sequence first, then as read. */
static int row_cmp(const void *a, const void *b)
{
	const struct dwline_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define ROW_IDX_BITS 24

static bool rows_sort(struct dwline *out)
{
	size_t n = out->nrows, i, j;
	uint64_t lo = UINT64_MAX, diff = 0, *key = NULL, *tmp = NULL;
	const uint64_t mask = (1ull << ROW_IDX_BITS) - 1;
	struct dwline_row *v = NULL;
	bool sorted = true;

	for (i = 0; i < n; i++) {
		out->rows[i].seq = (uint32_t)i;
		if (out->rows[i].addr < lo)
			lo = out->rows[i].addr;
		if (i && row_cmp(&out->rows[i - 1], &out->rows[i]) > 0)
			sorted = false;
	}
	if (sorted || n < 2)
		return true;
	for (i = 0; i < n; i++)
		diff |= out->rows[i].addr - lo;
	if (n > mask || diff >> (64 - ROW_IDX_BITS) || !(key = malloc(n * sizeof(*key))) ||
	    !(tmp = malloc(n * sizeof(*tmp))) || !(v = malloc(n * sizeof(*v)))) {
		free(key);
		free(tmp);
		qsort(out->rows, n, sizeof(*out->rows), row_cmp);
		return true;
	}
	for (i = 0; i < n; i++)
		key[i] = (out->rows[i].addr - lo) << ROW_IDX_BITS | i;
	radix_sort_words(&key, &tmp, n, ROW_IDX_BITS, diff);
	for (i = 0; i < n; i++)
		v[i] = out->rows[key[i] & mask];
	/* a run at one address: its ends of sequence first, each part in order */
	for (i = 0; i < n; i = j) {
		size_t k = i;

		for (j = i + 1; j < n && v[j].addr == v[i].addr; j++)
			;
		for (size_t m = i; m < j; m++)
			if (v[m].end)
				out->rows[k++] = v[m];
		for (size_t m = i; m < j; m++)
			if (!v[m].end)
				out->rows[k++] = v[m];
	}
	free(v);
	free(tmp);
	free(key);
	return true;
}

/* The program from l->p to l->end into @out's rows. */
static bool program_run(struct lp *l, const unsigned char *std_len, unsigned opcode_base,
			unsigned min_len, unsigned max_ops, unsigned default_is_stmt, int line_base,
			unsigned line_range, struct dwline *out)
{
	struct lstate s = { .file = 1, .line = 1, .is_stmt = default_is_stmt };
	size_t cap = 0;

#define ADVANCE(adv) do { \
		uint32_t t_ = s.op_index + (uint32_t)(adv); \
		s.addr += (uint32_t)(min_len * (t_ / max_ops)); \
		s.op_index = t_ % max_ops; \
	} while (0)

	while (l->p < l->end) {
		unsigned op = *l->p++;

		if (op >= opcode_base) {
			if (!line_range)
				return false;
			s.line += line_base + (int)((op - opcode_base) % line_range);
			ADVANCE((op - opcode_base) / line_range);
			if (!row_add(out, &cap, &s, false))
				return false;
			s.discriminator = 0;
		} else if (op == 0) {
			unsigned len, sub;

			if (l->end - l->p < 2)
				return false;
			len = *l->p++;
			if (len & 0x80 || (size_t)(l->end - l->p) < len)
				return false;
			sub = *l->p++;
			switch (sub) {
			case DW_LNE_end_sequence:
				if (!row_add(out, &cap, &s, true))
					return false;
				s = (struct lstate){ .file = 1, .line = 1, .is_stmt = default_is_stmt };
				break;
			case DW_LNE_set_address:
				if (len != l->addr_size + 1)
					return false;
				s.op_index = 0;
				s.addr = lp_fixed(l, l->addr_size);
				break;
			case DW_LNE_set_discriminator:
				if (opcode_base <= 4 || std_len[4] != 1)
					return false;
				s.discriminator = (uint32_t)lp_uleb(l);
				break;
			default:
				return false;
			}
		} else if (op <= DW_LNS_set_isa) {
			/* the standard opcodes, each with libdw's check of its length */
			static const uint8_t args[DW_LNS_set_isa + 1] = {
				[DW_LNS_advance_pc] = 1, [DW_LNS_advance_line] = 1,
				[DW_LNS_set_file] = 1, [DW_LNS_set_column] = 1,
				[DW_LNS_fixed_advance_pc] = 1, [DW_LNS_set_isa] = 1,
			};

			if (std_len[op] != args[op])
				return false;
			switch (op) {
			case DW_LNS_copy:
				if (!row_add(out, &cap, &s, false))
					return false;
				s.discriminator = 0;
				break;
			case DW_LNS_advance_pc:
				ADVANCE((uint32_t)lp_uleb(l));
				break;
			case DW_LNS_advance_line:
				s.line += (int32_t)(uint32_t)(uint64_t)lp_sleb(l);
				break;
			case DW_LNS_set_file:
				s.file = (uint32_t)lp_uleb(l);
				break;
			case DW_LNS_set_column:
				s.column = (uint32_t)lp_uleb(l);
				break;
			case DW_LNS_negate_stmt:
				s.is_stmt = 1 - s.is_stmt;
				break;
			case DW_LNS_set_basic_block:
			case DW_LNS_set_prologue_end:
			case DW_LNS_set_epilogue_begin:
				break;
			case DW_LNS_const_add_pc:
				if (!line_range)
					return false;
				ADVANCE((255 - opcode_base) / line_range);
				break;
			case DW_LNS_fixed_advance_pc:
				if (l->end - l->p < 2)
					return false;
				s.addr += lp_fixed(l, 2);
				s.op_index = 0;
				break;
			case DW_LNS_set_isa:
				s.isa = (uint32_t)lp_uleb(l);
				break;
			}
		} else {
			/* one the program's producer knows: its arguments skipped */
			for (unsigned n = std_len[op]; n > 0; n--)
				lp_uleb(l);
		}
		if (l->bad)
			return false;
	}
#undef ADVANCE
	return true;
}

void dwline_free(struct dwline *l)
{
	for (size_t i = 0; i < l->nnames; i++)
		free((char *)l->names[i]);
	free(l->names);
	free(l->rows);
	memset(l, 0, sizeof(*l));
}

int dwline_read(Dwarf_Die *cudie, struct dwline *out)
{
	Dwarf *dbg = dwarf_cu_getdwarf(cudie->cu);
	Elf *elf = dbg ? dwarf_getelf(dbg) : NULL;
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;
	Dwarf_Attribute mem, *sl = dwarf_attr(cudie, DW_AT_stmt_list, &mem);
	Dwarf_Half cu_version = 0;
	uint8_t unit_type = 0, addr_size = 0, off_size = 0;
	unsigned version, min_len, max_ops = 1, default_is_stmt, line_range, opcode_base;
	const unsigned char *start, *std_len, *hdr_end;
	struct dirs d = { 0 };
	Dwarf_Word off;
	GElf_Ehdr eh;
	const Elf_Data *data;
	struct lp l;
	int line_base;
	uint64_t len, hlen;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ || !ident || ident[EI_DATA] != ELFDATA2LSB ||
	    !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL || !sl ||
	    (sl->form != DW_FORM_sec_offset && sl->form != DW_FORM_data4 &&
	     sl->form != DW_FORM_data8) ||
	    dwarf_formudata(sl, &off) != 0 ||
	    dwarf_cu_info(cudie->cu, &cu_version, &unit_type, NULL, NULL, NULL, &addr_size,
			  &off_size) != 0 ||
	    (unit_type != DW_UT_compile && unit_type != DW_UT_partial) ||
	    !(data = dwwalk_section(elf, ".debug_line")) || !data->d_buf || off >= data->d_size)
		return -1;
	start = (const unsigned char *)data->d_buf + off;
	l = (struct lp){ .p = start, .end = (const unsigned char *)data->d_buf + data->d_size,
			 .addr_size = addr_size };
	/* the header, as read_srclines() reads it */
	len = lp_fixed(&l, 4);
	l.off_size = 4;
	if (len == 0xffffffffu) {
		len = lp_fixed(&l, 8);
		l.off_size = 8;
	}
	if (l.bad || len > (uint64_t)(l.end - l.p) || l.off_size != off_size)
		return -1;
	l.end = l.p + len;
	version = (unsigned)lp_fixed(&l, 2);
	if (version < 2 || version > 5)
		return -1;
	if (version >= 5 && (lp_fixed(&l, 1) != addr_size || lp_fixed(&l, 1) != 0))
		return -1;
	hlen = lp_fixed(&l, l.off_size);
	if (l.bad || hlen > (uint64_t)(l.end - l.p))
		return -1;
	hdr_end = l.p + hlen;
	min_len = (unsigned)lp_fixed(&l, 1);
	if (version >= 4 && !(max_ops = (unsigned)lp_fixed(&l, 1)))
		return -1;
	default_is_stmt = (unsigned)lp_fixed(&l, 1);
	line_base = (int8_t)lp_fixed(&l, 1);
	line_range = (unsigned)lp_fixed(&l, 1);
	opcode_base = (unsigned)lp_fixed(&l, 1);
	std_len = l.p - 1;
	/* the fields above within the header's length, then the opcodes' */
	if (l.bad || opcode_base < 1 || l.p > hdr_end ||
	    (size_t)(hdr_end - l.p) < opcode_base - 1)
		return -1;
	l.p += opcode_base - 1;
	{
		const unsigned char *prog_end = l.end;

		l.end = hdr_end;
		if (!files_read(&l, version, cudie, elf, out, &d) || l.p != hdr_end)
			goto out;
		l.end = prog_end;
	}
	if (!program_run(&l, std_len, opcode_base, min_len, max_ops, default_is_stmt, line_base,
			 line_range, out) || !rows_sort(out))
		goto out;
	if (out->nrows)
		out->rows[out->nrows - 1].end = true;
	ok = true;
out:
	free(d.v);
	if (!ok) {
		dwline_free(out);
		return -1;
	}
	return 0;
}
