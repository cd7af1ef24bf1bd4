/* SPDX-License-Identifier: MIT */
/*
 * tracing.c - HEADER_TRACING_DATA: the tracepoint formats of the recording
 * kernel, parsed with libtraceevent so RAW payloads are read by field name
 * (their fields only: print formats are kept as text, see parse_formats()).
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

#define MAX_PRINT_FMT (64u << 10)

/*
 * Keep @text's print format (from "print fmt:" to its end) under
 * the event id its "ID:" line gives. Return: 0, or PP_ENOMEM.
 */
static int keep_print_fmt(struct perf_header_info *h, const char *text, size_t size,
			  const char *pf)
{
	const char *id = memmem(text, size, "\nID:", 4);
	struct perf_tp_print_fmt *n;
	char *copy, *end;
	long v;

	if (!id || id > pf || (size_t)(text + size - pf) > MAX_PRINT_FMT)
		return 0;
	v = strtol(id + 4, &end, 10);
	if (end == id + 4 || v < 0 || v > INT32_MAX)
		return 0;
	copy = strndup(pf, (size_t)(text + size - pf));
	if (!copy)
		return PP_ENOMEM;
	n = realloc(h->tp_print_fmts, (h->nr_tp_print_fmts + 1) * sizeof(*n));
	if (!n) {
		free(copy);
		return PP_ENOMEM;
	}
	h->tp_print_fmts = n;
	n[h->nr_tp_print_fmts++] = (struct perf_tp_print_fmt){ (int)v, copy };
	return 0;
}

/*
 * The formats of one system. libtraceevent gets each one's name, id and
 * fields with an empty print format: its print format parser (1.7)
 * dereferences NULL, divides by zero or recurses without end on damaged
 * ones (an undeclared field inside __print_flags, a mangled expression:
 * 12 crashes in 8,000 mutations of sched_switch's, none with the print
 * format left out). The one thing read from a print format, a
 * __print_flags() table, is read from the text kept here
 * (perf_tp_print_flags()).
 */
static int parse_formats(struct perf_reader *r, struct tep_handle *tep, struct tcur *c,
			 const char *sys, unsigned *failed, unsigned *not_text)
{
	static const char empty[] = "print fmt: \"\"\n";
	uint32_t count = (uint32_t)t_num(c, 4);

	for (uint32_t i = 0; i < count && !c->bad; i++) {
		uint64_t size = t_num(c, 8);
		const char *text = (const char *)t_take(c, size), *pf;
		size_t keep;
		char *fmt;

		if (!text)
			break;
		if (!format_text((const uint8_t *)text, (size_t)size)) {
			(*failed)++;
			(*not_text)++;
			continue;
		}
		pf = memmem(text, (size_t)size, "print fmt:", 10);
		keep = pf ? (size_t)(pf - text) : (size_t)size;
		fmt = malloc(keep + sizeof(empty));
		if (!fmt || (pf && keep_print_fmt(&r->hdr, text, (size_t)size, pf))) {
			free(fmt);
			return PP_ENOMEM;
		}
		memcpy(fmt, text, keep);
		memcpy(fmt + keep, empty, sizeof(empty));
		if (tep_parse_event(tep, fmt, keep + sizeof(empty) - 1, sys) != 0)
			(*failed)++;
		free(fmt);
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
	if (parse_formats(r, tep, &c, "ftrace", &failed, &not_text))
		goto out;
	{
		uint32_t nsys = (uint32_t)t_num(&c, 4);

		for (uint32_t i = 0; i < nsys && !c.bad; i++) {
			const char *sys = t_str(&c);

			if (!sys || parse_formats(r, tep, &c, sys, &failed, &not_text))
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
		for (size_t k = 0; e->tp && k < r->hdr.nr_tp_print_fmts; k++)
			if (r->hdr.tp_print_fmts[k].id == e->tp->id)
				e->print_fmt = r->hdr.tp_print_fmts[k].text;
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
	const struct tep_format_field *f;

	if (!evsel || !evsel->tp)
		return NULL;
	f = tep_find_field(evsel->tp, name);
	/* a field no record can be read at (a negative offset, no size, a
	 * number wider than 8 bytes) is no evidence: said, and taken as
	 * absent, so the caller decides as it does without it (a
	 * sched_switch's prev_state read as 0 told every switch preempted) */
	if (f && (f->offset < 0 || f->size <= 0 ||
		  (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) &&
		   f->size > 8))) {
		pp_warn("'%s:%s': its field '%s' (offset %d, size %d) cannot be read in a record: "
			"taken as absent", evsel->tp->system ? evsel->tp->system : "?",
			evsel->tp->name ? evsel->tp->name : "?", name, f->offset, f->size);
		return NULL;
	}
	return f;
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

/* An unsigned number of @size bytes at @at in the host's order: false for another size. */
static bool read_native(const unsigned char *at, int size, uint64_t *val)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, at, 1);
		*val = u8;
		return true;
	case 2:
		memcpy(&u16, at, 2);
		*val = u16;
		return true;
	case 4:
		memcpy(&u32, at, 4);
		*val = u32;
		return true;
	case 8:
		memcpy(&u64, at, 8);
		*val = u64;
		return true;
	default:
		return false;
	}
}

