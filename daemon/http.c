/* http.c: the libmicrohttpd server: limits, request bodies, a connection pool, static files. */
#include "http.h"
#include "api.h"
#include "db.h"
#include "dbwatch.h"
#include "embed.h"
#include "err.h"
#include "log.h"
#include "serve.h"
#include "strbuf.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/*
 * Threads: libmicrohttpd's pool (one epoll loop per CPU) serves every
 * connection and runs the read routes inline: they are short queries.
 * Writes can be slow (an 8 MB import, a libgit2 revert), so the connection
 * is suspended and the request handed to one writer thread with its own
 * SQLite connection; a slow write never stalls reads, and SQLite
 * serializes writers anyway.
 *
 * Reads take a SQLite connection from a small pool for the length of one
 * request (WAL lets them run beside the writer and the daemon's children),
 * so connections are opened once, not once per request. A read runs in one
 * read transaction: its queries see one snapshot.
 *
 * Cache: the dashboard and scripts poll the same reads while the store
 * rarely changes, so each pooled connection keeps the answers of cacheable
 * routes (api_cacheable) with the stamp of the store they were made at:
 * its WAL-index header, read from shared memory (dbwatch.c), or PRAGMA
 * data_version when that cannot be read. Both change when any connection
 * commits (the writer thread, the daemon's loop and children, the CLI),
 * and pooled connections never write, so an answer is reused only while
 * nothing has changed.
 * STABLEQ_HTTP_CACHE=0 in the environment turns it off (for benchmarks).
 *
 * Compression: a client that accepts gzip (browsers, curl --compressed,
 * Python's requests) gets text answers of GZIP_MIN bytes or more gzipped,
 * with Vary: Accept-Encoding on both forms. A cached answer keeps both
 * forms, so it is compressed once; the dashboard's files are compressed
 * once per server at the best level.
 */

#define POOL_MAX 8          /* idle connections kept */
#define CACHE_SLOTS 64      /* answers kept per connection */
#define CACHE_BYTES (8 << 20)
#define CACHE_ENTRY_MAX (2 << 20)
#define THREADS_MIN 2
#define THREADS_MAX 16
#define GZIP_MIN 1024       /* smaller answers go as they are */
#define GZIP_LEVEL 1        /* answers: a 25 KB page in ~60 us */
#define GZIP_LEVEL_STATIC 9 /* the dashboard's files: once per server */
#define STATIC_MAX 16       /* the dashboard's files kept as responses */

struct cached {
	char *key;                /* "/patches?limit=50" */
	struct MHD_Response *r;   /* one reference held here */
	struct MHD_Response *rz;  /* the same gzipped, or NULL */
	size_t len;
	char etag[2][24];         /* plain, gzipped: a hash of the answer */
};

/* A compiled-in dashboard file as responses, made on first use. */
struct static_resp {
	const struct embedded_file *f;
	struct MHD_Response *r, *rz;
	char etag[2][24]; /* plain, gzipped */
};

/*
 * The store's state as seen on one request: the WAL-index header (no lock,
 * no system call: dbwatch.c), or SQLite's data_version when the header
 * cannot be read at that instant or at all.
 */
struct stamp {
	int kind; /* 0: none yet; STAMP_HDR; STAMP_VERSION */
	struct db_stamp hdr;
	long long version;
};
#define STAMP_HDR 1
#define STAMP_VERSION 2

/* A SQLite connection with its prepared statements and its answers. */
struct conn {
	sqlite3 *db;
	sqlite3_stmt *begin, *commit, *version;
	struct stamp seen; /* what the cache was made at */
	struct cached cache[CACHE_SLOTS];
	size_t next, bytes;  /* round-robin slot to replace; bytes held */
};

struct req_ctx {
	struct http_server *srv;
	struct MHD_Connection *conn;
	struct api_request req;
	struct api_response res;
	struct strbuf body;
	const char *names[32], *values[32];
	int api;           /* under /api/v1 */
	int too_big;       /* the body went over max_patch_bytes */
	int answered;      /* res holds the answer */
	int sent;          /* the answer was handed to libmicrohttpd */
	int headers_done;  /* on_headers() ran */
	int gzip;          /* the client accepts gzip */
	int revalidate;    /* a cached read: ETag, Cache-Control: no-cache */
	const char *etag;  /* of the kept answer sent (its entry's), or NULL */
	struct req_ctx *next; /* writer queue */
};

struct http_server {
	struct MHD_Daemon *mhd;
	struct app *app;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct conn *idle[POOL_MAX];
	size_t nidle;
	struct req_ctx *head, *tail; /* writes waiting for the writer */
	pthread_t writer;
	int writer_started;
	int stopping;
	int cache_on;
	size_t max_body;
	unsigned conns_max;      /* http_connections, for the whole server */
	atomic_uint conns;       /* open connections */
	struct static_resp statics[STATIC_MAX]; /* under lock */
	sqlite3 *watch_db;       /* kept open: the WAL index stays mapped */
	struct db_watch *watch;  /* NULL: ask SQLite */
};

/* ---- connections ---- */

static void cache_clear(struct conn *c)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		free(c->cache[i].key);
		/* Answers being sent keep their own reference. */
		if (c->cache[i].r)
			MHD_destroy_response(c->cache[i].r);
		if (c->cache[i].rz)
			MHD_destroy_response(c->cache[i].rz);
		memset(&c->cache[i], 0, sizeof(c->cache[i]));
	}
	c->next = c->bytes = 0;
}

static void conn_close(struct conn *c)
{
	if (!c)
		return;
	cache_clear(c);
	sqlite3_finalize(c->begin);
	sqlite3_finalize(c->commit);
	sqlite3_finalize(c->version);
	db_close(c->db);
	free(c);
}

static struct conn *conn_open(const char *path)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	if (db_open(&c->db, path) < 0 ||
	    !(c->begin = db_prepare(c->db, "BEGIN", NULL)) ||
	    !(c->commit = db_prepare(c->db, "COMMIT", NULL)) ||
	    !(c->version = db_prepare(c->db, "PRAGMA data_version", NULL))) {
		log_warnx("http: %s", err_msg());
		conn_close(c);
		return NULL;
	}
	return c;
}

