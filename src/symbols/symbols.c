/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - naming frames.
 *
 * User code: each dso's file is found once (by build id where the recording
 * gives one: --symfs, perf's build-id cache, the recorded path) and reported
 * to its own Dwfl at bias 0; a frame's file offset is turned into a virtual
 * address through the file's PT_LOAD headers (so map base = start - pgoff
 * holds for PIE, shared objects and fixed-address executables alike) and
 * looked up with dwfl_module_addrinfo / dwfl_module_getsrc. libdwfl's
 * standard debuginfo search adds .gnu_debuglink, /usr/lib/debug/.build-id
 * and debuginfod (when DEBUGINFOD_URLS is set; when it is not, the search
 * runs only if a file it could find exists). Return addresses are looked
 * up at pc - 1. Results are cached per (dso, offset).
 *
 * Finding and loading the files is files.c's, their symbol tables
 * symtab.c's, and what naming holds and sym_trim() lets go of trim.c's;
 * here are the DWARF names (inlined calls, source lines), the lookup, the
 * per-dso states and the symbolizer itself.
 */
#include "symbols.h"

#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/error.h"
#include "../util/hash.h"
#include "../util/log.h"
#include "filebus.h"
#include "priv.h"
#include "roots.h"

static const char *const cause_names[SYM_CAUSE_COUNT] = {
	[SYM_NAMED] = "named",
	[SYM_NO_MAP] = "no map",
	[SYM_NO_FILE] = "file not found",
	[SYM_BUILD_ID] = "build-id mismatch",
	[SYM_NO_SYMBOL] = "no symbol",
	[SYM_NO_KALLSYMS] = "no matching kallsyms",
	[SYM_NOT_NAMEABLE] = "guest/hypervisor/special",
	[SYM_JIT_NO_MAP] = "JIT code without a perf map",
	[SYM_NOT_SAME] = "not the recorded file",
};

const char *sym_cause_name(enum sym_cause cause)
{
	return cause < SYM_CAUSE_COUNT ? cause_names[cause] : "?";
}

static struct cached *cache_slot(struct dso_state *st, uint64_t key, bool *found)
{
	size_t i;

	if ((st->cache_nr + 1) * 2 > st->cache_cap) {
		size_t cap = st->cache_cap ? st->cache_cap * 2 : 256;
		struct cached *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < st->cache_cap; j++) {
			if (!st->cache[j].key)
				continue;
			for (i = (st->cache[j].key * 0x9e3779b97f4a7c15ULL) >> 40 & (cap - 1); n[i].key;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = st->cache[j];
		}
		free(st->cache);
		st->cache = n;
		st->cache_cap = cap;
	}
	for (i = (key * 0x9e3779b97f4a7c15ULL) >> 40 & (st->cache_cap - 1); st->cache[i].key;
	     i = (i + 1) & (st->cache_cap - 1)) {
		if (st->cache[i].key == key) {
			*found = true;
			return &st->cache[i];
		}
	}
	*found = false;
	st->cache[i].key = key;
	st->cache_nr++;
	return &st->cache[i];
}

/*
 * The slot of @die's function among @st's names made from DWARF: by the
 * DIE it is an instance of (its abstract origin), so the calls of one
 * function inlined in many places share it. NULL out of memory.
 */
static struct dwname_slot *dwn_slot(struct dso_state *st, Dwarf_Die *die, Dwarf_Die *origin)
{
	Dwarf_Attribute attr;
	uint64_t key;
	size_t i;

	if (!dwarf_attr(die, DW_AT_abstract_origin, &attr) || !dwarf_formref_die(&attr, origin))
		*origin = *die;
	key = dwarf_dieoffset(origin) + 1;
	if ((st->dwn_nr + 1) * 2 > st->dwn_cap) {
		size_t cap = st->dwn_cap ? st->dwn_cap * 2 : 64;
		struct dwname_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < st->dwn_cap; j++) {
			if (!st->dwn[j].key)
				continue;
			for (i = (st->dwn[j].key * 0x9e3779b97f4a7c15ULL) >> 40 & (cap - 1); n[i].key;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = st->dwn[j];
		}
		free(st->dwn);
		st->dwn = n;
		st->dwn_cap = cap;
	}
	for (i = (key * 0x9e3779b97f4a7c15ULL) >> 40 & (st->dwn_cap - 1); st->dwn[i].key;
	     i = (i + 1) & (st->dwn_cap - 1))
		if (st->dwn[i].key == key && st->dwn[i].dwarf == origin->cu)
			return &st->dwn[i];
	st->dwn[i] = (struct dwname_slot){ .key = key, .dwarf = origin->cu };
	st->dwn_nr++;
	return &st->dwn[i];
}

