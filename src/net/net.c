/* SPDX-License-Identifier: MIT */
/*
 * net.c - HTTP requests through libcurl: retries, signing, the spool.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"
#include "../util/error.h"
#include "../util/log.h"
#include "aws.h"
#include "crypto.h"
#include "net.h"
#include "sls.h"

static struct net_config config;
/* a SIGINT, SIGTERM or SIGHUP that came while uploads were guarded
 * (net_guard()): no request is sent from then on, each is spooled */
static volatile sig_atomic_t stop_signal;
static cleanup_taker stop_old;       /* the taker there was before net_guard() */
static bool guarded;
static unsigned spooled;
static unsigned kept_unsent;         /* of them, not tried: a stop had come (net_stop()) */
static unsigned lost;                /* requests that failed and were not kept */
static unsigned delivered_requests;  /* answered with success, and their bodies' bytes */
static uint64_t delivered_bytes;

unsigned net_spooled(void)
{
	return spooled;
}

unsigned net_kept_unsent(void)
{
	return kept_unsent;
}

unsigned net_lost(void)
{
	return lost;
}

/*
 * libcurl, loaded with dlopen() when the first request is made: linked,
 * its thirty-odd libraries (TLS, HTTP/2, LDAP, Kerberos...) would be
 * mapped and relocated at the start of every command, most of which never
 * send anything.
 */
static struct {
	bool tried, ok;
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption o, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO i, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} lc;

/* Load libcurl once. Return: false (said why) when it cannot be used. */
static bool curl_load(void)
{
	static const char *const names[] = { "libcurl.so.4", "libcurl.so" };
	void *h = NULL;

	if (lc.tried)
		return lc.ok;
	lc.tried = true;
	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pp_error("cannot load libcurl to send anything: %s (apt-get install libcurl4)",
			 dlerror());
		return false;
	}
#define CURL_SYM(field, name) \
	(*(void **)&lc.field = dlsym(h, name)) != NULL
	lc.ok = CURL_SYM(global_init, "curl_global_init") && CURL_SYM(easy_init, "curl_easy_init") &&
		CURL_SYM(easy_setopt, "curl_easy_setopt") &&
		CURL_SYM(easy_perform, "curl_easy_perform") &&
		CURL_SYM(easy_getinfo, "curl_easy_getinfo") &&
		CURL_SYM(easy_cleanup, "curl_easy_cleanup") &&
		CURL_SYM(easy_strerror, "curl_easy_strerror") &&
		CURL_SYM(slist_append, "curl_slist_append") &&
		CURL_SYM(slist_free_all, "curl_slist_free_all");
#undef CURL_SYM
	if (!lc.ok) {
		pp_error("the libcurl found lacks a function perfport uses: %s", dlerror());
		return false;
	}
	lc.global_init(CURL_GLOBAL_DEFAULT);
	return true;
}

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

bool net_answers(const char *url, long timeout_ms)
{
	CURL *c = curl_load() ? lc.easy_init() : NULL;
	long status = 0;
	CURLcode r;

	if (!c)
		return false;
	lc.easy_setopt(c, CURLOPT_URL, url);
	lc.easy_setopt(c, CURLOPT_NOBODY, 1L);
	lc.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	r = lc.easy_perform(c);
	if (r == CURLE_OK)
		lc.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	lc.easy_cleanup(c);
	return r == CURLE_OK && status > 0;
}

void net_delivered(unsigned *requests, uint64_t *bytes)
{
	*requests = delivered_requests;
	*bytes = delivered_bytes;
}

void net_configure(const struct net_config *cfg)
{
	config = *cfg;
}

const char *net_spool_dir(void)
{
	static char dir[PATH_MAX];
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (config.spool_dir)
		return config.spool_dir;
	if (state && *state)
		snprintf(dir, sizeof(dir), "%s/perfport/spool", state);
	else
		snprintf(dir, sizeof(dir), "%s/.local/state/perfport/spool", home ? home : "/tmp");
	return dir;
}

/* --- one attempt --- */

/* What is kept of a reply: the services answer in kilobytes; a server
 * that streams without end is cut off here. */
#define REPLY_MAX (4u << 20)

/* libcurl's body callback: into a struct buf, at most REPLY_MAX bytes
 * (beyond that the transfer is aborted: a write error) */
static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct buf *b = ctx;

	if (b->len + size * n > REPLY_MAX)
		return 0;
	return buf_add(ctx, data, size * n) ? size * n : 0;
}

/* What the response headers (and HTTP/2 trailers) say beyond the status. */
struct head {
	long retry_after;            /* seconds; -1: none */
	int grpc_status;             /* -1: none */
	char grpc_message[200];      /* percent-decoded */
};

/* Header value @name (with the colon) at @data, or NULL. */
static const char *header_value(const char *data, size_t len, const char *name)
{
	size_t n = strlen(name);
	const char *v;

	if (len <= n || strncasecmp(data, name, n) != 0)
		return NULL;
	for (v = data + n; *v == ' ' || *v == '\t'; v++)
		;
	return v;
}

static void percent_decode(const char *v, size_t len, char *out, size_t max)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < max; i++) {
		if (v[i] == '%' && i + 2 < len && isxdigit((unsigned char)v[i + 1]) &&
		    isxdigit((unsigned char)v[i + 2])) {
			char hex[3] = { v[i + 1], v[i + 2], 0 };

			out[o++] = (char)strtol(hex, NULL, 16);
			i += 2;
		} else {
			out[o++] = v[i] == '\r' || v[i] == '\n' ? ' ' : v[i];
		}
	}
	out[o] = 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct head *h = ctx;
	size_t len = size * n;
	const char *v;

	if ((v = header_value(data, len, "Retry-After:")) && isdigit((unsigned char)*v))
		h->retry_after = strtol(v, NULL, 10);
	else if ((v = header_value(data, len, "grpc-status:")) && isdigit((unsigned char)*v))
		h->grpc_status = (int)strtol(v, NULL, 10);
	else if ((v = header_value(data, len, "grpc-message:")))
		percent_decode(v, len - (size_t)(v - data), h->grpc_message, sizeof(h->grpc_message));
	return len;
}

