/* SPDX-License-Identifier: MIT */
/*
 * test_cfi.c - the CFI rows and their walk (src/symbols/cfi.c): a
 * hand-built stack walked by hand-built rows, return addresses looked up
 * at the byte before them, each way a walk ends, libdwfl's frame-pointer
 * step where it has no CFI; and the rows of a real
 * file (this test's own binary) against libdw's rules at every address of
 * its text, asked in an order that makes rows grow downwards.
 */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/symbols/cfi.h"

/* x86_64's DWARF registers the rows use */
enum { RBP = 6, RSP = 7, RIP = 16 };

struct fixture {
	struct cfi_table *t;
	uint8_t stack[256];
	uint64_t sp;
	unsigned finds;
};

static const struct cfi_row *find_in(void *arg, uint64_t addr, const struct cfi_rule **rules,
				     uint64_t *bias)
{
	struct fixture *f = arg;

	f->finds++;
	*bias = 0;
	return cfi_table_find(f->t, addr, rules);
}

static void put(struct fixture *f, uint64_t addr, uint64_t v)
{
	memcpy(f->stack + (addr - f->sp), &v, sizeof(v));
}

/*
 * Three functions: A at 0x1000 (CFA = rsp + 16, rbp saved at CFA - 16),
 * B at 0x2000 (CFA = rbp + 16, its frame pointer), C at 0x3000 whose
 * return address is undefined (the outermost). B's row ends at 0x2005:
 * its call returns to 0x2005, found only as 0x2004.
 */
static void three_frames(struct fixture *f)
{
	const struct cfi_rule a_rules[] = {
		{ .reg = RBP, .kind = CFI_OFFSET, .off = -16 },
		{ .reg = RSP, .kind = CFI_VAL_OFFSET, .off = 0 },
		{ .reg = RIP, .kind = CFI_OFFSET, .off = -8 },
	};
	const struct cfi_rule b_rules[] = {
		{ .reg = RBP, .kind = CFI_OFFSET, .off = -16 },
		{ .reg = RSP, .kind = CFI_VAL_OFFSET, .off = 0 },
		{ .reg = RIP, .kind = CFI_OFFSET, .off = -8 },
	};
	const struct cfi_rule c_rules[] = {
		{ .reg = RSP, .kind = CFI_VAL_OFFSET, .off = 0 },
	};
	struct cfi_row a = { .start = 0x1000, .end = 0x1100, .cfa_reg = RSP, .cfa_off = 16,
			     .ra = RIP, .nr_rules = 3 };
	struct cfi_row b = { .start = 0x2000, .end = 0x2005, .cfa_reg = RBP, .cfa_off = 16,
			     .ra = RIP, .nr_rules = 3 };
	struct cfi_row c = { .start = 0x3000, .end = 0x3100, .cfa_reg = RSP, .cfa_off = 8,
			     .ra = RIP, .nr_rules = 1 };

	memset(f, 0, sizeof(*f));
	f->t = cfi_table_new(17);
	assert_non_null(f->t);
	assert_non_null(cfi_table_add(f->t, &b, b_rules));
	assert_non_null(cfi_table_add(f->t, &a, a_rules));
	assert_non_null(cfi_table_add(f->t, &c, c_rules));
	/* overlapping rows are refused */
	a.start = 0x10ff;
	a.end = 0x1200;
	assert_null(cfi_table_add(f->t, &a, a_rules));
	f->sp = 0x7fff0000;
	/* A's frame: rbp saved at sp, return into B at sp + 8 */
	put(f, f->sp + 0, f->sp + 64);  /* B's rbp */
	put(f, f->sp + 8, 0x2005);
	/* B's frame (rbp = sp + 64): C's rbp at rbp, return into C at rbp + 8 */
	put(f, f->sp + 64, 0);
	put(f, f->sp + 72, 0x3010);
}

