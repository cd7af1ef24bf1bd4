/* SPDX-License-Identifier: MIT */
/*
 * reader-cutter.c - cutting on a thread of the reader's (opts.threaded):
 * the cutter fills batches with what the record loop delivers, the
 * caller's thread delivers each batch in order, and a batch goes back to
 * the cutter once delivered and no longer held (perf_event_hold()).
 */
#include "priv.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "../util/mem.h"
#include "../util/threadtime.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif


/* --- cutting on a thread of the reader's (opts.threaded) --- */

/*
 * With opts.threaded, a regular file's records are cut, counted and
 * ordered on a thread of the reader's (the "cutter": what
 * perf_reader_run() does on the caller's thread otherwise), and what it
 * delivers goes in batches to the caller's thread, which decodes each
 * record and calls the consumer with it, in the same order.
 *
 * A batch keeps its records where they are (a reference to the buffer of
 * each, or a copy of one that lies in no buffer) until the caller has
 * delivered it and released every perf_event_hold() of its records; the
 * cutter then drops the references, so the queue and its buffers are only
 * ever touched by the cutter. The perf tool's records that change what
 * delivery reads (attributes, tracing data, features, event names, build
 * ids) wait until everything before them was delivered.
 *
 * Owned by the cutter: everything of the reader but what delivery uses
 * (the consumer, the counters' last reads, st.samples, st.reads_* and
 * each event's sample counts), which the caller's thread owns; what
 * does not decode there is counted as skipped after the cutter ends.
 */
#define DL_BATCH 1024
#define DL_OUT 16             /* batches at most, delivered or not */
#define DL_AHEAD 8            /* records fetched ahead of their delivery */

struct dl_item {
	union {
		const uint8_t *rec;   /* in buf */
		size_t copy_off;      /* without buf: in the batch's copies */
	} u;
	struct perf_evsel *evsel;
	struct oq_buf *buf;
	uint64_t offset;
	uint32_t size;
};

/* dl_item_put() writes items a word at a time: five, size the last */
#define DL_WORD(field) (offsetof(struct dl_item, field) / sizeof(long long))
_Static_assert(sizeof(struct dl_item) == 5 * sizeof(long long) && DL_WORD(size) == 4 &&
		       offsetof(struct dl_item, size) % sizeof(long long) == 0,
	       "dl_item is five words, size in the last");

struct dl_batch {
	struct dl_pipe *d;
	size_t nr;
	uint8_t *copy;                /* records in no buffer, 8-aligned */
	size_t copy_len, copy_cap;
	unsigned holds;               /* the caller's: perf_event_hold()s */
	bool delivered;               /* the caller's */
	struct dl_batch *next;
	struct dl_item item[DL_BATCH];
};

struct dl_pipe {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more;          /* the caller waits: published, or the end */
	pthread_cond_t back;          /* the cutter waits: returned, or delivered */
	struct dl_batch *head, *tail; /* published, not yet taken */
	struct dl_batch *returned;    /* delivered and let go by the caller */
	unsigned nr_returned;
	unsigned want;                /* the cutter waits for this many returned */
	bool barrier;                 /* ... or for everything delivered */
	uint64_t published, delivered;
	bool halt;                    /* the consumer asked to stop */
	bool end;                     /* the cutter is done: ret */
	int ret;
	/* the cutter's */
	struct dl_batch *cur, *spare, *spare_tail;
	unsigned made;
	/* the caller's: records that did not decode */
	uint64_t bad_records, bad_bytes;
	struct perf_skip bad[PERF_SKIP_KEEP];
	unsigned nr_bad;
};

/* A batch's records as a hold: tagged, to tell it from a buffer. */
static void *dl_hold_of(struct dl_batch *b)
{
	return (void *)((uintptr_t)b | 1);
}

static struct dl_batch *dl_batch_of_hold(void *hold)
{
	return ((uintptr_t)hold & 1) ? (struct dl_batch *)((uintptr_t)hold & ~(uintptr_t)1) : NULL;
}

