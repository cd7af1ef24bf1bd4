/* SPDX-License-Identifier: MIT */
/*
 * arms.c - the "arms" exporter: Alibaba ARMS continuous profiling logs, as
 * Simple Log Service stores them (../shared/seeds/003, the log data format):
 * one log per distinct stack and value type, every value a string, written
 * as JSON lines:
 *
 *   {"aggTypes":"sum","dataType":"CallStack","durationNs":"...","labels":"{...}",
 *    "language":"ebpf","name":"leaf /file.c","profileID":"<uuid>",
 *    "stack":"caller /file.c\ncaller's caller ...","stackID":"<16 hex>",
 *    "type":"profile_cpu","units":"nanoseconds","val":"...","valueTypes":"cpu"}
 *
 * Types: profile_cpu/cpu (on-CPU time) and profile_wall_clock/wall_clock
 * (on-CPU time plus every off-CPU state but idle: the seed's "CPU execution
 * time plus blocking, I/O waiting and lock competition"). A frame is
 * "function position", position the source file if known, else the module,
 * else "?"; stack runs from the leaf's parent down to the root, one frame a
 * line (spaces inside a function or position as U+00A0); stackID is
 * FNV-1a 64 over the whole stack in hex. Labels carry __name__ (the
 * application) and the stack's process and thread.
 * upload() posts the same logs with SLS PutLogs: protobuf LogGroups (a
 * dozen lines of encoder: the schema is four fields), LZ4 raw blocks, split
 * to stay under the service's limits, signed and sent by the host.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "perfport/json.h"
#include "perfport/plugin.h"
#include "perfport/protobuf.h"

static const struct perfport_option_def options[] = {
	{ "app", PERFPORT_OPT_STRING, NULL, NULL,
	  "the application, labels' __name__ (default: --label service=, else the "
	  "command of the one process recorded, else perf)" },
	{ "language", PERFPORT_OPT_STRING, "ebpf", NULL,
	  "the language field (ebpf: loongcollector's name for native profiles)" },
	{ "endpoint", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: SLS endpoint host (the project is put in front) or a full URL" },
	{ "project", PERFPORT_OPT_STRING, NULL, NULL, "upload: the SLS project" },
	{ "logstore", PERFPORT_OPT_STRING, "logstore-profiling", NULL, "upload: the logstore" },
	{ "region", PERFPORT_OPT_STRING, NULL, NULL, "upload: region for signature v4" },
	{ "signature", PERFPORT_OPT_ENUM, "v4", "v4,v1", "upload: signature version" },
	{ "topic", PERFPORT_OPT_STRING, "", NULL, "upload: the LogGroup topic" },
	{ "source", PERFPORT_OPT_STRING, NULL, NULL, "upload: the LogGroup source (default: host)" },
	{ "max_logs", PERFPORT_OPT_INT, "4096", NULL, "upload: logs per request at most" },
	{ "max_bytes", PERFPORT_OPT_INT, "3000000", NULL,
	  "upload: uncompressed bytes per request at most" },
	{ "types", PERFPORT_OPT_LIST, "cpu,wall_clock", "cpu,wall_clock",
	  "profile types to write: cpu (profile_cpu), wall_clock (profile_wall_clock)" },
};

/* A protobuf LogGroup being encoded (upload). */
struct arms {
	const struct perfport_host *host;
	const char *language, *app;
	const char *name;         /* the application of this profile (app_name()) */
	const char *endpoint, *project, *logstore, *region, *signature, *topic, *source;
	long max_logs, max_bytes;
	struct perfport_pb group;          /* the logs of the request being filled */
	size_t nr_group;
	unsigned requests, failed;
	bool upload;              /* one_stack encodes logs instead of writing lines */
	bool cpu, wall;
	FILE *out;
	char *labels;             /* the labels field of the stack being written */
	uint64_t duration_ns;
	const struct perfport_profile *p;
	int err;
};

