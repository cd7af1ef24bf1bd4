/* SPDX-License-Identifier: MIT */
/*
 * records.c - kernel records: turning a record native (swapped files), finding
 * its event and time, and decoding its body for consumers.
 *
 * Bodies (after the 8-byte header), from the kernel's perf_event.h:
 *   MMAP        u32 pid, tid; u64 start, len, pgoff; char filename[]
 *   MMAP2       u32 pid, tid; u64 start, len, pgoff;
 *               {u32 maj, min; u64 ino, ino_generation} or
 *               {u8 build_id_size, pad[3], build_id[20]}; u32 prot, flags;
 *               char filename[]
 *   COMM        u32 pid, tid; char comm[]
 *   FORK, EXIT  u32 pid, ppid, tid, ptid; u64 time
 *   LOST        u64 id, lost
 *   THROTTLE    u64 time, id, stream_id (UNTHROTTLE too)
 *   READ        u32 pid, tid; read values
 *   AUX         u64 aux_offset, aux_size, flags
 *   ITRACE_START u32 pid, tid
 *   LOST_SAMPLES u64 lost
 *   SWITCH_CPU_WIDE u32 next_prev_pid, next_prev_tid
 *   NAMESPACES  u32 pid, tid; u64 nr; {u64 dev, ino}[nr]
 *   KSYMBOL     u64 addr; u32 len; u16 ksym_type, flags; char name[]
 *   BPF_EVENT   u16 type, flags; u32 id; u8 tag[8]
 *   CGROUP      u64 id; char path[]
 *   TEXT_POKE   u64 addr; u16 old_len, new_len; u8 bytes[]
 *   AUX_OUTPUT_HW_ID u64 hw_id
 * then the sample_id_all trailer when the event has one.
 */
#include "priv.h"

#include <string.h>

/*
 * The fixed fields of each body as a shape: '4' a u32, '8' a u64, '2' a u16,
 * 'n' a u64 count of {u64, u64} pairs. Strings and bytes are left alone.
 */
static const char *const shapes[PERF_REC_KERNEL_MAX] = {
	[PERF_RECORD_MMAP] = "44888",
	[PERF_RECORD_LOST] = "88",
	[PERF_RECORD_COMM] = "44",
	[PERF_RECORD_EXIT] = "44448",
	[PERF_RECORD_THROTTLE] = "888",
	[PERF_RECORD_UNTHROTTLE] = "888",
	[PERF_RECORD_FORK] = "44448",
	[PERF_RECORD_READ] = "44",
	[PERF_RECORD_MMAP2] = "44888", /* the rest depends on misc */
	[PERF_RECORD_AUX] = "888",
	[PERF_RECORD_ITRACE_START] = "44",
	[PERF_RECORD_LOST_SAMPLES] = "8",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "44",
	[PERF_RECORD_NAMESPACES] = "44n",
	[PERF_RECORD_KSYMBOL] = "8422",
	[PERF_RECORD_BPF_EVENT] = "224",
	[PERF_RECORD_CGROUP] = "8",
	[PERF_RECORD_TEXT_POKE] = "822",
	[PERF_REC_AUX_OUTPUT_HW_ID] = "8",
};

static void swap_shape(struct cur *c, const char *shape)
{
	for (; *shape && !c->bad; shape++) {
		switch (*shape) {
		case '2': {
			uint8_t *p = cur_skip(c, 2);
			if (p) {
				uint16_t v = load_u16(p, true);
				memcpy(p, &v, 2);
			}
			break;
		}
		case '4':
			cur_u32(c);
			break;
		case '8':
			cur_u64(c);
			break;
		case 'n': {
			uint64_t nr = cur_u64(c);
			if (nr <= cur_left(c) / 16)
				cur_u64_array(c, nr * 2);
			break;
		}
		}
	}
}

/* The evsel a non-sample record's trailer names; NULL without one. */
static struct perf_evsel *trailer_evsel(const struct perf_reader *r, const uint8_t *body,
					size_t len, bool swap)
{
	const struct perf_evsel *first;
	uint64_t id;

	if (!r->nr_evsels)
		return NULL;
	first = r->evsels[0];
	if (r->nr_evsels == 1)
		return first->trailer_size ? r->evsels[0] : NULL;
	if (!first->trailer_size || first->trailer_size > len || first->is_pos < 0 ||
	    !r->same_id_pos)
		return first->trailer_size ? r->evsels[0] : NULL;
	id = load_u64(body + len - 8 * (size_t)first->is_pos, swap);
	{
		struct perf_evsel *e = perf_id_find(r, id);
		return e ? e : r->evsels[0];
	}
}

