/* SPDX-License-Identifier: MIT */
/*
 * cmd_watch.c - `perfport watch DIR`: continuous profiling from perf's
 * rotating files. `perf record --switch-output=30s -o DIR/perf.data`
 * renames each finished file to perf.data.<timestamp>; the watcher follows
 * DIR (inotify, and a rescan at start and every few seconds), turns each
 * finished file into one profile, in name order, and uploads it to every
 * format asked for. Which files are done is kept in a state file written
 * atomically after each one, so that a restart sends none twice and skips
 * none; an upload that fails is in the spool and the watcher resends the
 * spool itself, with backoff, while new files keep coming.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/error.h"
#include "../util/log.h"
#include "../util/threadtime.h"
#include "cli.h"
#include "exporters.h"
#include "profopts.h"
#include "watch_state.h"

#define WATCH_RESCAN_MS 5000          /* a rescan even without inotify's word */
#define WATCH_RESEND_MAX_S 600        /* the spool's backoff grows up to this */
#define WATCH_STATE_NAME ".perfport-watch"
#define WATCH_QUEUE 8                 /* windows built and not yet sent (pipe mode) */

/* One "KEY = VALUE" of the configuration: a long option and its value. */
struct cfg_item {
	char *key, *value;           /* value NULL: a flag */
};

struct cfg {
	struct cfg_item *v;
	size_t n;
	char **args;                 /* "--KEY=VALUE" for getopt */
};

struct watch {
	const char *dir;
	const char *config;           /* --config FILE, read again at SIGHUP */
	int argc;                     /* the command line as given (the config's options */
	char **argv;                  /* are put before it) */
	struct cfg cfg;               /* the configuration in use */
	char **args;                  /* the command line with it, that getopt read */
	char state[PATH_MAX];
	long keep;                    /* newest done files kept; -1: all */
	bool once;
	unsigned resend_s;            /* the spool's first retry after a failure */
	uint64_t spool_max;           /* bytes the spool may hold; the oldest go first */
	unsigned dropped;             /* uploads dropped from the spool so far */
	struct exporters ex;
	struct cli_prof po;
	const char *labels[SETTINGS_MAX];
	size_t nr_labels;
	struct wset done;             /* the files sent ("/name": found unreadable) */
	/* the spool: something may wait there; when to try it next */
	bool spool_pending;
	bool said_behind;             /* the uploads fell behind: said once */
	time_t next_resend;
	unsigned backoff_s;
	unsigned windows;
	int status;                   /* the worst exit status so far */
	bool spool_refused;           /* the spool cannot be used: the watcher stops */
	/* pipe mode: windows built by the reading thread, sent by another */
	const char *input;            /* -i: a stream cut into windows; NULL: DIR */
	uint64_t window_ns;
	pthread_mutex_t mu;
	pthread_cond_t put, got;
	struct queued {
		struct profile *p;
		bool partial;
		struct timespec built;
		double cpu;           /* the reading thread's CPU seconds for it */
	} q[WATCH_QUEUE];
	double cpu_last;              /* the reading thread's CPU at the last window */
	size_t q_head, q_len;
	bool q_done, q_waited;
	unsigned q_made;              /* windows the stream was cut into */
	bool q_partly;                /* one of them said it was read partly */
};

static volatile sig_atomic_t watch_stop;
static volatile sig_atomic_t watch_stream; /* -i: a stream's windows, read once */
static sigset_t watch_sigs;           /* SIGHUP, SIGINT, SIGTERM */
static atomic_int watch_hup;          /* read by the sending thread too */
static pthread_t watch_main;

/*
 * The watcher's part in SIGHUP, SIGINT and SIGTERM (util/cleanup.c's
 * handler asks it first, so a cleanup registered later, an archive's
 * directory or an output's temporary, never replaces it): SIGHUP is a
 * reload; the first SIGINT or SIGTERM lets the window or file being sent
 * finish; a second one is left to end the run at once, after the
 * cleanups (the archive's directory removed), but for a stream's, which
 * stops the uploads first (net_stop(): what is not delivered is kept).
 */
static bool take_signal(int sig)
{
	if (sig == SIGHUP) {
		atomic_store(&watch_hup, 1);      /* lock-free: safe in a handler */
		return true;
	}
	if (!pthread_equal(pthread_self(), watch_main)) {
		/* the main thread's read() is the one to interrupt */
		pthread_kill(watch_main, sig);
		return true;
	}
	if (watch_stop && watch_stream && !net_stopped()) {
		/* a stream's second one: its windows are nowhere else, so the
		 * upload in flight ends and it and the windows read are kept
		 * in the spool, then the run ends by the signal (a third one
		 * ends it at once) */
		net_stop(sig);
		return true;
	}
	if (watch_stop)
		return false;   /* a second one: the window is not to be finished */
	watch_stop = sig;
	return true;
}

/*
 * A finished rotation: "<name>.<digits>" (perf's %Y%m%d%H%M%S plus
 * hundredths; at least 8 digits), not hidden. Return: where the digits
 * start, or NULL.
 */
static const char *rotation_stamp(const char *name)
{
	const char *dot = strrchr(name, '.');
	size_t n;

	if (name[0] == '.' || !dot || dot == name)
		return NULL;
	n = strlen(dot + 1);
	if (n < 8)
		return NULL;
	for (const char *c = dot + 1; *c; c++)
		if (!isdigit((unsigned char)*c))
			return NULL;
	return dot + 1;
}

/* Order of rotation: by the time stamp, then the name. */
static int rotation_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	const char *sx = rotation_stamp(x), *sy = rotation_stamp(y);
	size_t lx = strlen(sx), ly = strlen(sy);
	int c;

	if (lx != ly)
		return lx < ly ? -1 : 1;
	c = strcmp(sx, sy);
	return c ? c : strcmp(x, y);
}

/* Is @name in the state: sent, or (as "/name") found unreadable? */
static bool is_failed(const struct watch *w, const char *name)
{
	char marked[NAME_MAX + 2];

	return (size_t)snprintf(marked, sizeof(marked), "/%s", name) < sizeof(marked) &&
	       wset_has(&w->done, marked);
}

static bool is_done(const struct watch *w, const char *name)
{
	return wset_has(&w->done, name) || is_failed(w, name);
}

