/* SPDX-License-Identifier: MIT */
/*
 * profile.h - perfport's accounting stage: what each sample and each off-CPU
 * interval means, merged into one counter-typed call tree.
 *
 * profile_build() reads a recording through the earlier stages (reader,
 * machine, unwinding pool, symbolizer), charges every on-CPU sample and
 * every off-CPU interval to a counter, and returns a finished, read-only
 * profile: a flat view of the tree (DFS pre-order, deterministic), metadata
 * and a per-thread summary. Later stages (report, exporters) read only that.
 */
#ifndef PROFILE_PROFILE_H
#define PROFILE_PROFILE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../perf/perf.h"
#include "../symbols/symbols.h"

/* The thread states a node counts (DESIGN.md, "Counter types"). */
enum counter {
	CNT_ON_CPU,
	CNT_PREEMPTED,
	CNT_LOCK,
	CNT_IO,
	CNT_SLEEP,
	CNT_TIMED_SLEEP,
	CNT_IDLE,
	CNT_COUNT,
};

/** counter_name() - "on-cpu", "preempted", "lock", "io", "sleep", "timed-sleep", "idle". */
const char *counter_name(enum counter c);

/** counter_parse() - the counter called @name (as counter_name()), or -1. */
int counter_parse(const char *name);

/*
 * What decided an off-CPU interval's state, in the order the evidence is
 * weighed (docs/wait-states.md): the first that has a word decides.
 */
enum state_layer {
	STATE_BY_USER,              /* a --state-rules rule */
	STATE_BY_PROGRAM,           /* a runtime's wait function (src/profile/waits/) */
	STATE_BY_WAKEUP,            /* what woke it: its timer, a release, a completion */
	STATE_BY_ARGS,              /* the system call it waited in, and its arguments */
	STATE_BY_KERNEL,            /* the thread state and the kernel's paths (state-rules) */
	STATE_BY_COUNT,
};

/** state_layer_name() - "user rules", "program rules", "wakeup", "syscall arguments", "kernel rules". */
const char *state_layer_name(enum state_layer l);

/* A runtime or server the program rules know (a "runtime" line). */
struct profile_runtime {
	const char *name;
	const char *advice;         /* what names its rules need, or NULL */
	const char *note;           /* what to say of its waits where its rules decided, or NULL */
	const char *module;         /* a module of the recording it was recognised by, or NULL */
	uint64_t frames, unnamed;   /* frames of that module in the profile, and unnamed ones */
	uint64_t count, ns;         /* off-CPU intervals (and their time) its rules decided */
};

/**
 * profile_runtime_of() - the runtime or server @module is, by the built-in
 * program rules' "runtime" lines (its file name matched), or NULL.
 * @advice: set to what gives that runtime's rules their names, or NULL.
 * The strings are static: valid until the program exits.
 */
const char *profile_runtime_of(const char *module, const char **advice);

/**
 * profile_runtime_note() - what a report of runtime @name's threads says of
 * its waits (its built-in rules' "note"), or NULL: static.
 */
const char *profile_runtime_note(const char *name);

/*
 * A runtime whose waits all park in one function, told apart only by the
 * names of the code above the park (a "park" line of its rules: HotSpot's
 * Unsafe_Park in src/profile/waits/50-hotspot.rules).
 */
struct profile_park {
	const char *runtime;        /* its runtime line's NAME: "HotSpot" */
	const char *park;           /* the function its waits park in */
	const char *interpreted;    /* what its perf map names all interpreted code; NULL none */
	const char *waits;          /* whose waits park there, for a reader */
	const char *compile;        /* what names interpreted callers (NULL with interpreted) */
	const char *map;            /* what names a JIT's code without a map */
};

/**
 * profile_parks() - the parks of the built-in program rules, in the order
 * of their files, into *@n of them (0 where the rules could not be read).
 * Static: valid until the program exits. A profile's own are
 * profile_meta.parks (a --state-rules file's first).
 */
const struct profile_park *profile_parks(size_t *n);

/**
 * profile_module_is_wrapper() - whether @module is a library of wrappers
 * (the C library: a "wrappers" runtime of the built-in program rules):
 * where a program waits is its innermost frame outside such modules.
 */
bool profile_module_is_wrapper(const char *module);

