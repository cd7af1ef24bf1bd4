/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - an output file that appears whole or not at all. A regular
 * file (or a new one) is written as a temporary beside it, ".NAME.perfport-
 * XXXXXX", and renamed over it when kept, so a failed or interrupted export
 * leaves the previous file as it was; SIGINT, SIGTERM and SIGHUP remove the
 * temporaries in flight. A symbolic link to a regular file has that file
 * replaced so, and stays. Anything else at the path (a device, a pipe, a
 * dangling link), and a writable file in a directory that takes no new
 * file, is written in place, and never removed.
 */
#ifndef UTIL_OUTFILE_H
#define UTIL_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile {
	FILE *f;                     /* write here */
	char *path;                  /* where it goes; owned */
	char *tmp;                   /* the temporary; NULL when written in place */
	bool created;                /* written in place to a file this open made */
	char *buf;                   /* f's buffer; owned */
};

/**
 * outfile_open() - start writing @path. A file it replaces keeps its mode;
 * a new one's follows the umask.
 * Return: PP_OK, or PP_EIO / PP_ENOMEM (logged, naming @path; @o holds nothing).
 */
int outfile_open(struct outfile *o, const char *path);

/**
 * outfile_close() - finish @o: if @keep, close it and put it in place;
 * otherwise (or if any write, the flush or the close failed: a full
 * filesystem) remove what was written, leaving what was at the path
 * before. What perfport did not create (a device, a symbolic link's
 * target, a file written in place) is never removed. @o is empty afterwards.
 * Return: PP_OK, or PP_EIO when @keep was asked and could not be done (logged).
 */
int outfile_close(struct outfile *o, bool keep);

#endif /* UTIL_OUTFILE_H */
