/* SPDX-License-Identifier: MIT */
/*
 * namer.c - naming raw frames on a thread of its own (see namer.h).
 *
 * Requests live in chunks that never move: the caller writes request t and
 * then publishes it by raising `submitted`; the thread names it, writes the
 * result into the request and publishes that by raising `done`. Each side
 * reads the other's part only below the counter it loaded (acquire after a
 * release), so the requests themselves need no lock. The lock and the two
 * conditions are only for sleeping: each side spins a little first, since
 * waking a thread costs tens of microseconds on a virtual machine and new
 * frames come in bursts; and a sleeping namer is woken for a batch of
 * requests, or when the caller waits for one (bench file: ~500 wake-ups,
 * 11 ms of the caller's time, down to ~50).
 *
 * The machine must not change under a frame being named (namer.h), but
 * waiting for the namer at every record that changes it would wait most at
 * the start, where files are opened (the first libc frame waits tens of
 * milliseconds for its debug file) and where processes start. So a request
 * takes with it a copy of what its naming reads of the machine: the first
 * frame of a file (which opens it: its path, build id and the process that
 * mapped it) and frames named per process (JIT code: the process, its
 * jitdump). Frames in a file already opened read only what never changes
 * (the dso's id, kind and path). Only a copy that still points into the
 * machine - a process in a recorded mount namespace, whose member list
 * grows - makes namer_drain() wait, for that request and those before it.
 * Without a thread, a request that reads the machine is named when given
 * (with those before it), the others when their names are asked for.
 */
#include "namer.h"
#include "../util/threadtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REQ_CHUNK 1024u        /* requests per chunk */
#define FRAME_CHUNK 4096u      /* result frames per chunk */
#define MAX_OUT 32u            /* frames of one raw frame (inlined calls) */
#define SPIN_NS 50000          /* spin this long before sleeping */
#define WAKE_BATCH 64u         /* wake a sleeping namer for this many requests */

/* What naming one frame may read of the machine, copied when it was given. */
struct nctx {
	struct raw_frame rf;            /* the frame, its pointers into this copy */
	struct dso dso, jitdump;
	struct proc_info mapper, proc, jit_mapper;
};

struct nreq {
	struct raw_frame rf;            /* as given */
	uint64_t ktext;
	struct nctx *ctx;               /* named from this copy, freed once named;
					 * NULL: reads only what never changes */
	const struct sym_frame *frames; /* written by the namer */
	uint32_t n;                     /* 0: out of memory */
};

struct frame_chunk {
	struct frame_chunk *next;
	size_t used;
	struct sym_frame f[FRAME_CHUNK];
};

struct namer {
	struct symbolizer *sym;
	struct nreq **chunks;           /* grown only while the thread is idle */
	size_t nr_chunks, cap_chunks;
	uint32_t nr;                    /* submitted, the caller's own count */
	uint32_t live;                  /* 1 + the last request reading the live machine */
	uint32_t unsignaled;            /* submitted since the namer was last woken */
	uint8_t *dso_seen;              /* by dso id: a frame of it was given */
	size_t dso_seen_cap;
	struct frame_chunk *frames;     /* the namer's: newest first */

	bool threaded;                  /* naming on the thread (started at the first) */
	bool sync_made;                 /* lock and conditions initialised */
	bool started;
	uint32_t next;                  /* without a thread: the next to name */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, ready;
	_Atomic uint32_t submitted, done;
	_Atomic bool sleeping, waiting, quit;
};

static struct nreq *req_at(struct namer *n, uint32_t t)
{
	return &n->chunks[t / REQ_CHUNK][t % REQ_CHUNK];
}

/* Let a sibling hardware thread run while this one polls. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Name request @t into the namer's frame chunks. */
static void name_one(struct namer *n, uint32_t t)
{
	struct nreq *q = req_at(n, t);
	struct sym_frame out[MAX_OUT];
	struct frame_chunk *c = n->frames;
	size_t k = sym_resolve(n->sym, q->ctx ? &q->ctx->rf : &q->rf, q->ktext, out, MAX_OUT);

	free(q->ctx);
	q->ctx = NULL;
	if (!c || c->used + k > FRAME_CHUNK) {
		c = malloc(sizeof(*c));
		if (!c) {
			q->n = 0;
			return;
		}
		c->used = 0;
		c->next = n->frames;
		n->frames = c;
	}
	memcpy(c->f + c->used, out, k * sizeof(*out));
	q->frames = c->f + c->used;
	q->n = (uint32_t)k;
	c->used += k;
}

