/* SPDX-License-Identifier: MIT */
/*
 * aws.c - finding AWS credentials.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "aws.h"

static void copy(char *dst, size_t max, const char *src)
{
	snprintf(dst, max, "%s", src ? src : "");
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/*
 * -2 (said) when a credential holds a control byte: signed into a header,
 * a line break would add header lines of its own (as OTLP_AUTHORIZATION's
 * check refuses); else @ret. @names: where each of @c's three came from.
 */
static int creds_checked(struct aws_creds *c, const char *const names[3], int ret)
{
	const char *v[3] = { c->key_id, c->secret, c->session_token };

	for (int i = 0; !ret && i < 3; i++)
		for (const unsigned char *p = (const unsigned char *)v[i]; *p; p++)
			if (*p < 0x20 || *p == 0x7f) {
				pp_error("'%s' holds a control character: no request is signed with "
					 "it", names[i]);
				explicit_bzero(c, sizeof(*c));
				return -2;
			}
	return ret;
}

/* The [profile] section of an INI credentials file. */
static int from_file(const char *path, const char *profile, struct aws_creds *c)
{
	FILE *f = fopen(path, "r");
	char line[4608];
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *l = trim(line), *eq;

		if (*l == '[') {
			char *end = strchr(l, ']');

			if (end)
				*end = 0;
			in = !strcmp(trim(l + 1), profile);
			continue;
		}
		if (!in || !(eq = strchr(l, '=')))
			continue;
		*eq = 0;
		if (!strcmp(trim(l), "aws_access_key_id"))
			copy(c->key_id, sizeof(c->key_id), trim(eq + 1));
		else if (!strcmp(trim(l), "aws_secret_access_key"))
			copy(c->secret, sizeof(c->secret), trim(eq + 1));
		else if (!strcmp(trim(l), "aws_session_token"))
			copy(c->session_token, sizeof(c->session_token), trim(eq + 1));
	}
	fclose(f);
	return c->key_id[0] && c->secret[0] ? 0 : -1;
}

int aws_creds_find(struct aws_creds *c)
{
	const char *id = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
	const char *file = getenv("AWS_SHARED_CREDENTIALS_FILE"), *home = getenv("HOME");
	const char *profile = getenv("AWS_PROFILE");
	char path[4096];

	static const char *const env[3] = { "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
					    "AWS_SESSION_TOKEN" };
	static const char *const ini[3] = { "aws_access_key_id (credentials file)",
					    "aws_secret_access_key (credentials file)",
					    "aws_session_token (credentials file)" };

	memset(c, 0, sizeof(*c));
	if (id && *id && secret && *secret) {
		copy(c->key_id, sizeof(c->key_id), id);
		copy(c->secret, sizeof(c->secret), secret);
		copy(c->session_token, sizeof(c->session_token), getenv("AWS_SESSION_TOKEN"));
		return creds_checked(c, env, 0);
	}
	if (!file || !*file) {
		snprintf(path, sizeof(path), "%s/.aws/credentials", home ? home : "");
		file = path;
	}
	return creds_checked(c, ini, from_file(file, profile && *profile ? profile : "default", c));
}

int aliyun_creds_find(struct aws_creds *c)
{
	const char *id = getenv("ALIBABA_CLOUD_ACCESS_KEY_ID");
	const char *secret = getenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET");
	static const char *const env[3] = { "ALIBABA_CLOUD_ACCESS_KEY_ID",
					    "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
					    "ALIBABA_CLOUD_SECURITY_TOKEN" };

	memset(c, 0, sizeof(*c));
	if (!id || !*id || !secret || !*secret)
		return -1;
	copy(c->key_id, sizeof(c->key_id), id);
	copy(c->secret, sizeof(c->secret), secret);
	copy(c->session_token, sizeof(c->session_token), getenv("ALIBABA_CLOUD_SECURITY_TOKEN"));
	return creds_checked(c, env, 0);
}
