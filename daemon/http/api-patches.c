/* api-patches.c: /patches: the queue, one patch with its history, import, flag, revert, override. */
#include "api-int.h"
#include "coverage.h"
#include "db.h"
#include "err.h"
#include "intake.h"
#include "log.h"
#include "queue.h"
#include "revert.h"
#include "outbox.h"
#include "candidate.h"
#include "serve.h"
#include "token.h"

#include <stdlib.h>
#include <string.h>

#define LIST_DEFAULT 50
#define LIST_MAX 1000
#define PATCH_CANDIDATES 20 /* recent candidates shown with a patch */

void api_get_patches(struct api_request *req, struct api_response *res,
		     json_t *body)
{
	const char *state = api_arg(req, "state");
	const char *view = api_arg(req, "view");
	long long limit, offset, branch, total = 0;
	json_t *list;

	if (state && queue_state_parse(state) < 0) {
		api_error(res, 400, "bad-request", "unknown state '%.40s'",
			  state);
		return;
	}
	/* summary: what the queue at a glance needs; full: every verdict's
	 * detail, tags and files too (GET /patches/{id} has all). */
	if (view && strcmp(view, "summary") && strcmp(view, "full")) {
		api_error(res, 400, "bad-request",
			  "unknown view '%.40s' (summary or full)", view);
		return;
	}
	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", LIST_DEFAULT, 1, LIST_MAX, &limit) <
		    0 ||
	    api_arg_int(req, res, "offset", 0, 0, 1LL << 40, &offset) < 0)
		return;
	if (!(list = queue_list_json_branch(
		      req->app.bc.db, branch, state, limit, offset, &total,
		      view && !strcmp(view, "full") ? LIST_FULL
						    : LIST_SUMMARY)) ||
	    api_set_branches(req->app.bc.db, list, BRANCH_OF_PATCH) < 0) {
		json_decref(list);
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200,
		 json_pack("{s:I, s:I, s:I, s:o}", "total", (json_int_t)total,
			   "limit", (json_int_t)limit, "offset",
			   (json_int_t)offset, "patches", list));
}

/* 404 unless the patch exists; its state in *state. */
static int patch_exists(struct api_request *req, struct api_response *res,
			enum patch_state *state)
{
	int ret = queue_get_state(req->app.bc.db, req->id, state);

	if (ret < 0) {
		api_fail(res, ret);
		return -1;
	}
	return 0;
}

/*
 * The candidates that included the patch, each with its build and test
 * results (with log excerpts), newest first.
 */
static json_t *patch_candidates(sqlite3 *db, long long id)
{
	json_t *ids = candidate_ids_with(db, id, PATCH_CANDIDATES), *v;
	json_t *arr = json_array();
	size_t i;

	json_array_foreach(ids, i, v)
	{
		json_t *c = candidate_json(db, json_integer_value(v));
		if (c)
			json_array_append_new(arr, c);
	}
	json_decref(ids);
	return arr;
}

void api_get_patch(struct api_request *req, struct api_response *res,
		   json_t *body)
{
	sqlite3 *db = req->app.bc.db;
	enum patch_state state;
	json_t *p;

	if (patch_exists(req, res, &state) < 0)
		return;
	if (!(p = queue_patch_json(db, req->id, 1))) {
		api_fail(res, ERR_IO);
		return;
	}
	json_t *cands = patch_candidates(db, req->id);
	if (api_set_branches(db, p, BRANCH_OF_PATCH) < 0 ||
	    api_set_branches(db, cands, BRANCH_OF_CANDIDATE) < 0) {
		json_decref(p);
		json_decref(cands);
		api_fail(res, ERR_IO);
		return;
	}
	json_object_set_new(p, "candidates", cands);
	json_object_set_new(p, "coverage", coverage_patch_json(db, req->id));
	json_object_set_new(p, "reverts", revert_items_of_json(db, req->id));
	json_object_set_new(p, "mail", outbox_patch_json(db, req->id));
	api_json(res, 200, p);
}

/* A failure of the checks after an import: the import stands, and the
 * daemon's check step takes the patches again. */
static void log_checks(const char *key, int ret,
		       const struct check_summary *sum, void *ctx)
{
	(void)ctx;
	if (sum && ret < 0 && ret != ERR_NOTFOUND)
		log_warnx("POST /patches: checks of branch %s: %s", key,
			  err_msg());
}

