/* queue-mail.c: what the mail intake asks of the queue: a patch by Message-Id or upstream SHA, trailers from replies, rerolls. */
#include "queue.h"
#include "db.h"
#include "err.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
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
	if (len < 7 || len > 40 || strspn(sha, "0123456789abcdef") != len)
		return 0;
	/* upstream LIKE sha% as a range the index answers; a released
	 * commit the same way (the stable commit a report may name) */
	snprintf(hi, sizeof(hi), "%s~", sha);
	st = db_prepare(db,
			"SELECT id FROM patches WHERE ((upstream >= ?1 AND"
			" upstream < ?2) OR (length(upstream) >= 7 AND"
			" length(upstream) < length(?1) AND substr(?1, 1,"
			" length(upstream)) = upstream)) AND state NOT IN"
			" ('dropped','reverted','rejected')"
			" UNION SELECT id FROM patches WHERE ((released_commit"
			" >= ?1 AND released_commit < ?2) OR"
			" (length(released_commit) >= 7 AND"
			" length(released_commit) < length(?1) AND substr(?1,"
			" 1, length(released_commit)) = released_commit)) AND"
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
			" = ? AND (?3 IS NULL OR author_email = ?3 COLLATE"
			" NOCASE) AND state IN ('imported','checked','queued',"
			"'held') ORDER BY id",
			"itt", branch, subject, author_email);
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

int queue_patch_hash(sqlite3 *db, long long id, char *hash)
{
	char *h = NULL;
	int ret = db_query_text(db, &h, "SELECT patch_id FROM patches WHERE"
				" id = ?", "i", id);

	hash[0] = '\0';
	if (ret >= 0 && h)
		snprintf(hash, 41, "%s", h);
	free(h);
	return ret < 0 ? ret : 0;
}

/* id's queue_pos halfway between other's and its neighbour's on side. */
static int place(sqlite3 *db, long long id, long long other, int after)
{
	int ret = db_exec(
		db,
		after ? "UPDATE patches SET queue_pos = (SELECT (o.queue_pos +"
			" coalesce((SELECT min(n.queue_pos) FROM patches n WHERE"
			" n.queue_pos > o.queue_pos), o.queue_pos + 2)) / 2 FROM"
			" patches o WHERE o.id = ?2) WHERE id = ?1"
		      : "UPDATE patches SET queue_pos = (SELECT (o.queue_pos +"
			" coalesce((SELECT max(n.queue_pos) FROM patches n WHERE"
			" n.queue_pos < o.queue_pos), o.queue_pos - 2)) / 2 FROM"
			" patches o WHERE o.id = ?2) WHERE id = ?1",
		"ii", id, other);

	return ret < 0 ? ret : 0;
}

int queue_place_after(sqlite3 *db, long long id, long long other)
{
	return place(db, id, other, 1);
}

int queue_place_before(sqlite3 *db, long long id, long long other)
{
	return place(db, id, other, 0);
}

int queue_released_by_commit(sqlite3 *db, const char *sha, long long **ids,
			     size_t *n)
{
	size_t len = sha ? strlen(sha) : 0;
	sqlite3_stmt *st;

	*ids = NULL;
	*n = 0;
	if (len < 12 || len > 40 || strspn(sha, "0123456789abcdef") != len)
		return 0;
	st = db_prepare(db,
			"SELECT id FROM patches WHERE state = 'released' AND"
			" ((substr(upstream, 1, 12) = substr(?1, 1, 12) AND"
			" substr(upstream, 1, min(length(upstream), length(?1)))"
			" = substr(?1, 1, min(length(upstream), length(?1)))) OR"
			" (substr(released_commit, 1, 12) = substr(?1, 1, 12) AND"
			" substr(released_commit, 1, min(length(released_commit),"
			" length(?1))) = substr(?1, 1, min(length("
			"released_commit), length(?1))))) ORDER BY id",
			"t", sha);
	if (!st)
		return ERR_IO;
	return collect_ids(st, ids, n);
}

int queue_get_row(sqlite3 *db, long long id, enum patch_state *state,
		  char **reason, double *pos)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT state, state_reason,"
				      " queue_pos FROM patches WHERE id = ?",
				      "i", id);
	int ret;

	if (reason)
		*reason = NULL;
	if (!st)
		return ERR_IO;
	ret = db_step(st);
	if (ret > 0) {
		int s = queue_state_parse(db_col_text(st, 0));
		if (state)
			*state = s < 0 ? PS_IMPORTED : (enum patch_state)s;
		if (reason && db_col_text(st, 1))
			*reason = xstrdup(db_col_text(st, 1));
		if (pos)
			*pos = sqlite3_column_double(st, 2);
	}
	sqlite3_finalize(st);
	if (ret == 0)
		return err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	return ret < 0 ? ret : 0;
}
