/* SPDX-License-Identifier: MIT */
/*
 * exporters.c - the format plugins of export, upload and watch: loaded and
 * checked before any recording is read, and the transport options they share.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/error.h"
#include "../util/log.h"
#include "cli.h"
#include "exporters.h"

#define MAX_FORMAT_NAMES 64

struct names {
	char *v[MAX_FORMAT_NAMES];
	size_t n;
};

static void name_one(void *ctx, const char *path, const struct plugin *pl)
{
	struct names *nm = ctx;
	char *s;

	(void)path;
	if (!pl || nm->n == MAX_FORMAT_NAMES)
		return;
	for (size_t i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], plugin_exporter(pl)->name))
			return;
	s = strdup(plugin_exporter(pl)->name);
	if (s)
		nm->v[nm->n++] = s;
}

/* Names people give that are a format's output, not a format: what to write instead. */
static const struct {
	const char *name, *use;
} format_hints[] = {
	{ "svg", "-f flamegraph -O format=svg" },
	{ "html", "-f flamegraph" },
	{ "flame", "-f flamegraph" },
	{ "collapsed", "-f folded" },
};

/* "no format 'F' (one of: ...; did you mean 'G'?)", as a usage error. */
int exporters_no_format(const char *cmd, const char *f, const struct plugin_paths *paths)
{
	struct names nm = { .n = 0 };
	char buf[1024];
	int r;

	for (size_t i = 0; i < sizeof(format_hints) / sizeof(format_hints[0]); i++)
		if (!strcmp(f, format_hints[i].name))
			return cli_usage_error(cmd, "no format '%s': use %s", f, format_hints[i].use);
	plugin_list(paths, name_one, &nm);
	r = cli_usage_error(cmd, "no format '%s'%s", f,
			    cli_choices(buf, sizeof(buf), f, (const char *const *)nm.v, nm.n));
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	return r;
}

bool net_option(int opt, const char *arg, struct net_config *nc, const char **bad)
{
	char *end;
	long v;

	switch (opt) {
	case OPT_SPOOL: nc->spool_dir = arg; return true;
	case OPT_CA_FILE: nc->ca_file = arg; return true;
	case OPT_TIMEOUT:
	case OPT_RETRIES:
		v = strtol(arg, &end, 10);
		if (*end || !*arg || v < 1 || v > 3600) {
			*bad = opt == OPT_TIMEOUT ? "--timeout takes 1 to 3600 seconds"
						  : "--retries takes 1 to 3600";
			return true;
		}
		if (opt == OPT_TIMEOUT)
			nc->timeout_s = v;
		else
			nc->max_attempts = (unsigned)v;
		return true;
	default:
		return false;
	}
}

int setting_parse(const char *arg, struct setting *s)
{
	const char *eq = strchr(arg, '=');
	const char *dot;

	memset(s, 0, sizeof(*s));
	if (!eq || eq == arg)
		return -1;
	dot = memchr(arg, '.', (size_t)(eq - arg));
	if (dot) {
		s->format = strndup(arg, (size_t)(dot - arg));
		s->key = strndup(dot + 1, (size_t)(eq - dot - 1));
	} else {
		s->key = strndup(arg, (size_t)(eq - arg));
	}
	s->value = strdup(eq + 1);
	if (s->key && *s->key && s->value && (!dot || s->format))
		return 0;
	setting_free(s);
	return -1;
}

void setting_free(struct setting *s)
{
	free(s->format);
	free(s->key);
	free(s->value);
	memset(s, 0, sizeof(*s));
}

int exit_worst(int a, int b)
{
	static const int rank[] = {
		[EXIT_FULL] = 0, [EXIT_PARTIAL] = 1, [EXIT_SPOOLED] = 2, [EXIT_NOTHING] = 3,
		[EXIT_USAGE] = 4,
	};

	return rank[b] > rank[a] ? b : a;
}

int exporters_load(const char *cmd, const char *formats, const char *plugin_dir,
		   const struct setting *settings, size_t nr_set, bool upload,
		   struct exporters *ex)
{
	struct plugin_paths paths;
	char *list = strdup(formats), *save = NULL;
	int ret = EXIT_USAGE;

	ex->n = 0;
	if (!list) {
		pp_error("%s", pp_strerror(PP_ENOMEM));
		return EXIT_NOTHING;
	}
	plugin_paths_default(&paths, plugin_dir);
	for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		int r;

