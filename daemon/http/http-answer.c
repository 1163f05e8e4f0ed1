/* http-answer.c: answers as libmicrohttpd responses: headers, ETags, 304, the log line. */
#include "http.h"
#include "http-int.h"

#include "log.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	if (c->close)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (vary)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
					MHD_HTTP_HEADER_ACCEPT_ENCODING);
}

/*
 * A response of c->res (its body or fd is handed over); its gzipped form
 * in *rz when rz is given and that is worth it, else *rz = NULL.
 */
struct MHD_Response *http_make_responses(struct req_ctx *c, int level,
					   struct MHD_Response **rz)
{
	struct api_response *res = &c->res;
	struct MHD_Response *r;
	int vary = http_compressible(res);

	if (rz) {
		*rz = vary ? http_gzip_response(res->body.buf, res->body.len, level)
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

static enum MHD_Result http_queue(struct req_ctx *c, struct MHD_Response *r,
			     int status)
{
	enum MHD_Result ret = MHD_queue_response(c->conn, (unsigned)status, r);

	http_limit_received(c->conn);
	api_note_status(status);
	c->sent = 1;
	return ret;
}

enum MHD_Result http_send_answer(struct req_ctx *c)
{
	struct MHD_Response *r, *rz = NULL;
	enum MHD_Result ret;

	log_answer(c);
	if (!(r = http_make_responses(c, GZIP_LEVEL, c->gzip ? &rz : NULL)))
		return MHD_NO;
	ret = http_queue(c, rz ? rz : r, c->res.status);
	MHD_destroy_response(r);
	if (rz)
		MHD_destroy_response(rz);
	return ret;
}


/* FNV-1a, 64 bits: an answer's ETag. */
unsigned long long http_hash_of(const char *s, size_t n)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

/* The ETag of a cached answer's form: the gzipped one is another entity. */
void http_etag_of(char *out, size_t size, unsigned long long tag, int gz)
{
	snprintf(out, size, "\"%016llx%s\"", tag, gz ? "-gz" : "");
}

/* Puts ETag on a kept response. */
void http_set_etag(struct MHD_Response *r, unsigned long long tag, int gz)
{
	char etag[24];

	http_etag_of(etag, sizeof(etag), tag, gz);
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
	while (http_next_element(&p, &s, &e)) {
		if (e - s == 1 && *s == '*')
			return 1;
		if (e - s >= 2 && s[0] == 'W' && s[1] == '/')
			s += 2;
		if ((size_t)(e - s) == n && !memcmp(s, etag, n))
			return 1;
	}
	return 0;
}

/*
 * Sends a kept answer, or 304 Not Modified when the client already has it
 * (If-None-Match names its ETag): the dashboard's polls cost no body.
 */
enum MHD_Result http_answer_kept(struct req_ctx *c, struct MHD_Response *kept)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!c->etag ||
	    !none_match(MHD_lookup_connection_value(
				c->conn, MHD_HEADER_KIND,
				MHD_HTTP_HEADER_IF_NONE_MATCH),
			c->etag))
		return http_queue(c, kept, 200);
	if (!(r = MHD_create_response_from_buffer(0, (void *)"",
						  MHD_RESPMEM_PERSISTENT)))
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, c->etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY,
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	ret = http_queue(c, r, MHD_HTTP_NOT_MODIFIED);
	MHD_destroy_response(r);
	return ret;
}
