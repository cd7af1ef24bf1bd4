/* SPDX-License-Identifier: MIT */
/*
 * reader-loop.c - the record loop: records cut from the window (a record
 * cut short, text of perf record's own messages, a size that cannot be
 * right and the resync past it), PERF_RECORD_COMPRESSED(2) payloads
 * decompressed into a second window and cut the same way, each record
 * counted and handed on: kept in time order by the ordering queue until a
 * FINISHED_ROUND or its byte limit lets it go, then delivered (decoded,
 * its counters' reads found, the consumer called) or handed to the
 * cutter's batches (reader-cutter.c). The streams of a perf record
 * --threads directory are cut here too.
 */
#include "priv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/log.h"

/* --- delivery --- */

/*
 * The counters a sample read, as perf delivers them (its session's
 * deliver_sample_value()): each value's event is found by its id, and its
 * period is what it counted since the last sample that read that id - per
 * thread too when the sampling event was inherited (the kernel then reads
 * the thread's own count). A counter that did not move is left out. A read
 * without ids cannot be told apart: the sample stays a plain one.
 * Return: 0, or PP_ENOMEM.
 */
int perf_read_values(struct perf_reader *r, struct perf_event *ev)
{
	const struct perf_evsel *e = ev->evsel;
	const struct perf_sample *s = &ev->sample;
	bool group = e->attr.read_format & PERF_FORMAT_GROUP;
	bool per_thread = (e->attr.flags & PERF_ATTR_FLAG_INHERIT) &&
			  (e->attr.sample_type & PERF_SAMPLE_TID);
	size_t n = 0;

	if (!(e->attr.read_format & PERF_FORMAT_ID) || !s->read.values)
		return 0;
	if (s->read.nr > r->reads_cap) {
		size_t cap = r->reads_cap ? r->reads_cap : 8;
		struct perf_read_value *v;

		while (cap < s->read.nr)
			cap *= 2;
		v = realloc(r->reads, cap * sizeof(*v));
		if (!v)
			return PP_ENOMEM;
		r->reads = v;
		r->reads_cap = cap;
	}
	for (uint64_t i = 0; i < s->read.nr; i++) {
		const uint64_t *v = s->read.values + i * s->read.stride;
		uint64_t key[2] = { group ? v[1] : s->read.one_id, per_thread ? s->tid : 0 };
		struct perf_evsel *m = perf_id_find(r, key[0]);
		uint32_t slot;
		bool fresh = false;

		if (!m) {
			r->st.reads_unattributed++;
			continue;
		}
		slot = wordmap_get(&r->read_map, key, 2, &r->read_next, &fresh);
		if (!slot)
			return PP_ENOMEM;
		if (slot > r->read_last_cap) {
			size_t cap = r->read_last_cap ? r->read_last_cap * 2 : 64;
			uint64_t *l;

			while (cap < slot)
				cap *= 2;
			l = realloc(r->read_last, cap * sizeof(*l));
			if (!l)
				return PP_ENOMEM;
			r->read_last = l;
			r->read_last_cap = cap;
		}
		if (fresh)
			r->read_last[slot - 1] = 0;
		if (v[0] == r->read_last[slot - 1])
			continue;
		r->reads[n++] = (struct perf_read_value){ m, key[0], v[0] - r->read_last[slot - 1] };
		r->read_last[slot - 1] = v[0];
		if (m != e)
			perf_evsel_saw(m, s);
	}
	ev->has_reads = true;
	ev->reads = r->reads;
	ev->nr_reads = n;
	return 0;
}

/* The record at @rec to the consumer: now, or to the caller's thread when
 * the records are cut on a thread of their own. */
static void deliver(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset,
		    struct perf_evsel *evsel, struct oq_buf *buf)
{
	const char *why = NULL;
	int ret;

	if (r->dl) {
		perf_dl_add(r, rec, size, offset, evsel, buf);
		return;
	}
	ret = perf_deliver_one(r, rec, size, offset, evsel, buf, r->stop, &r->err, &why);
	if (ret > 0)
		perf_skip(r, offset, load_u32(rec, false), size, why);
	else if (ret < 0)
		r->stop = true;
}

