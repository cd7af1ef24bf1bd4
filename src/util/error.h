/* SPDX-License-Identifier: MIT */
/*
 * error.h - perfport's one error enum. Every stage returns these; the
 * messages live in error.c and nowhere else.
 */
#ifndef UTIL_ERROR_H
#define UTIL_ERROR_H

enum pp_err {
	PP_OK = 0,
	PP_ENOMEM,       /* out of memory */
	PP_EIO,          /* read or write failed (errno kept by the caller) */
	PP_ENOENT,       /* no such file */
	PP_EUSAGE,       /* bad command line */
	PP_EMAGIC,       /* not a perf.data file */
	PP_EFORMAT,      /* malformed perf.data */
	PP_ETRUNC,       /* perf.data ends early */
	PP_EUNSUPPORTED, /* valid but not supported */
	PP_ENOSEEK,      /* file-mode data on an input that cannot seek */
	PP_EZSTD,        /* decompression failed */
	PP_ETRACE,       /* tracing data unreadable */
	PP_ESTOPPED,     /* a consumer asked to stop */
	PP_EPARTIAL,     /* done, but some input was skipped */
	PP_ERULES,       /* a state-rules file is invalid */
	PP_EPLUGIN,      /* a plugin was refused or failed */
	PP_ERR_COUNT,
};

/**
 * pp_strerror() - the message for an error code.
 * @err: an enum pp_err value.
 *
 * Return: a static lowercase string; never NULL.
 */
const char *pp_strerror(int err);

#endif /* UTIL_ERROR_H */
