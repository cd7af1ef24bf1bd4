/* SPDX-License-Identifier: MIT */
/*
 * cmd_export.c - `perfport export` (the profile in one or more formats, by
 * their plugins, from one pass over the recording) and `perfport formats`
 * (the plugins found, and each one's options).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../net/net.h"
#include "../plugin/plugin.h"
#include "../util/cleanup.h"
#include "../profile/profile.h"
#include "../util/error.h"
#include "../util/log.h"
#include "../util/outfile.h"
#include "cli.h"
#include "profopts.h"

#define MAX_FORMATS 16
#define MAX_SETTINGS 64

enum { OPT_PLUGIN_DIR = 0x1400, OPT_LABEL, OPT_UPLOAD, OPT_SPOOL, OPT_CA_FILE, OPT_TIMEOUT,
       OPT_RETRIES, OPT_BASE };

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

/* A transport option; false if @opt is not one. Sets *@bad on a bad value. */
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

/* "no format 'F' (one of: ...; did you mean 'G'?)", as a usage error. */
static int no_format(const char *cmd, const char *f, const struct plugin_paths *paths)
{
	struct names nm = { .n = 0 };
	char buf[1024];
	int r;

	plugin_list(paths, name_one, &nm);
	r = cli_usage_error(cmd, "no format '%s'%s", f,
			    cli_choices(buf, sizeof(buf), f, (const char *const *)nm.v, nm.n));
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	return r;
}

static bool net_option(int opt, const char *arg, struct net_config *nc, const char **bad)
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

static void export_usage(FILE *out, bool upload_cmd)
{
	if (upload_cmd)
		fprintf(out,
			"usage: perfport upload [-i FILE] -f FORMAT[,FORMAT...]\n"
			"                       [-O [FORMAT.]KEY=VALUE]... [--label KEY=VALUE]...\n"
			"                       [--spool DIR] [--ca-file FILE] [--timeout S]\n"
			"                       [--retries N] [--plugin-dir DIR] [profile options]\n"
			"\n"
			"Build the profile of a recording once and send it to each backend asked\n"
			"for, by that format's plugin (as 'perfport export --upload', without\n"
			"writing files). An upload that cannot be delivered is kept in the spool\n"
			"(exit status 4) and 'perfport resend' sends it later. Formats that read\n"
			"one tree per thread (skywalking) make --group-by thread the default.\n");
	else
		fprintf(out,
			"usage: perfport export [-i FILE] -f FORMAT[,FORMAT...] [-o PATH] [--upload]\n"
			"                       [-O [FORMAT.]KEY=VALUE]... [--label KEY=VALUE]...\n"
			"                       [--base FILE] [--plugin-dir DIR] [profile options]\n"
			"\n"
			"Build the profile of a recording once and write it in each format asked\n"
			"for, by that format's plugin ('perfport formats' lists them). Formats\n"
			"that read one tree per thread (skywalking) make --group-by thread the\n"
			"default when every format asked for does. A file is replaced only once\n"
			"its format succeeded, and never the recording being read.\n");
	fprintf(out,
		"\n"
		"options:\n"
		"  -i, --input FILE        the recording (default ./perf.data; - for stdin)\n"
		"  -f, --format LIST       formats, comma-separated (required)\n");
	if (!upload_cmd)
		fprintf(out,
		"  -o, --output PATH       with one format: the file (- for stdout); with\n"
		"                          several: a directory (made if missing), each\n"
		"                          format writing its default file name there\n"
		"                          (default: those names in the current directory);\n"
		"                          a format that writes several files (datakit)\n"
		"                          writes a directory: PATH, or PATH/FORMAT\n"
		"      --upload            also send each to its backend (as 'perfport upload')\n"
		"      --base FILE         a baseline recording, read with the same options,\n"
		"                          for differential output: the flame graph coloured\n"
		"                          by each stack's change, pprof with the base\n"
		"                          subtracted (as go tool pprof -diff_base reads it)\n");
	fprintf(out,
		"  -O, --option F.KEY=VAL  a format's option (FORMAT. may be left out with\n"
		"                          one format); 'perfport formats FORMAT' lists them\n"
		"      --label KEY=VALUE   a label handed to every format (service, env...)\n"
		"      --plugin-dir DIR    look for plugins in DIR first (then\n"
		"                          $PERFPORT_PLUGIN_PATH, the build tree, the\n"
		"                          installed directory)\n"
		NET_HELP
		PROFOPTS_HELP
		"  -h, --help              show this help\n");
}