/* Runs a prepared statement without results; 0 or -1. */
static int run_stmt(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/* The store's data_version as this connection sees it, -1 on error. */
static long long data_version(struct conn *c)
{
	long long v = -1;

	if (sqlite3_step(c->version) == SQLITE_ROW)
		v = sqlite3_column_int64(c->version, 0);
	sqlite3_reset(c->version);
	return v;
}

/* The store's stamp now, as seen through c; -1 on error. */
static int stamp_now(struct http_server *s, struct conn *c, struct stamp *st)
{
	if (s->watch && !db_watch_stamp(s->watch, &st->hdr)) {
		st->kind = STAMP_HDR;
		return 0;
	}
	st->kind = STAMP_VERSION;
	return (st->version = data_version(c)) < 0 ? -1 : 0;
}

static int stamp_same(const struct stamp *a, const struct stamp *b)
{
	if (a->kind != b->kind || !a->kind)
		return 0;
	return a->kind == STAMP_HDR
		       ? !memcmp(&a->hdr, &b->hdr, sizeof(a->hdr))
		       : a->version == b->version;
}

static struct conn *pool_get(struct http_server *s)
{
	struct conn *c = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->nidle)
		c = s->idle[--s->nidle];
	pthread_mutex_unlock(&s->lock);
	return c ? c : conn_open(s->app->cfg.db);
}

