/* db.c: opening, migrating and querying the SQLite store. */
#include "db.h"
#include "embed.h"
#include "err.h"
#include "strbuf.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bind_va(sqlite3 *db, sqlite3_stmt *st, const char *types,
		   va_list ap)
{
	int rc = SQLITE_OK;

	for (int i = 0; types && types[i]; i++) {
		int idx = i + 1;
		switch (types[i]) {
		case 'i':
			rc = sqlite3_bind_int64(st, idx, va_arg(ap, long long));
			break;
		case 'd':
			rc = sqlite3_bind_int(st, idx, va_arg(ap, int));
			break;
		case 'f':
			rc = sqlite3_bind_double(st, idx, va_arg(ap, double));
			break;
		case 't': {
			const char *s = va_arg(ap, const char *);
			rc = s ? sqlite3_bind_text(st, idx, s, -1,
						   SQLITE_TRANSIENT)
			       : sqlite3_bind_null(st, idx);
			break;
		}
		case 'n':
			rc = sqlite3_bind_null(st, idx);
			break;
		default:
			return err_set(ERR_INVALID, "db: bad bind type '%c'",
				       types[i]);
		}
		if (rc != SQLITE_OK)
			return err_set(ERR_IO, "db: bind %d: %s", idx,
				       sqlite3_errmsg(db));
	}
	return 0;
}

/*
 * db_exec() and db_query_*() reuse prepared statements, keyed by the SQL
 * text's address (callers pass literals) and the connection: preparing
 * costs more than running most of stableq's statements. A connection is
 * used by one thread at a time; the table itself is shared.
 */
#define STMT_CACHE 128
static struct {
	sqlite3 *db;
	const char *sql;
	sqlite3_stmt *st;
	int busy;
	unsigned long used;
} cache[STMT_CACHE];
static unsigned long cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static sqlite3_stmt *cache_get(sqlite3 *db, const char *sql, int *slot)
{
	sqlite3_stmt *st = NULL;
	int victim = -1;

	*slot = -1;
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < STMT_CACHE; i++) {
		/* the text is compared too: a freed buffer's address comes back */
		if (cache[i].db == db && cache[i].sql == sql && !cache[i].busy &&
		    !strcmp(sqlite3_sql(cache[i].st), sql)) {
			cache[i].busy = 1;
			cache[i].used = ++cache_clock;
			*slot = i;
			st = cache[i].st;
			break;
		}
		if (!cache[i].busy &&
		    (victim < 0 || cache[i].used < cache[victim].used))
			victim = i;
	}
	pthread_mutex_unlock(&cache_lock);
	if (st)
		return st;
	if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st,
			       NULL) != SQLITE_OK) {
		err_set(ERR_IO, "db: %s (in: %.80s)", sqlite3_errmsg(db), sql);
		return NULL;
	}
	pthread_mutex_lock(&cache_lock);
	if (victim >= 0 && !cache[victim].busy) {
		if (cache[victim].st)
			sqlite3_finalize(cache[victim].st);
		cache[victim].db = db;
		cache[victim].sql = sql;
		cache[victim].st = st;
		cache[victim].busy = 1;
		cache[victim].used = ++cache_clock;
		*slot = victim;
	}
	pthread_mutex_unlock(&cache_lock);
	return st;
}

/* Gives a statement back (resets it), or finalizes it if it is not cached. */
static void cache_put(sqlite3_stmt *st, int slot)
{
	if (slot < 0) {
		sqlite3_finalize(st);
		return;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	pthread_mutex_lock(&cache_lock);
	cache[slot].busy = 0;
	pthread_mutex_unlock(&cache_lock);
}

static void cache_drop(sqlite3 *db)
{
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < STMT_CACHE; i++)
		if (cache[i].db == db) {
			sqlite3_finalize(cache[i].st);
			memset(&cache[i], 0, sizeof(cache[i]));
		}
	pthread_mutex_unlock(&cache_lock);
}

