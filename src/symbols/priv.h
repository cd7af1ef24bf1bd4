/* SPDX-License-Identifier: MIT */
/*
 * priv.h - what the symbolizer's files share; not for other stages.
 */
#ifndef SYMBOLS_PRIV_H
#define SYMBOLS_PRIV_H

#include <elfutils/libdwfl.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/strtab.h"
#include "../util/wordmap.h"
#include "symbols.h"

/* A kernel symbol: 16 bytes, the layout of perfport's kallsyms cache. */
struct ksym {
	uint64_t addr;       /* as the kallsyms or vmlinux has it (ksym_delta aside) */
	uint32_t name;       /* offset into ksym_names */
	uint8_t bind;        /* STB_GLOBAL, STB_WEAK or STB_LOCAL */
	uint8_t pad[3];
};

struct jit_sym {
	uint64_t start, end;
	const char *name;    /* interned */
};

struct jit_map {
	uint32_t pid;
	bool dump_read;      /* its jitdump was read (or there was none to read) */
	struct jit_sym *syms; /* sorted by start; NULL when the file was not found */
	size_t nr;
};

struct load_seg {
	uint64_t offset, filesz, vaddr;
};

/* A function symbol, in module addresses (bias applied). */
struct fsym {
	uint64_t addr, size;
	const char *name;     /* clean: interned, version suffix removed, demangled;
			       * else as the file has it, in the module's own
			       * string table (or dso_state.sym_names) */
	uint8_t bind;
	bool label;           /* an untyped code label, not a function */
	bool clean;           /* name is made clean at the first naming in it */
};

/* One inlined call: the function inlined, and where in it the code is. */
struct inl {
	const char *function;
	const char *file;
	unsigned line;
};

/* The name of an inlined function (die_name()), by its DIE's offset + 1 in
 * its unit's file. */
struct dwname_slot {
	uint64_t key;
	const void *dwarf;       /* the DIE's unit: the offset is within its file */
	const char *name;        /* interned */
	bool made;               /* name is made (else not yet, or out of memory) */
};

struct cached {
	uint64_t key;            /* offset, or offset - 1 for return addresses, + 1;
				  * bit 63 set for return addresses */
	const char *function;
	const char *file;
	unsigned line;
	uint64_t sym_offset;
	uint32_t inl_first;      /* its inlined calls, innermost first, in dso_state.inl */
	uint32_t inl_count;
	bool addr_name;          /* function is "module+0xADDR": no symbol covers it */
	bool at_own;             /* a return address looked up at itself (a signal
				  * frame's resume address: nothing covers the byte before) */
};

/* a unit's addresses, from its own DW_AT_low_pc/high_pc or DW_AT_ranges */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
};

