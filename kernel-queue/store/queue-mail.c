/* queue-mail.c: what the mail intake asks of the queue: a patch by Message-Id or upstream SHA, trailers from replies, rerolls. */
#include "queue.h"
#include "db.h"
#include "err.h"
#include "strbuf.h"

#include <string.h>

/* The first column of every row of st (finalized) into *ids. */
static int collect_ids(sqlite3_stmt *st, long long **ids, size_t *n)
{
	size_t alloc = 0;

	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 4;
			*ids = xrealloc(*ids, alloc * sizeof(**ids));
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return 0;
}

int queue_by_message_id(sqlite3 *db, const char *message_id, long long *id)
{
	*id = 0;
	if (!message_id || !*message_id)
		return 0;
	if (db_query_int(db, id,
			 "SELECT id FROM patches WHERE message_id = ? ORDER BY"
			 " id LIMIT 1",
			 "t", message_id) < 0)
		*id = 0;
	return *id > 0;
}

int queue_by_upstream(sqlite3 *db, const char *sha, long long **ids,
		      size_t *n)
{
	sqlite3_stmt *st;
	size_t len = sha ? strlen(sha) : 0;
	char hi[48];

	*ids = NULL;
	*n = 0;
	if (len < 8 || len > 40 || strspn(sha, "0123456789abcdef") != len)
		return 0;
	/* upstream LIKE sha% as a range the index answers */
	snprintf(hi, sizeof(hi), "%s~", sha);
	st = db_prepare(db,
			"SELECT id FROM patches WHERE ((upstream >= ?1 AND"
			" upstream < ?2) OR (length(upstream) < length(?1) AND"
			" substr(?1, 1, length(upstream)) = upstream)) AND"
			" state NOT IN ('dropped','reverted','rejected')"
			" ORDER BY id",
			"tt", sha, hi);
	if (!st)
		return ERR_IO;
	return collect_ids(st, ids, n);
}

int queue_add_trailer(sqlite3 *db, long long patch_id, const char *kind,
		      const char *value, const char *extra)
{
	long long have = 0;
	int ret;

	if (db_query_int(db, &have,
			 "SELECT count(*) FROM patch_tags WHERE patch_id = ?"
			 " AND kind = ? AND value = ? COLLATE NOCASE",
			 "itt", patch_id, kind, value) < 0)
		return ERR_IO;
	if (have)
		return 0;
	ret = db_exec(db,
		      "INSERT INTO patch_tags (patch_id, kind, value, extra)"
		      " VALUES (?, ?, ?, ?)",
		      "ittt", patch_id, kind, value, extra);
	return ret < 0 ? ret : 1;
}

int queue_rerolled(sqlite3 *db, long long branch, const char *subject,
		   const char *author_email, long long **ids, size_t *n)
{
	sqlite3_stmt *st;

	*ids = NULL;
	*n = 0;
	st = db_prepare(db,
			"SELECT id FROM patches WHERE branch_id = ? AND subject"
			" = ? AND author_email = ? COLLATE NOCASE AND state IN"
			" ('imported','checked','queued','held') ORDER BY id",
			"itt", branch, subject, author_email ? author_email : "");
	if (!st)
		return ERR_IO;
	return collect_ids(st, ids, n);
}

int queue_patch_subject(sqlite3 *db, long long id, char **subject,
			char **upstream)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT subject, upstream FROM patches"
				      " WHERE id = ?",
				      "i", id);
	int ret = 0;

	*subject = NULL;
	if (upstream)
		*upstream = NULL;
	if (!st)
		return ERR_IO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*subject = xstrdup(db_col_text(st, 0));
		if (upstream && db_col_text(st, 1))
			*upstream = xstrdup(db_col_text(st, 1));
	} else {
		ret = err_set(ERR_NOTFOUND, "no patch %lld", id);
	}
	sqlite3_finalize(st);
	return ret;
}
