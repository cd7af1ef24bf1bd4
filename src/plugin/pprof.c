/* SPDX-License-Identifier: MIT */
/*
 * pprof.c - the profile as a pprof profile.proto (perftools.profiles), the
 * one encoder the pprof-based formats share (struct perfport_host.pprof).
 *
 * Messages are built with protobuf-c's code generated from Debian's copy of
 * profile.proto (golang-github-google-pprof-dev) and packed by libprotobuf-c;
 * zlib gzips the result.
 *
 * Mapping: a sample per tree node with a self value (leaf first: the node's
 * frames up to the root); a location per run of frames that are one machine
 * frame (calls inlined into a function, then that function), its lines
 * innermost first, as pprof models inlining; a function per (name, file); a
 * mapping per module with its build id, addresses and file offset. A
 * location has the address its frame was first seen at. A module some frame
 * of was not named has a mapping marked not symbolized (has_functions and
 * friends false), so pprof, given the binaries, names its locations.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../util/hash.h"
#include "../util/log.h"
#include "../util/wordmap.h"
#include "perfport/version.h"
#include "plugin.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Label PbLabel;

/* --- the encoder --- */

struct enc {
	const struct perfport_profile *p;        /* whose samples are being added */
	const struct perfport_profile *mods;     /* whose modules are the mappings */
	bool negate;                 /* the base's samples: values negated */
	PbProfile pb;
	uint64_t counters;           /* included */
	unsigned nr_values;
	/* the caller's sample types, if any (nr_values of them) */
	const struct perfport_pprof_opts *custom;

	/* strings: content hash -> index into string_table */
	struct wordmap strings;
	uint32_t next_string;
	size_t cap_strings;

	struct wordmap functions, locations;
	uint32_t next_function, next_location;
	size_t cap_functions, cap_locations, cap_samples;
	uint64_t *mapping_of;        /* per module index: mapping id */
	bool oom;
};

/* Grow *@arr (of @size-byte elements) to hold @need; false out of memory. */
static bool grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 256;
	void *n;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	n = realloc(*arr, c * size);
	if (!n)
		return false;
	*arr = n;
	*cap = c;
	return true;
}

static int64_t str_id(struct enc *e, const char *s)
{
	uint64_t small[32], *key = small;
	size_t len, n;
	uint32_t id;
	bool fresh;

	if (!s || !*s)
		return 0;
	len = strlen(s);
	n = len / 8 + 1;                /* the bytes, zero-padded: the key is the content */
	if (n > sizeof(small) / sizeof(small[0])) {
		key = calloc(n, sizeof(*key));
		if (!key) {
			e->oom = true;
			return 0;
		}
	} else {
		memset(small, 0, n * sizeof(*key));
	}
	memcpy(key, s, len);
	id = wordmap_get(&e->strings, key, n, &e->next_string, &fresh);
	if (key != small)
		free(key);
	if (!id) {
		e->oom = true;
		return 0;
	}
	if (fresh) {
		if (!grow((void **)&e->pb.string_table, &e->cap_strings, e->pb.n_string_table + 1,
			  sizeof(char *)) ||
		    !(e->pb.string_table[e->pb.n_string_table] = strdup(s))) {
			e->oom = true;
			return 0;
		}
		e->pb.n_string_table++;
	}
	return id;
}

static uint64_t function_id(struct enc *e, const struct perfport_frame *f)
{
	int64_t name = str_id(e, f->function), file = str_id(e, f->file);
	uint64_t key[2] = { (uint64_t)name, (uint64_t)file };
	uint32_t id;
	bool fresh;
	PbFunction *fn;

	id = wordmap_get(&e->functions, key, 2, &e->next_function, &fresh);
	if (!id || e->oom) {
		e->oom = true;
		return 0;
	}
	if (!fresh)
		return id;
	fn = malloc(sizeof(*fn));
	if (!fn || !grow((void **)&e->pb.function, &e->cap_functions, e->pb.n_function + 1,
			 sizeof(*e->pb.function))) {
		free(fn);
		e->oom = true;
		return 0;
	}
	perftools__profiles__function__init(fn);
	fn->id = id;
	fn->name = name;
	fn->system_name = name;
	fn->filename = file;
	e->pb.function[e->pb.n_function++] = fn;
	return id;
}