/*
 * The headers an SLS request is signed with, added to @hdrs: Host,
 * Content-MD5 (upper-case hex MD5 of the body), Date, the security token,
 * then v4's x-log-content-sha256 and x-log-date or v1's
 * x-log-signaturemethod, and Authorization. Return: the list, NULL on error.
 */
static struct curl_slist *sls_headers(const struct net_request *rq, const struct aws_creds *cr,
				      struct curl_slist *hdrs)
{
	static char names[40][128];    /* the request's header names, split off */
	struct sls_kv kv[48];
	char host[300] = "", md5[33], date[64], xdate[20], scratch[96], auth[512], line[4600];
	char path[2048], query[2048] = "", *q;
	struct sls_kv params[16];
	unsigned char md[16];
	size_t nkv = 0, np = 0;
	const char *p, *slash;
	struct tm tm;
	time_t now = time(NULL);
	struct sls_request sr;
	int ret;

	/* host[:port] and path?query from the URL */
	p = strstr(rq->url, "://");
	p = p ? p + 3 : rq->url;
	slash = strchr(p, '/');
	snprintf(host, sizeof(host), "%.*s", (int)(slash ? slash - p : (long)strlen(p)), p);
	snprintf(path, sizeof(path), "%s", slash ? slash : "/");
	q = strchr(path, '?');
	if (q) {
		*q = 0;
		snprintf(query, sizeof(query), "%s", q + 1);
		for (char *save = NULL, *kvp = strtok_r(query, "&", &save); kvp && np < 16;
		     kvp = strtok_r(NULL, "&", &save)) {
			char *eq = strchr(kvp, '=');

			if (eq)
				*eq = 0;
			params[np++] = (struct sls_kv){ kvp, eq ? eq + 1 : "" };
		}
	}
	if (crypto_digest(CRYPTO_MD5, rq->body ? rq->body : "", rq->body_len, md, 16))
		return NULL;
	for (int i = 0; i < 16; i++)
		sprintf(md5 + 2 * i, "%02X", md[i]);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	strftime(xdate, sizeof(xdate), "%Y%m%dT%H%M%SZ", &tm);
	/* the request's own headers ("Name: value") */
	for (size_t i = 0; rq->headers && rq->headers[i] && nkv < 40; i++) {
		const char *colon = strchr(rq->headers[i], ':');
		if (!colon)
			continue;
		snprintf(names[nkv], sizeof(names[nkv]), "%.*s", (int)(colon - rq->headers[i]),
			 rq->headers[i]);
		for (colon++; *colon == ' '; colon++)
			;
		kv[nkv].key = names[nkv];
		kv[nkv].value = colon;
		nkv++;
	}
	kv[nkv++] = (struct sls_kv){ "Host", host };
	kv[nkv++] = (struct sls_kv){ "Content-MD5", md5 };
	kv[nkv++] = (struct sls_kv){ "Date", date };
	if (cr->session_token[0])
		kv[nkv++] = (struct sls_kv){ "x-acs-security-token", cr->session_token };
	if (!strcmp(rq->sls_sign, "v1"))
		kv[nkv++] = (struct sls_kv){ "x-log-signaturemethod", "hmac-sha1" };
	sr = (struct sls_request){ .method = rq->method, .resource = path, .params = params,
				   .nr_params = np, .headers = kv, .nr_headers = nkv,
				   .max_headers = 48, .body = rq->body, .body_len = rq->body_len };
	if (!strncmp(rq->sls_sign, "v4:", 3))
		ret = sls_sign_v4(&sr, cr->key_id, cr->secret, rq->sls_sign + 3, xdate, scratch, auth,
				  sizeof(auth));
	else
		ret = sls_sign_v1(&sr, cr->key_id, cr->secret, auth, sizeof(auth));
	if (ret)
		return NULL;
	/* every header the signers added; the request's own are in the list */
	for (size_t i = 0; i < sr.nr_headers; i++) {
		bool own = false;

		for (size_t k = 0; rq->headers && rq->headers[k] && !own; k++)
			own = !strncasecmp(rq->headers[k], sr.headers[i].key, strlen(sr.headers[i].key)) &&
			      rq->headers[k][strlen(sr.headers[i].key)] == ':';
		if (own)
			continue;
		snprintf(line, sizeof(line), "%s: %s", sr.headers[i].key, sr.headers[i].value);
		hdrs = lc.slist_append(hdrs, line);
		if (strcasecmp(sr.headers[i].key, "x-acs-security-token"))
			pp_debug("> %s", line);
		else
			pp_debug("> x-acs-security-token: (redacted)");
	}
	snprintf(line, sizeof(line), "Authorization: %s", auth);
	hdrs = lc.slist_append(hdrs, line);
	pp_debug("> Authorization: %.*s (redacted)", (int)strcspn(auth, " "), auth);
	explicit_bzero(line, sizeof(line));
	explicit_bzero(auth, sizeof(auth));
	return hdrs;
}

/* One attempt. Return: the curl code; *status, what the headers said in
 * @h, the body in @b. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow);

/* A body streamed from a file descriptor (a spool entry's, on resend). */
static size_t read_body(char *buf, size_t size, size_t n, void *ctx)
{
	ssize_t r;

	do
		r = read(*(const int *)ctx, buf, size * n);
	while (r < 0 && errno == EINTR && !stop_signal);
	return r < 0 ? CURL_READFUNC_ABORT : (size_t)r;
}

static int seek_body(void *ctx, curl_off_t off, int origin)
{
	return lseek(*(const int *)ctx, (off_t)off, origin) < 0 ? CURL_SEEKFUNC_FAIL :
								  CURL_SEEKFUNC_OK;
}

