/* SPDX-License-Identifier: MIT */
/*
 * dwimage.h - a Dwarf made of debug sections given as bytes, for the DWARF
 * readers' fuzz target (fuzz_dwarf.c) and the unit tests of bad debug
 * information (test_inlidx.c, test_lineidx.c, test_dwfuzz.c).
 *
 * The sections are put in an ELF executable image in memory (little-endian
 * x86_64, no other section) opened with elf_memory(); each section's data
 * is then moved to a heap block of its own, exactly its size, so that
 * AddressSanitizer sees a read past any section's end. libdw reads the
 * same blocks (it takes a section's data from elf_getdata()).
 */
#ifndef PERFPORT_TESTS_DWIMAGE_H
#define PERFPORT_TESTS_DWIMAGE_H

#include <elf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum dwimage_sec {
	DWI_INFO, DWI_ABBREV, DWI_LINE, DWI_STR, DWI_LINE_STR, DWI_RNGLISTS, DWI_RANGES,
	DWI_NSEC
};

static const char *const dwimage_names[DWI_NSEC] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_str",
	".debug_line_str", ".debug_rnglists", ".debug_ranges",
};

/* the sections a string may run off the end of, in libdw's reads */
static const uint8_t dwimage_nul[DWI_NSEC] = {
	[DWI_LINE] = 1, [DWI_STR] = 1, [DWI_LINE_STR] = 1,
};

struct dwimage {
	char *img;
	Elf *elf;
	Dwarf *dbg;
	void *own[DWI_NSEC];        /* the sections' blocks */
};

static size_t dwimage_align(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* dwimage_close() - end what dwimage_open() made. */
static void dwimage_close(struct dwimage *d)
{
	if (d->dbg)
		dwarf_end(d->dbg);
	if (d->elf)
		elf_end(d->elf);
	for (int i = 0; i < DWI_NSEC; i++)
		free(d->own[i]);
	free(d->img);
	memset(d, 0, sizeof(*d));
}

/*
 * dwimage_open() - *@d made of the sections @sec (@len bytes each; 0: an
 * empty section). Return: its Dwarf (d->dbg; NULL where libdw opens none,
 * or out of memory); dwimage_close() ends it either way.
 */
static Dwarf *dwimage_open(struct dwimage *d, const uint8_t *const sec[DWI_NSEC],
			   const size_t len[DWI_NSEC])
{
	size_t at[DWI_NSEC], name_at[DWI_NSEC + 1], shstr_at, shstr_len = 1, sh_at, total;
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	Elf_Scn *scn = NULL;

	memset(d, 0, sizeof(*d));
	total = sizeof(eh);
	for (int i = 0; i < DWI_NSEC; i++) {
		at[i] = total;
		total = dwimage_align(total + len[i]);
		name_at[i] = shstr_len;
		shstr_len += strlen(dwimage_names[i]) + 1;
	}
	name_at[DWI_NSEC] = shstr_len;
	shstr_len += sizeof(".shstrtab");
	shstr_at = total;
	total = dwimage_align(total + shstr_len);
	sh_at = total;
	total += (DWI_NSEC + 2) * sizeof(sh);
	d->img = calloc(1, total);
	if (!d->img)
		return NULL;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = sh_at;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(sh);
	eh.e_shnum = DWI_NSEC + 2;
	eh.e_shstrndx = DWI_NSEC + 1;
	memcpy(d->img, &eh, sizeof(eh));
	for (int i = 0; i <= DWI_NSEC; i++) {
		const char *name = i < DWI_NSEC ? dwimage_names[i] : ".shstrtab";

		if (i < DWI_NSEC && len[i])
			memcpy(d->img + at[i], sec[i], len[i]);
		memcpy(d->img + shstr_at + name_at[i], name, strlen(name) + 1);
		memset(&sh, 0, sizeof(sh));
		sh.sh_name = (Elf64_Word)name_at[i];
		sh.sh_type = i < DWI_NSEC ? SHT_PROGBITS : SHT_STRTAB;
		sh.sh_offset = i < DWI_NSEC ? at[i] : shstr_at;
		sh.sh_size = i < DWI_NSEC ? len[i] : shstr_len;
		sh.sh_addralign = 1;
		/* section 0 stays zeros */
		memcpy(d->img + sh_at + (size_t)(i + 1) * sizeof(sh), &sh, sizeof(sh));
	}
	elf_version(EV_CURRENT);
	d->elf = elf_memory(d->img, total);
	if (!d->elf)
		return NULL;
	/* each debug section's bytes in a block of their own */
	for (int i = 0; (scn = elf_nextscn(d->elf, scn)) && i < DWI_NSEC; i++) {
		Elf_Data *data = elf_getdata(scn, NULL);

		if (!data || !data->d_size)
			continue;
		/* a NUL after the string sections' bytes: libdw 0.188's
		 * read_srclines() takes DWARF 2-4 names by strlen(), past the
		 * section's end where it has no NUL (in a file, onto the
		 * bytes that follow it) */
		d->own[i] = calloc(1, data->d_size + dwimage_nul[i]);
		if (!d->own[i])
			return NULL;
		memcpy(d->own[i], data->d_buf, data->d_size);
		data->d_buf = d->own[i];
	}
	d->dbg = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	return d->dbg;
}

#endif
