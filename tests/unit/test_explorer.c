/* SPDX-License-Identifier: MIT */
/*
 * test_explorer.c - the explorer page's data, from a hand-made profile:
 * the samples packed thread by thread (the threads' counts in front, those
 * of an unknown thread last), time and node as deltas that start again at
 * each thread, an interval begun before the recording starting at its
 * start; a title that would close the page's script tag is escaped. The
 * plugin's source is compiled in (its functions are static); the test
 * host's gzip() copies, so the columns are read as they were packed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../plugins/explorer/explorer.c"

static const char *const names[] = { "on-cpu", "lock" };
static const char *const units[] = { "nanoseconds", "nanoseconds" };

static void host_log(const struct perfport_host *h, enum perfport_log_level l, const char *fmt, ...)
{
	(void)h, (void)l, (void)fmt;
}

static void host_free(void *p)
{
	free(p);
}

/* not gzip: a copy, so that the test reads the columns */
static enum perfport_status host_copy(const void *data, size_t len, void **out, size_t *out_len)
{
	*out = malloc(len + 1);
	if (!*out)
		return PERFPORT_ERROR;
	memcpy(*out, data, len);
	*out_len = len;
	return PERFPORT_OK;
}

static const struct perfport_host host = {
	.struct_size = sizeof(host), .abi_version = PERFPORT_ABI_VERSION, .version = "test",
	.log = host_log, .free = host_free, .gzip = host_copy,
};

#define START 1000000000ULL

/* threads in the profile's order: tids 30, 10, 20 */
static const struct perfport_thread threads[] = {
	{ .pid = 10, .tid = 30, .comm = "c", .start_ns = START, .end_ns = START + 100 },
	{ .pid = 10, .tid = 10, .comm = "a", .start_ns = START, .end_ns = START + 100 },
	{ .pid = 10, .tid = 20, .comm = "b", .start_ns = START, .end_ns = START + 100 },
};

/* in time order, as the host gives them; tid 99 is no thread of the profile */
static const struct perfport_sample samples[] = {
	{ .time_ns = START - 50, .value = 70, .node = 2, .tid = 20, .counter = 1, .count = 1 },
	{ .time_ns = START + 5, .value = 3, .node = 1, .tid = 10, .counter = 0, .count = 1 },
	{ .time_ns = START + 7, .value = 3, .node = 3, .tid = 30, .counter = 0, .count = 1 },
	{ .time_ns = START + 9, .value = 3, .node = 2, .tid = 99, .counter = 0, .count = 1 },
	{ .time_ns = START + 12, .value = 3, .node = 1, .tid = 10, .counter = 0, .count = 1 },
	{ .time_ns = START + 40, .value = 300, .node = 3, .tid = 20, .counter = 1, .count = 1 },
	{ .time_ns = START + 41, .value = 3, .node = 2, .tid = 10, .counter = 0, .count = 1 },
};

static const struct perfport_frame frames[] = {
	{ .function = "main", .module = "/bin/x", .flags = PERFPORT_FRAME_USER },
	{ .function = "work", .module = "/bin/x", .flags = PERFPORT_FRAME_USER },
	{ .function = "</script><b>x", .module = "/bin/x", .flags = PERFPORT_FRAME_USER },
};

static const struct perfport_node nodes[] = {
	{ UINT32_MAX, UINT32_MAX, 0, 4 }, { 0, 0, 1, 4 }, { 1, 1, 2, 3 }, { 1, 2, 2, 4 },
};

static uint64_t values[4 * 4];

static struct perfport_profile profile(void)
{
	return (struct perfport_profile){
		.struct_size = sizeof(struct perfport_profile), .nr_counters = 2,
		.counter_names = names, .counter_units = units, .counters_present = 3,
		.start_ns = START, .end_ns = START + 100, .hostname = "h",
		.nr_frames = 3, .frame_size = sizeof(frames[0]), .frames = frames,
		.nr_nodes = 4, .node_size = sizeof(nodes[0]), .nodes = nodes,
		.self = values, .total = values,
		.nr_threads = 3, .thread_size = sizeof(threads[0]), .threads = threads,
		.nr_samples = 7, .sample_size = sizeof(samples[0]), .samples = samples,
	};
}

