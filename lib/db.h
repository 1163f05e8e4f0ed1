/* db.h: the SQLite store: open + migrate, bound statements, transactions, events. */
#ifndef STABLEQ_DB_H
#define STABLEQ_DB_H

#include <jansson.h>
#include <sqlite3.h>

/*
 * Opens (creating) the database at path, sets WAL mode, foreign keys and a
 * busy timeout, and applies the migrations compiled in from sql/ that the
 * store does not have, each in its own transaction, recorded by name in
 * schema_migrations. A store made when PRAGMA user_version counted them
 * gets its names from that count; a store with a migration this binary
 * does not know is refused (ERR_INVALID, naming it) and left as it was.
 * The caller owns *out and closes it with db_close().
 */
int db_open(sqlite3 **out, const char *path);
/*
 * The name a compiled-in file is recorded under when it is a migration
 * ("sql/009-branches.sql": "009-branches.sql", inside path), else NULL.
 */
const char *db_migration_name(const char *path);
void db_close(sqlite3 *db);

/*
 * A transaction: db_begin() (BEGIN IMMEDIATE), the work, then
 * db_end(db, ret) with the work's result: COMMIT when ret >= 0, ROLLBACK
 * when it is negative or the commit fails. db_end() returns ret, or the
 * commit's error; so a block is
 *
 *	if ((ret = db_begin(db)) < 0)
 *		return ret;
 *	ret = work(db);
 *	return db_end(db, ret);
 *
 * db_commit() and db_rollback() are its halves, for the batches that
 * commit as they go. Negative with err_msg() on failure.
 */
int db_begin(sqlite3 *db);
int db_end(sqlite3 *db, int ret);
int db_commit(sqlite3 *db);
void db_rollback(sqlite3 *db);

/*
 * Statements take bound parameters only, described by a type string, one
 * letter per '?': 'i' long long, 'd' int, 'f' double, 't' const char *
 * (NULL binds NULL), 'n' NULL (no argument).
 */
/* Prepares and binds; NULL with err_msg() on failure. Caller finalizes. */
sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql, const char *types, ...);
/*
 * As db_prepare, from the connection's statement cache (preparing costs
 * more than running most statements): the caller gives the statement
 * back with db_stmt_done(), never sqlite3_finalize(). sql is a literal.
 */
sqlite3_stmt *db_stmt(sqlite3 *db, const char *sql, const char *types, ...);
void db_stmt_done(sqlite3_stmt *st);
/*
 * The next row of st: 1 a row, 0 none left, negative (ERR_IO with
 * SQLite's message) when the step failed, so that a database error (a
 * locked store, a corrupt page) is never taken for a missing row.
 */
int db_step(sqlite3_stmt *st);
/* Runs a statement to completion. Returns changes (>= 0) or negative. */
int db_exec(sqlite3 *db, const char *sql, const char *types, ...);
/* First column of the first row. ERR_NOTFOUND when there is no row. */
int db_query_int(sqlite3 *db, long long *out, const char *sql,
		 const char *types, ...);
/* As above; *out is malloc'd (caller frees), NULL for SQL NULL. */
int db_query_text(sqlite3 *db, char **out, const char *sql, const char *types,
		  ...);
/*
 * The same as a value, for accessors: db_int() returns the integer (ids
 * and counts, >= 0) or a negative error (ERR_NOTFOUND when there is no
 * row); with or_zero, 0 instead of an error, the error cleared. db_text()
 * returns a malloc'd copy (caller frees), NULL when there is no row, the
 * value is NULL or on error (err_msg() then says why).
 */
long long db_int(sqlite3 *db, int or_zero, const char *sql,
		 const char *types, ...);
char *db_text(sqlite3 *db, const char *sql, const char *types, ...);
/* Runs several ;-separated statements with no parameters (migrations). */
int db_exec_script(sqlite3 *db, const char *sql);
long long db_last_id(sqlite3 *db);
/* sqlite3_column_text as const char *, NULL-safe. */
const char *db_col_text(sqlite3_stmt *st, int col);

/* One column of the current row as JSON (integer, real, string or null). */
json_t *db_col_json(sqlite3_stmt *st, int col);
/*
 * The rows of a query as a JSON array of objects keyed by column name; a
 * new reference, or NULL with err_msg() on failure.
 */
json_t *db_rows_json(sqlite3 *db, const char *sql, const char *types, ...);

/*
 * The rows of a two-column query (db_rows_json()) as one JSON object: the
 * first column's value (an id, a state) as the key, the second's as its
 * value; rows whose first column is NULL are left out. Takes rows (frees
 * them); a new reference, or NULL when rows is NULL.
 */
json_t *db_map_of(json_t *rows);

/* The first row as a JSON object; NULL with ERR_NOTFOUND when there is none. */
json_t *db_row_json(sqlite3 *db, const char *sql, const char *types, ...);

/*
 * One thing by id, as the API and `--json` show it: the row of sql (one
 * '?', the id) as an object, with the rows of children_sql (one '?', the
 * id) under key when key is not NULL. NULL with ERR_NOTFOUND and "<what>
 * <id>: no such <what>" when there is no row.
 */
json_t *db_object_json(sqlite3 *db, const char *what, long long id,
		       const char *sql, const char *key,
		       const char *children_sql);

#endif
