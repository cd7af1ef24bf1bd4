/* SPDX-License-Identifier: MIT */
/*
 * tracing.c - HEADER_TRACING_DATA: the tracepoint formats of the recording
 * kernel, parsed with libtraceevent so RAW payloads are read by field name.
 *
 * Layout: "\x17\x08\x44tracing", a version string ("0.5", "0.6"), an endian
 * byte (1 = big), a long-size byte, u32 page size; "header_page\0", u64 size,
 * text; "header_event\0", u64 size, text; u32 ftrace format count, each u64
 * size + text; u32 system count, each a name, u32 event count, each u64
 * size + text; u32 kallsyms size + text; u32 printk size + text; from 0.6 a
 * u64 saved_cmdlines size + text. Numbers are in the recording's byte order.
 */
#include "priv.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

#include "../util/log.h"

struct tcur {
	const uint8_t *p, *end;
	bool big;
	bool bad;
};

static bool host_big(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 0;
}

static const uint8_t *t_take(struct tcur *c, uint64_t n)
{
	const uint8_t *at = c->p;

	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return at;
}

static uint64_t t_num(struct tcur *c, unsigned size)
{
	const uint8_t *p = t_take(c, size);
	bool swap = c->big != host_big();

	if (!p)
		return 0;
	return size == 8 ? load_u64(p, swap) : load_u32(p, swap);
}

static const char *t_str(struct tcur *c)
{
	const uint8_t *nul;

	if (c->bad)
		return NULL;
	nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!nul) {
		c->bad = true;
		return NULL;
	}
	return (const char *)t_take(c, (uint64_t)(nul - c->p) + 1);
}

static bool t_expect(struct tcur *c, const char *word)
{
	const uint8_t *p = t_take(c, strlen(word) + 1);
	return p && memcmp(p, word, strlen(word) + 1) == 0;
}

/* Whether the field @name (@len bytes) is declared in @text's field lines
 * ("field:TYPE NAME[N];"). */
static bool field_declared(const char *text, size_t size, const char *name, size_t len)
{
	const char *end = text + size;

	for (const char *p = text; p && p < end; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : p) {
		const char *f = memmem(p, (size_t)(end - p), "field:", 6), *semi, *q;

		if (!f)
			return false;
		semi = memchr(f, ';', (size_t)(end - f));
		if (!semi)
			return false;
		q = semi;
		if (q > f && q[-1] == ']')          /* an array: NAME[N] */
			while (q > f && *q != '[')
				q--;
		if (q - f >= (ptrdiff_t)len) {
			const char *start = q - len;   /* where the name would begin */

			if (!memcmp(start, name, len) &&
			    (start == f || !(isalnum((unsigned char)start[-1]) || start[-1] == '_')))
				return true;
		}
		p = semi;
	}
	return false;
}

/*
 * @text with its print format checked first: libtraceevent's parser
 * dereferences NULL on an argument naming a field the format does not
 * declare (inside __print_flags; perf 6.1 crashes on it too). Such a print
 * format is dropped (only the state letters of sched_switch are read from
 * it, and they have a default); the fields are kept. Return: @text, or a
 * copy to free (*@copy set).
 */
static const char *checked_format(const char *text, size_t *size, char **copy)
{
	const char *pf = memmem(text, *size, "print fmt:", 10);

	*copy = NULL;
	if (!pf)
		return text;
	for (const char *p = pf; (p = memmem(p, *size - (size_t)(p - text), "REC->", 5)); ) {
		size_t n = 0;

		p += 5;
		while (p + n < text + *size && (isalnum((unsigned char)p[n]) || p[n] == '_'))
			n++;
		if (!n || !field_declared(text, (size_t)(pf - text), p, n)) {
			size_t keep = (size_t)(pf - text);

			*copy = malloc(keep + 32);
			if (!*copy)
				return NULL;
			memcpy(*copy, text, keep);
			memcpy(*copy + keep, "print fmt: \"\"\n", 14);
			*size = keep + 14;
			pp_warn("event format: its print format names the undeclared field '%.*s': "
				"the print format is not read", (int)(n < 64 ? n : 64), p);
			return *copy;
		}
		p += n;
	}
	return text;
}

