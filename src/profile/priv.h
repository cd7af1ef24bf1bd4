/* SPDX-License-Identifier: MIT */
/*
 * priv.h - what the files of src/profile share: the accounting state that
 * turns ordered records into tree counts (account.c and the account-*.c
 * files beside it, verdict.c), driven by build.c.
 */
#ifndef PROFILE_PRIV_H
#define PROFILE_PRIV_H

#include "../machine/machine.h"
#include "../symbols/namer.h"
#include "../symbols/symbols.h"
#include "../util/wordmap.h"
#include "profile.h"
#include "rules.h"
#include "tree.h"

#define ACCT_MAX_FRAMES 1024
#define ACCT_MAX_FLAGS 32
#define ACCT_MAX_MATCHES 4096              /* rules one stack's frames match, at most */

/* What an event of the recording is used for, with what it needs. */
struct acct_src {
	bool ready;                        /* set up from its evsel */
	enum source_role role;
	bool freq;
	bool ns;                           /* its samples weigh time (else events) */
	bool left_out;                     /* a sampling event the default profile leaves out */
	bool state_unreadable;             /* a record's prev_state was out of reach (warned) */
	uint64_t freq_ns;                  /* a hardware event at a frequency: each sample
					    * weighs 1e9 / frequency; 0: its period */
	const struct tep_format_field *prev_pid, *prev_state, *next_pid, *wake_pid;
	struct perf_tp_flag flags[ACCT_MAX_FLAGS]; /* prev_state's letters */
	size_t nr_flags;
	uint64_t known_flags;              /* the bits they cover (default_flags' without) */
	uint64_t used;                     /* samples used */
};

/* Why an off-CPU interval has no stack (profile_meta.iv_no_stack*). */
enum acct_no_stack {
	ACCT_STACK_KNOWN,                  /* it has one */
	ACCT_NO_STACK_LOST,                /* records of its CPU were lost before it */
	/* no sched_switch sample came first, nothing lost: no sched_switch
	 * event was recorded, or its sample was not (told when it ends: the
	 * events are known at the first sample, after a system-wide
	 * recording's first switch records) */
	ACCT_NO_STACK_UNPAIRED,
	ACCT_NO_STACK_OTHER,               /* the sched_switch sample was another task's */
};

struct acct_thread {
	uint32_t pid, tid;
	const char *comm;                  /* interned in the tree's strings */
	uint64_t start, end;
	bool forked, exited, seen;
	/* the open off-CPU interval */
	bool off, out_from_record;
	/* the state its evidence is judged in (a yield's R is judged as S);
	 * out_runnable: the switch-out left it runnable (R), waiting for a CPU
	 * from the start, by preemption or by its own yield */
	char out_state;
	bool out_runnable;
	/* the open interval is a new thread's wait for its first run, from
	 * its fork: charged only where a switch-in ends it */
	bool out_fork;
	/* records were lost while it was open (of its CPU, or of one not
	 * named): what the thread did from lost_end (its CPU's last record
	 * before the loss) to its next event is unknown, and not charged */
	bool lost_cut;
	uint64_t lost_end;
	/* where the open interval's switch-out was seen: its CPU, and that
	 * CPU's count of lost records then (a switch-out record and its
	 * sched_switch sample are one switch when nothing was lost between) */
	uint32_t out_cpu;
	uint64_t out_lost, out_lost_all;
	enum counter out_cnt;              /* decided when it ends (acct_iv_close()) */
	/* each layer's word on the open interval, enum counter or -1 none */
	int8_t verdict[STATE_BY_COUNT];
	/* the relative timeout the system call was given (0: none known), and
	 * the call's counter had it been untimed */
	uint64_t timeout_ns;
	int8_t untimed;
	/* the kernel's word came from a catch-all rule; the waking's from
	 * another task's event that no program's release named; the call's
	 * arguments say whether it was timed, not what it awaited
	 * (sys_awaits_unsaid()) */
	bool kernel_any, wake_generic, args_unsaid;
	uint16_t rule_prog, rule_wake;     /* the runtime (+1) of the program rule and
					    * the wakeup rule that gave theirs; 0 none */
	uint32_t out_node;                 /* TREE_NONE: not charged to the tree */
	/* the open interval's stack was not recorded: why (enum acct_no_stack) */
	uint8_t out_no_stack;
	uint32_t waker_node;               /* the first waker's stack since out, TREE_NONE none */
	uint64_t out_time, wake_time;
	struct profile_counts c;
	struct profile_counts no_stack;    /* of c, the intervals without their stack */
	uint64_t in_time;                  /* its last switch-in, 0 if unknown or off */
	uint64_t run_ns, blocked_ns, delay_ns, open_at_end, bounded;
	bool filtered;                     /* left out by --pid/--tid/--comm (at its last check) */
	/* the CPU of its last evidence of running (a switch-in, an on-CPU
	 * sample, an exec), UINT32_MAX unknown; run_cut: that CPU's records
	 * were lost while it ran, and its run was charged up to run_cut_at
	 * (the CPU's last record before the loss): it is not known to run
	 * from there until new evidence (acct_run_begin(), acct_run_end()) */
	uint32_t run_cpu;
	bool run_cut;
	uint64_t run_cut_at;
};

