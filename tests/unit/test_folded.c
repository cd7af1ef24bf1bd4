/* SPDX-License-Identifier: MIT */
/*
 * test_folded.c - the folded exporter's lines, from hand-made trees: each
 * frame's text made once and reused (frames of another profile are not
 * read from the last one's), lines that print alike merged into one, what
 * breaks the grammar mended, the part of a line shared with the line
 * before kept. The plugin's source is compiled in: its functions are
 * static.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../plugins/folded/folded.c"

static const char *const names[] = { "on-cpu", "lock" };
static const char *const units[] = { "nanoseconds", "nanoseconds" };

/* A tree by its nodes' (parent, frame) in pre-order, node 0 the root. */
struct tree {
	struct perfport_profile p;
	struct perfport_node nodes[16];
	uint64_t self[16 * 4];
};

static void tree_make(struct tree *t, const struct perfport_frame *frames, size_t nr_frames,
		      const uint32_t (*nodes)[2], size_t nr_nodes, const uint64_t *on_cpu)
{
	memset(t, 0, sizeof(*t));
	t->nodes[0] = (struct perfport_node){ UINT32_MAX, UINT32_MAX, 0, (uint32_t)nr_nodes };
	for (size_t i = 1; i < nr_nodes; i++) {
		uint32_t parent = nodes[i][0];

		t->nodes[i] = (struct perfport_node){ parent, nodes[i][1],
						      t->nodes[parent].depth + 1, (uint32_t)i + 1 };
		/* every ancestor's subtree ends at its last descendant */
		for (uint32_t a = parent; a != UINT32_MAX; a = t->nodes[a].parent)
			t->nodes[a].end = (uint32_t)i + 1;
		t->self[i * 4 + 0] = on_cpu[i] ? 1 : 0;  /* count */
		t->self[i * 4 + 2] = on_cpu[i];          /* value */
	}
	t->p = (struct perfport_profile){
		.struct_size = sizeof(t->p), .nr_counters = 2, .counter_names = names,
		.counter_units = units, .counters_present = 1,
		.nr_frames = nr_frames, .frame_size = sizeof(*frames), .frames = frames,
		.nr_nodes = nr_nodes, .node_size = sizeof(struct perfport_node), .nodes = t->nodes,
		.self = t->self, .total = t->self,
	};
}

/* The host's stacks(): nodes with a self count, their frames root first. */
static int stacks(const struct perfport_profile *p, perfport_stack_fn fn, void *ctx)
{
	uint32_t path[16];

	for (size_t i = 1; i < p->nr_nodes; i++) {
		const struct perfport_node *n = perfport_node_at(p, i);
		bool any = false;

		path[n->depth - 1] = n->frame;
		for (unsigned c = 0; c < p->nr_counters; c++)
			any = any || perfport_self_count(p, i, c);
		if (any) {
			int ret = fn(ctx, p, path, n->depth, (uint32_t)i);

			if (ret)
				return ret;
		}
	}
	return 0;
}

static void host_log(const struct perfport_host *h, enum perfport_log_level l, const char *fmt, ...)
{
	(void)h, (void)l, (void)fmt;
}

static const struct perfport_host host = {
	.struct_size = sizeof(host), .abi_version = PERFPORT_ABI_VERSION, .version = "test",
	.log = host_log, .stacks = stacks,
};

/* A folded writer with options @module and @annotate. */
static void *writer(const char *module, const char *annotate)
{
	struct perfport_option opts[] = {
		{ "counter", NULL }, { "value", "ns" }, { "annotate", annotate },
		{ "module", module }, { "wakers", "false" },
	};
	void *state = NULL;

	assert_int_equal(folded_init(&host, opts, 5, &state), PERFPORT_OK);
	return state;
}

/* What @state writes for @p, in a static buffer. */
static const char *write_of(void *state, const struct perfport_profile *p)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	assert_int_equal(folded_write(state, p, f), PERFPORT_OK);
	fclose(f);
	return buf;
}

/* main in two modules, each calling work: without the module shown, the
 * two stacks print alike and are one line */
