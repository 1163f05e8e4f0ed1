/* api.h: the REST routes under /api/v1 (a table in api.c), called by http.c. */
#ifndef STABLEQ_API_H
#define STABLEQ_API_H

#include "app.h"
#include "strbuf.h"

#include <jansson.h>

struct api_route;

/*
 * One request as http.c hands it over. All strings are borrowed from
 * libmicrohttpd and valid until the request completes.
 */
struct api_request {
	const char *method;        /* "GET", "HEAD", "POST", ... */
	const char *path;          /* below /api/v1: "/patches/12" */
	const char **arg_names;    /* the query, in order (values may be NULL) */
	const char **arg_values;
	size_t nargs;
	const char *authorization; /* the header, or NULL */
	const char *content_type;  /* the header, or NULL */
	int loopback;              /* the peer is 127.0.0.0/8 or ::1 */
	const char *body;          /* POST body (NUL-terminated), len bytes */
	size_t body_len;
	/*
	 * A copy of the server's app: db is this request's connection (set by
	 * http.c), actor is "http" for reads and "token:NAME" for writes.
	 */
	struct app app;
	/* Set by api_begin(). */
	const struct api_route *route;
	long long id;              /* the {id} of the path, if any */
	char *actor;               /* owned: "token:NAME" */
	int scope;                 /* the token's (token.h), 0 without one */
	int is_write;              /* changes the store: runs on the writer thread */
};

/* What to send back. */
struct api_response {
	int status;
	const char *content_type;  /* static string */
	struct strbuf body;
	int fd;                    /* >= 0: send this file (fd_size bytes) instead */
	long long fd_size;
	char allow[48];            /* 405: the Allow header ("" if none) */
	int www_authenticate;      /* 401: add WWW-Authenticate: Bearer */
};

void api_response_init(struct api_response *res);
/* Frees the body and closes fd if it was not handed to the server. */
void api_response_release(struct api_response *res);

/*
 * Before the body: finds the route (404, 405 with Allow), checks the query
 * names and the credentials (401, 403). Returns 0 to go on with api_run()
 * (req->route, id, actor, is_write set), or 1 when res holds the answer.
 * req->app.bc.db must be a usable connection (tokens are looked up).
 */
int api_begin(struct api_request *req, struct api_response *res);
/*
 * Runs the route's handler; res always holds an answer afterwards. Reads
 * are run by the caller inside one read transaction (one snapshot).
 */
void api_run(struct api_request *req, struct api_response *res);
/*
 * Whether the answer of this (begun) read depends on the store alone, so
 * that it may be kept until the database changes.
 */
int api_cacheable(const struct api_request *req);

/* Whether this (begun) request's route reads a body. */
int api_takes_body(const struct api_request *req);

/* An error answer: { "error": code, "message": text }. */
__attribute__((format(printf, 4, 5)))
void api_error(struct api_response *res, int status, const char *code,
	       const char *fmt, ...);
/* Answers text (copied) with content type ctype (a static string). */
void api_text(struct api_response *res, int status, const char *ctype,
	      const char *text, size_t len);

/* Counts one answered request, for /metrics (thread-safe). */
void api_note_status(int status);

/* The route table as JSON: [{method, path, write}] (new reference). */
json_t *api_routes_json(void);

#endif
