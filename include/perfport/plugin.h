/* SPDX-License-Identifier: MIT */
/*
 * perfport/plugin.h - the exporter plugin ABI.
 *
 * An exporter is a shared object that perfport loads with dlopen(). It
 * exports one symbol, PERFPORT_EXPORTER_SYMBOL ("perfport_exporter"), a
 * const struct perfport_exporter. It includes only this header (and
 * version.h); it never links against perfport: what it needs from the host
 * comes through struct perfport_host.
 *
 * Versioning, the way curl and libtraceevent grow their structs:
 * - PERFPORT_ABI_MAJOR changes only when something is removed or changes
 *   meaning; the host refuses a plugin built for another major.
 * - Every struct that crosses the boundary starts with (or carries) its
 *   struct_size; fields are only ever appended. A reader checks struct_size
 *   before touching a field added later (PERFPORT_HAS()).
 * - Arrays of structs are indexed with the element size the host states
 *   (perfport_frame_at() and friends), never with sizeof: a newer host may
 *   hand over longer elements.
 *
 * Lifecycle, for each format of one `perfport export`:
 *   check(host, options) (ABI 1.6, before the recording is read; may be
 *   NULL) -> init(host, options) -> write(profile, out) -> upload(profile)
 *   -> fini
 * Each returns enum perfport_status. upload may be NULL (write-only
 * formats).
 *
 * All strings are UTF-8 (names from symbol tables are passed as they are),
 * owned by the host, and valid until fini() unless said otherwise. Times
 * are nanoseconds.
 */
#ifndef PERFPORT_PLUGIN_H
#define PERFPORT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PERFPORT_ABI_MAJOR 1
#define PERFPORT_ABI_MINOR 8
/* What a plugin puts in perfport_exporter.abi_version. */
#define PERFPORT_ABI_VERSION ((uint32_t)(PERFPORT_ABI_MAJOR << 16 | PERFPORT_ABI_MINOR))

#define PERFPORT_EXPORTER_SYMBOL "perfport_exporter"

