/* SPDX-License-Identifier: MIT */
/*
 * symtab.c - a file's function symbols: the symbol table built once per
 * file (symtab, else dynsym, MiniDebugInfo, the PLT's entries and the code
 * labels no function covers), sorted one per address as perf chooses among
 * aliases, and their names made clean (version suffix dropped, demangled)
 * when a frame is first named in them.
 */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/radix.h"
#include "priv.h"

static unsigned leading_underscores(const char *n)
{
	unsigned k = 0;

	while (n[k] == '_')
		k++;
	return k;
}

int sym_alias_order(bool sized_x, uint8_t bind_x, const char *x, bool sized_y, uint8_t bind_y,
		    const char *y)
{
	unsigned ux, uy;
	size_t lx, ly;

	if (sized_x != sized_y)
		return sized_x ? -1 : 1;
	if ((bind_x == STB_WEAK) != (bind_y == STB_WEAK))
		return bind_x == STB_WEAK ? 1 : -1;
	if ((bind_x == STB_GLOBAL) != (bind_y == STB_GLOBAL))
		return bind_x == STB_GLOBAL ? -1 : 1;
	ux = leading_underscores(x);
	uy = leading_underscores(y);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x);
	ly = strlen(y);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x, y);
}

int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->label != y->label)
		return x->label ? 1 : -1;
	return sym_alias_order(x->size != 0, x->bind, x->name, y->size != 0, y->bind, y->name);
}

/* Insertion sort of the run @v[0..@n) by fsym_cmp(): stable, for the few
 * aliases at one address. */
