/* SPDX-License-Identifier: MIT */
/*
 * otlp.c - the "otlp" exporter: OpenTelemetry profiles (the profiles signal
 * of opentelemetry-proto v1.11.0, package
 * opentelemetry.proto.profiles.v1development).
 *
 * One ProfilesData (on the wire the same bytes as an
 * ExportProfilesServiceRequest): one ResourceProfiles for the host, one
 * ScopeProfiles ("perfport"), one Profile per counter present, sharing one
 * ProfilesDictionary. A Sample is a stack and a thread (attributes
 * thread.id, thread.name, process.pid, process.executable.name and
 * thread.state); it carries one value and one timestamp per sample or
 * off-CPU interval. Written as binary protobuf or as OTLP/JSON, and sent
 * over OTLP/HTTP (POST /v1development/profiles) or OTLP/gRPC
 * (ProfilesService/Export).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/json.h"
#include "perfport/map.h"
#include "perfport/plugin.h"
#include "perfport/protobuf.h"

#define OTLP_PROTO_VERSION "opentelemetry-proto v1.11.0 (profiles v1development)"
#define OTLP_PACKAGE "opentelemetry.proto.collector.profiles.v1development"

static const struct perfport_option_def options[] = {
	{ "counter", PERFPORT_OPT_LIST, "all",
	  "on-cpu,preempted,lock,io,sleep,timed-sleep,idle,all",
	  "counters to include, a Profile each (all: every counter present)" },
	{ "encoding", PERFPORT_OPT_ENUM, "protobuf", "protobuf,json",
	  "the file and HTTP body: binary protobuf, or OTLP/JSON" },
	{ "timestamps", PERFPORT_OPT_BOOL, "true", NULL,
	  "a value and a timestamp per sample or interval (false: one summed value per "
	  "stack and thread, as receivers that take no timestamps want)" },
	{ "service", PERFPORT_OPT_STRING, NULL, NULL,
	  "the resource's service.name (default: --label service=, else the one process's "
	  "command, else \"perf\")" },
	{ "endpoint", PERFPORT_OPT_STRING, "http://127.0.0.1:4318", NULL,
	  "upload: the collector, http[s]://HOST:PORT[/PREFIX] (gRPC: usually port 4317)" },
	{ "protocol", PERFPORT_OPT_ENUM, "http", "http,grpc",
	  "upload: OTLP/HTTP (POST PREFIX/v1development/profiles) or OTLP/gRPC "
	  "(ProfilesService/Export)" },
	{ "headers", PERFPORT_OPT_STRING, NULL, NULL,
	  "upload: extra request headers, NAME=VALUE,... (no secrets: see secret_header)" },
	{ "secret_header", PERFPORT_OPT_STRING, "Authorization=OTLP_AUTHORIZATION", NULL,
	  "upload: NAME=ENV: when $ENV is set, the header NAME with its value goes with the "
	  "request (never logged or spooled)" },
};

/* --- the model: the dictionary and the samples, before encoding --- */

struct attr {                   /* KeyValueAndUnit */
	uint32_t key;           /* string index */
	bool is_int;
	int64_t ival;
	uint32_t sval;          /* string index */
};

struct func {
	uint32_t name, file;
};

struct loc {
	uint32_t mapping, func, attr;
	uint64_t address, line;
};

struct stack {
	uint32_t first, n;      /* in stack_locs */
};

struct u32s {
	uint32_t *v;
	size_t n, cap;
};

/* One Sample: a stack and a thread, its values and timestamps in time order. */
struct osample {
	uint32_t stack, tid;
	uint32_t attrs[5];
	uint32_t nr_attrs;
	uint64_t *values, *times;
	size_t n, cap;
};

struct oprofile {
	unsigned counter;
	uint32_t type, unit, counter_attr;
	struct osample *samples;
	size_t n, cap;
	struct perfport_map by_key;      /* (stack, tid) -> sample index */
	uint64_t total;
};

struct model {
	const struct perfport_profile *p;
	bool oom;
	struct perfport_map strings_ix;
	const char **strings;   /* owned copies */
	size_t nr_strings, cap_strings;
	struct perfport_map attrs_ix;
	struct attr *attrs;
	size_t nr_attrs, cap_attrs;
	struct perfport_map funcs_ix;
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	uint32_t *frame_loc;    /* per frame: location index, 0 none yet */
	struct loc *locs;
	size_t nr_locs, cap_locs;
	uint32_t *mod_mapping;  /* per module: mapping index */
	uint32_t *node_stack;   /* per node: stack index + 1, 0 none yet */
	struct stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct u32s stack_locs;
	struct perfport_map threads_ix;  /* tid -> index in p->threads */
	struct oprofile prof[64];
	size_t nr_prof;
};

static bool grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t c;
	void *n;

	if (need <= *cap)
		return true;
	c = *cap ? *cap * 2 : 256;
	while (c < need)
		c *= 2;
	n = realloc(*v, c * size);
	if (!n)
		return false;
	*v = n;
	*cap = c;
	return true;
}

#define GROW(m, arr, nr, cap) \
	(grow((void **)&(m)->arr, &(m)->cap, (m)->nr + 1, sizeof(*(m)->arr)) || ((m)->oom = true, false))

static uint32_t str_ix(struct model *m, const char *s)
{
	const char *copy;
	uint32_t v;
	bool added;
	size_t len;

	if (!s)
		s = "";
	len = strlen(s);
	if (m->oom || !perfport_map_get(&m->strings_ix, s, len, (uint32_t)m->nr_strings, &v, &added,
					&copy) ||
	    (added && !GROW(m, strings, nr_strings, cap_strings))) {
		m->oom = true;
		return 0;
	}
	if (added)
		m->strings[m->nr_strings++] = copy;
	return v;
}