/*
 * Whether the @n bytes at @p are text as the kernel writes a format file:
 * printable ASCII, tabs and line ends (every format of a 6.18 kernel's 2,525
 * is). libtraceevent 1.7's tokenizer returns no token for any other byte,
 * and its field parser compares that NULL with "]" when the byte follows an
 * array's '[' (found by fuzzing); such a format is not handed to it.
 */
static bool format_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

static void warn_not_text(unsigned n)
{
	if (n)
		pp_warn("tracing data: %u event formats hold bytes that are not text (the file "
			"is damaged): their events are not read", n);
}

static int parse_formats(struct tep_handle *tep, struct tcur *c, const char *sys,
			 unsigned *failed, unsigned *not_text)
{
	uint32_t count = (uint32_t)t_num(c, 4);

	for (uint32_t i = 0; i < count && !c->bad; i++) {
		uint64_t size = t_num(c, 8);
		const uint8_t *text = t_take(c, size);
		const char *fmt;
		size_t len = (size_t)size;
		char *copy;

		if (!text)
			break;
		if (!format_text(text, len)) {
			(*failed)++;
			(*not_text)++;
			continue;
		}
		fmt = checked_format((const char *)text, &len, &copy);
		if (!fmt || tep_parse_event(tep, fmt, len, sys) != 0)
			(*failed)++;
		free(copy);
	}
	return c->bad ? -1 : 0;
}

int perf_tracing_parse(struct perf_reader *r, const uint8_t *buf, size_t len)
{
	static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	struct tcur c = { .p = buf, .end = buf + len };
	struct tep_handle *tep;
	const char *version;
	const uint8_t *p;
	unsigned failed = 0, not_text = 0;
	uint32_t page_size;
	uint8_t long_size;
	uint64_t size;
	int ret = PP_ETRACE;

	if (r->hdr.tep)
		return PP_OK; /* pipe files may repeat it; the first one wins */
	p = t_take(&c, sizeof(magic));
	if (!p || memcmp(p, magic, sizeof(magic)) != 0)
		return PP_ETRACE;
	version = t_str(&c);
	p = t_take(&c, 2);
	if (!version || !p)
		return PP_ETRACE;
	c.big = p[0] != 0;
	long_size = p[1];
	page_size = (uint32_t)t_num(&c, 4);
	if (c.bad || (long_size != 4 && long_size != 8))
		return PP_ETRACE;

	tep_set_loglevel(TEP_LOG_NONE);
	tep = tep_alloc();
	if (!tep)
		return PP_ENOMEM;
	tep_set_file_bigendian(tep, c.big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, host_big() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, long_size);
	tep_set_page_size(tep, (int)page_size);

	if (!t_expect(&c, "header_page"))
		goto out;
	size = t_num(&c, 8);
	p = t_take(&c, size);
	if (!p)
		goto out;
	{
		/* libtraceevent wants a writable buffer here. */
		char *copy = malloc(size + 1);

		if (!copy) {
			ret = PP_ENOMEM;
			goto out;
		}
		memcpy(copy, p, size);
		copy[size] = 0;
		/* not text: libtraceevent's defaults for long_size stand */
		if (format_text(p, size))
			tep_parse_header_page(tep, copy, size, long_size);
		free(copy);
	}
	if (!t_expect(&c, "header_event"))
		goto out;
	size = t_num(&c, 8);
	if (!t_take(&c, size))
		goto out;
	if (parse_formats(tep, &c, "ftrace", &failed, &not_text))
		goto out;
	{
		uint32_t nsys = (uint32_t)t_num(&c, 4);

		for (uint32_t i = 0; i < nsys && !c.bad; i++) {
			const char *sys = t_str(&c);

			if (!sys || parse_formats(tep, &c, sys, &failed, &not_text))
				goto out;
		}
	}
	/*
	 * kallsyms (the symbol stage owns kernel names) and printk formats
	 * (for trace_printk strings) are not needed to read fields. The printk
	 * section is also not handed to libtraceevent: its parser (1.7) reads
	 * past the end of a line without text after the ':' (found by fuzzing).
	 */
	size = t_num(&c, 4);
	t_take(&c, size);
	size = t_num(&c, 4);
	t_take(&c, size);
	/* saved_cmdlines (0.6+) and anything after: not needed. */
	warn_not_text(not_text);
	if (failed)
		pp_debug("tracing data: %u event formats could not be parsed", failed);
	r->hdr.tep = tep;
	r->hdr.tracing_long_size = long_size;
	return PP_OK;
out:
	warn_not_text(not_text);
	/* Keep what parsed: formats before the damage are still right. */
	if (tep_get_events_count(tep) > 0) {
		r->hdr.tep = tep;
		r->hdr.tracing_long_size = long_size;
		return PP_ETRUNC;
	}
	tep_free(tep);
	return ret;
}

