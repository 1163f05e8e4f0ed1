/* progress.h: how far a long step is: one updating terminal line, and a row the dashboard reads. */
#ifndef STABLEQ_PROGRESS_H
#define STABLEQ_PROGRESS_H

#include <jansson.h>
#include <sqlite3.h>

/*
 * Long work (a tree import, a kernel build, a bisection) reports
 * progress_set() as it goes. Each report is kept in the store's progress
 * table, one row per (kind, subject_id), at most once a second (and always
 * the first and the last one), so the dashboard can show it; and painted on
 * the terminal given to progress_terminal() as one line rewritten in place
 * (at most ten times a second). progress_clear() deletes the row and ends
 * the line. A row left by a process that died is told by its pid and its
 * age (updated_at).
 *
 * db may be NULL (the terminal only). kind and label are copied. Errors
 * writing the row are ignored: progress never fails the work it reports.
 */
void progress_terminal(int fd); /* -1 (the default): no terminal line */
void progress_set(sqlite3 *db, const char *kind, long long subject_id,
		  const char *label, long long done, long long total,
		  const char *unit);
void progress_clear(sqlite3 *db, const char *kind, long long subject_id);
/* Clears the terminal line before other output; the next report repaints. */
void progress_interrupt(void);
/* "12/40 objects (30%)", "12 objects" without a total; caller frees. */
char *progress_text(long long done, long long total, const char *unit);

/*
 * The progress rows written in the last ten minutes, {kind, subject_id,
 * label, done, total, unit, updated_at}, by kind and subject (NULL on
 * error); and one subject's {label, done, total, unit, updated_at}, json
 * null when it has none. New references.
 */
json_t *progress_recent_json(sqlite3 *db);
json_t *progress_of_json(sqlite3 *db, const char *kind, long long subject_id);

#endif
