/* SPDX-License-Identifier: MIT */
/*
 * host.c - finding, loading and checking exporter plugins, their options,
 * and running them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../net/net.h"
#include "../util/error.h"
#include "../util/log.h"
#include "../util/suggest.h"
#include "../util/outfile.h"
#include "perfport/version.h"
#include "plugin.h"

#ifndef PERFPORT_PLUGINDIR
#define PERFPORT_PLUGINDIR "/usr/local/lib/perfport/plugins"
#endif

/* The oldest exporter struct the host reads: ABI 1.0's, up to fini. */
#define EXPORTER_MIN_SIZE (offsetof(struct perfport_exporter, fini) + sizeof(void (*)(void *)))

struct plugin {
	void *dl;
	int fd;                      /* the file checked and loaded, open while it is */
	char *path;
	const struct perfport_exporter *ex;
	char **values;               /* per option of the table: set value, or NULL */
};

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Room is kept for the build tree's and installed directories (3). */
#define ENV_DIRS_MAX (PLUGIN_MAX_DIRS - 4)

void plugin_paths_default(struct plugin_paths *paths, const char *plugin_dir)
{
	static char *env_copy, exe_dir[PATH_MAX + 32], rel_dir[PATH_MAX + 64];
	const char *env = getenv("PERFPORT_PLUGIN_PATH");
	ssize_t n;

	paths->nr = 0;
	if (plugin_dir)
		paths->dirs[paths->nr++] = plugin_dir;
	/* the whole list, however long: a path is never cut (a cut one names
	 * another directory) */
	free(env_copy);
	env_copy = env && *env ? strdup(env) : NULL;
	if (env && *env && !env_copy)
		pp_warn("PERFPORT_PLUGIN_PATH: out of memory: not read");
	if (env_copy) {
		char *save = NULL, *d;
		size_t ignored = 0;

		for (d = strtok_r(env_copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			if (!*d)
				continue;
			if (strlen(d) >= PATH_MAX) {
				pp_warn("PERFPORT_PLUGIN_PATH: a directory of %zu bytes, longer than a "
					"path can be (%d): ignored", strlen(d), PATH_MAX - 1);
				continue;
			}
			if (paths->nr < ENV_DIRS_MAX)
				paths->dirs[paths->nr++] = d;
			else
				ignored++;
		}
		if (ignored)
			pp_warn("PERFPORT_PLUGIN_PATH: %zu directories past the first %d ignored",
				ignored, ENV_DIRS_MAX - (plugin_dir ? 1 : 0));
	}
	/* the build tree: build/perfport finds build/plugins */
	n = readlink("/proc/self/exe", exe_dir, PATH_MAX - 1);
	if (n > 0) {
		char *slash;

		exe_dir[n] = 0;
		slash = strrchr(exe_dir, '/');
		if (slash) {
			*slash = 0;
			/* an installed tree, wherever it was moved: bin/../lib/... */
			snprintf(rel_dir, sizeof(rel_dir), "%s/../lib/perfport/plugins", exe_dir);
			strcpy(slash, "/plugins");
			if (is_dir(exe_dir))
				paths->dirs[paths->nr++] = exe_dir;
			if (is_dir(rel_dir))
				paths->dirs[paths->nr++] = rel_dir;
		}
	}
	paths->dirs[paths->nr++] = PERFPORT_PLUGINDIR;
}

/* --- loading --- */

static int refuse(struct plugin *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct plugin *pl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pp_error("plugin '%s' refused: %s", pl->path, msg);
	return PP_EPLUGIN;
}

static bool valid_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* Is the descriptor one this host can use? Logs why not. */
static int check(struct plugin *pl)
{
	const struct perfport_exporter *ex = pl->ex;
	uint32_t major = ex->abi_version >> 16;

	if (major != PERFPORT_ABI_MAJOR)
		return refuse(pl, "built for plugin ABI %u.%u, this perfport speaks %u.%u", major,
			      ex->abi_version & 0xffff, PERFPORT_ABI_MAJOR, PERFPORT_ABI_MINOR);
	if (ex->struct_size < EXPORTER_MIN_SIZE)
		return refuse(pl, "its struct perfport_exporter is %u bytes, at least %zu expected",
			      ex->struct_size, (size_t)EXPORTER_MIN_SIZE);
	if (!valid_name(ex->name))
		return refuse(pl, "its format name is missing or not [a-z0-9-]+");
	if (!ex->init || !ex->write || !ex->fini)
		return refuse(pl, "init, write and fini are required");
	if (ex->nr_options && !ex->options)
		return refuse(pl, "it declares %zu options but no table", ex->nr_options);
	for (size_t i = 0; i < ex->nr_options; i++) {
		const struct perfport_option_def *d = &ex->options[i];

		if (!d->name || !*d->name)
			return refuse(pl, "option %zu has no name", i);
		if ((d->type == PERFPORT_OPT_ENUM || d->type == PERFPORT_OPT_LIST) && !d->choices)
			return refuse(pl, "option '%s' has no choices", d->name);
		if (d->type > PERFPORT_OPT_LIST)
			return refuse(pl, "option '%s' has an unknown type %d", d->name, (int)d->type);
	}
	return PP_OK;
}

/*
 * Why the plugin open on @fd (at @path) must not be loaded, as ld.so's
 * secure mode refuses a library: not a regular file, not owned by root or
 * this user, writable by others than its owner; or its directory writable
 * by others (anyone could put a plugin there). NULL: it may be loaded.
 */
static const char *unsafe(int fd, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (fstat(fd, &st))
		return "it cannot be examined";
	if (!S_ISREG(st.st_mode))
		return "it is not a regular file";
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return "it is owned by another user";
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return "it is writable by others than its owner";
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	if (stat(dir, &st))
		return "its directory cannot be examined";
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return "its directory is owned by another user";
	if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != getegid()))
		return "its directory is writable by other users";
	return NULL;
}

