/* SPDX-License-Identifier: MIT */
/*
 * cfi.h - DWARF call frame information of one ELF file as a table of rows
 * (address range -> how to find the caller's registers), made from libdw's
 * own reading of the file's .eh_frame the first time an address in a range
 * is asked for, and a walk of a sample's stack copy by those rows: the
 * fast path of `--call-graph dwarf` unwinding (unwind.c), whose results
 * are libdwfl's (dwfl_getthread_frames with elfutils 0.188's rules) for
 * every row it can express. A row it cannot (a CFA or register given by a
 * DWARF expression, a signal frame, no FDE at all) is flagged, and the
 * walk stops there saying so: the caller unwinds that sample with libdwfl.
 * Nothing here allocates per sample or per frame.
 */
#ifndef SYMBOLS_CFI_H
#define SYMBOLS_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DWARF register numbers a walk keeps: libdwfl's frame_nregs of aarch64
 * (x0-x30, sp, then the FP/SIMD registers from 64); x86_64 has 17. */
#define CFI_MAX_REGS 97

/* How one register of the caller is found (DW_CFA_* rules as libdw gives
 * them from dwarf_frame_register()); registers without one are undefined. */
enum cfi_rule_kind {
	CFI_SAME,       /* same value: the callee's */
	CFI_OFFSET,     /* saved at CFA + off */
	CFI_VAL_OFFSET, /* is CFA + off */
	CFI_REGISTER,   /* in register off of the callee */
};

struct cfi_rule {
	int32_t off;    /* offset, or the register of CFI_REGISTER */
	uint8_t reg;
	uint8_t kind;   /* enum cfi_rule_kind */
};

/* cfi_row.flags */
#define CFI_ROW_NO_RULE 1u /* the walk cannot follow it: libdwfl must */
#define CFI_ROW_NO_CFI 2u  /* libdwfl has no CFI there (no module, no FDE and
			    * no .debug_frame): it takes its architecture's
			    * frame-pointer step, and so does a walk with fp_step */

/* cfi_walk.fp_step: the frame-pointer step of elfutils 0.188 where there is no CFI */
enum cfi_fp_step {
	CFI_FP_NONE,    /* none: the walk ends saying CFI_WALK_NO_RULE */
	CFI_FP_X86_64,  /* x86_64_unwind(): caller's rbp at [rbp], pc at [rbp + 8] */
	CFI_FP_AARCH64, /* aarch64_unwind(): pc = x30, then x29/x30 from [x29] */
};

/* The rules of [start, end) in the file's addresses. */
struct cfi_row {
	uint64_t start, end;
	int64_t cfa_off;     /* CFA = register cfa_reg + cfa_off */
	uint32_t first_rule; /* its rules in the table's rule pool */
	uint8_t nr_rules;
	uint8_t cfa_reg;
	uint8_t ra;          /* the return address column */
	uint8_t flags;
	/* the registers below 64 whose rule is CFI_SAME, as a mask (set by
	 * cfi_table_add(): those rules are not in the pool; the walk copies
	 * the known ones in one step) */
	uint64_t same;
};

struct cfi_table;

/**
 * cfi_table_open() - the CFI of the ELF file at @path, read lazily; the file
 * is mapped, not read.
 * @nregs: the registers a frame has (17 for x86_64, 97 for aarch64).
 * @machine: the ELF machine the file must be (EM_X86_64, EM_AARCH64).
 * Return: the table (cfi_table_free(); without .eh_frame, one that finds
 * no row), or NULL when the file cannot be opened, is not an ELF file of
 * @machine or has no loadable segment.
 */
struct cfi_table *cfi_table_open(const char *path, unsigned nregs, unsigned machine);

/**
 * cfi_table_new() - an empty table over no file, filled with
 * cfi_table_add() alone (the unit tests'). NULL out of memory.
 */
struct cfi_table *cfi_table_new(unsigned nregs);

