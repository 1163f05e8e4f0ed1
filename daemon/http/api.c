/* api.c: the route table of /api/v1, matching, credentials, body checks and answers. */
#include "api-int.h"
#include "db.h"
#include "err.h"
#include "guard.h"
#include "log.h"
#include "strbuf.h"
#include "token.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const struct api_field reason_fields[] = {
	{ "reason", F_STRING, 1 },
	{ NULL, 0, 0 },
};
static const struct api_field revert_fields[] = {
	{ "reason", F_STRING, 0 },
	{ "dry_run", F_BOOL, 0 },
	{ NULL, 0, 0 },
};
static const struct api_field no_fields[] = {
	{ NULL, 0, 0 },
};
static const struct api_field candidate_fields[] = {
	{ "upto", F_ID, 0 },
	{ NULL, 0, 0 },
};

/*
 * Every route of /api/v1; web/openapi.json describes the same (tests/61).
 * Reads whose answer is a function of the store alone are cacheable (http.c
 * keeps their answers until the database changes): not /health (the
 * daemon's step), /metrics (counters) or build logs (files that grow).
 */
#define C .cache = 1
#define A .admin = 1 /* revert and release need an admin token */
static const struct api_route routes[] = {
	{ "GET", "/patches", api_get_patches, 0, BODY_NONE, NULL,
	  "state,limit,offset,view,branch", C },
	{ "POST", "/patches", api_post_patches, 1, BODY_PATCH, NULL, "branch" },
	{ "GET", "/patches/{id}", api_get_patch, 0, BODY_NONE, NULL, "", C },
	{ "POST", "/patches/{id}/flag", api_post_flag, 1, BODY_JSON,
	  reason_fields, "" },
	{ "POST", "/patches/{id}/revert", api_post_revert, 1, BODY_JSON,
	  revert_fields, "", A },
	{ "POST", "/patches/{id}/override", api_post_override, 1, BODY_JSON,
	  reason_fields, "" },
	{ "GET", "/candidates", api_get_candidates, 0, BODY_NONE, NULL,
	  "purpose,limit,branch", C },
	{ "POST", "/candidates", api_post_candidates, 1, BODY_JSON,
	  candidate_fields, "branch" },
	{ "GET", "/candidates/{id}", api_get_candidate, 0, BODY_NONE, NULL, "", C },
	{ "GET", "/candidates/{id}/tests", api_get_candidate_tests, 0,
	  BODY_NONE, NULL, "status", C },
	{ "GET", "/builds/{id}/log", api_get_build_log, 0, BODY_NONE, NULL, "" },
	{ "GET", "/bisections", api_get_bisections, 0, BODY_NONE, NULL,
	  "limit,branch", C },
	{ "GET", "/bisections/{id}", api_get_bisection, 0, BODY_NONE, NULL,
	  "", C },
	{ "GET", "/reverts", api_get_reverts, 0, BODY_NONE, NULL, "branch",
	  C },
	{ "GET", "/reverts/{id}", api_get_revert, 0, BODY_NONE, NULL, "", C },
	{ "GET", "/reverts/{id}/patch", api_get_revert_patch, 0, BODY_NONE,
	  NULL, "", C },
	{ "GET", "/patches/{id}/diff", api_get_patch_diff, 0, BODY_NONE, NULL,
	  "", C },
	{ "GET", "/kcidb", api_get_kcidb, 0, BODY_NONE, NULL, "since", C },
	{ "GET", "/mail", api_get_mail, 0, BODY_NONE, NULL,
	  "state,limit,branch", C },
	{ "GET", "/branches", api_get_branches, 0, BODY_NONE, NULL, "", C },
	{ "GET", "/fixes", api_get_fixes, 0, BODY_NONE, NULL,
	  "branch,limit,offset", C },
	{ "GET", "/releases", api_get_releases, 0, BODY_NONE, NULL,
	  "branch,limit", C },
	{ "POST", "/mail/release", api_post_mail_release, 1, BODY_JSON,
	  no_fields, "", A },
	{ "POST", "/mail/{id}/release", api_post_mail_release, 1, BODY_JSON,
	  no_fields, "", A },
	{ "GET", "/rc", api_get_rc, 0, BODY_NONE, NULL, "branch", C },
	{ "POST", "/rc", api_post_rc, 1, BODY_JSON, no_fields, "branch", A },
	{ "POST", "/rc/override", api_post_rc_override, 1, BODY_JSON,
	  reason_fields, "branch", A },
	{ "GET", "/rc/{id}/patch", api_get_rc_patch, 0, BODY_NONE, NULL, "" },
	{ "GET", "/events", api_get_events, 0, BODY_NONE, NULL, "since,limit", C },
	{ "GET", "/health", api_get_health, 0, BODY_NONE, NULL, "" },
	{ "GET", "/metrics", api_get_metrics, 0, BODY_NONE, NULL, "" },
	{ "GET", "/routes", api_get_routes, 0, BODY_NONE, NULL, "", C },
	{ "GET", "/openapi.json", api_get_openapi, 0, BODY_NONE, NULL, "", C },
};
#undef C
#undef A
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