static void pool_put(struct http_server *s, struct conn *c)
{
	if (!c)
		return;
	/* A handler that failed halfway must not leave its transaction open. */
	db_rollback(c->db);
	pthread_mutex_lock(&s->lock);
	if (s->nidle < POOL_MAX) {
		s->idle[s->nidle++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	conn_close(c);
}

/* "/patches?state=queued&limit=50": what a cached answer is found by. */
static char *cache_key(const struct api_request *req)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, req->path);
	for (size_t i = 0; i < req->nargs; i++)
		strbuf_addf(&sb, "%c%s=%s", i ? '&' : '?', req->arg_names[i],
			    req->arg_values[i] ? req->arg_values[i] : "");
	return strbuf_detach(&sb, NULL);
}

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

/* One line per write and per server error, with who asked. */
static void log_answer(struct req_ctx *c)
{
	const struct api_response *res = &c->res;

	if (res->status >= 500)
		log_warnx("http: %s %s%s %d: %.*s", c->req.method,
			  c->api ? "/api/v1" : "", c->req.path, res->status,
			  res->fd < 0 && res->body.len < 400 ? (int)res->body.len
							     : 0,
			  res->body.buf);
	else if (c->req.is_write)
		log_info("http: %s %s%s %d%s%s", c->req.method,
			 c->api ? "/api/v1" : "", c->req.path, res->status,
			 c->req.actor ? " " : "",
			 c->req.actor ? c->req.actor : "");
}

/* ---- compression ---- */

/* The next element of a comma-separated header: [*p, *end) trimmed. */
static int next_element(const char **p, const char **start, const char **end)
{
	const char *s = *p, *e;

	while (*s == ',' || *s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	e = strchr(s, ',');
	if (!e)
		e = s + strlen(s);
	*p = e;
	*start = s;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*end = e;
	return 1;
}

/*
 * The weight of one Accept-Encoding element "coding[;q=W]" (RFC 9110
 * 12.5.3) in thousandths; a weight that does not parse counts as 0.
 */
static int element_weight(const char *s, const char *end, size_t *name_len)
{
	const char *semi = memchr(s, ';', (size_t)(end - s));
	const char *q, *n;
	int w = 0, digits = 0;

	*name_len = (size_t)((semi ? semi : end) - s);
	while (*name_len && (s[*name_len - 1] == ' ' || s[*name_len - 1] == '\t'))
		(*name_len)--;
	if (!semi)
		return 1000;
	for (q = semi + 1; q < end && (*q == ' ' || *q == '\t'); q++)
		;
	if (end - q < 3 || (q[0] != 'q' && q[0] != 'Q') || q[1] != '=')
		return 0;
	n = q + 2;
	if (*n == '1') {
		n++;
		if (n < end && *n == '.')
			for (n++; n < end && *n == '0' && digits < 3; n++)
				digits++;
		return n == end ? 1000 : 0;
	}
	if (*n != '0')
		return 0;
	n++;
	if (n < end && *n == '.')
		for (n++; n < end && *n >= '0' && *n <= '9' && digits < 3;
		     n++, digits++)
			w += (*n - '0') * (digits == 0 ? 100 : digits == 1 ? 10 : 1);
	return n == end ? w : 0;
}

int http_accepts_gzip(const char *accept_encoding)
{
	const char *p = accept_encoding, *s, *e;
	int gzip = -1, star = -1;

	if (!p)
		return 0;
	while (next_element(&p, &s, &e)) {
		size_t n;
		int w = element_weight(s, e, &n);
		if ((n == 4 && !strncasecmp(s, "gzip", 4)) ||
		    (n == 6 && !strncasecmp(s, "x-gzip", 6)))
			gzip = w;
		else if (n == 1 && *s == '*')
			star = w;
	}
	/* A coding named outright rules; else "*" covers it. */
	return gzip >= 0 ? gzip > 0 : star > 0;
}

/* Text answers are worth compressing; patches, JSON, the dashboard. */
static int compressible(const struct api_response *res)
{
	const char *t = res->content_type ? res->content_type
					  : "application/json";

	return res->fd < 0 && res->body.len >= GZIP_MIN &&
	       (!strncmp(t, "text/", 5) ||
		!strncmp(t, "application/json", 16) ||
		!strncmp(t, "image/svg+xml", 13));
}

/* buf gzipped as a response, or NULL when that saves nothing. */
static struct MHD_Response *gzip_response(const char *buf, size_t len,
					  int level)
{
	z_stream z = { 0 };
	size_t cap = len - len / 8; /* must save an eighth at least */
	unsigned char *out;
	struct MHD_Response *r;
	int rc;

	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	out = xmalloc(cap);
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	r = MHD_create_response_from_buffer(cap - z.avail_out, out,
					    MHD_RESPMEM_MUST_FREE);
	if (!r)
		free(out);
	else
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	return r;
}

/* The headers of every answer. */
static void add_headers(struct req_ctx *c, struct MHD_Response *r, int vary)
{
	const struct api_response *res = &c->res;

	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				res->content_type ? res->content_type
						  : "application/json");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* API answers are not kept by clients, unless they can ask whether
	 * an answer is still current (a cached read with its ETag) */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
				c->api && !c->revalidate ? "no-store"
							 : "no-cache");
	if (res->content_type && !strncmp(res->content_type, "text/html", 9))
		MHD_add_response_header(
			r, "Content-Security-Policy",
			"default-src 'self'; img-src 'self' data:;"
			" frame-ancestors 'none'; base-uri 'none';"
			" form-action 'self'");
	if (res->allow[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, res->allow);
	if (res->www_authenticate)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"stableq\"");
	if (vary)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
					MHD_HTTP_HEADER_ACCEPT_ENCODING);
}