/* Synthetic frames, beside symbols.h's FRAME_F_* flags. */
enum {
	FRAME_F_PROCESS = 1 << 8,   /* a --group-by root: "comm [pid]" */
	FRAME_F_THREAD = 1 << 9,    /* a --group-by root: "comm [tid]" */
	FRAME_F_SYNTHETIC = 1 << 10, /* a placeholder, e.g. an off-CPU interval with no stack */
};

enum group_by {
	GROUP_NONE,
	GROUP_PROCESS,
	GROUP_THREAD,
};

struct profile_opts {
	struct sym_opts sym;
	unsigned jobs;              /* unwinding threads; 0 or 1: none */
	enum group_by group_by;
	bool offcpu_simple;         /* all off-CPU time is SLEEP */
	bool no_kernel;             /* leave kernel frames out of stacks */
	const char *events;         /* comma-separated event names; NULL: every sampling event */
	const char *state_rules;    /* a rules file; NULL: the built-in rules */
	const char *pids, *tids;    /* comma-separated lists, or NULL */
	const char *comms;          /* comma-separated command names, or NULL */
	const char *time;           /* perf's --time syntax, or NULL */
	bool has_start_time;
	uint64_t start_time_ns;     /* --start-time, epoch ns */
	bool warn_estimated_time;   /* warn when the wall-clock times are estimated (for
				     * outputs that carry them; report marks them instead) */
	/* the input's name in messages, when the path read is another (a
	 * descriptor's /proc/self/fd/N); NULL: the path */
	const char *shown;
	perf_progress_fn progress;
	void *progress_ctx;
	/* non-zero: also keep each node's self values per slice of this many
	 * ns of the recording (profile.slices), for formats that send data by
	 * time (SkyWalking's flushes, CodeGuru's reporting periods) */
	uint64_t slice_ns;
	/* also keep every sample and off-CPU interval with its time and thread
	 * (profile.timed), for formats that show a timeline */
	bool timeline;
	/* key the tree's frames by file:line too (a function is one frame per
	 * line it was seen at, the tree split by them), for formats that show
	 * cost per source line (PERFPORT_EXPORTER_LINES) */
	bool frames_by_line;
	/* when *stop becomes non-zero (a signal handler's flag, whose signal
	 * interrupts the read), the input ends there as if the recording
	 * ended: what was read is counted, the profile (or the last window)
	 * finished as usual (perf_reader_opts.stop) */
	const volatile sig_atomic_t *stop;
	/* non-NULL: name with this symbolizer, the caller's (sym_new()), and
	 * keep what it makes for the next build: rotated recordings of one
	 * machine name the same files (sym_rebind() at the start, sym_trim()
	 * at the end: its sym_opts.dwarf_max bounds it); @sym is then unused */
	struct symbolizer *sym_keep;
	/* count without stacks: no sample's stack is unwound or named (the
	 * tree holds the group roots and the "[off-cpu: stack not recorded]"
	 * placeholders alone), the rest counted as with them: the intervals
	 * and their time, which switch-outs were paired with their
	 * sched_switch sample (meta.iv_no_stack*), the threads; the states
	 * are what the kernel's rules say of a stack-less wait. For what a
	 * recording holds (info) */
	bool no_stacks;
};

/* One sample or off-CPU interval as it was counted (profile_opts.timeline). */
struct profile_timed {
	uint64_t time;              /* perf clock: the sample, or the interval's start */
	uint64_t ns;                /* what it added to its node's self value */
	uint32_t node;
	uint32_t tid;
	uint32_t counter;           /* enum counter */
	uint32_t count;             /* what it added to the self count (1) */
};

/* A node's self count and value for one counter in one time slice. */
struct profile_slice {
	uint32_t slice;             /* (time - profile.slice_origin) / slice_ns */
	uint32_t node;
	uint32_t counter;           /* enum counter */
	uint32_t pad;
	uint64_t count, ns;
};

/* A frame of the view. Strings are owned by the profile. */
struct profile_frame {
	const char *function;       /* never NULL; "[unknown]" when unnamed */
	const char *module;         /* the mapped file, or NULL */
	const char *file;           /* source file, or NULL */
	uint32_t line;
	uint32_t flags;             /* FRAME_F_* */
	/* where the frame was first seen: an address in the recording's own
	 * terms (0: none), and its module's base there (address - file offset;
	 * 0 for the kernel, whose addresses are its own). One base per module
	 * for the whole profile, so the addresses of one module agree. */
	uint64_t addr, base;
};