struct acct_filter {
	uint32_t *pids, *tids;
	size_t nr_pids, nr_tids;
	char **comms;
	size_t nr_comms;
	bool has_time;
	uint64_t t0, t1;                   /* [t0, t1] in perf time */
};

/* node's top bit: the stack waits for names, the rest indexes pend */
#define STACK_PENDING 0x80000000u

/* an entry's count goes on to its node (or pending stack) at this many */
#define STACK_COUNT_MAX ((1u << 29) - 1)

/*
 * A stack known by its key's 128-bit XXH3 hash (never 0, 0: that is an
 * empty slot), not by the key itself: keys are not kept (see stack_find()).
 * Its samples of one counter are summed here, in the line the lookup
 * brought into cache, and go on to the tree when another counter comes,
 * and at the end (acct_finish()).
 */
struct stack_entry {
	uint64_t hash, check;              /* the hash's low and high halves */
	uint32_t node;                     /* its leaf, or STACK_PENDING | index */
	uint32_t count : 29;               /* samples summed here, not yet counted */
	uint32_t counter : 3;              /* enum counter of count and ns */
	uint64_t ns;
};

/* A raw frame seen: its ticket with the namer, by what decides its name. */
struct rawf_entry {
	uint64_t hash;                     /* 0: empty slot */
	uint64_t where;                    /* a file's offset, else the address */
	const struct dso *dso;
	uint32_t pid;                      /* outside files: the process; else 0 */
	uint32_t ticket;                   /* namer ticket; indexes tick */
	uint8_t kind;
	bool ret;
};

/* A named raw frame's tree frames, innermost inlined call first. */
struct tick_ids {
	uint32_t first, n;                 /* into rawf_ids; n 0: not interned yet */
	uint32_t end[2];                   /* the stack ends here (sym_frame_ends()),
					    * [unwound]: 0 not; k + 1 after its
					    * frame k (a root); UINT32_MAX before it */
};

/*
 * A stack seen whose tree node is made once its frames are named: on-CPU
 * samples only count it (one counter; another makes the node), and the
 * node is made when something needs it, or at the end of the pass.
 */
struct acct_pend {
	uint32_t root;                     /* the group's node */
	uint32_t first, n;                 /* its raw frames' tickets in pend_tickets */
	uint32_t node;                     /* made: its leaf; TREE_NONE not yet */
	uint32_t counter;                  /* of what count and ns hold */
	bool unwound;                      /* its user part unwound from its stack copy */
	uint64_t count, ns;
};

/* The rules a frame's function matches: rule_ids[first .. first + n). */
struct acct_frame_rules {
	uint32_t first;
	uint16_t n;
	uint8_t known;
	uint8_t interrupt;                 /* a kernel frame of interrupt handling */
	uint8_t yield;                     /* a function that yields the CPU by choice */
};

struct acct_span {
	uint32_t first, n;
};