/*
 * A response of c->res (its body or fd is handed over); its gzipped form
 * in *rz when rz is given and that is worth it, else *rz = NULL.
 */
static struct MHD_Response *make_responses(struct req_ctx *c, int level,
					   struct MHD_Response **rz)
{
	struct api_response *res = &c->res;
	struct MHD_Response *r;
	int vary = compressible(res);

	if (rz) {
		*rz = vary ? gzip_response(res->body.buf, res->body.len, level)
			   : NULL;
		if (*rz)
			add_headers(c, *rz, 1);
	}
	if (res->fd >= 0) {
		r = MHD_create_response_from_fd((uint64_t)res->fd_size, res->fd);
		if (r)
			res->fd = -1; /* the response closes it */
	} else {
		size_t len = 0;
		char *buf = strbuf_detach(&res->body, &len);
		r = MHD_create_response_from_buffer(len, buf,
						    MHD_RESPMEM_MUST_FREE);
		if (!r)
			free(buf);
	}
	if (!r) {
		if (rz && *rz)
			MHD_destroy_response(*rz);
		if (rz)
			*rz = NULL;
		return NULL;
	}
	add_headers(c, r, vary);
	return r;
}

static enum MHD_Result queue(struct req_ctx *c, struct MHD_Response *r,
			     int status)
{
	enum MHD_Result ret = MHD_queue_response(c->conn, (unsigned)status, r);

	api_note_status(status);
	c->sent = 1;
	return ret;
}

static enum MHD_Result send_answer(struct req_ctx *c)
{
	struct MHD_Response *r, *rz = NULL;
	enum MHD_Result ret;

	log_answer(c);
	if (!(r = make_responses(c, GZIP_LEVEL, c->gzip ? &rz : NULL)))
		return MHD_NO;
	ret = queue(c, rz ? rz : r, c->res.status);
	MHD_destroy_response(r);
	if (rz)
		MHD_destroy_response(rz);
	return ret;
}

/* ---- reads and their cache ---- */

/* FNV-1a, 64 bits: an answer's ETag. */
static unsigned long long hash_of(const char *s, size_t n)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* The ETag of a cached answer's form: the gzipped one is another entity. */
static void etag_of(char *out, size_t size, unsigned long long tag, int gz)
{
	snprintf(out, size, "\"%016llx%s\"", tag, gz ? "-gz" : "");
}

/* Puts ETag on a kept response. */
static void set_etag(struct MHD_Response *r, unsigned long long tag, int gz)
{
	char etag[24];

	etag_of(etag, sizeof(etag), tag, gz);
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
}