static void walk_init(struct cfi_walk *w, struct fixture *f, size_t size)
{
	memset(w, 0, sizeof(*w));
	w->nregs = 17;
	w->regs[RSP] = f->sp;
	w->regs[RBP] = 0x1234; /* A has not set up a frame pointer */
	w->set[0] = 1u << RSP | 1u << RBP;
	w->stack = f->stack;
	w->sp = f->sp;
	w->size = size;
	w->find = find_in;
	w->arg = f;
}

static void test_walk_three_frames(void **state)
{
	struct fixture f;
	struct cfi_walk w;
	uint64_t pcs[8];
	size_t n;

	(void)state;
	three_frames(&f);
	walk_init(&w, &f, sizeof(f.stack));
	assert_int_equal(cfi_walk(&w, 0x1010, pcs, 8, &n), CFI_WALK_OUTERMOST);
	assert_int_equal(n, 3);
	assert_int_equal(pcs[0], 0x1010);
	assert_int_equal(pcs[1], 0x2005); /* found in B's row as 0x2004 */
	assert_int_equal(pcs[2], 0x3010);
	assert_false(w.past_copy);
	assert_int_equal(f.finds, 3);
	cfi_table_free(f.t);
}

/*
 * A same-valued register is the callee's in the caller, known where it
 * was (the row keeps it as a mask: cfi_table_add()): A at 0x1000 (CFA =
 * rsp + 8, rbx the same), B at 0x2000 whose CFA is rbx + 8. With rbx
 * known in A, B's frame is found and its caller 0x3000 read; unknown, B
 * has no CFA and the walk ends at B.
 */
static void test_walk_same_value(void **state)
{
	enum { RBX = 3 };
	const struct cfi_rule a_rules[] = {
		{ .reg = RBX, .kind = CFI_SAME },
		{ .reg = RSP, .kind = CFI_VAL_OFFSET, .off = 0 },
		{ .reg = RIP, .kind = CFI_OFFSET, .off = -8 },
	};
	const struct cfi_rule b_rules[] = {
		{ .reg = RIP, .kind = CFI_OFFSET, .off = -8 },
	};
	struct cfi_row a = { .start = 0x1000, .end = 0x1100, .cfa_reg = RSP, .cfa_off = 8,
			     .ra = RIP, .nr_rules = 3 };
	struct cfi_row b = { .start = 0x2000, .end = 0x2100, .cfa_reg = RBX, .cfa_off = 8,
			     .ra = RIP, .nr_rules = 1 };
	const struct cfi_rule *rules;
	struct fixture f;
	struct cfi_walk w;
	uint64_t pcs[8];
	size_t n;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.t = cfi_table_new(17);
	assert_non_null(f.t);
	assert_non_null(cfi_table_add(f.t, &a, a_rules));
	assert_non_null(cfi_table_add(f.t, &b, b_rules));
	assert_int_equal(cfi_table_find(f.t, 0x1010, &rules)->same, 1u << RBX);
	assert_int_equal(cfi_table_find(f.t, 0x1010, &rules)->nr_rules, 2);
	f.sp = 0x7fff0000;
	put(&f, f.sp, 0x2010);          /* A returns into B */
	put(&f, f.sp + 64, 0x3010);     /* B's return address, at rbx */
	for (int known = 1; known >= 0; known--) {
		walk_init(&w, &f, sizeof(f.stack));
		w.regs[RBX] = f.sp + 64;
		w.set[0] = 1u << RSP | (known ? 1u << RBX : 0);
		cfi_walk(&w, 0x1010, pcs, 8, &n);
		if (known) {
			assert_int_equal(n, 3);
			assert_int_equal(pcs[1], 0x2010);
			assert_int_equal(pcs[2], 0x3010);
		} else {
			assert_int_equal(n, 2);
		}
	}
	cfi_table_free(f.t);
}