/* A tree node's blocked verdicts (blocked_verdicts()) for the state it last blocked in,
 * and the system call its stack waits in (node_syscall()). */
struct acct_blocked {
	char state;                        /* 0: none yet */
	int8_t user, program, kernel;      /* enum counter, -1 no word */
	bool kernel_any;                   /* the kernel's word came from its catch-all */
	int32_t prog_rule;                 /* the program rule that gave its word, -1 none */
	int16_t sys;                       /* node_syscall() + 1; 0 not asked yet */
	int8_t yields;                     /* acct_switch_state(): 0 not asked, 1 no, 2 yes */
};

/* What is known of one CPU at the current point of the pass. */
struct acct_cpu {
	uint64_t last;                     /* time of its last event */
	uint32_t pid, tid;                 /* the task running there; tid UINT32_MAX: unknown */
	uint32_t thread;                   /* its entry in threads + 1; 0: not looked up */
	uint64_t lost;                     /* LOST records seen for it */
};

struct acct_closed;

struct account {
	const struct profile_opts *opts;
	const struct machine *m;
	struct namer *namer;               /* names raw frames (the caller's) */
	struct tree tree;
	/* off-wake stacks: the blocked stack, a separator, then the waker's
	 * stack leaf first (frames point at the main tree's strings) */
	struct tree wtree;
	bool wtree_ready;
	bool switches_seen;          /* a sched_switch sample or SWITCH record: run times are measured */
	struct rules rules;
	struct acct_filter filter;
	struct acct_src *srcs;             /* by evsel idx */
	bool on_cpu_chosen;                /* without --event: the on-CPU counter counts */
	unsigned on_cpu_idx;               /* this one event (its evsel's idx) */
	struct perf_attr on_cpu_event;     /* and its attr: the same event on other
					    * PMUs or in other modes counts too */
	size_t nr_srcs;
	bool system_wide;
	int err;

	struct acct_thread *threads;
	size_t nr_threads, cap_threads;
	uint32_t *tid_slots;               /* tid -> thread index + 1 (the newest) */
	size_t tid_slots_cap;

	struct acct_cpu *cpus;             /* by CPU number */
	size_t nr_cpus;
	uint64_t lost_any;                 /* LOST records that name no CPU */
	uint64_t lost_all;                 /* LOST records */
	bool switch_event;                 /* a sched_switch event was recorded */
	uint64_t no_stack_unpaired;        /* intervals of ACCT_NO_STACK_UNPAIRED, counted */

	struct stack_entry *stacks;        /* open addressing */
	size_t stacks_cap, nr_stacks;
	uint64_t *key;                     /* the sample's key being built */
	size_t key_cap;

	uint64_t *dso_base;                /* per dso id: its base (address - file offset) + 1, 0 unseen */
	size_t dso_base_cap;

	struct rawf_entry *rawf;           /* open addressing */
	size_t rawf_cap, nr_rawf;
	struct tick_ids *tick;             /* by ticket */
	size_t tick_cap;
	uint32_t *rawf_ids;
	size_t rawf_ids_len, rawf_ids_cap;

	struct acct_pend *pend;            /* stacks waiting for names, in order seen */
	size_t nr_pend, cap_pend, pend_done; /* pend_done: all before it are made */
	uint32_t *pend_tickets;
	size_t pend_tickets_len, pend_tickets_cap;

	int sys_arch;                      /* enum sys_arch of the recording */
	int16_t *frame_sys;                /* per tree frame: sys_call_of() + 1, 0 unknown */
	size_t frame_sys_cap;

	struct acct_frame_rules *frame_rules; /* per tree frame: the rules it matches */
	size_t frame_rules_cap;
	uint32_t *rule_ids;                /* the rules' indexes the spans point at */
	size_t rule_ids_len, rule_ids_cap;
	struct wordmap stack_rules_map;    /* (node, side) -> id of its stack_rules */
	uint32_t stack_rules_next;
	struct acct_span *stack_rules;     /* by id: the rules a stack matches */
	size_t stack_rules_cap;
	struct acct_blocked *blocked;      /* by tree node */
	size_t blocked_cap;
	uint32_t match_buf[ACCT_MAX_MATCHES];
	uint64_t *rt_count, *rt_ns;        /* per runtime of the rules: intervals it decided */