int plugin_load_file(const char *path, struct plugin **out)
{
	struct plugin *pl = calloc(1, sizeof(*pl));
	char fdpath[64];
	const char *why;
	int ret, fd;

	*out = NULL;
	if (!pl)
		return PP_ENOMEM;
	pl->path = strdup(path);
	if (!pl->path) {
		free(pl);
		return PP_ENOMEM;
	}
	/* checked before dlopen() runs any of its code, and loaded from the
	 * very file checked (by its descriptor: no swap in between) */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = refuse(pl, errno == ELOOP ? "it is a symbolic link" : "cannot open it: %s",
			     strerror(errno));
		goto fail;
	}
	why = unsafe(fd, path);
	if (why) {
		close(fd);
		ret = refuse(pl, "%s", why);
		goto fail;
	}
	/* the descriptor stays open while the plugin is loaded: ld.so knows a
	 * library by its name, and another plugin on the same number would
	 * be taken for this one */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	pl->dl = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
	if (!pl->dl && access("/proc/self/fd", F_OK))
		pl->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);   /* no /proc */
	pl->fd = fd;
	if (!pl->dl) {
		ret = refuse(pl, "cannot load it: %s", dlerror());
		goto fail;
	}
	pl->ex = dlsym(pl->dl, PERFPORT_EXPORTER_SYMBOL);
	if (!pl->ex) {
		ret = refuse(pl, "it does not export '%s'", PERFPORT_EXPORTER_SYMBOL);
		goto fail;
	}
	ret = check(pl);
	if (ret)
		goto fail;
	pl->values = calloc(pl->ex->nr_options + 1, sizeof(*pl->values));
	if (!pl->values) {
		ret = PP_ENOMEM;
		goto fail;
	}
	*out = pl;
	return PP_OK;
fail:
	plugin_unload(pl);
	return ret;
}

