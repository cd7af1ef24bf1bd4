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
#include "advice.h"
#include "cli.h"
#include "exporters.h"
#include "profopts.h"

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
			"one tree per thread (skywalking, arms, pprof, pyroscope: 'perfport formats\n"
			"FORMAT' says) make --group-by thread the default. Every option, and each\n"
			"format's own checks, are checked before the recording is read.\n");
	else
		fprintf(out,
			"usage: perfport export [-i FILE] -f FORMAT[,FORMAT...] [-o PATH] [--upload]\n"
			"                       [-O [FORMAT.]KEY=VALUE]... [--label KEY=VALUE]...\n"
			"                       [--base FILE] [--plugin-dir DIR] [profile options]\n"
			"\n"
			"Build the profile of a recording once and write it in each format asked\n"
			"for, by that format's plugin ('perfport formats' lists them). Formats\n"
			"that read one tree per thread (skywalking, arms, pprof, pyroscope:\n"
			"'perfport formats FORMAT' says) make --group-by thread the default when\n"
			"every format asked for does. Every option, each format's own checks and\n"
			"where the files go are checked before the recording is read. A file is\n"
			"replaced only once its format succeeded, and never the recording being\n"
			"read.\n");
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
 * Can a file or directory @target be made, as far as can be told before the
 * recording is read: its directory exists and may be written, and it is not
 * a directory where a file is to go (@is_dir: a directory is to be made or
 * used). Logs why not.
 */
static bool output_ok(const char *target, bool is_dir)
{
	char parent[4096], t[4096];
	const char *slash;
	size_t len = strlen(target);
	struct stat st;

	/* "dk/" is the directory dk, in . */
	while (len > 1 && target[len - 1] == '/')
		len--;
	snprintf(t, sizeof(t), "%.*s", (int)len, target);
	slash = strrchr(t, '/');

	if (stat(target, &st) == 0) {
		if (!is_dir && S_ISDIR(st.st_mode)) {
			pp_error("cannot write '%s': %s", target, strerror(EISDIR));
			return false;
		}
		if (is_dir && !S_ISDIR(st.st_mode)) {
			pp_error("cannot make directory '%s': %s", target, strerror(ENOTDIR));
			return false;
		}
		if (is_dir && access(target, W_OK | X_OK)) {
			pp_error("cannot write in '%s': %s", target, strerror(errno));
			return false;
		}
		/* a directory already there takes the files: its parent is not asked */
		if (is_dir)
			return true;
		/* a writable file in a directory that takes no new one is written in place */
		if (!is_dir && access(target, W_OK) == 0)
			return true;
	}
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == t)
		snprintf(parent, sizeof(parent), "/");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - t), t);
	if (stat(parent, &st) || !S_ISDIR(st.st_mode)) {
		pp_error("cannot %s '%s': no directory '%s'", is_dir ? "make directory" : "write",
			 target, parent);
		return false;
	}
	if (access(parent, W_OK | X_OK)) {
		pp_error("cannot %s '%s': %s (in '%s')", is_dir ? "make directory" : "write", target,
			 strerror(errno), parent);
		return false;
	}
	return true;
}

