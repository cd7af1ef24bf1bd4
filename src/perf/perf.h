/* SPDX-License-Identifier: MIT */
/*
 * perf.h - the perf.data reader: perfport's first stage.
 *
 * It opens a recording (file, pipe or directory form, plain or zstd
 * compressed, either byte order), decodes the header, attributes and feature
 * sections, and delivers every record, decoded and in native byte order, to
 * one callback - in time order when asked. It knows nothing of symbols or
 * trees. Nothing here crashes or hangs on a hostile file: what cannot be
 * read is skipped, counted and reported in struct perf_stats.
 */
#ifndef PERF_PERF_H
#define PERF_PERF_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"

struct tep_handle;
struct tep_event;
struct tep_format_field;

/* A decoded perf_event_attr; fields a file did not have are zero. */
struct perf_attr {
	uint32_t type;
	uint32_t size;          /* as recorded (0 in the oldest files) */
	uint64_t config;
	uint64_t sample_period; /* or sample_freq when flags & FREQ */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;         /* PERF_ATTR_FLAG_*, in kernel bit order */
	uint32_t wakeup_events;
	uint32_t bp_type;
	uint64_t config1;
	uint64_t config2;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint32_t aux_sample_size;
	uint64_t sig_data;
	uint64_t config3;
};

/* One event (evsel) of the recording. Owned by the reader. */
struct perf_evsel {
	unsigned idx;            /* position in the file's attr list */
	struct perf_attr attr;
	char *name;              /* "cpu-clock", "sched:sched_switch", ... */
	bool name_made;          /* made from type and config, as perf makes it:
				  * nothing in the file named the event */
	uint64_t *ids;
	size_t nr_ids;
	struct tep_event *tp;    /* tracepoint format, if known */
	const char *print_fmt;   /* its "print fmt:" text (the header's), or NULL */
	/* Layout, computed once from attr. */
	int id_pos;              /* u64 index of the id in a sample, or -1 */
	int is_pos;              /* u64 index of the id from a trailer's end, or -1 */
	int time_pos;            /* u64 index of TIME in a sample, or -1 */
	unsigned trailer_size;   /* bytes of the sample_id_all trailer */
	/* samples hold only fixed u64 slots and a callchain (cpu-clock -g and
	 * most sampling events): perf_sample_parse() takes a shorter path */
	bool simple;
	uint8_t simple_slots;    /* then: how many slots (the callchain's length is one) */
	/* the period of a sample that does not record it: an event sampled
	 * every N events (perf record -c N) leaves PERF_SAMPLE_PERIOD out, each
	 * sample standing for N, as perf reads it; 0 in frequency mode (the
	 * attr then holds a frequency) */
	uint64_t fixed_period;
	/* Counted as samples are delivered, on a cache line of their own: a
	 * reader that cuts on a thread of its own reads the layout above
	 * there for every record while the consumer's thread writes these
	 * (the struct is allocated aligned: perf_evsel_add()). */
	_Alignas(64) uint64_t nr_samples; /* samples delivered for this event */
	uint64_t first_time, last_time; /* of its samples, 0 if untimed */
};

struct perf_branch_entry_rec {
	uint64_t from;
	uint64_t to;
	uint64_t flags;
};

/* A decoded PERF_RECORD_SAMPLE; pointers point into the record. */
struct perf_sample {
	uint64_t id;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	struct {
		uint64_t time_enabled, time_running;
		uint64_t nr;            /* values; 1 unless PERF_FORMAT_GROUP */
		const uint64_t *values; /* nr groups of stride u64: value[, id][, lost] */
		unsigned stride;
		uint64_t one_id;        /* without PERF_FORMAT_GROUP: the value's id */
	} read;
	uint64_t callchain_nr;
	const uint64_t *callchain;
	uint32_t raw_size;
	const void *raw;         /* tracepoint data, in the recording's byte order */
	uint64_t branch_nr;
	uint64_t branch_hw_idx;  /* valid when branch_has_hw_idx */
	bool branch_has_hw_idx;
	const struct perf_branch_entry_rec *branch;
	uint64_t user_regs_abi, user_regs_mask;
	const uint64_t *user_regs;
	uint64_t user_stack_size;
	const uint8_t *user_stack;
	uint64_t user_stack_dyn_size;
	uint64_t weight;         /* WEIGHT, or WEIGHT_STRUCT's u64 */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t intr_regs_abi, intr_regs_mask;
	const uint64_t *intr_regs;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t aux_size;
	const void *aux;
};

