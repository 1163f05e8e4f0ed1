/* queue.c: patches in SQLite: insertion with dedupe, states, verdicts, dependencies, JSON. */
#include "queue.h"
#include "ctx.h"
#include "branch.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "mime.h"
#include "flag.h"
#include "compose.h"
#include "outbox.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[PS_COUNT] = {
	[PS_IMPORTED] = "imported", [PS_CHECKED] = "checked",
	[PS_QUEUED] = "queued",     [PS_HELD] = "held",
	[PS_REJECTED] = "rejected", [PS_BROKEN] = "broken",
	[PS_DROPPED] = "dropped",   [PS_RELEASED] = "released",
	[PS_REVERTED] = "reverted",
};

/* allowed[from] is a bit set of the states it may move to. */
#define B(s) (1u << (s))
static const unsigned allowed[PS_COUNT] = {
	/* -> released: the checks found the change in the tree already */
	[PS_IMPORTED] = B(PS_CHECKED) | B(PS_QUEUED) | B(PS_HELD) |
			B(PS_REJECTED) | B(PS_BROKEN) | B(PS_DROPPED) |
			B(PS_RELEASED),
	[PS_CHECKED] = B(PS_CHECKED) | B(PS_QUEUED) | B(PS_HELD) |
		       B(PS_REJECTED) | B(PS_BROKEN) | B(PS_DROPPED) |
		       B(PS_RELEASED),
	[PS_QUEUED] = B(PS_CHECKED) | B(PS_HELD) | B(PS_REJECTED) |
		      B(PS_BROKEN) | B(PS_DROPPED) | B(PS_RELEASED),
	[PS_HELD] = B(PS_CHECKED) | B(PS_QUEUED) | B(PS_BROKEN) |
		    B(PS_DROPPED) | B(PS_REJECTED),
	[PS_REJECTED] = B(PS_CHECKED) | B(PS_QUEUED) | B(PS_HELD) |
			B(PS_DROPPED) | B(PS_RELEASED),
	[PS_BROKEN] = B(PS_DROPPED) | B(PS_REVERTED),
	[PS_DROPPED] = 0,
	[PS_RELEASED] = B(PS_BROKEN) | B(PS_REVERTED),
	[PS_REVERTED] = 0,
};
#undef B

const char *queue_state_name(enum patch_state s)
{
	return (unsigned)s < PS_COUNT ? state_names[s] : "?";
}

int queue_state_parse(const char *name)
{
	for (int i = 0; i < PS_COUNT; i++)
		if (name && !strcmp(state_names[i], name))
			return i;
	return -1;
}

int queue_get_state(sqlite3 *db, long long id, enum patch_state *out)
{
	char *s = NULL;
	int ret = db_query_text(db, &s, "SELECT state FROM patches WHERE id = ?",
				"i", id);

	if (ret == ERR_NOTFOUND)
		return err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	if (ret < 0)
		return ret;
	*out = (enum patch_state)queue_state_parse(s);
	free(s);
	return 0;
}

long long queue_set_state(sqlite3 *db, long long id, enum patch_state to,
			  const char *reason, const char *actor)
{
	enum patch_state from;
	int ret = queue_get_state(db, id, &from);

	if (ret < 0)
		return ret;
	if (!(allowed[from] & (1u << to)))
		return err_set(ERR_CONFLICT, "patch %lld: cannot go from %s to %s",
			       id, queue_state_name(from), queue_state_name(to));
	ret = db_exec(db,
		      "UPDATE patches SET state = ?, state_reason = ?, hold ="
		      " NULL, updated_at ="
		      " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
		      "tti", queue_state_name(to), reason, id);
	if (ret < 0)
		return ret;
	return event_add(db, actor, "patch", id, "state", "%s -> %s%s%s",
			 queue_state_name(from), queue_state_name(to),
			 reason ? ": " : "", reason ? reason : "");
}

/* patches.hold of each kind; the order is precedence (a reply's outranks) */
static const char *const hold_names[] = {
	[QUEUE_HOLD_CHECK] = "check",
	[QUEUE_HOLD_REPLY] = "reply",
};
/* A held patch's reason grows by a line per hold, up to this. */
#define HOLD_REASON_MAX 16384

int queue_held_by(sqlite3 *db, long long id)
{
	char *state = NULL, *hold = NULL;
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT state, hold FROM patches WHERE"
				      " id = ?",
				      "i", id);
	int ret = 0;

	if (!st)
		return ERR_IO;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	}
	state = xstrdup(db_col_text(st, 0));
	hold = sqlite3_column_type(st, 1) == SQLITE_NULL
		       ? NULL
		       : xstrdup(db_col_text(st, 1));
	sqlite3_finalize(st);
	for (int k = QUEUE_HOLD_CHECK; hold && k <= QUEUE_HOLD_REPLY; k++)
		if (!strcmp(state, "held") && !strcmp(hold, hold_names[k]))
			ret = k;
	free(state);
	free(hold);
	return ret;
}

