/* SPDX-License-Identifier: MIT */
/*
 * crypto.h - the digests and HMACs that sign requests, from OpenSSL's
 * libcrypto loaded with dlopen() the first time one is asked for: linked,
 * it would be mapped and relocated at the start of every command (127 page
 * faults, ~2.5 ms on the PVM guest of issue 34), and only uploads sign.
 */
#ifndef NET_CRYPTO_H
#define NET_CRYPTO_H

#include <stddef.h>

enum crypto_md { CRYPTO_MD5, CRYPTO_SHA1, CRYPTO_SHA256 };

/**
 * crypto_digest() - the @md digest of @len bytes at @data into @out (room
 * for @want bytes: 16, 20 or 32).
 * Return: 0, or -1 (libcrypto cannot be loaded: said once; or it failed).
 */
int crypto_digest(enum crypto_md md, const void *data, size_t len, unsigned char *out,
		  size_t want);

/**
 * crypto_hmac() - HMAC-@md of @mlen bytes at @msg under the @klen-byte
 * @key into @out (room for @want bytes). Return: as crypto_digest().
 */
int crypto_hmac(enum crypto_md md, const void *key, size_t klen, const void *msg, size_t mlen,
		unsigned char *out, size_t want);

/**
 * crypto_base64() - @n bytes at @in in base64 into @out (room for
 * 4 * ((n + 2) / 3) + 1 bytes, NUL-terminated).
 * Return: the length written, or -1 as crypto_digest().
 */
int crypto_base64(char *out, const unsigned char *in, size_t n);

#endif /* NET_CRYPTO_H */