/*
 * The name of the function @die is a call of: its linkage name made clean
 * (demangled), else qualified from its DWARF scopes where its language has
 * them (dwname.c; a lambda's operator(), a C function), else its own name.
 * Made once per function (dwn_slot()): the demangling was a quarter of
 * what naming new addresses cost on C++ with much inlining.
 */
static const char *die_name(struct symbolizer *s, struct dso_state *st, Dwarf_Die *die)
{
	struct dwname_slot *slot;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	const char *name = NULL, *raw;

	slot = dwn_slot(st, die, &origin);
	if (slot && slot->made)
		return slot->name;
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) &&
	    (raw = dwarf_formstring(&attr)))
		name = symtab_clean_name(s, raw);
	else if (!(name = dwname_qualified(s, st->inlidx, &origin)) &&
		 dwarf_attr_integrate(die, DW_AT_name, &attr) && (raw = dwarf_formstring(&attr)))
		name = symtab_clean_name(s, raw);
	if (slot && name) {
		slot->name = name;
		slot->made = true;
	}
	return name;
}

/*
 * The key of @st's file in @s's table shared with its siblings (0: none):
 * its build id and the path of its DWARF (the same build id found as
 * another debug file would number its DIEs otherwise), hashed; 0 without a
 * build id, whose units are then indexed by each symbolizer on its own.
 */
static uint64_t unit_file(const struct symbolizer *s, struct dso_state *st)
{
	const unsigned char *id;
	const char *main_file = NULL, *debug_file = NULL, *p;
	GElf_Addr vaddr;
	uint64_t h = 0x6a09e667f3bcc909ULL;
	int n;

	if (!s->shared)
		return 0;
	if (st->unit_file_made)
		return st->unit_file;
	st->unit_file_made = true;
	n = st->mod ? dwfl_module_build_id(st->mod, &id, &vaddr) : 0;
	if (n <= 0)
		return st->unit_file = 0;
	dwfl_module_info(st->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug_file);
	for (int i = 0; i < n; i++)
		h = mix64(h ^ id[i]);
	for (p = debug_file ? debug_file : main_file ? main_file : ""; *p; p++)
		h = mix64(h ^ (unsigned char)*p);
	return st->unit_file = h ? h : 1;
}

/* The call site of the inlined call @scope in unit @cu: its file from the
 * unit's table as lineidx copied it (libdw's may be gone). */
static void call_site(struct symbolizer *s, struct dso_state *st, Dwarf_Die *cu, Dwarf_Die *scope,
		      const char **file, unsigned *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	*file = NULL;
	*line = 0;
	if (dwarf_attr(scope, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &v) == 0)
		*line = (unsigned)v;
	if (dwarf_attr(scope, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &v) == 0)
		*file = lineidx_file(&st->lineidx, s->shared, unit_file(s, st),
				     &s->strings, cu, v);
}

/*
 * The calls inlined at @addr (an address of its unit @cu's), innermost
 * first: each gets the function inlined and the position inside it; the
 * containing function gets the outermost call site. Return: how many were
 * added to st->inl.
 *
 * The chain is the concrete nesting of the code at @addr - the inlined
 * calls it is in, inside out, then the function - from the index of its
 * unit (inlidx.c), built once per unit where dwarf_getscopes() walked the
 * unit's DIEs again for every address.
 */
static uint32_t inline_chain(struct symbolizer *s, struct dso_state *st, Dwarf_Die *cu,
			     uint64_t addr, struct cached *c)
{
	Dwarf_Die chain[64], cudie, split;
	const char *file = c->file;
	unsigned line = c->line;
	uint32_t count = 0;
	uint8_t unit_type;
	size_t n;

	/* split DWARF (-gsplit-dwarf): the skeleton unit has no children; its
	 * functions and inlined calls are in the split unit (a .dwo file, or a
	 * .dwp), which libdw finds and links to it */
	if (dwarf_cu_info(cu->cu, NULL, &unit_type, NULL, &split, NULL, NULL, NULL) == 0 &&
	    unit_type == DW_UT_skeleton && split.addr && /* zeroed: not found */
	    dwarf_tag(&split) == DW_TAG_compile_unit)
		cu = &split;
	n = inlidx_chain(&st->inlidx, s->shared, unit_file(s, st), cu, addr, chain,
			 sizeof(chain) / sizeof(chain[0]), &cudie);
	for (size_t i = 0; i < n; i++) {
		struct inl *in;

		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine)
			break;          /* the containing function: no call site */
		if (st->nr_inl == st->cap_inl) {
			size_t cap = st->cap_inl ? st->cap_inl * 2 : 256;
			struct inl *m = realloc(st->inl, cap * sizeof(*m));

			if (!m)
				break;
			st->inl = m;
			st->cap_inl = cap;
		}
		in = &st->inl[st->nr_inl++];
		in->function = die_name(s, st, &chain[i]);
		in->file = file;
		in->line = line;
		count++;
		/* the next frame out is at this call's site (unless no
		 * format shows it: its file is read from the line table) */
		if (!s->opts.no_lines)
			call_site(s, st, &cudie, &chain[i], &file, &line);
	}
	if (count) {
		c->file = file;
		c->line = line;
	}
	return count;
}