/* The index of @module in @p's modules, or nr_modules. */
static size_t module_index(const struct perfport_profile *p, const char *module)
{
	size_t i;

	for (i = 0; module && i < p->nr_modules; i++)
		if (perfport_module_at(p, i)->path == module ||
		    !strcmp(perfport_module_at(p, i)->path, module))
			break;
	return module ? i : p->nr_modules;
}

static uint64_t mapping_for(struct enc *e, const char *module)
{
	size_t i = module_index(e->mods, module);

	return i < e->mods->nr_modules ? e->mapping_of[i] : 0;
}

/*
 * Mark in @unnamed (per module of e->mods) each module some frame of @p
 * was not named in: its mapping says it has no functions, lines or inlined
 * calls, so pprof given the binaries (PPROF_BINARY_PATH), or a backend's
 * symbolizer, names its locations from their addresses and the mapping's
 * build id and file offset.
 */
static void mark_unnamed(const struct perfport_profile *p, const struct perfport_profile *mods,
			 bool *unnamed)
{
	for (size_t f = 0; f < p->nr_frames; f++) {
		const struct perfport_frame *fr = perfport_frame_at(p, f);
		size_t i;

		if (!(fr->flags & PERFPORT_FRAME_UNKNOWN) || !fr->module)
			continue;
		i = module_index(mods, fr->module);
		if (i < mods->nr_modules)
			unnamed[i] = true;
	}
}

/* The location of @group (leaf first: inlined calls, then the function
 * they are inlined into). */
static uint64_t location_id(struct enc *e, const uint32_t *group, size_t n)
{
	uint64_t key[64];
	PbLocation *loc;
	uint32_t id;
	bool fresh;

	for (size_t i = 0; i < n; i++)
		key[i] = group[i];
	/* frame indexes are the profile's own: the base's keys are marked */
	if (e->negate && n < 64)
		key[n] = UINT64_MAX;
	id = wordmap_get(&e->locations, key, e->negate && n < 64 ? n + 1 : n, &e->next_location, &fresh);
	if (!id) {
		e->oom = true;
		return 0;
	}
	if (!fresh)
		return id;
	loc = malloc(sizeof(*loc));
	if (!loc || !grow((void **)&e->pb.location, &e->cap_locations, e->pb.n_location + 1,
			  sizeof(*e->pb.location))) {
		free(loc);
		e->oom = true;
		return 0;
	}
	perftools__profiles__location__init(loc);
	loc->id = id;
	loc->mapping_id = mapping_for(e, perfport_frame_at(e->p, group[n - 1])->module);
	loc->address = perfport_frame_at(e->p, group[n - 1])->address;
	loc->n_line = n;
	loc->line = calloc(n, sizeof(*loc->line));
	e->pb.location[e->pb.n_location++] = loc;
	if (!loc->line) {
		e->oom = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct perfport_frame *f = perfport_frame_at(e->p, group[i]);
		PbLine *l = malloc(sizeof(*l));

		if (!l) {
			e->oom = true;
			return 0;
		}
		perftools__profiles__line__init(l);
		l->function_id = function_id(e, f);
		l->line = f->line;
		loc->line[i] = l;
	}
	return id;
}

/* Off-CPU counters count intervals, which get a sample type of their own. */
static bool is_interval_counter(unsigned c)
{
	return c != PERFPORT_COUNTER_ON_CPU && c != PERFPORT_COUNTER_IDLE;
}

static const struct perfport_pprof_type *custom_type(const struct perfport_pprof_opts *o, size_t i)
{
	return (const struct perfport_pprof_type *)((const char *)o->types + i * o->type_size);
}

