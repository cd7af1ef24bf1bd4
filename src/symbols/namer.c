/* SPDX-License-Identifier: MIT */
/*
 * namer.c - naming raw frames on threads of their own (see namer.h).
 *
 * Requests live in chunks that never move: the caller writes request t and
 * then publishes it by raising `submitted`. Each request goes to one lane
 * (a thread with a symbolizer of its own); every lane reads the requests in
 * order, names its own, writes the result into the request and publishes
 * that by its `done` flag, and raises its `scanned` count past each request
 * it is through with (named, or another lane's). Each side reads the
 * other's part only after the acquire of what published it, so the
 * requests themselves need no lock. The lock and the conditions are
 * only for sleeping: each side spins a little first, since waking a thread
 * costs tens of microseconds on a virtual machine and new frames come in
 * bursts; and a sleeping lane is woken for a batch of its own requests, or
 * when the caller waits for one of them (bench file: ~500 wake-ups, 11 ms
 * of the caller's time, down to ~50), or for all. Waking every lane for
 * every batch cost the C++ bench file as much CPU in lanes spinning idle
 * as their naming.
 *
 * Lanes: each lane's symbolizer opens the files it names in, so a file's
 * first frames all go to one lane (most files of a system-wide recording
 * are opened once), and only a file with more than SPREAD_AFTER frames
 * goes to every lane, by the 4 KiB page of it a frame is in (a function's
 * frames to few lanes, named from their caches). A unit's index of inlined
 * calls - most of what naming a new unit costs - is built once for all
 * lanes (sym_new_sibling()), a big one by all of them together. The
 * kernel's frames all go to lane 0 and a process's JIT frames to one lane,
 * so that kallsyms and a JIT map are read once. A name does not depend on
 * the lane that made it: the output is the same at every -j.
 *
 * The machine must not change under a frame being named (namer.h), but
 * waiting for the namer at every record that changes it would wait most at
 * the start, where files are opened (the first libc frame waits tens of
 * milliseconds for its debug file) and where processes start. So a request
 * takes with it a copy of what its naming reads of the machine: the first
 * frame of a file in its lane (which opens it there: its path, build id and
 * the process that mapped it) and frames named per process (JIT code: the
 * process, its jitdump). Frames in a file already opened read only what
 * never changes (the dso's id, kind and path). Only a copy that still
 * points into the machine - a process in a recorded mount namespace, whose
 * member list grows - makes namer_drain() wait, for that request and those
 * before it. Without a thread, a request that reads the machine is named
 * when given (with those before it), the others when their names are asked
 * for.
 */
#include "namer.h"
#include "../util/hash.h"
#include "../util/mem.h"
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
#define SPIN_AHEAD 4u          /* the caller spins only this near what it waits for */
#define WAIT_SLACK 64u         /* asleep, it waits for this many requests more */
#define WAKE_BATCH 64u         /* wake a sleeping lane for this many of its requests */
#define PIECE_SHIFT 12         /* a busy file's frames go to lanes by 4 KiB pages */
#define SPREAD_AFTER 256u      /* frames of a file given to one lane before they spread */

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
	const struct sym_frame *frames; /* written by its lane */
	uint32_t n;                     /* 0: out of memory */
	uint8_t lane;
	atomic_bool done;               /* frames and n are written */
};

struct frame_chunk {
	struct frame_chunk *next;
	size_t used;
	struct sym_frame f[FRAME_CHUNK];
};

struct namer;

/* What was given of one file (by its dso id). */
struct ndso {
	uint32_t frames;                /* frames given */
	uint8_t lanes;                  /* the lanes given one (bits) */
};

struct lane {
	struct namer *n;
	uint8_t id;
	struct symbolizer *sym;         /* lane 0: the caller's; else a sibling (ours) */
	pthread_t thread;
	pthread_cond_t work;            /* wakes it (with the namer's lock) */
	struct frame_chunk *frames;     /* the lane's results: newest first */
	uint32_t unsignaled;            /* the caller's: its requests since it was woken */
	_Atomic uint32_t scanned;       /* every request below is named or another's */
	atomic_bool sleeping;
};

