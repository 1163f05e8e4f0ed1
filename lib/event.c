/* event.c: the event log (the events table's owner). */
#include "event.h"
#include "branch.h"
#include "db.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdlib.h>

long long event_add(sqlite3 *db, const char *actor, const char *subject_kind,
		    long long subject_id, const char *kind, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int ret;

	if (fmt) {
		va_start(ap, fmt);
		strbuf_vaddf(&sb, fmt, ap);
		va_end(ap);
	}
	ret = db_exec(db,
		      "INSERT INTO events (actor, subject_kind, subject_id, kind,"
		      " detail) VALUES (?, ?, ?, ?, ?)",
		      "ttitt", actor, subject_kind, subject_id, kind,
		      fmt ? sb.buf : NULL);
	strbuf_release(&sb);
	return ret < 0 ? ret : db_last_id(db);
}

json_t *event_list_json(sqlite3 *db, long long since, long long limit)
{
	if (since >= 0)
		return db_rows_json(db,
				    "SELECT id, at, actor, subject_kind,"
				    " subject_id, kind, detail FROM events"
				    " WHERE id > ? ORDER BY id LIMIT ?",
				    "ii", since, limit);
	return db_rows_json(db,
			    "SELECT * FROM (SELECT id, at, actor, subject_kind,"
			    " subject_id, kind, detail FROM events ORDER BY id"
			    " DESC LIMIT ?) ORDER BY id",
			    "i", limit);
}

json_t *event_subject_json(sqlite3 *db, const char *subject_kind,
			   long long subject_id)
{
	return db_rows_json(db,
			    "SELECT id, at, actor, kind, detail FROM events"
			    " WHERE subject_kind = ? AND subject_id = ? ORDER"
			    " BY id",
			    "ti", subject_kind, subject_id);
}

long long event_last_id(sqlite3 *db)
{
	return db_int(db, 0, "SELECT COALESCE(MAX(id), 0) FROM events", NULL);
}

int event_happened(sqlite3 *db, const char *subject_kind, long long subject_id,
		   const char *kind1, const char *kind2)
{
	long long n = 0;
	int ret = db_query_int(db, &n,
			       "SELECT COUNT(*) FROM events WHERE subject_kind"
			       " = ? AND subject_id = ? AND kind IN (?, ?)",
			       "titt", subject_kind, subject_id, kind1, kind2);

	return ret < 0 ? ret : n > 0;
}

/*
 * A release is the event that moved a branch: its subject is the branch's
 * row, or 0 with the git branch named in the detail ("3 patches onto
 * linux-6.12.y (6.12-stable): ...", before branches: "... onto
 * linux-6.1.y: ...").
 */
json_t *event_releases_json(sqlite3 *db, long long branch, long long limit)
{
	char *branches = branch_rows(db);
	json_t *rows;

	if (!branches)
		return NULL;
	rows = db_rows_json(db,
			    "SELECT e.id, e.at, e.actor, b.key AS branch,"
			    " b.name AS git_branch, e.detail FROM events e"
			    " LEFT JOIN " BRANCH_ROWS " b ON CASE WHEN"
			    " e.subject_id > 0 THEN b.id = e.subject_id ELSE"
			    " e.detail LIKE '% onto ' || b.name || ':%' OR"
			    " e.detail LIKE '% onto ' || b.name || ' (%' END"
			    " WHERE e.subject_kind = 'branch' AND e.kind ="
			    " 'released' AND (? = 0 OR b.id = ?) ORDER BY e.id"
			    " DESC LIMIT ?",
			    "tiii", branches, branch, branch, limit);
	free(branches);
	return rows;
}
