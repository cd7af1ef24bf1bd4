/* SPDX-License-Identifier: MIT */
/*
 * verdict.c - what each layer of evidence says of an off-CPU interval: the
 * state rules over its blocked stack (the user's, the programs' - each
 * runtime's on its own frames - the kernel's), over the stack that woke
 * it, the system call it waits in and its arguments; and the order their
 * words are taken in (docs/wait-states.md). The accounting (account.c,
 * account-intervals.c) asks at each switch-out, waking and interval's end.
 */
#include "priv.h"
#include "syscall.h"

#include <stdlib.h>
#include <string.h>

#include "../util/error.h"

/* --- state rules over stacks --- */

/*
 * Of the rules @ids[@n] a frame's function matches, those that may read
 * it: a runtime's rules read the frames of its own modules, and frames no
 * runtime claims (a static build, JIT code, a module of no known runtime),
 * never another runtime's (HotSpot's Mutex::lock_contended is not Rust's).
 * Return: how many are kept, in order, at the front of @ids.
 */
static size_t rules_of_owner(const struct account *a, const struct profile_frame *pf,
			     uint32_t *ids, size_t n)
{
	const struct rule_runtime *owner = rules_runtime_of(&a->rules, pf->module);
	size_t k = 0;

	if (!owner)
		return n;
	for (size_t i = 0; i < n; i++) {
		unsigned rt = a->rules.r[ids[i]].runtime;

		if (!rt || &a->rules.rt[rt - 1] == owner)
			ids[k++] = ids[i];
	}
	return k;
}

/* Append @n rule ids to a->rule_ids; *@first: where they begin. False
 * (a->err set) without memory. */
static bool rule_ids_append(struct account *a, const uint32_t *ids, size_t n, uint32_t *first)
{
	if (a->rule_ids_len + n > a->rule_ids_cap) {
		size_t cap = a->rule_ids_cap ? a->rule_ids_cap : 1024;
		uint32_t *ni;

		while (cap < a->rule_ids_len + n)
			cap *= 2;
		ni = realloc(a->rule_ids, cap * sizeof(*ni));
		if (!ni) {
			a->err = PP_ENOMEM;
			return false;
		}
		a->rule_ids = ni;
		a->rule_ids_cap = cap;
	}
	if (n)
		memcpy(a->rule_ids + a->rule_ids_len, ids, n * sizeof(*ids));
	*first = (uint32_t)a->rule_ids_len;
	a->rule_ids_len += n;
	return true;
}

/* The rules tree frame @f's function matches (computed once per frame):
 * *@ids and the number of them. Group roots and placeholders match none. */
static size_t frame_rules(struct account *a, uint32_t f, const uint32_t **ids)
{
	struct acct_frame_rules *fr;
	const struct profile_frame *pf = &a->tree.frames[f];
	uint32_t buf[256];
	size_t n;

	*ids = NULL;
	if (f >= a->frame_rules_cap) {
		size_t cap = a->frame_rules_cap ? a->frame_rules_cap : 1024;
		struct acct_frame_rules *nf;

		while (cap <= f)
			cap *= 2;
		nf = realloc(a->frame_rules, cap * sizeof(*nf));
		if (!nf) {
			a->err = PP_ENOMEM;
			return 0;
		}
		memset(nf + a->frame_rules_cap, 0, (cap - a->frame_rules_cap) * sizeof(*nf));
		a->frame_rules = nf;
		a->frame_rules_cap = cap;
	}
	fr = &a->frame_rules[f];
	if (!fr->known) {
		fr->known = 1;
		if (pf->flags & (FRAME_F_PROCESS | FRAME_F_THREAD | FRAME_F_SYNTHETIC))
			return 0;
		fr->interrupt = (pf->flags & FRAME_F_KERNEL) &&
				rules_is_interrupt(&a->rules, pf->function);
		fr->yield = rules_is_yield(&a->rules, pf->function);
		n = rules_frame_matches(&a->rules, pf->function, buf, sizeof(buf) / sizeof(buf[0]));
		if (n > sizeof(buf) / sizeof(buf[0]))
			n = sizeof(buf) / sizeof(buf[0]);
		n = rules_of_owner(a, pf, buf, n);
		if (!rule_ids_append(a, buf, n, &fr->first))
			return 0;
		fr->n = (uint16_t)n;
	}
	*ids = fr->n ? a->rule_ids + fr->first : NULL;
	return fr->n;
}

