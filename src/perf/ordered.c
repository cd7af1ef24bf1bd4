/* SPDX-License-Identifier: MIT */
#include "ordered.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (1u << 20)

struct oq_chunk {
	size_t size;          /* bytes of data */
	size_t used;
	size_t live;          /* items not yet popped */
	struct oq_chunk *next;
	uint64_t data[];      /* keeps items 8-aligned */
};

/* A run: entries e[head..len) in (time, arrival) order. */
struct oq_run {
	struct oq_entry *e;
	size_t head, len, cap;
	unsigned heap_pos;
	struct oq_run *next_free;
};

/* A chunk for at least @need bytes: a spare one, or a new one; new ones
 * start small (a short recording, a fuzzer's input, needs little) and
 * double up to CHUNK_SIZE. */
static struct oq_chunk *chunk_get(struct oqueue *q, size_t need)
{
	struct oq_chunk *c = q->spare;

	if (c && c->size >= need) {
		q->spare = c->next;
	} else {
		size_t size = q->chunk_size ? q->chunk_size : CHUNK_SIZE / 16;

		while (size < need)
			size *= 2;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		q->chunk_size = size * 2 < CHUNK_SIZE ? size * 2 : CHUNK_SIZE;
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

/* --- the heap of runs, keyed by each run's first entry --- */

static int run_before(const struct oq_run *a, const struct oq_run *b)
{
	const struct oq_entry *x = &a->e[a->head], *y = &b->e[b->head];

	if (x->time != y->time)
		return x->time < y->time;
	return x->item->seq < y->item->seq;
}

static void heap_set(struct oqueue *q, size_t i, struct oq_run *r)
{
	q->heap[i] = r;
	r->heap_pos = (unsigned)i;
}

static void sift_up(struct oqueue *q, size_t i)
{
	struct oq_run *r = q->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!run_before(r, q->heap[parent]))
			break;
		heap_set(q, i, q->heap[parent]);
		i = parent;
	}
	heap_set(q, i, r);
}

static void sift_down(struct oqueue *q, size_t i)
{
	struct oq_run *r = q->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, m = l;

		if (l >= q->nr_heap)
			break;
		if (l + 1 < q->nr_heap && run_before(q->heap[l + 1], q->heap[l]))
			m = l + 1;
		if (!run_before(q->heap[m], r))
			break;
		heap_set(q, i, q->heap[m]);
		i = m;
	}
	heap_set(q, i, r);
}

/* --- runs --- */

static struct oq_run *run_new(struct oqueue *q)
{
	struct oq_run *r = q->free_runs;

	if (q->nr_heap == q->cap_heap) {
		size_t cap = q->cap_heap ? q->cap_heap * 2 : 16;
		struct oq_run **h = realloc(q->heap, cap * sizeof(*h));

		if (!h)
			return NULL;
		q->heap = h;
		q->cap_heap = cap;
	}
	if (r) {
		q->free_runs = r->next_free;
	} else {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
	}
	r->head = r->len = 0;
	r->next_free = NULL;
	return r;
}

static int run_append(struct oq_run *r, const struct oq_entry *e)
{
	if (r->len == r->cap) {
		if (r->head >= r->len / 2 && r->head) {
			/* slide the waiting entries down instead of growing */
			memmove(r->e, r->e + r->head, (r->len - r->head) * sizeof(*r->e));
			r->len -= r->head;
			r->head = 0;
		} else {
			size_t cap = r->cap ? r->cap * 2 : 256;
			struct oq_entry *n = realloc(r->e, cap * sizeof(*n));

			if (!n)
				return -1;
			r->e = n;
			r->cap = cap;
		}
	}
	r->e[r->len++] = *e;
	return 0;
}

/*
 * The run to append an entry of @time to: of the recent runs whose last
 * entry is not later, the one with the latest (records arrive as a few
 * interleaved sorted streams, one per CPU buffer: each finds its run).
 */
static struct oq_run *run_for(struct oqueue *q, uint64_t time)
{
	struct oq_run *best = NULL;

	for (unsigned i = 0; i < q->nr_recent; i++) {
		struct oq_run *r = q->recent[i];
		uint64_t last = r->e[r->len - 1].time;

		if (last <= time && (!best || last > best->e[best->len - 1].time))
			best = r;
	}
	return best;
}

static void recent_drop(struct oqueue *q, const struct oq_run *r)
{
	for (unsigned i = 0; i < q->nr_recent; i++)
		if (q->recent[i] == r) {
			q->recent[i] = q->recent[--q->nr_recent];
			return;
		}
}