/*
 * Does an If-None-Match value (a list of entity tags, or "*") name etag?
 * Weak comparison (RFC 9110 13.1.2): a W/ prefix does not matter.
 */
static int none_match(const char *v, const char *etag)
{
	size_t n = strlen(etag);
	const char *p = v, *s, *e;

	if (!v)
		return 0;
	while (next_element(&p, &s, &e)) {
		if (e - s == 1 && *s == '*')
			return 1;
		if (e - s >= 2 && s[0] == 'W' && s[1] == '/')
			s += 2;
		if ((size_t)(e - s) == n && !memcmp(s, etag, n))
			return 1;
	}
	return 0;
}

static struct cached *cache_find(struct conn *c, const char *key)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (c->cache[i].key && !strcmp(c->cache[i].key, key))
			return &c->cache[i];
	return NULL;
}

/* Keeps r and rz (their references) under key (taken); the entry. */
static struct cached *cache_put(struct conn *c, char *key,
				struct MHD_Response *r,
				struct MHD_Response *rz, size_t len,
				unsigned long long tag)
{
	struct cached *e;

	if (c->bytes + len > CACHE_BYTES)
		cache_clear(c);
	e = &c->cache[c->next];
	c->next = (c->next + 1) % CACHE_SLOTS;
	c->bytes -= e->len;
	free(e->key);
	if (e->r)
		MHD_destroy_response(e->r);
	if (e->rz)
		MHD_destroy_response(e->rz);
	e->key = key;
	e->r = r;
	e->rz = rz;
	e->len = len;
	etag_of(e->etag[0], sizeof(e->etag[0]), tag, 0);
	etag_of(e->etag[1], sizeof(e->etag[1]), tag, 1);
	c->bytes += len;
	return e;
}

/*
 * Answers a read: from the cache when the store has not changed since the
 * answer was made, else in one read transaction. The stamp is read
 * before the transaction begins, so an answer may be newer than the stamp
 * it is kept under, never older: the next request sees a new stamp and
 * makes it again.
 *
 * Returns a response kept in db's cache, to be queued before db goes back
 * to the pool (the cache may drop it then), or NULL: the answer is in
 * c->res.
 */
static struct MHD_Response *run_read(struct http_server *s, struct conn *db,
				     struct req_ctx *c)
{
	struct api_response *res = &c->res;
	struct MHD_Response *r, *rz;
	struct cached *e;
	struct stamp now;
	char *key = NULL;

	if (s->cache_on && api_cacheable(&c->req) &&
	    !stamp_now(s, db, &now)) {
		if (!stamp_same(&now, &db->seen)) {
			cache_clear(db);
			db->seen = now;
		}
		key = cache_key(&c->req);
		if ((e = cache_find(db, key))) {
			free(key);
			c->etag = e->etag[c->gzip && e->rz];
			return c->gzip && e->rz ? e->rz : e->r;
		}
	}
	if (run_stmt(db->begin) < 0) {
		api_error(res, 503, "unavailable", "the database is busy: %s",
			  sqlite3_errmsg(db->db));
		free(key);
		return NULL;
	}
	api_run(&c->req, res);
	run_stmt(db->commit);
	if (key && res->status == 200 && res->fd < 0 &&
	    res->body.len <= CACHE_ENTRY_MAX) {
		size_t len = res->body.len;
		unsigned long long tag = hash_of(res->body.buf, len);
		/* Both forms now: the next client may want the other. */
		c->revalidate = 1;
		if ((r = make_responses(c, GZIP_LEVEL, &rz))) {
			set_etag(r, tag, 0);
			if (rz)
				set_etag(rz, tag, 1);
			/* bytes held: the gzipped form is under 7/8 of len */
			e = cache_put(db, key, r, rz,
				      len + (rz ? len - len / 8 : 0), tag);
			c->etag = e->etag[c->gzip && rz];
			return c->gzip && rz ? rz : r;
		}
		c->revalidate = 0;
	}
	free(key);
	return NULL;
}