/* Whether frame @inner (UINT32_MAX: none), called by the frame whose
 * match rule @id (a CALLER of FUNCTION^CALLER) is, matched FUNCTION. Its
 * matches are known: the walk passed it (frame_rules()). */
static bool caller_of(const struct account *a, uint32_t inner, uint32_t id)
{
	const struct acct_frame_rules *fr;
	uint32_t of = a->rules.r[id].caller_of - 1;

	if (inner == UINT32_MAX)
		return false;
	fr = &a->frame_rules[inner];
	for (size_t i = 0; i < fr->n; i++)
		if (a->rule_ids[fr->first + i] == of)
			return true;
	return false;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * The rules the stack of @node matches on @side, ascending, with no
 * repeats (made once per node and side). A waker's stack that holds a
 * kernel frame of interrupt handling is read up to the interrupt's entry:
 * the frames below it, kernel or user, are the interrupted thread's (a
 * timer that fired during another thread's I/O wait woke this one, not
 * the I/O).
 * Return: the number at *@ids.
 */
static size_t stack_rules(struct account *a, uint32_t node, enum rule_side side,
			  const uint32_t **ids)
{
	uint64_t key[2] = { node, side };
	uint32_t *m = a->match_buf, id;
	uint32_t inner = UINT32_MAX;       /* the frame inside this one, UINT32_MAX none */
	size_t n = 0, k = 0;
	bool fresh = false, irq = false;

	*ids = NULL;
	if (node == TREE_NONE || node == TREE_ROOT)
		return 0;
	id = wordmap_get(&a->stack_rules_map, key, 2, &a->stack_rules_next, &fresh);
	if (!id) {
		a->err = PP_ENOMEM;
		return 0;
	}
	if (!fresh) {
		*ids = a->stack_rules[id].n ? a->rule_ids + a->stack_rules[id].first : NULL;
		return a->stack_rules[id].n;
	}
	if (id >= a->stack_rules_cap) {
		size_t cap = a->stack_rules_cap ? a->stack_rules_cap * 2 : 1024;
		struct acct_span *ns;

		while (cap <= id)
			cap *= 2;
		ns = realloc(a->stack_rules, cap * sizeof(*ns));
		if (!ns) {
			a->err = PP_ENOMEM;
			return 0;
		}
		a->stack_rules = ns;
		a->stack_rules_cap = cap;
	}
	for (size_t depth = 0; node != TREE_ROOT && node != TREE_NONE && depth < ACCT_MAX_FRAMES * 8;
	     depth++, node = a->tree.nodes[node].parent) {
		uint32_t f = a->tree.nodes[node].frame;
		const uint32_t *fi;
		size_t fn;

		fn = frame_rules(a, f, &fi);
		if (a->err)
			return 0;
		if (side == RULE_WAKER && irq && !a->frame_rules[f].interrupt)
			break;
		irq = irq || a->frame_rules[f].interrupt;
		for (size_t i = 0; i < fn && n < ACCT_MAX_MATCHES; i++)
			if (!a->rules.r[fi[i]].caller_of || caller_of(a, inner, fi[i]))
				m[n++] = fi[i];
		inner = f;
	}
	/* a stack matches a few rules: sorted in place, no allocation */
	if (n > 64) {
		qsort(m, n, sizeof(*m), cmp_u32);
	} else {
		for (size_t i = 1; i < n; i++) {
			uint32_t x = m[i];
			size_t j = i;

			for (; j && m[j - 1] > x; j--)
				m[j] = m[j - 1];
			m[j] = x;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!k || m[k - 1] != m[i])
			m[k++] = m[i];
	if (!rule_ids_append(a, m, k, &a->stack_rules[id].first))
		return 0;
	a->stack_rules[id].n = (uint32_t)k;
	*ids = a->stack_rules[id].n ? a->rule_ids + a->stack_rules[id].first : NULL;
	return k;
}

/* The counter rule set @set gives the stack of @node on @side in @state,
 * -1 when none of its rules matches; *@rule: the rule, when one does. */
static int set_verdict(struct account *a, enum rule_set set, enum rule_side side, char state,
		       uint32_t node, long *rule)
{
	const uint32_t *ids;
	size_t n = stack_rules(a, node, side, &ids);
	long r = rules_first(&a->rules, set, side, state, ids, n);

	/* "defer": the set's first word on this stack is that it has none */
	if (r >= 0 && a->rules.r[r].defer)
		r = -1;
	if (rule)
		*rule = r;
	return r < 0 ? -1 : a->rules.r[r].counter;
}

/* Room for @node's entry in a->blocked; false without memory. */
static bool blocked_room(struct account *a, uint32_t node)
{
	size_t cap = a->blocked_cap ? a->blocked_cap : 1024;
	struct acct_blocked *n;

	if (node < a->blocked_cap)
		return true;
	while (cap <= node)
		cap *= 2;
	n = realloc(a->blocked, cap * sizeof(*n));
	if (!n)
		return false;
	memset(n + a->blocked_cap, 0, (cap - a->blocked_cap) * sizeof(*n));
	a->blocked = n;
	a->blocked_cap = cap;
	return true;
}

/*
 * The verdicts of the blocked stack @node (state @state) into @v: the
 * user's, the programs' and the kernel's rules; the others unknown. They
 * are kept per node for the state it last blocked in: a switch-out of a
 * stack seen before costs a look, not three rule searches.
 */
void acct_blocked_verdicts(struct account *a, char state, uint32_t node,
			   int8_t v[STATE_BY_COUNT], long *prog_rule, bool *kernel_any)
{
	struct acct_blocked *b = NULL;
	long kr;

	for (int l = 0; l < STATE_BY_COUNT; l++)
		v[l] = -1;
	*prog_rule = -1;
	*kernel_any = true;
	if (a->opts->offcpu_simple) {
		v[STATE_BY_KERNEL] = CNT_SLEEP;
		return;
	}
	if (node != TREE_NONE && state && blocked_room(a, node)) {
		b = &a->blocked[node];
		if (b->state == state) {
			v[STATE_BY_USER] = b->user;
			v[STATE_BY_PROGRAM] = b->program;
			v[STATE_BY_KERNEL] = b->kernel;
			*prog_rule = b->prog_rule;
			*kernel_any = b->kernel_any;
			return;
		}
	}
	v[STATE_BY_USER] = (int8_t)set_verdict(a, RULE_SET_USER, RULE_BLOCKED, state, node, NULL);
	v[STATE_BY_PROGRAM] = (int8_t)set_verdict(a, RULE_SET_PROGRAM, RULE_BLOCKED, state, node,
						  prog_rule);
	v[STATE_BY_KERNEL] = (int8_t)set_verdict(a, RULE_SET_KERNEL, RULE_BLOCKED, state, node, &kr);
	if (v[STATE_BY_KERNEL] < 0)
		v[STATE_BY_KERNEL] = CNT_SLEEP;
	*kernel_any = kr < 0 || !a->rules.r[kr].pattern;
	if (b && !a->err) {
		b->state = state;
		b->user = v[STATE_BY_USER];
		b->program = v[STATE_BY_PROGRAM];
		b->kernel = v[STATE_BY_KERNEL];
		b->kernel_any = *kernel_any;
		b->prog_rule = (int32_t)*prog_rule;
	}
}

/*
 * The layers' words in the order they are taken (docs/wait-states.md): at
 * each step a layer's word is taken if it is one of the counters the step
 * names. What the program, the waker or the call say the thread waited for
 * (a lock, an I/O, its timer's expiry) comes first, in the layers' order;
 * then another task's event, which says the wait was not ended by its
 * timer; a timed-sleep from the rules or the arguments says only that the
 * wait could end by its timer, so it comes after what woke it; the
 * kernel's paths last.
 */
#define CNT_BIT(c) (1u << (c))
#define UNTIMED (CNT_BIT(CNT_PREEMPTED) | CNT_BIT(CNT_LOCK) | CNT_BIT(CNT_IO) | \
		 CNT_BIT(CNT_SLEEP) | CNT_BIT(CNT_IDLE) | CNT_BIT(CNT_ON_CPU))