static void test_walk_limits(void **state)
{
	struct fixture f;
	struct cfi_walk w;
	uint64_t pcs[8];
	size_t n;

	(void)state;
	three_frames(&f);
	/* as many as asked for */
	walk_init(&w, &f, sizeof(f.stack));
	assert_int_equal(cfi_walk(&w, 0x1010, pcs, 2, &n), CFI_WALK_FULL);
	assert_int_equal(n, 2);
	/* B's return address is past a copy of 76 bytes: libdwfl's outermost,
	 * with the read past the copy said */
	walk_init(&w, &f, 76);
	assert_int_equal(cfi_walk(&w, 0x1010, pcs, 8, &n), CFI_WALK_OUTERMOST);
	assert_int_equal(n, 2);
	assert_true(w.past_copy);
	/* the CFA's register unknown: nothing at CFA + n can be read */
	walk_init(&w, &f, sizeof(f.stack));
	w.set[0] = 1u << RBP;
	assert_int_equal(cfi_walk(&w, 0x1010, pcs, 8, &n), CFI_WALK_OUTERMOST);
	assert_int_equal(n, 1);
	assert_false(w.past_copy);
	/* a return address of 0 ends it too */
	put(&f, f.sp + 8, 0);
	walk_init(&w, &f, sizeof(f.stack));
	assert_int_equal(cfi_walk(&w, 0x1010, pcs, 8, &n), CFI_WALK_OUTERMOST);
	assert_int_equal(n, 1);
	/* a sampled pc of 0 is for libdwfl's callback to judge */
	walk_init(&w, &f, sizeof(f.stack));
	assert_int_equal(cfi_walk(&w, 0, pcs, 8, &n), CFI_WALK_PC_ZERO);
	cfi_table_free(f.t);
}

static void test_walk_no_rule(void **state)
{
	const struct cfi_row sig = { .start = 0x4000, .end = 0x4100, .flags = CFI_ROW_NO_RULE };
	struct fixture f;
	struct cfi_walk w;
	uint64_t pcs[8];
	size_t n;

	(void)state;
	three_frames(&f);
	assert_non_null(cfi_table_add(f.t, &sig, NULL));
	/* no row where the pc is */
	walk_init(&w, &f, sizeof(f.stack));
	assert_int_equal(cfi_walk(&w, 0x5000, pcs, 8, &n), CFI_WALK_NO_RULE);
	/* a return address at the end of B's row (0x2005 itself is not B's):
	 * looked up at 0x2005 it would have no row */
	put(&f, f.sp + 8, 0x2006);
	walk_init(&w, &f, sizeof(f.stack));
	assert_int_equal(cfi_walk(&w, 0x1010, pcs, 8, &n), CFI_WALK_NO_RULE);
	/* a row the walk cannot follow */
	put(&f, f.sp + 8, 0x4010);
	walk_init(&w, &f, sizeof(f.stack));
	assert_int_equal(cfi_walk(&w, 0x1010, pcs, 8, &n), CFI_WALK_NO_RULE);
	cfi_table_free(f.t);
}

/*
 * Where libdwfl has no CFI, x86_64's frame-pointer step: the caller's rbp
 * at [rbp], its pc at [rbp + 8], rsp = rbp + 16 (then only those two
 * known); it fails without rbp, or where rsp would not move up, and a
 * caller of pc 0 stops the walk.
 */