/* Decoded bodies of the side-band records later stages use. */
struct perf_mmap_rec {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;       /* MMAP2 without build id */
	uint64_t ino, ino_generation;
	uint32_t prot, flags;    /* MMAP2 only */
	uint8_t build_id[PERF_MAX_BUILD_ID];
	uint8_t build_id_size;   /* non-zero when MMAP2 carried a build id */
	const char *filename;    /* NUL-terminated inside the record */
};

struct perf_comm_rec {
	uint32_t pid, tid;
	bool exec;
	const char *comm;
};

struct perf_task_rec {           /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct perf_switch_rec {         /* SWITCH and SWITCH_CPU_WIDE */
	bool out;
	bool preempt;
	uint32_t next_prev_pid, next_prev_tid; /* CPU_WIDE only */
};

struct perf_lost_rec {           /* LOST and LOST_SAMPLES */
	uint64_t id;
	uint64_t lost;
};

struct perf_ns_rec {             /* NAMESPACES: the namespaces a thread is in */
	uint32_t pid, tid;
	uint64_t pid_dev, pid_ino;  /* 0 0: not given */
	uint64_t mnt_dev, mnt_ino;
};

struct perf_ksymbol_rec {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type, flags;
	const char *name;
};

/*
 * One counter value a sample read (PERF_SAMPLE_READ, e.g. a group sampled
 * by its leader: perf record -e '{a,b}:S'), as perf itself delivers it: the
 * counter's event and how much it counted since the last sample that read
 * it (per id, and per thread when the counters were inherited).
 */
struct perf_read_value {
	const struct perf_evsel *evsel;
	uint64_t id;
	uint64_t period;         /* the value's increase; never 0 */
};

/* One record as delivered to a consumer. Valid only during the callback. */
struct perf_event {
	uint32_t type;           /* PERF_RECORD_* or PERF_REC_* */
	uint16_t misc;
	uint32_t size;           /* bytes of the record, native */
	uint64_t offset;         /* where it was in the file (in the stream when compressed) */
	const void *data;        /* the whole record, native byte order */
	void *hold;              /* what keeps data where it is: perf_event_hold() */
	const struct perf_evsel *evsel; /* SAMPLE and sample_id_all trailers; may be NULL */
	bool has_sample_id;      /* a trailer was decoded into sample (tid, time, cpu, id) */
	struct perf_sample sample;
	/* a sample that read counters with their ids: one entry per counter
	 * that counted since it was last read, the sampling event's own among
	 * them (perf counts such a sample once per entry, each with its event
	 * and period, not with the sample's own period); has_reads false: a
	 * plain sample */
	bool has_reads;
	const struct perf_read_value *reads;
	size_t nr_reads;
	union {
		struct perf_mmap_rec mmap;
		struct perf_comm_rec comm;
		struct perf_task_rec task;
		struct perf_switch_rec sw;
		struct perf_lost_rec lost;
		struct perf_ksymbol_rec ksym;
		struct perf_ns_rec ns;
	} u;
};

struct perf_build_id {
	int32_t pid;
	uint16_t misc;
	uint8_t size;
	uint8_t id[PERF_MAX_BUILD_ID];
	char *filename;
};

struct perf_group_desc {
	char *name;              /* may be "{anon_group}" */
	uint32_t leader_idx;     /* index of the leader in the event list */
	uint32_t nr_members;
};

/* What the header and its feature sections said. Owned by the reader. */
struct perf_header_info {
	bool pipe;               /* pipe-mode stream */
	bool directory;          /* perf record --threads directory */
	bool swapped;            /* recorded with the other byte order */
	uint64_t file_size;
	uint64_t mtime_ns;        /* the file's modification time, 0 for a pipe */
	uint64_t data_offset, data_size;
	uint64_t features[PERF_FEAT_BITS / 64];
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	char *cmdline;           /* arguments joined by spaces */
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	uint64_t sample_time_first, sample_time_last; /* SAMPLE_TIME */
	uint64_t clockid_res_ns;
	bool has_clock_data;
	uint32_t clock_data_clockid;
	uint64_t clock_data_wall_ns, clock_data_clk_ns;
	bool has_compressed;
	uint32_t comp_type, comp_level, comp_ratio, comp_mmap_len;
	struct perf_build_id *build_ids;
	size_t nr_build_ids;
	uint64_t dir_format_version;
	struct perf_group_desc *groups; /* GROUP_DESC */
	size_t nr_groups;
	char *core_siblings;     /* CPU_TOPOLOGY: sibling lists joined with "; " */
	char *thread_siblings;
	struct tep_handle *tep;  /* tracepoint formats, NULL without tracing data */
	uint32_t tracing_long_size;
	/* each format's "print fmt:" text by event id: libtraceevent gets the
	 * fields only (its print format parser crashes on damaged text) */
	struct perf_tp_print_fmt {
		int id;
		char *text;
	} *tp_print_fmts;
	size_t nr_tp_print_fmts;
};

/* Why something was skipped; a few are kept with their offsets. */
struct perf_skip {
	uint64_t offset;
	uint32_t type;
	const char *why;
};

#define PERF_SKIP_KEEP 32

struct perf_stats {
	uint64_t records[PERF_REC_TYPE_MAX]; /* by record type, after decompression */
	uint64_t records_other;  /* types >= PERF_REC_TYPE_MAX */
	uint64_t samples;
	uint64_t samples_unattributed; /* no event matched the sample's id */
	uint64_t reads_unattributed;   /* a read counter's id matched no event */
	uint64_t lost;           /* sum of PERF_RECORD_LOST.lost */
	uint64_t lost_samples;   /* sum of PERF_RECORD_LOST_SAMPLES.lost */
	uint64_t unknown_records;
	uint64_t skipped_records;
	uint64_t skipped_bytes;
	uint64_t message_bytes;  /* perf record's own messages in the data (its
				  * stderr sent to the same file): not records */
	uint64_t compressed_in, compressed_out; /* zstd bytes */
	uint64_t out_of_order;   /* events that needed reordering */
	uint64_t queue_peak;     /* most events waiting at once */
	uint64_t forced_flushes; /* ordering queue overflowed its limit */
	uint64_t bytes_read;
	bool truncated;          /* the data ended inside a record or section */
	bool unfinished;         /* the header gives no data size: perf record did not
				  * finish the file (read to its end, no features) */
	bool stopped;            /* perf_reader_opts.stop ended the input */
	struct perf_skip skips[PERF_SKIP_KEEP];
	unsigned nr_skips_kept;
};

/**
 * typedef perf_event_fn - the consumer callback.
 * @ctx: the consumer's context, as given to perf_reader_run().
 * @ev: the record; it and everything it points to is valid only during the
 *      call.
 *
 * Return: 0 to go on, non-zero to stop reading (perf_reader_run() then
 * returns PP_ESTOPPED).
 */
typedef int (*perf_event_fn)(void *ctx, const struct perf_event *ev);

/**
 * typedef perf_progress_fn - called every few MiB and once at the end.
 * @done: bytes of input consumed; @total: input size, 0 if unknown (pipe).
 */
typedef void (*perf_progress_fn)(void *ctx, uint64_t done, uint64_t total);

struct perf_reader_opts {
	bool ordered;            /* deliver in time order (FINISHED_ROUND rule) */
	size_t queue_limit;      /* bytes the ordering queue may hold; 0 = 256 MiB */
	perf_progress_fn progress;
	void *progress_ctx;
	/* an --event list (not copied: it must outlive the reader): every entry
	 * must name an event of the recording, else open() (events in the
	 * header) or run() (events announced by a pipe) fail with PP_EUSAGE,
	 * after an error naming the entry and the events; NULL: no check */
	const char *events;
	/* when *stop becomes non-zero (a signal handler's flag; a signal
	 * interrupts a read), the input ends there: what was read is
	 * delivered as at the end of the data, a record cut short is dropped
	 * without a word (perf_stats.stopped) */
	const volatile sig_atomic_t *stop;
	/* a pipe that had little at a read (less than 64 KiB): wait this long
	 * before the next read, so that a slow live stream is read in a few
	 * large pieces rather than a wake-up for every write of perf's (the
	 * pipe is grown to hold what gathers meanwhile); 0: read at once */
	unsigned gather_ms;
	/* a regular file's data read ahead on a thread of the reader's, so
	 * that the caller's thread only cuts and orders records */
	bool read_ahead;
	/* with read_ahead, the records also cut, counted and ordered on a
	 * thread of the reader's: the caller's thread, in perf_reader_run(),
	 * only decodes each record and calls the consumer with it, in the
	 * same order as without (perf_reader_set_threaded() after open) */
	bool threaded;
	/* the name messages give the file where @path is not it (a descriptor's
	 * /proc/self/fd/N opened for it); NULL: @path. Not for a directory */
	const char *shown;
};

struct perf_reader;

/**
 * perf_reader_open() - open a recording and read its header.
 * @path: a perf.data file, a `perf record --threads` directory, or "-" for
 *        standard input (pipe mode, or a file redirected to stdin).
 * @opts: reading options, copied; NULL for defaults (unordered).
 * @out: set to the new reader, which the caller frees with
 *       perf_reader_close().
 *
 * File mode reads the attributes and every feature section here; pipe mode
 * learns them as its records arrive in perf_reader_run().
 *
 * Return: PP_OK or an enum pp_err; on error *out is NULL and the reason was
 * logged.
 */
int perf_reader_open(const char *path, const struct perf_reader_opts *opts,
		     struct perf_reader **out);

/**
 * perf_reader_open_mem() - as perf_reader_open() on bytes in memory.
 * @buf: the bytes, which must outlive the reader; @len: their length.
 */
int perf_reader_open_mem(const void *buf, size_t len,
			 const struct perf_reader_opts *opts,
			 struct perf_reader **out);

/**
 * perf_reader_run() - read every record and deliver it to @fn.
 * @r: the reader; runs once.
 * @fn: the consumer; may be NULL to only count.
 * @ctx: passed to @fn.
 *
 * Return: PP_OK when the data was read to its end (skips are in the stats),
 * PP_ESTOPPED when @fn asked to stop, or the error that ended the read early;
 * everything before it was delivered.
 */
int perf_reader_run(struct perf_reader *r, perf_event_fn fn, void *ctx);

/**
 * perf_reader_set_threaded() - opts.threaded, set before perf_reader_run()
 * (when what is known after open decides it).
 */
void perf_reader_set_threaded(struct perf_reader *r, bool on);

/**
 * perf_event_hold() - keep @ev's record (ev->data, and the sample's
 * pointers into it) where it is after the consumer returns, unchanged,
 * until perf_event_release(); other threads may read it meanwhile.
 * Call on the thread that runs perf_reader_run(), from its consumer.
 * Return: the hold to release, or NULL when the record cannot be kept so
 * (the caller copies it then).
 */
void *perf_event_hold(const struct perf_event *ev);

/**
 * perf_event_release() - end a hold of perf_event_hold(), on the thread
 * that ran perf_reader_run(), before perf_reader_close(); NULL is fine.
 */
void perf_event_release(void *hold);

/** perf_reader_close() - free the reader and all it owns; NULL is fine. */
void perf_reader_close(struct perf_reader *r);

/** perf_reader_header() - the header; owned by the reader. */
const struct perf_header_info *perf_reader_header(const struct perf_reader *r);

/**
 * perf_stats_partly() - why a read was partial, in one phrase every command
 * gives: "perf record did not finish the file (...)", "N records skipped,
 * the data ends early", "N records skipped".
 * @buf: receives it (@len bytes).
 */
void perf_stats_partly(const struct perf_stats *st, char *buf, size_t len);

/**
 * perf_stats_lost() - the samples the kernel lost, one count for every
 * command. LOST records (ring buffer overruns, per chunk) and LOST_SAMPLES
 * records (per event; perf 6.x also writes them at the end from the
 * kernel's own lost counters, the same loss the LOST records told) are
 * two views of one loss when a file has both, so the larger is taken, never
 * the sum.
 */
static inline uint64_t perf_stats_lost(const struct perf_stats *st)
{
	return st->lost > st->lost_samples ? st->lost : st->lost_samples;
}

/** perf_reader_stats() - counters so far; owned by the reader. */
const struct perf_stats *perf_reader_stats(const struct perf_reader *r);

/** perf_reader_evsels() - the events; @nr receives their count. */
struct perf_evsel *const *perf_reader_evsels(const struct perf_reader *r, size_t *nr);

/**
 * perf_event_listed() - does the comma-separated @list (an --event option)
 * name the event @name? An entry matches the whole name, or the name without
 * its modifiers: "cpu-clock" matches "cpu-clock/freq=997/" and "cpu-clock:u";
 * a tracepoint "sched:sched_switch" matches only itself.
 */
bool perf_event_listed(const char *list, const char *name);

/** perf_record_type_name() - "SAMPLE", "MMAP2", ... or NULL if unknown. */
const char *perf_record_type_name(uint32_t type);

/** perf_feature_name() - "HOSTNAME", ... or NULL if unknown. */
const char *perf_feature_name(unsigned feat);

/* --- tracepoints (tracing.c) --- */

/**
 * perf_tp_field() - look up a tracepoint field of an event by name.
 * Return: the field, owned by the reader's tep handle, or NULL.
 */
const struct tep_format_field *perf_tp_field(const struct perf_evsel *evsel,
					     const char *name);

/**
 * perf_tp_read_u64() - read a numeric tracepoint field of a sample.
 * Return: 0 on success, -1 if the field does not fit the raw data.
 */
int perf_tp_read_u64(const struct tep_format_field *field,
		     const struct perf_sample *sample, uint64_t *val);

/**
 * perf_tp_field_next() - iterate an event's own (non-common) numeric fields.
 * @prev: NULL for the first field, else the previous one returned.
 * Return: the next field that is a plain number (not an array or string),
 * or NULL at the end.
 */
const struct tep_format_field *perf_tp_field_next(const struct perf_evsel *evsel,
						  const struct tep_format_field *prev);

struct perf_tp_flag {
	uint64_t value;
	char letter;            /* the first character of its name */
};

/**
 * perf_tp_print_flags() - the __print_flags() table the event's format
 * applies to @field (sched_switch's prev_state: { 0x1, "S" }, { 0x2, "D" },
 * ...), as the recorded kernel defined it, read from the print format's
 * text (evsel->print_fmt; bounded, safe on damaged text).
 * Return: the number of entries written to @out, 0 if there is no table.
 */
size_t perf_tp_print_flags(const struct perf_evsel *evsel, const char *field,
			   struct perf_tp_flag *out, size_t max);

/** perf_tp_field_name() - the field's name, owned by the tep handle. */
const char *perf_tp_field_name(const struct tep_format_field *field);

/* --- building blocks, exposed for unit tests and the fuzzer --- */

/** perf_attr_decode() - decode @len bytes of a recorded attr. */
void perf_attr_decode(struct perf_attr *attr, const void *buf, size_t len, bool swap);

/** perf_evsel_layout() - compute an evsel's id/time positions from its attr. */
void perf_evsel_layout(struct perf_evsel *evsel);

/**
 * perf_sample_blank() - @s as a record without it has it: every field 0,
 * but pid, tid and cpu unknown (UINT32_MAX) and the period @period.
 */
void perf_sample_blank(struct perf_sample *s, uint64_t period);

/**
 * perf_sample_parse() - decode a SAMPLE record's body.
 * @evsel: the event it belongs to (its attr gives the layout).
 * @body: the bytes after the 8-byte record header; swapped to native in
 *        place when @swap.
 * @len: their length.
 * Return: 0, or -1 if the layout does not fit @len.
 */
int perf_sample_parse(const struct perf_evsel *evsel, void *body, size_t len,
		      bool swap, struct perf_sample *out);

/**
 * perf_sample_id_parse() - decode a sample_id_all trailer at the end of a
 * non-sample record's body. Return: 0, or -1 if it does not fit.
 */
int perf_sample_id_parse(const struct perf_evsel *evsel, void *body, size_t len,
			 bool swap, struct perf_sample *out);

#endif /* PERF_PERF_H */