/* Read the state file: one name per line, '#' lines aside. Absent: none. */
static int state_load(struct watch *w)
{
	return wstate_load(w->state, &w->done);
}

/* wset_retain()'s test: is the file of a state's name in @ctx (the names listed). */
static bool still_listed(const char *name, void *ctx)
{
	return wset_has(ctx, name[0] == '/' ? name + 1 : name);
}

/*
 * Drop from the state the names of files no longer in DIR, @names the
 * finished files listed there now (NULL entries: removed): they can come
 * back only as new rotations, with new names. Linear in both.
 */
static int state_compact(struct watch *w, char **names, size_t n)
{
	struct wset listed = { 0 };
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++)
		if (names[i])
			ret = wset_add(&listed, names[i]);
	if (!ret)
		wset_retain(&w->done, still_listed, &listed);
	wset_free(&listed);
	return ret;
}

/* Write the state file whole or not at all (wstate_save()). */
static int state_save(struct watch *w)
{
	char about[PATH_MAX + 64];

	/* no line break of the directory's name in the comment line */
	snprintf(about, sizeof(about), "perfport watch: the recordings of '%s' already sent", w->dir);
	for (char *c = about; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return wstate_save(w->state, about, &w->done);
}

/*
 * Remove the oldest files already sent beyond --keep N: never one not
 * sent, nor one that could not be read (it is kept to be looked at).
 */
static size_t keep_newest(struct watch *w, char **names, size_t n)
{
	size_t sent = 0, removed = 0;

	if (w->keep < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		sent += wset_has(&w->done, names[i]);
	for (size_t i = 0; i < n && sent > (size_t)w->keep; i++) {
		char path[PATH_MAX];

		if (!wset_has(&w->done, names[i]))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", w->dir, names[i]) < sizeof(path) &&
		    unlink(path) && errno != ENOENT) {
			pp_warn("cannot remove '%s': %s", path, strerror(errno));
		} else {
			free(names[i]);
			names[i] = NULL; /* its name leaves the state */
			removed++;
		}
		sent--;
	}
	return removed;
}

static double secs_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* "on-cpu 1.23 s, lock 0.40 s, ..." of the profile's totals, into @buf. */
static void totals_line(const struct profile *p, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	if (!p->nr_nodes)
		return;
	for (int c = 0; c < CNT_COUNT && at < len; c++) {
		uint64_t ns = p->total[0].ns[c];

		if (!p->total[0].count[c])
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s%s %.2f s", at ? ", " : "",
				       counter_name((enum counter)c), (double)ns / 1e9);
	}
}

/*
 * Upload @p (freed here) to every format and say what it held and sent,
 * as @what; with @defer every request goes straight to the spool, behind
 * what waits there. Return: the exit status of it.
 */
static int upload_profile(struct watch *w, const char *what, struct profile *p, bool partial,
			  const struct timespec *t0, bool defer, double cpu)
{
	struct perfport_profile *view;
	char totals[256];
	unsigned req0, req1;
	uint64_t b0, b1;
	int ret = EXIT_FULL;

	view = view_build(p, &(struct view_opts){ w->labels, w->nr_labels });
	if (!view) {
		pp_error("%s", pp_strerror(PP_ENOMEM));
		profile_free(p);
		return EXIT_NOTHING;
	}
	net_delivered(&req0, &b0);
	net_defer(defer);
	for (size_t i = 0; i < w->ex.n; i++) {
		unsigned spooled0 = net_spooled(), lost0 = net_lost();
		int r = plugin_run(w->ex.pl[i], view, NULL, NULL, true);

		if (r && net_spooled() > spooled0 && net_lost() == lost0) {
			ret = exit_worst(ret, EXIT_SPOOLED);
			/* a failure is tried again after the backoff; a window
			 * put off behind uploads that fell behind (none failed)
			 * is sent as soon as the sender is free */
			if (!w->spool_pending)
				w->next_resend = time(NULL) + (defer ? 0 : w->backoff_s);
			w->spool_pending = true;
		} else if (r) {
			ret = exit_worst(ret, r == PP_EUSAGE ? EXIT_USAGE : EXIT_NOTHING);
		}
	}
	net_defer(false);
	net_delivered(&req1, &b1);
	if (ret == EXIT_SPOOLED) {
		unsigned dropped = 0;

		if (net_spool_trim(NULL, w->spool_max, &dropped) == PP_OK && dropped) {
			w->dropped += dropped;
			ret = exit_worst(ret, EXIT_NOTHING); /* lost, as told */
			pp_warn("the spool '%s' holds more than %" PRIu64 " KiB: its %u oldest "
				"request%s dropped (%u in all)", net_spool_dir(), w->spool_max >> 10,
				dropped, dropped == 1 ? "" : "s", w->dropped);
		}
	}
	if (ret == EXIT_FULL && partial) {
		char why[512];

		perf_stats_partly(&p->read, why, sizeof(why));
		pp_warn_status("%s: read partly: %s", what, why);
		ret = EXIT_PARTIAL;
	}
	totals_line(p, totals, sizeof(totals));
	if (pp_log_get_level() >= PP_LOG_WARN) {
		char built[48] = "";

		if (cpu >= 0)
			snprintf(built, sizeof(built), ", built with %.3f s of CPU", cpu);
		printf("%s: %" PRIu64 " samples%s%s; %u request%s, %.1f KiB sent%s; %.2f s%s\n", what,
		       p->total[0].count[CNT_ON_CPU] + p->total[0].count[CNT_IDLE],
		       totals[0] ? ", " : "", totals, req1 - req0, req1 - req0 == 1 ? "" : "s",
		       (double)(b1 - b0) / 1024.0,
		       ret != EXIT_SPOOLED ? "" : defer ? " (kept in the spool, in order)"
						: " (the rest kept in the spool)", secs_since(t0), built);
		fflush(stdout);
	}
	view_free(view);
	profile_free(p);
	return ret;
}

/*
 * @r, an upload's exit status, into the watcher's: a request kept in the
 * spool counts only while it is there (w->spool_pending, at the end), so
 * a backend that failed then recovered ends in 0, not 4 with an empty spool.
 */
static void note_status(struct watch *w, int r)
{
	if (r != EXIT_SPOOLED)
		w->status = exit_worst(w->status, r);
}