static void formats_usage(FILE *out)
{
	fprintf(out,
		"usage: perfport formats [--plugin-dir DIR] [FORMAT]\n"
		"\n"
		"List the export formats (plugins) found, with where each came from, or\n"
		"print one format's options.\n"
		"\n"
		"options:\n"
		"      --plugin-dir DIR    look for plugins in DIR first\n"
		"  -h, --help              show this help\n");
}

struct setting {
	char *format;                /* NULL: the only format */
	char *key, *value;
};

static int parse_setting(const char *arg, struct setting *s)
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
	free(s->format);
	free(s->key);
	free(s->value);
	memset(s, 0, sizeof(*s));
	return -1;
}

static bool is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Is @out the recording @in itself (same file, under any name)? */
static bool is_input(const char *out, const char *in)
{
	struct stat so, si;

	return strcmp(in, "-") != 0 && stat(out, &so) == 0 && stat(in, &si) == 0 &&
	       so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}

/*
 * Upload with @pl, then say on stdout (when @say) how much the transport
 * delivered for it, so that a post-incident upload ends with a receipt.
 */
/* The worse of two exit statuses: usage, nothing, spooled, partial, full. */
static int worst(int a, int b)
{
	static const int rank[] = {
		[EXIT_FULL] = 0, [EXIT_PARTIAL] = 1, [EXIT_SPOOLED] = 2, [EXIT_NOTHING] = 3,
		[EXIT_USAGE] = 4,
	};

	return rank[b] > rank[a] ? b : a;
}

/* One format's upload; its exit status: a failure whose every request is
 * in the spool is EXIT_SPOOLED, one that lost a request EXIT_NOTHING. */
/*
 * A SIGINT, SIGTERM or SIGHUP during the uploads: what was not delivered
 * is in the spool (net_guard()); the process ends with the signal, as it
 * would have without the uploads.
 */
