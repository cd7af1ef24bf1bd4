/* SPDX-License-Identifier: MIT */
/*
 * nsroot.c - a container's files, read through its root on this host.
 *
 * A process in a mount namespace of its own (a container) maps paths of its
 * own filesystem: the host may not have them, or have other files there.
 * While a process of that namespace still runs on the host that recorded
 * it, /proc/PID/root is that filesystem, as perf reads it (perf enters the
 * namespace with setns; reading through the root needs no privilege beyond
 * ptrace access). A JIT in a pid namespace of its own names its perf map
 * and jitdump after its pid there (/tmp/perf-NSPID.map in its /tmp).
 *
 * Which namespace a process was in is evidence from the recording (perf
 * record --namespaces); without it, a process that still runs and carries
 * the recorded command name is taken as the one recorded. A process is
 * looked at only when the recording comes from this host, this boot: same
 * host name and kernel release, and not older than the boot. A pid found
 * running is checked each time (namespace identity, else command name): a
 * pid the kernel gave to another process since is not used.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../util/log.h"
#include "priv.h"

/* Is the recording from this host, this boot? Decided once. */
static bool same_host(struct symbolizer *s)
{
	const struct perf_header_info *h = s->hdr;
	char name[256] = "";
	struct utsname u;
	struct timespec now, up;

	if (s->ns.host_checked)
		return s->ns.same_host;
	s->ns.host_checked = true;
	if (!h || !h->hostname || !h->osrelease || gethostname(name, sizeof(name) - 1) ||
	    strcmp(name, h->hostname) || uname(&u) || strcmp(u.release, h->osrelease))
		return false;
	if (h->mtime_ns && !clock_gettime(CLOCK_REALTIME, &now) &&
	    !clock_gettime(CLOCK_BOOTTIME, &up)) {
		int64_t boot = (int64_t)now.tv_sec - (int64_t)up.tv_sec;

		if ((int64_t)(h->mtime_ns / 1000000000u) < boot)
			return false; /* written before this boot: its pids are not today's */
	}
	if (stat("/proc/self/ns/mnt", &s->ns.self_mnt))
		memset(&s->ns.self_mnt, 0, sizeof(s->ns.self_mnt));
	s->ns.same_host = true;
	return true;
}

static bool read_small(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	size_t got;

	if (!f)
		return false;
	got = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[got] = '\0';
	return true;
}

/*
 * Is @pid, running now, the recorded @pi (or, @mn given, a process of that
 * mount namespace)? *@ours: it is in this process's own mount namespace.
 */
static bool running_as(struct symbolizer *s, uint32_t pid, const struct proc_info *pi,
		       const struct mount_ns *mn, bool *ours)
{
	char path[64], comm[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/ns/mnt", pid);
	if (stat(path, &st))
		return false;
	*ours = st.st_ino == s->ns.self_mnt.st_ino && st.st_dev == s->ns.self_mnt.st_dev;
	if (mn)
		return (uint64_t)st.st_ino == mn->ino && (uint64_t)st.st_dev == mn->dev;
	if (!pi || !pi->comm[0])
		return false;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
	if (!read_small(path, comm, sizeof(comm)))
		return false;
	comm[strcspn(comm, "\n")] = '\0';
	return strncmp(comm, pi->comm, sizeof(pi->comm) - 1) == 0;
}

bool sym_ns_foreign(const struct proc_info *pi)
{
	return pi && pi->mnt && !pi->mnt->host;
}

/* A running process of @mn, remembered per namespace (0: none). */
static uint32_t ns_member(struct symbolizer *s, const struct mount_ns *mn, bool *ours)
{
	struct ns_seen *c = NULL;
	size_t tried = 0;

	for (size_t i = 0; i < s->ns.nr_seen; i++)
		if (s->ns.seen[i].mn == mn)
			c = &s->ns.seen[i];
	if (c && (!c->pid || running_as(s, c->pid, NULL, mn, ours)))
		return c->pid;
	if (!c && s->ns.nr_seen < NS_SEEN_MAX)
		c = &s->ns.seen[s->ns.nr_seen++];
	/* the newest first: the oldest are the likeliest to have ended */
	for (size_t i = mn->nr; i-- > 0 && tried < 256; tried++) {
		if (running_as(s, mn->pids[i], NULL, mn, ours)) {
			if (c) {
				c->mn = mn;
				c->pid = mn->pids[i];
			}
			return mn->pids[i];
		}
	}
	if (c) {
		c->mn = mn;
		c->pid = 0;
	}
	return 0;
}

int sym_ns_root(struct symbolizer *s, const struct proc_info *pi, char *root, size_t n)
{
	uint32_t pid = 0;
	bool ours = false;

	if (!pi || !same_host(s))
		return 0;
	if (pi->mnt) {
		if (running_as(s, pi->pid, pi, pi->mnt, &ours))
			pid = pi->pid;
		else
			pid = ns_member(s, pi->mnt, &ours);
	} else if (running_as(s, pi->pid, pi, NULL, &ours)) {
		pid = pi->pid;
	}
	if (!pid || ours)
		return 0; /* none runs, or its files are ours: the recorded paths */
	snprintf(root, n, "/proc/%" PRIu32 "/root", pid);
	return 1;
}

uint32_t sym_ns_pid(struct symbolizer *s, const struct proc_info *pi)
{
	char path[64], buf[4096], *line, *save = NULL;
	bool ours;

	if (!pi)
		return 0;
	if (pi->nspid)
		return pi->nspid;
	if (same_host(s) && running_as(s, pi->pid, pi, pi->mnt, &ours)) {
		snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pi->pid);
		if (read_small(path, buf, sizeof(buf)) && (line = strstr(buf, "\nNSpid:"))) {
			/* "NSpid:\t<host>\t...\t<innermost>" */
			char *end = strchr(line + 1, '\n'), *last = NULL;
			unsigned long v;

			if (end)
				*end = '\0';
			for (char *t = strtok_r(line + 7, " \t", &save); t;
			     t = strtok_r(NULL, " \t", &save))
				last = t;
			if (last && (v = strtoul(last, NULL, 10)) && v <= UINT32_MAX)
				return (uint32_t)v;
		}
	}
	return pi->other_pid_ns ? 0 : pi->pid;
}