/*
 * The start addresses of @st's functions from its .eh_frame_hdr (found by
 * its PT_GNU_EH_FRAME segment, so a file without section headers has it
 * too): the sorted table the unwinders search, as GNU ld writes it
 * (datarel, sdata4 entries). Nothing when it is another form.
 */
static void fde_starts_build(struct dso_state *st)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(st->mod, &bias);
	size_t nph = 0;

	st->fde_built = true;
	if (!elf || elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const uint8_t *p;
		uint32_t count;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || d->d_size < 12)
			return;
		p = d->d_buf;
		/* version 1; eh_frame_ptr as 4 bytes; the count as udata4; the
		 * table as datarel sdata4 pairs (start, FDE) */
		if (p[0] != 1 || (p[1] & 0x0f) != 0x0b || p[2] != 0x03 || p[3] != 0x3b)
			return;
		memcpy(&count, p + 8, 4);
		if (count > (d->d_size - 12) / 8)
			count = (uint32_t)((d->d_size - 12) / 8);
		st->fde_starts = malloc((count ? count : 1) * sizeof(*st->fde_starts));
		if (!st->fde_starts)
			return;
		for (uint32_t k = 0; k < count; k++) {
			int32_t rel;

			memcpy(&rel, p + 12 + 8 * (size_t)k, 4);
			st->fde_starts[k] = ph.p_vaddr + (uint64_t)(int64_t)rel;
		}
		st->nr_fde_starts = count;
		return;
	}
}

/*
 * A name for code of @st at @vaddr that no symbol covers: the module's
 * file name (@module's) and the address (as nm, objdump and addr2line give
 * it) of the function around it - the start of the call frame information
 * entry that covers it, one per function - else of the address itself.
 * Distinct functions keep distinct names, and every address of one
 * function the same.
 */
static const char *address_name(struct symbolizer *s, struct dso_state *st, const char *module,
				uint64_t vaddr, uint64_t *startp)
{
	const char *base = module ? strrchr(module, '/') : NULL;
	uint64_t start = vaddr;
	Dwarf_Addr cbias = 0;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(st->mod, &cbias);
	Dwarf_Frame *fr = NULL;
	char buf[512];
	bool found = false;

	if (!st->fde_built)
		fde_starts_build(st);
	/* an FDE covers it: the last start at or below it is its function's */
	if (cfi && st->nr_fde_starts)
		found = dwarf_cfi_addrframe(cfi, vaddr + st->bias - cbias, &fr) == 0;
	if (found) {
		size_t lo = fde_start_at(st, vaddr);

		if (st->fde_starts[lo] <= vaddr)
			start = st->fde_starts[lo];
	}
	free(fr);
	if (cfi && st->nr_fde_starts && s->opts.dwarf_max)
		dw_account_cfi(st, vaddr, found);
	*startp = start;
	base = base ? base + 1 : module ? module : "[unknown]";
	snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, base, start);
	return strtab_intern_text(&s->strings, buf);
}

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Read @dw's units' address ranges into @st's table, sorted by address. */
static void cu_ranges_build(struct dso_state *st, Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	size_t cap = 0;

	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		/* (a skeleton's split unit is found from it: inline_chain()) */
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			/* 0: a function the linker dropped (its tombstone) */
			if (!lo || hi <= lo)
				continue;
			if (st->nr_cu_ranges == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct cu_range *v = realloc(st->cu_ranges, ncap * sizeof(*v));

				if (!v)
					return; /* what was read is used */
				st->cu_ranges = v;
				cap = ncap;
			}
			st->cu_ranges[st->nr_cu_ranges++] = (struct cu_range){ lo, hi, cudie };
		}
	}
	if (st->nr_cu_ranges)
		qsort(st->cu_ranges, st->nr_cu_ranges, sizeof(*st->cu_ranges), cmp_cu_range);
	st->dw_bytes += cap * sizeof(*st->cu_ranges);
}