/* Append @b to the list @head .. @tail. */
static void dl_append(struct dl_batch **head, struct dl_batch **tail, struct dl_batch *b)
{
	b->next = NULL;
	if (*tail)
		(*tail)->next = b;
	else
		*head = b;
	*tail = b;
}

/* The caller lets @b go (under the lock): back to the cutter. */
static void dl_return_locked(struct dl_pipe *d, struct dl_batch *b)
{
	b->next = d->returned;
	d->returned = b;
	d->nr_returned++;
}

/* Drop what the returned batches @b.. keep (on the cutter); spare them. */
static void dl_let_go(struct dl_pipe *d, struct dl_batch *b)
{
	while (b) {
		struct dl_batch *n = b->next;

		for (size_t i = 0; i < b->nr; i++)
			if (b->item[i].buf)
				oq_release(b->item[i].buf);
		b->nr = 0;
		b->copy_len = 0;
		b->holds = 0;
		b->delivered = false;
		/* reused in the order let go: by then the caller's core has let
		 * its lines go, and the cutter's writes need not take them from it */
		dl_append(&d->spare, &d->spare_tail, b);
		b = n;
	}
}

/* A batch to fill (on the cutter): NULL when out of memory or halted. */
static struct dl_batch *dl_get(struct perf_reader *r)
{
	struct dl_pipe *d = r->dl;
	struct dl_batch *b, *back;
	bool halt;

	pthread_mutex_lock(&d->lock);
	if (!d->spare && d->made >= DL_OUT && !d->nr_returned) {
		/* wait for a few, not a wake-up per batch; with every batch
		 * delivered and still held (perf_event_hold()), one more is made */
		d->want = DL_OUT / 4;
		while (!d->halt && d->nr_returned < d->want && d->delivered < d->published)
			pthread_cond_wait(&d->back, &d->lock);
		d->want = 0;
	}
	back = d->returned;
	d->returned = NULL;
	d->nr_returned = 0;
	halt = d->halt;
	pthread_mutex_unlock(&d->lock);
	dl_let_go(d, back);
	if (halt) {
		r->stop = true;
		return NULL;
	}
	if ((b = d->spare)) {
		if (!(d->spare = b->next))
			d->spare_tail = NULL;
	} else {
		if (!(b = calloc(1, sizeof(*b))))
			return NULL;
		b->d = d;
		d->made++;
	}
	b->next = NULL;
	return b;
}

/* Publish the batch being filled (on the cutter). */
static void dl_publish(struct perf_reader *r)
{
	struct dl_pipe *d = r->dl;
	struct dl_batch *b = d->cur;

	if (!b || !b->nr)
		return;
#if defined(__x86_64__)
	_mm_sfence(); /* the items' streamed stores (dl_item_put()) before the batch is seen */
#endif
	d->cur = NULL;
	pthread_mutex_lock(&d->lock);
	dl_append(&d->head, &d->tail, b);
	d->published++;
	if (d->halt)
		r->stop = true;
	pthread_cond_signal(&d->more);
	pthread_mutex_unlock(&d->lock);
}

/* Wait until everything before was delivered (on the cutter): the caller's
 * thread reads nothing of the reader meanwhile. */
void perf_dl_barrier(struct perf_reader *r)
{
	struct dl_pipe *d = r->dl;

	dl_publish(r);
	pthread_mutex_lock(&d->lock);
	d->barrier = true;
	while (d->delivered < d->published)
		pthread_cond_wait(&d->back, &d->lock);
	d->barrier = false;
	pthread_mutex_unlock(&d->lock);
}

/*
 * Fill the batch item @it (on the cutter): @first is its rec or copy_off.
 * On x86-64 the stores stream past this core's caches: the caller's core
 * read this batch last, and a plain store would first take each of its
 * lines back from that core's cache (perf_dl_add() was 30% of the cutter's
 * time; alternated 20 times on the -g bench file, the export's median went
 * from 171 to 149 ms and its CPU time from 253 to 225 ms). Each word is
 * stored as it is (a struct built first and copied stalled on the copy's
 * loads). dl_publish() fences them before the batch is handed over.
 */
