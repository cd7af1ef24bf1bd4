/* SPDX-License-Identifier: MIT */
/*
 * priv.h - what the files of the reader share; not for other stages.
 */
#ifndef PERF_PRIV_H
#define PERF_PRIV_H

#include <zstd.h>

#include "../util/error.h"
#include "../util/wordmap.h"
#include "bytes.h"
#include "ordered.h"
#include "perf.h"

#define WINDOW (1u << 20)      /* input window: fits the cache it is parsed from */
#define WINDOW_START (1u << 16)

/*
 * perf_gather_next() - the wait before the next read of a live pipe, after
 * @slept_ns (since the read that drained it) brought @got bytes into a
 * pipe of @cap bytes: long
 * enough for it to half fill at that rate, at most @max_ns. A pipe found
 * full may have stopped its writer (perf then loses samples in the
 * kernel): the wait halves, and a fast stream comes to be read as it
 * comes. Return: nanoseconds, 0 for no wait.
 */
uint64_t perf_gather_next(uint64_t slept_ns, size_t got, size_t cap, uint64_t max_ns);
#define MAX_RECORD (1u << 16)
#define MAX_TRACING_DATA (256u << 20)

/* A window of bytes from which records are cut; refilled from a source. */
struct rstream {
	struct oq_buf *b;   /* the queue's buffer that buf is */
	uint8_t *buf;
	size_t cap, len, pos;
	uint64_t base;      /* stream offset of buf[0] */
	uint64_t discard;   /* payload bytes still to drop (AUXTRACE data) */
};

struct id_slot {
	uint64_t id;
	struct perf_evsel *evsel;
};

struct perf_reader {
	struct perf_reader_opts opts;
	char *path;
	int fd;
	bool own_fd;
	const uint8_t *mem;
	size_t mem_len;
	uint64_t src_pos;   /* next byte of the current source */
	bool gather;        /* the last read of a pipe was small: wait before the next */
	uint64_t gather_ns; /* how long: what lets the pipe half fill at the rate last seen */
	uint64_t last_read_ns; /* CLOCK_MONOTONIC at the last read that got bytes */
	size_t pipe_cap;    /* the pipe's capacity, 0 not a pipe or unknown */
	uint64_t src_end;   /* end of the data in the current source, or UINT64_MAX */
	bool ran;

	struct perf_header_info hdr;
	struct perf_stats st;
	struct perf_evsel **evsels;
	size_t nr_evsels;
	struct id_slot *ids;  /* open addressing, power-of-two size */
	size_t ids_cap, ids_used;
	bool same_id_pos;     /* every evsel finds its id at one place */

	struct rstream in;
	bool ra_wanted;       /* opts.read_ahead, and the input is a regular file */
	struct read_ahead *ra; /* reading ahead (source.c), once the data is reached */
	bool map_wanted;      /* a regular file's data, read from a mapping of it */
	const uint8_t *map;   /* the file mapped whole, read-only (source.c), once the
			       * data is reached; unmapped at perf_reader_close() */
	size_t map_len;
	int map_watch;        /* its bus_watch() slot: pages cut short under us */
	struct dl_pipe *dl;   /* cutting on a thread of its own (reader-cutter.c), while it runs */
	struct rstream z;     /* decompressed bytes */
	ZSTD_DStream *zd;
	uint8_t *scratch;     /* an aligned copy of a misaligned record */

	struct oqueue oq;
	uint64_t max_time;    /* of all timed records so far */
	uint64_t round_prev;  /* max_time at the previous FINISHED_ROUND */
	uint64_t last_delivered;
	uint64_t next_progress;
	uint64_t progress_total;
	bool stop;
	int err;              /* why delivery stopped, when it was not the consumer */

	/* Delivery, on cache lines of their own: with a cutting thread
	 * (reader-cutter.c) the consumer's thread alone uses these, for every
	 * record, while the cutter writes the rest (the struct is allocated
	 * aligned: reader_alloc()). */
	_Alignas(64) perf_event_fn fn;
	void *ctx;
	/* counters read by samples: the last value by (id, tid) in read_map */
	struct wordmap read_map;
	uint64_t *read_last;  /* by read_map's id - 1 */
	size_t read_last_cap;
	uint32_t read_next;   /* read_map's next id, from 1 */
	struct perf_read_value *reads; /* the delivered sample's */
	size_t reads_cap;
};

/* source.c: the window's bytes (read(), read ahead, or mapped) */
bool perf_map_asked(void);
void perf_src_progress(struct perf_reader *r, bool final);
int perf_stream_move(struct perf_reader *r, struct rstream *s, size_t cap);
ssize_t perf_window_refill(struct perf_reader *r, struct rstream *s, size_t need);
void perf_ra_stop(struct perf_reader *r);
int perf_map_stop(struct perf_reader *r);
void perf_map_close(struct perf_reader *r);

/* What is read for every record: the slow part out of line. */
static inline ssize_t window_fill(struct perf_reader *r, struct rstream *s, size_t need)
{
	if (s->len - s->pos >= need)
		return (ssize_t)(s->len - s->pos);
	return perf_window_refill(r, s, need);
}

/* header.c */
int perf_header_read_file(struct perf_reader *r);
int perf_feature_parse(struct perf_reader *r, unsigned feat, uint8_t *buf, size_t len);
int perf_evsel_add(struct perf_reader *r, const void *attr, size_t attr_len,
		   const uint8_t *ids, size_t nr_ids, bool ids_swap);
