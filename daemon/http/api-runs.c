/* api-runs.c: /candidates, /builds, /bisections, /reverts: the runs and what they decided. */
#include "api-int.h"
#include "bisect.h"
#include "branch.h"
#include "candidate.h"
#include "db.h"
#include "err.h"
#include "queue.h"
#include "revert.h"
#include "testcase.h"
#include "serve.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECENT_DEFAULT 20
#define RECENT_MAX 500

/* 404 unless a row of table has the request's id (table is a literal). */
static int row_exists(struct api_request *req, struct api_response *res,
		      int (*exists)(sqlite3 *, long long), const char *what)
{
	int ret = exists(req->app.bc.db, req->id);

	if (ret == ERR_NOTFOUND) {
		api_error(res, 404, "not-found", "%s %lld: no such %s", what,
			  req->id, what);
		return -1;
	}
	if (ret < 0) {
		api_fail(res, ret);
		return -1;
	}
	return 0;
}

/* Answers j, or a 500 with the module's message when it is NULL. */
static void answer(struct api_response *res, json_t *j)
{
	if (!j) {
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200, j);
}

/* ---- candidates ---- */

static const char *const purposes[] = { "queue", "bisect", "confirm",
					"baseline", NULL };

void api_get_candidates(struct api_request *req, struct api_response *res,
			json_t *body)
{
	const char *purpose = api_arg(req, "purpose");
	long long limit, branch;
	size_t i;

	for (i = 0; purpose && purposes[i] && strcmp(purposes[i], purpose); i++)
		;
	if (purpose && !purposes[i]) {
		api_error(res, 400, "bad-request",
			  "purpose must be queue, bisect, confirm or baseline");
		return;
	}
	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", RECENT_DEFAULT, 1, RECENT_MAX,
			&limit) < 0)
		return;
	json_t *rows =
		candidate_list_json(req->app.bc.db, purpose, branch, limit);
	if (rows &&
	    branch_fill(req->app.bc.db, rows, "branch", BRANCH_KEY) < 0) {
		json_decref(rows);
		rows = NULL;
	}
	answer(res, rows ? json_pack("{s:o}", "candidates", rows) : NULL);
}

void api_post_candidates(struct api_request *req, struct api_response *res,
			 json_t *body)
{
	json_t *upto = json_object_get(body, "upto");
	long long id, branch, upto_id = upto ? json_integer_value(upto) : 0;
	enum patch_state state;
	int ret, created = 0;

	if (api_branch_arg(req, res, &branch) < 0)
		return;
	if (upto_id &&
	    (ret = queue_get_state(req->app.bc.db, upto_id, &state)) < 0) {
		api_fail(res, ret);
		return;
	}
	/* the branch: ?branch=KEY, else upto's, else the first one */
	if (!branch && upto_id &&
	    (branch = queue_branch_of(req->app.bc.db, upto_id)) < 0) {
		api_fail(res, (int)branch);
		return;
	}
	if (!branch && (branch = queue_default_branch(req->app.bc.db)) < 0) {
		api_fail(res, (int)branch);
		return;
	}
	/* an unchanged queue's candidate is the one already asked for;
	 * pending work is capped per token */
	id = candidate_request(req->app.bc.db, branch, upto_id,
			       req->app.bc.actor,
			       req->app.bc.cfg.candidates_pending_max, &created);
	if (id == ERR_TOOBIG) {
		api_error(res, 429, "too-many-requests", "%s", err_msg());
		return;
	}
	if (id < 0) {
		api_fail(res, (int)id);
		return;
	}
	if (!created) {
		json_t *c = candidate_json(req->app.bc.db, id);
		json_t *step = json_object_get(c, "step");
		api_json(res, 200,
			 json_pack("{s:I, s:s, s:b}", "id", (json_int_t)id,
				   "step",
				   json_is_string(step)
					   ? json_string_value(step)
					   : "pending",
				   "created", 0));
		json_decref(c);
		return;
	}
	api_json(res, 202, json_pack("{s:I, s:s, s:b}", "id", (json_int_t)id,
				     "step", "pending", "created", 1));
	serve_wake(); /* the daemon runs it */
}

/*
 * Its test cases against the tip, regressions first (testcase.h); a
 * candidate never classified (a bisection step, a run older than test
 * cases) answers "classified": false and no tests.
 */
void api_get_candidate_tests(struct api_request *req, struct api_response *res,
			     json_t *body)
{
	const char *status = api_arg(req, "status");
	struct testcase_counts c;
	long long tip = 0;

	if (status && !testcase_status_valid(status)) {
		api_error(res, 400, "bad-request",
			  "status must be regression, known, flaky, pass or"
			  " skip");
		return;
	}
	if (row_exists(req, res, candidate_exists, "candidate") < 0)
		return;
	int classified = testcase_counts(req->app.bc.db, req->id, &c) == 0;
	json_t *tests =
		classified ? testcase_list_json(req->app.bc.db, req->id, status)
			   : json_array();
	if (!tests) {
		api_fail(res, ERR_IO);
		return;
	}
	tip = candidate_tip(req->app.bc.db, req->id);
	answer(res,
	       json_pack("{s:I, s:b, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I},"
			 " s:o}",
			 "candidate", (json_int_t)req->id, "classified",
			 classified, "tip_candidate",
			 tip ? json_integer(tip) : json_null(), "counts",
			 "total", (json_int_t)c.total, "regression",
			 (json_int_t)c.regressions, "known",
			 (json_int_t)c.known, "flaky", (json_int_t)c.flaky,
			 "pass", (json_int_t)c.pass, "skip",
			 (json_int_t)c.skip, "tests", tests));
}