static CURLcode attempt(const struct net_request *rq, const struct aws_creds *cr,
			const char *secret, long *status, struct head *h, struct buf *b)
{
	struct curl_slist *hdrs = NULL;
	char token[4200], userpwd[512];
	CURLcode rc = CURLE_OUT_OF_MEMORY;
	CURL *c = lc.easy_init();

	*status = 0;
	h->retry_after = -1;
	h->grpc_status = -1;
	h->grpc_message[0] = 0;
	if (!c)
		return rc;
	if (rq->grpc) {
		hdrs = lc.slist_append(hdrs, "Content-Type: application/grpc");
		hdrs = lc.slist_append(hdrs, "TE: trailers");
		lc.easy_setopt(c, CURLOPT_HTTP_VERSION, strncmp(rq->url, "http://", 7) == 0
				 ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
				 : (long)CURL_HTTP_VERSION_2TLS);
	}
	for (size_t i = 0; rq->headers && rq->headers[i]; i++) {
		hdrs = lc.slist_append(hdrs, rq->headers[i]);
		pp_debug("> %s", rq->headers[i]);
	}
	if (secret) {
		hdrs = lc.slist_append(hdrs, secret);
		pp_debug("> %.*s: (redacted, from $%s)", (int)strcspn(secret, ":"), secret,
			 strchr(rq->secret_header, '=') + 1);
	}
	if (rq->aws_sigv4)
		pp_debug("> Authorization: AWS4-HMAC-SHA256 Credential=(redacted) (SigV4 %s)",
			 rq->aws_sigv4);
	if (rq->aws_sigv4 && cr->session_token[0])
		pp_debug("> X-Amz-Security-Token: (redacted)");
	if (rq->aws_sigv4 && cr->session_token[0]) {
		snprintf(token, sizeof(token), "X-Amz-Security-Token: %s", cr->session_token);
		hdrs = lc.slist_append(hdrs, token);
	}
	if (rq->sls_sign) {
		struct curl_slist *signed_hdrs = sls_headers(rq, cr, hdrs);

		if (!signed_hdrs) {
			lc.slist_free_all(hdrs);
			lc.easy_cleanup(c);
			return CURLE_AUTH_ERROR;
		}
		hdrs = signed_hdrs;
	}
	lc.easy_setopt(c, CURLOPT_URL, rq->url);
	lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	lc.easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
	if (rq->body_in_fd) {
		/* streamed from its file, from the start on each attempt (never a
		 * signed request's: curl 7.88 hashes a read-callback body as empty) */
		lseek(rq->body_fd, 0, SEEK_SET);
		lc.easy_setopt(c, CURLOPT_POST, 1L);
		lc.easy_setopt(c, CURLOPT_READFUNCTION, read_body);
		lc.easy_setopt(c, CURLOPT_READDATA, (void *)&rq->body_fd);
		lc.easy_setopt(c, CURLOPT_SEEKFUNCTION, seek_body);
		lc.easy_setopt(c, CURLOPT_SEEKDATA, (void *)&rq->body_fd);
		lc.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
	} else if (rq->body) {
		/* curl 7.88 hashes a read-callback body as empty: POSTFIELDS it is */
		lc.easy_setopt(c, CURLOPT_POSTFIELDS, rq->body);
		lc.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
	}
	lc.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	if (rq->aws_sigv4) {
		snprintf(userpwd, sizeof(userpwd), "%s:%s", cr->key_id, cr->secret);
		lc.easy_setopt(c, CURLOPT_AWS_SIGV4, rq->aws_sigv4);
		lc.easy_setopt(c, CURLOPT_USERPWD, userpwd);
	}
	lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, config.connect_timeout_s ? config.connect_timeout_s : 10L);
	lc.easy_setopt(c, CURLOPT_TIMEOUT, config.timeout_s ? config.timeout_s : 60L);
	lc.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L); /* never off */
	lc.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (config.ca_file)
		lc.easy_setopt(c, CURLOPT_CAINFO, config.ca_file);
	lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	lc.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	lc.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	lc.easy_setopt(c, CURLOPT_WRITEDATA, b);
	lc.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	lc.easy_setopt(c, CURLOPT_HEADERDATA, h);
	lc.easy_setopt(c, CURLOPT_USERAGENT, "perfport");
	rc = lc.easy_perform(c);
	/* the status too when the reply broke off after it */
	lc.easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	explicit_bzero(userpwd, sizeof(userpwd));
	explicit_bzero(token, sizeof(token));
	lc.slist_free_all(hdrs);
	lc.easy_cleanup(c);
	return rc;
}

/* The server's "message" field, else the body's start, for errors. */
static void server_message(const char *body, char *out, size_t max)
{
	const char *m = body ? strstr(body, "\"message\"") : NULL;

	if (m && (m = strchr(m + 9, '"'))) {
		size_t n = strcspn(m + 1, "\"");

		snprintf(out, max, "%.*s", (int)(n < max ? n : max - 1), m + 1);
		return;
	}
	snprintf(out, max, "%.200s", body ? body : "");
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* Wait @ms, less if a stop signal comes. */
static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop_signal)
		;
}

/* util/cleanup.c's handler asks this first while uploads are guarded: the
 * signal stops them (a backoff's sleep ends at it), and the caller ends
 * the run by it once what it printed is out */
static bool take_stop(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
	return true;
}

void net_guard(bool on)
{
	if (on == guarded)
		return;
	/* a taker, not a handler of its own: a cleanup registered during the
	 * uploads (an output's temporary) replaces nothing, and nothing is
	 * restored over its handler after them */
	if (on)
		stop_old = cleanup_take_signals(take_stop);
	else
		cleanup_take_signals(stop_old);
	guarded = on;
}

int net_stopped(void)
{
	return stop_signal;
}

void net_stop(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
}

/* libcurl's progress callback: a stop signal ends the transfer. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)ctx;
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return stop_signal != 0;
}

static unsigned jitter(unsigned max)
{
	unsigned r = 0;

	if (!max || getrandom(&r, sizeof(r), 0) != sizeof(r))
		return 0;
	return r % max;
}

static int spool(const struct net_request *rq, bool quiet);

unsigned net_attempts(void)
{
	return config.max_attempts ? config.max_attempts : 5;
}

unsigned long net_backoff_ms(unsigned n)
{
	unsigned backoff = config.backoff_ms ? config.backoff_ms : 500;
	unsigned long wait = (unsigned long)backoff << (n <= 1 ? 0 : n > 17 ? 16 : n - 1);

	return (wait > 30000 ? 30000 : wait) + jitter(backoff);
}

void net_sleep_ms(unsigned long ms)
{
	sleep_ms(ms);
}

/*
 * The header line a secret_header spec ("Name=ENV") stands for, with the
 * variable read now; a new string (zero it before freeing), or NULL (logged).
 */