struct dso_state {
	int status;              /* 0 not tried, 1 loaded, else an enum sym_cause */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;
	struct load_seg *segs;
	size_t nr_segs;
	struct fsym *syms;       /* sorted by addr, one per address */
	size_t nr_syms;
	bool syms_built;
	char *sym_names;         /* the names not yet clean, once copied out of
				  * the module (its Dwfl ended: sym_trim()) */
	struct inl *inl;         /* inlined-call chains of cached addresses */
	size_t nr_inl, cap_inl;
	struct cached *cache;    /* open addressing on key */
	struct dwname_slot *dwn; /* names of inlined functions, open addressing */
	size_t dwn_cap, dwn_nr;
	size_t cache_cap, cache_nr;
	const char *path;        /* the file used (interned) */
	uint8_t from;            /* enum sym_from: where it was found */
	uint64_t frames, unnamed; /* addresses named in it, and those no symbol covers */
	const char *runtime;     /* a runtime whose stack root was named in it (roots.c) */
	struct inl_index *inlidx; /* its units' inlined calls, indexed (inlidx.c) */
	uint64_t unit_file;      /* its file's key in symbolizer.shared (0: none) */
	bool unit_file_made;
	struct line_index *lineidx; /* its units' line tables, copied (lineidx.c) */
	uint64_t *fde_starts;    /* the functions' start addresses of .eh_frame_hdr, sorted */
	size_t nr_fde_starts;
	bool fde_built;
	/* what libdw holds for naming in it (sym_trim()): estimated from the
	 * line tables it parsed and the address ranges and units looked up
	 * since its Dwfl was opened; the units seen, by their Dwarf_CU. The
	 * indexes (inlidx, lineidx) are counted exactly and outlive a Dwfl. */
	uint64_t dw_bytes;
	uint64_t dw_used;        /* the symbolizer's dw_clock at its last naming */
	struct wordmap dw_units;
	uint32_t dw_units_next;
	bool dw_released;        /* its Dwfl was ended by sym_trim(): opened again on use */
	/* the units by address, read from the units themselves the first time
	 * libdwfl finds none (no .debug_aranges, or not for every unit); made
	 * again after the Dwfl ends, whose units they point into */
	struct cu_range *cu_ranges;
	size_t nr_cu_ranges;
	bool cu_ranges_built;
	/* its units by address from .debug_aranges (aranges.c), read at the
	 * first lookup; NULL with aranges_tried: libdwfl's to look up */
	struct aranges *aranges;
	bool aranges_tried;
	/* the linker's PLT sections (module addresses, as syms): stubs it
	 * wrote, which no unit describes, so no unit is searched for them */
	struct { uint64_t lo, hi; } plt[4];
	uint8_t nr_plt;
	uint64_t used_at;        /* monotonic seconds at the sym_trim() that saw it used */
	uint32_t kept;           /* its key's id in symbolizer.kept (a file known by
				  * build id or inode: kept across sym_rebind());
				  * 0: the recording's own */
	/* libdw's part beside dw_bytes (trim.c): its files' pages resident
	 * and their sections' data in memory, measured by sym_held() once
	 * naming asked libdw for more since (dw_account() marks it unread) */
	uint64_t dw_mapped;
	bool dw_measured;        /* dw_mapped read and not asked for more since */
	/* the call frame entries libdw interned for address_name()
	 * (dw_account_cfi()): a bit per fde_starts entry looked up, or with
	 * libdw reading .eh_frame in order (cfi_linear > 0), the furthest */
	uint8_t *cfi_seen;
	size_t cfi_fdes;
	int8_t cfi_linear;       /* 0: not known yet, 1: in order, -1: its table */
	uint64_t dw_pages;       /* of dw_mapped, the images' pages (the rest inflated data) */
};

struct uw_proc;
struct uw_cfi;

#define NS_SEEN_MAX 32

/* A mount namespace's running process, once found (0: none runs). */
struct ns_seen {
	const struct mount_ns *mn;
	uint32_t pid;
};

struct symbolizer {
	struct sym_opts opts;
	const struct perf_header_info *hdr;
	bool other_host;            /* hdr names a host other than this one */
	char buildid_dir[4096];
	struct strtab strings;
	struct dso_state *states;   /* by slot_of[dso id] - 1; zeroed when unused */
	size_t nr_states, states_used;
	uint32_t *slot_of;          /* the recording's dso ids: the index in states + 1 */
	size_t slot_cap;
	struct wordmap kept;        /* a file's build id or inode, and path: an id... */
	uint32_t kept_next;
	uint32_t *state_of_kept;    /* ...whose index in states + 1 this is (0 none) */
	size_t state_of_kept_cap;
	uint32_t *free_states;      /* indexes in states let go by sym_rebind() */
	size_t nr_free_states, cap_free_states;
	struct sym_stats stats;
	uint64_t dw_clock;          /* namings in files (sym_trim()'s LRU), with dwarf_max */
	uint64_t trim_clock;        /* dw_clock at the last sym_trim() */

	/* kernel (kallsyms.c) */
	bool kernel_tried;
	struct ksym *ksyms;         /* sorted by addr */
	size_t nr_ksyms;
	char *ksym_names;           /* the names, NUL-separated, one block */
	size_t ksym_names_len;
	uint64_t ksym_delta;        /* recorded base minus the file's (KASLR) */
	void *ksym_map;             /* non-NULL: ksyms and names are in this cache mapping */
	size_t ksym_map_len;
	struct kcache {             /* direct-mapped: (addr, ret) -> index into ksyms + 1 */
		uint64_t addr;
		uint32_t idx;
		bool ret;           /* looked up as a return address */
	} *kcache;
	const char *kernel_source;  /* where they came from, for messages */
	/* what they were loaded for (sym_rebind() keeps them for a recording
	 * of the same kernel: checked at its first kernel frame) */
	uint64_t ksym_text;         /* the recording's kernel _text */
	const char *ksym_release;   /* its os release (interned), NULL none */
	uint8_t ksym_id[PERF_MAX_BUILD_ID], ksym_id_size; /* its kernel's build id */
	bool kernel_recheck;
	char kernel_why[4096 + 512]; /* why none, and what would name them */

