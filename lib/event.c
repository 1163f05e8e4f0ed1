/* event.c: the event log (the events table's owner). */
#include "event.h"
#include "db.h"
#include "strbuf.h"

#include <stdarg.h>

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
