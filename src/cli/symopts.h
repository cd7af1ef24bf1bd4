/* SPDX-License-Identifier: MIT */
/*
 * symopts.h - the symbol options every symbolizing command takes, declared
 * once: their getopt entries, their help text, and how they fill sym_opts.
 */
#ifndef CLI_SYMOPTS_H
#define CLI_SYMOPTS_H

#include <stdlib.h>
#include <unistd.h>

#include "../symbols/symbols.h"
#include "../symbols/upool.h"

enum {
	OPT_SYMFS = 0x1000,
	OPT_BUILDID_DIR,
	OPT_KALLSYMS,
	OPT_NO_INLINE,
	OPT_VMLINUX,
	OPT_ARCHIVE,
	OPT_TRUST_PATHS,
	OPT_NO_NAMES,
	OPT_RAW_NAMES,
};

struct cli_sym {
	struct sym_opts o;
	const char *archive; /* --archive FILE */
	unsigned jobs;       /* unwinding threads; 0: the CPU count */
	bool bad_jobs;
};

#define SYMOPTS_SHORT "j:"

#define SYMOPTS_LONG_OPTIONS                                              \
	{ "symfs", required_argument, NULL, OPT_SYMFS },                  \
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },      \
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },            \
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },              \
	{ "archive", required_argument, NULL, OPT_ARCHIVE },              \
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },                \
	{ "trust-paths", no_argument, NULL, OPT_TRUST_PATHS },            \
	{ "no-names", no_argument, NULL, OPT_NO_NAMES },                  \
	{ "raw-names", no_argument, NULL, OPT_RAW_NAMES },                \
	{ "jobs", required_argument, NULL, 'j' }

#define SYMOPTS_HELP                                                                   \
	"      --symfs DIR         look for recorded files under DIR first (also by\n"   \
	"                          their base name: DIR/prog for /any/path/prog)\n"      \
	"      --buildid-dir DIR   perf's build-id cache (default ~/.debug)\n"           \
	"      --kallsyms FILE     kernel symbols of the recorded kernel; without it,\n" \
	"                          kernel frames are named only from perf's cache or a\n" \
	"                          /proc/kallsyms whose kernel build id matches\n"       \
	"      --vmlinux FILE      kernel symbols from this image of the recorded\n"     \
	"                          kernel (refused if its build id differs)\n"            \
	"      --archive FILE      binaries, debug files and kernel symbols from this\n" \
	"                          'perf archive' tarball (default: the recording's\n"   \
	"                          own, FILE.tar.bz2/.gz/.xz/.zst beside it)\n"          \
	"      --no-inline         do not expand inlined calls into frames\n"            \
	"      --raw-names         name functions as their symbol tables spell them:\n" \
	"                          C++ and Rust names not demangled, Go's assembly\n" \
	"                          functions with their ELF suffix (.abi0)\n"         \
	"      --trust-paths       name a file recorded without a build id from the\n"  \
	"                          file at its path here even when the recording is\n"  \
	"                          from another host or the file's inode differs\n"    \
	"      --no-names          open no user file: user frames are MODULE+0xOFFSET,\n" \
	"                          for a backend (or pprof) to name from the build\n"  \
	"                          ids and addresses (quick; kernel frames are still\n" \
	"                          named; --call-graph dwarf stacks are not unwound)\n" \
	"  -j, --jobs N            threads unwinding --call-graph dwarf samples,\n"      \
	"                          opening files ahead and, building profiles,\n"     \
	"                          naming frames (on N/2 threads from -j 4, at\n"     \
	"                          most 8; watch names on one), reading the file\n" \
	"                          ahead and counting (a -g file is cut and\n"     \
	"                          ordered on a thread of its own; default: the\n" \
	"                          CPU count);\n"                                     \
	"                          the output is always that of -j 1\n"

/** symopts_parse() - apply option @opt; Return: true if it was a symbol option. */
static inline bool symopts_parse(int opt, const char *arg, struct cli_sym *c)
{
	char *end;
	long n;

	switch (opt) {
	case OPT_SYMFS: c->o.symfs = arg; return true;
	case OPT_BUILDID_DIR: c->o.buildid_dir = arg; return true;
	case OPT_KALLSYMS: c->o.kallsyms = arg; return true;
	case OPT_NO_INLINE: c->o.no_inline = true; return true;
	case OPT_TRUST_PATHS: c->o.trust_paths = true; return true;
	case OPT_NO_NAMES: c->o.no_files = true; return true;
	case OPT_RAW_NAMES: c->o.raw_names = true; return true;
	case OPT_VMLINUX: c->o.vmlinux = arg; return true;
	case OPT_ARCHIVE: c->archive = arg; return true;
	case 'j':
		n = strtol(arg, &end, 10);
		c->bad_jobs = *end || n < 1 || n > 256;
		c->jobs = (unsigned)n;
		return true;
	default: return false;
	}
}

/**
 * symopts_prepare() - once per run, before any thread: probe the debuginfod
 * servers of DEBUGINFOD_URLS (one that does not answer is dropped, with a
 * warning), and unpack the perf archive for @input (--archive, else one
 * beside it) into a private directory c->o.archive_dir points at, removed
 * at exit. First, a recording this user may not read is refused with what
 * was denied and the command that fixes it.
 * Return: 0, or -1 when the recording or --archive's file cannot be read (logged).
 */
int symopts_prepare(struct cli_sym *c, const char *input);

/**
 * symopts_check_input() - before anything is read: can @input (a path; "-"
 * and NULL pass) be read? A missing file is said as the reader says it; one
 * this user may not read with whose it is, its mode and the one command that
 * fixes it (perf record writes its file for its owner only).
 * Return: 0, or -1 (logged).
 */
int symopts_check_input(const char *input);

/** symopts_jobs() - the thread count to use. */
static inline unsigned symopts_jobs(const struct cli_sym *c)
{
	long n;

	if (c->jobs)
		return c->jobs;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 && n <= 64 ? (unsigned)n : 1;
}

/**
 * cli_sample_frames() - a sample's raw frames, leaf first: with unwound user
 * addresses (@n > 0, from upool) the kernel part of the callchain followed
 * by them, else the callchain (or ip) as recorded.
 */
static inline size_t cli_sample_frames(const struct machine *m, const struct perf_event *ev,
				       const uint64_t *pcs, size_t n, struct raw_frame *out,
				       size_t max)
{
	size_t k;

	if (!n)
		return machine_sample_frames(m, ev, out, max);
	k = machine_kernel_frames(m, ev, out, max);
	return k + machine_user_frames(m, ev->sample.pid, pcs, n, out + k, max - k);
}

#endif /* CLI_SYMOPTS_H */
