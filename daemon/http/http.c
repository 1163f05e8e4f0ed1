/* http.c: the libmicrohttpd server: listening, limits, a request's steps from headers to answer. */
#include "http.h"
#include "http-int.h"
#include "api.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "serve.h"
#include "strbuf.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * Threads: libmicrohttpd's pool (one epoll loop per CPU) serves every
 * connection and runs the read routes inline: they are short queries,
 * answered through a pool of SQLite connections that keep their answers
 * (http-cache.c). Writes can be slow, so they go to one writer thread
 * (http-writer.c). Answers are gzipped for clients that accept it
 * (http-gzip.c); the dashboard's files come from http-file.c.
 */

/* ---- answers ---- */

int http_is_loopback(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		const unsigned char *b = in6->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return 1;
		return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && b[12] == 127;
	}
	return 0;
}

/* ---- requests ---- */

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind,
				   const char *key, const char *value)
{
	struct req_ctx *c = cls;

	if (c->req.nargs >= sizeof(c->names) / sizeof(c->names[0])) {
		c->too_big = 2; /* too many query arguments */
		return MHD_NO;
	}
	c->names[c->req.nargs] = key;
	c->values[c->req.nargs] = value;
	c->req.nargs++;
	return MHD_YES;
}

static void begin_request(struct req_ctx *c, const char *url,
			  const char *method)
{
	const union MHD_ConnectionInfo *ci;
	struct api_request *req = &c->req;

	req->method = method;
	req->path = url;
	req->arg_names = c->names;
	req->arg_values = c->values;
	MHD_get_connection_values(c->conn, MHD_GET_ARGUMENT_KIND, collect_arg,
				  c);
	req->authorization = MHD_lookup_connection_value(
		c->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	req->content_type = MHD_lookup_connection_value(
		c->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	c->gzip = http_accepts_gzip(MHD_lookup_connection_value(
		c->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	ci = MHD_get_connection_info(c->conn,
				     MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	req->loopback = ci && http_is_loopback(ci->client_addr);
	req->app = *c->srv->app;
	req->app.bc.db = NULL;
	req->app.bc.actor = "http";
}

static void too_big(struct http_server *s, struct api_response *res)
{
	api_error(res, 413, "too-big",
		  "the request body is over the limit of %zu bytes"
		  " (max_patch_bytes)",
		  s->max_body);
}

/* 400 for a body sent where none is taken. */
static void no_body(struct req_ctx *c, const char *method, const char *url)
{
	api_error(&c->res, 400, "bad-request",
		  "%s %.200s takes no body (a Content-Length over 0 or"
		  " Transfer-Encoding was sent)",
		  method, url);
}

/*
 * The request's headers are in: route, credentials and the body's kind
 * and length are decided now, so that a refused body is never read.
 * Reads without a body are answered here too (on the final call).
 */
static enum MHD_Result on_headers(struct req_ctx *c, const char *url,
				  const char *method, int has_body)
{
	struct http_server *s = c->srv;
	struct conn *db;
	int r;

	c->gzip = http_accepts_gzip(MHD_lookup_connection_value(
		c->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	if (strncmp(url, "/api/v1/", 8) && strcmp(url, "/api/v1")) {
		c->req.method = method;
		c->req.path = url;
		if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
			api_error(&c->res, 405, "method-not-allowed",
				  "%s %s: only GET and HEAD are served here",
				  method, url);
			strcpy(c->res.allow, "GET, HEAD");
		} else if (has_body) {
			no_body(c, method, url);
		} else {
			struct MHD_Response *kept = http_static_file(s, c, url);
			if (kept)
				return http_answer_kept(c, kept);
		}
		return http_send_answer(c);
	}
	c->api = 1;
	begin_request(c, url + 7, method);
	if (c->too_big == 2) {
		api_error(&c->res, 400, "bad-request",
			  "too many query arguments");
		return http_send_answer(c);
	}
	if (!(db = http_pool_get(s))) {
		api_error(&c->res, 503, "unavailable",
			  "the database cannot be opened");
		return http_send_answer(c);
	}
	c->req.app.bc.db = db->db;
	r = api_begin(&c->req, &c->res);
	if (!r && has_body && !api_takes_body(&c->req)) {
		no_body(c, method, url);
		r = 1;
	}
	if (!r && !c->req.is_write) {
		/* Reads are answered now, on this thread. */
		struct MHD_Response *kept = http_run_read(s, db, c);
		if (kept) {
			enum MHD_Result ret = http_answer_kept(c, kept);
			c->req.app.bc.db = NULL;
			http_pool_put(s, db);
			return ret;
		}
		r = 1;
	}
	c->req.app.bc.db = NULL;
	http_pool_put(s, db);
	if (r)
		return http_send_answer(c);
	if (c->length > (long long)s->max_body) {
		too_big(s, &c->res);
		return http_send_answer(c);
	}
	return MHD_YES;
}


static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct req_ctx *c = *con_cls;

	if (!c->begun) {
		int has_body = 0;
		c->begun = 1;
		c->version_len = version ? strlen(version) : 0;
		c->http10 = version && !strcmp(version, MHD_HTTP_VERSION_1_0);
		http_headers_parsed(c);
		c->req.method = method;
		c->req.path = url;
		if (http_check_headers(c, &has_body) < 0) {
			c->headers_done = c->close = 1;
			return http_send_answer(c);
		}
		/*
		 * An answer queued before the request is all in makes
		 * libmicrohttpd close the connection afterwards: reads
		 * without a body wait for the final call and keep their
		 * connection alive. Everything else is checked now (route,
		 * credentials, whether the route takes a body, the declared
		 * length) so that a refused body is never read.
		 */
		if (!has_body &&
		    (!strcmp(method, "GET") || !strcmp(method, "HEAD")))
			return MHD_YES;
		c->headers_done = 1;
		c->close = has_body;
		return on_headers(c, url, method, has_body);
	}
	if (*upload_size) {
		if (!c->too_big && c->body.len + *upload_size > s->max_body) {
			/* Read and drop the rest, then answer 413. */
			c->too_big = 1;
			strbuf_release(&c->body);
		}
		if (!c->too_big)
			strbuf_add(&c->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (c->sent)
		return MHD_NO; /* the daemon is stopping: it dropped the answer */
	c->close = 0; /* the body is all in */
	if (!c->headers_done) {
		c->headers_done = 1;
		return on_headers(c, url, method, 0);
	}
	if (c->answered)
		return http_send_answer(c); /* the writer is done */
	if (c->too_big) {
		too_big(s, &c->res);
		return http_send_answer(c);
	}
	return http_queue_write(c);
}

/*
 * The request line is in (its headers are not): the request's context is
 * made here, so that the raw URI can be looked at (libmicrohttpd hands
 * on_request() the path and query decoded, cut at a %00).
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct req_ctx *c = xcalloc(1, sizeof(*c));

	c->srv = cls;
	c->conn = conn;
	c->length = -1;
	strbuf_init(&c->body, 0);
	api_response_init(&c->res);
	c->nul_in_uri = uri && strstr(uri, "%00") != NULL;
	c->uri_len = uri ? strlen(uri) : 0;
	http_headers_parsing(c);
	return c;
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct req_ctx *c = *con_cls;

	http_limit_next(conn);
	if (!c)
		return;
	http_headers_parsed(c);
	strbuf_release(&c->body);
	api_response_release(&c->res);
	free(c->req.actor);
	free(c);
	*con_cls = NULL;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
				 socklen_t addrlen)
{
	return http_limit_accept(cls, addr);
}

static void on_connection(void *cls, struct MHD_Connection *conn,
			  void **socket_ctx, enum MHD_ConnectionNotificationCode toe)
{
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		http_limit_opened(cls, conn, socket_ctx);
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
		http_limit_closed(cls, socket_ctx);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	strbuf_rtrim(&sb);
	if (http_refuse_length(sb.buf))
		log_info("http: %s (answered 400, connection closed)", sb.buf);
	else
		log_warnx("http: %s", sb.buf);
	strbuf_release(&sb);
}

/*
 * "127.0.0.1:8080", "[::1]:8080", "localhost:8080", "*:8080" (any
 * address). The port is required.
 */
static int parse_listen(const char *listen, struct sockaddr_storage *ss,
			int *v6)
{
	char host[256], *end;
	const char *colon = strrchr(listen, ':');
	struct addrinfo hints = { 0 }, *ai = NULL;
	long port;
	size_t hl;
	int rc;

	if (!colon || colon == listen)
		return err_set(ERR_INVALID, "listen '%s': expected HOST:PORT",
			       listen);
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port < 0 || port > 65535)
		return err_set(ERR_INVALID, "listen '%s': bad port", listen);
	hl = (size_t)(colon - listen);
	if (listen[0] == '[' && colon[-1] == ']') {
		listen++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		return err_set(ERR_INVALID, "listen '%s': host too long", listen);
	memcpy(host, listen, hl);
	host[hl] = '\0';
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	rc = getaddrinfo(strcmp(host, "*") ? host : NULL, colon + 1, &hints,
			 &ai);
	if (rc || !ai)
		return err_set(ERR_INVALID, "listen '%s': %s", listen,
			       gai_strerror(rc));
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*v6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	return 0;
}

static unsigned pool_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < THREADS_MIN)
		n = THREADS_MIN;
	if (n > THREADS_MAX)
		n = THREADS_MAX;
	return (unsigned)n;
}

int http_start(struct app *app, struct http_server **out)
{
	struct http_server *s;
	struct sockaddr_storage ss;
	unsigned flags, conns, per_ip, timeout;
	int v6 = 0, ret;

	*out = NULL;
	if ((ret = parse_listen(app->bc.cfg.listen, &ss, &v6)) < 0)
		return ret;
	s = xcalloc(1, sizeof(*s));
	s->app = app;
	s->max_body = app->bc.cfg.max_patch_bytes > 0
			      ? (size_t)app->bc.cfg.max_patch_bytes
			      : (size_t)8 << 20;
	/* jansson seeds its hash function once, before the threads race to. */
	json_object_seed(0);
	/* On unless STABLEQ_HTTP_CACHE=0 (benchmarks measure both). */
	s->cache_on = !getenv("STABLEQ_HTTP_CACHE") ||
		      strcmp(getenv("STABLEQ_HTTP_CACHE"), "0");
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	if (pthread_create(&s->writer, NULL, http_writer_main, s)) {
		ret = err_set(ERR_IO, "http: cannot start the writer thread");
		goto fail;
	}
	s->writer_started = 1;
	if (http_limit_start(s) < 0) {
		ret = err_set(ERR_IO, "http: cannot start the watch thread");
		goto fail;
	}

	/* The answer cache's stamps: read off the WAL index if it can be. */
	if (s->cache_on &&
	    (db_open(&s->watch_db, app->bc.cfg.db) < 0 ||
	     !(s->watch = db_watch_open(s->watch_db, app->bc.cfg.db))))
		log_warnx("http: the answer cache asks SQLite whether the store"
			  " changed: %s",
			  err_msg());

	conns = app->bc.cfg.http_connections > 0
			? (unsigned)app->bc.cfg.http_connections
			: 512;
	/* One address may take three quarters: the rest stays for others. */
	per_ip = conns - conns / 4;
	if (!per_ip)
		per_ip = 1;
	timeout = (unsigned)app->bc.cfg.http_timeout;
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
		MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	if (v6)
		flags |= MHD_USE_IPv6;
	s->conns_max = conns;
	s->per_addr_max = per_ip;
	s->request_timeout =
		app->bc.cfg.http_request_timeout > 0
			? (unsigned)app->bc.cfg.http_request_timeout
			: 0;
	s->mhd = MHD_start_daemon(
		flags, 0, on_accept, s, on_request, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE,
		pool_threads(), MHD_OPTION_CONNECTION_LIMIT,
		conns * pool_threads(), MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, s,
		MHD_OPTION_CONNECTION_TIMEOUT, timeout,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_END);
	/*
	 * No MHD_OPTION_LISTENING_ADDRESS_REUSE: on Linux it sets SO_REUSEPORT
	 * and a second daemon on the same port would silently share it.
	 * (The default SO_REUSEADDR is enough for restarts.)
	 */
	if (!s->mhd) {
		ret = err_set(ERR_IO,
			      "listen %s: cannot start the HTTP server (address"
			      " in use?)",
			      app->bc.cfg.listen);
		goto fail;
	}
	log_info("http: listening on %s (%u threads, %u connections, %u per"
		 " address, %us idle timeout, %us for a request%s)",
		 app->bc.cfg.listen, pool_threads(), conns, per_ip, timeout,
		 s->request_timeout, s->cache_on ? "" : ", no answer cache");
	*out = s;
	return 0;
fail:
	http_stop(s);
	return ret;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	/* The writer finishes the queued writes (resuming them) first. */
	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->writer_started)
		pthread_join(s->writer, NULL);
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	http_limit_stop(s); /* every client has gone with the daemon */
	for (size_t i = 0; i < s->nidle; i++)
		http_conn_close(s->idle[i]);
	db_watch_close(s->watch);
	db_close(s->watch_db);
	for (size_t i = 0; i < STATIC_MAX; i++) {
		if (s->statics[i].r)
			MHD_destroy_response(s->statics[i].r);
		if (s->statics[i].rz)
			MHD_destroy_response(s->statics[i].rz);
	}
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
