/* SPDX-License-Identifier: MIT */
/*
 * source.c - where the reader's bytes come from: the window (struct
 * rstream) refilled by read() from a pipe or a file, by a thread reading a
 * file ahead, or as views of a mapping of the file (PERFPORT_MMAP=1); a
 * record that straddles the window's end is moved to the front, or comes
 * whole in the next buffer. The record loop (reader-loop.c) cuts from it.
 */
#include "priv.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../util/bus.h"
#include "../util/log.h"
#include "../util/mem.h"
#include "../util/threadtime.h"

#define PROGRESS_STEP (16u << 20)
#define GATHER_BYTES (64u << 10) /* a read of a pipe below this: let more gather */
#define RA_DEPTH 3             /* buffers read ahead */
#define RA_HEAD MAX_RECORD     /* room before a buffer's bytes for the record cut by its start */
#define RA_BUF (WINDOW + RA_HEAD)
#define MAP_VIEW (4u << 20)    /* a mapped file's bytes cut from at a time */

/* --- sources --- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Read up to @len bytes of the current source; 0 at its end. A live pipe
 * (opts.gather_ms) found drained is let fill before the next read, for
 * as long as half its capacity takes at the rate of the bytes that came
 * since the read before (perf_gather_next()): a slow stream is read in a
 * few large pieces, a fast one as it comes, and its writer never waits on
 * a full pipe for us.
 */
static ssize_t src_read(struct perf_reader *r, void *buf, size_t len)
{
	bool drained = r->gather;  /* what this read gets came after the last */
	ssize_t n;

	if (r->src_end != UINT64_MAX) {
		if (r->src_pos >= r->src_end)
			return 0;
		if (len > r->src_end - r->src_pos)
			len = (size_t)(r->src_end - r->src_pos);
	}
	if (r->mem) {
		if (r->src_pos >= r->mem_len)
			return 0;
		if (len > r->mem_len - r->src_pos)
			len = (size_t)(r->mem_len - r->src_pos);
		memcpy(buf, r->mem + r->src_pos, len);
		r->src_pos += len;
		return (ssize_t)len;
	}
	if (r->gather && r->gather_ns) {
		struct timespec ts = {
			.tv_sec = (time_t)(r->gather_ns / 1000000000u),
			.tv_nsec = (long)(r->gather_ns % 1000000000u),
		};

		/* a signal cuts it short: the stop flag is seen below */
		nanosleep(&ts, NULL);
	}
	r->gather = false;
	for (;;) {
		if (r->opts.stop && *r->opts.stop) {
			r->st.stopped = true;
			return 0;
		}
		n = read(r->fd, buf, len);
		if (n >= 0 || errno != EINTR)
			break;
	}
	if (n > 0) {
		r->src_pos += (uint64_t)n;
		if (r->opts.gather_ms) {
			uint64_t now = mono_ns();

			if (drained)
				r->gather_ns = perf_gather_next(now - r->last_read_ns, (size_t)n,
								r->pipe_cap ? r->pipe_cap : GATHER_BYTES,
								(uint64_t)r->opts.gather_ms * 1000000u);
			r->last_read_ns = now;
		}
		r->gather = r->opts.gather_ms && (size_t)n < len && n < GATHER_BYTES;
	}
	return n;
}

uint64_t perf_gather_next(uint64_t slept_ns, size_t got, size_t cap, uint64_t max_ns)
{
	uint64_t next;

	if (got >= cap)
		next = slept_ns / 2;  /* full: the writer may have waited */
	else if (got == 0)
		next = max_ns;
	else if (slept_ns > UINT64_MAX / (cap / 2 + 1))
		next = max_ns;
	else
		next = slept_ns * (cap / 2) / got;
	if (next > max_ns)
		next = max_ns;
	/* under a tenth of a millisecond a wait saves no wake-up: read at once */
	return next < 100000u ? 0 : next;
}

void perf_src_progress(struct perf_reader *r, bool final)
{
	r->st.bytes_read = r->src_pos;
	if (!r->opts.progress)
		return;
	if (!final && r->src_pos < r->next_progress)
		return;
	r->next_progress = r->src_pos + PROGRESS_STEP;
	r->opts.progress(r->opts.progress_ctx, r->src_pos, r->progress_total);
}

/* --- reading a mapped file --- */