/* The scope a route's token needs (sql/012, token.h). */
static int route_scope(const struct api_route *r)
{
	return r->admin ? TOKEN_ADMIN : r->write ? TOKEN_WRITE : TOKEN_READ;
}

/* ---- answers ---- */

void api_response_init(struct api_response *res)
{
	memset(res, 0, sizeof(*res));
	strbuf_init(&res->body, 0);
	res->fd = -1;
}

void api_response_release(struct api_response *res)
{
	strbuf_release(&res->body);
	if (res->fd >= 0)
		close(res->fd);
	res->fd = -1;
}

static void reset_body(struct api_response *res)
{
	strbuf_reset(&res->body);
	if (res->fd >= 0)
		close(res->fd);
	res->fd = -1;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	strbuf_add(data, buf, size);
	return 0;
}

void api_json(struct api_response *res, int status, json_t *j)
{
	reset_body(res);
	res->status = status;
	res->content_type = "application/json";
	if (!j) {
		strbuf_addstr(&res->body, "null");
		return;
	}
	json_dump_callback(j, dump_cb, &res->body,
			   JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
}

void api_text(struct api_response *res, int status, const char *ctype,
	      const char *text, size_t len)
{
	reset_body(res);
	res->status = status;
	res->content_type = ctype;
	strbuf_add(&res->body, text, len);
}

struct status_name {
	int status;
	const char *code;
};
static const struct status_name status_names[] = {
	{ 400, "bad-request" },
	{ 401, "unauthorized" },
	{ 403, "forbidden" },
	{ 404, "not-found" },
	{ 405, "method-not-allowed" },
	{ 409, "conflict" },
	{ 413, "too-big" },
	{ 415, "unsupported-media-type" },
	{ 422, "invalid-patch" },
	{ 429, "too-many-requests" },
	{ 500, "internal" },
	{ 503, "unavailable" },
};

/* The error code string used for an HTTP status ("not-found", ...). */
static const char *api_status_code(int status)
{
	for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]);
	     i++)
		if (status_names[i].status == status)
			return status_names[i].code;
	return "error";
}

void api_error(struct api_response *res, int status, const char *code,
	       const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	json_t *j, *v;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	j = json_object();
	json_object_set_new(j, "error", json_string(code));
	if (!(v = json_string(msg.buf))) {
		/* A parser's message may quote bytes that are not UTF-8. */
		for (size_t i = 0; i < msg.len; i++)
			if ((unsigned char)msg.buf[i] >= 0x80 || !msg.buf[i])
				msg.buf[i] = '?';
		v = json_string(msg.buf);
	}
	json_object_set_new(j, "message", v);
	strbuf_release(&msg);
	api_json(res, status, j);
}

/* Module error codes (err.h) and the answers they make. */
struct code_status {
	int code, status;
};
static const struct code_status code_statuses[] = {
	{ ERR_NOTFOUND, 404 }, { ERR_INVALID, 400 }, { ERR_CONFLICT, 409 },
	{ ERR_EXISTS, 409 },   { ERR_TOOBIG, 413 },  { ERR_AUTH, 403 },
};

void api_fail(struct api_response *res, int code)
{
	int status = 500;

	for (size_t i = 0; i < sizeof(code_statuses) / sizeof(code_statuses[0]);
	     i++)
		if (code_statuses[i].code == code)
			status = code_statuses[i].status;
	api_error(res, status, api_status_code(status), "%s",
		  *err_msg() ? err_msg() : "failed");
}

/* ---- metrics of answers ---- */

static const int counted[] = { 200, 201, 202, 400, 401, 403, 404, 405,
			       409, 413, 415, 422, 429, 500, 503 };
#define NCOUNTED (sizeof(counted) / sizeof(counted[0]))
static atomic_ullong status_counts[NCOUNTED + 1]; /* last: any other */

