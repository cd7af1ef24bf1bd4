/* SPDX-License-Identifier: MIT */
/*
 * archive.c - where symbols may come from besides this machine, set up
 * once per run (symopts_prepare()): the perf archive beside a recording (or
 * --archive FILE), unpacked into a private directory that the symbolizer
 * searches first and removed when perfport exits (or is interrupted); and
 * the debuginfod servers libdwfl will ask, probed first.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../net/net.h"
#include "../perf/perf.h"
#include "../util/log.h"
#include "symopts.h"

#define DEBUGINFOD_PROBE_MS 3000

/*
 * debuginfod (DEBUGINFOD_URLS), as libdwfl asks it for a file it lacks:
 * each server probed first, with a short timeout, so that one that is down
 * or stalled costs a few seconds and one warning, not libdebuginfod's 90 s
 * per file; the servers that answer keep being asked, each request bounded
 * (DEBUGINFOD_TIMEOUT 10 s, DEBUGINFOD_MAXTIME 60 s, DEBUGINFOD_RETRY_LIMIT
 * 0 unless set); a build id it had nothing for is not asked again in the
 * run (symbols.c). Done once, before any thread.
 */
static void debuginfod_prepare(void)
{
	static bool done;
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *copy, *save = NULL, keep[4096] = "", dead[1024] = "";

	if (done || !urls || !*urls)
		return;
	done = true;
	copy = strdup(urls);
	if (!copy)
		return;
	for (char *u = strtok_r(copy, " \t", &save); u; u = strtok_r(NULL, " \t", &save)) {
		char *buf = strlen(keep) < sizeof(keep) - 1 ? keep : NULL;

		if (net_answers(u, DEBUGINFOD_PROBE_MS)) {
			if (buf)
				snprintf(keep + strlen(keep), sizeof(keep) - strlen(keep), "%s%s",
					 keep[0] ? " " : "", u);
		} else {
			snprintf(dead + strlen(dead), sizeof(dead) - strlen(dead), "%s'%s'",
				 dead[0] ? ", " : "", u);
		}
	}
	free(copy);
	if (dead[0])
		pp_warn("debuginfod %s did not answer within %d s: not asked for debug files",
			dead, DEBUGINFOD_PROBE_MS / 1000);
	if (keep[0])
		setenv("DEBUGINFOD_URLS", keep, 1);
	else
		unsetenv("DEBUGINFOD_URLS");
	if (keep[0] && !getenv("DEBUGINFOD_TIMEOUT"))
		setenv("DEBUGINFOD_TIMEOUT", "10", 1);
	/* and a whole transfer bounded: a server that drips bytes never
	 * trips the timeout, which waits for the next byte */
	if (keep[0] && !getenv("DEBUGINFOD_MAXTIME"))
		setenv("DEBUGINFOD_MAXTIME", "60", 1);
	/* one request per build id and run: the client's own retries (2 by
	 * default) tripled what a failing server costs */
	if (keep[0] && !getenv("DEBUGINFOD_RETRY_LIMIT"))
		setenv("DEBUGINFOD_RETRY_LIMIT", "0", 1);
}

static char root[PATH_MAX];
static bool root_temporary;          /* a private directory: removed at the end */

static void remove_root(void)
{
	if (root_temporary)
		sym_archive_remove(root);
	root_temporary = false;
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

int symopts_check_input(const char *input)
{
	struct stat st;
	struct passwd *pw;
	char owner[64];

	if (!input || !strcmp(input, "-") || access(input, R_OK) == 0)
		return 0;
	if (errno != EACCES) {
		pp_error("cannot open '%s': %s", input, strerror(errno));
		return -1;
	}
	if (stat(input, &st)) {
		pp_error("cannot read '%s': %s (a directory on its path is closed to this user)",
			 input, strerror(EACCES));
		return -1;
	}
	pw = getpwuid(st.st_uid);
	if (pw)
		snprintf(owner, sizeof(owner), "%s", pw->pw_name);
	else
		snprintf(owner, sizeof(owner), "uid %u", (unsigned)st.st_uid);
	pp_error("cannot read '%s': %s: it is %s's, mode %04o (perf record writes its file for "
		 "its owner only); run perfport as %s, or let others read it: sudo chmod a+r '%s'",
		 input, strerror(EACCES), owner, (unsigned)(st.st_mode & 07777), owner, input);
	return -1;
}

int symopts_prepare(struct cli_sym *c, const char *input)
{
	char found[PATH_MAX + 16];
	const char *tarball = c->archive;
	struct perf_reader *hdr_reader = NULL;
	const struct perf_header_info *hdr;
	int ret;

	if (symopts_check_input(input))
		return -1;
	debuginfod_prepare();
	if (root[0]) {
		c->o.archive_dir = root;
		return 0;
	}
	if (!tarball && !beside(input, found, sizeof(found)))
		return 0;
	if (!tarball)
		tarball = found;
	/* the build ids the recording names (its header's, in file mode): only
	 * their members are unpacked, and not those whose files are here */
	if (input && strcmp(input, "-")) {
		int lvl = pp_log_get_level();

		pp_log_set_level(PP_LOG_ERROR - 1);     /* the real read says what is wrong */
		if (perf_reader_open(input, NULL, &hdr_reader))
			hdr_reader = NULL;
		pp_log_set_level(lvl);
	}
	hdr = hdr_reader ? perf_reader_header(hdr_reader) : NULL;
	/* a private directory, when no cache can be had, is removed at the
	 * end; at a signal symbols/archive.c removes it (as it does an unpack
	 * into the cache that a signal stops) */
	atexit(remove_root);
	ret = sym_archive_open(tarball, hdr ? hdr->build_ids : NULL, hdr ? hdr->nr_build_ids : 0,
			       hdr && !hdr->pipe && hdr->nr_build_ids, root, sizeof(root),
			       &root_temporary);
	if (hdr_reader)
		perf_reader_close(hdr_reader);
	if (ret) {
		if (c->archive)
			return -1;
		pp_warn("'%s' beside the recording cannot be read: its files are not used", tarball);
		return 0;
	}
	c->o.archive_dir = root;
	pp_info("symbols from the perf archive '%s' first", tarball);
	return 0;
}
