/* SPDX-License-Identifier: MIT */
/*
 * skywalking.c - the "skywalking" exporter (../shared/seeds/004,
 * BACKENDS.md "Apache SkyWalking").
 *
 * `perfport export -f skywalking -o analysis.json` writes the thread-stack
 * analysis SkyWalking's profiling query returns (ProfileAnalyzation): a
 * tree of elements {id, parentId, codeSignature, duration,
 * durationChildExcluded, count} per segment - here, per thread (the format
 * asks for a tree grouped by thread) - for the selection's time range.
 * Frames of one signature under one parent are merged, as SkyWalking's
 * thread-stack merging does.
 *
 * `perfport upload -f skywalking -O task=ID` sends the profile to the OAP
 * the way SkyWalking's eBPF agent (Rover) does, over gRPC:
 * EBPFProcessService.reportProcesses with each process of the recording,
 * keepAlive (where the OAP registers service and instance), queryTasks (the
 * tasks' target types), then per process and task
 * EBPFProfilingService.collectProfilingData, a stream of EBPFProfilingData:
 * per distinct stack an onCPU message (dumpCount) to the ON_CPU task or an
 * offCPU one (switchCount, duration in ns) to the OFF_CPU task - a task
 * has one target type and the OAP sums all its records - kernel and user
 * symbols each leaf first. Messages are encoded by hand from the protocol's field
 * numbers (apache/skywalking-data-collect-protocol, ebpf/profiling/).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/json.h"
#include "perfport/plugin.h"
#include "perfport/protobuf.h"

#define ROOT_PARENT "0"         /* parentId of a tree's top elements */
#define OFFCPU_MASK ((1ull << PERFPORT_COUNTER_PREEMPTED) | (1ull << PERFPORT_COUNTER_LOCK) | \
		     (1ull << PERFPORT_COUNTER_IO) | (1ull << PERFPORT_COUNTER_SLEEP) |     \
		     (1ull << PERFPORT_COUNTER_TIMED_SLEEP))