static uint32_t attr_ix(struct model *m, const char *key, const char *sval, bool is_int,
			int64_t ival)
{
	struct attr a = { .key = str_ix(m, key), .is_int = is_int, .ival = is_int ? ival : 0,
			  .sval = is_int ? 0 : str_ix(m, sval) };
	uint32_t v;
	bool added;

	if (m->oom || !perfport_map_get(&m->attrs_ix, &a, sizeof(a), (uint32_t)m->nr_attrs, &v, &added, NULL) ||
	    (added && !GROW(m, attrs, nr_attrs, cap_attrs))) {
		m->oom = true;
		return 0;
	}
	if (added)
		m->attrs[m->nr_attrs++] = a;
	return v;
}

static uint32_t func_ix(struct model *m, const char *name, const char *file)
{
	struct func f = { str_ix(m, name), str_ix(m, file) };
	uint32_t v;
	bool added;

	if (m->oom || !perfport_map_get(&m->funcs_ix, &f, sizeof(f), (uint32_t)m->nr_funcs, &v, &added, NULL) ||
	    (added && !GROW(m, funcs, nr_funcs, cap_funcs))) {
		m->oom = true;
		return 0;
	}
	if (added)
		m->funcs[m->nr_funcs++] = f;
	return v;
}

static uint32_t module_of(const struct perfport_profile *p, const char *path)
{
	if (!path || !p->modules)
		return UINT32_MAX;
	for (size_t i = 0; i < p->nr_modules; i++)
		if (strcmp(perfport_module_at(p, i)->path, path) == 0)
			return (uint32_t)i;
	return UINT32_MAX;
}

static uint32_t loc_ix(struct model *m, uint32_t frame)
{
	const struct perfport_profile *p = m->p;
	const struct perfport_frame *f = perfport_frame_at(p, frame);
	uint32_t mod;
	struct loc l = { 0 };

	if (m->frame_loc[frame])
		return m->frame_loc[frame];
	mod = module_of(p, f->module);
	l.mapping = mod == UINT32_MAX ? 0 : m->mod_mapping[mod];
	l.func = func_ix(m, f->function, f->file);
	l.line = f->line;
	l.address = PERFPORT_HAS(p, struct perfport_profile, frame_size) &&
		    p->frame_size >= offsetof(struct perfport_frame, address) + sizeof(f->address) ?
		    f->address : 0;
	l.attr = attr_ix(m, "profile.frame.type", f->flags & PERFPORT_FRAME_KERNEL ? "kernel" :
			 "native", false, 0);
	if (!GROW(m, locs, nr_locs, cap_locs))
		return 0;
	m->locs[m->nr_locs] = l;
	return m->frame_loc[frame] = (uint32_t)m->nr_locs++;
}

/* The stack of @node, leaf first, without perfport's process and thread
 * frames (threads are attributes here). */
static uint32_t stack_ix(struct model *m, uint32_t node)
{
	const struct perfport_profile *p = m->p;
	struct stack st;

	if (m->node_stack[node])
		return m->node_stack[node] - 1;
	st.first = (uint32_t)m->stack_locs.n;
	for (uint32_t n = node; n && n != UINT32_MAX; n = perfport_node_at(p, n)->parent) {
		uint32_t fr = perfport_node_at(p, n)->frame;

		if (fr == UINT32_MAX || (perfport_frame_at(p, fr)->flags &
					 (PERFPORT_FRAME_PROCESS | PERFPORT_FRAME_THREAD)))
			continue;
		if (!grow((void **)&m->stack_locs.v, &m->stack_locs.cap, m->stack_locs.n + 1,
			  sizeof(uint32_t))) {
			m->oom = true;
			return 0;
		}
		m->stack_locs.v[m->stack_locs.n++] = loc_ix(m, fr);
	}
	st.n = (uint32_t)(m->stack_locs.n - st.first);
	if (!GROW(m, stacks, nr_stacks, cap_stacks))
		return 0;
	m->stacks[m->nr_stacks] = st;
	m->node_stack[node] = (uint32_t)m->nr_stacks + 1;
	return (uint32_t)m->nr_stacks++;
}

static const struct perfport_thread *thread_of(struct model *m, uint32_t tid)
{
	uint32_t i;

	return perfport_map_find(&m->threads_ix, &tid, sizeof(tid), &i) ?
	       perfport_thread_at(m->p, i) : NULL;
}

/* What OpenTelemetry calls a counter's samples: cpu for on-CPU time, off_cpu
 * for the waiting states (the state is the thread.state attribute). */
static const char *otel_type(const char *counter)
{
	if (strcmp(counter, "on-cpu") == 0)
		return "cpu";
	if (strcmp(counter, "idle") == 0)
		return "idle";
	return "off_cpu";
}

