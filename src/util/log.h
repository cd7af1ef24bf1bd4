/* SPDX-License-Identifier: MIT */
/*
 * log.h - messages to stderr, prefixed "perfport: ", filtered by verbosity.
 */
#ifndef UTIL_LOG_H
#define UTIL_LOG_H

enum pp_log_level {
	PP_LOG_ERROR = 0,
	PP_LOG_WARN = 1,
	PP_LOG_INFO = 2,
	PP_LOG_DEBUG = 3,
};

/** pp_log_set_level() - show messages up to @level (default PP_LOG_WARN). */
void pp_log_set_level(int level);
int pp_log_get_level(void);
/** pp_log_errors() - how many errors were logged so far (shown or not). */
unsigned long pp_log_errors(void);

/**
 * pp_log() - print one message line to stderr if @level is shown.
 * @level: an enum pp_log_level.
 * @fmt: printf format; a trailing newline is added.
 */
void pp_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * pp_warn_status() - a warning that explains a non-zero exit status (the
 * input read partly): printed at every level, -q included, since the
 * status alone says nothing of what was skipped.
 * @fmt: printf format; a trailing newline is added.
 */
void pp_warn_status(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#define pp_error(...) pp_log(PP_LOG_ERROR, __VA_ARGS__)
#define pp_warn(...)  pp_log(PP_LOG_WARN, __VA_ARGS__)
#define pp_info(...)  pp_log(PP_LOG_INFO, __VA_ARGS__)
#define pp_debug(...) pp_log(PP_LOG_DEBUG, __VA_ARGS__)

#endif /* UTIL_LOG_H */