/* The variables perfport signs requests with (aws.c): the signature goes
 * out, never they. */
static bool is_credential(const char *var)
{
	static const char *const creds[] = {
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
		"ALIBABA_CLOUD_SECURITY_TOKEN",
	};

	for (size_t i = 0; i < sizeof(creds) / sizeof(creds[0]); i++)
		if (!strcmp(var, creds[i]))
			return true;
	return false;
}

static char *secret_line(const char *spec)
{
	const char *eq = strchr(spec, '='), *v;
	size_t nlen = eq ? (size_t)(eq - spec) : 0;
	char *line;

	if (!nlen || nlen > 128 || !eq[1] || strlen(eq + 1) > 128 ||
	    strspn(spec, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != nlen ||
	    strspn(eq + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
		    strlen(eq + 1)) {
		pp_error("'%s' is not a secret header: Name=ENV_VAR", spec);
		return NULL;
	}
	if (is_credential(eq + 1)) {
		pp_error("'%s' is a credential perfport signs with, never sent as a header "
			 "(%.*s)", eq + 1, (int)nlen, spec);
		return NULL;
	}
	v = getenv(eq + 1);
	if (!v || !*v) {
		pp_error("'%s' is not set: the request's %.*s header comes from it", eq + 1,
			 (int)nlen, spec);
		return NULL;
	}
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			pp_error("'%s' holds a control character: not sent as a header", eq + 1);
			return NULL;
		}
	line = malloc(nlen + 2 + strlen(v) + 1);
	if (line)
		sprintf(line, "%.*s: %s", (int)nlen, spec, v);
	return line;
}

/* Equal, in a time that does not depend on where they differ. */
static int differs_ct(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d;
}

/*
 * The seal of a spooled request's secret header @spec ("Name=ENV"):
 * HMAC-SHA256 of the method, the URL and @spec under $ENV's value, in
 * base64, into @out (64 bytes). Only who holds the value can make it; it
 * does not give the value away. Return: 0, or -1 (said).
 */
static int secret_seal(const char *method, const char *url, const char *spec, char *out)
{
	const char *eq = strchr(spec, '='), *v = eq ? getenv(eq + 1) : NULL;
	unsigned char mac[32];
	char *msg = NULL;
	int len, ret = -1;

	if (eq && is_credential(eq + 1))
		return -1;  /* never a seal under a signing credential (the caller says) */
	if (!v || !*v) {
		pp_error("'%s' is not set: the spooled request's %.*s header comes from it",
			 eq ? eq + 1 : spec, (int)(eq ? eq - spec : 0), spec);
		return -1;
	}
	len = asprintf(&msg, "%s\n%s\n%s", method, url, spec);
	if (len >= 0 && !crypto_hmac(CRYPTO_SHA256, v, strlen(v), msg, (size_t)len, mac, 32) &&
	    crypto_base64(out, mac, 32) > 0)
		ret = 0;
	free(msg);
	explicit_bzero(mac, sizeof(mac));
	return ret;
}

static void secret_free(char *line)
{
	if (line) {
		explicit_bzero(line, strlen(line));
		free(line);
	}
}

static const char *grpc_status_name(int st)
{
	static const char *const names[] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
		"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
		"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
		"UNAUTHENTICATED",
	};

	if (st < 0)
		return "no grpc-status";
	return (size_t)st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

/*
 * Why @rq may not be sent at all (its own fault: not spooled either), NULL
 * when it may: an http:// or https:// URL without a user or password in it
 * (printed and spooled, it would leak), headers without control bytes (a
 * line break would add headers of its own).
 */
static bool has_control(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; c && *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return true;
	return false;
}

static const char *request_refused(const struct net_request *rq, char *buf, size_t len)
{
	const char *host;

	if (!rq->url || (strncmp(rq->url, "http://", 7) && strncmp(rq->url, "https://", 8)))
		return "its URL is not http:// or https://";
	/* the URL, the region and service signed: a line break in one (from
	 * AWS_REGION, say) would be a header line of its own */
	if (has_control(rq->url) || has_control(rq->aws_sigv4) || has_control(rq->sls_sign))
		return "its URL or signing scope holds a control byte (a line break would add "
		       "headers of its own)";
	host = rq->url + strcspn(rq->url, ":") + 3;
	if (memchr(host, '@', strcspn(host, "/?#")))
		return "its URL holds a user name or password (give credentials with the "
		       "format's secret header option, from the environment)";
	for (size_t i = 0; rq->headers && rq->headers[i]; i++)
		for (const unsigned char *c = (const unsigned char *)rq->headers[i]; *c; c++)
			if ((*c < 0x20 && *c != '\t') || *c == 0x7f) {
				snprintf(buf, len, "its header '%.*s' holds a control byte (a line break "
					 "would add headers of its own)",
					 (int)strcspn(rq->headers[i], ":"), rq->headers[i]);
				return buf;
			}
	return NULL;
}

/* @url for messages: a user or password in it shown as "***". */
static const char *url_shown(const char *url, char *buf, size_t len)
{
	const char *host = url ? strstr(url, "://") : NULL;
	size_t hl;
	const char *at;

	if (!host)
		return url ? url : "";
	host += 3;
	hl = strcspn(host, "/?#");
	at = memchr(host, '@', hl);
	if (!at)
		return url;
	snprintf(buf, len, "%.*s***%s", (int)(host - url), url, at);
	return buf;
}

static bool deferred;

void net_defer(bool on)
{
	deferred = on;
}

bool net_deferring(void)
{
	return deferred;
}

int net_send(const struct net_request *rq, struct net_response *rs)
{
	unsigned max = net_attempts();
	unsigned long timeout_ms = (unsigned long)(config.timeout_s ? config.timeout_s : 60L) * 1000;
	struct aws_creds cr = { 0 };
	char msg[256] = "", *secret = NULL;
	bool own_fault = false, untried = false;
	int r;

	memset(rs, 0, sizeof(*rs));
	rs->grpc_status = -1;
	{
		char why[256], shown[1024];
		const char *no = request_refused(rq, why, sizeof(why));

		if (no) {
			pp_error("%s %s: not sent: %s", rq->method,
				 url_shown(rq->url, shown, sizeof(shown)), no);
			lost++;
			return PP_EIO;
		}
	}
	/* after a stop each request is kept untried: the stop's one line
	 * (exporters_end_if_signalled()) says how many, not a line each */
	if (stop_signal) {
		snprintf(msg, sizeof(msg), "not sent: interrupted by %s", strsignal(stop_signal));
		untried = true;
		goto failed;
	}
	if (deferred) {
		char shown[1024];

		pp_info("%s %s: not sent now: kept in the spool behind the uploads waiting there",
			rq->method, url_shown(rq->url, shown, sizeof(shown)));
		goto failed;
	}
	if (!curl_load())
		goto failed; /* kept in the spool: resent once libcurl is there */
	if (rq->secret_header && !(secret = secret_line(rq->secret_header))) {
		own_fault = true;
		goto failed;
	}
	if (rq->aws_sigv4 && (r = aws_creds_find(&cr))) {
		if (r == -1)
			pp_error("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
			 "or configure ~/.aws/credentials (AWS_PROFILE)");
		own_fault = true;
		goto failed;
	}
	if (rq->sls_sign && (r = aliyun_creds_find(&cr))) {
		if (r == -1)
			pp_error("no Alibaba Cloud credentials: set ALIBABA_CLOUD_ACCESS_KEY_ID and "
			 "ALIBABA_CLOUD_ACCESS_KEY_SECRET");
		own_fault = true;
		goto failed;
	}
	for (unsigned n = 1; n <= max; n++) {
		struct buf b = { 0 };
		struct head h;
		long status;
		CURLcode rc = attempt(rq, &cr, secret, &status, &h, &b);
		unsigned long wait;

		pp_info("%s %s (%zu bytes): %s%ld", rq->method, rq->url, rq->body_len,
			rc == CURLE_OK ? "HTTP " : "", rc == CURLE_OK ? status : (long)rc);
		free(rs->body);
		rs->body = b.p;
		rs->body_len = b.len;
		rs->status = status;
		rs->grpc_status = h.grpc_status;
		if (rc == CURLE_OK && status >= 200 && status < 300 &&
		    (!rq->grpc || h.grpc_status == 0)) {
			explicit_bzero(&cr, sizeof(cr));
			secret_free(secret);
			delivered_requests++;
			delivered_bytes += rq->body_len;
			return PP_OK;
		}
		if (rc != CURLE_OK && status >= 200 && status < 300) {
			/* the server took it (its status said so) and the reply
			 * broke off, or went on past REPLY_MAX: sending it again
			 * would deliver it twice */
			if (!rq->grpc) {
				pp_warn("%s %s: HTTP %ld, then the reply %s: taken as delivered",
					rq->method, rq->url, status,
					rc == CURLE_WRITE_ERROR ? "went on past 4 MiB" : "broke off");
				explicit_bzero(&cr, sizeof(cr));
				secret_free(secret);
				delivered_requests++;
				delivered_bytes += rq->body_len;
				return PP_OK;
			}
			snprintf(msg, sizeof(msg), "HTTP %ld, then the reply %s before the call's outcome: "
				 "not sent again (it may have been taken)", status,
				 rc == CURLE_WRITE_ERROR ? "went on past 4 MiB" : "broke off");
			own_fault = true;
			break;
		}
		if (rc == CURLE_OK && rq->grpc && status == 200) {
			/* the call's own outcome: retry what a busy or restarting server says */
			snprintf(msg, sizeof(msg), "gRPC status %d (%s)%s%s", h.grpc_status,
				 grpc_status_name(h.grpc_status), *h.grpc_message ? ": " : "",
				 h.grpc_message);
			/* no grpc-status: the reply ended before the call's outcome,
			 * which may have been taken - not sent again */
			if (h.grpc_status < 0 || (h.grpc_status != 14 && h.grpc_status != 4 &&
						  h.grpc_status != 8)) {
				own_fault = true;
				break;
			}
		} else if (rc != CURLE_OK && stop_signal) {
			snprintf(msg, sizeof(msg), "interrupted by %s", strsignal(stop_signal));
			break;
		} else if (rc != CURLE_OK) {
			snprintf(msg, sizeof(msg), "%s", lc.easy_strerror(rc));
		} else {
			char sm[200];

			server_message(b.p, sm, sizeof(sm));
			snprintf(msg, sizeof(msg), "HTTP %ld%s%s", status, *sm ? ": " : "", sm);
			if (status >= 400 && status < 500 && status != 429) {
				own_fault = true; /* sending it again would not help */
				break;
			}
		}
		if (n == max || stop_signal)
			break;
		wait = net_backoff_ms(n);
		/* a server's Retry-After is honoured up to --timeout: one
		 * request never waits longer in all than its attempts could last */
		if (h.retry_after >= 0)
			wait = (unsigned long)h.retry_after * 1000;
		if (wait > timeout_ms)
			wait = timeout_ms;
		pp_warn("%s %s: %s; attempt %u of %u in %.1f s", rq->method, rq->url, msg, n + 1, max,
			wait / 1000.0);
		sleep_ms(wait);
		if (stop_signal) {
			snprintf(msg, sizeof(msg), "interrupted by %s", strsignal(stop_signal));
			break;
		}
	}
failed:
	explicit_bzero(&cr, sizeof(cr));
	secret_free(secret);
	if (*msg && !untried)
		pp_error("%s %s: %s", rq->method, rq->url, msg);
	rs->spooled = rq->spool_tag && !own_fault && spool(rq, untried) == PP_OK;
	if (untried && !rs->spooled)
		pp_error("%s %s: %s", rq->method, rq->url, msg);
	if (!rs->spooled)
		lost++;
	kept_unsent += untried && rs->spooled;
	return PP_EIO;
}

/* --- the spool --- */

/* entries are resent in the order of their names: the time, then this
 * process's count, so that two kept in one millisecond keep their order */
static unsigned spool_seq;

/*
 * Why the spool @dir may not be used, NULL when it may: its entries name
 * URLs and the variables secrets come from, so nobody else may write it -
 * it is a directory (not a link), this user's, writable by none other.
 */
static const char *spool_unsafe(const char *dir, char *buf, size_t len)
{
	struct stat st;

	if (lstat(dir, &st))
		return NULL;        /* not there: made 0700 when needed */
	if (!S_ISDIR(st.st_mode))
		return S_ISLNK(st.st_mode) ? "it is a symbolic link" : "it is not a directory";
	if (st.st_uid != geteuid()) {
		snprintf(buf, len, "it is owned by another user (uid %u)", (unsigned)st.st_uid);
		return buf;
	}
	if (st.st_mode & 022)
		return "it is writable by other users";
	return NULL;
}

/* spool_unsafe(), said: an error naming what to do. */
static bool spool_refused(const char *dir)
{
	char buf[128];
	const char *why = spool_unsafe(dir, buf, sizeof(buf));

	if (why)
		pp_error("the spool '%s' is refused: %s (make it this user's, mode 0700, or give "
			 "--spool DIR)", dir, why);
	return why != NULL;
}

bool net_spool_refused(const char *dir)
{
	return spool_refused(dir ? dir : net_spool_dir());
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0700) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(tmp, 0700) && errno != EEXIST ? -1 : 0;
}