static const struct perfport_option_def options[] = {
	{ "counter", PERFPORT_OPT_LIST, "on-cpu,preempted,lock,io,sleep,timed-sleep",
	  "on-cpu,preempted,lock,io,sleep,timed-sleep,idle,all",
	  "counters whose time makes an element's duration (default: wall time, idle aside)" },
	{ "address", PERFPORT_OPT_STRING, "127.0.0.1:11800", NULL,
	  "upload: the OAP's gRPC address, HOST:PORT" },
	{ "tls", PERFPORT_OPT_BOOL, "false", NULL, "upload: gRPC over TLS (https)" },
	{ "task", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: the eBPF profiling task id created in the OAP (required)" },
	{ "target", PERFPORT_OPT_ENUM, "auto", "auto,on-cpu,off-cpu",
	  "upload: what the task profiles (auto: the OAP's answer to queryTasks, else on-CPU "
	  "when the profile has on-CPU samples); only that kind is sent to it" },
	{ "offcpu_task", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: an OFF_CPU task to feed with the off-CPU data in the same run (task then "
	  "takes the on-CPU data)" },
	{ "service", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: service name (default: --label service=, else the one process's command, else \"perf\")" },
	{ "instance", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: service instance (default: the recording's host name)" },
	{ "layer", PERFPORT_OPT_STRING, "OS_LINUX", NULL, "upload: the processes' layer" },
	{ "labels", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: process labels, comma-separated" },
	{ "agent_id", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: the agent id reported (default: perfport-PROFILE_ID)" },
	{ "process_name", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: the process name reported (default: its command; -PID added where two share one)" },
	{ "auth_env", PERFPORT_OPT_STRING, "SW_AGENT_AUTHENTICATION", NULL,
	  "upload: the environment variable holding the OAP's token; when it is set, the token "
	  "goes as the Authentication metadata (never logged or spooled)" },
};

struct sw {
	const struct perfport_host *host;
	const char *counters;        /* the counter option: what feeds duration and count */
	const char *target, *offcpu_task;
	const char *address, *task, *service, *instance, *layer, *labels, *agent_id, *process_name;
	const char *auth_env;
	char secret[160];            /* "Authentication=ENV" when $ENV is set, else "" */
	char agent[160];             /* the ebpfAgentID of this upload */
	bool tls;
};

/* "comm [123]" -> 123; 0 if there is no number in brackets. */
static uint32_t bracket_id(const char *s)
{
	const char *b = strrchr(s, '[');

	return b ? (uint32_t)strtoul(b + 1, NULL, 10) : 0;
}

static uint64_t counter_mask(const struct perfport_profile *p, const char *list)
{
	uint64_t m = 0;

	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (n == 3 && !strncmp(list, "all", 3))
			m |= ~0ull;
		for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
			if (strlen(p->counter_names[c]) == n && !strncmp(p->counter_names[c], list, n))
				m |= 1ull << c;
		list += n + (list[n] == ',');
	}
	return m;
}

/* --- the analysis --- */

struct element {
	const char *signature;
	uint32_t parent;             /* element index; UINT32_MAX: a top element */
	uint32_t first_child, next;  /* UINT32_MAX: none */
	uint64_t ns, count;
	uint64_t ms;                 /* duration, truncated to ms */
};

struct tree {
	struct element *e;
	size_t nr, cap;
	uint32_t first_top;
	bool oom;
};

/* The element for @sig under @parent (UINT32_MAX: top), made if new. */
static uint32_t element_of(struct tree *t, uint32_t parent, const char *sig)
{
	uint32_t *link = parent == UINT32_MAX ? &t->first_top : &t->e[parent].first_child;
	uint32_t i;

	for (i = *link; i != UINT32_MAX; i = t->e[i].next) {
		if (strcmp(t->e[i].signature, sig) == 0)
			return i;
		link = &t->e[i].next;
	}
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct element *m = realloc(t->e, cap * sizeof(*m));

		if (!m) {
			t->oom = true;
			return UINT32_MAX;
		}
		t->e = m;
		t->cap = cap;
		/* @link may point into the old array: find the end again */
		link = parent == UINT32_MAX ? &t->first_top : &t->e[parent].first_child;
		while (*link != UINT32_MAX)
			link = &t->e[*link].next;
	}
	i = (uint32_t)t->nr++;
	t->e[i] = (struct element){ .signature = sig, .parent = parent,
				    .first_child = UINT32_MAX, .next = UINT32_MAX };
	*link = i;
	return i;
}

/* A frame's code signature: its function, and its source line when known. */
static const char *signature(const struct perfport_frame *f, char *buf, size_t max)
{
	const char *file = f->file ? strrchr(f->file, '/') : NULL;

	if (!f->file || !f->line)
		return f->function;
	snprintf(buf, max, "%s (%s:%" PRIu32 ")", f->function, file ? file + 1 : f->file, f->line);
	return buf;
}

/* Composed signatures ("f (file:line)") kept for the write: elements point at them. */
struct strings {
	char **v;
	size_t nr, cap;
};

static const char *keep(struct strings *s, const char *str)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		char **m = realloc(s->v, cap * sizeof(*m));

		if (!m)
			return NULL;
		s->v = m;
		s->cap = cap;
	}
	s->v[s->nr] = strdup(str);
	return s->v[s->nr] ? s->v[s->nr++] : NULL;
}

static void write_tree(FILE *out, struct tree *t)
{
	bool first = true;

	/* durations truncated to ms, so a child never exceeds its parent and
	 * durationChildExcluded = duration - children's durations is >= 0 */
	for (size_t i = 0; i < t->nr; i++)
		t->e[i].ms = t->e[i].ns / 1000000;
	fputs("\"elements\":[", out);
	for (size_t i = 0; i < t->nr; i++) {
		const struct element *e = &t->e[i];
		uint64_t children = 0;
		char parent[16];

		for (uint32_t c = e->first_child; c != UINT32_MAX; c = t->e[c].next)
			children += t->e[c].ms;
		if (e->parent == UINT32_MAX)
			snprintf(parent, sizeof(parent), "%s", ROOT_PARENT);
		else
			snprintf(parent, sizeof(parent), "%" PRIu32, e->parent + 1);
		fprintf(out, "%s{\"id\":\"%zu\",\"parentId\":\"%s\",\"codeSignature\":", first ? "" : ",",
			i + 1, parent);
		perfport_json_string(out, e->signature);
		fprintf(out, ",\"duration\":%" PRIu64 ",\"durationChildExcluded\":%" PRIu64
			",\"count\":%" PRIu64 "}", e->ms, e->ms - children, e->count);
		first = false;
	}
	fputs("]", out);
}

static void tree_reset(struct tree *t)
{
	t->nr = 0;
	t->first_top = UINT32_MAX;
}

/* The chosen counters' total value (*@ns) and count (*@count) of node @i. */
static void node_sum(const struct perfport_profile *p, size_t i, uint64_t mask, uint64_t *ns,
		     uint64_t *count)
{
	*ns = *count = 0;
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
		if (mask >> c & 1) {
			*ns += perfport_total_value(p, i, c);
			*count += perfport_total_count(p, i, c);
		}
}

/* The segment of the tree starting at node @i (frame @f; NULL: the root). */
static void write_segment(FILE *out, const struct perfport_profile *p, size_t i,
			  const struct perfport_frame *f, uint32_t seg_flag)
{
	fputs("{\"segment\":{", out);
	if (f && seg_flag == PERFPORT_FRAME_PROCESS) {
		fprintf(out, "\"pid\":%" PRIu32 ",\"name\":", bracket_id(f->function));
		perfport_json_string(out, f->function);
	} else if (f) {
		const struct perfport_node *pn = perfport_node_at(p, perfport_node_at(p, i)->parent);
		const struct perfport_frame *pf = pn->frame < p->nr_frames
			? perfport_frame_at(p, pn->frame) : NULL;

		fprintf(out, "\"tid\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"name\":", bracket_id(f->function),
			pf && (pf->flags & PERFPORT_FRAME_PROCESS) ? bracket_id(pf->function) : 0);
		perfport_json_string(out, f->function);
	} else {
		fputs("\"name\":\"all threads\"", out);
	}
	fputs("}", out);
}

/*
 * The nodes below @root (pre-order, up to its end) into @t, merged by
 * signature under each parent; elem[k]: node k's element (UINT32_MAX for
 * @root). Return: false out of memory.
 */
static bool build_tree(const struct perfport_profile *p, uint64_t mask, size_t root,
		       struct tree *t, struct strings *strs, uint32_t *elem)
{
	size_t end = perfport_node_at(p, root)->end;
	char sig[1024];

	tree_reset(t);
	elem[root] = UINT32_MAX;
	for (size_t k = root + 1; k < end;) {
		const struct perfport_node *kn = perfport_node_at(p, k);
		uint64_t ns, count;
		const char *ks;
		uint32_t e;

		node_sum(p, k, mask, &ns, &count);
		if (!count || kn->frame >= p->nr_frames) {
			k = kn->end > k ? kn->end : k + 1;
			continue;
		}
		/* a function name lives as long as the profile; a composed one is kept */
		ks = signature(perfport_frame_at(p, kn->frame), sig, sizeof(sig));
		if (ks == sig)
			ks = keep(strs, sig);
		e = ks ? element_of(t, elem[kn->parent], ks) : UINT32_MAX;
		if (e == UINT32_MAX)
			return false;
		t->e[e].ns += ns;
		t->e[e].count += count;
		elem[k] = e;
		k++;
	}
	return true;
}

/*
 * write() - the analysis: {"timeRange", "unit", "counters", "trees":
 * [{"segment": {tid, pid, name}, "duration", "count", "elements": [...]}]}.
 * A tree starts at each thread frame (grouped by process: at each process
 * frame; not grouped: at the root); the frames above it (a thread's
 * process) are not elements.
 */
static enum perfport_status sw_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct sw *s = state;
	uint64_t mask = counter_mask(p, s->counters) & p->counters_present;
	uint32_t *elem = malloc((p->nr_nodes + 1) * sizeof(*elem));
	struct tree t = { .first_top = UINT32_MAX };
	struct strings strs = { 0 };
	uint32_t seg_flag = 0;       /* the frames a segment starts at; 0: the root */
	size_t trees = 0;
	bool oom = false;

	if (!elem)
		return PERFPORT_ERROR;
	for (size_t i = 0; i < p->nr_frames; i++) {
		uint32_t fl = perfport_frame_at(p, i)->flags;

		if (fl & PERFPORT_FRAME_THREAD)
			seg_flag = PERFPORT_FRAME_THREAD;
		else if ((fl & PERFPORT_FRAME_PROCESS) && !seg_flag)
			seg_flag = PERFPORT_FRAME_PROCESS;
	}
	if (!seg_flag)
		s->host->log(s->host, PERFPORT_LOG_INFO, "skywalking: the tree is not grouped by "
			     "thread (--group-by none, or another format asked for a plain tree): "
			     "one analysis for all threads");
	fprintf(out, "{\"timeRange\":{\"start\":%" PRIu64 ",\"end\":%" PRIu64 "},\"unit\":\"ms\","
		"\"counters\":[", p->start_ns / 1000000, p->end_ns / 1000000);
	for (unsigned c = 0, first = 1; c < p->nr_counters && c < 64; c++)
		if (mask >> c & 1) {
			fprintf(out, "%s\"%s\"", first ? "" : ",", p->counter_names[c]);
			first = 0;
		}
	fputs("],\"trees\":[", out);
	for (size_t i = 0; i < p->nr_nodes && !oom;) {
		const struct perfport_node *n = perfport_node_at(p, i);
		const struct perfport_frame *f = n->frame < p->nr_frames ? perfport_frame_at(p, n->frame)
									  : NULL;
		uint64_t ns, count;

		node_sum(p, i, mask, &ns, &count);
		if (!count) {
			i = n->end > i ? n->end : i + 1;
			continue;
		}
		if (!(seg_flag ? f && (f->flags & seg_flag) : i == 0)) {
			i++;
			continue;
		}
		if (trees++)
			fputc(',', out);
		write_segment(out, p, i, f, seg_flag);
		fprintf(out, ",\"duration\":%" PRIu64 ",\"count\":%" PRIu64 ",", ns / 1000000, count);
		oom = !build_tree(p, mask, i, &t, &strs, elem);
		write_tree(out, &t);
		fputc('}', out);
		i = n->end > i ? n->end : i + 1;
	}
	fputs("]}\n", out);
	for (size_t i = 0; i < strs.nr; i++)
		free(strs.v[i]);
	free(strs.v);
	free(t.e);
	free(elem);
	if (oom) {
		s->host->log(s->host, PERFPORT_LOG_ERROR, "skywalking: out of memory");
		return PERFPORT_ERROR;
	}
	return PERFPORT_OK;
}

/* --- upload --- */

/* A distinct stack of one process, and what it sums. */
struct stack {
	uint32_t pid;
	char *kernel, *user;         /* symbols, leaf first, '\n'-separated */
	uint64_t on_count, off_count, off_ns;
};

struct stacks {
	struct stack *v;
	size_t nr, cap;
	uint32_t *slots;             /* index + 1; 0 empty */
	size_t slots_cap;
	uint64_t mask;
	uint32_t *node_stack;        /* per tree node: its stack's index + 1, 0 none */
	bool oom;
};

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t stack_hash(uint32_t pid, const char *k, const char *u)
{
	return fnv(fnv(0xcbf29ce484222325ULL ^ pid, k) ^ 0xff, u);
}

static bool stacks_grow(struct stacks *st)
{
	size_t cap = st->slots_cap ? st->slots_cap * 2 : 1024;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return false;
	for (size_t i = 0; i < st->nr; i++) {
		size_t j = stack_hash(st->v[i].pid, st->v[i].kernel, st->v[i].user) & (cap - 1);

		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(st->slots);
	st->slots = s;
	st->slots_cap = cap;
	return true;
}

/* Symbols of @frames whose kernel flag is @kernel, leaf first. */
static char *symbols(const struct perfport_profile *p, const uint32_t *frames, size_t depth,
		     bool kernel)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool first = true;

	if (!m)
		return NULL;
	for (size_t i = depth; i-- > 0;) {
		const struct perfport_frame *f = perfport_frame_at(p, frames[i]);

		if (f->flags & (PERFPORT_FRAME_PROCESS | PERFPORT_FRAME_THREAD))
			continue;
		/* a placeholder (an off-CPU interval without a stack) is no user
		 * symbol: it stands where the kernel switched the thread out */
		if (!!(f->flags & (PERFPORT_FRAME_KERNEL | PERFPORT_FRAME_SYNTHETIC)) != kernel)
			continue;
		fprintf(m, "%s%s", first ? "" : "\n", f->function);
		first = false;
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int add_stack(void *ctx, const struct perfport_profile *p, const uint32_t *frames,
		     size_t depth, uint32_t node)
{
	struct stacks *st = ctx;
	uint32_t pid = 0;
	uint64_t on = 0, off = 0, off_ns = 0;
	char *k, *u;
	size_t j;

	if (st->mask >> PERFPORT_COUNTER_ON_CPU & 1)
		on = perfport_self_count(p, node, PERFPORT_COUNTER_ON_CPU);
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
		if ((OFFCPU_MASK >> c & 1) && (st->mask >> c & 1)) {
			off += perfport_self_count(p, node, c);
			off_ns += perfport_self_value(p, node, c);
		}
	if (!on && !off)
		return 0;
	for (size_t i = 0; i < depth; i++) {
		const struct perfport_frame *f = perfport_frame_at(p, frames[i]);

		if (f->flags & PERFPORT_FRAME_PROCESS)
			pid = bracket_id(f->function);
	}
	k = symbols(p, frames, depth, true);
	u = symbols(p, frames, depth, false);
	if (!k || !u || ((st->nr + 1) * 2 > st->slots_cap && !stacks_grow(st)))
		goto oom;
	for (j = stack_hash(pid, k, u) & (st->slots_cap - 1); st->slots[j];
	     j = (j + 1) & (st->slots_cap - 1)) {
		struct stack *s = &st->v[st->slots[j] - 1];

		if (s->pid == pid && !strcmp(s->kernel, k) && !strcmp(s->user, u)) {
			s->on_count += on;
			s->off_count += off;
			s->off_ns += off_ns;
			if (st->node_stack)
				st->node_stack[node] = st->slots[j];
			free(k);
			free(u);
			return 0;
		}
	}
	if (st->nr == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		struct stack *m = realloc(st->v, cap * sizeof(*m));

		if (!m)
			goto oom;
		st->v = m;
		st->cap = cap;
	}
	st->v[st->nr] = (struct stack){ pid, k, u, on, off, off_ns };
	st->slots[j] = (uint32_t)++st->nr;
	if (st->node_stack)
		st->node_stack[node] = st->slots[j];
	return 0;
oom:
	free(k);
	free(u);
	st->oom = true;
	return -1;
}

/* gRPC framing: 0 (not compressed), the length big-endian, the message. */
static void grpc_frame(struct perfport_pb *body, const struct perfport_pb *msg)
{
	unsigned char h[5] = { 0, (unsigned char)(msg->len >> 24), (unsigned char)(msg->len >> 16),
			       (unsigned char)(msg->len >> 8), (unsigned char)msg->len };

	if (msg->oom)
		body->oom = true;
	perfport_pb_raw(body, h, sizeof(h));
	perfport_pb_raw(body, msg->p, msg->len);
}

/* One gRPC call; @reply NULL: the answer is not needed, and the call is
 * kept in the spool if it cannot be delivered (the processIds it carries
 * stay valid). reportProcesses is not kept: its answer is what the rest
 * needs, and a resent report would leave the profile unsent. */
static enum perfport_status grpc_call(struct sw *s, const char *method, struct perfport_pb *body,
				      char **reply, size_t *reply_len)
{
	const struct perfport_host *h = s->host;
	char url[1024];
	struct perfport_http_request rq = {
		.struct_size = sizeof(rq), .method = "POST", .url = url, .body = body->p,
		.body_len = body->len, .spool_tag = reply ? NULL : "skywalking", .grpc = 1,
		.secret_header = *s->secret ? s->secret : NULL,
	};
	struct perfport_http_response rs = { .struct_size = sizeof(rs) };
	enum perfport_status st;

	if (body->oom) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: out of memory");
		return PERFPORT_ERROR;
	}
	snprintf(url, sizeof(url), "%s://%s/skywalking.v3.%s", s->tls ? "https" : "http", s->address,
		 method);
	st = h->http(&rq, &rs);
	if (st == PERFPORT_OK && reply) {
		*reply = rs.body;
		*reply_len = rs.body_len;
	} else {
		h->free(rs.body);
	}
	return st;
}

struct process {
	uint32_t pid;
	const char *comm;
	char *id;                    /* the OAP's processId */
	char *command;               /* the full command name (argv[0]'s base), or NULL */
	char *cmdline;               /* the full command line, or NULL */
};

/*
 * The command line perf started @comm with, from the recording's header
 * (perf's own command line, "perf record ... ./app args"): from the first
 * word whose base name begins with @comm (the kernel cuts a comm to 15
 * bytes) to the end. *@name gets that word's base name. Both NULL when the
 * header does not hold it (a system-wide or attached recording).
 */
static void workload_command(const char *perf_cmdline, const char *comm, char **name,
			     char **cmdline)
{
	const char *w = perf_cmdline;
	size_t clen = comm ? strlen(comm) : 0;

	*name = *cmdline = NULL;
	if (!w || !clen)
		return;
	while (*w) {
		size_t n = strcspn(w, " ");
		const char *base = w;

		for (const char *q = w; q < w + n; q++)
			if (*q == '/')
				base = q + 1;
		if ((size_t)(w + n - base) >= clen && !strncmp(base, comm, clen) && w != perf_cmdline) {
			*name = strndup(base, (size_t)(w + n - base));
			*cmdline = strdup(w);
			if (!*name || !*cmdline) {
				free(*name);
				free(*cmdline);
				*name = *cmdline = NULL;
			}
			return;
		}
		w += n;
		w += strspn(w, " ");
	}
}

/* The processes of the stacks, with a comm each from the threads. */
static struct process *processes_of(const struct perfport_profile *p, const struct stacks *st,
				    size_t *nr)
{
	struct process *v = calloc(st->nr + 1, sizeof(*v));

	*nr = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < st->nr; i++) {
		bool seen = false;

		for (size_t k = 0; k < *nr && !seen; k++)
			seen = v[k].pid == st->v[i].pid;
		if (seen)
			continue;
		v[*nr].pid = st->v[i].pid;
		v[*nr].comm = "unknown";
		v[*nr].command = v[*nr].cmdline = NULL;
		for (size_t t = 0; t < p->nr_threads; t++) {
			const struct perfport_thread *th = perfport_thread_at(p, t);

			if (th->pid == st->v[i].pid && th->comm) {
				v[*nr].comm = th->comm;
				if (th->tid == th->pid)
					break;
			}
		}
		workload_command(p->cmdline, v[*nr].comm, &v[*nr].command, &v[*nr].cmdline);
		(*nr)++;
	}
	return v;
}

static const char *process_command(const struct process *pr)
{
	return pr->command ? pr->command : pr->comm;
}

static void kv(struct perfport_pb *m, unsigned f, const char *k, const char *v)
{
	struct perfport_pb pair = { 0 };

	perfport_pb_string(&pair, 1, k);
	perfport_pb_string(&pair, 2, v);
	perfport_pb_message(m, f, &pair);
}

/* EBPFProcessEntityMetadata */
/*
 * EBPFProcessEntityMetadata of process @k of @all. The OAP derives the
 * process id from service, instance and name, so the name is stable across
 * recordings: -O process_name=, else the command name; "-PID" is added
 * where two processes of the upload would share one.
 */
static void entity(struct sw *s, struct perfport_pb *m, const struct process *all, size_t nr,
		   size_t k)
{
	const char *base = s->process_name ? s->process_name : process_command(&all[k]);
	bool shared = false;
	char name[300];

	for (size_t i = 0; i < nr && !shared; i++)
		shared = i != k && !strcmp(s->process_name ? s->process_name : process_command(&all[i]),
					   base);
	if (shared)
		snprintf(name, sizeof(name), "%s-%" PRIu32, base, all[k].pid);
	else
		snprintf(name, sizeof(name), "%s", base);
	perfport_pb_string(m, 1, s->layer);
	perfport_pb_string(m, 2, s->service);
	perfport_pb_string(m, 3, s->instance);
	perfport_pb_string(m, 4, name);
	for (const char *l = s->labels; l && *l;) {
		size_t n = strcspn(l, ",");

		if (n)
			perfport_pb_bytes_field(m, 5, l, n);
		l += n + (l[n] == ',');
	}
}

/* The properties Rover reports of a process, as KeyStringValuePairs in @field. */
static void properties(struct perfport_pb *m, unsigned field, const struct process *pr)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%" PRIu32, pr->pid);
	kv(m, field, "pid", pid);
	kv(m, field, "command_line", pr->cmdline ? pr->cmdline : process_command(pr));
	kv(m, field, "support_ebpf_profiling", "true");
}

/* gRPC's length prefix off an answer: the message's bounds in *@q, *@end. */
static void grpc_unframe(const char *reply, size_t len, const unsigned char **q,
			 const unsigned char **end)
{
	*q = (const unsigned char *)reply;
	*end = *q + len;
	if (len >= 5) {
		size_t n = (size_t)(*q)[1] << 24 | (size_t)(*q)[2] << 16 | (size_t)(*q)[3] << 8 | (*q)[4];

		*q += 5;
		if (n < (size_t)(*end - *q))
			*end = *q + n;
	}
}

/*
 * keepAlive: the OAP registers a service and its instance only here
 * (EBPFProcessServiceHandler.keepAlive: ServiceMeta, ServiceInstanceUpdate;
 * reportProcesses stores just the process), and marks the processes alive.
 */
static enum perfport_status keep_alive(struct sw *s, const struct process *pr, size_t nr)
{
	struct perfport_pb list = { 0 }, body = { 0 };
	enum perfport_status st;
	char *reply = NULL;
	size_t reply_len = 0;

	for (size_t i = 0; i < nr; i++) {
		struct perfport_pb ping = { 0 }, ent = { 0 };

		entity(s, &ent, pr, nr, i);
		perfport_pb_message(&ping, 1, &ent);
		properties(&ping, 2, &pr[i]);
		perfport_pb_message(&list, 1, &ping);
	}
	perfport_pb_string(&list, 2, s->agent);
	grpc_frame(&body, &list);
	free(list.p);
	st = grpc_call(s, "EBPFProcessService/keepAlive", &body, &reply, &reply_len);
	free(body.p);
	s->host->free(reply);
	return st;
}

enum kind { KIND_UNKNOWN, KIND_ON, KIND_OFF, KIND_OTHER };

static enum kind kind_of_target(const char *t, size_t n)
{
	if (n == 6 && !strncmp(t, "ON_CPU", 6))
		return KIND_ON;
	if (n == 7 && !strncmp(t, "OFF_CPU", 7))
		return KIND_OFF;
	return KIND_OTHER;
}

/*
 * queryTasks, as Rover asks for its processes' tasks: the target type
 * (ON_CPU, OFF_CPU, NETWORK) of the task @id, from the answer's
 * EBPFProfilingTaskQuery commands (args TaskId, TargetType). KIND_UNKNOWN
 * when the OAP does not list it.
 */
static enum kind query_target(struct sw *s, const char *id)
{
	struct perfport_pb q = { 0 }, body = { 0 };
	struct perfport_pb_field cf;
	const unsigned char *c, *end;
	enum kind found = KIND_UNKNOWN;
	char *reply = NULL;
	size_t reply_len = 0;

	perfport_pb_string(&q, 1, s->agent);
	grpc_frame(&body, &q);
	free(q.p);
	if (grpc_call(s, "EBPFProfilingService/queryTasks", &body, &reply, &reply_len) != PERFPORT_OK) {
		free(body.p);
		return KIND_UNKNOWN;
	}
	free(body.p);
	grpc_unframe(reply, reply_len, &c, &end);
	while (perfport_pb_next(&c, end, &cf) == 1) {          /* Commands.commands */
		const unsigned char *a = cf.data, *aend = cf.data + cf.len;
		struct perfport_pb_field af;
		bool ours = false;
		enum kind k = KIND_UNKNOWN;

		if (cf.number != 1 || cf.wire != 2)
			continue;
		while (perfport_pb_next(&a, aend, &af) == 1) {   /* Command.args */
			const unsigned char *v = af.data, *vend = af.data + af.len;
			struct perfport_pb_field vf;
			const char *key = NULL, *val = NULL;
			size_t klen = 0, vlen = 0;

			if (af.number != 2 || af.wire != 2)
				continue;
			while (perfport_pb_next(&v, vend, &vf) == 1) {
				if (vf.number == 1 && vf.wire == 2)
					key = (const char *)vf.data, klen = vf.len;
				else if (vf.number == 2 && vf.wire == 2)
					val = (const char *)vf.data, vlen = vf.len;
			}
			if (!key || !val)
				continue;
			if (klen == 6 && !strncmp(key, "TaskId", 6))
				ours = vlen == strlen(id) && !strncmp(val, id, vlen);
			else if (klen == 10 && !strncmp(key, "TargetType", 10))
				k = kind_of_target(val, vlen);
		}
		if (ours && k != KIND_UNKNOWN)
			found = k;
	}
	s->host->free(reply);
	return found;
}

/* reportProcesses; the answer's processIds into @pr. */
static enum perfport_status report_processes(struct sw *s, struct process *pr, size_t nr)
{
	struct perfport_pb list = { 0 }, body = { 0 };
	char *reply = NULL;
	size_t reply_len = 0;
	enum perfport_status st;
	const unsigned char *q, *end;
	struct perfport_pb_field fl;
	int r;

	for (size_t i = 0; i < nr; i++) {
		struct perfport_pb props = { 0 }, host = { 0 }, ent = { 0 };

		entity(s, &ent, pr, nr, i);
		perfport_pb_message(&host, 1, &ent);
		perfport_pb_uint(&host, 2, pr[i].pid);
		properties(&host, 3, &pr[i]);
		perfport_pb_message(&props, 1, &host);        /* hostProcess */
		perfport_pb_message(&list, 1, &props);
	}
	perfport_pb_string(&list, 2, s->agent);
	grpc_frame(&body, &list);
	free(list.p);
	st = grpc_call(s, "EBPFProcessService/reportProcesses", &body, &reply, &reply_len);
	free(body.p);
	if (st != PERFPORT_OK)
		return st;
	/* EBPFReportProcessDownstream{processes=1: {processId=1, hostProcess=2: {pid=1}}} */
	grpc_unframe(reply, reply_len, &q, &end);
	while ((r = perfport_pb_next(&q, end, &fl)) == 1) {
		const unsigned char *pq = fl.data, *pend = fl.data + fl.len;
		struct perfport_pb_field pf;
		char *id = NULL;
		uint32_t got = 0;

		if (fl.number != 1 || fl.wire != 2)
			continue;
		while (perfport_pb_next(&pq, pend, &pf) == 1) {
			if (pf.number == 1 && pf.wire == 2) {
				free(id);
				id = strndup((const char *)pf.data, pf.len);
			} else if (pf.number == 2 && pf.wire == 2) {
				const unsigned char *hq = pf.data, *hend = pf.data + pf.len;
				struct perfport_pb_field hf;

				while (perfport_pb_next(&hq, hend, &hf) == 1)
					if (hf.number == 1 && hf.wire == 0)
						got = (uint32_t)hf.value;
			}
		}
		for (size_t i = 0; i < nr && id; i++)
			if (pr[i].pid == got && !pr[i].id) {
				pr[i].id = id;
				id = NULL;
			}
		free(id);
	}
	s->host->free(reply);
	if (r < 0) {
		s->host->log(s->host, PERFPORT_LOG_ERROR,
			     "skywalking: the OAP's answer to reportProcesses is malformed");
		return PERFPORT_ERROR;
	}
	return PERFPORT_OK;
}

/* EBPFProfilingStackMetadata for @syms (leaf first, '\n'-separated). */
static void stack_meta(struct perfport_pb *m, unsigned field, int type, const char *syms)
{
	struct perfport_pb meta = { 0 };

	if (!*syms)
		return;
	perfport_pb_uint(&meta, 1, (uint64_t)type);
	perfport_pb_uint(&meta, 2, fnv(0xcbf29ce484222325ULL, syms) & 0x7fffffff);
	for (const char *q = syms; *q;) {
		size_t n = strcspn(q, "\n");

		perfport_pb_bytes_field(&meta, 3, q, n);
		q += n + (q[n] == '\n');
	}
	perfport_pb_message(m, field, &meta);
}

/* One EBPFProfilingData message of stack @k: @count samples (on-CPU) or
 * @count intervals of @ns (off-CPU), at @now_ms. */
static void one_message(struct perfport_pb *body, const struct perfport_profile *p,
			const struct process *pr, const struct stack *k, const char *task_id,
			int off, uint64_t count, uint64_t ns, uint64_t now_ms)
{
	struct perfport_pb msg = { 0 }, task = { 0 }, data = { 0 };

	perfport_pb_string(&task, 1, task_id);
	perfport_pb_string(&task, 2, pr->id);
	perfport_pb_uint(&task, 3, p->start_ns / 1000000);
	perfport_pb_uint(&task, 4, now_ms);
	perfport_pb_message(&msg, 1, &task);
	stack_meta(&data, 1, 0, k->kernel);
	stack_meta(&data, 1, 1, k->user);
	perfport_pb_uint(&data, 2, count > INT32_MAX ? INT32_MAX : count);
	if (off)
		perfport_pb_uint(&data, 3, ns);
	perfport_pb_message(&msg, off ? 3 : 2, &data);
	grpc_frame(body, &msg);
	free(msg.p);
}

static bool has_slices(const struct perfport_profile *p)
{
	return PERFPORT_HAS(p, struct perfport_profile, slice_values) && p->slice_ns &&
	       p->nr_slice_values && p->slice_value_size;
}

/*
 * The messages of one process's stacks of one kind, by time: per slice of
 * the recording, each stack's counts in it, at the slice's end, as Rover
 * flushes every 5 s with the flush's time, so that the OAP's time-range
 * queries narrow. Return: false out of memory.
 */
static bool sliced_messages(struct perfport_pb *body, const struct perfport_profile *p,
			    const struct process *pr, const struct stacks *st, const char *task_id,
			    int off, unsigned *messages)
{
	uint64_t *count = calloc(st->nr + 1, sizeof(*count)), *ns = calloc(st->nr + 1, sizeof(*ns));
	uint32_t *touched = malloc((st->nr + 1) * sizeof(*touched));
	bool *listed = calloc(st->nr + 1, sizeof(*listed));
	size_t nt = 0, i = 0;

	if (!count || !ns || !touched || !listed) {
		free(count);
		free(ns);
		free(touched);
		free(listed);
		return false;
	}
	while (i < p->nr_slice_values) {
		uint32_t slice = perfport_slice_value_at(p, i)->slice;
		uint64_t end_ns = p->slice_start_ns + ((uint64_t)slice + 1) * p->slice_ns;

		for (; i < p->nr_slice_values && perfport_slice_value_at(p, i)->slice == slice; i++) {
			const struct perfport_slice_value *v = perfport_slice_value_at(p, i);
			uint32_t k = v->node < p->nr_nodes ? st->node_stack[v->node] : 0;
			bool want = off ? (OFFCPU_MASK >> v->counter & 1) : v->counter == PERFPORT_COUNTER_ON_CPU;

			if (!k || !want || v->counter >= 64 || !(st->mask >> v->counter & 1) ||
			    st->v[k - 1].pid != pr->pid)
				continue;
			if (!listed[k]) {
				listed[k] = true;
				touched[nt++] = k;
			}
			count[k] += v->count;
			ns[k] += v->value;
		}
		if (end_ns > p->end_ns)
			end_ns = p->end_ns;
		/* an off-CPU interval's time in earlier slices waits for the
		 * slice it ends in, which has its count: a message needs one */
		for (size_t t = 0; t < nt; t++) {
			uint32_t k = touched[t];

			listed[k] = false;
			if (!count[k])
				continue;
			one_message(body, p, pr, &st->v[k - 1], task_id, off, count[k], ns[k],
				    end_ns / 1000000);
			(*messages)++;
			count[k] = ns[k] = 0;
		}
		nt = 0;
	}
	free(count);
	free(ns);
	free(touched);
	free(listed);
	return true;
}

/* The stream of one process's stacks of one kind (@off) to @task_id. */
static enum perfport_status collect(struct sw *s, const struct perfport_profile *p,
				    const struct process *pr, const struct stacks *st,
				    const char *task_id, int off, unsigned *messages)
{
	struct perfport_pb body = { 0 };
	enum perfport_status ret;
	unsigned before = *messages;

	if (has_slices(p) && st->node_stack) {
		if (!sliced_messages(&body, p, pr, st, task_id, off, messages)) {
			free(body.p);
			s->host->log(s->host, PERFPORT_LOG_ERROR, "skywalking: out of memory");
			return PERFPORT_ERROR;
		}
	} else {
		/* a host without slices: everything at the profile's end */
		for (size_t i = 0; i < st->nr; i++) {
			const struct stack *k = &st->v[i];

			if (k->pid != pr->pid || (off ? !k->off_count : !k->on_count))
				continue;
			one_message(&body, p, pr, k, task_id, off, off ? k->off_count : k->on_count,
				    k->off_ns, p->end_ns / 1000000);
			(*messages)++;
		}
	}
	if (*messages == before) {
		free(body.p);
		return PERFPORT_OK;
	}
	ret = grpc_call(s, "EBPFProfilingService/collectProfilingData", &body, NULL, NULL);
	free(body.p);
	return ret;
}

static const char *const kind_names[] = { "unknown", "ON_CPU", "OFF_CPU", "another type" };

/*
 * Which task gets which kind: an eBPF profiling task has one target type,
 * and the OAP's analysis adds every record of a task together, so on-CPU
 * sample counts and off-CPU switch counts or nanoseconds must never share
 * one. @tasks[0] receives the on-CPU stacks, @tasks[1] the off-CPU ones
 * (NULL: not sent). The kind of -O task comes from -O target=, else the
 * OAP's queryTasks answer, else on-CPU when there are on-CPU stacks;
 * -O offcpu_task= is an OFF_CPU task for the rest.
 */
static enum perfport_status plan_tasks(struct sw *s, const struct stacks *st, const char **tasks)
{
	const struct perfport_host *h = s->host;
	enum kind want = !strcmp(s->target, "on-cpu") ? KIND_ON :
			 !strcmp(s->target, "off-cpu") ? KIND_OFF : KIND_UNKNOWN;
	enum kind told = query_target(s, s->task);
	size_t on = 0, off = 0;

	for (size_t i = 0; i < st->nr; i++) {
		on += st->v[i].on_count != 0;
		off += st->v[i].off_count != 0;
	}
	if (told == KIND_OTHER) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: task '%s' is not an ON_CPU or OFF_CPU "
		       "profiling task in the OAP", s->task);
		return PERFPORT_ERROR;
	}
	if (want != KIND_UNKNOWN && told != KIND_UNKNOWN && want != told) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: task '%s' is %s in the OAP, not %s as "
		       "-O skywalking.target= says", s->task, kind_names[told], kind_names[want]);
		return PERFPORT_ERROR;
	}
	if (want == KIND_UNKNOWN)
		want = told;
	if (want == KIND_UNKNOWN)
		want = s->offcpu_task || on ? KIND_ON : KIND_OFF;
	tasks[want == KIND_OFF] = s->task;
	if (s->offcpu_task) {
		enum kind k2 = query_target(s, s->offcpu_task);

		if (want == KIND_OFF || (k2 != KIND_UNKNOWN && k2 != KIND_OFF)) {
			h->log(h, PERFPORT_LOG_ERROR, "skywalking: offcpu_task '%s' takes the off-CPU "
			       "data, and task '%s' the on-CPU data, but the OAP (or -O target=) says "
			       "task is %s and offcpu_task %s", s->offcpu_task, s->task,
			       kind_names[want], kind_names[k2]);
			return PERFPORT_ERROR;
		}
		tasks[1] = s->offcpu_task;
	}
	if (!tasks[0] && on)
		h->log(h, PERFPORT_LOG_WARN, "skywalking: %zu on-CPU stacks not sent: task '%s' is "
		       "OFF_CPU; an ON_CPU task takes them", on, s->task);
	if (!tasks[1] && off)
		h->log(h, PERFPORT_LOG_WARN, "skywalking: %zu off-CPU stacks not sent: task '%s' is "
		       "ON_CPU; give -O skywalking.offcpu_task=ID (an OFF_CPU task) to send them in "
		       "the same run", off, s->task);
	return PERFPORT_OK;
}