long long queue_hold(sqlite3 *db, long long id, enum queue_hold kind,
		     const char *reason, const char *actor)
{
	enum patch_state from;
	struct strbuf why = STRBUF_INIT;
	char *old = NULL;
	long long ev;
	int ret, have;

	if (kind < QUEUE_HOLD_CHECK || kind > QUEUE_HOLD_REPLY)
		return err_set(ERR_INVALID, "patch %lld: no such hold kind %d",
			       id, (int)kind);
	if ((ret = queue_get_state(db, id, &from)) < 0)
		return ret;
	if (from != PS_HELD) {
		ev = queue_set_state(db, id, PS_HELD, reason, actor);
		if (ev < 0)
			return ev;
		ret = db_exec(db, "UPDATE patches SET hold = ? WHERE id = ?",
			      "ti", hold_names[kind], id);
		return ret < 0 ? ret : ev;
	}
	if ((have = queue_held_by(db, id)) < 0)
		return have;
	if (have > (int)kind)
		return 0; /* a reply's hold is not the checks' to take over */
	db_query_text(db, &old, "SELECT state_reason FROM patches WHERE id = ?",
		      "i", id);
	err_clear();
	strbuf_addstr(&why, old ? old : "");
	if (reason && *reason && why.len < HOLD_REASON_MAX) {
		size_t room = HOLD_REASON_MAX - why.len;
		strbuf_addstr(&why, why.len ? "\n" : "");
		strbuf_add(&why, reason, (size_t)utf8_cut(reason, strlen(reason),
							 room));
	}
	ret = db_exec(db,
		      "UPDATE patches SET hold = ?, state_reason = ?,"
		      " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')"
		      " WHERE id = ?",
		      "tti", hold_names[kind], why.buf, id);
	free(old);
	strbuf_release(&why);
	if (ret < 0)
		return ret;
	return event_add(db, actor, "patch", id, "hold", "held by %s%s%s",
			 hold_names[kind], reason ? ": " : "",
			 reason ? reason : "");
}

json_t *queue_notice_patch(sqlite3 *db, long long id)
{
	/* branch: the git branch of the patch's own queue (linux-6.12.y) */
	json_t *p = db_row_json(db,
				"SELECT subject, subject_prefix, author_name,"
				" author_email, message_id, in_reply_to,"
				" upstream, branch_id AS branch FROM patches"
				" WHERE id = ?",
				"i", id);
	json_t *so;

	if (!p) {
		if (err_last() == ERR_NOTFOUND)
			err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
		return NULL;
	}
	if (branch_fill(db, p, "branch", BRANCH_NAME) < 0) {
		json_decref(p);
		return NULL;
	}
	so = db_rows_json(db,
			  "SELECT extra AS name, value AS email FROM patch_tags"
			  " WHERE patch_id = ? AND kind = 'signed_off_by'"
			  " ORDER BY id",
			  "i", id);
	if (!so) {
		json_decref(p);
		return NULL;
	}
	json_object_set_new(p, "signoffs", so);
	return p;
}

long long queue_notify(sqlite3 *db, const struct config *cfg,
		       const struct notice *n)
{
	struct notice full = *n;
	json_t *p = queue_notice_patch(db, n->patch_id);
	long long id;

	if (!p)
		return err_last() < 0 ? err_last() : ERR_IO;
	full.patch = p;
	id = compose_notice(db, cfg, &full);
	json_decref(p);
	return id;
}

int queue_verdict_latest(sqlite3 *db, long long patch_id, const char *check,
		   char **result)
{
	*result = NULL;
	return db_query_text(db, result,
			     "SELECT result FROM verdicts WHERE patch_id = ? AND"
			     " check_name = ? ORDER BY id DESC LIMIT 1",
			     "it", patch_id, check);
}

int queue_verdict_add(sqlite3 *db, long long patch_id, const char *check,
		const char *result, const char *detail)
{
	int ret = db_exec(db,
			  "INSERT INTO verdicts (patch_id, check_name, result,"
			  " detail) VALUES (?, ?, ?, ?)",
			  "ittt", patch_id, check, result, detail ? detail : "");
	return ret < 0 ? ret : 0;
}

long long queue_default_branch(sqlite3 *db)
{
	long long id = branch_first(db);

	if (id < 0)
		return err_set(ERR_NOTFOUND, "no branch is configured");
	return id;
}

/*
 * A patch a later version of its series replaced (mailin.c drops it with
 * this reason) is not the same patch as its successor: the v2 of a
 * backport names the same upstream commit.
 */
#define SUPERSEDED_NOT \
	"NOT (state = 'dropped' AND state_reason LIKE 'superseded by %')"

static int find_duplicate(sqlite3 *db, long long branch, const struct patch *p,
			  unsigned flags, long long *id)
{
	int ret;

	if (p->message_id) {
		ret = db_query_int(db, id,
				   "SELECT id FROM patches WHERE branch_id = ?"
				   " AND message_id = ?",
				   "it", branch, p->message_id);
		if (ret != ERR_NOTFOUND)
			return ret < 0 ? ret : 1;
	}
	if (!(flags & QUEUE_ADD_APART) && p->upstream &&
	    strlen(p->upstream) >= 12) {
		ret = db_query_int(db, id,
				   "SELECT id FROM patches WHERE branch_id = ?2"
				   " AND substr(upstream, 1, 12) = substr(?1, 1, 12)"
				   " AND substr(upstream, 1, min(length(upstream),"
				   " length(?1))) = substr(?1, 1,"
				   " min(length(upstream), length(?1))) AND "
				   SUPERSEDED_NOT,
				   "ti", p->upstream, branch);
		if (ret != ERR_NOTFOUND)
			return ret < 0 ? ret : 1;
	}
	ret = db_query_int(db, id,
			   "SELECT id FROM patches WHERE branch_id = ? AND"
			   " patch_id = ? AND " SUPERSEDED_NOT,
			   "it", branch, p->patch_id);
	if (ret != ERR_NOTFOUND)
		return ret < 0 ? ret : 1;
	return 0;
}

int queue_add(sqlite3 *db, long long branch, const struct patch *p,
	      long long source_id, const char *actor, long long *id)
{
	return queue_add_flags(db, branch, p, source_id, actor, 0, id);
}