void api_note_status(int status)
{
	size_t i;

	for (i = 0; i < NCOUNTED && counted[i] != status; i++)
		;
	atomic_fetch_add_explicit(&status_counts[i], 1, memory_order_relaxed);
}

/* Used by /metrics (api-status.c). */
void api_status_counts(void (*emit)(const char *code, unsigned long long n,
				    void *ctx),
		       void *ctx);
void api_status_counts(void (*emit)(const char *code, unsigned long long n,
				    void *ctx),
		       void *ctx)
{
	char code[8];

	for (size_t i = 0; i <= NCOUNTED; i++) {
		unsigned long long n = atomic_load_explicit(
			&status_counts[i], memory_order_relaxed);
		if (i < NCOUNTED)
			snprintf(code, sizeof(code), "%d", counted[i]);
		else
			strcpy(code, "other");
		emit(code, n, ctx);
	}
}

/* ---- query ---- */

const char *api_arg(const struct api_request *req, const char *name)
{
	for (size_t i = 0; i < req->nargs; i++)
		if (!strcmp(req->arg_names[i], name))
			return req->arg_values[i] ? req->arg_values[i] : "";
	return NULL;
}

int api_arg_int(const struct api_request *req, struct api_response *res,
		const char *name, long long def, long long min, long long max,
		long long *out)
{
	const char *v = api_arg(req, name);
	char *end;
	long long n;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || !isdigit((unsigned char)*v) ||
	    n < min || n > max) {
		api_error(res, 400, "bad-request",
			  "query argument %s must be an integer from %lld to"
			  " %lld, not '%.40s'",
			  name, min, max, v);
		return -1;
	}
	*out = n;
	return 0;
}

/* Each name at most once, and only the route's. */
static int check_query(const struct api_request *req, struct api_response *res,
		       const char *allowed)
{
	for (size_t i = 0; i < req->nargs; i++) {
		const char *n = req->arg_names[i];
		size_t len = strlen(n);
		const char *p = allowed;
		int ok = 0;

		while (p && *p && !ok) {
			const char *comma = strchr(p, ',');
			size_t l = comma ? (size_t)(comma - p) : strlen(p);
			ok = l == len && !strncmp(p, n, l);
			p = comma ? comma + 1 : NULL;
		}
		if (!ok) {
			api_error(res, 400, "bad-request",
				  "unknown query argument '%.40s' (%s%s)", n,
				  *allowed ? "known: " : "this route takes none",
				  allowed);
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(req->arg_names[j], n)) {
				api_error(res, 400, "bad-request",
					  "query argument '%.40s' given twice",
					  n);
				return -1;
			}
	}
	return 0;
}

/* ---- JSON ---- */

json_t *api_json_text(const char *s)
{
	json_t *j;

	if (!s)
		return json_null();
	j = json_loads(s, JSON_DECODE_ANY, NULL);
	return j ? j : json_string(s);
}

json_t *api_counts(const char *const *names, size_t n, json_t *got)
{
	json_t *o, *v;
	const char *k;

	if (!got)
		return NULL;
	o = json_object();
	for (size_t i = 0; i < n; i++)
		json_object_set_new(o, names[i], json_integer(0));
	json_object_foreach(got, k, v) json_object_set(o, k, v);
	json_decref(got);
	return o;
}

/* ---- routing ---- */

/*
 * Matches path against pattern segment by segment; "{id}" takes a
 * positive decimal without a leading zero.
 */
static int match(const char *pattern, const char *path, long long *id)
{
	const char *p = pattern, *q = path;

	while (*p && *q) {
		if (!strncmp(p, "{id}", 4)) {
			size_t n = strspn(q, "0123456789");
			if (!n || n > 18 || *q == '0')
				return 0;
			*id = strtoll(q, NULL, 10);
			p += 4;
			q += n;
			continue;
		}
		if (*p != *q)
			return 0;
		p++;
		q++;
	}
	return !*p && !*q;
}

json_t *api_routes_json(void)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < NROUTES; i++) {
		json_t *q = json_array();
		const char *p = routes[i].query;
		while (p && *p) {
			size_t n = strcspn(p, ",");
			json_array_append_new(q, json_stringn(p, n));
			p += n + (p[n] == ',');
		}
		json_array_append_new(
			arr, json_pack("{s:s, s:s, s:b, s:s, s:o}", "method",
				       routes[i].method, "path",
				       routes[i].pattern, "write",
				       routes[i].write, "scope",
				       token_scope_name(route_scope(&routes[i])),
				       "query", q));
	}
	return arr;
}