/*
 * A regular file's data is not copied: the file is mapped read-only and
 * records are cut where they lie, through views of MAP_VIEW bytes (queue
 * buffers over the mapping, oq_buf_view()): a record queued or held keeps
 * its view, and a view let go of hands its pages back (MADV_DONTNEED), so
 * that the resident set does not grow with the file. The kernel is asked
 * for the next view's pages while this one is cut (MADV_WILLNEED). A record
 * that straddles two views is in the second too: each view starts at the
 * first byte not yet cut. A file cut short under us reads as zeros past
 * its new end (util/bus.c), which the reader takes as damaged data.
 * Pipes, and files whose bytes must be rewritten to be read (another
 * byte order), are read() into the window as before; so is a
 * perf record --threads directory's per-thread data.
 *
 * Only when PERFPORT_MMAP=1 asks: measured on a 2-vCPU guest with the file
 * in the page cache (issue 57), mapping a page and handing it back cost
 * the kernel more than read()'s copy of it - the record walk of a 1.28 GB
 * DWARF recording 0.15 s of CPU mapped against 0.08 s read, with or
 * without MADV_POPULATE_READ, and with no MADV_DONTNEED at all; exports
 * the same within noise. make bench times both on each machine.
 */

/* PERFPORT_MMAP=1: regular files are mapped (read() by default). */
bool perf_map_asked(void)
{
	const char *v = getenv("PERFPORT_MMAP");

	return v && strcmp(v, "1") == 0;
}

/* Map the file for the data that follows; false: read() it instead. */
static bool map_start(struct perf_reader *r)
{
	void *p;

	r->map_wanted = false;
	if (r->hdr.file_size == UINT64_MAX || r->hdr.file_size > SIZE_MAX || !r->hdr.file_size)
		return false;
	p = mmap(NULL, (size_t)r->hdr.file_size, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (p == MAP_FAILED) {
		pp_debug("'%s': cannot be mapped (%s): read instead", r->path, strerror(errno));
		return false;
	}
	bus_guard();
	r->map = p;
	r->map_len = (size_t)r->hdr.file_size;
	r->map_watch = bus_watch(p, r->map_len);
	madvise(p, r->map_len, MADV_SEQUENTIAL);
	return true;
}

/* window_fill() for a mapped file: a new view from the first byte not cut. */
static ssize_t map_fill(struct perf_reader *r, struct rstream *s, size_t need)
{
	uint64_t at = s->base + s->pos, end = r->map_len, stop;
	struct oq_buf *b;

	if (r->src_end < end)
		end = r->src_end;
	/* the window holds all there is (or enough) */
	if (at >= end || s->len - s->pos >= need || (s->b->view && s->base + s->len >= end))
		return (ssize_t)(s->len - s->pos);
	if (r->opts.stop && *r->opts.stop) {
		r->st.stopped = true;
		return (ssize_t)(s->len - s->pos);
	}
	stop = at + (need > MAP_VIEW ? need : MAP_VIEW);
	if (stop > end)
		stop = end;
	b = oq_buf_view(&r->oq, r->map + at, (size_t)(stop - at));
	if (!b)
		return -1;
	oq_buf_retire(s->b);
	s->b = b;
	s->buf = b->data;
	s->base = at;
	s->pos = 0;
	s->len = s->cap = (size_t)(stop - at);
	r->src_pos = stop;
	/* its pages mapped in one call, not a fault each (a trap on a VM) */
	{
		uint64_t lo = at & ~(uint64_t)4095;

		madvise((void *)(r->map + lo), (size_t)(stop - lo), MADV_POPULATE_READ);
	}
	if (stop < end) {
		/* the next view's pages, asked for while this one is cut */
		uint64_t lo = stop & ~(uint64_t)4095, hi = stop + MAP_VIEW;

		madvise((void *)(r->map + lo), (size_t)((hi < end ? hi : end) - lo), MADV_WILLNEED);
	}
	perf_src_progress(r, false);
	return (ssize_t)s->len;
}

/* The rest of the input is read(), not mapped (perf record --threads's
 * other files): the window becomes a buffer of its own, empty. The
 * mapping stays while records in its views are queued or held. */
int perf_map_stop(struct perf_reader *r)
{
	struct oq_buf *b;

	r->map_wanted = false;
	if (!r->in.b || !r->in.b->view)
		return 0;
	b = oq_buf_get(&r->oq, WINDOW);
	if (!b)
		return -1;
	oq_buf_retire(r->in.b);
	r->in.b = b;
	r->in.buf = b->data;
	r->in.cap = b->cap;
	r->in.len = r->in.pos = 0;
	return 0;
}

/* --- reading ahead --- */

/*
 * A regular file's data is read by a thread of its own into the queue's
 * buffers (RA_HEAD bytes in), handed over in order through RA_DEPTH slots:
 * the caller takes a filled buffer, copies the record that straddles the
 * end of the one before into the room ahead of it, and gives the slot a
 * new buffer. Buffers are got and retired by the caller only.
 */
struct ra_slot {
	struct oq_buf *b;       /* given to the thread to fill, or filled */
	size_t len;             /* bytes read, from b->data + RA_HEAD */
	int err;                /* errno of a failed read */
	bool full;
};

struct read_ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled, given;
	int fd;
	uint64_t pos, end;      /* the thread's next byte, and where the data ends */
	struct ra_slot slot[RA_DEPTH];
	unsigned fill, take;    /* the thread's next slot, the caller's */
	bool quit;
	bool eof;               /* the caller took the end */
};

