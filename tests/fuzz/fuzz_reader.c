/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reader.c - libFuzzer target for the perf.data reader and the stages
 * after it. Reads the input in time order, touches every decoded field a
 * consumer would (so the sanitizers see any pointer the reader hands out
 * past its record), feeds the records to a machine and names every
 * sample's frames (files named by the input are opened only when they are
 * regular files; perf's build-id cache and /proc/kallsyms are not used),
 * then builds the profile of the same bytes (accounting, tree, rules),
 * every other time a second time with -j 2 (which must encode to the same
 * bytes: a difference aborts), encodes the exporters' view of it as pprof
 * and, when
 * $PERFPORT_FUZZ_PLUGINS names a directory of exporter plugins (the
 * robustness run gives build-asan/plugins), has each of them write it.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/machine.h"
#include "plugin/plugin.h"
#include "profile/profile.h"
#include "perf/perf.h"
#include "symbols/symbols.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

struct fuzz_ctx {
	struct machine *m;
	struct symbolizer *sym;
	struct raw_frame frames[256];
	uint64_t pcs[256];
};

static uint64_t name_frames(struct fuzz_ctx *c, const struct perf_event *ev)
{
	size_t n = machine_sample_frames(c->m, ev, c->frames, 256);
	uint64_t acc = 0;

	if (ev->sample.user_stack) {
		size_t u = machine_maps_settle(c->m) ? 0 : sym_unwind(c->sym, c->m, ev, c->pcs, 128);

		n = machine_kernel_frames(c->m, ev, c->frames, 128);
		n += machine_user_frames(c->m, ev->sample.pid, c->pcs, u, c->frames + n, 256 - n);
	}
	for (size_t i = 0; i < n; i++) {
		struct sym_frame f[8];
		size_t k = sym_resolve(c->sym, &c->frames[i], machine_kernel_text(c->m), f, 8);

		for (size_t j = 0; j < k; j++)
			acc += f[j].line + (f[j].function ? (uint8_t)f[j].function[0] : 0);
	}
	return acc;
}

static int touch(void *ctx, const struct perf_event *ev)
{
	const struct perf_sample *s = &ev->sample;
	uint64_t acc = ev->type + ev->size;
	struct fuzz_ctx *c = ctx;

	if (ev->type == PERF_RECORD_SAMPLE)
		acc += name_frames(c, ev);
	else
		machine_event(c->m, ev);
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		acc += s->callchain[i];
	for (uint64_t i = 0; i < s->branch_nr; i++)
		acc += s->branch[i].from + s->branch[i].to;
	if (s->user_regs)
		for (int i = 0; i < __builtin_popcountll(s->user_regs_mask); i++)
			acc += s->user_regs[i];
	if (s->intr_regs)
		for (int i = 0; i < __builtin_popcountll(s->intr_regs_mask); i++)
			acc += s->intr_regs[i];
	for (uint64_t i = 0; s->user_stack && i < s->user_stack_size; i += 64)
		acc += s->user_stack[i];
	if (s->read.values)
		for (uint64_t i = 0; i < s->read.nr * s->read.stride; i++)
			acc += s->read.values[i];
	if (s->raw && s->raw_size)
		acc += ((const uint8_t *)s->raw)[s->raw_size - 1];
	if (ev->evsel && ev->evsel->tp) {
		const struct tep_format_field *f = perf_tp_field(ev->evsel, "prev_state");
		uint64_t v;

		if (f && perf_tp_read_u64(f, s, &v) == 0)
			acc += v;
	}
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		for (const char *p = ev->u.mmap.filename; *p; p++)
			acc += (uint8_t)*p;
		break;
	case PERF_RECORD_COMM:
		for (const char *p = ev->u.comm.comm; *p; p++)
			acc += (uint8_t)*p;
		break;
	case PERF_RECORD_KSYMBOL:
		for (const char *p = ev->u.ksym.name; *p; p++)
			acc += (uint8_t)*p;
		break;
	}
	sink += acc;
	return 0;
}

/* --- the exporter plugins, writing each profile (never uploading) --- */

static struct plugin *plugins[32];
static size_t nr_plugins;
static char outdir[64];

