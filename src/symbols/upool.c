/* SPDX-License-Identifier: MIT */
#include "upool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/threadtime.h"
#include "../util/error.h"
#include "../util/mem.h"

#define BATCH 256
#define MAX_PCS 1024

struct slot {
	void *hold;            /* the reader keeps the record where it was read */
	uint8_t *rec;          /* else a copy, 8-aligned */
	uint32_t cap;
	struct perf_event ev;  /* as delivered (decoded again over a copy) */
	struct perf_read_value *reads; /* a copy of ev's */
	size_t reads_cap;
	bool unwind;           /* to be unwound */
	/* the unwound addresses: with one job MAX_PCS, made for the first
	 * sample to unwind; with threads as many as the deepest stack
	 * unwound here, made and written by the one worker that has this
	 * slot (slot i: worker i mod threads) */
	uint64_t *pcs;
	size_t pcs_cap;
	size_t n;
};

struct worker {
	struct upool *pool;
	unsigned id;
	pthread_t thread;
	struct symbolizer *sym;
	uint64_t *scratch;     /* MAX_PCS: where this worker unwinds */
	bool oom;              /* a slot could not be unwound: no memory */
};

/*
 * Batches: while the workers unwind one (the "flight"), the caller fills
 * another; when it is full, the caller waits for the flight, sends the full
 * one off, and delivers the one that came back while the workers unwind
 * (delivery may read the machine, never change it) - or, with a delivering
 * thread, hands it to that thread and fills a third. With one job there are
 * no threads: each sample is unwound in place.
 */
#define NR_BATCHES 3

struct upool {
	unsigned jobs;
	struct machine *m;
	upool_fn fn;
	void *ctx;
	struct slot *batch[NR_BATCHES];
	unsigned nr_batches;      /* in use: 2, or 3 with a delivering thread */
	size_t nr_slots;          /* in each batch: BATCH, or 1 for one job */
	size_t nr[NR_BATCHES];
	unsigned fill;            /* the batch being filled */
	bool in_flight;           /* the batch "flight" is with the workers */
	bool ready;               /* ... or back (or had nothing to unwind) */
	size_t unw[NR_BATCHES];   /* samples to unwind in each batch */
	struct worker *workers;
	unsigned threads;         /* started worker threads: workers 0..threads-1 */

	pthread_mutex_t lock;
	pthread_cond_t go, done;
	bool sync_ready;
	uint64_t round;           /* bumped for each batch sent */
	int werr;                 /* PP_ENOMEM: a worker ran out of memory */
	unsigned flight;          /* which batch the workers unwind */
	unsigned finished;        /* workers done with the current round */
	bool quit;

	/* the delivering thread, under lock */
	bool dthread;             /* started */
	pthread_t deliverer;
	pthread_cond_t dgo, ddone;
	unsigned dbatch;          /* the batch it has (dheld) */
	bool dheld;               /* ... until the caller takes it back */
	bool dbusy;               /* ... and is delivering */
	int derr;                 /* the first error @fn returned there */
};

static bool needs_unwind(const struct upool *p, const struct perf_event *ev)
{
	return sym_unwind_wanted(p->workers[0].sym, ev);
}

/*
 * Unwind worker @w's slots of batch @b. Each stack is unwound into the
 * worker's scratch, then kept in its slot's own room, grown to fit: the
 * memory is the worker's, first touched on its thread (on a VM every first
 * touch is a trap; 8 KiB a slot made by the caller were most of the heap
 * it first touched at -j 4), and a few hundred bytes a stack, not 8 KiB.
 */