/* A label of a sample: @key with a number, or @str when it is not NULL. */
static PbLabel *label(struct enc *e, const char *key, const char *str, int64_t num)
{
	PbLabel *l = malloc(sizeof(*l));

	if (!l) {
		e->oom = true;
		return NULL;
	}
	perftools__profiles__label__init(l);
	l->key = str_id(e, key);
	if (str)
		l->str = str_id(e, str);
	else
		l->num = num;
	return l;
}

/* "comm [id]" of a group frame: the id, and the comm's length in *@len. */
static int64_t group_id(const char *name, size_t *len)
{
	const char *br = strrchr(name, '[');

	*len = br && br > name ? (size_t)(br - name - 1) : strlen(name);
	return br ? strtoll(br + 1, NULL, 10) : 0;
}

/* The process and thread frames (--group-by) at the root of @frames as
 * sample labels pid, tid and thread (the thread's command), as
 * perf_data_converter labels samples. Return: how many frames they were. */
static size_t group_labels(struct enc *e, PbSample *s, const uint32_t *frames, size_t depth)
{
	size_t k;

	for (k = 0; k < depth; k++) {
		const struct perfport_frame *f = perfport_frame_at(e->p, frames[k]);
		char comm[256];
		size_t len;
		int64_t id;

		if (!(f->flags & (PERFPORT_FRAME_PROCESS | PERFPORT_FRAME_THREAD)))
			break;
		if (!s->label && !(s->label = calloc(4, sizeof(*s->label)))) {
			e->oom = true;
			return k;
		}
		if (s->n_label + 2 > 4)
			continue;       /* a process and a thread at most */
		id = group_id(f->function, &len);
		if (f->flags & PERFPORT_FRAME_PROCESS) {
			s->label[s->n_label++] = label(e, "pid", NULL, id);
		} else {
			snprintf(comm, sizeof(comm), "%.*s", (int)len, f->function);
			s->label[s->n_label++] = label(e, "tid", NULL, id);
			s->label[s->n_label++] = label(e, "thread", comm, 0);
		}
	}
	return k;
}

static int one_sample(void *ctx, const struct perfport_profile *p, const uint32_t *frames,
		      size_t depth, uint32_t node)
{
	struct enc *e = ctx;
	int64_t *values = calloc(e->nr_values, sizeof(*values));
	uint64_t *locs = calloc(depth + 1, sizeof(*locs));
	PbSample *s = malloc(sizeof(*s));
	size_t nl = 0, v = 1, skip;
	bool any = false;

	if (!values || !locs || !s ||
	    !grow((void **)&e->pb.sample, &e->cap_samples, e->pb.n_sample + 1,
		  sizeof(*e->pb.sample))) {
		free(values);
		free(locs);
		free(s);
		e->oom = true;
		return -1;
	}
	if (e->custom) {
		for (size_t t = 0; t < e->nr_values; t++) {
			const struct perfport_pprof_type *ty = custom_type(e->custom, t);

			for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
				if (ty->counters >> c & 1)
					values[t] += (int64_t)(ty->counts ? perfport_self_count(p, node, c)
									  : perfport_self_value(p, node, c));
			any = any || values[t];
		}
		v = e->nr_values;
	} else {
		values[0] = (int64_t)perfport_self_count(p, node, PERFPORT_COUNTER_ON_CPU);
		for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
			if (e->counters >> c & 1) {
				values[v] = (int64_t)perfport_self_value(p, node, c);
				any = any || values[v];
				v++;
			}
		for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
			if ((e->counters >> c & 1) && is_interval_counter(c))
				values[v++] = (int64_t)perfport_self_count(p, node, c);
		if (!(e->counters & 1))
			values[0] = 0; /* samples/count follows on-cpu */
		any = any || values[0];
	}
	if (!any) {
		free(values);
		free(locs);
		free(s);
		return 0;
	}
	if (e->negate)
		for (size_t t = 0; t < e->nr_values; t++)
			values[t] = -values[t];
	perftools__profiles__sample__init(s);
	skip = group_labels(e, s, frames, depth);
	/* leaf first; a run of inlined frames and the frame they are inlined
	 * into is one location */
	for (size_t i = depth; i > skip;) {
		size_t end = i, start = i - 1;
		uint32_t group[64];
		size_t n = 0;

		while (start > skip && (perfport_frame_at(p, frames[start])->flags &
				     PERFPORT_FRAME_INLINED) && end - start < 63)
			start--;
		for (size_t k = end; k > start; k--)
			group[n++] = frames[k - 1];
		locs[nl++] = location_id(e, group, n);
		i = start;
	}
	s->n_location_id = nl;
	s->location_id = locs;
	s->n_value = e->nr_values;
	s->value = values;
	e->pb.sample[e->pb.n_sample++] = s;
	return e->oom ? -1 : 0;
}