static inline void dl_item_put(struct dl_item *it, uintptr_t first, struct perf_evsel *evsel,
			       struct oq_buf *buf, uint64_t offset, uint32_t size)
{
#if defined(__x86_64__)
	long long *w = (long long *)it;

	_mm_stream_si64(w + DL_WORD(u), (long long)first);
	_mm_stream_si64(w + DL_WORD(evsel), (long long)(uintptr_t)evsel);
	_mm_stream_si64(w + DL_WORD(buf), (long long)(uintptr_t)buf);
	_mm_stream_si64(w + DL_WORD(offset), (long long)offset);
	_mm_stream_si64(w + DL_WORD(size), (long long)size); /* and the padding after it */
#else
	if (buf)
		it->u.rec = (const uint8_t *)first;
	else
		it->u.copy_off = first;
	it->evsel = evsel;
	it->buf = buf;
	it->offset = offset;
	it->size = size;
#endif
}

/* deliver() on the cutter: into the batch being filled. */
__attribute__((noinline)) void perf_dl_add(struct perf_reader *r, const uint8_t *rec,
					 uint32_t size, uint64_t offset, struct perf_evsel *evsel,
					 struct oq_buf *buf)
{
	struct dl_pipe *d = r->dl;
	struct dl_batch *b = d->cur;
	struct dl_item *it;
	uintptr_t first;

	if (r->stop)
		return;
	if (!b && !(b = d->cur = dl_get(r))) {
		if (!r->stop) {
			r->err = PP_ENOMEM;
			r->stop = true;
		}
		return;
	}
	it = &b->item[b->nr];
	if (buf) {
		oq_hold(buf);
		first = (uintptr_t)rec;
	} else {
		/* a copy, or a record of the queue's own copies: copied again */
		size_t need = ((size_t)size + 7) & ~(size_t)7;

		if (b->copy_len + need > b->copy_cap) {
			size_t cap = b->copy_cap ? b->copy_cap : 4 * MAX_RECORD;
			uint8_t *n;

			while (cap < b->copy_len + need)
				cap *= 2;
			if (!(n = realloc(b->copy, cap))) {
				r->err = PP_ENOMEM;
				r->stop = true;
				return;
			}
			b->copy = n;
			b->copy_cap = cap;
		}
		memcpy(b->copy + b->copy_len, rec, size);
		first = b->copy_len;
		b->copy_len += need;
	}
	dl_item_put(it, first, evsel, buf, offset, size);
	if (++b->nr == DL_BATCH)
		dl_publish(r);
}

/* Deliver batch @b on the caller's thread. Return: false once delivery ended. */
static bool dl_deliver(struct perf_reader *r, struct dl_batch *b, int *err)
{
	struct dl_pipe *d = r->dl;

	for (size_t i = 0; i < b->nr; i++) {
		const struct dl_item *it = &b->item[i];
		uint8_t *rec = it->buf ? (uint8_t *)it->u.rec : b->copy + it->u.copy_off;
		const char *why = NULL;
		int ret;

		/* another core read the records: asked for ahead of their turn */
		if (i + DL_AHEAD < b->nr && b->item[i + DL_AHEAD].buf) {
			const struct dl_item *a = &b->item[i + DL_AHEAD];

			for (uint32_t o = 0; o < a->size && o < 256; o += 64)
				__builtin_prefetch(a->u.rec + o);
		}
		ret = perf_deliver_one(r, rec, it->size, it->offset, it->evsel, dl_hold_of(b),
				       false, err, &why);
		if (ret > 0) {
			/* perf_skip() touches the cutter's counts: added after it ends */
			d->bad_records++;
			d->bad_bytes += it->size;
			if (d->nr_bad < PERF_SKIP_KEEP)
				d->bad[d->nr_bad++] = (struct perf_skip){ it->offset,
									  load_u32(rec, false), why };
			pp_debug("skipped %" PRIu32 " bytes at offset %" PRIu64 " (record type %u): %s",
				 it->size, it->offset, load_u32(rec, false), why);
		} else if (ret < 0) {
			return false;
		}
	}
	return true;
}

