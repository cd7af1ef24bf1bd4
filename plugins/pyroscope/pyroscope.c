/* SPDX-License-Identifier: MIT */
/*
 * pyroscope.c - the "pyroscope" exporter: Grafana Pyroscope, through its
 * /ingest HTTP API (pprof body, the series in the query) or its Connect API
 * (push.v1.PusherService/Push).
 *
 * Pyroscope names a series' profile types NAME:TYPE:UNIT:PERIOD_TYPE:
 * PERIOD_UNIT, NAME being the series' __name__; for /ingest that name
 * comes from the pprof's sample types (a type named "wall" makes it
 * "wall", one with "cpu" in it "process_cpu"). So two pprof profiles go:
 *   process_cpu: samples/count, cpu/nanoseconds (and idle/nanoseconds)
 *   wall: wall/nanoseconds (on-CPU and off-CPU time), then one type per
 *         off-CPU state: preempted, lock, io, sleep, timed_sleep
 * which the UI lists as process_cpu/cpu (its CPU profile) and the group
 * "wall" with a type per state. Both APIs send the same names.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/plugin.h"
#include "perfport/protobuf.h"

#define DEFAULT_SERVER "http://127.0.0.1:4040"

static const struct perfport_option_def options[] = {
	{ "server", PERFPORT_OPT_STRING, DEFAULT_SERVER, NULL,
	  "upload: the Pyroscope server, http[s]://HOST:PORT[/PREFIX]" },
	{ "api", PERFPORT_OPT_ENUM, "ingest", "ingest,push",
	  "upload: POST /ingest (pprof, the series in the query) or the Connect API "
	  "push.v1.PusherService/Push" },
	{ "app", PERFPORT_OPT_STRING, NULL, NULL,
	  "the application (service_name; default: --label service=, else the one process's "
	  "command, else \"perf\")" },
	{ "profiles", PERFPORT_OPT_LIST, "cpu,wall", "cpu,wall",
	  "what to send: cpu (process_cpu: on-CPU samples and time), wall (on-CPU plus "
	  "off-CPU time, and a type per off-CPU state)" },
	{ "tenant", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: the tenant, sent as X-Scope-OrgID (multi-tenant servers)" },
	{ "secret_header", PERFPORT_OPT_STRING, "Authorization=PYROSCOPE_AUTHORIZATION", NULL,
	  "upload: NAME=ENV: when $ENV is set, the header NAME with its value goes with each "
	  "request (e.g. \"Basic ...\" or \"Bearer ...\"; never logged or spooled)" },
};

enum { GROUP_CPU, GROUP_WALL, NR_GROUPS };

static const char *const group_name[NR_GROUPS] = { "process_cpu", "wall" };
static const char *const group_file[NR_GROUPS] = { "process_cpu.pb.gz", "wall.pb.gz" };

struct pyro {
	const struct perfport_host *host;
	const char *server, *app_opt, *tenant, *secret_header;
	bool push;
	bool want[NR_GROUPS];
	char app[256];
	char labels[2048];           /* ",k=v" pairs as Pyroscope's name{} takes them */
};

/* Pyroscope's rules (labelset.Validate*): a service name of [A-Za-z0-9_./-],
 * label names of [A-Za-z0-9_.], not starting "__"; a value without the
 * characters name{k=v,...} cannot carry. */
static bool name_char(int c, bool service)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || (service && (c == '-' || c == '/'));
}

static bool valid_name(const char *s, bool service)
{
	if (!*s || (!service && strncmp(s, "__", 2) == 0))
		return false;
	for (; *s; s++)
		if (!name_char((unsigned char)*s, service))
			return false;
	return true;
}

static bool valid_value(const char *s)
{
	return *s && !strpbrk(s, ",{}=");
}

static enum perfport_status usage(const struct perfport_host *h)
{
	return (h->abi_version & 0xffff) >= 4 ? PERFPORT_USAGE : PERFPORT_ERROR;
}

