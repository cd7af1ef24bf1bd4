/* SPDX-License-Identifier: MIT */
/*
 * datakit.c - the "datakit" exporter: a profile for Guance Datakit's
 * profiling input (../shared/seeds/002, BACKENDS.md "Guance Datakit").
 *
 * `perfport export -f datakit -o DIR` writes a directory:
 *   event.json                 the event part of the upload
 *   cpu.pprof                  on-CPU time as Go's CPU profile (gzipped pprof)
 *   delta-mutex.pprof          lock waits as Go's mutex profile
 *   delta-block.pprof          I/O and sleep waits as Go's block profile
 *   profile.lp                 the line-protocol point Datakit stores for it
 *   flamegraph-COUNTER.json    the studio's flame graph, one per counter present
 * `perfport upload -f datakit` posts event.json and the pprof as
 * multipart/form-data to {url}/profiling/v1/input.
 *
 * Line protocol (InfluxDB's grammar, which Datakit's is): tag keys, tag
 * values and field keys escape ',', '=' and ' ' with '\'; string fields are
 * quoted with '"' and '\' escaped; integers end in 'i'. Neither can hold a
 * line break, and a tag cannot end in '\': control characters become ' ' and
 * a trailing '\' is dropped, with a warning.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfport/json.h"
#include "perfport/plugin.h"

#define DK_EVENT "event.json"
#define DK_POINT "profile.lp"
#define DK_PATH "/profiling/v1/input"

static const struct perfport_option_def options[] = {
	{ "counter", PERFPORT_OPT_LIST, "all",
	  "on-cpu,preempted,lock,io,sleep,timed-sleep,idle,all",
	  "counters in the pprof and the flame graphs (all: every counter present)" },
	{ "time_unit", PERFPORT_OPT_ENUM, "us", "us,ns",
	  "unit of the line protocol's start, end and duration (the seed's us; newer Datakit ns)" },
	{ "unit", PERFPORT_OPT_ENUM, "ns", "ns,us,ms,samples",
	  "flame graph values: time (rounded per frame, then summed) or sample counts" },
	{ "dimension", PERFPORT_OPT_ENUM, "method", "method,thread,library",
	  "flame graph dimension (thread needs --group-by thread)" },
	{ "attachment", PERFPORT_OPT_STRING, "cpu.pprof", NULL,
	  "file name of the CPU profile (pprof) attachment" },
	{ "language", PERFPORT_OPT_STRING, "golang", NULL,
	  "language tag (a --label language= wins); the studio reads the pprof files "
	  "only for golang, as perfport writes them" },
	{ "runtime", PERFPORT_OPT_STRING, "linux-perf", NULL,
	  "runtime tag (a --label runtime= wins)" },
	{ "url", PERFPORT_OPT_STRING, "http://127.0.0.1:9529", NULL,
	  "upload: Datakit's address; the request goes to URL" DK_PATH },
	{ "max_bytes", PERFPORT_OPT_INT, "33554432", NULL,
	  "upload: refuse a body over this size (Datakit's body_size_limit_mb, 32 MiB)" },
};

struct datakit {
	const struct perfport_host *host;
	const char *counters, *time_unit, *unit, *dimension, *attachment, *language;
	const char *runtime, *url;
	long long max_bytes;
};

/* A name=value pair of the point or the event's tags. */
struct tag {
	const char *key, *value;
};

#define MAX_TAGS 64

static void dk_log(const struct datakit *d, enum perfport_log_level l, const char *what,
		   const char *s)
{
	d->host->log(d->host, l, "datakit: %s '%s'", what, s);
}

/* --- the recording's facts --- */

static const char *label(const struct perfport_profile *p, const char *key)
{
	for (size_t i = 0; i < p->nr_labels; i++)
		if (strcmp(p->labels[i].key, key) == 0)
			return p->labels[i].value;
	return NULL;
}

