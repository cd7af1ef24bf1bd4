/* SPDX-License-Identifier: MIT */
/*
 * firefox.c - the "firefox" exporter: the Firefox Profiler's processed
 * profile format (preprocessedProfileVersion 70), gzipped JSON that
 * profiler.firefox.com opens ("Load a profile from file").
 *
 * One thread track per thread, its samples in time: every on-CPU sample
 * at its time weighing its period, every off-CPU interval a sample at its
 * start weighing its length (weightType "tracing-ms"), so the call tree
 * sums time and the activity graph fills each interval. A sample's
 * category is its state: on-CPU stacks are User, Kernel or JIT by their
 * leaf; an off-CPU interval's stack ends in a frame naming its state
 * ("[off-CPU: lock]") of the state's category (Preempted, Lock, I/O, Sleep,
 * Timed sleep; Idle for the idle task). Each interval is also an interval
 * marker with its state and its stack, in the marker chart and table.
 * The stack, frame, func, resource and string tables are shared by all
 * threads (profile.shared), as version 60 on wants; libs carry build ids.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "perfport/json.h"
#include "perfport/map.h"
#include "perfport/plugin.h"

#define PROCESSED_VERSION 70    /* the profiler's PROCESSED_PROFILE_VERSION written */
#define GECKO_VERSION 36        /* meta.version: the Gecko format of that release */

static const struct perfport_option_def options[] = {
	{ "gzip", PERFPORT_OPT_BOOL, "true", NULL,
	  "gzip the JSON, as the profiler's files are (false: plain JSON)" },
	{ "markers", PERFPORT_OPT_BOOL, "true", NULL,
	  "an interval marker per off-CPU interval, with its state and stack" },
};

enum category {
	CAT_OTHER, CAT_USER, CAT_KERNEL, CAT_JIT, CAT_PREEMPTED, CAT_LOCK, CAT_IO, CAT_SLEEP,
	CAT_TIMED_SLEEP, CAT_IDLE, NR_CATS
};

static const struct {
	const char *name, *color;
} categories[NR_CATS] = {
	{ "Other", "grey" }, { "User", "yellow" }, { "Kernel", "orange" }, { "JIT", "purple" },
	{ "Preempted", "brown" }, { "Lock", "red" }, { "I/O", "blue" }, { "Sleep", "lightblue" },
	{ "Timed sleep", "darkgrey" }, { "Idle", "transparent" },
};

/* A state's category and the name of its frame and markers. */
static enum category state_category(const char *counter)
{
	static const struct {
		const char *counter;
		enum category cat;
	} map[] = {
		{ "preempted", CAT_PREEMPTED }, { "lock", CAT_LOCK }, { "io", CAT_IO },
		{ "sleep", CAT_SLEEP }, { "timed-sleep", CAT_TIMED_SLEEP }, { "idle", CAT_IDLE },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].counter, counter) == 0)
			return map[i].cat;
	return CAT_OTHER;
}

struct u32v {
	uint32_t *v;
	size_t n, cap;
};

static bool push(struct u32v *a, uint32_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		uint32_t *n = realloc(a->v, cap * sizeof(*n));

		if (!n)
			return false;
		a->v = n;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return true;
}

/* The shared tables, built as samples need them. */
struct ff {
	const struct perfport_profile *p;
	bool oom;
	struct perfport_map strings;
	const char **string_v;
	size_t nr_strings, cap_strings;
	/* stackTable */
	struct u32v stack_frame, stack_prefix;  /* prefix: stack index, UINT32_MAX root */
	uint32_t *node_stack;           /* per node: stack + 1; 0 not yet */
	uint32_t *chain;                /* stack_of()'s path: as long as the deepest node */
	uint32_t *state_stack;          /* per node and counter: stack + 1 */
	/* frameTable: one per perfport frame, then one per state frame */
	struct u32v fr_func, fr_cat, fr_lib, fr_line, fr_inline;
	struct u32v fr_addr_hi, fr_addr_lo;
	uint32_t *frame_ft;             /* per perfport frame: frameTable index + 1 */
	uint32_t state_ft[64];          /* per counter: frameTable index + 1 */
	/* funcTable, resourceTable, sources */
	struct perfport_map funcs;
	struct u32v fn_name, fn_resource, fn_source;
	struct u32v res_name;
	uint32_t *module_res;           /* per module: resource + 1 */
	struct perfport_map sources;
	struct u32v src_file;
};