int oq_push(struct oqueue *q, uint64_t time, uint64_t offset, const void *rec,
	    uint32_t size, void *tag, struct oq_buf *buf)
{
	size_t need = buf ? sizeof(struct oq_item) : item_bytes(size);
	struct oq_entry e;
	struct oq_item *it;
	struct oq_run *r;
	bool fresh = false;

	if (need > CHUNK_SIZE)
		return -1;
	r = run_for(q, time);
	if (!r) {
		r = run_new(q);
		if (!r)
			return -1;
		fresh = true;
	}
	if (!q->cur || q->cur->used + need > q->cur->size) {
		struct oq_chunk *old = q->cur;

		q->cur = chunk_get(q, need);
		if (!q->cur) {
			q->cur = old;
			goto fail;
		}
		if (old && old->live == 0)
			chunk_put(q, old);
	}
	it = (struct oq_item *)((uint8_t *)q->cur->data + q->cur->used);
	e.time = time;
	e.item = it;
	if (run_append(r, &e))
		goto fail;
	it->time = time;
	it->seq = q->seq++;
	it->offset = offset;
	it->tag = tag;
	it->chunk = q->cur;
	it->size = size;
	it->buf = buf;
	if (buf) {
		it->rec = rec;
		oq_hold(buf);
	} else {
		memcpy(it->copy, rec, size);
		it->rec = (const uint8_t *)it->copy;
	}
	q->cur->used += need;
	q->cur->live++;
	/* what the queue keeps from being reused, copied or not */
	q->bytes += item_bytes(size) + sizeof(struct oq_entry);
	q->nr++;
	if (fresh) {
		if (q->nr_recent == OQ_RECENT)
			q->recent[q->oldest_recent++ % OQ_RECENT] = r; /* it no longer takes entries */
		else
			q->recent[q->nr_recent++] = r;
		q->nr_heap++;
		heap_set(q, q->nr_heap - 1, r);
		sift_up(q, q->nr_heap - 1);
	}
	return 0;
fail:
	if (fresh) {
		r->next_free = q->free_runs;
		q->free_runs = r;
	}
	return -1;
}

const struct oq_item *oq_peek(const struct oqueue *q)
{
	const struct oq_run *r;

	if (!q->nr_heap)
		return NULL;
	r = q->heap[0];
	return r->e[r->head].item;
}

void oq_pop(struct oqueue *q)
{
	struct oq_run *r;
	struct oq_item *it;
	struct oq_chunk *c;

	if (!q->nr_heap)
		return;
	r = q->heap[0];
	it = r->e[r->head++].item;
	c = it->chunk;
	q->bytes -= item_bytes(it->size) + sizeof(struct oq_entry);
	q->nr--;
	if (it->buf)
		oq_release(it->buf);
	if (--c->live == 0 && c != q->cur)
		chunk_put(q, c);
	if (r->head < r->len) {
		sift_down(q, 0);
		return;
	}
	/* the run is used up: out of the heap and the recent set, kept for reuse */
	recent_drop(q, r);
	r->head = r->len = 0;
	r->next_free = q->free_runs;
	q->free_runs = r;
	if (--q->nr_heap) {
		heap_set(q, 0, q->heap[q->nr_heap]);
		sift_down(q, 0);
	}
}

void oq_free(struct oqueue *q)
{
	struct oq_chunk *c, *n;
	struct oq_run *r, *rn;

	/* Chunks with live items are reachable only through the runs. */
	for (size_t i = 0; i < q->nr_heap; i++) {
		r = q->heap[i];
		for (size_t j = r->head; j < r->len; j++) {
			c = r->e[j].item->chunk;
			if (c != q->cur && --c->live == 0)
				chunk_put(q, c);
		}
		free(r->e);
		free(r);
	}
	for (r = q->free_runs; r; r = rn) {
		rn = r->next_free;
		free(r->e);
		free(r);
	}
	free(q->cur);
	for (c = q->spare; c; c = n) {
		n = c->next;
		free(c);
	}
	free(q->heap);
	for (struct oq_buf *b = q->bufs, *bn; b; b = bn) {
		bn = b->next;
		free(b->data);
		free(b);
	}
	memset(q, 0, sizeof(*q));
}

/* --- input buffers --- */

#define SPARE_BUFS 8 /* kept for reuse beyond these are freed */

static void buf_unlink(struct oqueue *q, struct oq_buf *b)
{
	for (struct oq_buf **pp = &q->bufs; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			return;
		}
}

static void buf_spare(struct oqueue *q, struct oq_buf *b)
{
	if (q->nr_spare_bufs >= SPARE_BUFS) {
		buf_unlink(q, b);
		free(b->data);
		free(b);
		return;
	}
	b->next_spare = q->spare_bufs;
	q->spare_bufs = b;
	q->nr_spare_bufs++;
}

struct oq_buf *oq_buf_get(struct oqueue *q, size_t cap)
{
	struct oq_buf *b, **pp;

	for (pp = &q->spare_bufs; (b = *pp); pp = &b->next_spare)
		if (b->cap >= cap) {
			*pp = b->next_spare;
			q->nr_spare_bufs--;
			b->lent = true;
			return b;
		}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->data = malloc(cap);
	if (!b->data) {
		free(b);
		return NULL;
	}
	b->cap = cap;
	b->lent = true;
	b->q = q;
	b->next = q->bufs;
	q->bufs = b;
	return b;
}

int oq_buf_grow(struct oq_buf *b, size_t cap, size_t keep)
{
	uint8_t *n;

	if (cap <= b->cap)
		return 0;
	if (!keep) {
		/* nothing to keep: no copy of the old contents */
		n = malloc(cap);
		if (!n)
			return -1;
		free(b->data);
	} else if (!(n = realloc(b->data, cap))) {
		return -1;
	}
	b->data = n;
	b->cap = cap;
	return 0;
}

void oq_buf_retire(struct oq_buf *b)
{
	if (!b)
		return;
	b->lent = false;
	if (!b->refs)
		buf_spare(b->q, b);
}

void oq_release(struct oq_buf *b)
{
	if (--b->refs == 0 && !b->lent)
		buf_spare(b->q, b);
}