int plugin_load(const char *name, const struct plugin_paths *paths, struct plugin **out)
{
	char path[PATH_MAX];

	*out = NULL;
	if (!valid_name(name)) {
		pp_error("'%s' is not a format name ([a-z0-9-]+)", name);
		return PP_ENOENT;
	}
	for (size_t i = 0; i < paths->nr; i++) {
		snprintf(path, sizeof(path), "%s/%s.so", paths->dirs[i], name);
		if (access(path, F_OK) == 0)
			return plugin_load_file(path, out);
	}
	return PP_ENOENT;
}

void plugin_unload(struct plugin *pl)
{
	if (!pl)
		return;
	if (pl->values)
		for (size_t i = 0; i < pl->ex->nr_options; i++)
			free(pl->values[i]);
	free(pl->values);
	if (pl->dl)
		dlclose(pl->dl);
	if (pl->fd > 0)
		close(pl->fd);
	free(pl->path);
	free(pl);
}

const struct perfport_exporter *plugin_exporter(const struct plugin *pl)
{
	return pl->ex;
}

const char *plugin_path(const struct plugin *pl)
{
	return pl->path;
}

/* --- options --- */

static bool in_choices(const char *choices, const char *word, size_t len)
{
	const char *p = choices;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == len && strncmp(p, word, len) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/* The value as the plugin gets it (NULL: invalid). Booleans normalised. */
static char *option_value(const struct perfport_option_def *d, const char *v)
{
	char *end;

	switch (d->type) {
	case PERFPORT_OPT_BOOL:
		if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1") ||
		    !strcasecmp(v, "on"))
			return strdup("true");
		if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcmp(v, "0") ||
		    !strcasecmp(v, "off"))
			return strdup("false");
		return NULL;
	case PERFPORT_OPT_INT:
		errno = 0;
		(void)strtoll(v, &end, 10);
		return *v && !*end && !errno ? strdup(v) : NULL;
	case PERFPORT_OPT_ENUM:
		return in_choices(d->choices, v, strlen(v)) ? strdup(v) : NULL;
	case PERFPORT_OPT_LIST:
		for (const char *p = v; *p;) {
			size_t n = strcspn(p, ",");

			if (!n || !in_choices(d->choices, p, n))
				return NULL;
			p += n;
			if (*p == ',' && !*++p)
				return NULL;
		}
		return *v ? strdup(v) : NULL;
	default:
		return strdup(v);
	}
}

/* The choice of @choices ("a,b,c") nearest to the first of @value's items
 * that is none of them, into @out; "" when none is near. */
static void choice_near(const char *choices, const char *value, char *out, size_t len)
{
	char buf[1024], item[128], *names[64], *save = NULL;
	const char *near;
	size_t n = 0;

	out[0] = '\0';
	snprintf(buf, sizeof(buf), "%s", choices);
	for (char *t = strtok_r(buf, ",", &save); t && n < 64; t = strtok_r(NULL, ",", &save))
		names[n++] = t;
	for (const char *p = value; *p;) {
		size_t k = strcspn(p, ",");

		if (k < sizeof(item) && !in_choices(choices, p, k)) {
			memcpy(item, p, k);
			item[k] = '\0';
			near = suggest_nearest(item, (const char *const *)names, n);
			if (near)
				snprintf(out, len, "%s", near);
			return;
		}
		p += k;
		p += *p == ',';
	}
}

