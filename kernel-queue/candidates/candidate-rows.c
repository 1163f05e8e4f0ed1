/* candidate-rows.c: a candidate's and its build's columns, one accessor each,
 * for the modules that read them (the candidates and builds tables' accessors).
 */
#include "candidate.h"
#include "branch.h"
#include "db.h"
#include "err.h"

#include <stdlib.h>

int candidate_exists(sqlite3 *db, long long id)
{
	long long one;

	return db_query_int(db, &one, "SELECT 1 FROM candidates WHERE id = ?",
			    "i", id);
}

long long candidate_branch_id(sqlite3 *db, long long id)
{
	return db_int(db, 1,
		      "SELECT COALESCE(branch_id, 0) FROM candidates WHERE id"
		      " = ?",
		      "i", id);
}

int candidate_branch(sqlite3 *db, long long id, char **key)
{
	long long b = candidate_exists(db, id) < 0 ? ERR_NOTFOUND
						   : candidate_branch_id(db, id);

	return branch_key_of_row(db, b, "candidate", id, key);
}

int candidate_follow(struct branch_ctx *bc, long long id)
{
	return branch_ctx_follow(bc, "candidate", id, candidate_branch);
}

json_t *candidate_branch_ids(sqlite3 *db, const char *ids)
{
	return db_map_of(
		db_rows_json(db,
			     "SELECT id, branch_id FROM candidates WHERE id IN"
			     " (SELECT value FROM json_each(?))",
			     "t", ids));
}

json_t *candidate_at_work_json(sqlite3 *db)
{
	json_t *rows = db_rows_json(db,
				    "SELECT id, purpose, step, upto_patch_id,"
				    " json_array_length(patch_ids) AS patches,"
				    " started_at, bisection_id, branch_id FROM"
				    " candidates WHERE step NOT IN ('pending',"
				    " 'done') ORDER BY id DESC LIMIT 1",
				    NULL);
	json_t *o;

	if (!rows)
		return NULL;
	o = json_array_get(rows, 0);
	o = o ? json_incref(o) : json_null();
	json_decref(rows);
	if (json_is_object(o)) {
		/* the phases so far, and what is left from the branch's
		 * history: the dashboard's "how long" */
		json_t *ph = candidate_phases_json(
			db, json_integer_value(json_object_get(o, "id")),
			json_integer_value(json_object_get(o, "branch_id")),
			json_string_value(json_object_get(o, "purpose")), 0);
		if (ph) {
			json_object_set(o, "phases",
					json_object_get(ph, "phases"));
			json_object_set(o, "estimate_left",
					json_object_get(ph, "estimate_left"));
		}
		json_decref(ph);
		err_clear();
	}
	return o;
}

json_t *candidate_latest_json(sqlite3 *db, long long branch)
{
	return db_row_json(db,
			   "SELECT id, purpose, step, verdict, detail,"
			   " json_array_length(patch_ids) AS patches,"
			   " started_at, finished_at FROM candidates WHERE"
			   " branch_id = ? AND cell_of IS NULL ORDER BY id"
			   " DESC LIMIT 1",
			   "i", branch);
}

json_t *candidate_last_verdict_json(sqlite3 *db, long long branch)
{
	return db_row_json(
		db,
		"SELECT id AS candidate_id, purpose, verdict, detail,"
		" finished_at FROM candidates WHERE branch_id = ? AND"
		" verdict IS NOT NULL AND cell_of IS NULL ORDER BY id DESC"
		" LIMIT 1",
		"i", branch);
}

json_t *candidate_newest_of_json(sqlite3 *db, const char *patch_ids)
{
	return db_rows_json(
		db,
		"SELECT j.value AS patch, c.id, c.purpose, c.step,"
		" c.verdict FROM candidates c, json_each(c.patch_ids)"
		" j WHERE j.value IN (SELECT value FROM json_each(?))"
		" AND c.id = (SELECT MAX(d.id) FROM candidates d,"
		" json_each(d.patch_ids) e WHERE e.value = j.value AND"
		" d.cell_of IS NULL)",
		"t", patch_ids);
}

