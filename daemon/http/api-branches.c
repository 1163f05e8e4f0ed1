/* api-branches.c: /branches (each branch and what it waits for), /fixes (the fix x branch matrix), ?branch=KEY. */
#include "api-int.h"
#include "bisect.h"
#include "branch.h"
#include "candidate.h"
#include "config.h"
#include "db.h"
#include "err.h"
#include "event.h"
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

/* ---- /branches ---- */

struct busy {
	long long cand, bisection;
	char cand_step[32], cand_branch[64], cand_purpose[32];
};

struct bisecting {
	long long id, branch_id, done, total;
	char key[64];
};

static void copy_str(char *dst, size_t n, json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	snprintf(dst, n, "%s", s ? s : "");
}

static long long int_of(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static int load_active(sqlite3 *db, struct busy *b)
{
	json_t *c = candidate_at_work_json(db);

	memset(b, 0, sizeof(*b));
	if (!c)
		return ERR_IO;
	if (json_is_object(c) &&
	    branch_fill(db, c, "branch_id", BRANCH_KEY) < 0) {
		json_decref(c);
		return ERR_IO;
	}
	if (json_is_object(c)) {
		b->cand = int_of(c, "id");
		copy_str(b->cand_purpose, sizeof(b->cand_purpose), c,
			 "purpose");
		copy_str(b->cand_step, sizeof(b->cand_step), c, "step");
		b->bisection = int_of(c, "bisection_id");
		copy_str(b->cand_branch, sizeof(b->cand_branch), c,
			 "branch_id");
	}
	json_decref(c);
	return 0;
}

static int load_bisecting(sqlite3 *db, struct bisecting **out, size_t *n)
{
	json_t *rows = bisect_running_json(db), *o;
	struct bisecting *v;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!rows)
		return ERR_IO;
	v = xcalloc(json_array_size(rows) + 1, sizeof(*v));
	json_array_foreach(rows, i, o)
	{
		v[i].id = int_of(o, "id");
		v[i].branch_id =
			candidate_branch_id(db, int_of(o, "candidate_id"));
		json_object_set_new(o, "key", json_integer(v[i].branch_id));
		if (branch_fill(db, o, "key", BRANCH_KEY) < 0) {
			json_decref(rows);
			free(v);
			return ERR_IO;
		}
		copy_str(v[i].key, sizeof(v[i].key), o, "key");
		v[i].done = int_of(o, "steps_done");
		v[i].total = int_of(o, "steps_total");
	}
	*n = json_array_size(rows);
	*out = v;
	json_decref(rows);
	return 0;
}

/*
 * What one branch does and what it waits for, from the store alone: the
 * daemon runs one step at a time for every branch (one build lock), so a
 * branch with work waits for the candidate at work on another branch, or
 * for another branch's bisection between its steps.
 */
static void branch_wait(sqlite3 *db, json_t *o, long long id,
			const char *key, const struct busy *b,
			const struct bisecting *bis, size_t nbis)
{
	long long pending = candidate_next_pending(db, id);
	long long imported = queue_count(db, id, PS_IMPORTED);
	const struct bisecting *mine = NULL, *other = NULL;
	char *doing = NULL, *waits = NULL;

	if (imported < 0)
		imported = 0;
	for (size_t i = 0; i < nbis; i++) {
		if (bis[i].branch_id == id && !mine)
			mine = &bis[i];
		else if (bis[i].branch_id != id && !other)
			other = &bis[i];
	}
	int own = b->cand && !strcmp(b->cand_branch, key);
	int work = pending || imported || mine;

	if (own)
		doing = xstrfmt("candidate %lld (%s) at step %s", b->cand,
				b->cand_purpose, b->cand_step);
	else if (mine)
		doing = xstrfmt("bisection %lld, step %lld of about %lld",
				mine->id, mine->done,
				mine->total ? mine->total : mine->done + 1);
	if (!work && !own)
		waits = xstrdup("nothing");
	else if (own)
		waits = xstrdup("nothing: it holds the build lock");
	else if (b->cand && b->bisection)
		waits = xstrfmt("bisection %lld running on %s (its candidate"
				" %lld holds the build lock)",
				b->bisection, b->cand_branch, b->cand);
	else if (b->cand)
		waits = xstrfmt("build lock held by %s candidate %lld",
				b->cand_branch, b->cand);
	else if (other && (pending || imported))
		waits = xstrfmt("bisection %lld running on %s (one step at a"
				" time, in turn)",
				other->id, other->key);
	else if (mine)
		waits = xstrfmt("the next step of bisection %lld", mine->id);
	else if (pending)
		waits = xstrfmt("its turn: candidate %lld is pending", pending);
	else
		waits = xstrfmt("its turn: %lld patch%s to check", imported,
				imported == 1 ? "" : "es");
	json_object_set_new(o, "doing", doing ? json_string(doing) : json_null());
	json_object_set_new(o, "waits_for", json_string(waits));
	free(doing);
	free(waits);
}