/* One finished file: its profile, uploaded to every format; -1: not read. */
static int send_one(struct watch *w, const char *name)
{
	char path[PATH_MAX], held[64];
	struct profile *p = NULL;
	struct timespec t0;
	int built, fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", w->dir, name) >= sizeof(path)) {
		pp_error("'%s/%s': the path is too long", w->dir, name);
		return -1;
	}
	/* opened without waiting and checked on its descriptor: a file
	 * swapped for a FIFO (or a link to a device) since the scan is
	 * skipped, never waited on; the file read is the one checked */
	fd = watch_open_regular(path, false);
	if (fd < 0) {
		if (errno == ENOENT)
			return -2;
		pp_error("'%s': not read: %s: not sent, and kept (the state file names it with '!')",
			 path, errno == EINVAL ? "no longer a regular file"
			       : errno == ELOOP ? "now a symbolic link" : strerror(errno));
		return -1;
	}
	snprintf(held, sizeof(held), "/proc/self/fd/%d", fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	w->po.o.shown = path;
	built = profile_build(held, &w->po.o, &p);
	w->po.o.shown = NULL;
	close(fd);
	w->po.o.warn_estimated_time = false; /* said once: every file is recorded alike */
	if (!p) {
		pp_error("'%s': not read: not sent, and kept (the state file names it with '!')",
			 path);
		return -1;
	}
	/* the line said for it: a name's control bytes are never a line break */
	snprintf(path, sizeof(path), "%s", name);
	for (char *c = path; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return upload_profile(w, path, p, built == PP_EPARTIAL, &t0, false, -1);
}

/* Resend the spool when it is time; the backoff doubles while it fails. */
static void resend_due(struct watch *w, bool force)
{
	struct net_resend_stats st;
	time_t now = time(NULL);

	if (!w->spool_pending || (!force && now < w->next_resend) || w->spool_refused)
		return;
	/* a spool another user planted (or made writable) is never read nor
	 * written: the watcher stops with an error rather than hold every
	 * later file back without a word */
	if (net_spool_refused(NULL)) {
		w->spool_refused = true;
		w->status = exit_worst(w->status, EXIT_NOTHING);
		pp_error("the watcher stops: no file is sent while its spool '%s' cannot be used",
			 net_spool_dir());
		return;
	}
	if (net_resend(NULL, &st) == PP_OK && !st.kept) {
		if (st.delivered)
			pp_info("the spool: %u upload%s delivered", st.delivered,
				st.delivered == 1 ? "" : "s");
		w->spool_pending = false;
		w->backoff_s = w->resend_s;
		return;
	}
	pp_warn("the spool: %u delivered, %u still kept; next try in %u s", st.delivered,
		st.kept, w->backoff_s);
	w->next_resend = now + w->backoff_s;
	w->backoff_s = w->backoff_s * 2 > WATCH_RESEND_MAX_S ? WATCH_RESEND_MAX_S
							      : w->backoff_s * 2;
}

/* "200M", "5G", "512K", a bare number of MiB: 0, or -1 when it is none of those. */
static int parse_size(const char *arg, uint64_t *out)
{
	char *end;
	long v = strtol(arg, &end, 10);
	unsigned shift = !strcmp(end, "K") || !strcmp(end, "k") ? 10
			 : !strcmp(end, "G") || !strcmp(end, "g") ? 30
			 : !*end || !strcmp(end, "M") || !strcmp(end, "m") ? 20 : 0;

	/* compared before the shift: 2^44 MiB must not wrap to 0 */
	if (!shift || end == arg || v < 1 || (uint64_t)v > ((uint64_t)1 << 50) >> shift)
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static const struct option watch_opts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "format", required_argument, NULL, 'f' },
	{ "option", required_argument, NULL, 'O' },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "resend-every", required_argument, NULL, OPT_RESEND_EVERY },
	{ "spool-max", required_argument, NULL, OPT_SPOOL_MAX },
	{ "dwarf-max", required_argument, NULL, OPT_DWARF_MAX },
	{ "config", required_argument, NULL, OPT_CONFIG },
	NET_LONG_OPTIONS,
	PROFOPTS_LONG_OPTIONS,
	CLI_GLOBAL_LONG_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
#define WATCH_SHORT ":i:f:O:h" CLI_GLOBAL_SHORT SYMOPTS_SHORT

/* --- the configuration file (--config) --- */

static void cfg_free(struct cfg *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].value);
		free(c->args ? c->args[i] : NULL);
	}
	free(c->v);
	free(c->args);
	memset(c, 0, sizeof(*c));
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * Read @path: lines "KEY = VALUE" (or "KEY VALUE", or "KEY" alone for a
 * flag), '#' comments; every KEY a long option of @opts other than
 * config and help, checked here. Secrets have no place in it: the formats
 * read them from the environment. Return: 0, or EXIT_USAGE (said).
 */