/*
 * The unit around @addr (the module's address), where libdwfl found none:
 * it looks units up in .debug_aranges only (elfutils 0.188), which clang
 * does not write unless asked (-gdwarf-aranges), so a clang-built program
 * had no lines and no inlined calls. Its units' own ranges, read once.
 * Return: the unit's DIE (valid while the Dwfl lives), *@dbias set; NULL.
 */
static Dwarf_Die *unit_by_ranges(struct dso_state *st, Dwarf_Addr addr, Dwarf_Addr *dbias)
{
	Dwarf *dw = dwfl_module_getdwarf(st->mod, dbias);
	size_t lo = 0, hi;

	if (!dw)
		return NULL;
	if (!st->cu_ranges_built) {
		st->cu_ranges_built = true;
		cu_ranges_build(st, dw);
	}
	addr -= *dbias;
	/* the last range starting at or below @addr */
	hi = st->nr_cu_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->cu_ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= st->cu_ranges[lo - 1].hi)
		return NULL;
	return &st->cu_ranges[lo - 1].die;
}

/* The unit at @addr (a module address) as dwfl_module_addrdie() finds it:
 * from @st's own table of .debug_aranges where it has one, else libdwfl's. */
static Dwarf_Die *unit_at(struct dso_state *st, uint64_t addr, Dwarf_Addr *dbias)
{
	Dwarf *dw = dwfl_module_getdwarf(st->mod, dbias);
	Dwarf_Die *die;

	if (dw && aranges_find(aranges_of(st, dw), dw, addr - *dbias, &die) == 0)
		return die;
	return dwfl_module_addrdie(st->mod, addr, dbias);
}

static void lookup_user(struct symbolizer *s, struct dso_state *st, const char *module,
			uint64_t off, bool ret, struct cached *c)
{
	uint64_t vaddr = 0, addr;
	struct fsym *fs;
	Dwarf_Die *cu = NULL;
	size_t rows = 0;
	Dwarf_Addr dbias = 0;
	bool in_seg = false, inlined;

	for (size_t i = 0; i < st->nr_segs; i++) {
		const struct load_seg *g = &st->segs[i];

		if (off >= g->offset && off < g->offset + g->filesz) {
			vaddr = off - g->offset + g->vaddr;
			in_seg = true;
			break;
		}
	}
	if (!in_seg)
		return;
	addr = vaddr + st->bias;
	/* released by sym_trim(): opened again; if it cannot be, the symbol
	 * table kept still names functions (without lines) */
	if (st->dw_released)
		dso_reopen(st, module);
	if (!st->syms_built) {
		st->syms_built = true; /* on first naming: the unwinder needs none */
		sym_build_symtab(s, st);
	}
	fs = symtab_find(st, addr);
	/* a "return address" whose byte before no symbol covers, at a
	 * function's first byte, was not pushed by a call: a signal frame's
	 * resume address (__restore_rt, Go's runtime.sigreturn__sigaction),
	 * where the kernel returns to. It is that function's, as perf names
	 * it. (A call that does not return, at a function's end, leaves its
	 * return address at the next function's first byte too, but the byte
	 * before is the call's, inside its function.) */
	if (!fs && ret) {
		struct fsym *next = symtab_find(st, addr + 1);

		if (next && next->addr == addr + 1) {
			fs = next;
			addr++;
			vaddr++;
			c->at_own = true;
		}
	}
	if (fs) {
		c->function = symtab_name(s, fs);
		c->sym_offset = addr - fs->addr;
	} else if (st->mod) {
		uint64_t start = vaddr;

		c->function = address_name(s, st, module, vaddr, &start);
		c->addr_name = c->function != NULL;
		c->sym_offset = vaddr - start;
	}
	/* the unit around it, found once: its line, the inlined calls, and
	 * what sym_trim() counts */
	if (st->mod && !symtab_in_plt(st, addr) && !(cu = unit_at(st, addr, &dbias)))
		cu = unit_by_ranges(st, addr, &dbias);
	if (cu && !s->opts.no_lines) {
		const char *file = NULL;
		unsigned lineno = 0;

		if (lineidx_find(&st->lineidx, s->shared, unit_file(s, st), &s->strings,
				 cu, addr - dbias, &file, &lineno,
				 &rows) && file) {
			c->file = file;
			c->line = lineno;
		}
	}
	if (st->mod && s->opts.dwarf_max)
		dw_account(st, cu, rows);
	inlined = !s->opts.no_inline && c->function && !c->addr_name;
	if (inlined && cu) {
		c->inl_first = (uint32_t)st->nr_inl;
		c->inl_count = inline_chain(s, st, cu, addr - dbias, c);
	}
}

