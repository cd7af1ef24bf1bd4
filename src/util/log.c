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

/*
 * One line: "perfport: " PREFIX MESSAGE. What a message quotes (a server's
 * reply, a name from a recording) reaches the terminal without its control
 * bytes: each is written as \xNN, so none moves the cursor, clears the
 * screen or starts a line of its own.
 */
static void vline(int level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	char buf[4096], out[4 * sizeof(buf)];
	size_t n = 0;

	if (level < 0 || level > PP_LOG_DEBUG)
		level = PP_LOG_ERROR;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	for (const unsigned char *c = (const unsigned char *)buf; *c; c++) {
		if (*c < 0x20 || *c == 0x7f) {
			n += (size_t)snprintf(out + n, sizeof(out) - n, "\\x%02x", *c);
		} else {
			out[n++] = (char)*c;
		}
	}
	out[n] = '\0';
	fprintf(stderr, "perfport: %s%s\n", prefix[level], out);
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
