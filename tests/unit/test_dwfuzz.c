/* SPDX-License-Identifier: MIT */
/*
 * test_dwfuzz.c - the inputs that made the DWARF readers' fuzz target
 * (tests/fuzz/fuzz_dwarf.c) fail, replayed through it: each one's debug
 * sections indexed as the namer indexes them (dwwalk.c, dwline.c and
 * libdw behind them). Under make check's ASan+UBSan build a read past a
 * section fails the run; here each must simply come back.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../fuzz/fuzz_dwarf.c"

/* The file @path through the target; false where it cannot be read. */
static bool replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return false;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return false;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return true;
}

/* Every input kept in tests/fuzz/dwarf-regress (in the tree above this
 * program's build folder). */
static void test_regress_inputs(void **state)
{
	char self[4096], dir[4200], path[4600];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct dirent *e;
	size_t files = 0;
	DIR *d;

	(void)state;
	assert_true(n > 0);
	self[n] = 0;
	/* BUILD/tests/test_dwfuzz: the tree is BUILD's parent */
	*strrchr(self, '/') = 0;
	snprintf(dir, sizeof(dir), "%s/../../tests/fuzz/dwarf-regress", self);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		assert_true(replay(path));
		files++;
	}
	closedir(d);
	print_message("%zu inputs replayed\n", files);
	assert_true(files > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regress_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