	struct raw_frame raw[ACCT_MAX_FRAMES];
	uint32_t path[ACCT_MAX_FRAMES * 8];

	uint64_t first_time, last_time;    /* the samples' span (of a recording without
					    * samples: its records', at the end) */
	uint64_t rec_first, rec_last;      /* every record's */
	uint64_t hdr_first;                /* the first sample's, as the header says; 0 unknown */
	uint64_t hdr_last;                 /* the last sample's, as the header says; 0 unknown */
	uint64_t slice_origin;             /* perf clock of slice 0 (opts->slice_ns), 0 unset */
	struct profile_meta *meta;         /* counts go here */
	/* off-CPU intervals closed whose charge waits until no LOST record
	 * can cut them any more (account-intervals.c), oldest first from
	 * closed_head; closed_safe: no CPU seen had its last record before it
	 * when last looked at */
	struct acct_closed *closed;
	size_t closed_head, nr_closed, cap_closed;
	uint64_t closed_safe;
	/* the CPUs seen, a min-heap by their last record as it was when last
	 * looked at (a lower bound: a CPU's last only grows), refreshed
	 * lazily at its top (account-intervals.c's cpus_seen_from());
	 * cpu_heap_stale: a CPU was seen for the first time since it was made */
	struct acct_cpu_key { uint64_t last; uint32_t cpu; } *cpu_heap;
	size_t nr_cpu_heap;
	bool cpu_heap_stale;
};

/**
 * acct_init() - set up @a for the recording described by @hdr.
 * @nm: names the frames of new stacks; the caller's, used until acct_finish().
 */
int acct_init(struct account *a, const struct profile_opts *opts, const struct machine *m,
	      struct namer *nm, const struct perf_header_info *hdr, struct profile_meta *meta);

/**
 * acct_choose_sources() - without --event, choose which of the recording's
 * sampling events @ev (@nr of them, the reader's) the on-CPU counter counts:
 * the first that measures time (a clock, or a hardware event sampled at a
 * frequency), else the first; the same event on other PMUs (a hybrid CPU's
 * cpu_core/cycles/ and cpu_atom/cycles/) or in other modes (cycles:u with
 * cycles:k) counts too, other events - and the same event sampling the
 * same moments again (cycles with cycles:u) - are left out
 * (acct_src()->left_out). Call it before
 * the first sample; events set up before it are not changed.
 */
void acct_choose_sources(struct account *a, struct perf_evsel *const *ev, size_t nr);

/** acct_src_make() - acct_src() the first time: room for @e's source, set up. */
struct acct_src *acct_src_make(struct account *a, const struct perf_evsel *e);

/**
 * acct_src() - how the event @e is used, decided on first sight (pipe-mode
 * streams announce events as they go). Return: NULL for no event.
 */
static inline struct acct_src *acct_src(struct account *a, const struct perf_evsel *e)
{
	/* per sample: set up already, mostly */
	if (e && e->idx < a->nr_srcs && a->srcs[e->idx].ready)
		return &a->srcs[e->idx];
	return acct_src_make(a, e);
}

/** acct_event() - account one record, in time order, with its unwound user stack. */
int acct_event(struct account *a, const struct perf_event *ev, const uint64_t *pcs, size_t n);

/**
 * acct_finish() - make the tree nodes of the stacks still waiting for names
 * (the namer's, possibly waiting for it), then close what is still open at
 * the end of the recording.
 */
void acct_finish(struct account *a);

/** acct_release() - free what @a holds except the tree (the profile keeps it). */
void acct_release(struct account *a);

struct acct_carry;

/**
 * acct_carry_take() - what a next window's accounting needs of @a's
 * threads at its end: each live thread's open off-CPU interval (its
 * state, the evidence so far, its stack, copied out of @a's tree) or that
 * it is running, and each CPU's last record. Call before acct_finish().
 * *@out is the caller's (acct_carry_free()). Return: 0 or PP_ENOMEM.
 */
