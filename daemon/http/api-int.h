/* api-int.h: what the route handlers (api-*.c) share with the table in api.c. */
#ifndef STABLEQ_API_INT_H
#define STABLEQ_API_INT_H

#include "api.h"

#include <jansson.h>
#include <sqlite3.h>

/* How a route reads its body. */
enum api_body {
	BODY_NONE,  /* none (reads) */
	BODY_JSON,  /* a JSON object with the route's fields */
	BODY_PATCH, /* an mbox or a patch (text/plain, message/rfc822, ...) */
};

enum api_ftype { F_STRING, F_BOOL, F_ID };

/* One field of a JSON body; a route's list ends with a NULL name. */
struct api_field {
	const char *name;
	enum api_ftype type;
	int required;
};

/*
 * A handler answers in res. body is the validated JSON object for
 * BODY_JSON routes (borrowed), NULL otherwise; req->id is the path's {id}.
 */
typedef void (*api_handler)(struct api_request *req, struct api_response *res,
			    json_t *body);

struct api_route {
	const char *method;  /* GET or POST */
	const char *pattern; /* "/patches/{id}/flag" */
	api_handler fn;
	int write;           /* changes the store: always needs a token */
	enum api_body body;
	const struct api_field *fields;
	const char *query;   /* allowed query names: "state,limit,offset" */
	int cache;           /* the answer depends on the store alone */
	int admin;           /* a write only an admin token may make */
};

/* Answers status with j as JSON (j is stolen). */
void api_json(struct api_response *res, int status, json_t *j);
/* Answers the error code of a module (err.h) with err_msg(). */
void api_fail(struct api_response *res, int code);

/* The query argument name, or NULL. */
const char *api_arg(const struct api_request *req, const char *name);
/*
 * The query argument name as an integer in [min, max]; def if absent.
 * Negative with a 400 answered in res if it is not.
 */
int api_arg_int(const struct api_request *req, struct api_response *res,
		const char *name, long long def, long long min, long long max,
		long long *out);

/* A copy of s as JSON: the parsed value if it is JSON text, else a string. */
json_t *api_json_text(const char *s);

/*
 * {name: count} with every one of names present (0), then the counts of
 * got (an owner's {name: count}, taken: it is freed). New reference, NULL
 * when got is NULL (the owner failed).
 */
json_t *api_counts(const char *const *names, size_t n, json_t *got);

/*
 * ?branch=KEY: the branch's row id in *id (0 when the query has none).
 * Negative with a 400 answered in res naming the key and the known ones.
 */
int api_branch_arg(struct api_request *req, struct api_response *res,
		   long long *id);

/* Whose "id" an object carries, for api_set_branches(). */
enum api_branch_of { BRANCH_OF_PATCH, BRANCH_OF_CANDIDATE, BRANCH_OF_REVERT };
/*
 * Sets "branch" (the branch's key, or null) on objs: one object or an
 * array of them, each found by its "id" (one query in all).
 */
int api_set_branches(sqlite3 *db, json_t *objs, enum api_branch_of of);

/* The handlers, by page (one file each). */
void api_get_patches(struct api_request *, struct api_response *, json_t *);
void api_get_patch(struct api_request *, struct api_response *, json_t *);
void api_post_patches(struct api_request *, struct api_response *, json_t *);
void api_post_flag(struct api_request *, struct api_response *, json_t *);
void api_post_revert(struct api_request *, struct api_response *, json_t *);
void api_post_override(struct api_request *, struct api_response *, json_t *);

void api_get_candidates(struct api_request *, struct api_response *, json_t *);
void api_post_candidates(struct api_request *, struct api_response *, json_t *);
void api_get_candidate(struct api_request *, struct api_response *, json_t *);
void api_get_candidate_tests(struct api_request *, struct api_response *,
			     json_t *);
void api_get_build_log(struct api_request *, struct api_response *, json_t *);
void api_get_bisections(struct api_request *, struct api_response *, json_t *);
void api_get_bisection(struct api_request *, struct api_response *, json_t *);
void api_get_reverts(struct api_request *, struct api_response *, json_t *);
void api_get_revert(struct api_request *, struct api_response *, json_t *);
void api_get_revert_patch(struct api_request *, struct api_response *,
			  json_t *);

void api_get_kcidb(struct api_request *, struct api_response *, json_t *);
void api_get_patch_diff(struct api_request *, struct api_response *,
			json_t *);

void api_get_branches(struct api_request *, struct api_response *, json_t *);
void api_get_fixes(struct api_request *, struct api_response *, json_t *);
void api_get_releases(struct api_request *, struct api_response *, json_t *);

void api_get_mail(struct api_request *, struct api_response *, json_t *);
void api_post_mail_release(struct api_request *, struct api_response *,
			   json_t *);
void api_get_rc(struct api_request *, struct api_response *, json_t *);
void api_post_rc(struct api_request *, struct api_response *, json_t *);
void api_post_rc_override(struct api_request *, struct api_response *,
			  json_t *);
void api_get_rc_patch(struct api_request *, struct api_response *, json_t *);
void api_get_events(struct api_request *, struct api_response *, json_t *);
void api_get_health(struct api_request *, struct api_response *, json_t *);
void api_get_metrics(struct api_request *, struct api_response *, json_t *);
void api_get_routes(struct api_request *, struct api_response *, json_t *);
void api_get_openapi(struct api_request *, struct api_response *, json_t *);

#endif
