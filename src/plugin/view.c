/* SPDX-License-Identifier: MIT */
/*
 * view.c - the plugins' read-only view of a finished profile, and the host
 * services that walk it.
 */
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../net/net.h"
#include "../util/log.h"
#include "perfport/version.h"
#include "plugin.h"

/* The per-node counts are handed over in place: count[] then ns[]. */
_Static_assert(sizeof(struct profile_counts) == 2 * CNT_COUNT * sizeof(uint64_t),
	       "struct profile_counts is the ABI's per-node layout");

/* So are the slice values, whose layout is the ABI's. */
_Static_assert(sizeof(struct profile_slice) == sizeof(struct perfport_slice_value) &&
	       offsetof(struct profile_slice, node) == offsetof(struct perfport_slice_value, node) &&
	       offsetof(struct profile_slice, counter) ==
	       offsetof(struct perfport_slice_value, counter) &&
	       offsetof(struct profile_slice, count) == offsetof(struct perfport_slice_value, count) &&
	       offsetof(struct profile_slice, ns) == offsetof(struct perfport_slice_value, value),
	       "struct profile_slice is the ABI's slice value layout");

struct view {
	struct perfport_profile p;     /* first: the view is freed through it */
	const char *counter_names[CNT_COUNT];
	const char *counter_units[CNT_COUNT];
	struct perfport_frame *frames;
	struct perfport_node *nodes;
	struct perfport_event *events;
	struct perfport_thread *threads;
	struct perfport_label *labels;
	struct perfport_module *modules;
	struct perfport_sample *samples;
	char *label_buf;
	char profile_id[37];
	struct perfport_profile *offwake;
};