static void unwind_share(struct worker *w, unsigned b)
{
	struct upool *p = w->pool;

	for (size_t i = w->id; i < p->nr[b]; i += p->threads) {
		struct slot *s = &p->batch[b][i];
		size_t n;

		s->n = 0;
		if (!s->unwind)
			continue;
		if (!w->scratch && !(w->scratch = malloc(MAX_PCS * sizeof(*w->scratch)))) {
			w->oom = true;
			continue;
		}
		n = sym_unwind(w->sym, p->m, &s->ev, w->scratch, MAX_PCS);
		if (n > s->pcs_cap) {
			size_t cap = (n + 63) & ~(size_t)63;
			uint64_t *pcs = realloc(s->pcs, cap * sizeof(*pcs));

			if (!pcs) {
				w->oom = true;
				continue;
			}
			s->pcs = pcs;
			s->pcs_cap = cap;
		}
		if (n)
			memcpy(s->pcs, w->scratch, n * sizeof(*s->pcs));
		s->n = n;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct upool *p = w->pool;
	uint64_t seen = 0;

	thread_role("unwind");
	mem_thread_hugepages();

	pthread_mutex_lock(&p->lock);
	for (;;) {
		unsigned b;

		while (!p->quit && p->round == seen)
			pthread_cond_wait(&p->go, &p->lock);
		if (p->quit)
			break;
		seen = p->round;
		b = p->flight;
		pthread_mutex_unlock(&p->lock);
		unwind_share(w, b);
		pthread_mutex_lock(&p->lock);
		if (w->oom)
			p->werr = PP_ENOMEM;
		w->oom = false;
		if (++p->finished == p->threads)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	thread_time_note("unwind");
	return NULL;
}

/* @fn over batch @b, in order, unless @err: returns the first error. */
static int deliver_batch(struct upool *p, unsigned b, int err)
{
	for (size_t i = 0; i < p->nr[b] && !err; i++)
		err = p->fn(p->ctx, &p->batch[b][i].ev, p->batch[b][i].pcs, p->batch[b][i].n);
	return err;
}

/* Batch @b delivered: its records' holds end (on the caller's thread). */
static void batch_done(struct upool *p, unsigned b)
{
	for (size_t i = 0; i < p->nr[b]; i++) {
		struct slot *s = &p->batch[b][i];

		perf_event_release(s->hold);
		s->hold = NULL;
	}
	p->nr[b] = 0;
	p->unw[b] = 0;
}

static void *deliverer_main(void *arg)
{
	struct upool *p = arg;

	thread_role("deliver");
	mem_thread_hugepages();

	pthread_mutex_lock(&p->lock);
	for (;;) {
		unsigned b;
		int err;

		while (!p->quit && !p->dbusy)
			pthread_cond_wait(&p->dgo, &p->lock);
		if (p->quit)
			break;
		b = p->dbatch;
		err = p->derr;
		pthread_mutex_unlock(&p->lock);
		err = deliver_batch(p, b, err);
		pthread_mutex_lock(&p->lock);
		p->derr = err;
		p->dbusy = false;
		pthread_cond_signal(&p->ddone);
	}
	pthread_mutex_unlock(&p->lock);
	thread_time_note("deliver");
	return NULL;
}

/* Wait for the delivering thread; take its batch back. Return: its error. */
static int reap(struct upool *p)
{
	int err;

	if (!p->dthread)
		return 0;
	pthread_mutex_lock(&p->lock);
	while (p->dbusy)
		pthread_cond_wait(&p->ddone, &p->lock);
	err = p->derr;
	pthread_mutex_unlock(&p->lock);
	if (p->dheld) {
		batch_done(p, p->dbatch);
		p->dheld = false;
	}
	return err;
}

static void hand_over(struct upool *p, unsigned b)
{
	pthread_mutex_lock(&p->lock);
	p->dbatch = b;
	p->dheld = true;
	p->dbusy = true;
	pthread_cond_signal(&p->dgo);
	pthread_mutex_unlock(&p->lock);
}

/* A batch neither in flight (or back from it) nor with the delivering thread. */
static unsigned free_batch(const struct upool *p)
{
	for (unsigned b = 0; b < p->nr_batches; b++)
		if (!((p->in_flight || p->ready) && b == p->flight) && !(p->dheld && b == p->dbatch))
			return b;
	return p->fill; /* cannot happen */
}

/*
 * Send the batch being filled to the workers - or, with nothing in it to
 * unwind and a delivering thread to hand it to, straight on as unwound;
 * fill another.
 */
static void launch(struct upool *p)
{
	p->flight = p->fill;
	if (p->dthread && !p->unw[p->fill]) {
		p->ready = true;
	} else {
		pthread_mutex_lock(&p->lock);
		p->finished = 0;
		p->round++;
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->lock);
		p->in_flight = true;
	}
	p->fill = free_batch(p);
}

/* Wait for the batch with the workers. Return: a batch "flight" is back. */
static bool wait_flight(struct upool *p)
{
	if (p->in_flight) {
		pthread_mutex_lock(&p->lock);
		while (p->finished < p->threads)
			pthread_cond_wait(&p->done, &p->lock);
		pthread_mutex_unlock(&p->lock);
		p->in_flight = false;
		p->ready = true;
	}
	return p->ready;
}

/*
 * Wait for the batch with the workers (and the delivering thread's); with
 * @next, send the workers the batch being filled, then deliver the one
 * that came back - on the delivering thread when there is one, so that
 * the caller goes on reading, else here while the workers unwind (the
 * caller only reads the machine meanwhile). Without @next (a flush), what
 * came back is delivered here, and no thread is at work on return.
 */
static int land(struct upool *p, bool next)
{
	unsigned b = p->flight;
	bool landed = wait_flight(p);
	int ret = reap(p);

	/* set under the lock by a worker before it finished: wait_flight()
	 * took the lock after that */
	if (!ret && landed)
		ret = p->werr;

	p->ready = false;
	if (next) {
		/* nobody reads the maps now: they are made whole */
		machine_maps_settle(p->m);
		if (landed && p->dthread && !ret) {
			hand_over(p, b);
			landed = false;
		}
		launch(p);
	}
	if (landed) {
		ret = deliver_batch(p, b, ret);
		batch_done(p, b);
	}
	return ret;
}

int upool_flush(struct upool *p)
{
	int ret;

	if (!p->threads)
		return 0;
	ret = land(p, false);
	if (ret || !p->nr[p->fill])
		return ret;
	machine_maps_settle(p->m);
	launch(p);
	return land(p, false);
}

void upool_quiesce(struct upool *p)
{
	if (p && p->threads)
		wait_flight(p); /* it stays "ready": land() delivers it */
}

void upool_wait(struct upool *p)
{
	if (!p || !p->threads)
		return;
	wait_flight(p);
	p->ready = false;
	reap(p);
}

int upool_machine_event(struct upool *p, struct machine *m, const struct perf_event *ev)
{
	int ret;

	if (!machine_event_applies(ev))
		return 0;
	ret = upool_flush(p);
	if (ret)
		return ret;
	/*
	 * A process's main thread ended: in time order nothing of it comes
	 * after, and each worker's unwinding state for it (a Dwfl mapping
	 * every file of the process again) would otherwise stay until
	 * evicted - hundreds of dead processes' in a system-wide recording.
	 * The workers are idle (flushed). Should a sample of the pid still
	 * come (a thread outliving its leader, records out of order), the
	 * state is made again: what is unwound is the same.
	 */
	if (ev->type == PERF_RECORD_EXIT && ev->u.task.pid == ev->u.task.tid)
		for (unsigned i = 0; i < p->jobs; i++)
			sym_unwind_forget(p->workers[i].sym, ev->u.task.pid);
	return machine_event(m, ev);
}

/* Point a decoded side-band record's string into the copy at @rec. */
static void rebase(struct perf_event *ev, const struct perf_event *orig, const uint8_t *rec)
{
#define REBASE(p) ((p) = (p) ? (const void *)(rec + ((const uint8_t *)(p) - \
					 (const uint8_t *)orig->data)) : NULL)
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: REBASE(ev->u.mmap.filename); break;
	case PERF_RECORD_COMM: REBASE(ev->u.comm.comm); break;
	case PERF_RECORD_KSYMBOL: REBASE(ev->u.ksym.name); break;
	default: break;
	}