static void test_walk_frame_pointer_step(void **state)
{
	const struct cfi_row nocfi = { .start = 0x6000, .end = 0x6100, .flags = CFI_ROW_NO_CFI };
	struct fixture f;
	struct cfi_walk w;
	uint64_t pcs[8];
	size_t n;

	(void)state;
	three_frames(&f);
	assert_non_null(cfi_table_add(f.t, &nocfi, NULL));
	/* the sampled pc in code without CFI, rbp = sp + 48: its caller
	 * at [sp + 56] is B's (0x2005), B's rbp at [sp + 48] */
	put(&f, f.sp + 48, f.sp + 64);
	put(&f, f.sp + 56, 0x2005);
	walk_init(&w, &f, sizeof(f.stack));
	w.regs[RBP] = f.sp + 48;
	/* without the step it is libdwfl's */
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_NO_RULE);
	walk_init(&w, &f, sizeof(f.stack));
	w.regs[RBP] = f.sp + 48;
	w.fp_step = CFI_FP_X86_64;
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_OUTERMOST);
	assert_int_equal(n, 3);
	assert_int_equal(pcs[0], 0x6010);
	assert_int_equal(pcs[1], 0x2005);
	assert_int_equal(pcs[2], 0x3010);
	/* rbp 0: no step */
	walk_init(&w, &f, sizeof(f.stack));
	w.regs[RBP] = 0;
	w.fp_step = CFI_FP_X86_64;
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_STOPPED);
	assert_int_equal(n, 1);
	/* rsp would not move up (rbp below the frame's rsp) */
	walk_init(&w, &f, sizeof(f.stack));
	w.regs[RSP] = f.sp + 200;
	w.regs[RBP] = f.sp + 48;
	w.fp_step = CFI_FP_X86_64;
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_STOPPED);
	assert_int_equal(n, 1);
	/* the return address past the copy */
	walk_init(&w, &f, 60);
	w.regs[RBP] = f.sp + 48;
	w.fp_step = CFI_FP_X86_64;
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_STOPPED);
	assert_true(w.past_copy);
	/* a caller of pc 0: the walk stops there, its frame not given */
	put(&f, f.sp + 56, 0);
	walk_init(&w, &f, sizeof(f.stack));
	w.regs[RBP] = f.sp + 48;
	w.fp_step = CFI_FP_X86_64;
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_STOPPED);
	assert_int_equal(n, 1);
	cfi_table_free(f.t);
}

/*
 * aarch64's step where there is no CFI: the caller is x30, its x30 and
 * x29 come from the frame record at x29, its sp is x29 + 16, which must be
 * above this frame's sp (unless x29 was 0); x30 of 0 stops.
 */
static void test_walk_frame_pointer_step_aarch64(void **state)
{
	const struct cfi_row nocfi = { .start = 0x6000, .end = 0x6100, .flags = CFI_ROW_NO_CFI };
	const struct cfi_row outer = { .start = 0x7000, .end = 0x7100, .cfa_reg = 31, .ra = 30 };
	struct fixture f;
	struct cfi_walk w;
	uint64_t pcs[8];
	size_t n;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.t = cfi_table_new(97);
	assert_non_null(f.t);
	assert_non_null(cfi_table_add(f.t, &nocfi, NULL));
	/* the caller at 0x7000 has a row with no rule for x30: the outermost */
	assert_non_null(cfi_table_add(f.t, &outer, NULL));
	f.sp = 0x7fff0000;
	put(&f, f.sp + 32, 0);      /* the frame record at x29 = sp + 32 */
	put(&f, f.sp + 40, 0x7010);
	memset(&w, 0, sizeof(w));
	w.nregs = 97;
	w.regs[29] = f.sp + 32;
	w.regs[30] = 0x6020;        /* the leaf's caller, not saved yet */
	w.regs[31] = f.sp;
	w.set[0] = 7ULL << 29;
	w.stack = f.stack;
	w.sp = f.sp;
	w.size = sizeof(f.stack);
	w.find = find_in;
	w.arg = &f;
	w.fp_step = CFI_FP_AARCH64;
	/* 0x6010 (no CFI) -> x30 0x6020 (no CFI, looked up at 0x601f) -> the
	 * frame record's 0x7010 -> the outermost */
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_OUTERMOST);
	assert_int_equal(n, 3);
	assert_int_equal(pcs[1], 0x6020);
	assert_int_equal(pcs[2], 0x7010);
	/* x30 of 0: no caller */
	w.regs[29] = f.sp + 32;
	w.regs[30] = 0;
	w.regs[31] = f.sp;
	w.set[0] = 7ULL << 29;
	w.set[1] = 0;
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_STOPPED);
	assert_int_equal(n, 1);
	/* x29 below sp: the stack would not move up */
	w.regs[29] = f.sp - 64;
	w.regs[30] = 0x6020;
	w.regs[31] = f.sp;
	w.set[0] = 7ULL << 29;
	assert_int_equal(cfi_walk(&w, 0x6010, pcs, 8, &n), CFI_WALK_STOPPED);
	assert_int_equal(n, 1);
	cfi_table_free(f.t);
}