void api_post_patches(struct api_request *req, struct api_response *res,
		      json_t *body)
{
	struct intake_source src = { .buf = req->body, .len = req->body_len,
				     .name = "request body" };
	struct intake_report rep = { .checked = log_checks };
	struct intake_result r;
	long long branch;
	json_t *ids;
	int ret;

	if (!req->body_len) {
		api_error(res, 400, "bad-request",
			  "the body is empty: send an mbox or a patch");
		return;
	}
	/*
	 * ?branch=KEY: its queue, and a [PATCH X.Y] naming another branch is
	 * refused; none: [PATCH X.Y] picks the branch, else the first one
	 * (as `stableq import` with and without --branch). The patches are
	 * checked before the answer, as `stableq import` checks them.
	 */
	if (api_branch_arg(req, res, &branch) < 0)
		return;
	ret = intake_submit(&req->app.bc, branch, &src, &rep, &r);
	if (ret == ERR_INVALID || ret == ERR_NOTFOUND) {
		api_error(res, 422, "invalid-patch", "%s", err_msg());
		return;
	}
	if (ret < 0) {
		api_fail(res, ret);
		return;
	}
	ids = json_array();
	for (size_t i = 0; i < r.nids; i++)
		json_array_append_new(ids, json_integer(r.ids[i]));
	api_json(res, r.added ? 201 : 200,
		 json_pack("{s:I, s:I, s:o}", "added", (json_int_t)r.added,
			   "duplicates", (json_int_t)r.duplicates, "ids", ids));
	if (r.added)
		serve_wake(); /* the queue changed: a candidate is due */
	intake_result_release(&r);
}

/* Answers {patch: {...}} after a change. */
static void answer_patch(struct api_request *req, struct api_response *res,
			 int status)
{
	json_t *p = queue_patch_json(req->app.bc.db, req->id, 0);

	if (p)
		api_set_branches(req->app.bc.db, p, BRANCH_OF_PATCH);
	api_json(res, status, json_pack("{s:o*}", "patch", p));
}

void api_post_flag(struct api_request *req, struct api_response *res,
		   json_t *body)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));
	/* a write token may flag; only an admin's flag may revert by itself */
	int ret = flag_patch_as(&req->app.bc, req->id, reason, NULL,
				req->scope >= TOKEN_ADMIN ? FLAG_TRUSTED
							  : FLAG_UNTRUSTED);

	if (ret < 0) {
		api_fail(res, ret);
		return;
	}
	answer_patch(req, res, 200);
	serve_wake(); /* a broken patch is dropped or reverted next */
}

void api_post_revert(struct api_request *req, struct api_response *res,
		     json_t *body)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));
	int dry_run = json_is_true(json_object_get(body, "dry_run"));
	enum patch_state state;
	long long revert_id = 0, confirm_id = 0;
	json_t *plan;
	int ret;

	if (!dry_run && !reason) {
		api_error(res, 400, "bad-request",
			  "field 'reason' is required unless dry_run is true");
		return;
	}
	if (patch_exists(req, res, &state) < 0)
		return;
	if (dry_run) {
		/* NULL after the patch exists: it cannot be taken out (any more). */
		if (!(plan = revert_plan(&req->app.bc, req->id))) {
			api_error(res, 409, "conflict", "%s",
				  *err_msg() ? err_msg()
					     : "the patch cannot be reverted");
			return;
		}
		api_json(res, 200, json_pack("{s:b, s:o}", "dry_run", 1,
					     "plan", plan));
		return;
	}
	if ((ret = revert_run(&req->app.bc, req->id, reason, 1, &revert_id,
			      &confirm_id)) < 0) {
		api_fail(res, ret);
		return;
	}
	api_json(res, 201,
		 json_pack("{s:b, s:I, s:I, s:o*}", "dry_run", 0, "revert_id",
			   (json_int_t)revert_id, "confirm_candidate_id",
			   (json_int_t)confirm_id, "revert",
			   revert_json(req->app.bc.db, revert_id)));
	serve_wake(); /* the daemon runs the confirmation (revert_confirm_due) */
}

void api_post_override(struct api_request *req, struct api_response *res,
		       json_t *body)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));
	int ret = override_patch(&req->app.bc, req->id, reason);

	if (ret < 0) {
		api_fail(res, ret);
		return;
	}
	answer_patch(req, res, 200);
	serve_wake();
}