static void uuid4(char out[37])
{
	uint8_t b[16];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	for (size_t i = got; i < sizeof(b); i++)
		b[i] = (uint8_t)(rand() >> 7);
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static uint64_t epoch(const struct profile_meta *m, uint64_t t)
{
	return t >= m->first_time ? m->start_ns + (t - m->first_time) : m->start_ns;
}

struct perfport_profile *view_build(const struct profile *p, const struct view_opts *o)
{
	const struct profile_meta *m = &p->meta;
	struct view *v = calloc(1, sizeof(*v));
	bool on_cpu_events = false;
	size_t lb = 0;

	if (!v)
		return NULL;
	v->frames = calloc(p->nr_frames + 1, sizeof(*v->frames));
	v->nodes = calloc(p->nr_nodes + 1, sizeof(*v->nodes));
	v->events = calloc(m->nr_sources + 1, sizeof(*v->events));
	v->threads = calloc(p->nr_threads + 1, sizeof(*v->threads));
	v->labels = calloc(o->nr_labels + 1, sizeof(*v->labels));
	v->modules = calloc(p->nr_modules + 1, sizeof(*v->modules));
	v->samples = calloc(p->nr_timed + 1, sizeof(*v->samples));
	for (size_t i = 0; i < o->nr_labels; i++)
		lb += strlen(o->labels[i]) + 1;
	v->label_buf = malloc(lb + 1);
	if (!v->frames || !v->nodes || !v->events || !v->threads || !v->labels || !v->modules ||
	    !v->label_buf || !v->samples) {
		view_free(&v->p);
		return NULL;
	}

	for (size_t i = 0; i < m->nr_sources; i++) {
		const struct profile_source *s = &m->sources[i];

		v->events[i] = (struct perfport_event){
			.name = s->name,
			.role = profile_role_name(s->role),
			.unit = strcmp(s->unit, "ns") == 0 ? "nanoseconds" : "events",
			.period = s->freq ? 0 : s->period_or_freq,
			.frequency = s->freq ? s->period_or_freq : 0,
			.samples = s->samples,
		};
		if (s->role == ROLE_ON_CPU && strcmp(s->unit, "ns") != 0)
			on_cpu_events = true;
	}
	for (int c = 0; c < CNT_COUNT; c++) {
		v->counter_names[c] = counter_name(c);
		v->counter_units[c] = "nanoseconds";
	}
	if (on_cpu_events)
		v->counter_units[CNT_ON_CPU] = "events";
	for (size_t i = 0; i < p->nr_frames; i++) {
		const struct profile_frame *f = &p->frames[i];

		v->frames[i] = (struct perfport_frame){ f->function, f->module, f->file, f->line,
							f->flags, f->addr };
	}
	for (size_t i = 0; i < p->nr_nodes; i++) {
		const struct profile_node *n = &p->nodes[i];

		v->nodes[i] = (struct perfport_node){ n->parent, n->frame, n->depth, n->end };
	}
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct profile_thread *t = &p->threads[i];

		v->threads[i] = (struct perfport_thread){
			.pid = t->pid, .tid = t->tid, .comm = t->comm,
			.start_ns = epoch(m, t->start), .end_ns = epoch(m, t->end),
			.run_ns = t->run_ns, .blocked_ns = t->blocked_ns, .delay_ns = t->delay_ns,
		};
	}
	lb = 0;
	for (size_t i = 0; i < o->nr_labels; i++) {
		char *kv = v->label_buf + lb, *eq;

		strcpy(kv, o->labels[i]);
		lb += strlen(kv) + 1;
		eq = strchr(kv, '=');
		if (eq)
			*eq = 0;
		v->labels[i].key = kv;
		v->labels[i].value = eq ? eq + 1 : "";
	}
	for (size_t i = 0; i < p->nr_modules; i++)
		v->modules[i] = (struct perfport_module){ p->modules[i].path, p->modules[i].build_id,
						  p->modules[i].start, p->modules[i].limit,
						  p->modules[i].file_offset };
	for (size_t i = 0; i < p->nr_timed; i++) {
		const struct profile_timed *t = &p->timed[i];

		v->samples[i] = (struct perfport_sample){
			.time_ns = epoch(m, t->time), .value = t->ns, .node = t->node,
			.tid = t->tid, .counter = t->counter, .count = t->count,
		};
	}
	uuid4(v->profile_id);

	v->p = (struct perfport_profile){
		.struct_size = sizeof(struct perfport_profile),
		.nr_counters = CNT_COUNT,
		.counter_names = v->counter_names,
		.counter_units = v->counter_units,
		.counters_present = m->counters_present,
		/* the window exported (--time), not the whole recording */
		.start_ns = epoch(m, m->window_lo),
		.end_ns = epoch(m, m->window_hi),
		.time_source = profile_time_source_name(m->time_source),
		.hostname = m->hostname,
		.os_release = m->osrelease,
		.arch = m->arch,
		.perf_version = m->perf_version,
		.cmdline = m->cmdline,
		.nr_cpus = m->nr_cpus,
		.profile_id = v->profile_id,
		.nr_events = m->nr_sources,
		.event_size = sizeof(struct perfport_event),
		.events = v->events,
		.nr_labels = o->nr_labels,
		.labels = v->labels,
		.nr_frames = p->nr_frames,
		.frame_size = sizeof(struct perfport_frame),
		.frames = v->frames,
		.nr_nodes = p->nr_nodes,
		.node_size = sizeof(struct perfport_node),
		.nodes = v->nodes,
		.self = (const uint64_t *)p->self,
		.total = (const uint64_t *)p->total,
		.nr_threads = p->nr_threads,
		.thread_size = sizeof(struct perfport_thread),
		.threads = v->threads,
		.nr_modules = p->nr_modules,
		.module_size = sizeof(struct perfport_module),
		.modules = v->modules,
		.slice_ns = p->slice_ns,
		.slice_start_ns = p->slice_ns ? epoch(m, p->slice_origin) : 0,
		.nr_slice_values = p->nr_slices,
		.slice_value_size = sizeof(struct perfport_slice_value),
		.slice_values = (const struct perfport_slice_value *)p->slices,
		.nr_samples = p->nr_timed,
		.sample_size = sizeof(struct perfport_sample),
		.samples = v->samples,
	};
	if (p->nr_waker_nodes) {
		/* the off-wake tree as a profile of its own, the rest shared */
		struct profile w = *p;

		w.frames = p->waker_frames;
		w.nr_frames = p->nr_waker_frames;
		w.nodes = p->waker_nodes;
		w.nr_nodes = p->nr_waker_nodes;
		w.self = p->waker_self;
		w.total = p->waker_total;
		w.nr_slices = 0;
		w.slices = NULL;
		w.slice_ns = 0;
		w.nr_timed = p->nr_waker_timed;
		w.timed = p->waker_timed;
		w.nr_waker_nodes = 0;
		v->offwake = view_build(&w, o);
		if (!v->offwake) {
			view_free(&v->p);
			return NULL;
		}
		memcpy(((struct view *)v->offwake)->profile_id, v->profile_id, sizeof(v->profile_id));
		/* the counters with data are the off-wake tree's */
		v->offwake->counters_present = 0;
		for (int c = 0; c < CNT_COUNT; c++)
			if (w.nr_nodes && w.total[0].count[c])
				v->offwake->counters_present |= 1ull << c;
		v->p.offwake = v->offwake;
	}
	return &v->p;
}

