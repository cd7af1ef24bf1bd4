/* SPDX-License-Identifier: MIT */
#include "ordered.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK_SIZE (1u << 20)

struct oq_chunk {
	size_t size;          /* bytes of data */
	size_t used;
	size_t live;          /* items not yet popped */
	struct oq_chunk *next;
	uint64_t data[];      /* keeps items 8-aligned */
};

/* A run: items e[head..len) in (time, arrival) order. */
struct oq_run {
	struct oq_item *e;
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

static size_t copy_bytes(uint32_t size)
{
	return ((size_t)size + 7) & ~(size_t)7;
}

/* What an item keeps from being reused: itself, and its record's copy (a
 * record left in its buffer counts in the buffer's whole size, once, while
 * any record holds it: oq_hold()). */
static size_t item_bytes(bool copied, uint32_t size)
{
	return sizeof(struct oq_item) + (copied ? copy_bytes(size) : 0);
}

/* --- the heap of runs, keyed by each run's first entry --- */

static int run_before(const struct oq_run *a, const struct oq_run *b)
{
	const struct oq_item *x = &a->e[a->head], *y = &b->e[b->head];

	if (x->time != y->time)
		return x->time < y->time;
	return x->seq < y->seq;
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

/*
 * A used-up run keeps an array of at most RUN_KEEP items for reuse, and
 * up to OQ_RECENT of them (a stream per CPU buffer) one of at most
 * RUN_KEEP_BIG: a round's run of a CPU's records grew from 256 items by
 * doubling again in every round, each realloc() copying what it had
 * (94 of them on a -g file of 116,539 samples, 13 now). What the kept
 * arrays hold (at most 16 MiB) is outside the queue's bound: a stream
 * without rounds still frees what its many runs grew to.
 */
#define RUN_KEEP 256
#define RUN_KEEP_BIG 16384

/* @r, used up, kept for reuse: its array no longer counts as queued (a
 * large one is let go, or kept as one of the few big ones) */
static void run_park(struct oqueue *q, struct oq_run *r)
{
	q->bytes -= r->cap * sizeof(*r->e);
	if (r->cap > RUN_KEEP) {
		if (r->cap <= RUN_KEEP_BIG && q->nr_free_big < OQ_RECENT) {
			q->nr_free_big++;
		} else {
			free(r->e);
			r->e = NULL;
			r->cap = 0;
		}
	}
	r->head = r->len = 0;
	r->next_free = q->free_runs;
	q->free_runs = r;
}

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
		q->bytes += r->cap * sizeof(*r->e);  /* queued again */
		if (r->cap > RUN_KEEP)
			q->nr_free_big--;
	} else {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
	}
	r->head = r->len = 0;
	r->next_free = NULL;
	return r;
}

/* The run's next free item (taken by r->len++), or NULL out of memory;
 * the run's array counts whole in what is queued. */
static struct oq_item *run_slot(struct oqueue *q, struct oq_run *r)
{
	if (r->len == r->cap) {
		if (r->head >= r->len / 2 && r->head) {
			/* slide the waiting items down instead of growing */
			memmove(r->e, r->e + r->head, (r->len - r->head) * sizeof(*r->e));
			r->len -= r->head;
			r->head = 0;
		} else {
			size_t cap = r->cap ? r->cap * 2 : 256;
			struct oq_item *n = realloc(r->e, cap * sizeof(*n));

			if (!n)
				return NULL;
			q->bytes += (cap - r->cap) * sizeof(*n);
			r->e = n;
			r->cap = cap;
		}
	}
	return &r->e[r->len];
}

/*
 * The run to append an entry of @time to: of the recent runs whose last
 * entry is not later, the one with the latest (records arrive as a few
 * interleaved sorted streams, one per CPU buffer: each finds its run).
 */
static struct oq_run *run_for(struct oqueue *q, uint64_t time)
{
	struct oq_run *best = q->last;