static sqlite3_stmt *cached_va(sqlite3 *db, const char *sql, const char *types,
			       va_list ap, int *slot)
{
	sqlite3_stmt *st = cache_get(db, sql, slot);

	if (!st)
		return NULL;
	if (bind_va(db, st, types, ap) < 0) {
		cache_put(st, *slot);
		return NULL;
	}
	return st;
}

static sqlite3_stmt *prepare_va(sqlite3 *db, const char *sql,
				const char *types, va_list ap)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		err_set(ERR_IO, "db: %s (in: %.80s)", sqlite3_errmsg(db), sql);
		return NULL;
	}
	if (bind_va(db, st, types, ap) < 0) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

sqlite3_stmt *db_stmt(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;
	int slot;

	va_start(ap, types);
	st = cached_va(db, sql, types, ap, &slot);
	va_end(ap);
	return st;
}

void db_stmt_done(sqlite3_stmt *st)
{
	int slot = -1;

	if (!st)
		return;
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < STMT_CACHE; i++)
		if (cache[i].st == st && cache[i].busy) {
			slot = i;
			break;
		}
	pthread_mutex_unlock(&cache_lock);
	cache_put(st, slot);
}

sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;

	va_start(ap, types);
	st = prepare_va(db, sql, types, ap);
	va_end(ap);
	return st;
}

int db_exec(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;
	int rc, slot;

	va_start(ap, types);
	st = cached_va(db, sql, types, ap, &slot);
	va_end(ap);
	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE) {
		int code = (rc & 0xff) == SQLITE_CONSTRAINT ? ERR_CONFLICT : ERR_IO;
		err_set(code, "db: %s", sqlite3_errmsg(db));
		cache_put(st, slot);
		return code;
	}
	cache_put(st, slot);
	return sqlite3_changes(db);
}

/*
 * The first row of a cached statement: 0 with *st on that row (give it
 * back with cache_put(*st, *slot) after reading), or ERR_NOTFOUND / ERR_IO
 * with the statement already given back.
 */
static int first_row(sqlite3 *db, const char *sql, const char *types,
		     va_list ap, sqlite3_stmt **st, int *slot)
{
	int rc;

	if (!(*st = cached_va(db, sql, types, ap, slot)))
		return ERR_IO;
	rc = sqlite3_step(*st);
	if (rc == SQLITE_ROW)
		return 0;
	cache_put(*st, *slot);
	*st = NULL;
	return rc == SQLITE_DONE ? err_set(ERR_NOTFOUND, "db: no row")
				 : err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
}

/* The first column of the first row into *out (an integer or a copy). */
static int first_value(sqlite3 *db, long long *n, char **text, const char *sql,
		       const char *types, va_list ap)
{
	sqlite3_stmt *st;
	int ret, slot;

	if (text)
		*text = NULL;
	ret = first_row(db, sql, types, ap, &st, &slot);
	if (ret < 0)
		return ret;
	if (n)
		*n = sqlite3_column_int64(st, 0);
	if (text && db_col_text(st, 0))
		*text = xstrdup(db_col_text(st, 0));
	cache_put(st, slot);
	return 0;
}

/* One step: 1 a row, 0 done, or a negative code (a database error). */
int db_step(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return err_set(ERR_IO, "db: %s", sqlite3_errmsg(sqlite3_db_handle(st)));
}

int db_query_int(sqlite3 *db, long long *out, const char *sql,
		 const char *types, ...)
{
	va_list ap;
	int ret;

	va_start(ap, types);
	ret = first_value(db, out, NULL, sql, types, ap);
	va_end(ap);
	return ret;
}

int db_query_text(sqlite3 *db, char **out, const char *sql, const char *types,
		  ...)
{
	va_list ap;
	int ret;

	va_start(ap, types);
	ret = first_value(db, NULL, out, sql, types, ap);
	va_end(ap);
	return ret;
}