static void *ra_main(void *arg)
{
	struct read_ahead *ra = arg;

	thread_role("read");
	mem_thread_hugepages();

	pthread_mutex_lock(&ra->lock);
	for (;;) {
		struct ra_slot *sl = &ra->slot[ra->fill];
		uint64_t pos = ra->pos;
		size_t room, len = 0;
		int err = 0;

		while (!ra->quit && (sl->full || !sl->b))
			pthread_cond_wait(&ra->given, &ra->lock);
		if (ra->quit)
			break;
		room = sl->b->cap - RA_HEAD;
		pthread_mutex_unlock(&ra->lock);
		while (len < room && pos + len < ra->end) {
			size_t want = room - len;
			ssize_t n;

			if (want > ra->end - pos - len)
				want = (size_t)(ra->end - pos - len);
			n = pread(ra->fd, sl->b->data + RA_HEAD + len, want, (off_t)(pos + len));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				err = errno;
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		pthread_mutex_lock(&ra->lock);
		ra->pos = pos + len;
		sl->len = len;
		sl->err = err;
		sl->full = true;
		ra->fill = (ra->fill + 1) % RA_DEPTH;
		pthread_cond_signal(&ra->filled);
	}
	pthread_mutex_unlock(&ra->lock);
	thread_time_note("read");
	return NULL;
}

/* Give slot @sl a new buffer to fill; NULL out of memory. */
static int ra_give(struct perf_reader *r, struct ra_slot *sl)
{
	struct read_ahead *ra = r->ra;
	struct oq_buf *b = oq_buf_get(&r->oq, RA_BUF);

	if (!b)
		return -1;
	pthread_mutex_lock(&ra->lock);
	sl->b = b;
	sl->full = false;
	pthread_cond_signal(&ra->given);
	pthread_mutex_unlock(&ra->lock);
	return 0;
}

static void ra_free(struct read_ahead *ra)
{
	pthread_cond_destroy(&ra->given);
	pthread_cond_destroy(&ra->filled);
	pthread_mutex_destroy(&ra->lock);
	free(ra);
}

/* Start reading ahead from the current source position; false: read in place. */
static bool ra_start(struct perf_reader *r)
{
	struct read_ahead *ra = calloc(1, sizeof(*ra));

	r->ra_wanted = false;
	if (!ra)
		return false;
	ra->fd = r->fd;
	ra->pos = r->src_pos;
	ra->end = r->src_end;
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->filled, NULL);
	pthread_cond_init(&ra->given, NULL);
	r->ra = ra;
	for (unsigned i = 0; i < RA_DEPTH; i++)
		if (ra_give(r, &ra->slot[i]))
			goto fail;
	if (pthread_create(&ra->thread, NULL, ra_main, ra))
		goto fail;
	return true;
fail:
	/* the buffers given stay the queue's */
	ra_free(ra);
	r->ra = NULL;
	return false;
}

void perf_ra_stop(struct perf_reader *r)
{
	struct read_ahead *ra = r->ra;

	if (!ra)
		return;
	pthread_mutex_lock(&ra->lock);
	ra->quit = true;
	pthread_cond_signal(&ra->given);
	pthread_mutex_unlock(&ra->lock);
	pthread_join(ra->thread, NULL);
	ra_free(ra);
	r->ra = NULL;
}

