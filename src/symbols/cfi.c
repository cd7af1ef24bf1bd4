/* SPDX-License-Identifier: MIT */
/*
 * cfi.c - a file's call frame information as rows, and the walk of a stack
 * copy by them (cfi.h).
 *
 * The rows are libdw's: dwarf_cfi_addrframe() at an address gives the
 * frame state of the CFI row containing it (its range, from
 * dwarf_frame_info()), and dwarf_frame_cfa() / dwarf_frame_register() its
 * rules, read for every register libdwfl's unwinder reads; they are kept
 * sorted by address, so each range costs libdw once per file and every
 * later frame in it a binary search. The rules a row keeps are those
 * libdwfl's handle_cfi() evaluates without a general DWARF expression:
 * CFA = reg + offset; a register same-valued, at CFA + n, equal to CFA + n,
 * or in another register. The walk evaluates them as handle_cfi() does
 * (elfutils 0.188, the version this project builds with): a register whose
 * rule cannot be evaluated (a read outside the stack copy, an unknown
 * register) is left unknown, the caller's pc is its return-address column,
 * and an undefined or zero one ends the walk at the outermost frame.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"

#define NEG_SLOTS 64 /* addresses without an FDE, direct-mapped */
#define HIT_SLOTS 128 /* addresses found in a row, direct-mapped */

struct cfi_table {
	unsigned nregs;
	Elf *elf;
	Dwarf_CFI *cfi;            /* .eh_frame, libdw's */
	bool exec;
	bool debug_frame;          /* the file has a .debug_frame too */
	uint64_t first_vaddr, load_end;
	struct cfi_row *rows;      /* sorted by start, disjoint */
	size_t nr_rows, cap_rows;
	struct cfi_rule *rules;
	size_t nr_rules, cap_rules;
	uint64_t neg[NEG_SLOTS];   /* address + 1 of a lookup that found no FDE */
	/* the row of an address found before (a frame's pc: the same few
	 * return addresses, sample after sample), cleared when a row is
	 * added (the rows after it move) */
	struct {
		uint64_t addr;     /* + 1; 0: empty */
		uint32_t row;
	} hit[HIT_SLOTS];
	size_t last;               /* the row found last (a hint) */
	size_t asked;              /* addresses asked of libdw */
};

struct cfi_table *cfi_table_new(unsigned nregs)
{
	struct cfi_table *t;

	if (nregs > CFI_MAX_REGS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t)
		t->nregs = nregs;
	return t;
}

/* The load layout libdwfl's module report reads (__libdwfl_elf_address_range). */
static bool read_layout(struct cfi_table *t)
{
	GElf_Ehdr eh;
	size_t phnum;
	bool first = true;

	if (!gelf_getehdr(t->elf, &eh) || elf_getphdrnum(t->elf, &phnum) != 0)
		return false;
	t->exec = eh.e_type == ET_EXEC || eh.e_type == ET_CORE;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(t->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			t->first_vaddr = ph.p_vaddr & -ph.p_align;
		first = false;
		if (ph.p_vaddr + ph.p_memsz > 0)
			t->load_end = ph.p_vaddr + ph.p_memsz;
	}
	return !first && t->load_end;
}

/* Whether @elf has a .debug_frame (libdwfl looks there where .eh_frame has no FDE). */
static bool has_debug_frame(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return true; /* unknown: as if it had */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return true;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".debug_frame") == 0 || strcmp(name, ".zdebug_frame") == 0)
			return true;
	}
	return false;
}

struct cfi_table *cfi_table_open(const char *path, unsigned nregs, unsigned machine)
{
	struct cfi_table *t = cfi_table_new(nregs);
	GElf_Ehdr eh;
	int fd;

