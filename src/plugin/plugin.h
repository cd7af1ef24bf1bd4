/* SPDX-License-Identifier: MIT */
/*
 * plugin.h - the plugin host: finding, loading and checking exporter
 * plugins (include/perfport/plugin.h), their options, and the read-only
 * view of a finished profile they are given.
 */
#ifndef PLUGIN_PLUGIN_H
#define PLUGIN_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../profile/profile.h"
#include "perfport/plugin.h"

struct plugin;

/* Where plugins are looked for, in order. */
#define PLUGIN_MAX_DIRS 16

struct plugin_paths {
	const char *dirs[PLUGIN_MAX_DIRS];
	size_t nr;
};

/**
 * plugin_paths_default() - the search path: @plugin_dir (--plugin-dir, may
 * be NULL), each directory of $PERFPORT_PLUGIN_PATH, the build tree's
 * plugins beside the running binary (<dir of the binary>/plugins), an
 * installed tree's (<dir of the binary>/../lib/perfport/plugins), each if it
 * exists, then the plugin directory configured at build time. Never the current
 * directory unless named. The strings are static or from the environment.
 */
void plugin_paths_default(struct plugin_paths *paths, const char *plugin_dir);

/**
 * plugin_load() - find "<dir>/<name>.so" along @paths, load it and check it:
 * the exported symbol, the ABI major, the struct size, the name it gives.
 * Refusals are logged with the file and the reason.
 * Return: PP_OK with *@out set (free with plugin_unload()), PP_ENOENT if no
 * such plugin, PP_EPLUGIN if refused, PP_ENOMEM.
 */
int plugin_load(const char *name, const struct plugin_paths *paths, struct plugin **out);

/** plugin_load_file() - as plugin_load(), for one file. */
int plugin_load_file(const char *path, struct plugin **out);

/** plugin_unload() - fini if needed, dlclose, free. NULL is fine. */
void plugin_unload(struct plugin *pl);

/** plugin_exporter() - the plugin's descriptor (owned by the plugin). */
const struct perfport_exporter *plugin_exporter(const struct plugin *pl);

/** plugin_path() - the file it was loaded from. */
const char *plugin_path(const struct plugin *pl);

/**
 * plugin_set_option() - set option @key to @value, checked against the
 * plugin's table (unknown key, bad value: logged, PP_EUSAGE).
 */
int plugin_set_option(struct plugin *pl, const char *key, const char *value);

/**
 * plugin_is_directory() - does the format write a directory of files
 * (PERFPORT_EXPORTER_DIRECTORY)?
 */
bool plugin_is_directory(const struct plugin *pl);

/** plugin_wants_threads() - does the format read per-thread trees (PERFPORT_EXPORTER_BY_THREAD)? */
bool plugin_wants_threads(const struct plugin *pl);

/** plugin_wants_slices() - does the format upload by time (PERFPORT_EXPORTER_TIME_SLICES)? */
bool plugin_wants_slices(const struct plugin *pl);

/** plugin_wants_wall_clock() - does the format place the profile in wall-clock time (PERFPORT_EXPORTER_WALL_CLOCK)? */
bool plugin_wants_wall_clock(const struct plugin *pl);

/** plugin_wants_samples() - does the format show samples in time (PERFPORT_EXPORTER_SAMPLES)? */
bool plugin_wants_samples(const struct plugin *pl);

/** plugin_wants_lines() - does the format show cost per source line (PERFPORT_EXPORTER_LINES)? */
bool plugin_wants_lines(const struct plugin *pl);

/** plugin_shows_no_lines() - does the format show no frame's file or line (PERFPORT_EXPORTER_NO_LINES)? */
bool plugin_shows_no_lines(const struct plugin *pl);

/* The slice length perfport keeps for such formats: 5 s, SkyWalking Rover's
 * flush interval. */
#define PLUGIN_SLICE_NS 5000000000ull

/**
 * plugin_check() - before the recording is read: can @pl do what is asked
 * (@write: a file, @upload: a send) with the options set? Calls the
 * plugin's check() (ABI 1.6) when it has one, which logs what is wrong.
 *
 * Return: PP_OK, PP_EUSAGE (logged), PP_ENOMEM.
 */
int plugin_check(struct plugin *pl, bool write, bool upload);

/**
 * plugin_run() - init, write @view to @out (NULL: no file), upload it if
 * @upload, fini. @dir: for a directory format, the directory @out is in,
 * where host->create() makes the other files (NULL: none may be made).
 * Files made that way are closed before it returns, and removed if the
 * format failed.
 * Return: PP_OK, PP_EUSAGE (the format cannot upload), PP_EIO (a file made
 * could not be written), or PP_EPLUGIN (the plugin or the host said why).
 */
int plugin_run(struct plugin *pl, const struct perfport_profile *view, FILE *out,
	       const char *dir, bool upload);

/**
 * typedef plugin_list_fn - one plugin found by plugin_list(): loaded and
 * checked (@pl) or refused (@pl NULL; the reason was logged).
 */
typedef void (*plugin_list_fn)(void *ctx, const char *path, const struct plugin *pl);

/**
 * plugin_list() - every "*.so" along @paths, in path order then name
 * order; a name found again later in the path is skipped (the first wins).
 */
void plugin_list(const struct plugin_paths *paths, plugin_list_fn fn, void *ctx);

struct view_opts {
	const char *const *labels;   /* "key=value" strings */
	size_t nr_labels;
};

/**
 * view_build() - the plugins' view of @p: flat arrays that point into @p
 * where the layouts agree and copies where they do not. @p must outlive it.
 * Return: the view (free with view_free()), NULL out of memory.
 */
struct perfport_profile *view_build(const struct profile *p, const struct view_opts *o);

/** view_free() - free a view_build() result. */
void view_free(struct perfport_profile *v);

/** pprof_encode() - the host's pprof service (struct perfport_host.pprof). */
enum perfport_status pprof_encode(const struct perfport_profile *p,
				  const struct perfport_pprof_opts *o, void **buf, size_t *len);

/** host_gzip() - the host's gzip service (struct perfport_host.gzip). */
enum perfport_status host_gzip(const void *data, size_t len, void **out, size_t *out_len);

/** plugin_create_file() - the host's create service (struct perfport_host.create). */
FILE *plugin_create_file(const struct perfport_host *host, const char *name);

/** plugin_host() - the host services handed to plugins (static). */
const struct perfport_host *plugin_host(void);

#endif /* PLUGIN_PLUGIN_H */