#define CFG_MAX (1 << 20) /* a configuration larger is not one */
static int cfg_read(const char *path, const struct option *opts, struct cfg *c)
{
	char *text, *next;
	size_t len;
	unsigned no = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	/* a regular file only (--config /dev/zero or a FIFO would never
	 * end), read whole: a line is a line at any length */
	if (watch_read_small(path, "the configuration", CFG_MAX, &text, &len))
		return EXIT_USAGE;
	if (strlen(text) != len) {
		pp_error("'%s': a NUL byte: not a configuration", path);
		free(text);
		return EXIT_USAGE;
	}
	for (char *line = text; !ret && line; line = next) {
		char *s, *key, *val, *sep;
		const struct option *o = NULL;
		struct cfg_item *v;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		s = trim(line);
		no++;
		if (!*s || *s == '#')
			continue;
		sep = s + strcspn(s, "= \t");
		val = *sep ? sep + 1 : sep;
		*sep = '\0';
		key = s;
		val = trim(val);
		if (*val == '=')
			val = trim(val + 1);
		for (size_t i = 0; opts[i].name; i++)
			if (!strcmp(opts[i].name, key) && strcmp(key, "config") && strcmp(key, "help"))
				o = &opts[i];
		if (!o) {
			const char *names[64];
			size_t nn = 0;
			char buf[1024];

			for (size_t i = 0; opts[i].name && nn < 64; i++)
				if (strcmp(opts[i].name, "config") && strcmp(opts[i].name, "help"))
					names[nn++] = opts[i].name;
			pp_error("'%s', line %u: '%s' is not an option of perfport watch%s", path, no,
				 key, cli_choices(buf, sizeof(buf), key, names, nn));
			ret = EXIT_USAGE;
			break;
		}
		if ((o->has_arg == required_argument) != (*val != '\0')) {
			pp_error("'%s', line %u: '%s' %s", path, no, key,
				 *val ? "takes no value" : "needs a value");
			ret = EXIT_USAGE;
			break;
		}
		v = realloc(c->v, (c->n + 1) * sizeof(*c->v));
		if (!v) {
			ret = EXIT_NOTHING;
			break;
		}
		c->v = v;
		c->v[c->n].key = strdup(key);
		c->v[c->n].value = *val ? strdup(val) : NULL;
		c->n++;
		if (!c->v[c->n - 1].key || (*val && !c->v[c->n - 1].value))
			ret = EXIT_NOTHING;
	}
	free(text);
	if (!ret) {
		c->args = calloc(c->n ? c->n : 1, sizeof(*c->args));
		for (size_t i = 0; c->args && i < c->n; i++)
			if (asprintf(&c->args[i], "--%s%s%s", c->v[i].key, c->v[i].value ? "=" : "",
				     c->v[i].value ? c->v[i].value : "") < 0)
				c->args[i] = NULL;
		for (size_t i = 0; c->args && i < c->n; i++)
			if (!c->args[i])
				ret = EXIT_NOTHING;
		if (!c->args)
			ret = EXIT_NOTHING;
	}
	if (ret == EXIT_NOTHING)
		pp_error("%s", pp_strerror(PP_ENOMEM));
	if (ret)
		cfg_free(c);
	return ret;
}

/* The value of --config in @argv (either form), or NULL. */
static const char *cfg_path(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
	}
	return NULL;
}

/*
 * SIGHUP with files: once the file being sent is done, the watcher runs
 * itself again with the same command line, reading its configuration
 * anew; the state file and the spool carry on.
 */
static void reexec(void)
{
	char buf[65536], *argv[256];
	sigset_t old;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	size_t argc = 0;

	if (fd >= 0)
		close(fd);
	if (n <= 0 || (size_t)n == sizeof(buf) - 1) {
		pp_error("SIGHUP: cannot read this process's command line: the configuration "
			 "is not read again");
		return;
	}
	buf[n] = '\0';
	for (char *p = buf; p < buf + n && argc < 255; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	pp_info("SIGHUP: running again to read the configuration anew");
	fflush(stdout);
	fflush(stderr);
	/* exec sets every handler back to its default, which ends the
	 * process: the signals stay blocked across it (the mask is kept)
	 * and wait, each at most once, until the new image has its
	 * handlers; any number of SIGHUPs meanwhile make one more reload */
	pthread_sigmask(SIG_BLOCK, &watch_sigs, &old);
	/* what this image made to be removed at its end (a perf archive's
	 * private directory) goes now: exec runs no atexit(), and the new
	 * image makes its own */
	cleanup_run();
	execv("/proc/self/exe", argv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pp_error("SIGHUP: cannot run again: %s", strerror(errno));
}

/* @argv with the configuration's options after its first word; NULL out of memory. */
static char **cfg_merge(int argc, char **argv, const struct cfg *c, int *n)
{
	char **m = calloc((size_t)argc + c->n + 1, sizeof(*m));

	if (!m)
		return NULL;
	m[0] = argv[0];
	for (size_t i = 0; i < c->n; i++)
		m[1 + i] = c->args[i];
	for (int i = 1; i < argc; i++)
		m[c->n + (size_t)i] = argv[i];
	*n = argc + (int)c->n;
	return m;
}

/*
 * SIGHUP with a stream: its windows go on, so only what the formats are
 * given is read again - the formats, their -O options, the labels, the
 * plugin directory - from the configuration and the command line; on any
 * error what was in use stays. Called on the sending thread, which alone
 * runs the formats.
 */
static void reload(struct watch *w)
{
	const char *formats = NULL, *plugin_dir = NULL, *labels[SETTINGS_MAX];
	struct setting settings[SETTINGS_MAX];
	struct exporters ex = { .n = 0 };
	size_t nr_set = 0, nr_labels = 0;
	struct profile_opts before = w->po.o, after = w->po.o;
	struct cfg c;
	char **args;
	int n, opt, r;

	if (!w->config) {
		pp_warn("SIGHUP: there is no configuration file (--config) to read again");
		return;
	}
	if (cfg_read(w->config, watch_opts, &c)) {
		pp_error("SIGHUP: the formats and their options stay as they were");
		return;
	}
	args = cfg_merge(w->argc, w->argv, &c, &n);
	if (!args) {
		cfg_free(&c);
		return;
	}
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(n, args, WATCH_SHORT, watch_opts, NULL)) != -1) {
		if (opt == 'f')
			formats = optarg;
		else if (opt == 'O' && nr_set < SETTINGS_MAX && !setting_parse(optarg, &settings[nr_set]))
			nr_set++;
		else if (opt == OPT_LABEL && nr_labels < SETTINGS_MAX)
			labels[nr_labels++] = optarg;
		else if (opt == OPT_PLUGIN_DIR)
			plugin_dir = optarg;
	}
	r = formats ? exporters_load("watch", formats, plugin_dir, settings, nr_set, true, &ex)
		    : EXIT_USAGE;
	for (size_t i = 0; i < nr_set; i++)
		setting_free(&settings[i]);
	if (r != EXIT_FULL) {
		exporters_free(&ex);
		free(args);
		cfg_free(&c);
		pp_error("SIGHUP: the formats and their options stay as they were");
		return;
	}
	exporters_profile_opts(&ex, true, w->po.group_given, &after);
	after.frames_by_line = false;   /* watch hands no lines on (its view says so) */
	if (after.group_by != before.group_by || after.slice_ns != before.slice_ns ||
	    after.timeline != before.timeline)
		pp_warn("SIGHUP: the new formats want the profile built otherwise (per thread, "
			"in slices or with a timeline): that takes a restart; until then they get it "
			"as it is built");
	exporters_free(&w->ex);
	w->ex = ex;
	memcpy(w->labels, labels, nr_labels * sizeof(*labels));
	w->nr_labels = nr_labels;
	free(w->args);
	cfg_free(&w->cfg);
	w->args = args;
	w->cfg = c;
	pp_info("SIGHUP: the configuration '%s' read again: %zu format%s", w->config, ex.n,
		ex.n == 1 ? "" : "s");
}