#undef REBASE
}

/*
 * The batches, made at the first sample to unwind (a recording without
 * --call-graph dwarf never uses them); a slot's room for unwound addresses
 * (8 KiB) when it first holds a sample to unwind: on a VM each first touch
 * of a page is a trap.
 */
static int batches_alloc(struct upool *p)
{
	unsigned b;

	for (b = 0; b < p->nr_batches; b++)
		if (!(p->batch[b] = calloc(p->nr_slots, sizeof(struct slot))))
			break;
	if (b == p->nr_batches)
		return 0;
	while (b--) {
		free(p->batch[b]);
		p->batch[b] = NULL;
	}
	return PP_ENOMEM;
}

int upool_add(struct upool *p, const struct perf_event *ev)
{
	struct slot *s;
	bool unwind;

	if (!p->threads) {
		/* one job: unwind in place, no batch and no copy */
		struct slot *one = &p->batch[0][0];

		one->n = 0;
		if (!one->pcs && !(one->pcs = malloc(MAX_PCS * sizeof(*one->pcs))))
			return PP_ENOMEM;
		if (needs_unwind(p, ev) && !machine_maps_settle(p->m))
			one->n = sym_unwind(p->workers[0].sym, p->m, ev, one->pcs, MAX_PCS);
		return p->fn(p->ctx, ev, one->pcs, one->n);
	}
	unwind = needs_unwind(p, ev);
	/*
	 * Nothing to unwind and nothing before it: delivered here (handing
	 * such records to the delivering thread costs the caller what their
	 * accounting does: measured on -g recordings).
	 */
	if (!unwind && !p->nr[p->fill] && !p->in_flight && !p->ready && !p->dheld)
		return p->fn(p->ctx, ev, NULL, 0);
	if (!p->batch[0] && batches_alloc(p))
		return PP_ENOMEM;
	s = &p->batch[p->fill][p->nr[p->fill]];
	s->unwind = unwind;
	s->ev = *ev;
	/* the record stays where the reader read it (the workers read it
	 * there) when it can; else a copy, decoded again over the copy */
	s->hold = perf_event_hold(ev);
	if (!s->hold) {
		if (ev->size > s->cap) {
			uint32_t cap = (ev->size + 4095) & ~4095u;
			uint8_t *n = aligned_alloc(8, cap);

			if (!n)
				return PP_ENOMEM;
			free(s->rec);
			s->rec = n;
			s->cap = cap;
		}
		memcpy(s->rec, ev->data, ev->size);
		s->ev.data = s->rec;
		/* the pointers of the decoded record must point into the copy */
		if (ev->type != PERF_RECORD_SAMPLE)
			rebase(&s->ev, ev, s->rec);
		else if (perf_sample_parse(ev->evsel, s->rec + 8, ev->size - 8, false, &s->ev.sample))
			return PP_EFORMAT; /* cannot happen: the reader parsed it already */
	}
	if (ev->nr_reads) {
		/* the reader's list lasts only while it delivers this record */
		if (ev->nr_reads > s->reads_cap) {
			struct perf_read_value *v = realloc(s->reads, ev->nr_reads * sizeof(*v));

			if (!v) {
				perf_event_release(s->hold);
				s->hold = NULL;
				return PP_ENOMEM;
			}
			s->reads = v;
			s->reads_cap = ev->nr_reads;
		}
		memcpy(s->reads, ev->reads, ev->nr_reads * sizeof(*s->reads));
		s->ev.reads = s->reads;
	} else {
		s->ev.reads = NULL;
	}
	s->n = 0;
	p->unw[p->fill] += unwind;
	if (++p->nr[p->fill] < BATCH)
		return 0;
	/* this batch goes off; the previous one is delivered, in order, while
	 * the workers unwind this one */
	return land(p, true);
}