int plugin_set_option(struct plugin *pl, const char *key, const char *value)
{
	const struct perfport_exporter *ex = pl->ex;

	for (size_t i = 0; i < ex->nr_options; i++) {
		const struct perfport_option_def *d = &ex->options[i];
		char *v;

		if (strcmp(d->name, key) != 0)
			continue;
		v = option_value(d, value);
		if (!v) {
			if (d->type == PERFPORT_OPT_ENUM || d->type == PERFPORT_OPT_LIST) {
				char near[64] = "";

				choice_near(d->choices, value, near, sizeof(near));
				pp_error("format '%s': option '%s' takes %s%s, not '%s'%s%s%s", ex->name, key,
					 d->type == PERFPORT_OPT_LIST ? "a comma-separated list of " : "",
					 d->choices, value, near[0] ? "; did you mean '" : "", near,
					 near[0] ? "'?" : "");
			}
			else
				pp_error("format '%s': option '%s' takes %s, not '%s'", ex->name, key,
					 d->type == PERFPORT_OPT_BOOL ? "true or false" :
					 d->type == PERFPORT_OPT_INT ? "an integer" : "a value", value);
			return PP_EUSAGE;
		}
		free(pl->values[i]);
		pl->values[i] = v;
		return PP_OK;
	}
	{
		const char *names[64], *near;
		size_t n = 0;

		for (size_t i = 0; i < ex->nr_options && n < 64; i++)
			names[n++] = ex->options[i].name;
		near = suggest_nearest(key, names, n);
		pp_error("format '%s' has no option '%s'%s%s%s (see 'perfport formats %s')", ex->name,
			 key, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "",
			 ex->name);
	}
	return PP_EUSAGE;
}

/* The files a directory format made with host->create() during one write(). */
static struct {
	const char *format;
	const char *dir;             /* NULL: create() is refused */
	struct outfile *files;      /* each appears once the format succeeded */
	size_t nr;
} run;

static bool file_name_ok(const char *name)
{
	if (!*name || *name == '.' || strlen(name) > 255)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
			return false;
	return true;
}

FILE *plugin_create_file(const struct perfport_host *host, const char *name)
{
	struct outfile *m;
	char path[PATH_MAX];

	(void)host;
	if (!run.dir) {
		pp_error("format '%s': cannot make further files: it writes %s",
			 run.format ? run.format : "?", run.format ? "one file" : "nothing now");
		return NULL;
	}
	if (!name || !file_name_ok(name)) {
		pp_error("format '%s': refused file name '%s'", run.format, name ? name : "(null)");
		return NULL;
	}
	for (size_t i = 0; i < run.nr; i++) {
		const char *base = strrchr(run.files[i].path, '/');

		if (strcmp(base ? base + 1 : run.files[i].path, name) == 0) {
			pp_error("format '%s': file '%s' made twice", run.format, name);
			return NULL;
		}
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", run.dir, name) >= sizeof(path)) {
		pp_error("cannot write '%s/%s': %s", run.dir, name, strerror(ENAMETOOLONG));
		return NULL;
	}
	m = realloc(run.files, (run.nr + 1) * sizeof(*m));
	if (!m)
		return NULL;
	run.files = m;
	if (outfile_open(&run.files[run.nr], path))
		return NULL;
	return run.files[run.nr++].f;
}

/*
 * Finish what create() made: all of it put in place, or (if @failed, or if
 * any could not be written) none of it, the directory's earlier files left
 * as they were. Return: PP_OK or PP_EIO.
 */
static int run_files_close(bool failed)
{
	int ret = PP_OK;

	for (size_t i = 0; i < run.nr && !failed && !ret; i++)
		if (fflush(run.files[i].f) || ferror(run.files[i].f)) {
			pp_error("cannot write '%s': %s", run.files[i].path, strerror(errno));
			ret = PP_EIO;
		}
	for (size_t i = 0; i < run.nr; i++) {
		if (!failed && !ret)
			pp_debug("%s: '%s'", run.format, run.files[i].path);
		if (outfile_close(&run.files[i], !failed && !ret))
			ret = PP_EIO;
	}
	free(run.files);
	memset(&run, 0, sizeof(run));
	return ret;
}

bool plugin_is_directory(const struct plugin *pl)
{
	return PERFPORT_HAS(pl->ex, struct perfport_exporter, flags) &&
	       (pl->ex->flags & PERFPORT_EXPORTER_DIRECTORY);
}

bool plugin_wants_threads(const struct plugin *pl)
{
	return PERFPORT_HAS(pl->ex, struct perfport_exporter, flags) &&
	       (pl->ex->flags & PERFPORT_EXPORTER_BY_THREAD);
}