void view_free(struct perfport_profile *pp)
{
	struct view *v = (struct view *)pp;

	if (!v)
		return;
	free(v->frames);
	free(v->nodes);
	free(v->events);
	free(v->threads);
	free(v->labels);
	free(v->modules);
	free(v->samples);
	free(v->label_buf);
	view_free(v->offwake);
	free(v);
}

/* --- host services --- */

static void host_log(const struct perfport_host *host, enum perfport_log_level level,
		     const char *fmt, ...)
{
	static const int map[] = { PP_LOG_ERROR, PP_LOG_WARN, PP_LOG_INFO, PP_LOG_DEBUG };
	char msg[1024];
	va_list ap;

	(void)host;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pp_log(level <= PERFPORT_LOG_DEBUG ? map[level] : PP_LOG_DEBUG, "%s", msg);
}

static int host_walk(const struct perfport_profile *p, perfport_walk_fn fn, void *ctx)
{
	uint32_t *open = malloc((p->nr_nodes + 1) * sizeof(*open));
	size_t top = 0;
	int ret = 0;

	if (!open)
		return -1;
	for (size_t i = 0; i < p->nr_nodes && !ret; i++) {
		while (top && perfport_node_at(p, open[top - 1])->end <= i && !ret)
			ret = fn(ctx, p, open[--top], 1);
		if (!ret)
			ret = fn(ctx, p, (uint32_t)i, 0);
		open[top++] = (uint32_t)i;
	}
	while (top && !ret)
		ret = fn(ctx, p, open[--top], 1);
	free(open);
	return ret;
}

static int host_stacks(const struct perfport_profile *p, perfport_stack_fn fn, void *ctx)
{
	uint32_t *path = malloc((p->nr_nodes + 1) * sizeof(*path));
	int ret = 0;

	if (!path)
		return -1;
	for (size_t i = 1; i < p->nr_nodes && !ret; i++) {
		const struct perfport_node *n = perfport_node_at(p, i);
		bool any = false;

		if (n->depth == 0 || n->depth > p->nr_nodes)
			continue;
		path[n->depth - 1] = n->frame;
		for (unsigned c = 0; c < p->nr_counters && !any; c++)
			any = perfport_self_count(p, i, c) != 0;
		if (any)
			ret = fn(ctx, p, path, n->depth, (uint32_t)i);
	}
	free(path);
	return ret;
}

static enum perfport_status host_http(const struct perfport_http_request *rq,
				      struct perfport_http_response *rs)
{
	struct net_request nr = {
		.method = rq->method, .url = rq->url, .headers = rq->headers, .body = rq->body,
		.body_len = rq->body_len, .aws_sigv4 = rq->aws_sigv4, .spool_tag = rq->spool_tag,
		.sls_sign = PERFPORT_HAS(rq, struct perfport_http_request, sls_sign) ? rq->sls_sign
										    : NULL,
		.grpc = PERFPORT_HAS(rq, struct perfport_http_request, grpc) && rq->grpc,
		.secret_header = PERFPORT_HAS(rq, struct perfport_http_request, secret_header)
				 ? rq->secret_header : NULL,
	};
	struct net_response r;
	int ret;

	if (!rq->method || !rq->url)
		return PERFPORT_ERROR;
	ret = net_send(&nr, &r);
	if (rs && PERFPORT_HAS(rs, struct perfport_http_response, spooled)) {
		rs->status = r.status;
		rs->body = r.body;
		rs->body_len = r.body_len;
		rs->spooled = r.spooled;
		if (PERFPORT_HAS(rs, struct perfport_http_response, grpc_status))
			rs->grpc_status = r.grpc_status;
	} else {
		free(r.body);
	}
	return ret == 0 ? PERFPORT_OK : PERFPORT_ERROR;
}

const struct perfport_host *plugin_host(void)
{
	static const struct perfport_host host = {
		.struct_size = sizeof(struct perfport_host),
		.abi_version = PERFPORT_ABI_VERSION,
		.version = PERFPORT_VERSION,
		.log = host_log,
		.walk = host_walk,
		.stacks = host_stacks,
		.pprof = pprof_encode,
		.free = free,
		.gzip = host_gzip,
		.http = host_http,
		.create = plugin_create_file,
	};

	return &host;
}
