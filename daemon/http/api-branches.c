/* api-branches.c: /branches (each branch and what it waits for), /fixes (the fix x branch matrix), ?branch=KEY. */
#include "api-int.h"
#include "config.h"
#include "db.h"
#include "err.h"
#include "queue.h"

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
	ret = db_query_int(req->app.db, id,
			   "SELECT id FROM branches WHERE key = ?", "t", key);
	if (!ret)
		return 0;
	*id = 0;
	if (ret != ERR_NOTFOUND) {
		api_fail(res, ret);
		return -1;
	}
	ret = db_query_text(req->app.db, &known,
			    "SELECT group_concat(key, ', ') FROM (SELECT key"
			    " FROM branches WHERE key IS NOT NULL ORDER BY ord"
			    " IS NULL, ord, id)",
			    NULL);
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

/* id -> branch key, for the objects of each kind (one query per answer). */
static const char *const branch_of_sql[] = {
	[BRANCH_OF_PATCH] =
		"SELECT p.id, b.key FROM patches p LEFT JOIN branches b ON"
		" b.id = p.branch_id WHERE p.id IN (SELECT value FROM"
		" json_each(?))",
	[BRANCH_OF_CANDIDATE] =
		"SELECT c.id, b.key FROM candidates c LEFT JOIN branches b ON"
		" b.id = c.branch_id WHERE c.id IN (SELECT value FROM"
		" json_each(?))",
	[BRANCH_OF_REVERT] =
		"SELECT r.id, b.key FROM reverts r JOIN patches p ON p.id ="
		" r.patch_id LEFT JOIN branches b ON b.id = p.branch_id WHERE"
		" r.id IN (SELECT value FROM json_each(?))",
};

int api_set_branches(sqlite3 *db, json_t *objs, enum api_branch_of of)
{
	json_t *ids = json_array(), *keys = json_object(), *o;
	sqlite3_stmt *st = NULL;
	char *idtext = NULL, num[24];
	size_t i;
	int rc, ret = 0;

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
	if (!(st = db_prepare(db, branch_of_sql[of], "t", idtext))) {
		ret = ERR_IO;
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(num, sizeof(num), "%lld",
			 (long long)sqlite3_column_int64(st, 0));
		json_object_set_new(keys, num, db_col_json(st, 1));
	}
	if (rc != SQLITE_DONE) {
		ret = err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
		goto out;
	}
	json_array_foreach(objs, i, o)
	{
		json_t *k;
		if (!json_is_object(o) ||
		    !json_is_integer(json_object_get(o, "id")))
			continue;
		snprintf(num, sizeof(num), "%lld",
			 (long long)json_integer_value(json_object_get(o, "id")));
		k = json_object_get(keys, num);
		json_object_set_new(o, "branch", k ? json_incref(k)
						   : json_null());
	}
out:
	sqlite3_finalize(st);
	free(idtext);
	json_decref(ids);
	json_decref(keys);
	return ret;
}

/* ---- /branches ---- */

/* In the config's order; those no longer configured (ord NULL) last. */
#define BRANCH_ORDER " ORDER BY ord IS NULL, ord, id"
static const char sql_branches[] =
	"SELECT id, key, name AS git_branch, version, base_tag, head, ord IS"
	" NOT NULL AS configured FROM branches WHERE key IS NOT NULL"
	BRANCH_ORDER;
static const char sql_branch_keys[] =
	"SELECT key FROM branches WHERE key IS NOT NULL" BRANCH_ORDER;
static const char sql_branch_counts[] =
	"SELECT state, COUNT(*) FROM patches WHERE branch_id = ? GROUP BY"
	" state";
static const char sql_latest_candidate[] =
	"SELECT id, purpose, step, verdict, detail, json_array_length"
	"(patch_ids) AS patches, started_at, finished_at FROM candidates"
	" WHERE branch_id = ? ORDER BY id DESC LIMIT 1";
static const char sql_last_verdict[] =
	"SELECT id AS candidate_id, purpose, verdict, detail, finished_at FROM"
	" candidates WHERE branch_id = ? AND verdict IS NOT NULL ORDER BY id"
	" DESC LIMIT 1";