/* Every file or directory the export will write, checked (output_ok()). */
static bool outputs_ok(const struct exporters *exs, const char *output)
{
	char t[4096 + 256];

	if (output && strcmp(output, "-") == 0)
		return true;
	if (exs->n > 1 && output && !output_ok(output, true))
		return false;
	for (size_t i = 0; i < exs->n; i++) {
		const struct perfport_exporter *ex = plugin_exporter(exs->pl[i]);
		bool dir = plugin_is_directory(exs->pl[i]);

		if (exs->n == 1 && output)
			snprintf(t, sizeof(t), "%s", output);
		else
			snprintf(t, sizeof(t), "%s%s%s", output ? output : "", output ? "/" : "",
				 dir || !ex->default_output ? ex->name : ex->default_output);
		/* the directory -o names for several formats is made later: its files' check is its own */
		if (!(exs->n > 1 && output && stat(output, &(struct stat){ 0 })) && !output_ok(t, dir))
			return false;
	}
	return true;
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
	const char *labels[SETTINGS_MAX];
	struct setting settings[SETTINGS_MAX];
	struct exporters exs = { .n = 0 };
	struct advice_list adv = { .n = 0 };
	struct plugin **pl = exs.pl;
	struct perfport_profile *view = NULL;
	struct profile *p = NULL;
	char *formats = NULL;
	size_t nr_set = 0, nr_labels = 0;
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
			if (nr_set == SETTINGS_MAX || setting_parse(optarg, &settings[nr_set])) {
				cli_usage_error(cmd, "-O takes [FORMAT.]KEY=VALUE, not '%s'", optarg);
				goto out;
			}
			nr_set++;
			break;
		case OPT_LABEL:
			if (nr_labels == SETTINGS_MAX || !strchr(optarg, '=') || *optarg == '=') {
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
	msg = profopts_finish(&po);
	if (msg || net_bad) {
		cli_usage_error(cmd, "%s", msg ? msg : net_bad);
		goto out;
	}
	net_configure(&nc);

	/* every plugin loaded and every option checked before the file is read */
	ret = exporters_load(cmd, formats, plugin_dir, settings, nr_set, upload, &exs);
	if (ret != EXIT_FULL)
		goto out;
	ret = EXIT_USAGE;
	if (output && strcmp(output, "-") == 0 && exs.n > 1) {
		cli_usage_error(cmd, "-o - (stdout) takes one format");
		goto out;
	}
	for (size_t i = 0; !upload_cmd && output && strcmp(output, "-") == 0 && i < exs.n; i++)
		if (plugin_is_directory(pl[i])) {
			cli_usage_error(cmd, "format '%s' writes a directory of files: not to stdout",
					plugin_exporter(pl[i])->name);
			goto out;
		}

	if (!upload_cmd && output && is_input(output, path)) {
		cli_usage_error(cmd, "-o '%s' is the recording being read", output);
		goto out;
	}
	/* where the files go, before the recording is read */
	if (!upload_cmd && !outputs_ok(&exs, output)) {
		ret = EXIT_NOTHING;
		goto out;
	}
	/* the recordings, once every usage error is said */
	if (symopts_check_input(base_path) || profopts_prepare(&po, path)) {
		ret = EXIT_NOTHING;
		goto out;
	}

	exporters_profile_opts(&exs, upload, po.group_given, &po.o);
	po.o.progress = cli_progress;
	po.o.progress_ctx = &shown;
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
	/* what changes the numbers' meaning: said here and handed to the formats */
	advice_of_profile(p, &adv);
	for (size_t i = 0; i < adv.n; i++)
		pp_warn("'%s': %s", path, adv.text[i]);
	view = view_build(p, &(struct view_opts){ labels, nr_labels });
	if (!view) {
		pp_error("%s", pp_strerror(PP_ENOMEM));
		ret = EXIT_NOTHING;
		goto out;
	}
	view->nr_warnings = adv.n;
	view->warnings = adv.ptr;
	view->frames_by_line = po.o.frames_by_line;
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
		base_view->frames_by_line = bo.frames_by_line;
		view->base = base_view;
	}
	if (!upload_cmd && exs.n > 1 && output && mkdir(output, 0777) && errno != EEXIST) {
		pp_error("cannot make directory '%s': %s", output, strerror(errno));
		ret = EXIT_NOTHING;
		goto out;
	}
	ret = EXIT_FULL;
	for (size_t i = 0; i < exs.n; i++) {
		const struct perfport_exporter *ex = plugin_exporter(pl[i]);
		const char *name = ex->default_output ? ex->default_output : ex->name;
		char file[4096 + 256], dir[4096];
		struct outfile of;
		bool made_dir = false, to_stdout;
		FILE *f;
		int r;

		if (upload_cmd) {
			ret = exit_worst(ret, exporters_upload_one(pl[i], view, pp_log_get_level() >= PP_LOG_WARN));
			continue;
		}
		if (plugin_is_directory(pl[i])) {
			/* <-o> for one format, else <-o or .>/<name>; the main file in it */
			if (exs.n == 1 && output)
				snprintf(dir, sizeof(dir), "%s", output);
			else
				snprintf(dir, sizeof(dir), "%s%s%s", output ? output : "",
					 output ? "/" : "", ex->name);
			made_dir = mkdir(dir, 0777) == 0;
			if (!made_dir && (errno != EEXIST || !is_directory(dir))) {
				pp_error("cannot make directory '%s': %s", dir,
					 errno == EEXIST ? strerror(ENOTDIR) : strerror(errno));
				ret = exit_worst(ret, EXIT_NOTHING);
				continue;
			}
			snprintf(file, sizeof(file), "%s/%s", dir, name);
		} else if (exs.n == 1 && output) {
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
			ret = exit_worst(ret, EXIT_NOTHING);
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
		/* a format that stopped on a failed write (ENOSPC while its
		 * buffer drained): closing names the file and why */
		if (!to_stdout && outfile_close(&of, r == 0 || ferror(f)))
			r = PP_EIO;
		if (r) {
			ret = exit_worst(ret, r == PP_EUSAGE ? EXIT_USAGE : EXIT_NOTHING);
			if (made_dir)
				rmdir(dir);
			continue;
		}
		if (plugin_is_directory(pl[i]))
			snprintf(file, sizeof(file), "%s/", dir);
		pp_info("%s: '%s'", ex->name, file);
		if (upload)
			ret = exit_worst(ret, exporters_upload_one(pl[i], view, pp_log_get_level() >= PP_LOG_WARN &&
							     !(output && strcmp(output, "-") == 0)));
	}
	if (ret == EXIT_FULL && partial) {
		char why[512];

		perf_stats_partly(&p->read, why, sizeof(why));
		pp_warn_status("'%s': read partly: %s", path, why);
		ret = EXIT_PARTIAL;
	}
out:
	view_free(base_view);
	profile_free(base);
	view_free(view);
	profile_free(p);
	exporters_free(&exs);
	for (size_t i = 0; i < nr_set; i++)
		setting_free(&settings[i]);
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
	exporters_end_if_signalled();
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
		return exporters_no_format("formats", argv[optind], &paths);
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