/* Room for @need elements of @size in *@v (capacity *@cap, doubled), the
 * new ones zeroed. Return: 0, or -1 out of memory (*@v unchanged). */
static int grow_zeroed(void **v, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*v, ncap * size);
	if (!n)
		return -1;
	memset((char *)n + *cap * size, 0, (ncap - *cap) * size);
	*v = n;
	*cap = ncap;
	return 0;
}

/* A state not in use: one let go by sym_rebind(), or a new one. */
static uint32_t state_new(struct symbolizer *s)
{
	if (s->nr_free_states)
		return s->free_states[--s->nr_free_states];
	if (grow_zeroed((void **)&s->states, &s->nr_states, s->states_used + 1, sizeof(*s->states)))
		return UINT32_MAX;
	return (uint32_t)s->states_used++;
}

/*
 * The id of @d's file among those kept across recordings: its build id,
 * else the device and inode its mapping gave (perf writes no build ids
 * into --switch-output's files), and its path (a file the recording names
 * by two paths keeps two states, as it has two dsos); 0 with neither, or
 * out of memory.
 */
static uint32_t kept_id(struct symbolizer *s, const struct dso *d)
{
	enum { HEAD = 1 + 4 + 3 };
	size_t plen = d->path ? strlen(d->path) : 0, n = HEAD + (plen + 7) / 8;
	uint64_t stack_key[64], *key;
	uint32_t id;
	bool fresh;

	if (!d->build_id_size && !d->ino)
		return 0;
	key = n <= 64 ? stack_key : calloc(n, sizeof(*key));
	if (!key)
		return 0;
	memset(key, 0, n * sizeof(*key));
	key[0] = (uint64_t)d->build_id_size | (uint64_t)d->kind << 8 | (uint64_t)plen << 16;
	memcpy(key + 1, d->build_id, d->build_id_size < 32 ? d->build_id_size : 32);
	if (!d->build_id_size) {
		key[5] = (uint64_t)d->maj << 32 | d->min;
		key[6] = d->ino;
		key[7] = d->ino_generation;
	}
	memcpy(key + HEAD, d->path, plen);
	if (!s->kept_next)
		s->kept_next = 1;
	id = wordmap_get(&s->kept, key, n, &s->kept_next, &fresh);
	if (key != stack_key)
		free(key);
	return id;
}

bool sym_kept_ready(struct symbolizer *s, const struct dso *d)
{
	uint32_t kid = s->states_used ? kept_id(s, d) : 0;

	return kid && kid < s->state_of_kept_cap && s->state_of_kept[kid] &&
	       s->states[s->state_of_kept[kid] - 1].status == 1;
}

/* @d's state: found by the recording's dso id, else by its file (kept
 * across recordings), else a new one. */
static struct dso_state *dso_state(struct symbolizer *s, const struct dso *d)
{
	uint32_t kid, idx = UINT32_MAX;

	if (d->id < s->slot_cap && s->slot_of[d->id])
		return &s->states[s->slot_of[d->id] - 1];
	if (grow_zeroed((void **)&s->slot_of, &s->slot_cap, (size_t)d->id + 1, sizeof(*s->slot_of)))
		return NULL;
	kid = kept_id(s, d);
	if (kid) {
		if (grow_zeroed((void **)&s->state_of_kept, &s->state_of_kept_cap, (size_t)kid + 1,
				sizeof(*s->state_of_kept)))
			return NULL;
		if (s->state_of_kept[kid])
			idx = s->state_of_kept[kid] - 1;
	}
	if (idx == UINT32_MAX) {
		idx = state_new(s);
		if (idx == UINT32_MAX)
			return NULL;
		if (kid) {
			s->state_of_kept[kid] = idx + 1;
			s->states[idx].kept = kid;
		}
	}
	s->slot_of[d->id] = idx + 1;
	return &s->states[idx];
}

const struct dso_state *sym_dso_loaded(struct symbolizer *s, const struct dso *d)
{
	struct dso_state *st = dso_state(s, d);

	if (!st)
		return NULL;
	if (!st->status) {
		st->status = sym_load_dso(s, st, d);
		/*
		 * Unwinding reads the file's path and load segments, no more:
		 * libdw's mapping of it goes now (should this symbolizer name a
		 * frame in it, it is opened again, as after sym_trim()). Each
		 * unwinding worker loads every file it meets; the kernel maps a
		 * file's pages in large folios, so each mapping of a big library
		 * held megabytes (libpython 3.4 MB), once per worker.
		 */
		if (st->status == 1 && st->dwfl) {
			dso_dwarf_release(st);
			st->dw_released = true;
		}
	}
	return st->status == 1 ? st : NULL;
}

