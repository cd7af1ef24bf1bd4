/* SPDX-License-Identifier: MIT */
/*
 * test_strtab.c - interned strings: one copy per distinct string, found
 * again by content across table growth (its slots hashed again), long
 * names (a C++ template's hundreds of bytes) alike; strtab_intern_text()
 * makes every control byte '?' wherever it lies in a word of eight (the
 * check is word at a time) and leaves bytes from 0x80 (UTF-8) and the
 * others as they are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/strtab.h"

/* Distinct strings of lengths 0 to 599 (several words, a hash's long
 * path): each interned once, then found again after the table grew. */
static void test_intern_finds_again(void **state)
{
	enum { N = 3000 };
	struct strtab t = { 0 };
	const char **first = calloc(N, sizeof(*first));
	char buf[700];

	(void)state;
	assert_non_null(first);
	for (int i = 0; i < N; i++) {
		int len = i % 600;

		memset(buf, 'a' + i % 26, (size_t)len);
		snprintf(buf + len, sizeof(buf) - (size_t)len, "#%d", i);
		first[i] = strtab_intern(&t, buf);
		assert_non_null(first[i]);
		assert_string_equal(first[i], buf);
		assert_ptr_not_equal(first[i], buf);
	}
	for (int i = 0; i < N; i++) {
		int len = i % 600;

		memset(buf, 'a' + i % 26, (size_t)len);
		snprintf(buf + len, sizeof(buf) - (size_t)len, "#%d", i);
		assert_ptr_equal(strtab_intern(&t, buf), first[i]);
		assert_ptr_equal(strtab_intern_text(&t, buf), first[i]);
	}
	assert_ptr_equal(strtab_intern(&t, ""), strtab_intern(&t, ""));
	assert_true(strtab_intern(&t, "ab") != strtab_intern(&t, "abc"));
	free(first);
	strtab_free(&t);
}

/* Each control byte (0x01-0x1f, 0x7f) at each position of a 40-byte name
 * becomes '?', the rest kept; 0x20, 0x7e and 0x80-0xff are not control. */
static void test_intern_text_control(void **state)
{
	static const unsigned char ctl[] = { 0x01, 0x09, 0x0a, 0x1b, 0x1f, 0x7f };
	static const unsigned char fine[] = { 0x20, 0x7e, 0x80, 0xc3, 0xfe, 0xff };
	struct strtab t = { 0 };
	char name[41], want[41];

	(void)state;
	for (size_t k = 0; k < sizeof(ctl); k++) {
		for (size_t at = 0; at < 40; at++) {
			memset(name, 'x', 40);
			name[40] = 0;
			memcpy(want, name, sizeof(want));
			name[at] = (char)ctl[k];
			want[at] = '?';
			assert_string_equal(strtab_intern_text(&t, name), want);
		}
	}
	for (size_t k = 0; k < sizeof(fine); k++) {
		for (size_t at = 0; at < 40; at++) {
			memset(name, 'x', 40);
			name[40] = 0;
			name[at] = (char)fine[k];
			assert_string_equal(strtab_intern_text(&t, name), name);
		}
	}
	/* a control byte after bytes from 0x80 in the same word */
	memcpy(name, "\xff\xfe\x80\x81\x1b[31mred", 13);
	assert_string_equal(strtab_intern_text(&t, name), "\xff\xfe\x80\x81?[31mred");
	strtab_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_finds_again),
		cmocka_unit_test(test_intern_text_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
