/* t-testcase.c: a candidate's test cases against the tip, on a real store. */
#include "db.h"
#include "err.h"
#include "strbuf.h"
#include "tap.h"
#include "testcase.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static sqlite3 *db;

static long long candidate(const char *purpose, const char *patches)
{
	db_exec(db,
		"INSERT INTO candidates (branch_id, purpose, patch_ids) VALUES"
		" (1, ?, ?)",
		"tt", purpose, patches);
	return db_last_id(db);
}

/* results: "name=pass,fail;other=fail" -> one row per boot */
static void results(long long cid, const char *spec)
{
	char *s = xstrdup(spec), *save = NULL;

	for (char *t = strtok_r(s, ";", &save); t;
	     t = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(t, '='), *save2 = NULL;
		*eq = '\0';
		int run = 1;
		for (char *r = strtok_r(eq + 1, ",", &save2); r;
		     r = strtok_r(NULL, ",", &save2))
			db_exec(db,
				"INSERT INTO test_results (candidate_id, run,"
				" name, result, detail) VALUES (?, ?, ?, ?, ?)",
				"iittt", cid, (long long)run++, t, r, "why");
	}
	free(s);
}

static char *status(long long cid, const char *name)
{
	char *v = NULL;

	if (db_query_text(db, &v,
			  "SELECT status FROM test_cases WHERE candidate_id = ?"
			  " AND name = ?",
			  "it", cid, name) < 0) {
		err_clear();
		return xstrdup("(absent)");
	}
	return v;
}

static void is_status(long long cid, const char *name, const char *want,
		      const char *what)
{
	char *v = status(cid, name);
	is_str(v, want, "%s", what);
	free(v);
}

