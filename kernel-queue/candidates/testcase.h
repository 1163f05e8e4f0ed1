/* testcase.h: a candidate's test cases against the branch tip: regression, known, flaky, pass, skip. */
#ifndef STABLEQ_TESTCASE_H
#define STABLEQ_TESTCASE_H

#include <jansson.h>
#include <sqlite3.h>

/*
 * A candidate's boots leave one test_results row per test and boot; its
 * test cases (table test_cases) say what they amount to, against the run
 * of the same test set on the branch tip (a 'baseline' candidate of no
 * patches, run once per tip state):
 *
 *   regression  failed in every boot here, and passed on the tip (or the
 *               tip never ran it, or there is no tip run)
 *   known       failed in every boot here, and failed on the tip too
 *   flaky       passed in one boot and failed in another (on one build)
 *   pass, skip
 *
 * A candidate fails only on a regression. Flaky tests are recorded and
 * reported, never bisected.
 */
struct testcase_counts {
	long long total, regressions, known, flaky, pass, skip;
};

/*
 * Classifies candidate id's results against the tip's candidate tip_id (0:
 * none), replacing its test_cases rows, in one transaction. counts (may be
 * NULL) is filled. detail (may be NULL) gets "a regressed; b flaky (1 pass,
 * 2 fail)" for the failures. Returns 0 or a negative code.
 */
struct strbuf;
int testcase_classify(sqlite3 *db, long long id, long long tip_id,
		      struct testcase_counts *counts, struct strbuf *detail);
/* The counts of a classified candidate; 0, or 1 if it was never classified
 * (counts zeroed then). */
int testcase_counts(sqlite3 *db, long long id, struct testcase_counts *counts);
/* "regression", "known", "flaky", "pass", "skip": 1 if s is one of them. */
int testcase_status_valid(const char *s);
/*
 * [{name, status, tip, runs, fails, detail, log_excerpt}] of candidate id,
 * regressions first, then flaky, known, skip, pass; only those of status
 * when it is not NULL. NULL if the candidate was never classified.
 */
json_t *testcase_list_json(sqlite3 *db, long long id, const char *status);
/*
 * Candidate id's test cases with their result on the tip it was classified
 * against: {name: "pass" | "fail" | "flaky" | "skip" | null (the tip did
 * not run it, or there was no tip run)}. A new reference, or NULL when the
 * candidate was never classified.
 */
json_t *testcase_tip_results(sqlite3 *db, long long id);
/* The names of its regressions (a JSON array of strings), NULL if it was
 * never classified. */
json_t *testcase_regressions(sqlite3 *db, long long id);
/* The sha256 of the test set file at path, as hex; 0 or negative. */
int testcase_set_hash(const char *path, char out[65]);
/* "2,143" */
char *testcase_thousands(long long n);

/*
 * The tests that failed in candidate id (regressions_only: those that are
 * regressions against its tip), first failure first: {name, flaky (1 when
 * it also passed)}. A new reference or NULL.
 */
json_t *testcase_failing(sqlite3 *db, long long id, int regressions_only);

/* How often test name failed (or was flaky) and passed in candidate id. */
int testcase_results(sqlite3 *db, long long id, const char *name,
		     long long *fails, long long *passes);
/* The first failure's log excerpt (name NULL: any test's), or NULL. */
char *testcase_fail_excerpt(sqlite3 *db, long long id, const char *name);
/* The names of the tests that failed, [{name}], sorted. */
json_t *testcase_failed_names(sqlite3 *db, long long id);
/* Its failures become 'flaky' (a bisection saw them pass on repeat). */
int testcase_mark_flaky(sqlite3 *db, long long id);
/* The first result of test name in candidate id ("pass"...), or NULL. */
char *testcase_result(sqlite3 *db, long long id, const char *name);
/*
 * Every result of candidate id, with its test case's status: a statement
 * of rows (id, run, name, result, detail, log_excerpt, status) the caller
 * finalizes.
 */
sqlite3_stmt *testcase_results_rows(sqlite3 *db, long long id);
/* How many tests candidate id ran (distinct names; 0 on error). */
long long testcase_count(sqlite3 *db, long long id);

#endif