static uint32_t str(struct ff *f, const char *s)
{
	const char *copy;
	uint32_t v;
	bool added;

	if (f->oom || !perfport_map_get(&f->strings, s, strlen(s), (uint32_t)f->nr_strings, &v,
					&added, &copy)) {
		f->oom = true;
		return 0;
	}
	if (added) {
		if (f->nr_strings == f->cap_strings) {
			size_t cap = f->cap_strings ? f->cap_strings * 2 : 1024;
			const char **n = realloc(f->string_v, cap * sizeof(*n));

			if (!n) {
				f->oom = true;
				return 0;
			}
			f->string_v = n;
			f->cap_strings = cap;
		}
		f->string_v[f->nr_strings++] = copy;
	}
	return v;
}

static uint32_t module_of(const struct perfport_profile *p, const char *path)
{
	if (!path)
		return UINT32_MAX;
	for (size_t i = 0; i < p->nr_modules; i++)
		if (strcmp(perfport_module_at(p, i)->path, path) == 0)
			return (uint32_t)i;
	return UINT32_MAX;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* A resource per module: the library's name (resourceTable type 1, Library). */
static uint32_t resource_of(struct ff *f, uint32_t mod)
{
	if (mod == UINT32_MAX)
		return UINT32_MAX;
	if (!f->module_res[mod]) {
		if (!push(&f->res_name, str(f, base_name(perfport_module_at(f->p, mod)->path))))
			f->oom = true;
		f->module_res[mod] = (uint32_t)f->res_name.n;
	}
	return f->module_res[mod] - 1;
}

static uint32_t source_of(struct ff *f, const char *file)
{
	uint32_t v;
	bool added;

	if (!file || !*file)
		return UINT32_MAX;
	if (!perfport_map_get(&f->sources, file, strlen(file), (uint32_t)f->src_file.n, &v, &added,
			      NULL) || (added && !push(&f->src_file, str(f, file)))) {
		f->oom = true;
		return UINT32_MAX;
	}
	return v;
}

static uint32_t func_of(struct ff *f, const char *name, uint32_t resource, uint32_t source)
{
	uint32_t key[3] = { str(f, name), resource, source }, v;
	bool added;

	if (f->oom || !perfport_map_get(&f->funcs, key, sizeof(key), (uint32_t)f->fn_name.n, &v,
					&added, NULL)) {
		f->oom = true;
		return 0;
	}
	if (added && (!push(&f->fn_name, key[0]) || !push(&f->fn_resource, resource) ||
		      !push(&f->fn_source, source)))
		f->oom = true;
	return v;
}

static uint32_t add_frame(struct ff *f, uint32_t func, enum category cat, uint32_t lib,
			  uint32_t line, bool inlined, uint64_t addr)
{
	if (!push(&f->fr_func, func) || !push(&f->fr_cat, cat) || !push(&f->fr_lib, lib) ||
	    !push(&f->fr_line, line) || !push(&f->fr_inline, inlined) ||
	    !push(&f->fr_addr_hi, (uint32_t)(addr >> 32)) || !push(&f->fr_addr_lo, (uint32_t)addr))
		f->oom = true;
	return (uint32_t)f->fr_func.n - 1;
}

/* The frameTable entry of perfport frame @i. */
static uint32_t frame_of(struct ff *f, uint32_t i)
{
	const struct perfport_profile *p = f->p;
	const struct perfport_frame *fr = perfport_frame_at(p, i);
	uint32_t mod, lib;
	enum category cat;
	uint64_t addr = UINT64_MAX;

	if (f->frame_ft[i])
		return f->frame_ft[i] - 1;
	mod = module_of(p, fr->module);
	lib = mod;
	cat = fr->flags & PERFPORT_FRAME_KERNEL ? CAT_KERNEL : fr->flags & PERFPORT_FRAME_JIT ?
	      CAT_JIT : CAT_USER;
	/* a library-relative address: the file offset, for frames in a module
	 * with an address range (ABI 1.3) */
	if (mod != UINT32_MAX && p->frame_size >= offsetof(struct perfport_frame, address) +
	    sizeof(fr->address) && p->module_size >= offsetof(struct perfport_module, file_offset) +
	    sizeof(uint64_t) && fr->address)
		addr = fr->address;
	f->frame_ft[i] = add_frame(f, func_of(f, fr->function, resource_of(f, mod),
					      source_of(f, fr->file)),
				   cat, lib, fr->line, fr->flags & PERFPORT_FRAME_INLINED, addr) + 1;
	return f->frame_ft[i] - 1;
}

static uint32_t new_stack(struct ff *f, uint32_t frame, uint32_t prefix)
{
	if (!push(&f->stack_frame, frame) || !push(&f->stack_prefix, prefix))
		f->oom = true;
	return (uint32_t)f->stack_frame.n - 1;
}

/* The stack of @node (UINT32_MAX: the root, no stack); perfport's process
 * and thread frames are not frames here (threads are tracks). */
static uint32_t stack_of(struct ff *f, uint32_t node)
{
	const struct perfport_profile *p = f->p;
	uint32_t *chain = f->chain, n = 0, prefix = UINT32_MAX;

	/* walk up to the nearest node with a stack, then create downwards
	 * (f->chain holds the deepest node's path) */
	for (uint32_t x = node; x && x != UINT32_MAX; x = perfport_node_at(p, x)->parent) {
		if (f->node_stack[x]) {
			prefix = f->node_stack[x] - 1;
			break;
		}
		chain[n++] = x;
	}
	while (n--) {
		uint32_t x = chain[n], fr = perfport_node_at(p, x)->frame;

		if (fr != UINT32_MAX && !(perfport_frame_at(p, fr)->flags &
					  (PERFPORT_FRAME_PROCESS | PERFPORT_FRAME_THREAD)))
			prefix = new_stack(f, frame_of(f, fr), prefix);
		f->node_stack[x] = prefix + 1;  /* UINT32_MAX + 1 = 0: the root, asked again */
	}
	return node && node != UINT32_MAX ? f->node_stack[node] - 1 : UINT32_MAX;
}

/* The stack of an off-CPU interval of @counter at @node: the node's stack
 * and a frame naming the state. */
static uint32_t state_stack(struct ff *f, uint32_t node, unsigned counter)
{
	const struct perfport_profile *p = f->p;
	size_t k = (size_t)node * p->nr_counters + counter;
	uint32_t below;

	if (f->state_stack[k])
		return f->state_stack[k] - 1;
	below = stack_of(f, node);
	if (!f->state_ft[counter]) {
		char name[96];

		if (strcmp(p->counter_names[counter], "idle") == 0)
			snprintf(name, sizeof(name), "[idle]");
		else
			snprintf(name, sizeof(name), "[off-CPU: %s]", p->counter_names[counter]);
		f->state_ft[counter] = add_frame(f, func_of(f, name, UINT32_MAX, UINT32_MAX),
						 state_category(p->counter_names[counter]),
						 UINT32_MAX, 0, false, UINT64_MAX) + 1;
	}
	f->state_stack[k] = new_stack(f, f->state_ft[counter] - 1, below) + 1;
	return f->state_stack[k] - 1;
}

/* --- JSON --- */

static void json_u32_array(FILE *out, const char *key, const struct u32v *a, bool null_max)
{
	fprintf(out, "\"%s\":[", key);
	for (size_t i = 0; i < a->n; i++) {
		if (i)
			fputc(',', out);
		if (a->v[i] == UINT32_MAX)
			fputs(null_max ? "null" : "-1", out);
		else
			fprintf(out, "%" PRIu32, a->v[i]);
	}
	fputc(']', out);
}

static void json_repeat(FILE *out, const char *key, const char *value, size_t n)
{
	fprintf(out, "\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? "," : "", value);
	fputc(']', out);
}

/* milliseconds, as the profiler's times are: enough digits for 1 ns */
static void json_ms(FILE *out, int64_t ns)
{
	fprintf(out, "%s%" PRId64 ".%06" PRId64, ns < 0 ? "-" : "", (ns < 0 ? -ns : ns) / 1000000,
		(ns < 0 ? -ns : ns) % 1000000);
}

/* breakpad's id of an ELF build id: its first 16 bytes as a GUID (the
 * first three fields byte-swapped), uppercase, then age 0 */
static void breakpad_id(const char *build_id, char out[34])
{
	unsigned char b[16] = { 0 };
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	size_t n = strlen(build_id) / 2;

	for (size_t i = 0; i < 16 && i < n; i++) {
		unsigned v;

		if (sscanf(build_id + 2 * i, "%2x", &v) != 1)
			break;
		b[i] = (unsigned char)v;
	}
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02X", b[order[i]]);
	out[32] = '0';
	out[33] = 0;
}

struct track {
	uint32_t tid;
	const struct perfport_thread *t;
	struct u32v samples;            /* indexes into p->samples */
};

static void write_meta(FILE *out, struct ff *f, uint64_t interval_ns)
{
	const struct perfport_profile *p = f->p;
	const char *extra[][2] = {
		{ "Host", p->hostname }, { "Kernel", p->os_release }, { "Architecture", p->arch },
		{ "perf", p->perf_version }, { "Command", p->cmdline },
		{ "Wall-clock times", p->time_source },
	};
	bool first = true;

	fputs("{\"meta\":{\"interval\":", out);
	json_ms(out, (int64_t)interval_ns);
	fputs(",\"startTime\":", out);
	json_ms(out, (int64_t)p->start_ns);
	/* the end: one interval past the last event, so that a sample at the
	 * very end still lies inside the range the profiler shows */
	fputs(",\"profilingStartTime\":0,\"profilingEndTime\":", out);
	json_ms(out, (int64_t)(p->end_ns - p->start_ns + interval_ns));
	fprintf(out, ",\"abi\":\"\",\"misc\":\"\",\"oscpu\":");
	{
		char oscpu[128];

		snprintf(oscpu, sizeof(oscpu), "Linux %s", p->arch ? p->arch : "");
		perfport_json_string(out, oscpu);
	}
	fprintf(out, ",\"platform\":\"Linux\",\"toolkit\":\"\",\"processType\":0,\"product\":");
	{
		char product[300];

		snprintf(product, sizeof(product), "perf on %s", p->hostname ? p->hostname : "a host");
		perfport_json_string(out, product);
	}
	fprintf(out, ",\"stackwalk\":1,\"debug\":false,\"version\":%d,\"preprocessedProfileVersion\""
		":%d,\"symbolicated\":true,\"importedFrom\":\"perfport\",\"physicalCPUs\":%" PRIu32
		",\"logicalCPUs\":%" PRIu32 ",\"CPUName\":\"\",\"appBuildID\":\"\",\"sourceURL\":\"\","
		"\"usesOnlyOneStackType\":true,\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\","
		"\"threadCPUDelta\":\"ns\"},\"keepProfileThreadOrder\":true,\"categories\":[",
		GECKO_VERSION, PROCESSED_VERSION, p->nr_cpus, p->nr_cpus);
	for (int c = 0; c < NR_CATS; c++)
		fprintf(out, "%s{\"name\":\"%s\",\"color\":\"%s\",\"subcategories\":[\"Other\"]}",
			c ? "," : "", categories[c].name, categories[c].color);
	fputs("],\"markerSchema\":[{\"name\":\"OffCPU\",\"tooltipLabel\":\"{marker.name}\","
	      "\"tableLabel\":\"{marker.data.state}\",\"chartLabel\":\"{marker.data.state}\","
	      "\"display\":[\"marker-chart\",\"marker-table\"],\"description\":\"An off-CPU interval "
	      "of the thread: from its switch-out to its switch-in, with the stack it left the CPU "
	      "with\",\"fields\":[{\"key\":\"state\",\"label\":\"State\",\"format\":\"string\"}]}],"
	      "\"extra\":[{\"label\":\"Recording\",\"entries\":[", out);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		if (!extra[i][1])
			continue;
		fprintf(out, "%s{\"label\":\"%s\",\"format\":\"string\",\"value\":", first ? "" : ",",
			extra[i][0]);
		perfport_json_string(out, extra[i][1]);
		fputc('}', out);
		first = false;
	}
	fputs("]}]}", out);
}

static void write_libs(FILE *out, const struct perfport_profile *p)
{
	fputs(",\"libs\":[", out);
	for (size_t i = 0; i < p->nr_modules; i++) {
		const struct perfport_module *m = perfport_module_at(p, i);
		char bp[34] = "";

		if (m->build_id)
			breakpad_id(m->build_id, bp);
		fprintf(out, "%s{\"arch\":", i ? "," : "");
		perfport_json_string(out, p->arch ? p->arch : "");
		fputs(",\"name\":", out);
		perfport_json_string(out, base_name(m->path));
		fputs(",\"path\":", out);
		perfport_json_string(out, m->path);
		fputs(",\"debugName\":", out);
		perfport_json_string(out, base_name(m->path));
		fputs(",\"debugPath\":", out);
		perfport_json_string(out, m->path);
		fputs(",\"breakpadId\":", out);
		perfport_json_string(out, bp);
		fputs(",\"codeId\":", out);
		perfport_json_string(out, m->build_id);
		fputc('}', out);
	}
	fputc(']', out);
}

static void write_shared(FILE *out, struct ff *f)
{
	size_t nf = f->fr_func.n;

	fputs(",\"shared\":{\"stackTable\":{\"frame\":[", out);
	for (size_t i = 0; i < f->stack_frame.n; i++)
		fprintf(out, "%s%" PRIu32, i ? "," : "", f->stack_frame.v[i]);
	fputs("],\"prefixOffset\":[", out);
	for (size_t i = 0; i < f->stack_prefix.n; i++)
		fprintf(out, "%s%zu", i ? "," : "",
			f->stack_prefix.v[i] == UINT32_MAX ? 0 : i - f->stack_prefix.v[i]);
	fprintf(out, "],\"length\":%zu},\"frameTable\":{\"address\":[", f->stack_frame.n);
	for (size_t i = 0; i < nf; i++) {
		uint64_t a = (uint64_t)f->fr_addr_hi.v[i] << 32 | f->fr_addr_lo.v[i];

		if (a == UINT64_MAX)
			fprintf(out, "%s-1", i ? "," : "");
		else
			fprintf(out, "%s%" PRIu64, i ? "," : "", a);
	}
	fputs("],", out);
	json_u32_array(out, "lib", &f->fr_lib, false);
	fputc(',', out);
	json_u32_array(out, "inlineDepth", &f->fr_inline, false);
	fputc(',', out);
	json_u32_array(out, "category", &f->fr_cat, true);
	fputc(',', out);
	json_repeat(out, "subcategory", "0", nf);
	fputc(',', out);
	json_u32_array(out, "func", &f->fr_func, false);
	fputc(',', out);
	json_repeat(out, "nativeSymbol", "null", nf);
	fputc(',', out);
	json_repeat(out, "innerWindowID", "null", nf);
	fputs(",\"line\":[", out);
	for (size_t i = 0; i < nf; i++) {
		if (i)
			fputc(',', out);
		if (f->fr_line.v[i])
			fprintf(out, "%" PRIu32, f->fr_line.v[i]);
		else
			fputs("null", out);
	}
	fputs("],", out);
	json_repeat(out, "column", "null", nf);
	fputc(',', out);
	json_repeat(out, "originalLocation", "null", nf);
	fprintf(out, ",\"length\":%zu},\"funcTable\":{", nf);
	json_u32_array(out, "name", &f->fn_name, false);
	fputc(',', out);
	json_repeat(out, "isJS", "false", f->fn_name.n);
	fputc(',', out);
	json_repeat(out, "relevantForJS", "false", f->fn_name.n);
	fputc(',', out);
	json_u32_array(out, "resource", &f->fn_resource, false);
	fputc(',', out);
	json_u32_array(out, "source", &f->fn_source, true);
	fputc(',', out);
	json_repeat(out, "lineNumber", "null", f->fn_name.n);
	fputc(',', out);
	json_repeat(out, "columnNumber", "null", f->fn_name.n);
	fputc(',', out);
	json_repeat(out, "originalLocation", "null", f->fn_name.n);
	fprintf(out, ",\"length\":%zu},\"resourceTable\":{\"length\":%zu,", f->fn_name.n,
		f->res_name.n);
	json_u32_array(out, "name", &f->res_name, false);
	fputc(',', out);
	json_repeat(out, "host", "null", f->res_name.n);
	fputc(',', out);
	json_repeat(out, "type", "1", f->res_name.n);
	fputs("},\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],\"functionSize\":[],"
	      "\"length\":0},\"sources\":{", out);
	fprintf(out, "\"length\":%zu,", f->src_file.n);
	json_repeat(out, "id", "null", f->src_file.n);
	fputc(',', out);
	json_u32_array(out, "filename", &f->src_file, false);
	fputc(',', out);
	json_repeat(out, "startLine", "1", f->src_file.n);
	fputc(',', out);
	json_repeat(out, "startColumn", "1", f->src_file.n);
	fputc(',', out);
	json_repeat(out, "sourceMapURL", "null", f->src_file.n);
	fputc(',', out);
	json_repeat(out, "content", "null", f->src_file.n);
	fputs("},\"sourceLocationTable\":{\"source\":[],\"line\":[],\"column\":[],\"length\":0},"
	      "\"stringArray\":[", out);
	for (size_t i = 0; i < f->nr_strings; i++) {
		if (i)
			fputc(',', out);
		perfport_json_string(out, f->string_v[i]);
	}
	fputs("]}", out);
}

enum { MARKER_DATA, MARKER_NAME, MARKER_START, MARKER_END, MARKER_CATEGORY, NR_MARKER_COLS };

static const char *const marker_cols[NR_MARKER_COLS] = {
	"data", "name", "startTime", "endTime", "category",
};

/* Column @col of the interval marker of off-CPU interval @s. */
static void marker_cell(FILE *out, struct ff *f, const struct perfport_sample *s, int col,
			int64_t start)
{
	const struct perfport_profile *p = f->p;
	const char *state = p->counter_names[s->counter];
	char name[64];

	switch (col) {
	case MARKER_DATA:
		fputs("{\"type\":\"OffCPU\",\"state\":", out);
		perfport_json_string(out, state);
		fputs(",\"cause\":{\"time\":", out);
		json_ms(out, (int64_t)s->time_ns - start);
		fprintf(out, ",\"stack\":%" PRIu32 "}}", state_stack(f, s->node, s->counter));
		break;
	case MARKER_NAME:
		snprintf(name, sizeof(name), "Off-CPU: %s", state);
		fprintf(out, "%" PRIu32, str(f, name));
		break;
	case MARKER_START:
		json_ms(out, (int64_t)s->time_ns - start);
		break;
	case MARKER_END:
		json_ms(out, (int64_t)(s->time_ns + s->value) - start);
		break;
	default:
		fprintf(out, "%d", state_category(state));
		break;
	}
}

/* A thread's samples and markers; the stacks they need are added to @f. */
static void write_thread(FILE *out, struct ff *f, const struct track *tr, const char *pname,
			 bool markers, bool first, uint64_t interval_ns)
{
	const struct perfport_profile *p = f->p;
	const struct perfport_thread *t = tr->t;
	int64_t start = (int64_t)p->start_ns;
	size_t nm = 0;
	char comm[64];
	int on = -1;

	for (unsigned c = 0; c < p->nr_counters; c++)
		if (strcmp(p->counter_names[c], "on-cpu") == 0)
			on = (int)c;
	snprintf(comm, sizeof(comm), "%s", t && t->comm ? t->comm : "[unknown]");
	fprintf(out, "%s{\"processType\":\"default\",\"processStartupTime\":", first ? "" : ",");
	json_ms(out, t && t->start_ns > p->start_ns ? (int64_t)t->start_ns - start : 0);
	fputs(",\"processShutdownTime\":null,\"registerTime\":", out);
	json_ms(out, t && t->start_ns > p->start_ns ? (int64_t)t->start_ns - start : 0);
	fputs(",\"unregisterTime\":", out);
	if (t && t->end_ns && t->end_ns < p->end_ns)
		json_ms(out, (int64_t)t->end_ns - start);
	else
		fputs("null", out);
	fputs(",\"pausedRanges\":[],\"name\":", out);
	perfport_json_string(out, comm);
	fprintf(out, ",\"isMainThread\":%s,\"processName\":",
		t && t->pid == t->tid ? "true" : "false");
	perfport_json_string(out, pname ? pname : comm);
	fprintf(out, ",\"pid\":\"%" PRIu32 "\",\"tid\":%" PRIu32, t ? t->pid : 0, tr->tid);

	fputs(",\"samples\":{\"stack\":[", out);
	for (size_t i = 0; i < tr->samples.n; i++) {
		const struct perfport_sample *s = perfport_sample_at(p, tr->samples.v[i]);
		uint32_t st = (int)s->counter == on ? stack_of(f, s->node) :
			      state_stack(f, s->node, s->counter);

		if (i)
			fputc(',', out);
		if (st == UINT32_MAX)
			fputs("null", out);
		else
			fprintf(out, "%" PRIu32, st);
	}
	fputs("],\"time\":[", out);
	for (size_t i = 0; i < tr->samples.n; i++) {
		if (i)
			fputc(',', out);
		json_ms(out, (int64_t)perfport_sample_at(p, tr->samples.v[i])->time_ns - start);
	}
	fputs("],\"weight\":[", out);
	for (size_t i = 0; i < tr->samples.n; i++) {
		const struct perfport_sample *s = perfport_sample_at(p, tr->samples.v[i]);
		bool ns = strcmp(p->counter_units[s->counter], "nanoseconds") == 0;

		if (i)
			fputc(',', out);
		/* a non-time event weighs the sampling interval */
		json_ms(out, (int64_t)(ns ? s->value : interval_ns));
	}
	/* the CPU time of each sample, for the CPU graph: an on-CPU sample's
	 * period, nothing for an off-CPU interval */
	fputs("],\"threadCPUDelta\":[", out);
	for (size_t i = 0; i < tr->samples.n; i++) {
		const struct perfport_sample *s = perfport_sample_at(p, tr->samples.v[i]);
		bool ns = strcmp(p->counter_units[s->counter], "nanoseconds") == 0;

		fprintf(out, "%s%" PRIu64, i ? "," : "",
			(int)s->counter == on ? (ns ? s->value : interval_ns) : 0);
	}
	fprintf(out, "],\"weightType\":\"tracing-ms\",\"length\":%zu}", tr->samples.n);

	/* the markers, a column at a time: one per off-CPU interval */
	fputs(",\"markers\":{", out);
	for (int col = 0; col < NR_MARKER_COLS; col++) {
		nm = 0;
		fprintf(out, "%s\"%s\":[", col ? "," : "", marker_cols[col]);
		for (size_t i = 0; markers && i < tr->samples.n; i++) {
			const struct perfport_sample *s = perfport_sample_at(p, tr->samples.v[i]);

			if ((int)s->counter == on || strcmp(p->counter_names[s->counter], "idle") == 0)
				continue;
			if (nm++)
				fputc(',', out);
			marker_cell(out, f, s, col, start);
		}
		fputc(']', out);
	}
	fputc(',', out);
	json_repeat(out, "phase", "1", nm); /* INTERVAL */
	fprintf(out, ",\"length\":%zu}}", nm);
}

struct firefox {
	const struct perfport_host *host;
	bool gzip, markers;
};

static enum perfport_status ff_init(const struct perfport_host *host,
				    const struct perfport_option *opts, size_t nr, void **state)
{
	struct firefox *s = calloc(1, sizeof(*s));

	if (!s)
		return PERFPORT_ERROR;
	s->host = host;
	s->gzip = s->markers = true;
	for (size_t i = 0; i < nr; i++) {
		if (!opts[i].value)
			continue;
		if (strcmp(opts[i].name, "gzip") == 0)
			s->gzip = strcmp(opts[i].value, "true") == 0;
		else if (strcmp(opts[i].name, "markers") == 0)
			s->markers = strcmp(opts[i].value, "true") == 0;
	}
	*state = s;
	return PERFPORT_OK;
}

/* The thread @tid of @p through @threads (tid -> index), or NULL. */
static const struct perfport_thread *thread_of(const struct perfport_map *threads,
					       const struct perfport_profile *p, uint32_t tid)
{
	uint32_t i;

	return perfport_map_find(threads, &tid, sizeof(tid), &i) ? perfport_thread_at(p, i) : NULL;
}

static int track_cmp(const void *a, const void *b)
{
	const struct track *x = a, *y = b;
	uint32_t px = x->t ? x->t->pid : 0, py = y->t ? y->t->pid : 0;

	if (px != py)
		return px < py ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void ff_free(struct ff *f)
{
	struct u32v *vs[] = { &f->stack_frame, &f->stack_prefix, &f->fr_func,
			      &f->fr_cat, &f->fr_lib, &f->fr_line, &f->fr_inline, &f->fr_addr_hi,
			      &f->fr_addr_lo, &f->fn_name, &f->fn_resource, &f->fn_source,
			      &f->res_name, &f->src_file };

	perfport_map_free(&f->strings);
	perfport_map_free(&f->funcs);
	perfport_map_free(&f->sources);
	free(f->string_v);
	free(f->node_stack);
	free(f->chain);
	free(f->state_stack);
	free(f->frame_ft);
	free(f->module_res);
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
		free(vs[i]->v);
}

/* The profile as JSON into @out. The threads are written to a buffer
 * first: the shared tables they fill come before them in the file. */
static enum perfport_status build(struct firefox *s, const struct perfport_profile *p, FILE *out)
{
	struct ff f = { .p = p };
	struct perfport_map by_tid = { 0 }, threads = { 0 }; /* tid -> track, -> p->threads */
	struct track *tracks = NULL;
	size_t nt = 0, cap = 0;
	uint64_t interval_ns = 1000000;
	char *tbuf = NULL;
	size_t tlen = 0;
	FILE *tf = NULL;
	enum perfport_status st = PERFPORT_ERROR;

	f.node_stack = calloc(p->nr_nodes + 1, sizeof(uint32_t));
	f.state_stack = calloc((p->nr_nodes + 1) * (p->nr_counters ? p->nr_counters : 1),
			       sizeof(uint32_t));
	f.frame_ft = calloc(p->nr_frames + 1, sizeof(uint32_t));
	f.module_res = calloc(p->nr_modules + 1, sizeof(uint32_t));
	{
		uint32_t depth = 0;

		for (size_t i = 0; i < p->nr_nodes; i++)
			if (perfport_node_at(p, i)->depth > depth)
				depth = perfport_node_at(p, i)->depth;
		f.chain = malloc(((size_t)depth + 1) * sizeof(uint32_t));
	}
	if (!f.node_stack || !f.state_stack || !f.frame_ft || !f.module_res || !f.chain)
		goto oom;
	str(&f, "");
	for (size_t i = 0; i < p->nr_events; i++) {
		const struct perfport_event *e = perfport_event_at(p, i);

		if (strcmp(e->role, "on-cpu") == 0 && (e->frequency || e->period)) {
			interval_ns = e->frequency ? 1000000000ull / e->frequency :
				      strcmp(e->unit, "nanoseconds") == 0 ? e->period : interval_ns;
			break;
		}
	}
	for (size_t i = 0; i < p->nr_threads; i++) {
		uint32_t tid = perfport_thread_at(p, i)->tid, k;
		bool added;

		if (!perfport_map_get(&threads, &tid, sizeof(tid), (uint32_t)i, &k, &added, NULL))
			goto oom;
	}
	/* the tracks: every thread with samples, in pid, tid order */
	for (size_t i = 0; i < p->nr_samples; i++) {
		uint32_t tid = perfport_sample_at(p, i)->tid, k;
		bool added;

		if (!perfport_map_get(&by_tid, &tid, sizeof(tid), (uint32_t)nt, &k, &added, NULL))
			goto oom;
		if (added) {
			if (nt == cap) {
				struct track *n = realloc(tracks, (cap = cap ? cap * 2 : 64) * sizeof(*n));

				if (!n)
					goto oom;
				tracks = n;
			}
			memset(&tracks[nt], 0, sizeof(tracks[nt]));
			tracks[nt].tid = tid;
			tracks[nt].t = thread_of(&threads, p, tid);
			nt++;
		}
		if (!push(&tracks[k].samples, (uint32_t)i))
			goto oom;
	}
	if (nt > 1)
		qsort(tracks, nt, sizeof(*tracks), track_cmp);
	tf = open_memstream(&tbuf, &tlen);
	if (!tf)
		goto oom;
	for (size_t i = 0; i < nt; i++) {
		const struct perfport_thread *main = tracks[i].t ?
			thread_of(&threads, p, tracks[i].t->pid) : NULL;
		const char *pname = main ? main->comm : NULL;

		write_thread(tf, &f, &tracks[i], pname, s->markers, i == 0, interval_ns);
	}
	if (fclose(tf)) {
		tf = NULL;
		goto oom;
	}
	tf = NULL;
	if (f.oom)
		goto oom;
	write_meta(out, &f, interval_ns);
	write_libs(out, p);
	fputs(",\"pages\":[]", out);
	write_shared(out, &f);
	fputs(",\"threads\":[", out);
	fwrite(tbuf, 1, tlen, out);
	fputs("]}\n", out);
	st = f.oom ? PERFPORT_ERROR : PERFPORT_OK;
	if (st != PERFPORT_OK)
		goto oom;
	goto out;
oom:
	s->host->log(s->host, PERFPORT_LOG_ERROR, "firefox: out of memory");
	st = PERFPORT_ERROR;
out:
	if (tf)
		fclose(tf);
	free(tbuf);
	for (size_t i = 0; i < nt; i++)
		free(tracks[i].samples.v);
	free(tracks);
	perfport_map_free(&by_tid);
	perfport_map_free(&threads);
	ff_free(&f);
	return st;
}

static enum perfport_status ff_write(void *state, const struct perfport_profile *p, FILE *out)
{
	struct firefox *s = state;
	const struct perfport_host *h = s->host;
	enum perfport_status st;
	char *json = NULL;
	size_t len = 0;
	void *gz;
	size_t gz_len;
	FILE *mem;

	if (!PERFPORT_PROFILE_HAS_SAMPLES(p) || (!p->nr_samples && p->nr_nodes > 1)) {
		h->log(h, PERFPORT_LOG_ERROR, "firefox: this perfport does not hand over samples in "
		       "time (plugin ABI 1.5 needed)");
		return PERFPORT_ERROR;
	}
	if (!s->gzip)
		return build(s, p, out);
	mem = open_memstream(&json, &len);
	if (!mem)
		return PERFPORT_ERROR;
	st = build(s, p, mem);
	if (fclose(mem) && st == PERFPORT_OK)
		st = PERFPORT_ERROR;
	if (st == PERFPORT_OK)
		st = h->gzip(json, len, &gz, &gz_len);
	free(json);
	if (st != PERFPORT_OK)
		return st;
	if (fwrite(gz, 1, gz_len, out) != gz_len) {
		h->log(h, PERFPORT_LOG_ERROR, "firefox: cannot write the profile");
		st = PERFPORT_ERROR;
	}
	h->free(gz);
	return st;
}

static void ff_fini(void *state)
{
	free(state);
}

__attribute__((visibility("default")))
const struct perfport_exporter perfport_exporter = {
	.abi_version = PERFPORT_ABI_VERSION,
	.struct_size = sizeof(struct perfport_exporter),
	.name = "firefox",
	.description = "Firefox Profiler processed profile (version 70), gzipped JSON: a track per "
		       "thread, states as categories and markers",
	.default_output = "profile.json.gz",
	.options = options,
	.nr_options = sizeof(options) / sizeof(options[0]),
	.init = ff_init,
	.write = ff_write,
	.upload = NULL,
	.fini = ff_fini,
	.flags = PERFPORT_EXPORTER_SAMPLES,
};
