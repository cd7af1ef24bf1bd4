/* SPDX-License-Identifier: MIT */
/*
 * reader.c - opening a recording and streaming its records.
 *
 * Input is read sequentially through a window (struct rstream), so memory
 * does not grow with the file and pipes work like files. Records are cut
 * from the window; a record that straddles the window's end is moved to the
 * front and the window refilled (source.c: read(), read ahead, or views of
 * a mapping). PERF_RECORD_COMPRESSED(2) payloads are
 * decompressed into a second window and cut the same way, carrying a partial
 * record over to the next compressed chunk.
 *
 * Kernel records are delivered in time order when asked: they wait in the
 * ordering queue until a FINISHED_ROUND says that nothing older can come
 * (flush up to the largest time seen at the previous round), or until the
 * queue exceeds its byte limit. Records of the perf tool (attrs, features,
 * tracing data, build ids...) take effect as soon as they are read.
 */
#include "priv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/mem.h"
#include "../util/threadtime.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif


static const char *const record_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PERF_REC_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PERF_REC_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
	[PERF_REC_HEADER_ATTR] = "HEADER_ATTR",
	[PERF_REC_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
	[PERF_REC_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
	[PERF_REC_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
	[PERF_REC_FINISHED_ROUND] = "FINISHED_ROUND",
	[PERF_REC_ID_INDEX] = "ID_INDEX",
	[PERF_REC_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[PERF_REC_AUXTRACE] = "AUXTRACE",
	[PERF_REC_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[PERF_REC_THREAD_MAP] = "THREAD_MAP",
	[PERF_REC_CPU_MAP] = "CPU_MAP",
	[PERF_REC_STAT_CONFIG] = "STAT_CONFIG",
	[PERF_REC_STAT] = "STAT",
	[PERF_REC_STAT_ROUND] = "STAT_ROUND",
	[PERF_REC_EVENT_UPDATE] = "EVENT_UPDATE",
	[PERF_REC_TIME_CONV] = "TIME_CONV",
	[PERF_REC_HEADER_FEATURE] = "HEADER_FEATURE",
	[PERF_REC_COMPRESSED] = "COMPRESSED",
	[PERF_REC_FINISHED_INIT] = "FINISHED_INIT",
	[PERF_REC_COMPRESSED2] = "COMPRESSED2",
	[PERF_REC_BPF_METADATA] = "BPF_METADATA",
	[PERF_REC_SCHEDSTAT_CPU] = "SCHEDSTAT_CPU",
	[PERF_REC_SCHEDSTAT_DOMAIN] = "SCHEDSTAT_DOMAIN",
};

const char *perf_record_type_name(uint32_t type)
{
	if (type >= sizeof(record_names) / sizeof(*record_names))
		return NULL;
	return record_names[type];
}

static const char *const feature_names[PERF_FEAT_NR_KNOWN] = {
	[PERF_FEAT_TRACING_DATA] = "TRACING_DATA", [PERF_FEAT_BUILD_ID] = "BUILD_ID",
	[PERF_FEAT_HOSTNAME] = "HOSTNAME", [PERF_FEAT_OSRELEASE] = "OSRELEASE",
	[PERF_FEAT_VERSION] = "VERSION", [PERF_FEAT_ARCH] = "ARCH",
	[PERF_FEAT_NRCPUS] = "NRCPUS", [PERF_FEAT_CPUDESC] = "CPUDESC",
	[PERF_FEAT_CPUID] = "CPUID", [PERF_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[PERF_FEAT_CMDLINE] = "CMDLINE", [PERF_FEAT_EVENT_DESC] = "EVENT_DESC",
	[PERF_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY", [PERF_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[PERF_FEAT_BRANCH_STACK] = "BRANCH_STACK", [PERF_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PERF_FEAT_GROUP_DESC] = "GROUP_DESC", [PERF_FEAT_AUXTRACE] = "AUXTRACE",
	[PERF_FEAT_STAT] = "STAT", [PERF_FEAT_CACHE] = "CACHE",
	[PERF_FEAT_SAMPLE_TIME] = "SAMPLE_TIME", [PERF_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
	[PERF_FEAT_CLOCKID] = "CLOCKID", [PERF_FEAT_DIR_FORMAT] = "DIR_FORMAT",
	[PERF_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO", [PERF_FEAT_BPF_BTF] = "BPF_BTF",
	[PERF_FEAT_COMPRESSED] = "COMPRESSED", [PERF_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
	[PERF_FEAT_CLOCK_DATA] = "CLOCK_DATA", [PERF_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
	[PERF_FEAT_PMU_CAPS] = "PMU_CAPS", [PERF_FEAT_CPU_DOMAIN_INFO] = "CPU_DOMAIN_INFO",
};

const char *perf_feature_name(unsigned feat)
{
	return feat < PERF_FEAT_NR_KNOWN ? feature_names[feat] : NULL;
}

/* --- delivery --- */

static void evsel_saw(struct perf_evsel *e, const struct perf_sample *s)
{
	e->nr_samples++;
	if (e->attr.sample_type & PERF_SAMPLE_TIME) {
		if (!e->first_time || s->time < e->first_time)
			e->first_time = s->time;
		if (s->time > e->last_time)
			e->last_time = s->time;
	}
}

/*
 * The counters a sample read, as perf delivers them (its session's
 * deliver_sample_value()): each value's event is found by its id, and its
 * period is what it counted since the last sample that read that id - per
 * thread too when the sampling event was inherited (the kernel then reads
 * the thread's own count). A counter that did not move is left out. A read
 * without ids cannot be told apart: the sample stays a plain one.
 * Return: 0, or PP_ENOMEM.
 */
static int read_values(struct perf_reader *r, struct perf_event *ev)
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
			evsel_saw(m, s);
	}
	ev->has_reads = true;
	ev->reads = r->reads;
	ev->nr_reads = n;
	return 0;
}

/*
 * Decode the record at @rec and call the consumer with it, unless
 * @stopped; @hold keeps the record (ev->hold). Return: 0; 1 when it does
 * not decode (not delivered: the caller says so, *@why); -1 when delivery
 * ends (the consumer asked, or *@err was set).
 */
static inline __attribute__((always_inline)) int
deliver_one(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset,
	    struct perf_evsel *evsel, void *hold, bool stopped, int *err, const char **why)
{
	struct perf_event ev;

	if (perf_record_decode(r, rec, size, evsel, &ev)) {
		*why = ev.type == PERF_RECORD_SAMPLE ? "sample does not fit its event's layout"
						     : "record body too short for its type";
		return 1;
	}
	ev.offset = offset;
	ev.hold = hold;
	if (ev.type == PERF_RECORD_SAMPLE) {
		r->st.samples++;
		evsel_saw((struct perf_evsel *)ev.evsel, &ev.sample);
		if ((ev.evsel->attr.sample_type & PERF_SAMPLE_READ) && read_values(r, &ev)) {
			*err = PP_ENOMEM;
			return -1;
		}
	}
	if (r->fn && !stopped && r->fn(r->ctx, &ev))
		return -1;
	return 0;
}

static __attribute__((noinline)) void dl_add(struct perf_reader *r, const uint8_t *rec,
					      uint32_t size, uint64_t offset,
					      struct perf_evsel *evsel, struct oq_buf *buf);

/* The record at @rec to the consumer: now, or to the caller's thread when
 * the records are cut on a thread of their own. */
static void deliver(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset,
		    struct perf_evsel *evsel, struct oq_buf *buf)
{
	const char *why = NULL;
	int ret;

	if (r->dl) {
		dl_add(r, rec, size, offset, evsel, buf);
		return;
	}
	ret = deliver_one(r, rec, size, offset, evsel, buf, r->stop, &r->err, &why);
	if (ret > 0)
		perf_skip(r, offset, load_u32(rec, false), size, why);
	else if (ret < 0)
		r->stop = true;
}

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
static void dl_barrier(struct perf_reader *r)
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
 * lines back from that core's cache (dl_add() was 30% of the cutter's
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
static __attribute__((noinline)) void dl_add(struct perf_reader *r, const uint8_t *rec,
					      uint32_t size, uint64_t offset,
					      struct perf_evsel *evsel, struct oq_buf *buf)
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
		ret = deliver_one(r, rec, it->size, it->offset, it->evsel, dl_hold_of(b), false,
				  err, &why);
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

static int cut_all(struct perf_reader *r);

static void *dl_main(void *arg)
{
	struct perf_reader *r = arg;
	struct dl_pipe *d = r->dl;
	int ret;

	thread_role("cut");
	mem_thread_hugepages();
	ret = cut_all(r);

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
static void dl_free(struct perf_reader *r)
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
static int dl_run(struct perf_reader *r)
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
		dl_free(r);
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


static void flush_until(struct perf_reader *r, uint64_t limit)
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
		flush_until(r, UINT64_MAX);
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

/* --- records of the perf tool --- */

static int user_record(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset)
{
	bool swap = r->hdr.swapped;
	uint32_t type = load_u32(rec, swap);
	uint8_t *body = rec + 8;
	size_t len = size - 8;
	int ret;

	/* cut on a thread of its own: what changes what delivery reads (the
	 * events, their tracepoints' formats and names, the header) waits
	 * until everything before it was delivered */
	if (r->dl && (type == PERF_REC_HEADER_ATTR || type == PERF_REC_HEADER_TRACING_DATA ||
		      type == PERF_REC_HEADER_BUILD_ID || type == PERF_REC_HEADER_FEATURE ||
		      type == PERF_REC_EVENT_UPDATE))
		dl_barrier(r);
	switch (type) {
	case PERF_REC_HEADER_ATTR: {
		uint32_t asz;

		if (len < 64)
			goto bad;
		asz = load_u32(body + 4, swap);
		if (asz == 0)
			asz = 64;
		if (asz < 64 || asz > len)
			goto bad;
		ret = perf_evsel_add(r, body, asz, body + asz, (len - asz) / 8, swap);
		if (ret == PP_ENOMEM)
			return ret;
		if (ret)
			goto bad;
		perf_tracing_bind(r);
		break;
	}
	case PERF_REC_HEADER_EVENT_TYPE:
		break; /* old pipe files: {u64 id; char name[64]}; names come from EVENT_DESC */
	case PERF_REC_HEADER_TRACING_DATA: {
		uint32_t tsize;

		if (len < 4)
			goto bad;
		tsize = load_u32(body, swap);
		/* The payload follows the record (read_record() kept it there). */
		ret = perf_tracing_parse(r, rec + size, tsize);
		if (ret == PP_ENOMEM)
			return ret;
		if (ret && ret != PP_ETRUNC)
			perf_skip(r, offset, type, tsize, "tracing data unreadable");
		perf_tracing_bind(r);
		break;
	}
	case PERF_REC_HEADER_BUILD_ID: {
		if (perf_feature_parse(r, PERF_FEAT_BUILD_ID, rec, size) == PP_ENOMEM)
			return PP_ENOMEM;
		break;
	}
	case PERF_REC_HEADER_FEATURE: {
		uint64_t feat;

		if (len < 8)
			goto bad;
		feat = load_u64(body, swap);
		if (feat >= PERF_FEAT_BITS || feat == PERF_FEAT_RESERVED)
			break; /* the end marker, whose id changed across versions */
		ret = perf_feature_parse(r, (unsigned)feat, body + 8, len - 8);
		if (ret == PP_ENOMEM)
			return ret;
		if (ret)
			perf_skip(r, offset, type, size, "malformed feature record");
		break;
	}
	case PERF_REC_EVENT_UPDATE: {
		/* u64 type, u64 id, data; type 2 (NAME) carries the event's name. */
		struct perf_evsel *e;

		if (len < 16 || load_u64(body, swap) != 2)
			break;
		e = perf_id_find(r, load_u64(body + 8, swap));
		if (e && len > 16) {
			char *name = strndup((const char *)body + 16, len - 16);

			if (name && name[0]) {
				free(e->name);
				e->name = name;
				e->name_made = false;
			} else {
				free(name);
			}
		}
		break;
	}
	case PERF_REC_FINISHED_ROUND:
		if (r->opts.ordered) {
			flush_until(r, r->round_prev);
			r->round_prev = r->max_time;
		}
		break;
	default:
		break; /* counted; nothing else to do */
	}
	return PP_OK;
bad:
	perf_skip(r, offset, type, size, "malformed perf tool record");
	return PP_OK;
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
		return user_record(r, rec, size, offset);
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

/* --- opening --- */

static int reader_alloc(const struct perf_reader_opts *opts, struct perf_reader **out)
{
	struct perf_reader *r = aligned_alloc(_Alignof(struct perf_reader), sizeof(*r));

	if (!r)
		return PP_ENOMEM;
	memset(r, 0, sizeof(*r));
	if (opts)
		r->opts = *opts;
	r->fd = -1;
	r->read_next = 1; /* read_map's ids start at 1 */
	r->src_end = UINT64_MAX;
	/* grows to WINDOW once the input needs more */
	r->in.b = oq_buf_get(&r->oq, WINDOW_START);
	if (r->in.b) {
		r->in.buf = r->in.b->data;
		r->in.cap = r->in.b->cap;
	} else {
		perf_reader_close(r);
		return PP_ENOMEM;
	}
	*out = r;
	return PP_OK;
}

/* Decide pipe or file mode from the first 16 bytes and read the header. */
/* Does @entry (@len bytes) name the event @name, whole or without modifiers? */
static bool event_named(const char *entry, size_t len, const char *name)
{
	const char *colon = strrchr(name, ':');
	size_t n = strlen(name), base = strcspn(name, "/");

	if (len == n && strncmp(entry, name, n) == 0)
		return true;
	/*
	 * "cpu-clock/freq=997/" and "cpu-clock:u" are cpu-clock; a tracepoint
	 * "system:event" is only itself (its event is no run of modifier letters)
	 */
	if (base == n && colon && colon[1] && strspn(colon + 1, "ukhGHpPISDWe") == strlen(colon + 1))
		base = (size_t)(colon - name);
	return base < n && len == base && strncmp(entry, name, base) == 0;
}

bool perf_event_listed(const char *list, const char *name)
{
	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (event_named(p, len, name))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

/*
 * Every entry of @list must name one of the events known so far (none yet,
 * from a pipe not read: nothing to check). Return: 0, or PP_EUSAGE (logged).
 */
static int check_events(const struct perf_reader *r, const char *list)
{
	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		int len = (int)(c ? (size_t)(c - p) : strlen(p));
		char one[256], names[512] = "";
		size_t used = 0;
		bool found = !r->nr_evsels;

		snprintf(one, sizeof(one), "%.*s", len, p);
		for (size_t i = 0; i < r->nr_evsels && !found; i++)
			found = perf_event_listed(one, r->evsels[i]->name ? r->evsels[i]->name : "");
		if (!found) {
			for (size_t i = 0; i < r->nr_evsels && used < sizeof(names); i++) {
				const char *name = r->evsels[i]->name ? r->evsels[i]->name : "?";
				int w = snprintf(names + used, sizeof(names) - used, "%s'%s'",
						 i ? ", " : "", name);

				used += w > 0 ? (size_t)w : 0;
			}
			pp_error("--event: '%s' is not an event of '%s' (its events: %s)", one,
				 r->path, names);
			return PP_EUSAGE;
		}
		p = c ? c + 1 : NULL;
	}
	return 0;
}

static int open_common(struct perf_reader *r)
{
	uint8_t head[PERF_PIPE_HEADER_SIZE];
	uint64_t magic, size;
	ssize_t have;

	have = window_fill(r, &r->in, sizeof(head));
	if (have < 0)
		return PP_EIO;
	if ((size_t)have < sizeof(head)) {
		pp_error("'%s' is too short to be a perf.data file (%zd bytes)", r->path, have);
		return PP_EMAGIC;
	}
	memcpy(head, r->in.buf, sizeof(head));
	magic = load_u64(head, false);
	if (magic != PERF_MAGIC2 && magic != PERF_MAGIC2_SWAPPED) {
		if (memcmp(head, "PERFFILE", 8) == 0)
			pp_error("'%s' is in perf's first file format (before 2010), which "
				 "perfport does not read", r->path);
		else
			pp_error("'%s' is not a perf.data file (no PERFILE2 magic)", r->path);
		return PP_EMAGIC;
	}
	r->hdr.swapped = magic == PERF_MAGIC2_SWAPPED;
	size = load_u64(head + 8, r->hdr.swapped);
	if (size == PERF_PIPE_HEADER_SIZE) {
		r->hdr.pipe = true;
		r->in.pos = PERF_PIPE_HEADER_SIZE;
		return PP_OK;
	}
	/* File mode: random access to the header, then stream the data. */
	r->in.len = r->in.pos = 0;
	r->in.base = 0;
	{
		int ret = perf_header_read_file(r);

		if (ret)
			return ret;
	}
	if (r->mem) {
		r->src_pos = r->hdr.data_offset;
	} else if (lseek(r->fd, (off_t)r->hdr.data_offset, SEEK_SET) < 0) {
		return errno == ESPIPE ? PP_ENOSEEK : PP_EIO;
	} else {
		r->src_pos = r->hdr.data_offset;
	}
	r->in.base = r->hdr.data_offset;
	r->src_end = r->hdr.data_offset + r->hdr.data_size;
	r->progress_total = r->hdr.data_size;
	return PP_OK;
}

static int open_fd(struct perf_reader *r)
{
	struct stat st;
	int ret;

	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		r->hdr.file_size = (uint64_t)st.st_size;
		r->hdr.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
				  (uint64_t)st.st_mtim.tv_nsec;
		r->progress_total = (uint64_t)st.st_size;
		posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	} else {
		r->hdr.file_size = UINT64_MAX; /* a pipe: sizes are checked as read */
		/* room for what gathers between reads; as much as an unprivileged
		 * process may ask (pipe-max-size's default), less is fine */
		if (r->opts.gather_ms && S_ISFIFO(st.st_mode)) {
			int cap;

			fcntl(r->fd, F_SETPIPE_SZ, 1 << 20);
			cap = fcntl(r->fd, F_GETPIPE_SZ);
			r->pipe_cap = cap > 0 ? (size_t)cap : 0;
			r->gather_ns = (uint64_t)r->opts.gather_ms * 1000000u;
		}
	}
	ret = open_common(r);
	/* a file's data read ahead (not a pipe's: a live stream is read as it
	 * comes, and stopped by a signal) */
	r->ra_wanted = ret == PP_OK && r->opts.read_ahead && r->hdr.file_size != UINT64_MAX &&
		       !r->hdr.pipe;
	/* mapped only when PERFPORT_MMAP=1 asks (make bench compares the two:
	 * on a 2-vCPU guest, page cache warm, mapping and unmapping each page
	 * cost more than read()'s copy of it); records rewritten in place
	 * (another byte order) cannot be cut from a read-only mapping */
	r->map_wanted = ret == PP_OK && r->hdr.file_size != UINT64_MAX && !r->hdr.pipe &&
			!r->hdr.swapped && perf_map_asked();
	if (ret == PP_ENOSEEK)
		pp_error("'%s' holds file-mode perf.data on an input that cannot seek: "
			 "record with 'perf record -o -' for pipes, or pass the file itself",
			 r->path);
	if (ret == PP_OK && r->opts.events)
		ret = check_events(r, r->opts.events);
	return ret;
}

int perf_reader_open(const char *path, const struct perf_reader_opts *opts,
		     struct perf_reader **out)
{
	struct perf_reader *r;
	struct stat st;
	char *data_path = NULL;
	int ret;

	*out = NULL;
	ret = reader_alloc(opts, &r);
	if (ret)
		return ret;
	r->path = strdup(path);
	if (!r->path) {
		ret = PP_ENOMEM;
		goto fail;
	}
	if (strcmp(path, "-") == 0) {
		r->fd = STDIN_FILENO;
	} else {
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* perf record --threads: the header lives in DIR/data. */
			if (asprintf(&data_path, "%s/data", path) < 0) {
				ret = PP_ENOMEM;
				goto fail;
			}
			r->hdr.directory = true;
		}
		r->fd = open(data_path ? data_path : path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0 && data_path && errno == ENOENT) {
			pp_error("'%s' is a directory, and not one 'perf record --threads' wrote "
				 "(it has no 'data' file)", path);
			ret = PP_ENOENT;
			goto fail;
		}
		if (r->fd < 0) {
			pp_error("cannot open '%s': %s", data_path ? data_path : path,
				 strerror(errno));
			ret = errno == ENOENT ? PP_ENOENT : PP_EIO;
			goto fail;
		}
		r->own_fd = true;
		if (opts && opts->shown && !r->hdr.directory) {
			char *shown = strdup(opts->shown);

			if (!shown) {
				ret = PP_ENOMEM;
				goto fail;
			}
			free(r->path);
			r->path = shown;
		}
	}
	ret = open_fd(r);
	if (ret)
		goto fail;
	if (r->hdr.directory && r->hdr.pipe) {
		pp_error("'%s/data' is a pipe-mode stream, not a perf directory header", path);
		ret = PP_EFORMAT;
		goto fail;
	}
	free(data_path);
	*out = r;
	return PP_OK;
fail:
	free(data_path);
	perf_reader_close(r);
	return ret;
}

int perf_reader_open_mem(const void *buf, size_t len, const struct perf_reader_opts *opts,
			 struct perf_reader **out)
{
	struct perf_reader *r;
	int ret;

	*out = NULL;
	ret = reader_alloc(opts, &r);
	if (ret)
		return ret;
	r->mem = buf;
	r->mem_len = len;
	r->hdr.file_size = len;
	r->progress_total = len;
	r->path = strdup("<memory>");
	ret = r->path ? open_common(r) : PP_ENOMEM;
	if (ret) {
		perf_reader_close(r);
		return ret;
	}
	*out = r;
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
static int cut_all(struct perf_reader *r)
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
		flush_until(r, UINT64_MAX);
	perf_src_progress(r, true);
	return ret;
}

/*
 * A trace in AUX data (Intel PT, BTS, ARM SPE, CoreSight: AUXTRACE and AUX
 * records) is read past, not decoded: its samples are made by perf's
 * decoders. Said once, with the command that makes them samples.
 */
static void undecoded_warn(const struct perf_reader *r)
{
	uint64_t n = r->st.records[PERF_REC_AUXTRACE] + r->st.records[PERF_REC_AUXTRACE_INFO] +
		     r->st.records[PERF_RECORD_AUX];
	const char *p = r->path && strcmp(r->path, "-") ? r->path : "perf.data";

	if (!n)
		return;
	pp_warn("'%s' holds a hardware trace (%" PRIu64 " AUXTRACE and AUX records: Intel PT, "
		"ARM SPE, CoreSight...) that perfport does not decode, so none of its samples "
		"is counted; decode it into samples with 'perf inject -i %s --itrace=i100usg "
		"-o %s.itrace' and read that file", r->path ? r->path : "-", n, p, p);
}

int perf_reader_run(struct perf_reader *r, perf_event_fn fn, void *ctx)
{
	int ret;

	if (r->ran)
		return PP_EUSAGE;
	r->ran = true;
	r->fn = fn;
	r->ctx = ctx;
	if (!(r->opts.threaded && r->ra_wanted) || (ret = dl_run(r)) < 0)
		ret = cut_all(r);
	if (r->err)
		return r->err;
	undecoded_warn(r);
	if (r->stop)
		return PP_ESTOPPED;
	if (ret == PP_OK && r->opts.events) /* a pipe announces its events as it goes */
		ret = check_events(r, r->opts.events);
	return ret;
}

void perf_reader_close(struct perf_reader *r)
{
	if (!r)
		return;
	dl_free(r);
	perf_ra_stop(r);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->nr_evsels; i++) {
		free(r->evsels[i]->name);
		free(r->evsels[i]->ids);
		free(r->evsels[i]);
	}
	free(r->evsels);
	free(r->ids);
	perf_header_free(&r->hdr);
	oq_free(&r->oq);
	perf_map_close(r);
	wordmap_free(&r->read_map);
	free(r->read_last);
	free(r->reads);
	if (r->zd)
		ZSTD_freeDStream(r->zd);
	free(r->scratch); /* the streams' buffers went with the queue */
	free(r->path);
	free(r);
}

void perf_reader_set_threaded(struct perf_reader *r, bool on)
{
	r->opts.threaded = on;
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

const struct perf_header_info *perf_reader_header(const struct perf_reader *r)
{
	return &r->hdr;
}

const struct perf_stats *perf_reader_stats(const struct perf_reader *r)
{
	return &r->st;
}

struct perf_evsel *const *perf_reader_evsels(const struct perf_reader *r, size_t *nr)
{
	*nr = r->nr_evsels;
	return r->evsels;
}