	if (!t)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	elf_version(EV_CURRENT);
	t->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* the whole file is mapped (or, where it cannot be, read now): the
	 * descriptor is not read again */
	if (t->elf && elf_cntl(t->elf, ELF_C_FDREAD) != 0) {
		elf_end(t->elf);
		t->elf = NULL;
	}
	if (t->elf)
		elf_cntl(t->elf, ELF_C_FDDONE);
	close(fd);
	if (!t->elf || elf_kind(t->elf) != ELF_K_ELF || !gelf_getehdr(t->elf, &eh) ||
	    eh.e_machine != machine || !read_layout(t))
		goto fail;
	t->debug_frame = has_debug_frame(t->elf);
	/* NULL without .eh_frame: no row, and where libdwfl finds none
	 * either, its frame-pointer step */
	t->cfi = dwarf_getcfi_elf(t->elf);
	return t;
fail:
	cfi_table_free(t);
	return NULL;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	if (t->cfi)
		dwarf_cfi_end(t->cfi);
	if (t->elf)
		elf_end(t->elf);
	free(t->rows);
	free(t->rules);
	free(t);
}

void cfi_table_layout(const struct cfi_table *t, bool *exec, uint64_t *first_vaddr,
		      uint64_t *load_end)
{
	*exec = t->exec;
	*first_vaddr = t->first_vaddr;
	*load_end = t->load_end;
}

size_t cfi_table_rows(const struct cfi_table *t)
{
	return t ? t->nr_rows : 0;
}

bool cfi_table_debug_frame(const struct cfi_table *t)
{
	return t->debug_frame;
}

size_t cfi_table_asked(const struct cfi_table *t)
{
	return t ? t->asked : 0;
}

size_t cfi_table_bytes(const struct cfi_table *t)
{
	return t ? sizeof(*t) + t->cap_rows * sizeof(*t->rows) + t->cap_rules * sizeof(*t->rules) : 0;
}

