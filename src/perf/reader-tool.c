/* SPDX-License-Identifier: MIT */
/*
 * reader-tool.c - records of the perf tool (attributes, tracing data,
 * build ids, features, event names, finished rounds): each takes effect as
 * soon as it is read.
 */
#include "priv.h"

#include <stdlib.h>
#include <string.h>


/* --- records of the perf tool --- */

int perf_user_record(struct perf_reader *r, uint8_t *rec, uint32_t size, uint64_t offset)
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
		perf_dl_barrier(r);
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
			perf_flush_until(r, r->round_prev);
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
