/* t-db.c: the SQLite store: migrations, bound statements, transactions, JSON rows. */
#include "db.h"
#include "embed.h"
#include "event.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"
#include "tap.h"

#include <string.h>
#include <unistd.h>

/* The migrations compiled in whose names sort before upto (NULL: all). */
static long long known(const char *upto)
{
	long long n = 0;

	for (const struct embedded_file *f = embedded_files; f->path; f++)
		n += db_migration_name(f->path) &&
		     (!upto || strcmp(db_migration_name(f->path), upto) < 0);
	return n;
}

/*
 * A store as the position scheme left it (before schema_migrations): the
 * first n migrations run by hand, PRAGMA user_version = n, and a row to
 * keep. The caller frees the path.
 */
static char *old_store(const char *dir, const char *name, long long n)
{
	char *path = xstrfmt("%s/%s", dir, name), *pragma;
	sqlite3 *raw = NULL;
	long long i = 0;

	sqlite3_open(path, &raw);
	for (const struct embedded_file *f = embedded_files; f->path && i < n;
	     f++)
		if (db_migration_name(f->path) && i++ >= 0 &&
		    sqlite3_exec(raw, f->start, NULL, NULL, NULL) != SQLITE_OK)
			printf("# %s: %s\n", f->path, sqlite3_errmsg(raw));
	pragma = xstrfmt("PRAGMA user_version = %lld;"
			 " INSERT INTO sources (kind, path) VALUES ('mbox', 'old')",
			 n);
	sqlite3_exec(raw, pragma, NULL, NULL, NULL);
	free(pragma);
	sqlite3_close(raw);
	return path;
}

static long long count(sqlite3 *db, const char *sql)
{
	long long n = -1;

	return db_query_int(db, &n, sql, NULL) < 0 ? -1 : n;
}

/* Migrations by name: a fresh store, one from the position scheme, an unknown one. */
static void migrations(const char *dir)
{
	long long all = known(NULL), before = known("012-");
	sqlite3 *db = NULL;
	char *path;

	ok(all >= 15, "the migrations compiled in are sql/NNN-*.sql (%lld)", all);
	is_str(db_migration_name("sql/009-branches.sql"), "009-branches.sql",
	       "a migration's name is its file's");
	ok(!db_migration_name("sql/schema_migrations.sql") &&
	   !db_migration_name("web/app.js") && !db_migration_name("sql/09-x.sql"),
	   "... and nothing else is a migration");

	/* fresh */
	path = xstrfmt("%s/fresh.db", dir);
	ok(db_open(&db, path) == 0, "a fresh store opens");
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations WHERE"
			 " applied_at IS NOT NULL"), all,
	       "... with every migration recorded by name, with its time");
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations WHERE name ="
			 " '001-init.sql' OR name = '016-executed-lines.sql'"), 2,
	       "... named as the files are (001-init.sql ... 016-executed-lines.sql)");
	is_int(count(db, "PRAGMA user_version"), all,
	       "... and user_version still counts them");
	db_close(db);
	db = NULL;
	free(path);

	/* the position scheme: the migrations before 012, then everything */
	path = old_store(dir, "old.db", before);
	ok(db_open(&db, path) == 0,
	   "a store of the position scheme (user_version %lld, before 012) opens",
	   before);
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations WHERE"
			 " applied_at IS NULL"), before,
	       "... its first %lld migrations recorded by name from the counter,"
	       " not run again (001 would fail)", before);
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations WHERE"
			 " applied_at IS NULL AND name < '012-'"),
	       before, "... they are 001 to 011");
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations WHERE"
			 " applied_at IS NOT NULL"), all - before,
	       "... and the ones after them applied now");
	is_int(count(db, "SELECT COUNT(*) FROM sqlite_master WHERE name ="
			 " 'tokens' AND sql LIKE '%scope%'"), 1,
	       "... 012 ran (tokens have a scope)");
	is_int(count(db, "SELECT COUNT(*) FROM sources WHERE path = 'old'"), 1,
	       "... and the store's rows are there");
	db_close(db);
	db = NULL;
	ok(db_open(&db, path) == 0, "it opens again");
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations"), all,
	       "... nothing recorded twice");
	db_close(db);
	db = NULL;
	free(path);

	/* the position scheme at the last migration: nothing to run */
	path = old_store(dir, "full.db", all);
	ok(db_open(&db, path) == 0, "a store of the position scheme at the last"
				    " migration opens");
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations WHERE"
			 " applied_at IS NULL"), all,
	       "... every migration recorded from the counter, none run");
	db_close(db);
	db = NULL;
	free(path);

	/* a counter past what this binary knows, before names */
	path = old_store(dir, "newer.db", all);
	{
		sqlite3 *raw = NULL;
		char *pragma = xstrfmt("PRAGMA user_version = %lld", all + 1);
		sqlite3_open(path, &raw);
		sqlite3_exec(raw, pragma, NULL, NULL, NULL);
		sqlite3_close(raw);
		free(pragma);
	}
	is_int(db_open(&db, path), ERR_INVALID,
	       "a store of the position scheme past this binary's migrations is"
	       " refused");
	like(err_msg(), "newer than this stableq knows", "... saying why");
	free(path);

	/*
	 * A migration merged from another branch, numbered before ones the
	 * store has (the position scheme would skip it): 014 as if it came
	 * with a merge, its jobs table still there.
	 */
	path = xstrfmt("%s/fresh.db", dir);
	ok(db_open(&db, path) == 0, "the fresh store opens");
	db_exec(db, "DELETE FROM schema_migrations WHERE name = ?", "t",
		"014-drop-jobs.sql");
	db_exec_script(db, "CREATE TABLE jobs (id INTEGER PRIMARY KEY)");
	db_close(db);
	db = NULL;
	ok(db_open(&db, path) == 0, "a store without 014 but with 015 and 016 opens");
	is_int(count(db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'jobs'"),
	       0, "... and 014 ran: a migration missing by name is applied"
		  " wherever it sorts");
	is_int(count(db, "SELECT COUNT(*) FROM schema_migrations WHERE name ="
			 " '014-drop-jobs.sql' AND applied_at IS NOT NULL"), 1,
	       "... and is recorded");

	/* a migration this binary does not know */
	db_exec(db, "INSERT INTO schema_migrations (name) VALUES (?)", "t",
		"017-from-another-branch.sql");
	db_close(db);
	db = NULL;
	is_int(db_open(&db, path), ERR_INVALID,
	       "a store with a migration this binary does not know is refused");
	like(err_msg(), "migration 017-from-another-branch.sql, which this"
			" stableq does not know",
	     "... naming it");
	ok(!db, "... and not opened");
	free(path);
}

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
	migrations(dir);

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