static void remove_outdir(void)
{
	DIR *d = opendir(outdir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", outdir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(outdir);
}

static void load_plugins(void)
{
	static bool done;
	const char *dir = getenv("PERFPORT_FUZZ_PLUGINS");
	struct plugin_paths paths = { .dirs = { dir }, .nr = 1 };
	struct dirent *e;
	DIR *d;

	if (done || !dir)
		return;
	done = true;
	snprintf(outdir, sizeof(outdir), "/tmp/perfport-fuzz.XXXXXX");
	if (!mkdtemp(outdir) || !(d = opendir(dir))) {
		/* asked for and not run would pass unnoticed */
		fprintf(stderr, "fuzz: cannot run the plugins of '%s': %s\n", dir, strerror(errno));
		abort();
	}
	atexit(remove_outdir);
	while ((e = readdir(d)) && nr_plugins < sizeof(plugins) / sizeof(plugins[0])) {
		size_t n = strlen(e->d_name);
		char name[256];

		if (n < 4 || n > 200 || strcmp(e->d_name + n - 3, ".so") != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(n - 3), e->d_name);
		if (plugin_load(name, &paths, &plugins[nr_plugins]) == 0)
			nr_plugins++;
	}
	closedir(d);
	if (!nr_plugins) {
		fprintf(stderr, "fuzz: no plugin loaded from '%s'\n", dir);
		abort();
	}
}

static void run_plugins(const struct perfport_profile *v)
{
	char main_file[128];

	snprintf(main_file, sizeof(main_file), "%s/main", outdir);
	for (size_t i = 0; i < nr_plugins; i++) {
		FILE *f = fopen(main_file, "w");

		if (!f)
			return;
		plugin_run(plugins[i], v, f, plugin_is_directory(plugins[i]) ? outdir : NULL, false);
		fclose(f);
	}
}

/* Build the profile on every Nth input only (the robustness run of make
 * check sets 8 to stay within its time; libFuzzer runs it on every one). */
extern unsigned fuzz_profile_stride;
unsigned fuzz_profile_stride = 1;

/* The exporters' view of @p encoded as pprof (malloc'ed, *len bytes), or
 * NULL. */
static void *profile_pprof(const struct profile *p, size_t *len)
{
	struct perfport_profile *v = view_build(p, &(struct view_opts){ 0 });
	struct perfport_pprof_opts pro = { .struct_size = sizeof(pro) };
	void *buf = NULL;

	if (v && pprof_encode(v, &pro, &buf, len) != PERFPORT_OK)
		buf = NULL;
	view_free(v);
	return buf;
}

/*
 * Every other profile is built again with -j @jobs (2: frames named on the
 * namer's thread, stacks' nodes made when their names are back; 4: on two
 * lanes): its result and pprof encoding must be -j 1's, byte for byte,
 * whatever the input; a difference aborts, so the fuzzer keeps the input.
 */
static void same_with_jobs(const uint8_t *data, size_t size, const struct profile_opts *po,
			   unsigned jobs, int ret1, const void *buf1, size_t len1)
{
	struct profile_opts po2 = *po;
	struct profile *p2;
	void *buf2 = NULL;
	size_t len2 = 0;
	int ret2;

	po2.jobs = jobs;
	ret2 = profile_build_mem(data, size, "fuzz", &po2, &p2);
	if (p2)
		buf2 = profile_pprof(p2, &len2);
	if (ret2 != ret1 || !buf1 != !buf2 || (buf1 && (len1 != len2 || memcmp(buf1, buf2, len1)))) {
		fprintf(stderr, "fuzz: -j %u built another profile than -j 1 (%d/%d, %zu/%zu bytes)\n",
			jobs, ret1, ret2, len1, len2);
		abort();
	}
	free(buf2);
	profile_free(p2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned calls, built;
	struct perf_reader_opts o = { .ordered = true, .queue_limit = 1 << 20 };
	/* the files a recording names are this machine's, not the input:
	 * loading libc's debug info on every run cost most of the time
	 * (PERFPORT_FUZZ_FILES=1 loads them all the same) */
	struct sym_opts so = { .buildid_dir = "/nonexistent", .use_proc_kallsyms = false,
			       .no_files = !getenv("PERFPORT_FUZZ_FILES") };
	static struct fuzz_ctx c;
	struct perf_reader *r;

	pp_log_set_level(-1);
	if (perf_reader_open_mem(data, size, &o, &r) == 0) {
		c.m = machine_new(perf_reader_header(r));
		c.sym = sym_new(&so, perf_reader_header(r));
		if (c.m && c.sym)
			perf_reader_run(r, touch, &c);
		sym_free(c.sym);
		machine_free(c.m);
		perf_reader_close(r);
	}
	/* the accounting stage on the same bytes: tree, intervals, rules */
	if (calls++ % (fuzz_profile_stride ? fuzz_profile_stride : 1) == 0) {
		/* a start time given: the estimated one is the clock's */
		struct profile_opts po = { .sym = so, .jobs = 1, .group_by = GROUP_THREAD,
					   .has_start_time = true, .start_time_ns = 1 };
		struct profile *p;
		void *buf = NULL;
		size_t len = 0;
		int ret;

		ret = profile_build_mem(data, size, "fuzz", &po, &p);
		if (p) { /* set even for partial input */
			/* and what the exporters get: the view, walked, encoded as
			 * pprof, written by every plugin */
			struct perfport_profile *v = view_build(p, &(struct view_opts){ 0 });

			buf = profile_pprof(p, &len);
			load_plugins();
			if (v)
				run_plugins(v);
			view_free(v);
		}
		if (built++ % 2 == 0)
			same_with_jobs(data, size, &po, built % 4 == 1 ? 2 : 4, ret, buf, len);
		free(buf);
		profile_free(p);
	}
	return 0;
}