/* How many rows start at or below @addr. */
static size_t rows_at_or_below(const struct cfi_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct cfi_row *cfi_table_add(struct cfi_table *t, const struct cfi_row *row,
				    const struct cfi_rule *rules)
{
	size_t at;

	if (row->start >= row->end)
		return NULL;
	at = rows_at_or_below(t, row->start);
	if ((at && t->rows[at - 1].end > row->start) ||
	    (at < t->nr_rows && t->rows[at].start < row->end))
		return NULL;
	if (t->nr_rows == t->cap_rows) {
		size_t cap = t->cap_rows ? 2 * t->cap_rows : 64;
		struct cfi_row *v = realloc(t->rows, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->rows = v;
		t->cap_rows = cap;
	}
	if (t->nr_rules + row->nr_rules > t->cap_rules) {
		size_t cap = t->cap_rules ? 2 * t->cap_rules : 256;
		struct cfi_rule *v;

		while (cap < t->nr_rules + row->nr_rules)
			cap *= 2;
		v = realloc(t->rules, cap * sizeof(*v));
		if (!v)
			return NULL;
		t->rules = v;
		t->cap_rules = cap;
	}
	memmove(&t->rows[at + 1], &t->rows[at], (t->nr_rows - at) * sizeof(*t->rows));
	t->rows[at] = *row;
	t->rows[at].first_rule = (uint32_t)t->nr_rules;
	t->rows[at].nr_rules = 0;
	t->rows[at].same = row->same;
	for (uint32_t i = 0; i < row->nr_rules; i++) {
		if (rules[i].kind == CFI_SAME && rules[i].reg < 64) {
			t->rows[at].same |= 1ULL << rules[i].reg;
			continue;
		}
		t->rules[t->nr_rules++] = rules[i];
		t->rows[at].nr_rules++;
	}
	t->nr_rows++;
	t->last = at;
	memset(t->hit, 0, sizeof(t->hit));
	return &t->rows[at];
}

/*
 * A register's rule as dwarf_frame_register() gives it, kept when it is one
 * the walk evaluates. Return: 1 kept in *@r, 0 undefined (or libdw failed
 * on it: handle_cfi() leaves it unknown too), -1 an expression.
 */
static int rule_of(Dwarf_Frame *fr, unsigned regno, struct cfi_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	Dwarf_Word off = 0;
	size_t i = 0;

	if (dwarf_frame_register(fr, (int)regno, mem, &ops, &nops) != 0)
		return 0;
	r->reg = (uint8_t)regno;
	if (nops == 0) {
		if (ops != NULL)
			return 0; /* undefined */
		r->kind = CFI_SAME;
		r->off = 0;
		return 1;
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx) {
		if (ops[0].number >= CFI_MAX_REGS)
			return -1;
		r->kind = CFI_REGISTER;
		r->off = (int32_t)ops[0].number;
		return 1;
	}
	if (ops[i].atom != DW_OP_call_frame_cfa)
		return -1;
	i++;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst)
		off = ops[i++].number;
	r->kind = CFI_OFFSET;
	if (i < nops && ops[i].atom == DW_OP_stack_value) {
		r->kind = CFI_VAL_OFFSET;
		i++;
	}
	if (i != nops || (int64_t)off != (int32_t)off)
		return -1;
	r->off = (int32_t)off;
	return 1;
}

/*
 * The row of the frame state @fr, found at @addr, into @t. Its range is
 * taken as [@addr, end): libdw's end is where the row's program advanced
 * past @addr (or the FDE's end), but its start is not to be trusted after
 * a DW_CFA_restore_state (elfutils 0.188 restores the remembered state's
 * start with its rules, so a row after an epilogue claims the epilogue's
 * addresses too). A row of the same end already kept is the same row: it
 * is extended down to @addr. NULL out of memory.
 */
static const struct cfi_row *row_from_frame(struct cfi_table *t, Dwarf_Frame *fr, uint64_t addr)
{
	struct cfi_rule rules[CFI_MAX_REGS];
	struct cfi_row row = { 0 };
	Dwarf_Addr start, end;
	bool signal;
	Dwarf_Op *ops;
	size_t nops;
	int ra = dwarf_frame_info(fr, &start, &end, &signal);
	size_t at;

	if (ra >= 0 && !(addr < end && start <= addr))
		return NULL;
	at = rows_at_or_below(t, addr);
	if (at < t->nr_rows && t->rows[at].end == end) {
		t->rows[at].start = addr;
		t->last = at;
		return &t->rows[at];
	}
	row.start = addr;
	row.end = ra >= 0 ? end : addr + 1;
	if (ra < 0 || (unsigned)ra >= t->nregs || signal)
		row.flags |= CFI_ROW_NO_RULE;
	else
		row.ra = (uint8_t)ra;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number >= t->nregs)
		row.flags |= CFI_ROW_NO_RULE;
	else {
		row.cfa_reg = (uint8_t)ops[0].number;
		row.cfa_off = (int64_t)ops[0].number2;
	}
	for (unsigned regno = 0; regno < t->nregs && !(row.flags & CFI_ROW_NO_RULE); regno++) {
		int k = rule_of(fr, regno, &rules[row.nr_rules]);

		if (k < 0)
			row.flags |= CFI_ROW_NO_RULE;
		else if (k > 0)
			row.nr_rules++;
	}
	if (row.flags & CFI_ROW_NO_RULE)
		row.nr_rules = 0;
	return cfi_table_add(t, &row, rules);
}

const struct cfi_row *cfi_table_find(struct cfi_table *t, uint64_t addr,
				     const struct cfi_rule **rules)
{
	const struct cfi_row *r;
	Dwarf_Frame *fr = NULL;
	size_t at;
	uint64_t *neg;
	__typeof__(&t->hit[0]) hit;

	*rules = t->rules;
	if (t->last < t->nr_rows && t->rows[t->last].start <= addr && addr < t->rows[t->last].end)
		return &t->rows[t->last];
	hit = &t->hit[(addr ^ (addr >> 7) ^ (addr >> 14)) % HIT_SLOTS];
	if (hit->addr == addr + 1) {
		t->last = hit->row;
		return &t->rows[hit->row];
	}
	at = rows_at_or_below(t, addr);
	if (at && addr < t->rows[at - 1].end) {
		t->last = at - 1;
		hit->addr = addr + 1;
		hit->row = (uint32_t)(at - 1);
		return &t->rows[at - 1];
	}
	neg = &t->neg[(addr ^ (addr >> 6)) % NEG_SLOTS];
	if (!t->cfi || *neg == addr + 1)
		return NULL;
	t->asked++;
	if (dwarf_cfi_addrframe(t->cfi, addr, &fr) != 0) {
		*neg = addr + 1;
		return NULL;
	}
	r = row_from_frame(t, fr, addr);
	free(fr);
	if (!r)
		*neg = addr + 1; /* out of memory, or overlapping rows: libdwfl's then */
	*rules = t->rules;
	return r;
}