static const struct perfport_frame two_mains[] = {
	{ .function = "main", .module = "/usr/lib/a.so", .flags = PERFPORT_FRAME_USER },
	{ .function = "main", .module = "/usr/lib/b.so", .flags = PERFPORT_FRAME_USER },
	{ .function = "work", .module = "/usr/lib/a.so", .flags = PERFPORT_FRAME_USER },
};
static const uint32_t two_mains_nodes[][2] = { { 0, 0 }, { 0, 0 }, { 1, 2 }, { 0, 1 }, { 3, 2 } };
static const uint64_t two_mains_cpu[] = { 0, 0, 5, 0, 7 };

static void test_alike_merged(void **state)
{
	struct tree t;
	void *w = writer("false", "true"), *m = writer("true", "true");

	(void)state;
	tree_make(&t, two_mains, 3, two_mains_nodes, 5, two_mains_cpu);
	assert_string_equal(write_of(w, &t.p), "main;work 12\n");
	assert_string_equal(write_of(m, &t.p), "main [a.so];work [a.so] 5\n"
					       "main [b.so];work [a.so] 7\n");
	folded_fini(w);
	folded_fini(m);
}

/* siblings and a return to a shallower depth: the shared part of each line
 * is the line before's, the rest made anew */
static const struct perfport_frame kinds[] = {
	{ .function = "main", .flags = PERFPORT_FRAME_USER },
	{ .function = "a;b\nc", .flags = PERFPORT_FRAME_USER },
	{ .function = "memcpy", .flags = PERFPORT_FRAME_USER | PERFPORT_FRAME_INLINED },
	{ .function = "do_syscall_64", .flags = PERFPORT_FRAME_KERNEL },
	{ .function = "Interpreter", .flags = PERFPORT_FRAME_JIT },
};
static const uint32_t kinds_nodes[][2] = {
	{ 0, 0 }, { 0, 0 }, { 1, 1 }, { 2, 2 }, { 2, 3 }, { 1, 4 }, { 5, 1 },
};
static const uint64_t kinds_cpu[] = { 0, 1, 0, 2, 3, 4, 5 };

static void test_lines(void **state)
{
	struct tree t;
	void *w = writer("false", "true"), *plain = writer("false", "false");

	(void)state;
	tree_make(&t, kinds, 5, kinds_nodes, 7, kinds_cpu);
	assert_string_equal(write_of(w, &t.p),
			    "main 1\n"
			    "main;a_b_c;memcpy_[i] 2\n"
			    "main;a_b_c;do_syscall_64_[k] 3\n"
			    "main;Interpreter_[j] 4\n"
			    "main;Interpreter_[j];a_b_c 5\n");
	assert_string_equal(write_of(plain, &t.p),
			    "main 1\n"
			    "main;a_b_c;memcpy 2\n"
			    "main;a_b_c;do_syscall_64 3\n"
			    "main;Interpreter 4\n"
			    "main;Interpreter;a_b_c 5\n");
	folded_fini(w);
	folded_fini(plain);
}

/* one writer, two profiles: frame 0 of the second is not the first's */
static void test_profiles_apart(void **state)
{
	static const struct perfport_frame other[] = {
		{ .function = "start", .flags = PERFPORT_FRAME_USER },
		{ .function = "run", .flags = PERFPORT_FRAME_USER },
	};
	static const uint32_t nodes[][2] = { { 0, 0 }, { 0, 0 }, { 1, 1 } };
	static const uint64_t cpu[] = { 0, 0, 9 };
	struct tree t;
	void *w = writer("false", "true");

	(void)state;
	tree_make(&t, two_mains, 3, two_mains_nodes, 5, two_mains_cpu);
	assert_string_equal(write_of(w, &t.p), "main;work 12\n");
	tree_make(&t, other, 2, nodes, 3, cpu);
	assert_string_equal(write_of(w, &t.p), "start;run 9\n");
	folded_fini(w);
}

/* a value of twenty digits, after a line as long as the line before:
 * the number is put after the line's text, not over it */
static void test_widest_value(void **state)
{
	static const uint32_t nodes[][2] = { { 0, 0 }, { 0, 0 }, { 1, 2 }, { 1, 1 } };
	static const uint64_t cpu[] = { 0, 0, UINT64_MAX, 3 };
	struct tree t;
	void *w = writer("true", "false");

	(void)state;
	tree_make(&t, two_mains, 3, nodes, 4, cpu);
	assert_string_equal(write_of(w, &t.p), "main [a.so];work [a.so] 18446744073709551615\n"
					       "main [a.so];main [b.so] 3\n");
	folded_fini(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alike_merged),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_profiles_apart),
		cmocka_unit_test(test_widest_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