void perf_flush_until(struct perf_reader *r, uint64_t limit)
{
	const struct oq_item *it;

	while (!r->stop && (it = oq_peek(&r->oq)) && it->time <= limit) {
		r->last_delivered = it->time;
		deliver(r, (uint8_t *)it->rec, it->size, it->offset, it->tag, it->buf);
		oq_pop(&r->oq);
	}
}

static void queue_record(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset,
			 uint64_t time, bool timed, struct perf_evsel *evsel, struct oq_buf *buf)
{
	size_t limit = r->opts.queue_limit ? r->opts.queue_limit : (256u << 20);

	if (!timed)
		time = r->max_time; /* keep its place among what was read */
	if (time < r->max_time)
		r->st.out_of_order++;
	else
		r->max_time = time;
	if (time < r->last_delivered)
		time = r->last_delivered; /* too late to reorder: deliver next */
	if (oq_push(&r->oq, time, offset, rec, size, evsel, buf)) {
		perf_flush_until(r, UINT64_MAX);
		deliver(r, rec, size, offset, evsel, buf);
		return;
	}
	if (r->oq.nr > r->st.queue_peak)
		r->st.queue_peak = r->oq.nr;
	if (r->oq.bytes > limit) {
		r->st.forced_flushes++;
		while (r->oq.bytes > limit / 2 && oq_peek(&r->oq)) {
			const struct oq_item *it = oq_peek(&r->oq);

			r->last_delivered = it->time;
			deliver(r, (uint8_t *)it->rec, it->size, it->offset, it->tag, it->buf);
			oq_pop(&r->oq);
		}
	}
}

/* --- the record loop --- */

static int process_stream(struct perf_reader *r, struct rstream *s, bool inner);

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static int decompress(struct perf_reader *r, uint8_t *payload, size_t len, uint64_t offset)
{
	ZSTD_inBuffer in = { payload, len, 0 };

	if (!r->zd) {
		r->zd = ZSTD_createDStream();
		if (!r->zd || ZSTD_isError(ZSTD_initDStream(r->zd)))
			return PP_ENOMEM;
	}
	if (!r->z.b) {
		r->z.b = oq_buf_get(&r->oq, WINDOW);
		if (!r->z.b)
			return PP_ENOMEM;
		r->z.buf = r->z.b->data;
		r->z.cap = r->z.b->cap;
	}
	r->st.compressed_in += len;
	for (;;) {
		size_t in_before = in.pos;
		ZSTD_outBuffer out;
		size_t zr;
		int ret;

		/*
		 * Keep room: once the buffer is nearly full, slide consumed
		 * bytes out (to a fresh buffer when records in it wait: a
		 * buffer is filled before the next is taken), grow if a
		 * record is huge.
		 */
		if (r->z.cap - r->z.len < MAX_RECORD && r->z.pos &&
		    perf_stream_move(r, &r->z, r->z.cap))
			return PP_ENOMEM;
		if (r->z.cap - r->z.len < MAX_RECORD) {
			if (r->z.cap >= MAX_TRACING_DATA + WINDOW) {
				perf_skip(r, offset, PERF_REC_COMPRESSED, len,
					  "decompressed data holds no complete record");
				r->z.pos = r->z.len;
				return PP_OK;
			}
			if (perf_stream_move(r, &r->z, r->z.cap * 2))
				return PP_ENOMEM;
		}
		out = (ZSTD_outBuffer){ r->z.buf + r->z.len, r->z.cap - r->z.len, 0 };
		zr = ZSTD_decompressStream(r->zd, &out, &in);
		if (ZSTD_isError(zr)) {
			perf_skip(r, offset, PERF_REC_COMPRESSED, len, "zstd data is corrupt");
			ZSTD_initDStream(r->zd);
			return PP_OK;
		}
		r->z.len += out.pos;
		r->st.compressed_out += out.pos;
		if (zr == 0 && in.pos < in.size && all_zero(payload + in.pos, in.size - in.pos))
			in.pos = in.size; /* padding after a complete frame */
		ret = process_stream(r, &r->z, true);
		if (ret)
			return ret;
		if (in.pos == in.size && out.pos < out.size)
			break; /* all input used and zstd had no more to give */
		if (out.pos == 0 && in.pos == in_before)
			break; /* no progress: a damaged frame */
	}
	return PP_OK;
}

/*
 * Handle one complete record at @rec (aligned, with any trailing payload
 * right after it), in the input buffer @buf (NULL: a copy of the reader's).
 * @offset is its position for messages.
 */