int acct_carry_take(const struct account *a, struct acct_carry **out);

/**
 * acct_carry_put() - open in @a (a new window's, just set up) the
 * intervals @c carries, from @t (the boundary); a running thread runs from
 * @t; each CPU's last record is the one @c says. Return: 0 or PP_ENOMEM.
 */
int acct_carry_put(struct account *a, const struct acct_carry *c, uint64_t t);

/** acct_carry_free() - free @c; NULL is fine. */
void acct_carry_free(struct acct_carry *c);

/** acct_filter_parse() - parse the filter options; 0 or PP_EUSAGE (logged). */
int acct_filter_parse(struct acct_filter *f, const struct profile_opts *o,
		      const struct perf_header_info *hdr);

/*
 * account-threads.c: threads by tid, and what each CPU runs. What every
 * sample asks (its source, its CPU's thread, the CPU's last event, a run's
 * start) is inline here, as it was in one file: called across files it
 * cost 64 instructions more per sample (callgrind, a -g recording).
 */

/** acct_thread_find() - the newest entry of thread @tid; NULL if none. */
struct acct_thread *acct_thread_find(struct account *a, uint32_t tid);

/**
 * acct_thread_new() - a new entry for thread @tid of process @pid, seen
 * first at @t, replacing any older one with that tid (a CPU's task that
 * was the older one is looked up again). Return: it, in a->threads (valid
 * until the next new thread), or NULL out of memory.
 */
struct acct_thread *acct_thread_new(struct account *a, uint32_t pid, uint32_t tid,
				    uint64_t t);

/** acct_thread_refresh() - take @th's comm from the machine and check the filters again. */
void acct_thread_refresh(struct account *a, struct acct_thread *th);

/**
 * acct_thread_get() - the entry of thread @tid, made (at @t) if there is
 * none; its pid is filled in from @pid (UINT32_MAX: unknown) if unknown.
 * Return: NULL out of memory (a->err set).
 */
struct acct_thread *acct_thread_get(struct account *a, uint32_t pid, uint32_t tid,
				    uint64_t t);

/**
 * acct_sample_task() - @ev, or @fixed (the caller's) holding a copy of @ev
 * with its task filled in where the kernel wrote tid -1 (a task released
 * on its way out): the sched_switch's prev_pid (@src may be NULL), else
 * the task last running on the sample's CPU.
 */
const struct perf_event *acct_sample_task(struct account *a, const struct acct_src *src,
					  const struct perf_event *ev, struct perf_event *fixed);

/** acct_cpu_grow() - room for CPU @cpu's state; NULL for an absurd number or no memory. */
struct acct_cpu *acct_cpu_grow(struct account *a, uint32_t cpu);

/**
 * acct_cpu_at() - the state of @cpu, NULL when the number is unknown or
 * absurd (or memory ran out). Unknown is every sample of a recording
 * without -a (no PERF_SAMPLE_CPU): said here, not in a call per sample to
 * acct_cpu_grow().
 */
static inline struct acct_cpu *acct_cpu_at(struct account *a, uint32_t cpu)
{
	if (cpu < a->nr_cpus)
		return &a->cpus[cpu];
	return cpu < 4096 ? acct_cpu_grow(a, cpu) : NULL;
}

/** acct_cpu_seen() - @cpu had an event at @t. */
static inline void acct_cpu_seen(struct account *a, uint32_t cpu, uint64_t t)
{
	struct acct_cpu *c = acct_cpu_at(a, cpu);

	if (c && t > c->last) {
		a->cpu_heap_stale |= !c->last;
		c->last = t;
	}
}

/**
 * acct_cpu_running() - task @pid/@tid (UINT32_MAX: unknown) runs on @cpu
 * from now; @th is its entry if known, else NULL.
 */
void acct_cpu_running(struct account *a, uint32_t cpu, uint32_t pid, uint32_t tid,
		      const struct acct_thread *th);

/**
 * acct_thread_on_cpu() - acct_thread_get() for the task of a sample taken
 * on @cpu, which is running there from now: consecutive samples on a CPU
 * are mostly of one task.
 */