/* Is @field inside the struct @s points at (whose first field is struct_size)? */
#define PERFPORT_HAS(s, type, field) \
	((s)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

enum perfport_status {
	PERFPORT_OK = 0,
	PERFPORT_RETRY = 1,     /* transient: the host calls upload() again after a backoff,
				 * as often as the transport retries (--retries); from
				 * write() it is a failure (the output is discarded) */
	PERFPORT_ERROR = 2,     /* the plugin has logged why */
	PERFPORT_USAGE = 3,     /* (ABI 1.4) the user's mistake: a required option missing, a
				 * value the format cannot use; logged, not retried; perfport
				 * exits 1 as for any usage error (a 1.3 host: an error) */
};

/* Counters, in the order of perfport_profile's per-node values. A newer
 * host may have more (nr_counters says how many). */
enum perfport_counter {
	PERFPORT_COUNTER_ON_CPU = 0,
	PERFPORT_COUNTER_PREEMPTED = 1,
	PERFPORT_COUNTER_LOCK = 2,
	PERFPORT_COUNTER_IO = 3,
	PERFPORT_COUNTER_SLEEP = 4,
	PERFPORT_COUNTER_TIMED_SLEEP = 5,
	PERFPORT_COUNTER_IDLE = 6,
};

/* perfport_frame.flags */
enum {
	PERFPORT_FRAME_KERNEL = 1 << 0,
	PERFPORT_FRAME_USER = 1 << 1,
	PERFPORT_FRAME_INLINED = 1 << 2,    /* a call inlined at its caller's address */
	PERFPORT_FRAME_JIT = 1 << 3,
	PERFPORT_FRAME_UNKNOWN = 1 << 4,    /* no symbol named it: function is "MODULE+0xOFFSET"
					     * (or "[unknown]" without a module) */
	PERFPORT_FRAME_PROCESS = 1 << 8,    /* synthetic root: "comm [pid]" (--group-by) */
	PERFPORT_FRAME_THREAD = 1 << 9,     /* synthetic root: "comm [tid]" (--group-by thread) */
	PERFPORT_FRAME_SYNTHETIC = 1 << 10, /* a placeholder, e.g. an off-CPU interval with no stack */
};

struct perfport_frame {
	const char *function;   /* never NULL */
	const char *module;     /* the mapped file, "[kernel.kallsyms]", or NULL */
	const char *file;       /* source file, or NULL */
	uint32_t line;          /* 0: unknown */
	uint32_t flags;         /* PERFPORT_FRAME_* */

	/* --- ABI 1.3 (check frame_size) --- */
	/* an address of the frame as recorded, 0 unknown: user code at its
	 * file offset from its module's start (perfport_module.start), the
	 * kernel and unmapped code as they ran; inlined frames share the
	 * address of the frame they are inlined into */
	uint64_t address;
};

/* A node of the call tree. Node 0 is the root, which has no frame. Nodes
 * are in depth-first pre-order; children sorted by frame name. */
struct perfport_node {
	uint32_t parent;        /* UINT32_MAX for the root */
	uint32_t frame;         /* index into frames; UINT32_MAX for the root */
	uint32_t depth;         /* 0 for the root */
	uint32_t end;           /* one past the last node of this node's subtree */
};

/* An event of the recording and how it was used. */
struct perfport_event {
	const char *name;       /* as perf named it, e.g. "cpu-clock" */
	const char *role;       /* "on-cpu", "sched-switch", "wakeup", "offcpu-time", "ignored" */
	const char *unit;       /* what its values count: "nanoseconds" or "events" */
	uint64_t period;        /* the sampling period, 0 in frequency mode */
	uint64_t frequency;     /* the sampling frequency in Hz, 0 in period mode */
	uint64_t samples;       /* samples used */
};

struct perfport_thread {
	uint32_t pid, tid;
	const char *comm;
	uint64_t start_ns, end_ns;  /* lifetime, epoch */
	uint64_t run_ns;            /* measured from its switches, when recorded */
	uint64_t blocked_ns;        /* off CPU until woken */
	uint64_t delay_ns;          /* runnable but waiting for a CPU */
};

struct perfport_label {
	const char *key, *value;
};

/* A node's self count and value for one counter in one time slice (ABI 1.3). */
struct perfport_slice_value {
	uint32_t slice;             /* covers slice_start_ns + slice * slice_ns, slice_ns long */
	uint32_t node;
	uint32_t counter;
	uint32_t reserved;
	uint64_t count, value;
};

/* One sample or off-CPU interval of the tree, in time (ABI 1.5, for formats
 * with PERFPORT_EXPORTER_SAMPLES). Together they make up the tree's self
 * counts and values exactly. */
struct perfport_sample {
	uint64_t time_ns;           /* epoch: when sampled, or when the interval began */
	uint64_t value;             /* added to @node's self value for @counter: the
				     * sample's weight, or the interval's length in ns
				     * (within the exported window) */
	uint32_t node;              /* a node with a self count */
	uint32_t tid;               /* the thread (perfport_profile.threads has it) */
	uint32_t counter;           /* enum perfport_counter */
	uint32_t count;             /* added to the self count: 1 */
};

/* A file frames were found in (perfport_frame.module is its path). */
struct perfport_module {
	const char *path;
	const char *build_id;       /* lowercase hex, or NULL when the recording did not say */

	/* --- ABI 1.3 (check module_size) --- */
	/* where its frames' addresses lie: [start, limit), file_offset the
	 * file offset at start (as a pprof Mapping); all 0: no address known */
	uint64_t start, limit, file_offset;
};

/*
 * The profile: read-only, valid during the call it is passed to.
 *
 * Per node and counter there are a count (samples or intervals) and a value
 * (nanoseconds, or events for a non-time event), for the node itself (self)
 * and for its subtree (total): perfport_self_value() and friends read them.
 */
struct perfport_profile {
	uint32_t struct_size;
	/* entries in counter_names/units; values per node; at most 64 (a bit each
	 * in counters_present) */
	uint32_t nr_counters;
	const char *const *counter_names; /* "on-cpu", "preempted", "lock", "io", "sleep", ... */
	const char *const *counter_units; /* "nanoseconds" (or "events") */
	uint64_t counters_present;      /* bit per counter with a non-zero count */

	/* metadata */
	uint64_t start_ns, end_ns;      /* wall clock, epoch */
	const char *time_source;        /* "realtime", "clock-data", "estimated", "given" */
	const char *hostname, *os_release, *arch, *perf_version, *cmdline; /* NULL: unknown */
	uint32_t nr_cpus;
	const char *profile_id;         /* a random UUID, one per export run */
	size_t nr_events;
	size_t event_size;
	const struct perfport_event *events;
	size_t nr_labels;
	const struct perfport_label *labels; /* --label key=value */

	/* the tree */
	size_t nr_frames;
	size_t frame_size;
	const struct perfport_frame *frames;
	size_t nr_nodes;
	size_t node_size;
	const struct perfport_node *nodes;
	/* per node: nr_counters counts, then nr_counters values */
	const uint64_t *self;
	const uint64_t *total;

	size_t nr_threads;
	size_t thread_size;
	const struct perfport_thread *threads;

	size_t nr_modules;              /* every module a frame names */
	size_t module_size;
	const struct perfport_module *modules;

	/* --- ABI 1.3 --- */
	/* For formats with PERFPORT_EXPORTER_TIME_SLICES, on upload: the self
	 * counts and values of the tree's nodes by time slice, sorted by slice,
	 * node, counter (slice_ns 0 and none otherwise). They add up to the
	 * tree's self values; an off-CPU interval's time is spread over the
	 * slices it spans, its count goes to the one it ends in. */
	uint64_t slice_ns;
	uint64_t slice_start_ns;        /* epoch of slice 0 */
	size_t nr_slice_values;
	size_t slice_value_size;
	const struct perfport_slice_value *slice_values;

	/* The off-wake profile, NULL when the recording has no wakeups with
	 * stacks (perf record -e sched:sched_waking -g): the same counters and
	 * metadata, a tree whose stacks are each blocked interval's switch-out
	 * stack root first, a "--- woken by ---" frame (PERFPORT_FRAME_SYNTHETIC),
	 * then the stack of the thread that woke it, leaf first; values are the
	 * blocked time (switch-out to wakeup). Its own offwake is NULL. */
	const struct perfport_profile *offwake;

	/* --- ABI 1.4 (check struct_size) --- */
	/* perfport export --base FILE: the baseline recording's profile, built
	 * with the same options, for differential output (a flame graph coloured
	 * by change, a pprof with the base subtracted); NULL otherwise. Its own
	 * base and offwake are NULL. */
	const struct perfport_profile *base;

	/* --- ABI 1.5 (check struct_size: PERFPORT_PROFILE_HAS_SAMPLES) --- */
	/* For formats with PERFPORT_EXPORTER_SAMPLES: every sample and off-CPU
	 * interval of the tree with its time and thread, sorted by time then
	 * tid (none otherwise, and none in base). offwake has its own: each
	 * blocked interval with its wakeup, on the off-wake tree's nodes (a
	 * host before perfport's explorer, issue 56, gave none there: check
	 * its nr_samples). */
	size_t nr_samples;
	size_t sample_size;
	const struct perfport_sample *samples;

	/* --- ABI 1.6 (check struct_size: PERFPORT_PROFILE_HAS_WARNINGS) --- */
	/* What changes the meaning of the numbers - broken stacks, lost
	 * samples, off-CPU intervals without their switch-in, JIT code
	 * unnamed - each a lowercase sentence with the perf record options
	 * that fix it, for a format to show beside the numbers (the flame
	 * graph's header); perfport also prints them. None: 0. */
	size_t nr_warnings;
	const char *const *warnings;

	/* --- ABI 1.7 (check struct_size: PERFPORT_PROFILE_HAS_LINES) --- */
	/* Non-zero: the frames are keyed by source line too (every format
	 * asked for set PERFPORT_EXPORTER_LINES): a function is one frame per
	 * file:line it was seen at - its leaf's line where it was sampled, the
	 * line of the call in a caller - and the tree is split by them, so a
	 * sample's node gives the line of every frame of its stack. offwake and
	 * base are built alike (the flag is set in the profile and its base).
	 * 0: a frame is a function, its file:line the first seen. */
	uint32_t frames_by_line;
};

/* Whether @p has ABI 1.4's base member (a 1.3 host's profile has not). */
#define PERFPORT_PROFILE_HAS_BASE(p) \
	((p)->struct_size >= offsetof(struct perfport_profile, base) + sizeof((p)->base))

/* Whether @p has ABI 1.5's samples (a 1.4 host's profile has not). */
#define PERFPORT_PROFILE_HAS_SAMPLES(p) \
	((p)->struct_size >= offsetof(struct perfport_profile, samples) + sizeof((p)->samples))

/* Whether @p has ABI 1.7's frames_by_line (a 1.6 host's profile has not). */
#define PERFPORT_PROFILE_HAS_LINES(p) \
	((p)->struct_size >= offsetof(struct perfport_profile, frames_by_line) + \
	 sizeof((p)->frames_by_line))

/* Whether @p has ABI 1.6's warnings (a 1.5 host's profile has not). */
#define PERFPORT_PROFILE_HAS_WARNINGS(p) \
	((p)->struct_size >= offsetof(struct perfport_profile, warnings) + sizeof((p)->warnings))

static inline const struct perfport_frame *perfport_frame_at(const struct perfport_profile *p,
							     size_t i)
{
	return (const struct perfport_frame *)((const char *)p->frames + i * p->frame_size);
}

static inline const struct perfport_node *perfport_node_at(const struct perfport_profile *p,
							   size_t i)
{
	return (const struct perfport_node *)((const char *)p->nodes + i * p->node_size);
}

static inline const struct perfport_event *perfport_event_at(const struct perfport_profile *p,
							     size_t i)
{
	return (const struct perfport_event *)((const char *)p->events + i * p->event_size);
}

static inline const struct perfport_thread *perfport_thread_at(const struct perfport_profile *p,
							       size_t i)
{
	return (const struct perfport_thread *)((const char *)p->threads + i * p->thread_size);
}

static inline const struct perfport_slice_value *perfport_slice_value_at(const struct perfport_profile *p,
									size_t i)
{
	return (const struct perfport_slice_value *)((const char *)p->slice_values +
						       i * p->slice_value_size);
}

static inline const struct perfport_sample *perfport_sample_at(const struct perfport_profile *p,
							       size_t i)
{
	return (const struct perfport_sample *)((const char *)p->samples + i * p->sample_size);
}

static inline const struct perfport_module *perfport_module_at(const struct perfport_profile *p,
							       size_t i)
{
	return (const struct perfport_module *)((const char *)p->modules + i * p->module_size);
}

/*
 * perfport_single_process() - when every thread of @p (the idle task aside)
 * belongs to one process: that process's main thread (tid == pid), or
 * another of its threads if the main one was not seen; else NULL.
 */
static inline const struct perfport_thread *perfport_single_process(const struct perfport_profile *p)
{
	const struct perfport_thread *found = NULL;

	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct perfport_thread *t = perfport_thread_at(p, i);

		if (t->pid == 0)
			continue;
		if (found && t->pid != found->pid)
			return NULL;
		if (!found || t->tid == t->pid)
			found = t;
	}
	return found;
}