static int handle_record(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset,
			 bool inner, struct oq_buf *buf)
{
	uint32_t type = load_u32(rec, r->hdr.swapped);
	struct perf_evsel *e;
	uint64_t time;
	bool timed;
	int ret;

	if (type < PERF_REC_TYPE_MAX)
		r->st.records[type]++;
	else
		r->st.records_other++;
	/* LOST {header, id, lost}; LOST_SAMPLES {header, lost} */
	if (type == PERF_RECORD_LOST && size >= 24)
		r->st.lost += load_u64(rec + 16, r->hdr.swapped);
	else if (type == PERF_RECORD_LOST_SAMPLES && size >= 16)
		r->st.lost_samples += load_u64(rec + 8, r->hdr.swapped);

	if (type == PERF_REC_COMPRESSED || type == PERF_REC_COMPRESSED2) {
		size_t hdr = type == PERF_REC_COMPRESSED2 ? 16 : 8;
		size_t plen = size - hdr;

		if (inner || size < hdr) {
			perf_skip(r, offset, type, size, "nested or short compressed record");
			return PP_OK;
		}
		if (type == PERF_REC_COMPRESSED2) {
			uint64_t dsize = load_u64(rec + 8, r->hdr.swapped);

			if (dsize <= plen)
				plen = (size_t)dsize;
		}
		return decompress(r, rec + hdr, plen, offset);
	}
	if (type >= PERF_REC_KERNEL_MAX)
		return perf_user_record(r, rec, size, offset);
	if (type == 0 || (type > PERF_REC_CALLCHAIN_DEFERRED && type < PERF_REC_KERNEL_MAX)) {
		r->st.unknown_records++;
		return PP_OK;
	}

	ret = perf_record_native(r, rec, size, &e, &time, &timed);
	if (ret == -2) {
		r->st.samples_unattributed++;
		perf_skip(r, offset, type, size, "sample names no known event");
		return PP_OK;
	}
	if (ret) {
		perf_skip(r, offset, type, size, "sample does not fit its event's layout");
		return PP_OK;
	}
	if (r->opts.ordered)
		queue_record(r, rec, size, offset, time, timed, e, buf);
	else
		deliver(r, rec, size, offset, e, buf);
	return PP_OK;
}

/* Bytes that follow a record outside its header.size. */
static uint64_t trailing_payload(const struct perf_reader *r, const uint8_t *rec, uint32_t size)
{
	uint32_t type = load_u32(rec, r->hdr.swapped);

	if (type == PERF_REC_HEADER_TRACING_DATA && size >= 12)
		return ((uint64_t)load_u32(rec + 8, r->hdr.swapped) + 7) & ~7ULL;
	if (type == PERF_REC_AUXTRACE && size >= 16)
		return load_u64(rec + 8, r->hdr.swapped);
	return 0;
}

static bool plausible(const struct perf_reader *r, const uint8_t *p)
{
	uint32_t type = load_u32(p, r->hdr.swapped);
	uint16_t size = load_u16(p + 6, r->hdr.swapped);

	if (size < 8 || (size & 7))
		return false;
	return (type >= 1 && type <= PERF_REC_CALLCHAIN_DEFERRED) ||
	       (type >= PERF_REC_HEADER_ATTR && type <= PERF_REC_SCHEDSTAT_DOMAIN);
}

/*
 * After a record whose size cannot be right, find the next place where two
 * plausible records follow each other (or one ends exactly at the end of the
 * data), searching in 8-byte steps through at most RESYNC_MAX bytes.
 * Return: bytes to skip from s->pos, 0 if none was found, -1 on read error.
 */
#define RESYNC_MAX (16u << 20)
static int64_t resync(struct perf_reader *r, struct rstream *s, bool inner)
{
	uint64_t skipped = 8;

	while (skipped < RESYNC_MAX) {
		ssize_t have = inner ? (ssize_t)(s->len - s->pos)
				     : window_fill(r, s, (size_t)skipped + 2 * MAX_RECORD);
		const uint8_t *base = s->buf + s->pos;

		if (have < 0)
			return -1;
		for (; skipped + 8 <= (uint64_t)have; skipped += 8) {
			const uint8_t *p = base + skipped;
			uint16_t size;

			if (!plausible(r, p))
				continue;
			size = load_u16(p + 6, r->hdr.swapped);
			if (skipped + size == (uint64_t)have)
				return (int64_t)skipped;
			if (skipped + size + 8 <= (uint64_t)have && plausible(r, p + size))
				return (int64_t)skipped;
			if (skipped + size + 8 > (uint64_t)have && !inner &&
			    (uint64_t)have >= skipped + 2 * MAX_RECORD)
				break; /* cannot happen: the window holds two records */
		}
		if (inner || (uint64_t)have < skipped + 2 * MAX_RECORD)
			return 0; /* the data ends without a plausible record */
	}
	return 0;
}

