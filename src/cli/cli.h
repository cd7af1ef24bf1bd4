/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the command table's entries and what they share.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses, the same for every command. */
enum cli_exit {
	EXIT_FULL = 0,      /* everything was read */
	EXIT_USAGE = 1,     /* bad command line */
	EXIT_NOTHING = 2,   /* nothing usable */
	EXIT_PARTIAL = 3,   /* some input was skipped; see the warning */
	EXIT_SPOOLED = 4,   /* an upload failed and was kept in the spool: `perfport resend` */
};

int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stacks(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_upload(int argc, char **argv);
int cmd_resend(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_watch(int argc, char **argv);

/*
 * The global options, taken after the command too (as perf and git take
 * them): add CLI_GLOBAL_SHORT to a command's option string and
 * CLI_GLOBAL_LONG_OPTIONS to its table, and pass what getopt returns to
 * cli_global_option() first.
 */
#define CLI_GLOBAL_SHORT "vq"
#define CLI_GLOBAL_LONG_OPTIONS \
	{ "verbose", no_argument, NULL, 'v' }, { "quiet", no_argument, NULL, 'q' }

/** cli_global_option() - apply -v or -q; false for any other option. */
bool cli_global_option(int opt);

/**
 * cli_choices() - " (one of: A, B, C; did you mean 'B'?)" for a @word that
 * is none of @names (@n), into @buf (@len bytes), the suggestion only when
 * one is near. Return: @buf.
 */
const char *cli_choices(char *buf, size_t len, const char *word, const char *const *names,
			size_t n);

/**
 * cli_usage_error() - print "perfport CMD: MSG" and a --help hint.
 * @cmd: the command's name; "" for perfport's own options.
 * Return: EXIT_USAGE.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * cli_bad_option() - report what getopt_long() refused, once: an unknown or
 * ambiguous option, a missing value (getopt's ':', so the option string must
 * start with ':') or a value given to a flag. Call with opterr off, right
 * after getopt_long() returned @opt ('?' or ':').
 * @opts: the long options the parser was given.
 * Return: EXIT_USAGE.
 */
int cli_bad_option(const char *cmd, int opt, char **argv, const struct option *opts);

/** cli_progress() - perf_progress_fn drawing a line on a terminal stderr. */
void cli_progress(void *ctx, uint64_t done, uint64_t total);

#endif /* CLI_CLI_H */
