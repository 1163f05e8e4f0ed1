/* testcase.c: a candidate's test cases, classified against the branch tip's run of the same set. */
#include "testcase.h"
#include "candidate.h"
#include "db.h"
#include "err.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const statuses[] = {"regression", "flaky", "known", "skip",
				       "pass"};

int testcase_status_valid(const char *s)
{
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (s && !strcmp(s, statuses[i]))
			return 1;
	return 0;
}

/* The tip's result of one test: pass, fail, flaky, skip, or NULL. */
static const char *tip_result(sqlite3 *db, long long tip_id, const char *name)
{
	long long p = 0, f = 0, n = 0, sk = 0;

	if (!tip_id)
		return NULL;
	sqlite3_stmt *st = db_prepare(
		db,
		"SELECT COUNT(*), SUM(result = 'pass'), SUM(result IN"
		" ('fail','flaky')), SUM(result = 'skip') FROM test_results"
		" WHERE candidate_id = ? AND name = ?",
		"it", tip_id, name);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		n = sqlite3_column_int64(st, 0);
		p = sqlite3_column_int64(st, 1);
		f = sqlite3_column_int64(st, 2);
		sk = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	err_clear();
	if (!n)
		return NULL;
	return (p || sk) && f ? "flaky" : f ? "fail" : p ? "pass" : "skip";
}

int testcase_classify(sqlite3 *db, long long id, long long tip_id,
		      struct testcase_counts *counts, struct strbuf *detail)
{
	struct testcase_counts c = {0};
	sqlite3_stmt *st = NULL;
	int ret;

	if ((ret = db_exec_script(db, "SAVEPOINT testcase_classify")) < 0)
		return ret;
	if ((ret = db_exec(db, "DELETE FROM test_cases WHERE candidate_id = ?",
			   "i", id)) < 0)
		goto out;
	st = db_prepare(db,
			"SELECT name, COUNT(*), SUM(result = 'pass'),"
			" SUM(result = 'fail'), SUM(result = 'flaky'),"
			" SUM(result = 'skip') FROM test_results WHERE"
			" candidate_id = ? GROUP BY name ORDER BY MIN(id)",
			"i", id);
	if (!st) {
		ret = ERR_IO;
		goto out;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = db_col_text(st, 0);
		long long runs = sqlite3_column_int64(st, 1);
		long long p = sqlite3_column_int64(st, 2);
		long long f = sqlite3_column_int64(st, 3);
		long long fl = sqlite3_column_int64(st, 4);
		long long sk = sqlite3_column_int64(st, 5);
		const char *tip = tip_result(db, tip_id, name), *status;

		/* failed, and run again did not: passed, or ran to a skip */
		if (fl || ((p || sk) && f)) {
			status = "flaky";
			c.flaky++;
			if (detail) {
				strbuf_addf(detail, "%s%s flaky (%lld pass, ",
					    detail->len ? "; " : "", name, p);
				if (sk)
					strbuf_addf(detail, "%lld skip, ", sk);
				strbuf_addf(detail, "%lld fail)", f + fl);
			}
		} else if (f) {
			int known = tip && (!strcmp(tip, "fail") ||
					    !strcmp(tip, "flaky"));
			status = known ? "known" : "regression";
			if (known) {
				c.known++;
			} else {
				c.regressions++;
				if (detail)
					strbuf_addf(detail, "%s%s failed%s",
						    detail->len ? "; " : "",
						    name,
						    !tip ? ""
						    : !strcmp(tip, "pass")
							    ? " (passes on the tip)"
							    : " (skipped on the tip)");
			}
		} else if (p) {
			status = "pass";
			c.pass++;
		} else {
			status = "skip";
			c.skip++;
		}
		c.total++;
		ret = db_exec(db,
			      "INSERT INTO test_cases (candidate_id, name,"
			      " status, tip, runs, fails) VALUES (?, ?, ?, ?,"
			      " ?, ?)",
			      "ittt" "ii", id, name, status, tip, runs, f + fl);
		if (ret < 0)
			goto out;
	}
	if (tip_id)
		ret = candidate_set_tip(db, id, tip_id);
out:
	sqlite3_finalize(st);
	if (ret < 0) {
		db_exec_script(db, "ROLLBACK TO testcase_classify;"
				   " RELEASE testcase_classify");
		return ret;
	}
	if ((ret = db_exec_script(db, "RELEASE testcase_classify")) < 0)
		return ret;
	if (counts)
		*counts = c;
	return 0;
}

int testcase_counts(sqlite3 *db, long long id, struct testcase_counts *c)
{
	sqlite3_stmt *st = db_prepare(
		db,
		"SELECT COUNT(*), SUM(status = 'regression'), SUM(status ="
		" 'known'), SUM(status = 'flaky'), SUM(status = 'pass'),"
		" SUM(status = 'skip') FROM test_cases WHERE candidate_id = ?",
		"i", id);

	memset(c, 0, sizeof(*c));
	if (!st)
		return ERR_IO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		c->total = sqlite3_column_int64(st, 0);
		c->regressions = sqlite3_column_int64(st, 1);
		c->known = sqlite3_column_int64(st, 2);
		c->flaky = sqlite3_column_int64(st, 3);
		c->pass = sqlite3_column_int64(st, 4);
		c->skip = sqlite3_column_int64(st, 5);
	}
	sqlite3_finalize(st);
	return c->total ? 0 : 1;
}

/* 1 if the candidate has test_cases rows. */
static int classified(sqlite3 *db, long long id)
{
	long long n = 0;

	if (db_query_int(db, &n,
			 "SELECT COUNT(*) FROM test_cases WHERE candidate_id = ?",
			 "i", id) < 0)
		err_clear();
	return n > 0;
}