void perf_evsel_name_default(struct perf_evsel *e);
int perf_id_add(struct perf_reader *r, uint64_t id, struct perf_evsel *e);
struct perf_evsel *perf_id_find(const struct perf_reader *r, uint64_t id);
void perf_skip(struct perf_reader *r, uint64_t off, uint32_t type, uint64_t bytes,
	       const char *why);
void perf_header_free(struct perf_header_info *h);

/* tracing.c */
int perf_tracing_parse(struct perf_reader *r, const uint8_t *buf, size_t len);
void perf_tracing_bind(struct perf_reader *r);

/* records.c */
int perf_record_native(struct perf_reader *r, uint8_t *rec, uint32_t size,
		       struct perf_evsel **evsel, uint64_t *time, bool *timed);
int perf_record_decode(const struct perf_reader *r, uint8_t *rec, uint32_t size,
		       struct perf_evsel *evsel, struct perf_event *ev);


/* reader-loop.c: the record loop, ordering and delivery */

/**
 * perf_read_values() - the counters the sample @ev read, each as its
 * event's count since the last sample that read it, into ev->reads (the
 * reader's array, valid until the next sample is delivered).
 * Return: 0, or PP_ENOMEM.
 */
int perf_read_values(struct perf_reader *r, struct perf_event *ev);

/**
 * perf_flush_until() - deliver the queued records timed @limit or before,
 * oldest first, until delivery stops.
 */
void perf_flush_until(struct perf_reader *r, uint64_t limit);

/**
 * perf_cut_all() - cut every record of the input (and of a directory's
 * streams), deliver it, and flush the ordering queue: what
 * perf_reader_run() does, on the caller's thread or the cutter's.
 * Return: PP_OK, or why reading stopped (r->stop and r->err say the rest).
 */
int perf_cut_all(struct perf_reader *r);

/* reader-tool.c */

/**
 * perf_user_record() - a record of the perf tool (type at or above
 * PERF_REC_KERNEL_MAX) at @rec, @size bytes (its payload, if any, right
 * after it), at stream offset @offset: takes effect now; a malformed one
 * is skipped and said. Return: PP_OK, or PP_ENOMEM.
 */
int perf_user_record(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset);

/* reader-cutter.c: cutting on a thread of the reader's (opts.threaded) */

/**
 * perf_dl_run() - run the cutter (perf_cut_all() on a thread of its own)
 * and deliver what it cuts on this thread, to its end.
 * Return: the cutter's result; r->stop and r->err as without it. -1: no
 * thread could be started (nothing was read).
 */
int perf_dl_run(struct perf_reader *r);

/**
 * perf_dl_add() - on the cutter, the record at @rec (in @buf, which the
 * batch then holds; NULL: copied into the batch) into the batch being
 * filled, published once full: what delivery is while the cutter runs.
 */
void perf_dl_add(struct perf_reader *r, const uint8_t *rec, uint32_t size, uint64_t offset,
		 struct perf_evsel *evsel, struct oq_buf *buf);

/**
 * perf_dl_barrier() - on the cutter, wait until everything cut before was
 * delivered: the caller's thread reads nothing of the reader meanwhile.
 */
void perf_dl_barrier(struct perf_reader *r);

/**
 * perf_dl_free() - free the cutter's pipe and its batches (r->dl), once no
 * cutter runs and nothing is held: at close, or when it could not start.
 */
void perf_dl_free(struct perf_reader *r);

/* What delivery does with each record, on whichever thread delivers. */

/* Event @e delivered the sample @s: counted, and its first and last times. */
static inline void perf_evsel_saw(struct perf_evsel *e, const struct perf_sample *s)
{
	e->nr_samples++;
	if (e->attr.sample_type & PERF_SAMPLE_TIME) {
		if (!e->first_time || s->time < e->first_time)
			e->first_time = s->time;
		if (s->time > e->last_time)
			e->last_time = s->time;
	}
}

/*
 * perf_deliver_one() - decode the record at @rec and call the consumer
 * with it, unless @stopped; @hold keeps the record (ev->hold). Return: 0;
 * 1 when it does not decode (not delivered: the caller says so, *@why);
 * -1 when delivery ends (the consumer asked, or *@err was set).
 */
static inline __attribute__((always_inline)) int
perf_deliver_one(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset,
		 struct perf_evsel *evsel, void *hold, bool stopped, int *err, const char **why)
{
	struct perf_event ev;

	if (perf_record_decode(r, rec, size, evsel, &ev)) {
		*why = ev.type == PERF_RECORD_SAMPLE ? "sample does not fit its event's layout"
						     : "record body too short for its type";
		return 1;
	}
	ev.offset = offset;
	ev.hold = hold;
	if (ev.type == PERF_RECORD_SAMPLE) {
		r->st.samples++;
		perf_evsel_saw((struct perf_evsel *)ev.evsel, &ev.sample);
		if ((ev.evsel->attr.sample_type & PERF_SAMPLE_READ) && perf_read_values(r, &ev)) {
			*err = PP_ENOMEM;
			return -1;
		}
	}
	if (r->fn && !stopped && r->fn(r->ctx, &ev))
		return -1;
	return 0;
}

#endif /* PERF_PRIV_H */