static void put_field(FILE *out, bool first, const char *key, const char *value)
{
	fprintf(out, "%s\"%s\":\"", first ? "" : ",", key);
	perfport_json_chars(out, value);
	fputc('"', out);
}

static const char *position(const struct perfport_frame *f)
{
	return f->file ? f->file : f->module ? f->module : "?";
}

/*
 * @s into @out with every space and line break as U+00A0: ARMS reads a
 * frame as "function position" split at the first and the last space
 * (loongcollector meta.go FormatPositionAndName), so C++ names such as
 * "std::map<int, int>::find" or "operator new" must hold none, and a line
 * break would split the stack. It looks the same in the console.
 */
static void put_token(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')
			fputs("\xc2\xa0", out);
		else
			fputc(*s, out);
	}
}

static bool is_group_frame(const struct perfport_frame *f)
{
	return f->flags & (PERFPORT_FRAME_PROCESS | PERFPORT_FRAME_THREAD);
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static void encode_log(struct arms *a, const char *type, const char *vtype, uint64_t val,
		       const char *name, const char *stack, const char *id);

static void put_log(struct arms *a, const char *type, const char *vtype, uint64_t val,
		    const char *name, const char *stack, const char *id)
{
	char num[32];

	if (a->upload) {
		encode_log(a, type, vtype, val, name, stack, id);
		return;
	}
	fputc('{', a->out);
	put_field(a->out, true, "aggTypes", "sum");
	put_field(a->out, false, "dataType", "CallStack");
	snprintf(num, sizeof(num), "%" PRIu64, a->duration_ns);
	put_field(a->out, false, "durationNs", num);
	put_field(a->out, false, "labels", a->labels);
	put_field(a->out, false, "language", a->language);
	put_field(a->out, false, "name", name);
	put_field(a->out, false, "profileID", a->p->profile_id);
	put_field(a->out, false, "stack", stack);
	put_field(a->out, false, "stackID", id);
	put_field(a->out, false, "type", type);
	put_field(a->out, false, "units", "nanoseconds");
	snprintf(num, sizeof(num), "%" PRIu64, val);
	put_field(a->out, false, "val", num);
	put_field(a->out, false, "valueTypes", vtype);
	fputs("}\n", a->out);
}

static char *labels_json(const struct arms *a, const struct perfport_profile *p,
			 const struct perfport_frame *proc, const struct perfport_frame *thread);

static int one_stack(void *ctx, const struct perfport_profile *p, const uint32_t *frames,
		     size_t depth, uint32_t node)
{
	struct arms *a = ctx;
	uint64_t cpu = 0, wall = 0, h = 0xcbf29ce484222325ULL;
	const struct perfport_frame *proc = NULL, *thread = NULL;
	char *name = NULL, *stack = NULL, id[17];
	size_t name_len = 0, stack_len = 0, nr_written = 0;
	FILE *nf, *sf;
	bool bad;

	for (unsigned c = 0; c < p->nr_counters; c++) {
		uint64_t v = perfport_self_value(p, node, c);

		if (!strcmp(p->counter_names[c], "on-cpu"))
			cpu += v;
		if (strcmp(p->counter_names[c], "idle") != 0)
			wall += v;
	}
	if (!(a->cpu && cpu) && !(a->wall && wall))
		return 0;
	nf = open_memstream(&name, &name_len);
	sf = nf ? open_memstream(&stack, &stack_len) : NULL;
	if (!sf) {
		if (nf)
			fclose(nf);
		free(name);
		a->err = 1;
		return -1;
	}
	for (size_t i = 0; i < depth; i++) {
		const struct perfport_frame *f = perfport_frame_at(p, frames[i]);

		if (f->flags & PERFPORT_FRAME_PROCESS)
			proc = f;
		else if (f->flags & PERFPORT_FRAME_THREAD)
			thread = f;
	}
	for (size_t i = depth; i-- > 0;) {
		const struct perfport_frame *f = perfport_frame_at(p, frames[i]);

		FILE *to = nr_written ? sf : nf;

		if (is_group_frame(f))
			continue;
		/* the leaf as name; its callers, leaf's parent first, one a line */
		if (nr_written++ > 1)
			fputc('\n', sf);
		put_token(to, f->function);
		fputc(' ', to);
		put_token(to, position(f));
		h = fnv(fnv(fnv(h, f->function), " "), position(f));
		h = fnv(h, "\n");
	}
	if (!nr_written) {
		/* a sample without a stack: its thread's own time */
		fputs("[unknown] ?", nf);
	}
	bad = fclose(nf) != 0;
	bad |= fclose(sf) != 0;
	free(a->labels);
	a->labels = bad ? NULL : labels_json(a, p, proc, thread);
	if (bad || !a->labels) {
		free(name);
		free(stack);
		a->err = 1;
		return -1;
	}
	/* as loongcollector writes it: strconv.FormatUint(hash, 16) */
	snprintf(id, sizeof(id), "%" PRIx64, h);
	if (a->cpu && cpu)
		put_log(a, "profile_cpu", "cpu", cpu, name, stack, id);
	if (a->wall && wall)
		put_log(a, "profile_wall_clock", "wall_clock", wall, name, stack, id);
	free(name);
	free(stack);
	if (a->upload)
		return a->err ? -1 : 0;
	return ferror(a->out) ? -1 : 0;
}

static enum perfport_status arms_init(const struct perfport_host *host,
				      const struct perfport_option *opts, size_t nr, void **state)
{
	struct arms *a = calloc(1, sizeof(*a));

	if (!a)
		return PERFPORT_ERROR;
	a->host = host;
	a->language = "ebpf";
	a->logstore = "logstore-profiling";
	a->signature = "v4";
	a->max_logs = 4096;
	a->max_bytes = 3000000;
	a->cpu = a->wall = true;
	for (size_t i = 0; i < nr; i++) {
		const char *v = opts[i].value;

		if (!v)
			continue;
		if (!strcmp(opts[i].name, "language")) {
			a->language = v;
		} else if (!strcmp(opts[i].name, "app")) {
			a->app = v;
		} else if (!strcmp(opts[i].name, "endpoint")) {
			a->endpoint = v;
		} else if (!strcmp(opts[i].name, "project")) {
			a->project = v;
		} else if (!strcmp(opts[i].name, "logstore")) {
			a->logstore = v;
		} else if (!strcmp(opts[i].name, "region")) {
			a->region = v;
		} else if (!strcmp(opts[i].name, "signature")) {
			a->signature = v;
		} else if (!strcmp(opts[i].name, "topic")) {
			a->topic = v;
		} else if (!strcmp(opts[i].name, "source")) {
			a->source = v;
		} else if (!strcmp(opts[i].name, "max_logs")) {
			a->max_logs = strtol(v, NULL, 10);
		} else if (!strcmp(opts[i].name, "max_bytes")) {
			a->max_bytes = strtol(v, NULL, 10);
		} else if (!strcmp(opts[i].name, "types")) {
			/* validated by the host: words of "cpu,wall_clock" */
			a->cpu = a->wall = false;
			for (const char *w = v; *w;) {
				size_t n = strcspn(w, ",");

				if (n == 3 && !strncmp(w, "cpu", 3))
					a->cpu = true;
				else if (n == 10 && !strncmp(w, "wall_clock", 10))
					a->wall = true;
				w += n + (w[n] == ',');
			}
		}
	}
	*state = a;
	return PERFPORT_OK;
}

/* The id of a group frame "comm [id]". */
static uint64_t group_id(const struct perfport_frame *f)
{
	const char *br = strrchr(f->function, '[');

	return br ? strtoull(br + 1, NULL, 10) : 0;
}

/* A group frame "comm [id]": @comm gets the command (up to 255 bytes). */
static const char *group_comm(const struct perfport_frame *f, char *comm, size_t max)
{
	const char *br = strrchr(f->function, '[');
	size_t n = br && br > f->function ? (size_t)(br - f->function - 1) : strlen(f->function);

	snprintf(comm, max, "%.*s", (int)n, f->function);
	return comm;
}

static void put_label(FILE *m, bool *first, const char *key, const char *value)
{
	fprintf(m, "%s\"", *first ? "" : ",");
	perfport_json_chars(m, key);
	fputs("\":\"", m);
	perfport_json_chars(m, value);
	fputc('"', m);
	*first = false;
}

/*
 * The labels field of one stack, a JSON object as a string: "__name__"
 * (the application: loongcollector always writes it, from the ingest
 * name), the --label pairs, host, and, when the tree is grouped (the
 * default for this format), the stack's process and thread, which ARMS
 * filters and groups by; they are never stack frames.
 */
static char *labels_json(const struct arms *a, const struct perfport_profile *p,
			 const struct perfport_frame *proc, const struct perfport_frame *thread)
{
	char *buf = NULL, comm[256], id[32];
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool first = true;

	if (!m)
		return NULL;
	fputc('{', m);
	put_label(m, &first, "__name__", a->name);
	for (size_t i = 0; i < p->nr_labels; i++)
		if (strcmp(p->labels[i].key, "__name__") != 0)
			put_label(m, &first, p->labels[i].key, p->labels[i].value);
	if (p->hostname)
		put_label(m, &first, "host", p->hostname);
	if (proc) {
		put_label(m, &first, "process", group_comm(proc, comm, sizeof(comm)));
		snprintf(id, sizeof(id), "%" PRIu64, group_id(proc));
		put_label(m, &first, "pid", id);
	}
	if (thread) {
		put_label(m, &first, "thread", group_comm(thread, comm, sizeof(comm)));
		snprintf(id, sizeof(id), "%" PRIu64, group_id(thread));
		put_label(m, &first, "tid", id);
	}
	fputc('}', m);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The application: -O app=, else --label service=, else the one process's command. */
static const char *app_name(const struct arms *a, const struct perfport_profile *p)
{
	const struct perfport_thread *t;

	if (a->app)
		return a->app;
	for (size_t i = 0; i < p->nr_labels; i++)
		if (!strcmp(p->labels[i].key, "service"))
			return p->labels[i].value;
	t = perfport_single_process(p);
	return t && t->comm && *t->comm ? t->comm : "perf";
}

/* Every stack of @p through one_stack() (written or encoded). Return: 0, or -1. */
static int walk(struct arms *a, const struct perfport_profile *p)
{
	a->p = p;
	a->name = app_name(a, p);
	a->duration_ns = p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
	a->err = 0;
	return a->host->stacks(p, one_stack, a) || a->err ? -1 : 0;
}

static enum perfport_status arms_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct arms *a = state;

	a->out = out;
	if (walk(a, p) || ferror(out)) {
		a->host->log(a->host, PERFPORT_LOG_ERROR, "arms: cannot write the logs");
		return PERFPORT_ERROR;
	}
	return PERFPORT_OK;
}

/* --- upload: SLS PutLogs --- */

static void pb_content(struct perfport_pb *log, const char *key, const char *value)
{
	struct perfport_pb c = { 0 };

	perfport_pb_string(&c, 1, key);
	perfport_pb_string(&c, 2, value);
	perfport_pb_message(log, 2, &c);
}

static int send_group(struct arms *a);

/* Log{Time=1 varint; Contents=2; Time_ns=4 fixed32} appended as LogGroup.Logs (1). */
static void encode_log(struct arms *a, const char *type, const char *vtype, uint64_t val,
		       const char *name, const char *stack, const char *id)
{
	struct perfport_pb log = { 0 };
	char num[32], dur[32];
	uint32_t ns = (uint32_t)(a->p->start_ns % 1000000000);
	unsigned char fx[5] = { 4 << 3 | 5, (unsigned char)ns, (unsigned char)(ns >> 8),
				(unsigned char)(ns >> 16), (unsigned char)(ns >> 24) };

	perfport_pb_uint(&log, 1, a->p->start_ns / 1000000000);
	snprintf(dur, sizeof(dur), "%" PRIu64, a->duration_ns);
	snprintf(num, sizeof(num), "%" PRIu64, val);
	pb_content(&log, "aggTypes", "sum");
	pb_content(&log, "dataType", "CallStack");
	pb_content(&log, "durationNs", dur);
	pb_content(&log, "labels", a->labels);
	pb_content(&log, "language", a->language);
	pb_content(&log, "name", name);
	pb_content(&log, "profileID", a->p->profile_id);
	pb_content(&log, "stack", stack);
	pb_content(&log, "stackID", id);
	pb_content(&log, "type", type);
	pb_content(&log, "units", "nanoseconds");
	pb_content(&log, "val", num);
	pb_content(&log, "valueTypes", vtype);
	perfport_pb_raw(&log, fx, sizeof(fx));
	if (log.oom) {
		a->err = 1;
		free(log.p);
		return;
	}
	/* a new request when this log would overflow the current one */
	if (a->nr_group && ((long)a->nr_group + 1 > a->max_logs ||
			    (long)(a->group.len + log.len + 16) > a->max_bytes))
		send_group(a);
	perfport_pb_bytes_field(&a->group, 1, log.p, log.len);
	a->nr_group++;
	if (a->group.oom)
		a->err = 1;
	free(log.p);
}

/* POST the logs gathered so far (LogGroup with topic and source, LZ4). */
static int send_group(struct arms *a)
{
	const struct perfport_host *h = a->host;
	struct perfport_http_response rs = { .struct_size = sizeof(rs) };
	struct perfport_http_request rq = { .struct_size = sizeof(rq) };
	char url[1024], raw[64], sign[128];
	const char *headers[] = { "Content-Type: application/x-protobuf", "x-log-apiversion: 0.6.0",
				  raw, "x-log-compresstype: lz4", NULL };
	const char *src = a->source ? a->source : a->p->hostname ? a->p->hostname : "perfport";
	char *lz;
	int n, bound;

	if (!a->nr_group)
		return 0;
	if (a->topic && *a->topic)
		perfport_pb_bytes_field(&a->group, 3, a->topic, strlen(a->topic));
	perfport_pb_bytes_field(&a->group, 4, src, strlen(src));
	if (a->group.oom || a->group.len > (size_t)LZ4_MAX_INPUT_SIZE) {
		a->err = 1;
		return -1;
	}
	bound = LZ4_compressBound((int)a->group.len);
	lz = malloc((size_t)bound);
	if (!lz) {
		a->err = 1;
		return -1;
	}
	n = LZ4_compress_default((const char *)a->group.p, lz, (int)a->group.len, bound);
	snprintf(raw, sizeof(raw), "x-log-bodyrawsize: %zu", a->group.len);
	if (!strncmp(a->endpoint, "http://", 7) || !strncmp(a->endpoint, "https://", 8))
		snprintf(url, sizeof(url), "%s/logstores/%s/shards/lb", a->endpoint, a->logstore);
	else
		snprintf(url, sizeof(url), "https://%s.%s/logstores/%s/shards/lb", a->project,
			 a->endpoint, a->logstore);
	if (!strcmp(a->signature, "v1"))
		snprintf(sign, sizeof(sign), "v1");
	else
		snprintf(sign, sizeof(sign), "v4:%s", a->region);
	rq.method = "POST";
	rq.url = url;
	rq.headers = headers;
	rq.body = lz;
	rq.body_len = n > 0 ? (size_t)n : 0;
	rq.spool_tag = "arms";
	rq.sls_sign = sign;
	a->requests++;
	if (n <= 0 || h->http(&rq, &rs) != PERFPORT_OK)
		a->failed++;
	h->free(rs.body);
	free(lz);
	a->group.len = 0;
	a->nr_group = 0;
	return 0;
}

static enum perfport_status arms_upload(void *state, const struct perfport_profile *p)
{
	struct arms *a = state;
	const struct perfport_host *h = a->host;

	if (!PERFPORT_HAS(h, struct perfport_host, http) || !h->http) {
		h->log(h, PERFPORT_LOG_ERROR, "arms: this perfport cannot upload");
		return PERFPORT_ERROR;
	}
	if (!a->endpoint || !*a->endpoint || (!a->project && strncmp(a->endpoint, "http", 4))) {
		h->log(h, PERFPORT_LOG_ERROR, "arms: upload needs -O arms.endpoint=HOST and "
		       "-O arms.project=NAME (or a full URL as endpoint)");
		return PERFPORT_USAGE;
	}
	if (strcmp(a->signature, "v1") && (!a->region || !*a->region)) {
		h->log(h, PERFPORT_LOG_ERROR, "arms: signature v4 needs -O arms.region=REGION "
		       "(or -O arms.signature=v1)");
		return PERFPORT_USAGE;
	}
	if (a->max_logs < 1 || a->max_bytes < 1024) {
		h->log(h, PERFPORT_LOG_ERROR, "arms: max_logs must be >= 1 and max_bytes >= 1024");
		return PERFPORT_ERROR;
	}
	a->upload = true;
	a->requests = a->failed = 0;
	if (!walk(a, p))
		send_group(a);
	a->upload = false;
	if (a->err) {
		h->log(h, PERFPORT_LOG_ERROR, "arms: out of memory");
		return PERFPORT_ERROR;
	}
	h->log(h, PERFPORT_LOG_INFO, "arms: %u of %u requests delivered", a->requests - a->failed,
	       a->requests);
	return a->failed ? PERFPORT_ERROR : PERFPORT_OK;
}

static void arms_fini(void *state)
{
	struct arms *a = state;

	if (!a)
		return;
	free(a->group.p);
	free(a->labels);
	free(a);
}

/* The value of option @name in @opts (NULL: unset). */
static const char *arms_opt(const struct perfport_option *opts, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].value;
	return NULL;
}

