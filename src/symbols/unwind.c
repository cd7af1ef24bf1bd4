/* SPDX-License-Identifier: MIT */
/*
 * unwind.c - the user part of `--call-graph dwarf` samples, unwound with
 * libdwfl from the copied registers (REGS_USER) and stack (STACK_USER).
 *
 * One Dwfl per process, holding the files of its executable maps (found by
 * build id, as for naming) at their load bias, attached once to a thread
 * state whose callbacks read the current sample: set_initial_registers maps
 * perf's register order to DWARF's, memory_read serves [SP, SP + dyn_size)
 * of the stack copy. The Dwfl is rebuilt when the process's maps change.
 * x86_64 and aarch64.
 *
 * Most samples do not reach libdwfl: the CFI of each file is read once
 * into rows by address (cfi.c), and a sample is walked through its stack
 * copy by those rows with its registers in an array, no allocation per
 * sample or frame and no Dwfl built for its process; where libdwfl has no
 * CFI (no module, no FDE), the walk takes the frame-pointer step libdwfl
 * takes. A sample that meets a frame the rows cannot follow (a PLT's or a
 * signal frame's expression rules) is unwound whole by libdwfl instead, as
 * before: the rows give libdwfl's answers for the rest, so the two agree
 * sample for sample. PERFPORT_UNWIND=libdw unwinds every sample with
 * libdwfl (the tests compare the two).
 *
 * Also the caller that an aarch64 frame-pointer callchain misses: a
 * function that has not saved the link register yet (a leaf without a
 * frame, or one still in its prologue) has its caller only in lr, and the
 * frame records the kernel walks start at its caller's caller. perf
 * records lr with every -g sample on arm64 for this; where the CFI at the
 * sampled pc says the return address is still in x30, lr goes in between,
 * as perf's own report does (arch/arm64 get_leaf_frame_caller).
 */
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "cfi.h"
#include "priv.h"

#define UW_CACHE 64   /* processes with a live Dwfl */

/* perf's x86_64 register numbers (arch/x86/include/uapi/asm/perf_regs.h) */
enum {
	X86_AX, X86_BX, X86_CX, X86_DX, X86_SI, X86_DI, X86_BP, X86_SP, X86_IP,
	X86_FLAGS, X86_CS, X86_SS, X86_DS, X86_ES, X86_FS, X86_GS,
	X86_R8, X86_R9, X86_R10, X86_R11, X86_R12, X86_R13, X86_R14, X86_R15,
};

/* DWARF register n (0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip) from perf's. */
static const int x86_dwarf_from_perf[17] = {
	X86_AX, X86_DX, X86_CX, X86_BX, X86_SI, X86_DI, X86_BP, X86_SP,
	X86_R8, X86_R9, X86_R10, X86_R11, X86_R12, X86_R13, X86_R14, X86_R15, X86_IP,
};

/* perf's arm64 registers (arch/arm64/include/uapi/asm/perf_regs.h): x0..x30, sp, pc;
 * DWARF's are x0..x30, sp; the pc is set on its own. */
enum { ARM64_LR = 30, ARM64_SP = 31, ARM64_PC = 32 };

enum uw_arch { UW_NONE, UW_X86_64, UW_AARCH64 };

static enum uw_arch uw_arch_of(const char *arch)
{
	if (!arch)
		return UW_NONE;
	if (strcmp(arch, "x86_64") == 0)
		return UW_X86_64;
	if (strcmp(arch, "aarch64") == 0 || strcmp(arch, "arm64") == 0)
		return UW_AARCH64;
	return UW_NONE;
}

struct uw_sample {
	enum uw_arch arch;
	uint32_t tid;
	const struct perf_sample *s;
	const struct map *maps; /* the process's executable maps, sorted */
	size_t nr_maps;
	uint64_t start_pc;     /* unwinding starts here instead of at the pc: the
				* caller of a leaf without CFI (its lr) */
	uint64_t sp;
	uint64_t *pcs;
	size_t n, max;
	bool past_copy;        /* the unwinder wanted stack above the copy's end */
};

