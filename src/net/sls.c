/* SPDX-License-Identifier: MIT */
/*
 * sls.c - SLS request signatures (v4 and v1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/buf.h"
#include "crypto.h"
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

	if (crypto_digest(CRYPTO_SHA256, data, len, md, sizeof(md)))
		return -1;
	hex(md, 32, out);
	return 0;
}

static int hmac256(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
	return crypto_hmac(CRYPTO_SHA256, key, klen, msg, strlen(msg), out, 32);
}

/* Unreserved characters stay, every other byte is %XX. */
static void add_uri(struct buf *s, const char *t)
{
	for (; *t; t++) {
		unsigned char c = (unsigned char)*t;
		char b[4];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-' || c == '~' || c == '.') {
			buf_add(s, (const char *)&c, 1);
		} else {
			snprintf(b, sizeof(b), "%%%02X", c);
			buf_add(s, b, 3);
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
	struct buf c = { 0 }, sts = { 0 };
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
	buf_adds(&c, rq->method);
	buf_adds(&c, "\n");
	buf_adds(&c, rq->resource);
	buf_adds(&c, "\n");
	for (size_t i = 0; i < rq->nr_params && np < 64; i++)
		params[np++] = rq->params[i];
	qsort(params, np, sizeof(*params), cmp_kv);
	for (size_t i = 0; i < np; i++) {
		if (i)
			buf_adds(&c, "&");
		buf_adds(&c, params[i].key);
		if (params[i].value && *params[i].value) {
			buf_adds(&c, "=");
			add_uri(&c, params[i].value);
		}
	}
	buf_adds(&c, "\n");
	n = signed_headers(rq, sh, names);
	for (size_t i = 0; i < n; i++) {
		size_t vl;
		const char *v = trim(sh[i].value, &vl);

		buf_adds(&c, sh[i].key);
		buf_adds(&c, ":");
		buf_add(&c, v, vl);
		buf_adds(&c, "\n");
	}
	buf_adds(&c, "\n");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_adds(&c, ";");
		buf_adds(&c, sh[i].key);
	}
	buf_adds(&c, "\n");
	buf_adds(&c, scratch);
	if (c.err || sha256_hex(c.p, c.len, digest))
		goto out;

	/* string to sign and the key chain */
	buf_adds(&sts, "SLS4-HMAC-SHA256\n");
	buf_adds(&sts, datetime);
	buf_adds(&sts, "\n");
	buf_adds(&sts, date);
	buf_adds(&sts, "/");
	buf_adds(&sts, region);
	buf_adds(&sts, "/sls/aliyun_v4_request\n");
	buf_adds(&sts, digest);
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
	explicit_bzero(key, sizeof(key));
	explicit_bzero(k1, sizeof(k1));
	explicit_bzero(k2, sizeof(k2));
	explicit_bzero(k3, sizeof(k3));
	explicit_bzero(k4, sizeof(k4));
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

static int string_v1(const struct sls_request *rq, struct buf *s)
{
	struct sls_kv xs[64], params[64];
	char names[64][64];
	size_t n = 0, np = 0;

	buf_adds(s, rq->method);
	buf_adds(s, "\n");
	buf_adds(s, header(rq, "Content-MD5"));
	buf_adds(s, "\n");
	buf_adds(s, header(rq, "Content-Type"));
	buf_adds(s, "\n");
	buf_adds(s, header(rq, "Date"));
	buf_adds(s, "\n");
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
		buf_adds(s, xs[i].key);
		buf_adds(s, ":");
		buf_adds(s, xs[i].value);
		buf_adds(s, "\n");
	}
	buf_adds(s, rq->resource);
	for (size_t i = 0; i < rq->nr_params && np < 64; i++)
		params[np++] = rq->params[i];
	qsort(params, np, sizeof(*params), cmp_kv);
	for (size_t i = 0; i < np; i++) {
		buf_adds(s, i ? "&" : "?");
		buf_adds(s, params[i].key);
		buf_adds(s, "=");
		buf_adds(s, params[i].value ? params[i].value : "");
	}
	return s->err ? -1 : 0;
}

int sls_string_to_sign_v1(const struct sls_request *rq, char *out, size_t max)
{
	struct buf s = { 0 };
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
	struct buf s = { 0 };
	unsigned char md[20];
	char b64[64];
	int ret = -1;

	if (string_v1(rq, &s) == 0 &&
	    !crypto_hmac(CRYPTO_SHA1, secret, strlen(secret), s.p, s.len, md, sizeof(md)) &&
	    crypto_base64(b64, md, sizeof(md)) > 0) {
		if ((size_t)snprintf(auth, auth_max, "LOG %s:%s", key_id, b64) < auth_max)
			ret = 0;
	}
	free(s.p);
	return ret;
}