/* perf's machine name as Go and Datakit name architectures. */
static const char *runtime_arch(const char *arch)
{
	static const struct { const char *perf, *go; } map[] = {
		{ "x86_64", "amd64" }, { "aarch64", "arm64" }, { "i386", "386" },
		{ "i686", "386" }, { "armv7l", "arm" }, { "ppc64le", "ppc64le" },
		{ "s390x", "s390x" }, { "riscv64", "riscv64" },
	};

	if (!arch)
		return NULL;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].perf, arch) == 0)
			return map[i].go;
	return arch;
}

/* The pid of the one process recorded, as text in @buf; else NULL. */
static const char *single_pid(const struct perfport_profile *p, char *buf, size_t max)
{
	const struct perfport_thread *t = perfport_single_process(p);

	if (!t)
		return NULL;
	snprintf(buf, max, "%" PRIu32, t->pid);
	return buf;
}

/* The service when no label names one: the command of the one process
 * recorded, else "perf". */
static const char *single_comm(const struct perfport_profile *p)
{
	const struct perfport_thread *t = perfport_single_process(p);

	return t && t->comm && *t->comm ? t->comm : "perf";
}

/*
 * The tags of the point and the event, in order: the seed's (host,
 * endpoint, service, env, version, language, runtime, runtime_os,
 * runtime_arch), then every other --label. A label of a seed tag's name
 * gives its value. Empty values are left out. Return: how many.
 */
static size_t gather_tags(const struct datakit *d, const struct perfport_profile *p,
			  struct tag *t)
{
	static const char *const seed[] = {
		"host", "endpoint", "service", "env", "version", "language", "runtime",
		"runtime_os", "runtime_arch",
	};
	const char *fallback[] = {
		p->hostname, NULL, single_comm(p), NULL, NULL, d->language, d->runtime, "linux",
		runtime_arch(p->arch),
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(seed) / sizeof(seed[0]); i++) {
		const char *v = label(p, seed[i]);

		if (!v)
			v = fallback[i];
		if (v && *v)
			t[n++] = (struct tag){ seed[i], v };
	}
	for (size_t i = 0; i < p->nr_labels && n < MAX_TAGS; i++) {
		bool known = false;

		for (size_t k = 0; k < sizeof(seed) / sizeof(seed[0]) && !known; k++)
			known = strcmp(seed[k], p->labels[i].key) == 0;
		/* a label given twice: the first wins, as label() reads it */
		for (size_t k = 0; k < n && !known; k++)
			known = strcmp(t[k].key, p->labels[i].key) == 0;
		if (!known && *p->labels[i].value)
			t[n++] = (struct tag){ p->labels[i].key, p->labels[i].value };
	}
	return n;
}

/* @ns since the epoch as RFC 3339 with nanoseconds, UTC. */
static void rfc3339(uint64_t ns, char *buf, size_t max)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, max, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRIu64 "Z", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ns % 1000000000u);
}

/* The counters to include: a bit each, of those present. */
static uint64_t chosen_counters(const struct datakit *d, const struct perfport_profile *p)
{
	uint64_t m = 0;
	const char *w = d->counters;

	while (w && *w) {
		size_t n = strcspn(w, ",");

		if (n == 3 && strncmp(w, "all", 3) == 0)
			m |= p->counters_present;
		for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
			if (strlen(p->counter_names[c]) == n && !strncmp(p->counter_names[c], w, n))
				m |= 1ull << c;
		w += n + (w[n] == ',');
	}
	return m & p->counters_present;
}

/* --- the pprof attachments --- */

/*
 * Guance's studio reads a pprof attachment only for the runtimes it knows
 * (cliutils pprofparser GetFileByEvent: Python, Go, Node.js, .NET, PHP),
 * each by its own file names and sample types. Native code is written as
 * Go's profiles, the pprof files of native frames: the CPU profile
 * (cpu.pprof: samples/count, cpu/nanoseconds), the mutex profile
 * (delta-mutex.pprof: contentions/count, delay/nanoseconds) from lock
 * waits, and the block profile (delta-block.pprof, the same types) from
 * I/O, sleep and timed-sleep waits. Preempted and idle time have no Go
 * profile and stay in the flame graphs.
 */