struct namer {
	struct lane lanes[NAMER_MAX_LANES];
	unsigned nr_lanes;
	struct nreq **chunks;           /* grown only while every lane is idle */
	size_t nr_chunks, cap_chunks;
	uint32_t nr;                    /* submitted, the caller's own count */
	uint32_t live;                  /* 1 + the last request reading the live machine */
	struct ndso *dsos;              /* by dso id */
	size_t nr_dsos;

	bool threaded;                  /* naming on the lanes' threads (started at the first) */
	bool sync_made;                 /* lock and conditions initialised */
	bool started;
	uint32_t next;                  /* without a thread: the next to name */
	pthread_mutex_t lock;
	pthread_cond_t ready;
	_Atomic uint32_t submitted;
	_Atomic uint32_t wait_past;     /* the sleeping caller wakes when a lane scans past it */
	atomic_bool waiting, quit;
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

/* Name request @q in lane @l, into the lane's frame chunks. */
static void name_one(struct lane *l, struct nreq *q)
{
	struct sym_frame out[MAX_OUT];
	struct frame_chunk *c = l->frames;
	size_t k = sym_resolve(l->sym, q->ctx ? &q->ctx->rf : &q->rf, q->ktext, out, MAX_OUT);

	free(q->ctx);
	q->ctx = NULL;
	if (!c || c->used + k > FRAME_CHUNK) {
		c = malloc(sizeof(*c));
		if (!c) {
			q->n = 0;
			return;
		}
		c->used = 0;
		c->next = l->frames;
		l->frames = c;
	}
	memcpy(c->f + c->used, out, k * sizeof(*out));
	q->frames = c->f + c->used;
	q->n = (uint32_t)k;
	c->used += k;
}

/*
 * Tell the caller, if it sleeps waiting, that a lane has scanned up to
 * @scanned: only when that passes the request it waits for (one wake-up a
 * wait, not one a result).
 */
static void notify(struct namer *n, uint32_t scanned)
{
	if (atomic_load(&n->waiting) && scanned > atomic_load(&n->wait_past)) {
		pthread_mutex_lock(&n->lock);
		pthread_cond_broadcast(&n->ready);
		pthread_mutex_unlock(&n->lock);
	}
}

static void *lane_main(void *arg)
{
	struct lane *l = arg;
	struct namer *n = l->n;
	uint32_t i = 0;
	uint64_t idle_since = 0;
	unsigned polls = 0;

	thread_role("namer");
	mem_thread_hugepages();

	for (;;) {
		uint32_t sub = atomic_load_explicit(&n->submitted, memory_order_acquire);

		if (i < sub) {
			struct nreq *q = req_at(n, i);
			bool mine = q->lane == l->id;

			if (mine) {
				name_one(l, q);
				atomic_store(&q->done, true);
			}
			atomic_store(&l->scanned, ++i);
			/* what the caller waits for: a result, or every lane
			 * through it */
			notify(n, i);
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
			atomic_store(&l->sleeping, true);
			while (atomic_load(&n->submitted) == i && !atomic_load(&n->quit))
				pthread_cond_wait(&l->work, &n->lock);
			atomic_store(&l->sleeping, false);
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
	while (n->next <= t && n->next < n->nr) {
		struct nreq *q = req_at(n, n->next++);

		name_one(&n->lanes[0], q);
		atomic_store_explicit(&q->done, true, memory_order_relaxed);
	}
}

/* Wake lane @l if it sleeps: what is submitted is then seen. */
static void wake(struct namer *n, struct lane *l)
{
	l->unsignaled = 0;
	if (atomic_load(&l->sleeping)) {
		pthread_mutex_lock(&n->lock);
		pthread_cond_signal(&l->work);
		pthread_mutex_unlock(&n->lock);
	}
}

/* Is request @t named? */
static bool is_done(struct namer *n, uint32_t t)
{
	return atomic_load(&req_at(n, t)->done);
}

/* Is every request up to @t named (every lane through it)? */
static bool all_done(struct namer *n, uint32_t t)
{
	for (unsigned i = 0; i < n->nr_lanes; i++)
		if (atomic_load(&n->lanes[i].scanned) <= t)
			return false;
	return true;
}

/* The fewest requests any lane has scanned. */
static uint32_t scanned_min(struct namer *n)
{
	uint32_t m = UINT32_MAX;

	for (unsigned i = 0; i < n->nr_lanes; i++) {
		uint32_t s = atomic_load(&n->lanes[i].scanned);

		if (s < m)
			m = s;
	}
	return m;
}

/*
 * With threads: wait until @ready(@n, @t), having woken the lanes it waits
 * for: request @t's (is_done()), or all (all_done()). The caller spins
 * first only when the lanes it waits for are within SPIN_AHEAD requests
 * of @t. Otherwise, and once the spin is over, it sleeps until a lane has
 * scanned past @t and WAIT_SLACK requests more (those submitted): a caller
 * that waits for names waits for the lane that is behind, and its next
 * requests come from that lane's backlog too; woken for each, it spent
 * ~6 % of the -j 2 export of a C++ DWARF recording spinning here.
 */
static void wait_until(struct namer *n, bool (*ready)(struct namer *, uint32_t), uint32_t t)
{
	struct lane *l = NULL;
	uint32_t scanned, past;

	if (ready(n, t))
		return;
	if (ready == is_done) {
		l = &n->lanes[req_at(n, t)->lane];
		wake(n, l);
		scanned = atomic_load(&l->scanned);
	} else {
		for (unsigned i = 0; i < n->nr_lanes; i++)
			wake(n, &n->lanes[i]);
		scanned = scanned_min(n);
	}
	if (scanned + SPIN_AHEAD > t) {
		uint64_t start = now_ns();
		unsigned polls = 0;

		while (!ready(n, t)) {
			cpu_relax();
			if (++polls % 64 == 0 && now_ns() - start >= SPIN_NS)
				break;
		}
		if (ready(n, t))
			return;
	}
	past = l && n->nr - 1 - t > WAIT_SLACK ? t + WAIT_SLACK : l ? n->nr - 1 : t;
	pthread_mutex_lock(&n->lock);
	atomic_store(&n->wait_past, past);
	atomic_store(&n->waiting, true);
	while (!ready(n, t) || (l && atomic_load(&l->scanned) <= past))
		pthread_cond_wait(&n->ready, &n->lock);
	atomic_store(&n->waiting, false);
	pthread_mutex_unlock(&n->lock);
}

struct namer *namer_new(struct symbolizer *s, unsigned threads)
{
	struct namer *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->lanes[0].sym = s;
	n->nr_lanes = 1;
	atomic_init(&n->submitted, 0);
	atomic_init(&n->waiting, false);
	atomic_init(&n->wait_past, 0);
	atomic_init(&n->quit, false);
	if (!threads)
		return n;
	if (pthread_mutex_init(&n->lock, NULL))
		goto fail;
	if (pthread_cond_init(&n->ready, NULL))
		goto fail_lock;
	/* more lanes, as many as there are siblings (and conditions) to be had */
	for (;;) {
		struct lane *l = &n->lanes[n->nr_lanes - 1];

		if (pthread_cond_init(&l->work, NULL)) {
			if (n->nr_lanes == 1)
				goto fail_ready;
			sym_free(l->sym);
			n->nr_lanes--;
			break;
		}
		l->n = n;
		l->id = (uint8_t)(n->nr_lanes - 1);
		atomic_init(&l->scanned, 0);
		atomic_init(&l->sleeping, false);
		if (n->nr_lanes == threads || n->nr_lanes == NAMER_MAX_LANES ||
		    !(n->lanes[n->nr_lanes].sym = sym_new_sibling(s)))
			break;
		n->nr_lanes++;
	}
	/* the threads start at the first frame: a recording without
	 * stacks to name never pays for them */
	n->threaded = true;
	n->sync_made = true;
	return n;
fail_ready:
	pthread_cond_destroy(&n->ready);
fail_lock:
	pthread_mutex_destroy(&n->lock);
fail:
	free(n);
	return NULL;
}

unsigned namer_lanes(const struct namer *n)
{
	return n->threaded ? n->nr_lanes : 0;
}

/* Room for request @t: a new chunk, the directory grown while idle. */
static int chunk_for(struct namer *n, uint32_t t)
{
	if (t / REQ_CHUNK < n->nr_chunks)
		return 0;
	if (n->nr_chunks == n->cap_chunks) {
		size_t cap = n->cap_chunks ? n->cap_chunks * 2 : 16;
		struct nreq **d;

		if (n->started && n->nr)
			wait_until(n, all_done, n->nr - 1); /* the lanes read the directory */
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

/* Code named per process (outside files, or in a process with a jitdump):
 * its naming reads the process, its map or jitdump. */
static bool per_process(const struct raw_frame *f)
{
	return f->kind == FRAME_USER && (!f->dso || f->jitdump || f->dso->kind == DSO_ANON);
}

/* A file's frame (user code in a file, not a special map): named from the file. */
static bool in_file(const struct raw_frame *f)
{
	return f->kind == FRAME_USER && !per_process(f) && f->dso->kind != DSO_SPECIAL;
}

/* The record of @f's dso (in_file() frames), grown to it; NULL out of memory. */
static struct ndso *ndso_of(struct namer *n, const struct raw_frame *f)
{
	unsigned id = f->dso->id;

	if (id >= n->nr_dsos) {
		size_t cap = n->nr_dsos ? n->nr_dsos : 64;
		struct ndso *d;

		while (cap <= id)
			cap *= 2;
		d = realloc(n->dsos, cap * sizeof(*d));
		if (!d)
			return NULL;
		memset(d + n->nr_dsos, 0, (cap - n->nr_dsos) * sizeof(*d));
		n->dsos = d;
		n->nr_dsos = cap;
	}
	return &n->dsos[id];
}

/*
 * The lane that names @f (@d: its file's record, for in_file() frames). A
 * file's first SPREAD_AFTER frames go to one lane, so a file little is
 * named in is opened once; after that, by the 4 KiB page of the file they
 * are in (a function's frames to few lanes): a file most frames are in is
 * named on every lane, each opening it. The kernel's, and special maps'
 * (there is nothing to read for [vsyscall] and the like), go to lane 0;
 * code outside files (JIT) by its process, whose map each lane would read
 * again. Only the frames given before decide: the same at every run.
 */
static uint8_t lane_for(const struct namer *n, const struct raw_frame *f, const struct ndso *d)
{
	uint64_t h;

	if (n->nr_lanes == 1)
		return 0;
	if (d && d->frames < SPREAD_AFTER)
		h = mix64((uint64_t)f->dso->id + 1);
	else if (d)
		h = mix64(((uint64_t)f->dso->id << 40) ^ (f->offset >> PIECE_SHIFT));
	else if (per_process(f))
		h = mix64((uint64_t)f->pid + 1);
	else
		return 0;
	return (uint8_t)(h % n->nr_lanes);
}

/*
 * Does naming @f in @lane read what the machine may change? The first
 * frame of a file in a lane opens it there (path, build id, the mapping
 * process and its namespace: @d records the lanes given one); frames
 * outside files and in processes with a jitdump read the process. Kernel
 * frames read the dso's path and kind only.
 */
static bool reads_machine(const struct raw_frame *f, uint8_t lane, struct ndso *d)
{
	if (!d)
		return per_process(f);
	if (d->lanes & (1u << lane))
		return false;
	d->lanes |= (uint8_t)(1u << lane);
	return true;
}

/* Stop the threads of the first @nr lanes, once they have named what they were given. */
static void quit_lanes(struct namer *n, unsigned nr)
{
	pthread_mutex_lock(&n->lock);
	atomic_store(&n->quit, true);
	for (unsigned i = 0; i < nr; i++)
		pthread_cond_signal(&n->lanes[i].work);
	pthread_mutex_unlock(&n->lock);
	for (unsigned i = 0; i < nr; i++)
		pthread_join(n->lanes[i].thread, NULL);
	atomic_store(&n->quit, false);
}

/* Start the lanes' threads; false when none could be (then naming is the caller's). */
static bool threads_start(struct namer *n)
{
	unsigned i;

	for (i = 0; i < n->nr_lanes; i++)
		if (pthread_create(&n->lanes[i].thread, NULL, lane_main, &n->lanes[i]))
			break;
	if (i == n->nr_lanes)
		return true;
	/* not all: those started stop, as with no frame given yet */
	quit_lanes(n, i);
	atomic_store(&n->quit, false);
	return false;
}

uint32_t namer_submit(struct namer *n, const struct raw_frame *f, uint64_t kernel_text)
{
	uint32_t t = n->nr;
	struct ndso *d = NULL;
	struct nctx *c = NULL;
	struct nreq *q;
	bool live = false, rm;
	uint8_t lane;

	if (t == UINT32_MAX - 1 || chunk_for(n, t))
		return UINT32_MAX;
	if (in_file(f) && !(d = ndso_of(n, f)))
		return UINT32_MAX;
	lane = n->threaded ? lane_for(n, f, d) : 0;
	rm = reads_machine(f, lane, d);
	if (rm && n->threaded && !(c = malloc(sizeof(*c))))
		return UINT32_MAX;
	if (d)
		d->frames++;
	q = req_at(n, t);
	q->rf = *f;
	q->ktext = kernel_text;
	q->ctx = c;
	q->frames = NULL;
	q->n = 0;
	q->lane = lane;
	atomic_init(&q->done, false);
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
		if (!threads_start(n)) {
			/* no thread to be had: name here, on lane 0, from now on
			 * (what the other lanes' symbolizers would have made is
			 * made by lane 0's: a frame's lane does not change its names) */
			n->threaded = false;
			for (uint32_t i = 0; i <= t; i++)
				req_at(n, i)->lane = 0;
			name_upto(n, t);
			return t;
		}
		n->started = true;
	}
	atomic_store(&n->submitted, t + 1);
	/* a lane awake finds it; a sleeping one is woken for a batch of its
	 * own, or when one of its results is waited for */
	if (++n->lanes[lane].unsignaled >= WAKE_BATCH)
		wake(n, &n->lanes[lane]);
	return t;
}

size_t namer_result(struct namer *n, uint32_t t, const struct sym_frame **frames,
		    const struct raw_frame **raw)
{
	struct nreq *q;

	if (t >= n->nr)
		return 0;
	if (n->threaded)
		wait_until(n, is_done, t);
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
		wait_until(n, all_done, n->live - 1);
	n->live = 0;
}

void namer_finish(struct namer *n)
{
	if (!n || !n->nr)
		return;
	if (n->threaded)
		wait_until(n, all_done, n->nr - 1);
	else
		name_upto(n, n->nr - 1);
	n->live = 0;
}

void namer_add_stats(const struct namer *n, struct sym_stats *st)
{
	for (unsigned i = 1; i < n->nr_lanes; i++) {
		const struct sym_stats *l = sym_stats(n->lanes[i].sym);

		st->frames += l->frames;
		for (unsigned k = 0; k < SYM_CAUSE_COUNT; k++)
			st->by_cause[k] += l->by_cause[k];
	}
}

/* Stop the threads once they have named what they were given; the next submit starts them. */
static void thread_stop(struct namer *n)
{
	if (!n->started)
		return;
	quit_lanes(n, n->nr_lanes);
	n->started = false;
}

/* Free the requests from chunk @keep on (their copies too) and every result. */
static void requests_free(struct namer *n, size_t keep)
{
	for (uint32_t t = 0; t < n->nr; t++)
		free(req_at(n, t)->ctx);
	for (size_t i = keep; i < n->nr_chunks; i++)
		free(n->chunks[i]);
	if (n->nr_chunks > keep)
		n->nr_chunks = keep;
	for (unsigned i = 0; i < n->nr_lanes; i++) {
		struct frame_chunk *c, *next;

		for (c = n->lanes[i].frames; c; c = next) {
			next = c->next;
			free(c);
		}
		n->lanes[i].frames = NULL;
	}
}

void namer_reset(struct namer *n)
{
	if (!n)
		return;
	namer_finish(n);
	thread_stop(n);
	requests_free(n, 1); /* the first chunk is kept for the next window */
	n->nr = n->next = n->live = 0;
	atomic_store(&n->submitted, 0);
	for (unsigned i = 0; i < n->nr_lanes; i++) {
		n->lanes[i].unsignaled = 0;
		atomic_store(&n->lanes[i].scanned, 0);
	}
}

void namer_free(struct namer *n)
{
	if (!n)
		return;
	thread_stop(n);
	if (n->sync_made) {
		for (unsigned i = 0; i < n->nr_lanes; i++)
			pthread_cond_destroy(&n->lanes[i].work);
		pthread_cond_destroy(&n->ready);
		pthread_mutex_destroy(&n->lock);
	}
	requests_free(n, 0);
	for (unsigned i = 1; i < n->nr_lanes; i++)
		sym_free(n->lanes[i].sym);
	free(n->dsos);
	free(n->chunks);
	free(n);
}
