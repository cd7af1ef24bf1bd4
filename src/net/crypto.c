/* SPDX-License-Identifier: MIT */
/*
 * crypto.c - libcrypto's digests and HMAC, loaded when first used
 * (crypto.h).
 */
#include <dlfcn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../util/log.h"
#include "crypto.h"

static struct {
	bool ok;
	__typeof__(EVP_Digest) *digest;
	__typeof__(HMAC) *hmac;
	__typeof__(EVP_md5) *md5;
	__typeof__(EVP_sha1) *sha1;
	__typeof__(EVP_sha256) *sha256;
	__typeof__(EVP_EncodeBlock) *base64;
} lcr;

static pthread_once_t lcr_once = PTHREAD_ONCE_INIT;

static void crypto_load(void)
{
	static const char *const names[] = { "libcrypto.so.3", "libcrypto.so" };
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pp_error("cannot load libcrypto to sign requests: %s (apt-get install libssl3)",
			 dlerror());
		return;
	}
#define CRYPTO_SYM(field, name) \
	(*(void **)&lcr.field = dlsym(h, name)) != NULL
	lcr.ok = CRYPTO_SYM(digest, "EVP_Digest") && CRYPTO_SYM(hmac, "HMAC") &&
		 CRYPTO_SYM(md5, "EVP_md5") && CRYPTO_SYM(sha1, "EVP_sha1") &&
		 CRYPTO_SYM(sha256, "EVP_sha256") && CRYPTO_SYM(base64, "EVP_EncodeBlock");
#undef CRYPTO_SYM
	if (!lcr.ok)
		pp_error("the libcrypto found lacks a function perfport uses: %s", dlerror());
}

/* Is libcrypto loaded (now, if not yet)? */
static bool loaded(void)
{
	pthread_once(&lcr_once, crypto_load);
	return lcr.ok;
}

/* The EVP_MD of @md, libcrypto loaded; NULL when it cannot be. */
static const EVP_MD *md_of(enum crypto_md md)
{
	if (!loaded())
		return NULL;
	switch (md) {
	case CRYPTO_MD5: return lcr.md5();
	case CRYPTO_SHA1: return lcr.sha1();
	case CRYPTO_SHA256: return lcr.sha256();
	}
	return NULL;
}

int crypto_digest(enum crypto_md md, const void *data, size_t len, unsigned char *out,
		  size_t want)
{
	const EVP_MD *m = md_of(md);
	unsigned char buf[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!m || !lcr.digest(data, len, buf, &n, m, NULL) || n != want)
		return -1;
	memcpy(out, buf, n);
	return 0;
}

int crypto_base64(char *out, const unsigned char *in, size_t n)
{
	if (!loaded() || n > (size_t)INT32_MAX / 2)
		return -1;
	return lcr.base64((unsigned char *)out, in, (int)n);
}

int crypto_hmac(enum crypto_md md, const void *key, size_t klen, const void *msg, size_t mlen,
		unsigned char *out, size_t want)
{
	const EVP_MD *m = md_of(md);
	unsigned char buf[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int ret = -1;

	if (m && klen <= (size_t)INT32_MAX && lcr.hmac(m, key, (int)klen, msg, mlen, buf, &n) &&
	    n == want) {
		memcpy(out, buf, n);
		ret = 0;
	}
	explicit_bzero(buf, sizeof(buf)); /* a signing key's step, maybe */
	return ret;
}