static bool write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	const char *p = data;
	size_t done = 0;
	bool ok = fd >= 0;

	while (ok && done < len) {
		ssize_t w = write(fd, p + done, len - done);

		if (w <= 0)
			ok = false;
		else
			done += (size_t)w;
	}
	if (fd >= 0) {
		ok = ok && fsync(fd) == 0;
		ok = close(fd) == 0 && ok;
	}
	return ok;
}

/* Remove an entry directory and its two files (the names it may hold). */
static void remove_entry(const char *entry)
{
	char file[PATH_MAX + 16];

	snprintf(file, sizeof(file), "%s/request", entry);
	unlink(file);
	snprintf(file, sizeof(file), "%s/body", entry);
	unlink(file);
	rmdir(entry);
}

/*
 * An entry is a directory: "request" (method, URL, signing spec, one header
 * per line; never a credential; then the body's size and "end") and "body"
 * (the exact bytes). It is written under a hidden name and renamed whole,
 * so a kill or a full disk leaves no half entry that a resend would take;
 * "end" and the size tell a damaged one.
 */
static int spool(const struct net_request *rq, bool quiet)
{
	const char *dir = net_spool_dir();
	char path[PATH_MAX], tmp[PATH_MAX], file[PATH_MAX + 16], *text = NULL;
	struct timespec now;
	size_t tlen = 0;
	FILE *f;
	int tries = 0;

	if (spool_refused(dir))
		return PP_EIO;
	if (mkdirs(dir)) {
		pp_error("cannot keep the request in the spool '%s': %s", dir, strerror(errno));
		return PP_EIO;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(tmp, sizeof(tmp), "%s/.new-%lld%03ld-%d-%04x", dir, (long long)now.tv_sec,
		 now.tv_nsec / 1000000, (int)getpid(), jitter(0x10000));
	if (mkdir(tmp, 0700)) {
		pp_error("cannot keep the request in the spool '%s': %s", tmp, strerror(errno));
		return PP_EIO;
	}
	snprintf(file, sizeof(file), "%s/body", tmp);
	if (!write_file(file, rq->body ? rq->body : "", rq->body_len))
		goto fail;
	f = open_memstream(&text, &tlen);
	if (!f)
		goto fail;
	fprintf(f, "method %s\nurl %s\nsigv4 %s\nsls %s\n", rq->method, rq->url,
		rq->aws_sigv4 ? rq->aws_sigv4 : "-", rq->sls_sign ? rq->sls_sign : "-");
	if (rq->grpc)
		fputs("grpc 1\n", f);
	if (rq->secret_header) {
		/* the variable's name only, and a seal of the request under
		 * its value: an entry planted or edited, which cannot make the
		 * seal, never sends that secret to a URL of its own */
		char seal[64];

		if (secret_seal(rq->method, rq->url, rq->secret_header, seal)) {
			fclose(f);
			goto fail;
		}
		fprintf(f, "secret %s\nsecret-seal %s\n", rq->secret_header, seal);
	}
	for (size_t i = 0; rq->headers && rq->headers[i]; i++)
		fprintf(f, "header %s\n", rq->headers[i]);
	fprintf(f, "size %zu\nend\n", rq->body_len);
	if (fclose(f))
		goto fail;
	snprintf(file, sizeof(file), "%s/request", tmp);
	if (!write_file(file, text, tlen))
		goto fail;
	free(text);
	text = NULL;
	/* its name taken exclusively: a rename never replaces a directory
	 * that holds files */
	do {
		snprintf(path, sizeof(path), "%s/%lld%03ld-%06u-%s-%04x", dir, (long long)now.tv_sec,
			 now.tv_nsec / 1000000, spool_seq % 1000000, rq->spool_tag, jitter(0x10000));
	} while (rename(tmp, path) && (errno == EEXIST || errno == ENOTEMPTY) && ++tries < 16);
	if (tries == 16 || access(path, F_OK))
		goto fail;
	/* deferred on purpose: its caller resends it and says so; quiet:
	 * its caller counts it */
	if (deferred || quiet)
		pp_debug("the request was kept in '%s'", path);
	else if (config.spool_dir)  /* not the spool a plain 'perfport resend' reads */
		pp_warn("the request was kept in '%s'; 'perfport resend %s' sends it again", path, dir);
	else
		pp_warn("the request was kept in '%s'; 'perfport resend' sends it again", path);
	spool_seq++;
	spooled++;
	return PP_OK;
fail:
	pp_error("cannot keep the request in the spool '%s': %s", dir, strerror(errno));
	free(text);
	remove_entry(tmp);
	return PP_EIO;
}

/* A spool entry's request file, whole (at most REQUEST_MAX: a larger one
 * is no request perfport wrote), NUL-terminated; NULL if unreadable. */
#define REQUEST_MAX (1 << 20)
static char *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct buf b = { 0 };
	char chunk[65536];
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (!buf_add(&b, chunk, (size_t)n) || b.len > REQUEST_MAX) {
			b.err = true;
			break;
		}
	close(fd);
	if (n != 0 || b.err) {
		free(b.p);
		return NULL;
	}
	if (!b.p)
		b.p = calloc(1, 1);
	*len = b.len;
	return b.p;
}