static void fsym_sort_run(struct fsym *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct fsym x = v[i];
		size_t j = i;

		for (; j > 0 && fsym_cmp(&v[j - 1], &x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/*
 * By address first with a radix sort of one word a symbol (its address
 * above, its place in the table below: equal addresses keep their order),
 * the table then put in that order in place, and each run at one address
 * sorted by fsym_cmp(). glibc's qsort() took 7-13 ms for libLLVM-14.so.1's
 * 35,860 functions and 1.1-2.0 ms for libc.so.6's 6,832, with a copy of
 * the table as its scratch (mapped and unmapped each time: on a VM every
 * page first touched is a trap). A table too big for the word, or with
 * addresses above 2^40, is left to qsort().
 */
#define FSYM_IDX_BITS 24

void fsym_sort(struct fsym *v, size_t n)
{
	uint64_t *key = NULL, *tmp = NULL, diff = 0, mask = (1ull << FSYM_IDX_BITS) - 1;
	size_t i, j;

	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		diff |= v[i].addr ^ v[0].addr;
	if (n > mask || (v[0].addr | diff) >> (64 - FSYM_IDX_BITS) ||
	    !(key = malloc(n * sizeof(*key))) || !(tmp = malloc(n * sizeof(*tmp)))) {
		free(key);
		qsort(v, n, sizeof(*v), fsym_cmp);
		return;
	}
	for (i = 0; i < n; i++)
		key[i] = v[i].addr << FSYM_IDX_BITS | i;
	/* the least significant byte first; bytes no two keys differ in are
	 * skipped */
	radix_sort_words(&key, &tmp, n, FSYM_IDX_BITS, diff);
	/* in place, a cycle at a time: slot i takes the symbol at key[i]'s
	 * index; a slot filled is marked by an index of its own */
	for (i = 0; i < n; i++) {
		struct fsym hold;
		size_t at = i, from;

		if ((key[i] & mask) == i || (key[i] & mask) == mask)
			continue;
		hold = v[i];
		for (;;) {
			from = key[at] & mask;
			key[at] |= mask;
			if (from == i) {
				v[at] = hold;
				break;
			}
			v[at] = v[from];
			at = from;
		}
	}
	free(tmp);
	free(key);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && v[j].addr == v[i].addr; j++)
			;
		if (j - i > 32)
			qsort(v + i, j - i, sizeof(*v), fsym_cmp);
		else if (j - i > 1)
			fsym_sort_run(v + i, j - i);
	}
}

/*
 * An untyped symbol in code: an assembly entry point without .type, such as
 * ld.so's _start, which perf names code by. ARM's mapping symbols ($x, $d)
 * and local labels (.L) are not names.
 */
static bool is_code_label(const GElf_Sym *sym, GElf_Word shndx, Elf *elf, const char *name)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (GELF_ST_TYPE(sym->st_info) != STT_NOTYPE || !elf || shndx == SHN_UNDEF ||
	    shndx >= SHN_LORESERVE || name[0] == '$' || (name[0] == '.' && name[1] == 'L'))
		return false;
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* A section of @elf by name, and its header. */
static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

/*
 * The PLT's entries, named "FUNCTION@plt" after their jump-slot relocations
 * as perf names them (x86_64: a 16-byte header, then 16-byte entries, or
 * .plt.sec's entries without header when built for IBT; aarch64: a 32-byte
 * header, then 16-byte entries). Entry i is relocation i of .rela.plt; an
 * IRELATIVE slot has no name and stays unnamed. Appended to st->syms.
 */
static size_t plt_symbols(struct symbolizer *s, struct dso_state *st, size_t k)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(st->mod, &bias);
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rela, *plt, *dynsym;
	Elf_Data *rd, *dd;
	GElf_Ehdr eh;
	uint64_t header, entry = 16, start, room;
	uint32_t jump_slot;
	size_t nrel;
	struct fsym *n;

	if (!elf || !gelf_getehdr(elf, &eh))
		return k;
	if (eh.e_machine == EM_X86_64) {
		header = 16;
		jump_slot = R_X86_64_JUMP_SLOT;
	} else if (eh.e_machine == EM_AARCH64) {
		header = 32;
		jump_slot = R_AARCH64_JUMP_SLOT;
	} else {
		return k;
	}
	rela = section_named(elf, ".rela.plt", &rsh);
	if (!rela || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return k;
	plt = section_named(elf, ".plt.sec", &psh);
	if (plt && eh.e_machine == EM_X86_64)
		header = 0;
	else if (!(plt = section_named(elf, ".plt", &psh)))
		return k;
	if (psh.sh_type != SHT_PROGBITS || !(psh.sh_flags & SHF_EXECINSTR))
		return k;
	dynsym = elf_getscn(elf, rsh.sh_link);
	rd = elf_getdata(rela, NULL);
	if (!dynsym || !gelf_getshdr(dynsym, &dsh) || !(dd = elf_getdata(dynsym, NULL)) || !rd)
		return k;
	nrel = rsh.sh_size / rsh.sh_entsize;
	room = psh.sh_size > header ? (psh.sh_size - header) / entry : 0;
	if (nrel > room)
		nrel = room;
	if (!nrel)
		return k;
	n = realloc(st->syms, (k + nrel) * sizeof(*n));
	if (!n)
		return k;
	st->syms = n;
	start = psh.sh_addr + bias + header;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		char buf[512];

		if (!gelf_getrela(rd, (int)i, &r) || GELF_R_TYPE(r.r_info) != jump_slot ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		name = elf_strptr(elf, dsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		snprintf(buf, sizeof(buf), "%s@plt", symtab_clean_name(s, name));
		st->syms[k] = (struct fsym){ .addr = start + i * entry, .size = entry,
					     .bind = STB_GLOBAL, .clean = true,
					     .name = strtab_intern_text(&s->strings, buf) };
		if (st->syms[k].name)
			k++;
	}
	return k;
}

/*
 * Note where a linked file's PLT sections are (.plt, .plt.sec, .plt.got,
 * .iplt): the linker writes their stubs itself, so no compilation unit's
 * ranges hold them, and a frame there (as common as calls into a shared
 * library) need not search the units: in glibc's libc.so.6 that search,
 * which reads every unit's ranges when .debug_aranges has none for the
 * address, cost ~4 ms a run for nothing. (A relocatable file, a kernel
 * module, has section addresses of 0 and PLTs the loader makes: none.)
 */
static void plt_sections(struct dso_state *st)
{
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got", ".iplt" };
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(st->mod, &bias);
	GElf_Ehdr eh;
	GElf_Shdr sh;

	st->nr_plt = 0;
	if (!elf || !gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!section_named(elf, names[i], &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		st->plt[st->nr_plt].lo = sh.sh_addr + bias;
		st->plt[st->nr_plt++].hi = sh.sh_addr + bias + sh.sh_size;
	}
}

/* Is @addr (a module address) in one of @st's PLT sections? */
bool symtab_in_plt(const struct dso_state *st, uint64_t addr)
{
	for (size_t i = 0; i < st->nr_plt; i++)
		if (addr >= st->plt[i].lo && addr < st->plt[i].hi)
			return true;
	return false;
}

/*
 * Every function symbol of the module (symtab, else dynsym, plus
 * MiniDebugInfo, plus the PLT's entries) and the code labels no function
 * covers, sorted, one per address. libdwfl's own address lookup scans the
 * whole table each time; this is built once. Names stay where the module
 * has them until a frame is named in their function (symtab_name()):
 * demangling and interning every symbol of a C++ program cost its first
 * frame more than the naming did, and kept every name of every file a
 * long stream saw.
 */
static size_t go_abi_suffix(const char *name);

/*
 * Is @name its own clean name (symtab_clean_name() would intern it as it
 * is): no version suffix, no Go ABI suffix or mangled name to change
 * (unless raw names are asked for), no control byte?
 */
static bool clean_as_is(const struct symbolizer *s, const char *name)
{
	const char *at = strchr(name, '@');

	if (at && at != name)
		return false;
	if (!s->opts.raw_names &&
	    (go_abi_suffix(name) || (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))))
		return false;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

void sym_build_symtab(struct symbolizer *s, struct dso_state *st)
{
	int n = dwfl_module_getsymtab(st->mod);
	uint64_t covered = 0;
	size_t k = 0;

	if (n < 0)
		n = 0;
	st->syms = malloc(((size_t)n + 1) * sizeof(*st->syms));
	if (!st->syms)
		return;
	for (int i = 1; i < n; i++) {
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Sym sym;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(st->mod, i, &sym, &addr, &shndx, &elf,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		bool label;

		/* (st_value, not addr: a module whose first segment is not at 0,
		 * as perf inject's jitted-PID-N.so, has a bias that makes a
		 * function's address 0) */
		if (!name || !*name || !sym.st_value || shndx == SHN_UNDEF)
			continue;
		label = is_code_label(&sym, shndx, elf, name);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && !label)
			continue;
		st->syms[k].addr = addr;
		st->syms[k].size = label ? 0 : sym.st_size;
		st->syms[k].bind = (uint8_t)GELF_ST_BIND(sym.st_info);
		st->syms[k].label = label;
		/* made clean when a frame is named in it: most are never */
		st->syms[k].name = name;
		st->syms[k].clean = false;
		k++;
	}
	k = plt_symbols(s, st, k);
	plt_sections(st);
	fsym_sort(st->syms, k);
	/* aliases at one address are ordered by their clean names (those are
	 * the names compared since perfport's first symbol tables): they are
	 * made clean now, the few of them, and ordered again - unless each is
	 * clean as it is, when fsym_sort() ordered them by those names */
	for (size_t i = 0, j; i < k; i = j) {
		bool as_is = true;

		for (j = i + 1; j < k && st->syms[j].addr == st->syms[i].addr; j++)
			;
		if (j - i < 2)
			continue;
		for (size_t a = i; a < j && as_is; a++)
			as_is = clean_as_is(s, st->syms[a].name);
		if (as_is)
			continue;
		for (size_t a = i; a < j; a++)
			if (!symtab_name(s, &st->syms[a]))
				st->syms[a].name = "";
		qsort(st->syms + i, j - i, sizeof(*st->syms), fsym_cmp);
	}
	/* keep the best of each address, and a label only outside functions */
	st->nr_syms = 0;
	for (size_t i = 0; i < k; i++) {
		const struct fsym *f = &st->syms[i];

		if (st->nr_syms && st->syms[st->nr_syms - 1].addr == f->addr)
			continue;
		if (f->label && f->addr < covered)
			continue;
		if (f->size && f->addr + f->size > covered)
			covered = f->addr + f->size;
		st->syms[st->nr_syms++] = *f;
	}
}

/* The function containing @addr: the last at or below it, within its size. */
struct fsym *symtab_find(const struct dso_state *st, uint64_t addr)
{
	size_t lo = sym_count_at_or_below(st->syms, st->nr_syms, sizeof(*st->syms), addr);
	struct fsym *f;

	if (!lo)
		return NULL;
	f = &st->syms[lo - 1];
	if (f->size && addr - f->addr >= f->size)
		return NULL;
	return f;
}

/*
 * Drop "@GLIBC_2.2.5" / "@@..." version suffixes and demangle C++ and Rust
 * names (libiberty, without parameter lists, as perf prints them).
 */
/* Where a Go ABI suffix (".abi0", ".abiinternal") starts in @name; 0 none. */
static size_t go_abi_suffix(const char *name)
{
	static const char *const suffix[] = { ".abi0", ".abiinternal" };
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		size_t k = strlen(suffix[i]);

		if (len > k && !strcmp(name + len - k, suffix[i]))
			return len - k;
	}
	return 0;
}

const char *symtab_clean_name(struct symbolizer *s, const char *name)
{
	const char *at = strchr(name, '@');
	const char *res;
	char buf[1024];
	char *dm;

	if (at && at != name) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(at - name), name);
		name = buf;
	}
	if (s->opts.raw_names)
		return strtab_intern_text(&s->strings, name);
	/* Go's assembly functions (and ABI wrappers) carry their ABI in the
	 * ELF name, "runtime.goexit.abi0": Go's own tools show it without */
	if (go_abi_suffix(name)) {
		if (name != buf)
			snprintf(buf, sizeof(buf), "%s", name);
		buf[go_abi_suffix(buf)] = 0;
		name = buf;
	}
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return strtab_intern_text(&s->strings, name);
	dm = cplus_demangle(name, DMGL_AUTO | DMGL_ANSI);
	res = strtab_intern_text(&s->strings, dm ? dm : name);
	free(dm);
	return res;
}