static void add_value(struct model *m, struct oprofile *op, uint32_t node, uint32_t tid,
		      uint64_t value, uint64_t time, bool timed)
{
	uint32_t key[2] = { stack_ix(m, node), tid }, si;
	struct osample *s;
	bool added;

	if (m->oom || !perfport_map_get(&op->by_key, key, sizeof(key), (uint32_t)op->n, &si, &added, NULL) ||
	    (added && !grow((void **)&op->samples, &op->cap, op->n + 1, sizeof(*op->samples)))) {
		m->oom = true;
		return;
	}
	if (added) {
		const struct perfport_thread *t = tid != UINT32_MAX ? thread_of(m, tid) : NULL;
		const struct perfport_thread *main = t ? thread_of(m, t->pid) : NULL;

		s = &op->samples[op->n++];
		memset(s, 0, sizeof(*s));
		s->stack = key[0];
		s->tid = tid;
		if (t) {
			s->attrs[s->nr_attrs++] = attr_ix(m, "thread.id", NULL, true, t->tid);
			s->attrs[s->nr_attrs++] = attr_ix(m, "thread.name", t->comm ? t->comm : "", false, 0);
			s->attrs[s->nr_attrs++] = attr_ix(m, "process.pid", NULL, true, t->pid);
			if (main && main->comm)
				s->attrs[s->nr_attrs++] = attr_ix(m, "process.executable.name",
								  main->comm, false, 0);
		}
		s->attrs[s->nr_attrs++] = op->counter_attr;
	}
	s = &op->samples[si];
	if (!timed && s->n) {          /* aggregated: one value */
		s->values[0] += value;
		op->total += value;
		return;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;
		uint64_t *v = realloc(s->values, cap * sizeof(*v)), *t;

		if (v)
			s->values = v;
		t = v && timed ? realloc(s->times, cap * sizeof(*t)) : NULL;
		if (t)
			s->times = t;
		if (!v || (timed && !t)) {
			m->oom = true;
			return;
		}
		s->cap = cap;
	}
	s->values[s->n] = value;
	if (timed)
		s->times[s->n] = time;
	s->n++;
	op->total += value;
}

struct fallback_ctx {
	struct model *m;
};

/* Without per-sample data (a host before ABI 1.5): one value per stack. */
static int fallback_stack(void *ctx, const struct perfport_profile *p, const uint32_t *frames,
			  size_t depth, uint32_t node)
{
	struct model *m = ((struct fallback_ctx *)ctx)->m;

	(void)frames;
	(void)depth;
	for (size_t i = 0; i < m->nr_prof; i++) {
		uint64_t v = perfport_self_value(p, node, m->prof[i].counter);

		if (v)
			add_value(m, &m->prof[i], node, UINT32_MAX, v, 0, false);
	}
	return m->oom;
}

static void model_free(struct model *m)
{
	perfport_map_free(&m->strings_ix);
	free(m->strings);
	perfport_map_free(&m->attrs_ix);
	free(m->attrs);
	perfport_map_free(&m->funcs_ix);
	free(m->funcs);
	free(m->frame_loc);
	free(m->locs);
	free(m->mod_mapping);
	free(m->node_stack);
	free(m->stacks);
	free(m->stack_locs.v);
	perfport_map_free(&m->threads_ix);
	for (size_t i = 0; i < m->nr_prof; i++) {
		for (size_t j = 0; j < m->prof[i].n; j++) {
			free(m->prof[i].samples[j].values);
			free(m->prof[i].samples[j].times);
		}
		free(m->prof[i].samples);
		perfport_map_free(&m->prof[i].by_key);
	}
}

static bool model_build(struct model *m, const struct perfport_host *h,
			const struct perfport_profile *p, uint64_t counters, bool timestamps)
{
	bool timed = PERFPORT_PROFILE_HAS_SAMPLES(p) && p->samples && p->nr_samples;
	int slot[64];

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->frame_loc = calloc(p->nr_frames + 1, sizeof(uint32_t));
	m->node_stack = calloc(p->nr_nodes + 1, sizeof(uint32_t));
	m->mod_mapping = calloc(p->nr_modules + 1, sizeof(uint32_t));
	if (!m->frame_loc || !m->node_stack || !m->mod_mapping)
		return false;
	/* index 0 of every table is the zero value */
	str_ix(m, "");
	attr_ix(m, "", "", false, 0);
	func_ix(m, "", "");
	if (!GROW(m, locs, nr_locs, cap_locs) || !GROW(m, stacks, nr_stacks, cap_stacks))
		return false;
	memset(&m->locs[m->nr_locs++], 0, sizeof(*m->locs));
	memset(&m->stacks[m->nr_stacks++], 0, sizeof(*m->stacks));
	for (size_t i = 0; i < p->nr_modules; i++)
		m->mod_mapping[i] = (uint32_t)i + 1;  /* mapping_table is 0, then the modules */
	for (size_t i = 0; i < p->nr_threads; i++) {
		uint32_t tid = perfport_thread_at(p, i)->tid, v;
		bool added;

		if (!perfport_map_get(&m->threads_ix, &tid, sizeof(tid), (uint32_t)i, &v, &added, NULL))
			return false;
	}
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
		struct oprofile *op;

		slot[c] = -1;
		if (!(counters & p->counters_present & (1ull << c)))
			continue;
		op = &m->prof[m->nr_prof];
		op->counter = c;
		op->type = str_ix(m, otel_type(p->counter_names[c]));
		op->unit = str_ix(m, p->counter_units[c]);
		op->counter_attr = attr_ix(m, "thread.state", p->counter_names[c], false, 0);
		slot[c] = (int)m->nr_prof++;
	}
	if (timed) {
		for (size_t i = 0; i < p->nr_samples && !m->oom; i++) {
			const struct perfport_sample *s = perfport_sample_at(p, i);

			if (s->counter < 64 && slot[s->counter] >= 0)
				add_value(m, &m->prof[slot[s->counter]], s->node, s->tid, s->value,
					  s->time_ns, timestamps);
		}
	} else {
		struct fallback_ctx fc = { m };

		h->stacks(p, fallback_stack, &fc);
	}
	return !m->oom;
}

/* --- binary protobuf --- */

static void pb_attr_list(struct perfport_pb *b, unsigned f, const uint32_t *v, size_t n)
{
	struct perfport_pb packed = { 0 };

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		perfport_pb_varint(&packed, v[i]);
	perfport_pb_message(b, f, &packed);
}