int perf_tp_read_u64(const struct tep_format_field *field, const struct perf_sample *s,
		     uint64_t *val)
{
	unsigned long long v;

	if (!field || !s->raw || field->offset < 0 || field->size <= 0 ||
	    (uint64_t)field->offset + (uint64_t)field->size > s->raw_size)
		return -1;
	/* the file's byte order is the host's (nearly always): read in place
	 * (a sched_switch's fields are read at every switch) */
	if (tep_is_file_bigendian(field->event->tep) == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) &&
	    read_native((const unsigned char *)s->raw + field->offset, field->size, val))
		return 0;
	if (tep_read_number_field((struct tep_format_field *)field, s->raw, &v) != 0)
		return -1;
	*val = v;
	return 0;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* Whether [@p, @end) reads REC->@field (@len bytes) as a whole name. */
static bool reads_field(const char *p, const char *end, const char *field, size_t len)
{
	for (; (p = memmem(p, (size_t)(end - p), "REC->", 5)); p += 5)
		if ((size_t)(end - p - 5) >= len && !memcmp(p + 5, field, len) &&
		    (p + 5 + len == end || !(isalnum((unsigned char)p[5 + len]) || p[5 + len] == '_')))
			return true;
	return false;
}

/*
 * A flag's value: a constant expression as the kernel's macros leave it
 * ("0x0001", "(1 << 0)", "(0x0100 | 0x0200)"): numbers, parentheses, unary
 * - and ~, and * + - << >> & ^ | by C precedence. No division (nothing to
 * divide by zero). @s is a NUL-terminated copy; *@ok cleared on anything
 * else.
 */
struct cexpr {
	const char *p;
	bool ok;
	int depth;
};

static unsigned long long cexpr_binary(struct cexpr *e, int level);

static unsigned long long cexpr_unary(struct cexpr *e)
{
	unsigned long long v;
	char *end;

	e->p = skip_space(e->p);
	if (++e->depth > 32) {
		e->ok = false;
		return 0;
	}
	if (*e->p == '(') {
		e->p++;
		v = cexpr_binary(e, 0);
		e->p = skip_space(e->p);
		if (*e->p != ')')
			e->ok = false;
		else
			e->p++;
	} else if (*e->p == '-' || *e->p == '~') {
		char op = *e->p++;

		v = cexpr_unary(e);
		v = op == '-' ? 0 - v : ~v;
	} else if (isdigit((unsigned char)*e->p)) {
		v = strtoull(e->p, &end, 0);
		e->p = end;
		while (*e->p == 'U' || *e->p == 'L' || *e->p == 'u' || *e->p == 'l')
			e->p++;
	} else {
		e->ok = false;
		v = 0;
	}
	e->depth--;
	return v;
}