/* ABI 1.6: what an upload needs, said before the recording is read. */
static enum perfport_status arms_check(const struct perfport_host *h, const struct perfport_option *opts,
				       size_t nr, uint32_t mode)
{
	const char *endpoint = arms_opt(opts, nr, "endpoint"), *region = arms_opt(opts, nr, "region");
	const char *sig = arms_opt(opts, nr, "signature");

	if (!(mode & PERFPORT_CHECK_UPLOAD))
		return PERFPORT_OK;
	if (!endpoint || !*endpoint || (!arms_opt(opts, nr, "project") && strncmp(endpoint, "http", 4))) {
		h->log(h, PERFPORT_LOG_ERROR, "arms: upload needs -O arms.endpoint=HOST and "
		       "-O arms.project=NAME (or a full URL as endpoint)");
		return PERFPORT_USAGE;
	}
	if ((!sig || strcmp(sig, "v1")) && (!region || !*region)) {
		h->log(h, PERFPORT_LOG_ERROR, "arms: signature v4 needs -O arms.region=REGION "
		       "(or -O arms.signature=v1)");
		return PERFPORT_USAGE;
	}
	return PERFPORT_OK;
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "arms",
	.description = "Alibaba ARMS continuous-profiling logs (SLS fields) as JSON lines",
	.default_output = "profile.arms.jsonl",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = arms_init,
	.write = arms_write,
	.upload = arms_upload,
	.fini = arms_fini,
	.flags = PERFPORT_EXPORTER_BY_THREAD | PERFPORT_EXPORTER_WALL_CLOCK,
	.check = arms_check,
};