/*
 * The credentials: a token if one is presented (a wrong one is refused
 * even where none is needed), else whether this request may go without.
 */
static int check_auth(struct api_request *req, struct api_response *res)
{
	const char *h = req->authorization,
		   *access = req->app.bc.cfg.read_access;
	int needs = req->route->write || !strcmp(access, "token") ||
		    (!strcmp(access, "loopback") && !req->loopback);
	char *name = NULL;
	size_t len;
	int ret, scope = 0;

	if (!h) {
		if (!needs)
			return 0;
		res->www_authenticate = 1;
		if (req->route->write)
			api_error(res, 401, "unauthorized",
				  "%s %s changes the queue: it needs"
				  " 'Authorization: Bearer <token>' (stableq"
				  " token add NAME)",
				  req->method, req->route->pattern);
		else
			api_error(res, 401, "unauthorized",
				  "reads need a token here (read_access = %s)",
				  access);
		return -1;
	}
	if (strncasecmp(h, "Bearer ", 7)) {
		res->www_authenticate = 1;
		api_error(res, 401, "unauthorized",
			  "the Authorization header must be 'Bearer <token>'");
		return -1;
	}
	h += 7;
	while (*h == ' ')
		h++;
	len = strlen(h);
	while (len && h[len - 1] == ' ')
		len--;
	if (!len) {
		res->www_authenticate = 1;
		api_error(res, 401, "unauthorized",
			  "the Authorization header has no token");
		return -1;
	}
	ret = token_check_scoped(req->app.bc.db, h, len, &name, &scope);
	if (ret == ERR_AUTH) {
		api_error(res, 403, "forbidden", "the token is not valid");
		return -1;
	}
	if (ret < 0) {
		api_fail(res, ret);
		return -1;
	}
	if (scope < route_scope(req->route)) {
		api_error(res, 403, "forbidden",
			  "token '%s' has scope %s: %s %s needs %s", name,
			  token_scope_name(scope), req->method,
			  req->route->pattern,
			  token_scope_name(route_scope(req->route)));
		free(name);
		return -1;
	}
	req->actor = xstrfmt("token:%s", name);
	req->app.bc.actor = req->actor;
	req->scope = scope;
	free(name);
	return 0;
}

int api_cacheable(const struct api_request *req)
{
	return req->route && req->route->cache;
}

int api_takes_body(const struct api_request *req)
{
	return req->route && req->route->body != BODY_NONE;
}

int api_begin(struct api_request *req, struct api_response *res)
{
	const char *method = req->method;
	struct strbuf allow = STRBUF_INIT;
	long long id = 0;

	if (!strcmp(method, "HEAD"))
		method = "GET";
	req->route = NULL;
	for (size_t i = 0; i < NROUTES; i++) {
		if (!match(routes[i].pattern, req->path, &id))
			continue;
		if (!strcmp(routes[i].method, method)) {
			req->route = &routes[i];
			req->id = id;
			break;
		}
		strbuf_addf(&allow, "%s%s", allow.len ? ", " : "",
			    routes[i].method);
		if (!strcmp(routes[i].method, "GET"))
			strbuf_addstr(&allow, ", HEAD");
	}
	if (!req->route) {
		if (allow.len) {
			api_error(res, 405, "method-not-allowed",
				  "%s is not allowed on %s (allowed: %s)",
				  req->method, req->path, allow.buf);
			snprintf(res->allow, sizeof(res->allow), "%s",
				 allow.buf);
		} else {
			api_error(res, 404, "not-found", "no route for %s %.200s",
				  req->method, req->path);
		}
		strbuf_release(&allow);
		return 1;
	}
	strbuf_release(&allow);
	req->is_write = req->route->write;
	if (check_auth(req, res) < 0)
		return 1;
	if (check_query(req, res, req->route->query) < 0)
		return 1;
	return 0;
}

/* ---- bodies ---- */

/* The media type without parameters equals one of the ';'-separated list. */
static int media_type_in(const char *ct, const char *list)
{
	size_t n;
	const char *p = list;

	while (*ct == ' ')
		ct++;
	n = strcspn(ct, "; ");
	while (*p) {
		size_t l = strcspn(p, ";");
		if (l == n && !strncasecmp(p, ct, n))
			return 1;
		p += l + (p[l] == ';');
	}
	return 0;
}

