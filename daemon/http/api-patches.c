/* api-patches.c: /patches: the queue, one patch with its history, import, flag, revert, override. */
#include "api-int.h"
#include "coverage.h"
#include "db.h"
#include "err.h"
#include "intake.h"
#include "queue.h"
#include "revert.h"
#include "candidate.h"
#include "serve.h"

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
	if (!(list = queue_list_json_branch(req->app.db, branch, state, limit,
					    offset, &total,
					    view && !strcmp(view, "full")
						    ? LIST_FULL
						    : LIST_SUMMARY)) ||
	    api_set_branches(req->app.db, list, BRANCH_OF_PATCH) < 0) {
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
	int ret = queue_get_state(req->app.db, req->id, state);

	if (ret < 0) {
		api_fail(res, ret);
		return -1;
	}
	return 0;
}

static const char sql_patch_candidates[] =
	"SELECT DISTINCT c.id FROM candidates c, json_each(c.patch_ids) j"
	" WHERE j.value = ? ORDER BY c.id DESC LIMIT ?";
static const char sql_patch_reverts[] =
	"SELECT r.id, r.state, r.reason, r.actor, r.created_at,"
	" r.finished_at, i.action, i.why, i.revert_commit, r.patch_id AS"
	" culprit_patch_id FROM revert_items i JOIN reverts r ON r.id ="
	" i.revert_id WHERE i.patch_id = ? ORDER BY r.id";
static const char sql_patch_mail[] =
	"SELECT id, kind, state, attempts, last_error, created_at, sent_at"
	" FROM mail WHERE patch_id = ? ORDER BY id";

/*
 * The candidates that included the patch, each with its build and test
 * results (with log excerpts), newest first.
 */
static json_t *patch_candidates(sqlite3 *db, long long id)
{
	sqlite3_stmt *st = db_prepare(db, sql_patch_candidates, "ii", id,
				      (long long)PATCH_CANDIDATES);
	json_t *arr = json_array();

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		json_t *c = candidate_json(db, sqlite3_column_int64(st, 0));
		if (c)
			json_array_append_new(arr, c);
	}
	sqlite3_finalize(st);
	return arr;
}

void api_get_patch(struct api_request *req, struct api_response *res,
		   json_t *body)
{
	sqlite3 *db = req->app.db;
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
	json_object_set_new(p, "reverts",
			    db_rows_json(db, sql_patch_reverts, "i", req->id));
	json_object_set_new(p, "mail",
			    db_rows_json(db, sql_patch_mail, "i", req->id));
	api_json(res, 200, p);
}

void api_post_patches(struct api_request *req, struct api_response *res,
		      json_t *body)
{
	struct intake_result r;
	long long branch;
	unsigned flags;
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
	 * (as `stableq import` with and without --branch).
	 */
	if (api_branch_arg(req, res, &branch) < 0)
		return;
	flags = intake_flags(req->app.cfg.nbranches, branch != 0);
	if (!branch && (branch = queue_default_branch(req->app.db)) < 0) {
		api_fail(res, (int)branch);
		return;
	}
	ret = intake_import_buffer_to(req->app.db, branch, flags, req->body,
				      req->body_len, "request body",
				      (size_t)req->app.cfg.max_patch_bytes,
				      req->app.actor, &r);
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
		serve_wake(); /* the checks run next */
	intake_result_release(&r);
}

/* Answers {patch: {...}} after a change. */
static void answer_patch(struct api_request *req, struct api_response *res,
			 int status)
{
	json_t *p = queue_patch_json(req->app.db, req->id, 0);

	if (p)
		api_set_branches(req->app.db, p, BRANCH_OF_PATCH);
	api_json(res, status, json_pack("{s:o*}", "patch", p));
}

void api_post_flag(struct api_request *req, struct api_response *res,
		   json_t *body)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));
	int ret = flag_patch(&req->app, req->id, reason, NULL);

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
		if (!(plan = revert_plan(&req->app, req->id))) {
			api_error(res, 409, "conflict", "%s",
				  *err_msg() ? err_msg()
					     : "the patch cannot be reverted");
			return;
		}
		api_json(res, 200, json_pack("{s:b, s:o}", "dry_run", 1,
					     "plan", plan));
		return;
	}
	if ((ret = revert_run(&req->app, req->id, reason, 1, &revert_id,
			      &confirm_id)) < 0) {
		api_fail(res, ret);
		return;
	}
	api_json(res, 201,
		 json_pack("{s:b, s:I, s:I, s:o*}", "dry_run", 0, "revert_id",
			   (json_int_t)revert_id, "confirm_candidate_id",
			   (json_int_t)confirm_id, "revert",
			   revert_json(req->app.db, revert_id)));
	serve_wake(); /* the daemon runs the confirmation (revert_confirm_due) */
}

void api_post_override(struct api_request *req, struct api_response *res,
		       json_t *body)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));
	int ret = override_patch(&req->app, req->id, reason);

	if (ret < 0) {
		api_fail(res, ret);
		return;
	}
	answer_patch(req, res, 200);
	serve_wake();
}
