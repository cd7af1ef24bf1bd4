/* SPDX-License-Identifier: MIT */
#include "ordered.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (1u << 20)

struct oq_chunk {
	size_t used;
	size_t live;          /* items not yet popped */
	struct oq_chunk *next;
	uint64_t data[];      /* keeps items 8-aligned */
};

static struct oq_chunk *chunk_get(struct oqueue *q)
{
	struct oq_chunk *c = q->spare;

	if (c) {
		q->spare = c->next;
	} else {
		c = malloc(sizeof(*c) + CHUNK_SIZE);
		if (!c)
			return NULL;
	}
	c->used = 0;
	c->live = 0;
	c->next = NULL;
	return c;
}

static void chunk_put(struct oqueue *q, struct oq_chunk *c)
{
	c->next = q->spare;
	q->spare = c;
}

static size_t item_bytes(uint32_t size)
{
	return sizeof(struct oq_item) + (((size_t)size + 7) & ~(size_t)7);
}

static int before(const struct oq_entry *a, const struct oq_entry *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->item->seq < b->item->seq;
}

int oq_push(struct oqueue *q, uint64_t time, uint64_t offset, const void *rec,
	    uint32_t size, void *tag)
{
	size_t need = item_bytes(size);
	struct oq_entry e;
	struct oq_item *it;
	size_t i;

	if (need > CHUNK_SIZE)
		return -1;
	if (q->nr == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 4096;
		struct oq_entry *h = realloc(q->heap, cap * sizeof(*h));

		if (!h)
			return -1;
		q->heap = h;
		q->cap = cap;
	}
	if (!q->cur || q->cur->used + need > CHUNK_SIZE) {
		struct oq_chunk *old = q->cur;

		q->cur = chunk_get(q);
		if (!q->cur) {
			q->cur = old;
			return -1;
		}
		if (old && old->live == 0)
			chunk_put(q, old);
	}
	it = (struct oq_item *)((uint8_t *)q->cur->data + q->cur->used);
	it->time = time;
	it->seq = q->seq++;
	it->offset = offset;
	it->tag = tag;
	it->chunk = q->cur;
	it->size = size;
	memcpy(it->rec, rec, size);
	q->cur->used += need;
	q->cur->live++;
	q->bytes += need + sizeof(struct oq_entry);

	e.time = time;
	e.item = it;
	i = q->nr++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!before(&e, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = e;
	return 0;
}

const struct oq_item *oq_peek(const struct oqueue *q)
{
	return q->nr ? q->heap[0].item : NULL;
}

void oq_pop(struct oqueue *q)
{
	struct oq_entry last;
	struct oq_chunk *c;
	size_t i = 0;

	if (!q->nr)
		return;
	c = q->heap[0].item->chunk;
	q->bytes -= item_bytes(q->heap[0].item->size) + sizeof(struct oq_entry);
	if (--c->live == 0 && c != q->cur)
		chunk_put(q, c);
	last = q->heap[--q->nr];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l >= q->nr)
			break;
		if (before(&q->heap[l], &last))
			m = l;
		if (l + 1 < q->nr && before(&q->heap[l + 1], m == i ? &last : &q->heap[l]))
			m = l + 1;
		if (m == i)
			break;
		q->heap[i] = q->heap[m];
		i = m;
	}
	if (q->nr)
		q->heap[i] = last;
}

void oq_free(struct oqueue *q)
{
	struct oq_chunk *c, *n;

	/* Chunks with live items are reachable only through the heap. */
	for (size_t i = 0; i < q->nr; i++) {
		c = q->heap[i].item->chunk;
		if (c != q->cur && --c->live == 0)
			chunk_put(q, c);
	}
	free(q->cur);
	for (c = q->spare; c; c = n) {
		n = c->next;
		free(c);
	}
	free(q->heap);
	memset(q, 0, sizeof(*q));
}