static uint64_t uleb(const unsigned char **p)
{
	uint64_t x = 0;
	unsigned shift = 0;

	do {
		x |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
	} while (*(*p)++ & 0x80);
	return x;
}

/* thread by thread in the profile's order (then the unknown tid), each in
 * time order: the time deltas and node deltas start again at each thread */
static void test_samples_by_thread(void **state)
{
	struct perfport_profile p = profile();
	struct ex e = { .host = &host };
	void *buf = NULL;
	size_t len = 0;
	const unsigned char *q, *end;
	/* tid 30: sample 2; tid 10: 1, 4, 6; tid 20: 0, 5; unknown: 3 */
	static const size_t want[] = { 2, 1, 4, 6, 0, 5, 3 };
	static const uint64_t runs[] = { 1, 3, 2, 1 };
	uint64_t t = 0, first[7] = { 1, 1, 0, 0, 1, 0, 1 };
	int64_t node = 0;

	(void)state;
	assert_int_equal(pack_samples(&e, &p, &buf, &len), PERFPORT_OK);
	q = buf;
	end = q + len;
	assert_int_equal(uleb(&q), 7);
	for (size_t k = 0; k < 4; k++)
		assert_int_equal(uleb(&q), runs[k]);
	for (size_t k = 0; k < 7; k++) {
		const struct perfport_sample *s = &samples[want[k]];
		uint64_t at = s->time_ns < START ? START : s->time_ns;

		if (first[k])
			t = 0;
		t += uleb(&q);
		assert_int_equal(t, at - START);
	}
	for (size_t k = 0; k < 7; k++) {
		uint64_t z = uleb(&q);

		if (first[k])
			node = 0;
		node += (z & 1) ? -(int64_t)((z + 1) / 2) : (int64_t)(z / 2);
		assert_int_equal(node, samples[want[k]].node);
	}
	for (size_t k = 0; k < 7; k++)
		assert_int_equal(uleb(&q), samples[want[k]].counter);
	for (size_t k = 0; k < 7; k++)
		assert_int_equal(uleb(&q), samples[want[k]].value);
	assert_ptr_equal(q, end);
	free(buf);
}

/* base64 back to bytes (the page's atob) */
static size_t unbase64(const char *s, size_t n, unsigned char *out)
{
	size_t len = 0;
	uint32_t w = 0;
	unsigned bits = 0;

	for (size_t i = 0; i < n && s[i] != '='; i++) {
		const char *c = strchr(b64, s[i]);

		assert_non_null(c);
		w = w << 6 | (uint32_t)(c - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (unsigned char)(w >> bits);
		}
	}
	return len;
}

/* the page: the data in place of its marker, a hostile title escaped, the
 * tables' strings (in base64) name every function */
/*
 * A host that keys frames by line (ABI 1.7) splits work() under main() by
 * the lines it was sampled at: the page's tree has one work() (the first
 * frame's), its callees under it merged too, in pre-order; a function
 * inlined (another flags) stays apart. The samples' host nodes map onto it.
 */
