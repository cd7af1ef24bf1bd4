/* SPDX-License-Identifier: MIT */
/*
 * ordered.h - the time-ordering queue: copies of records waiting until the
 * FINISHED_ROUND rule says nothing earlier can still arrive.
 *
 * A binary heap of 16-byte entries (time, item) over record copies kept in
 * 1 MiB chunks, each copy preceded by its struct oq_item; a chunk is
 * recycled when its last record has been delivered.
 */
#ifndef PERF_ORDERED_H
#define PERF_ORDERED_H

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

struct oqueue {
	struct oq_entry *heap;
	size_t nr, cap;
	uint64_t seq;
	size_t bytes;         /* held: items with their copies, plus heap entries */
	struct oq_chunk *cur; /* being filled */
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