static void pb_release(PbProfile *pb)
{
	for (size_t i = 0; i < pb->n_sample_type; i++)
		free(pb->sample_type[i]);
	free(pb->sample_type);
	for (size_t i = 0; i < pb->n_sample; i++) {
		free(pb->sample[i]->location_id);
		free(pb->sample[i]->value);
		for (size_t k = 0; k < pb->sample[i]->n_label; k++)
			free(pb->sample[i]->label[k]);
		free(pb->sample[i]->label);
		free(pb->sample[i]);
	}
	free(pb->sample);
	for (size_t i = 0; i < pb->n_mapping; i++)
		free(pb->mapping[i]);
	free(pb->mapping);
	for (size_t i = 0; i < pb->n_location; i++) {
		for (size_t k = 0; pb->location[i]->line && k < pb->location[i]->n_line; k++)
			free(pb->location[i]->line[k]);
		free(pb->location[i]->line);
		free(pb->location[i]);
	}
	free(pb->location);
	for (size_t i = 0; i < pb->n_function; i++)
		free(pb->function[i]);
	free(pb->function);
	for (size_t i = 0; i < pb->n_string_table; i++)
		free(pb->string_table[i]);
	free(pb->string_table);
	free(pb->period_type);
	free(pb->comment);
}

static PbValueType *value_type(struct enc *e, const char *type, const char *unit)
{
	PbValueType *vt = malloc(sizeof(*vt));

	if (!vt) {
		e->oom = true;
		return NULL;
	}
	perftools__profiles__value_type__init(vt);
	vt->type = str_id(e, type);
	vt->unit = str_id(e, unit);
	return vt;
}

static int gzip_bytes(const uint8_t *in, size_t len, void **out, size_t *out_len)
{
	z_stream z;
	uLong cap = compressBound((uLong)len) + 64;
	uint8_t *buf = malloc(cap);

	if (!buf)
		return -1;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(buf);
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(buf);
		return -1;
	}
	*out_len = z.total_out;
	deflateEnd(&z);
	*out = buf;
	return 0;
}

enum perfport_status host_gzip(const void *data, size_t len, void **out, size_t *out_len)
{
	return gzip_bytes(data, len, out, out_len) ? PERFPORT_ERROR : PERFPORT_OK;
}

/*
 * The module pprof should take for the main binary (mapping[0]): the
 * executable of the one process recorded (a module whose file name begins
 * with its command, which the kernel cuts to 15 bytes), else the first user
 * module that is no shared object, else the first module.
 */
static size_t main_binary(const struct perfport_profile *p)
{
	const struct perfport_thread *t = perfport_single_process(p);
	size_t fallback = SIZE_MAX;

	for (size_t i = 0; i < p->nr_modules; i++) {
		const char *path = perfport_module_at(p, i)->path;
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

		if (*path == '[')
			continue;
		if (t && t->comm && *t->comm && !strncmp(base, t->comm, strlen(t->comm)))
			return i;
		if (fallback == SIZE_MAX && !strstr(base, ".so"))
			fallback = i;
	}
	return fallback == SIZE_MAX ? 0 : fallback;
}

