/* SPDX-License-Identifier: MIT */
/*
 * ordered.h - the time-ordering queue: copies of records waiting until the
 * FINISHED_ROUND rule says nothing earlier can still arrive.
 *
 * A binary heap on (time, arrival) over record copies kept in 1 MiB chunks;
 * a chunk is recycled when its last record has been delivered.
 */
#ifndef PERF_ORDERED_H
#define PERF_ORDERED_H

#include <stddef.h>
#include <stdint.h>

struct oq_chunk;

struct oq_item {
	uint64_t time;
	uint64_t seq;
	uint64_t offset;      /* file offset, for messages */
	uint8_t *rec;         /* 8-aligned copy of the record */
	void *tag;            /* the caller's, returned with the item */
	uint32_t size;
	struct oq_chunk *chunk;
};

struct oqueue {
	struct oq_item *heap;
	size_t nr, cap;
	uint64_t seq;
	size_t bytes;         /* held: record copies plus their heap entries */
	struct oq_chunk *cur; /* being filled */
	struct oq_chunk *spare;
};

/** oq_push() - queue a copy of @rec. Return: 0, or -1 out of memory. */
int oq_push(struct oqueue *q, uint64_t time, uint64_t offset, const void *rec,
	    uint32_t size, void *tag);

/** oq_peek() - the earliest item, or NULL when empty. */
const struct oq_item *oq_peek(const struct oqueue *q);

/** oq_pop() - remove the earliest item; its record is released. */
void oq_pop(struct oqueue *q);

/** oq_free() - drop everything. */
void oq_free(struct oqueue *q);

#endif /* PERF_ORDERED_H */
