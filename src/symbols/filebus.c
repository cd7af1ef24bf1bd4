/* SPDX-License-Identifier: MIT */
/*
 * filebus.c - SIGBUS from a file mapped for naming cut short under
 * perfport: libelf maps the binaries and debug files it reads
 * (dwfl_report_elf() opens them itself, ELF_C_READ_MMAP). The guard is
 * util/bus.c's, shared with the reader's mapping of the recording; the
 * pages counted here are those outside the ranges the reader watches.
 */
#include "../util/bus.h"
#include "../util/log.h"
#include "filebus.h"

static unsigned bus_said; /* pages already warned about */

void sym_bus_guard(void)
{
	bus_guard();
}

void sym_bus_report(void)
{
	unsigned n = bus_other_pages();

	if (n == bus_said)
		return;
	pp_warn("a file mapped for naming was cut short while it was read (%u page%s past its "
		"new end read as zeros): a binary or debug file rewritten in place under "
		"perfport; names from it may be missing or wrong", n - bus_said, n - bus_said == 1 ? "" : "s");
	bus_said = n;
}