static enum perfport_status pyro_init(const struct perfport_host *host,
				      const struct perfport_option *opts, size_t nr, void **state)
{
	struct pyro *s;

	if (!PERFPORT_HAS(host, struct perfport_host, pprof) || !host->pprof ||
	    !PERFPORT_HAS(host, struct perfport_host, create)) {
		host->log(host, PERFPORT_LOG_ERROR, "pyroscope: this perfport is too old (plugin ABI 1.1 "
			  "with the pprof encoder needed)");
		return PERFPORT_ERROR;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return PERFPORT_ERROR;
	s->host = host;
	for (size_t i = 0; i < nr; i++) {
		const char *v = opts[i].value;

		if (!v)
			continue;
		if (strcmp(opts[i].name, "server") == 0)
			s->server = v;
		else if (strcmp(opts[i].name, "api") == 0)
			s->push = strcmp(v, "push") == 0;
		else if (strcmp(opts[i].name, "app") == 0)
			s->app_opt = v;
		else if (strcmp(opts[i].name, "profiles") == 0) {
			s->want[GROUP_CPU] = strstr(v, "cpu") != NULL;
			s->want[GROUP_WALL] = strstr(v, "wall") != NULL;
		} else if (strcmp(opts[i].name, "tenant") == 0)
			s->tenant = v;
		else if (strcmp(opts[i].name, "secret_header") == 0)
			s->secret_header = v;
	}
	if (s->app_opt && !valid_name(s->app_opt, true)) {
		host->log(host, PERFPORT_LOG_ERROR, "pyroscope: app '%s' is not a Pyroscope service "
			  "name (letters, digits, '_', '.', '-', '/')", s->app_opt);
		free(s);
		return usage(host);
	}
	*state = s;
	return PERFPORT_OK;
}

/* The app name and the labels, from the options and the profile. */
static enum perfport_status series_of(struct pyro *s, const struct perfport_profile *p)
{
	const struct perfport_thread *one = perfport_single_process(p);
	const char *app = s->app_opt;
	size_t n = 0;

	for (size_t i = 0; !app && i < p->nr_labels; i++)
		if (strcmp(p->labels[i].key, "service") == 0)
			app = p->labels[i].value;
	if (app && !valid_name(app, true)) {
		s->host->log(s->host, PERFPORT_LOG_ERROR, "pyroscope: service '%s' is not a Pyroscope "
			     "service name (letters, digits, '_', '.', '-', '/')", app);
		return usage(s->host);
	}
	if (!app) {
		/* a command name: what Pyroscope cannot take becomes '_' */
		snprintf(s->app, sizeof(s->app), "%s", one && one->comm && *one->comm ? one->comm : "perf");
		for (char *q = s->app; *q; q++)
			if (!name_char((unsigned char)*q, true))
				*q = '_';
	} else {
		snprintf(s->app, sizeof(s->app), "%s", app);
	}
	s->labels[0] = 0;
	for (size_t i = 0; i < p->nr_labels; i++) {
		const struct perfport_label *l = &p->labels[i];
		int w;

		if (strcmp(l->key, "service") == 0)
			continue;
		if (!valid_name(l->key, false) || !valid_value(l->value)) {
			s->host->log(s->host, PERFPORT_LOG_ERROR, "pyroscope: label '%s=%s' cannot be a "
				     "Pyroscope label (a name of letters, digits, '_', '.', not starting "
				     "\"__\"; a value without ',', '{', '}', '=')", l->key, l->value);
			return usage(s->host);
		}
		w = snprintf(s->labels + n, sizeof(s->labels) - n, ",%s=%s", l->key, l->value);
		if (w < 0 || (size_t)w >= sizeof(s->labels) - n) {
			s->host->log(s->host, PERFPORT_LOG_ERROR, "pyroscope: too many labels");
			return usage(s->host);
		}
		n += (size_t)w;
	}
	return PERFPORT_OK;
}

static int counter_index(const struct perfport_profile *p, const char *name)
{
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
		if (strcmp(p->counter_names[c], name) == 0)
			return (int)c;
	return -1;
}

static uint64_t bit(const struct perfport_profile *p, const char *name)
{
	int c = counter_index(p, name);

	return c < 0 ? 0 : 1ull << c;
}

/* The sample types of @group for @p; 0 when it has no data. */
static size_t group_types(const struct perfport_profile *p, int group,
			  struct perfport_pprof_type *t, char names[][32])
{
	static const char *const off[] = { "preempted", "lock", "io", "sleep", "timed-sleep" };
	uint64_t present = p->counters_present, offcpu = 0;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		offcpu |= bit(p, off[i]);
	if (group == GROUP_CPU) {
		uint64_t on = bit(p, "on-cpu"), idle = bit(p, "idle");
		int c = counter_index(p, "on-cpu");
		bool ns = c >= 0 && strcmp(p->counter_units[c], "nanoseconds") == 0;

		if (!(present & (on | idle)))
			return 0;
		t[n++] = (struct perfport_pprof_type){ "samples", "count", on, 1 };
		t[n++] = ns ? (struct perfport_pprof_type){ "cpu", "nanoseconds", on, 0 } :
			      (struct perfport_pprof_type){ "cpu_events", "count", on, 0 };
		if (present & idle)
			t[n++] = (struct perfport_pprof_type){ "idle", "nanoseconds", idle, 0 };
		return n;
	}
	if (!(present & offcpu))
		return 0;
	{
		int c = counter_index(p, "on-cpu");
		/* on-CPU time is wall time too, when it is time (not events) */
		uint64_t on = c >= 0 && strcmp(p->counter_units[c], "nanoseconds") == 0 ? 1ull << c : 0;

		t[n++] = (struct perfport_pprof_type){ "wall", "nanoseconds", offcpu | on, 0 };
	}
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		if (!(present & bit(p, off[i])))
			continue;
		/* Pyroscope's ids are ':'-separated words: '_' for '-' */
		snprintf(names[n], 32, "%s", off[i]);
		for (char *q = names[n]; *q; q++)
			if (*q == '-')
				*q = '_';
		t[n] = (struct perfport_pprof_type){ names[n], "nanoseconds", bit(p, off[i]), 0 };
		n++;
	}
	return n;
}

