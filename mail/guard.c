/* guard.c: holds the mail of a step that would reach too many people, and releases it. */
#include "guard.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "strbuf.h"

#include <stdlib.h>

long long guard_mark(sqlite3 *db)
{
	long long id = 0;

	if (db_query_int(db, &id, "SELECT coalesce(max(id), 0) FROM mail",
			 NULL) < 0)
		return 0;
	return id;
}

/*
 * Authors (a mail's first recipient) over mail_bulk_limit, or addresses
 * in all (To and Cc) over mail_bulk_limit times mail_max_recipients: a
 * step that mails few authors but many others is a relay too.
 */
int guard_apply(sqlite3 *db, const struct config *cfg, long long mark,
		     const char *step, const char *actor)
{
	long long people = 0, addrs = 0, mails = 0;
	long long per = cfg->mail_max_recipients > 0 ? cfg->mail_max_recipients : 1;
	long long addr_limit = (long long)cfg->mail_bulk_limit * per;
	char *why = NULL;
	int ret;

	if (db_query_int(db, &people,
			 "SELECT COUNT(DISTINCT lower(json_extract(rcpt_to,"
			 " '$[0]'))) FROM mail WHERE id > ? AND state ="
			 " 'queued' AND hold IS NULL AND kind != 'rc'",
			 "i", mark) < 0 ||
	    db_query_int(db, &addrs,
			 "SELECT COUNT(DISTINCT lower(r.value)) FROM mail,"
			 " json_each(mail.rcpt_to) AS r WHERE mail.id > ? AND"
			 " mail.state = 'queued' AND mail.hold IS NULL AND"
			 " mail.kind != 'rc'",
			 "i", mark) < 0)
		return ERR_IO;
	if (people > cfg->mail_bulk_limit)
		why = xstrfmt("%s would mail %lld people (mail_bulk_limit"
			      " = %d)",
			      step, people, cfg->mail_bulk_limit);
	else if (addrs > addr_limit)
		why = xstrfmt("%s would mail %lld addresses (over"
			      " mail_bulk_limit x mail_max_recipients = %lld)",
			      step, addrs, addr_limit);
	else
		return 0;
	if ((ret = db_begin(db)) < 0)
		goto out;
	mails = db_exec(db,
			"UPDATE mail SET hold = 'bulk: ' || ? || ': a"
			" maintainer releases it' WHERE id > ? AND state ="
			" 'queued' AND hold IS NULL AND kind != 'rc'",
			"ti", why, mark);
	ret = mails < 0 ? (int)mails
			: (int)event_add(db, actor, "mail", 0, "held",
					 "%s in %lld mails: held for a"
					 " maintainer to release",
					 why, mails);
	if ((ret = db_end(db, ret)) < 0)
		goto out;
	log_warnx("mail: %s: %lld mails held until a maintainer releases"
		  " them (stableq mail release)",
		  why, mails);
	ret = (int)mails;
out:
	free(why);
	return ret;
}

int guard_release(sqlite3 *db, const long long *ids, size_t n,
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

long long guard_held_count(sqlite3 *db)
{
	long long n = 0;

	db_query_int(db, &n, "SELECT COUNT(*) FROM mail WHERE hold IS NOT NULL",
		     NULL);
	return n;
}