enum perfport_status pprof_encode(const struct perfport_profile *p,
				  const struct perfport_pprof_opts *o, void **buf, size_t *len)
{
	struct enc e = { .p = p, .mods = p };
	enum perfport_status st = PERFPORT_ERROR;
	uint64_t on_cpu_period = 0;
	size_t main_module = 0;
	uint8_t *packed = NULL;
	bool *unnamed = NULL;
	size_t size;
	char name[64];

	*buf = NULL;
	*len = 0;
	perftools__profiles__profile__init(&e.pb);
	e.counters = o && PERFPORT_HAS(o, struct perfport_pprof_opts, counters) && o->counters
			     ? o->counters & p->counters_present
			     : p->counters_present;
	e.next_string = 1;
	e.next_function = 1;
	e.next_location = 1;
	/* string_table[0] is "" */
	if (!grow((void **)&e.pb.string_table, &e.cap_strings, 1, sizeof(char *)) ||
	    !(e.pb.string_table[0] = strdup("")))
		goto out;
	e.pb.n_string_table = 1;

	if (o && PERFPORT_HAS(o, struct perfport_pprof_opts, types) && o->nr_types) {
		if (!o->types || o->type_size < sizeof(struct perfport_pprof_type)) {
			pp_error("pprof: sample types given without their table");
			goto out;
		}
		e.custom = o;
		e.nr_values = o->nr_types;
		e.pb.sample_type = calloc(e.nr_values, sizeof(*e.pb.sample_type));
		if (!e.pb.sample_type)
			goto out;
		for (size_t t = 0; t < o->nr_types; t++) {
			const struct perfport_pprof_type *ty = custom_type(o, t);

			e.pb.sample_type[e.pb.n_sample_type++] =
				value_type(&e, ty->type ? ty->type : "", ty->unit ? ty->unit : "");
		}
		goto mappings;
	}
	/* sample types: samples/count, then a value per counter included */
	e.nr_values = 1;
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++)
		e.nr_values += (e.counters >> c & 1) * (1 + is_interval_counter(c));
	e.pb.sample_type = calloc(e.nr_values, sizeof(*e.pb.sample_type));
	if (!e.pb.sample_type)
		goto out;
	e.pb.sample_type[e.pb.n_sample_type++] = value_type(&e, "samples", "count");
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
		if (!(e.counters >> c & 1))
			continue;
		snprintf(name, sizeof(name), "%s", p->counter_names[c]);
		for (char *q = name; *q; q++)
			if (*q == '-')
				*q = '_';
		e.pb.sample_type[e.pb.n_sample_type++] =
			value_type(&e, name, p->counter_units[c]);
		if (c == PERFPORT_COUNTER_ON_CPU)
			e.pb.default_sample_type = e.pb.sample_type[e.pb.n_sample_type - 1]->type;
	}
	/* then how many off-CPU intervals each off-CPU counter holds */
	for (unsigned c = 0; c < p->nr_counters && c < 64; c++) {
		if (!(e.counters >> c & 1) || !is_interval_counter(c))
			continue;
		snprintf(name, sizeof(name), "%s_intervals", p->counter_names[c]);
		for (char *q = name; *q; q++)
			if (*q == '-')
				*q = '_';
		e.pb.sample_type[e.pb.n_sample_type++] = value_type(&e, name, "count");
	}

