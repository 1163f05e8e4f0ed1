/* dbwatch.c: has the store changed? Read off SQLite's WAL index without a lock or a system call. */
#include "dbwatch.h"
#include "db.h"
#include "err.h"
#include "strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * In WAL mode SQLite keeps the WAL index in "<db>-shm", mapped by every
 * connection of every process. It begins with the WAL-index header,
 * written twice (bytes 0-47 and 48-95), which each commit rewrites: the
 * frame count, the salts and a change counter (iChange) move on.
 * https://www.sqlite.org/walformat.html ("The WAL-Index Header") gives
 * the layout. SQLite's own readers tell whether the store changed the same
 * way (wal.c: walIndexTryHdr): copy the first header, barrier, copy the
 * second; equal copies are a consistent header, unequal ones a writer at
 * work. A writer writes the second copy first, then the first.
 *
 * PRAGMA data_version tells the same, but through a read transaction:
 * fcntl locks on the database and a mutex shared by every connection of
 * the process. On the answer cache's path, at 60,000 requests a second on
 * two threads, that was a quarter of the server's time.
 *
 * The header is read through the mapping of the watching connection
 * itself, which SQLite's VFS hands out (xShmMap of region 0, as SQLite
 * calls it): the file is never opened here. Opening and closing it would
 * drop every POSIX lock this process holds on it, SQLite's among them, and
 * let another process truncate it under our feet (SIGBUS). The mapping
 * lives as long as that connection.
 */

#define HDR_WORDS 12
#define WAL_INDEX_VERSION 3007000u /* iVersion, unchanged since 3.7.0 */
#define WAL_INDEX_PGSZ 32768       /* the size SQLite maps its regions in */

struct db_watch {
	const volatile uint32_t *hdr; /* SQLite's mapping */
};

struct db_watch *db_watch_open(sqlite3 *db, const char *path)
{
	struct db_watch *w;
	sqlite3_file *f = NULL;
	volatile void *region = NULL;
	char *mode = NULL;
	long long v;

	if (db_query_text(db, &mode, "PRAGMA journal_mode", NULL) < 0)
		return NULL;
	if (!mode || strcmp(mode, "wal")) {
		err_set(ERR_INVALID, "%s: journal mode %s, not wal", path,
			mode ? mode : "?");
		free(mode);
		return NULL;
	}
	free(mode);
	/* a read makes SQLite map (and fill) the index */
	if (db_query_int(db, &v, "PRAGMA data_version", NULL) < 0)
		return NULL;
	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) !=
		    SQLITE_OK ||
	    !f || !f->pMethods || f->pMethods->iVersion < 2 ||
	    !f->pMethods->xShmMap ||
	    f->pMethods->xShmMap(f, 0, WAL_INDEX_PGSZ, 0, &region) !=
		    SQLITE_OK ||
	    !region) {
		err_set(ERR_IO, "%s: the WAL index is not mapped", path);
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->hdr = (const volatile uint32_t *)region;
	/* iVersion (native byte order) and isInit (byte 12) */
	if (w->hdr[0] != WAL_INDEX_VERSION ||
	    ((const volatile uint8_t *)w->hdr)[12] != 1) {
		err_set(ERR_INVALID, "%s: unknown WAL-index layout (version %u)",
			path, (unsigned)w->hdr[0]);
		free(w);
		return NULL;
	}
	return w;
}

void db_watch_close(struct db_watch *w)
{
	free(w); /* the mapping is SQLite's */
}

int db_watch_stamp(const struct db_watch *w, struct db_stamp *out)
{
	uint32_t second[HDR_WORDS];

	for (int i = 0; i < HDR_WORDS; i++)
		out->hdr[i] = w->hdr[i];
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (int i = 0; i < HDR_WORDS; i++)
		second[i] = w->hdr[HDR_WORDS + i];
	return memcmp(out->hdr, second, sizeof(second)) ? -1 : 0;
}
