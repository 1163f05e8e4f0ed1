/* event.h: the event log, append-only: everything that changed, and who changed it. */
#ifndef STABLEQ_EVENT_H
#define STABLEQ_EVENT_H

#include <jansson.h>
#include <sqlite3.h>

/*
 * Appends to the event log (inside the caller's transaction). Returns the
 * event id (> 0) or negative.
 */
__attribute__((format(printf, 6, 7)))
long long event_add(sqlite3 *db, const char *actor, const char *subject_kind,
		    long long subject_id, const char *kind, const char *fmt, ...);

/*
 * The log as the API lists it: the events after since (since < 0: the
 * newest limit), oldest first; {id, at, actor, subject_kind, subject_id,
 * kind, detail}. A new reference or NULL.
 */
json_t *event_list_json(sqlite3 *db, long long since, long long limit);
/* The events of one subject ("patch", 12), oldest first: {id, at, actor, kind,
 * detail}. */
json_t *event_subject_json(sqlite3 *db, const char *subject_kind,
			   long long subject_id);
/* The newest event's id (0: none), or negative. */
long long event_last_id(sqlite3 *db);
/* 1 when the subject had an event of kind1 or kind2, 0 if not, or negative. */
int event_happened(sqlite3 *db, const char *subject_kind, long long subject_id,
		   const char *kind1, const char *kind2);
/*
 * The releases, newest first (branch: a branches.id, 0 for all): {id, at,
 * actor, branch (its key), git_branch, detail}.
 */
json_t *event_releases_json(sqlite3 *db, long long branch, long long limit);

#endif
