/* SPDX-License-Identifier: MIT */
/*
 * net.h - the one place that talks HTTP (libcurl), for every plugin: TLS
 * always verified, timeouts, proxies from the environment, retries with
 * backoff and jitter (connection errors, 5xx, 429 with Retry-After), AWS
 * SigV4 signing with credentials the host finds itself, and a spool where a
 * request whose retries ran out is kept, to be sent again by `perfport
 * resend`. Secrets never reach a log, the spool or the plugins.
 */
#ifndef NET_NET_H
#define NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How requests are sent (the command line's --spool, --ca-file, ...). */
struct net_config {
	const char *spool_dir;       /* NULL: $XDG_STATE_HOME/perfport/spool */
	const char *ca_file;         /* NULL: the system's CA store */
	long connect_timeout_s;      /* 0: 10 */
	long timeout_s;              /* 0: 60 */
	unsigned max_attempts;       /* 0: 5 */
	unsigned backoff_ms;         /* first retry delay (0: 500); doubles, with jitter */
	/* net_resend() stops at the first entry it could not deliver: the
	 * later ones stay behind it, so a backend gets them in order */
	bool resend_in_order;
};

/** net_configure() - set how requests are sent (copied; strings must live on). */
void net_configure(const struct net_config *cfg);

struct net_request {
	const char *method;          /* "POST", "PUT", "GET" */
	const char *url;
	const char *const *headers;  /* "Name: value", NULL-terminated, or NULL; no secrets */
	const void *body;
	size_t body_len;
	const char *aws_sigv4;       /* "aws:amz:REGION:SERVICE" to sign, or NULL */
	const char *spool_tag;       /* keep it in the spool if it cannot be sent; NULL: don't */
	const char *sls_sign;        /* "v4:REGION" or "v1" to sign for SLS, or NULL */
	bool grpc;                   /* a gRPC call over HTTP/2; see perfport_http_request.grpc */
	const char *secret_header;   /* "Name=ENV": header Name from $ENV at send time, or NULL */
	bool body_in_fd;             /* the body is read from body_fd (body_len bytes from
				      * its start, on each attempt), not from body */
	int body_fd;
};

struct net_response {
	long status;                 /* HTTP status; 0: no response */
	char *body;                  /* NUL-terminated, owned by the caller (free()) */
	size_t body_len;
	bool spooled;                /* kept in the spool to be sent again */
	int grpc_status;             /* grpc-status of a gRPC call; -1: none */
};

/** net_attempts() - how many attempts a request gets (--retries; default 5). */
unsigned net_attempts(void);

/**
 * net_backoff_ms() - how long to wait after failed attempt @n (from 1)
 * before the next: exponential from the configured backoff, capped at 30 s,
 * with jitter. For anything retried the way the transport retries.
 */
unsigned long net_backoff_ms(unsigned n);

/** net_sleep_ms() - wait @ms milliseconds (resumed across signals). */
void net_sleep_ms(unsigned long ms);

/**
 * net_send() - send @rq, retrying what may succeed later. The final
 * response lands in @rs (free rs->body). Return: PP_OK for a 2xx; PP_EIO
 * otherwise (logged with the server's message), after spooling @rq when it
 * has a spool_tag and the failure was not the request's own fault (4xx
 * other than 429).
 */
int net_send(const struct net_request *rq, struct net_response *rs);

/* What net_resend() did. */
struct net_resend_stats {
	const char *dir;             /* the spool read (static or the caller's) */
	bool exists;                 /* false: no such directory, nothing was ever spooled */
	unsigned delivered, kept;
};

/**
 * net_resend() - send every spooled request in @dir (NULL: the default
 * spool) again, signing afresh; an entry is removed only once it was
 * delivered. @st (may be NULL) receives the counts.
 * Return: PP_OK if all were delivered (or none was spooled), else PP_EIO.
 */
int net_resend(const char *dir, struct net_resend_stats *st);

/**
 * net_guard() - while on, SIGINT, SIGTERM and SIGHUP stop the uploads
 * instead of the process: the request in flight ends, it and every later
 * one are kept in the spool (their own failures aside) and not sent.
 * Off restores the handlers there were; the caller then ends the process
 * with the signal (net_stopped()), once what it printed is out.
 */
void net_guard(bool on);

/**
 * net_spool_trim() - drop the oldest entries of the spool @dir (NULL: the
 * one in use) until what it holds is at most @max_bytes; *@dropped says
 * how many went (each counted lost). Return: PP_OK, PP_EIO, PP_ENOMEM.
 */
int net_spool_trim(const char *dir, uint64_t max_bytes, unsigned *dropped);

/**
 * net_defer() - while on, net_send() sends nothing: each request that may
 * be spooled goes straight to the spool (net_resend() sends it later, in
 * the order of the spool's names), the others are lost; for a caller that
 * keeps its uploads in order while earlier ones wait in the spool.
 */
void net_defer(bool on);

/** net_deferring() - whether net_defer() is on: a failed upload was put off, not lost. */
bool net_deferring(void);

/** net_stopped() - the signal that stopped the uploads, 0 none. */
int net_stopped(void);

/**
 * net_stop() - stop the uploads by @sig, as a signal does while they are
 * guarded (net_guard()): the request in flight ends, it and every later
 * one are kept in the spool, not sent. Async-signal-safe: for a signal
 * taker of the caller's own. The caller ends the process with the signal.
 */
void net_stop(int sig);

/** net_spooled() - how many requests were kept in the spool so far. */
unsigned net_spooled(void);

/**
 * net_kept_unsent() - how many of net_spooled() were kept without being
 * tried, a stop having come (net_stop()): each said nothing of its own.
 */
unsigned net_kept_unsent(void);

/** net_lost() - how many requests failed and were not kept in the spool. */
unsigned net_lost(void);

/**
 * net_answers() - whether the server at @url answers an HTTP request within
 * @timeout_ms (any status: it is there and not stalled), for probing a
 * service before handing its URL to a library that would wait longer.
 */
bool net_answers(const char *url, long timeout_ms);

/** net_delivered() - how many requests were delivered so far, and their bodies' bytes. */
void net_delivered(unsigned *requests, uint64_t *bytes);

/** net_spool_dir() - the spool directory in use (static or from config). */
const char *net_spool_dir(void);

/**
 * net_spool_refused() - may the spool @dir (NULL: the one in use) not be
 * used: a link, not a directory, another user's or writable by others?
 * Said as an error naming it and what to do. Absent is fine (made 0700).
 */
bool net_spool_refused(const char *dir);

#endif /* NET_NET_H */