	/* DWARF unwinding (unwind.c) */
	struct uw_proc *uw;
	uint64_t uw_clock;
	struct uw_cfi *uw_cfi;      /* the files' CFI rows and the processes' modules */

	/* files opened ahead (prefetch.c) */
	struct prefetch *pf;

	/* units' indexes and line tables shared with symbolizers naming side
	 * by side (sym_new_sibling()); NULL: its own */
	struct sym_shared *shared;

	/* JIT (jit.c) */
	struct jit_map *jits;
	size_t nr_jits, cap_jits;
	uint32_t *jit_slots;        /* open addressing on pid: index + 1 */
	size_t jit_slots_cap;

	/* containers (nsroot.c) */
	struct {
		bool host_checked, same_host; /* the recording is from this host and boot */
		struct stat self_mnt;       /* our own mount namespace */
		struct ns_seen seen[NS_SEEN_MAX];
		size_t nr_seen;
	} ns;
	uint64_t trim_seen;         /* dw_clock at the end of the last sym_trim() (trim.c) */
};

/* files.c */
/*
 * sym_load_dso() - find @d's file and load it into @st: its path (interned
 * in @s), a Dwfl of its own (st->dwfl, st->mod) and its PT_LOAD segments.
 * Return: 1 loaded, else an enum sym_cause saying why not.
 */
int sym_load_dso(struct symbolizer *s, struct dso_state *st, const struct dso *d);
/* dso_report() - @st's file (st->path) reported to a Dwfl of its own
 * (st->dwfl, owned by @st) as @module, at bias 0. NULL: it could not be. */
Dwfl_Module *dso_report(struct dso_state *st, const char *module);

/* symtab.c */
/* symtab_find() - the function of @st's table containing @addr (a module
 * address): the last at or below it, within its size; NULL none. */
struct fsym *symtab_find(const struct dso_state *st, uint64_t addr);
/* symtab_name() - @f's name made clean, once (interned in @s); NULL out
 * of memory. */
const char *symtab_name(struct symbolizer *s, struct fsym *f);
/* symtab_clean_name() - @name without its version suffix (or Go ABI
 * suffix), demangled unless raw names were asked for; interned in @s. */
const char *symtab_clean_name(struct symbolizer *s, const char *name);
/* symtab_in_plt() - whether @addr (a module address) is in one of @st's
 * PLT sections. */
bool symtab_in_plt(const struct dso_state *st, uint64_t addr);
/*
 * symtab_detach() - copy the names of @st's table not yet made clean out
 * of its module into st->sym_names (owned by @st), before the Dwfl that
 * holds them ends. Return: 0, or PP_ENOMEM (the table is then let go).
 */
int symtab_detach(struct dso_state *st);

/* aranges.c */
struct aranges;
/*
 * aranges_read() - @dw's .debug_aranges read into a table of its own
 * (aranges_free() it), without finding any unit. NULL where libdw would
 * read the section otherwise (see aranges.c), or out of memory: the file
 * is libdwfl's to look up then. An absent section gives an empty table.
 */
struct aranges *aranges_read(Dwarf *dw);
/* aranges_parse() - aranges_read() of the section's bytes @buf (@size),
 * for a .debug_info of @info_size bytes. */
struct aranges *aranges_parse(const void *buf, size_t size, uint64_t info_size);
/* aranges_unit() - whether @a has a unit at @addr: its header's offset
 * in .debug_info into *@cu. */
bool aranges_unit(const struct aranges *a, uint64_t addr, uint64_t *cu);
/*
 * aranges_find() - the unit at @addr (a debug file address: the module's
 * less its Dwarf's bias) as dwfl_module_addrdie() finds it, into *@die
 * (NULL: none), its DIE found in @dw at its first lookup and kept in @a.
 * Return: 0, or -1 where libdwfl is to look it up (no table, or a unit
 * libdw cannot read: libdwfl then says why).
 */
