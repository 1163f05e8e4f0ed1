/* api-rc.c: GET and POST /rc, POST /rc/override, GET /rc/{id}/patch: the -rc review cycle of a branch. */
#include "api-int.h"
#include "app.h"
#include "err.h"
#include "queue.h"
#include "rc.h"
#include "strbuf.h"

#include <stdlib.h>

/* The request's app on branch (?branch=KEY, else the first). */
static int rc_branch(struct api_request *req, struct api_response *res,
		     long long *branch)
{
	char *key = NULL;
	int ret;

	if (api_branch_arg(req, res, branch) < 0)
		return -1;
	if (!*branch && (*branch = queue_default_branch(req->app.bc.db)) < 0) {
		api_fail(res, (int)*branch);
		return -1;
	}
	/* select it on the request's own copy of the config */
	for (int i = 0; i < req->app.bc.cfg.nbranches; i++) {
		long long id = 0;
		if (branch_ctx_branch_id(&req->app.bc,
					 req->app.bc.cfg.branches[i].key,
					 &id) == 0 &&
		    id == *branch)
			key = req->app.bc.cfg.branches[i].key;
	}
	if (!key || (ret = config_select_branch(&req->app.bc.cfg, key)) < 0) {
		api_fail(res, ERR_NOTFOUND);
		return -1;
	}
	req->app.bc.branch_id = *branch;
	return 0;
}

void api_get_rc(struct api_request *req, struct api_response *res,
		json_t *body)
{
	long long branch;
	json_t *o;

	if (rc_branch(req, res, &branch) < 0)
		return;
	if (!(o = rc_json(req->app.bc.db, branch, 0))) {
		api_fail(res, err_last());
		return;
	}
	api_json(res, 200, o);
}

void api_post_rc(struct api_request *req, struct api_response *res,
		 json_t *body)
{
	long long branch, id = 0;
	int ret;
	json_t *o;

	if (rc_branch(req, res, &branch) < 0)
		return;
	/* an unchanged queue is the open rc: 200, nothing mailed */
	if ((ret = rc_prepare(&req->app.bc, &id)) < 0) {
		api_fail(res, ret);
		return;
	}
	if (!(o = rc_json(req->app.bc.db, branch, id))) {
		api_fail(res, err_last());
		return;
	}
	api_json(res, ret == 1 ? 200 : 201, o);
}

void api_post_rc_override(struct api_request *req, struct api_response *res,
			  json_t *body)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));
	long long branch, id = 0;
	int ret;
	json_t *o;

	if (rc_branch(req, res, &branch) < 0)
		return;
	if ((ret = rc_override(&req->app.bc, 0, reason, &id)) < 0) {
		api_fail(res, ret);
		return;
	}
	if (!(o = rc_json(req->app.bc.db, branch, id))) {
		api_fail(res, err_last());
		return;
	}
	api_json(res, 200, o);
}

void api_get_rc_patch(struct api_request *req, struct api_response *res,
		      json_t *body)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = NULL, *version = NULL;

	if (rc_patch_file(req->app.bc.db, req->id, &path, &version) < 0 ||
	    strbuf_read_file(&sb, path, 0) < 0) {
		api_error(res, 404, "not-found", "rc %lld has no patch file",
			  req->id);
		goto out;
	}
	api_text(res, 200, "application/gzip", sb.buf, sb.len);
out:
	strbuf_release(&sb);
	free(path);
	free(version);
}
