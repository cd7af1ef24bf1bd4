/* SPDX-License-Identifier: MIT */
/*
 * dwhand.h - one small DWARF 5 unit made by hand, whole or with one thing
 * broken, as the debug sections of an ELF in memory (tests/fuzz/dwimage.h):
 * for test_inlidx.c's and test_lineidx.c's tests of bad debug information.
 *
 * The unit "a.c" (low pc 0x1000, 0x100 bytes, its lines at offset 0 of
 * .debug_line) has a function f (0x1000-0x1080) with two inlined calls,
 * one by a range list (0x1010-0x1020 and 0x1030-0x1038 from the unit's
 * base) and one by a low and high pc (0x1040-0x1048), and, with
 * DWH_DEEP, DWH_DEEP_N lexical blocks one in the other. Its line program
 * has rows at 0x1000 (line 1), 0x1010 (line 3) and its end at 0x1080.
 */
#ifndef PERFPORT_TESTS_DWHAND_H
#define PERFPORT_TESTS_DWHAND_H

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/dwimage.h"

enum dwhand_break {
	DWH_NONE = 0,
	DWH_UNIT_LONG,              /* the unit's length past .debug_info's end, its DIEs cut there */
	DWH_CODE0,                  /* abbreviation code 0 where f's DIE is */
	DWH_LEB20,                  /* a ULEB of 20 bytes: a DIE's code, advance_pc's operand */
	DWH_HLEN_LONG,              /* the line program's header length past its end */
	DWH_HLEN_SHORT,             /* ... ending before the header's fixed fields */
	DWH_STRP_PAST,              /* DW_FORM_strp and _line_strp offsets past their sections */
	DWH_RNG_NOEND,              /* the range list with no end (the section's end first) */
	DWH_DEEP,                   /* DWH_DEEP_N lexical blocks nested in f */
	DWH_NBREAK
};

#define DWH_DEEP_N 3000

struct dwhand {
	uint8_t *sec[DWI_NSEC];
	size_t len[DWI_NSEC], cap[DWI_NSEC];
	struct dwimage img;
};

static void dwh_put(struct dwhand *h, int s, const void *p, size_t n)
{
	if (h->len[s] + n > h->cap[s]) {
		size_t c = (h->len[s] + n) * 2 + 64;
		uint8_t *q = realloc(h->sec[s], c);

		if (!q)
			abort();
		h->sec[s] = q;
		h->cap[s] = c;
	}
	memcpy(h->sec[s] + h->len[s], p, n);
	h->len[s] += n;
}

static void dwh_u8(struct dwhand *h, int s, unsigned v)
{
	uint8_t b = (uint8_t)v;

	dwh_put(h, s, &b, 1);
}

static void dwh_le(struct dwhand *h, int s, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		dwh_u8(h, s, (unsigned)(v >> (8 * i)) & 0xff);
}

/* @v as a ULEB128 of at least @min bytes (padded with continuation bytes) */
static void dwh_uleb(struct dwhand *h, int s, uint64_t v, unsigned min)
{
	unsigned n = 0;

	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		n++;
		if (v || n < min)
			b |= 0x80;
		dwh_u8(h, s, b);
	} while (v || n < min);
}

static void dwh_set32(struct dwhand *h, int s, size_t at, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		h->sec[s][at + i] = (uint8_t)(v >> (8 * i));
}

/* The sections of the unit, broken as @b says, opened: its Dwarf (NULL:
 * libdw opens none); dwhand_close() after. */
