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
	struct read_ahead *ra; /* reading ahead (reader.c), once the data is reached */
	bool map_wanted;      /* a regular file's data, read from a mapping of it */
	const uint8_t *map;   /* the file mapped whole, read-only (reader.c), once the
			       * data is reached; unmapped at perf_reader_close() */
	size_t map_len;
	int map_watch;        /* its bus_watch() slot: pages cut short under us */
	struct dl_pipe *dl;   /* cutting on a thread of its own (reader.c), while it runs */
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
	 * (reader.c) the consumer's thread alone uses these, for every
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

#endif /* PERF_PRIV_H */