const char *sym_dso_path(const struct dso_state *st)
{
	return st->path;
}

bool sym_dso_bias(const struct dso_state *st, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	for (size_t i = 0; i < st->nr_segs; i++) {
		const struct load_seg *g = &st->segs[i];

		if (pgoff >= g->offset && pgoff < g->offset + g->filesz) {
			*bias = start - (pgoff - g->offset + g->vaddr);
			return true;
		}
	}
	return false;
}

static size_t resolve_user(struct symbolizer *s, const struct raw_frame *f, struct sym_frame *out,
			   size_t max)
{
	const struct dso *d = f->dso;
	struct dso_state *st;
	struct cached *c;
	uint64_t off;
	size_t n = 0;
	bool found;

	out->flags = FRAME_F_USER;
	/* a process that wrote a jitdump: its records name what they cover
	 * first, inside a file too (V8 describes its builtins, which live in
	 * the node binary, as perf inject --jit then names them) */
	if (f->jitdump && jit_lookup(s, f, out)) {
		out->module = d ? d->path : out->module;
		return 1;
	}
	if (!d) {
		if (jit_lookup(s, f, out))
			return 1;
		out->cause = SYM_NO_MAP;
		/* a return address of a process whose maps are known that
		 * none covers: the chain left the stack (a frame pointer past
		 * its root, into what is not one) */
		if (f->ret && f->proc)
			out->flags |= FRAME_F_OUTSIDE;
		return 1;
	}
	out->module = d->path;
	if (d->kind == DSO_ANON) {
		if (!jit_lookup(s, f, out))
			out->cause = SYM_JIT_NO_MAP;
		return 1;
	}
	if (d->kind == DSO_SPECIAL) {
		out->cause = SYM_NOT_NAMEABLE;
		return 1;
	}
	st = dso_state(s, d);
	if (!st) {
		out->cause = SYM_NO_FILE;
		return 1;
	}
	if (!st->status && !prefetch_take(s, d, st))
		st->status = sym_load_dso(s, st, d);
	if (st->status != 1) {
		out->cause = (uint8_t)st->status;
		return 1;
	}
	off = f->ret && f->offset ? f->offset - 1 : f->offset;
	/* (a return address's own slot: it may be looked up at itself) */
	c = cache_slot(st, (off + 1) | (uint64_t)(f->ret && f->offset) << 63, &found);
	if (!c) {
		out->cause = SYM_NO_SYMBOL;
		return 1;
	}
	/* a file in use is the last to be trimmed: a name found in its cache
	 * counts as much as one libdw gave (each window names its stacks
	 * again: a file named from every window is used in every window) */
	if (s->opts.dwarf_max)
		st->dw_used = ++s->dw_clock;
	if (!found)
		lookup_user(s, st, d->path, off, f->ret && f->offset, c);
	/* inlined calls first, innermost first; the containing function last */
	/* (a function inlined into itself, a recursion unrolled, is a frame
	 * of its own at each level, as addr2line -i shows it) */
	for (uint32_t i = 0; i < c->inl_count && n + 1 < max; i++) {
		const struct inl *in = &st->inl[c->inl_first + i];

		out[n] = *out;
		out[n].function = in->function;
		out[n].file = in->file;
		out[n].line = in->line;
		out[n].sym_offset = 0;
		out[n].flags |= FRAME_F_INLINED;
		out[n].cause = in->function ? SYM_NAMED : SYM_NO_SYMBOL;
		n++;
	}
	out[n] = out[0];
	out[n].flags &= ~(unsigned)FRAME_F_INLINED;
	out[n].function = c->function;
	out[n].file = c->file;
	out[n].line = c->line;
	out[n].sym_offset = c->sym_offset + (f->ret && !c->at_own ? 1 : 0);
	out[n].cause = c->function && !c->addr_name ? SYM_NAMED : SYM_NO_SYMBOL;
	/* a runtime's stack root ends the stack (roots.c) */
	for (size_t i = 0; i <= n; i++) {
		const struct roots_entry *r = out[i].cause == SYM_NAMED ?
						      sym_root_of(out[i].function) : NULL;

		if (r) {
			out[i].flags |= r->switches ? FRAME_F_SWITCH : FRAME_F_ROOT;
			st->runtime = r->runtime;
		}
	}
	st->frames++;
	st->unnamed += out[n].cause != SYM_NAMED;
	return n + 1;
}