struct upool *upool_new(unsigned jobs, const struct sym_opts *opts,
			const struct perf_header_info *hdr, struct machine *m,
			upool_fn fn, void *ctx, unsigned flags)
{
	struct upool *p = calloc(1, sizeof(*p));
	unsigned n;

	if (!p)
		return NULL;
	p->jobs = jobs ? jobs : 1;
	p->m = m;
	p->fn = fn;
	p->ctx = ctx;
	/* one job unwinds in place in slot 0 */
	p->nr_slots = p->jobs > 1 ? BATCH : 1;
	p->nr_batches = 2;
	p->workers = calloc(p->jobs, sizeof(*p->workers));
	if (!p->workers || (p->jobs == 1 && batches_alloc(p)))
		goto fail;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	pthread_cond_init(&p->dgo, NULL);
	pthread_cond_init(&p->ddone, NULL);
	p->sync_ready = true;
	for (unsigned i = 0; i < p->jobs; i++) {
		p->workers[i].pool = p;
		p->workers[i].id = i;
		p->workers[i].sym = sym_new(opts, hdr);
		if (!p->workers[i].sym)
			goto fail;
	}
	if (p->jobs == 1)
		return p; /* worker 0's symbolizer, used in place */
	/* N threads unwind, beside the caller: in the steady state unwinding
	 * costs ~4x what reading and naming do, so the caller needs little */
	for (n = 0; n < p->jobs; n++)
		if (pthread_create(&p->workers[n].thread, NULL, worker_main, &p->workers[n]))
			break;
	p->threads = n;
	if (!n && batches_alloc(p))
		goto fail;
	if (!n)
		p->jobs = 1; /* no thread could start: unwind in place */
	/* delivery on a thread of its own: the caller keeps reading */
	if (n && (flags & UPOOL_DELIVER_THREAD) &&
	    !pthread_create(&p->deliverer, NULL, deliverer_main, p)) {
		p->dthread = true;
		p->nr_batches = 3;
	}
	return p;
fail:
	upool_free(p);
	return NULL;
}