static void *namer_main(void *arg)
{
	struct namer *n = arg;
	uint32_t i = 0;
	uint64_t idle_since = 0;
	unsigned polls = 0;

	for (;;) {
		if (i < atomic_load_explicit(&n->submitted, memory_order_acquire)) {
			name_one(n, i);
			atomic_store(&n->done, ++i);
			if (atomic_load(&n->waiting)) {
				pthread_mutex_lock(&n->lock);
				pthread_cond_broadcast(&n->ready);
				pthread_mutex_unlock(&n->lock);
			}
			idle_since = 0;
			continue;
		}
		if (atomic_load(&n->quit))
			break;
		/* nothing queued: spin a while, then sleep */
		cpu_relax();
		if (!idle_since)
			idle_since = now_ns();
		else if (++polls % 64 == 0 && now_ns() - idle_since > SPIN_NS) {
			pthread_mutex_lock(&n->lock);
			atomic_store(&n->sleeping, true);
			while (atomic_load(&n->submitted) == i && !atomic_load(&n->quit))
				pthread_cond_wait(&n->work, &n->lock);
			atomic_store(&n->sleeping, false);
			pthread_mutex_unlock(&n->lock);
			idle_since = 0;
		}
	}
	thread_time_note("namer");
	return NULL;
}

/* Without a thread: name everything submitted up to @t (inclusive). */
static void name_upto(struct namer *n, uint32_t t)
{
	while (n->next <= t && n->next < n->nr)
		name_one(n, n->next++);
}

/* Wake the namer if it sleeps: what is submitted is then seen. */
static void wake(struct namer *n)
{
	n->unsignaled = 0;
	if (atomic_load(&n->sleeping)) {
		pthread_mutex_lock(&n->lock);
		pthread_cond_signal(&n->work);
		pthread_mutex_unlock(&n->lock);
	}
}

/* With a thread: wait until more than @t requests are done. */
static void wait_done(struct namer *n, uint32_t t)
{
	uint64_t start = 0;
	unsigned polls = 0;

	if (atomic_load_explicit(&n->done, memory_order_acquire) <= t)
		wake(n);

	while (atomic_load_explicit(&n->done, memory_order_acquire) <= t) {
		if (!start) {
			start = now_ns();
			continue;
		}
		cpu_relax();
		if (++polls % 64 || now_ns() - start < SPIN_NS)
			continue;
		pthread_mutex_lock(&n->lock);
		atomic_store(&n->waiting, true);
		while (atomic_load(&n->done) <= t)
			pthread_cond_wait(&n->ready, &n->lock);
		atomic_store(&n->waiting, false);
		pthread_mutex_unlock(&n->lock);
	}
}

struct namer *namer_new(struct symbolizer *s, bool threaded)
{
	struct namer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->sym = s;
	atomic_init(&n->submitted, 0);
	atomic_init(&n->done, 0);
	atomic_init(&n->sleeping, false);
	atomic_init(&n->waiting, false);
	atomic_init(&n->quit, false);
	if (!threaded)
		return n;
	if (pthread_mutex_init(&n->lock, NULL))
		goto fail;
	if (pthread_cond_init(&n->work, NULL))
		goto fail_lock;
	if (pthread_cond_init(&n->ready, NULL))
		goto fail_work;
	/* the thread starts at the first frame: a recording without
	 * stacks to name never pays for it */
	n->threaded = true;
	n->sync_made = true;
	return n;
fail_work:
	pthread_cond_destroy(&n->work);
fail_lock:
	pthread_mutex_destroy(&n->lock);
fail:
	free(n);
	return NULL;
}

/* Room for request @t: a new chunk, the directory grown while idle. */
static int chunk_for(struct namer *n, uint32_t t)
{
	if (t / REQ_CHUNK < n->nr_chunks)
		return 0;
	if (n->nr_chunks == n->cap_chunks) {
		size_t cap = n->cap_chunks ? n->cap_chunks * 2 : 16;
		struct nreq **d;

		if (n->threaded && n->nr)
			wait_done(n, n->nr - 1); /* the thread reads the directory */
		d = realloc(n->chunks, cap * sizeof(*d));
		if (!d)
			return -1;
		n->chunks = d;
		n->cap_chunks = cap;
	}
	n->chunks[n->nr_chunks] = malloc(REQ_CHUNK * sizeof(struct nreq));
	if (!n->chunks[n->nr_chunks])
		return -1;
	n->nr_chunks++;
	return 0;
}

/* Point *@src at a copy of itself in @dst; true when it still points into the machine. */
static bool copy_proc(struct proc_info *dst, const struct proc_info **src)
{
	if (!*src)
		return false;
	*dst = **src;
	*src = dst;
	return dst->mnt != NULL; /* mount namespaces: their member lists grow */
}

static bool copy_dso(struct dso *dst, const struct dso **src, struct proc_info *mapper)
{
	if (!*src)
		return false;
	*dst = **src;
	*src = dst;
	return copy_proc(mapper, &dst->mapper);
}

/*
 * Does naming @f read what the machine may change? The first frame of a
 * file opens it (path, build id, the mapping process and its namespace);
 * frames outside files and in processes with a jitdump read the process.
 * Kernel frames read the dso's path and kind only. Return: -1 out of
 * memory, else the answer.
 */
