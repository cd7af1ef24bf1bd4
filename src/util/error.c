/* SPDX-License-Identifier: MIT */
#include "error.h"

static const char *const messages[PP_ERR_COUNT] = {
	[PP_OK] = "success",
	[PP_ENOMEM] = "out of memory",
	[PP_EIO] = "input/output error",
	[PP_ENOENT] = "no such file",
	[PP_EUSAGE] = "invalid usage",
	[PP_EMAGIC] = "not a perf.data file",
	[PP_EFORMAT] = "malformed perf.data",
	[PP_ETRUNC] = "perf.data is truncated",
	[PP_EUNSUPPORTED] = "unsupported perf.data feature",
	[PP_ENOSEEK] = "file-mode perf.data on an input that cannot seek",
	[PP_EZSTD] = "zstd decompression failed",
	[PP_ETRACE] = "tracing data unreadable",
	[PP_ESTOPPED] = "stopped by the consumer",
	[PP_EPARTIAL] = "some input was skipped",
	[PP_ERULES] = "invalid state rules",
	[PP_EPLUGIN] = "plugin refused or failed",
};

const char *pp_strerror(int err)
{
	if (err < 0 || err >= PP_ERR_COUNT || !messages[err])
		return "unknown error";
	return messages[err];
}
