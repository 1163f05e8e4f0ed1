/* source.h: where patches came from (a series file, an mbox, a patch, an API call): the sources table. */
#ifndef STABLEQ_SOURCE_H
#define STABLEQ_SOURCE_H

#include <sqlite3.h>

/*
 * Records one source (kind: "series", "mbox", "patch" or "api"; path: what
 * was read) in the caller's transaction; *id is its row, for queue_add().
 */
int source_add(sqlite3 *db, const char *kind, const char *path,
	       const char *actor, long long *id);
/*
 * The queue directory source_id was a series file of (ERR_NOTFOUND: it was
 * not one); caller frees.
 */
int source_series_path(sqlite3 *db, long long source_id, char **path);

#endif
