/* SPDX-License-Identifier: MIT */
/*
 * exporters.h - what export, upload and watch share: the transport's
 * options, -O settings, and a set of format plugins loaded, checked and
 * run on a profile.
 */
#ifndef CLI_EXPORTERS_H
#define CLI_EXPORTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "../net/net.h"
#include "../plugin/plugin.h"
#include "../profile/profile.h"

#define EXPORTERS_MAX 16     /* formats at once */
#define SETTINGS_MAX 64      /* -O and --label given */

/* long options of the commands that build profiles for plugins */
enum {
	OPT_PLUGIN_DIR = 0x1400, OPT_LABEL, OPT_UPLOAD, OPT_SPOOL, OPT_CA_FILE, OPT_TIMEOUT,
	OPT_RETRIES, OPT_BASE, OPT_KEEP, OPT_STATE, OPT_ONCE, OPT_RESEND_EVERY, OPT_WINDOW, OPT_SPOOL_MAX, OPT_CONFIG, OPT_DWARF_MAX,
};

#define NET_LONG_OPTIONS                                               \
	{ "spool", required_argument, NULL, OPT_SPOOL },               \
	{ "ca-file", required_argument, NULL, OPT_CA_FILE },           \
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },           \
	{ "retries", required_argument, NULL, OPT_RETRIES }

#define NET_HELP                                                                            \
	"      --spool DIR         keep uploads that cannot be sent here (default\n"         \
	"                          $XDG_STATE_HOME/perfport/spool)\n"                         \
	"      --ca-file FILE      trust these CA certificates (TLS is always verified)\n"   \
	"      --timeout S         give one attempt S seconds (default 60)\n"                \
	"      --retries N         attempts per request (default 5); between two, a\n"      \
	"                          backoff or the server's Retry-After, at most S: a\n"     \
	"                          request takes at most 2 x N x S seconds, then is kept\n" \
	"                          in the spool\n"

/**
 * net_option() - take a transport option (NET_LONG_OPTIONS) into @nc.
 * Return: false if @opt is not one; *@bad is set (a static message) when
 * its value is not valid.
 */
bool net_option(int opt, const char *arg, struct net_config *nc, const char **bad);

/* One -O [FORMAT.]KEY=VALUE; the strings are the setting's own. */
struct setting {
	char *format;                /* NULL: the only format */
	char *key, *value;
};

/** setting_parse() - split @arg into @s. Return: 0, or -1 when malformed. */
int setting_parse(const char *arg, struct setting *s);

/** setting_free() - free what @s holds. */
void setting_free(struct setting *s);

/** exit_worst() - the worse of two exit statuses (usage, nothing, spooled, partial, full). */
int exit_worst(int a, int b);

/* Format plugins loaded for one command. */
struct exporters {
	struct plugin *pl[EXPORTERS_MAX];
	size_t n;
};

/**
 * exporters_load() - load each format of the comma-separated @formats and
 * give it its settings; with @upload, each must be able to upload; then
 * each format's own check of its options (plugin_check(): a file is written
 * when @cmd is "export"), all before a recording is read.
 * Errors are printed as @cmd's. @ex is filled even on failure: free it
 * with exporters_free().
 * Return: EXIT_FULL, or the exit status to end with.
 */
int exporters_load(const char *cmd, const char *formats, const char *plugin_dir,
		   const struct setting *settings, size_t nr_set, bool upload,
		   struct exporters *ex);

/**
 * exporters_profile_opts() - what the formats want of the profile: one
 * tree per thread when each reads so (unless @group_given), time slices
 * when uploading to a format that takes them, a timeline for samples.
 */
void exporters_profile_opts(const struct exporters *ex, bool upload, bool group_given,
			    struct profile_opts *o);

/**
 * exporters_upload_one() - upload @view with @pl; with @say, print what
 * the transport delivered for it (a receipt). A SIGINT, SIGTERM or
 * SIGHUP during it ends the process with that signal once what was not
 * delivered is in the spool.
 * Return: EXIT_FULL; EXIT_SPOOLED when every request not delivered is in
 * the spool; EXIT_NOTHING when one was lost; EXIT_USAGE.
 */
int exporters_upload_one(struct plugin *pl, const struct perfport_profile *view, bool say);

/**
 * exporters_end_if_signalled() - after net_guard(false): when a SIGINT,
 * SIGTERM or SIGHUP came during the guarded sends, say that what was not
 * delivered is in the spool, run the cleanups and end with that signal.
 */
void exporters_end_if_signalled(void);

/**
 * exporters_no_format() - the usage error for a format @f that no plugin
 * in @paths has: the formats there, and the nearest name.
 * Return: EXIT_USAGE.
 */
int exporters_no_format(const char *cmd, const char *f, const struct plugin_paths *paths);

/** exporters_free() - unload every plugin of @ex. */
void exporters_free(struct exporters *ex);

#endif /* CLI_EXPORTERS_H */