static inline uint64_t perfport_self_count(const struct perfport_profile *p, size_t node,
					   unsigned counter)
{
	return p->self[node * 2 * p->nr_counters + counter];
}

static inline uint64_t perfport_self_value(const struct perfport_profile *p, size_t node,
					   unsigned counter)
{
	return p->self[node * 2 * p->nr_counters + p->nr_counters + counter];
}

static inline uint64_t perfport_total_count(const struct perfport_profile *p, size_t node,
					    unsigned counter)
{
	return p->total[node * 2 * p->nr_counters + counter];
}

static inline uint64_t perfport_total_value(const struct perfport_profile *p, size_t node,
					    unsigned counter)
{
	return p->total[node * 2 * p->nr_counters + p->nr_counters + counter];
}

/*
 * typedef perfport_walk_fn - called on entering (@leave 0) and on leaving
 * (@leave 1) each node. Return non-zero to stop the walk.
 */
typedef int (*perfport_walk_fn)(void *ctx, const struct perfport_profile *p, uint32_t node,
				int leave);

/*
 * typedef perfport_stack_fn - one leaf stack: @frames (indexes into
 * p->frames, root first, @depth of them, valid during the call) of @node,
 * which has a non-zero self count. Return non-zero to stop.
 */
typedef int (*perfport_stack_fn)(void *ctx, const struct perfport_profile *p,
				 const uint32_t *frames, size_t depth, uint32_t node);

