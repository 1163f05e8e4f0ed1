/* http-int.h: what the HTTP server's files (http*.c) share: a request, the server, the pool. */
#ifndef STABLEQ_HTTP_INT_H
#define STABLEQ_HTTP_INT_H

#include "api.h"
#include "db.h"
#include "dbwatch.h"
#include "embed.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/socket.h>

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
	long long length;  /* Content-Length, -1 if none */
	int close;         /* answered before the body: Connection: close */
	int answered;      /* res holds the answer */
	int sent;          /* the answer was handed to libmicrohttpd */
	int headers_done;  /* on_headers() ran */
	int begun;         /* on_request() has seen it */
	int nul_in_uri;    /* the raw URI holds %00 */
	size_t uri_len;    /* the raw URI's length */
	size_t version_len; /* "HTTP/1.1" */
	int http10;        /* an HTTP/1.0 request: Host is not required */
	int parsing;       /* counted by http_headers_parsing() */
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
	/* http-limit.c: the clients, under clients_lock */
	pthread_mutex_t clients_lock;
	struct client *clients;
	unsigned nclients;
	unsigned ncut;           /* of them, shut down and not yet closed */
	unsigned conns_max;      /* http_connections, for the whole server */
	unsigned per_addr_max;   /* from one address */
	unsigned request_timeout; /* s for a request to arrive; 0: none */
	pthread_t watch_thread;
	pthread_cond_t watch_wake;
	int watch_stop, watch_started, limit_inited;
	atomic_llong refusal_logged_ms;
	struct static_resp statics[STATIC_MAX]; /* under lock */
	sqlite3 *watch_db;       /* kept open: the WAL index stays mapped */
	struct db_watch *watch;  /* NULL: ask SQLite */
};

/* http-gzip.c */
/* The next element of a comma-separated header: [*start, *end) trimmed. */
int http_next_element(const char **p, const char **start, const char **end);
/* Text answers are worth compressing; patches, JSON, the dashboard. */
int http_compressible(const struct api_response *res);
/* buf gzipped as a response, or NULL when that saves nothing. */
struct MHD_Response *http_gzip_response(const char *buf, size_t len, int level);

/* http-answer.c */
/*
 * A response of c->res (its body or fd is handed over); its gzipped form
 * in *rz when rz is given and that is worth it, else *rz = NULL.
 */
struct MHD_Response *http_make_responses(struct req_ctx *c, int level,
					 struct MHD_Response **rz);
/* Sends c->res (logging writes and server errors). */
enum MHD_Result http_send_answer(struct req_ctx *c);
/* Sends a kept answer, or 304 when If-None-Match names its ETag. */
enum MHD_Result http_answer_kept(struct req_ctx *c, struct MHD_Response *kept);
/* FNV-1a, 64 bits: an answer's ETag. */
unsigned long long http_hash_of(const char *s, size_t n);
/* The ETag of a kept answer's form: the gzipped one is another entity. */
void http_etag_of(char *out, size_t size, unsigned long long tag, int gz);
/* Puts ETag on a kept response. */
void http_set_etag(struct MHD_Response *r, unsigned long long tag, int gz);

/* http-cache.c */
void http_conn_close(struct conn *c);
/* A pooled connection (or a new one), NULL if the store cannot be opened. */
struct conn *http_pool_get(struct http_server *s);
void http_pool_put(struct http_server *s, struct conn *c);
/* Answers a read, from db's cache when it may (see http-cache.c). */
struct MHD_Response *http_run_read(struct http_server *s, struct conn *db,
				   struct req_ctx *c);

/* http-file.c */
/* web/NAME: a kept response, or NULL with the answer in c->res. */
struct MHD_Response *http_static_file(struct http_server *s,
				      struct req_ctx *c, const char *url);

/* http-writer.c */
/* The body is in: hands the write to the writer thread. */
enum MHD_Result http_queue_write(struct req_ctx *c);
/* The writer thread (arg: the server). */
void *http_writer_main(void *arg);

/* http-headers.c */
/*
 * The headers, the path and the query, before routing: 0 with *has_body
 * set (and c->length), or -1 with the answer in c->res (400 for a NUL, a
 * second Authorization or Host, a malformed or ambiguous length; 501 for a
 * Transfer-Encoding other than a lone chunked; 421 for a Host not served).
 */
int http_check_headers(struct req_ctx *c, int *has_body);
/* c's request line is in, its headers are being read (this thread). */
void http_headers_parsing(struct req_ctx *c);
/* ... and handed over (or the request ended). */
void http_headers_parsed(struct req_ctx *c);
/* libmicrohttpd logged msg: 1 if it was a bad length answered here. */
int http_refuse_length(const char *msg);

/* http-limit.c */
/* Starts the watch thread (and inits its lock): 0 or -1. */
int http_limit_start(struct http_server *s);
/* After MHD_stop_daemon: every client has gone. */
void http_limit_stop(struct http_server *s);
/* The accept policy: MHD_NO when addr is over a limit. */
enum MHD_Result http_limit_accept(struct http_server *s,
				  const struct sockaddr *addr);
/* MHD_CONNECTION_NOTIFY_STARTED and _CLOSED: the client list. */
void http_limit_opened(struct http_server *s, struct MHD_Connection *conn,
		       void **socket_ctx);
void http_limit_closed(struct http_server *s, void **socket_ctx);
/* The request on conn is all in: its deadline no longer runs. */
void http_limit_received(struct MHD_Connection *conn);
/* The request on conn is done: the next one's deadline starts now. */
void http_limit_next(struct MHD_Connection *conn);

#endif