static inline bool reg_known(const uint64_t *set, unsigned reg)
{
	return (set[reg / 64] >> (reg % 64)) & 1;
}

static inline void reg_put(uint64_t *regs, uint64_t *set, unsigned reg, uint64_t v)
{
	regs[reg] = v;
	set[reg / 64] |= 1ULL << (reg % 64);
}

/* A word of the stack copy, as libdwfl's memory_read callback reads it
 * (unwind.c); in its callers: a few instructions, ~4 a frame. */
static inline __attribute__((always_inline)) bool stack_read(struct cfi_walk *w, uint64_t addr, uint64_t *v)
{
	uint64_t at = addr - w->sp;

	if (addr < w->sp || at > w->size || w->size - at < sizeof(*v)) {
		if (addr >= w->sp)
			w->past_copy = true;
		return false;
	}
	memcpy(v, w->stack + at, sizeof(*v));
	if (w->fix)
		*v = w->fix(w->arg, *v);
	return true;
}

/* the DWARF registers of the frame-pointer steps */
enum { RBP = 6, RSP = 7, A64_FP = 29, A64_LR = 30, A64_SP = 31 };

/*
 * aarch64_unwind() of elfutils 0.188: the caller's pc is x30 (not 0), its
 * x30 and x29 at [x29 + 8] and [x29] (0 where they cannot be read), its sp
 * x29 + 16, which must be above this frame's unless x29 was 0.
 */
static bool fp_step_a64(struct cfi_walk *w, const uint64_t *regs, const uint64_t *set,
			uint64_t *nregs_v, uint64_t *nset, uint64_t *pc)
{
	uint64_t fp, sp, lr, new_lr, new_fp;

	if (!reg_known(set, A64_LR) || !(lr = regs[A64_LR]))
		return false;
	*pc = lr;
	fp = reg_known(set, A64_FP) ? regs[A64_FP] : 0;
	sp = reg_known(set, A64_SP) ? regs[A64_SP] : 0;
	if (!stack_read(w, fp + 8, &new_lr))
		new_lr = 0;
	if (!stack_read(w, fp, &new_fp))
		new_fp = 0;
	reg_put(nregs_v, nset, A64_LR, new_lr);
	reg_put(nregs_v, nset, A64_FP, new_fp);
	reg_put(nregs_v, nset, A64_SP, fp + 16);
	return fp == 0 || fp + 16 > sp;
}

/*
 * x86_64_unwind() of elfutils 0.188, libdwfl's step where it has no CFI:
 * the caller's rbp at [rbp], its pc at [rbp + 8], its rsp rbp + 16, which
 * must be above this frame's rsp; nothing else known. Return: false where
 * it fails (libdwfl's unwinding then ends with -1).
 */
static bool fp_step(struct cfi_walk *w, const uint64_t *regs, const uint64_t *set, uint64_t *nregs_v,
		    uint64_t *nset, uint64_t *pc)
{
	uint64_t fp, sp, prev_fp, ret;

	if (w->fp_step == CFI_FP_AARCH64)
		return fp_step_a64(w, regs, set, nregs_v, nset, pc);
	if (!reg_known(set, RBP) || !(fp = regs[RBP]))
		return false;
	sp = reg_known(set, RSP) ? regs[RSP] : 0;
	if (!stack_read(w, fp, &prev_fp))
		prev_fp = 0;
	if (!stack_read(w, fp + 8, &ret))
		return false;
	reg_put(nregs_v, nset, RBP, prev_fp);
	reg_put(nregs_v, nset, RSP, fp + 16);
	*pc = ret;
	return sp < fp + 16;
}