long long db_int(sqlite3 *db, int or_zero, const char *sql,
		 const char *types, ...)
{
	va_list ap;
	long long n = 0;
	int ret;

	va_start(ap, types);
	ret = first_value(db, &n, NULL, sql, types, ap);
	va_end(ap);
	if (ret < 0 && or_zero)
		err_clear();
	return ret < 0 ? (or_zero ? 0 : ret) : n;
}

char *db_text(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	char *text = NULL;

	va_start(ap, types);
	first_value(db, NULL, &text, sql, types, ap);
	va_end(ap);
	return text;
}

int db_exec_script(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int ret = err_set(ERR_IO, "db: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return ret;
	}
	return 0;
}

long long db_last_id(sqlite3 *db)
{
	return sqlite3_last_insert_rowid(db);
}

const char *db_col_text(sqlite3_stmt *st, int col)
{
	return (const char *)sqlite3_column_text(st, col);
}

int db_begin(sqlite3 *db)
{
	return db_exec_script(db, "BEGIN IMMEDIATE");
}

int db_commit(sqlite3 *db)
{
	return db_exec_script(db, "COMMIT");
}

void db_rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int db_end(sqlite3 *db, int ret)
{
	int c;

	if (ret < 0) {
		db_rollback(db);
		return ret;
	}
	if ((c = db_commit(db)) < 0) {
		db_rollback(db);
		return c;
	}
	return ret;
}

/*
 * Rows that break a foreign key, after a migration rebuilt a table (with
 * foreign keys off, as SQLite's ALTER TABLE documentation says): 0 when
 * none, else an error naming the first.
 */
static int fk_check(sqlite3 *db)
{
	sqlite3_stmt *st = db_prepare(db, "PRAGMA foreign_key_check", NULL);
	int ret = 0;

	if (!st)
		return ERR_IO;
	if (sqlite3_step(st) == SQLITE_ROW)
		ret = err_set(ERR_IO,
			      "foreign key check: %s row %lld refers to a "
			      "missing %s row",
			      db_col_text(st, 0), sqlite3_column_int64(st, 1),
			      db_col_text(st, 2));
	sqlite3_finalize(st);
	return ret;
}

/*
 * The migrations are the files sql/NNN-name.sql, applied in name order and
 * recorded by name in schema_migrations (sql/schema_migrations.sql, run
 * before them). A store from before names were kept has only PRAGMA
 * user_version, the count of migrations applied in order: its names are
 * the first user_version of this binary's, recorded once.
 */
static const char sql_applied_count[] =
	"SELECT COUNT(*) FROM schema_migrations";
static const char sql_applied_has[] =
	"SELECT COUNT(*) FROM schema_migrations WHERE name = ?";
static const char sql_applied_add[] =
	"INSERT INTO schema_migrations (name, applied_at) VALUES (?, CASE WHEN"
	" ? THEN strftime('%Y-%m-%dT%H:%M:%SZ','now') END)";
static const char sql_applied_names[] =
	"SELECT name FROM schema_migrations ORDER BY name";
static const char sql_applied_table[] =
	"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name ="
	" 'schema_migrations'";

const char *db_migration_name(const char *path)
{
	const char *name = path + 4;
	size_t n;

	if (strncmp(path, "sql/", 4) || strspn(name, "0123456789") != 3 ||
	    name[3] != '-')
		return NULL;
	n = strlen(name);
	return n > 8 && !strcmp(name + n - 4, ".sql") ? name : NULL;
}