struct dk_file {
	const char *name;
	uint64_t counters;        /* of the profile, summed into its types */
	const char *count_type, *value_type;
	void *buf;                /* host->free() */
	size_t len;
};

#define DK_FILES 3

static void free_files(const struct datakit *d, struct dk_file *f, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		d->host->free(f[i].buf);
}

/* The files of @p with data among the chosen counters: *@nr of @f. */
static enum perfport_status encode_files(const struct datakit *d, const struct perfport_profile *p,
					 struct dk_file *f, size_t *nr)
{
	uint64_t chosen = chosen_counters(d, p);
	const struct dk_file all[DK_FILES] = {
		{ d->attachment, 1ull << PERFPORT_COUNTER_ON_CPU, "samples", "cpu", NULL, 0 },
		{ "delta-mutex.pprof", 1ull << PERFPORT_COUNTER_LOCK, "contentions", "delay", NULL, 0 },
		{ "delta-block.pprof", 1ull << PERFPORT_COUNTER_IO | 1ull << PERFPORT_COUNTER_SLEEP |
		  1ull << PERFPORT_COUNTER_TIMED_SLEEP, "contentions", "delay", NULL, 0 },
	};

	*nr = 0;
	for (size_t i = 0; i < DK_FILES; i++) {
		struct perfport_pprof_type types[2] = {
			{ all[i].count_type, "count", all[i].counters & chosen, 1 },
			{ all[i].value_type, "nanoseconds", all[i].counters & chosen, 0 },
		};
		struct perfport_pprof_opts o = {
			.struct_size = sizeof(o), .gzip = 1, .nr_types = 2,
			.type_size = sizeof(types[0]), .types = types,
		};

		if (!types[0].counters)
			continue;
		f[*nr] = all[i];
		if (d->host->pprof(p, &o, &f[*nr].buf, &f[*nr].len) != PERFPORT_OK) {
			free_files(d, f, *nr);
			return PERFPORT_ERROR;
		}
		(*nr)++;
	}
	if (!*nr) {
		d->host->log(d->host, PERFPORT_LOG_ERROR, "datakit: none of the counters asked for "
			     "has data the studio shows (on-cpu, lock, io, sleep, timed-sleep)");
		return PERFPORT_ERROR;
	}
	return PERFPORT_OK;
}

/* --- event.json --- */

/* tags_profiler: "key:value,..." - Datakit splits each at its first ':'
 * (metrics.NewTags) and the list at ',': a ':' in a key, and ',' and control
 * characters anywhere, become '_'. */
static void put_tags_profiler(FILE *out, const struct tag *t, size_t n, const char *pid)
{
	fputc('"', out);
	for (size_t i = 0; i <= n; i++) {
		const char *k = i < n ? t[i].key : "process_id", *v = i < n ? t[i].value : pid;
		char *s;

		if (!v)
			continue;
		if (asprintf(&s, "%s:%s", k, v) < 0)
			continue;
		for (char *c = s; *c; c++)
			if (*c == ',' || (unsigned char)*c < 0x20 || (*c == ':' && c - s < (ptrdiff_t)strlen(k)))
				*c = '_';
		if (i)
			fputc(',', out);
		perfport_json_chars(out, s);
		free(s);
	}
	fputc('"', out);
}