struct profile_counts {
	uint64_t count[CNT_COUNT];  /* samples or intervals */
	uint64_t ns[CNT_COUNT];     /* weight: ns, or events for a non-time event */
};

/* A node of the view; node 0 is the root, which has no frame. */
struct profile_node {
	uint32_t parent;            /* UINT32_MAX for the root */
	uint32_t frame;             /* index in frames; UINT32_MAX for the root */
	uint32_t depth;             /* 0 for the root */
	uint32_t end;               /* one past the last node of its subtree */
};

/* How an event of the recording was used. */
enum source_role {
	ROLE_ON_CPU,                /* a sampling event: ON_CPU (IDLE for the idle task) */
	ROLE_SCHED_SWITCH,          /* sched:sched_switch: off-CPU intervals */
	ROLE_WAKEUP,                /* sched:sched_wakeup(_new): splits blocked time and delay */
	ROLE_OFFCPU_TIME,           /* perf record --off-cpu's offcpu-time */
	ROLE_IGNORED,               /* not selected, side-band only, or of no use */
};

struct profile_source {
	const char *name;
	enum source_role role;
	bool freq;                  /* sampled at a frequency */
	uint64_t period_or_freq;
	const char *unit;           /* "ns" or "events": what its weight counts */
	uint64_t samples;           /* samples used */
	bool stacks;                /* recorded with call stacks (-g, --call-graph) */
	uint64_t recorded;          /* samples in the recording */
	bool left_out;              /* a sampling event the default profile does not count
				     * (it counts one event; --event picks) */
};

struct profile_thread {
	uint32_t pid, tid;
	const char *comm;           /* the last one seen */
	uint64_t start, end;        /* lifetime in perf time: fork (or first seen) to exit (or end) */
	bool forked, exited;        /* start/end come from FORK/EXIT records */
	struct profile_counts c;    /* ON_CPU/IDLE samples, off-CPU intervals by state */
	uint64_t run_ns;            /* on CPU as measured by switch-in to switch-out, when recorded */
	bool run_known;             /* switches were recorded: run_ns is measured (else 0) */
	uint64_t blocked_ns;        /* off CPU until woken (or until switched in, unwoken) */
	uint64_t delay_ns;          /* runnable but waiting: wakeup (or preemption) to switch-in */
	uint64_t open_at_end;       /* intervals still open when the recording ended */
	uint64_t bounded;           /* intervals whose switch-in was missing (bounded or approximated) */
	/* of c's off-CPU intervals, those whose stack was not recorded (charged
	 * to "[off-cpu: stack not recorded]"), by state */
	struct profile_counts no_stack;
};

enum time_source {
	TIME_REALTIME,              /* recorded with -k realtime: sample times are epoch */
	TIME_CLOCK_DATA,            /* HEADER_CLOCK_DATA maps the clock to the time of day */
	TIME_ESTIMATED,             /* file modification time and sample span */
	TIME_GIVEN,                 /* --start-time */
};