static struct perf_evsel *sample_evsel(const struct perf_reader *r, const uint8_t *body,
				       size_t len, bool swap, bool *known)
{
	const struct perf_evsel *first;
	struct perf_evsel *e;
	uint64_t id;

	*known = true;
	if (!r->nr_evsels) {
		*known = false;
		return NULL;
	}
	first = r->evsels[0];
	if (r->nr_evsels == 1 || first->id_pos < 0 || !r->same_id_pos)
		return r->evsels[0];
	if ((size_t)(first->id_pos + 1) * 8 > len) {
		*known = false;
		return NULL;
	}
	id = load_u64(body + 8 * (size_t)first->id_pos, swap);
	if (id == 0)
		return r->evsels[0];
	e = perf_id_find(r, id);
	if (!e)
		*known = false;
	return e;
}

int perf_record_native(struct perf_reader *r, uint8_t *rec, uint32_t size,
		       struct perf_evsel **evsel, uint64_t *time, bool *timed)
{
	uint32_t type = load_u32(rec, r->hdr.swapped);
	bool swap = r->hdr.swapped;
	uint8_t *body = rec + 8;
	size_t len = size - 8;
	struct perf_sample s;
	struct perf_evsel *e;

	*timed = false;
	*time = 0;
	if (swap) {
		uint16_t misc = load_u16(rec + 4, true), sz = load_u16(rec + 6, true);

		store_u32(rec, type);
		memcpy(rec + 4, &misc, 2);
		memcpy(rec + 6, &sz, 2);
	}
	if (type == PERF_RECORD_SAMPLE) {
		bool known;

		e = sample_evsel(r, body, len, swap, &known);
		*evsel = e;
		if (!e)
			return -2;
		if (swap) {
			if (perf_sample_parse(e, body, len, true, &s))
				return -1;
			*time = s.time;
		} else if (e->time_pos >= 0) {
			if ((size_t)(e->time_pos + 1) * 8 > len)
				return -1;
			*time = load_u64(body + 8 * (size_t)e->time_pos, false);
		}
		*timed = e->time_pos >= 0;
		return 0;
	}

	e = trailer_evsel(r, body, len, swap);
	*evsel = e;
	if (swap && type < PERF_REC_KERNEL_MAX && shapes[type]) {
		struct cur c = cur_make(body, len - (e ? e->trailer_size : 0), true);
		uint16_t misc;

		swap_shape(&c, shapes[type]);
		memcpy(&misc, rec + 4, 2);
		if (type == PERF_RECORD_MMAP2 && !(misc & PERF_MISC_MMAP_BUILD_ID))
			swap_shape(&c, "4488");
		else if (type == PERF_RECORD_MMAP2)
			cur_skip(&c, 24);
		if (type == PERF_RECORD_MMAP2)
			swap_shape(&c, "44");
	}
	if (e && e->trailer_size) {
		if (perf_sample_id_parse(e, body, len, swap, &s) == 0 &&
		    (e->attr.sample_type & PERF_SAMPLE_TIME)) {
			*time = s.time;
			*timed = true;
		}
	}
	return 0;
}

static const char *body_str(const uint8_t *p, const uint8_t *end)
{
	/* Strings are NUL-padded to 8 bytes; a hostile one may lack the NUL. */
	if (p >= end || !memchr(p, 0, (size_t)(end - p)))
		return "";
	return (const char *)p;
}

int perf_record_decode(const struct perf_reader *r, uint8_t *rec, uint32_t size,
		       struct perf_evsel *evsel, struct perf_event *ev)
{
	uint8_t *body = rec + 8, *end;
	size_t len = size - 8;
	const struct perf_evsel *e = evsel;

	/* Zero only what the record type uses: this runs for every record. */
	ev->type = load_u32(rec, false);
	ev->misc = load_u16(rec + 4, false);
	ev->size = size;
	ev->offset = 0;
	ev->data = rec;
	ev->evsel = NULL;
	ev->has_sample_id = false;
	ev->has_reads = false;
	ev->reads = NULL;
	ev->nr_reads = 0;