static void write_event(const struct datakit *d, const struct perfport_profile *p,
			const struct dk_file *files, size_t nr_files, FILE *out)
{
	struct tag t[MAX_TAGS];
	size_t n = gather_tags(d, p, t);
	char start[64], end[64], pidbuf[16];
	const char *pid = single_pid(p, pidbuf, sizeof(pidbuf));

	rfc3339(p->start_ns, start, sizeof(start));
	rfc3339(p->end_ns, end, sizeof(end));
	fputs("{\"attachments\":[", out);
	for (size_t i = 0; i < nr_files; i++) {
		if (i)
			fputc(',', out);
		perfport_json_string(out, files[i].name);
	}
	fputs("],\"tags_profiler\":", out);
	put_tags_profiler(out, t, n, pid);
	fprintf(out, ",\"start\":\"%s\",\"end\":\"%s\",\"family\":\"perf\",\"format\":\"pprof\","
		"\"profiler\":\"perfport\",\"language\":", start, end);
	perfport_json_string(out, label(p, "language") ? label(p, "language") : d->language);
	fputs(",\"runtime\":", out);
	perfport_json_string(out, label(p, "runtime") ? label(p, "runtime") : d->runtime);
	/* no "version": Datakit adds the event's keys to the tags it lacks, and
	 * would take it for the service's version */
	fprintf(out, ",\"profile_id\":\"%s\",\"agent_ver\":\"perfport %s\"}\n",
		p->profile_id, d->host->version);
}

/* --- the line-protocol point --- */

/* A tag key, tag value or field key: ',', '=', ' ' escaped; see the top. */
static void lp_name(const struct datakit *d, FILE *out, const char *s)
{
	bool changed = false;
	size_t n = strlen(s);

	if (n && s[n - 1] == '\\') {
		n--;
		changed = true;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f) {
			c = ' ';
			changed = true;
		}
		if (c == ',' || c == '=' || c == ' ')
			fputc('\\', out);
		fputc(c, out);
	}
	if (changed)
		dk_log(d, PERFPORT_LOG_WARN, "line protocol cannot hold a line break or a trailing "
		       "backslash in a tag; changed", s);
}

/* A string field's value: quoted, '"' and '\' escaped. */
static void lp_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', out);
		fputc(*c < 0x20 || *c == 0x7f ? ' ' : *c, out);
	}
	fputc('"', out);
}

static void write_point(const struct datakit *d, const struct perfport_profile *p, FILE *out,
			size_t pprof_len)
{
	struct tag t[MAX_TAGS];
	size_t n = gather_tags(d, p, t);
	uint64_t div = strcmp(d->time_unit, "ns") == 0 ? 1 : 1000;
	uint64_t dur = p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
	char pidbuf[16], ver[64];
	const char *pid = single_pid(p, pidbuf, sizeof(pidbuf));

	fputs("profile", out);
	for (size_t i = 0; i < n; i++) {
		fputc(',', out);
		lp_name(d, out, t[i].key);
		fputc('=', out);
		lp_name(d, out, t[i].value);
	}
	fputs(" profile_id=", out);
	lp_string(out, p->profile_id);
	snprintf(ver, sizeof(ver), "perfport %s", d->host->version);
	fputs(",agent_ver=", out);
	lp_string(out, ver);
	/* duration = end - start in the unit, so the three always agree */
	fprintf(out, ",start=%" PRIu64 "i,end=%" PRIu64 "i,duration=%" PRIu64 "i",
		p->start_ns / div, (p->start_ns + dur) / div, (p->start_ns + dur) / div - p->start_ns / div);
	if (pid) {
		fputs(",pid=", out);
		lp_string(out, pid);
	}
	fputs(",format=\"pprof\",__file_size=", out);
	fprintf(out, "%zui %" PRIu64 "\n", pprof_len, p->start_ns);
}

/* --- the flame graphs --- */

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

/* Per node, the counter's value in the chosen unit: each node's own value
 * converted, then summed up the tree, so a frame's value is always its own
 * plus its sub_frames'. */
static uint64_t *flame_values(const struct datakit *d, const struct perfport_profile *p,
			      unsigned c, const char **unit)
{
	bool time_unit = strcmp(p->counter_units[c], "nanoseconds") == 0;
	uint64_t div = 1, *v = calloc(p->nr_nodes ? p->nr_nodes : 1, sizeof(*v));
	bool samples = strcmp(d->unit, "samples") == 0;

	*unit = samples ? "samples" : p->counter_units[c];
	if (!samples && time_unit && strcmp(d->unit, "us") == 0) {
		div = 1000;
		*unit = "microseconds";
	} else if (!samples && time_unit && strcmp(d->unit, "ms") == 0) {
		div = 1000000;
		*unit = "milliseconds";
	}
	if (!v)
		return NULL;
	for (size_t i = 0; i < p->nr_nodes; i++)
		v[i] = samples ? perfport_self_count(p, i, c)
			       : (perfport_self_value(p, i, c) + div / 2) / div;
	for (size_t i = p->nr_nodes; i-- > 1;) {
		uint32_t parent = perfport_node_at(p, i)->parent;

		if (parent < i)
			v[parent] += v[i];
	}
	return v;
}