		for (size_t i = 0; i < ex->n; i++)
			if (strcmp(plugin_exporter(ex->pl[i])->name, f) == 0) {
				cli_usage_error(cmd, "format '%s' given twice", f);
				goto out;
			}
		if (ex->n == EXPORTERS_MAX) {
			cli_usage_error(cmd, "at most %d formats at once", EXPORTERS_MAX);
			goto out;
		}
		r = plugin_load(f, &paths, &ex->pl[ex->n]);
		if (r == PP_ENOENT) {
			exporters_no_format(cmd, f, &paths);
			goto out;
		}
		if (r) {
			ret = r == PP_ENOMEM ? EXIT_NOTHING : EXIT_USAGE;
			goto out;
		}
		if (strcmp(plugin_exporter(ex->pl[ex->n])->name, f) != 0) {
			pp_error("plugin '%s' refused: it calls itself '%s', not '%s'",
				 plugin_path(ex->pl[ex->n]), plugin_exporter(ex->pl[ex->n])->name, f);
			ex->n++;
			goto out;
		}
		ex->n++;
	}
	for (size_t i = 0; i < nr_set; i++) {
		struct plugin *target = NULL;

		if (!settings[i].format && ex->n == 1)
			target = ex->pl[0];
		for (size_t k = 0; k < ex->n && settings[i].format && !target; k++)
			if (strcmp(plugin_exporter(ex->pl[k])->name, settings[i].format) == 0)
				target = ex->pl[k];
		if (!target) {
			if (settings[i].format)
				cli_usage_error(cmd, "-O %s.%s: '%s' is not one of the formats asked for",
						settings[i].format, settings[i].key, settings[i].format);
			else
				cli_usage_error(cmd, "-O %s: say which format (FORMAT.%s=...)",
						settings[i].key, settings[i].key);
			goto out;
		}
		if (plugin_set_option(target, settings[i].key, settings[i].value))
			goto out;
	}
	for (size_t i = 0; upload && i < ex->n; i++)
		if (!plugin_exporter(ex->pl[i])->upload) {
			cli_usage_error(cmd, "format '%s' writes files only: it cannot upload",
					plugin_exporter(ex->pl[i])->name);
			goto out;
		}
	/* the formats' own checks (a required option, a region): only export writes files */
	for (size_t i = 0; i < ex->n; i++) {
		int r = plugin_check(ex->pl[i], strcmp(cmd, "export") == 0, upload);

		if (r) {
			ret = r == PP_EUSAGE ? EXIT_USAGE : EXIT_NOTHING;
			goto out;
		}
	}
	ret = EXIT_FULL;
out:
	free(list);
	return ret;
}

void exporters_profile_opts(const struct exporters *ex, bool upload, bool group_given,
			    struct profile_opts *o)
{
	if (!group_given) {
		bool all = ex->n > 0;

		for (size_t i = 0; i < ex->n; i++)
			all = all && plugin_wants_threads(ex->pl[i]);
		if (all)
			o->group_by = GROUP_THREAD;
	}
	for (size_t i = 0; i < ex->n && upload; i++)
		if (plugin_wants_slices(ex->pl[i]))
			o->slice_ns = PLUGIN_SLICE_NS;
	for (size_t i = 0; i < ex->n; i++)
		if (plugin_wants_samples(ex->pl[i]))
			o->timeline = true;
	/* frames by line split every format's tree: only when all show lines */
	o->frames_by_line = ex->n > 0;
	for (size_t i = 0; i < ex->n; i++)
		o->frames_by_line = o->frames_by_line && plugin_wants_lines(ex->pl[i]);
	/* no line tables read where no format shows a file or line (folded:
	 * 9% of naming's CPU on a -g recording of one C program) */
	o->sym.no_lines = ex->n > 0 && !o->frames_by_line;
	for (size_t i = 0; i < ex->n; i++)
		o->sym.no_lines = o->sym.no_lines && plugin_shows_no_lines(ex->pl[i]);
	/* estimated times are worth a warning where a format places them in time */
	o->warn_estimated_time = false;
	for (size_t i = 0; i < ex->n; i++)
		if (plugin_wants_wall_clock(ex->pl[i]))
			o->warn_estimated_time = true;
}

/*
 * A SIGINT, SIGTERM or SIGHUP during the uploads: what was not delivered
 * is in the spool (net_guard()); the process ends with the signal, as it
 * would have without the uploads.
 */
void exporters_end_if_signalled(void)
{
	int sig = net_stopped();
	unsigned untried = net_kept_unsent();
	char more[96] = "";

	if (!sig)
		return;
	if (untried)
		snprintf(more, sizeof(more), ", %u request%s of it not tried after the signal",
			 untried, untried == 1 ? "" : "s");
	pp_error("interrupted by %s: what was not delivered is kept in the spool '%s'%s "
		 "('perfport resend %s' sends it)", strsignal(sig), net_spool_dir(), more,
		 net_spool_dir());
	fflush(stdout);
	cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

int exporters_upload_one(struct plugin *pl, const struct perfport_profile *view, bool say)
{
	unsigned req0, req1, spooled0 = net_spooled(), lost0 = net_lost();
	uint64_t b0, b1;
	double kib;
	int r;

	net_delivered(&req0, &b0);
	net_guard(true);
	r = plugin_run(pl, view, NULL, NULL, true);
	net_guard(false);
	exporters_end_if_signalled();
	net_delivered(&req1, &b1);
	kib = (double)(b1 - b0) / 1024.0;
	if (!r && say)
		printf("%s: uploaded: %u request%s, %.*f %s\n", plugin_exporter(pl)->name,
		       req1 - req0, req1 - req0 == 1 ? "" : "s", kib < 1024 ? 1 : 2,
		       kib < 1024 ? kib : kib / 1024.0, kib < 1024 ? "KiB" : "MiB");
	if (!r)
		return EXIT_FULL;
	if (r == PP_EUSAGE)
		return EXIT_USAGE;
	return net_spooled() > spooled0 && net_lost() == lost0 ? EXIT_SPOOLED : EXIT_NOTHING;
}

void exporters_free(struct exporters *ex)
{
	for (size_t i = 0; i < ex->n; i++)
		plugin_unload(ex->pl[i]);
	ex->n = 0;
}
