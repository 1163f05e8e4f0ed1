/* source.c: where patches came from: the sources table. */
#include "source.h"
#include "db.h"

#include <stddef.h>

int source_add(sqlite3 *db, const char *kind, const char *path,
	       const char *actor, long long *id)
{
	int ret = db_exec(db,
			  "INSERT INTO sources (kind, path, actor) VALUES"
			  " (?, ?, ?)",
			  "ttt", kind, path, actor);

	*id = ret < 0 ? 0 : db_last_id(db);
	return ret;
}

int source_series_path(sqlite3 *db, long long source_id, char **path)
{
	*path = NULL;
	return db_query_text(db, path,
			     "SELECT path FROM sources WHERE id = ? AND kind ="
			     " 'series'",
			     "i", source_id);
}