/* The candidate at work (it holds the build lock), on any branch. */
static const char sql_active[] =
	"SELECT c.id, c.purpose, c.step, c.bisection_id, b.key FROM"
	" candidates c LEFT JOIN branches b ON b.id = c.branch_id WHERE"
	" c.step NOT IN ('pending', 'done') ORDER BY c.id DESC LIMIT 1";
/* Running bisections with their branch, newest first. */
static const char sql_bisecting[] =
	"SELECT s.id, c.branch_id, b.key, s.steps_done, s.steps_total FROM"
	" bisections s JOIN candidates c ON c.id = s.candidate_id LEFT JOIN"
	" branches b ON b.id = c.branch_id WHERE s.state = 'running' ORDER"
	" BY s.id DESC";
/* Work a branch has to do: candidates to run, patches to check. */
static const char sql_branch_work[] =
	"SELECT (SELECT MIN(id) FROM candidates WHERE branch_id = ? AND step"
	" = 'pending'), (SELECT COUNT(*) FROM patches WHERE branch_id = ? AND"
	" state = 'imported')";

struct busy {
	long long cand, bisection;
	char cand_step[32], cand_branch[64], cand_purpose[32];
};

struct bisecting {
	long long id, branch_id, done, total;
	char key[64];
};

static void copy_col(char *dst, size_t n, sqlite3_stmt *st, int col)
{
	const char *s = db_col_text(st, col);

	snprintf(dst, n, "%s", s ? s : "");
}

static int load_active(sqlite3 *db, struct busy *b)
{
	sqlite3_stmt *st = db_prepare(db, sql_active, NULL);
	int rc;

	memset(b, 0, sizeof(*b));
	if (!st)
		return ERR_IO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		b->cand = sqlite3_column_int64(st, 0);
		copy_col(b->cand_purpose, sizeof(b->cand_purpose), st, 1);
		copy_col(b->cand_step, sizeof(b->cand_step), st, 2);
		b->bisection = sqlite3_column_int64(st, 3);
		copy_col(b->cand_branch, sizeof(b->cand_branch), st, 4);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ERR_IO;
}

