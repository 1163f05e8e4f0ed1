/* api-export.c: /kcidb (results in KCIDB v4) and /patches/{id}/diff (the patchset's files). */
#include "api-int.h"
#include "db.h"
#include "err.h"
#include "queue.h"
#include "kcidb.h"

#include <stdlib.h>
#include <string.h>

void api_get_kcidb(struct api_request *req, struct api_response *res,
		   json_t *body)
{
	const char *since_arg = api_arg(req, "since");
	char *since = NULL, *base;
	json_t *j;

	if (since_arg && kcidb_parse_since(since_arg, &since) < 0) {
		api_error(res, 400, "bad-request", "%s", err_msg());
		return;
	}
	base = kcidb_base_url(&req->app.bc.cfg);
	j = kcidb_export(req->app.bc.db, &req->app.bc.cfg, since, base);
	free(base);
	free(since);
	if (!j) {
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200, j);
}

void api_get_patch_diff(struct api_request *req, struct api_response *res,
			json_t *body)
{
	json_t *p = queue_patch_content_json(req->app.bc.db, req->id);
	const char *diff;

	if (!p && err_last() == ERR_NOTFOUND) {
		api_error(res, 404, "not-found", "patch %lld: no such patch",
			  req->id);
		return;
	}
	if (!p) {
		api_fail(res, err_last() < 0 ? err_last() : ERR_IO);
		return;
	}
	diff = queue_field(p, "diff");
	api_text(res, 200, "text/x-patch; charset=utf-8", diff ? diff : "",
		 diff ? strlen(diff) : 0);
	json_decref(p);
}
