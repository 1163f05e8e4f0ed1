/* dbwatch.h: has the store changed? Read off SQLite's WAL index without a lock or a system call. */
#ifndef STABLEQ_DBWATCH_H
#define STABLEQ_DBWATCH_H

#include <sqlite3.h>

/*
 * What the store's contents are known by: the WAL-index header, which
 * SQLite rewrites on every commit (any process). Two stamps are equal only
 * if no transaction committed between them.
 */
struct db_stamp {
	unsigned int hdr[12]; /* 48 bytes: the header as SQLite writes it */
};

struct db_watch;

/*
 * Watches the WAL index ("<path>-shm") of db, an open WAL connection used
 * for nothing else, through db's own mapping: db must stay open (and
 * unused) for the watch's lifetime. Returns NULL with err_msg() when it
 * cannot be used (not WAL, an unknown layout, no mapping): callers then
 * ask SQLite (PRAGMA data_version).
 */
struct db_watch *db_watch_open(sqlite3 *db, const char *path);
void db_watch_close(struct db_watch *w);

/*
 * The store's stamp now: 0, or -1 when a writer is updating the header at
 * this instant (ask SQLite instead).
 */
int db_watch_stamp(const struct db_watch *w, struct db_stamp *out);

#endif