static void test_merge_by_line(void **state)
{
	static const struct perfport_frame lf[] = {
		{ .function = "main", .module = "/bin/x", .file = "x.c", .line = 30, .flags = PERFPORT_FRAME_USER },
		{ .function = "work", .module = "/bin/x", .file = "x.c", .line = 11, .flags = PERFPORT_FRAME_USER },
		{ .function = "work", .module = "/bin/x", .file = "x.c", .line = 12, .flags = PERFPORT_FRAME_USER },
		{ .function = "f", .module = "/bin/x", .file = "x.c", .line = 3, .flags = PERFPORT_FRAME_USER },
		{ .function = "work", .module = "/bin/x", .file = "x.c", .line = 11,
		  .flags = PERFPORT_FRAME_USER | PERFPORT_FRAME_INLINED },
	};
	/* root; main; work@11 { f }; work@12 { f }; work inlined */
	static const struct perfport_node ln[] = {
		{ UINT32_MAX, UINT32_MAX, 0, 7 }, { 0, 0, 1, 7 }, { 1, 1, 2, 4 }, { 2, 3, 3, 4 },
		{ 1, 2, 2, 6 }, { 4, 3, 3, 6 }, { 1, 4, 2, 7 },
	};
	static uint64_t lv[7 * 4] = { [4 * 3 + 2] = 5, [4 * 5 + 2] = 7 };
	struct perfport_profile p = profile();
	struct strtab st = { 0 };
	struct merged m;
	char *json = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	p.nr_frames = 5;
	p.frames = lf;
	p.nr_nodes = 7;
	p.nodes = ln;
	p.self = p.total = lv;
	p.frames_by_line = 1;
	assert_true(PERFPORT_PROFILE_HAS_LINES(&p));
	assert_true(merge_tree(&p, &m));
	/* root, main, work, f, work (inlined) */
	assert_int_equal(m.n, 5);
	assert_int_equal(m.parent[1], 0);
	assert_int_equal(m.frame[1], 0);
	assert_int_equal(m.parent[2], 1);
	assert_int_equal(m.frame[2], 1);
	assert_int_equal(m.parent[3], 2);
	assert_int_equal(m.frame[3], 3);
	assert_int_equal(m.parent[4], 1);
	assert_int_equal(m.frame[4], 4);
	{
		static const uint32_t want[] = { 0, 1, 2, 3, 2, 3, 4 };

		for (size_t i = 0; i < 7; i++)
			assert_int_equal(m.of[i], want[i]);
	}
	/* the page's tables: the merged nodes, the host's as lines, f's self summed */
	out = open_memstream(&json, &len);
	assert_non_null(out);
	put_tree(out, &p, &m, &st, true, true);
	fclose(out);
	assert_false(st.oom);
	assert_non_null(strstr(json, "\"nodes\":{\"parent\":[-1,0,1,2,1],\"frame\":[-1,0,1,3,4]}"));
	assert_non_null(strstr(json, "\"of\":[0,1,2,3,2,3,4]"));
	assert_non_null(strstr(json, "\"lines\":{\"parent\":[-1,0,1,2,1,4,1],\"frame\":[-1,0,1,3,2,3,4]}"));
	assert_non_null(strstr(json, "\"on-cpu\":[0,0,0,12,0]"));
	free(json);
	strtab_free(&st);
	merged_free(&m);
}

static void test_page(void **state)
{
	struct perfport_profile p = profile();
	struct perfport_option opts[] = { { "title", "</script><script>alert(1)</script>" },
					  { "counter", NULL } };
	void *st = NULL;
	char *page = NULL, *tables, *json;
	size_t len = 0, n;
	FILE *f = open_memstream(&page, &len);

	(void)state;
	assert_non_null(f);
	assert_int_equal(ex_init(&host, opts, 2, &st), PERFPORT_OK);
	assert_int_equal(ex_write(st, &p, f), PERFPORT_OK);
	fclose(f);
	ex_fini(st);
	assert_null(strstr(page, DATA_MARKER));
	assert_null(strstr(page, "<script>alert"));
	assert_non_null(strstr(page, "\"title\":\"\\u003c/script\\u003e"));
	tables = strstr(page, "\"tables\":\"");
	assert_non_null(tables);
	tables += strlen("\"tables\":\"");
	n = strcspn(tables, "\"");
	json = calloc(n + 1, 1);
	assert_non_null(json);
	unbase64(tables, n, (unsigned char *)json);
	assert_non_null(strstr(json, "\"strings\":["));
	assert_non_null(strstr(json, "\"main\""));
	assert_non_null(strstr(json, "\"work\""));
	assert_non_null(strstr(json, "\"\\u003c/script\\u003e\\u003cb\\u003ex\""));
	assert_non_null(strstr(json, "{\"pid\":10,\"tid\":30,\"comm\":\"c\",\"start\":0,\"end\":100}"));
	assert_non_null(strstr(json, "\"offwake\":null,\"base\":null"));
	free(json);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_by_thread),
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_merge_by_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