json_t *testcase_list_json(sqlite3 *db, long long id, const char *status)
{

	if (!classified(db, id))
		return NULL;
	/* the last boot's detail: what a reader wants is how it failed */
	return db_rows_json(
		db,
		"SELECT c.name, c.status, c.tip, c.runs, c.fails, r.detail,"
		" r.log_excerpt FROM test_cases c LEFT JOIN test_results r ON"
		" r.id = (SELECT MAX(id) FROM test_results WHERE candidate_id ="
		" c.candidate_id AND name = c.name AND (c.fails = 0 OR result"
		" IN ('fail','flaky'))) WHERE c.candidate_id = ?1 AND (?2 IS"
		" NULL OR c.status = ?2) ORDER BY CASE c.status WHEN"
		" 'regression' THEN 0 WHEN 'flaky' THEN 1 WHEN 'known' THEN 2"
		" WHEN 'skip' THEN 3 ELSE 4 END, r.id",
		"it", id, status);
}

json_t *testcase_tip_results(sqlite3 *db, long long id)
{
	if (!classified(db, id))
		return NULL;
	return db_map_of(db_rows_json(db,
				      "SELECT name, tip FROM test_cases WHERE"
				      " candidate_id = ? ORDER BY name",
				      "i", id));
}

json_t *testcase_regressions(sqlite3 *db, long long id)
{
	json_t *rows, *names, *v;
	size_t i;

	if (!classified(db, id))
		return NULL;
	rows = db_rows_json(db,
			    "SELECT name FROM test_cases WHERE candidate_id = ?"
			    " AND status = 'regression' ORDER BY name",
			    "i", id);
	if (!rows)
		return NULL;
	names = json_array();
	json_array_foreach(rows, i, v)
		json_array_append(names, json_object_get(v, "name"));
	json_decref(rows);
	return names;
}

int testcase_set_hash(const char *path, char out[65])
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	out[0] = '\0';
	if (fd < 0)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			       "%s: %s", path, strerror(errno));
	if (strbuf_read_fd(&sb, fd, 16 << 20) < 0) {
		close(fd);
		strbuf_release(&sb);
		return err_set(ERR_IO, "%s: %s", path, strerror(errno));
	}
	close(fd);
	EVP_Digest(sb.buf, sb.len, md, &mdlen, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < mdlen && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	strbuf_release(&sb);
	return 0;
}

char *testcase_thousands(long long n)
{
	char digits[32], out[48];
	int len = snprintf(digits, sizeof(digits), "%lld", n < 0 ? -n : n);
	size_t o = 0;

	if (n < 0)
		out[o++] = '-';
	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
	return xstrdup(out);
}

json_t *testcase_failing(sqlite3 *db, long long id, int regressions_only)
{
	return db_rows_json(db,
			    "SELECT name, MAX(result = 'flaky') AS flaky FROM"
			    " test_results WHERE candidate_id = ?1 AND result"
			    " IN ('fail','flaky') AND (?2 = 0 OR name IN"
			    " (SELECT name FROM test_cases WHERE candidate_id ="
			    " ?1 AND status = 'regression')) GROUP BY name"
			    " ORDER BY MIN(id)",
			    "ii", id, (long long)regressions_only);
}

int testcase_results(sqlite3 *db, long long id, const char *name,
		     long long *fails, long long *passes)
{
	int ret;

	*fails = *passes = 0;
	ret = db_query_int(db, fails,
			   "SELECT COUNT(*) FROM test_results WHERE"
			   " candidate_id = ? AND name = ? AND result IN"
			   " ('fail','flaky')",
			   "it", id, name);
	if (ret >= 0)
		ret = db_query_int(db, passes,
				   "SELECT COUNT(*) FROM test_results WHERE"
				   " candidate_id = ? AND name = ? AND result"
				   " IN ('pass','flaky')",
				   "it", id, name);
	return ret;
}

char *testcase_fail_excerpt(sqlite3 *db, long long id, const char *name)
{
	return db_text(db,
		       "SELECT COALESCE(log_excerpt, detail) FROM test_results"
		       " WHERE candidate_id = ? AND (? IS NULL OR name = ?) AND"
		       " result = 'fail' ORDER BY id LIMIT 1",
		       "itt", id, name, name);
}

json_t *testcase_failed_names(sqlite3 *db, long long id)
{
	return db_rows_json(db,
			    "SELECT DISTINCT name FROM test_results WHERE"
			    " candidate_id = ? AND result = 'fail' ORDER BY"
			    " name",
			    "i", id);
}

int testcase_mark_flaky(sqlite3 *db, long long id)
{
	int ret = db_exec(db,
			  "UPDATE test_results SET result = 'flaky' WHERE"
			  " candidate_id = ? AND result = 'fail'",
			  "i", id);
	return ret < 0 ? ret : 0;
}

char *testcase_result(sqlite3 *db, long long id, const char *name)
{
	return db_text(db,
		       "SELECT result FROM test_results WHERE candidate_id = ?"
		       " AND name = ? ORDER BY id LIMIT 1",
		       "it", id, name);
}

sqlite3_stmt *testcase_results_rows(sqlite3 *db, long long id)
{
	return db_prepare(db,
			  "SELECT r.id, r.run, r.name, r.result, r.detail,"
			  " r.log_excerpt, c.status FROM test_results r LEFT"
			  " JOIN test_cases c ON c.candidate_id ="
			  " r.candidate_id AND c.name = r.name WHERE"
			  " r.candidate_id = ? ORDER BY r.id",
			  "i", id);
}

long long testcase_count(sqlite3 *db, long long id)
{
	return db_int(db, 1,
		      "SELECT COUNT(DISTINCT name) FROM test_results WHERE"
		      " candidate_id = ?",
		      "i", id);
}