#define ANY (UNTIMED | CNT_BIT(CNT_TIMED_SLEEP))
static const struct {
	enum state_layer layer;
	unsigned counters;      /* CNT_BIT()s this step takes */
} decide_order[] = {
	{ STATE_BY_USER, ANY },
	{ STATE_BY_PROGRAM, UNTIMED },
	{ STATE_BY_WAKEUP, ANY & ~CNT_BIT(CNT_SLEEP) },
	{ STATE_BY_ARGS, UNTIMED },
	{ STATE_BY_WAKEUP, CNT_BIT(CNT_SLEEP) },
	{ STATE_BY_PROGRAM, CNT_BIT(CNT_TIMED_SLEEP) },
	{ STATE_BY_ARGS, CNT_BIT(CNT_TIMED_SLEEP) },
	{ STATE_BY_KERNEL, ANY },
};

/* The verdict that decides (decide_order), its layer in *@by. */
enum counter acct_decide(const int8_t v[STATE_BY_COUNT], enum state_layer *by)
{
	for (size_t i = 0; i < sizeof(decide_order) / sizeof(decide_order[0]); i++) {
		int8_t c = v[decide_order[i].layer];

		if (c < 0 || c >= CNT_COUNT || !(decide_order[i].counters & CNT_BIT(c)))
			continue;
		*by = decide_order[i].layer;
		return (enum counter)c;
	}
	*by = STATE_BY_KERNEL;
	return CNT_SLEEP;
}