struct uw_proc {
	uint32_t pid;
	uint64_t gen;
	uint64_t used;         /* for eviction: the last sample that used it */
	Dwfl *dwfl;
	bool attached;
	struct uw_sample cur;  /* what the callbacks read */
};

static bool perf_reg(const struct perf_sample *s, int reg, uint64_t *val)
{
	uint64_t bit = 1ULL << reg;

	if (!(s->user_regs_mask & bit) || !s->user_regs)
		return false;
	*val = s->user_regs[__builtin_popcountll(s->user_regs_mask & (bit - 1))];
	return true;
}

/*
 * A user return address without its pointer authentication code: the
 * bits above the 48-bit user address space that PAC-enabled code signs
 * lr with (bit 55 is 0 for user addresses; Linux's arm64 user space is
 * 48 bits unless a program asks a 52-bit kernel for more).
 */
static uint64_t strip_pac(uint64_t addr)
{
	if ((addr >> 48) && !((addr >> 55) & 1))
		return addr & ((1ULL << 48) - 1);
	return addr;
}

/*
 * @v without a pointer authentication code where it is a signed return
 * address: stripped, it lies in one of the process's executable maps.
 * libdwfl reads return addresses (saved lr, x30 itself) as they are, and
 * code built with -mbranch-protection signs them; other values (stack
 * addresses, saved registers' data) pass unchanged.
 */
static uint64_t unsign(const struct uw_sample *u, uint64_t v)
{
	uint64_t a = strip_pac(v);
	size_t lo = 0, hi = u->nr_maps;

	if (a == v || u->arch != UW_AARCH64)
		return v;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a < u->maps[mid].start)
			hi = mid;
		else if (a >= u->maps[mid].end)
			lo = mid + 1;
		else
			return a;
	}
	return v;
}

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uw_proc *p = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return (pid_t)p->cur.tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw_proc *p = arg;
	const struct perf_sample *s = p->cur.s;

	(void)dwfl;
	if (addr < p->cur.sp || addr - p->cur.sp > s->user_stack_dyn_size ||
	    s->user_stack_dyn_size - (addr - p->cur.sp) < sizeof(*result)) {
		/* outside the copied stack; above it, the copy was too short
		 * (libdwfl then ends the chain as if it were the outermost) */
		if (addr >= p->cur.sp)
			p->cur.past_copy = true;
		return false;
	}
	memcpy(result, s->user_stack + (addr - p->cur.sp), sizeof(*result));
	*result = unsign(&p->cur, *result);
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct uw_proc *p = thread_arg;
	Dwarf_Word regs[32];

	if (p->cur.arch == UW_AARCH64) {
		uint64_t pc;

		for (int i = 0; i < 32; i++) {
			uint64_t v;

			if (!perf_reg(p->cur.s, i, &v))
				return false;
			regs[i] = i == ARM64_LR ? unsign(&p->cur, v) : v;
		}
		if (!perf_reg(p->cur.s, ARM64_PC, &pc))
			return false;
		dwfl_thread_state_register_pc(thread, p->cur.start_pc ? p->cur.start_pc : pc);
		return dwfl_thread_state_registers(thread, 0, 32, regs);
	}
	for (int i = 0; i < 17; i++) {
		uint64_t v;

		if (!perf_reg(p->cur.s, x86_dwarf_from_perf[i], &v))
			return false;
		regs[i] = v;
	}
	return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/*
 * No separate debug files for unwinding: .eh_frame in the binaries is what
 * the runtime itself unwinds with, and loading (often compressed)
 * .debug_frame sections once per process cost more than the unwinding.
 */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod; (void)userdata; (void)modname; (void)base; (void)file_name;
	(void)debuglink_file; (void)debuglink_crc;
	*debuginfo_file_name = NULL;
	return -1;
}