static enum perfport_status encode(struct pyro *s, const struct perfport_profile *p, int group,
				   void **buf, size_t *len)
{
	struct perfport_pprof_type t[8];
	char names[8][32];
	size_t n = group_types(p, group, t, names);
	struct perfport_pprof_opts o = { .struct_size = sizeof(o), .gzip = 1, .nr_types = n,
					 .type_size = sizeof(t[0]), .types = t };

	*buf = NULL;
	*len = 0;
	if (!n)
		return PERFPORT_OK;
	return s->host->pprof(p, &o, buf, len);
}

/* The sampling rate Pyroscope's query wants, in Hz (100 when unknown). */
static uint64_t sample_rate(const struct perfport_profile *p)
{
	for (size_t i = 0; i < p->nr_events; i++) {
		const struct perfport_event *e = perfport_event_at(p, i);

		if (strcmp(e->role, "on-cpu") != 0)
			continue;
		if (e->frequency)
			return e->frequency;
		if (e->period && strcmp(e->unit, "nanoseconds") == 0)
			return 1000000000ull / e->period ? 1000000000ull / e->period : 1;
	}
	return 100;
}

/* "/ingest?..." for @group, the name{labels} percent-encoded. */
static void ingest_query(struct pyro *s, const struct perfport_profile *p, char *q, size_t size)
{
	char name[2560], enc[3 * sizeof(name)];
	size_t k = 0;

	snprintf(name, sizeof(name), "%s{%s}", s->app, s->labels[0] ? s->labels + 1 : "");
	for (const unsigned char *c = (const unsigned char *)name; *c && k + 4 < sizeof(enc); c++) {
		if (name_char(*c, true) || *c == '-' || *c == '~')
			enc[k++] = (char)*c;
		else
			k += (size_t)snprintf(enc + k, 4, "%%%02X", *c);
	}
	enc[k] = 0;
	snprintf(q, size, "/ingest?name=%s&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof"
		 "&sampleRate=%" PRIu64 "&spyName=perfport&units=samples&aggregationType=sum",
		 enc, (uint64_t)(p->start_ns / 1000000000u), (uint64_t)((p->end_ns + 999999999u) / 1000000000u),
		 sample_rate(p));
}

/* write: the pprof of each profile type group, and ingest.txt, what an
 * upload would send (a dry run a user can replay with curl). */
