/* SPDX-License-Identifier: MIT */
/*
 * ordered.h - the time-ordering queue: records waiting until the
 * FINISHED_ROUND rule says nothing earlier can still arrive.
 *
 * The reader reads into input buffers the queue lends it (struct oq_buf),
 * and a record queued from one stays where it was read: its item refers to
 * it, and the buffer is not written over nor recycled while any record in
 * it is queued or held (oq_hold()). Records from elsewhere are copied into
 * chunks (64 KiB, doubling up to 1 MiB); a chunk is recycled when its last
 * copy has been delivered.
 * Items go into runs, each already in order: perf writes each CPU's buffer
 * in order, so a round arrives as a few interleaved sorted streams, and an
 * item is appended to the recent run it extends (a new run when none
 * does). A run is an array of the items themselves, read in order as they
 * are delivered. A binary heap over the runs' first items merges them:
 * O(1) to queue, O(log runs) to take the earliest, and any input order
 * still comes out sorted.
 */
#ifndef PERF_ORDERED_H
#define PERF_ORDERED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct oq_chunk;
struct oqueue;

/*
 * An input buffer: the reader writes at its end and cuts records from it;
 * it comes back for reuse once the reader has let it go (oq_buf_retire())
 * and no record in it is queued or held.
 */
struct oq_buf {
	uint8_t *data;
	size_t cap;
	size_t refs;          /* records in it queued or held */
	bool lent;            /* the reader still reads into it */
	bool view;            /* data is a part of a mapped file (oq_buf_view()) */
	struct oqueue *q;
	struct oq_buf *next;  /* in the queue's list of all buffers */
	struct oq_buf *next_spare;
};

struct oq_item {
	uint64_t time;
	uint64_t seq;         /* arrival order: breaks ties */
	uint64_t offset;      /* file offset, for messages */
	void *tag;            /* the caller's, returned with the item */
	const uint8_t *rec;   /* the record, 8-aligned */
	struct oq_buf *buf;   /* holding the record, or NULL: a copy */
	struct oq_chunk *chunk; /* holding the copy, or NULL */
	uint32_t size;
	uint32_t pad;
};

struct oq_run;

#define OQ_RECENT 16          /* runs an entry may be appended to */

struct oqueue {
	struct oq_run **heap;   /* runs with entries, a min-heap on their first */
	size_t nr_heap, cap_heap;
	struct oq_run *recent[OQ_RECENT];
	struct oq_run *last;    /* appended to last, in recent; NULL none */
	unsigned nr_recent, oldest_recent;
	struct oq_run *free_runs;
	unsigned nr_free_big; /* of those, keeping more than RUN_KEEP items' room */
	size_t nr;            /* items queued */
	uint64_t seq;
	size_t bytes;         /* held: items, copies, and buffers held whole */
	struct oq_chunk *cur; /* being filled */
	size_t chunk_size;    /* of the next new chunk: grows to 1 MiB */
	struct oq_chunk *spare;
	struct oq_buf *bufs;        /* every buffer, lent, held or spare */
	struct oq_buf *spare_bufs;
	unsigned nr_spare_bufs;
};

/**
 * oq_push() - queue @rec: by reference when @buf (the oq_buf it lies in)
 * is given, else a copy.
 * Return: 0, or -1 out of memory.
 */
int oq_push(struct oqueue *q, uint64_t time, uint64_t offset, const void *rec,
	    uint32_t size, void *tag, struct oq_buf *buf);

/**
 * oq_buf_get() - an input buffer of at least @cap bytes that nothing
 * refers to, lent to the caller until oq_buf_retire(); owned by @q.
 * Return: the buffer, or NULL out of memory.
 */
struct oq_buf *oq_buf_get(struct oqueue *q, size_t cap);

/**
 * oq_buf_view() - a buffer over @len bytes at @data, a part of a file
 * mapped read-only that the caller keeps mapped while @q lives: records in
 * it are queued by reference as in any buffer. Lent until oq_buf_retire();
 * once free, its pages are handed back (MADV_DONTNEED: read again from the
 * file if touched again) and it is forgotten, never reused nor grown.
 * Return: the buffer, or NULL out of memory.
 */
struct oq_buf *oq_buf_view(struct oqueue *q, const uint8_t *data, size_t len);

/**
 * oq_buf_grow() - make @b, which nothing refers to, hold @cap bytes
 * (its first @keep bytes kept). Return: 0, or -1 out of memory.
 */
int oq_buf_grow(struct oq_buf *b, size_t cap, size_t keep);

/** oq_buf_retire() - the caller reads no more into @b: reusable once free. */
void oq_buf_retire(struct oq_buf *b);

/**
 * oq_hold() - keep @b's records where they are until oq_release(). A
 * buffer held counts whole in its queue's bytes: records left in their
 * buffers pin them, and a bound on the bytes queued must bound those
 * buffers (a stream without rounds, or records far out of order, left a
 * few records in every buffer: memory grew with the stream).
 */
static inline void oq_hold(struct oq_buf *b)
{
	if (b->refs++ == 0)
		b->q->bytes += b->cap;
}

/** oq_release() - undo one oq_hold() (or a queued record's reference). */
void oq_release(struct oq_buf *b);

/** oq_peek() - the earliest item, or NULL when empty. Valid until the next
 * oq_push() or oq_pop(). */
const struct oq_item *oq_peek(const struct oqueue *q);

/** oq_pop() - remove the earliest item; its record is released. */
void oq_pop(struct oqueue *q);

/** oq_free() - drop everything. */
void oq_free(struct oqueue *q);

#endif /* PERF_ORDERED_H */