static void pb_fixed64(struct perfport_pb *b, unsigned f, uint64_t v)
{
	unsigned char t[8];

	for (int i = 0; i < 8; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	perfport_pb_varint(b, (uint64_t)f << 3 | 1);
	perfport_pb_raw(b, t, 8);
}

/* common.v1.KeyValue with a string or int AnyValue */
static void pb_keyvalue(struct perfport_pb *b, unsigned f, const char *key, const char *sval,
			int64_t ival)
{
	struct perfport_pb kv = { 0 }, any = { 0 };

	perfport_pb_string(&kv, 1, key);
	if (sval)
		perfport_pb_string(&any, 1, sval);
	else
		perfport_pb_uint(&any, 3, (uint64_t)ival);
	perfport_pb_message(&kv, 2, &any);
	perfport_pb_message(b, f, &kv);
}

struct resource_attr {
	const char *key, *sval;
	int64_t ival;
};

struct meta {
	struct resource_attr res[64];
	size_t nr_res;
	const char *version;
	unsigned char profile_id[16];
	uint64_t period;
	const char *period_type;
};

static void pb_profile(struct perfport_pb *b, struct model *m, const struct oprofile *op,
		       const struct meta *mt)
{
	const struct perfport_profile *p = m->p;
	struct perfport_pb pr = { 0 }, vt = { 0 };

	perfport_pb_uint(&vt, 1, op->type);
	perfport_pb_uint(&vt, 2, op->unit);
	perfport_pb_message(&pr, 1, &vt);
	for (size_t i = 0; i < op->n; i++) {
		const struct osample *s = &op->samples[i];
		struct perfport_pb sm = { 0 }, vals = { 0 }, times = { 0 };

		if (s->stack)
			perfport_pb_uint(&sm, 1, s->stack);
		pb_attr_list(&sm, 2, s->attrs, s->nr_attrs);
		for (size_t j = 0; j < s->n; j++)
			perfport_pb_varint(&vals, s->values[j]);
		perfport_pb_message(&sm, 4, &vals);
		if (s->times) {
			for (size_t j = 0; j < s->n; j++)
				for (int k = 0; k < 8; k++) {
					unsigned char c = (unsigned char)(s->times[j] >> (8 * k));

					perfport_pb_raw(&times, &c, 1);
				}
			perfport_pb_message(&sm, 5, &times);
		}
		perfport_pb_message(&pr, 2, &sm);
	}
	pb_fixed64(&pr, 3, p->start_ns);
	perfport_pb_uint(&pr, 4, p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0);
	if (op->counter == PERFPORT_COUNTER_ON_CPU && mt->period) {
		struct perfport_pb pt = { 0 };

		perfport_pb_uint(&pt, 1, str_ix(m, mt->period_type));
		perfport_pb_uint(&pt, 2, op->unit);
		perfport_pb_message(&pr, 5, &pt);
		perfport_pb_uint(&pr, 6, mt->period);
	}
	perfport_pb_bytes_field(&pr, 7, mt->profile_id, sizeof(mt->profile_id));
	pb_attr_list(&pr, 11, &op->counter_attr, 1);
	perfport_pb_message(b, 2, &pr);
}

static void pb_encode(struct perfport_pb *b, struct model *m, const struct meta *mt)
{
	const struct perfport_profile *p = m->p;
	struct perfport_pb rp = { 0 }, res = { 0 }, sp = { 0 }, scope = { 0 }, dict = { 0 };

	for (size_t i = 0; i < mt->nr_res; i++)
		pb_keyvalue(&res, 1, mt->res[i].key, mt->res[i].sval, mt->res[i].ival);
	perfport_pb_message(&rp, 1, &res);
	perfport_pb_string(&scope, 1, "perfport");
	perfport_pb_string(&scope, 2, mt->version);
	perfport_pb_message(&sp, 1, &scope);
	for (size_t i = 0; i < m->nr_prof; i++)
		pb_profile(&sp, m, &m->prof[i], mt);
	perfport_pb_message(&rp, 2, &sp);
	perfport_pb_message(b, 1, &rp);

	/* the dictionary, after the profiles: they may have added strings */
	{
		struct perfport_pb e = { 0 };

		perfport_pb_message(&dict, 1, &e);  /* mapping_table[0] */
		for (size_t i = 0; i < p->nr_modules; i++) {
			const struct perfport_module *mod = perfport_module_at(p, i);
			bool addr = PERFPORT_HAS(p, struct perfport_profile, module_size) &&
				    p->module_size >= offsetof(struct perfport_module, file_offset) +
				    sizeof(mod->file_offset);
			uint32_t a;

			if (addr) {
				perfport_pb_uint(&e, 1, mod->start);
				perfport_pb_uint(&e, 2, mod->limit);
				perfport_pb_uint(&e, 3, mod->file_offset);
			}
			perfport_pb_uint(&e, 4, str_ix(m, mod->path));
			if (mod->build_id) {
				a = attr_ix(m, "process.executable.build_id.gnu", mod->build_id, false, 0);
				pb_attr_list(&e, 5, &a, 1);
			}
			perfport_pb_message(&dict, 1, &e);
		}
		for (size_t i = 0; i < m->nr_locs; i++) {
			const struct loc *l = &m->locs[i];

			if (i) {
				struct perfport_pb line = { 0 };

				if (l->mapping)
					perfport_pb_uint(&e, 1, l->mapping);
				if (l->address)
					perfport_pb_uint(&e, 2, l->address);
				perfport_pb_uint(&line, 1, l->func);
				if (l->line)
					perfport_pb_uint(&line, 2, l->line);
				perfport_pb_message(&e, 3, &line);
				pb_attr_list(&e, 4, &l->attr, 1);
			}
			perfport_pb_message(&dict, 2, &e);
		}
		for (size_t i = 0; i < m->nr_funcs; i++) {
			if (i) {
				perfport_pb_uint(&e, 1, m->funcs[i].name);
				perfport_pb_uint(&e, 2, m->funcs[i].name);
				if (m->funcs[i].file)
					perfport_pb_uint(&e, 3, m->funcs[i].file);
			}
			perfport_pb_message(&dict, 3, &e);
		}
		/* link_table[0]: a zero trace id and span id of their lengths */
		{
			unsigned char zero[16] = { 0 };

			perfport_pb_bytes_field(&e, 1, zero, 16);
			perfport_pb_bytes_field(&e, 2, zero, 8);
			perfport_pb_message(&dict, 4, &e);
		}
		/* attributes before strings: the build ids add to both */
		for (size_t i = 0; i < m->nr_attrs; i++) {
			const struct attr *a = &m->attrs[i];

			if (i) {
				struct perfport_pb any = { 0 };

				perfport_pb_uint(&e, 1, a->key);
				if (a->is_int)
					perfport_pb_uint(&any, 3, (uint64_t)a->ival);
				else
					perfport_pb_string(&any, 1, m->strings[a->sval]);
				perfport_pb_message(&e, 2, &any);
			}
			perfport_pb_message(&dict, 6, &e);
		}
		for (size_t i = 0; i < m->nr_stacks; i++) {
			pb_attr_list(&e, 1, m->stack_locs.v + m->stacks[i].first, m->stacks[i].n);
			perfport_pb_message(&dict, 7, &e);
		}
		for (size_t i = 0; i < m->nr_strings; i++)
			perfport_pb_string(&dict, 5, m->strings[i]);
	}
	perfport_pb_message(b, 2, &dict);
	if (m->oom)
		b->oom = true;
}

/* --- OTLP/JSON: proto3's JSON mapping, lowerCamelCase keys, 64-bit
 * integers as strings, bytes in base64 --- */

static void json_base64(FILE *out, const unsigned char *d, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	fputc('"', out);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < n ? d[i + 2] : 0);

		fputc(a[v >> 18 & 63], out);
		fputc(a[v >> 12 & 63], out);
		fputc(i + 1 < n ? a[v >> 6 & 63] : '=', out);
		fputc(i + 2 < n ? a[v & 63] : '=', out);
	}
	fputc('"', out);
}