int queue_add_flags(sqlite3 *db, long long branch, const struct patch *p,
		    long long source_id, const char *actor, unsigned flags,
		    long long *id)
{
	long long pos = 0;
	int ret = find_duplicate(db, branch, p, flags, id);
	char change[2] = { 0, 0 };

	if (ret != 0)
		return ret < 0 ? ret : 0;
	if ((ret = db_query_int(db, &pos,
				"SELECT COALESCE(MAX(queue_pos), 0) + 1 FROM"
				" patches",
				NULL)) < 0)
		return ret;
	ret = db_exec(db,
		      "INSERT INTO patches (branch_id, source_id, queue_pos,"
		      " filename, subject, subject_prefix, series_part,"
		      " series_total, author_name, author_email, date,"
		      " message_id, in_reply_to, upstream, patch_id, message,"
		      " diff) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		      "iiitttddttttttttt", branch, source_id, pos, p->filename,
		      p->subject, p->subject_prefix, p->series_part,
		      p->series_total, p->author_name, p->author_email,
		      p->date, p->message_id, p->in_reply_to, p->upstream,
		      p->patch_id, p->message, p->diff);
	if (ret < 0)
		return ret;
	*id = db_last_id(db);
	for (size_t i = 0; i < p->ntags; i++) {
		ret = db_exec(db,
			      "INSERT INTO patch_tags (patch_id, kind, value,"
			      " extra) VALUES (?,?,?,?)",
			      "ittt", *id, p->tags[i].kind, p->tags[i].value,
			      p->tags[i].extra);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < p->nfiles; i++) {
		change[0] = p->files[i].change;
		ret = db_exec(db,
			      "INSERT OR IGNORE INTO patch_files (patch_id,"
			      " path, change) VALUES (?,?,?)",
			      "itt", *id, p->files[i].path, change);
		if (ret < 0)
			return ret;
	}
	if ((ret = (int)event_add(db, actor, "patch", *id, "imported", "%s",
				  p->subject)) < 0)
		return ret;
	return 1;
}

/*
 * Edges are derived from tags each time: a patch imported later can name
 * one imported earlier and the other way round. Abbreviated SHAs match on
 * their first 12 digits (or fewer, if the tag is shorter).
 */
int queue_link_dependencies(sqlite3 *db)
{
	static const char *const sql[] = {
		"DELETE FROM dependencies",
		/* P carries Stable-dep-of: X: P was brought in for X, goes with X */
		"INSERT OR IGNORE INTO dependencies (patch_id, depends_on, kind)"
		" SELECT t.patch_id, x.id, 'stable-dep-of' FROM patch_tags t"
		" JOIN patches x ON substr(x.upstream, 1, 12) ="
		"  substr(t.value, 1, 12) AND x.branch_id IS (SELECT branch_id"
		"  FROM patches o WHERE o.id = t.patch_id)"
		" WHERE t.kind = 'stable_dep_of' AND x.id != t.patch_id",
		/* ... and X needs P: X goes with P */
		"INSERT OR IGNORE INTO dependencies (patch_id, depends_on, kind)"
		" SELECT x.id, t.patch_id, 'prereq' FROM patch_tags t"
		" JOIN patches x ON substr(x.upstream, 1, 12) ="
		"  substr(t.value, 1, 12) AND x.branch_id IS (SELECT branch_id"
		"  FROM patches o WHERE o.id = t.patch_id)"
		" WHERE t.kind = 'stable_dep_of' AND x.id != t.patch_id",
		/* a prerequisite note (# 6.1.x: sha: subject) names what P needs */
		"INSERT OR IGNORE INTO dependencies (patch_id, depends_on, kind)"
		" SELECT t.patch_id, x.id, 'prereq' FROM patch_tags t"
		" JOIN patches x ON substr(x.upstream, 1, 12) ="
		"  substr(t.value, 1, 12) AND x.branch_id IS (SELECT branch_id"
		"  FROM patches o WHERE o.id = t.patch_id)"
		" WHERE t.kind = 'prereq' AND x.id != t.patch_id",
		/*
		 * the next part of a [PATCH n/m] series: same source, same m,
		 * part n+1, and next in the queue (a queue directory or an mbox
		 * holds several series, each in order)
		 */
		"INSERT OR IGNORE INTO dependencies (patch_id, depends_on, kind)"
		" SELECT b.id, a.id, 'series' FROM patches a JOIN patches b ON"
		"  b.queue_pos = (SELECT MIN(queue_pos) FROM patches n WHERE"
		"  n.queue_pos > a.queue_pos AND n.branch_id IS a.branch_id) AND"
		"  b.branch_id IS a.branch_id AND a.source_id = b.source_id AND"
		"  a.series_total > 1 AND a.series_total = b.series_total AND"
		"  b.series_part = a.series_part + 1 AND a.series_part > 0",
		/* fix-ups: Fixes: names X's upstream or branch commit */
		"INSERT OR IGNORE INTO dependencies (patch_id, depends_on, kind)"
		" SELECT t.patch_id, x.id, 'fixes' FROM patch_tags t"
		" JOIN patches x ON substr(x.upstream, 1, 12) ="
		"  substr(t.value, 1, 12) AND x.branch_id IS (SELECT branch_id"
		"  FROM patches o WHERE o.id = t.patch_id)"
		" WHERE t.kind = 'fixes' AND x.id != t.patch_id",
		"INSERT OR IGNORE INTO dependencies (patch_id, depends_on, kind)"
		" SELECT t.patch_id, x.id, 'fixes' FROM patch_tags t"
		" JOIN patches x ON substr(x.released_commit, 1, 12) ="
		"  substr(t.value, 1, 12) AND x.branch_id IS (SELECT branch_id"
		"  FROM patches o WHERE o.id = t.patch_id)"
		" WHERE t.kind = 'fixes' AND x.id != t.patch_id",
	};
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		int ret = db_exec(db, sql[i], NULL);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int queue_ids(sqlite3 *db, long long branch, int state, long long **ids,
	      size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 16;
	int rc;

	*n = 0;
	*ids = xmalloc(alloc * sizeof(**ids));
	/* branch 0: every branch's */
	st = db_prepare(db,
			"SELECT id FROM patches WHERE (?1 = 0 OR branch_id = ?1)"
			" AND (?2 IS NULL OR state = ?2) ORDER BY queue_pos",
			"it", branch,
			state >= 0 ? queue_state_name((enum patch_state)state)
				   : NULL);
	if (!st) {
		free(*ids);
		*ids = NULL;
		return ERR_IO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == alloc)
			*ids = xrealloc(*ids, (alloc *= 2) * sizeof(**ids));
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		return err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
	}
	return 0;
}