struct profile_meta {
	uint64_t first_time, last_time; /* perf clock, of the events used */
	/* perf clock: the span the profile describes, first_time..last_time
	 * clipped to --time (what the exporters' start and end say) */
	uint64_t window_lo, window_hi;
	uint64_t start_ns, end_ns;  /* wall clock, epoch ns */
	enum time_source time_source;
	const char *hostname, *osrelease, *arch, *perf_version, *cmdline;
	uint32_t nr_cpus;
	unsigned counters_present;  /* bit per enum counter with a non-zero count */
	struct profile_source *sources;
	size_t nr_sources;
	/* off-CPU intervals by how their end was found */
	uint64_t iv_exact;          /* a switch-in (sched_switch next_pid, SWITCH record) */
	uint64_t iv_inferred;       /* switch-in missing: bounded by wakeup or the CPU's last event */
	uint64_t iv_approx;         /* no switch-in source: ended at the thread's next sample */
	uint64_t iv_open_at_end;    /* charged to the end of the recording */
	uint64_t iv_open_ns;        /* the time they were charged */
	uint64_t iv_no_stack;       /* switch-outs without a sched_switch sample (stack unknown) */
	uint64_t iv_no_stack_lost;  /* ... of them on a CPU whose records were lost */
	uint64_t iv_no_stack_unrecorded; /* ... of them with no sched_switch event recorded */
	uint64_t iv_no_stack_ns;    /* the time charged to them (of the off-CPU total) */
	uint64_t iv_lost_cut;       /* intervals cut at a loss (records lost while they were open) */
	uint64_t iv_lost_cut_ns;    /* their time after the loss, charged to no state */
	uint64_t run_lost_cut;      /* runs cut at a loss of their CPU's records */
	uint64_t run_lost_cut_ns;   /* their time from the loss to the thread's next event, not run */
	/* intervals whose state the evidence of their system call decided
	 * (syscall.h), and switch-outs in a call with no user registers to read */
	uint64_t iv_by_syscall, iv_syscall_no_regs;
	/* off-CPU intervals (and their time) by what decided their state; the
	 * times add up to the off-CPU total */
	uint64_t decided_count[STATE_BY_COUNT], decided_ns[STATE_BY_COUNT];
	/* per counter, the off-CPU intervals (and time) decided on thin
	 * evidence: by the kernel's catch-all for the thread's state, only by
	 * another task's event having woken it, or only by a futex's or
	 * semaphore's wait having had no timeout (sys_awaits_unsaid()) - no
	 * program's rule, no specific waker, no call said what was awaited */
	uint64_t thin_count[CNT_COUNT], thin_ns[CNT_COUNT];
	bool stack_copies;          /* an event recorded user stacks (--call-graph dwarf) */
	bool user_regs;             /* an event recorded user registers */
	/* the runtimes the program rules know, recognised or not */
	const struct profile_runtime *runtimes;
	size_t nr_runtimes;
	/* the parks of the rules it was built with, the user's first */
	const struct profile_park *parks;
	size_t nr_parks;
	bool wakers;                /* wakeups with the wakers' stacks were recorded */
	bool freq_trap;             /* sched_switch in frequency mode: most switches unsampled */
	bool offcpu_simple;
	enum group_by group_by;
	uint64_t samples_filtered;  /* samples left out by --pid/--tid/--comm/--time */
	uint64_t lost;              /* samples the kernel lost */
	uint64_t stacks_unique;     /* distinct raw stacks symbolized */
	uint64_t stacks_cached;     /* samples whose stack came from the cache */
	const char *state_rules;    /* the rules file used, or "built-in" */
};

/* A file frames were found in, with its build id. */
struct profile_module {
	const char *path;           /* as frames name it (profile_frame.module) */
	const char *build_id;       /* lowercase hex, or NULL when the recording did not say */
	/* the span its frames' addresses lie in: [start, limit), file_offset at
	 * start (user modules from their base, file offset 0; the kernel as
	 * its own addresses); all 0 when no frame has an address */
	uint64_t start, limit, file_offset;
};

struct profile {
	struct profile_meta meta;
	size_t nr_modules;
	const struct profile_module *modules; /* every module a frame names, in order of first use */
	/* off-wake stacks (sched_wakeup recorded with stacks): per blocked
	 * interval, the switch-out stack root first, a "--- woken by ---"
	 * frame, then the stack of the thread that woke it, leaf first; the
	 * value is the blocked time (switch-out to wakeup) in the interval's
	 * counter. A tree like the main one; nr_waker_nodes 0 without wakers. */
	size_t nr_waker_frames, nr_waker_nodes;
	const struct profile_frame *waker_frames;
	const struct profile_node *waker_nodes;
	const struct profile_counts *waker_self, *waker_total;
	/* with profile_opts.slice_ns: self values by slice, sorted by slice,
	 * node, counter; slice 0 starts at slice_origin (perf clock) */
	uint64_t slice_ns, slice_origin;
	size_t nr_slices;
	const struct profile_slice *slices;
	/* with profile_opts.timeline: every sample and interval, sorted by time
	 * (then tid); intervals clipped to the --time window */
	size_t nr_timed;
	const struct profile_timed *timed;
	/* and the off-wake tree's blocked intervals (waker nodes) */
	size_t nr_waker_timed;
	const struct profile_timed *waker_timed;
	size_t nr_frames;
	const struct profile_frame *frames;
	size_t nr_nodes;
	const struct profile_node *nodes;  /* DFS pre-order, children sorted by frame */
	const struct profile_counts *self; /* per node */
	const struct profile_counts *total; /* per node: self plus its subtree */
	size_t nr_threads;
	const struct profile_thread *threads; /* sorted by pid, tid */
	struct sym_stats sym;               /* symbolization statistics */
	struct perf_stats read;             /* what the reader read and skipped */
	void *priv;
};