/* An entry that cannot be sent as it is: moved aside, never sent. */
static void set_aside(const char *entry, const char *why)
{
	char aside[PATH_MAX + 16];
	const char *base = strrchr(entry, '/');

	snprintf(aside, sizeof(aside), "%.*s/damaged-%s", base ? (int)(base - entry) : 1,
		 base ? entry : ".", base ? base + 1 : entry);
	if (rename(entry, aside))
		pp_warn("'%s' %s and cannot be moved aside: %s", entry, why, strerror(errno));
	else
		pp_warn("'%s' %s: moved aside to '%s', not sent", entry, why, aside);
}

/* 0 sent, -1 failed (kept), 1 damaged (set aside) */
static int resend_one(const char *entry)
{
	char file[PATH_MAX + 16], *req, *save = NULL;
	void *map = NULL;
	struct stat bst;
	int bfd;
	const char *headers[64];
	size_t nh = 0, len, blen, size = SIZE_MAX;
	struct net_request rq = { 0 };
	struct net_response rs;
	bool end = false, sealed = true;
	const char *seal = NULL;
	int ret;

	snprintf(file, sizeof(file), "%s/request", entry);
	req = read_all(file, &len);
	snprintf(file, sizeof(file), "%s/body", entry);
	/* the body is not read into memory: streamed from its file, or (a
	 * signed request's, whose signature hashes it) mapped */
	bfd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (!req || bfd < 0 || fstat(bfd, &bst) || !S_ISREG(bst.st_mode)) {
		free(req);
		if (bfd >= 0)
			close(bfd);
		return 1;
	}
	blen = (size_t)bst.st_size;
	for (char *l = strtok_r(req, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "method ", 7))
			rq.method = l + 7;
		else if (!strncmp(l, "url ", 4))
			rq.url = l + 4;
		else if (!strncmp(l, "sigv4 ", 6))
			rq.aws_sigv4 = strcmp(l + 6, "-") ? l + 6 : NULL;
		else if (!strncmp(l, "sls ", 4))
			rq.sls_sign = strcmp(l + 4, "-") ? l + 4 : NULL;
		else if (!strcmp(l, "grpc 1"))
			rq.grpc = true;
		else if (!strncmp(l, "secret ", 7))
			rq.secret_header = l + 7;
		else if (!strncmp(l, "secret-seal ", 12))
			seal = l + 12;
		else if (!strncmp(l, "header ", 7) && nh < 63)
			headers[nh++] = l + 7;
		else if (!strncmp(l, "size ", 5))
			size = (size_t)strtoull(l + 5, NULL, 10);
		else if (!strcmp(l, "end"))
			end = true;
	}
	headers[nh] = NULL;
	rq.headers = headers;
	rq.body_len = blen;
	if (!rq.method || !rq.url || !end || size != blen) {
		free(req);
		close(bfd);
		return 1;          /* cut short: sent, it could go unsigned or half */
	}
	if (rq.aws_sigv4 || rq.sls_sign) {
		map = blen ? mmap(NULL, blen, PROT_READ, MAP_PRIVATE, bfd, 0) : NULL;
		if (map == MAP_FAILED) {
			free(req);
			close(bfd);
			return -1;
		}
		rq.body = map ? map : "";
	} else {
		rq.body_in_fd = true;
		rq.body_fd = bfd;
	}
	/* what perfport never writes: another scheme; a header's secret
	 * without the seal its value makes of this request (a planted entry
	 * naming OTLP_AUTHORIZATION sent it to the entry's own URL) */
	if (rq.secret_header) {
		const char *eq = strchr(rq.secret_header, '='), *v = eq ? getenv(eq + 1) : NULL;
		char want[64];

		if (eq && !is_credential(eq + 1) && (!v || !*v)) {
			/* nothing to check the seal with yet: kept, for a resend
			 * with the variable set */
			pp_error("'%s': '%s' is not set: its %.*s header comes from it; kept", entry,
				 eq + 1, (int)(eq - rq.secret_header), rq.secret_header);
			if (map && map != MAP_FAILED)
				munmap(map, blen);
			close(bfd);
			free(req);
			return -1;
		}
		sealed = seal && !secret_seal(rq.method, rq.url, rq.secret_header, want) &&
			 strlen(seal) == strlen(want) && !differs_ct(seal, want, strlen(want));
		explicit_bzero(want, sizeof(want));
	}
	if ((strncmp(rq.url, "http://", 7) && strncmp(rq.url, "https://", 8)) || !sealed) {
		const char *eq = rq.secret_header ? strchr(rq.secret_header, '=') : NULL;

		pp_error("'%s': %s: not sent", entry, eq && is_credential(eq + 1) ?
			 "it names a credential perfport signs with as a header's source" : !sealed ?
			 "its secret header is not sealed by the secret's value for this request "
			 "(an entry perfport did not write, or the secret changed since)" :
			 "its URL is not http:// or https://");
		ret = 2;
	} else {
		ret = net_send(&rq, &rs) == PP_OK ? 0 : -1;
		free(rs.body);
	}
	if (map && map != MAP_FAILED)
		munmap(map, blen);
	close(bfd);
	free(req);
	return ret;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Whether the entry directory @entry is whole: its request ends with "end",
 * and its body has the size it says. */
