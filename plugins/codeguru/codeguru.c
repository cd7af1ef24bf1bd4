/* SPDX-License-Identifier: MIT */
/*
 * codeguru.c - the "codeguru" exporter: the AWS CodeGuru Profiler agent
 * profile JSON (PostAgentProfile), as ../shared/seeds/000 describes it:
 *
 *   {"start": ms, "end": ms,
 *    "agentMetadata": {"sampleWeights": {TYPE: rounds/s}, "durationInMs": n,
 *                      "fleetInfo": {"fleetInstanceId": s, "hostType": s, "vCPUs": n},
 *                      "agentInfo": {"type": "perfport", "version": s},
 *                      "runtimeVersion": s, "cpuTimeInSeconds": x,
 *                      "metrics": {"numThreads": n}, "numTimesSampled": n},
 *    "callgraph": {"children": {"frame": {"counts": {TYPE: n}, "children": {...},
 *                                        "file": s, "line": [n]}}}}
 *
 * Thread states (see plugins/codeguru/README.md): on-cpu and preempted are
 * RUNNABLE, lock BLOCKED, io and sleep WAITING, timed-sleep TIMED_WAITING,
 * idle IDLE. Counts are samples: on-CPU sample counts as they are, off-CPU
 * nanoseconds as sample-equivalents at the recording's sampling interval,
 * so CPU and latency views weigh alike. numTimesSampled is the number of
 * sampling rounds the duration held at that rate and sampleWeights, for
 * every type, rounds per second, as the official agents write them
 * (aws/amazon-codeguru-profiler-python-agent, profile_encoder.py). Children are an object keyed by
 * frame name: frames of one name under one parent are merged. Kernel frames
 * are named "function_[k]", as profile-bee names them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/json.h"
#include "perfport/plugin.h"

enum cg_type { T_RUNNABLE, T_BLOCKED, T_WAITING, T_TIMED_WAITING, T_IDLE, T_COUNT };

static const char *const type_names[T_COUNT] = {
	"RUNNABLE", "BLOCKED", "WAITING", "TIMED_WAITING", "IDLE",
};

/* perfport counter -> CodeGuru type, by the counter's name */
static const struct { const char *counter; enum cg_type type; } type_map[] = {
	{ "on-cpu", T_RUNNABLE }, { "preempted", T_RUNNABLE }, { "lock", T_BLOCKED },
	{ "io", T_WAITING }, { "sleep", T_WAITING }, { "timed-sleep", T_TIMED_WAITING },
	{ "idle", T_IDLE },
};

