/* SPDX-License-Identifier: MIT */
/*
 * archive.c - the perf archive beside a recording (or --archive FILE),
 * unpacked once per run into a private directory that the symbolizer
 * searches first, and removed when perfport exits (or is interrupted).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"
#include "symopts.h"

static char root[PATH_MAX];

static void remove_root(void)
{
	sym_archive_remove(root);
	root[0] = '\0';
}

static void on_signal(int sig)
{
	/* nftw() and remove() are not async-signal-safe, but the run is over:
	 * what is left half-removed stays in a private directory of TMPDIR */
	remove_root();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* perf archive's names beside @input: perf.data.tar.bz2, and the
 * .tar.gz/.tar.xz/.tar.zst newer perf writes. */
static bool beside(const char *input, char *out, size_t len)
{
	static const char *const ext[] = { ".tar.bz2", ".tar.gz", ".tar.xz", ".tar.zst" };
	struct stat st;

	if (!input || !strcmp(input, "-") || stat(input, &st) || !S_ISREG(st.st_mode))
		return false;
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(out, len, "%s%s", input, ext[i]);
		if (!stat(out, &st) && S_ISREG(st.st_mode))
			return true;
	}
	return false;
}

int symopts_archive(struct cli_sym *c, const char *input)
{
	char found[PATH_MAX + 16];
	const char *tarball = c->archive;

	if (root[0]) {
		c->o.archive_dir = root;
		return 0;
	}
	if (!tarball && !beside(input, found, sizeof(found)))
		return 0;
	if (!tarball)
		tarball = found;
	if (sym_archive_unpack(tarball, root, sizeof(root))) {
		if (c->archive)
			return -1;
		pp_warn("'%s' beside the recording cannot be read: its files are not used", tarball);
		return 0;
	}
	atexit(remove_root);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	c->o.archive_dir = root;
	pp_info("symbols from the perf archive '%s' first", tarball);
	return 0;
}