/* ---- JSON ---- */

static json_t *tag_values(sqlite3 *db, long long id, const char *kind,
			  int use_extra)
{
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT value, extra FROM patch_tags WHERE"
				   " patch_id = ? AND kind = ? ORDER BY id",
				   "it", id, kind);
	json_t *arr = json_array();

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *v = db_col_text(st, use_extra ? 1 : 0);
		if (v)
			json_array_append_new(arr, json_string(v));
	}
	db_stmt_done(st);
	return arr;
}

static json_t *latest_verdicts(sqlite3 *db, long long id)
{
	/* the other columns come from the row of MAX(id), as in a list */
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT check_name, result, detail,"
				   " created_at, MAX(id) FROM verdicts WHERE"
				   " patch_id = ? GROUP BY check_name ORDER BY"
				   " check_name",
				   "i", id);
	json_t *o = json_object();

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		json_t *v = json_object();
		json_object_set_new(v, "result", db_col_json(st, 1));
		json_object_set_new(v, "detail", db_col_json(st, 2));
		json_object_set_new(v, "at", db_col_json(st, 3));
		json_object_set_new(o, db_col_text(st, 0), v);
	}
	db_stmt_done(st);
	return o;
}

/* {check: result} of {check: {result, detail, at}}: a list's "checks". */
static json_t *checks_of(json_t *verdicts)
{
	json_t *o = json_object(), *v;
	const char *name;

	json_object_foreach(verdicts, name, v)
		json_object_set(o, name, json_object_get(v, "result"));
	return o;
}

static json_t *patch_row_json(sqlite3 *db, sqlite3_stmt *st, int full)
{
	json_t *o = json_object();
	long long id = sqlite3_column_int64(st, 0);

	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const char *name = sqlite3_column_name(st, i);
		if (!full && (!strcmp(name, "message") || !strcmp(name, "diff")))
			continue;
		json_object_set_new(o, name, db_col_json(st, i));
	}
	branch_fill(db, o, "branch", BRANCH_KEY);
	json_object_set_new(o, "fixes", tag_values(db, id, "fixes", 0));
	json_object_set_new(o, "stable_versions",
			    tag_values(db, id, "stable", 1));
	json_object_set_new(o, "stable_dep_of",
			    tag_values(db, id, "stable_dep_of", 0));
	json_object_set_new(o, "prereqs", tag_values(db, id, "prereq", 0));
	json_object_set_new(o, "verdicts", latest_verdicts(db, id));
	json_object_set_new(o, "checks",
			    checks_of(json_object_get(o, "verdicts")));
	json_object_set_new(o, "files",
			    db_rows_json(db,
					 "SELECT path, change FROM patch_files"
					 " WHERE patch_id = ? ORDER BY path",
					 "i", id));
	if (!full)
		return o;
	json_object_set_new(o, "tags",
			    db_rows_json(db,
					 "SELECT kind, value, extra FROM"
					 " patch_tags WHERE patch_id = ? ORDER"
					 " BY id",
					 "i", id));
	json_object_set_new(o, "verdict_history",
			    db_rows_json(db,
					 "SELECT check_name AS \"check\", result,"
					 " detail, created_at AS at FROM verdicts"
					 " WHERE patch_id = ? ORDER BY id",
					 "i", id));
	json_object_set_new(o, "depends_on",
			    db_rows_json(db,
					 "SELECT depends_on AS id, kind FROM"
					 " dependencies WHERE patch_id = ?",
					 "i", id));
	json_object_set_new(o, "dependents",
			    db_rows_json(db,
					 "SELECT patch_id AS id, kind FROM"
					 " dependencies WHERE depends_on = ?",
					 "i", id));
	json_object_set_new(o, "flags", flag_list_json(db, id));
	json_object_set_new(o, "events", event_subject_json(db, "patch", id));
	return o;
}

#define PATCH_COLS                                                             \
	"id, branch_id AS branch,"                                             \
	" subject, subject_prefix, author_name, author_email, date,"           \
	" message_id, in_reply_to, upstream, patch_id, state, state_reason,"   \
	" queue_pos, filename, series_part, series_total, released_commit,"    \
	" source_id, created_at, updated_at, message, diff"

json_t *queue_patch_json(sqlite3 *db, long long id, int full)
{
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT " PATCH_COLS
				   " FROM patches WHERE id = ?",
				   "i", id);
	json_t *o = NULL;
	int ret;

	if (!st)
		return NULL;
	if ((ret = db_step(st)) > 0)
		o = patch_row_json(db, st, full);
	else if (ret == 0)
		err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	db_stmt_done(st);
	return o;
}

/* The columns of a full list row: all but the message and the diff. */
#define LIST_COLS                                                              \
	"id, branch_id AS branch,"                                             \
	" subject, subject_prefix, author_name, author_email, date,"           \
	" message_id, in_reply_to, upstream, patch_id, state, state_reason,"   \
	" queue_pos, filename, series_part, series_total, released_commit,"    \
	" source_id, created_at, updated_at"
/* The columns of a summary row (what the queue at a glance shows). */
#define SUMMARY_COLS                                                           \
	"id, subject, subject_prefix, author_name, author_email, upstream,"    \
	" state, state_reason, queue_pos, series_part, series_total,"         \
	" updated_at"

/* A page of patch objects, found by id (sorted copy for bsearch). */
struct page_ref {
	long long id;
	json_t *o; /* borrowed from the page's array */
};

static int page_ref_cmp(const void *a, const void *b)
{
	long long x = ((const struct page_ref *)a)->id;
	long long y = ((const struct page_ref *)b)->id;

	return x < y ? -1 : x > y;
}

static json_t *page_find(struct page_ref *refs, size_t n, long long id)
{
	struct page_ref key = { id, NULL };
	struct page_ref *r = bsearch(&key, refs, n, sizeof(*refs), page_ref_cmp);

	return r ? r->o : NULL;
}