static const Dwfl_Callbacks report_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = no_debuginfo,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct uw_sample *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	u->pcs[u->n++] = pc;
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Report every executable map's file at its load bias. */
static bool build_dwfl(struct symbolizer *s, struct uw_proc *p, const struct map *maps, size_t nr)
{
	bool any = false;

	p->dwfl = dwfl_begin(&report_callbacks);
	if (!p->dwfl)
		return false;
	dwfl_report_begin(p->dwfl);
	for (size_t i = 0; i < nr; i++) {
		const struct map *mp = &maps[i];
		const struct dso_state *st;
		uint64_t bias;
		bool dup = false;

		if (mp->dso->kind != DSO_USER && mp->dso->kind != DSO_VDSO)
			continue;
		for (size_t j = 0; j < i; j++)
			dup = dup || maps[j].dso == mp->dso;
		if (dup)
			continue; /* one module per file */
		st = sym_dso_loaded(s, mp->dso);
		if (!st || !sym_dso_bias(st, mp->start, mp->pgoff, &bias))
			continue;
		if (dwfl_report_elf(p->dwfl, mp->dso->path, sym_dso_path(st), -1, bias, false))
			any = true;
		else
			pp_debug("unwind: cannot report '%s': %s", mp->dso->path, dwfl_errmsg(-1));
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!any)
		return false;
	p->attached = dwfl_attach_state(p->dwfl, NULL, (pid_t)p->pid, &thread_callbacks, p);
	if (!p->attached)
		pp_debug("unwind: cannot attach pid %u: %s", p->pid, dwfl_errmsg(-1));
	return p->attached;
}

static struct uw_proc *proc_for(struct symbolizer *s, uint32_t pid, const struct map *maps,
				size_t nr, uint64_t gen)
{
	struct uw_proc *p = NULL, *victim = NULL;

	if (!s->uw) {
		s->uw = calloc(UW_CACHE, sizeof(*s->uw));
		if (!s->uw)
			return NULL;
	}
	for (size_t i = 0; i < UW_CACHE; i++) {
		struct uw_proc *q = &s->uw[i];

		if (q->dwfl && q->pid == pid) {
			p = q;
			break;
		}
		if (!victim || !q->dwfl || (victim->dwfl && q->used < victim->used))
			victim = q;
	}
	if (p && p->gen != gen) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
	if (!p || !p->dwfl) {
		if (!p) {
			p = victim;
			if (p->dwfl)
				dwfl_end(p->dwfl);
		}
		memset(p, 0, sizeof(*p));
		p->pid = pid;
		p->gen = gen;
		if (!build_dwfl(s, p, maps, nr)) {
			/* keep the failed Dwfl: retrying every sample would not help */
			if (!p->dwfl)
				return NULL;
		}
	}
	p->used = ++s->uw_clock;
	return p->attached ? p : NULL;
}

/*
 * A frame-pointer callchain of aarch64 with lr recorded and no stack copy:
 * the cheap tests first (this runs for every sample), the header's
 * architecture by name last.
 */
static bool leaf_caller_case(const struct symbolizer *s, const struct perf_sample *smp)
{
	uint64_t lr;

	return smp->callchain_nr && !smp->user_stack && perf_reg(smp, ARM64_LR, &lr) &&
	       uw_arch_of(s->hdr->arch) == UW_AARCH64;
}

bool sym_unwind_sample_wanted(const struct symbolizer *s, const struct perf_event *ev)
{
	if ((ev->evsel->attr.sample_type & PERF_SAMPLE_STACK_USER) && ev->sample.user_stack)
		return true;
	return leaf_caller_case(s, &ev->sample);
}

/* Where the return address of the function at @pc is, by its CFI. */
enum ra_rule { RA_NO_CFI, RA_IN_LR, RA_ELSEWHERE };

/*
 * The rule for the return address at @pc: still in x30 (the CFI says
 * "same value", or x30 itself: the caller has not been saved), elsewhere
 * (saved in memory, or undefined: the outermost frame), or no CFI at all
 * (the kernel's arm64 vDSO has none; JIT code; a file not found).
 */