/**
 * profile_build() - read the recording at @path and build its profile.
 * @path: as perf_reader_open() takes it ("-" for stdin).
 * @opts: what to count and how; read during the call only.
 * @out: set to the profile, which the caller frees with profile_free().
 *
 * Return: PP_OK when the whole recording was used; PP_EPARTIAL when some of
 * it was skipped (the profile holds the rest and profile->read says what);
 * or an error, with *out NULL and the reason logged.
 */
int profile_build(const char *path, const struct profile_opts *opts, struct profile **out);

/**
 * profile_build_mem() - as profile_build(), on a recording in memory.
 * @data: the bytes, not copied: they must outlive the call only.
 * @name: what messages call the recording.
 */
int profile_build_mem(const void *data, size_t size, const char *name,
		      const struct profile_opts *opts, struct profile **out);

/**
 * typedef profile_window_fn - one window of a stream, finished.
 * @p: its profile, the callee's to free (profile_free()), even on error.
 * @partial: records were skipped so far in the stream (p->read says what).
 * Return: 0 to go on, non-zero (an enum pp_error) to stop the pass.
 */
typedef int (*profile_window_fn)(void *ctx, struct profile *p, bool partial);

/**
 * profile_build_windows() - read the recording at @path (a pipe's endless
 * stream too: "-") once, and hand @fn a profile of each @window_ns of it,
 * in time order, as soon as the ordering of the records lets a window end
 * (a record at or after its end was delivered; the last one at the end of
 * the stream). Windows are [lo, lo + @window_ns) from the first sample;
 * one with nothing in it is not handed on. Threads, maps and names carry
 * from one window to the next (the machine and the symbolizer are the
 * pass's), each sample is counted in the one window it falls in, and an
 * off-CPU interval open at a window's end counts up to it there and goes
 * on in the next (the windows' totals are the whole stream's). A pipe is
 * read a quarter of a window (250 ms at most) at a time
 * (perf_reader_opts.gather_ms).
 * Return: as profile_build(), for the whole pass, or what @fn returned.
 */
int profile_build_windows(const char *path, const struct profile_opts *opts, uint64_t window_ns,
			  profile_window_fn fn, void *ctx);

/**
 * profile_settle() - wait until what the last profile_build() made to read
 * its recording is let go: with threads (opts->jobs > 1) that goes on, on
 * a thread of its own, while the caller uses the profile. The next build
 * waits for it too; a command calls this before it exits.
 */
void profile_settle(void);

/** profile_free() - free the profile and every string it holds; NULL is fine. */
void profile_free(struct profile *p);

/**
 * typedef profile_walk_fn - called on entering (@leave false) and leaving a
 * node during profile_walk(). Return non-zero to stop the walk.
 */
typedef int (*profile_walk_fn)(void *ctx, const struct profile *p, uint32_t node, bool leave);

/** profile_walk() - visit every node depth-first. Return: what stopped it, or 0. */
int profile_walk(const struct profile *p, profile_walk_fn fn, void *ctx);

/**
 * typedef profile_stack_fn - one stack with self values.
 * @frames: frame indexes, root first (synthetic group frames included),
 *          valid during the call only; @depth: their number.
 * @node: the leaf node, whose self counts are p->self[node].
 */
typedef int (*profile_stack_fn)(void *ctx, const struct profile *p, const uint32_t *frames,
				size_t depth, uint32_t node);

/**
 * profile_stacks() - call @fn for every node with a non-zero self count, in
 * pre-order. Return: what stopped it, or 0.
 */
int profile_stacks(const struct profile *p, profile_stack_fn fn, void *ctx);

/** profile_time_source_name() - "realtime", "clock-data", "estimated", "given". */
const char *profile_time_source_name(enum time_source t);

/** profile_role_name() - "on-cpu", "sched-switch", "wakeup", "offcpu-time", "ignored". */
const char *profile_role_name(enum source_role r);

#endif /* PROFILE_PROFILE_H */