/* The .text section of @elf: [*lo, *hi). */
static void text_of(Elf *elf, uint64_t *lo, uint64_t *hi)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".text") == 0) {
			*lo = sh.sh_addr;
			*hi = sh.sh_addr + sh.sh_size;
			return;
		}
	}
	fail_msg("no .text");
}

/*
 * The row found for @addr against libdw's frame there: the CFA's register
 * and offset and the rules of rbx, rbp, rsp, r12-r15 and the return address.
 */
static void same_as_libdw(struct cfi_table *t, Dwarf_CFI *cfi, uint64_t addr, size_t *checked)
{
	const struct cfi_rule *rules;
	const struct cfi_row *row = cfi_table_find(t, addr, &rules);
	Dwarf_Frame *fr;
	Dwarf_Op *ops;
	size_t nops;
	static const int regs[] = { 3, 6, 7, 12, 13, 14, 15, 16 };

	if (dwarf_cfi_addrframe(cfi, addr, &fr) != 0) {
		assert_null(row);
		return;
	}
	assert_non_null(row);
	assert_true(row->start <= addr && addr < row->end);
	if (row->flags & CFI_ROW_NO_RULE) {
		free(fr);
		return;
	}
	assert_int_equal(dwarf_frame_cfa(fr, &ops, &nops), 0);
	assert_int_equal(nops, 1);
	if (ops[0].number != row->cfa_reg || (int64_t)ops[0].number2 != row->cfa_off)
		fail_msg("at 0x%lx: CFA r%u%+ld, libdw's r%lu%+ld", (unsigned long)addr,
			 row->cfa_reg, (long)row->cfa_off, (unsigned long)ops[0].number,
			 (long)ops[0].number2);
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		Dwarf_Op mem[3], *rops;
		const struct cfi_rule *r = NULL;
		int64_t off = 0;

		assert_int_equal(dwarf_frame_register(fr, regs[i], mem, &rops, &nops), 0);
		for (uint32_t k = 0; k < row->nr_rules; k++)
			if (rules[row->first_rule + k].reg == regs[i])
				r = &rules[row->first_rule + k];
		if (nops == 0 && rops) {
			assert_null(r); /* undefined */
			assert_false((row->same >> regs[i]) & 1);
			continue;
		}
		if (nops == 0) {
			/* same value: in the row's mask, not its rules */
			assert_null(r);
			assert_true((row->same >> regs[i]) & 1);
			continue;
		}
		assert_non_null(r);
		assert_false((row->same >> regs[i]) & 1);
		if (nops >= 2 && rops[1].atom == DW_OP_plus_uconst)
			off = (int64_t)rops[1].number;
		assert_int_equal(rops[0].atom, DW_OP_call_frame_cfa);
		assert_int_equal(r->kind, rops[nops - 1].atom == DW_OP_stack_value ? CFI_VAL_OFFSET
									       : CFI_OFFSET);
		assert_int_equal(r->off, off);
	}
	(*checked)++;
	free(fr);
}

