/* SPDX-License-Identifier: MIT */
/*
 * aws.h - AWS credentials as the SDKs find them: the environment, then the
 * shared credentials file. Only the transport holds them, only while it
 * signs; they are wiped after use and never logged or spooled.
 */
#ifndef NET_AWS_H
#define NET_AWS_H

struct aws_creds {
	char key_id[128];
	char secret[256];
	char session_token[4096];
};

/**
 * aws_creds_find() - AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN, else the [AWS_PROFILE or default] section of
 * $AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials.
 * Return: 0 with @c filled, -1 if none were found, -2 (said) if one holds
 * a control byte (it would add header lines).
 */
int aws_creds_find(struct aws_creds *c);

/**
 * aliyun_creds_find() - ALIBABA_CLOUD_ACCESS_KEY_ID,
 * ALIBABA_CLOUD_ACCESS_KEY_SECRET and ALIBABA_CLOUD_SECURITY_TOKEN (the
 * same struct: key id, secret, token). Return: 0, -1 if unset, or -2
 * (said) if one holds a control byte.
 */
int aliyun_creds_find(struct aws_creds *c);

#endif /* NET_AWS_H */