static enum perfport_status sw_upload(void *state, const struct perfport_profile *p)
{
	struct sw *s = state;
	const struct perfport_host *h = s->host;
	struct stacks st = { .mask = counter_mask(p, s->counters) & p->counters_present };
	struct process *pr = NULL;
	enum perfport_status ret = PERFPORT_ERROR;
	unsigned messages = 0, sent = 0;
	const char *token, *tasks[2] = { NULL, NULL };   /* on-CPU, off-CPU */
	size_t nr = 0;
	bool grouped = false;

	if (!s->task || !*s->task) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: -O skywalking.task=ID is required: the id "
		       "of the eBPF profiling task created in the OAP");
		return PERFPORT_USAGE;
	}
	for (size_t i = 0; i < p->nr_frames && !grouped; i++)
		grouped = perfport_frame_at(p, i)->flags & PERFPORT_FRAME_PROCESS;
	if (!grouped) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: uploading needs the tree grouped by "
		       "process or thread (leave out --group-by none)");
		return PERFPORT_ERROR;
	}
	if (!s->service)
		for (size_t i = 0; i < p->nr_labels && !s->service; i++)
			if (!strcmp(p->labels[i].key, "service"))
				s->service = p->labels[i].value;
	if (!s->service) { /* one process: its command; else "perf" */
		const struct perfport_thread *t = perfport_single_process(p);

		s->service = t && t->comm && *t->comm ? t->comm : "perf";
	}
	if (!s->instance)
		s->instance = p->hostname ? p->hostname : "unknown";
	snprintf(s->agent, sizeof(s->agent), "%s", s->agent_id ? s->agent_id : "");
	if (!s->agent_id)
		snprintf(s->agent, sizeof(s->agent), "perfport-%s", p->profile_id);
	token = s->auth_env ? getenv(s->auth_env) : NULL;
	if (token && *token) {
		if ((h->abi_version & 0xffff) < 2) {
			h->log(h, PERFPORT_LOG_ERROR, "skywalking: $%s is set, but this perfport cannot "
			       "send a token (it needs plugin ABI 1.2)", s->auth_env);
			return PERFPORT_ERROR;
		}
		snprintf(s->secret, sizeof(s->secret), "Authentication=%s", s->auth_env);
		h->log(h, PERFPORT_LOG_INFO, "skywalking: the OAP's token from $%s goes with every call",
		       s->auth_env);
	}
	if (has_slices(p) && !(st.node_stack = calloc(p->nr_nodes + 1, sizeof(*st.node_stack)))) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: out of memory");
		goto out;
	}
	if (h->stacks(p, add_stack, &st) || st.oom) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: out of memory");
		goto out;
	}
	pr = processes_of(p, &st, &nr);
	if (!pr)
		goto out;
	if (!nr) {
		h->log(h, PERFPORT_LOG_WARN, "skywalking: no stacks of the counters asked for");
		ret = PERFPORT_OK;
		goto out;
	}
	ret = report_processes(s, pr, nr);
	if (ret == PERFPORT_OK)
		ret = keep_alive(s, pr, nr);
	if (ret != PERFPORT_OK)
		goto out;
	if (plan_tasks(s, &st, tasks) != PERFPORT_OK) {
		ret = PERFPORT_ERROR;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		if (!pr[i].id) {
			h->log(h, PERFPORT_LOG_ERROR, "skywalking: the OAP gave no processId for "
			       "pid %" PRIu32 " (%s): its stacks are not sent", pr[i].pid, pr[i].comm);
			ret = PERFPORT_ERROR;
			continue;
		}
		for (int off = 0; off < 2; off++) {
			if (!tasks[off])
				continue;
			if (collect(s, p, &pr[i], &st, tasks[off], off, &messages) != PERFPORT_OK)
				ret = PERFPORT_ERROR;
			else
				sent++;
		}
	}
	h->log(h, PERFPORT_LOG_INFO, "skywalking: %zu processes reported and kept alive, %u streams, "
	       "%u messages (%zu stacks)", nr, sent, messages, st.nr);