int aranges_find(struct aranges *a, Dwarf *dw, uint64_t addr, Dwarf_Die **die);
/* aranges_of() - @st's table, read from @dw (its module's Dwarf) the first
 * time (NULL: libdwfl's to look up); owned by @st. */
struct aranges *aranges_of(struct dso_state *st, Dwarf *dw);
/* aranges_count() - the ranges @a read (NULL: 0); aranges_bytes() - what
 * it holds. */
size_t aranges_count(const struct aranges *a);
size_t aranges_bytes(const struct aranges *a);
void aranges_free(struct aranges *a);

/* trim.c */
/* dw_account() - count what a lookup in unit @cu (NULL: none) makes libdw
 * keep for @st: the unit, once a Dwfl, and @rows line rows parsed. */
void dw_account(struct dso_state *st, Dwarf_Die *cu, size_t rows);
/*
 * fde_start_at() - the index of the last of @st's fde_starts at or below
 * @vaddr (0 where all are above it); @st has at least one.
 */
static inline size_t fde_start_at(const struct dso_state *st, uint64_t vaddr)
{
	size_t lo = 0, hi = st->nr_fde_starts;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->fde_starts[mid] <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* dw_account_cfi() - count what dwarf_cfi_addrframe() at @vaddr (a file
 * address, as fde_starts; @found: it gave a frame) makes libdw keep of
 * @st's .eh_frame: the entries it interned. */
void dw_account_cfi(struct dso_state *st, uint64_t vaddr, bool found);
/* dso_dwarf_release() - end what libdw holds for @st (its Dwfl); what was
 * named and the indexes made stay. */
void dso_dwarf_release(struct dso_state *st);
/* dso_index_release() - let go of the indexes made from @st's units (its
 * Dwfl released first). */
void dso_index_release(struct dso_state *st);
/* dso_reopen() - open @st's file again (as @module) after sym_trim() ended
 * its Dwfl. Return: 0, else non-zero (the file is then not named). */
int dso_reopen(struct dso_state *st, const char *module);
/* shared.c */
struct sym_shared;
enum shared_kind { SHARED_INLINES, SHARED_LINES };
/*
 * How a kind of object is built for shared_get(): @build(@sh, @file, @key,
 * @arg) makes it (NULL: it cannot be, out of memory), and may offer work
 * to the others waiting for it (shared_offer()); a waiter calls
 * @help(@sh, job, @arg) under the lock with the job offered, which takes
 * a part of it (it may unlock meanwhile) and returns true, or returns
 * false when there is none left to take. @destroy frees an object.
 */
struct shared_build {
	enum shared_kind kind;
	void *(*build)(struct sym_shared *sh, uint64_t file, uint64_t key, void *arg);
	bool (*help)(struct sym_shared *sh, void *job, void *arg);
	void (*destroy)(void *obj);
};
/*
 * shared_new() - a table of objects built once for symbolizers naming on
 * several threads, with one reference (shared_ref() takes another,
 * shared_unref() lets one go: the last frees the table and its objects, so
 * a symbolizer holds one as long as it reads them). NULL out of memory.
 */
struct sym_shared *shared_new(void);
struct sym_shared *shared_ref(struct sym_shared *sh);
void shared_unref(struct sym_shared *sh);
/*
 * shared_get() - the object of (@b->kind, @file, @key): built here by the
 * first to ask (*@built_here set), else waited for, or helped with.
 * Return: the object, owned by @sh; NULL when it could not be built.
 */
void *shared_get(struct sym_shared *sh, const struct shared_build *b, uint64_t file, uint64_t key,
		 void *arg, bool *built_here);
/* shared_offer() - under the lock, by the builder of (@kind, @file, @key):
 * @job is there to help with (NULL: no more), and the waiters are woken. */
void shared_offer(struct sym_shared *sh, unsigned kind, uint64_t file, uint64_t key, void *job);
/* The table's lock, and its one condition (an object built, a job offered
 * or done), for a builder and its helpers. */
void shared_lock(struct sym_shared *sh);
void shared_unlock(struct sym_shared *sh);
void shared_wait(struct sym_shared *sh);
void shared_wake(struct sym_shared *sh);

/* dwwalk.c */
/* The longest LEB128 number dwwalk.c and dwline.c read: libdw reads ten
 * bytes of a longer one and takes it as UINT64_MAX (they leave it to libdw). */
#define DWWALK_LEB_MAX 10
/* A unit's DIEs read in order (dwwalk_open()): where its bytes and
 * abbreviations are; the abbreviations learnt are its own (dwwalk_close()). */
struct dwwalk {
	Dwarf_CU *cu;
	const unsigned char *cu_addr;   /* the unit's DIE, at offset cu_off */
	const unsigned char *end;       /* past the unit's last byte */
	Dwarf_Off cu_off;
	uint8_t version, addr_size, off_size;
	struct walk_abbrev *ab;         /* by code, learnt from libdw */
	size_t nab;
	struct walk_attr *at;
	size_t nat, cap_at;
	Dwarf_Die cudie;
	/* the unit's range lists (dwwalk_ranges()): read once asked */
	const unsigned char *rl;        /* .debug_rnglists, or .debug_ranges before DWARF 5 */
	size_t rl_size;
	uint64_t rl_base;               /* the unit's base address, as libdw takes it */
	int8_t rl_state;                /* 0 not looked at, 1 readable, -1 libdw's */
};
/* A DIE as the walk read it. */
struct dwwalk_die {
	const unsigned char *addr;      /* its first byte */
	int tag;
	bool children;                  /* its abbreviation says it has */
	const unsigned char *lo, *hi;   /* DW_AT_low_pc's, DW_AT_high_pc's value, or NULL */
	uint16_t lo_form, hi_form;
	bool ranges;                    /* it has DW_AT_ranges */
	const unsigned char *rng;       /* DW_AT_ranges's value */
	uint16_t rng_form;
};
/*
 * dwwalk_open() - @w set to read the unit of @cu (its DIE) in order.
 * Return: 0, or -1 where the walk cannot read it as libdw would (another
 * byte order, a unit other than a compile or partial one): walk with libdw.
 */
int dwwalk_open(struct dwwalk *w, Dwarf_Die *cu);
/* dwwalk_close() - let go of what @w learnt. */
void dwwalk_close(struct dwwalk *w);
/*
 * dwwalk_next() - the entry at *@pp into *@d, and *@pp past it.
 * Return: 1 a DIE; 0 the end of a list of children (a null entry); -1 what
 * the walk cannot read (a form it does not know, bytes past the unit's
 * end): the caller walks with libdw instead.
 */
int dwwalk_next(struct dwwalk *w, const unsigned char **pp, struct dwwalk_die *d);
/*
 * dwwalk_pc() - @d's ranges as dwarf_ranges() gives them, where that is
 * none (no DW_AT_low_pc, DW_AT_high_pc or DW_AT_ranges) or one from its own
 * DW_AT_low_pc (an address) and DW_AT_high_pc (an address or a constant),
 * into *@lo and *@hi. Not for the unit's own DIE. Return: 1 that one
 * range, 0 none, -1 ask dwarf_ranges().
 */
int dwwalk_pc(const struct dwwalk *w, const struct dwwalk_die *d, uint64_t *lo, uint64_t *hi);
/*
 * dwwalk_form_size() - the bytes of a value of @form at @p (before @end)
 * in a unit of @addr_size and @off_size, DWARF 5. Return: -1 for a form
 * the walk does not know, an indirect or implicit one, or past @end.
 */
long dwwalk_form_size(unsigned form, unsigned addr_size, unsigned off_size,
		      const unsigned char *p, const unsigned char *end);
/*
 * dwwalk_ranges() - the ranges dwarf_ranges() gives, one after the other,
 * of @d (no DW_AT_low_pc or DW_AT_high_pc, a DW_AT_ranges at an offset
 * into the unit's range lists) into @lo and @hi (room for @max each).
 * Return: how many, or -1 where libdw should read them (a form or an
 * entry not read here, more than @max, a list libdw would stop reading
 * before its end).
 */
int dwwalk_ranges(struct dwwalk *w, const struct dwwalk_die *d, uint64_t *lo, uint64_t *hi,
		  int max);
/* dwwalk_section() - the data of @elf's section named @want as libdw
 * reads it (NULL: none, no bits, or compressed: left to libdw). */
const Elf_Data *dwwalk_section(Elf *elf, const char *want);
/* dwwalk_die() - libdw's handle of @d, in @w's Dwarf. */
void dwwalk_die(const struct dwwalk *w, const struct dwwalk_die *d, Dwarf_Die *out);
/* dwwalk_off() - the offset of the byte at @addr; dwwalk_at() - the byte
 * at offset @off of the unit (NULL outside it). */
Dwarf_Off dwwalk_off(const struct dwwalk *w, const unsigned char *addr);
const unsigned char *dwwalk_at(const struct dwwalk *w, Dwarf_Off off);
/* dwline.c */
/* A row of a unit's line table, as libdw's (dwarf_getsrclines()). */
struct dwline_row {
	uint64_t addr;
	int32_t line;
	uint32_t file;                  /* an index into the names, as the program says */
	uint32_t seq;                   /* its place in the program */
	bool end;                       /* it ends a sequence */
};
/* A unit's line table: rows in libdw's order, its files' names as
 * libdw's dwarf_filesrc() gives them (index 0 included). */
struct dwline {
	struct dwline_row *rows;
	size_t nrows;
	const char **names;             /* each malloc()ed */
	size_t nnames;
};
/*
 * dwline_read() - unit @cu's line table read from its line program, as
 * libdw 0.188 reads it, into *@out (free with dwline_free()). Return: 0,
 * or -1 where libdw should read it (something it reads otherwise, or
 * refuses, or a file this does not read: *@out is then empty).
 */
int dwline_read(Dwarf_Die *cu, struct dwline *out);
void dwline_free(struct dwline *l);

/* inlidx.c */
struct inl_index;
/* A range of an entry, as the sweep reads them. */
struct inl_range {
	uint64_t lo, hi;
	uint32_t entry;             /* + 1 */
	uint32_t depth;
};
/*
 * inlidx_range_cmp() - the sweep's order of ranges (qsort()'s comparison):
 * by start, the outer first, the longer first, then by entry.
 */
int inlidx_range_cmp(const void *a, const void *b);
/*
 * inlidx_range_sort() - @r (@n ranges) in inlidx_range_cmp()'s order, as
 * qsort() puts them (a radix sort by start). Allocates scratch and frees
 * it; out of memory it is qsort()'s.
 */
void inlidx_range_sort(struct inl_range *r, size_t n);
/*
 * inlidx_chain() - the function and inlined calls around @addr (in the
 * unit's own addresses) of the unit @cu, innermost first into @out (at
 * most @max), ending with the function they are in; @cu_out: the unit's
 * DIE, for call sites. The unit is indexed at its first lookup, into *@x
 * (made then); with @sh and a @file key (non-zero), the index is @sh's,
 * built once for every symbolizer sharing it.
 * Return: how many are in @out.
 */
size_t inlidx_chain(struct inl_index **x, struct sym_shared *sh, uint64_t file, Dwarf_Die *cu,
		    uint64_t addr, Dwarf_Die *out, size_t max, Dwarf_Die *cu_out);
/*
 * inlidx_scopes() - as dwarf_getscopes_die(): @die, the DIEs it is in, and
 * its unit, into *@scopes (free() it); from the index of its unit when
 * that unit was indexed (no walk from the unit's root), else libdw's.
 */
int inlidx_scopes(struct inl_index *x, Dwarf_Die *die, Dwarf_Die **scopes);
/* inlidx_bytes() - what @x holds (NULL: 0). */
size_t inlidx_bytes(const struct inl_index *x);
/* For tests: a unit shared between symbolizers whose top-level DIEs span
 * this many bytes or more is gathered in parts (256 KiB). */
extern size_t inlidx_part_min_span;
/* inlidx_units_built() - how many units @x indexed itself (its own, or
 * for the shared table), not counting those it found built (NULL: 0). */
size_t inlidx_units_built(const struct inl_index *x);
void inlidx_free(struct inl_index *x);
/*
 * For tests: a digest of the index of unit @cu built on this thread by
 * libdw's walk (@how 0), read in order (1), or read in order in parts as
 * the lanes gather a big unit (2: every unit with two top-level DIEs or
 * more whose span reaches inlidx_part_min_span); *@walked: read in order
 * all through. Return: the digest, 0 when no index was built.
 */
uint64_t inlidx_unit_digest(Dwarf_Die *cu, int how, bool *walked);
/* lineidx.c */
struct line_index;
/*
 * lineidx_find() - the source line of @addr (in the unit's own addresses)
 * in the unit @cu, as dwfl_module_getsrc() finds it, into *@file (interned
 * in @strings, NULL when the row names none) and *@line. The unit's table
 * is copied at its first lookup into *@x (made then), or with @sh and a
 * file key @sfile (non-zero) found in @sh, copied once for every
 * symbolizer sharing it (its names then @sh's): *@fresh_rows, the rows
 * copied now (libdw parsed them), else 0. Return: whether a row covers it.
 */
bool lineidx_find(struct line_index **x, struct sym_shared *sh, uint64_t sfile,
		  struct strtab *strings, Dwarf_Die *cu, uint64_t addr, const char **file,
		  unsigned *line, size_t *fresh_rows);
/* lineidx_file() - file @idx of the table of unit @cu (a call site's
 * DW_AT_call_file), the table copied as lineidx_find() does; NULL none. */
const char *lineidx_file(struct line_index **x, struct sym_shared *sh, uint64_t sfile,
			 struct strtab *strings, Dwarf_Die *cu, uint64_t idx);
/* lineidx_bytes() - what @x holds (NULL: 0). */
size_t lineidx_bytes(const struct line_index *x);
/* lineidx_end_dwarf() - end the Dwarf @x parses line programs in (on its
 * module's Elf): before the module's Dwfl ends (NULL: nothing). */
void lineidx_end_dwarf(struct line_index *x);
/* For tests: true, every unit's line program is parsed by libdw (else
 * read by dwline.c where it can). */
extern bool lineidx_by_libdw;
/* For tests: false, a unit's line program is parsed in its module's Dwarf,
 * which keeps libdw's table (else in a Dwarf of its own, ended after). */
extern bool lineidx_own_dwarf;
/* For tests: the bytes of libdw's tables (48 a row) a line index parses
 * in its module's Dwarf, which keeps them, before it parses in a Dwarf of
 * its own (1 MiB; 0: none there). */
extern size_t lineidx_module_max;
void lineidx_free(struct line_index *x);
void sym_build_symtab(struct symbolizer *s, struct dso_state *st);
void sym_dso_release(struct dso_state *st);
/* sym_kept_ready() - whether @d's file is open already, kept from a
 * recording before (sym_rebind()): nothing to open ahead. */
bool sym_kept_ready(struct symbolizer *s, const struct dso *d);
/* prefetch.c */
bool prefetch_take(struct symbolizer *s, const struct dso *d, struct dso_state *st);
void prefetch_free(struct symbolizer *s);
int sym_file_build_id(const char *path, uint8_t *id, size_t max);
/*
 * Which of two aliases at one address names it, as perf chooses: a sized
 * symbol, then non-weak, then global, then fewer leading underscores, then
 * the longer name; by name last. Return: < 0 if x is better, > 0 if y.
 */
int sym_alias_order(bool sized_x, uint8_t bind_x, const char *x, bool sized_y, uint8_t bind_y,
		    const char *y);
/* fsym_cmp() - two symbols (struct fsym) by address; at one address the
 * best alias first (sym_alias_order()), code labels after functions. */
int fsym_cmp(const void *a, const void *b);
/*
 * fsym_sort() - sort @n symbols of @v as fsym_cmp() orders them, symbols
 * that compare equal keeping their order: qsort()'s order with it (glibc's
 * merge sort is stable), in fewer steps.
 */
void fsym_sort(struct fsym *v, size_t n);
/* The dso's file, loaded (found by build id) on first use; NULL if not usable. */
const struct dso_state *sym_dso_loaded(struct symbolizer *s, const struct dso *d);
const char *sym_dso_path(const struct dso_state *st);
/* Load bias for a map of the file at @start with file offset @pgoff. */
bool sym_dso_bias(const struct dso_state *st, uint64_t start, uint64_t pgoff, uint64_t *bias);

/*
 * How many of @n sorted entries (@stride bytes each, starting with a u64
 * address) are at or below @addr: entry [result - 1] is the last one that
 * can contain it.
 */
static inline size_t sym_count_at_or_below(const void *base, size_t n, size_t stride,
					   uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t key;

		memcpy(&key, (const char *)base + mid * stride, sizeof(key));
		if (key <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* nsroot.c */
/*
 * sym_ns_root() - where @pi's files can be read on this host now:
 * "/proc/PID/root" of a running process of its mount namespace, when that
 * is not ours. Return: 1 with @root filled, 0 when there is none (another
 * host or boot, none runs, or its files are ours at their recorded paths).
 */
int sym_ns_root(struct symbolizer *s, const struct proc_info *pi, char *root, size_t n);
/* Is @pi known (NAMESPACES) to be in a mount namespace not the host's? */
bool sym_ns_foreign(const struct proc_info *pi);
/*
 * sym_ns_pid() - @pi's pid in its own pid namespace (what a JIT names its
 * files after): from the recording (a jit-N.dump it mapped), the running
 * process's NSpid, or its recorded pid when it shares the host's pid
 * namespace. Return: the pid, 0 unknown.
 */
uint32_t sym_ns_pid(struct symbolizer *s, const struct proc_info *pi);

/* unwind.c */
void unwind_free(struct symbolizer *s);

/* kallsyms.c */
void kernel_resolve(struct symbolizer *s, const struct raw_frame *f, uint64_t kernel_text,
		    struct sym_frame *out);
void kernel_free(struct symbolizer *s);
int kallsyms_parse(struct symbolizer *s, const char *text, size_t len, uint64_t *text_addr);

/* dwpages.c */
/*
 * dwpages_drop() - let go of the pages of @dbg's file that this process
 * has mapped (read since it was opened, or since the last call), for
 * after a walk whose index now answers for what it read: a page read
 * again is mapped again from the page cache. Only once the process's
 * file-backed resident memory grew by dwpages_slack since the calling
 * thread last let go (its first call always does). Nothing is done where
 * libelf does not map the file's own bytes (its image read into memory,
 * another byte order, an ET_REL file).
 */
void dwpages_drop(Dwarf *dbg);
/*
 * dwpages_release() - let go of every page of @elf's file image this
 * process has resident, now (sym_trim(): the Dwfl stays open, and what is
 * read again is mapped again from the page cache). Return: whether they
 * were (not an image of the file that may be: see dwpages.c).
 */
bool dwpages_release(Elf *elf);
/* For tests: dwpages_drop() lets go once the process's file-backed
 * resident memory grew this much since the calling thread last did
 * (4 MiB; 0: at every call). */
extern size_t dwpages_slack;

/* dwname.c */
/*
 * The name of the function @die (an inlined call, or what it is an instance
 * of) qualified from its DWARF scopes as the demangler spells them
 * ("main::{lambda(long)#3}::operator()"); interned in @s. NULL where its
 * unit is not C++ or a scope cannot be spelled.
 */
const char *dwname_qualified(struct symbolizer *s, struct inl_index *x, Dwarf_Die *die);

/* jit.c */
bool jit_lookup(struct symbolizer *s, const struct raw_frame *f, struct sym_frame *out);
void jit_free(struct symbolizer *s);

/** sym_hex() - @n bytes of @id in lowercase hex into @out (2n + 1 bytes). */
void sym_hex(const uint8_t *id, size_t n, char *out);

/**
 * sym_debug_uncompressed() - the separate debug file of build id @id as an
 * uncompressed copy from perfport's cache, made now from the distribution's
 * compressed one (/usr/lib/debug/.build-id/) when missing (debugcache.c).
 * @name: set to the original's path (malloc'd, libdwfl frees it).
 * Return: the copy's descriptor, or -1: libdwfl's own search then.
 */
int sym_debug_uncompressed(const unsigned char *id, size_t id_len, char **name);

#endif /* SYMBOLS_PRIV_H */
