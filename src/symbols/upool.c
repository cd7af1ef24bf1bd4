/* SPDX-License-Identifier: MIT */
#include "upool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"

#define BATCH 256
#define MAX_PCS 1024

struct slot {
	uint8_t *rec;          /* the copied record, 8-aligned */
	uint32_t cap;
	struct perf_event ev;  /* decoded again over the copy */
	uint64_t pcs[MAX_PCS];
	size_t n;
};

struct worker {
	struct upool *pool;
	unsigned id;
	pthread_t thread;
	struct symbolizer *sym;
};

struct upool {
	unsigned jobs;
	const struct machine *m;
	upool_fn fn;
	void *ctx;
	struct slot *slots;
	size_t nr;
	struct worker *workers;   /* jobs of them; worker 0 is the caller */
	unsigned threads;         /* started: workers 1..threads */

	pthread_mutex_t lock;
	pthread_cond_t go, done;
	bool sync_ready;          /* lock and conditions initialised */
	uint64_t round;           /* bumped for each batch */
	unsigned finished;        /* workers done with the current round */
	bool quit;
};

static void unwind_share(struct worker *w)
{
	struct upool *p = w->pool;

	for (size_t i = w->id; i < p->nr; i += p->jobs) {
		struct slot *s = &p->slots[i];

		s->n = sym_unwind(w->sym, p->m, &s->ev, s->pcs, MAX_PCS);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct upool *p = w->pool;
	uint64_t seen = 0;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->quit && p->round == seen)
			pthread_cond_wait(&p->go, &p->lock);
		if (p->quit)
			break;
		seen = p->round;
		pthread_mutex_unlock(&p->lock);
		unwind_share(w);
		pthread_mutex_lock(&p->lock);
		if (++p->finished == p->jobs - 1)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int upool_flush(struct upool *p)
{
	int ret = 0;

	if (!p->nr)
		return 0;
	if (p->jobs > 1) {
		pthread_mutex_lock(&p->lock);
		p->finished = 0;
		p->round++;
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->lock);
	}
	unwind_share(&p->workers[0]);
	if (p->jobs > 1) {
		pthread_mutex_lock(&p->lock);
		while (p->finished < p->jobs - 1)
			pthread_cond_wait(&p->done, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
	for (size_t i = 0; i < p->nr && !ret; i++)
		ret = p->fn(p->ctx, &p->slots[i].ev, p->slots[i].pcs, p->slots[i].n);
	p->nr = 0;
	return ret;
}

int upool_add(struct upool *p, const struct perf_event *ev)
{
	struct slot *s = &p->slots[p->nr];

	if (p->nr == 0 && (!(ev->evsel->attr.sample_type & PERF_SAMPLE_STACK_USER) ||
			   !ev->sample.user_stack))
		return p->fn(p->ctx, ev, NULL, 0); /* nothing to unwind, nothing before it */
	if (p->jobs == 1) {
		/* one thread: unwind in place, no batch and no copy */
		s->n = sym_unwind(p->workers[0].sym, p->m, ev, s->pcs, MAX_PCS);
		return p->fn(p->ctx, ev, s->pcs, s->n);
	}

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
	s->ev = *ev;
	s->ev.data = s->rec;
	/* the pointers of the decoded sample must point into the copy */
	if (perf_sample_parse(ev->evsel, s->rec + 8, ev->size - 8, false, &s->ev.sample))
		return PP_EFORMAT; /* cannot happen: the reader parsed it already */
	s->n = 0;
	if (++p->nr == BATCH)
		return upool_flush(p);
	return 0;
}

struct upool *upool_new(unsigned jobs, const struct sym_opts *opts,
			const struct perf_header_info *hdr, const struct machine *m,
			upool_fn fn, void *ctx)
{
	struct upool *p = calloc(1, sizeof(*p));
	unsigned started = 0;

	if (!p)
		return NULL;
	p->jobs = jobs ? jobs : 1;
	p->m = m;
	p->fn = fn;
	p->ctx = ctx;
	p->slots = calloc(BATCH, sizeof(*p->slots));
	p->workers = calloc(p->jobs, sizeof(*p->workers));
	if (!p->slots || !p->workers)
		goto fail;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	p->sync_ready = true;
	for (unsigned i = 0; i < p->jobs; i++) {
		p->workers[i].pool = p;
		p->workers[i].id = i;
		p->workers[i].sym = sym_new(opts, hdr);
		if (!p->workers[i].sym)
			goto fail;
	}
	for (started = 1; started < p->jobs; started++)
		if (pthread_create(&p->workers[started].thread, NULL, worker_main, &p->workers[started]))
			break;
	p->threads = started - 1;
	for (unsigned i = started; i < p->jobs; i++)
		sym_free(p->workers[i].sym); /* run with the threads we got */
	p->jobs = started;
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
		st->unwind_failed += w->unwind_failed;
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
		pthread_mutex_unlock(&p->lock);
		for (unsigned i = 1; i <= p->threads; i++)
			pthread_join(p->workers[i].thread, NULL);
	}
	if (p->sync_ready) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->go);
		pthread_cond_destroy(&p->done);
	}
	for (unsigned i = 0; p->workers && i < p->jobs; i++)
		sym_free(p->workers[i].sym);
	for (size_t i = 0; p->slots && i < BATCH; i++)
		free(p->slots[i].rec);
	free(p->slots);
	free(p->workers);
	free(p);
}