static enum perfport_status pyro_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct pyro *s = state;
	enum perfport_status st = series_of(s, p);
	int sent = 0;

	if (st != PERFPORT_OK)
		return st;
	for (int g = 0; g < NR_GROUPS; g++) {
		char q[8192];
		void *buf;
		size_t len;
		FILE *f;

		if (!s->want[g])
			continue;
		st = encode(s, p, g, &buf, &len);
		if (st != PERFPORT_OK)
			return st;
		if (!buf)
			continue;
		f = s->host->create(s->host, group_file[g]);
		if (!f || fwrite(buf, 1, len, f) != len) {
			s->host->free(buf);
			if (f)
				s->host->log(s->host, PERFPORT_LOG_ERROR, "pyroscope: cannot write '%s'",
					     group_file[g]);
			return PERFPORT_ERROR;
		}
		s->host->free(buf);
		ingest_query(s, p, q, sizeof(q));
		fprintf(out, "# %s\nPOST %s\n%s\n", group_name[g], q, group_file[g]);
		sent++;
	}
	if (!sent)
		s->host->log(s->host, PERFPORT_LOG_WARN, "pyroscope: the recording has no data for "
			     "the profiles asked for");
	return PERFPORT_OK;
}

static void server_url(struct pyro *s, char *url, size_t size, const char *path)
{
	size_t n = strlen(s->server);

	while (n && s->server[n - 1] == '/')
		n--;
	snprintf(url, size, "%.*s%s", (int)n, s->server, path);
}

static enum perfport_status post(struct pyro *s, const char *url, const char *ctype,
				 const void *body, size_t len)
{
	const struct perfport_host *h = s->host;
	char tenant[300];
	const char *hdr[4] = { ctype, NULL, NULL, NULL };
	size_t nh = 1;
	const char *eq = s->secret_header ? strchr(s->secret_header, '=') : NULL, *env = NULL;
	struct perfport_http_request rq = { .struct_size = sizeof(rq), .method = "POST", .url = url,
					    .headers = hdr, .body = body, .body_len = len,
					    .spool_tag = "pyroscope" };
	struct perfport_http_response rs = { .struct_size = sizeof(rs) };
	enum perfport_status st;

	if (s->push)
		hdr[nh++] = "Connect-Protocol-Version: 1";
	if (s->tenant) {
		snprintf(tenant, sizeof(tenant), "X-Scope-OrgID: %s", s->tenant);
		hdr[nh++] = tenant;
	}
	if (eq && eq[1])
		env = getenv(eq + 1);
	if (env && *env) {
		if ((h->abi_version & 0xffff) < 2) {
			h->log(h, PERFPORT_LOG_ERROR, "pyroscope: $%s is set, but this perfport cannot "
			       "send a secret header (it needs plugin ABI 1.2)", eq + 1);
			return PERFPORT_ERROR;
		}
		rq.secret_header = s->secret_header;
	}
	st = h->http(&rq, &rs);
	h->free(rs.body);
	return st;
}

/* push.v1.PushRequest: one RawProfileSeries per group, its labels the
 * series' (as /ingest would make them), one RawSample with the pprof. */
static void push_series(struct perfport_pb *rq, struct pyro *s, const struct perfport_profile *p,
			int group, const void *prof, size_t len)
{
	struct perfport_pb series = { 0 }, sample = { 0 };
	char id[40], labels[sizeof(s->labels)];
	char *save = NULL;
	const char *fixed[][2] = { { "__name__", group_name[group] }, { "service_name", s->app },
				   { "__delta__", "false" }, { "pyroscope_spy", "perfport" } };

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		struct perfport_pb lp = { 0 };

		perfport_pb_string(&lp, 1, fixed[i][0]);
		perfport_pb_string(&lp, 2, fixed[i][1]);
		perfport_pb_message(&series, 1, &lp);
	}
	snprintf(labels, sizeof(labels), "%s", s->labels);
	for (char *kv = strtok_r(labels, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		struct perfport_pb lp = { 0 };
		char *eq = strchr(kv, '=');

		*eq = 0;
		perfport_pb_string(&lp, 1, kv);
		perfport_pb_string(&lp, 2, eq + 1);
		perfport_pb_message(&series, 1, &lp);
	}
	perfport_pb_bytes_field(&sample, 1, prof, len);
	/* a UUID per series: the run's, its last digit the group's */
	snprintf(id, sizeof(id), "%s", p->profile_id ? p->profile_id : "");
	if (strlen(id) == 36)
		id[35] = "0123456789abcdef"[(strchr("0123456789abcdef", id[35]) ?
					     strchr("0123456789abcdef", id[35]) -
					     "0123456789abcdef" : 0) ^ group];
	perfport_pb_string(&sample, 2, id);
	perfport_pb_message(&series, 2, &sample);
	perfport_pb_message(rq, 1, &series);
}

