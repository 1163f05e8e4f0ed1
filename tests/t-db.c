/* t-db.c: the SQLite store: migrations, bound statements, transactions, JSON rows. */
#include "db.h"
#include "event.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"
#include "tap.h"

#include <string.h>
#include <unistd.h>

int main(void)
{
	char dir[] = "/tmp/t-db.XXXXXX", *path, *s = NULL;
	sqlite3 *db = NULL, *db2 = NULL;
	long long n = -1, v1 = 0;
	json_t *j;

	if (!mkdtemp(dir))
		return 1;
	path = xstrfmt("%s/t.db", dir);
	ok(db_open(&db, path) == 0, "db_open creates and migrates");
	ok(db_query_int(db, &v1, "PRAGMA user_version", NULL) == 0 && v1 >= 8,
	   "user_version counts the migrations applied");
	ok(db_query_int(db, &n, "SELECT COUNT(*) FROM sqlite_master WHERE"
			     " name = 'jobs'", NULL) == 0 && n == 0,
	   "the unused jobs table is gone (014-drop-jobs.sql)");
	ok(db_query_int(db, &n, "PRAGMA foreign_keys", NULL) == 0 && n == 1,
	   "foreign keys are on");
	db_query_text(db, &s, "PRAGMA journal_mode", NULL);
	is_str(s, "wal", "WAL mode");
	free(s);
	s = NULL;
	db_close(db);
	ok(db_open(&db, path) == 0, "db_open again");
	ok(db_query_int(db, &n, "PRAGMA user_version", NULL) == 0 && n == v1,
	   "... migrates nothing twice");

	is_int(db_exec(db, "INSERT INTO sources (kind, path) VALUES (?, ?)", "tt",
		       "mbox", "a"), 1, "db_exec returns the changes: 1");
	ok(db_last_id(db) > 0, "db_last_id");
	db_exec(db, "INSERT INTO sources (kind, path) VALUES (?, ?)", "tt", "mbox", "b");
	is_int(db_exec(db, "UPDATE sources SET path = path || ?", "t", "!"), 2,
	       "an update of two rows: 2");
	is_int(db_query_int(db, &n, "SELECT id FROM sources WHERE path = ?", "t", "zz"),
	       ERR_NOTFOUND, "db_query_int with no row: ERR_NOTFOUND");
	ok(db_query_int(db, &n, "SELECT COUNT(*) FROM sources WHERE path = ?", "t",
			"a'); DROP TABLE sources; --") == 0 && n == 0,
	   "a bound parameter is a value, not SQL");
	ok(db_query_int(db, &n, "SELECT COUNT(*) FROM sources", NULL) == 0 && n == 2,
	   "... the table is still there");
	ok(db_query_text(db, &s, "SELECT NULL", NULL) == 0 && !s,
	   "db_query_text of SQL NULL is NULL");
	ok(db_exec(db, "INSERT INTO no_such_table VALUES (1)", NULL) < 0,
	   "bad SQL fails");
	like(err_msg(), "no_such_table", "... saying what was wrong");
	ok(db_query_int(db, &n, "SELECT nope FROM sources", NULL) < 0 &&
	   db_query_int(db, &n, "SELECT nope FROM sources", NULL) != ERR_NOTFOUND,
	   "a database error is not 'not found'");
	ok(db_exec(db, "INSERT INTO sources (kind, path) VALUES (?, ?)", "t", "mbox") < 0,
	   "too few parameters for the '?'s fails");

	/* transactions */
	ok(db_begin(db) == 0, "db_begin");
	db_exec(db, "INSERT INTO sources (kind, path) VALUES ('mbox', 'rolled')", NULL);
	db_rollback(db);
	db_query_int(db, &n, "SELECT COUNT(*) FROM sources WHERE path = 'rolled'", NULL);
	is_int(n, 0, "db_rollback undoes");
	ok(db_begin(db) == 0, "db_begin");
	db_exec(db, "INSERT INTO sources (kind, path) VALUES ('mbox', 'kept')", NULL);
	ok(db_commit(db) == 0, "db_commit");
	ok(db_open(&db2, path) == 0, "a second connection");
	db_query_int(db2, &n, "SELECT COUNT(*) FROM sources WHERE path = 'kept'", NULL);
	is_int(n, 1, "... sees the committed row");
	ok(db_begin(db) == 0, "db_begin on the first");
	sqlite3_busy_timeout(db2, 100);
	ok(db_begin(db2) < 0, "BEGIN IMMEDIATE on the second waits, then fails");
	db_rollback(db);
	db_close(db2);

	/* JSON */
	j = db_rows_json(db, "SELECT id, path, NULL AS z, 1.5 AS f FROM sources"
			     " WHERE path LIKE ? ORDER BY id", "t", "%!");
	ok(json_array_size(j) == 2, "db_rows_json: two rows");
	is_str(json_string_value(json_object_get(json_array_get(j, 0), "path")), "a!",
	       "... keyed by column name");
	ok(json_is_null(json_object_get(json_array_get(j, 0), "z")), "... NULL is null");
	ok(json_is_real(json_object_get(json_array_get(j, 0), "f")), "... a real is a real");
	ok(json_is_integer(json_object_get(json_array_get(j, 1), "id")), "... an integer an integer");
	json_decref(j);
	j = db_row_json(db, "SELECT 1 FROM sources WHERE id = ?", "i", 999LL);
	ok(!j && err_last() == ERR_NOTFOUND, "db_row_json with no row: NULL, ERR_NOTFOUND");
	j = db_object_json(db, "source", 999, "SELECT * FROM sources WHERE id = ?",
			   NULL, NULL);
	ok(!j, "db_object_json of an unknown id");
	like(err_msg(), "source 999: no such source", "... says so");

	/* db_step: a row, none left, and a failed step, which is no missing row */
	{
		sqlite3_stmt *st = db_prepare(db, "SELECT 1 UNION ALL SELECT 2",
					      NULL);
		is_int(db_step(st), 1, "db_step: a row: 1");
		is_int(db_step(st), 1, "... another: 1");
		is_int(db_step(st), 0, "... none left: 0");
		sqlite3_finalize(st);
		st = db_prepare(db, "SELECT json(?)", "t", "{not json");
		is_int(db_step(st), ERR_IO, "a step that fails: ERR_IO, not 0");
		like(err_msg(), "malformed JSON", "... with SQLite's message");
		sqlite3_finalize(st);
	}

	ok(event_add(db, "test", "source", 1, "touched", "by %s", "t-db") > 0,
	   "event_add");
	db_query_text(db, &s, "SELECT detail FROM events WHERE kind = 'touched'", NULL);
	is_str(s, "by t-db", "... stores its detail");
	free(s);
	db_close(db);
	db_close(NULL);
	rm_rf(dir);
	free(path);
	return done_testing();
}