static int load_bisecting(sqlite3 *db, struct bisecting **out, size_t *n)
{
	sqlite3_stmt *st = db_prepare(db, sql_bisecting, NULL);
	struct bisecting *v = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (len + 1) * sizeof(*v));
		v[len].id = sqlite3_column_int64(st, 0);
		v[len].branch_id = sqlite3_column_int64(st, 1);
		copy_col(v[len].key, sizeof(v[len].key), st, 2);
		v[len].done = sqlite3_column_int64(st, 3);
		v[len].total = sqlite3_column_int64(st, 4);
		len++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return ERR_IO;
	}
	*out = v;
	*n = len;
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
	long long pending = 0, imported = 0;
	const struct bisecting *mine = NULL, *other = NULL;
	char *doing = NULL, *waits = NULL;
	sqlite3_stmt *st = db_prepare(db, sql_branch_work, "ii", id, id);

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		pending = sqlite3_column_int64(st, 0);
		imported = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
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
	sqlite3 *db = req->app.db;
	struct bisecting *bis = NULL;
	struct busy b;
	size_t nbis = 0, i;
	json_t *rows, *o;

	for (int s = 0; s < PS_COUNT; s++)
		state_names[s] = queue_state_name((enum patch_state)s);
	if (!(rows = db_rows_json(db, sql_branches, NULL)) ||
	    load_active(db, &b) < 0 || load_bisecting(db, &bis, &nbis) < 0) {
		json_decref(rows);
		api_fail(res, ERR_IO);
		return;
	}
	json_array_foreach(rows, i, o)
	{
		long long id = json_integer_value(json_object_get(o, "id"));
		const char *key = json_string_value(json_object_get(o, "key"));
		json_t *cnt = api_counts(db, state_names, PS_COUNT,
					 sql_branch_counts, "i", id);
		json_t *lc = db_row_json(db, sql_latest_candidate, "i", id);
		json_t *lv = db_row_json(db, sql_last_verdict, "i", id);
		/* NULL: a branch of the store the config no longer has */
		const struct branch_conf *bc =
			key ? config_branch(&req->app.cfg, key) : NULL;

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
 * One fix is the rows of the view `fixes` (sql/009) with the same fix_key:
 * the patches with the same upstream commit (its first 12 digits, so that
 * an abbreviation meets the full SHA), else the same patch-id; one row per
 * branch it is queued for. ? = '' or a branch key the fix must be on.
 */
#define FIX_GROUPS                                                         \
	"WITH k AS (SELECT fix_key, MIN(patch_row) AS first FROM fixes GROUP" \
	" BY fix_key HAVING ? = '' OR SUM(branch = ?) > 0)"

static const char sql_fix_count[] = FIX_GROUPS " SELECT COUNT(*) FROM k";
static const char sql_fix_page[] =
	FIX_GROUPS ", page AS (SELECT fix_key, first FROM k ORDER BY first"
	" LIMIT ? OFFSET ?) SELECT page.fix_key, p.id, f.branch, p.state,"
	" p.state_reason, p.subject, p.upstream, p.patch_id FROM page JOIN"
	" fixes f ON f.fix_key = page.fix_key JOIN patches p ON p.id ="
	" f.patch_row ORDER BY page.first, p.id";
/* The latest verdict of each check of the patches. */
static const char sql_fix_verdicts[] =
	"SELECT v.patch_id, v.check_name, v.result, v.detail, v.created_at"
	" FROM verdicts v WHERE v.patch_id IN (SELECT value FROM json_each(?))"
	" AND v.id = (SELECT MAX(w.id) FROM verdicts w WHERE w.patch_id ="
	" v.patch_id AND w.check_name = v.check_name) ORDER BY v.id";
/* The newest candidate that included each patch, and what it found. */
static const char sql_fix_candidates[] =
	"SELECT j.value, c.id, c.purpose, c.step, c.verdict FROM candidates c,"
	" json_each(c.patch_ids) j WHERE j.value IN (SELECT value FROM"
	" json_each(?)) AND c.id = (SELECT MAX(d.id) FROM candidates d,"
	" json_each(d.patch_ids) e WHERE e.value = j.value)";

/* Adds the rows of sql (first column: a patch id) to the cells by id. */
static int fix_details(sqlite3 *db, json_t *cells, const char *ids,
		       const char *sql, int verdicts)
{
	sqlite3_stmt *st = db_prepare(db, sql, "t", ids);
	char num[24];
	int rc;

	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(num, sizeof(num), "%lld",
			 (long long)sqlite3_column_int64(st, 0));
		json_t *cell = json_object_get(cells, num);
		if (!cell)
			continue;
		if (verdicts) {
			const char *check = db_col_text(st, 1);
			json_object_set_new(json_object_get(cell, "checks"),
					    check, db_col_json(st, 2));
			json_object_set_new(
				json_object_get(cell, "verdicts"), check,
				json_pack("{s:o, s:o, s:o}", "result",
					  db_col_json(st, 2), "detail",
					  db_col_json(st, 3), "at",
					  db_col_json(st, 4)));
		} else {
			json_object_set_new(
				cell, "candidate",
				json_pack("{s:o, s:o, s:o, s:o}", "id",
					  db_col_json(st, 1), "purpose",
					  db_col_json(st, 2), "step",
					  db_col_json(st, 3), "verdict",
					  db_col_json(st, 4)));
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0
				 : err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
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
	sqlite3 *db = req->app.db;
	long long branch, limit, offset, total = 0;
	json_t *keys = NULL, *fixes = NULL, *cells = NULL, *ids = NULL;
	json_t *fix = NULL;
	sqlite3_stmt *st = NULL;
	char *idtext = NULL, num[24];
	const char *last = NULL, *bkey;
	int rc;

	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", FIXES_DEFAULT, 1, FIXES_MAX,
			&limit) < 0 ||
	    api_arg_int(req, res, "offset", 0, 0, 1LL << 40, &offset) < 0)
		return;
	bkey = branch ? api_arg(req, "branch") : "";
	if (!(keys = db_rows_json(db, sql_branch_keys, NULL)) ||
	    db_query_int(db, &total, sql_fix_count, "tt", bkey, bkey) < 0 ||
	    !(st = db_prepare(db, sql_fix_page, "ttii", bkey, bkey, limit,
			      offset)))
		goto fail;
	{
		/* [{key: "6.1"}, ...] -> ["6.1", ...] */
		json_t *flat = json_array(), *k;
		size_t i;
		json_array_foreach(keys, i, k)
			json_array_append(flat, json_object_get(k, "key"));
		json_decref(keys);
		keys = flat;
	}
	fixes = json_array();
	cells = json_object(); /* patch id -> its cell, for the details */
	ids = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *fk = db_col_text(st, 0) ? db_col_text(st, 0) : "";
		const char *on = db_col_text(st, 2);
		const char *up = db_col_text(st, 6);
		long long pid = sqlite3_column_int64(st, 1);
		json_t *cell, *known;

		if (!fix || !last || strcmp(last, fk)) {
			fix = fix_new(fk, keys);
			json_array_append_new(fixes, fix);
			json_object_set_new(fix, "subject", db_col_json(st, 5));
			json_object_set_new(fix, "patch_id", db_col_json(st, 7));
			last = json_string_value(json_object_get(fix, "fix"));
		}
		/* the fullest spelling of the upstream SHA names the fix */
		known = json_object_get(fix, "upstream");
		if (up && (!json_is_string(known) ||
			   strlen(up) > json_string_length(known)))
			json_object_set_new(fix, "upstream", json_string(up));
		cell = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:n}", "id",
				 (json_int_t)pid, "state", db_col_json(st, 3),
				 "state_reason", db_col_json(st, 4), "subject",
				 db_col_json(st, 5), "checks", json_object(),
				 "verdicts", json_object(), "candidate");
		/* a fix queued twice on one branch: the newer row shows */
		json_object_set_new(json_object_get(fix, "branches"),
				    on ? on : "(none)", json_incref(cell));
		snprintf(num, sizeof(num), "%lld", pid);
		json_object_set_new(cells, num, cell);
		json_array_append_new(ids, json_integer(pid));
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE) {
		err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
		goto fail;
	}
	idtext = json_dumps(ids, JSON_COMPACT);
	if (fix_details(db, cells, idtext, sql_fix_verdicts, 1) < 0 ||
	    fix_details(db, cells, idtext, sql_fix_candidates, 0) < 0)
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
	sqlite3_finalize(st);
	free(idtext);
	json_decref(keys);
	json_decref(fixes);
	json_decref(cells);
	json_decref(ids);
}