/*
 * The name of a frame nothing named: its module's file name and its offset
 * there (the file offset of a user frame, a kernel frame's address), as
 * perf report and pprof show an address they cannot name - "libc.so.6+0x2a1b0",
 * "[kernel.kallsyms]+0xffffffff81234567". One name per address, so
 * unnamed frames stay apart, and what names them later (pprof with the
 * binaries, a backend's symbolizer) finds them from the same two values.
 * Return: the interned name, or NULL out of memory (the frame stays unnamed).
 */
static const char *offset_name(struct symbolizer *s, const char *module, uint64_t offset)
{
	const char *base = module[0] == '[' ? NULL : strrchr(module, '/');
	char buf[512];

	snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, base && base[1] ? base + 1 : module, offset);
	return strtab_intern_text(&s->strings, buf);
}

size_t sym_resolve(struct symbolizer *s, const struct raw_frame *f, uint64_t kernel_text,
		   struct sym_frame *out, size_t max)
{
	size_t n = 1;

	memset(out, 0, sizeof(*out));
	out->offset = f->offset;
	switch (f->kind) {
	case FRAME_USER:
		n = resolve_user(s, f, out, max);
		break;
	case FRAME_KERNEL:
		kernel_resolve(s, f, kernel_text, out);
		break;
	default:
		out->cause = SYM_NOT_NAMEABLE;
		break;
	}
	for (size_t i = 0; i < n; i++)
		if (out[i].cause != SYM_NAMED)
			out[i].flags |= FRAME_F_UNKNOWN;
	/* a frame nothing named keeps its identity: its module and offset
	 * (anonymous memory, JIT code: its address, as perf shows it - an
	 * offset in it says nothing, and its maps come and go) */
	if (!out[n - 1].function && out[n - 1].module)
		out[n - 1].function = offset_name(s, out[n - 1].module,
						  f->dso && f->dso->kind == DSO_ANON ? f->addr
										     : out[n - 1].offset);
	/* statistics count addresses: the containing function decides (an
	 * address outside every mapping that ends a chain is no frame) */
	if (out[0].flags & FRAME_F_OUTSIDE)
		return n;
	s->stats.frames++;
	s->stats.by_cause[out[n - 1].cause]++;
	return n;
}

/* Whether @hdr says the recording was made on a host other than this one. */
static bool recorded_elsewhere(const struct perf_header_info *hdr)
{
	char here[256];

	if (!hdr || !hdr->hostname || !*hdr->hostname || gethostname(here, sizeof(here)))
		return false;
	here[sizeof(here) - 1] = '\0';
	return strcmp(here, hdr->hostname) != 0;
}

struct symbolizer *sym_new(const struct sym_opts *opts, const struct perf_header_info *hdr)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	const char *home = getenv("HOME");

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	sym_bus_guard(); /* a file cut short while mapped: zeros, not SIGBUS */
	s->opts = *opts;
	s->hdr = hdr;
	s->other_host = recorded_elsewhere(hdr);
	if (opts->buildid_dir) {
		snprintf(s->buildid_dir, sizeof(s->buildid_dir), "%s", opts->buildid_dir);
	} else {
		snprintf(s->buildid_dir, sizeof(s->buildid_dir), "%s/.debug", home ? home : "/root");
	}
	return s;
}

struct symbolizer *sym_new_sibling(struct symbolizer *s)
{
	struct symbolizer *sib;

	if (!s->shared && !(s->shared = shared_new()))
		return NULL;
	sib = sym_new(&s->opts, s->hdr);
	if (sib)
		sib->shared = shared_ref(s->shared);
	return sib;
}

void sym_dso_release(struct dso_state *st)
{
	dso_dwarf_release(st);
	dso_index_release(st);
	free(st->segs);
	free(st->syms);
	free(st->sym_names);
	free(st->inl);
	free(st->cache);
	free(st->fde_starts);
}