static inline struct acct_thread *acct_thread_on_cpu(struct account *a, uint32_t cpu,
						     uint32_t pid, uint32_t tid, uint64_t t)
{
	struct acct_thread *th;

	if (cpu < a->nr_cpus && a->cpus[cpu].thread && a->cpus[cpu].tid == tid) {
		th = &a->threads[a->cpus[cpu].thread - 1];
		if (pid != UINT32_MAX) {
			a->cpus[cpu].pid = pid;
			if (th->pid == UINT32_MAX)
				th->pid = pid;
		}
		return th;
	}
	th = acct_thread_get(a, pid, tid, t);
	acct_cpu_running(a, cpu, pid, tid, th);
	return th;
}

/* account-stacks.c: a sample's stack as a tree node, and counting on nodes */

/**
 * acct_stack_node() - the leaf node of the stack of @ev (its user part
 * unwound into @pcs, @n of them, or none) in @th's group, made now if it
 * waits for names. Return: TREE_NONE on error (a->err set).
 */
uint32_t acct_stack_node(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
			 size_t n, struct acct_thread *th);

/**
 * acct_stack_count() - count one on-CPU sample of @c weighing @w on the
 * stack of @ev (as acct_stack_node()); summed per stack until
 * acct_stack_flush_all(), unless time slices or a timeline are kept.
 */
void acct_stack_count(struct account *a, const struct perf_event *ev, const uint64_t *pcs,
		      size_t n, struct acct_thread *th, enum counter c, uint64_t w);

/**
 * acct_count_at() - count @count and @ns of @c on @node, and by time slice
 * and in the timeline when they are kept: a sample's at @b (= @e), an
 * off-CPU interval's over [@b, @e) of thread @tid.
 */
void acct_count_at(struct account *a, uint32_t node, enum counter c, uint64_t count, uint64_t ns,
		   uint64_t b, uint64_t e, uint32_t tid);

/** acct_no_stack_node() - the node of @th's off-CPU interval whose stack is unknown. */
uint32_t acct_no_stack_node(struct account *a, struct acct_thread *th);

/** acct_fork_wait_node() - the node of new thread @th's wait for its first run. */
uint32_t acct_fork_wait_node(struct account *a, struct acct_thread *th);

/** acct_pend_make_all() - make every pending stack's node, in the order seen. */
void acct_pend_make_all(struct account *a);

/** acct_stack_flush_all() - count what every stack has summed (after acct_pend_make_all()). */
void acct_stack_flush_all(struct account *a);

/* account-intervals.c: off-CPU intervals, and the runs between them */

/* How an off-CPU interval's end is known (profile_meta's iv_* counts). */
enum acct_iv_end { ACCT_IV_EXACT, ACCT_IV_INFERRED, ACCT_IV_APPROX, ACCT_IV_AT_END };

/**
 * acct_iv_open() - @th switches out at @t on @cpu (UINT32_MAX: unknown)
 * in @state, its stack @node (TREE_NONE: not charged to the tree); seen
 * as a switch record (@from_record) or a sched_switch sample. Its run
 * ends, and its interval is given its stack's words.
 */
void acct_iv_open(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu,
		  char state, uint32_t node, bool from_record);

/**
 * acct_iv_close() - @th's open off-CPU interval, if any, ends at @end
 * (known @how): its time charged, cut at a loss, under the counter its
 * evidence decides - now, or once no loss reported later can cut it
 * (acct_iv_settle()); its run begins at @end.
 */
void acct_iv_close(struct account *a, struct acct_thread *th, uint64_t end,
		   enum acct_iv_end how);

/**
 * acct_iv_evidence() - @th ran at @t on @cpu while thought off CPU: its
 * open interval ends where the evidence says (its waking, the CPU's last
 * event before, or @t).
 */
void acct_iv_evidence(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu);

