/* SPDX-License-Identifier: MIT */
/*
 * test_net.c - finding AWS credentials as the SDKs do (environment first,
 * then the shared credentials file's [AWS_PROFILE] section), and the spool
 * round trip without a server: a request that cannot be delivered is kept
 * byte for byte, and resend leaves it when it still cannot be delivered.
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

#include "net/aws.h"
#include "net/net.h"
#include "util/error.h"
#include "util/log.h"

static char dir[] = "/tmp/perfport-test-net.XXXXXX";

static void unset_aws(void)
{
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_PROFILE");
}

static void test_creds(void **state)
{
	char path[256];
	struct aws_creds c;
	FILE *f;

	(void)state;
	unset_aws();
	snprintf(path, sizeof(path), "%s/credentials", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = secretdef\n\n"
	      "[other]\n  aws_access_key_id=AKIDOTHER  \naws_secret_access_key=secret/other+\n"
	      "aws_session_token = tok\n", f);
	fclose(f);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	assert_int_equal(aws_creds_find(&c), 0);
	assert_string_equal(c.key_id, "AKIDDEF");
	assert_string_equal(c.secret, "secretdef");
	assert_string_equal(c.session_token, "");
	setenv("AWS_PROFILE", "other", 1);
	assert_int_equal(aws_creds_find(&c), 0);
	assert_string_equal(c.key_id, "AKIDOTHER");
	assert_string_equal(c.secret, "secret/other+");
	assert_string_equal(c.session_token, "tok");
	setenv("AWS_PROFILE", "missing", 1);
	assert_int_equal(aws_creds_find(&c), -1);
	/* the environment wins */
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secretenv", 1);
	assert_int_equal(aws_creds_find(&c), 0);
	assert_string_equal(c.key_id, "AKIDENV");
	unset_aws();
	unlink(path);
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

static void test_spool(void **state)
{
	static const char body[] = "{\"x\":1}\n\0binary";
	const char *headers[] = { "Content-Type: application/json", NULL };
	struct net_config cfg = { .max_attempts = 1, .connect_timeout_s = 1 };
	struct net_request rq = {
		.method = "POST", .url = "http://127.0.0.1:9/never", .headers = headers,
		.body = body, .body_len = sizeof(body), .spool_tag = "unit",
	};
	struct net_response rs;
	struct net_resend_stats st;
	char spool[256], cmd[600], got[64];
	FILE *f;
	size_t n;

	(void)state;
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	cfg.spool_dir = spool;
	net_configure(&cfg);
	assert_int_equal(net_send(&rq, &rs), PP_EIO);
	assert_true(rs.spooled);
	free(rs.body);
	/* the body, byte for byte */
	snprintf(cmd, sizeof(cmd), "cat %s/*/body", spool);
	f = popen(cmd, "r");
	assert_non_null(f);
	n = fread(got, 1, sizeof(got), f);
	pclose(f);
	assert_int_equal(n, sizeof(body));
	assert_memory_equal(got, body, sizeof(body));
	/* still undeliverable: resend fails and keeps it */
	assert_int_equal(net_resend(spool, &st), PP_EIO);
	assert_true(st.exists);
	assert_int_equal(st.delivered, 0);
	assert_int_equal(st.kept, 1);
	snprintf(cmd, sizeof(cmd), "ls %s | wc -l", spool);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	pclose(f);
	assert_int_equal(atoi(got), 1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", spool);
	assert_int_equal(system(cmd), 0);
	/* an empty or missing spool is fine */
	assert_int_equal(net_resend(spool, &st), PP_OK);
	assert_false(st.exists);
	assert_int_equal(st.kept + st.delivered, 0);
}

/* A secret header: refused when malformed, unset or holding a control
 * character (nothing sent, nothing spooled); spooled by name only. */
static void test_secret_header(void **state)
{
	static const char *const bad[] = {
		"Authentication", "=X", "Auth entication=X", "Authentication=", "Authentication=A-B",
		"Authentication=X\nheader evil: 1",
	};
	struct net_config cfg = { .max_attempts = 1, .connect_timeout_s = 1 };
	struct net_request rq = {
		.method = "POST", .url = "http://127.0.0.1:9/never", .body = "x", .body_len = 1,
		.spool_tag = "unit",
	};
	struct net_response rs;
	char spool[256], cmd[700], got[256];
	FILE *f;

	(void)state;
	snprintf(spool, sizeof(spool), "%s/secret-spool", dir);
	cfg.spool_dir = spool;
	net_configure(&cfg);
	setenv("X", "tok", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		rq.secret_header = bad[i];
		assert_int_equal(net_send(&rq, &rs), PP_EIO);
		assert_false(rs.spooled);
		assert_int_equal(rs.status, 0);
		free(rs.body);
	}
	unsetenv("PERFPORT_UNIT_TOKEN");
	rq.secret_header = "Authentication=PERFPORT_UNIT_TOKEN";
	assert_int_equal(net_send(&rq, &rs), PP_EIO);
	assert_false(rs.spooled);
	free(rs.body);
	setenv("PERFPORT_UNIT_TOKEN", "tok\r\nX-Evil: 1", 1);
	assert_int_equal(net_send(&rq, &rs), PP_EIO);
	assert_false(rs.spooled);
	free(rs.body);
	/* a good one: the server is unreachable, so it is spooled, by name */
	setenv("PERFPORT_UNIT_TOKEN", "s3cr3t-unit-token", 1);
	assert_int_equal(net_send(&rq, &rs), PP_EIO);
	assert_true(rs.spooled);
	free(rs.body);
	snprintf(cmd, sizeof(cmd), "grep -rc s3cr3t-unit-token %s | grep -v ':0' | wc -l; "
		 "grep -h '^secret ' %s/*/request", spool, spool);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(got, sizeof(got), f));
	assert_int_equal(atoi(got), 0);
	assert_non_null(fgets(got, sizeof(got), f));
	assert_string_equal(got, "secret Authentication=PERFPORT_UNIT_TOKEN\n");
	pclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", spool);
	assert_int_equal(system(cmd), 0);
	unsetenv("PERFPORT_UNIT_TOKEN");
	unsetenv("X");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_creds),
		cmocka_unit_test(test_spool),
		cmocka_unit_test(test_secret_header),
	};
	int ret;

	pp_log_set_level(-1);
	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return ret;
}