static json_t *page_json(sqlite3 *db, sqlite3_stmt *st, int full)
{
	json_t *arr, *idarr;
	struct page_ref *refs = NULL;
	char *ids = NULL;
	size_t n = 0, i;
	int rc;

	arr = json_array();
	idarr = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object();
		for (int c = 0; c < sqlite3_column_count(st); c++)
			json_object_set_new(o, sqlite3_column_name(st, c),
					    db_col_json(st, c));
		json_object_set_new(o, "fixes", json_array());
		if (full) {
			json_object_set_new(o, "stable_versions",
					    json_array());
			json_object_set_new(o, "stable_dep_of", json_array());
			json_object_set_new(o, "prereqs", json_array());
			json_object_set_new(o, "verdicts", json_object());
			json_object_set_new(o, "files", json_array());
		}
		json_object_set_new(o, "checks", json_object());
		json_array_append_new(arr, o);
		json_array_append_new(idarr,
				      json_integer(sqlite3_column_int64(st, 0)));
	}
	db_stmt_done(st);
	if (rc != SQLITE_DONE)
		goto fail;
	if (!(n = json_array_size(arr)))
		goto out;
	refs = xcalloc(n, sizeof(*refs));
	for (i = 0; i < n; i++) {
		refs[i].id = json_integer_value(json_array_get(idarr, i));
		refs[i].o = json_array_get(arr, i);
	}
	qsort(refs, n, sizeof(*refs), page_ref_cmp);
	ids = json_dumps(idarr, JSON_COMPACT);

	/* stable_versions lists the extra (the version range), like tag_values(.., 1) */
	st = full ? db_stmt(db,
			       "SELECT patch_id, kind, CASE kind WHEN 'stable'"
			       " THEN extra ELSE value END FROM patch_tags"
			       " WHERE patch_id IN (SELECT value FROM"
			       " json_each(?)) AND kind IN ('fixes', 'stable',"
			       " 'stable_dep_of', 'prereq') ORDER BY id",
			       "t", ids)
		  : db_stmt(db,
			       "SELECT patch_id, kind, value FROM patch_tags"
			       " WHERE patch_id IN (SELECT value FROM"
			       " json_each(?)) AND kind = 'fixes' ORDER BY id",
			       "t", ids);
	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = page_find(refs, n, sqlite3_column_int64(st, 0));
		const char *k = db_col_text(st, 1), *v = db_col_text(st, 2);
		const char *key = !strcmp(k, "fixes")	     ? "fixes"
				  : !strcmp(k, "stable")     ? "stable_versions"
				  : !strcmp(k, "prereq")     ? "prereqs"
							     : "stable_dep_of";
		if (o && v)
			json_array_append_new(json_object_get(o, key),
					      json_string(v));
	}
	db_stmt_done(st);
	if (!st || rc != SQLITE_DONE)
		goto fail;

	st = db_stmt(db,
			/* the other columns come from the row of MAX(id) */
			"SELECT patch_id, check_name, result, detail,"
			" created_at, MAX(id) FROM verdicts WHERE patch_id IN"
			" (SELECT value FROM json_each(?)) GROUP BY patch_id,"
			" check_name ORDER BY patch_id, check_name",
			"t", ids);
	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = page_find(refs, n, sqlite3_column_int64(st, 0));
		json_t *v;
		if (!o)
			continue;
		json_object_set_new(json_object_get(o, "checks"),
				    db_col_text(st, 1), db_col_json(st, 2));
		if (!full)
			continue;
		v = json_object();
		json_object_set_new(v, "result", db_col_json(st, 2));
		json_object_set_new(v, "detail", db_col_json(st, 3));
		json_object_set_new(v, "at", db_col_json(st, 4));
		json_object_set_new(json_object_get(o, "verdicts"),
				    db_col_text(st, 1), v);
	}
	db_stmt_done(st);
	if (!st || rc != SQLITE_DONE)
		goto fail;
	if (!full)
		goto out;

	st = db_stmt(db,
			"SELECT patch_id, path, change FROM patch_files WHERE"
			" patch_id IN (SELECT value FROM json_each(?)) ORDER BY"
			" patch_id, path",
			"t", ids);
	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = page_find(refs, n, sqlite3_column_int64(st, 0));
		json_t *f;
		if (!o)
			continue;
		f = json_object();
		json_object_set_new(f, "path", db_col_json(st, 1));
		json_object_set_new(f, "change", db_col_json(st, 2));
		json_array_append_new(json_object_get(o, "files"), f);
	}
	db_stmt_done(st);
	if (!st || rc != SQLITE_DONE)
		goto fail;
out:
	if (branch_fill(db, arr, "branch", BRANCH_KEY) < 0)
		goto fail;
	free(refs);
	free(ids);
	json_decref(idarr);
	return arr;
fail:
	err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
	free(refs);
	free(ids);
	json_decref(idarr);
	json_decref(arr);
	return NULL;
}

json_t *queue_patches_json(sqlite3 *db, const long long *ids, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st;

	strbuf_addch(&sb, '[');
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%lld", i ? "," : "", ids[i]);
	strbuf_addch(&sb, ']');
	st = db_stmt(db,
		     "SELECT " LIST_COLS " FROM patches WHERE id IN (SELECT"
		     " value FROM json_each(?)) ORDER BY queue_pos",
		     "t", sb.buf);
	strbuf_release(&sb);
	return st ? page_json(db, st, 1) : NULL;
}

json_t *queue_list_json_branch(sqlite3 *db, long long branch,
			       const char *state, long long limit,
			       long long offset, long long *total,
			       enum list_view view)
{
	int full = view == LIST_FULL;
	sqlite3_stmt *st;