	if (ev->type == PERF_RECORD_SAMPLE) {
		if (!e)
			return -2;
		ev->evsel = e;
		return perf_sample_parse(e, body, len, false, &ev->sample);
	}
	perf_sample_blank(&ev->sample, 0);
	memset(&ev->u, 0, sizeof(ev->u));
	if (ev->type >= PERF_REC_KERNEL_MAX)
		return 0;
	(void)r;
	ev->evsel = e;
	if (e && e->trailer_size && perf_sample_id_parse(e, body, len, false, &ev->sample) == 0)
		ev->has_sample_id = true;
	end = body + len - (e ? e->trailer_size : 0);
	if (end < body)
		return -1;

#define NEED(n) do { if ((size_t)(end - body) < (n)) return -1; } while (0)
	switch (ev->type) {
	case PERF_RECORD_MMAP:
		NEED(32);
		ev->u.mmap.pid = load_u32(body, false);
		ev->u.mmap.tid = load_u32(body + 4, false);
		ev->u.mmap.start = load_u64(body + 8, false);
		ev->u.mmap.len = load_u64(body + 16, false);
		ev->u.mmap.pgoff = load_u64(body + 24, false);
		ev->u.mmap.filename = body_str(body + 32, end);
		break;
	case PERF_RECORD_MMAP2:
		NEED(64);
		ev->u.mmap.pid = load_u32(body, false);
		ev->u.mmap.tid = load_u32(body + 4, false);
		ev->u.mmap.start = load_u64(body + 8, false);
		ev->u.mmap.len = load_u64(body + 16, false);
		ev->u.mmap.pgoff = load_u64(body + 24, false);
		if (ev->misc & PERF_MISC_MMAP_BUILD_ID) {
			uint8_t n = body[32];

			ev->u.mmap.build_id_size = n > PERF_MAX_BUILD_ID ? PERF_MAX_BUILD_ID : n;
			memcpy(ev->u.mmap.build_id, body + 36, PERF_MAX_BUILD_ID);
		} else {
			ev->u.mmap.maj = load_u32(body + 32, false);
			ev->u.mmap.min = load_u32(body + 36, false);
			ev->u.mmap.ino = load_u64(body + 40, false);
			ev->u.mmap.ino_generation = load_u64(body + 48, false);
		}
		ev->u.mmap.prot = load_u32(body + 56, false);
		ev->u.mmap.flags = load_u32(body + 60, false);
		ev->u.mmap.filename = body_str(body + 64, end);
		break;
	case PERF_RECORD_COMM:
		NEED(8);
		ev->u.comm.pid = load_u32(body, false);
		ev->u.comm.tid = load_u32(body + 4, false);
		ev->u.comm.exec = ev->misc & PERF_MISC_COMM_EXEC;
		ev->u.comm.comm = body_str(body + 8, end);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		NEED(24);
		ev->u.task.pid = load_u32(body, false);
		ev->u.task.ppid = load_u32(body + 4, false);
		ev->u.task.tid = load_u32(body + 8, false);
		ev->u.task.ptid = load_u32(body + 12, false);
		ev->u.task.time = load_u64(body + 16, false);
		break;
	case PERF_RECORD_LOST:
		NEED(16);
		ev->u.lost.id = load_u64(body, false);
		ev->u.lost.lost = load_u64(body + 8, false);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		NEED(8);
		ev->u.lost.lost = load_u64(body, false);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		ev->u.sw.out = ev->misc & PERF_MISC_SWITCH_OUT;
		ev->u.sw.preempt = ev->misc & PERF_MISC_SWITCH_OUT_PREEMPT;
		if (ev->type == PERF_RECORD_SWITCH_CPU_WIDE) {
			NEED(8);
			ev->u.sw.next_prev_pid = load_u32(body, false);
			ev->u.sw.next_prev_tid = load_u32(body + 4, false);
		}
		break;
	case PERF_RECORD_NAMESPACES: {
		uint64_t nr;

		NEED(16);
		ev->u.ns.pid = load_u32(body, false);
		ev->u.ns.tid = load_u32(body + 4, false);
		nr = load_u64(body + 8, false);
		if (nr > (uint64_t)(end - body - 16) / 16)
			return -1;
		/* link_info[] by the kernel's index: 3 pid, 5 mnt */
		if (nr > 3) {
			ev->u.ns.pid_dev = load_u64(body + 16 + 3 * 16, false);
			ev->u.ns.pid_ino = load_u64(body + 16 + 3 * 16 + 8, false);
		}
		if (nr > 5) {
			ev->u.ns.mnt_dev = load_u64(body + 16 + 5 * 16, false);
			ev->u.ns.mnt_ino = load_u64(body + 16 + 5 * 16 + 8, false);
		}
		break;
	}
	case PERF_RECORD_KSYMBOL:
		NEED(16);
		ev->u.ksym.addr = load_u64(body, false);
		ev->u.ksym.len = load_u32(body + 8, false);
		ev->u.ksym.ksym_type = load_u16(body + 12, false);
		ev->u.ksym.flags = load_u16(body + 14, false);
		ev->u.ksym.name = body_str(body + 16, end);
		break;
	default:
		break;
	}
#undef NEED
	return 0;
}