json_t *candidate_list_json(sqlite3 *db, const char *purpose, long long branch,
			    long long limit)
{
	return db_rows_json(db,
			    "SELECT id, branch_id AS branch, purpose, step,"
			    " verdict, detail, upto_patch_id,"
			    " json_array_length(patch_ids) AS patches,"
			    " commit_sha, build_id, bisection_id, started_at,"
			    " finished_at FROM candidates WHERE (? IS NULL OR"
			    " purpose = ?) AND (? = 0 OR branch_id = ?) ORDER"
			    " BY id DESC LIMIT ?",
			    "ttiii", purpose, purpose, branch, branch, limit);
}

json_t *candidate_ids_with(sqlite3 *db, long long patch_id, long long limit)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT DISTINCT c.id FROM candidates c,"
				      " json_each(c.patch_ids) j WHERE j.value"
				      " = ? ORDER BY c.id DESC LIMIT ?",
				      "ii", patch_id, limit);
	json_t *ids = json_array();
	int rc;

	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(
			ids, json_integer(sqlite3_column_int64(st, 0)));
	sqlite3_finalize(st);
	return ids;
}

long long candidate_tip(sqlite3 *db, long long id)
{
	return db_int(db, 1,
		      "SELECT COALESCE(tip_candidate_id, 0) FROM candidates"
		      " WHERE id = ?",
		      "i", id);
}

int candidate_set_tip(sqlite3 *db, long long id, long long tip)
{
	int ret = db_exec(db,
			  "UPDATE candidates SET tip_candidate_id = ? WHERE"
			  " id = ?",
			  "ii", tip, id);
	return ret < 0 ? ret : 0;
}

int candidate_count_pending(sqlite3 *db, long long *n)
{
	*n = 0;
	return db_query_int(db, n,
			    "SELECT COUNT(*) FROM candidates WHERE step ="
			    " 'pending'",
			    NULL);
}

json_t *candidate_verdict_counts(sqlite3 *db)
{
	return db_map_of(
		db_rows_json(db,
			     "SELECT COALESCE(verdict, 'none'), COUNT(*) FROM"
			     " candidates GROUP BY 1",
			     NULL));
}

int candidate_last_failed(sqlite3 *db, long long branch, long long *id)
{
	*id = 0;
	return db_query_int(db, id,
			    "SELECT id FROM candidates WHERE branch_id = ? AND"
			    " verdict IN ('fail','build-failed','hang') AND"
			    " purpose IN ('queue','confirm') AND cell_of IS"
			    " NULL ORDER BY id DESC LIMIT 1",
			    "i", branch);
}

long long candidate_failed_tip(sqlite3 *db, long long branch)
{
	return db_int(db, 1,
		      "SELECT c.id FROM candidates c WHERE c.purpose IN"
		      " ('queue','confirm') AND c.verdict IN"
		      " ('fail','build-failed','hang') AND c.id = (SELECT"
		      " MAX(id) FROM candidates WHERE branch_id = ?1 AND"
		      " purpose IN ('queue','confirm') AND cell_of IS NULL)"
		      " AND"
		      " json_array_length(c.patch_ids) > 0",
		      "i", branch);
}

int candidate_set_purpose(sqlite3 *db, long long id, const char *purpose)
{
	int ret = db_exec(db, "UPDATE candidates SET purpose = ? WHERE id = ?",
			  "ti", purpose, id);
	return ret < 0 ? ret : 0;
}

int candidate_cost(sqlite3 *db, long long id, long long *builds,
		   long long *boots)
{
	int ret;

	*builds = *boots = 0;
	ret = db_query_int(db, builds,
			   "SELECT COUNT(*) FROM candidates c JOIN builds d ON"
			   " d.id = c.build_id WHERE c.id = ? AND d.cached = 0",
			   "i", id);
	if (ret >= 0)
		ret = db_query_int(db, boots,
				   "SELECT COALESCE(boots, 0) FROM candidates"
				   " WHERE id = ?",
				   "i", id);
	return ret;
}

long long candidate_build_id(sqlite3 *db, long long id)
{
	return db_int(db, 0,
		      "SELECT COALESCE(build_id, 0) FROM candidates WHERE id"
		      " = ?",
		      "i", id);
}

char *candidate_build_error(sqlite3 *db, long long id)
{
	return db_text(db,
		       "SELECT b.error_excerpt FROM candidates c JOIN builds b"
		       " ON b.id = c.build_id WHERE c.id = ?",
		       "i", id);
}

