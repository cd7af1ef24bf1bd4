/* SPDX-License-Identifier: MIT */
/*
 * main.c - perfport's command table and global options.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfport/version.h>

#include "../profile/profile.h"
#include "../util/log.h"
#include "../util/mem.h"
#include "../util/suggest.h"
#include "../util/threadtime.h"
#include "cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "info", cmd_info, "describe a recording: host, events, sample and record counts, problems" },
	{ "dump", cmd_dump, "print every record, one line each, in time order" },
	{ "stacks", cmd_stacks, "print every sample with its named stack, as perf script does" },
	{ "report", cmd_report, "on-CPU and off-CPU time by function, call path and thread" },
	{ "diff", cmd_diff, "what changed between two recordings: functions, new and vanished stacks" },
	{ "export", cmd_export, "write the profile in one or more formats, by their plugins" },
	{ "upload", cmd_upload, "send the profile to a backend, by its format's plugin" },
	{ "resend", cmd_resend, "send again the uploads kept in the spool" },
	{ "watch", cmd_watch, "follow a directory of rotating recordings, sending each file as it is finished" },
	{ "formats", cmd_formats, "list the export formats, or one format's options" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: perfport [-v | -q] COMMAND [ARGS]\n"
		"       perfport --version | --help\n"
		"\n"
		"perfport turns what 'perf record' wrote into profiles for profiling backends.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"global options:\n"
		"  -v, --verbose   say more (repeat for debug messages)\n"
		"  -q, --quiet     print errors only, no warnings (but the one that says\n"
		"                  what exit status 3 skipped)\n"
		"  -h, --help      show this help; 'perfport COMMAND --help' for a command\n"
		"  -V, --version   print the version\n"
		"\n"
		"exit status: 0 all input read, 1 usage error, 2 nothing usable,\n"
		"3 partial (some input skipped, or an unfinished recording; a warning\n"
		"says what and where),\n"
		"4 an upload failed and was kept in the spool ('perfport resend').\n");
}

bool cli_global_option(int opt)
{
	switch (opt) {
	case 'v':
		pp_log_set_level(pp_log_get_level() + 1);
		return true;
	case 'q':
		pp_log_set_level(PP_LOG_ERROR);
		return true;
	default:
		return false;
	}
}

const char *cli_choices(char *buf, size_t len, const char *word, const char *const *names,
			size_t n)
{
	const char *near = suggest_nearest(word, names, n);
	size_t used;

	snprintf(buf, len, " (one of:");
	for (size_t i = 0; i < n; i++) {
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s %s", i ? "," : "", names[i]);
	}
	used = strlen(buf);
	if (near)
		snprintf(buf + used, len - used, "; did you mean '%s'?)", near);
	else
		snprintf(buf + used, len - used, ")");
	return buf;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perfport%s%s: ", *cmd ? " " : "", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'perfport %s%s--help'.\n", cmd, *cmd ? " " : "");
	return EXIT_USAGE;
}

/* The long option @arg ("--name" or "--name=value") names in @opts, or NULL. */
static const struct option *long_option(const char *arg, const struct option *opts, bool *ambiguous)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const struct option *hit = NULL;

	*ambiguous = false;
	for (const struct option *o = opts; o && o->name; o++) {
		if (strncmp(o->name, arg, len) != 0)
			continue;
		if (o->name[len] == '\0')
			return o;
		if (hit && (hit->has_arg != o->has_arg || hit->val != o->val))
			*ambiguous = true;
		hit = o;
	}
	return *ambiguous ? NULL : hit;
}