/* @f's name made clean (once): NULL out of memory. */
const char *symtab_name(struct symbolizer *s, struct fsym *f)
{
	const char *name;

	if (f->clean)
		return f->name;
	name = symtab_clean_name(s, f->name);
	if (name) {
		f->name = name;
		f->clean = true;
	}
	return name;
}

/*
 * Copy the names of @st's symbol table not yet made clean out of its
 * module, into one block of its own, before the Dwfl that holds them
 * ends. Return: 0, or PP_ENOMEM (the table is then let go: built again
 * when the file is opened again).
 */
int symtab_detach(struct dso_state *st)
{
	size_t len = 0;
	char *p;

	if (st->sym_names)
		return 0;
	for (size_t i = 0; i < st->nr_syms; i++)
		if (!st->syms[i].clean)
			len += strlen(st->syms[i].name) + 1;
	if (!len)
		return 0;
	if (!(p = malloc(len))) {
		free(st->syms);
		st->syms = NULL;
		st->nr_syms = 0;
		st->syms_built = false;
		return PP_ENOMEM;
	}
	st->sym_names = p;
	for (size_t i = 0; i < st->nr_syms; i++) {
		size_t n;

		if (st->syms[i].clean)
			continue;
		n = strlen(st->syms[i].name) + 1;
		memcpy(p, st->syms[i].name, n);
		st->syms[i].name = p;
		p += n;
	}
	return 0;
}

