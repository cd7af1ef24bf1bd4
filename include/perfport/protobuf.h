/* SPDX-License-Identifier: MIT */
/*
 * perfport/protobuf.h - the protocol-buffers wire format for plugins that
 * speak it by hand (SLS LogGroup, SkyWalking's gRPC messages), header only.
 *
 * Writing: a growing buffer; the first failed allocation sets oom and every
 * later call does nothing, so a caller checks once at the end. A nested
 * message is built in a buffer of its own and appended with
 * perfport_pb_bytes_field(). Reading: perfport_pb_next() walks the fields
 * of one message, bounds-checked.
 */
#ifndef PERFPORT_PROTOBUF_H
#define PERFPORT_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

struct perfport_pb {
	unsigned char *p;       /* free() when done */
	size_t len, cap;
	bool oom;
};

/** perfport_pb_raw() - append @n bytes as they are. */
static inline void perfport_pb_raw(struct perfport_pb *b, const void *d, size_t n)
{
	if (b->oom || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		unsigned char *q;

		while (cap < b->len + n)
			cap *= 2;
		q = (unsigned char *)realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

/** perfport_pb_varint() - append @v as a base-128 varint. */
static inline void perfport_pb_varint(struct perfport_pb *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	perfport_pb_raw(b, t, n);
}

/** perfport_pb_uint() - field @f, wire type 0 (int32/int64/uint64/enum/bool). */
static inline void perfport_pb_uint(struct perfport_pb *b, unsigned f, uint64_t v)
{
	perfport_pb_varint(b, (uint64_t)f << 3);
	perfport_pb_varint(b, v);
}

/** perfport_pb_bytes_field() - field @f, wire type 2: the length, then the bytes. */
static inline void perfport_pb_bytes_field(struct perfport_pb *b, unsigned f, const void *d,
					   size_t n)
{
	perfport_pb_varint(b, (uint64_t)f << 3 | 2);
	perfport_pb_varint(b, n);
	perfport_pb_raw(b, d, n);
}

/** perfport_pb_string() - field @f, a string (NULL: ""). */
static inline void perfport_pb_string(struct perfport_pb *b, unsigned f, const char *s)
{
	perfport_pb_bytes_field(b, f, s ? s : "", s ? strlen(s) : 0);
}

/** perfport_pb_message() - field @f, the message built in @m; @m is freed. */
static inline void perfport_pb_message(struct perfport_pb *b, unsigned f, struct perfport_pb *m)
{
	if (m->oom)
		b->oom = true;
	else
		perfport_pb_bytes_field(b, f, m->p, m->len);
	free(m->p);
	memset(m, 0, sizeof(*m));
}

/* One field read by perfport_pb_next(). */
struct perfport_pb_field {
	unsigned number;
	unsigned wire;          /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
	uint64_t value;         /* wire 0, 1, 5 */
	const unsigned char *data; /* wire 2 */
	size_t len;
};

static inline bool perfport_pb_get_varint(const unsigned char **p, const unsigned char *end,
					  uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/**
 * perfport_pb_next() - the field at *@p (before @end) into @fl, *@p moved
 * past it. Return: 1 a field, 0 the end of the message, -1 malformed.
 */
static inline int perfport_pb_next(const unsigned char **p, const unsigned char *end,
				   struct perfport_pb_field *fl)
{
	uint64_t key, n;

	if (*p >= end)
		return 0;
	if (!perfport_pb_get_varint(p, end, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return -1;
	fl->number = (unsigned)(key >> 3);
	fl->wire = (unsigned)(key & 7);
	fl->data = NULL;
	fl->len = 0;
	fl->value = 0;
	switch (fl->wire) {
	case 0:
		return perfport_pb_get_varint(p, end, &fl->value) ? 1 : -1;
	case 1:
	case 5:
		n = fl->wire == 1 ? 8 : 4;
		if ((uint64_t)(end - *p) < n)
			return -1;
		for (unsigned i = 0; i < n; i++)
			fl->value |= (uint64_t)(*p)[i] << (8 * i);
		*p += n;
		return 1;
	case 2:
		if (!perfport_pb_get_varint(p, end, &n) || n > (uint64_t)(end - *p))
			return -1;
		fl->data = *p;
		fl->len = (size_t)n;
		*p += n;
		return 1;
	default:
		return -1;
	}
}

#ifdef __cplusplus
}
#endif

#endif /* PERFPORT_PROTOBUF_H */
