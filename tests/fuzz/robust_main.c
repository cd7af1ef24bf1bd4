/* SPDX-License-Identifier: MIT */
/*
 * robust_main.c - the robustness run of `make check`: every perf.data file
 * under a directory, cut at 100 offsets and with random bytes flipped, fed
 * to the fuzz target in process (build it with ASan+UBSan; every 8th input
 * also goes through the whole profile stage and, with
 * PERFPORT_FUZZ_PLUGINS=build-asan/plugins, every exporter plugin). A crash or a
 * sanitizer report fails the run; the last line counts what was tried.
 *
 * usage: robust [-n ROUNDS] DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern unsigned fuzz_profile_stride;

static unsigned long files, runs;
static unsigned rounds = 100;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void one_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf, *copy;
	struct stat st;
	size_t n;

	if (!f || fstat(fileno(f), &st) || st.st_size < 16 || st.st_size > (64 << 20)) {
		if (f)
			fclose(f);
		return;
	}
	buf = malloc((size_t)st.st_size);
	copy = malloc((size_t)st.st_size);
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n < 8 || memcmp(buf, "PERFILE2", 8) != 0) {
		free(buf);
		free(copy);
		return;
	}
	files++;
	LLVMFuzzerTestOneInput(buf, n);
	runs++;
	for (unsigned i = 1; i <= rounds; i++) {
		/* A cut at i/rounds of the file, exactly (no copy past it). */
		size_t cut = n * i / (rounds + 1);
		uint8_t *t = malloc(cut ? cut : 1);

		memcpy(t, buf, cut);
		LLVMFuzzerTestOneInput(t, cut);
		free(t);
		/* The whole file with a few random bytes changed. */
		memcpy(copy, buf, n);
		for (int k = 0; k < 1 + (int)(next_rand() % 8); k++)
			copy[next_rand() % n] ^= (uint8_t)(1 + next_rand() % 255);
		LLVMFuzzerTestOneInput(copy, n);
		runs += 2;
	}
	free(buf);
	free(copy);
}

static void walk(const char *dir)
{
	struct dirent **list;
	int nr = scandir(dir, &list, NULL, alphasort);

	if (nr < 0)
		return; /* a missing directory (the corpus beside another checkout) */
	for (int i = 0; i < nr; i++) {
		char *p;
		struct stat st;

		if (list[i]->d_name[0] == '.' || asprintf(&p, "%s/%s", dir, list[i]->d_name) < 0) {
			free(list[i]);
			continue;
		}
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
			walk(p);
		else if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			one_file(p);
		free(p);
		free(list[i]);
	}
	free(list);
}

int main(int argc, char **argv)
{
	int i = 1;

	fuzz_profile_stride = 8;
	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		rounds = (unsigned)atoi(argv[2]);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: robust [-n ROUNDS] DIR...\n");
		return 2;
	}
	for (; i < argc; i++)
		walk(argv[i]);
	printf("%lu files, %lu runs\n", files, runs);
	return files ? 0 : 1;
}
