/* event.h: the event log, append-only: everything that changed, and who changed it. */
#ifndef STABLEQ_EVENT_H
#define STABLEQ_EVENT_H

#include <sqlite3.h>

/*
 * Appends to the event log (inside the caller's transaction). Returns the
 * event id (> 0) or negative.
 */
__attribute__((format(printf, 6, 7)))
long long event_add(sqlite3 *db, const char *actor, const char *subject_kind,
		    long long subject_id, const char *kind, const char *fmt, ...);

#endif