static void json_u32s(FILE *out, const char *key, const uint32_t *v, size_t n)
{
	if (!n)
		return;
	fprintf(out, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%" PRIu32, i ? "," : "", v[i]);
	fputc(']', out);
}

static void json_anyvalue(FILE *out, const char *sval, int64_t ival)
{
	if (sval) {
		fputs("{\"stringValue\":", out);
		perfport_json_string(out, sval);
		fputc('}', out);
	} else {
		fprintf(out, "{\"intValue\":\"%" PRId64 "\"}", ival);
	}
}

static void json_encode(FILE *out, struct model *m, const struct meta *mt)
{
	const struct perfport_profile *p = m->p;
	uint32_t *build_attr = calloc(p->nr_modules + 1, sizeof(uint32_t));

	if (!build_attr) {
		m->oom = true;
		return;
	}
	/* the build id attributes first: the dictionary must hold them */
	for (size_t i = 0; i < p->nr_modules; i++) {
		const struct perfport_module *mod = perfport_module_at(p, i);

		str_ix(m, mod->path);
		if (mod->build_id)
			build_attr[i] = attr_ix(m, "process.executable.build_id.gnu", mod->build_id,
						false, 0);
	}
	for (size_t i = 0; i < m->nr_prof; i++)
		if (m->prof[i].counter == PERFPORT_COUNTER_ON_CPU && mt->period)
			str_ix(m, mt->period_type);

	fputs("{\"resourceProfiles\":[{\"resource\":{\"attributes\":[", out);
	for (size_t i = 0; i < mt->nr_res; i++) {
		fprintf(out, "%s{\"key\":", i ? "," : "");
		perfport_json_string(out, mt->res[i].key);
		fputs(",\"value\":", out);
		json_anyvalue(out, mt->res[i].sval, mt->res[i].ival);
		fputc('}', out);
	}
	fputs("]},\"scopeProfiles\":[{\"scope\":{\"name\":\"perfport\",\"version\":", out);
	perfport_json_string(out, mt->version);
	fputs("},\"profiles\":[", out);
	for (size_t i = 0; i < m->nr_prof; i++) {
		const struct oprofile *op = &m->prof[i];

		fprintf(out, "%s{\"sampleType\":{\"typeStrindex\":%" PRIu32 ",\"unitStrindex\":%" PRIu32
			"},\"samples\":[", i ? "," : "", op->type, op->unit);
		for (size_t j = 0; j < op->n; j++) {
			const struct osample *s = &op->samples[j];

			fprintf(out, "%s{\"stackIndex\":%" PRIu32, j ? "," : "", s->stack);
			json_u32s(out, "attributeIndices", s->attrs, s->nr_attrs);
			fputs(",\"values\":[", out);
			for (size_t k = 0; k < s->n; k++)
				fprintf(out, "%s\"%" PRIu64 "\"", k ? "," : "", s->values[k]);
			fputc(']', out);
			if (s->times) {
				fputs(",\"timestampsUnixNano\":[", out);
				for (size_t k = 0; k < s->n; k++)
					fprintf(out, "%s\"%" PRIu64 "\"", k ? "," : "", s->times[k]);
				fputc(']', out);
			}
			fputc('}', out);
		}
		fprintf(out, "],\"timeUnixNano\":\"%" PRIu64 "\",\"durationNano\":\"%" PRIu64 "\"",
			p->start_ns, p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0);
		if (op->counter == PERFPORT_COUNTER_ON_CPU && mt->period)
			fprintf(out, ",\"periodType\":{\"typeStrindex\":%" PRIu32 ",\"unitStrindex\":%"
				PRIu32 "},\"period\":\"%" PRIu64 "\"", str_ix(m, mt->period_type),
				op->unit, mt->period);
		fputs(",\"profileId\":", out);
		json_base64(out, mt->profile_id, sizeof(mt->profile_id));
		json_u32s(out, "attributeIndices", &op->counter_attr, 1);
		fputc('}', out);
	}
	fputs("]}]}],\"dictionary\":{\"mappingTable\":[{}", out);
	for (size_t i = 0; i < p->nr_modules; i++) {
		const struct perfport_module *mod = perfport_module_at(p, i);

		fprintf(out, ",{\"memoryStart\":\"%" PRIu64 "\",\"memoryLimit\":\"%" PRIu64
			"\",\"fileOffset\":\"%" PRIu64 "\",\"filenameStrindex\":%" PRIu32,
			mod->start, mod->limit, mod->file_offset, str_ix(m, mod->path));
		json_u32s(out, "attributeIndices", &build_attr[i], build_attr[i] ? 1 : 0);
		fputc('}', out);
	}
	fputs("],\"locationTable\":[{}", out);
	for (size_t i = 1; i < m->nr_locs; i++) {
		const struct loc *l = &m->locs[i];

		fprintf(out, ",{\"mappingIndex\":%" PRIu32 ",\"address\":\"%" PRIu64
			"\",\"lines\":[{\"functionIndex\":%" PRIu32 ",\"line\":\"%" PRIu64 "\"}]",
			l->mapping, l->address, l->func, l->line);
		json_u32s(out, "attributeIndices", &l->attr, 1);
		fputc('}', out);
	}
	fputs("],\"functionTable\":[{}", out);
	for (size_t i = 1; i < m->nr_funcs; i++)
		fprintf(out, ",{\"nameStrindex\":%" PRIu32 ",\"systemNameStrindex\":%" PRIu32
			",\"filenameStrindex\":%" PRIu32 "}", m->funcs[i].name, m->funcs[i].name,
			m->funcs[i].file);
	fputs("],\"linkTable\":[{\"traceId\":\"00000000000000000000000000000000\","
	      "\"spanId\":\"0000000000000000\"}],\"attributeTable\":[{}", out);
	for (size_t i = 1; i < m->nr_attrs; i++) {
		const struct attr *a = &m->attrs[i];

		fprintf(out, ",{\"keyStrindex\":%" PRIu32 ",\"value\":", a->key);
		json_anyvalue(out, a->is_int ? NULL : m->strings[a->sval], a->ival);
		fputc('}', out);
	}
	fputs("],\"stackTable\":[{}", out);
	for (size_t i = 1; i < m->nr_stacks; i++) {
		fputs(",{", out);
		if (m->stacks[i].n) {
			fputs("\"locationIndices\":[", out);
			for (uint32_t k = 0; k < m->stacks[i].n; k++)
				fprintf(out, "%s%" PRIu32, k ? "," : "",
					m->stack_locs.v[m->stacks[i].first + k]);
			fputc(']', out);
		}
		fputc('}', out);
	}
	fputs("],\"stringTable\":[", out);
	for (size_t i = 0; i < m->nr_strings; i++) {
		if (i)
			fputc(',', out);
		perfport_json_string(out, m->strings[i]);
	}
	fputs("]}}\n", out);
	free(build_attr);
}

/* --- the plugin --- */

struct otlp {
	const struct perfport_host *host;
	char *counters;
	bool json, grpc, timestamps;
	const char *service, *endpoint, *headers, *secret_header;
};

static enum perfport_status otlp_init(const struct perfport_host *host,
				      const struct perfport_option *opts, size_t nr, void **state)
{
	struct otlp *s = calloc(1, sizeof(*s));

	if (!s)
		return PERFPORT_ERROR;
	s->host = host;
	s->timestamps = true;
	for (size_t i = 0; i < nr; i++) {
		const char *v = opts[i].value;

		if (!v)
			continue;
		if (strcmp(opts[i].name, "counter") == 0)
			s->counters = strdup(v);
		else if (strcmp(opts[i].name, "encoding") == 0)
			s->json = strcmp(v, "json") == 0;
		else if (strcmp(opts[i].name, "timestamps") == 0)
			s->timestamps = strcmp(v, "true") == 0;
		else if (strcmp(opts[i].name, "protocol") == 0)
			s->grpc = strcmp(v, "grpc") == 0;
		else if (strcmp(opts[i].name, "service") == 0)
			s->service = v;
		else if (strcmp(opts[i].name, "endpoint") == 0)
			s->endpoint = v;
		else if (strcmp(opts[i].name, "headers") == 0)
			s->headers = v;
		else if (strcmp(opts[i].name, "secret_header") == 0)
			s->secret_header = v;
	}
	if (s->grpc && s->json) {
		host->log(host, PERFPORT_LOG_ERROR, "otlp: 'encoding=json' is for OTLP/HTTP: gRPC "
			  "carries binary protobuf");
		free(s->counters);
		free(s);
		return (host->abi_version & 0xffff) >= 4 ? PERFPORT_USAGE : PERFPORT_ERROR;
	}
	*state = s;
	return PERFPORT_OK;
}

static uint64_t counter_mask(struct otlp *s, const struct perfport_profile *p)
{
	uint64_t mask = 0;
	char *save = NULL, *list = strdup(s->counters ? s->counters : "all");

	for (char *w = list ? strtok_r(list, ",", &save) : NULL; w; w = strtok_r(NULL, ",", &save)) {
		if (strcmp(w, "all") == 0)
			mask |= p->counters_present;
		for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
			if (strcmp(p->counter_names[c], w) == 0)
				mask |= 1ull << c;
	}
	free(list);
	if (!(mask & p->counters_present))
		s->host->log(s->host, PERFPORT_LOG_WARN, "otlp: none of the counters asked for has data");
	return mask;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void meta_fill(struct otlp *s, const struct perfport_profile *p, struct meta *mt)
{
	const struct perfport_thread *one = perfport_single_process(p);
	const char *service = s->service;
	size_t k = 0;

	memset(mt, 0, sizeof(*mt));
	mt->version = s->host->version;
	for (size_t i = 0; i < p->nr_labels; i++)
		if (!service && strcmp(p->labels[i].key, "service") == 0)
			service = p->labels[i].value;
	if (!service)
		service = one && one->comm ? one->comm : "perf";
	mt->res[mt->nr_res++] = (struct resource_attr){ "service.name", service, 0 };
	if (p->hostname)
		mt->res[mt->nr_res++] = (struct resource_attr){ "host.name", p->hostname, 0 };
	if (p->arch)
		mt->res[mt->nr_res++] = (struct resource_attr){ "host.arch", p->arch, 0 };
	mt->res[mt->nr_res++] = (struct resource_attr){ "os.type", "linux", 0 };
	if (p->os_release)
		mt->res[mt->nr_res++] = (struct resource_attr){ "os.version", p->os_release, 0 };
	if (one) {
		mt->res[mt->nr_res++] = (struct resource_attr){ "process.pid", NULL, one->pid };
		if (one->comm)
			mt->res[mt->nr_res++] = (struct resource_attr){ "process.executable.name",
									one->comm, 0 };
	}
	for (size_t i = 0; i < p->nr_labels && mt->nr_res < 64; i++)
		if (strcmp(p->labels[i].key, "service") != 0)
			mt->res[mt->nr_res++] = (struct resource_attr){ p->labels[i].key,
									p->labels[i].value, 0 };
	/* the profile id: the run's UUID as its 16 bytes */
	for (const char *q = p->profile_id; q && *q && k < 16; q++) {
		int hi = hexval(q[0]), lo;

		if (hi < 0)
			continue;
		lo = hexval(q[1]);
		if (lo < 0)
			break;
		mt->profile_id[k++] = (unsigned char)(hi << 4 | lo);
		q++;
	}
	/* the on-CPU sampling period, when the recording had one fixed period */
	for (size_t i = 0; i < p->nr_events; i++) {
		const struct perfport_event *e = perfport_event_at(p, i);

		if (strcmp(e->role, "on-cpu") != 0 || (!e->period && !e->frequency))
			continue;
		/* (cpu, nanoseconds) as OpenTelemetry's examples and Pyroscope's
		 * OTLP ingest read a CPU profile; a frequency as its mean period */
		mt->period = e->period ? e->period : (1000000000ull + e->frequency / 2) / e->frequency;
		mt->period_type = strcmp(e->unit, "nanoseconds") == 0 ? "cpu" : e->name;
		break;
	}
}

/* The request body: @json or binary. */
static enum perfport_status encode(struct otlp *s, const struct perfport_profile *p, bool json,
				   void **buf, size_t *len)
{
	struct model m;
	struct meta mt;
	enum perfport_status st = PERFPORT_ERROR;

	*buf = NULL;
	*len = 0;
	meta_fill(s, p, &mt);
	if (!model_build(&m, s->host, p, counter_mask(s, p), s->timestamps))
		goto out;
	if (json) {
		char *mem = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&mem, &n);

		if (!f)
			goto out;
		json_encode(f, &m, &mt);
		if (fclose(f) || m.oom) {
			free(mem);
			goto out;
		}
		*buf = mem;
		*len = n;
	} else {
		struct perfport_pb b = { 0 };

		pb_encode(&b, &m, &mt);
		if (b.oom) {
			free(b.p);
			goto out;
		}
		*buf = b.p;
		*len = b.len;
	}
	st = PERFPORT_OK;
out:
	if (st != PERFPORT_OK)
		s->host->log(s->host, PERFPORT_LOG_ERROR, "otlp: out of memory");
	model_free(&m);
	return st;
}

static enum perfport_status otlp_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct otlp *s = state;
	void *buf;
	size_t len;
	enum perfport_status st = encode(s, p, s->json, &buf, &len);

	if (st != PERFPORT_OK)
		return st;
	if (fwrite(buf, 1, len, out) != len) {
		s->host->log(s->host, PERFPORT_LOG_ERROR, "otlp: cannot write the profile");
		st = PERFPORT_ERROR;
	}
	free(buf);
	return st;
}