static enum ra_rule ra_rule_at(Dwfl *dwfl, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame = NULL;
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	enum ra_rule rule = RA_ELSEWHERE;

	if (!mod)
		return RA_NO_CFI;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) {
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			return RA_NO_CFI;
	}
	if (dwarf_frame_register(frame, ARM64_LR, ops_mem, &ops, &nops) == 0 &&
	    ((nops == 0 && ops == NULL) ||
	     (nops == 1 && (ops[0].atom == DW_OP_reg30 ||
			    (ops[0].atom == DW_OP_regx && ops[0].number == ARM64_LR)))))
		rule = RA_IN_LR;
	free(frame);
	return rule;
}

/*
 * Whether the caller of the function at @pc is in x30: the CFI says so,
 * or there is none and the function is taken for a leaf, as perf's
 * unwinders do.
 */
static bool ra_in_lr(Dwfl *dwfl, uint64_t pc)
{
	return ra_rule_at(dwfl, pc) != RA_ELSEWHERE;
}

/*
 * The user part of an aarch64 -g sample with the caller lr holds put in
 * after the sampled pc, when the CFI says it is not saved yet and the
 * callchain's next entry is not that address already. 0 (the callchain
 * as it is) otherwise, and for a chain of one user entry (as perf).
 */
static size_t leaf_caller(struct symbolizer *s, const struct machine *m, const struct perf_event *ev,
			  uint64_t *pcs, size_t max)
{
	const struct perf_sample *smp = &ev->sample;
	const struct map *maps;
	struct uw_proc *p;
	uint64_t gen, lr;
	size_t nr, first = smp->callchain_nr, n = 0;

	for (size_t i = 0; i < smp->callchain_nr; i++)
		if (smp->callchain[i] == (uint64_t)PERF_CONTEXT_USER) {
			first = i + 1;
			break;
		}
	if (first + 2 > smp->callchain_nr || max < 3 || !perf_reg(smp, ARM64_LR, &lr))
		return 0;
	lr = strip_pac(lr);
	if (!lr || lr == smp->callchain[first + 1])
		return 0;
	maps = machine_process_maps(m, smp->pid, &nr, &gen);
	if (!nr || !(p = proc_for(s, smp->pid, maps, nr, gen)) ||
	    !ra_in_lr(p->dwfl, smp->callchain[first]))
		return 0;
	pcs[n++] = smp->callchain[first];
	pcs[n++] = lr;
	for (size_t i = first + 1; i < smp->callchain_nr && n < max; i++) {
		if (smp->callchain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			break;
		pcs[n++] = smp->callchain[i];
	}
	s->stats.leaf_callers++;
	return n;
}

/*
 * The rows' side (cfi.h). A process's executable maps as libdwfl's report
 * of them (build_dwfl()) makes modules: the first map of each file, at the
 * bias libdwfl derives from it, covering the file's loaded extent; the
 * tables of rows are per file (dso), shared by every process mapping it.
 */
struct uw_mod {
	struct cfi_table *t;   /* NULL: no module, or one without rows */
	uint64_t bias, lo, hi; /* libdwfl's module bias and [lo, hi) */
	bool made;
	bool unknown;          /* t NULL, but libdwfl may have a module there */
};

struct uw_mods {
	uint32_t pid;
	uint64_t gen;
	uint64_t used;
	bool live;
	int8_t any;            /* some map has a module (libdwfl's Dwfl attaches):
				* 1 yes, 0 no, -1 not known yet */
	struct uw_mod *mods;   /* by index in the process's maps */
	size_t cap;
};

struct uw_cfi {
	bool libdw_only;       /* PERFPORT_UNWIND=libdw */
	struct cfi_table **tables; /* by dso id */
	uint8_t *tried;
	size_t cap;
	struct uw_mods procs[UW_CACHE];
	struct uw_mods *last;  /* the one asked for last */
	uint64_t clock;
	uint64_t walked, fallbacks;
};

/* What cfi_walk()'s callbacks read for one sample. */
struct uw_walk_ctx {
	struct symbolizer *s;
	enum uw_arch arch;
	const struct map *maps;
	size_t nr;
	struct uw_mods *pm;
	struct uw_sample u;    /* for unsign() */
};

static struct uw_cfi *uw_cfi_get(struct symbolizer *s)
{
	if (!s->uw_cfi) {
		const char *e = getenv("PERFPORT_UNWIND");

		s->uw_cfi = calloc(1, sizeof(*s->uw_cfi));
		if (!s->uw_cfi)
			return NULL;
		s->uw_cfi->libdw_only = e && strcmp(e, "libdw") == 0;
	}
	return s->uw_cfi;
}

/* The rows of @d's file, opened at its first use. NULL: none. */
static struct cfi_table *table_of(struct uw_cfi *c, const struct dso *d, const struct dso_state *st,
				  enum uw_arch arch)
{
	if (d->id >= c->cap) {
		size_t cap = c->cap ? c->cap : 64;
		struct cfi_table **t;
		uint8_t *tried;

		while (cap <= d->id)
			cap *= 2;
		t = realloc(c->tables, cap * sizeof(*t));
		if (!t)
			return NULL;
		c->tables = t;
		tried = realloc(c->tried, cap);
		if (!tried)
			return NULL;
		c->tried = tried;
		memset(&c->tables[c->cap], 0, (cap - c->cap) * sizeof(*t));
		memset(&c->tried[c->cap], 0, cap - c->cap);
		c->cap = cap;
	}
	if (!c->tried[d->id]) {
		c->tried[d->id] = 1;
		c->tables[d->id] = cfi_table_open(sym_dso_path(st), arch == UW_X86_64 ? 17 : 97,
						  arch == UW_X86_64 ? EM_X86_64 : EM_AARCH64);
		if (!c->tables[d->id])
			pp_debug("unwind: no CFI rows of '%s': libdwfl unwinds its frames", d->path);
	}
	return c->tables[d->id];
}

/* The module of map @i as build_dwfl() reports it. */
static const struct uw_mod *mod_of(struct uw_walk_ctx *w, size_t i)
{
	struct uw_mod *m = &w->pm->mods[i];
	const struct map *mp = &w->maps[i];
	const struct dso_state *st;
	uint64_t base, first, end;
	bool exec;
	size_t f = 0;

	if (m->made)
		return m;
	m->made = true;
	m->t = NULL;
	if (mp->dso->kind != DSO_USER && mp->dso->kind != DSO_VDSO)
		return m;
	while (w->maps[f].dso != mp->dso)
		f++;
	if (f != i) {
		*m = *mod_of(w, f); /* one module per file: the first map's */
		return m;
	}
	st = sym_dso_loaded(w->s, mp->dso);
	if (!st || !sym_dso_bias(st, mp->start, mp->pgoff, &base))
		return m;
	m->t = table_of(w->s->uw_cfi, mp->dso, st, w->arch);
	if (!m->t) {
		m->unknown = true;
		return m;
	}
	/* __libdwfl_elf_address_range() with add_p_vaddr false */
	cfi_table_layout(m->t, &exec, &first, &end);
	m->bias = exec ? 0 : base - first;
	m->lo = exec ? first : base;
	m->hi = m->bias + end;
	return m;
}

/* The row of no CFI: libdwfl's frame-pointer step (x86_64). */
static const struct cfi_row no_cfi_row = { .flags = CFI_ROW_NO_CFI };

/*
 * Where libdwfl finds no CFI for @addr: its frame-pointer step, when the
 * process has a module at all (else libdwfl cannot attach to it: the
 * sample is its to count as not unwindable).
 */
static const struct cfi_row *no_cfi(struct uw_walk_ctx *w)
{
	if (w->pm->any < 0) {
		w->pm->any = 0;
		for (size_t i = 0; i < w->nr && !w->pm->any; i++)
			w->pm->any = mod_of(w, i)->t != NULL;
	}
	return w->pm->any ? &no_cfi_row : NULL;
}

/* The index in the process's sorted maps of the one holding @addr; -1 none. */
static long map_at(const struct uw_walk_ctx *w, uint64_t addr)
{
	size_t lo = 0, hi = w->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < w->maps[mid].start)
			hi = mid;
		else if (addr >= w->maps[mid].end)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

static const struct cfi_row *walk_find(void *arg, uint64_t addr, const struct cfi_rule **rules,
				       uint64_t *bias)
{
	struct uw_walk_ctx *w = arg;
	long i = map_at(w, addr);
	const struct uw_mod *m;
	const struct cfi_row *r;

	if (i < 0)
		return no_cfi(w);
	m = mod_of(w, (size_t)i);
	if (!m->t || addr < m->lo || addr >= m->hi)
		return m->unknown ? NULL : no_cfi(w);
	*bias = m->bias;
	r = cfi_table_find(m->t, addr - m->bias, rules);
	if (!r && !cfi_table_debug_frame(m->t))
		return no_cfi(w);
	return r;
}

/* Whether libdwfl has a module at @addr (dwfl_addrmodule()): 1 yes, 0 no,
 * -1 not known (a file it may have reported that has no rows here). */
static int module_at(struct uw_walk_ctx *w, uint64_t addr)
{
	long i = map_at(w, addr);
	const struct uw_mod *m;

	if (i < 0)
		return 0;
	m = mod_of(w, (size_t)i);
	if (m->unknown)
		return -1;
	return m->t && addr >= m->lo && addr < m->hi;
}

static uint64_t walk_fix(void *arg, uint64_t v)
{
	const struct uw_walk_ctx *w = arg;

	return unsign(&w->u, v);
}

/* The process's modules for this generation of its maps. NULL out of memory. */
static struct uw_mods *mods_for(struct uw_cfi *c, uint32_t pid, uint64_t gen, size_t nr)
{
	struct uw_mods *p = c->last, *victim = NULL;

	if (p && p->live && p->pid == pid && p->gen == gen) {
		p->used = ++c->clock;
		return p;
	}
	p = NULL;
	for (size_t i = 0; i < UW_CACHE; i++) {
		struct uw_mods *q = &c->procs[i];

		if (q->live && q->pid == pid) {
			p = q;
			break;
		}
		if (!victim || !q->live || (victim->live && q->used < victim->used))
			victim = q;
	}
	if (!p) {
		p = victim;
		p->live = false;
	}
	if (!p->live || p->gen != gen) {
		if (nr > p->cap) {
			struct uw_mod *v = realloc(p->mods, nr * sizeof(*v));

			if (!v) {
				p->live = false;
				return NULL;
			}
			p->mods = v;
			p->cap = nr;
		}
		memset(p->mods, 0, nr * sizeof(*p->mods));
		p->any = -1;
		p->pid = pid;
		p->gen = gen;
		p->live = true;
	}
	p->used = ++c->clock;
	c->last = p;
	return p;
}

/*
 * The sample unwound by the rows into @pcs: true with *@n set (and the
 * counts libdwfl's unwinding would have made), false where libdwfl must
 * unwind it.
 */
static bool unwind_by_rows(struct symbolizer *s, struct uw_cfi *c, enum uw_arch arch,
			   const struct perf_sample *smp, const struct map *maps, size_t nr,
			   uint64_t gen, uint64_t sp, uint64_t *pcs, size_t max, size_t *n)
{
	struct uw_walk_ctx w = { .s = s, .arch = arch, .maps = maps, .nr = nr };
	struct cfi_walk cw;
	uint64_t pc, byperf[64];
	enum cfi_walk_end end;

	w.pm = mods_for(c, smp->pid, gen, nr);
	if (!w.pm)
		return false;
	w.u = (struct uw_sample){ .arch = arch, .maps = maps, .nr_maps = nr };
	cw.nregs = arch == UW_X86_64 ? 17 : 97;
	cw.set[0] = cw.set[1] = 0;
	/* perf's registers by number, in one pass over the mask */
	if (!smp->user_regs)
		return false;
	for (uint64_t m = smp->user_regs_mask, k = 0; m; m &= m - 1)
		byperf[__builtin_ctzll(m)] = smp->user_regs[k++];
	if (arch == UW_AARCH64) {
		if ((smp->user_regs_mask & 0x1ffffffffULL) != 0x1ffffffffULL)
			return false; /* x0-x30, sp, pc */
		memcpy(cw.regs, byperf, 32 * sizeof(*cw.regs));
		cw.regs[ARM64_LR] = unsign(&w.u, cw.regs[ARM64_LR]);
		cw.set[0] = 0xffffffffULL;
		pc = byperf[ARM64_PC];
	} else {
		for (int i = 0; i < 17; i++) {
			if (!(smp->user_regs_mask & (1ULL << x86_dwarf_from_perf[i])))
				return false;
			cw.regs[i] = byperf[x86_dwarf_from_perf[i]];
		}
		cw.set[0] = 0x1ffffULL;
		pc = cw.regs[16];
	}
	cw.stack = smp->user_stack;
	cw.sp = sp;
	cw.size = smp->user_stack_dyn_size;
	cw.find = walk_find;
	cw.fix = arch == UW_AARCH64 ? walk_fix : NULL;
	cw.fp_step = arch == UW_X86_64 ? CFI_FP_X86_64 : CFI_FP_AARCH64;
	cw.arg = &w;
	cw.past_copy = false;
	/* sym_unwind()'s leaf without CFI (aarch64): the pc, then the walk
	 * from lr as the first frame */
	if (arch == UW_AARCH64 && max > 1 && pc && cw.regs[ARM64_LR] != pc && cw.regs[ARM64_LR]) {
		const struct cfi_rule *rules;
		uint64_t bias;
		const struct cfi_row *r = walk_find(&w, pc, &rules, &bias);

		if (!r)
			return false;
		if (r->flags & CFI_ROW_NO_CFI) {
			int in = module_at(&w, cw.regs[ARM64_LR]);

			if (in < 0)
				return false;
			if (in) {
				pcs[0] = pc;
				end = cfi_walk(&cw, cw.regs[ARM64_LR], pcs + 1, max - 1, n);
				++*n;
				goto walked;
			}
		}
	}
	end = cfi_walk(&cw, pc, pcs, max, n);
walked:
	if (end == CFI_WALK_NO_RULE || end == CFI_WALK_PC_ZERO)
		return false;
	/* as sym_unwind() counts libdwfl's: stopped, or an outermost frame
	 * reached with a read past the copy on the way, stopped early */
	if ((end == CFI_WALK_STOPPED || cw.past_copy) && *n < max) {
		s->stats.unwind_stopped++;
		if (cw.past_copy && smp->user_stack_dyn_size >= smp->user_stack_size)
			s->stats.unwind_truncated++;
	}
	s->stats.unwound++;
	return true;
}

static void uw_cfi_free(struct symbolizer *s)
{
	struct uw_cfi *c = s->uw_cfi;
	size_t files = 0, rows = 0, asked = 0, bytes = 0;

	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		if (c->tables[i]) {
			files++;
			rows += cfi_table_rows(c->tables[i]);
			asked += cfi_table_asked(c->tables[i]);
			bytes += cfi_table_bytes(c->tables[i]);
			cfi_table_free(c->tables[i]);
		}
	if (c->walked || c->fallbacks)
		pp_debug("unwind: %" PRIu64 " samples by CFI rows, %" PRIu64 " by libdwfl; "
			 "%zu rows of %zu files (%zu addresses asked of libdw), %zu bytes",
			 c->walked, c->fallbacks, rows, files, asked, bytes);
	for (size_t i = 0; i < UW_CACHE; i++)
		free(c->procs[i].mods);
	free(c->tables);
	free(c->tried);
	free(c);
	s->uw_cfi = NULL;
}

size_t sym_unwind(struct symbolizer *s, const struct machine *m, const struct perf_event *ev,
		  uint64_t *pcs, size_t max)
{
	const struct perf_sample *smp = &ev->sample;
	enum uw_arch arch = uw_arch_of(s->hdr->arch);
	const struct map *maps;
	struct uw_proc *p;
	struct uw_cfi *c;
	uint64_t gen, sp;
	size_t nr;

	if (max && leaf_caller_case(s, smp))
		return leaf_caller(s, m, ev, pcs, max);
	if (!max || arch == UW_NONE || !smp->user_regs_abi || !smp->user_regs ||
	    !smp->user_stack || !perf_reg(smp, arch == UW_X86_64 ? X86_SP : ARM64_SP, &sp))
		return 0;
	maps = machine_process_maps(m, smp->pid, &nr, &gen);
	if (!nr)
		return 0;
	c = uw_cfi_get(s);
	if (c && !c->libdw_only) {
		size_t n;

		if (unwind_by_rows(s, c, arch, smp, maps, nr, gen, sp, pcs, max, &n)) {
			c->walked++;
			return n;
		}
		c->fallbacks++;
	}
	s->stats.unwind_fallbacks++;
	p = proc_for(s, smp->pid, maps, nr, gen);
	if (!p) {
		uint64_t ip;

		s->stats.unwind_failed++;
		/* no unwinding possible: at least the sampled address */
		if (perf_reg(smp, arch == UW_X86_64 ? X86_IP : ARM64_PC, &ip)) {
			pcs[0] = ip;
			return 1;
		}
		return 0;
	}
	p->cur = (struct uw_sample){ .arch = arch, .tid = smp->tid, .s = smp, .sp = sp,
				     .maps = maps, .nr_maps = nr, .pcs = pcs, .max = max };
	/*
	 * aarch64 code without CFI where the thread was (the vDSO's
	 * clock_gettime): libdwfl would take x29's frame record for its own
	 * and unwind the caller from the wrong CFA. A leaf, as perf takes
	 * it: the pc, then unwinding from lr with sp and x29 as they are.
	 */
	if (arch == UW_AARCH64 && max > 1) {
		uint64_t pc, lr;

		if (perf_reg(smp, ARM64_PC, &pc) && perf_reg(smp, ARM64_LR, &lr) &&
		    (lr = unsign(&p->cur, lr)) != pc && lr &&
		    ra_rule_at(p->dwfl, pc) == RA_NO_CFI && dwfl_addrmodule(p->dwfl, lr)) {
			pcs[p->cur.n++] = pc;
			p->cur.start_pc = lr;
		}
	}
	/* 0: reached the outermost frame; -1: stopped (no CFI, stack copy too short) */
	if ((dwfl_getthread_frames(p->dwfl, (pid_t)smp->tid, frame_cb, &p->cur) != 0 ||
	     p->cur.past_copy) && p->cur.n < max) {
		s->stats.unwind_stopped++;
		if (p->cur.past_copy && smp->user_stack_dyn_size >= smp->user_stack_size)
			s->stats.unwind_truncated++;
	}
	s->stats.unwound++;
	return p->cur.n;
}

void unwind_free(struct symbolizer *s)
{
	for (size_t i = 0; s->uw && i < UW_CACHE; i++)
		if (s->uw[i].dwfl)
			dwfl_end(s->uw[i].dwfl);
	free(s->uw);
	s->uw = NULL;
	uw_cfi_free(s);
}

void sym_unwind_forget(struct symbolizer *s, uint32_t pid)
{
	struct uw_cfi *c = s->uw_cfi;
	bool had = false;

	for (size_t i = 0; s->uw && i < UW_CACHE; i++) {
		struct uw_proc *q = &s->uw[i];

		if (q->dwfl && q->pid == pid) {
			dwfl_end(q->dwfl);
			memset(q, 0, sizeof(*q));
			had = true;
		}
	}
	/* the rows' modules of the process (the rows are its files', kept) */
	for (size_t i = 0; c && i < UW_CACHE; i++) {
		struct uw_mods *q = &c->procs[i];

		if (q->live && q->pid == pid) {
			free(q->mods);
			memset(q, 0, sizeof(*q));
			if (c->last == q)
				c->last = NULL;
			had = true;
		}
	}
	if (had)
		s->stats.unwind_released++;
}