/* Every finished file not sent yet, in order; then --keep. */
static int scan(struct watch *w)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(w->dir);
	int ret = 0;

	if (!d) {
		pp_error("cannot read directory '%s': %s", w->dir, strerror(errno));
		return PP_EIO;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!rotation_stamp(de->d_name) ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", w->dir, de->d_name) >= sizeof(path) ||
		    lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			char **nn = realloc(names, c * sizeof(*nn));

			if (!nn) {
				ret = PP_ENOMEM;
				break;
			}
			names = nn;
			cap = c;
		}
		if (!(names[n] = strdup(de->d_name))) {
			ret = PP_ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (!ret && n)
		qsort(names, n, sizeof(*names), rotation_cmp);
	if (!ret)
		ret = state_compact(w, names, n);
	for (size_t i = 0; !ret && i < n && !watch_stop && !atomic_load(&watch_hup); i++) {
		char bang[NAME_MAX + 2];
		int r;

		if (!names[i] || is_done(w, names[i]))
			continue;
		/* in order: nothing newer goes out while an older file's
		 * upload waits in the spool */
		resend_due(w, false);
		if (w->spool_refused)
			break;
		if (w->spool_pending) {
			if (w->once)
				pp_warn("'%s' and later files are not sent: an earlier upload waits "
					"in the spool '%s' (the next run sends it first)", names[i],
					net_spool_dir());
			break;
		}
		r = send_one(w, names[i]);
		if (r == -2)
			continue; /* gone since the scan */
		note_status(w, r < 0 ? EXIT_NOTHING : r);
		w->windows++;
		/* a format that refused or failed it, not keeping it in the
		 * spool: not sent, so never named sent */
		if (r == EXIT_NOTHING || r == EXIT_USAGE)
			pp_error("'%s/%s': not sent: a format refused or failed it; kept (the state "
				 "file names it with '!')", w->dir, names[i]);
		snprintf(bang, sizeof(bang), "/%s", names[i]);
		ret = wset_add(&w->done, r < 0 || r == EXIT_NOTHING || r == EXIT_USAGE ? bang : names[i]);
		if (!ret)
			ret = state_save(w);
	}
	if (!ret && keep_newest(w, names, n)) {
		ret = state_compact(w, names, n); /* the names removed leave the state */
		if (!ret)
			ret = state_save(w);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (ret == PP_ENOMEM)
		pp_error("%s", pp_strerror(ret));
	return ret;
}

/* Follow the directory until SIGINT or SIGTERM (or once through with --once). */
static int follow(struct watch *w)
{
	int fd = -1, ret;

	if (!w->once) {
		fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (fd < 0 || inotify_add_watch(fd, w->dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
			pp_warn("cannot watch '%s' with inotify (%s): it is read every %d s",
				w->dir, strerror(errno), WATCH_RESCAN_MS / 1000);
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

		ret = scan(w);
		if (!ret && !watch_stop && atomic_exchange(&watch_hup, 0)) {
			if (fd >= 0)
				close(fd);
			reexec(); /* returns only when it failed */
			fd = -1;
			continue;
		}
		if (ret || w->once || watch_stop || w->spool_refused)
			break;
		int ms = WATCH_RESCAN_MS;

		if (w->spool_pending) {
			time_t now = time(NULL);

			ms = w->next_resend <= now ? 0
			     : w->next_resend - now < WATCH_RESCAN_MS / 1000 ? (int)(w->next_resend - now) * 1000
			     : WATCH_RESCAN_MS;
		}
		if (poll(&pfd, fd >= 0 ? 1 : 0, ms) > 0)
			while (read(fd, buf, sizeof(buf)) > 0)
				;
		if (watch_stop)
			break;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/* --- a stream cut into windows (-i) --- */

/* "HH:MM:SS.mmm" (UTC) of @ns, into @buf */
static const char *clock_text(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
	else
		snprintf(buf + strlen(buf), len - strlen(buf), ".%03u",
			 (unsigned)(ns % 1000000000u / 1000000u));
	return buf;
}

/*
 * The sending thread: windows in the order they were built; while an
 * earlier upload waits in the spool, or windows pile up behind a slow
 * backend, they go straight to the spool (in order), which is resent
 * when due.
 */
static void *sender(void *arg)
{
	struct watch *w = arg;

	thread_role("send");
	for (;;) {
		struct queued it;
		char what[80], a[32], b[32];
		size_t backlog;
		bool defer;

		pthread_mutex_lock(&w->mu);
		/* what waits in the spool is resent when due, windows or none:
		 * a quiet stream, or one whose windows all came while uploads
		 * fell behind, does not hold it until its next window */
		while (!w->q_len && !w->q_done && !(w->spool_pending && !w->spool_refused &&
						     time(NULL) >= w->next_resend)) {
			if (w->spool_pending && !w->spool_refused) {
				struct timespec due = { w->next_resend, 0 };

				pthread_cond_timedwait(&w->got, &w->mu, &due);
			} else {
				pthread_cond_wait(&w->got, &w->mu);
			}
		}
		if (!w->q_len && !w->q_done) {
			pthread_mutex_unlock(&w->mu);
			resend_due(w, false);
			continue;
		}
		if (!w->q_len) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		it = w->q[w->q_head];
		w->q_head = (w->q_head + 1) % WATCH_QUEUE;
		backlog = --w->q_len;
		pthread_cond_signal(&w->put);
		pthread_mutex_unlock(&w->mu);

		if (atomic_exchange(&watch_hup, 0))
			reload(w);
		resend_due(w, false);
		defer = w->spool_pending || backlog >= WATCH_QUEUE / 2;
		if (defer && !w->spool_pending && !w->said_behind) {
			pp_warn("the uploads fall behind the windows (%zu waiting): windows go to the "
				"spool '%s' in order, and are sent from there as soon as the sender "
				"is free", backlog + 1, net_spool_dir());
			w->said_behind = true;
		}
		snprintf(what, sizeof(what), "window %s-%s", clock_text(it.p->meta.start_ns, a, sizeof(a)),
			 clock_text(it.p->meta.end_ns, b, sizeof(b)));
		note_status(w, upload_profile(w, what, it.p, it.partial, &it.built, defer, it.cpu));
		w->windows++;
	}
	return NULL;
}

/* profile_build_windows()'s consumer: queue the window for the sender. */
static int queue_window(void *ctx, struct profile *p, bool partial)
{
	struct watch *w = ctx;
	struct timespec cpu;
	double now;
	size_t at;

	/* this thread's CPU since the last window: what reading and
	 * counting this one cost (the first carries the start-up) */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	now = (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9;
	pthread_mutex_lock(&w->mu);
	if (w->q_len == WATCH_QUEUE && !w->q_waited) {
		pp_warn("the uploads are slower than the windows come: reading waits for them");
		w->q_waited = true;
	}
	while (w->q_len == WATCH_QUEUE)
		pthread_cond_wait(&w->put, &w->mu);
	at = (w->q_head + w->q_len) % WATCH_QUEUE;
	w->q[at] = (struct queued){ p, partial, { 0, 0 }, now - w->cpu_last };
	w->q_made++;
	w->q_partly |= partial;
	w->cpu_last = now;
	clock_gettime(CLOCK_MONOTONIC, &w->q[at].built);
	w->q_len++;
	pthread_cond_signal(&w->got);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* Read the stream to its end (or SIGINT/SIGTERM), a profile per window. */
static int follow_stream(struct watch *w)
{
	pthread_t th;
	int ret, r;

	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->put, NULL);
	pthread_cond_init(&w->got, NULL);
	r = pthread_create(&th, NULL, sender, w);
	if (r) {
		pp_error("cannot start the sending thread: %s", strerror(r));
		return PP_ENOMEM;
	}
	w->po.o.stop = &watch_stop;
	ret = profile_build_windows(w->input, &w->po.o, w->window_ns, queue_window, w);
	pthread_mutex_lock(&w->mu);
	w->q_done = true;
	pthread_cond_signal(&w->got);
	pthread_mutex_unlock(&w->mu);
	pthread_join(th, NULL);
	pthread_cond_destroy(&w->got);
	pthread_cond_destroy(&w->put);
	pthread_mutex_destroy(&w->mu);
	/* the stream ended, at its end or at SIGINT/SIGTERM (which let the
	 * windows read be sent, as its end does): what waits is sent now,
	 * once; the windows put off behind a slow backend are among it (a
	 * second signal stops the uploads: what is left is kept there) */
	if (w->spool_pending)
		resend_due(w, true);
	/* what no window said: a stream cut short, or holding no sample,
	 * ended with 3 or 0 and not a word (export says both) */
	if (ret == PP_EPARTIAL && !w->q_partly)
		pp_warn_status("'%s': read partly: records skipped or the data ends early%s",
			       w->input, w->q_made ? ", after its last window" : "");
	if ((ret == PP_OK || ret == PP_EPARTIAL || ret == PP_ESTOPPED) && !w->q_made)
		pp_warn("'%s' held no sample to cut into windows: nothing sent", w->input);
	if (ret == PP_EPARTIAL) {
		w->status = exit_worst(w->status, EXIT_PARTIAL);
		ret = 0;
	}
	return ret == PP_ESTOPPED ? 0 : ret;
}

/* "30s", "500ms", "2m", "1.5s" (a bare number: seconds) into ns; 0 if malformed. */
static uint64_t parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1e9;

	if (end == s || v <= 0)
		return 0;
	if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mul = 60e9;
	else if (*end && strcmp(end, "s"))
		return 0;
	v *= mul;
	return v >= 1e6 && v <= 86400e9 ? (uint64_t)v : 0;
}

static void watch_usage(FILE *out)
{
	fprintf(out,
		"usage: perfport watch DIR -f FORMAT[,FORMAT...] [-O [FORMAT.]KEY=VALUE]...\n"
		"                      [--label KEY=VALUE]... [--keep N] [--state FILE]\n"
		"                      [--once] [--resend-every S] [--config FILE]\n"
		"                      [--spool-max SIZE] [transport options]\n"
		"                      [--plugin-dir DIR] [profile options]\n"
		"       perfport watch -i FILE|- [--window DURATION] -f FORMAT[,FORMAT...] ...\n"
		"\n"
		"Continuous profiling from perf, each window uploaded as 'perfport upload'\n"
		"does to every format asked for, in order, with a line saying what it\n"
		"held and sent.\n"
		"\n"
		"Rotating files: with 'perf record --switch-output=30s -o DIR/perf.data'\n"
		"running, perf renames each finished file to perf.data.<timestamp>; each\n"
		"is one window. DIR is read at start and followed until SIGINT or\n"
		"SIGTERM, which let the file being sent finish (a second one ends at\n"
		"once). A state file says which files were sent, so that a restart sends\n"
		"none twice. An upload that fails is kept in the watcher's spool and sent\n"
		"again, with a backoff; later files wait on disk until it is delivered.\n"
		"Files are never removed unless --keep says so. DIR may be one others can\n"
		"write: nothing is written through a link planted there, a FIFO or device\n"
		"in a file's place is skipped, and a spool not this user's is an error.\n"
		"\n"
		"A stream: 'perf record -o - ... | perfport watch -i - --window 30s' cuts\n"
		"the stream into windows by sample time (from its first sample); a\n"
		"window ends once perf's ordering shows nothing earlier can come, and\n"
		"the last at the end of the stream or at SIGINT/SIGTERM. Threads, maps\n"
		"and names carry from window to window. Windows are sent by a thread of\n"
		"their own; while an earlier one waits in the spool, or uploads fall\n"
		"behind, they go to the spool in order and are resent from there (a\n"
		"failure after a backoff, windows put off as soon as the sender is\n"
		"free). At the stream's end, and at SIGINT/SIGTERM, the spool is tried\n"
		"once more; a second SIGINT/SIGTERM ends the upload in flight and keeps\n"
		"it and every window read in the spool, and perfport ends by the signal.\n"
		"\n"
		"options:\n"
		"  -i, --input FILE        a stream to cut into windows (- for stdin)\n"
		"      --window DURATION   the windows' length with -i: 30s (default), 500ms, 2m\n"
		"  -f, --format LIST       formats, comma-separated (required; each must upload)\n"
		"  -O, --option F.KEY=VAL  a format's option, as 'perfport upload' takes it\n"
		"      --label KEY=VALUE   a label handed to every format (service, env...)\n"
		"      --keep N            keep the N newest files sent and remove older\n"
		"                          ones (default: keep every file)\n"
		"      --state FILE        which files were sent (default DIR/" WATCH_STATE_NAME ")\n"
		"      --once              send what is there and exit, without following\n"
		"      --resend-every S    try the spool again S seconds after a failure,\n"
		"                          doubling up to %d s (default 30)\n"
		"      --config FILE       options from FILE (a regular file, 1 MiB at most),\n"
		"                          one per line (KEY = VALUE, a flag's KEY alone;\n"
		"                          '#' comments), before the command line's; read\n"
		"                          again at SIGHUP\n"
		"      --plugin-dir DIR    look for plugins in DIR first\n"
		"      --spool-max SIZE    what the spool may hold (default 1G; 200M, 512K):\n"
		"                          beyond it the oldest requests are dropped, and\n"
		"                          counted in the log\n"
		"      --dwarf-max SIZE    what naming may hold in memory (debug information,\n"
		"                          its indexes, the names made; default 48M): past\n"
		"                          it, the least recently used files' is let go\n"
		"                          between windows or rotated files (libdw's part\n"
		"                          first, then the names, then the indexes) and\n"
		"                          made again when code in them is named\n"
		"      --spool DIR         the watcher's spool (default: the state file's\n"
		"                          path with .spool; with -i, $XDG_STATE_HOME/\n"
		"                          perfport/spool-watch)\n"
		"      --ca-file FILE, --timeout S, --retries N: as 'perfport upload'\n"
		PROFOPTS_HELP
		"  -h, --help              show this help\n"
		"\n"
		"exit status: 0 every file sent; 3 a file read partly; 4 an upload kept in the\n"
		"spool; 2 a file or an upload lost; 1 a bad command line.\n",
		WATCH_RESEND_MAX_S);
}

int cmd_watch(int argc, char **argv)
{
	struct watch w = { .keep = -1, .resend_s = 30, .spool_max = (uint64_t)1024 << 20,
			   .po.sym.o.use_proc_kallsyms = true };
	struct setting settings[SETTINGS_MAX];
	const char *formats = NULL, *plugin_dir = NULL, *state = NULL, *net_bad = NULL, *msg;
	struct net_config nc = { 0 };
	char spool[PATH_MAX + 8];
	size_t nr_set = 0;
	struct stat st;
	int opt, ret = EXIT_USAGE;
	char *end;
	const char *dir_only = NULL, *window = NULL;

	/* the configuration's options first: the command line's come after
	 * them, and a value given in both is the command line's */
	w.argc = argc;
	w.argv = argv;
	sigemptyset(&watch_sigs);
	sigaddset(&watch_sigs, SIGHUP);
	sigaddset(&watch_sigs, SIGINT);
	sigaddset(&watch_sigs, SIGTERM);
	w.config = cfg_path(argc, argv);
	if (w.config) {
		ret = cfg_read(w.config, watch_opts, &w.cfg);
		if (ret)
			goto out;
		w.args = cfg_merge(argc, argv, &w.cfg, &argc);
		if (!w.args) {
			ret = EXIT_NOTHING;
			goto out;
		}
		argv = w.args;
		ret = EXIT_USAGE;
	}
	while ((opt = getopt_long(argc, argv, WATCH_SHORT, watch_opts, NULL)) != -1) {
		switch (opt) {
		case 'i': w.input = optarg; break;
		case OPT_WINDOW: window = optarg; break;
		case 'f': formats = optarg; break;
		case 'O':
			if (nr_set == SETTINGS_MAX || setting_parse(optarg, &settings[nr_set])) {
				cli_usage_error("watch", "-O takes [FORMAT.]KEY=VALUE, not '%s'", optarg);
				goto out;
			}
			nr_set++;
			break;
		case OPT_LABEL:
			if (w.nr_labels == SETTINGS_MAX || !strchr(optarg, '=') || *optarg == '=') {
				cli_usage_error("watch", "--label takes KEY=VALUE, not '%s'", optarg);
				goto out;
			}
			w.labels[w.nr_labels++] = optarg;
			break;
		case OPT_PLUGIN_DIR: plugin_dir = optarg; break;
		case OPT_KEEP:
			errno = 0;
			w.keep = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || w.keep < 0) {
				cli_usage_error("watch", "--keep takes a count of files, not '%s'", optarg);
				goto out;
			}
			dir_only = "--keep";
			break;
		case OPT_STATE: state = optarg; dir_only = "--state"; break;
		case OPT_ONCE: w.once = true; dir_only = "--once"; break;
		case OPT_RESEND_EVERY: {
			long v = strtol(optarg, &end, 10);

			if (*end || !*optarg || v < 1 || v > WATCH_RESEND_MAX_S) {
				cli_usage_error("watch", "--resend-every takes 1 to %d seconds, not '%s'",
						WATCH_RESEND_MAX_S, optarg);
				goto out;
			}
			w.resend_s = (unsigned)v;
			break;
		}
		case OPT_SPOOL_MAX:
		case OPT_DWARF_MAX: {
			uint64_t v;

			if (parse_size(optarg, &v)) {
				cli_usage_error("watch", "--%s takes a size (200M, 5G, 512K; "
						"a bare number is MiB), not '%s'",
						opt == OPT_SPOOL_MAX ? "spool-max" : "dwarf-max", optarg);
				goto out;
			}
			if (opt == OPT_SPOOL_MAX)
				w.spool_max = v;
			else
				w.po.sym.o.dwarf_max = (size_t)v;
			break;
		}
		case OPT_CONFIG: break; /* read before: its options come first */
		case 'h':
			watch_usage(stdout);
			ret = EXIT_FULL;
			goto out;
		default:
			if (opt != '?' && opt != ':' &&
			    (cli_global_option(opt) || net_option(opt, optarg, &nc, &net_bad) ||
			     profopts_parse(opt, optarg, &w.po)))
				break;
			cli_bad_option("watch", opt, argv, watch_opts);
			goto out;
		}
	}
	if (w.input) {
		if (optind < argc) {
			cli_usage_error("watch", "unexpected argument '%s': -i reads one stream, "
				       "a directory is watched without -i", argv[optind]);
			goto out;
		}
		if (dir_only) {
			cli_usage_error("watch", "%s is for a directory of rotating files, not -i",
					dir_only);
			goto out;
		}
		w.window_ns = parse_duration(window ? window : "30s");
		if (!w.window_ns) {
			cli_usage_error("watch", "--window takes a duration from 1ms to 24h (30s, "
				       "500ms, 2m), not '%s'", window);
			goto out;
		}
	} else {
		if (optind + 1 != argc) {
			if (optind < argc)
				cli_usage_error("watch", "unexpected argument '%s'", argv[optind + 1]);
			else
				cli_usage_error("watch", "say which directory to watch (where perf "
					       "record --switch-output writes), or -i - for a pipe");
			goto out;
		}
		w.dir = argv[optind];
		if (strcmp(w.dir, "-") == 0) {
			cli_usage_error("watch", "a pipe is read with -i - (and --window)");
			goto out;
		}
		if (window) {
			cli_usage_error("watch", "--window cuts a stream (-i); a directory's "
				       "files are perf's own windows (--switch-output)");
			goto out;
		}
		if (stat(w.dir, &st) || !S_ISDIR(st.st_mode)) {
			cli_usage_error("watch", "'%s' is not a directory", w.dir);
			goto out;
		}
	}
	if (!formats || !*formats) {
		cli_usage_error("watch", "-f FORMAT is required ('perfport formats' lists them)");
		goto out;
	}
	if ((size_t)snprintf(w.state, sizeof(w.state), "%s", state ? state : "") >= sizeof(w.state) ||
	    (!state && w.dir && (size_t)snprintf(w.state, sizeof(w.state), "%s/%s", w.dir,
						 WATCH_STATE_NAME) >= sizeof(w.state))) {
		cli_usage_error("watch", "the state file's path is too long");
		goto out;
	}
	msg = profopts_finish(&w.po);
	if (msg || net_bad) {
		cli_usage_error("watch", "%s", msg ? msg : net_bad);
		goto out;
	}
	/* read for every file: a FIFO or a device there would hold the
	 * watcher for good */
	if (w.po.o.state_rules) {
		int fd = watch_open_regular(w.po.o.state_rules, true);

		if (fd < 0) {
			cli_usage_error("watch", "--state-rules '%s': %s", w.po.o.state_rules,
					errno == EINVAL ? "not a regular file" : strerror(errno));
			goto out;
		}
		close(fd);
	}
	if (profopts_prepare(&w.po, NULL)) {
		ret = EXIT_NOTHING;
		goto out;
	}
	/* the watcher's own spool, beside its state: what waits there holds
	 * back later files, so it must not be shared with other uploads */
	if (!nc.spool_dir) {
		if ((size_t)snprintf(spool, sizeof(spool), w.input ? "%s-watch" : "%s.spool",
				     w.input ? net_spool_dir() : w.state) >= sizeof(spool)) {
			cli_usage_error("watch", "the state file's path is too long");
			goto out;
		}
		nc.spool_dir = spool;
	}
	nc.resend_in_order = true;
	net_configure(&nc);
	ret = exporters_load("watch", formats, plugin_dir, settings, nr_set, true, &w.ex);
	if (ret != EXIT_FULL)
		goto out;
	exporters_profile_opts(&w.ex, true, w.po.group_given, &w.po.o);
	w.po.o.frames_by_line = false;  /* watch hands no lines on (its view says so) */
	/* its symbolizer outlives a SIGHUP that may name formats showing lines */
	w.po.o.sym.no_lines = false;
	w.po.o.warn_estimated_time = true;
	if (!w.input && state_load(&w)) {
		ret = EXIT_NOTHING;
		goto out;
	}
	/* what an earlier run left in the spool is tried at once */
	w.spool_pending = true;
	w.backoff_s = w.resend_s;
	w.next_resend = time(NULL);
	watch_main = pthread_self();
	watch_stream = w.input != NULL;
	/* SIGINT and SIGTERM end a stream's blocked read at once */
	cleanup_take_signals(take_signal);
	/* handled from now on: what came while a SIGHUP's exec ran (blocked
	 * by reexec(), the mask kept) is taken now */
	pthread_sigmask(SIG_UNBLOCK, &watch_sigs, NULL);
	resend_due(&w, true);
	if (w.spool_refused) {
		ret = EXIT_NOTHING;
		goto out;
	}
	if (!w.input) {
		/* perf's rotated files name the same files again: the symbol
		 * tables, debug information and names made stay from one file
		 * to the next, within --dwarf-max (the stream keeps its own) */
		struct sym_opts so = w.po.o.sym;

		if (!so.dwarf_max)
			so.dwarf_max = SYM_DWARF_MAX_DEFAULT;
		if (!so.idle_s)
			so.idle_s = SYM_IDLE_S_DEFAULT;
		if (!(w.po.o.sym_keep = sym_new(&so, NULL))) {
			pp_error("%s", pp_strerror(PP_ENOMEM));
			ret = EXIT_NOTHING;
			goto out;
		}
	}
	ret = (w.input ? follow_stream(&w) : follow(&w)) ? EXIT_NOTHING
		: exit_worst(w.status, w.spool_pending ? EXIT_SPOOLED : EXIT_FULL);
	if (watch_stop)
		pp_info("stopped by %s after %u %s%s", strsignal(watch_stop), w.windows,
			w.input ? "window" : "file", w.windows == 1 ? "" : "s");
	exporters_end_if_signalled(); /* a stream's second signal: ended by it */
out:
	sym_free(w.po.o.sym_keep);
	exporters_free(&w.ex);
	wset_free(&w.done);
	free(w.args);
	cfg_free(&w.cfg);
	for (size_t i = 0; i < nr_set; i++)
		setting_free(&settings[i]);
	return ret;
}