/* "NAME=VALUE,..." as "NAME: VALUE" header lines in @hdr (@max slots, NULL-ended). */
static bool split_headers(struct otlp *s, char *list, const char **hdr, size_t max, size_t *n)
{
	char *save = NULL;

	for (char *w = list ? strtok_r(list, ",", &save) : NULL; w; w = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(w, '='), *line;

		if (!eq || eq == w || *n + 1 >= max) {
			s->host->log(s->host, PERFPORT_LOG_ERROR,
				     "otlp: header '%s' is not NAME=VALUE (or too many headers)", w);
			return false;
		}
		*eq = 0;
		line = malloc(strlen(w) + strlen(eq + 1) + 3);
		if (!line)
			return false;
		sprintf(line, "%s: %s", w, eq + 1);
		hdr[(*n)++] = line;
	}
	hdr[*n] = NULL;
	return true;
}

static enum perfport_status otlp_upload(void *state, const struct perfport_profile *p)
{
	struct otlp *s = state;
	const struct perfport_host *h = s->host;
	const char *hdr[34] = { 0 }, *env = NULL, *eq;
	char url[2048], *list = s->headers ? strdup(s->headers) : NULL;
	size_t nh = 0, first_own;
	struct perfport_http_request rq = { .struct_size = sizeof(rq), .method = "POST", .url = url,
					    .spool_tag = "otlp" };
	struct perfport_http_response rs = { .struct_size = sizeof(rs) };
	enum perfport_status st = PERFPORT_ERROR;
	void *buf = NULL, *body = NULL;
	size_t len, elen;

