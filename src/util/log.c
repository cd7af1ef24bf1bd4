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

/* One line: "perfport: " PREFIX MESSAGE. */
static void vline(int level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };

	if (level < 0 || level > PP_LOG_DEBUG)
		level = PP_LOG_ERROR;
	fprintf(stderr, "perfport: %s", prefix[level]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pp_warn_status(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(PP_LOG_WARN, fmt, ap);
	va_end(ap);
}

void pp_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level <= PP_LOG_ERROR)
		atomic_fetch_add(&errors, 1);
	if (level > log_level)
		return;
	va_start(ap, fmt);
	vline(level, fmt, ap);
	va_end(ap);
}