void api_get_candidate(struct api_request *req, struct api_response *res,
		       json_t *body)
{
	json_t *c;

	if (row_exists(req, res, candidate_exists, "candidate") < 0)
		return;
	c = candidate_json(req->app.bc.db, req->id);
	if (c && api_set_branches(req->app.bc.db, c, BRANCH_OF_CANDIDATE) < 0) {
		json_decref(c);
		c = NULL;
	}
	answer(res, c);
}

/* ---- builds ---- */

void api_get_build_log(struct api_request *req, struct api_response *res,
		       json_t *body)
{
	char *path = NULL;
	struct stat st;
	int fd, ret;

	ret = candidate_build_log_path(req->app.bc.db, req->id, &path);
	if (ret == ERR_NOTFOUND) {
		api_error(res, 404, "not-found", "build %lld: no such build",
			  req->id);
		return;
	}
	if (ret < 0) {
		api_fail(res, ret);
		return;
	}
	fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		api_error(res, 404, "not-found",
			  "build %lld: the log is gone (%s)", req->id,
			  path ? path : "none was kept");
		if (fd >= 0)
			close(fd);
		free(path);
		return;
	}
	free(path);
	res->status = 200;
	res->content_type = "text/plain; charset=utf-8";
	res->fd = fd;
	res->fd_size = st.st_size;
}

/* ---- bisections ---- */

void api_get_bisections(struct api_request *req, struct api_response *res,
			json_t *body)
{
	long long limit, branch;
	json_t *rows, *b;
	size_t i;

	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", RECENT_DEFAULT, 1, RECENT_MAX,
			&limit) < 0)
		return;
	if (!(rows = bisect_list_json(req->app.bc.db, branch, limit)) ||
	    branch_fill(req->app.bc.db, rows, "branch", BRANCH_KEY) < 0) {
		json_decref(rows);
		api_fail(res, ERR_IO);
		return;
	}
	/* failing_tests is stored as JSON text: hand it out as JSON. */
	json_array_foreach(rows, i, b)
	{
		json_t *t = json_object_get(b, "failing_tests");
		if (json_is_string(t))
			json_object_set_new(b, "failing_tests",
					    api_json_text(json_string_value(t)));
	}
	api_json(res, 200, json_pack("{s:o}", "bisections", rows));
}

void api_get_bisection(struct api_request *req, struct api_response *res,
		       json_t *body)
{
	if (row_exists(req, res, bisect_exists, "bisection") < 0)
		return;
	answer(res, bisect_json(req->app.bc.db, req->id));
}

/* ---- reverts ---- */

void api_get_reverts(struct api_request *req, struct api_response *res,
		     json_t *body)
{
	json_t *list, *kept, *r;
	long long branch;
	size_t i;

	if (api_branch_arg(req, res, &branch) < 0)
		return;
	if (!(list = revert_list_json(req->app.bc.db)) ||
	    api_set_branches(req->app.bc.db, list, BRANCH_OF_REVERT) < 0) {
		json_decref(list);
		api_fail(res, ERR_IO);
		return;
	}
	kept = json_array();
	json_array_foreach(list, i, r)
	{
		/* the key the branch id stands for, read by api_set_branches */
		const char *key = json_string_value(json_object_get(r, "branch"));
		if (!branch || (key && !strcmp(key, api_arg(req, "branch"))))
			json_array_append(kept, r);
	}
	json_decref(list);
	api_json(res, 200, json_pack("{s:o}", "reverts", kept));
}

void api_get_revert(struct api_request *req, struct api_response *res,
		    json_t *body)
{
	json_t *r;

	if (row_exists(req, res, revert_exists, "revert") < 0)
		return;
	r = revert_json(req->app.bc.db, req->id);
	if (r && api_set_branches(req->app.bc.db, r, BRANCH_OF_REVERT) < 0) {
		json_decref(r);
		r = NULL;
	}
	answer(res, r);
}

void api_get_revert_patch(struct api_request *req, struct api_response *res,
			  json_t *body)
{
	char *text;

	if (row_exists(req, res, revert_exists, "revert") < 0)
		return;
	text = revert_patch_text(req->app.bc.db, req->id);
	if (!text && err_last() != ERR_NOTFOUND) {
		api_fail(res, err_last());
		return;
	}
	if (!text || !*text) {
		api_error(res, 404, "not-found",
			  "revert %lld has no revert patch (its patches were"
			  " dropped from the queue, not reverted)",
			  req->id);
		free(text);
		return;
	}
	api_text(res, 200, "text/x-patch; charset=utf-8", text, strlen(text));
	free(text);
}