mappings:
	/* mappings: one per module */
	e.mapping_of = calloc(p->nr_modules + 1, sizeof(*e.mapping_of));
	e.pb.mapping = calloc(p->nr_modules + 1, sizeof(*e.pb.mapping));
	if (!e.mapping_of || !e.pb.mapping)
		goto out;
	unnamed = calloc(p->nr_modules + 1, sizeof(*unnamed));
	if (!unnamed)
		goto out;
	mark_unnamed(p, p, unnamed);
	if (o && o->struct_size >= offsetof(struct perfport_pprof_opts, base_negated) +
				   sizeof(o->base_negated) && o->base_negated &&
	    PERFPORT_PROFILE_HAS_BASE(p) && p->base)
		mark_unnamed(p->base, p, unnamed);
	main_module = main_binary(p);
	for (size_t k = 0; k < p->nr_modules; k++) {
		/* the main binary first: pprof takes mapping[0] for it */
		size_t i = k == 0 ? main_module : k <= main_module ? k - 1 : k;
		const struct perfport_module *m = perfport_module_at(p, i);
		PbMapping *pm = malloc(sizeof(*pm));

		if (!pm)
			goto out;
		perftools__profiles__mapping__init(pm);
		pm->id = k + 1;
		pm->filename = str_id(&e, m->path);
		pm->build_id = str_id(&e, m->build_id);
		if (p->module_size >= offsetof(struct perfport_module, file_offset) +
				      sizeof(m->file_offset)) {
			pm->memory_start = m->start;
			pm->memory_limit = m->limit;
			pm->file_offset = m->file_offset;
		}
		/* a module some frame of was not named: not symbolized, to be
		 * named later from its addresses (a module with no address
		 * known could not be: it keeps the names it has) */
		pm->has_functions = !unnamed[i] || !pm->memory_limit;
		pm->has_filenames = pm->has_functions;
		pm->has_line_numbers = pm->has_functions;
		pm->has_inline_frames = pm->has_functions;
		e.pb.mapping[e.pb.n_mapping++] = pm;
		e.mapping_of[i] = pm->id;
	}

	if (plugin_host()->stacks(p, one_sample, &e) || e.oom)
		goto out;
	if (o && o->struct_size >= offsetof(struct perfport_pprof_opts, base_negated) +
				   sizeof(o->base_negated) && o->base_negated &&
	    PERFPORT_PROFILE_HAS_BASE(p) && p->base) {
		e.p = p->base;
		e.negate = true;
		if (plugin_host()->stacks(p->base, one_sample, &e) || e.oom)
			goto out;
		e.p = p;
		e.negate = false;
	}

	/* time, period, comments */
	e.pb.time_nanos = (int64_t)p->start_ns;
	e.pb.duration_nanos = p->end_ns > p->start_ns ? (int64_t)(p->end_ns - p->start_ns) : 0;
	for (size_t i = 0; i < p->nr_events; i++) {
		const struct perfport_event *ev = perfport_event_at(p, i);

		if (strcmp(ev->role, "on-cpu") != 0)
			continue;
		on_cpu_period = ev->frequency ? 1000000000ull / ev->frequency : ev->period;
		break;
	}
	e.pb.period_type = value_type(&e, "cpu", "nanoseconds");
	e.pb.period = (int64_t)on_cpu_period;
	e.pb.comment = calloc(p->nr_labels + 2, sizeof(*e.pb.comment));
	if (!e.pb.comment)
		goto out;
	snprintf(name, sizeof(name), "perfport %s", PERFPORT_VERSION);
	e.pb.comment[e.pb.n_comment++] = str_id(&e, name);
	for (size_t i = 0; i < p->nr_labels; i++) {
		char kv[512];

		snprintf(kv, sizeof(kv), "%s=%s", p->labels[i].key, p->labels[i].value);
		e.pb.comment[e.pb.n_comment++] = str_id(&e, kv);
	}
	if (e.oom)
		goto out;

	size = perftools__profiles__profile__get_packed_size(&e.pb);
	packed = malloc(size ? size : 1);
	if (!packed)
		goto out;
	perftools__profiles__profile__pack(&e.pb, packed);
	if (o && o->gzip) {
		if (gzip_bytes(packed, size, buf, len))
			goto out;
	} else {
		*buf = packed;
		*len = size;
		packed = NULL;
	}
	st = PERFPORT_OK;
out:
	if (st != PERFPORT_OK)
		pp_error("pprof: cannot encode the profile: %s", e.oom ? "out of memory" : "failed");
	free(packed);
	pb_release(&e.pb);
	free(e.mapping_of);
	free(unnamed);
	wordmap_free(&e.strings);
	wordmap_free(&e.functions);
	wordmap_free(&e.locations);
	return st;
}