/**
 * acct_run_begin() - @th is on CPU @cpu at @t (UINT32_MAX: not said):
 * switched in, exec'ing, or sampled on CPU. After an off-CPU interval,
 * acct_iv_close() starts the run; this covers a thread seen running
 * without having been seen leaving, as a new thread on its first run (its
 * fork is no switch-out), perf record's workload at its exec, a thread
 * whose switch-in its CPU did not record (its events were enabled later:
 * measured once, a thread forked onto the second CPU of a system-wide
 * recording ran 187 ms there before that CPU's first event), from its
 * first on-CPU sample, or a thread whose run a loss cut (acct_lost_record()).
 */
void acct_run_begin(struct account *a, struct acct_thread *th, uint64_t t, uint32_t cpu);

/**
 * acct_run_end() - @th leaves the CPU at @t: its run since its switch-in
 * is measured (after a loss cut it, what was not charged is counted).
 */
void acct_run_end(struct account *a, struct acct_thread *th, uint64_t t);

/**
 * acct_iv_settle() - charge the closed intervals held for a loss that may
 * still cut them (acct_iv_close()): those no LOST record can cut any
 * more, or, @all (at the end of the recording or of a window), every one,
 * as cut so far; the held list is freed then.
 */
void acct_iv_settle(struct account *a, bool all);

/**
 * acct_same_switch() - whether a switch-out of @th on @cpu, seen as a
 * switch record (@from_record) or a sched_switch sample, is the switch
 * that opened its interval, seen the other way (nothing lost between).
 */
bool acct_same_switch(const struct account *a, const struct acct_thread *th, uint32_t cpu,
		      bool from_record);

/**
 * acct_no_stack_why() - @th's interval, just opened on @cpu, has no stack
 * (@other: the sched_switch sample was another task's): note why.
 */
void acct_no_stack_why(struct account *a, struct acct_thread *th, uint32_t cpu, bool other);

/**
 * acct_lost_record() - a LOST or LOST_SAMPLES record @ev: counted for its
 * CPU (or none), and a LOST record cuts the open intervals, and the runs
 * on that CPU, at the lost CPU's last record before it.
 */
void acct_lost_record(struct account *a, const struct perf_event *ev);

/* account-setup.c: what each event is for */

/** acct_state_letter() - the state letter of @src's prev_state value @st ('R' none set). */
char acct_state_letter(const struct acct_src *src, uint64_t st);

/* verdict.c: what each layer of evidence says of an off-CPU interval */

/**
 * acct_blocked_verdicts() - the user's, the programs' and the kernel's
 * words on a switch-out in @state whose stack is @node, into @v (by
 * enum state_layer; -1 no word; the others -1). *@prog_rule: the program
 * rule that spoke, -1 none; *@kernel_any: the kernel's word is its
 * catch-all's. Kept per stack and state in a->blocked.
 */
void acct_blocked_verdicts(struct account *a, char state, uint32_t node,
			   int8_t v[STATE_BY_COUNT], long *prog_rule, bool *kernel_any);

/** acct_decide() - the counter @v's words decide, in decide_order; its layer in *@by. */
enum counter acct_decide(const int8_t v[STATE_BY_COUNT], enum state_layer *by);

/**
 * acct_switch_state() - the state the evidence of a switch-out in @state
 * with stack @node is judged in: a runnable thread (R) whose stack holds a
 * yielding function (sched_yield: the "yield" lines of the rules) chose to
 * wait, and is judged as one that blocked (S); else @state. Kept per stack.
 */
char acct_switch_state(struct account *a, char state, uint32_t node);

/** acct_classify() - give @th's open interval its blocked stack's words. */
void acct_classify(struct account *a, struct acct_thread *th);

/** acct_wake_verdicts() - the words of @waker, the stack that woke @th, on its open interval. */
void acct_wake_verdicts(struct account *a, struct acct_thread *th, uint32_t waker);

/**
 * acct_syscall_evidence() - the word of the system call @th was switched
 * out in (stack @node, sample @s, @state) and its arguments, with the
 * call's relative timeout where it can be read.
 */
void acct_syscall_evidence(struct account *a, struct acct_thread *th,
			   const struct perf_sample *s, uint32_t node, char state);

#endif /* PROFILE_PRIV_H */