/* Binary operators from @level up: 0 |, 1 ^, 2 &, 3 << >>, 4 + -, 5 *. */
static unsigned long long cexpr_binary(struct cexpr *e, int level)
{
	static const char *const ops[] = { "|", "^", "&", "<<>>", "+-", "*" };
	unsigned long long v = level > 5 ? cexpr_unary(e) : cexpr_binary(e, level + 1);

	while (e->ok && level <= 5) {
		const char *o = skip_space(e->p);
		unsigned long long r;
		char op = *o;
		bool shift = level == 3;

		if (!op || !strchr(ops[level], op) || (shift && o[1] != op) ||
		    (!shift && (o[1] == op || o[1] == '=')))
			break;
		e->p = o + (shift ? 2 : 1);
		r = cexpr_binary(e, level + 1);
		switch (op) {
		case '|': v |= r; break;
		case '^': v ^= r; break;
		case '&': v &= r; break;
		case '<': v = r < 64 ? v << r : 0; break;
		case '>': v = r < 64 ? v >> r : 0; break;
		case '+': v += r; break;
		case '-': v -= r; break;
		default: v *= r; break;
		}
	}
	return v;
}

static bool cexpr_eval(const char *s, unsigned long long *v)
{
	struct cexpr e = { .p = s, .ok = true };

	*v = cexpr_binary(&e, 0);
	return e.ok && !*skip_space(e.p);
}

/*
 * The entries of one __print_flags() table from @p (after its delimiter
 * string): "{ VALUE, "NAME" }" pairs up to the closing parenthesis. A
 * value that is not a constant expression is passed over, as
 * libtraceevent passes it over.
 */
static size_t read_flag_pairs(const char *p, struct perf_tp_flag *out, size_t max)
{
	size_t n = 0;

	for (;;) {
		const char *v, *ve, *str, *se;
		char num[128];
		unsigned long long val;

		p = skip_space(p);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p != '{')
			return n;
		v = skip_space(p + 1);
		ve = strpbrk(v, ",}");
		if (!ve || *ve != ',')
			return n;
		str = skip_space(ve + 1);
		if (*str != '"' || !(se = strchr(str + 1, '"')))
			return n;
		p = skip_space(se + 1);
		if (*p != '}')
			return n;
		p++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (ve - v <= 0 || ve - v >= (ptrdiff_t)sizeof(num) || se == str + 1 || n >= max)
			continue;
		memcpy(num, v, (size_t)(ve - v));
		num[ve - v] = 0;
		if (!cexpr_eval(num, &val))
			continue;
		out[n].value = val;
		out[n].letter = str[1];
		n++;
	}
}

size_t perf_tp_print_flags(const struct perf_evsel *evsel, const char *field,
			   struct perf_tp_flag *out, size_t max)
{
	static const char call[] = "__print_flags(";
	size_t len = strlen(field);
	const char *p;

	if (!evsel || !evsel->print_fmt)
		return 0;
	for (p = evsel->print_fmt; (p = strstr(p, call)); ) {
		const char *a = p + sizeof(call) - 1, *q;
		int depth = 0;

		/* the first argument: up to its ',' outside parentheses */
		for (q = a; *q && !(*q == ',' && !depth); q++) {
			if (*q == '(')
				depth++;
			else if (*q == ')' && --depth < 0)
				break;
		}
		p = a;
		if (*q != ',' || !reads_field(a, q, field, len))
			continue;
		/* then the delimiter string, then the table */
		q = skip_space(q + 1);
		if (*q != '"' || !(q = strchr(q + 1, '"')))
			return 0;
		q = skip_space(q + 1);
		return *q == ',' ? read_flag_pairs(q + 1, out, max) : 0;
	}
	return 0;
}