static void put_frame_open(FILE *out, uint64_t value, const char *method, uint32_t line,
			   const char *file, const char *thread, const char *library)
{
	fprintf(out, "{\"value\":%" PRIu64 ",\"method\":", value);
	perfport_json_string(out, method);
	fprintf(out, ",\"line\":%" PRIu32 ",\"source_file\":", line);
	perfport_json_string(out, file ? file : "");
	fputs(",\"thread\":", out);
	perfport_json_string(out, thread ? thread : "");
	fputs(",\"modifier\":\"\",\"library\":", out);
	perfport_json_string(out, library);
	fputs(",\"package\":\"\",\"class\":\"\",\"sub_frame\":[", out);
}

/* One counter's flame graph; @thread_dim/@library_dim: derivable. */
static enum perfport_status write_flame(const struct datakit *d, const struct perfport_profile *p,
					unsigned c, bool thread_dim, bool library_dim, FILE *out)
{
	const char *unit;
	uint64_t *v = flame_values(d, p, c, &unit);
	uint32_t *open = malloc((p->nr_nodes + 1) * sizeof(*open));
	const char **thread = malloc((p->nr_nodes + 1) * sizeof(*thread));
	bool *first = malloc((p->nr_nodes + 2) * sizeof(*first));
	size_t top = 0;

	if (!v || !open || !thread || !first) {
		free(v);
		free(open);
		free(thread);
		free(first);
		return PERFPORT_ERROR;
	}
	fputs("{\"unit\":", out);
	perfport_json_string(out, unit);
	fprintf(out, ",\"available_dimension\":[\"method\"%s%s],\"dimension\":",
		thread_dim ? ",\"thread\"" : "", library_dim ? ",\"library\"" : "");
	perfport_json_string(out, d->dimension);
	fputs(",\"root_frame\":", out);
	put_frame_open(out, p->nr_nodes ? v[0] : 0, "all", 0, NULL, NULL, "");
	first[0] = true;
	for (size_t i = 1; i < p->nr_nodes;) {
		const struct perfport_node *n = perfport_node_at(p, i);
		const struct perfport_frame *f;
		const char *th;

		while (top && perfport_node_at(p, open[top - 1])->end <= i) {
			fputs("]}", out);
			top--;
		}
		if (!v[i] || n->frame >= p->nr_frames) {
			i = n->end > i ? n->end : i + 1;
			continue;
		}
		f = perfport_frame_at(p, n->frame);
		th = top ? thread[top - 1] : NULL;
		if (f->flags & PERFPORT_FRAME_THREAD)
			th = f->function;
		if (!first[top])
			fputc(',', out);
		first[top] = false;
		put_frame_open(out, v[i], f->function, f->line, f->file, th, base_name(f->module));
		thread[top] = th;
		open[top++] = (uint32_t)i;
		first[top] = true;
		i++;
	}
	while (top--)
		fputs("]}", out);
	fputs("]}}\n", out);
	free(v);
	free(open);
	free(thread);
	free(first);
	return PERFPORT_OK;
}

static enum perfport_status write_flames(const struct datakit *d, const struct perfport_profile *p)
{
	bool thread_dim = false, library_dim = false;
	uint64_t m = chosen_counters(d, p);

	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct perfport_frame *f = perfport_frame_at(p, i);