static bool entry_whole(const char *entry)
{
	char file[PATH_MAX + 16], *req, *line;
	size_t len, blen, size = SIZE_MAX;
	struct stat st;
	bool end = false;

	snprintf(file, sizeof(file), "%s/request", entry);
	req = read_all(file, &len);
	if (!req)
		return false;
	for (line = req; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (!strncmp(line, "size ", 5))
			size = (size_t)strtoull(line + 5, NULL, 10);
		else if (!strncmp(line, "end\n", 4) || !strcmp(line, "end"))
			end = true;
	}
	free(req);
	snprintf(file, sizeof(file), "%s/body", entry);
	blen = stat(file, &st) ? SIZE_MAX - 1 : (size_t)st.st_size;
	return end && size == blen;
}

/*
 * A hidden ".new-MS-PID-RAND" entry in @dir: one being written, or one whose
 * writer was killed before renaming it into place. Once its writer is gone,
 * a whole one is adopted (renamed as a spool entry, to be sent) and a part
 * one removed.
 */
static void adopt_new(const char *dir, const char *name)
{
	char path[PATH_MAX], to[PATH_MAX];
	const char *p = strchr(name + 5, '-'), *r;
	long pid = p ? strtol(p + 1, NULL, 10) : 0;

	if (pid <= 0 || !(kill((pid_t)pid, 0) && errno == ESRCH))
		return;             /* its writer still runs */
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	r = strrchr(name, '-');
	if (!entry_whole(path)) {
		remove_entry(path);
		pp_warn("'%s': a spool entry whose writer was killed before it was whole: removed",
			path);
		return;
	}
	snprintf(to, sizeof(to), "%s/%.*s-adopted%s", dir, (int)(p - (name + 5)), name + 5,
		 r ? r : "");
	if (!rename(path, to))
		pp_warn("'%s': a whole spool entry whose writer was killed before it was put in "
			"place: adopted as '%s'", path, to);
}