/* ---- /releases ---- */

/*
 * A release is the event that moved a branch: its subject is the branch's
 * row, or 0 with the git branch named in the detail ("3 patches onto
 * linux-6.12.y (6.12-stable): ...", before branches: "... onto
 * linux-6.1.y: ...").
 */
static const char sql_releases[] =
	"SELECT e.id, e.at, e.actor, b.key AS branch, b.name AS git_branch,"
	" e.detail FROM events e LEFT JOIN branches b ON CASE WHEN"
	" e.subject_id > 0 THEN b.id = e.subject_id ELSE e.detail LIKE '% onto '"
	" || b.name || ':%' OR e.detail LIKE '% onto ' || b.name || ' (%' END"
	" WHERE e.subject_kind = 'branch' AND e.kind = 'released' AND (? = 0 OR"
	" b.id = ?) ORDER BY e.id DESC LIMIT ?";

void api_get_releases(struct api_request *req, struct api_response *res,
		      json_t *body)
{
	long long branch, limit;
	json_t *rows;

	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", FIXES_DEFAULT, 1, FIXES_MAX,
			&limit) < 0)
		return;
	if (!(rows = db_rows_json(req->app.db, sql_releases, "iii", branch,
				  branch, limit))) {
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200, json_pack("{s:o}", "releases", rows));
}
