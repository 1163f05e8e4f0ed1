/* branch.c: reading the branches table for everyone else (ctx.c keeps it in
 * step with the config). */
#include "branch.h"
#include "db.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>

/* In the config's order; those no longer configured (ord NULL) last. */
#define BRANCH_ORDER " ORDER BY ord IS NULL, ord, id"

int branch_lookup(sqlite3 *db, const char *key, int configured, long long *id)
{
	int ret;

	*id = 0;
	ret = configured ? db_query_int(db, id,
					"SELECT id FROM branches WHERE key = ?"
					" AND ord IS NOT NULL",
					"t", key)
			 : db_query_int(db, id,
					"SELECT id FROM branches WHERE key = ?",
					"t", key);
	if (ret == ERR_NOTFOUND)
		err_clear();
	return ret;
}

int branch_key(sqlite3 *db, long long id, char **key)
{
	*key = NULL;
	return db_query_text(db, key, "SELECT key FROM branches WHERE id = ?",
			     "i", id);
}

int branch_key_of_row(sqlite3 *db, long long b, const char *what,
		      long long id, char **key)
{
	int ret;

	*key = NULL;
	if (b < 0 && b != ERR_NOTFOUND)
		return (int)b;
	ret = b > 0 ? branch_key(db, b, key) : ERR_NOTFOUND;
	if (ret == ERR_NOTFOUND || (!ret && !*key))
		return err_set(ERR_NOTFOUND, "%s %lld: no such %s", what, id,
			       what);
	return ret;
}

int branch_keys_text(sqlite3 *db, int configured, char **keys)
{
	*keys = NULL;
	if (configured)
		return db_query_text(db, keys,
				     "SELECT group_concat(key, ', ') FROM"
				     " (SELECT key FROM branches WHERE ord IS"
				     " NOT NULL ORDER BY ord)",
				     NULL);
	return db_query_text(db, keys,
			     "SELECT group_concat(key, ', ') FROM (SELECT key"
			     " FROM branches WHERE key IS NOT NULL" BRANCH_ORDER
			     ")",
			     NULL);
}

json_t *branch_keys_json(sqlite3 *db)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT key FROM branches WHERE key IS"
				      " NOT NULL" BRANCH_ORDER,
				      NULL);
	json_t *keys;
	int rc;

	if (!st)
		return NULL;
	keys = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(keys, db_col_json(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(keys);
		err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
		return NULL;
	}
	return keys;
}

long long branch_first(sqlite3 *db)
{
	return db_int(db, 0,
		      "SELECT id FROM branches WHERE ord IS NOT NULL ORDER BY"
		      " ord LIMIT 1",
		      NULL);
}

json_t *branch_list_json(sqlite3 *db)
{
	return db_rows_json(db,
			    "SELECT id, key, name AS git_branch, version,"
			    " base_tag, head, ord IS NOT NULL AS configured"
			    " FROM branches WHERE key IS NOT NULL" BRANCH_ORDER,
			    NULL);
}

static int fill_one(sqlite3 *db, json_t *o, const char *field,
		    enum branch_show show)
{
	json_t *v = json_object_get(o, field);
	sqlite3_stmt *st;
	int rc;

	if (!json_is_integer(v))
		return 0;
	st = show == BRANCH_NAME
		     ? db_stmt(db, "SELECT name FROM branches WHERE id = ?",
			       "i", (long long)json_integer_value(v))
		     : db_stmt(db, "SELECT key FROM branches WHERE id = ?", "i",
			       (long long)json_integer_value(v));
	if (!st)
		return ERR_IO;
	rc = sqlite3_step(st);
	json_object_set_new(
		o, field, rc == SQLITE_ROW ? db_col_json(st, 0) : json_null());
	db_stmt_done(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
	return 0;
}

int branch_fill(sqlite3 *db, json_t *rows, const char *field,
		enum branch_show show)
{
	json_t *o;
	size_t i;
	int ret;

	if (json_is_object(rows))
		return fill_one(db, rows, field, show);
	json_array_foreach(rows, i, o)
	{
		if ((ret = fill_one(db, o, field, show)) < 0)
			return ret;
	}
	return 0;
}

char *branch_rows(sqlite3 *db)
{
	return db_text(db,
		       "SELECT json_group_array(json_array(id, key, name))"
		       " FROM branches",
		       NULL);
}