/* ---- the dashboard's files ---- */

struct ctype {
	const char *ext, *type;
};
static const struct ctype ctypes[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".json", "application/json" },
};

static const char *content_type_of(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(ctypes) / sizeof(ctypes[0]); i++) {
		size_t e = strlen(ctypes[i].ext);
		if (n > e && !strcmp(name + n - e, ctypes[i].ext))
			return ctypes[i].type;
	}
	return NULL;
}

/*
 * Serves web/NAME: from web_root on disk when configured (editing the
 * dashboard without rebuilding), else from the copy compiled in. Names are
 * one path component of safe characters: nothing can leave web/.
 */
static struct MHD_Response *static_file(struct http_server *s,
					struct req_ctx *c, const char *url)
{
	struct api_response *res = &c->res;
	const char *name = url + 1;
	const char *type;
	size_t len;

	if (!strcmp(url, "/"))
		name = "index.html";
	if (*url != '/' || !*name || strlen(name) > 64 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") != strlen(name) ||
	    name[0] == '.' || !(type = content_type_of(name))) {
		api_error(res, 404, "not-found", "%s: no such file", url);
		return NULL;
	}
	if (s->app->cfg.web_root && *s->app->cfg.web_root) {
		char *path = xstrfmt("%s/%s", s->app->cfg.web_root, name);
		struct stat st;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			api_error(res, 404, "not-found", "%s: no such file",
				  url);
			return NULL;
		}
		res->status = 200;
		res->fd = fd;
		res->fd_size = st.st_size;
		res->content_type = type;
		return NULL;
	}
	char *path = xstrfmt("web/%s", name);
	const struct embedded_file *f = embed_find(path, &len);
	free(path);
	if (!f) {
		api_error(res, 404, "not-found", "%s: no such file", url);
		return NULL;
	}
	res->status = 200;
	res->content_type = type;
	/* Made once (and compressed once) for the server's lifetime. */
	struct MHD_Response *r = NULL;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < STATIC_MAX; i++) {
		struct static_resp *e = &s->statics[i];
		if (e->f && e->f != f)
			continue;
		if (!e->f) {
			unsigned long long tag = hash_of(f->start, len);
			strbuf_add(&res->body, f->start, len);
			if (!(e->r = make_responses(c, GZIP_LEVEL_STATIC,
						    &e->rz)))
				break;
			set_etag(e->r, tag, 0);
			if (e->rz)
				set_etag(e->rz, tag, 1);
			etag_of(e->etag[0], sizeof(e->etag[0]), tag, 0);
			etag_of(e->etag[1], sizeof(e->etag[1]), tag, 1);
			e->f = f;
		}
		r = c->gzip && e->rz ? e->rz : e->r;
		c->etag = e->etag[c->gzip && e->rz];
		break;
	}
	pthread_mutex_unlock(&s->lock);
	if (!r && !res->body.len)
		strbuf_add(&res->body, f->start, len); /* all slots taken */
	return r;
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
	req->app.db = NULL;
	req->app.actor = "http";
}

/* The declared body length, -1 if none or unparsable. */
static long long content_length(struct MHD_Connection *conn)
{
	const char *v = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	char *end;
	long long n;

	if (!v)
		return -1;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 0)
		return -1;
	return n;
}

static void too_big(struct http_server *s, struct api_response *res)
{
	api_error(res, 413, "too-big",
		  "the request body is over the limit of %zu bytes"
		  " (max_patch_bytes)",
		  s->max_body);
}

/*
 * Sends a kept answer, or 304 Not Modified when the client already has it
 * (If-None-Match names its ETag): the dashboard's polls cost no body.
 */
static enum MHD_Result answer_kept(struct req_ctx *c, struct MHD_Response *kept)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!c->etag ||
	    !none_match(MHD_lookup_connection_value(
				c->conn, MHD_HEADER_KIND,
				MHD_HTTP_HEADER_IF_NONE_MATCH),
			c->etag))
		return queue(c, kept, 200);
	if (!(r = MHD_create_response_from_buffer(0, (void *)"",
						  MHD_RESPMEM_PERSISTENT)))
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, c->etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	ret = queue(c, r, MHD_HTTP_NOT_MODIFIED);
	MHD_destroy_response(r);
	return ret;
}