char acct_switch_state(struct account *a, char state, uint32_t node)
{
	struct acct_blocked *b;
	const uint32_t *ids;
	bool yields = false;

	if (state != 'R' || node == TREE_NONE || node == TREE_ROOT || a->opts->offcpu_simple ||
	    !blocked_room(a, node))
		return state;
	b = &a->blocked[node];
	if (!b->yields) {
		for (uint32_t at = node, depth = 0;
		     at != TREE_ROOT && at != TREE_NONE && depth < ACCT_MAX_FRAMES * 8 && !yields;
		     depth++, at = a->tree.nodes[at].parent) {
			uint32_t f = a->tree.nodes[at].frame;

			frame_rules(a, f, &ids);
			if (a->err)
				return state;
			yields = a->frame_rules[f].yield;
		}
		b->yields = yields ? 2 : 1;
	}
	return b->yields == 2 ? 'S' : state;
}

/* Give @th's open interval its blocked stack's verdicts. */
void acct_classify(struct account *a, struct acct_thread *th)
{
	long pr;

	acct_blocked_verdicts(a, th->out_state, th->out_node, th->verdict, &pr, &th->kernel_any);
	th->rule_prog = pr < 0 ? 0 : a->rules.r[pr].runtime;
	th->wake_generic = false;
}

/*
 * @th, off CPU, was woken by the stack @waker: its rules (the user's first,
 * where the blocked stack gave them no word; then the wakeup's, the kernel's
 * timers and releases before the programs' releases) add their verdicts.
 */
void acct_wake_verdicts(struct account *a, struct acct_thread *th, uint32_t waker)
{
	long r;
	int c;

	if (a->opts->offcpu_simple || waker == TREE_NONE || th->out_state == 'R')
		return;
	if (th->verdict[STATE_BY_USER] < 0)
		th->verdict[STATE_BY_USER] = (int8_t)set_verdict(a, RULE_SET_USER, RULE_WAKER,
								 th->out_state, waker, NULL);
	c = set_verdict(a, RULE_SET_KERNEL, RULE_WAKER, th->out_state, waker, &r);
	th->rule_wake = 0;
	th->wake_generic = c == CNT_SLEEP;
	/* the kernel's sleep is another task's event (a futex wake, data on
	 * a pipe): a program's release in the same stack says which */
	if (c < 0 || c == CNT_SLEEP) {
		int p = set_verdict(a, RULE_SET_PROGRAM, RULE_WAKER, th->out_state, waker, &r);

		if (p >= 0) {
			c = p;
			th->rule_wake = a->rules.r[r].runtime;
			th->wake_generic = false;
		}
	}
	th->verdict[STATE_BY_WAKEUP] = (int8_t)c;
}

/* How many of a stack's innermost user frames may be a system call's
 * wrapper (an inlined futex wait inside the C library's lock, inside its
 * caller) */
#define WRAPPER_DEPTH 3

/*
 * The system call @node's stack waits in, told by its user side: its
 * innermost user frames, by the "syscall" lines of their runtime (the C
 * library's wrappers: __poll is poll). For stacks whose kernel frames are
 * not named (the recorded kernel's symbols are not here): with them,
 * the kernel's entry point says it. 0: none.
 */