static int reads_machine(struct namer *n, const struct raw_frame *f)
{
	unsigned id;

	if (f->kind != FRAME_USER)
		return 0;
	if (f->jitdump || !f->dso || f->dso->kind == DSO_ANON)
		return 1;
	if (f->dso->kind == DSO_SPECIAL)
		return 0;
	id = f->dso->id;
	if (id >= n->dso_seen_cap) {
		size_t cap = n->dso_seen_cap ? n->dso_seen_cap : 64;
		uint8_t *d;

		while (cap <= id)
			cap *= 2;
		d = realloc(n->dso_seen, cap);
		if (!d)
			return -1;
		memset(d + n->dso_seen_cap, 0, cap - n->dso_seen_cap);
		n->dso_seen = d;
		n->dso_seen_cap = cap;
	}
	if (n->dso_seen[id])
		return 0;
	n->dso_seen[id] = 1;
	return 1;
}

uint32_t namer_submit(struct namer *n, const struct raw_frame *f, uint64_t kernel_text)
{
	uint32_t t = n->nr;
	struct nctx *c = NULL;
	struct nreq *q;
	bool live = false;
	int rm;

	if (t == UINT32_MAX - 1 || chunk_for(n, t))
		return UINT32_MAX;
	rm = reads_machine(n, f);
	if (rm < 0 || (rm && n->threaded && !(c = malloc(sizeof(*c)))))
		return UINT32_MAX;
	q = req_at(n, t);
	q->rf = *f;
	q->ktext = kernel_text;
	q->ctx = c;
	q->frames = NULL;
	q->n = 0;
	n->nr = t + 1;
	if (!n->threaded) {
		/* in the caller: what reads the machine is named now, in order */
		if (rm)
			name_upto(n, t);
		return t;
	}
	if (c) {
		c->rf = *f;
		live |= copy_dso(&c->dso, &c->rf.dso, &c->mapper);
		live |= copy_proc(&c->proc, &c->rf.proc);
		live |= copy_dso(&c->jitdump, &c->rf.jitdump, &c->jit_mapper);
		if (live)
			n->live = t + 1;
	}
	if (!n->started) {
		if (pthread_create(&n->thread, NULL, namer_main, n)) {
			/* no thread to be had: name here from now on */
			n->threaded = false;
			name_upto(n, t);
			return t;
		}
		n->started = true;
	}
	atomic_store(&n->submitted, t + 1);
	/* a namer awake finds it; a sleeping one is woken for a batch, or
	 * when its results are waited for */
	if (++n->unsignaled >= WAKE_BATCH)
		wake(n);
	return t;
}

size_t namer_result(struct namer *n, uint32_t t, const struct sym_frame **frames,
		    const struct raw_frame **raw)
{
	struct nreq *q;

	if (t >= n->nr)
		return 0;
	if (n->threaded)
		wait_done(n, t);
	else
		name_upto(n, t);
	q = req_at(n, t);
	*frames = q->frames;
	if (raw)
		*raw = &q->rf;
	return q->n;
}

void namer_drain(struct namer *n)
{
	if (!n || !n->live)
		return;
	if (n->threaded)
		wait_done(n, n->live - 1);
	n->live = 0;
}

void namer_finish(struct namer *n)
{
	if (!n || !n->nr)
		return;
	if (n->threaded)
		wait_done(n, n->nr - 1);
	else
		name_upto(n, n->nr - 1);
	n->live = 0;
}

/* Stop the thread once it has named what it was given; the next submit starts one. */
static void thread_stop(struct namer *n)
{
	if (!n->started)
		return;
	pthread_mutex_lock(&n->lock);
	atomic_store(&n->quit, true);
	pthread_cond_signal(&n->work);
	pthread_mutex_unlock(&n->lock);
	pthread_join(n->thread, NULL);
	n->started = false;
	atomic_store(&n->quit, false);
}

/* Free the requests from chunk @keep on (their copies too) and every result. */
static void requests_free(struct namer *n, size_t keep)
{
	struct frame_chunk *c, *next;

	for (uint32_t t = 0; t < n->nr; t++)
		free(req_at(n, t)->ctx);
	for (size_t i = keep; i < n->nr_chunks; i++)
		free(n->chunks[i]);
	if (n->nr_chunks > keep)
		n->nr_chunks = keep;
	for (c = n->frames; c; c = next) {
		next = c->next;
		free(c);
	}
	n->frames = NULL;
}

void namer_reset(struct namer *n)
{
	if (!n)
		return;
	namer_finish(n);
	thread_stop(n);
	requests_free(n, 1); /* the first chunk is kept for the next window */
	n->nr = n->next = n->live = n->unsignaled = 0;
	atomic_store(&n->submitted, 0);
	atomic_store(&n->done, 0);
}

void namer_free(struct namer *n)
{
	if (!n)
		return;
	thread_stop(n);
	if (n->sync_made) {
		pthread_cond_destroy(&n->ready);
		pthread_cond_destroy(&n->work);
		pthread_mutex_destroy(&n->lock);
	}
	requests_free(n, 0);
	free(n->dso_seen);
	free(n->chunks);
	free(n);
}