void upool_add_stats(const struct upool *p, struct sym_stats *st)
{
	for (unsigned i = 0; i < p->jobs; i++) {
		const struct sym_stats *w = sym_stats(p->workers[i].sym);

		st->unwound += w->unwound;
		st->unwind_stopped += w->unwind_stopped;
		st->unwind_truncated += w->unwind_truncated;
		st->unwind_failed += w->unwind_failed;
		st->leaf_callers += w->leaf_callers;
		st->unwind_released += w->unwind_released;
		st->unwind_fallbacks += w->unwind_fallbacks;
	}
}

void upool_free(struct upool *p)
{
	if (!p)
		return;
	if (p->threads) {
		pthread_mutex_lock(&p->lock);
		p->quit = true;
		pthread_cond_broadcast(&p->go);
		pthread_cond_signal(&p->dgo);
		pthread_mutex_unlock(&p->lock);
		for (unsigned i = 0; i < p->threads; i++)
			pthread_join(p->workers[i].thread, NULL);
		if (p->dthread)
			pthread_join(p->deliverer, NULL);
	}
	if (p->sync_ready) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->go);
		pthread_cond_destroy(&p->done);
		pthread_cond_destroy(&p->dgo);
		pthread_cond_destroy(&p->ddone);
	}
	for (unsigned i = 0; p->workers && i < p->jobs; i++) {
		sym_free(p->workers[i].sym);
		free(p->workers[i].scratch);
	}
	for (unsigned b = 0; b < NR_BATCHES; b++) {
		for (size_t i = 0; p->batch[b] && i < p->nr_slots; i++) {
			free(p->batch[b][i].rec);
			free(p->batch[b][i].reads);
			free(p->batch[b][i].pcs);
		}
		free(p->batch[b]);
	}
	free(p->workers);
	free(p);
}
