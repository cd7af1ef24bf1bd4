/* SPDX-License-Identifier: MIT */
/*
 * test_sdk.c - the header-only helpers of the plugin SDK: perfport/json.h
 * (escaping, bytes that are not UTF-8, the HTML-safe form) and
 * perfport/protobuf.h (what the writer emits, byte for byte against the
 * wire format's rules, read back by the reader; malformed input refused
 * without reading past its end).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfport/json.h"
#include "perfport/protobuf.h"

/* What @fn writes for @s, in a static buffer. */
static const char *json_of(const char *s, unsigned flags)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	if (flags == ~0u)
		perfport_json_string(f, s);
	else
		perfport_json_chars_ex(f, s, flags);
	fclose(f);
	return buf;
}

static void test_json_escapes(void **state)
{
	(void)state;
	assert_string_equal(json_of("a\"b\\c\nd\te", 0), "a\\\"b\\\\c\\nd\\u0009e");
	assert_string_equal(json_of("</script>&", 0), "</script>&");
	assert_string_equal(json_of("</script>&", PERFPORT_JSON_HTML), "\\u003c/script\\u003e\\u0026");
	assert_string_equal(json_of(NULL, ~0u), "null");
	assert_string_equal(json_of("x", ~0u), "\"x\"");
}

static void test_json_utf8(void **state)
{
	(void)state;
	/* valid sequences pass whole: é (2), € (3), 𝄞 (4) */
	assert_string_equal(json_of("\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e", 0),
			    "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e");
	/* a lone continuation byte, a cut sequence at the end, a bad lead byte */
	assert_string_equal(json_of("a\x80z", 0), "a?z");
	assert_string_equal(json_of("a\xe2\x82", 0), "a??");
	assert_string_equal(json_of("\xff", 0), "?");
	assert_int_equal(perfport_utf8_seq((const unsigned char *)"\xe2\x82"), 0);
	assert_int_equal(perfport_utf8_seq((const unsigned char *)"A"), 1);
}

static void test_pb_writer(void **state)
{
	struct perfport_pb b = { 0 }, m = { 0 };
	static const unsigned char want[] = {
		0x08, 0x96, 0x01,             /* field 1 varint 150 */
		0x12, 0x03, 'a', 'b', 'c',    /* field 2 "abc" */
		0x1a, 0x02, 0x08, 0x01,       /* field 3 message {1: 1} */
		0x22, 0x00,                   /* field 4 "" (NULL) */
	};

	(void)state;
	perfport_pb_uint(&b, 1, 150);
	perfport_pb_string(&b, 2, "abc");
	perfport_pb_uint(&m, 1, 1);
	perfport_pb_message(&b, 3, &m);
	perfport_pb_string(&b, 4, NULL);
	assert_false(b.oom);
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.p, want, sizeof(want));
	assert_null(m.p);
	free(b.p);
}

static void test_pb_reader(void **state)
{
	struct perfport_pb b = { 0 };
	struct perfport_pb_field f = { 0 };
	const unsigned char *q, *end;

	(void)state;
	perfport_pb_uint(&b, 7, UINT64_MAX);
	perfport_pb_string(&b, 536870911, "x");        /* the largest field number */
	q = b.p;
	end = b.p + b.len;
	assert_int_equal(perfport_pb_next(&q, end, &f), 1);
	assert_int_equal(f.number, 7);
	assert_int_equal(f.wire, 0);
	assert_true(f.value == UINT64_MAX);
	assert_int_equal(perfport_pb_next(&q, end, &f), 1);
	assert_int_equal(f.number, 536870911);
	assert_int_equal(f.len, 1);
	assert_int_equal(f.data[0], 'x');
	assert_int_equal(perfport_pb_next(&q, end, &f), 0);
	free(b.p);
}

static void test_pb_malformed(void **state)
{
	/* each cut short or lying: refused, never read past the end */
	static const unsigned char cases[][4] = {
		{ 0x08, 0x96 },               /* varint without its last byte */
		{ 0x12, 0x05, 'a' },          /* length 5, one byte there */
		{ 0x0b },                     /* wire type 3 (groups): not taken */
		{ 0x00, 0x01 },               /* field number 0 */
		{ 0x0d, 0x01, 0x02 },         /* fixed32 with 2 bytes */
	};
	static const size_t lens[] = { 2, 3, 1, 2, 3 };

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		unsigned char *copy = malloc(lens[i]);   /* exact size: ASan sees any overread */
		const unsigned char *q = copy;
		struct perfport_pb_field f = { 0 };

		memcpy(copy, cases[i], lens[i]);
		assert_int_equal(perfport_pb_next(&q, copy + lens[i], &f), -1);
		free(copy);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escapes),
		cmocka_unit_test(test_json_utf8),
		cmocka_unit_test(test_pb_writer),
		cmocka_unit_test(test_pb_reader),
		cmocka_unit_test(test_pb_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