/* The migrations compiled in, in order; *n gets their count. */
static const struct embedded_file **migrations(size_t *n)
{
	const struct embedded_file **v = NULL;
	size_t alloc = 0;

	*n = 0;
	for (const struct embedded_file *f = embedded_files; f->path; f++) {
		if (!db_migration_name(f->path))
			continue;
		if (*n == alloc) {
			alloc = alloc ? alloc * 2 : 32;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		v[(*n)++] = f;
	}
	return v;
}

/* Sets PRAGMA user_version to the count of migrations applied. */
static int count_applied(sqlite3 *db)
{
	long long n = 0;
	char pragma[64];
	int ret = db_query_int(db, &n, sql_applied_count, NULL);

	if (ret < 0)
		return ret;
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %lld", n);
	return db_exec_script(db, pragma);
}

/*
 * The table of applied migrations, made once, with its rows for a store
 * made when user_version counted them: the first version of this
 * binary's. Once it is there, opening the store writes nothing.
 */
static int names_from_counter(sqlite3 *db, const struct embedded_file **m,
			      size_t n)
{
	const struct embedded_file *f =
		embed_find("sql/schema_migrations.sql", NULL);
	long long version = 0, have = 0;
	int ret = db_query_int(db, &have, sql_applied_table, NULL);

	if (ret < 0 || have)
		return ret < 0 ? ret : 0;
	if (!f)
		return err_set(ERR_IO, "sql/schema_migrations.sql is not"
				       " compiled in");
	if ((ret = db_begin(db)) < 0)
		return ret;
	if ((ret = db_exec_script(db, f->start)) < 0 ||
	    (ret = db_query_int(db, &have, sql_applied_count, NULL)) < 0 ||
	    (ret = db_query_int(db, &version, "PRAGMA user_version", NULL)) < 0)
		goto out;
	if (have || !version)
		goto out;
	if (version > (long long)n) {
		ret = err_set(ERR_INVALID,
			      "database schema version %lld is newer than this"
			      " stableq knows (%zu)",
			      version, n);
		goto out;
	}
	for (long long i = 0; i < version && ret >= 0; i++)
		ret = db_exec(db, sql_applied_add, "td",
			      db_migration_name(m[i]->path), 0);
out:
	return db_end(db, ret < 0 ? ret : 0);
}

/* The first migration the store has that is not among m, refused. */
static int refuse_unknown(sqlite3 *db, const struct embedded_file **m, size_t n)
{
	sqlite3_stmt *st = db_prepare(db, sql_applied_names, NULL);
	int ret = 0;

	if (!st)
		return ERR_IO;
	while (!ret && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = db_col_text(st, 0);
		size_t i = 0;
		while (i < n && strcmp(db_migration_name(m[i]->path), name))
			i++;
		if (i == n)
			ret = err_set(ERR_INVALID,
				      "the store has migration %s, which this"
				      " stableq does not know (a newer stableq"
				      " or another branch's applied it):"
				      " refusing to open it",
				      name);
	}
	sqlite3_finalize(st);
	return ret;
}

/*
 * One migration in its transaction, unless the store has it: read first,
 * then again inside the transaction (another process may have applied it
 * in between).
 */
static int migrate_one(sqlite3 *db, const struct embedded_file *f)
{
	const char *name = db_migration_name(f->path);
	long long have = 0;
	int ret = db_query_int(db, &have, sql_applied_has, "t", name);

	if (ret < 0 || have)
		return ret < 0 ? ret : 0;
	if ((ret = db_begin(db)) < 0)
		return ret;
	ret = db_query_int(db, &have, sql_applied_has, "t", name);
	if (ret >= 0 && !have &&
	    ((ret = db_exec_script(db, f->start)) < 0 ||
	     (ret = fk_check(db)) < 0 ||
	     (ret = db_exec(db, sql_applied_add, "td", name, 1)) < 0 ||
	     (ret = count_applied(db)) < 0))
		err_prefix(ret, "migration %s", f->path);
	return db_end(db, ret < 0 ? ret : 0);
}

/*
 * Foreign keys are off while migrations run (a table rebuild drops and
 * renames a table others refer to; PRAGMA foreign_keys is a no-op inside a
 * transaction) and each migration checks them before its commit.
 */
static int migrate(sqlite3 *db)
{
	size_t n = 0;
	const struct embedded_file **m = migrations(&n);
	int ret;

	if ((ret = db_exec_script(db, "PRAGMA foreign_keys = OFF")) < 0)
		goto out;
	if ((ret = names_from_counter(db, m, n)) >= 0 &&
	    (ret = refuse_unknown(db, m, n)) >= 0)
		for (size_t i = 0; i < n && ret >= 0; i++)
			ret = migrate_one(db, m[i]);
	if (db_exec_script(db, "PRAGMA foreign_keys = ON") < 0 && ret >= 0)
		ret = ERR_IO;
out:
	free(m);
	return ret < 0 ? ret : 0;
}

int db_open(sqlite3 **out, const char *path)
{
	sqlite3 *db = NULL;
	int ret;

	*out = NULL;
	if (sqlite3_open_v2(path, &db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		ret = err_set(ERR_IO, "%s: cannot open database: %s", path,
			      db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return ret;
	}
	sqlite3_busy_timeout(db, 10000);
	if ((ret = db_exec_script(db, "PRAGMA journal_mode = WAL;"
				      "PRAGMA synchronous = NORMAL;"
				      "PRAGMA foreign_keys = ON;")) < 0 ||
	    (ret = migrate(db)) < 0) {
		err_prefix(ret, "%s", path);
		sqlite3_close(db);
		return ret;
	}
	*out = db;
	return 0;
}

void db_close(sqlite3 *db)
{
	if (db) {
		cache_drop(db);
		sqlite3_close(db);
	}
}

json_t *db_col_json(sqlite3_stmt *st, int col)
{
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, col));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, col));
	case SQLITE_NULL:
		return json_null();
	default: {
		const char *t = db_col_text(st, col);
		json_t *j = json_stringn(t, (size_t)sqlite3_column_bytes(st, col));
		/* text is checked for UTF-8 on the way in; stay safe anyway */
		return j ? j : json_string("(invalid UTF-8)");
	}
	}
}