/*
 * The length of one line of perf record's own messages ("[ perf record:
 * Woken up 1 times to write data ]\n") at @p, or 0. perf prints them on
 * stderr, so they land in the recording when both go to one file
 * (perf record -o - ... >out.data 2>&1); at a record's place they are text,
 * not a record. A line cut by the end of the data counts whole.
 */
#define MESSAGE_MAX 1024u
static size_t perf_message_len(const uint8_t *p, size_t have)
{
	static const char tag[] = "[ perf record: ";
	const uint8_t *nl;

	if (have < sizeof(tag) - 1 || memcmp(p, tag, sizeof(tag) - 1) != 0)
		return 0;
	nl = memchr(p, '\n', have < MESSAGE_MAX ? have : MESSAGE_MAX);
	if (nl)
		return (size_t)(nl - p) + 1;
	return have < MESSAGE_MAX ? have : 0;
}

/*
 * Cut and handle every complete record in @s. For the outer stream, refill
 * from the source as needed and return at its end; for the inner
 * (decompressed) stream, return when the rest is a partial record.
 */
static int process_stream(struct perf_reader *r, struct rstream *s, bool inner)
{
	bool swap = r->hdr.swapped;

	while (!r->stop) {
		uint64_t offset, payload;
		uint32_t size;
		uint8_t *rec;
		ssize_t have;
		int ret;

		if (s->discard) {
			size_t d;

			have = inner ? (ssize_t)(s->len - s->pos) : window_fill(r, s, 1);
			if (have <= 0)
				return have < 0 ? PP_EIO : PP_OK;
			d = s->discard < (uint64_t)have ? (size_t)s->discard : (size_t)have;
			s->pos += d;
			s->discard -= d;
			continue;
		}
		have = inner ? (ssize_t)(s->len - s->pos) : window_fill(r, s, 8);
		if (have < 0)
			return PP_EIO;
		if (have == 0)
			return PP_OK;
		offset = s->base + s->pos;
		if (have < 8) {
			if (inner)
				return PP_OK;
			if (r->st.stopped) {
				s->pos = s->len;
				return PP_OK;
			}
			r->st.truncated = true;
			perf_skip(r, offset, 0, (uint64_t)have, "data ends inside a record header");
			s->pos = s->len;
			return PP_OK;
		}
		rec = s->buf + s->pos;
		if (!inner && rec[0] == '[') {
			size_t text;

			have = window_fill(r, s, MESSAGE_MAX);
			if (have < 0)
				return PP_EIO;
			rec = s->buf + s->pos;
			text = perf_message_len(rec, (size_t)have);
			if (text) {
				if (!r->st.message_bytes)
					pp_warn("offset %" PRIu64 ": perf record's own messages, not "
						"records (its stderr went to the same file): ignored",
						offset);
				r->st.message_bytes += text;
				s->pos += text;
				continue;
			}
		}
		size = load_u16(rec + 6, swap);
		if (load_u32(rec, swap) == PERF_REC_COMPRESSED2 && have >= 16) {
			/* perf's u16 size can wrap for big chunks: trust data_size. */
			uint64_t dsize = load_u64(rec + 8, swap);

			if (dsize <= MAX_RECORD && ((16 + dsize + 7) & ~7ULL) != size &&
			    ((16 + dsize + 7) & 0xffff & ~7ULL) == size)
				size = (uint32_t)((16 + dsize + 7) & ~7ULL);
		}
		if (size < 8) {
			/* Nothing says where the next record starts: look for it. */
			int64_t skip = resync(r, s, inner);

			if (skip < 0)
				return PP_EIO;
			r->st.truncated = r->st.truncated || !skip;
			perf_skip(r, offset, load_u32(s->buf + s->pos, swap), (uint64_t)skip,
				  skip ? "record size below 8: skipped to the next plausible record"
				       : "record size below 8: no record follows");
			if (!skip) {
				s->pos = s->len;
				if (!inner)
					pp_warn("record at offset %" PRIu64 " has size %u and no valid "
						"record follows; the rest of the data is unread",
						offset, size);
				return PP_OK;
			}
			s->pos += (size_t)skip;
			continue;
		}
		if (!inner && (size_t)have < size) {
			have = window_fill(r, s, size);
			if (have < 0)
				return PP_EIO;
			rec = s->buf + s->pos;
		}
		if ((size_t)have < size) {
			if (inner)
				return PP_OK; /* the rest comes with the next chunk */
			if (r->st.stopped) {
				s->pos = s->len;
				return PP_OK;
			}
			r->st.truncated = true;
			perf_skip(r, offset, load_u32(rec, swap), (uint64_t)have,
				  "data ends inside a record");
			s->pos = s->len;
			return PP_OK;
		}
		payload = trailing_payload(r, rec, size);
		if (payload && load_u32(rec, swap) == PERF_REC_HEADER_TRACING_DATA &&
		    payload <= MAX_TRACING_DATA) {
			have = inner ? (ssize_t)(s->len - s->pos)
				     : window_fill(r, s, size + (size_t)payload);
			if (have < 0)
				return PP_EIO;
			rec = s->buf + s->pos;
			if ((uint64_t)have < size + payload) {
				if (inner)
					return PP_OK;
				r->st.truncated = true;
				perf_skip(r, offset, PERF_REC_HEADER_TRACING_DATA, (uint64_t)have,
					  "data ends inside the tracing data");
				s->pos = s->len;
				return PP_OK;
			}
			ret = handle_record(r, rec, size, offset, inner, s->b);
			s->pos += size + (size_t)payload;
		} else {
			struct oq_buf *buf = s->b;

			if ((uintptr_t)rec & 7) {
				/* made when first needed: most files keep records aligned */
				if (!r->scratch && !(r->scratch = aligned_alloc(8, MAX_RECORD)))
					return PP_ENOMEM;
				memcpy(r->scratch, rec, size);
				rec = r->scratch;
				buf = NULL;
			}
			ret = handle_record(r, rec, size, offset, inner, buf);
			s->pos += size;
			s->discard = payload;
		}
		if (ret)
			return ret;
	}
	return PP_OK;
}