enum perfport_log_level {
	PERFPORT_LOG_ERROR = 0,
	PERFPORT_LOG_WARN = 1,
	PERFPORT_LOG_INFO = 2,
	PERFPORT_LOG_DEBUG = 3,
};

/* A sample type of the caller's choosing (perfport_pprof_opts.types, ABI 1.3):
 * per sample, the sum over @counters of their self counts or values. */
struct perfport_pprof_type {
	const char *type, *unit;        /* e.g. "delay", "nanoseconds" */
	uint64_t counters;              /* bit per counter summed into it */
	uint32_t counts;                /* non-zero: the counts (samples, intervals), else the values */
};

/* What pprof() encodes. */
struct perfport_pprof_opts {
	uint32_t struct_size;           /* sizeof(struct perfport_pprof_opts) */
	uint32_t gzip;                  /* non-zero: gzip the encoded profile, as pprof files are */
	uint64_t counters;              /* bit per counter to include; 0: every one present */

	/* --- ABI 1.3 --- */
	/* non-zero: exactly these sample types, in this order, instead of
	 * "samples/count" and one per counter (@counters is then ignored);
	 * samples whose values are all 0 are left out */
	size_t nr_types;
	size_t type_size;               /* sizeof(struct perfport_pprof_type) */
	const struct perfport_pprof_type *types;