static int wrapper_call(struct account *a, uint32_t node)
{
	unsigned seen = 0;

	for (uint32_t at = node, depth = 0;
	     at != TREE_ROOT && at != TREE_NONE && depth < ACCT_MAX_FRAMES * 8 &&
	     seen < WRAPPER_DEPTH;
	     depth++, at = a->tree.nodes[at].parent) {
		uint32_t f = a->tree.nodes[at].frame;
		const struct profile_frame *pf = &a->tree.frames[f];

		if (pf->flags & (FRAME_F_KERNEL | FRAME_F_PROCESS | FRAME_F_THREAD |
				 FRAME_F_SYNTHETIC))
			continue;
		seen++;
		if (!a->frame_sys[f])
			a->frame_sys[f] = (int16_t)(rules_wrapper_call(&a->rules, pf->function,
								       pf->module) + 1);
		if (a->frame_sys[f] > 1)
			return a->frame_sys[f] - 1;
	}
	return 0;
}

/* The system call @node's stack waits in (the kernel frame nearest the
 * leaf that is a call's entry point; else its user side's wrapper),
 * sys_call_of()'s number, 0 none. */
static int node_syscall(struct account *a, uint32_t node)
{
	/* once per stack: its switch-outs ask again */
	bool kept = node != TREE_NONE && blocked_room(a, node), kernel_named = false;
	int call = 0;

	if (kept && a->blocked[node].sys)
		return a->blocked[node].sys - 1;
	if (a->frame_sys_cap < a->tree.nr_frames) {
		size_t cap = a->frame_sys_cap ? a->frame_sys_cap : 1024;
		int16_t *n;

		while (cap < a->tree.nr_frames)
			cap *= 2;
		n = realloc(a->frame_sys, cap * sizeof(*n));
		if (!n) {
			a->err = PP_ENOMEM;
			return 0;
		}
		memset(n + a->frame_sys_cap, 0, (cap - a->frame_sys_cap) * sizeof(*n));
		a->frame_sys = n;
		a->frame_sys_cap = cap;
	}
	for (uint32_t at = node, depth = 0;
	     at != TREE_ROOT && at != TREE_NONE && depth < ACCT_MAX_FRAMES * 8;
	     depth++, at = a->tree.nodes[at].parent) {
		uint32_t f = a->tree.nodes[at].frame;
		const struct profile_frame *pf = &a->tree.frames[f];

		if (!(pf->flags & FRAME_F_KERNEL))
			continue;
		kernel_named = kernel_named || !(pf->flags & FRAME_F_UNKNOWN);
		if (!a->frame_sys[f])
			a->frame_sys[f] = (int16_t)(sys_call_of(pf->function) + 1);
		if (a->frame_sys[f] > 1) {
			call = a->frame_sys[f] - 1;
			break;
		}
	}
	if (!call && !kernel_named)
		call = wrapper_call(a, node);
	if (kept)
		a->blocked[node].sys = (int16_t)(call + 1);
	return call;
}

/*
 * The evidence of the system call @th was switched out in (@node, sample
 * @s): its verdict, where the call and its arguments decide the state.
 */
void acct_syscall_evidence(struct account *a, struct acct_thread *th,
			   const struct perf_sample *s, uint32_t node, char state)
{
	struct sys_mem mem;
	uint64_t args[6];
	bool have_mem;
	int call, c;

	th->verdict[STATE_BY_ARGS] = -1;
	th->timeout_ns = 0;
	th->args_unsaid = false;
	if (a->opts->offcpu_simple || node == TREE_NONE || (state != 'S' && state != 'I') ||
	    !(call = node_syscall(a, node)))
		return;
	if (!s->user_regs_abi || !sys_args((enum sys_arch)a->sys_arch, s->user_regs_mask,
					   s->user_regs, args)) {
		a->meta->iv_syscall_no_regs++;
		return;
	}
	have_mem = sys_mem_of((enum sys_arch)a->sys_arch, s->user_regs_mask, s->user_regs,
			      s->user_stack, s->user_stack_dyn_size, &mem);
	c = sys_counter(call, args, state, have_mem ? &mem : NULL);
	th->verdict[STATE_BY_ARGS] = (int8_t)c;
	th->timeout_ns = c == CNT_TIMED_SLEEP ? sys_timeout_ns(call, args, have_mem ? &mem : NULL) : 0;
	th->untimed = (int8_t)sys_untimed(call);
	th->args_unsaid = c >= 0 && sys_awaits_unsaid(call, args);
}