static enum perfport_status pyro_upload(void *state, const struct perfport_profile *p)
{
	struct pyro *s = state;
	const struct perfport_host *h = s->host;
	struct perfport_pb push = { 0 };
	enum perfport_status st = series_of(s, p);
	int sent = 0;

	if (st != PERFPORT_OK)
		return st;
	if (strncmp(s->server, "http://", 7) != 0 && strncmp(s->server, "https://", 8) != 0) {
		h->log(h, PERFPORT_LOG_ERROR, "pyroscope: server '%s' is not an http:// or https:// URL",
		       s->server);
		return usage(h);
	}
	/* every profile is sent, or kept in the spool by the host, whatever
	 * happened to the one before: the first failure is the status */
	for (int g = 0; g < NR_GROUPS && st != PERFPORT_USAGE; g++) {
		char url[10240], q[8192];
		enum perfport_status r;
		void *buf;
		size_t len;

		if (!s->want[g])
			continue;
		r = encode(s, p, g, &buf, &len);
		if (r != PERFPORT_OK || !buf) {
			st = st == PERFPORT_OK ? r : st;
			continue;
		}
		if (s->push) {
			push_series(&push, s, p, g, buf, len);
		} else {
			ingest_query(s, p, q, sizeof(q));
			server_url(s, url, sizeof(url), q);
			r = post(s, url, "Content-Type: application/octet-stream", buf, len);
			if (r == PERFPORT_OK)
				h->log(h, PERFPORT_LOG_INFO, "pyroscope: %s of '%s' sent (%zu bytes)",
				       group_name[g], s->app, len);
			st = st == PERFPORT_OK ? r : st;
		}
		h->free(buf);
		sent++;
	}
	if (st == PERFPORT_OK && s->push && sent) {
		char url[4096];

		if (push.oom) {
			h->log(h, PERFPORT_LOG_ERROR, "pyroscope: out of memory");
			st = PERFPORT_ERROR;
		} else {
			server_url(s, url, sizeof(url), "/push.v1.PusherService/Push");
			st = post(s, url, "Content-Type: application/proto", push.p, push.len);
			if (st == PERFPORT_OK)
				h->log(h, PERFPORT_LOG_INFO, "pyroscope: %d series of '%s' pushed (%zu bytes)",
				       sent, s->app, push.len);
		}
	}
	free(push.p);
	if (st != PERFPORT_OK && st != PERFPORT_USAGE && !strcmp(s->server, DEFAULT_SERVER))
		h->log(h, PERFPORT_LOG_ERROR, "pyroscope: no server was named, and the default %s "
		       "did not take it: name yours with -O pyroscope.server=URL", DEFAULT_SERVER);
	if (st == PERFPORT_OK && !sent)
		h->log(h, PERFPORT_LOG_WARN, "pyroscope: nothing sent: the recording has no data for "
		       "the profiles asked for");
	return st;
}

static void pyro_fini(void *state)
{
	free(state);
}

/* The value of option @name in @opts (NULL: unset). */
static const char *pyro_opt(const struct perfport_option *opts, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].value;
	return NULL;
}

/* ABI 1.6: the app name, said before the recording is read. */
static enum perfport_status pyro_check(const struct perfport_host *h, const struct perfport_option *opts,
				       size_t nr, uint32_t mode)
{
	const char *app = pyro_opt(opts, nr, "app");

	(void)mode;
	if (app && !valid_name(app, true)) {
		h->log(h, PERFPORT_LOG_ERROR, "pyroscope: app '%s' is not a Pyroscope service "
		       "name (letters, digits, '_', '.', '-', '/')", app);
		return PERFPORT_USAGE;
	}
	return PERFPORT_OK;
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "pyroscope",
	.description = "Grafana Pyroscope: process_cpu and wall (a type per off-CPU state) pprof, "
		       "sent to /ingest or pushed (Connect)",
	.default_output = "ingest.txt",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = pyro_init,
	.write = pyro_write,
	.upload = pyro_upload,
	.fini = pyro_fini,
	/* threads become the pprof's sample labels (pid, tid, thread) */
	.flags = PERFPORT_EXPORTER_DIRECTORY | PERFPORT_EXPORTER_BY_THREAD | PERFPORT_EXPORTER_WALL_CLOCK,
	.check = pyro_check,
};