/* window_fill() for the input read ahead. */
static ssize_t ra_fill(struct perf_reader *r, struct rstream *s, size_t need)
{
	struct read_ahead *ra = r->ra;

	while (s->len - s->pos < need && !ra->eof) {
		size_t rest = s->len - s->pos, len;
		struct ra_slot *sl = &ra->slot[ra->take];
		struct oq_buf *b;

		if (r->opts.stop && *r->opts.stop) {
			r->st.stopped = true;
			break;
		}
		pthread_mutex_lock(&ra->lock);
		while (!sl->full)
			pthread_cond_wait(&ra->filled, &ra->lock);
		pthread_mutex_unlock(&ra->lock);
		if (sl->err) {
			pp_error("read error at offset %" PRIu64 ": %s", r->src_pos, strerror(sl->err));
			return -1;
		}
		if (!sl->len) {
			ra->eof = true; /* the slot keeps its buffer: nothing more is read */
			break;
		}
		b = sl->b;
		len = rest + sl->len;
		if (rest <= RA_HEAD) {
			/* the record cut by the buffer's start goes just before it */
			memcpy(b->data + RA_HEAD - rest, s->buf + s->pos, rest);
			s->buf = b->data + RA_HEAD - rest;
		} else {
			/* more than a record asked for: joined in a buffer of its own */
			struct oq_buf *j = oq_buf_get(&r->oq, len);

			if (!j)
				return -1;
			memcpy(j->data, s->buf + s->pos, rest);
			memcpy(j->data + rest, b->data + RA_HEAD, sl->len);
			oq_buf_retire(b);
			b = j;
			s->buf = j->data;
		}
		oq_buf_retire(s->b);
		s->b = b;
		s->base += s->pos;
		s->pos = 0;
		s->len = s->cap = len; /* nothing is read into it any more */
		r->src_pos += sl->len;
		ra->take = (ra->take + 1) % RA_DEPTH;
		if (ra_give(r, sl))
			return -1;
	}
	perf_src_progress(r, false);
	return (ssize_t)(s->len - s->pos);
}

/*
 * Move the unread part of @s to the front of a buffer of at least @cap
 * bytes: the same one when no record in it is queued or held (they stay
 * where they were read), else a fresh one. Return: 0, or -1 out of memory.
 */
int perf_stream_move(struct perf_reader *r, struct rstream *s, size_t cap)
{
	size_t rest = s->len - s->pos;
	struct oq_buf *b = s->b;

	if (!b->refs) {
		if (s->buf + s->pos != b->data)
			memmove(b->data, s->buf + s->pos, rest);
		s->base += s->pos;
		s->len = rest;
		s->pos = 0;
		if (oq_buf_grow(b, cap, rest))
			return -1;
	} else {
		b = oq_buf_get(&r->oq, cap > b->cap ? cap : b->cap);
		if (!b)
			return -1;
		memcpy(b->data, s->buf + s->pos, rest);
		oq_buf_retire(s->b);
		s->b = b;
		s->base += s->pos;
		s->len = rest;
		s->pos = 0;
	}
	s->buf = b->data;
	s->cap = b->cap;
	return 0;
}

/*
 * Make at least @need bytes available from the window's position, reading
 * more if the source has them. Return: bytes available (may be < need at
 * the end of the source), or -1 on a read error.
 */
__attribute__((noinline)) ssize_t perf_window_refill(struct perf_reader *r, struct rstream *s,
							size_t need)
{
	bool full = s->len == s->cap; /* the source held at least a window more */
	size_t cap = s->cap;

	if (s == &r->in && (r->map ? r->in.b->view : r->map_wanted && map_start(r)))
		return map_fill(r, s, need);
	if (s == &r->in && (r->ra || (r->ra_wanted && !r->dl && ra_start(r))))
		return ra_fill(r, s, need);
	/* a stream that outgrew the first window: the full window from now on */
	if (need > cap || (full && cap < WINDOW))
		cap = full && need < WINDOW ? WINDOW : need;
	/* slide the rest to the front (this also realigns records) */
	if ((s->pos || cap > s->cap) && perf_stream_move(r, s, cap))
		return -1;
	while (s->len < need) {
		ssize_t n = src_read(r, s->buf + s->len, s->cap - s->len);

		if (n < 0) {
			pp_error("read error at offset %" PRIu64 ": %s", r->src_pos, strerror(errno));
			return -1;
		}
		if (n == 0)
			break;
		s->len += (size_t)n;
	}
	perf_src_progress(r, false);
	return (ssize_t)(s->len - s->pos);
}

/* Unmap the file (perf_reader_close(), the queue freed first). */
void perf_map_close(struct perf_reader *r)
{
	unsigned cut;

	if (!r->map)
		return;
	/* pages cut short under us: the reader saw zeros (damaged data) */
	cut = bus_watched_pages(r->map_watch);
	if (cut)
		pp_warn("'%s' was cut short while it was read (%u page%s past its new end "
			"read as zeros): its records from there on are missing",
			r->path, cut, cut == 1 ? "" : "s");
	bus_unwatch(r->map_watch);
	munmap((void *)r->map, r->map_len);
	r->map = NULL;
}
