/* SPDX-License-Identifier: MIT */
/*
 * sls.h - Alibaba Cloud Simple Log Service request signatures, v4
 * (SLS4-HMAC-SHA256) and v1 (hmac-sha1), as ../shared/BACKENDS.md and the
 * service's SDKs define them. HMAC and digests from OpenSSL's libcrypto.
 */
#ifndef NET_SLS_H
#define NET_SLS_H

#include <stddef.h>

struct sls_kv {
	const char *key, *value;
};

/* A request to sign: its headers, to which the signers add their own. */
struct sls_request {
	const char *method;           /* "POST" */
	const char *resource;         /* "/logstores/NAME/shards/lb" */
	const struct sls_kv *params;  /* query parameters, or NULL */
	size_t nr_params;
	struct sls_kv *headers;       /* room for @max_headers; names as sent */
	size_t nr_headers, max_headers;
	const void *body;
	size_t body_len;
};

/**
 * sls_sign_v4() - sign with SLS4-HMAC-SHA256: adds x-log-content-sha256 and
 * x-log-date (@datetime, YYYYMMDDTHHMMSSZ) to the headers (their values
 * point into @scratch, which must outlive the request) and writes the
 * Authorization value, "SLS4-HMAC-SHA256 Credential=AK/DATE/REGION/sls/
 * aliyun_v4_request,Signature=HEX", to @auth.
 * Return: 0, or -1 (no room, or libcrypto failed).
 */
int sls_sign_v4(struct sls_request *rq, const char *key_id, const char *secret,
		const char *region, const char *datetime, char scratch[96], char *auth,
		size_t auth_max);

/**
 * sls_string_to_sign_v1() - the v1 string to sign: VERB, Content-MD5,
 * Content-Type, Date, then every x-log-* / x-acs-* header sorted as
 * "name:value", then the resource with its sorted parameters.
 * Return: the length written (truncated to @max - 1), -1 on error.
 */
int sls_string_to_sign_v1(const struct sls_request *rq, char *out, size_t max);

/**
 * sls_sign_v1() - "LOG AK:base64(HMAC-SHA1(secret, string to sign))" into
 * @auth. The headers must already hold Content-MD5, Content-Type, Date and
 * x-log-signaturemethod. Return: 0 or -1.
 */
int sls_sign_v1(const struct sls_request *rq, const char *key_id, const char *secret,
		char *auth, size_t auth_max);

#endif /* NET_SLS_H */