int main(void)
{
	char dir[] = "/tmp/t-testcase.XXXXXX", path[64];
	struct testcase_counts c;
	struct strbuf why = STRBUF_INIT;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/s.db", dir);
	ok(db_open(&db, path) == 0, "a store");
	db_exec(db,
		"INSERT INTO branches (id, key, name, version, base_tag, ord)"
		" VALUES (1, '6.1', 'linux-6.1.y', '', '', 0)",
		NULL);

	long long tip = candidate("baseline", "[]");
	results(tip, "boot=pass;kunit.s.a=pass;kunit.s.b=fail,fail,fail;"
		     "always-false=fail;flip=pass;gone=pass");
	long long cand = candidate("queue", "[1,2]");
	results(cand, "boot=pass;kunit.s.a=fail,fail,fail;"
		      "kunit.s.b=fail,fail,fail;always-false=fail,fail,fail;"
		      "flip=fail,pass;new=fail,fail,fail;sk=skip");

	is_int(testcase_counts(db, cand, &c), 1, "not classified yet");
	ok(testcase_list_json(db, cand, NULL) == NULL, "no list yet");
	is_int(testcase_classify(db, cand, tip, &c, &why), 0, "classified");
	is_status(cand, "boot", "pass", "a pass");
	is_status(cand, "kunit.s.a", "regression",
		  "passes on the tip, fails here: a regression");
	is_status(cand, "kunit.s.b", "known",
		  "fails on the tip too: a known failure");
	is_status(cand, "always-false", "known", "a guest test, known");
	is_status(cand, "flip", "flaky", "passed and failed here: flaky");
	is_status(cand, "new", "regression",
		  "a failing test the tip never ran: a regression");
	is_status(cand, "sk", "skip", "a skip");
	is_status(cand, "gone", "(absent)", "a test only the tip ran: none");
	is_int(c.total, 7, "7 cases");
	is_int(c.regressions, 2, "2 regressions");
	is_int(c.known, 2, "2 known failures");
	is_int(c.flaky, 1, "1 flaky");
	is_int(c.pass, 1, "1 pass");
	is_int(c.skip, 1, "1 skip");
	like(why.buf, "kunit.s.a failed (passes on the tip)",
	     "the detail names the regression");
	ok(!strstr(why.buf, "kunit.s.b"), "but no known failure: %s", why.buf);
	like(why.buf, "flip flaky (1 pass, 1 fail)", "and the flaky test");
	long long linked = 0;
	db_query_int(db, &linked,
		     "SELECT tip_candidate_id FROM candidates WHERE id = ?", "i",
		     cand);
	is_int(linked, tip, "the candidate names the tip's run");

	json_t *reg = testcase_regressions(db, cand);
	is_int((long)json_array_size(reg), 2, "two regressions to steer by");
	is_str(json_string_value(json_array_get(reg, 0)), "kunit.s.a",
	       "sorted by name");
	json_decref(reg);

	json_t *all = testcase_list_json(db, cand, NULL);
	is_str(json_string_value(
		       json_object_get(json_array_get(all, 0), "status")),
	       "regression", "the list leads with regressions");
	is_str(json_string_value(json_object_get(
		       json_array_get(all, json_array_size(all) - 1),
		       "status")),
	       "pass", "passes come last");
	json_decref(all);
	json_t *known = testcase_list_json(db, cand, "known");
	is_int((long)json_array_size(known), 2, "filtered by status");
	is_str(json_string_value(json_object_get(json_array_get(known, 0),
						 "tip")),
	       "fail", "with the tip's result");
	json_decref(known);

	/* classified again: rows replaced, not added */
	is_int(testcase_classify(db, cand, tip, &c, NULL), 0, "again");
	long long n = 0;
	db_query_int(db, &n,
		     "SELECT COUNT(*) FROM test_cases WHERE candidate_id = ?",
		     "i", cand);
	is_int(n, 7, "still 7 rows");

	/* without a tip run every failure is a regression */
	long long lone = candidate("queue", "[1]");
	results(lone, "kunit.s.b=fail;ok=pass");
	is_int(testcase_classify(db, lone, 0, &c, NULL), 0, "no tip");
	is_status(lone, "kunit.s.b", "regression", "no tip: a regression");
	is_int(c.regressions, 1, "1 regression");

	/* a timeout under a loaded host, then skipped when run again: the
	 * failure did not repeat (bench/verdict.sh's cold run saw it of
	 * kselftest.vm.run_vmtests_sh) */
	long long tip2 = candidate("baseline", "[]");
	results(tip2, "slow=skip;tipskip=skip");
	long long c2 = candidate("queue", "[1]");
	results(c2, "slow=fail,skip,skip;tipskip=fail,fail");
	strbuf_reset(&why);
	is_int(testcase_classify(db, c2, tip2, &c, &why), 0, "classified");
	is_status(c2, "slow", "flaky",
		  "failed once, then ran to a skip: flaky, no regression");
	like(why.buf, "slow flaky (0 pass, 2 skip, 1 fail)",
	     "... said with its skips");
	is_status(c2, "tipskip", "regression",
		  "failed every time, skipped on the tip: a regression");
	like(why.buf, "tipskip failed (skipped on the tip)",
	     "... said as skipped there, not passing");

	ok(testcase_status_valid("known") && !testcase_status_valid("fail") &&
		   !testcase_status_valid(NULL),
	   "status names");
	char *t = testcase_thousands(2143);
	is_str(t, "2,143", "2,143");
	free(t);
	t = testcase_thousands(1234567);
	is_str(t, "1,234,567", "1,234,567");
	free(t);
	t = testcase_thousands(96);
	is_str(t, "96", "96");
	free(t);
	char h[65];
	is_int(testcase_set_hash("/nonexistent/tests.conf", h), ERR_NOTFOUND,
	       "a missing test set");
	is_int(testcase_set_hash("config/tests.conf", h), 0, "a test set hash");
	is_int((long)strlen(h), 64, "sha256 hex");

	strbuf_release(&why);
	db_close(db);
	unlink(path);
	char wal[80];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	unlink(wal);
	snprintf(wal, sizeof(wal), "%s-shm", path);
	unlink(wal);
	rmdir(dir);
	return done_testing();
}