/* First call of a request: its headers are in. */
static enum MHD_Result on_headers(struct req_ctx *c, const char *url,
				  const char *method)
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
		} else {
			struct MHD_Response *kept = static_file(s, c, url);
			if (kept)
				return answer_kept(c, kept);
		}
		return send_answer(c);
	}
	c->api = 1;
	begin_request(c, url + 7, method);
	if (c->too_big == 2) {
		api_error(&c->res, 400, "bad-request",
			  "too many query arguments");
		return send_answer(c);
	}
	if (!(db = pool_get(s))) {
		api_error(&c->res, 503, "unavailable",
			  "the database cannot be opened");
		return send_answer(c);
	}
	c->req.app.db = db->db;
	r = api_begin(&c->req, &c->res);
	if (!r && !c->req.is_write) {
		/* Reads are answered now, on this thread. */
		struct MHD_Response *kept = run_read(s, db, c);
		if (kept) {
			enum MHD_Result ret = answer_kept(c, kept);
			c->req.app.db = NULL;
			pool_put(s, db);
			return ret;
		}
		r = 1;
	}
	c->req.app.db = NULL;
	pool_put(s, db);
	if (r)
		return send_answer(c);
	if (content_length(c->conn) > (long long)s->max_body) {
		too_big(s, &c->res);
		return send_answer(c);
	}
	return MHD_YES;
}

/* The body is in: hand the write to the writer thread. */
static enum MHD_Result queue_write(struct req_ctx *c)
{
	struct http_server *s = c->srv;

	c->req.body = c->body.buf;
	c->req.body_len = c->body.len;
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		api_error(&c->res, 503, "unavailable", "the server is stopping");
		return send_answer(c);
	}
	MHD_suspend_connection(c->conn);
	c->next = NULL;
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct req_ctx *c = *con_cls;

	if (!c) {
		c = xcalloc(1, sizeof(*c));
		c->srv = s;
		c->conn = conn;
		strbuf_init(&c->body, 0);
		api_response_init(&c->res);
		*con_cls = c;
		/*
		 * An answer queued before the request is all in makes
		 * libmicrohttpd close the connection afterwards: reads wait
		 * for the final call and keep their connection alive. Other
		 * methods are checked now (route, credentials, declared
		 * length) so that a refused body is never read.
		 */
		if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
			return MHD_YES;
		c->headers_done = 1;
		return on_headers(c, url, method);
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
	if (!c->headers_done) {
		c->headers_done = 1;
		if (c->too_big) {
			/* a GET with a body over the limit */
			too_big(s, &c->res);
			return send_answer(c);
		}
		return on_headers(c, url, method);
	}
	if (c->answered)
		return send_answer(c); /* the writer is done */
	if (c->too_big) {
		too_big(s, &c->res);
		return send_answer(c);
	}
	return queue_write(c);
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct req_ctx *c = *con_cls;

	if (!c)
		return;
	strbuf_release(&c->body);
	api_response_release(&c->res);
	free(c->req.actor);
	free(c);
	*con_cls = NULL;
}

static void *writer_main(void *arg)
{
	struct http_server *s = arg;
	/* Its own connection: pooled ones never write (see the cache above). */
	sqlite3 *db = NULL;

	if (db_open(&db, s->app->cfg.db) < 0) {
		log_warnx("http: writer: %s", err_msg());
		db = NULL;
	}
	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct req_ctx *c;

		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->wake, &s->lock);
		if (!s->head)
			break; /* stopping, and nothing left to do */
		c = s->head;
		s->head = c->next;
		if (!s->head)
			s->tail = NULL;
		pthread_mutex_unlock(&s->lock);

		if (!db && db_open(&db, s->app->cfg.db) < 0)
			db = NULL;
		if (db) {
			c->req.app.db = db;
			err_clear();
			api_run(&c->req, &c->res);
			db_rollback(db); /* a module that failed halfway */
			c->req.app.db = NULL;
		} else {
			api_error(&c->res, 503, "unavailable",
				  "the database cannot be opened");
		}
		c->answered = 1;
		MHD_resume_connection(c->conn);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	db_close(db);
	return NULL;
}