static void rows_of(const char *path)
{
	struct cfi_table *t = cfi_table_open(path, 17, EM_X86_64);
	uint64_t lo = 0, hi = 0, span;
	size_t checked = 0;
	Dwarf_CFI *cfi;
	Elf *elf;
	int fd;

	assert_non_null(t);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	cfi = dwarf_getcfi_elf(elf);
	assert_non_null(cfi);
	text_of(elf, &lo, &hi);
	span = hi - lo < 0x10000 ? hi - lo : 0x10000;
	/* downwards first (each row is met at its last byte first and grows
	 * down to its start), then upwards, then downwards again: every
	 * address's row is libdw's there, rows after an epilogue included */
	for (uint64_t a = lo + span; a-- > lo;)
		same_as_libdw(t, cfi, a, &checked);
	for (uint64_t a = lo; a < lo + span; a++)
		same_as_libdw(t, cfi, a, &checked);
	for (uint64_t a = lo + span; a-- > lo;)
		same_as_libdw(t, cfi, a, &checked);
	assert_true(checked > span);
	assert_true(cfi_table_rows(t) > 100);
	dwarf_cfi_end(cfi);
	elf_end(elf);
	close(fd);
	cfi_table_free(t);
}

/* This binary's rows, and libdw's own (a larger -O2 library, with
 * epilogues in the middle of functions: DW_CFA_remember_state). */
static void test_rows_of_a_file(void **state)
{
	Dl_info dl;

	(void)state;
#ifndef __x86_64__
	skip();
#endif
	rows_of("/proc/self/exe");
	assert_true(dladdr((void *)dwarf_cfi_addrframe, &dl) && dl.dli_fname);
	rows_of(dl.dli_fname);
}

static void test_open_refuses(void **state)
{
	(void)state;
	assert_null(cfi_table_open("/nonexistent/file", 17, EM_X86_64));
	assert_null(cfi_table_open("/proc/self/exe", 97, EM_AARCH64 == EM_X86_64 ? 0 : EM_AARCH64));
	assert_null(cfi_table_new(CFI_MAX_REGS + 1));
}
/*
 * A row found once is found again from the table's cache of addresses
 * (cfi_table_find()), and still after rows are added before it (their
 * places move: the cache is cleared): each address gives its own row,
 * over rounds of lookups between adds, the last address of a row and
 * the first past it included.
 */
static void test_find_after_adds(void **state)
{
	struct cfi_table *t = cfi_table_new(17);
	const struct cfi_rule *rules;
	const struct cfi_rule rule = { .reg = RSP, .kind = CFI_VAL_OFFSET, .off = 0 };

	(void)state;
	assert_non_null(t);
	/* rows [0x10000 - 0x100 k, + 0x80), added from the highest down */
	for (int k = 0; k < 300; k++) {
		struct cfi_row r = { .start = 0x10000 - 0x100 * (uint64_t)k, .cfa_reg = RSP,
				     .cfa_off = k, .ra = RIP, .nr_rules = 1 };

		r.end = r.start + 0x80;
		assert_non_null(cfi_table_add(t, &r, &rule));
		for (int round = 0; round < 2; round++)
			for (int i = 0; i <= k; i++) {
				uint64_t lo = 0x10000 - 0x100 * (uint64_t)i;
				const struct cfi_row *f = cfi_table_find(t, lo + 0x7f, &rules);

				assert_non_null(f);
				assert_int_equal(f->start, lo);
				assert_int_equal(f->cfa_off, i);
				f = cfi_table_find(t, lo, &rules);
				assert_non_null(f);
				assert_int_equal(f->cfa_off, i);
				assert_null(cfi_table_find(t, lo + 0x80, &rules));
			}
	}
	cfi_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_three_frames),
		cmocka_unit_test(test_walk_same_value),
		cmocka_unit_test(test_walk_limits),
		cmocka_unit_test(test_walk_no_rule),
		cmocka_unit_test(test_walk_frame_pointer_step),
		cmocka_unit_test(test_walk_frame_pointer_step_aarch64),
		cmocka_unit_test(test_rows_of_a_file),
		cmocka_unit_test(test_open_refuses),
		cmocka_unit_test(test_find_after_adds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