out:
	for (size_t i = 0; pr && i < nr; i++) {
		free(pr[i].id);
		free(pr[i].command);
		free(pr[i].cmdline);
	}
	free(pr);
	for (size_t i = 0; i < st.nr; i++) {
		free(st.v[i].kernel);
		free(st.v[i].user);
	}
	free(st.v);
	free(st.slots);
	free(st.node_stack);
	return ret;
}

/* --- init --- */

static enum perfport_status sw_init(const struct perfport_host *host,
				    const struct perfport_option *opts, size_t nr, void **state)
{
	struct sw *s;

	if (!PERFPORT_HAS(host, struct perfport_host, create)) {
		host->log(host, PERFPORT_LOG_ERROR,
			  "skywalking: this perfport is too old (it needs plugin ABI 1.1)");
		return PERFPORT_ERROR;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return PERFPORT_ERROR;
	s->host = host;
	for (size_t i = 0; i < nr; i++) {
		const char *k = opts[i].name, *v = opts[i].value;

		if (!strcmp(k, "counter"))
			s->counters = v;
		else if (!strcmp(k, "address"))
			s->address = v;
		else if (!strcmp(k, "tls"))
			s->tls = v && !strcmp(v, "true");
		else if (!strcmp(k, "task"))
			s->task = v;
		else if (!strcmp(k, "target"))
			s->target = v;
		else if (!strcmp(k, "offcpu_task"))
			s->offcpu_task = v && *v ? v : NULL;
		else if (!strcmp(k, "service"))
			s->service = v;
		else if (!strcmp(k, "instance"))
			s->instance = v;
		else if (!strcmp(k, "layer"))
			s->layer = v;
		else if (!strcmp(k, "labels"))
			s->labels = v;
		else if (!strcmp(k, "agent_id"))
			s->agent_id = v;
		else if (!strcmp(k, "process_name"))
			s->process_name = v;
		else if (!strcmp(k, "auth_env"))
			s->auth_env = v;
	}
	if (s->auth_env && (strlen(s->auth_env) > 128 || !*s->auth_env ||
			    strspn(s->auth_env, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					       "0123456789_") != strlen(s->auth_env))) {
		host->log(host, PERFPORT_LOG_ERROR, "skywalking: auth_env takes the name of an "
			  "environment variable, not '%s'", s->auth_env);
		free(s);
		return PERFPORT_ERROR;
	}
	if (!s->address || !*s->address || strchr(s->address, '/')) {
		host->log(host, PERFPORT_LOG_ERROR, "skywalking: address takes HOST:PORT, not '%s'",
			  s->address ? s->address : "");
		free(s);
		return PERFPORT_ERROR;
	}
	*state = s;
	return PERFPORT_OK;
}

static void sw_fini(void *state)
{
	free(state);
}

/* The value of option @name in @opts (NULL: unset). */
static const char *sw_opt(const struct perfport_option *opts, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].value;
	return NULL;
}

/* ABI 1.6: what an upload needs, said before the recording is read. */
static enum perfport_status sw_check(const struct perfport_host *h, const struct perfport_option *opts,
				     size_t nr, uint32_t mode)
{
	const char *task = sw_opt(opts, nr, "task");

	if ((mode & PERFPORT_CHECK_UPLOAD) && (!task || !*task)) {
		h->log(h, PERFPORT_LOG_ERROR, "skywalking: -O skywalking.task=ID is required: the id "
		       "of the eBPF profiling task created in the OAP");
		return PERFPORT_USAGE;
	}
	return PERFPORT_OK;
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "skywalking",
	.description = "Apache SkyWalking: thread-stack analysis JSON; eBPF-profiling upload over gRPC",
	.default_output = "profile.skywalking.json",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = sw_init,
	.write = sw_write,
	.upload = sw_upload,
	.fini = sw_fini,
	.flags = PERFPORT_EXPORTER_BY_THREAD | PERFPORT_EXPORTER_TIME_SLICES | PERFPORT_EXPORTER_WALL_CLOCK,
	.check = sw_check,
};
