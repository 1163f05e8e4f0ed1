/* candidate-report.c: what a candidate found, as one line (candidate_summary) and as JSON (candidate_json). */
#include "candidate.h"
#include "bisect.h"
#include "cell.h"
#include "coverage.h"
#include "gcov.h"
#include "db.h"
#include "err.h"
#include "progress.h"
#include "queue.h"
#include "strbuf.h"
#include "testcase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *candidate_summary(sqlite3 *db, long long id)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st = db_prepare(
		db,
		"SELECT c.verdict, c.step, c.detail,"
		" json_array_length(c.patch_ids), c.boots, b.id, b.cached,"
		" (SELECT COUNT(DISTINCT name) FROM test_results WHERE"
		" candidate_id = c.id AND result = 'pass')"
		" FROM candidates c LEFT JOIN builds b ON b.id = c.build_id"
		" WHERE c.id = ?",
		"i", id);

	strbuf_addf(&sb, "candidate %lld: ", id);
	int ret = st ? db_step(st) : ERR_IO;
	if (ret <= 0) {
		strbuf_addstr(&sb, ret ? err_msg() : "no such candidate");
		goto out;
	}
	const char *verdict = db_col_text(st, 0), *detail = db_col_text(st, 2);
	long long npatches = sqlite3_column_int64(st, 3);
	long long boots = sqlite3_column_int64(st, 4);
	long long build = sqlite3_column_int64(st, 5);
	int cached = sqlite3_column_int(st, 6);
	long long passed = sqlite3_column_int64(st, 7);
	long long culprit = bisect_culprit_of(db, id);

	if (!verdict) {
		strbuf_addstr(&sb, strcmp(db_col_text(st, 1), "done")
					   ? db_col_text(st, 1)
					   : "could not run");
		if (detail && !strcmp(db_col_text(st, 1), "done"))
			strbuf_addf(&sb, ": %.*s", (int)strcspn(detail, "\n"),
				    detail);
		goto out;
	}
	strbuf_addstr(&sb, verdict);
	enum cand_verdict cv = candidate_verdict_parse(verdict);
	if (cv == CV_FAIL || cv == CV_HANG) {
		/* the failing tests, first failure first */
		/* classified against the tip: its regressions alone */
		struct testcase_counts tc;
		int classified = testcase_counts(db, id, &tc) == 0;
		json_t *f = testcase_failing(db, id,
					     classified && tc.regressions),
		       *t;
		size_t n = json_array_size(f), i;
		json_array_foreach(f, i, t)
		{
			if (i < 4)
				strbuf_addf(&sb, "%s%s%s", i ? ", " : ": ",
					    json_string_value(
						    json_object_get(t, "name")),
					    json_integer_value(
						    json_object_get(t, "flaky"))
						    ? " (flaky)"
						    : "");
		}
		json_decref(f);
		if (n > 4)
			strbuf_addf(&sb, " and %zu more", n - 4);
		if (culprit)
			strbuf_addf(&sb, " (first bad patch %lld)", culprit);
	} else if (cv == CV_PASS) {
		strbuf_addf(&sb, " (%lld patch%s, %lld test%s passed", npatches,
			    npatches == 1 ? "" : "es", passed,
			    passed == 1 ? "" : "s");
		if (build && cached)
			strbuf_addf(&sb, ", build %lld from the cache", build);
		strbuf_addf(&sb, ", %lld boot%s)", boots, boots == 1 ? "" : "s");
	} else if (detail) {
		strbuf_addf(&sb, ": %.*s", (int)strcspn(detail, "\n"), detail);
	}
	{
		/* the matrix, when the branch tests more than one cell */
		char *cells = cell_line(db, id);
		if (cells)
			strbuf_addf(&sb, " [%s]", cells);
		free(cells);
	}
out:
	sqlite3_finalize(st);
	return strbuf_detach(&sb, NULL);
}

