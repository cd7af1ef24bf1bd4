/* SPDX-License-Identifier: MIT */
/*
 * filebus.h - a file mapped for naming (by libelf, libdw) that is cut
 * short under perfport (a build or a package manager truncating and
 * writing a binary again) no longer ends the process with SIGBUS.
 */
#ifndef SYMBOLS_FILEBUS_H
#define SYMBOLS_FILEBUS_H

/**
 * sym_bus_guard() - from the first call on, a SIGBUS for a page of a file
 * mapping beyond the file's end (BUS_ADRERR) puts a page of zeros in its
 * place and is counted: the reader sees zeros, which libelf and libdw take
 * as damaged data. Any other SIGBUS ends the process as before. Idempotent.
 */
void sym_bus_guard(void);

/**
 * sym_bus_report() - warn once for the pages so replaced since the last
 * call (what was named from those files may be missing or wrong).
 */
void sym_bus_report(void);

#endif
