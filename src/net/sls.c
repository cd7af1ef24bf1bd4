/* SPDX-License-Identifier: MIT */
/*
 * sls.c - SLS request signatures (v4 and v1).
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sls.h"

static void hex(const unsigned char *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
	out[2 * n] = 0;
}

static int sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;

	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		return -1;
	hex(md, 32, out);
	return 0;
}

static int hmac256(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
	unsigned int n = 0;

	return HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &n) &&
	       n == 32 ? 0 : -1;
}

/* A growing string for the canonical request. */
struct str {
	char *p;
	size_t len, cap;
	int err;
};

static void add(struct str *s, const char *t, size_t n)
{
	if (s->err)
		return;
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		char *q;

		while (cap < s->len + n + 1)
			cap *= 2;
		q = realloc(s->p, cap);
		if (!q) {
			s->err = 1;
			return;
		}
		s->p = q;
		s->cap = cap;
	}
	memcpy(s->p + s->len, t, n);
	s->len += n;
	s->p[s->len] = 0;
}

static void adds(struct str *s, const char *t)
{
	add(s, t, strlen(t));
}

/* Unreserved characters stay, every other byte is %XX. */
static void add_uri(struct str *s, const char *t)
{
	for (; *t; t++) {
		unsigned char c = (unsigned char)*t;
		char b[4];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-' || c == '~' || c == '.') {
			add(s, (const char *)&c, 1);
		} else {
			snprintf(b, sizeof(b), "%%%02X", c);
			add(s, b, 3);
		}
	}
}

static int cmp_kv(const void *a, const void *b)
{
	return strcmp(((const struct sls_kv *)a)->key, ((const struct sls_kv *)b)->key);
}

static void lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s += 'a' - 'A';
}

static const char *trim(const char *v, size_t *n)
{
	size_t len = strlen(v);

	while (len && (*v == ' ' || *v == '\t')) {
		v++;
		len--;
	}
	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	*n = len;
	return v;
}

/* The signed headers (lower-cased names of content-type, host, x-log-*,
 * x-acs-*), sorted; names are copied into @names. Return: how many. */
static size_t signed_headers(const struct sls_request *rq, struct sls_kv *out, char names[][64])
{
	size_t n = 0;

	for (size_t i = 0; i < rq->nr_headers && n < 64; i++) {
		snprintf(names[n], 64, "%s", rq->headers[i].key);
		lower(names[n]);
		if (strcmp(names[n], "content-type") && strcmp(names[n], "host") &&
		    strncmp(names[n], "x-log-", 6) && strncmp(names[n], "x-acs-", 6))
			continue;
		out[n].key = names[n];
		out[n].value = rq->headers[i].value;
		n++;
	}
	qsort(out, n, sizeof(*out), cmp_kv);
	return n;
}

int sls_sign_v4(struct sls_request *rq, const char *key_id, const char *secret,
		const char *region, const char *datetime, char scratch[96], char *auth,
		size_t auth_max)
{
	struct sls_kv sh[64], params[64];
	char names[64][64], date[9], digest[65], key[320];
	unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
	struct str c = { 0 }, sts = { 0 };
	char sighex[65];
	size_t n, np = 0;
	int ret = -1;

	if (rq->nr_headers + 2 > rq->max_headers || strlen(datetime) != 16)
		return -1;
	/* the two headers v4 adds */
	if (sha256_hex(rq->body ? rq->body : "", rq->body_len, scratch))
		return -1;
	snprintf(scratch + 65, 31, "%s", datetime);
	rq->headers[rq->nr_headers++] = (struct sls_kv){ "x-log-content-sha256", scratch };
	rq->headers[rq->nr_headers++] = (struct sls_kv){ "x-log-date", scratch + 65 };
	memcpy(date, datetime, 8);
	date[8] = 0;

	/* canonical request */
	adds(&c, rq->method);
	adds(&c, "\n");
	adds(&c, rq->resource);
	adds(&c, "\n");
	for (size_t i = 0; i < rq->nr_params && np < 64; i++)
		params[np++] = rq->params[i];
	qsort(params, np, sizeof(*params), cmp_kv);
	for (size_t i = 0; i < np; i++) {
		if (i)
			adds(&c, "&");
		adds(&c, params[i].key);
		if (params[i].value && *params[i].value) {
			adds(&c, "=");
			add_uri(&c, params[i].value);
		}
	}
	adds(&c, "\n");
	n = signed_headers(rq, sh, names);
	for (size_t i = 0; i < n; i++) {
		size_t vl;
		const char *v = trim(sh[i].value, &vl);

		adds(&c, sh[i].key);
		adds(&c, ":");
		add(&c, v, vl);
		adds(&c, "\n");
	}
	adds(&c, "\n");
	for (size_t i = 0; i < n; i++) {
		if (i)
			adds(&c, ";");
		adds(&c, sh[i].key);
	}
	adds(&c, "\n");
	adds(&c, scratch);
	if (c.err || sha256_hex(c.p, c.len, digest))
		goto out;

	/* string to sign and the key chain */
	adds(&sts, "SLS4-HMAC-SHA256\n");
	adds(&sts, datetime);
	adds(&sts, "\n");
	adds(&sts, date);
	adds(&sts, "/");
	adds(&sts, region);
	adds(&sts, "/sls/aliyun_v4_request\n");
	adds(&sts, digest);
	if (sts.err)
		goto out;
	snprintf(key, sizeof(key), "aliyun_v4%s", secret);
	if (hmac256(key, strlen(key), date, k1) || hmac256(k1, 32, region, k2) ||
	    hmac256(k2, 32, "sls", k3) || hmac256(k3, 32, "aliyun_v4_request", k4) ||
	    hmac256(k4, 32, sts.p, sig))
		goto out;
	hex(sig, 32, sighex);
	if ((size_t)snprintf(auth, auth_max, "SLS4-HMAC-SHA256 Credential=%s/%s/%s/sls/aliyun_v4_request,"
			     "Signature=%s", key_id, date, region, sighex) < auth_max)
		ret = 0;
out:
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(k1, sizeof(k1));
	OPENSSL_cleanse(k4, sizeof(k4));
	free(c.p);
	free(sts.p);
	return ret;
}

