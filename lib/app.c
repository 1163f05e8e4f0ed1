/* app.c: shared set-up of commands: the store and the state directory. */
#include "app.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


int app_open_db(struct app *app)
{
	char *dir = xstrdup(app->cfg.db), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash) {
		*slash = '\0';
		if (*dir)
			ret = mkdir_p(dir);
	}
	free(dir);
	if (ret < 0)
		return ret;
	if ((ret = db_open(&app->db, app->cfg.db)) < 0)
		return ret;
	if ((ret = app_sync_branches(app)) < 0)
		return err_prefix(ret, "%s: branches", app->cfg.db);
	return app_select_branch(app, app->cfg.branch_key);
}

static int branches_synced(struct app *app)
{
	long long n = 0;

	for (int i = 0; i < app->cfg.nbranches; i++) {
		const struct branch_conf *b = &app->cfg.branches[i];
		long long id;
		if (db_query_int(app->db, &id,
				 "SELECT id FROM branches WHERE key = ? AND"
				 " name = ? AND ord = ?",
				 "ttd", b->key, b->branch, i) < 0)
			return 0;
	}
	if (db_query_int(app->db, &n,
			 "SELECT COUNT(*) FROM branches WHERE ord IS NOT NULL",
			 NULL) < 0)
		return 0;
	return n == app->cfg.nbranches;
}

int app_sync_branches(struct app *app)
{
	int ret;

	if (branches_synced(app))
		return 0;
	if ((ret = db_begin(app->db)) < 0)
		return ret;
	ret = db_exec(app->db, "UPDATE branches SET ord = NULL", NULL);
	for (int i = 0; ret >= 0 && i < app->cfg.nbranches; i++) {
		const struct branch_conf *b = &app->cfg.branches[i];
		long long other;
		if (db_query_int(app->db, &other,
				 "SELECT id FROM branches WHERE name = ? AND"
				 " (key IS NULL OR key != ?)",
				 "tt", b->branch, b->key) == 0) {
			ret = err_set(ERR_CONFLICT,
				      "branch %s: the store has another branch"
				      " on %s",
				      b->key, b->branch);
			break;
		}
		ret = db_exec(app->db,
			      "INSERT INTO branches (key, name, version,"
			      " base_tag, ord) VALUES (?, ?, '', '', ?)"
			      " ON CONFLICT (key) DO UPDATE SET"
			      " name = excluded.name, ord = excluded.ord",
			      "ttd", b->key, b->branch, i);
	}
	ret = db_end(app->db, ret);
	return ret < 0 ? ret : 0;
}

int app_set_branch_version(sqlite3 *db, const char *key, const char *version)
{
	int ret = db_exec(db,
			  "UPDATE branches SET version = ?1, base_tag = 'v' || ?1"
			  " WHERE key = ?2 AND version IS NOT ?1",
			  "tt", version, key);
	return ret < 0 ? ret : 0;
}

int app_branch_id(struct app *app, const char *key, long long *id)
{
	*id = 0;
	if (db_query_int(app->db, id,
			 "SELECT id FROM branches WHERE key = ? AND ord IS NOT"
			 " NULL",
			 "t", key) < 0)
		return err_set(ERR_NOTFOUND, "branch %s is not configured", key);
	return 0;
}

int app_select_branch(struct app *app, const char *key)
{
	int ret = config_select_branch(&app->cfg, key);

	if (ret < 0)
		return ret;
	if (!app->db)
		return 0;
	if ((ret = db_query_int(app->db, &app->branch_id,
				"SELECT id FROM branches WHERE key = ?", "t",
				app->cfg.branch_key)) < 0)
		return err_set(ret, "branch %s: not in the store",
			       app->cfg.branch_key);
	return 0;
}