bool plugin_wants_slices(const struct plugin *pl)
{
	return PERFPORT_HAS(pl->ex, struct perfport_exporter, flags) &&
	       (pl->ex->flags & PERFPORT_EXPORTER_TIME_SLICES);
}

bool plugin_wants_samples(const struct plugin *pl)
{
	return PERFPORT_HAS(pl->ex, struct perfport_exporter, flags) &&
	       (pl->ex->flags & PERFPORT_EXPORTER_SAMPLES);
}

bool plugin_wants_lines(const struct plugin *pl)
{
	return PERFPORT_HAS(pl->ex, struct perfport_exporter, flags) &&
	       (pl->ex->flags & PERFPORT_EXPORTER_LINES);
}

bool plugin_shows_no_lines(const struct plugin *pl)
{
	/* a plugin of an ABI before 1.8 may have set bits it did not know */
	return PERFPORT_HAS(pl->ex, struct perfport_exporter, flags) &&
	       (pl->ex->abi_version & 0xffff) >= 8 &&
	       (pl->ex->flags & PERFPORT_EXPORTER_NO_LINES);
}

/* Every option of @pl's table, set or defaulted, as init() and check() get
 * them (calloc'd; the values are @pl's). NULL: out of memory. */
static struct perfport_option *options_array(struct plugin *pl)
{
	const struct perfport_exporter *ex = pl->ex;
	struct perfport_option *opts = calloc(ex->nr_options + 1, sizeof(*opts));

	if (!opts)
		return NULL;
	for (size_t i = 0; i < ex->nr_options; i++) {
		const struct perfport_option_def *d = &ex->options[i];

		opts[i].name = d->name;
		opts[i].value = pl->values[i];
		if (!opts[i].value && d->default_value) {
			/* defaults pass through the same normalisation */
			pl->values[i] = option_value(d, d->default_value);
			opts[i].value = pl->values[i] ? pl->values[i] : d->default_value;
		}
	}
	return opts;
}

int plugin_check(struct plugin *pl, bool write, bool upload)
{
	const struct perfport_exporter *ex = pl->ex;
	struct perfport_option *opts;
	enum perfport_status st;
	uint32_t mode = (write ? PERFPORT_CHECK_WRITE : 0) | (upload ? PERFPORT_CHECK_UPLOAD : 0);

	if (upload && !ex->upload) {
		pp_error("format '%s' writes files only: it cannot upload", ex->name);
		return PP_EUSAGE;
	}
	if (!PERFPORT_HAS(ex, struct perfport_exporter, check) || !ex->check)
		return PP_OK;
	opts = options_array(pl);
	if (!opts)
		return PP_ENOMEM;
	st = ex->check(plugin_host(), opts, ex->nr_options, mode);
	free(opts);
	if (st == PERFPORT_OK)
		return PP_OK;
	if (st != PERFPORT_USAGE) {
		pp_error("format '%s': its options could not be checked", ex->name);
		return PP_EPLUGIN;
	}
	return PP_EUSAGE;
}

bool plugin_wants_wall_clock(const struct plugin *pl)
{
	return PERFPORT_HAS(pl->ex, struct perfport_exporter, flags) &&
	       (pl->ex->flags & PERFPORT_EXPORTER_WALL_CLOCK);
}

