/* SPDX-License-Identifier: MIT */
/*
 * ordered.h - the time-ordering queue: copies of records waiting until the
 * FINISHED_ROUND rule says nothing earlier can still arrive.
 *
 * Record copies are kept in chunks (64 KiB, doubling up to 1 MiB), each preceded by its struct
 * oq_item; a chunk is recycled when its last record has been delivered.
 * Their 16-byte entries (time, item) go into runs, each already in order:
 * perf writes each CPU's buffer in order, so a round arrives as a few
 * interleaved sorted streams, and an entry is appended to the recent run it
 * extends (a new run when none does). A binary heap over the runs' first
 * entries merges them: O(1) to queue, O(log runs) to take the earliest,
 * and any input order still comes out sorted.
 */
#ifndef PERF_ORDERED_H
#define PERF_ORDERED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct oq_chunk;

struct oq_item {
	uint64_t time;
	uint64_t seq;         /* arrival order: breaks ties */
	uint64_t offset;      /* file offset, for messages */
	void *tag;            /* the caller's, returned with the item */
	struct oq_chunk *chunk;
	uint32_t size;
	uint32_t pad;
	uint64_t rec[];       /* the 8-aligned copy of the record */
};

struct oq_entry {
	uint64_t time;
	struct oq_item *item;
};

struct oq_run;

#define OQ_RECENT 16          /* runs an entry may be appended to */

struct oqueue {
	struct oq_run **heap;   /* runs with entries, a min-heap on their first */
	size_t nr_heap, cap_heap;
	struct oq_run *recent[OQ_RECENT];
	unsigned nr_recent, oldest_recent;
	struct oq_run *free_runs;
	size_t nr;            /* items queued */
	uint64_t seq;
	size_t bytes;         /* held: items with their copies, plus heap entries */
	struct oq_chunk *cur; /* being filled */
	size_t chunk_size;    /* of the next new chunk: grows to 1 MiB */
	struct oq_chunk *spare;
};

/** oq_push() - queue a copy of @rec. Return: 0, or -1 out of memory. */
int oq_push(struct oqueue *q, uint64_t time, uint64_t offset, const void *rec,
	    uint32_t size, void *tag);

/** oq_peek() - the earliest item, or NULL when empty. Valid until oq_pop(). */
const struct oq_item *oq_peek(const struct oqueue *q);

/** oq_pop() - remove the earliest item; its record is released. */
void oq_pop(struct oqueue *q);

/** oq_free() - drop everything. */
void oq_free(struct oqueue *q);

#endif /* PERF_ORDERED_H */