static void end_if_signalled(void)
{
	int sig = net_stopped();

	if (!sig)
		return;
	pp_error("interrupted by %s: what was not delivered is kept in the spool "
		 "('perfport resend' sends it)", strsignal(sig));
	fflush(stdout);
	cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int upload_one(struct plugin *pl, const struct perfport_profile *view, bool say)
{
	unsigned req0, req1, spooled0 = net_spooled(), lost0 = net_lost();
	uint64_t b0, b1;
	double kib;
	int r;

	net_delivered(&req0, &b0);
	net_guard(true);
	r = plugin_run(pl, view, NULL, NULL, true);
	net_guard(false);
	end_if_signalled();
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

static int export_main(int argc, char **argv, bool upload_cmd)
{
	const char *cmd = upload_cmd ? "upload" : "export";
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "option", required_argument, NULL, 'O' },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR },
		{ "upload", no_argument, NULL, OPT_UPLOAD },
		{ "base", required_argument, NULL, OPT_BASE },
		NET_LONG_OPTIONS,
		PROFOPTS_LONG_OPTIONS,
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct net_config nc = { 0 };
	const char *net_bad = NULL;
	bool upload = upload_cmd;
	struct cli_prof po = { .sym.o.use_proc_kallsyms = true };
	const char *path = "perf.data", *output = NULL, *plugin_dir = NULL, *msg, *base_path = NULL;
	struct perfport_profile *base_view = NULL;
	struct profile *base = NULL;
	const char *labels[MAX_SETTINGS];
	struct setting settings[MAX_SETTINGS];
	struct plugin *pl[MAX_FORMATS] = { 0 };
	struct perfport_profile *view = NULL;
	struct plugin_paths paths;
	struct profile *p = NULL;
	char *formats = NULL, *save = NULL;
	size_t nr_pl = 0, nr_set = 0, nr_labels = 0;
	int opt, ret = EXIT_USAGE, built, shown = 0;
	bool partial = false;

	while ((opt = getopt_long(argc, argv, upload_cmd ? ":i:f:O:h" CLI_GLOBAL_SHORT SYMOPTS_SHORT
						    : ":i:f:o:O:h" CLI_GLOBAL_SHORT SYMOPTS_SHORT, opts, NULL)) != -1) {
		if (upload_cmd && opt == OPT_BASE) {
			cli_usage_error(cmd, "--base is an option of 'perfport export': an upload "
				       "sends one recording");
			goto out;
		}
		if ((upload_cmd && opt == OPT_UPLOAD) || (upload_cmd && opt == 'o')) {
			cli_usage_error(cmd, "'%s' writes no file: -o and --upload are options of "
				       "'perfport export'", cmd);
			goto out;
		}
		switch (opt) {
		case 'i': path = optarg; break;
		case 'f':
			free(formats);
			formats = strdup(optarg);
			break;
		case 'o': output = optarg; break;
		case 'O':
			if (nr_set == MAX_SETTINGS || parse_setting(optarg, &settings[nr_set])) {
				cli_usage_error(cmd, "-O takes [FORMAT.]KEY=VALUE, not '%s'", optarg);
				goto out;
			}
			nr_set++;
			break;
		case OPT_LABEL:
			if (nr_labels == MAX_SETTINGS || !strchr(optarg, '=') || *optarg == '=') {
				cli_usage_error(cmd, "--label takes KEY=VALUE, not '%s'", optarg);
				goto out;
			}
			labels[nr_labels++] = optarg;
			break;
		case OPT_PLUGIN_DIR: plugin_dir = optarg; break;
		case OPT_BASE: base_path = optarg; break;
		case OPT_UPLOAD: upload = true; break;
		case 'h':
			export_usage(stdout, upload_cmd);
			ret = EXIT_FULL;
			goto out;
		default:
			if (opt != '?' && opt != ':' &&
			    (cli_global_option(opt) || net_option(opt, optarg, &nc, &net_bad) ||
			     profopts_parse(opt, optarg, &po)))
				break;
			cli_bad_option(cmd, opt, argv, opts);
			goto out;
		}
	}
	if (optind < argc) {
		cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (!formats || !*formats) {
		cli_usage_error(cmd, "-f FORMAT is required ('perfport formats' lists them)");
		goto out;
	}
	if (symopts_prepare(&po.sym, path)) {
		ret = EXIT_NOTHING;
		goto out;
	}
	msg = profopts_finish(&po);
	if (msg || net_bad) {
		cli_usage_error(cmd, "%s", msg ? msg : net_bad);
		goto out;
	}
	net_configure(&nc);

	/* every plugin loaded and every option checked before the file is read */
	plugin_paths_default(&paths, plugin_dir);
	for (char *f = strtok_r(formats, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		int r;

		for (size_t i = 0; i < nr_pl; i++)
			if (strcmp(plugin_exporter(pl[i])->name, f) == 0) {
				cli_usage_error(cmd, "format '%s' given twice", f);
				goto out;
			}
		if (nr_pl == MAX_FORMATS) {
			cli_usage_error(cmd, "at most %d formats at once", MAX_FORMATS);
			goto out;
		}
		r = plugin_load(f, &paths, &pl[nr_pl]);
		if (r == PP_ENOENT) {
			no_format(cmd, f, &paths);
			goto out;
		}
		if (r) {
			ret = r == PP_ENOMEM ? EXIT_NOTHING : EXIT_USAGE;
			goto out;
		}
		if (strcmp(plugin_exporter(pl[nr_pl])->name, f) != 0) {
			pp_error("plugin '%s' refused: it calls itself '%s', not '%s'",
				 plugin_path(pl[nr_pl]), plugin_exporter(pl[nr_pl])->name, f);
			nr_pl++;
			goto out;
		}
		nr_pl++;
	}
	for (size_t i = 0; i < nr_set; i++) {
		struct plugin *target = NULL;

		if (!settings[i].format && nr_pl == 1)
			target = pl[0];
		for (size_t k = 0; k < nr_pl && settings[i].format && !target; k++)
			if (strcmp(plugin_exporter(pl[k])->name, settings[i].format) == 0)
				target = pl[k];
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
	for (size_t i = 0; upload && i < nr_pl; i++)
		if (!plugin_exporter(pl[i])->upload) {
			cli_usage_error(cmd, "format '%s' writes files only: it cannot upload",
					plugin_exporter(pl[i])->name);
			goto out;
		}
	if (output && strcmp(output, "-") == 0 && nr_pl > 1) {
		cli_usage_error(cmd, "-o - (stdout) takes one format");
		goto out;
	}
	for (size_t i = 0; !upload_cmd && output && strcmp(output, "-") == 0 && i < nr_pl; i++)
		if (plugin_is_directory(pl[i])) {
			cli_usage_error(cmd, "format '%s' writes a directory of files: not to stdout",
					plugin_exporter(pl[i])->name);
			goto out;
		}

	if (!upload_cmd && output && is_input(output, path)) {
		cli_usage_error(cmd, "-o '%s' is the recording being read", output);
		goto out;
	}

	if (!po.group_given) {
		bool all = nr_pl > 0;

		for (size_t i = 0; i < nr_pl; i++)
			all = all && plugin_wants_threads(pl[i]);
		if (all)
			po.o.group_by = GROUP_THREAD;
	}
	for (size_t i = 0; i < nr_pl && upload; i++)
		if (plugin_wants_slices(pl[i]))
			po.o.slice_ns = PLUGIN_SLICE_NS;
	for (size_t i = 0; i < nr_pl; i++)
		if (plugin_wants_samples(pl[i]))
			po.o.timeline = true;
	po.o.progress = cli_progress;
	po.o.progress_ctx = &shown;
	po.o.warn_estimated_time = true; /* the formats carry the times */
	built = profile_build(path, &po.o, &p);
	if (built == PP_EUSAGE) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (!p) {
		ret = EXIT_NOTHING;
		goto out;
	}
	partial = built == PP_EPARTIAL;
	view = view_build(p, &(struct view_opts){ labels, nr_labels });
	if (!view) {
		pp_error("%s", pp_strerror(PP_ENOMEM));
		ret = EXIT_NOTHING;
		goto out;
	}
	if (base_path) {
		struct profile_opts bo = po.o;
		int b;

		bo.timeline = false;     /* the base is a tree, never a timeline */
		b = profile_build(base_path, &bo, &base);

		if (!base) {
			ret = b == PP_EUSAGE ? EXIT_USAGE : EXIT_NOTHING;
			goto out;
		}
		partial = partial || b == PP_EPARTIAL;
		base_view = view_build(base, &(struct view_opts){ labels, nr_labels });
		if (!base_view) {
			pp_error("%s", pp_strerror(PP_ENOMEM));
			ret = EXIT_NOTHING;
			goto out;
		}
		view->base = base_view;
	}
	if (!upload_cmd && nr_pl > 1 && output && mkdir(output, 0777) && errno != EEXIST) {
		pp_error("cannot make directory '%s': %s", output, strerror(errno));
		ret = EXIT_NOTHING;
		goto out;
	}
	ret = EXIT_FULL;
	for (size_t i = 0; i < nr_pl; i++) {
		const struct perfport_exporter *ex = plugin_exporter(pl[i]);
		const char *name = ex->default_output ? ex->default_output : ex->name;
		char file[4096 + 256], dir[4096];
		struct outfile of;
		bool made_dir = false, to_stdout;
		FILE *f;
		int r;

		if (upload_cmd) {
			ret = worst(ret, upload_one(pl[i], view, pp_log_get_level() >= PP_LOG_WARN));
			continue;
		}
		if (plugin_is_directory(pl[i])) {
			/* <-o> for one format, else <-o or .>/<name>; the main file in it */
			if (nr_pl == 1 && output)
				snprintf(dir, sizeof(dir), "%s", output);
			else
				snprintf(dir, sizeof(dir), "%s%s%s", output ? output : "",
					 output ? "/" : "", ex->name);
			made_dir = mkdir(dir, 0777) == 0;
			if (!made_dir && (errno != EEXIST || !is_directory(dir))) {
				pp_error("cannot make directory '%s': %s", dir,
					 errno == EEXIST ? strerror(ENOTDIR) : strerror(errno));
				ret = worst(ret, EXIT_NOTHING);
				continue;
			}
			snprintf(file, sizeof(file), "%s/%s", dir, name);
		} else if (nr_pl == 1 && output) {
			snprintf(file, sizeof(file), "%s", output);
		} else if (output) {
			snprintf(file, sizeof(file), "%s/%s", output, name);
		} else {
			snprintf(file, sizeof(file), "%s", name);
		}
		/* a file appears whole or not at all, and never over the recording */
		to_stdout = strcmp(file, "-") == 0;
		if (!to_stdout && is_input(file, path)) {
			pp_error("'%s' is the recording being read: not overwritten", file);
			r = PP_EUSAGE;
		} else {
			r = to_stdout ? PP_OK : outfile_open(&of, file);
		}
		if (r) {
			ret = worst(ret, EXIT_NOTHING);
			if (made_dir)
				rmdir(dir);
			continue;
		}
		f = to_stdout ? stdout : of.f;
		r = plugin_run(pl[i], view, f, plugin_is_directory(pl[i]) ? dir : NULL, false);
		errno = 0;
		if (to_stdout && (fflush(f) || ferror(f))) {
			pp_error("cannot write to standard output: %s",
				 errno ? strerror(errno) : "a write failed");
			r = PP_EIO;
		}
		if (!to_stdout && outfile_close(&of, r == 0))
			r = PP_EIO;
		if (r) {
			ret = worst(ret, r == PP_EUSAGE ? EXIT_USAGE : EXIT_NOTHING);
			if (made_dir)
				rmdir(dir);
			continue;
		}
		if (plugin_is_directory(pl[i]))
			snprintf(file, sizeof(file), "%s/", dir);
		pp_info("%s: '%s'", ex->name, file);
		if (upload)
			ret = worst(ret, upload_one(pl[i], view, pp_log_get_level() >= PP_LOG_WARN &&
							     !(output && strcmp(output, "-") == 0)));
	}
	if (ret == EXIT_FULL && partial) {
		pp_warn_status("'%s': read partly: %" PRIu64 " records skipped%s", path,
			p->read.skipped_records, p->read.truncated ? ", the data ends early" : "");
		ret = EXIT_PARTIAL;
	}
out:
	view_free(base_view);
	profile_free(base);
	view_free(view);
	profile_free(p);
	for (size_t i = 0; i < nr_pl; i++)
		plugin_unload(pl[i]);
	for (size_t i = 0; i < nr_set; i++) {
		free(settings[i].format);
		free(settings[i].key);
		free(settings[i].value);
	}
	free(formats);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	return export_main(argc, argv, false);
}

int cmd_upload(int argc, char **argv)
{
	return export_main(argc, argv, true);
}

/* --- perfport resend --- */

int cmd_resend(int argc, char **argv)
{
	static const struct option opts[] = {
		NET_LONG_OPTIONS,
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct net_config nc = { 0 };
	const char *bad = NULL, *dir;
	struct net_resend_stats st;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, ":h" CLI_GLOBAL_SHORT, opts, NULL)) != -1) {
		if (opt == 'h') {
			printf("usage: perfport resend [--ca-file FILE] [--timeout S] [--retries N] [DIR]\n"
			       "\n"
			       "Send again every upload kept in the spool DIR (default: the spool\n"
			       "'perfport upload' uses), signed afresh with the current credentials;\n"
			       "an entry is removed only once it was delivered.\n"
			       "\n"
			       "options:\n"
			       NET_HELP
			       "  -h, --help              show this help\n");
			return EXIT_FULL;
		}
		if (opt == '?' || opt == ':' ||
		    !(cli_global_option(opt) || net_option(opt, optarg, &nc, &bad)))
			return cli_bad_option("resend", opt, argv, opts);
	}
	if (bad)
		return cli_usage_error("resend", "%s", bad);
	if (optind + 1 < argc)
		return cli_usage_error("resend", "unexpected argument '%s'", argv[optind + 1]);
	dir = optind < argc ? argv[optind] : NULL;
	net_configure(&nc);
	net_guard(true);
	ret = net_resend(dir, &st);
	net_guard(false);
	end_if_signalled();
	if (dir && !st.exists && ret == PP_OK) {
		pp_error("no spool directory '%s'", dir);
		return EXIT_USAGE;
	}
	if (!st.delivered && !st.kept && ret == PP_OK)
		printf("nothing to send: the spool '%s' is empty\n", st.dir);
	else
		printf("%u delivered, %u kept in the spool '%s'\n", st.delivered, st.kept, st.dir);
	return ret == PP_OK ? EXIT_FULL : EXIT_NOTHING;
}

/* --- perfport formats --- */

static void list_one(void *ctx, const char *path, const struct plugin *pl)
{
	unsigned *n = ctx;

	if (!pl)
		return; /* refused: the reason was logged */
	printf("%-14s %s\n%-14s (%s)\n", plugin_exporter(pl)->name, plugin_exporter(pl)->description
	       ? plugin_exporter(pl)->description : "", "", path);
	(*n)++;
}

static const char *type_name(enum perfport_option_type t)
{
	switch (t) {
	case PERFPORT_OPT_BOOL: return "bool";
	case PERFPORT_OPT_INT: return "int";
	case PERFPORT_OPT_ENUM: return "one of";
	case PERFPORT_OPT_LIST: return "list of";
	default: return "string";
	}
}

int cmd_formats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR },
		CLI_GLOBAL_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *plugin_dir = NULL;
	struct plugin_paths paths;
	struct plugin *pl;
	unsigned n = 0;
	int opt, r;

	while ((opt = getopt_long(argc, argv, ":h" CLI_GLOBAL_SHORT, opts, NULL)) != -1) {
		switch (opt) {
		case OPT_PLUGIN_DIR: plugin_dir = optarg; break;
		case 'h':
			formats_usage(stdout);
			return EXIT_FULL;
		default:
			if (cli_global_option(opt))
				break;
			return cli_bad_option("formats", opt, argv, opts);
		}
	}
	if (optind + 1 < argc)
		return cli_usage_error("formats", "unexpected argument '%s'", argv[optind + 1]);
	plugin_paths_default(&paths, plugin_dir);
	if (optind == argc) {
		plugin_list(&paths, list_one, &n);
		if (!n) {
			pp_error("no export formats found (looked in:%s%s%s%s%s%s%s)",
				 paths.nr > 0 ? " " : "", paths.nr > 0 ? paths.dirs[0] : "",
				 paths.nr > 1 ? " " : "", paths.nr > 1 ? paths.dirs[1] : "",
				 paths.nr > 2 ? " " : "", paths.nr > 2 ? paths.dirs[2] : "",
				 paths.nr > 3 ? " ..." : "");
			return EXIT_NOTHING;
		}
		return EXIT_FULL;
	}
	r = plugin_load(argv[optind], &paths, &pl);
	if (r == PP_ENOENT)
		return no_format("formats", argv[optind], &paths);
	if (r)
		return EXIT_NOTHING;
	{
		const struct perfport_exporter *ex = plugin_exporter(pl);

		printf("%s - %s\nplugin: %s (ABI %u.%u)\n", ex->name,
		       ex->description ? ex->description : "", plugin_path(pl), ex->abi_version >> 16,
		       ex->abi_version & 0xffff);
		if (plugin_is_directory(pl))
			printf("output: a directory (-o DIR; ./%s without -o), its main file %s\n",
			       ex->name, ex->default_output ? ex->default_output : ex->name);
		else
			printf("default output: %s\n", ex->default_output ? ex->default_output : ex->name);
		printf("upload: %s\n", ex->upload ? "yes (perfport upload, export --upload)" : "no");
		if (plugin_wants_threads(pl))
			printf("tree: grouped by thread unless --group-by is given\n");
		printf("options (-O %s.KEY=VALUE):\n", ex->name);
		if (!ex->nr_options)
			printf("  (none)\n");
		for (size_t i = 0; i < ex->nr_options; i++) {
			const struct perfport_option_def *d = &ex->options[i];

			printf("  %-12s %s%s%s (default: %s)\n      %s\n", d->name, type_name(d->type),
			       d->choices ? " " : "", d->choices ? d->choices : "",
			       d->default_value ? d->default_value : "unset", d->help ? d->help : "");
		}
	}
	plugin_unload(pl);
	return EXIT_FULL;
}