void sym_rebind(struct symbolizer *s, const struct perf_header_info *hdr)
{
	size_t kept = 0, let_go = 0;

	prefetch_free(s);
	s->hdr = hdr;
	s->other_host = recorded_elsewhere(hdr);
	/* the new recording numbers its dsos anew */
	if (s->slot_of)
		memset(s->slot_of, 0, s->slot_cap * sizeof(*s->slot_of));
	for (size_t i = 0; i < s->states_used; i++) {
		struct dso_state *st = &s->states[i];

		if (!st->status && !st->kept)
			continue; /* unused, or let go already */
		if (st->kept && st->status == 1) {
			/* the same file (build id, or device and inode, and
			 * path): what naming made of it stays; the counts are
			 * the new recording's */
			st->frames = st->unnamed = 0;
			kept++;
			continue;
		}
		/* known by neither build id nor inode, or not found: looked
		 * for again as the new recording names it */
		if (st->kept)
			s->state_of_kept[st->kept] = 0;
		sym_dso_release(st);
		memset(st, 0, sizeof(*st));
		if (grow_zeroed((void **)&s->free_states, &s->cap_free_states,
				s->nr_free_states + 1, sizeof(*s->free_states)) == 0)
			s->free_states[s->nr_free_states++] = (uint32_t)i;
		let_go++;
	}
	/* the kernel's symbols stay if this recording's kernel is the same
	 * (checked at its first kernel frame); what is the recording's own
	 * goes: its processes' JIT maps (they grow), its mount namespaces,
	 * its counts */
	s->kernel_recheck = s->kernel_tried;
	jit_free(s);
	unwind_free(s);
	memset(&s->ns, 0, sizeof(s->ns));
	memset(&s->stats, 0, sizeof(s->stats));
	pp_debug("symbols of %zu files kept for the next recording (%zu let go)", kept, let_go);
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	sym_bus_report();
	prefetch_free(s);
	for (size_t i = 0; i < s->nr_states; i++)
		sym_dso_release(&s->states[i]);
	free(s->states);
	free(s->slot_of);
	free(s->state_of_kept);
	free(s->free_states);
	wordmap_free(&s->kept);
	kernel_free(s);
	jit_free(s);
	unwind_free(s);
	shared_unref(s->shared); /* after the states that read it */
	strtab_free(&s->strings);
	free(s);
}

const char *sym_from_name(enum sym_from f)
{
	static const char *const names[] = {
		[SYM_FROM_SYMFS] = "--symfs", [SYM_FROM_ARCHIVE] = "perf archive",
		[SYM_FROM_CACHE] = "build-id cache", [SYM_FROM_PATH] = "recorded path",
		[SYM_FROM_NSROOT] = "container root",
	};

	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

void sym_dso_where(struct symbolizer *s, const struct dso *d, struct sym_where *w)
{
	struct dso_state *st = d->id < s->slot_cap && s->slot_of[d->id] ?
				       &s->states[s->slot_of[d->id] - 1] : NULL;
	const char *main_file = NULL, *debug = NULL;

	memset(w, 0, sizeof(*w));
	if (!st || !st->status)
		return;
	w->tried = true;
	w->frames = st->frames;
	w->unnamed = st->unnamed;
	w->found = st->status == 1;
	w->cause = w->found ? SYM_NAMED : (uint8_t)st->status;
	if (!w->found)
		return;
	w->from = (enum sym_from)st->from;
	w->file = st->path;
	w->runtime = st->runtime;
	if (!d->build_id_size)
		w->same = w->from == SYM_FROM_SYMFS ? "no build id recorded: --symfs gave it" :
			  s->opts.trust_paths ? "no build id recorded: --trust-paths" :
			  d->ino ? "no build id recorded: the recorded device and inode" :
				   "no build id recorded: the file at its path here (the recording "
				   "names no other host)";
	/* the debug file libdwfl found for it (looked for now if naming did
	 * not need it; cached, so not fetched twice) */
	if (st->mod) {
		Dwarf_Addr bias;
		const char *cache = getenv("DEBUGINFOD_CACHE_PATH");

		w->dwarf = dwfl_module_getdwarf(st->mod, &bias) != NULL;
		if (dwfl_module_info(st->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug) &&
		    debug && (!main_file || strcmp(main_file, debug))) {
			w->debug = strtab_intern_text(&s->strings, debug);
			w->debuginfod = strstr(debug, "/debuginfod_client/") ||
					(cache && *cache && !strncmp(debug, cache, strlen(cache)));
		}
		/* libdwfl does not name a file debuginfod gave it: its cache does */
		if (!w->debug && d->build_id_size) {
			const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
			char idhex[2 * PERF_MAX_BUILD_ID + 1], path[4096 + 128];
			struct stat sb;

			sym_hex(d->build_id, d->build_id_size, idhex);
			if (cache && *cache)
				snprintf(path, sizeof(path), "%s/%s/debuginfo", cache, idhex);
			else if (xdg && *xdg)
				snprintf(path, sizeof(path), "%s/debuginfod_client/%s/debuginfo", xdg, idhex);
			else
				snprintf(path, sizeof(path), "%s/.cache/debuginfod_client/%s/debuginfo",
					 home ? home : "/root", idhex);
			if (getenv("DEBUGINFOD_URLS") && !stat(path, &sb) && S_ISREG(sb.st_mode) && sb.st_size) {
				w->debug = strtab_intern_text(&s->strings, path);
				w->debuginfod = true;
			}
		}
	}
}

const struct sym_stats *sym_stats(const struct symbolizer *s)
{
	return &s->stats;
}
