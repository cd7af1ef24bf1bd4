/* SPDX-License-Identifier: MIT */
/*
 * symopts.h - the symbol options every symbolizing command takes, declared
 * once: their getopt entries, their help text, and how they fill sym_opts.
 */
#ifndef CLI_SYMOPTS_H
#define CLI_SYMOPTS_H

#include "../symbols/symbols.h"

enum {
	OPT_SYMFS = 0x1000,
	OPT_BUILDID_DIR,
	OPT_KALLSYMS,
};

#define SYMOPTS_LONG_OPTIONS                                              \
	{ "symfs", required_argument, NULL, OPT_SYMFS },                  \
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },      \
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS }

#define SYMOPTS_HELP                                                                   \
	"      --symfs DIR         look for recorded files under DIR first (also by\n"   \
	"                          their base name: DIR/prog for /any/path/prog)\n"      \
	"      --buildid-dir DIR   perf's build-id cache (default ~/.debug)\n"           \
	"      --kallsyms FILE     kernel symbols of the recorded kernel; without it,\n" \
	"                          kernel frames are named only from perf's cache or a\n" \
	"                          /proc/kallsyms whose kernel build id matches\n"

/**
 * cli_sample_frames() - a sample's raw frames, leaf first: for
 * `--call-graph dwarf` samples the kernel part of the callchain followed by
 * the unwound user stack, else the callchain (or ip) as recorded.
 * @pcs: scratch room for @max addresses.
 */
static inline size_t cli_sample_frames(const struct machine *m, struct symbolizer *sym,
				       const struct perf_event *ev, struct raw_frame *out,
				       uint64_t *pcs, size_t max)
{
	size_t n, u;

	if (!(ev->evsel->attr.sample_type & PERF_SAMPLE_STACK_USER) || !ev->sample.user_stack)
		return machine_sample_frames(m, ev, out, max);
	n = machine_kernel_frames(m, ev, out, max);
	u = sym_unwind(sym, m, ev, pcs, max - n);
	if (!u) /* nothing to unwind: what the callchain has */
		return machine_sample_frames(m, ev, out, max);
	return n + machine_user_frames(m, ev->sample.pid, pcs, u, out + n, max - n);
}

/** symopts_parse() - apply option @opt; Return: true if it was a symbol option. */
static inline bool symopts_parse(int opt, const char *arg, struct sym_opts *o)
{
	switch (opt) {
	case OPT_SYMFS: o->symfs = arg; return true;
	case OPT_BUILDID_DIR: o->buildid_dir = arg; return true;
	case OPT_KALLSYMS: o->kallsyms = arg; return true;
	default: return false;
	}
}

#endif /* CLI_SYMOPTS_H */
