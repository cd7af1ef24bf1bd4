/* SPDX-License-Identifier: MIT */
/*
 * pprof.c - the "pprof" exporter: the profile as a gzipped profile.proto,
 * for `go tool pprof`, pprof's web UI, Pyroscope, Parca. The encoding is
 * the host's (struct perfport_host.pprof), shared with every pprof-based
 * format; this plugin chooses the counters and writes the bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "perfport/plugin.h"

static const struct perfport_option_def options[] = {
	{ "counter", PERFPORT_OPT_LIST, "all",
	  "on-cpu,preempted,lock,io,sleep,timed-sleep,idle,all",
	  "counters to include, a sample type each (all: every counter present)" },
	{ "gzip", PERFPORT_OPT_BOOL, "true", NULL,
	  "gzip the profile, as pprof files are (false: the bare protobuf)" },
};

struct pprof {
	const struct perfport_host *host;
	char *counters;
	int gzip;
};

static enum perfport_status pprof_init(const struct perfport_host *host,
				       const struct perfport_option *opts, size_t nr, void **state)
{
	struct pprof *s;

	if (!PERFPORT_HAS(host, struct perfport_host, pprof) || !host->pprof) {
		host->log(host, PERFPORT_LOG_ERROR, "pprof: this perfport has no pprof encoder");
		return PERFPORT_ERROR;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return PERFPORT_ERROR;
	s->host = host;
	s->gzip = 1;
	for (size_t i = 0; i < nr; i++) {
		if (!opts[i].value)
			continue;
		if (strcmp(opts[i].name, "counter") == 0)
			s->counters = strdup(opts[i].value);
		else if (strcmp(opts[i].name, "gzip") == 0)
			s->gzip = strcmp(opts[i].value, "true") == 0;
	}
	*state = s;
	return PERFPORT_OK;
}

static enum perfport_status pprof_write(void *state, const struct perfport_profile *p,
					FILE *out)
{
	struct pprof *s = state;
	struct perfport_pprof_opts o = { .struct_size = sizeof(o), .gzip = (uint32_t)s->gzip };
	char *save = NULL;
	enum perfport_status st;
	void *buf;
	size_t len;

	for (char *w = s->counters ? strtok_r(s->counters, ",", &save) : NULL; w;
	     w = strtok_r(NULL, ",", &save)) {
		if (strcmp(w, "all") == 0)
			o.counters |= p->counters_present;
		for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
			if (strcmp(p->counter_names[c], w) == 0)
				o.counters |= 1ull << c;
	}
	if (s->counters && !(o.counters & p->counters_present))
		s->host->log(s->host, PERFPORT_LOG_WARN,
			     "pprof: none of the counters asked for has data");
	/* export --base: NEW minus BASE, as go tool pprof -diff_base reads it */
	o.base_negated = PERFPORT_PROFILE_HAS_BASE(p) && p->base;
	st = s->host->pprof(p, &o, &buf, &len);
	if (st != PERFPORT_OK)
		return st;
	if (fwrite(buf, 1, len, out) != len) {
		s->host->free(buf);
		s->host->log(s->host, PERFPORT_LOG_ERROR, "pprof: cannot write the profile");
		return PERFPORT_ERROR;
	}
	s->host->free(buf);
	return PERFPORT_OK;
}

static void pprof_fini(void *state)
{
	struct pprof *s = state;

	if (!s)
		return;
	free(s->counters);
	free(s);
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "pprof",
	.description = "pprof profile.proto, gzipped (go tool pprof, Pyroscope, Parca)",
	.default_output = "profile.pb.gz",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = pprof_init,
	.write = pprof_write,
	.upload = NULL,
	.fini = pprof_fini,
	/* threads and processes become sample labels (pid, tid, thread) */
	.flags = PERFPORT_EXPORTER_BY_THREAD,
};