static void *dl_main(void *arg)
{
	struct perf_reader *r = arg;
	struct dl_pipe *d = r->dl;
	int ret;

	thread_role("cut");
	mem_thread_hugepages();
	ret = perf_cut_all(r);

	dl_publish(r);
	pthread_mutex_lock(&d->lock);
	d->end = true;
	d->ret = ret;
	pthread_cond_signal(&d->more);
	pthread_mutex_unlock(&d->lock);
	thread_time_note("cut");
	return NULL;
}

/* The pipe and its batches, once no cutter runs and nothing is held
 * (close, or a cutter that could not start). */
void perf_dl_free(struct perf_reader *r)
{
	struct dl_pipe *d = r->dl;
	struct dl_batch *lists[4], *b, *n;

	if (!d)
		return;
	lists[0] = d->head;
	lists[1] = d->returned;
	lists[2] = d->spare;
	lists[3] = d->cur;
	if (d->cur)
		d->cur->next = NULL;
	for (unsigned i = 0; i < 4; i++)
		for (b = lists[i]; b; b = n) {
			n = b->next;
			free(b->copy);
			free(b);
		}
	pthread_cond_destroy(&d->back);
	pthread_cond_destroy(&d->more);
	pthread_mutex_destroy(&d->lock);
	free(d);
	r->dl = NULL;
}

/*
 * Run the cutter and deliver what it cuts on this thread, to its end.
 * Return: the cutter's result; r->stop and r->err as without it. -1: no
 * thread could be started (nothing was read).
 */
int perf_dl_run(struct perf_reader *r)
{
	struct dl_pipe *d = calloc(1, sizeof(*d));
	bool stopped = false;
	int err = 0, ret;

	if (!d)
		return -1;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->more, NULL);
	pthread_cond_init(&d->back, NULL);
	r->dl = d;
	if (pthread_create(&d->thread, NULL, dl_main, r)) {
		perf_dl_free(r);
		return -1;
	}
	for (;;) {
		struct dl_batch *b;

		pthread_mutex_lock(&d->lock);
		while (!d->head && !d->end)
			pthread_cond_wait(&d->more, &d->lock);
		b = d->head;
		if (b && !(d->head = b->next))
			d->tail = NULL;
		pthread_mutex_unlock(&d->lock);
		if (!b)
			break;
		/* once stopped, nothing more: as the records left in the queue then */
		if (!stopped && !dl_deliver(r, b, &err))
			stopped = true;
		b->delivered = true;
		pthread_mutex_lock(&d->lock);
		d->delivered++;
		if (stopped)
			d->halt = true;
		if (!b->holds)
			dl_return_locked(d, b);
		if (d->halt || d->barrier || (d->want && d->nr_returned >= d->want) ||
		    (d->want && d->delivered == d->published))
			pthread_cond_signal(&d->back);
		pthread_mutex_unlock(&d->lock);
	}
	pthread_join(d->thread, NULL);
	ret = d->ret;
	if (err && !r->err)
		r->err = err;
	if (stopped)
		r->stop = true;
	r->st.skipped_records += d->bad_records;
	r->st.skipped_bytes += d->bad_bytes;
	for (unsigned i = 0; i < d->nr_bad && r->st.nr_skips_kept < PERF_SKIP_KEEP; i++)
		r->st.skips[r->st.nr_skips_kept++] = d->bad[i];
	return ret;
}

void *perf_event_hold(const struct perf_event *ev)
{
	struct dl_batch *d = dl_batch_of_hold(ev->hold);

	if (d)
		d->holds++;
	else if (ev->hold)
		oq_hold(ev->hold);
	return ev->hold;
}

void perf_event_release(void *hold)
{
	struct dl_batch *b = dl_batch_of_hold(hold);
	struct dl_pipe *d;

	if (!b) {
		if (hold)
			oq_release(hold);
		return;
	}
	if (--b->holds || !b->delivered)
		return;
	/* the last hold of a delivered batch: back to the cutter */
	d = b->d;
	pthread_mutex_lock(&d->lock);
	dl_return_locked(d, b);
	if (d->want && d->nr_returned >= d->want)
		pthread_cond_signal(&d->back);
	pthread_mutex_unlock(&d->lock);
}
