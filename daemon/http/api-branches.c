/* api-branches.c: /branches (each branch and what it waits for), /fixes (the fix x branch matrix), ?branch=KEY. */
#include "api-int.h"
#include "branch.h"
#include "branch-status.h"
#include "candidate.h"
#include "err.h"
#include "event.h"
#include "fix-matrix.h"
#include "queue.h"
#include "revert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXES_DEFAULT 50
#define FIXES_MAX 500

/* ---- ?branch=KEY and the branch key of objects ---- */

int api_branch_arg(struct api_request *req, struct api_response *res,
		   long long *id)
{
	const char *key = api_arg(req, "branch");
	char *known = NULL;
	int ret;

	*id = 0;
	if (!key)
		return 0;
	ret = branch_lookup(req->app.bc.db, key, 0, id);
	if (!ret)
		return 0;
	*id = 0;
	if (ret != ERR_NOTFOUND) {
		api_fail(res, ret);
		return -1;
	}
	ret = branch_keys_text(req->app.bc.db, 0, &known);
	if (ret < 0 && ret != ERR_NOTFOUND) {
		api_fail(res, ret);
		return -1;
	}
	api_error(res, 400, "bad-request",
		  "unknown branch '%.40s' (known: %s)", key,
		  known && *known ? known : "none");
	free(known);
	return -1;
}

/* id -> branches.id, for the objects of each kind (one query per answer). */
static json_t *branch_ids(sqlite3 *db, const char *ids, enum api_branch_of of)
{
	json_t *revs, *pids, *map, *v;
	const char *k;
	char *text;

	if (of == BRANCH_OF_PATCH)
		return queue_branch_ids(db, ids);
	if (of == BRANCH_OF_CANDIDATE)
		return candidate_branch_ids(db, ids);
	/* a revert is on its culprit's branch */
	if (!(revs = revert_patch_ids(db, ids)))
		return NULL;
	pids = json_array();
	json_object_foreach(revs, k, v) json_array_append(pids, v);
	text = json_dumps(pids, JSON_COMPACT);
	json_decref(pids);
	map = text ? queue_branch_ids(db, text) : NULL;
	free(text);
	if (!map) {
		json_decref(revs);
		return NULL;
	}
	json_object_foreach(revs, k, v)
	{
		char num[24];
		snprintf(num, sizeof(num), "%lld",
			 (long long)json_integer_value(v));
		json_t *b = json_object_get(map, num);
		json_object_set(revs, k, b ? b : json_null());
	}
	json_decref(map);
	return revs;
}

int api_set_branches(sqlite3 *db, json_t *objs, enum api_branch_of of)
{
	json_t *ids = json_array(), *map = NULL, *o;
	char *idtext = NULL, num[24];
	size_t i;
	int ret = 0;

	if (json_is_object(objs)) {
		json_t *one = json_array();
		json_array_append(one, objs);
		ret = api_set_branches(db, one, of);
		json_decref(one);
		goto out;
	}
	json_array_foreach(objs, i, o)
	{
		json_t *id = json_object_get(o, "id");
		if (json_is_integer(id))
			json_array_append(ids, id);
	}
	if (!json_array_size(ids))
		goto out;
	idtext = json_dumps(ids, JSON_COMPACT);
	if (!(map = branch_ids(db, idtext, of))) {
		ret = ERR_IO;
		goto out;
	}
	json_array_foreach(objs, i, o)
	{
		json_t *b;
		if (!json_is_object(o) ||
		    !json_is_integer(json_object_get(o, "id")))
			continue;
		snprintf(num, sizeof(num), "%lld",
			 (long long)json_integer_value(json_object_get(o, "id")));
		b = json_object_get(map, num);
		json_object_set_new(o, "branch",
				    b ? json_incref(b) : json_null());
	}
	ret = branch_fill(db, objs, "branch", BRANCH_KEY);
out:
	free(idtext);
	json_decref(ids);
	json_decref(map);
	return ret;
}

/* ---- /branches, /fixes: the domain's answers (kernel-queue/branches/) ---- */

void api_get_branches(struct api_request *req, struct api_response *res,
		      json_t *body)
{
	json_t *j = branch_status_json(&req->app.bc);

	if (!j) {
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200, j);
}

void api_get_fixes(struct api_request *req, struct api_response *res,
		   json_t *body)
{
	long long branch, limit, offset;
	json_t *j;

	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", FIXES_DEFAULT, 1, FIXES_MAX,
			&limit) < 0 ||
	    api_arg_int(req, res, "offset", 0, 0, 1LL << 40, &offset) < 0)
		return;
	j = fix_matrix_json(req->app.bc.db, branch ? api_arg(req, "branch") : "",
			    limit, offset);
	if (!j) {
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200, j);
}

/* ---- /releases ---- */

void api_get_releases(struct api_request *req, struct api_response *res,
		      json_t *body)
{
	long long branch, limit;
	json_t *rows;

	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", FIXES_DEFAULT, 1, FIXES_MAX,
			&limit) < 0)
		return;
	if (!(rows = event_releases_json(req->app.bc.db, branch, limit))) {
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200, json_pack("{s:o}", "releases", rows));
}