void perf_tracing_bind(struct perf_reader *r)
{
	for (size_t i = 0; i < r->nr_evsels; i++) {
		struct perf_evsel *e = r->evsels[i];

		if (e->attr.type != PERF_TYPE_TRACEPOINT || e->tp || !r->hdr.tep)
			continue;
		e->tp = tep_find_event(r->hdr.tep, (int)e->attr.config);
		if (e->tp && e->name_made) {
			char *name;

			/* No EVENT_DESC named it: use the format's system:name. */
			if (asprintf(&name, "%s:%s", e->tp->system, e->tp->name) >= 0) {
				free(e->name);
				e->name = name;
				e->name_made = false;
			}
		}
	}
}

const struct tep_format_field *perf_tp_field(const struct perf_evsel *evsel,
					     const char *name)
{
	if (!evsel || !evsel->tp)
		return NULL;
	return tep_find_field(evsel->tp, name);
}

const struct tep_format_field *perf_tp_field_next(const struct perf_evsel *evsel,
						  const struct tep_format_field *prev)
{
	const struct tep_format_field *f;

	if (!evsel || !evsel->tp)
		return NULL;
	f = prev ? prev->next : evsel->tp->format.fields;
	while (f && (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)))
		f = f->next;
	return f;
}

const char *perf_tp_field_name(const struct tep_format_field *field)
{
	return field->name;
}

int perf_tp_read_u64(const struct tep_format_field *field, const struct perf_sample *s,
		     uint64_t *val)
{
	unsigned long long v;

	if (!field || !s->raw || field->offset < 0 || field->size <= 0 ||
	    (uint64_t)field->offset + (uint64_t)field->size > s->raw_size)
		return -1;
	if (tep_read_number_field((struct tep_format_field *)field, s->raw, &v) != 0)
		return -1;
	*val = v;
	return 0;
}

/* Does the expression @a read the field @name? */
static bool arg_reads_field(const struct tep_print_arg *a, const char *name, int depth)
{
	if (!a || depth > 32)
		return false;
	switch (a->type) {
	case TEP_PRINT_FIELD:
		return a->field.name && strcmp(a->field.name, name) == 0;
	case TEP_PRINT_OP:
		return arg_reads_field(a->op.left, name, depth + 1) ||
		       arg_reads_field(a->op.right, name, depth + 1);
	case TEP_PRINT_TYPE:
		return arg_reads_field(a->typecast.item, name, depth + 1);
	default:
		return false;
	}
}

/* The first __print_flags() table applied to @name, searched depth first. */
static const struct tep_print_flag_sym *find_flags(const struct tep_print_arg *a,
						    const char *name, int depth)
{
	const struct tep_print_flag_sym *f = NULL;

	for (; a && !f && depth <= 32; a = a->next) {
		switch (a->type) {
		case TEP_PRINT_FLAGS:
			if (arg_reads_field(a->flags.field, name, 0))
				return a->flags.flags;
			break;
		case TEP_PRINT_OP:
			f = find_flags(a->op.left, name, depth + 1);
			if (!f)
				f = find_flags(a->op.right, name, depth + 1);
			break;
		case TEP_PRINT_TYPE:
			f = find_flags(a->typecast.item, name, depth + 1);
			break;
		default:
			break;
		}
	}
	return f;
}

size_t perf_tp_print_flags(const struct perf_evsel *evsel, const char *field,
			   struct perf_tp_flag *out, size_t max)
{
	const struct tep_print_flag_sym *f;
	size_t n = 0;

	if (!evsel || !evsel->tp)
		return 0;
	f = find_flags(evsel->tp->print_fmt.args, field, 0);
	for (; f && n < max; f = f->next) {
		char *end;
		unsigned long long v;

		if (!f->value || !f->str || !f->str[0])
			continue;
		v = strtoull(f->value, &end, 0);
		if (*end)
			continue;
		out[n].value = v;
		out[n].letter = f->str[0];
		n++;
	}
	return n;
}