	if (limit <= 0)
		limit = -1;
	/* Statements that each can walk an index in queue order. */
	if (total && (branch ? db_query_int(db, total,
					    "SELECT COUNT(*) FROM patches WHERE"
					    " branch_id = ? AND (?2 IS NULL OR"
					    " state = ?2)",
					    "it", branch, state)
		      : state ? db_query_int(db, total,
					     "SELECT COUNT(*) FROM patches WHERE"
					     " state = ?",
					     "t", state)
			      : db_query_int(db, total,
					     "SELECT COUNT(*) FROM patches",
					     NULL)) < 0)
		return NULL;
	if (branch) {
		static const char *const sql[2] = {
			"SELECT " SUMMARY_COLS " FROM patches WHERE branch_id ="
			" ?1 AND (?2 IS NULL OR state = ?2) ORDER BY queue_pos"
			" LIMIT ?3 OFFSET ?4",
			"SELECT " LIST_COLS " FROM patches WHERE branch_id ="
			" ?1 AND (?2 IS NULL OR state = ?2) ORDER BY queue_pos"
			" LIMIT ?3 OFFSET ?4",
		};
		st = db_stmt(db, sql[full], "itii", branch, state, limit,
			     offset);
	} else {
		/* [full][state given] */
		static const char *const sql[2][2] = {
			{ "SELECT " SUMMARY_COLS " FROM patches ORDER BY"
			  " queue_pos LIMIT ? OFFSET ?",
			  "SELECT " SUMMARY_COLS " FROM patches WHERE state ="
			  " ? ORDER BY queue_pos LIMIT ? OFFSET ?" },
			{ "SELECT " LIST_COLS " FROM patches ORDER BY"
			  " queue_pos LIMIT ? OFFSET ?",
			  "SELECT " LIST_COLS " FROM patches WHERE state = ?"
			  " ORDER BY queue_pos LIMIT ? OFFSET ?" },
		};
		const char *q = sql[full][state != NULL];
		st = state ? db_stmt(db, q, "tii", state, limit, offset)
			   : db_stmt(db, q, "ii", limit, offset);
	}
	if (!st)
		return NULL;
	return page_json(db, st, full);
}

int queue_find_upstream(sqlite3 *db, long long branch, const char *sha,
			char **state)
{
	char *st = NULL;
	int ret = db_query_text(
		db, &st,
		"SELECT state FROM patches WHERE +branch_id IS ?1 AND +state NOT"
		" IN ('rejected','dropped') AND ((substr(upstream, 1, 12) ="
		" substr(?2, 1, 12) AND substr(upstream, 1, min(12, length(?2)))"
		" = substr(?2, 1, min(12, length(upstream)))) OR"
		" (substr(released_commit, 1, 12) = substr(?2, 1, 12) AND"
		" substr(released_commit, 1, min(12, length(?2))) = substr(?2, 1,"
		" min(12, length(released_commit))))) ORDER BY queue_pos LIMIT 1",
		"it", branch, sha);

	if (state)
		*state = NULL;
	if (ret == ERR_NOTFOUND) {
		err_clear();
		return 0;
	}
	if (ret < 0)
		return ret;
	if (state)
		*state = st;
	else
		free(st);
	return 1;
}

int queue_patch_branch(sqlite3 *db, long long patch_id, char **key)
{
	return branch_key_of_row(db, queue_branch_of(db, patch_id), "patch",
				 patch_id, key);
}

int queue_follow_patch(struct branch_ctx *bc, long long patch_id)
{
	return branch_ctx_follow(bc, "patch", patch_id, queue_patch_branch);
}

json_t *queue_branch_ids(sqlite3 *db, const char *ids)
{
	return db_map_of(
		db_rows_json(db,
			     "SELECT id, branch_id FROM patches WHERE id IN"
			     " (SELECT value FROM json_each(?))",
			     "t", ids));
}

json_t *queue_state_counts(sqlite3 *db, long long branch)
{
	return db_map_of(
		db_rows_json(db,
			     "SELECT state, COUNT(*) FROM patches WHERE ?1 = 0"
			     " OR branch_id = ?1 GROUP BY state",
			     "i", branch));
}

long long queue_count(sqlite3 *db, long long branch, enum patch_state state)
{
	return db_int(db, 0,
		      "SELECT COUNT(*) FROM patches WHERE branch_id = ? AND"
		      " state = ?",
		      "it", branch, queue_state_name(state));
}

/*
 * One fix is the rows of the view `fixes` (sql/009) with the same fix_key:
 * the patches with the same upstream commit (its first 12 digits, so that
 * an abbreviation meets the full SHA), else the same patch-id; one row per
 * branch it is queued for. ? = '' or a branch key the fix must be on.
 */
#define FIX_GROUPS                                                             \
	"WITH k AS (SELECT fix_key, MIN(patch_row) AS first FROM fixes GROUP"  \
	" BY fix_key HAVING ? = '' OR SUM(branch = ?) > 0)"

int queue_fix_count(sqlite3 *db, const char *branch_key, long long *total)
{
	*total = 0;
	return db_query_int(db, total, FIX_GROUPS " SELECT COUNT(*) FROM k",
			    "tt", branch_key, branch_key);
}

json_t *queue_fix_page(sqlite3 *db, const char *branch_key, long long limit,
		       long long offset)
{
	return db_rows_json(db,
			    FIX_GROUPS
			    ", page AS (SELECT fix_key, first FROM"
			    " k ORDER BY first LIMIT ? OFFSET ?) SELECT"
			    " page.fix_key, p.id, f.branch, p.state,"
			    " p.state_reason, p.subject, p.upstream,"
			    " p.patch_id FROM page JOIN fixes f ON f.fix_key ="
			    " page.fix_key JOIN patches p ON p.id ="
			    " f.patch_row ORDER BY page.first, p.id",
			    "ttii", branch_key, branch_key, limit, offset);
}

json_t *queue_latest_verdicts_json(sqlite3 *db, const char *ids)
{
	return db_rows_json(db,
			    "SELECT v.patch_id, v.check_name, v.result,"
			    " v.detail, v.created_at FROM verdicts v WHERE"
			    " v.patch_id IN (SELECT value FROM json_each(?))"
			    " AND v.id = (SELECT MAX(w.id) FROM verdicts w"
			    " WHERE w.patch_id = v.patch_id AND w.check_name ="
			    " v.check_name) ORDER BY v.id",
			    "t", ids);
}