/*
 * libmicrohttpd splits its connection limit between the pool's threads and
 * accepts unevenly, so one thread could refuse clients while the server is
 * far below http_connections. Each thread may take them all; the limit is
 * kept here for the whole server.
 */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
				 socklen_t addrlen)
{
	struct http_server *s = cls;

	if (atomic_load(&s->conns) >= s->conns_max) {
		log_warnx("http: %u connections: refusing one more",
			  s->conns_max);
		return MHD_NO;
	}
	return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *conn,
			  void **socket_ctx, enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *s = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		atomic_fetch_add(&s->conns, 1);
	else if (toe == MHD_CONNECTION_NOTIFY_CLOSED)
		atomic_fetch_sub(&s->conns, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	strbuf_rtrim(&sb);
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
	if ((ret = parse_listen(app->cfg.listen, &ss, &v6)) < 0)
		return ret;
	s = xcalloc(1, sizeof(*s));
	s->app = app;
	s->max_body = app->cfg.max_patch_bytes > 0
			      ? (size_t)app->cfg.max_patch_bytes
			      : (size_t)8 << 20;
	/* jansson seeds its hash function once, before the threads race to. */
	json_object_seed(0);
	/* On unless STABLEQ_HTTP_CACHE=0 (benchmarks measure both). */
	s->cache_on = !getenv("STABLEQ_HTTP_CACHE") ||
		      strcmp(getenv("STABLEQ_HTTP_CACHE"), "0");
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	if (pthread_create(&s->writer, NULL, writer_main, s)) {
		ret = err_set(ERR_IO, "http: cannot start the writer thread");
		goto fail;
	}
	s->writer_started = 1;

	/* The answer cache's stamps: read off the WAL index if it can be. */
	if (s->cache_on &&
	    (db_open(&s->watch_db, app->cfg.db) < 0 ||
	     !(s->watch = db_watch_open(s->watch_db, app->cfg.db))))
		log_warnx("http: the answer cache asks SQLite whether the store"
			  " changed: %s",
			  err_msg());

	conns = app->cfg.http_connections > 0
			? (unsigned)app->cfg.http_connections
			: 512;
	/* One address may take three quarters: the rest stays for others. */
	per_ip = conns - conns / 4;
	if (!per_ip)
		per_ip = 1;
	timeout = (unsigned)app->cfg.http_timeout;
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
		MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	if (v6)
		flags |= MHD_USE_IPv6;
	s->conns_max = conns;
	s->mhd = MHD_start_daemon(
		flags, 0, on_accept, s, on_request, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE,
		pool_threads(), MHD_OPTION_CONNECTION_LIMIT,
		conns * pool_threads(), MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, s,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, timeout,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
	/*
	 * No MHD_OPTION_LISTENING_ADDRESS_REUSE: on Linux it sets SO_REUSEPORT
	 * and a second daemon on the same port would silently share it.
	 * (The default SO_REUSEADDR is enough for restarts.)
	 */
	if (!s->mhd) {
		ret = err_set(ERR_IO,
			      "listen %s: cannot start the HTTP server (address"
			      " in use?)",
			      app->cfg.listen);
		goto fail;
	}
	log_info("http: listening on %s (%u threads, %u connections, %u per"
		 " address, %us timeout%s)",
		 app->cfg.listen, pool_threads(), conns, per_ip, timeout,
		 s->cache_on ? "" : ", no answer cache");
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
	for (size_t i = 0; i < s->nidle; i++)
		conn_close(s->idle[i]);
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
