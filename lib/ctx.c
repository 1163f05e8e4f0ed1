/* ctx.c: a branch context: its store opened, branches synced, one chosen. */
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int branch_ctx_sync_branches(struct branch_ctx *bc);

int branch_ctx_open_db(struct branch_ctx *bc)
{
	char *dir = xstrdup(bc->cfg.db), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash) {
		*slash = '\0';
		if (*dir)
			ret = mkdir_p(dir);
	}
	free(dir);
	if (ret < 0)
		return ret;
	if ((ret = db_open(&bc->db, bc->cfg.db)) < 0)
		return ret;
	if ((ret = branch_ctx_sync_branches(bc)) < 0)
		return err_prefix(ret, "%s: branches", bc->cfg.db);
	return branch_ctx_select(bc, bc->cfg.branch_key);
}

static int branches_synced(struct branch_ctx *bc)
{
	long long n = 0;

	for (int i = 0; i < bc->cfg.nbranches; i++) {
		const struct branch_conf *b = &bc->cfg.branches[i];
		long long id;
		if (db_query_int(bc->db, &id,
				 "SELECT id FROM branches WHERE key = ? AND"
				 " name = ? AND ord = ?",
				 "ttd", b->key, b->branch, i) < 0)
			return 0;
	}
	if (db_query_int(bc->db, &n,
			 "SELECT COUNT(*) FROM branches WHERE ord IS NOT NULL",
			 NULL) < 0)
		return 0;
	return n == bc->cfg.nbranches;
}

/*
 * The configured branches in the store: a row per key (name updated, ord
 * the config's order, 0 the default; branches no longer configured keep
 * their rows with ord NULL). Writes only when something changed.
 */
static int branch_ctx_sync_branches(struct branch_ctx *bc)
{
	int ret;

	if (branches_synced(bc))
		return 0;
	if ((ret = db_begin(bc->db)) < 0)
		return ret;
	ret = db_exec(bc->db, "UPDATE branches SET ord = NULL", NULL);
	for (int i = 0; ret >= 0 && i < bc->cfg.nbranches; i++) {
		const struct branch_conf *b = &bc->cfg.branches[i];
		long long other;
		if (db_query_int(bc->db, &other,
				 "SELECT id FROM branches WHERE name = ? AND"
				 " (key IS NULL OR key != ?)",
				 "tt", b->branch, b->key) == 0) {
			ret = err_set(ERR_CONFLICT,
				      "branch %s: the store has another branch"
				      " on %s",
				      b->key, b->branch);
			break;
		}
		ret = db_exec(bc->db,
			      "INSERT INTO branches (key, name, version,"
			      " base_tag, ord) VALUES (?, ?, '', '', ?)"
			      " ON CONFLICT (key) DO UPDATE SET"
			      " name = excluded.name, ord = excluded.ord",
			      "ttd", b->key, b->branch, i);
	}
	ret = db_end(bc->db, ret);
	return ret < 0 ? ret : 0;
}

int branch_ctx_set_version(sqlite3 *db, const char *key, const char *version)
{
	int ret =
		db_exec(db,
			"UPDATE branches SET version = ?1, base_tag = 'v' || ?1"
			" WHERE key = ?2 AND version IS NOT ?1",
			"tt", version, key);
	return ret < 0 ? ret : 0;
}

int branch_ctx_branch_id(struct branch_ctx *bc, const char *key, long long *id)
{
	*id = 0;
	if (db_query_int(bc->db, id,
			 "SELECT id FROM branches WHERE key = ? AND ord IS NOT"
			 " NULL",
			 "t", key) < 0)
		return err_set(ERR_NOTFOUND, "branch %s is not configured",
			       key);
	return 0;
}

int branch_ctx_select(struct branch_ctx *bc, const char *key)
{
	int ret = config_select_branch(&bc->cfg, key);

	if (ret < 0)
		return ret;
	if (!bc->db)
		return 0;
	if ((ret = db_query_int(bc->db, &bc->branch_id,
				"SELECT id FROM branches WHERE key = ?", "t",
				bc->cfg.branch_key)) < 0)
		return err_set(ret, "branch %s: not in the store",
			       bc->cfg.branch_key);
	return 0;
}

int branch_ctx_for(const struct branch_ctx *from, const char *key,
		   struct branch_ctx *out)
{
	*out = *from;
	return branch_ctx_select(out, key);
}

int branch_ctx_follow(struct branch_ctx *bc, const char *what, long long id,
		      int (*get)(sqlite3 *db, long long id, char **key))
{
	char *key = NULL;
	int ret = get(bc->db, id, &key);

	if (ret < 0 || !strcmp(key, bc->cfg.branch_key))
		goto out;
	if (bc->branch_given)
		ret = err_set(ERR_INVALID,
			      "%s %lld is in branch %s's queue, not %s's"
			      " (--branch %s)",
			      what, id, key, bc->cfg.branch_key, key);
	else
		ret = branch_ctx_select(bc, key);
out:
	free(key);
	return ret;
}