static const struct perfport_option_def options[] = {
	{ "fleet_instance_id", PERFPORT_OPT_STRING, NULL, NULL,
	  "fleetInfo.fleetInstanceId (default: the recording's host name)" },
	{ "host_type", PERFPORT_OPT_STRING, "unknown", NULL, "fleetInfo.hostType, e.g. the EC2 instance type" },
	{ "interval_ms", PERFPORT_OPT_INT, NULL, NULL,
	  "sampling interval for off-CPU sample-equivalents (default: the on-CPU "
	  "event's period, else 10)" },
	{ "profiling_group", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: the profiling group ([A-Za-z0-9_-], 1 to 255)" },
	{ "region", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: AWS region (default: AWS_REGION, AWS_DEFAULT_REGION, ~/.aws/config)" },
	{ "endpoint", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: service URL (default https://codeguru-profiler.REGION.amazonaws.com)" },
	{ "configure_agent", PERFPORT_OPT_BOOL, "false", NULL,
	  "upload: call ConfigureAgent first, and post nothing if it says shouldProfile false" },
};

struct cg_node {
	const char *name;         /* the frame's function */
	const char *file;
	uint32_t line;
	bool kernel;
	uint32_t parent;
	uint32_t first_child, last_child, next; /* 0: none (node 0 is the root) */
	uint64_t ns[T_COUNT];     /* off-CPU time, until converted */
	uint64_t samples[T_COUNT];
};

struct codeguru {
	const struct perfport_host *host;
	const char *fleet_id, *host_type, *group, *region, *endpoint;
	bool configure;
	long interval_ms;
	unsigned period_s;        /* ConfigureAgent's periodInSeconds, 0 none */
	/* the merged tree */
	struct cg_node *nodes;
	size_t nr, cap;
	uint32_t *slots;          /* (parent, name, kernel) -> node; 0 empty (the root is never a child) */
	size_t slots_cap;
	int type_of[64];          /* per profile counter: enum cg_type, -1 none */
	uint64_t interval_ns;
	uint64_t totals[T_COUNT];
	FILE *out;
	bool oom;
};

static uint64_t key_hash(uint32_t parent, const char *name, bool kernel)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ ((uint64_t)parent << 1 | kernel);

	for (const unsigned char *q = (const unsigned char *)name; *q; q++)
		h = (h ^ *q) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

static bool grow_slots(struct codeguru *c)
{
	size_t cap = c->slots_cap ? c->slots_cap * 2 : 4096;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return false;
	for (size_t i = 0; i < c->slots_cap; i++) {
		const struct cg_node *n;
		size_t j;

		if (!c->slots[i])
			continue;
		n = &c->nodes[c->slots[i]];
		for (j = key_hash(n->parent, n->name, n->kernel) & (cap - 1); s[j];
		     j = (j + 1) & (cap - 1))
			;
		s[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = s;
	c->slots_cap = cap;
	return true;
}

/* The child of @parent for frame @f: frames of one name (and side: kernel
 * or not) under one parent are one node, as JSON object keys must be. */
static uint32_t child_of(struct codeguru *c, uint32_t parent, const struct perfport_frame *f)
{
	bool kernel = f->flags & PERFPORT_FRAME_KERNEL;
	struct cg_node *n;
	uint32_t id;
	size_t j;

	if ((c->nr + 1) * 2 > c->slots_cap && !grow_slots(c)) {
		c->oom = true;
		return 0;
	}
	for (j = key_hash(parent, f->function, kernel) & (c->slots_cap - 1); c->slots[j];
	     j = (j + 1) & (c->slots_cap - 1)) {
		n = &c->nodes[c->slots[j]];
		if (n->parent == parent && n->kernel == kernel && !strcmp(n->name, f->function))
			return c->slots[j];
	}
	if (c->nr == c->cap) {
		size_t cap = c->cap * 2;
		struct cg_node *m = realloc(c->nodes, cap * sizeof(*m));

		if (!m) {
			c->oom = true;
			return 0;
		}
		c->nodes = m;
		c->cap = cap;
	}
	id = (uint32_t)c->nr++;
	n = &c->nodes[id];
	memset(n, 0, sizeof(*n));
	n->name = f->function;
	n->file = f->file;
	n->line = f->line;
	n->kernel = kernel;
	n->parent = parent;
	c->slots[j] = id;
	/* children stay in the tree's order: sorted by name */
	if (c->nodes[parent].last_child)
		c->nodes[c->nodes[parent].last_child].next = id;
	else
		c->nodes[parent].first_child = id;
	c->nodes[parent].last_child = id;
	return id;
}

static int add_stack(void *ctx, const struct perfport_profile *p, const uint32_t *frames,
		     size_t depth, uint32_t node)
{
	struct codeguru *c = ctx;
	uint32_t at = 0;

	for (size_t i = 0; i < depth && !c->oom; i++)
		at = child_of(c, at, perfport_frame_at(p, frames[i]));
	if (c->oom)
		return -1;
	for (unsigned k = 0; k < p->nr_counters && k < 64; k++) {
		int t = c->type_of[k];

		if (t < 0)
			continue;
		if (k == PERFPORT_COUNTER_ON_CPU || k == PERFPORT_COUNTER_IDLE)
			c->nodes[at].samples[t] += perfport_self_count(p, node, k);
		else
			c->nodes[at].ns[t] += perfport_self_value(p, node, k);
	}
	return 0;
}

/* A JSON string: @s, then @suffix (may be NULL), inside one pair of quotes. */
static void put_str(FILE *out, const char *s, const char *suffix)
{
	fputc('"', out);
	perfport_json_chars(out, s);
	if (suffix)
		fputs(suffix, out);
	fputc('"', out);
}

/* Off-CPU time into sample-equivalents, per node, rounded. */
static uint64_t counts_of(const struct codeguru *c, const struct cg_node *n, int t)
{
	return n->samples[t] + (n->ns[t] + c->interval_ns / 2) / c->interval_ns;
}

static void put_node(struct codeguru *c, uint32_t id)
{
	const struct cg_node *n = &c->nodes[id];
	bool first = true, any = false;

	fputc('{', c->out);
	for (int t = 0; t < T_COUNT; t++) {
		uint64_t v = counts_of(c, n, t);

		if (!v)
			continue;
		fputs(any ? "," : "\"counts\":{", c->out);
		put_str(c->out, type_names[t], NULL);
		fprintf(c->out, ":%" PRIu64, v);
		any = true;
	}
	if (any) {
		fputc('}', c->out);
		first = false;
	}
	if (n->first_child) {
		fputs(first ? "\"children\":{" : ",\"children\":{", c->out);
		for (uint32_t k = n->first_child; k; k = c->nodes[k].next) {
			if (k != n->first_child)
				fputc(',', c->out);
			put_str(c->out, c->nodes[k].name, c->nodes[k].kernel ? "_[k]" : NULL);
			fputc(':', c->out);
			put_node(c, k);
		}
		fputc('}', c->out);
		first = false;
	}
	if (id && n->file) {
		fputs(first ? "\"file\":" : ",\"file\":", c->out);
		put_str(c->out, n->file, NULL);
		if (n->line)
			fprintf(c->out, ",\"line\":[%" PRIu32 "]", n->line);
	}
	fputc('}', c->out);
}

static void total_counts(struct codeguru *c)
{
	for (size_t i = 0; i < c->nr; i++)
		for (int t = 0; t < T_COUNT; t++)
			c->totals[t] += counts_of(c, &c->nodes[i], t);
}

/* On-CPU time of the profile, in seconds (the agents' cpuTimeInSeconds). */
static double cpu_seconds(const struct perfport_profile *p)
{
	if (!p->nr_nodes || p->nr_counters <= PERFPORT_COUNTER_ON_CPU ||
	    strcmp(p->counter_units[PERFPORT_COUNTER_ON_CPU], "nanoseconds") != 0)
		return 0;
	return (double)perfport_total_value(p, 0, PERFPORT_COUNTER_ON_CPU) / 1e9;
}

/* Threads the profile saw, the idle task aside (metrics.numThreads). */
static size_t count_threads(const struct perfport_profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr_threads; i++)
		n += perfport_thread_at(p, i)->pid != 0;
	return n;
}

static enum perfport_status cg_init(const struct perfport_host *host,
				    const struct perfport_option *opts, size_t nr, void **state)
{
	struct codeguru *c = calloc(1, sizeof(*c));

	if (!c)
		return PERFPORT_ERROR;
	c->host = host;
	c->host_type = "unknown";
	for (size_t i = 0; i < nr; i++) {
		const char *v = opts[i].value;

		if (!v)
			continue;
		if (!strcmp(opts[i].name, "fleet_instance_id"))
			c->fleet_id = v;
		else if (!strcmp(opts[i].name, "host_type"))
			c->host_type = v;
		else if (!strcmp(opts[i].name, "interval_ms"))
			c->interval_ms = strtol(v, NULL, 10);
		else if (!strcmp(opts[i].name, "profiling_group"))
			c->group = v;
		else if (!strcmp(opts[i].name, "region"))
			c->region = v;
		else if (!strcmp(opts[i].name, "endpoint"))
			c->endpoint = v;
		else if (!strcmp(opts[i].name, "configure_agent"))
			c->configure = !strcmp(v, "true");
	}
	if (opts && c->interval_ms < 0) {
		host->log(host, PERFPORT_LOG_ERROR, "codeguru: interval_ms must be positive");
		free(c);
		return PERFPORT_ERROR;
	}
	*state = c;
	return PERFPORT_OK;
}

/* The sampling interval and the counters' types, for @p. */
static void setup(struct codeguru *c, const struct perfport_profile *p)
{
	/* the sampling interval: an option, else the on-CPU event's period */
	c->interval_ns = c->interval_ms > 0 ? (uint64_t)c->interval_ms * 1000000 : 0;
	for (size_t i = 0; i < p->nr_events && !c->interval_ns; i++) {
		const struct perfport_event *ev = perfport_event_at(p, i);

		if (strcmp(ev->role, "on-cpu") != 0)
			continue;
		if (ev->frequency)
			c->interval_ns = 1000000000ull / ev->frequency;
		else if (!strcmp(ev->unit, "nanoseconds"))
			c->interval_ns = ev->period;
	}
	if (!c->interval_ns)
		c->interval_ns = 10000000; /* 100 Hz, the agents' default */
	for (unsigned k = 0; k < 64; k++) {
		c->type_of[k] = -1;
		for (size_t m = 0; k < p->nr_counters && m < sizeof(type_map) / sizeof(type_map[0]); m++)
			if (!strcmp(p->counter_names[k], type_map[m].counter))
				c->type_of[k] = type_map[m].type;
	}
}

/* An empty call graph: the root alone. Return: false out of memory. */
static bool reset_tree(struct codeguru *c)
{
	free(c->nodes);
	free(c->slots);
	c->nodes = NULL;
	c->slots = NULL;
	c->slots_cap = 0;
	memset(c->totals, 0, sizeof(c->totals));
	c->cap = 1024;
	c->nr = 1;
	c->nodes = calloc(c->cap, sizeof(*c->nodes));
	if (!c->nodes)
		return false;
	c->nodes[0].name = "";
	return true;
}

/*
 * Counts of one counter of the tree's @node, in its slice: into the call
 * graph at the node's path.
 */
static int add_slice_value(struct codeguru *c, const struct perfport_profile *p,
			   const struct perfport_slice_value *v)
{
	uint32_t path[512], depth = 0, at = 0;
	int t;

	if (v->counter >= 64 || (t = c->type_of[v->counter]) < 0 || v->node >= p->nr_nodes)
		return 0;
	for (uint32_t n = v->node; n && n != UINT32_MAX && depth < 512; n = perfport_node_at(p, n)->parent)
		path[depth++] = perfport_node_at(p, n)->frame;
	while (depth-- > 0 && !c->oom)
		at = child_of(c, at, perfport_frame_at(p, path[depth]));
	if (c->oom)
		return -1;
	if (v->counter == PERFPORT_COUNTER_ON_CPU || v->counter == PERFPORT_COUNTER_IDLE)
		c->nodes[at].samples[t] += v->count;
	else
		c->nodes[at].ns[t] += v->value;
	return 0;
}

/* The profile JSON of the call graph built, for [@start_ns, @end_ns). */
static enum perfport_status put_profile(struct codeguru *c, const struct perfport_profile *p,
					uint64_t start_ns, uint64_t end_ns, FILE *out)
{
	uint64_t start_ms = start_ns / 1000000, end_ms = end_ns / 1000000, sampled, duration_ms;
	double secs;
	bool any = false;

	total_counts(c);
	c->out = out;
	/*
	 * The agents' agentMetadata: numTimesSampled counts sampling rounds
	 * (every thread sampled once per round) and sampleWeights[TYPE] is
	 * rounds per second for every type, so CodeGuru's time for a type,
	 * counts / sampleWeight, is what the counts stand for at the
	 * recording's rate. Counts are per round already (samples, and
	 * off-CPU time / interval).
	 */
	duration_ms = end_ms > start_ms ? end_ms - start_ms : 1;
	secs = (double)duration_ms / 1000.0;
	sampled = (uint64_t)(secs * 1e9 / (double)c->interval_ns + 0.5);
	if (!sampled)
		sampled = 1;
	fprintf(out, "{\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"agentMetadata\":{"
		"\"sampleWeights\":{", start_ms, end_ms);
	for (int t = 0; t < T_COUNT; t++) {
		if (!c->totals[t])
			continue;
		fprintf(out, "%s\"%s\":%.10g", any ? "," : "", type_names[t], (double)sampled / secs);
		any = true;
	}
	fprintf(out, "},\"durationInMs\":%" PRIu64 ",\"fleetInfo\":{\"fleetInstanceId\":",
		duration_ms);
	put_str(out, c->fleet_id ? c->fleet_id : p->hostname ? p->hostname : "unknown", NULL);
	fputs(",\"hostType\":", out);
	put_str(out, c->host_type, NULL);
	if (p->nr_cpus)
		fprintf(out, ",\"vCPUs\":%" PRIu32, p->nr_cpus);
	fputs("},\"agentInfo\":{\"type\":\"perfport\",\"version\":", out);
	put_str(out, c->host->version ? c->host->version : "unknown", NULL);
	fputc('}', out);
	if (p->os_release) {
		fputs(",\"runtimeVersion\":", out);
		put_str(out, p->os_release, NULL);
	}
	fprintf(out, ",\"cpuTimeInSeconds\":%.6f,\"metrics\":{\"numThreads\":%zu}",
		cpu_seconds(p), count_threads(p));
	fprintf(out, ",\"numTimesSampled\":%" PRIu64 "},\"callgraph\":", sampled);
	put_node(c, 0);
	fputs("}\n", out);
	return ferror(out) ? PERFPORT_ERROR : PERFPORT_OK;
}

static enum perfport_status cg_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct codeguru *c = state;

	setup(c, p);
	if (!reset_tree(c) || c->host->stacks(p, add_stack, c) || c->oom) {
		c->host->log(c->host, PERFPORT_LOG_ERROR, "codeguru: out of memory");
		return PERFPORT_ERROR;
	}
	return put_profile(c, p, p->start_ns, p->end_ns, out);
}

/* The region from ~/.aws/config (AWS_CONFIG_FILE), [default] or [profile P]. */
static bool config_region(char *out, size_t max)
{
	const char *file = getenv("AWS_CONFIG_FILE"), *home = getenv("HOME"), *prof = getenv("AWS_PROFILE");
	char path[4096], want[300], line[1024];
	bool in = false, found = false;
	FILE *f;

	if (!file || !*file) {
		snprintf(path, sizeof(path), "%s/.aws/config", home ? home : "");
		file = path;
	}
	if (prof && *prof && strcmp(prof, "default"))
		snprintf(want, sizeof(want), "[profile %s]", prof);
	else
		snprintf(want, sizeof(want), "[default]");
	f = fopen(file, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *l = line, *e;

		while (*l == ' ' || *l == '\t')
			l++;
		for (e = l + strlen(l); e > l && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\r'); )
			*--e = 0;
		if (*l == '[') {
			in = !strcmp(l, want);
		} else if (in && !strncmp(l, "region", 6)) {
			char *v = strchr(l, '=');

			if (v) {
				for (v++; *v == ' '; v++)
					;
				snprintf(out, max, "%s", v);
				found = *out != 0;
			}
		}
	}
	fclose(f);
	return found;
}

static bool valid_group(const char *g)
{
	size_t n = g ? strlen(g) : 0;

	if (!n || n > 255)
		return false;
	for (; *g; g++)
		if (!((*g >= 'a' && *g <= 'z') || (*g >= 'A' && *g <= 'Z') ||
		      (*g >= '0' && *g <= '9') || *g == '_' || *g == '-'))
			return false;
	return true;
}

/*
 * POST a JSON @body to @base/profilingGroups/GROUP/@what, signed for
 * CodeGuru in @region; kept in the spool (if it cannot be delivered) when
 * @spool. *@rs receives the answer (free rs->body with host->free()).
 */
static enum perfport_status post(struct codeguru *c, const char *base, const char *what,
				 const char *region, const char *body, size_t len, bool spool,
				 struct perfport_http_response *rs)
{
	const char *headers[] = { "Content-Type: application/json", NULL };
	struct perfport_http_request rq = { .struct_size = sizeof(rq) };
	char url[2048], sig[256];

	snprintf(url, sizeof(url), "%s/profilingGroups/%s/%s", base, c->group, what);
	snprintf(sig, sizeof(sig), "aws:amz:%s:codeguru-profiler", region);
	rq.method = "POST";
	rq.url = url;
	rq.headers = headers;
	rq.body = body;
	rq.body_len = len;
	rq.aws_sigv4 = sig;
	rq.spool_tag = spool ? "codeguru" : NULL;
	return c->host->http(&rq, rs);
}

/* The unsigned number after the key @key (quoted) in the JSON @body, 0 if none. */
static unsigned json_uint(const char *body, const char *key)
{
	const char *q = body ? strstr(body, key) : NULL;
	unsigned long v;

	if (!q || !(q = strchr(q + strlen(key), ':')))
		return 0;
	v = strtoul(q + 1, NULL, 10);
	return v > 86400 ? 86400 : (unsigned)v;
}

/*
 * ConfigureAgent, with the fleet instance id. Return: 1 to profile, 0 if
 * the answer says "shouldProfile": false, -1 on failure (logged).
 */
static int configure_agent(struct codeguru *c, const struct perfport_profile *p, const char *base,
			   const char *region)
{
	const struct perfport_host *h = c->host;
	struct perfport_http_response rs = { .struct_size = sizeof(rs) };
	const char *fleet = c->fleet_id ? c->fleet_id : p->hostname ? p->hostname : "unknown";
	char *body = NULL, *should;
	size_t len = 0;
	FILE *mem = open_memstream(&body, &len);
	int ret;

	if (!mem)
		return -1;
	fputs("{\"fleetInstanceId\":", mem);
	put_str(mem, fleet, NULL);
	fputs(",\"metadata\":{\"AgentId\":\"perfport\"}}", mem);
	if (fclose(mem)) {
		free(body);
		return -1;
	}
	if (post(c, base, "configureAgent", region, body, len, false, &rs) != PERFPORT_OK) {
		h->log(h, PERFPORT_LOG_ERROR, "codeguru: ConfigureAgent failed");
		ret = -1;
	} else {
		should = rs.body ? strstr(rs.body, "\"shouldProfile\"") : NULL;
		if (should)
			should = strchr(should + 15, ':');
		while (should && (*++should == ' '))
			;
		ret = should && !strncmp(should, "false", 5) ? 0 : 1;
		c->period_s = json_uint(rs.body, "\"periodInSeconds\"");
	}
	h->free(rs.body);
	free(body);
	return ret;
}

static bool has_slices(const struct perfport_profile *p)
{
	return PERFPORT_HAS(p, struct perfport_profile, slice_values) && p->slice_ns &&
	       p->nr_slice_values && p->slice_value_size;
}

/*
 * ConfigureAgent's periodInSeconds, honoured as the agents do: one
 * PostAgentProfile per reporting period of the recording (whole slices of
 * the host's, at least one), each with its own start, end, sampling rounds
 * and call graph, and a token of the run's profile id and its number, so a
 * resend posts none twice.
 */
static enum perfport_status post_periods(struct codeguru *c, const struct perfport_profile *p,
					 const char *base, const char *region)
{
	const struct perfport_host *h = c->host;
	uint64_t per = ((uint64_t)c->period_s * 1000000000ull + p->slice_ns - 1) / p->slice_ns;
	enum perfport_status ret = PERFPORT_OK;
	size_t i = 0;
	unsigned n = 0, posted = 0;

	setup(c, p);
	while (i < p->nr_slice_values) {
		uint32_t first = perfport_slice_value_at(p, i)->slice / per * per;
		uint64_t w0 = p->slice_start_ns + first * p->slice_ns, w1 = w0 + per * p->slice_ns;
		struct perfport_http_response rs = { .struct_size = sizeof(rs) };
		char *body = NULL, what[128];
		size_t len = 0;
		FILE *mem;

		if (!reset_tree(c))
			return PERFPORT_ERROR;
		for (; i < p->nr_slice_values && perfport_slice_value_at(p, i)->slice < first + per; i++)
			if (add_slice_value(c, p, perfport_slice_value_at(p, i)))
				return PERFPORT_ERROR;
		mem = open_memstream(&body, &len);
		if (!mem)
			return PERFPORT_ERROR;
		if (put_profile(c, p, w0 < p->start_ns ? p->start_ns : w0, w1 > p->end_ns ? p->end_ns : w1,
				mem) != PERFPORT_OK || fclose(mem)) {
			free(body);
			return PERFPORT_ERROR;
		}
		snprintf(what, sizeof(what), "agentProfile?profileToken=%.36s-%u", p->profile_id, n++);
		if (post(c, base, what, region, body, len, true, &rs) != PERFPORT_OK)
			ret = PERFPORT_ERROR;
		else
			posted++;
		h->free(rs.body);
		free(body);
	}
	h->log(h, PERFPORT_LOG_INFO, "codeguru: %u of %u profiles of %us posted to '%s' (ConfigureAgent's "
	       "periodInSeconds)", posted, n, c->period_s, c->group);
	return ret;
}

/*
 * PostAgentProfile: the JSON write() produces, POSTed with the run's
 * profile id as profileToken (a resend keeps it: the service drops a
 * duplicate), signed by the host with AWS SigV4.
 */
static enum perfport_status cg_upload(void *state, const struct perfport_profile *p)
{
	struct codeguru *c = state;
	const struct perfport_host *h = c->host;
	struct perfport_http_response rs = { .struct_size = sizeof(rs) };
	char region[128] = "", base[1024], what[256];
	const char *env;
	enum perfport_status st;
	char *body = NULL;
	size_t len = 0;
	FILE *mem;

	if (!PERFPORT_HAS(h, struct perfport_host, http) || !h->http) {
		h->log(h, PERFPORT_LOG_ERROR, "codeguru: this perfport cannot upload");
		return PERFPORT_ERROR;
	}
	if (!valid_group(c->group)) {
		h->log(h, PERFPORT_LOG_ERROR, "codeguru: upload needs -O codeguru.profiling_group=NAME "
		       "([A-Za-z0-9_-], 1 to 255 characters)%s%s%s", c->group ? ", not '" : "",
		       c->group ? c->group : "", c->group ? "'" : "");
		return PERFPORT_USAGE;
	}
	if (c->region)
		snprintf(region, sizeof(region), "%s", c->region);
	else if ((env = getenv("AWS_REGION")) && *env)
		snprintf(region, sizeof(region), "%s", env);
	else if ((env = getenv("AWS_DEFAULT_REGION")) && *env)
		snprintf(region, sizeof(region), "%s", env);
	else if (!config_region(region, sizeof(region))) {
		h->log(h, PERFPORT_LOG_ERROR, "codeguru: no AWS region: -O codeguru.region=..., "
		       "AWS_REGION, or region in ~/.aws/config");
		return PERFPORT_USAGE;
	}
	if (c->endpoint)
		snprintf(base, sizeof(base), "%s", c->endpoint);
	else
		snprintf(base, sizeof(base), "https://codeguru-profiler.%s.amazonaws.com", region);
	if (c->configure) {
		int should = configure_agent(c, p, base, region);

		if (should < 0)
			return PERFPORT_ERROR;
		if (!should) {
			h->log(h, PERFPORT_LOG_WARN, "codeguru: ConfigureAgent says not to profile now "
			       "(shouldProfile false): nothing posted");
			return PERFPORT_OK;
		}
	}
	if (c->period_s && has_slices(p) &&
	    p->end_ns - p->start_ns > (uint64_t)c->period_s * 1000000000ull)
		return post_periods(c, p, base, region);
	mem = open_memstream(&body, &len);
	if (!mem)
		return PERFPORT_ERROR;
	st = cg_write(state, p, mem);
	if (fclose(mem) || st != PERFPORT_OK) {
		free(body);
		return PERFPORT_ERROR;
	}
	snprintf(what, sizeof(what), "agentProfile?profileToken=%s", p->profile_id);
	st = post(c, base, what, region, body, len, true, &rs);
	if (st == PERFPORT_OK)
		h->log(h, PERFPORT_LOG_INFO, "codeguru: profile %s posted to '%s'", p->profile_id, c->group);
	h->free(rs.body);
	free(body);
	return st;
}

static void cg_fini(void *state)
{
	struct codeguru *c = state;

	if (!c)
		return;
	free(c->nodes);
	free(c->slots);
	free(c);
}

/* The value of option @name in @opts (NULL: unset). */
static const char *cg_opt(const struct perfport_option *opts, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].value;
	return NULL;
}

/* ABI 1.6: what an upload needs (a group, a region), said before the
 * recording is read. */
static enum perfport_status cg_check(const struct perfport_host *h, const struct perfport_option *opts,
				     size_t nr, uint32_t mode)
{
	const char *group = cg_opt(opts, nr, "profiling_group"), *env;
	char region[128];

	if (!(mode & PERFPORT_CHECK_UPLOAD))
		return PERFPORT_OK;
	if (!valid_group(group)) {
		h->log(h, PERFPORT_LOG_ERROR, "codeguru: upload needs -O codeguru.profiling_group=NAME "
		       "([A-Za-z0-9_-], 1 to 255 characters)%s%s%s", group ? ", not '" : "",
		       group ? group : "", group ? "'" : "");
		return PERFPORT_USAGE;
	}
	if (!cg_opt(opts, nr, "region") && !((env = getenv("AWS_REGION")) && *env) &&
	    !((env = getenv("AWS_DEFAULT_REGION")) && *env) && !config_region(region, sizeof(region))) {
		h->log(h, PERFPORT_LOG_ERROR, "codeguru: no AWS region: -O codeguru.region=..., "
		       "AWS_REGION, or region in ~/.aws/config");
		return PERFPORT_USAGE;
	}
	return PERFPORT_OK;
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "codeguru",
	.description = "AWS CodeGuru Profiler agent profile JSON (PostAgentProfile)",
	.default_output = "profile.codeguru.json",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = cg_init,
	.write = cg_write,
	.upload = cg_upload,
	.fini = cg_fini,
	.flags = PERFPORT_EXPORTER_TIME_SLICES | PERFPORT_EXPORTER_WALL_CLOCK,
	.check = cg_check,
};