	/* --- ABI 1.4 --- */
	/* non-zero: also the samples of the profile's base (export --base),
	 * their values negated - NEW minus BASE, as go tool pprof -diff_base
	 * reads two profiles */
	uint32_t base_negated;
};

/* An HTTP request for host->http(). */
struct perfport_http_request {
	uint32_t struct_size;           /* sizeof(struct perfport_http_request) */
	const char *method;             /* "POST", "PUT", "GET" */
	const char *url;
	const char *const *headers;     /* "Name: value", NULL-terminated, or NULL; no secrets */
	const void *body;
	size_t body_len;
	/* "aws:amz:REGION:SERVICE": signed with AWS SigV4 by the host, with the
	 * credentials it finds (environment, ~/.aws); the plugin never sees them */
	const char *aws_sigv4;
	/* a short [a-z0-9-] name: if the request cannot be delivered, keep it
	 * in the spool for `perfport resend` (NULL: do not keep it) */
	const char *spool_tag;
	/* "v4:REGION" or "v1": signed as an Alibaba Cloud Simple Log Service
	 * request by the host (Content-MD5, Date, Host and the signature
	 * headers added), with ALIBABA_CLOUD_ACCESS_KEY_ID/_SECRET and
	 * ALIBABA_CLOUD_SECURITY_TOKEN; NULL: not */
	const char *sls_sign;

	/* --- ABI 1.1 --- */
	/* non-zero: a gRPC call. Sent over HTTP/2 (prior knowledge on http://,
	 * ALPN on https://) with content-type application/grpc and te: trailers
	 * added; @body is the length-prefixed message(s). It succeeded when the
	 * grpc-status is 0; UNAVAILABLE, DEADLINE_EXCEEDED and
	 * RESOURCE_EXHAUSTED are retried like a 5xx, any other status is the
	 * request's fault and is neither retried nor spooled. */
	uint32_t grpc;

	/* --- ABI 1.2 --- */
	/* "Header-Name=ENV_VAR": the host adds the header "Header-Name: $ENV_VAR"
	 * when it sends the request, reading the variable then (and again at
	 * `perfport resend`), so a token reaches the server without being
	 * logged, spooled or seen by the plugin. An unset or empty variable, or
	 * a value with a control character, fails the request. NULL: none. */
	const char *secret_header;
};

struct perfport_http_response {
	uint32_t struct_size;           /* set by the caller */
	long status;                    /* HTTP status of the last attempt; 0: none */
	char *body;                     /* NUL-terminated; free with host->free() */
	size_t body_len;
	int spooled;                    /* the request was kept in the spool */

	/* --- ABI 1.1 --- */
	int grpc_status;                /* a gRPC call's grpc-status; -1: none received */
};

/* What the host offers a plugin. Check struct_size (PERFPORT_HAS) before
 * using a service added after ABI 1.0. */
struct perfport_host {
	uint32_t struct_size;
	uint32_t abi_version;           /* the host's PERFPORT_ABI_VERSION */
	const char *version;            /* perfport's release, e.g. "0.1.0" */