	if (strncmp(s->endpoint, "http://", 7) != 0 && strncmp(s->endpoint, "https://", 8) != 0) {
		h->log(h, PERFPORT_LOG_ERROR, "otlp: endpoint '%s' is not an http:// or https:// URL",
		       s->endpoint);
		free(list);
		return (h->abi_version & 0xffff) >= 4 ? PERFPORT_USAGE : PERFPORT_ERROR;
	}
	elen = strlen(s->endpoint);
	while (elen && s->endpoint[elen - 1] == '/')
		elen--;
	if (s->grpc)
		snprintf(url, sizeof(url), "%.*s/%s.ProfilesService/Export", (int)elen, s->endpoint,
			 OTLP_PACKAGE);
	else
		snprintf(url, sizeof(url), "%.*s/v1development/profiles", (int)elen, s->endpoint);
	if (!s->grpc)
		hdr[nh++] = s->json ? "Content-Type: application/json" :
			    "Content-Type: application/x-protobuf";
	first_own = nh;
	if (!split_headers(s, list, hdr, sizeof(hdr) / sizeof(hdr[0]), &nh))
		goto out;
	eq = s->secret_header ? strchr(s->secret_header, '=') : NULL;
	if (eq && eq[1])
		env = getenv(eq + 1);
	if (env && *env) {
		if ((h->abi_version & 0xffff) < 2) {
			h->log(h, PERFPORT_LOG_ERROR, "otlp: $%s is set, but this perfport cannot send "
			       "a secret header (it needs plugin ABI 1.2)", eq + 1);
			goto out;
		}
		rq.secret_header = s->secret_header;
	}
	st = encode(s, p, s->json && !s->grpc, &buf, &len);
	if (st != PERFPORT_OK)
		goto out;
	st = PERFPORT_ERROR;
	if (s->grpc) {
		unsigned char *g = malloc(len + 5);

		if (!g)
			goto out;
		g[0] = 0;
		g[1] = (unsigned char)(len >> 24);
		g[2] = (unsigned char)(len >> 16);
		g[3] = (unsigned char)(len >> 8);
		g[4] = (unsigned char)len;
		memcpy(g + 5, buf, len);
		body = g;
		rq.body = g;
		rq.body_len = len + 5;
		rq.grpc = 1;
	} else {
		rq.body = buf;
		rq.body_len = len;
	}
	rq.headers = hdr;
	st = h->http(&rq, &rs);
	if (st == PERFPORT_OK)
		h->log(h, PERFPORT_LOG_INFO, "otlp: sent %zu bytes to %s", rq.body_len, url);
	h->free(rs.body);
out:
	for (size_t i = first_own; i < nh; i++)
		free((char *)hdr[i]);
	free(list);
	free(body);
	free(buf);
	return st;
}

