/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dwarf.c - libFuzzer target for perfport's own DWARF readers: the
 * in-order walk of a unit's DIEs and its range lists (dwwalk.c, through
 * inlidx.c) and the line program's reader (dwline.c, through lineidx.c).
 *
 * The input is a small header of seven little-endian 32-bit lengths, then
 * the bytes of .debug_info, .debug_abbrev, .debug_line, .debug_str,
 * .debug_line_str, .debug_rnglists and .debug_ranges one after the other
 * (a length past what is left is cut to it). They are made into an ELF
 * executable in memory (little-endian, x86_64, no other section) that
 * libdw opens, and every unit of it (up to 64) is indexed as the namer
 * indexes it: the inline index read in order whole and in parts, the line
 * table read by dwline.c, then the scopes and lines of a few addresses
 * (the unit's rows' and its own low pc) looked up through inlidx_chain()
 * and lineidx_find(). tests/fuzz/dwarf_seeds.py makes seeds of this form
 * from a real debug file; tests/unit/test_dwfuzz.c replays
 * tests/fuzz/dwarf-regress/ through this file in `make check`.
 */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/priv.h"
#include "dwimage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FZ_UNITS = 64, FZ_ADDRS = 8 };

static volatile uint64_t fz_sink;

/* Unit @cu as the namer meets it: its inline index and its line table,
 * then a few addresses' scopes and lines. */
static void fz_unit(Dwarf_Die *cu)
{
	struct inl_index *ix = NULL;
	struct line_index *lx = NULL;
	uint64_t addrs[FZ_ADDRS];
	size_t na = 0;
	struct dwline l;
	Dwarf_Addr low;
	bool walked;

	fz_sink += inlidx_unit_digest(cu, 1, &walked);
	fz_sink += inlidx_unit_digest(cu, 2, &walked);
	if (dwarf_lowpc(cu, &low) == 0)
		addrs[na++] = low;
	if (dwline_read(cu, &l) == 0) {
		for (size_t i = 0; i < l.nnames; i++)
			fz_sink += strlen(l.names[i]);
		for (size_t i = 0; i < l.nrows; i++) {
			fz_sink += l.rows[i].addr + (uint64_t)l.rows[i].line + l.rows[i].file;
			if (na < FZ_ADDRS && i % 7 == 0)
				addrs[na++] = l.rows[i].addr;
		}
		dwline_free(&l);
	}
	for (size_t i = 0; i < na; i++) {
		Dwarf_Die out[16], cu_out;
		const char *file = NULL;
		unsigned line = 0;
		size_t fresh = 0, n;

		n = inlidx_chain(&ix, NULL, 0, cu, addrs[i], out, 16, &cu_out);
		for (size_t k = 0; k < n; k++)
			fz_sink += (uint64_t)dwarf_dieoffset(&out[k]);
		if (lineidx_find(&lx, NULL, 0, NULL, cu, addrs[i], &file, &line, &fresh))
			fz_sink += line + (file ? strlen(file) : 0);
		file = lineidx_file(&lx, NULL, 0, NULL, cu, i);
		fz_sink += file ? strlen(file) : 0;
	}
	lineidx_end_dwarf(lx);
	lineidx_free(lx);
	inlidx_free(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sec[DWI_NSEC];
	size_t len[DWI_NSEC], hdr = 4 * DWI_NSEC, used = hdr < size ? hdr : size,
	       left = size - used, units = 0, hsize;
	const uint8_t *p = data + used;
	size_t span = inlidx_part_min_span;
	struct dwimage img;
	Dwarf_Off off = 0, next;
	Dwarf *dbg;

	/* the header's lengths, each cut to what is left */
	for (int i = 0; i < DWI_NSEC; i++) {
		uint32_t n = 0;

		if ((size_t)(4 * i + 4) <= used)
			n = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
			    (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
		len[i] = n < left ? n : left;
		sec[i] = p;
		p += len[i];
		left -= len[i];
	}
	dbg = dwimage_open(&img, sec, len);
	/* every unit of two top-level DIEs or more also gathered in parts */
	inlidx_part_min_span = 0;
	while (dbg && units++ < FZ_UNITS &&
	       dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dbg, off + hsize, &cu))
			fz_unit(&cu);
		off = next;
	}
	inlidx_part_min_span = span;
	dwimage_close(&img);
	return 0;
}