static Dwarf *dwhand_open(struct dwhand *h, enum dwhand_break b)
{
	const uint8_t *sec[DWI_NSEC];
	size_t hl_at, prog_at;

	memset(h, 0, sizeof(*h));
	/* .debug_abbrev */
	{
		static const uint8_t ab[] = {
			1, DW_TAG_compile_unit, 1, DW_AT_name, DW_FORM_strp,
			DW_AT_stmt_list, DW_FORM_sec_offset, DW_AT_low_pc, DW_FORM_addr,
			DW_AT_high_pc, DW_FORM_data4, 0, 0,
			2, DW_TAG_subprogram, 1, DW_AT_name, DW_FORM_string,
			DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_data4, 0, 0,
			3, DW_TAG_inlined_subroutine, 0, DW_AT_ranges, DW_FORM_sec_offset, 0, 0,
			4, DW_TAG_inlined_subroutine, 0, DW_AT_low_pc, DW_FORM_addr,
			DW_AT_high_pc, DW_FORM_data1, 0, 0,
			5, DW_TAG_lexical_block, 1, 0, 0,
			0,
		};

		dwh_put(h, DWI_ABBREV, ab, sizeof(ab));
	}
	/* .debug_info */
	dwh_le(h, DWI_INFO, 0, 4);                  /* its length, below */
	dwh_le(h, DWI_INFO, 5, 2);
	dwh_u8(h, DWI_INFO, DW_UT_compile);
	dwh_u8(h, DWI_INFO, 8);
	dwh_le(h, DWI_INFO, 0, 4);
	dwh_uleb(h, DWI_INFO, 1, 1);
	dwh_le(h, DWI_INFO, b == DWH_STRP_PAST ? 0x1000 : 0, 4);
	dwh_le(h, DWI_INFO, 0, 4);
	dwh_le(h, DWI_INFO, 0x1000, 8);
	dwh_le(h, DWI_INFO, 0x100, 4);
	dwh_uleb(h, DWI_INFO, b == DWH_CODE0 ? 0 : 2, 1);
	dwh_put(h, DWI_INFO, "f", 2);
	dwh_le(h, DWI_INFO, 0x1000, 8);
	dwh_le(h, DWI_INFO, 0x80, 4);
	dwh_uleb(h, DWI_INFO, 3, b == DWH_LEB20 ? 20 : 1);
	dwh_le(h, DWI_INFO, 12, 4);                 /* the list after the rnglists header */
	dwh_uleb(h, DWI_INFO, 4, 1);
	dwh_le(h, DWI_INFO, 0x1040, 8);
	dwh_u8(h, DWI_INFO, 8);
	for (int i = 0; b == DWH_DEEP && i < DWH_DEEP_N; i++)
		dwh_uleb(h, DWI_INFO, 5, 1);
	for (int i = 0; b == DWH_DEEP && i < DWH_DEEP_N; i++)
		dwh_u8(h, DWI_INFO, 0);
	/* f's children end, then the unit's (not there: a unit cut short) */
	for (int i = 0; b != DWH_UNIT_LONG && i < 2; i++)
		dwh_u8(h, DWI_INFO, 0);
	dwh_set32(h, DWI_INFO, 0, b == DWH_UNIT_LONG ? 0x10000 : (uint32_t)(h->len[DWI_INFO] - 4));
	/* .debug_rnglists */
	dwh_le(h, DWI_RNGLISTS, 0, 4);
	dwh_le(h, DWI_RNGLISTS, 5, 2);
	dwh_u8(h, DWI_RNGLISTS, 8);
	dwh_u8(h, DWI_RNGLISTS, 0);
	dwh_le(h, DWI_RNGLISTS, 0, 4);
	dwh_u8(h, DWI_RNGLISTS, DW_RLE_offset_pair);
	dwh_uleb(h, DWI_RNGLISTS, 0x10, 1);
	dwh_uleb(h, DWI_RNGLISTS, 0x20, 1);
	dwh_u8(h, DWI_RNGLISTS, DW_RLE_offset_pair);
	dwh_uleb(h, DWI_RNGLISTS, 0x30, 1);
	dwh_uleb(h, DWI_RNGLISTS, 0x38, 1);
	if (b != DWH_RNG_NOEND)
		dwh_u8(h, DWI_RNGLISTS, DW_RLE_end_of_list);
	dwh_set32(h, DWI_RNGLISTS, 0, (uint32_t)(h->len[DWI_RNGLISTS] - 4));
	/* .debug_str, .debug_line_str */
	dwh_put(h, DWI_STR, "a.c", 4);
	dwh_put(h, DWI_LINE_STR, "/src\0a.c", 9);
	/* .debug_line */
	{
		static const uint8_t std_len[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
		uint32_t strp = b == DWH_STRP_PAST ? 0x1000 : 0;

		dwh_le(h, DWI_LINE, 0, 4);
		dwh_le(h, DWI_LINE, 5, 2);
		dwh_u8(h, DWI_LINE, 8);
		dwh_u8(h, DWI_LINE, 0);
		hl_at = h->len[DWI_LINE];
		dwh_le(h, DWI_LINE, 0, 4);
		dwh_u8(h, DWI_LINE, 1);             /* minimum instruction length */
		dwh_u8(h, DWI_LINE, 1);             /* maximum operations */
		dwh_u8(h, DWI_LINE, 1);             /* default is_stmt */
		dwh_u8(h, DWI_LINE, (uint8_t)-5);   /* line base */
		dwh_u8(h, DWI_LINE, 14);            /* line range */
		dwh_u8(h, DWI_LINE, 13);            /* opcode base */
		dwh_put(h, DWI_LINE, std_len, sizeof(std_len));
		dwh_u8(h, DWI_LINE, 1);
		dwh_uleb(h, DWI_LINE, DW_LNCT_path, 1);
		dwh_uleb(h, DWI_LINE, DW_FORM_line_strp, 1);
		dwh_uleb(h, DWI_LINE, 1, 1);
		dwh_le(h, DWI_LINE, 0, 4);
		dwh_u8(h, DWI_LINE, 2);
		dwh_uleb(h, DWI_LINE, DW_LNCT_path, 1);
		dwh_uleb(h, DWI_LINE, DW_FORM_line_strp, 1);
		dwh_uleb(h, DWI_LINE, DW_LNCT_directory_index, 1);
		dwh_uleb(h, DWI_LINE, DW_FORM_data1, 1);
		dwh_uleb(h, DWI_LINE, 2, 1);              /* files 0 and 1: a.c, as gcc has them */
		dwh_le(h, DWI_LINE, 5, 4);
		dwh_u8(h, DWI_LINE, 0);
		dwh_le(h, DWI_LINE, strp ? strp : 5, 4);
		dwh_u8(h, DWI_LINE, 0);
		prog_at = h->len[DWI_LINE];
		dwh_set32(h, DWI_LINE, hl_at,
			  b == DWH_HLEN_LONG ? 0xffff : b == DWH_HLEN_SHORT ? 2 :
			  (uint32_t)(prog_at - hl_at - 4));
		dwh_u8(h, DWI_LINE, 0);
		dwh_u8(h, DWI_LINE, 9);
		dwh_u8(h, DWI_LINE, DW_LNE_set_address);
		dwh_le(h, DWI_LINE, 0x1000, 8);
		dwh_u8(h, DWI_LINE, DW_LNS_copy);
		dwh_u8(h, DWI_LINE, DW_LNS_advance_pc);
		dwh_uleb(h, DWI_LINE, 0x10, b == DWH_LEB20 ? 20 : 1);
		dwh_u8(h, DWI_LINE, DW_LNS_advance_line);
		dwh_u8(h, DWI_LINE, 2);
		dwh_u8(h, DWI_LINE, DW_LNS_copy);
		dwh_u8(h, DWI_LINE, DW_LNS_advance_pc);
		dwh_uleb(h, DWI_LINE, 0x70, 1);
		dwh_u8(h, DWI_LINE, 0);
		dwh_u8(h, DWI_LINE, 1);
		dwh_u8(h, DWI_LINE, DW_LNE_end_sequence);
		dwh_set32(h, DWI_LINE, 0, (uint32_t)(h->len[DWI_LINE] - 4));
	}
	for (int i = 0; i < DWI_NSEC; i++)
		sec[i] = h->sec[i];
	return dwimage_open(&h->img, sec, h->len);
}

static void dwhand_close(struct dwhand *h)
{
	dwimage_close(&h->img);
	for (int i = 0; i < DWI_NSEC; i++)
		free(h->sec[i]);
	memset(h, 0, sizeof(*h));
}

#endif
