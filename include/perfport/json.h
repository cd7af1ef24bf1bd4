/* SPDX-License-Identifier: MIT */
/*
 * perfport/json.h - writing JSON strings from a plugin, header only.
 *
 * Symbol names, file names and labels reach a plugin as the recording has
 * them: usually UTF-8, sometimes not. A JSON text must be UTF-8, so bytes
 * that do not form a UTF-8 sequence are written as '?'; '"', '\\' and the
 * control characters are escaped.
 */
#ifndef PERFPORT_JSON_H
#define PERFPORT_JSON_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * perfport_utf8_seq() - the length of the UTF-8 sequence at @q (1 to 4), or
 * 0 if the bytes there do not form one. For any text format that must be
 * UTF-8 (JSON, XML).
 */
static inline int perfport_utf8_seq(const unsigned char *q)
{
	unsigned char ch = *q;
	int n = ch < 0x80 ? 0 : (ch & 0xe0) == 0xc0 ? 1 : (ch & 0xf0) == 0xe0 ? 2
		: (ch & 0xf8) == 0xf0 ? 3 : -1;

	for (int k = 1; n >= 0 && k <= n; k++)
		if ((q[k] & 0xc0) != 0x80)
			return 0;
	return n + 1;
}

/* perfport_json_chars_ex() flags */
enum {
	/* also escape '<', '>' and '&' (as \u003c...): safe inside an HTML
	 * <script> element, where "</script>" would end it */
	PERFPORT_JSON_HTML = 1 << 0,
};

/**
 * perfport_json_chars_ex() - @s escaped as the inside of a JSON string (no
 * quotes), to @out, with PERFPORT_JSON_* @flags.
 */
static inline void perfport_json_chars_ex(FILE *out, const char *s, unsigned flags)
{
	const unsigned char *q = (const unsigned char *)s;

	while (*q) {
		unsigned char ch = *q;
		int n = perfport_utf8_seq(q);

		if (!n) {
			fputc('?', out);
			q++;
		} else if (n > 1) {
			fwrite(q, 1, (size_t)n, out);
			q += n;
		} else {
			if (ch == '"' || ch == '\\') {
				fputc('\\', out);
				fputc(ch, out);
			} else if (ch == '\n') {
				fputs("\\n", out);
			} else if (ch < 0x20 || ch == 0x7f ||
				   ((flags & PERFPORT_JSON_HTML) && (ch == '<' || ch == '>' || ch == '&'))) {
				fprintf(out, "\\u%04x", ch);
			} else {
				fputc(ch, out);
			}
			q++;
		}
	}
}

/**
 * perfport_json_chars() - @s escaped as the inside of a JSON string (no
 * quotes), to @out.
 */
static inline void perfport_json_chars(FILE *out, const char *s)
{
	perfport_json_chars_ex(out, s, 0);
}

/**
 * perfport_json_string() - @s as a quoted JSON string to @out; NULL is
 * written as null.
 */
static inline void perfport_json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	perfport_json_chars(out, s);
	fputc('"', out);
}

#ifdef __cplusplus
}
#endif

#endif /* PERFPORT_JSON_H */