static const char *state_names[PS_COUNT];

void api_get_branches(struct api_request *req, struct api_response *res,
		      json_t *body)
{
	sqlite3 *db = req->app.bc.db;
	struct bisecting *bis = NULL;
	struct busy b;
	size_t nbis = 0, i;
	json_t *rows, *o;

	for (int s = 0; s < PS_COUNT; s++)
		state_names[s] = queue_state_name((enum patch_state)s);
	if (!(rows = branch_list_json(db)) || load_active(db, &b) < 0 ||
	    load_bisecting(db, &bis, &nbis) < 0) {
		json_decref(rows);
		api_fail(res, ERR_IO);
		return;
	}
	json_array_foreach(rows, i, o)
	{
		long long id = json_integer_value(json_object_get(o, "id"));
		const char *key = json_string_value(json_object_get(o, "key"));
		json_t *cnt = api_counts(state_names, PS_COUNT,
					 queue_state_counts(db, id));
		json_t *lc = candidate_latest_json(db, id);
		json_t *lv = candidate_last_verdict_json(db, id);
		/* NULL: a branch of the store the config no longer has */
		const struct branch_conf *bc =
			key ? config_branch(&req->app.bc.cfg, key) : NULL;

		err_clear();
		json_object_set_new(o, "tree", bc ? json_string(bc->tree_dir)
						  : json_null());
		json_object_set_new(o, "patches", cnt ? cnt : json_object());
		json_object_set_new(o, "latest_candidate",
				    lc ? lc : json_null());
		json_object_set_new(o, "last_verdict", lv ? lv : json_null());
		branch_wait(db, o, id, key, &b, bis, nbis);
		json_object_del(o, "id");
	}
	free(bis);
	api_json(res, 200, json_pack("{s:o}", "branches", rows));
}

/* ---- /fixes ---- */

/*
 * Adds rows (queue_latest_verdicts_json() or candidate_newest_of_json(),
 * whose "patch_id" / "patch" is the cell's patch) to the cells by id.
 */
static int fix_details(json_t *cells, json_t *rows, int verdicts)
{
	json_t *r;
	char num[24];
	size_t i;

	if (!rows)
		return ERR_IO;
	json_array_foreach(rows, i, r)
	{
		snprintf(num, sizeof(num), "%lld",
			 int_of(r, verdicts ? "patch_id" : "patch"));
		json_t *cell = json_object_get(cells, num);
		if (!cell)
			continue;
		if (verdicts) {
			const char *check = json_string_value(
				json_object_get(r, "check_name"));
			json_object_set(json_object_get(cell, "checks"), check,
					json_object_get(r, "result"));
			json_object_set_new(
				json_object_get(cell, "verdicts"), check,
				json_pack("{s:O, s:O, s:O}", "result",
					  json_object_get(r, "result"),
					  "detail",
					  json_object_get(r, "detail"), "at",
					  json_object_get(r, "created_at")));
		} else {
			json_object_del(r, "patch");
			json_object_set(cell, "candidate", r);
		}
	}
	json_decref(rows);
	return 0;
}

