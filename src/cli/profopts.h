/* SPDX-License-Identifier: MIT */
/*
 * profopts.h - the options of every command that builds a profile (report,
 * and later the exporters): their getopt entries, help text, and how they
 * fill struct profile_opts. The symbol options come with them.
 */
#ifndef CLI_PROFOPTS_H
#define CLI_PROFOPTS_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../profile/profile.h"
#include "symopts.h"

enum {
	OPT_EVENT = 0x1100,
	OPT_GROUP_BY,
	OPT_OFFCPU_STATES,
	OPT_STATE_RULES,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_TIME,
	OPT_NO_KERNEL,
	OPT_START_TIME,
};

#define PROFOPTS_LONG_OPTIONS                                                \
	{ "event", required_argument, NULL, OPT_EVENT },                     \
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },               \
	{ "offcpu-states", required_argument, NULL, OPT_OFFCPU_STATES },     \
	{ "state-rules", required_argument, NULL, OPT_STATE_RULES },         \
	{ "pid", required_argument, NULL, OPT_PID },                         \
	{ "tid", required_argument, NULL, OPT_TID },                         \
	{ "comm", required_argument, NULL, OPT_COMM },                       \
	{ "time", required_argument, NULL, OPT_TIME },                       \
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },                   \
	{ "start-time", required_argument, NULL, OPT_START_TIME },           \
	SYMOPTS_LONG_OPTIONS

#define PROFOPTS_HELP                                                                        \
	"      --event NAME[,NAME] on-CPU samples of these events only (default: one\n"    \
	"                          event, the first that measures time - a clock, or a\n" \
	"                          hardware event at a frequency - else the first, on\n"  \
	"                          any PMU; others are left out, with a warning);\n"      \
	"                          cpu-clock also names cpu-clock/freq=997/ and\n"         \
	"                          cpu-clock:u; a counter its group's samples read\n"      \
	"                          ({a,b}:S) counts only when named here\n"                \
	"      --group-by WHAT     process, thread or none (default): synthetic root\n"     \
	"                          frames per process, or per process and thread\n"         \
	"      --offcpu-states HOW rules (default: the state rules) or simple (all\n"       \
	"                          off-CPU time is sleep)\n"                                \
	"      --state-rules FILE  your off-CPU state rules, decided before all else\n"    \
	"      --pid LIST          only these processes (comma-separated)\n"               \
	"      --tid LIST          only these threads\n"                                   \
	"      --comm LIST         only threads with these command names\n"                \
	"      --time START,END    only this time window, in seconds as perf script\n"     \
	"                          prints them (either may be empty), or A%%-B%%\n"        \
	"      --no-kernel         leave kernel frames out of stacks\n"                    \
	"      --start-time TIME   the recording's wall-clock start: epoch seconds or\n"   \
	"                          YYYY-MM-DDTHH:MM:SS[.fff]Z (default: from the file)\n"  \
	SYMOPTS_HELP

struct cli_prof {
	struct profile_opts o;
	struct cli_sym sym;
	const char *bad;             /* the first bad option value, for the message */
	bool group_given;            /* --group-by was on the command line */
};

/* "1700000000.5" or "2023-11-14T22:13:20[.5]Z" into epoch ns; -1 if malformed. */
static inline int profopts_parse_start(const char *s, uint64_t *out)
{
	struct tm tm;
	char *end;
	double frac = 0;
	time_t t;

	if (strchr(s, '-') && strchr(s, 'T')) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
		if (!end)
			return -1;
		if (*end == '.') {
			frac = strtod(end, &end);
		}
		if (strcmp(end, "Z") != 0 && strcmp(end, "+00:00") != 0)
			return -1;
		t = timegm(&tm);
		if (t < 0)
			return -1;
		*out = (uint64_t)t * 1000000000u + (uint64_t)(frac * 1e9);
		return 0;
	}
	frac = strtod(s, &end);
	if (end == s || *end || frac < 0 || frac > 4e9)
		return -1;
	*out = (uint64_t)(frac * 1e9);
	return 0;
}

/** profopts_parse() - apply option @opt; Return: true if it was a profile or symbol option. */
static inline bool profopts_parse(int opt, const char *arg, struct cli_prof *c)
{
	switch (opt) {
	case OPT_EVENT: c->o.events = arg; return true;
	case OPT_GROUP_BY:
		c->group_given = true;
		if (strcmp(arg, "process") == 0)
			c->o.group_by = GROUP_PROCESS;
		else if (strcmp(arg, "thread") == 0)
			c->o.group_by = GROUP_THREAD;
		else if (strcmp(arg, "none") == 0)
			c->o.group_by = GROUP_NONE;
		else if (!c->bad)
			c->bad = "--group-by takes process, thread or none";
		return true;
	case OPT_OFFCPU_STATES:
		if (strcmp(arg, "simple") == 0)
			c->o.offcpu_simple = true;
		else if (strcmp(arg, "rules") == 0)
			c->o.offcpu_simple = false;
		else if (!c->bad)
			c->bad = "--offcpu-states takes rules or simple";
		return true;
	case OPT_STATE_RULES: c->o.state_rules = arg; return true;
	case OPT_PID: c->o.pids = arg; return true;
	case OPT_TID: c->o.tids = arg; return true;
	case OPT_COMM: c->o.comms = arg; return true;
	case OPT_TIME: c->o.time = arg; return true;
	case OPT_NO_KERNEL: c->o.no_kernel = true; return true;
	case OPT_START_TIME:
		c->o.has_start_time = true;
		if (profopts_parse_start(arg, &c->o.start_time_ns) && !c->bad)
			c->bad = "--start-time takes epoch seconds or YYYY-MM-DDTHH:MM:SS[.fff]Z";
		return true;
	default:
		return symopts_parse(opt, arg, &c->sym);
	}
}

/** profopts_finish() - complete the options after parsing; the error message or NULL. */
static inline const char *profopts_finish(struct cli_prof *c)
{
	if (c->sym.bad_jobs)
		return "--jobs takes a number from 1 to 256";
	c->o.sym = c->sym.o;
	c->o.jobs = symopts_jobs(&c->sym);
	return c->bad;
}

/**
 * profopts_prepare() - symopts_prepare() for @input (after profopts_finish(),
 * once usage errors are said), then the profile's options take what it set
 * (the perf archive's directory, the debuginfod servers).
 * Return: 0, or -1 (said).
 */
static inline int profopts_prepare(struct cli_prof *c, const char *input)
{
	if (symopts_prepare(&c->sym, input))
		return -1;
	c->o.sym = c->sym.o;
	return 0;
}

#endif /* CLI_PROFOPTS_H */