/**
 * cfi_table_add() - put @row (and its @row->nr_rules @rules; first_rule is
 * set here, and the CFI_SAME rules of registers below 64 become its
 * same mask) in @t. Return: the row as the table holds it, NULL out of
 * memory or when it overlaps a row already there.
 */
const struct cfi_row *cfi_table_add(struct cfi_table *t, const struct cfi_row *row,
				    const struct cfi_rule *rules);

/**
 * cfi_table_find() - the row covering @addr (file address), made from the
 * file's CFI when none covers it yet.
 * @rules: receives the table's rule pool (valid until the next call).
 * Return: the row (owned by @t, valid until the next call), or NULL: no
 * FDE covers @addr.
 */
const struct cfi_row *cfi_table_find(struct cfi_table *t, uint64_t addr,
				     const struct cfi_rule **rules);

/**
 * cfi_table_layout() - the file's load layout as libdwfl's module report
 * reads it: whether it is ET_EXEC (its own addresses, bias 0), the first
 * PT_LOAD's aligned address and the end of the last.
 */
void cfi_table_layout(const struct cfi_table *t, bool *exec, uint64_t *first_vaddr,
		      uint64_t *load_end);

/** cfi_table_debug_frame() - whether the file has a .debug_frame, which
 * libdwfl reads where .eh_frame has no FDE (not unknown sections). */
bool cfi_table_debug_frame(const struct cfi_table *t);

/** cfi_table_rows() - rows made so far; cfi_table_asked() - addresses
 * looked up in libdw to make them; cfi_table_bytes() - what @t holds. */
size_t cfi_table_rows(const struct cfi_table *t);
size_t cfi_table_asked(const struct cfi_table *t);
size_t cfi_table_bytes(const struct cfi_table *t);

void cfi_table_free(struct cfi_table *t);

/*
 * Where a walk finds the row of an address: the module's table and bias.
 * @addr is the address looked up (pc, or pc - 1 for a return address).
 * Return: the row (with the rule pool into *@rules), or NULL when no
 * module with CFI covers @addr.
 */
typedef const struct cfi_row *(*cfi_find_fn)(void *arg, uint64_t addr,
					     const struct cfi_rule **rules, uint64_t *bias);

/* A sample's state for cfi_walk(). */
struct cfi_walk {
	unsigned nregs;
	uint64_t regs[CFI_MAX_REGS];  /* the sampled registers, DWARF numbering */
	uint64_t set[2];              /* which of them are known */
	const uint8_t *stack;         /* the stack copy: [sp, sp + size) */
	uint64_t sp, size;
	cfi_find_fn find;
	/* what a value read from the stack becomes (aarch64: without its
	 * pointer authentication code); NULL: as read */
	uint64_t (*fix)(void *arg, uint64_t v);
	void *arg;
	uint8_t fp_step;              /* enum cfi_fp_step */
	/* out */
	bool past_copy;               /* a read wanted stack above the copy */
};

enum cfi_walk_end {
	CFI_WALK_OUTERMOST, /* the caller is undefined or 0 (libdwfl's 0) */
	CFI_WALK_FULL,      /* @max addresses given */
	CFI_WALK_STOPPED,   /* libdwfl's -1 (the frame-pointer step failed) or
			     * its callback's stop at a caller of pc 0 */
	CFI_WALK_PC_ZERO,   /* the sampled pc was 0 (libdwfl's callback stop) */
	CFI_WALK_NO_RULE,   /* a frame the rows cannot unwind: use libdwfl */
};

/**
 * cfi_walk() - unwind from @pc with @w's registers (the walk overwrites
 * them), the pc first, then each caller's return address, the caller's
 * row looked up at the return address - 1 (where the call is).
 * @pcs: receives up to @max addresses; *@n how many.
 * Return: how it ended; CFI_WALK_NO_RULE leaves @pcs meaningless.
 */
enum cfi_walk_end cfi_walk(struct cfi_walk *w, uint64_t pc, uint64_t *pcs, size_t max, size_t *n);

#endif /* SYMBOLS_CFI_H */