/* "pass: 7 tests; 58 of 62 patches compiled, 4 in the booted kernel" */
static json_t *verdict_summary(sqlite3 *db, long long id)
{
	char *verdict = candidate_verdict(db, id), *cov = NULL;
	long long tests = 0;
	json_t *s;

	if (!verdict)
		return json_null();
	db_query_int(db, &tests,
		     "SELECT COUNT(DISTINCT name) FROM test_results WHERE"
		     " candidate_id = ?",
		     "i", id);
	db_query_text(db, &cov, "SELECT coverage FROM candidates WHERE id = ?",
		      "i", id);
	err_clear();
	{
		/* a coverage boot's line count goes with build coverage */
		json_t *g = gcov_candidate_json(db, id);
		if (json_is_object(g)) {
			json_int_t ex = json_integer_value(
				json_object_get(g, "executable"));
			char *t = ex ? gcov_lines_text(
					       (long)json_integer_value(
						       json_object_get(
							       g, "executed")),
					       (long)ex, 0)
				     : xstrdup(json_string_value(json_object_get(
					       g, "summary")));
			char *c2 = xstrfmt("%s%s%s", cov ? cov : "",
					   cov ? ", " : "", t);
			free(cov);
			free(t);
			cov = c2;
		}
		json_decref(g);
	}
	{
		/* no test ran (the build failed): no "0 tests" */
		struct testcase_counts tc;
		char *n = testcase_thousands(tests), *cases = NULL;
		if (testcase_counts(db, id, &tc) == 0)
			cases = xstrfmt(", %lld regression%s, %lld known"
					" failure%s, %lld flaky",
					tc.regressions,
					tc.regressions == 1 ? "" : "s",
					tc.known, tc.known == 1 ? "" : "s",
					tc.flaky);
		err_clear();
		char *cells = cell_line(db, id); /* the matrix, per cell */
		char *t = cells ? xstrfmt("%s: %s%s%s%s%s", verdict, cells,
					  cases ? ";" : "",
					  cases ? cases + 1 : "",
					  cov ? "; " : "", cov ? cov : "")
			  : tests ? xstrfmt("%s: %s test%s%s%s%s", verdict, n,
					    tests == 1 ? "" : "s",
					    cases ? cases : "", cov ? "; " : "",
					    cov ? cov : "")
				  : xstrfmt("%s%s%s", verdict, cov ? "; " : "",
					    cov ? cov : "");
		free(cells);
		free(n);
		free(cases);
		s = json_string(t);
		free(t);
	}
	free(verdict);
	free(cov);
	return s ? s : json_null();
}

json_t *candidate_json(sqlite3 *db, long long id)
{
	json_t *o = db_object_json(db, "candidate", id,
				   "SELECT id, purpose, step, verdict, detail,"
				   " patch_ids, upto_patch_id, commit_sha,"
				   " build_id, bisection_id, log_path, boots,"
				   " started_at, finished_at FROM candidates"
				   " WHERE id = ?",
				   "tests",
				   "SELECT run, name, result, detail,"
				   " log_excerpt FROM test_results WHERE"
				   " candidate_id = ? ORDER BY id");
	json_t *b;

	if (!o)
		return NULL;
	const char *pt = json_string_value(json_object_get(o, "patch_ids"));
	json_t *arr = pt ? json_loads(pt, 0, NULL) : NULL;
	json_object_set_new(o, "patch_ids", arr ? arr : json_array());
	b = db_row_json(db,
			"SELECT id, commit_sha, tree_sha, config_hash, result,"
			" seconds, log_path, error_excerpt, cache_key, cached,"
			" created_at FROM"
			" builds WHERE id = (SELECT build_id FROM candidates"
			" WHERE id = ?)",
			"i", id);
	json_object_set_new(o, "build", b ? b : json_null());
	json_object_set_new(o, "coverage", coverage_candidate_json(db, id));
	/* each test's standing against the tip, the passes left out */
	json_t *st = json_object(), *cases = testcase_list_json(db, id, NULL), *v;
	size_t i;
	json_array_foreach(cases, i, v)
		if (strcmp(json_string_value(json_object_get(v, "status")),
			   "pass"))
			json_object_set(st,
					json_string_value(
						json_object_get(v, "name")),
					json_object_get(v, "status"));
	json_decref(cases);
	json_object_set_new(o, "standing", st);
	json_object_set_new(o, "summary", verdict_summary(db, id));
	json_object_set_new(o, "cells", cell_list_json(db, id));
	if (json_object_get(o, "verdict") &&
	    !json_is_null(json_object_get(o, "verdict"))) {
		char *line = candidate_summary(db, id);
		json_object_set_new(o, "headline", json_string(line));
		free(line);
	}
	json_object_set_new(o, "progress", progress_of_json(db, "build", id));
	/* each phase with its time, and the branch's usual time of each */
	json_t *ph = candidate_phases_json(
		db, id, candidate_branch_id(db, id),
		json_string_value(json_object_get(o, "purpose")) ?: "queue",
		json_is_string(json_object_get(o, "finished_at")));
	json_object_set_new(o, "phases",
			    json_incref(json_object_get(ph, "phases"))
				    ?: json_array());
	json_object_set_new(o, "estimate_left",
			    json_incref(json_object_get(ph, "estimate_left"))
				    ?: json_null());
	json_decref(ph);
	err_clear();
	return o;
}

char *candidate_newest_summary(sqlite3 *db, long long id)
{
	if (db_query_int(db, &id,
			 "SELECT MAX(id) FROM candidates WHERE purpose IN"
			 " ('queue','confirm') AND verdict IS NOT NULL AND"
			 " cell_of IS NULL",
			 NULL) < 0 || !id)
		return NULL;
	return candidate_summary(db, id);
}