		thread_dim |= (f->flags & PERFPORT_FRAME_THREAD) != 0;
		library_dim |= f->module != NULL;
	}
	if ((!strcmp(d->dimension, "thread") && !thread_dim) ||
	    (!strcmp(d->dimension, "library") && !library_dim)) {
		dk_log(d, PERFPORT_LOG_ERROR, "the profile has nothing to give dimension",
		       d->dimension);
		if (!thread_dim)
			d->host->log(d->host, PERFPORT_LOG_ERROR,
				     "datakit: dimension thread needs --group-by thread");
		return PERFPORT_ERROR;
	}
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
		char name[96];
		FILE *f;

		if (!(m >> c & 1))
			continue;
		snprintf(name, sizeof(name), "flamegraph-%s.json", p->counter_names[c]);
		f = d->host->create(d->host, name);
		if (!f || write_flame(d, p, c, thread_dim, library_dim, f) != PERFPORT_OK)
			return PERFPORT_ERROR;
	}
	return PERFPORT_OK;
}

/* --- write --- */

static enum perfport_status dk_init(const struct perfport_host *host,
				    const struct perfport_option *opts, size_t nr, void **state)
{
	struct datakit *d;

	if (!PERFPORT_HAS(host, struct perfport_host, create) || !host->create || !host->pprof) {
		host->log(host, PERFPORT_LOG_ERROR,
			  "datakit: this perfport is too old (it needs plugin ABI 1.1)");
		return PERFPORT_ERROR;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return PERFPORT_ERROR;
	d->host = host;
	for (size_t i = 0; i < nr; i++) {
		const char *k = opts[i].name, *v = opts[i].value;

		if (!strcmp(k, "counter"))
			d->counters = v;
		else if (!strcmp(k, "time_unit"))
			d->time_unit = v;
		else if (!strcmp(k, "unit"))
			d->unit = v;
		else if (!strcmp(k, "dimension"))
			d->dimension = v;
		else if (!strcmp(k, "attachment"))
			d->attachment = v;
		else if (!strcmp(k, "language"))
			d->language = v;
		else if (!strcmp(k, "runtime"))
			d->runtime = v;
		else if (!strcmp(k, "url"))
			d->url = v;
		else if (!strcmp(k, "max_bytes"))
			d->max_bytes = v ? strtoll(v, NULL, 10) : 32ll << 20;
	}
	if (!d->attachment || !*d->attachment || strchr(d->attachment, '/') ||
	    strcmp(d->attachment, DK_EVENT) == 0 || *d->attachment == '.') {
		host->log(host, PERFPORT_LOG_ERROR, "datakit: bad attachment name '%s'",
			  d->attachment ? d->attachment : "");
		free(d);
		return PERFPORT_ERROR;
	}
	if (d->max_bytes <= 0) {
		host->log(host, PERFPORT_LOG_ERROR, "datakit: max_bytes must be above 0");
		free(d);
		return PERFPORT_ERROR;
	}
	*state = d;
	return PERFPORT_OK;
}

static enum perfport_status dk_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct datakit *d = state;
	struct dk_file files[DK_FILES];
	size_t nr, size = 0;
	FILE *f;

	if (encode_files(d, p, files, &nr) != PERFPORT_OK)
		return PERFPORT_ERROR;
	for (size_t i = 0; i < nr; i++) {
		f = d->host->create(d->host, files[i].name);
		if (!f || fwrite(files[i].buf, 1, files[i].len, f) != files[i].len) {
			free_files(d, files, nr);
			return PERFPORT_ERROR;
		}
		size += files[i].len;
	}
	f = d->host->create(d->host, DK_POINT);
	if (!f) {
		free_files(d, files, nr);
		return PERFPORT_ERROR;
	}
	write_point(d, p, f, size);
	write_event(d, p, files, nr, out);
	free_files(d, files, nr);
	return write_flames(d, p);
}

/* --- upload --- */

/* A multipart/form-data body (RFC 7578) in memory. */
struct body {
	char *buf;
	size_t len;
	FILE *f;
};

static void part(struct body *b, const char *boundary, const char *name, const char *file,
		 const char *type, const void *data, size_t len)
{
	fprintf(b->f, "--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
		"Content-Type: %s\r\n\r\n", boundary, name, file, type);
	fwrite(data, 1, len, b->f);
	fputs("\r\n", b->f);
}