static const char *header(const struct sls_request *rq, const char *name)
{
	for (size_t i = 0; i < rq->nr_headers; i++)
		if (!strcasecmp(rq->headers[i].key, name))
			return rq->headers[i].value;
	return "";
}

static int string_v1(const struct sls_request *rq, struct str *s)
{
	struct sls_kv xs[64], params[64];
	char names[64][64];
	size_t n = 0, np = 0;

	adds(s, rq->method);
	adds(s, "\n");
	adds(s, header(rq, "Content-MD5"));
	adds(s, "\n");
	adds(s, header(rq, "Content-Type"));
	adds(s, "\n");
	adds(s, header(rq, "Date"));
	adds(s, "\n");
	for (size_t i = 0; i < rq->nr_headers && n < 64; i++) {
		snprintf(names[n], 64, "%s", rq->headers[i].key);
		lower(names[n]);
		if (strncmp(names[n], "x-log-", 6) && strncmp(names[n], "x-acs-", 6))
			continue;
		xs[n].key = names[n];
		xs[n].value = rq->headers[i].value;
		n++;
	}
	qsort(xs, n, sizeof(*xs), cmp_kv);
	for (size_t i = 0; i < n; i++) {
		adds(s, xs[i].key);
		adds(s, ":");
		adds(s, xs[i].value);
		adds(s, "\n");
	}
	adds(s, rq->resource);
	for (size_t i = 0; i < rq->nr_params && np < 64; i++)
		params[np++] = rq->params[i];
	qsort(params, np, sizeof(*params), cmp_kv);
	for (size_t i = 0; i < np; i++) {
		adds(s, i ? "&" : "?");
		adds(s, params[i].key);
		adds(s, "=");
		adds(s, params[i].value ? params[i].value : "");
	}
	return s->err ? -1 : 0;
}

int sls_string_to_sign_v1(const struct sls_request *rq, char *out, size_t max)
{
	struct str s = { 0 };
	int n = -1;

	if (!string_v1(rq, &s)) {
		snprintf(out, max, "%s", s.p);
		n = (int)s.len;
	}
	free(s.p);
	return n;
}

int sls_sign_v1(const struct sls_request *rq, const char *key_id, const char *secret,
		char *auth, size_t auth_max)
{
	struct str s = { 0 };
	unsigned char md[20], b64[64];
	unsigned int n = 0;
	int ret = -1;

	if (string_v1(rq, &s) == 0 &&
	    HMAC(EVP_sha1(), secret, (int)strlen(secret), (const unsigned char *)s.p, s.len, md, &n) &&
	    n == 20) {
		EVP_EncodeBlock(b64, md, 20);
		if ((size_t)snprintf(auth, auth_max, "LOG %s:%s", key_id, b64) < auth_max)
			ret = 0;
	}
	free(s.p);
	return ret;
}