	/* the run appended to last, while it takes the item: records come
	 * in streams, and any run whose last item is not later keeps the
	 * order (which run holds an item never changes when it is taken) */
	if (best && best->e[best->len - 1].time <= time)
		return best;
	best = NULL;

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
	size_t need = buf ? 0 : copy_bytes(size);
	struct oq_chunk *c = NULL;
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
	it = run_slot(q, r);
	if (!it)
		goto fail;
	if (!buf) {
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
		c = q->cur;
		memcpy((uint8_t *)c->data + c->used, rec, size);
		rec = (uint8_t *)c->data + c->used;
		c->used += need;
		c->live++;
	} else {
		oq_hold(buf);
	}
	*it = (struct oq_item){ .time = time, .seq = q->seq++, .offset = offset, .tag = tag,
				.rec = rec, .buf = buf, .chunk = c, .size = size };
	r->len++;
	q->last = r;
	q->bytes += item_bytes(!buf, size);
	q->nr++;
	if (fresh) {
		if (q->nr_recent == OQ_RECENT) {
			struct oq_run **old = &q->recent[q->oldest_recent++ % OQ_RECENT];

			if (*old == q->last) /* it no longer takes items */
				q->last = r;
			*old = r;
		} else
			q->recent[q->nr_recent++] = r;
		q->nr_heap++;
		heap_set(q, q->nr_heap - 1, r);
		sift_up(q, q->nr_heap - 1);
	}
	return 0;
fail:
	if (fresh)
		run_park(q, r);
	return -1;
}

const struct oq_item *oq_peek(const struct oqueue *q)
{
	const struct oq_run *r;

	if (!q->nr_heap)
		return NULL;
	r = q->heap[0];
	return &r->e[r->head];
}

/* Let go of what @it holds: its buffer's reference or its copy's chunk. */
static void item_release(struct oqueue *q, const struct oq_item *it)
{
	if (it->buf)
		oq_release(it->buf);
	else if (--it->chunk->live == 0 && it->chunk != q->cur)
		chunk_put(q, it->chunk);
}

void oq_pop(struct oqueue *q)
{
	struct oq_run *r;

	if (!q->nr_heap)
		return;
	r = q->heap[0];
	q->bytes -= item_bytes(!r->e[r->head].buf, r->e[r->head].size);
	q->nr--;
	item_release(q, &r->e[r->head++]);
	if (r->head < r->len) {
		/* two runs (two CPUs' streams, mostly): one comparison */
		if (q->nr_heap == 2) {
			if (run_before(q->heap[1], r)) {
				heap_set(q, 0, q->heap[1]);
				heap_set(q, 1, r);
			}
			return;
		}
		sift_down(q, 0);
		return;
	}
	/* the run is used up: out of the heap and the recent set, kept for reuse */
	recent_drop(q, r);
	if (q->last == r)
		q->last = NULL;
	run_park(q, r);
	if (--q->nr_heap) {
		heap_set(q, 0, q->heap[q->nr_heap]);
		sift_down(q, 0);
	}
}

void oq_free(struct oqueue *q)
{
	struct oq_chunk *c, *n;
	struct oq_run *r, *rn;

	/* Chunks with live copies are reachable only through the runs. */
	for (size_t i = 0; i < q->nr_heap; i++) {
		r = q->heap[i];
		for (size_t j = r->head; j < r->len; j++) {
			c = r->e[j].chunk;
			if (c && c != q->cur && --c->live == 0)
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
		if (!b->view)
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

/* A view let go of: the pages wholly in it leave the resident set. */
static void view_drop(struct oqueue *q, struct oq_buf *b)
{
	static uintptr_t page;
	uintptr_t lo, hi;

	if (!page) {
		long ps = sysconf(_SC_PAGESIZE);

		page = ps > 0 ? (uintptr_t)ps : 4096;
	}
	lo = ((uintptr_t)b->data + page - 1) & ~(page - 1);
	hi = ((uintptr_t)b->data + b->cap) & ~(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
	buf_unlink(q, b);
	free(b);
}

static void buf_spare(struct oqueue *q, struct oq_buf *b)
{
	if (b->view) {
		view_drop(q, b);
		return;
	}
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

struct oq_buf *oq_buf_view(struct oqueue *q, const uint8_t *data, size_t len)
{
	struct oq_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->data = (uint8_t *)data; /* never written through: the mapping is read-only */
	b->cap = len;
	b->view = true;
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
	if (b->refs)
		b->q->bytes += cap - b->cap;  /* held: counted whole */
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
	if (b->refs == 1)
		b->q->bytes -= b->cap;
	if (--b->refs == 0 && !b->lent)
		buf_spare(b->q, b);
}