char *queue_branch_patches(sqlite3 *db, long long branch)
{
	return db_text(db,
		       "SELECT json_group_array(id) FROM patches WHERE"
		       " branch_id = ?",
		       "i", branch);
}

char *queue_queued_ids(sqlite3 *db, long long branch)
{
	return db_text(db,
		       "SELECT json_group_array(id) FROM (SELECT id FROM"
		       " patches WHERE branch_id = ? AND state = 'queued'"
		       " ORDER BY queue_pos)",
		       "i", branch);
}

long long queue_branch_of(sqlite3 *db, long long patch_id)
{
	return db_int(db, 0,
		      "SELECT COALESCE(branch_id, 0) FROM patches WHERE id = ?",
		      "i", patch_id);
}

int queue_fill_branch(sqlite3 *db, json_t *rows, const char *id_field,
		      const char *field)
{
	json_t *o;
	size_t i;

	json_array_foreach(rows, i, o)
	{
		json_t *id = json_object_get(o, id_field);
		long long b;
		if (!json_is_integer(id))
			continue;
		b = queue_branch_of(db, json_integer_value(id));
		if (b == ERR_NOTFOUND) {
			err_clear();
			b = 0;
		}
		if (b < 0)
			return (int)b;
		json_object_set_new(o, field,
				    b ? json_integer(b) : json_null());
	}
	return 0;
}

char *queue_state_ids(sqlite3 *db, long long branch, enum patch_state state)
{
	return db_text(db,
		       "SELECT json_group_array(id) FROM (SELECT id FROM"
		       " patches WHERE branch_id = ? AND state = ? ORDER BY"
		       " id)",
		       "it", branch, queue_state_name(state));
}

/* field's patch id becomes that patch's subject (null: no such patch). */
static int fill_subject(sqlite3 *db, json_t *o, const char *field)
{
	json_t *v = json_object_get(o, field);
	char *subject = NULL;
	int ret;

	if (!json_is_integer(v))
		return 0;
	ret = queue_patch_subject(db, json_integer_value(v), &subject, NULL);
	if (ret < 0 && ret != ERR_NOTFOUND)
		return ret;
	err_clear();
	json_object_set_new(o, field,
			    subject ? json_string(subject) : json_null());
	free(subject);
	return 0;
}

int queue_fill_subject(sqlite3 *db, json_t *rows, const char *field)
{
	json_t *o;
	size_t i;
	int ret;

	if (json_is_object(rows))
		return fill_subject(db, rows, field);
	json_array_foreach(rows, i, o)
	{
		if ((ret = fill_subject(db, o, field)) < 0)
			return ret;
	}
	return 0;
}

int queue_patch_file(sqlite3 *db, long long id, char **filename,
		     long long *source_id)
{
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT filename, COALESCE(source_id, 0)"
				   " FROM patches WHERE id = ?",
				   "i", id);
	int rc;

	*filename = NULL;
	*source_id = 0;
	if (!st)
		return ERR_IO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *f = db_col_text(st, 0);
		*filename = f ? xstrdup(f) : NULL;
		*source_id = sqlite3_column_int64(st, 1);
	}
	db_stmt_done(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? ERR_NOTFOUND : ERR_IO;
}

json_t *queue_patch_brief_json(sqlite3 *db, long long id)
{
	json_t *o = db_row_json(db,
				"SELECT queue_pos, subject, state,"
				" released_commit, upstream FROM patches WHERE"
				" id = ?",
				"i", id);

	if (!o && err_last() == ERR_NOTFOUND)
		err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	return o;
}

json_t *queue_dependents_json(sqlite3 *db, long long id)
{
	return db_rows_json(db,
			    "SELECT d.patch_id, d.kind FROM dependencies d JOIN"
			    " patches x ON x.id = d.patch_id WHERE d.depends_on"
			    " = ? AND x.state NOT IN"
			    " ('dropped','reverted','rejected') ORDER BY"
			    " x.queue_pos",
			    "i", id);
}

json_t *queue_patch_content_json(sqlite3 *db, long long id)
{
	json_t *o = db_row_json(db,
				"SELECT subject, upstream, message, diff,"
				" author_name, author_email, date FROM patches"
				" WHERE id = ?",
				"i", id);

	if (!o && err_last() == ERR_NOTFOUND)
		err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	return o;
}

const char *queue_field(json_t *o, const char *field)
{
	return json_string_value(json_object_get(o, field));
}

int queue_set_released_commit(sqlite3 *db, long long id, const char *commit)
{
	int ret = db_exec(db,
			  "UPDATE patches SET released_commit = ? WHERE id = ?",
			  "ti", commit, id);
	return ret < 0 ? ret : 0;
}

int queue_newest_released(sqlite3 *db, long long branch, char **commit)
{
	*commit = NULL;
	return db_query_text(db, commit,
			     "SELECT released_commit FROM patches WHERE"
			     " branch_id = ? AND state IN ('released','broken')"
			     " AND released_commit IS NOT NULL ORDER BY"
			     " queue_pos DESC LIMIT 1",
			     "i", branch);
}

json_t *queue_patch_files_json(sqlite3 *db, long long id)
{
	return db_rows_json(db,
			    "SELECT path, change FROM patch_files WHERE"
			    " patch_id = ? ORDER BY path",
			    "i", id);
}

int queue_verdict_latest_full(sqlite3 *db, long long patch_id,
			      const char *check, char **result, char **detail)
{
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT result, detail FROM verdicts WHERE"
				   " patch_id = ? AND check_name = ? ORDER BY"
				   " id DESC LIMIT 1",
				   "it", patch_id, check);
	int rc;

	*result = *detail = NULL;
	if (!st)
		return ERR_IO;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *r = db_col_text(st, 0), *d = db_col_text(st, 1);
		*result = r ? xstrdup(r) : NULL;
		*detail = d ? xstrdup(d) : NULL;
	}
	db_stmt_done(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? ERR_NOTFOUND : ERR_IO;
}