	/* log() - a message on perfport's log, prefixed with the format's name;
	 * lowercase, no trailing newline. */
	void (*log)(const struct perfport_host *host, enum perfport_log_level level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

	/* walk() - visit every node depth-first (enter and leave). Return: what
	 * @fn returned to stop, or 0. */
	int (*walk)(const struct perfport_profile *p, perfport_walk_fn fn, void *ctx);

	/* stacks() - every node with a non-zero self count, in pre-order, with
	 * its frames root first. Return: what @fn returned to stop, or 0. */
	int (*stacks)(const struct perfport_profile *p, perfport_stack_fn fn, void *ctx);

	/*
	 * pprof() - @p as a pprof profile.proto (perftools.profiles.Profile),
	 * the one encoder every pprof-based format shares: sample types
	 * "samples/count" then "<counter>/nanoseconds" per counter included
	 * (counter names with '_' for '-'); one location per frame with the
	 * calls inlined into it as extra lines, innermost first; functions with
	 * their file; a mapping per module with its build id; time, duration,
	 * the on-CPU period. *@buf (free with host->free()) and *@len receive
	 * the bytes. Return: PERFPORT_OK or PERFPORT_ERROR.
	 */
	enum perfport_status (*pprof)(const struct perfport_profile *p,
				      const struct perfport_pprof_opts *o, void **buf, size_t *len);
	/* free() - release what a host service allocated. */
	void (*free)(void *ptr);

	/* gzip() - @len bytes at @data as a gzip member (RFC 1952) in *@out
	 * (free with host->free()), *@out_len bytes. Return: PERFPORT_OK or
	 * PERFPORT_ERROR. */
	enum perfport_status (*gzip)(const void *data, size_t len, void **out, size_t *out_len);

	/* http() - send a request through the host's transport: TLS verified,
	 * timeouts, retries with backoff on connection errors, 5xx and 429
	 * (Retry-After honoured), a 4xx not retried and its message logged,
	 * signing, the spool. Return: PERFPORT_OK for a 2xx response, else
	 * PERFPORT_ERROR (the host has logged why; rs->spooled says whether the
	 * request was kept). */
	enum perfport_status (*http)(const struct perfport_http_request *rq,
				     struct perfport_http_response *rs);

	void *priv;                     /* the host's; do not touch */

	/* --- ABI 1.1 --- */

	/*
	 * create() - open a further output file @name for writing, in the
	 * directory a PERFPORT_EXPORTER_DIRECTORY format writes into (beside
	 * write()'s @out). @name is [A-Za-z0-9._-]+, not starting with '.',
	 * and not already made in this write(). Only during write(); the host
	 * closes the file after write() returns (do not fclose() it). The files
	 * appear when the format succeeded; if it fails none does, and files of
	 * those names from an earlier run are left as they were. Return: the stream, or
	 * NULL (the host has logged why: not a directory format, a bad name,
	 * the file cannot be made).
	 */
	FILE *(*create)(const struct perfport_host *host, const char *name);
};

enum perfport_option_type {
	PERFPORT_OPT_STRING = 0,
	PERFPORT_OPT_BOOL = 1,          /* "true"/"false", "yes"/"no", "1"/"0" */
	PERFPORT_OPT_INT = 2,           /* a decimal integer */
	PERFPORT_OPT_ENUM = 3,          /* one of choices */
	PERFPORT_OPT_LIST = 4,          /* comma-separated words, each one of choices */
};

/* One option a plugin takes (`-O FORMAT.name=value`). */
struct perfport_option_def {
	const char *name;
	enum perfport_option_type type;
	const char *default_value;      /* NULL: no default (the option is then unset) */
	const char *choices;            /* ENUM/LIST: comma-separated allowed words */
	const char *help;               /* one line */
};

/* An option as the plugin gets it: validated by the host against the
 * table; every option of the table is passed, set or defaulted (value NULL
 * when unset without a default). Booleans arrive as "true" or "false". */
struct perfport_option {
	const char *name;
	const char *value;
};

/* perfport_exporter.flags (ABI 1.1) */
enum {
	/* The format writes several files: -o names a directory (made if
	 * missing; <-o>/<name> when several formats are asked for, ./<name>
	 * without -o), write()'s @out is the file default_output in it, and
	 * host->create() makes the others. It cannot write to stdout. */
	PERFPORT_EXPORTER_DIRECTORY = 1 << 0,
	/* The format reads per-thread trees: unless --group-by is given, the
	 * tree is grouped by thread (process frames, then thread frames,
	 * PERFPORT_FRAME_PROCESS/THREAD) when every format asked for sets this. */
	PERFPORT_EXPORTER_BY_THREAD = 1 << 1,
	/* (ABI 1.3) The format's upload sends data by time (perfport_profile's
	 * slice values): the host keeps them, in slices of 5 s, when uploading. */
	PERFPORT_EXPORTER_TIME_SLICES = 1 << 2,
	/* (ABI 1.5) The format shows samples in time (a timeline, timestamps
	 * per sample): the host keeps every sample and interval
	 * (perfport_profile.samples), on write and upload. */
	PERFPORT_EXPORTER_SAMPLES = 1 << 3,
	/* (ABI 1.6) The format places the profile in wall-clock time (a
	 * backend's time axis, timestamps a reader compares with other
	 * data): the host warns when the recording holds no wall-clock
	 * reference and the times are estimated (perf record without -k). */
	PERFPORT_EXPORTER_WALL_CLOCK = 1 << 4,
	/* (ABI 1.7) The format shows cost per source line: when every format
	 * asked for sets this, the host keys the tree's frames by file:line
	 * too (perfport_profile.frames_by_line says it did; a 1.6 host or a
	 * mix with other formats does not: the format merges a function's
	 * frames itself then). */
	PERFPORT_EXPORTER_LINES = 1 << 5,
	/* (ABI 1.8) The format shows no frame's source file or line (the
	 * frames' function, module and flags are all it reads): when every
	 * format asked for sets this, the host reads no line tables, and
	 * every frame's file is NULL and its line 0. */
	PERFPORT_EXPORTER_NO_LINES = 1 << 6,
};

/* What check()'s @mode says the run will do (ABI 1.6). */
enum {
	PERFPORT_CHECK_WRITE = 1 << 0,  /* write() will be called (perfport export) */
	PERFPORT_CHECK_UPLOAD = 1 << 1, /* upload() will be called (upload, export --upload) */
};

/* The one symbol an exporter exports. */
struct perfport_exporter {
	uint32_t abi_version;           /* PERFPORT_ABI_VERSION */
	uint32_t struct_size;           /* sizeof(struct perfport_exporter) */
	const char *name;               /* the format: [a-z0-9-]+, e.g. "folded" */
	const char *description;        /* one line, for `perfport formats` */
	const char *default_output;     /* file name when -o names a directory */
	const struct perfport_option_def *options;
	size_t nr_options;