char *candidate_coverage_failure(sqlite3 *db, long long id)
{
	return db_text(db,
		       "SELECT detail || COALESCE(char(10) || 'build"
		       " coverage: ' || coverage, '') FROM candidates WHERE"
		       " id = ? AND verdict = 'build-failed'",
		       "i", id);
}

char *candidate_object_failure(sqlite3 *db, long long id)
{
	return db_text(db,
		       "SELECT 'build: ' || substr(c.detail, instr(c.detail,"
		       " ': ') + 2, 300) FROM candidates c JOIN builds b ON"
		       " b.id = c.build_id WHERE c.id = ? AND b.result = 'ok'"
		       " AND c.detail LIKE 'patch %: %'",
		       "i", id);
}

sqlite3_stmt *candidate_done_rows(sqlite3 *db, const char *since,
				  long long branch)
{
	return db_prepare(db,
			  "SELECT id, purpose, verdict, detail, patch_ids,"
			  " commit_sha, started_at, build_id FROM candidates"
			  " WHERE step = 'done' AND (?1 IS NULL OR"
			  " COALESCE(finished_at, started_at) >= ?1) AND (?2 ="
			  " 0 OR branch_id IS NULLIF(?2, -1)) ORDER BY id",
			  "ti", since, branch);
}

char *candidate_commit(sqlite3 *db, long long id)
{
	return db_text(db, "SELECT commit_sha FROM candidates WHERE id = ?",
		       "i", id);
}

int candidate_patch_count(sqlite3 *db, long long id, long long *n)
{
	*n = 0;
	return db_query_int(db, n,
			    "SELECT json_array_length(patch_ids) FROM"
			    " candidates WHERE id = ?",
			    "i", id);
}

int candidate_set_coverage(sqlite3 *db, long long id, const char *coverage,
			   const char *log)
{
	int ret = db_exec(db,
			  "UPDATE candidates SET coverage = ?, coverage_log = ?"
			  " WHERE id = ?",
			  "tti", coverage, log, id);
	return ret < 0 ? ret : 0;
}

int candidate_coverage(sqlite3 *db, long long id, char **coverage)
{
	*coverage = NULL;
	return db_query_text(db, coverage,
			     "SELECT coverage FROM candidates WHERE id = ?",
			     "i", id);
}

int candidate_coverage_log(sqlite3 *db, long long id, char **log)
{
	*log = NULL;
	return db_query_text(db, log,
			     "SELECT coverage_log FROM candidates WHERE id = ?",
			     "i", id);
}

int candidate_with_patches(sqlite3 *db, long long branch, const char *ids,
			   int passed, long long *id)
{
	*id = 0;
	return db_query_int(db, id,
			    "SELECT id FROM candidates WHERE branch_id = ? AND"
			    " purpose IN ('queue','confirm') AND (? = 0 OR"
			    " verdict = 'pass') AND patch_ids = ? AND cell_of"
			    " IS NULL ORDER BY id DESC LIMIT 1",
			    "iit", branch, (long long)passed, ids);
}

/* ---- builds ---- */

int candidate_build_log_path(sqlite3 *db, long long build, char **path)
{
	*path = NULL;
	return db_query_text(db, path,
			     "SELECT log_path FROM builds WHERE id = ?", "i",
			     build);
}

sqlite3_stmt *candidate_build_row(sqlite3 *db, long long build)
{
	return db_prepare(db,
			  "SELECT result, seconds, error_excerpt, created_at,"
			  " config_hash FROM builds WHERE id = ?",
			  "i", build);
}

char *candidate_build_result(sqlite3 *db, long long build)
{
	return db_text(db, "SELECT result FROM builds WHERE id = ?", "i",
		       build);
}

long long candidate_last_build(sqlite3 *db)
{
	return db_int(db, 1, "SELECT MAX(id) FROM builds", NULL);
}

int candidate_build_seconds(sqlite3 *db, long long *count, double *sum)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT COUNT(seconds), COALESCE(SUM"
				      "(seconds), 0) FROM builds WHERE seconds"
				      " IS NOT NULL",
				      NULL);

	*count = 0;
	*sum = 0;
	if (!st || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return ERR_IO;
	}
	*count = sqlite3_column_int64(st, 0);
	*sum = sqlite3_column_double(st, 1);
	sqlite3_finalize(st);
	return 0;
}