int queue_ids_before(sqlite3 *db, long long branch, long long patch_id,
		     long long **ids, size_t *n)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT id FROM patches WHERE branch_id ="
				      " ?1 AND state = 'queued' AND queue_pos <"
				      " (SELECT queue_pos FROM patches WHERE id"
				      " = ?2) ORDER BY queue_pos",
				      "ii", branch, patch_id);
	int rc;

	*ids = NULL;
	*n = 0;
	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : ERR_IO;
}

int queue_first_marked(sqlite3 *db, long long branch, const char *marker,
		       const char *check, long long *id)
{
	return db_query_int(db, id,
			    "SELECT p.id FROM patches p WHERE p.branch_id = ?"
			    " AND p.state = 'queued' AND p.message LIKE '%' ||"
			    " char(10) || ? || '%' AND NOT EXISTS (SELECT 1"
			    " FROM verdicts v WHERE v.patch_id = p.id AND"
			    " v.check_name = ?) ORDER BY p.queue_pos LIMIT 1",
			    "itt", branch, marker, check);
}

json_t *queue_broken_fix_targets_json(sqlite3 *db, long long id)
{
	return db_rows_json(
		db,
		"SELECT x.id, x.subject, x.state, t.value AS fixes"
		" FROM patch_tags t JOIN patches x ON x.id !="
		" t.patch_id AND ((substr(x.upstream, 1, 12) ="
		" substr(t.value, 1, 12) AND substr(x.upstream, 1,"
		" min(12, length(t.value))) = substr(t.value, 1,"
		" min(12, length(x.upstream)))) OR"
		" (substr(x.released_commit, 1, 12) ="
		" substr(t.value, 1, 12) AND"
		" substr(x.released_commit, 1, min(12,"
		" length(t.value))) = substr(t.value, 1, min(12,"
		" length(x.released_commit))))) WHERE t.patch_id ="
		" ?1 AND t.kind = 'fixes' AND x.state IN"
		" ('broken','dropped','reverted') AND x.branch_id IS"
		" (SELECT branch_id FROM patches WHERE id = ?1)",
		"i", id);
}

int queue_file_counts(sqlite3 *db, long long id, long long *added,
		      long long *uapi)
{
	int ret;

	*added = *uapi = 0;
	ret = db_query_int(db, added,
			   "SELECT COUNT(*) FROM patch_files WHERE patch_id = ?"
			   " AND change = 'A'",
			   "i", id);
	if (ret >= 0)
		ret = db_query_int(db, uapi,
				   "SELECT COUNT(*) FROM patch_files WHERE"
				   " patch_id = ? AND (path LIKE"
				   " 'include/uapi/%' OR path LIKE"
				   " 'arch/%/include/uapi/%')",
				   "i", id);
	return ret;
}

json_t *queue_later_touching_json(sqlite3 *db, long long id)
{
	return db_rows_json(
		db,
		"SELECT l.id, l.diff FROM patches l WHERE l.id != ?1"
		" AND l.queue_pos > (SELECT queue_pos FROM patches"
		" WHERE id = ?1) AND l.branch_id IS (SELECT"
		" branch_id FROM patches WHERE id = ?1) AND"
		" l.state NOT IN ('rejected','dropped','reverted')"
		" AND EXISTS (SELECT 1 FROM patch_files f JOIN"
		" patch_files g ON g.path = f.path WHERE"
		" f.patch_id = l.id AND g.patch_id = ?1) ORDER BY"
		" l.queue_pos DESC LIMIT 64",
		"i", id);
}

int queue_first_in_state(sqlite3 *db, long long branch, enum patch_state state,
			 long long *id)
{
	return db_query_int(db, id,
			    "SELECT id FROM patches WHERE branch_id = ? AND"
			    " state = ? ORDER BY id LIMIT 1",
			    "it", branch, queue_state_name(state));
}

/*
 * Does column col name the same commit as the SHA parameter b ("?2")? On
 * the first 12 digits (indexed, sql/003), then as prefixes of each other.
 * The queries that use it write +branch_id and +state: without the plus
 * SQLite picks the (branch_id, state) index over the SHA's and reads the
 * whole queue for every Fixes: target (bench/checks.sh).
 */
#define SHA_MATCH(col, b)                                                      \
	"substr(" col ", 1, 12) = substr(" b ", 1, 12) AND substr(" col        \
	", 1, min(12, length(" b "))) = substr(" b ", 1, min(12, length(" col  \
	")))"

int queue_sibling_of(sqlite3 *db, long long self, const char *sha,
		     int live_only, long long *id)
{
	*id = 0;
	if (live_only)
		return db_query_int(
			db, id,
			"SELECT id FROM patches WHERE id != ?1 AND"
			" +state IN ('imported','checked','queued',"
			"'held','released','broken') AND +branch_id"
			" IS (SELECT branch_id FROM patches WHERE"
			" id = ?1) AND " SHA_MATCH(
				"upstream", "?2") " ORDER BY queue_pos LIMIT 1",
			"it", self, sha);
	return db_query_int(
		db, id,
		"SELECT id FROM patches WHERE id != ?1 AND"
		" +branch_id IS (SELECT branch_id FROM patches"
		" WHERE id = ?1) AND " SHA_MATCH(
			"upstream", "?2") " ORDER BY queue_pos LIMIT 1",
		"it", self, sha);
}

json_t *queue_tags_json(sqlite3 *db, long long id)
{
	return db_rows_json(db,
			    "SELECT kind, value, extra FROM patch_tags WHERE"
			    " patch_id = ? AND kind IN ('fixes','stable',"
			    "'stable_dep_of') ORDER BY id",
			    "i", id);
}