int plugin_run(struct plugin *pl, const struct perfport_profile *view, FILE *out,
	       const char *dir, bool upload)
{
	const struct perfport_exporter *ex = pl->ex;
	struct perfport_option *opts;
	enum perfport_status st = PERFPORT_OK;
	void *state = NULL;
	int ret;

	if (upload && !ex->upload) {
		pp_error("format '%s' writes files only: it cannot upload", ex->name);
		return PP_EUSAGE;
	}
	opts = options_array(pl);
	if (!opts)
		return PP_ENOMEM;
	st = ex->init(plugin_host(), opts, ex->nr_options, &state);
	if (st != PERFPORT_OK) {
		/* USAGE: the user's options, which the plugin has said what is wrong with */
		if (st != PERFPORT_USAGE)
			pp_error("format '%s': init failed", ex->name);
		free(opts);
		return st == PERFPORT_USAGE ? PP_EUSAGE : PP_EPLUGIN;
	}
	ret = PP_OK;
	if (out) {
		run.format = ex->name;
		unsigned long errors = pp_log_errors();

		run.dir = plugin_is_directory(pl) ? dir : NULL;
		st = ex->write(state, view, out);
		if (st == PERFPORT_RETRY) /* what it wrote is gone: not tried again */
			pp_error("format '%s': writing failed for now (it asked to be retried; "
				 "writing is not)", ex->name);
		else if (st != PERFPORT_OK && pp_log_errors() == errors)
			pp_error("format '%s': writing failed", ex->name);
		ret = run_files_close(st != PERFPORT_OK);
	}
	if (st == PERFPORT_OK && !ret && upload) {
		unsigned long errors = pp_log_errors();

		/* RETRY: transient; called again as the transport retries a request */
		for (unsigned n = 1;; n++) {
			unsigned long wait;

			st = ex->upload(state, view);
			if (st != PERFPORT_RETRY || n >= net_attempts())
				break;
			wait = net_backoff_ms(n);
			pp_warn("format '%s': upload failed for now; attempt %u of %u in %.1f s",
				ex->name, n + 1, net_attempts(), wait / 1000.0);
			net_sleep_ms(wait);
		}
		/* each failure is said once: the plugin or the transport has
		 * mostly said why already */
		if (st != PERFPORT_OK && !net_deferring() &&
		    (st == PERFPORT_RETRY || pp_log_errors() == errors))
			pp_error("format '%s': upload failed%s", ex->name,
				 st == PERFPORT_RETRY ? " (still asking to be retried)" : "");
	}
	ex->fini(state);
	free(opts);
	if (ret)
		return ret;
	return st == PERFPORT_OK ? PP_OK : st == PERFPORT_USAGE ? PP_EUSAGE : PP_EPLUGIN;
}

/* --- listing --- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void plugin_list(const struct plugin_paths *paths, plugin_list_fn fn, void *ctx)
{
	char **seen = NULL;
	size_t nr_seen = 0;

	for (size_t i = 0; i < paths->nr; i++) {
		DIR *d = opendir(paths->dirs[i]);
		struct dirent *e;
		char **names = NULL;
		size_t nr = 0;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			char **nn;

			if (n < 4 || strcmp(e->d_name + n - 3, ".so") != 0)
				continue;
			nn = realloc(names, (nr + 1) * sizeof(*names));
			if (!nn)
				break;
			names = nn;
			names[nr] = strdup(e->d_name);
			if (names[nr])
				nr++;
		}
		closedir(d);
		if (nr)
			qsort(names, nr, sizeof(*names), cmp_str);
		for (size_t k = 0; k < nr; k++) {
			char path[PATH_MAX];
			struct plugin *pl = NULL;
			bool dup = false;

			for (size_t s = 0; s < nr_seen && !dup; s++)
				dup = strcmp(seen[s], names[k]) == 0;
			if (!dup) {
				char **ns = realloc(seen, (nr_seen + 1) * sizeof(*seen));

				if (!ns) {
					free(names[k]);
					continue;
				}
				seen = ns;
				seen[nr_seen++] = names[k];
				names[k] = NULL;
				snprintf(path, sizeof(path), "%s/%s", paths->dirs[i],
					 seen[nr_seen - 1]);
				plugin_load_file(path, &pl);
				fn(ctx, path, pl);
				plugin_unload(pl);
			}
			free(names[k]);
		}
		free(names);
	}
	for (size_t s = 0; s < nr_seen; s++)
		free(seen[s]);
	free(seen);
}