/* A fix's object with a null cell for every branch. */
static json_t *fix_new(const char *fk, json_t *keys)
{
	json_t *cells = json_object(), *k;
	size_t i;

	json_array_foreach(keys, i, k)
		json_object_set_new(cells, json_string_value(k), json_null());
	return json_pack("{s:s, s:n, s:n, s:n, s:o}", "fix", fk, "upstream",
			 "subject", "patch_id", "branches", cells);
}

void api_get_fixes(struct api_request *req, struct api_response *res,
		   json_t *body)
{
	sqlite3 *db = req->app.bc.db;
	long long branch, limit, offset, total = 0;
	json_t *keys = NULL, *fixes = NULL, *cells = NULL, *ids = NULL;
	json_t *fix = NULL;
	json_t *page = NULL, *r;
	char *idtext = NULL, num[24];
	const char *last = NULL, *bkey;
	size_t i;

	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", FIXES_DEFAULT, 1, FIXES_MAX,
			&limit) < 0 ||
	    api_arg_int(req, res, "offset", 0, 0, 1LL << 40, &offset) < 0)
		return;
	bkey = branch ? api_arg(req, "branch") : "";
	if (!(keys = branch_keys_json(db)) ||
	    queue_fix_count(db, bkey, &total) < 0 ||
	    !(page = queue_fix_page(db, bkey, limit, offset)))
		goto fail;
	fixes = json_array();
	cells = json_object(); /* patch id -> its cell, for the details */
	ids = json_array();
	json_array_foreach(page, i, r)
	{
		const char *fk =
			json_string_value(json_object_get(r, "fix_key"));
		const char *on =
			json_string_value(json_object_get(r, "branch"));
		const char *up =
			json_string_value(json_object_get(r, "upstream"));
		long long pid = int_of(r, "id");
		json_t *cell, *known;

		if (!fk)
			fk = "";
		if (!fix || !last || strcmp(last, fk)) {
			fix = fix_new(fk, keys);
			json_array_append_new(fixes, fix);
			json_object_set(fix, "subject",
					json_object_get(r, "subject"));
			json_object_set(fix, "patch_id",
					json_object_get(r, "patch_id"));
			last = json_string_value(json_object_get(fix, "fix"));
		}
		/* the fullest spelling of the upstream SHA names the fix */
		known = json_object_get(fix, "upstream");
		if (up && (!json_is_string(known) ||
			   strlen(up) > json_string_length(known)))
			json_object_set_new(fix, "upstream", json_string(up));
		cell = json_pack(
			"{s:I, s:O, s:O, s:O, s:o, s:o, s:n}", "id",
			(json_int_t)pid, "state", json_object_get(r, "state"),
			"state_reason", json_object_get(r, "state_reason"),
			"subject", json_object_get(r, "subject"), "checks",
			json_object(), "verdicts", json_object(), "candidate");
		/* a fix queued twice on one branch: the newer row shows */
		json_object_set_new(json_object_get(fix, "branches"),
				    on ? on : "(none)", json_incref(cell));
		snprintf(num, sizeof(num), "%lld", pid);
		json_object_set_new(cells, num, cell);
		json_array_append_new(ids, json_integer(pid));
	}
	idtext = json_dumps(ids, JSON_COMPACT);
	if (fix_details(cells, queue_latest_verdicts_json(db, idtext), 1) < 0 ||
	    fix_details(cells, candidate_newest_of_json(db, idtext), 0) < 0)
		goto fail;
	api_json(res, 200,
		 json_pack("{s:I, s:I, s:I, s:o, s:o}", "total",
			   (json_int_t)total, "limit", (json_int_t)limit,
			   "offset", (json_int_t)offset, "branches", keys,
			   "fixes", fixes));
	keys = fixes = NULL;
	goto out;
fail:
	api_fail(res, ERR_IO);
out:
	json_decref(page);
	free(idtext);
	json_decref(keys);
	json_decref(fixes);
	json_decref(cells);
	json_decref(ids);
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