	/* init() - @opts: every option of the table, in its order, valid until
	 * fini(). *@state: the plugin's, passed back to the calls below. */
	enum perfport_status (*init)(const struct perfport_host *host,
				     const struct perfport_option *opts, size_t nr_opts,
				     void **state);
	/* write() - the profile in this format, to @out (the host opens and
	 * closes it). */
	enum perfport_status (*write)(void *state, const struct perfport_profile *p, FILE *out);
	/* upload() - send the profile to the backend (`perfport upload`, `export
	 * --upload`); NULL: write-only format. Requests through host->http are
	 * already retried: return PERFPORT_RETRY only for what the plugin itself
	 * finds transient, and the host will call again. */
	enum perfport_status (*upload)(void *state, const struct perfport_profile *p);
	/* fini() - release @state. */
	void (*fini)(void *state);

	/* --- ABI 1.1 --- */
	uint32_t flags;                 /* PERFPORT_EXPORTER_* */

	/* --- ABI 1.6 (the host checks struct_size) --- */
	/* check() - NULL, or the options' own checks, made before the recording
	 * is read (which may take minutes): a required option missing for what
	 * @mode (PERFPORT_CHECK_*) asks, values that cannot go together, a
	 * credential or region that cannot be found. @opts as init() gets them,
	 * valid during the call. It keeps no state and sends and writes
	 * nothing. Return: PERFPORT_OK, or PERFPORT_USAGE having logged what is
	 * wrong and the option that fixes it (perfport then exits 1 without
	 * reading the recording). init() and upload() still check what they
	 * need: an older host never calls check(). */
	enum perfport_status (*check)(const struct perfport_host *host,
				      const struct perfport_option *opts, size_t nr_opts,
				      uint32_t mode);
};

#ifdef __cplusplus
}
#endif

#endif /* PERFPORT_PLUGIN_H */