static enum perfport_status dk_upload(void *state, const struct perfport_profile *p)
{
	struct datakit *d = state;
	const struct perfport_host *h = d->host;
	char *event = NULL, boundary[96], url[2048], ctype[160];
	size_t event_len = 0, nr;
	struct dk_file files[DK_FILES];
	struct body b = { 0 };
	enum perfport_status st;
	FILE *ev;

	if (encode_files(d, p, files, &nr) != PERFPORT_OK)
		return PERFPORT_ERROR;
	ev = open_memstream(&event, &event_len);
	if (!ev) {
		free_files(d, files, nr);
		return PERFPORT_ERROR;
	}
	write_event(d, p, files, nr, ev);
	if (fclose(ev)) {
		free(event);
		free_files(d, files, nr);
		return PERFPORT_ERROR;
	}
	/* a boundary that occurs in no part */
	for (unsigned k = 0;; k++) {
		bool found;

		snprintf(boundary, sizeof(boundary), "perfport-%s-%u", p->profile_id, k);
		found = memmem(event, event_len, boundary, strlen(boundary)) != NULL;
		for (size_t i = 0; i < nr && !found; i++)
			found = memmem(files[i].buf, files[i].len, boundary, strlen(boundary)) != NULL;
		if (!found)
			break;
	}
	b.f = open_memstream(&b.buf, &b.len);
	if (!b.f) {
		free(event);
		free_files(d, files, nr);
		return PERFPORT_ERROR;
	}
	part(&b, boundary, "event", DK_EVENT, "application/json", event, event_len);
	for (size_t i = 0; i < nr; i++)
		part(&b, boundary, files[i].name, files[i].name, "application/octet-stream",
		     files[i].buf, files[i].len);
	fprintf(b.f, "--%s--\r\n", boundary);
	free(event);
	free_files(d, files, nr);
	if (fclose(b.f)) {
		free(b.buf);
		return PERFPORT_ERROR;
	}
	if ((long long)b.len > d->max_bytes) {
		h->log(h, PERFPORT_LOG_ERROR,
		       "datakit: the upload is %zu bytes, over the limit of %lld (Datakit's "
		       "body_size_limit_mb, -O datakit.max_bytes=): narrow it with --pid, --time "
		       "or -O datakit.counter=", b.len, d->max_bytes);
		free(b.buf);
		return PERFPORT_ERROR;
	}
	snprintf(url, sizeof(url), "%s%s", d->url, DK_PATH);
	if (strlen(d->url) && d->url[strlen(d->url) - 1] == '/')
		snprintf(url, sizeof(url), "%.*s%s", (int)strlen(d->url) - 1, d->url, DK_PATH);
	snprintf(ctype, sizeof(ctype), "Content-Type: multipart/form-data; boundary=%s", boundary);
	{
		const char *headers[] = { ctype, NULL };
		struct perfport_http_request rq = {
			.struct_size = sizeof(rq), .method = "POST", .url = url, .headers = headers,
			.body = b.buf, .body_len = b.len, .spool_tag = "datakit",
		};
		struct perfport_http_response rs = { .struct_size = sizeof(rs) };

		st = h->http(&rq, &rs);
		h->free(rs.body);
		if (st == PERFPORT_OK)
			h->log(h, PERFPORT_LOG_INFO, "datakit: posted %zu bytes to '%s'", b.len, url);
	}
	free(b.buf);
	return st;
}

static void dk_fini(void *state)
{
	free(state);
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "datakit",
	.description = "Guance Datakit profiling: event, pprof, line protocol, flame graphs (a directory)",
	.default_output = DK_EVENT,
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = dk_init,
	.write = dk_write,
	.upload = dk_upload,
	.fini = dk_fini,
	.flags = PERFPORT_EXPORTER_DIRECTORY | PERFPORT_EXPORTER_WALL_CLOCK,
};
