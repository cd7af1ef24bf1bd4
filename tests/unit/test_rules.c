/* SPDX-License-Identifier: MIT */
/*
 * test_rules.c - a runtime's park sites are rule-file data ("park" lines,
 * src/profile/rules.c): a park line's keys and quoted texts are read, a
 * bad one is rejected with its file and line; the shipped HotSpot park
 * comes from 50-hotspot.rules; a park only a user's --state-rules file
 * names reaches the finished profile (meta.parks, before the shipped
 * ones) and is the one advice_parks() - report's "off-CPU waits under
 * interpreted code" line - names (src/cli/advice.c, compiled in).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "pdw.h"
#include "profile/rules.h"
#include "util/error.h"

#include "../../src/cli/advice.c"

#define MYVM "runtime MyVM libmyvm.so\n"

/* rules_parse() of @text as file "u.rules" (user rules); what it logged
 * into @err. Return: its result. */
static int parse_logged(const char *text, struct rules *rs, char *err, size_t len)
{
	FILE *f = tmpfile();
	int saved, ret;
	size_t n;

	assert_non_null(f);
	fflush(stderr);
	saved = dup(2);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(f), 2) >= 0);
	memset(rs, 0, sizeof(*rs));
	ret = rules_parse(rs, text, "u.rules", RULE_SET_USER);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(err, 1, len - 1, f);
	err[n] = '\0';
	fclose(f);
	return ret;
}