enum cfi_walk_end cfi_walk(struct cfi_walk *w, uint64_t pc, uint64_t *pcs, size_t max, size_t *n)
{
	uint64_t other[CFI_MAX_REGS], other_set[2];
	uint64_t *regs = w->regs, *set = w->set;
	bool initial = true;

	*n = 0;
	if (!max)
		return CFI_WALK_FULL;
	for (;;) {
		const struct cfi_row *row;
		const struct cfi_rule *rules;
		uint64_t bias, cfa = 0, *nregs_v, *nset;
		bool cfa_ok;

		nregs_v = regs == w->regs ? other : w->regs;
		nset = regs == w->regs ? other_set : w->set;
		nset[0] = nset[1] = 0;
		if (!pc) {
			uint64_t unused;

			if (initial)
				return CFI_WALK_PC_ZERO;
			/* libdwfl's callback asks whether the frame is an
			 * activation, which unwinds it (at pc - 1: no CFI)
			 * before the callback sees its pc of 0 and stops */
			if (w->fp_step)
				fp_step(w, regs, set, nregs_v, nset, &unused);
			return CFI_WALK_STOPPED;
		}
		pcs[(*n)++] = pc;
		if (*n == max)
			return CFI_WALK_FULL;
		row = w->find(w->arg, initial ? pc : pc - 1, &rules, &bias);
		if (!row || (row->flags & CFI_ROW_NO_RULE) ||
		    ((row->flags & CFI_ROW_NO_CFI) && !w->fp_step))
			return CFI_WALK_NO_RULE;
		if (row->flags & CFI_ROW_NO_CFI) {
			if (!fp_step(w, regs, set, nregs_v, nset, &pc))
				return CFI_WALK_STOPPED;
			regs = nregs_v;
			set = nset;
			initial = false;
			continue;
		}
		cfa_ok = row->cfa_reg < w->nregs && reg_known(set, row->cfa_reg);
		if (cfa_ok)
			cfa = regs[row->cfa_reg] + (uint64_t)row->cfa_off;
		if (row->same) {
			/* the same-valued registers known: all of the low ones
			 * copied (an unknown one's value is never read) */
			memcpy(nregs_v, regs, (w->nregs < 64 ? w->nregs : 64) * sizeof(*regs));
			nset[0] = set[0] & row->same;
		}
		for (uint32_t i = 0; i < row->nr_rules; i++) {
			const struct cfi_rule *r = &rules[row->first_rule + i];
			uint64_t v;

			switch (r->kind) {
			case CFI_SAME:
				if (!reg_known(set, r->reg))
					continue;
				v = regs[r->reg];
				break;
			case CFI_OFFSET:
				if (!cfa_ok || !stack_read(w, cfa + (uint64_t)(int64_t)r->off, &v))
					continue;
				break;
			case CFI_VAL_OFFSET:
				if (!cfa_ok)
					continue;
				v = cfa + (uint64_t)(int64_t)r->off;
				break;
			default: /* CFI_REGISTER */
				if ((unsigned)r->off >= w->nregs || !reg_known(set, (unsigned)r->off))
					continue;
				v = regs[r->off];
				break;
			}
			reg_put(nregs_v, nset, r->reg, v);
		}
		/* the caller's pc: its return-address column; undefined, not
		 * computable or 0 is libdwfl's DWFL_FRAME_STATE_PC_UNDEFINED */
		if (!reg_known(nset, row->ra) || !nregs_v[row->ra])
			return CFI_WALK_OUTERMOST;
		pc = nregs_v[row->ra];
		regs = nregs_v;
		set = nset;
		initial = false;
	}
}
