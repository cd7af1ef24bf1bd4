/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static int log_level = PP_LOG_WARN;
static atomic_ulong errors;          /* logged from unwinding workers too */

void pp_log_set_level(int level)
{
	log_level = level;
}

int pp_log_get_level(void)
{
	return log_level;
}

unsigned long pp_log_errors(void)
{
	return atomic_load(&errors);
}

void pp_warn_status(const char *fmt, ...)
{
	va_list ap;

	fputs("perfport: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void pp_log(int level, const char *fmt, ...)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	va_list ap;

	if (level <= PP_LOG_ERROR)
		atomic_fetch_add(&errors, 1);
	if (level > log_level)
		return;
	if (level < 0 || level > PP_LOG_DEBUG)
		level = PP_LOG_ERROR;
	fprintf(stderr, "perfport: %s", prefix[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