static void otlp_fini(void *state)
{
	struct otlp *s = state;

	if (!s)
		return;
	free(s->counters);
	free(s);
}

/* The value of option @name in @opts (NULL: unset). */
static const char *otlp_opt(const struct perfport_option *opts, size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(opts[i].name, name))
			return opts[i].value;
	return NULL;
}

/* ABI 1.6: options that cannot go together, said before the recording is read. */
static enum perfport_status otlp_check(const struct perfport_host *h, const struct perfport_option *opts,
				       size_t nr, uint32_t mode)
{
	const char *proto = otlp_opt(opts, nr, "protocol"), *enc = otlp_opt(opts, nr, "encoding");
	const char *endpoint = otlp_opt(opts, nr, "endpoint");

	if (proto && !strcmp(proto, "grpc") && enc && !strcmp(enc, "json")) {
		h->log(h, PERFPORT_LOG_ERROR, "otlp: 'encoding=json' is for OTLP/HTTP: gRPC "
		       "carries binary protobuf");
		return PERFPORT_USAGE;
	}
	if ((mode & PERFPORT_CHECK_UPLOAD) && (!endpoint || (strncmp(endpoint, "http://", 7) &&
							    strncmp(endpoint, "https://", 8)))) {
		h->log(h, PERFPORT_LOG_ERROR, "otlp: endpoint '%s' is not an http:// or https:// URL",
		       endpoint ? endpoint : "");
		return PERFPORT_USAGE;
	}
	return PERFPORT_OK;
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "otlp",
	.description = "OpenTelemetry profiles, " OTLP_PROTO_VERSION ": protobuf or OTLP/JSON, "
		       "sent over OTLP/HTTP or gRPC",
	.default_output = "profiles.otlp.pb",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = otlp_init,
	.write = otlp_write,
	.upload = otlp_upload,
	.fini = otlp_fini,
	/* threads are sample attributes, from the samples in time */
	.flags = PERFPORT_EXPORTER_SAMPLES | PERFPORT_EXPORTER_WALL_CLOCK,
	.check = otlp_check,
};