int net_spool_trim(const char *dir, uint64_t max_bytes, unsigned *dropped)
{
	struct dirent **list;
	uint64_t *size, total = 0;
	int n;

	*dropped = 0;
	dir = dir ? dir : net_spool_dir();
	n = scandir(dir, &list, NULL, by_name);
	if (n < 0)
		return errno == ENOENT ? PP_OK : PP_EIO;
	size = calloc(n ? (size_t)n : 1, sizeof(*size));
	for (int i = 0; size && i < n; i++) {
		const char *name = list[i]->d_name;
		char file[PATH_MAX];
		struct stat st;

		if (name[0] == '.' || !strncmp(name, "damaged-", 8))
			continue;
		snprintf(file, sizeof(file), "%s/%s/body", dir, name);
		if (!stat(file, &st))
			size[i] += (uint64_t)st.st_size;
		snprintf(file, sizeof(file), "%s/%s/request", dir, name);
		if (!stat(file, &st))
			size[i] += (uint64_t)st.st_size;
		total += size[i];
	}
	/* the oldest first: their names begin with the time they were kept */
	for (int i = 0; size && i < n && total > max_bytes; i++) {
		char entry[PATH_MAX];

		if (!size[i])
			continue;
		snprintf(entry, sizeof(entry), "%s/%s", dir, list[i]->d_name);
		remove_entry(entry);
		total -= size[i];
		(*dropped)++;
		lost++;
	}
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	if (!size)
		return PP_ENOMEM;
	free(size);
	return PP_OK;
}

int net_resend(const char *dir, struct net_resend_stats *st)
{
	struct net_resend_stats mine;
	struct dirent **list;
	int n, ret = PP_OK;

	if (!st)
		st = &mine;
	memset(st, 0, sizeof(*st));
	st->dir = dir = dir ? dir : net_spool_dir();
	if (spool_refused(dir))
		return PP_EIO;
	n = scandir(dir, &list, NULL, by_name);
	if (n < 0) {
		if (errno == ENOENT)
			return PP_OK; /* nothing was ever spooled */
		pp_error("cannot read the spool '%s': %s", dir, strerror(errno));
		return PP_EIO;
	}
	st->exists = true;
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		char entry[PATH_MAX], claim[PATH_MAX];

		/* an entry whose writer died before it was renamed into
		 * place: adopted when whole, else removed */
		if (!strncmp(name, ".new-", 5))
			adopt_new(dir, name);
		/* a claim whose resend died: back in the spool */
		if (!strncmp(name, ".claim-", 7)) {
			long pid = strtol(name + 7, NULL, 10);
			const char *orig = strchr(name + 7, '-');

			if (pid > 0 && orig && kill((pid_t)pid, 0) && errno == ESRCH) {
				snprintf(claim, sizeof(claim), "%s/%s", dir, name);
				snprintf(entry, sizeof(entry), "%s/%s", dir, orig + 1);
				if (!rename(claim, entry))
					pp_warn("'%s': an interrupted resend's claim, back in the spool",
						entry);
			}
		}
		free(list[i]);
	}
	free(list);
	n = scandir(dir, &list, NULL, by_name);
	if (n < 0) {
		pp_error("cannot read the spool '%s': %s", dir, strerror(errno));
		return PP_EIO;
	}
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		char entry[PATH_MAX], claim[PATH_MAX];
		int r;

		if (name[0] == '.' || !strncmp(name, "damaged-", 8)) {
			free(list[i]);
			continue;
		}
		/* after a stop (net_stop()) the rest stay kept, untried */
		if (stop_signal) {
			st->kept++;
			ret = PP_EIO;
			free(list[i]);
			continue;
		}
		/* claimed by renaming: of two resends at once, one sends it */
		snprintf(entry, sizeof(entry), "%s/%s", dir, name);
		snprintf(claim, sizeof(claim), "%s/.claim-%d-%s", dir, (int)getpid(), name);
		if (rename(entry, claim)) {
			free(list[i]);
			continue;
		}
		r = resend_one(claim);
		if (r == 0) {
			remove_entry(claim);
			pp_info("'%s': delivered", entry);
			st->delivered++;
		} else if (r > 0) {
			rename(claim, entry);
			set_aside(entry, r == 2 ? "is refused" : "is damaged (cut short)");
			st->kept++;
			ret = PP_EIO;
		} else {
			if (rename(claim, entry))
				pp_warn("'%s': cannot be put back: %s", claim, strerror(errno));
			st->kept++;
			ret = PP_EIO;
			if (config.resend_in_order) {
				/* what comes after it waits behind it */
				for (int k = i + 1; k < n; k++) {
					if (list[k]->d_name[0] != '.' &&
					    strncmp(list[k]->d_name, "damaged-", 8))
						st->kept++;
					free(list[k]);
				}
				free(list[i]);
				break;
			}
		}
		free(list[i]);
	}
	free(list);
	return ret;
}