/* perf record --threads: DIR/data.N hold per-thread record streams. */
static int run_directory_streams(struct perf_reader *r)
{
	for (unsigned i = 0; i < 4096 && !r->stop; i++) {
		char *p;
		int fd, ret;

		if (asprintf(&p, "%s/data.%u", r->path, i) < 0)
			return PP_ENOMEM;
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			free(p);
			if (errno == ENOENT)
				break;
			return PP_EIO;
		}
		free(p);
		perf_ra_stop(r); /* the data file's reading ended: the others are read in place */
		if (perf_map_stop(r))
			return PP_ENOMEM;
		if (r->own_fd)
			close(r->fd);
		r->fd = fd;
		r->own_fd = true;
		r->src_pos = 0;
		r->src_end = UINT64_MAX;
		/* what is left unread of the last stream goes (records still
		 * queued from its buffer stay) */
		r->in.pos = r->in.len;
		if (perf_stream_move(r, &r->in, r->in.cap))
			return PP_ENOMEM;
		r->in.base = 0;
		r->in.discard = 0;
		ret = process_stream(r, &r->in, false);
		if (ret)
			return ret;
	}
	return PP_OK;
}

/* Cut every record of the input and deliver it (perf_reader_run()). */
int perf_cut_all(struct perf_reader *r)
{
	int ret = process_stream(r, &r->in, false);

	if (ret == PP_OK && r->hdr.directory)
		ret = run_directory_streams(r);
	if (r->z.len > r->z.pos && !r->st.stopped) {
		r->st.truncated = true;
		perf_skip(r, r->z.base + r->z.pos, 0, r->z.len - r->z.pos,
			  "compressed data ends inside a record");
		r->z.pos = r->z.len;
	}
	if (r->opts.ordered)
		perf_flush_until(r, UINT64_MAX);
	perf_src_progress(r, true);
	return ret;
}
