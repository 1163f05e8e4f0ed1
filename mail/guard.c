/* guard.c: holds the mail of a step that would reach too many people, and releases it. */
#include "guard.h"
#include "db.h"
#include "err.h"
#include "log.h"

long long mail_guard_mark(sqlite3 *db)
{
	long long id = 0;

	if (db_query_int(db, &id, "SELECT coalesce(max(id), 0) FROM mail",
			 NULL) < 0)
		return 0;
	return id;
}

int mail_guard_apply(sqlite3 *db, const struct config *cfg, long long mark,
		     const char *step, const char *actor)
{
	long long people = 0, mails = 0;
	int ret;

	if (db_query_int(db, &people,
			 "SELECT COUNT(DISTINCT lower(json_extract(rcpt_to,"
			 " '$[0]'))) FROM mail WHERE id > ? AND state ="
			 " 'queued' AND hold IS NULL",
			 "i", mark) < 0)
		return ERR_IO;
	if (people <= cfg->mail_bulk_limit)
		return 0;
	if ((ret = db_begin(db)) < 0)
		return ret;
	mails = db_exec(db,
			"UPDATE mail SET hold = 'bulk: ' || ? || ' would mail '"
			" || ? || ' people (mail_bulk_limit = ' || ? || '):"
			" a maintainer releases it' WHERE id > ? AND state ="
			" 'queued' AND hold IS NULL",
			"tiii", step, people, (long long)cfg->mail_bulk_limit,
			mark);
	ret = mails < 0 ? (int)mails
			: (int)event_add(db, actor, "mail", 0, "held",
					 "%s would mail %lld people in %lld"
					 " mails (mail_bulk_limit = %d): held"
					 " for a maintainer to release",
					 step, people, mails,
					 cfg->mail_bulk_limit);
	if ((ret = db_end(db, ret)) < 0)
		return ret;
	log_warnx("mail: %s would mail %lld people: %lld mails held until a"
		  " maintainer releases them (stableq mail release)",
		  step, people, mails);
	return (int)mails;
}

int mail_release(sqlite3 *db, const long long *ids, size_t n,
		 const char *actor)
{
	int ret, done = 0;

	if ((ret = db_begin(db)) < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		long long held = 0;
		if ((ret = db_query_int(db, &held,
					"SELECT COUNT(*) FROM mail WHERE id = ?"
					" AND hold IS NOT NULL",
					"i", ids[i])) < 0)
			goto fail;
		if (!held) {
			ret = err_set(ERR_NOTFOUND,
				      "mail %lld: no such mail waiting for a"
				      " release",
				      ids[i]);
			goto fail;
		}
	}
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT id FROM mail WHERE hold IS NOT NULL"
				      " ORDER BY id",
				      NULL);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);
		size_t k = 0;
		while (k < n && ids[k] != id)
			k++;
		if (n && k == n)
			continue;
		long long ev = 0;
		if ((ret = db_exec(db, "UPDATE mail SET hold = NULL WHERE id = ?",
				   "i", id)) < 0 ||
		    (ev = event_add(db, actor, "mail", id, "released",
				    "released by a maintainer")) < 0) {
			ret = ret < 0 ? ret : (int)ev;
			sqlite3_finalize(st);
			goto fail;
		}
		done++;
	}
	sqlite3_finalize(st);
	ret = done;
fail:
	return db_end(db, ret);
}

long long mail_held_count(sqlite3 *db)
{
	long long n = 0;

	db_query_int(db, &n, "SELECT COUNT(*) FROM mail WHERE hold IS NOT NULL",
		     NULL);
	return n;
}