/* The current row as an object keyed by column name. */
static json_t *row_object(sqlite3_stmt *st)
{
	json_t *o = json_object();

	for (int i = 0; i < sqlite3_column_count(st); i++)
		json_object_set_new(o, sqlite3_column_name(st, i),
				    db_col_json(st, i));
	return o;
}

json_t *db_rows_json(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;
	json_t *arr;
	int rc, slot;

	va_start(ap, types);
	st = cached_va(db, sql, types, ap, &slot);
	va_end(ap);
	if (!st)
		return NULL;
	arr = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_array_append_new(arr, row_object(st));
	}
	if (rc != SQLITE_DONE) {
		err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
		json_decref(arr);
		arr = NULL;
	}
	cache_put(st, slot);
	return arr;
}

json_t *db_map_of(json_t *rows)
{
	json_t *map, *o;
	size_t i;

	if (!rows)
		return NULL;
	map = json_object();
	json_array_foreach(rows, i, o)
	{
		void *it = json_object_iter(o);
		json_t *k = json_object_iter_value(it);
		json_t *v =
			json_object_iter_value(json_object_iter_next(o, it));
		char num[24];
		if (json_is_integer(k))
			snprintf(num, sizeof(num), "%lld",
				 (long long)json_integer_value(k));
		if (v && (json_is_integer(k) || json_is_string(k)))
			json_object_set(
				map,
				json_is_integer(k) ? num : json_string_value(k),
				v);
	}
	json_decref(rows);
	return map;
}

json_t *db_row_json(sqlite3 *db, const char *sql, const char *types, ...)
{
	va_list ap;
	sqlite3_stmt *st;
	json_t *o;
	int ret, slot;

	va_start(ap, types);
	ret = first_row(db, sql, types, ap, &st, &slot);
	va_end(ap);
	if (ret < 0)
		return NULL;
	o = row_object(st);
	cache_put(st, slot);
	return o;
}

json_t *db_object_json(sqlite3 *db, const char *what, long long id,
		       const char *sql, const char *key,
		       const char *children_sql)
{
	json_t *o = db_row_json(db, sql, "i", id);

	if (!o) {
		if (err_last() == ERR_NOTFOUND)
			err_set(ERR_NOTFOUND, "%s %lld: no such %s", what, id,
				what);
		return NULL;
	}
	if (key)
		json_object_set_new(o, key, db_rows_json(db, children_sql, "i", id));
	return o;
}