static const char *const ftype_names[] = {
	[F_STRING] = "a non-empty string",
	[F_BOOL] = "true or false",
	[F_ID] = "a positive integer id",
};

#define REASON_MAX 8192

static int field_ok(const struct api_field *f, json_t *v)
{
	switch (f->type) {
	case F_STRING: {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		if (!s || strlen(s) != len || !len || len > REASON_MAX)
			return 0;
		for (size_t i = 0; i < len; i++)
			if (!isspace((unsigned char)s[i]))
				return 1;
		return 0;
	}
	case F_BOOL:
		return json_is_boolean(v);
	case F_ID:
		return json_is_integer(v) && json_integer_value(v) > 0;
	}
	return 0;
}

/*
 * What a route's body may be sent as. The route says what the body is, so
 * the type only has to agree: curl -d and --data-binary send
 * application/x-www-form-urlencoded unless told otherwise, and the
 * README's commands work as written (a form-encoded body that is not JSON
 * is then refused as malformed JSON).
 */
#define CURL_DEFAULT "application/x-www-form-urlencoded"
#define JSON_TYPES "application/json;" CURL_DEFAULT
#define PATCH_TYPES                                                            \
	"text/plain;message/rfc822;application/mbox;text/x-patch;text/x-diff;" \
	CURL_DEFAULT

static json_t *json_body(struct api_request *req, struct api_response *res)
{
	const struct api_field *fields = req->route->fields;
	json_error_t e;
	const char *key;
	json_t *j, *v;

	if (req->content_type &&
	    !media_type_in(req->content_type, JSON_TYPES)) {
		api_error(res, 415, "unsupported-media-type",
			  "the body must be application/json (or curl -d's"
			  " default, application/x-www-form-urlencoded, read"
			  " as JSON), not %.80s",
			  req->content_type);
		return NULL;
	}
	if (!req->body_len) {
		j = json_object();
	} else if (!(j = json_loadb(req->body, req->body_len,
				    JSON_REJECT_DUPLICATES, &e))) {
		api_error(res, 400, "bad-request",
			  "malformed JSON: %s (line %d, column %d)", e.text,
			  e.line, e.column);
		return NULL;
	}
	if (!json_is_object(j)) {
		api_error(res, 400, "bad-request",
			  "the body must be a JSON object");
		goto bad;
	}
	json_object_foreach(j, key, v)
	{
		const struct api_field *f = fields;
		while (f && f->name && strcmp(f->name, key))
			f++;
		if (!f || !f->name) {
			api_error(res, 400, "bad-request",
				  "unknown field '%.40s'", key);
			goto bad;
		}
		if (!field_ok(f, v)) {
			api_error(res, 400, "bad-request",
				  "field '%s' must be %s%s", f->name,
				  ftype_names[f->type],
				  f->type == F_STRING ? " (at most 8192 bytes)"
						      : "");
			goto bad;
		}
	}
	for (const struct api_field *f = fields; f && f->name; f++)
		if (f->required && !json_object_get(j, f->name)) {
			api_error(res, 400, "bad-request",
				  "field '%s' is required", f->name);
			goto bad;
		}
	return j;
bad:
	json_decref(j);
	return NULL;
}


void api_run(struct api_request *req, struct api_response *res)
{
	const struct api_route *r = req->route;
	json_t *body = NULL;

	err_clear();
	switch (r->body) {
	case BODY_NONE:
		break;
	case BODY_JSON:
		if (!(body = json_body(req, res)))
			return;
		break;
	case BODY_PATCH:
		if (!req->content_type ||
		    !media_type_in(req->content_type, PATCH_TYPES)) {
			api_error(res, 415, "unsupported-media-type",
				  "a patch is sent as text/plain,"
				  " message/rfc822, application/mbox,"
				  " text/x-patch, text/x-diff or curl's"
				  " default (" CURL_DEFAULT "), not %.80s",
				  req->content_type ? req->content_type
						    : "(none)");
			return;
		}
		break;
	}
	/* a write is one step for the bulk-mail guard */
	long long mark = r->write ? guard_mark(req->app.bc.db) : 0;
	r->fn(req, res, body);
	if (r->write && guard_apply(req->app.bc.db, &req->app.bc.cfg, mark,
				    r->pattern, req->app.bc.actor) < 0)
		log_warnx("http: %s %s: bulk-mail guard: %s", req->method,
			  req->path, err_msg());
	json_decref(body);
}