static void park_parsed(void **state)
{
	struct rules rs;
	char err[1024];

	(void)state;
	/* keys in any order, quoted texts with blanks and #, a comment after */
	assert_int_equal(parse_logged(MYVM "S  myvm_lock*  lock\n"
				      "park  myvm_park  map \"write its map: myvm --perf-map # x\"  "
				      "waits MyVM's interpreted Interp compile \"myvm --jit\"  # why\n",
				      &rs, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(rs.nr_parks, 1);
	assert_string_equal(rs.parks[0].function, "myvm_park");
	assert_string_equal(rs.parks[0].interpreted, "Interp");
	assert_string_equal(rs.parks[0].waits, "MyVM's");
	assert_string_equal(rs.parks[0].compile, "myvm --jit");
	assert_string_equal(rs.parks[0].map, "write its map: myvm --perf-map # x");
	assert_int_equal(rs.parks[0].runtime, 1);
	{
		struct profile_park v;

		rules_park_view(&rs, 0, &v);
		assert_string_equal(v.runtime, "MyVM");
		assert_string_equal(v.park, "myvm_park");
	}
	rules_free(&rs);
	/* a JIT-only runtime: no interpreter, no compile */
	assert_int_equal(parse_logged(MYVM "park p waits w map m\n", &rs, err, sizeof(err)), 0);
	assert_null(rs.parks[0].interpreted);
	assert_null(rs.parks[0].compile);
	rules_free(&rs);
	/* a runtime and its park are a rule file of their own */
	assert_int_equal(parse_logged(MYVM "park p waits w map m\n", &rs, err, sizeof(err)), 0);
	rules_free(&rs);
}

/* Each bad park line is rejected, and the message names the file, the line
 * and what is wrong. */
static void park_rejected(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
		{ "park p waits w map m\n", "'u.rules' line 1: a park line follows a runtime line" },
		{ MYVM "park\n", "'u.rules' line 2: a park line is 'park FUNCTION" },
		{ MYVM "park # none\n", "'u.rules' line 2: a park line is 'park FUNCTION" },
		{ MYVM "\npark p map m\n", "'u.rules' line 3: park 'p' has no 'waits'" },
		{ MYVM "park p waits w\n", "'u.rules' line 2: park 'p' has no 'map'" },
		{ MYVM "park p waits w map m interpreted I\n",
		  "'u.rules' line 2: park 'p': 'interpreted' and 'compile' go together" },
		{ MYVM "park p waits w map m compile c\n",
		  "'u.rules' line 2: park 'p': 'interpreted' and 'compile' go together" },
		{ MYVM "park p waits w map m colour red\n",
		  "'u.rules' line 2: unknown park key 'colour' (interpreted, waits, compile, map)" },
		{ MYVM "park p waits w map m waits v\n",
		  "'u.rules' line 2: park key 'waits' is given twice" },
		{ MYVM "park p waits w map\n", "'u.rules' line 2: park key 'map' has no value" },
		{ MYVM "park p waits w map \"\"\n", "'u.rules' line 2: park key 'map' has no value" },
		{ MYVM "park p waits w map \"m\n",
		  "'u.rules' line 2: park key 'map' has a quote not closed" },
		{ MYVM "park p waits w map \"m\"x\n",
		  "'u.rules' line 2: park key 'map' has a quote not closed" },
		{ MYVM "park p waits w map m \"key\n", "'u.rules' line 2: a quote is not closed" },
		{ MYVM "park \"p\n", "'u.rules' line 2: a quote is not closed" },
	};
	struct rules rs;
	char err[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = parse_logged(bad[i].text, &rs, err, sizeof(err));

		if (ret != PP_ERULES || !strstr(err, bad[i].says))
			fail_msg("%s: returned %d, said '%s', not '%s'", bad[i].text, ret, err,
				 bad[i].says);
		assert_int_equal(rs.nr_parks, 0);
		rules_free(&rs);
	}
	/* a park after a runtime of another set (the programs') is not the user's */
	memset(&rs, 0, sizeof(rs));
	assert_int_equal(rules_parse(&rs, MYVM, "w.rules", RULE_SET_PROGRAM), 0);
	assert_int_equal(rules_parse(&rs, "park p waits w map m\n", "u.rules", RULE_SET_USER),
			 PP_ERULES);
	rules_free(&rs);
}

/* The shipped parks: HotSpot's, from 50-hotspot.rules. */
static void park_shipped(void **state)
{
	size_t n;
	const struct profile_park *k = profile_parks(&n);

	(void)state;
	assert_int_equal(n, 1);
	assert_string_equal(k[0].runtime, "HotSpot");
	assert_string_equal(k[0].park, "Unsafe_Park");
	assert_string_equal(k[0].interpreted, "Interpreter");
	assert_string_equal(k[0].waits, "java.util.concurrent's");
	assert_non_null(strstr(k[0].compile, "java -Xcomp -XX:TieredStopAtLevel=1"));
	assert_non_null(strstr(k[0].map, "-XX:+DumpPerfMapAtExit"));
}

/* A recording of one cpu-clock sample, for a profile to carry its rules' parks. */
static struct pdw one_sample(void)
{
	struct pdw w = { 0 };
	size_t data_off, at;

	pdw_bytes(&w, "PERFILE2", 8);
	pdw_u64(&w, 104);
	pdw_u64(&w, 128 + 16);
	for (int i = 0; i < 10; i++)
		pdw_u64(&w, 0);
	pdw_attr(&w, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000000,
		 PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD, 0, 0, 0,
		 0, 0, 0);
	pdw_u64(&w, 0);
	pdw_u64(&w, 0);
	data_off = w.n;
	at = pdw_begin(&w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	pdw_u64(&w, 0x401000);
	pdw_u32(&w, 100);
	pdw_u32(&w, 100);
	pdw_u64(&w, 1000);
	pdw_u64(&w, 1000000);
	pdw_end(&w, at);
	pdw_patch_u64(&w, 24, 104);
	pdw_patch_u64(&w, 32, 128 + 16);
	pdw_patch_u64(&w, 40, data_off);
	pdw_patch_u64(&w, 48, w.n - data_off);
	return w;
}

/*
 * A park that only the user's rule file names (no shipped rule knows
 * myvm_park) is the profile's first, and it is the park report's line
 * names for waits under that runtime's interpreter: the tree
 * Interp (anonymous) > myvm_park > __schedule (sleep 800 in 4).
 */
static void park_of_user_rules(void **state)
{
	char path[] = "/tmp/perfport-test-rules-XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = MYVM "park myvm_park interpreted Interp waits \"MyVM's\" "
				   "compile \"run myvm --jit\" map \"run myvm --perf-map\"\n";
	struct profile_opts o = { .jobs = 1, .sym.buildid_dir = "/nonexistent",
				  .state_rules = path };
	struct pdw w = one_sample();
	struct profile *built = NULL;
	struct profile_frame fr[] = {
		{ .function = "Interp", .module = "//anon", .flags = FRAME_F_USER },
		{ .function = "myvm_park", .module = "/usr/lib/libmyvm.so", .flags = FRAME_F_USER },
		{ .function = "__schedule", .module = "[kernel.kallsyms]", .flags = FRAME_F_KERNEL },
	};
	struct profile_node nodes[] = {
		{ UINT32_MAX, UINT32_MAX, 0, 4 }, { 0, 0, 1, 4 }, { 1, 1, 2, 4 }, { 2, 2, 3, 4 },
	};
	struct profile_counts total[4] = { 0 }, self[4] = { 0 };
	struct profile p = { .nr_frames = 3, .frames = fr, .nr_nodes = 4, .nodes = nodes,
			     .total = total, .self = self };
	struct advice_parks k;
	size_t shipped;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	assert_int_equal(profile_build_mem(w.b, w.n, "one", &o, &built), 0);
	unlink(path);
	free(w.b);
	assert_non_null(built);
	profile_parks(&shipped);
	assert_int_equal(built->meta.nr_parks, 1 + shipped);
	assert_string_equal(built->meta.parks[0].runtime, "MyVM");
	assert_string_equal(built->meta.parks[0].park, "myvm_park");
	assert_string_equal(built->meta.parks[1].runtime, "HotSpot");
	self[3].count[CNT_SLEEP] = 4;
	self[3].ns[CNT_SLEEP] = 800;
	p.meta.parks = built->meta.parks;
	p.meta.nr_parks = built->meta.nr_parks;
	assert_true(advice_parks(&p, &k));
	assert_ptr_equal(k.site, &built->meta.parks[0]);
	assert_string_equal(k.site->waits, "MyVM's");
	assert_string_equal(k.site->compile, "run myvm --jit");
	assert_int_equal(k.count[CNT_SLEEP], 4);
	assert_int_equal(k.ns[CNT_SLEEP], 800);
	assert_ptr_equal(advice_interpreted("Interp", "//anon", FRAME_F_USER, p.meta.parks,
					    p.meta.nr_parks), k.site);
	/* the shipped parks alone know nothing of it */
	p.meta.parks = profile_parks(&shipped);
	p.meta.nr_parks = shipped;
	assert_false(advice_parks(&p, &k));
	profile_free(built);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(park_parsed),
		cmocka_unit_test(park_rejected),
		cmocka_unit_test(park_shipped),
		cmocka_unit_test(park_of_user_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