int cli_bad_option(const char *cmd, int opt, char **argv, const struct option *opts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	const char *eq;
	bool ambiguous;

	if (strncmp(arg, "--", 2) == 0 && arg[2]) {
		const struct option *o = long_option(arg + 2, opts, &ambiguous);
		int len = (int)((eq = strchr(arg, '=')) ? eq - arg : (ptrdiff_t)strlen(arg));

		if (ambiguous)
			return cli_usage_error(cmd, "option '%.*s' is ambiguous", len, arg);
		if (!o) {
			const char *names[128], *near;
			size_t n = 0;
			char word[128];

			for (const struct option *q = opts; q && q->name && n < 128; q++)
				names[n++] = q->name;
			snprintf(word, sizeof(word), "%.*s", len - 2, arg + 2);
			near = suggest_nearest(word, names, n);
			if (near)
				return cli_usage_error(cmd, "unknown option '%.*s'; did you mean '--%s'?",
						       len, arg, near);
			return cli_usage_error(cmd, "unknown option '%.*s'", len, arg);
		}
		if (opt == ':')
			return cli_usage_error(cmd, "option '--%s' needs a value", o->name);
		if (o->has_arg == no_argument && eq)
			return cli_usage_error(cmd, "option '--%s' takes no value", o->name);
		/* else a bad short option in a cluster after it: below */
	}
	if (optopt > ' ' && optopt < 127) {
		/* a long option written with one dash ("-top 5"): getopt read a
		 * cluster of short ones; the word is found in argv and named */
		for (int i = 1; argv[i] && i <= optind; i++) {
			const char *w = argv[i];
			size_t len = strcspn(w, "=");
			char word[128];
			bool amb;

			if (w[0] != '-' || w[1] != optopt || w[1] == '-' || len < 3)
				continue;
			snprintf(word, sizeof(word), "%.*s", (int)len - 1, w + 1);
			if (long_option(word, opts, &amb) && !amb)
				return cli_usage_error(cmd, "unknown option '-%c' (in '%.*s'); did you mean "
						       "'--%s'?", optopt, (int)len, w,
						       long_option(word, opts, &amb)->name);
		}
	}
	if (opt == ':')
		return cli_usage_error(cmd, "option '-%c' needs a value", optopt);
	if (optopt > ' ' && optopt < 127)
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", arg);
}

void cli_progress(void *ctx, uint64_t done, uint64_t total)
{
	int *shown = ctx;

	if (!isatty(STDERR_FILENO) || pp_log_get_level() < PP_LOG_WARN)
		return;
	if (total && done >= total) {
		if (*shown)
			fprintf(stderr, "\r\033[K");
		*shown = 0;
		return;
	}
	if (total)
		fprintf(stderr, "\rperfport: reading %3" PRIu64 "%% (%" PRIu64 " of %" PRIu64 " MiB)",
			done * 100 / total, done >> 20, total >> 20);
	else
		fprintf(stderr, "\rperfport: reading %" PRIu64 " MiB", done >> 20);
	*shown = 1;
}

/*
 * The command's status, unless what it printed did not all reach standard
 * output (a full filesystem, a closed descriptor): that is an error, as a
 * short file is. A status already worse is kept.
 */
static int stdout_done(int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	pp_error("cannot write standard output: %s", errno ? strerror(errno) : "a write failed");
	return rc == EXIT_USAGE ? rc : EXIT_NOTHING;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int verbosity = PP_LOG_WARN, c;

	/* before anything is allocated: the heap grows on huge pages */
	mem_heap_hugepages(64);
	/*
	 * '+' stops at the command name: its options are its own. Each parser's
	 * string starts with ':' (a missing value returns ':') and opterr is
	 * off: cli_bad_option() says what was wrong, once.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:vqhV", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbosity++;
			break;
		case 'q':
			verbosity = PP_LOG_ERROR;
			break;
		case 'h':
			usage(stdout);
			return EXIT_FULL;
		case 'V':
			printf("perfport %s\n", PERFPORT_VERSION);
			return EXIT_FULL;
		default:
			cli_bad_option("", c, argv, opts);
			return EXIT_USAGE;
		}
	}
	pp_log_set_level(verbosity);
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			argv += optind;
			argc -= optind;
			/* 0: getopt starts afresh, in its default (permuting) order, not
			 * in the "+" order that stopped at the command */
			optind = 0;
			int rc = stdout_done(commands[i].run(argc, argv));

			/* a pass's teardown may still run beside the command's end */
			profile_settle();
			thread_time_note("main");
			thread_time_report();
			return rc;
		}
	}
	{
		const char *names[sizeof(commands) / sizeof(*commands)];
		char buf[512];

		for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
			names[i] = commands[i].name;
		return cli_usage_error("", "'%s' is not a command%s", argv[optind],
				       cli_choices(buf, sizeof(buf), argv[optind], names,
						   sizeof(commands) / sizeof(*commands)));
	}
}
