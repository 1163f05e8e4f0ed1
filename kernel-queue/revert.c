/* revert.c: revert first: flag, plan with dependents, drop or revert, hold fix-ups, release. */
#include "revert.h"
#include "series.h"
#include "candidate.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "outbox.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Fault injection for the crash tests: STABLEQ_CRASH_AT=<point> kills -9 there. */
static void crash_point(const char *point)
{
	const char *at = getenv("STABLEQ_CRASH_AT");

	if (at && !strcmp(at, point)) {
		log_warnx("STABLEQ_CRASH_AT=%s: killing myself", point);
		raise(SIGKILL);
	}
}

static long long mail_about(struct app *app, long long patch_id, long long ev,
			    const char *kind, const char *what,
			    const char *why, const char *excerpt,
			    const char *revert_patch)
{
	struct notice n = {
		.patch_id = patch_id,
		.event_id = ev,
		.kind = kind,
		.what = what,
		.why = why,
		.log_excerpt = excerpt,
		.revert_patch = revert_patch,
	};
	return outbox_add(app->db, &app->cfg, &n);
}

/* Flags inside the caller's transaction; returns the event id. */
static long long flag_locked(struct app *app, long long id, const char *reason,
			     const struct evidence *ev)
{
	enum patch_state s;
	long long evid;
	int ret = patch_get_state(app->db, id, &s);

	if (ret < 0)
		return ret;
	if (s == PS_BROKEN || s == PS_DROPPED || s == PS_REVERTED)
		return err_set(ERR_CONFLICT, "patch %lld is already %s", id,
			       patch_state_name(s));
	ret = db_exec(app->db,
		      "INSERT INTO flags (patch_id, reason, evidence, build_id,"
		      " bisection_id, actor) VALUES (?, ?, ?, NULLIF(?, 0),"
		      " NULLIF(?, 0), ?)",
		      "ittiit", id, reason,
		      ev && ev->test ? ev->test : NULL,
		      ev && ev->build_id ? ev->build_id : 0LL,
		      ev && ev->bisection_id ? ev->bisection_id : 0LL,
		      app->actor);
	if (ret < 0)
		return ret;
	evid = patch_set_state(app->db, id, PS_BROKEN, reason, app->actor);
	if (evid < 0)
		return evid;
	struct strbuf why = STRBUF_INIT;
	strbuf_addstr(&why, reason);
	if (ev && ev->test)
		strbuf_addf(&why, "\nFailing test: %s", ev->test);
	if (ev && ev->build_id)
		strbuf_addf(&why, "\nBuild: %lld", ev->build_id);
	if (ev && ev->bisection_id)
		strbuf_addf(&why, "\nBisection: %lld", ev->bisection_id);
	long long m = mail_about(app, id, evid, "flagged",
				 "Your patch was flagged broken in the stable"
				 " queue",
				 why.buf, ev ? ev->log_excerpt : NULL, NULL);
	strbuf_release(&why);
	return m < 0 ? m : evid;
}

int revert_flag(struct app *app, long long patch_id, const char *reason,
		const struct evidence *ev)
{
	long long r;
	int ret;

	if (!reason || !*reason)
		return err_set(ERR_INVALID, "a reason is required");
	if ((ret = db_begin(app->db)) < 0)
		return ret;
	r = flag_locked(app, patch_id, reason, ev);
	if (r < 0) {
		db_rollback(app->db);
		return (int)r;
	}
	if ((ret = db_commit(app->db)) < 0) {
		db_rollback(app->db);
		return ret;
	}
	log_info("patch %lld: flagged broken: %s", patch_id, reason);
	return 0;
}

/* ---- plans ---- */

struct item {
	long long id;
	long long pos;
	char *subject;
	char *state;
	char *released_commit;
	char *upstream;
	char *why;
	int revert; /* 1 revert (released), 0 drop */
};

struct plan {
	struct item *v;
	size_t n, alloc;
};

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].subject);
		free(p->v[i].state);
		free(p->v[i].released_commit);
		free(p->v[i].upstream);
		free(p->v[i].why);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int plan_has(const struct plan *p, long long id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].id == id)
			return 1;
	return 0;
}

static int plan_add(sqlite3 *db, struct plan *p, long long id, char *why)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT queue_pos, subject, state,"
				      " released_commit, upstream FROM patches"
				      " WHERE id = ?",
				      "i", id);
	int ret = 0;

	if (!st) {
		free(why);
		return ERR_IO;
	}
	if (sqlite3_step(st) != SQLITE_ROW) {
		ret = err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
		free(why);
		goto out;
	}
	if (p->n == p->alloc)
		p->v = xrealloc(p->v, (p->alloc = p->alloc ? p->alloc * 2 : 8) *
					      sizeof(*p->v));
	struct item *it = &p->v[p->n++];
	memset(it, 0, sizeof(*it));
	it->id = id;
	it->pos = sqlite3_column_int64(st, 0);
	it->subject = xstrdup(db_col_text(st, 1));
	it->state = xstrdup(db_col_text(st, 2));
	it->released_commit = db_col_text(st, 3) ? xstrdup(db_col_text(st, 3))
						 : NULL;
	it->upstream = db_col_text(st, 4) ? xstrdup(db_col_text(st, 4)) : NULL;
	it->why = why;
	it->revert = !strcmp(it->state, "released") ||
		     (!strcmp(it->state, "broken") && it->released_commit);
out:
	sqlite3_finalize(st);
	return ret;
}

static int cmp_newest_first(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	return x->pos < y->pos ? 1 : x->pos > y->pos ? -1 : 0;
}

/* The patch and, transitively, every patch that goes with it. */
static int plan_build(struct app *app, long long root, struct plan *p)
{
	enum patch_state s;
	int ret = patch_get_state(app->db, root, &s);

	memset(p, 0, sizeof(*p));
	if (ret < 0)
		return ret;
	if (s == PS_DROPPED || s == PS_REVERTED || s == PS_REJECTED)
		return err_set(ERR_CONFLICT,
			       "patch %lld is %s: there is nothing to revert",
			       root, patch_state_name(s));
	if ((ret = plan_add(app->db, p, root, xstrdup("the broken patch"))) < 0)
		return ret;
	for (size_t i = 0; i < p->n; i++) {
		sqlite3_stmt *st = db_prepare(
			app->db,
			"SELECT d.patch_id, d.kind FROM dependencies d JOIN"
			" patches x ON x.id = d.patch_id WHERE d.depends_on = ?"
			" AND x.state NOT IN ('dropped','reverted','rejected')"
			" ORDER BY x.queue_pos",
			"i", p->v[i].id);
		if (!st) {
			plan_free(p);
			return ERR_IO;
		}
		while (sqlite3_step(st) == SQLITE_ROW) {
			long long dep = sqlite3_column_int64(st, 0);
			const char *kind = db_col_text(st, 1);
			if (plan_has(p, dep))
				continue;
			char *why = xstrfmt(
				!strcmp(kind, "stable-dep-of")
					? "Stable-dep-of: brought in for patch %lld"
				: !strcmp(kind, "prereq")
					? "needs patch %lld (its prerequisite)"
				: !strcmp(kind, "series")
					? "later part of the series of patch %lld"
					: "Fixes: names patch %lld",
				p->v[i].id);
			if ((ret = plan_add(app->db, p, dep, why)) < 0) {
				sqlite3_finalize(st);
				plan_free(p);
				return ret;
			}
		}
		sqlite3_finalize(st);
	}
	qsort(p->v, p->n, sizeof(*p->v), cmp_newest_first);
	return 0;
}

static json_t *plan_json(long long root, const struct plan *p)
{
	json_t *o = json_object(), *items = json_array();

	json_object_set_new(o, "patch_id", json_integer(root));
	for (size_t i = 0; i < p->n; i++) {
		json_t *it = json_object();
		json_object_set_new(it, "patch_id", json_integer(p->v[i].id));
		json_object_set_new(it, "subject", json_string(p->v[i].subject));
		json_object_set_new(it, "state", json_string(p->v[i].state));
		json_object_set_new(it, "action",
				    json_string(p->v[i].revert ? "revert" : "drop"));
		json_object_set_new(it, "why", json_string(p->v[i].why));
		if (p->v[i].released_commit)
			json_object_set_new(it, "commit",
					    json_string(p->v[i].released_commit));
		json_array_append_new(items, it);
	}
	json_object_set_new(o, "items", items);
	return o;
}

json_t *revert_plan(struct app *app, long long patch_id)
{
	struct plan p;
	json_t *o;

	if (plan_build(app, patch_id, &p) < 0)
		return NULL;
	o = plan_json(patch_id, &p);
	plan_free(&p);
	return o;
}

/* ---- carrying out a plan ---- */

static char *revert_message(const struct item *it, const char *reason,
			    const char *evidence)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "Revert \"%s\"\n\n", it->subject);
	if (it->upstream)
		strbuf_addf(&sb, "This reverts commit %s which is commit %s"
				 " upstream.\n",
			    it->released_commit, it->upstream);
	else
		strbuf_addf(&sb, "This reverts commit %s.\n",
			    it->released_commit);
	strbuf_addf(&sb, "\n%s\n", reason);
	if (it->why && strcmp(it->why, "the broken patch"))
		strbuf_addf(&sb, "It goes with the broken patch: %s.\n", it->why);
	if (evidence && *evidence)
		strbuf_addf(&sb, "\n%s\n", evidence);
	strbuf_addstr(&sb, "\nSigned-off-by: stableq <stableq@localhost>\n");
	return strbuf_detach(&sb, NULL);
}

static char *slug(const char *subject)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *s = subject; *s && sb.len < 50; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		    (*s >= 'A' && *s <= 'Z'))
			strbuf_addch(&sb, *s);
		else if (sb.len && sb.buf[sb.len - 1] != '-')
			strbuf_addch(&sb, '-');
	}
	strbuf_rtrim(&sb);
	while (sb.len && sb.buf[sb.len - 1] == '-')
		strbuf_setlen(&sb, sb.len - 1);
	return strbuf_detach(&sb, NULL);
}

/*
 * Writes the revert into the queue directory and names it in `series`.
 * Idempotent (a resumed revert writes the same file and no second line).
 */
static int write_queue_patch(struct app *app, const char *name,
			     const char *text, char **path_out)
{
	struct strbuf series = STRBUF_INIT;
	char *path = xstrfmt("%s/%s", app->cfg.queue_dir, name);
	char *spath = xstrfmt("%s/series", app->cfg.queue_dir);
	int ret = write_file_atomic(path, text, strlen(text));

	if (ret == 0) {
		strbuf_read_file(&series, spath, 0);
		int present = 0;
		for (char *l = series.buf; l && *l;) {
			char *nl = strchr(l, '\n');
			size_t len = nl ? (size_t)(nl - l) : strlen(l);
			if (len == strlen(name) && !strncmp(l, name, len))
				present = 1;
			l = nl ? nl + 1 : NULL;
		}
		if (!present) {
			if (series.len && series.buf[series.len - 1] != '\n')
				strbuf_addch(&series, '\n');
			strbuf_addf(&series, "%s\n", name);
			ret = write_file_atomic(spath, series.buf, series.len);
		}
	}
	*path_out = ret == 0 ? path : NULL;
	if (ret < 0)
		free(path);
	free(spath);
	strbuf_release(&series);
	return ret;
}

/*
 * The dropped patches that came from the configured queue directory are
 * left out of its series file too (commented out, with why), so that the
 * directory is the queue stableq keeps. After the commit: the store is
 * what counts, and a failure here is only logged.
 */
static void leave_out_of_series(struct app *app, long long revert_id,
				const char *reason)
{
	char *qdir = app->cfg.queue_dir && *app->cfg.queue_dir
			     ? realpath(app->cfg.queue_dir, NULL)
			     : NULL;
	sqlite3_stmt *st;

	if (!qdir)
		return;
	st = db_prepare(app->db,
			"SELECT p.id, p.filename, s.path FROM revert_items i"
			" JOIN patches p ON p.id = i.patch_id JOIN sources s ON"
			" s.id = p.source_id WHERE i.revert_id = ? AND i.action ="
			" 'drop' AND p.filename IS NOT NULL AND s.kind ="
			" 'series' ORDER BY i.ord",
			"i", revert_id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		char *src = realpath(db_col_text(st, 2), NULL);
		if (src && !strcmp(src, qdir)) {
			char *note = xstrfmt("dropped by stableq (revert %lld,"
					     " patch %lld): %s",
					     revert_id,
					     (long long)sqlite3_column_int64(st, 0),
					     reason ? reason : "");
			if (series_leave_out(qdir, db_col_text(st, 1), note) < 0)
				log_warnx("revert %lld: %s", revert_id,
					  err_msg());
			free(note);
		}
		free(src);
	}
	sqlite3_finalize(st);
	free(qdir);
}

/* The effects of a plan, all in one transaction: states, events, mail. */
static int finish(struct app *app, long long revert_id)
{
	sqlite3_stmt *st;
	long long root = 0, ev;
	char *reason = NULL;
	int ret;

	if ((ret = db_query_int(app->db, &root,
				"SELECT patch_id FROM reverts WHERE id = ?", "i",
				revert_id)) < 0 ||
	    (ret = db_query_text(app->db, &reason,
				 "SELECT reason FROM reverts WHERE id = ?", "i",
				 revert_id)) < 0)
		return ret;
	/* files first: rewriting them is harmless if the transaction fails */
	st = db_prepare(app->db,
			"SELECT i.id, i.patch_text, i.revert_commit, p.subject FROM"
			" revert_items i JOIN patches p ON p.id = i.patch_id"
			" WHERE i.revert_id = ? AND i.action = 'revert' AND"
			" i.done = 0",
			"i", revert_id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		char *sl = slug(db_col_text(st, 3));
		char *name = xstrfmt("revert-%.12s-%s.patch",
				     db_col_text(st, 2), sl);
		free(sl);
		char *path = NULL;
		if (write_queue_patch(app, name, db_col_text(st, 1), &path) == 0)
			db_exec(app->db,
				"UPDATE revert_items SET patch_path = ? WHERE id = ?",
				"ti", path, (long long)sqlite3_column_int64(st, 0));
		else
			log_warnx("revert %lld: %s", revert_id, err_msg());
		free(name);
		free(path);
	}
	sqlite3_finalize(st);

	if ((ret = db_begin(app->db)) < 0)
		goto out;
	enum patch_state rs;
	if ((ret = patch_get_state(app->db, root, &rs)) < 0)
		goto fail;
	if (rs != PS_BROKEN && (ev = flag_locked(app, root, reason, NULL)) < 0) {
		ret = (int)ev;
		goto fail;
	}
	st = db_prepare(app->db,
			"SELECT i.id, i.patch_id, i.action, i.why, i.patch_text,"
			" p.state FROM revert_items i JOIN patches p ON p.id ="
			" i.patch_id WHERE i.revert_id = ? AND i.done = 0 ORDER"
			" BY i.ord",
			"i", revert_id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long item = sqlite3_column_int64(st, 0);
		long long pid = sqlite3_column_int64(st, 1);
		int is_revert = !strcmp(db_col_text(st, 2), "revert");
		const char *why = db_col_text(st, 3);
		char *r = xstrfmt("%s%s%s", reason,
				  pid == root ? "" : "; goes with it: ",
				  pid == root ? "" : why);
		ev = patch_set_state(app->db, pid,
				     is_revert ? PS_REVERTED : PS_DROPPED, r,
				     app->actor);
		if (ev >= 0)
			ev = mail_about(app, pid, ev,
					is_revert ? "reverted" : "dropped",
					is_revert ? "Your patch was reverted from"
						    " the stable branch"
						  : "Your patch was dropped from"
						    " the stable queue",
					r, NULL,
					is_revert ? db_col_text(st, 4) : NULL);
		free(r);
		if (ev < 0 ||
		    db_exec(app->db,
			    "UPDATE revert_items SET done = 1 WHERE id = ?",
			    "i", item) < 0) {
			ret = ev < 0 ? (int)ev : ERR_IO;
			sqlite3_finalize(st);
			goto fail;
		}
	}
	sqlite3_finalize(st);
	if ((ret = db_exec(app->db,
			   "UPDATE reverts SET state = 'done', finished_at ="
			   " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
			   "i", revert_id)) < 0)
		goto fail;
	if ((ev = event_add(app->db, app->actor, "revert", revert_id, "done",
			    "patch %lld and its dependents taken out", root)) < 0 ||
	    (ret = queue_link_dependencies(app->db)) < 0) {
		ret = ev < 0 ? (int)ev : ret;
		goto fail;
	}
	if ((ret = db_commit(app->db)) < 0)
		goto fail;
	log_info("revert %lld: done (patch %lld)", revert_id, root);
	leave_out_of_series(app, revert_id, reason);
	ret = 0;
	goto out;
fail:
	db_rollback(app->db);
out:
	free(reason);
	return ret;
}

static int insert_revert(struct app *app, long long root, const char *reason,
			 const struct plan *p, const char *state,
			 const char *base, const char *chain_tip,
			 long long *revert_id)
{
	int ret = db_exec(app->db,
			  "INSERT INTO reverts (patch_id, state, reason, actor,"
			  " base_commit, chain_tip) VALUES (?, ?, ?, ?, ?, ?)",
			  "itttt" "t", root, state, reason, app->actor, base,
			  chain_tip);
	if (ret < 0)
		return ret;
	*revert_id = db_last_id(app->db);
	for (size_t i = 0; i < p->n; i++) {
		const struct item *it = &p->v[i];
		ret = db_exec(app->db,
			      "INSERT INTO revert_items (revert_id, ord, patch_id,"
			      " action, why, revert_commit, patch_text) VALUES"
			      " (?, ?, ?, ?, ?, NULL, NULL)",
			      "iditt", *revert_id, (int)i, it->id,
			      it->revert ? "revert" : "drop", it->why);
		if (ret < 0)
			return ret;
	}
	return (int)event_add(app->db, app->actor, "revert", *revert_id,
			      state, "patch %lld: %zu patch(es) to take out: %s",
			      root, p->n, reason);
}

int revert_execute(struct app *app, long long patch_id, const char *reason,
		   long long *revert_id)
{
	struct plan p;
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE] = "", chain[REPO_HEX_SIZE] = "";
	char **commits = NULL, **texts = NULL;
	size_t nrev = 0;
	int ret;

	*revert_id = 0;
	if (!reason || !*reason)
		return err_set(ERR_INVALID, "a reason is required");
	if ((ret = revert_resume(app)) < 0)
		return ret;
	if ((ret = plan_build(app, patch_id, &p)) < 0)
		return ret;
	commits = xcalloc(p.n, sizeof(*commits));
	texts = xcalloc(p.n, sizeof(*texts));
	for (size_t i = 0; i < p.n; i++)
		nrev += p.v[i].revert;
	if (nrev) {
		/* The revert chain is made on a side branch first: a conflict
		 * changes nothing, and the stable branch moves in one step. */
		if ((ret = repo_open(&r, app->cfg.tree_dir)) < 0 ||
		    (ret = repo_branch_tip(r, app->cfg.branch, tip)) < 0 ||
		    (ret = repo_set_branch(r, "stableq/revert", tip, NULL)) < 0)
			goto out;
		for (size_t i = 0; i < p.n; i++) {
			char out[REPO_HEX_SIZE];
			if (!p.v[i].revert)
				continue;
			char *msg = revert_message(&p.v[i], reason, NULL);
			ret = repo_revert(r, "stableq/revert",
					  p.v[i].released_commit, msg, "stableq",
					  "stableq@localhost", out);
			free(msg);
			if (ret < 0) {
				err_prefix(ret, "patch %lld: revert of %.12s",
					   p.v[i].id, p.v[i].released_commit);
				goto out;
			}
			commits[i] = xstrdup(out);
			if ((ret = repo_format_patch(r, out, "PATCH", &texts[i])) < 0)
				goto out;
			memcpy(chain, out, sizeof(chain));
		}
	}
	if ((ret = db_begin(app->db)) < 0)
		goto out;
	/* a stored plan (auto_revert = plan) is replaced by the real thing */
	ret = db_exec(app->db,
		      "DELETE FROM revert_items WHERE revert_id IN (SELECT id"
		      " FROM reverts WHERE patch_id = ? AND state = 'planned')",
		      "i", patch_id);
	if (ret >= 0)
		ret = db_exec(app->db,
			      "DELETE FROM reverts WHERE patch_id = ? AND state ="
			      " 'planned'",
			      "i", patch_id);
	if (ret >= 0)
		ret = insert_revert(app, patch_id, reason, &p,
			    nrev ? "applying" : "done", nrev ? tip : NULL,
			    nrev ? chain : NULL, revert_id);
	for (size_t i = 0; ret >= 0 && i < p.n; i++)
		if (commits[i])
			ret = db_exec(app->db,
				      "UPDATE revert_items SET revert_commit = ?,"
				      " patch_text = ? WHERE revert_id = ? AND"
				      " patch_id = ?",
				      "ttii", commits[i], texts[i], *revert_id,
				      p.v[i].id);
	if (ret < 0 || (ret = db_commit(app->db)) < 0) {
		db_rollback(app->db);
		*revert_id = 0;
		goto out;
	}
	if (!nrev) {
		/* drops only: the effects follow in their own transaction */
		ret = db_exec(app->db,
			      "UPDATE reverts SET state = 'applying' WHERE id = ?",
			      "i", *revert_id);
		if (ret >= 0)
			ret = finish(app, *revert_id);
		goto out;
	}
	crash_point("revert-before-branch");
	if ((ret = repo_set_branch(r, app->cfg.branch, chain, tip)) < 0) {
		db_exec(app->db,
			"UPDATE reverts SET state = 'failed' WHERE id = ?", "i",
			*revert_id);
		goto out;
	}
	crash_point("revert-after-branch");
	ret = finish(app, *revert_id);
out:
	for (size_t i = 0; i < p.n; i++) {
		free(commits[i]);
		free(texts[i]);
	}
	free(commits);
	free(texts);
	plan_free(&p);
	repo_free(r);
	return ret < 0 ? ret : 0;
}

int revert_store_plan(struct app *app, long long patch_id, const char *reason)
{
	struct plan p;
	long long id;
	int ret = plan_build(app, patch_id, &p);

	if (ret < 0)
		return ret;
	if ((ret = db_begin(app->db)) < 0)
		goto out;
	ret = insert_revert(app, patch_id, reason, &p, "planned", NULL, NULL,
			    &id);
	if (ret < 0 || (ret = db_commit(app->db)) < 0)
		db_rollback(app->db);
out:
	plan_free(&p);
	return ret < 0 ? ret : 0;
}

int revert_resume(struct app *app)
{
	sqlite3_stmt *st = db_prepare(app->db,
				      "SELECT id, base_commit, chain_tip FROM"
				      " reverts WHERE state = 'applying' ORDER"
				      " BY id",
				      NULL);
	struct repo *r = NULL;
	int ret = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);
		const char *base = db_col_text(st, 1);
		const char *chain = db_col_text(st, 2);
		char tip[REPO_HEX_SIZE];

		if (base && chain) {
			if (!r && (ret = repo_open(&r, app->cfg.tree_dir)) < 0)
				break;
			if ((ret = repo_branch_tip(r, app->cfg.branch, tip)) < 0)
				break;
			if (!strcmp(tip, base)) {
				ret = repo_set_branch(r, app->cfg.branch, chain,
						      base);
			} else if (repo_commit_in_history(r, tip, chain) <= 0) {
				log_warnx("revert %lld: the branch moved since"
					  " it was planned; marked failed",
					  id);
				db_exec(app->db,
					"UPDATE reverts SET state = 'failed'"
					" WHERE id = ?",
					"i", id);
				continue;
			}
			if (ret < 0)
				break;
		}
		log_info("revert %lld: resuming after an interruption", id);
		if ((ret = finish(app, id)) < 0)
			break;
	}
	sqlite3_finalize(st);
	repo_free(r);
	return ret;
}

json_t *revert_json(sqlite3 *db, long long id)
{
	json_t *o = db_row_json(db,
				    "SELECT r.id, r.patch_id, p.subject, r.state,"
				    " r.reason, r.actor, r.base_commit,"
				    " r.chain_tip, r.confirm_candidate_id,"
				    " r.created_at, r.finished_at FROM reverts"
				    " r JOIN patches p ON p.id = r.patch_id"
				    " WHERE r.id = ?",
				    "i", id);
	if (!o) {
		if (err_last() == ERR_NOTFOUND)
			err_set(ERR_NOTFOUND, "revert %lld: no such revert", id);
		return NULL;
	}
	json_object_set_new(o, "items",
			    db_rows_json(db,
					 "SELECT i.ord, i.patch_id, p.subject,"
					 " i.action, i.why, i.revert_commit,"
					 " i.patch_path, i.done FROM revert_items"
					 " i JOIN patches p ON p.id = i.patch_id"
					 " WHERE i.revert_id = ? ORDER BY i.ord",
					 "i", id));
	return o;
}

json_t *revert_list_json(sqlite3 *db)
{
	return db_rows_json(db,
			    "SELECT r.id, r.patch_id, p.subject, r.state,"
			    " r.reason, r.actor, r.confirm_candidate_id,"
			    " r.created_at, r.finished_at, (SELECT COUNT(*)"
			    " FROM revert_items i WHERE i.revert_id = r.id) AS"
			    " items FROM reverts r JOIN patches p ON p.id ="
			    " r.patch_id ORDER BY r.id DESC",
			    NULL);
}

char *revert_patch_text(sqlite3 *db, long long revert_id)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT patch_text FROM revert_items WHERE"
				      " revert_id = ? AND patch_text IS NOT NULL"
				      " ORDER BY ord",
				      "i", revert_id);
	struct strbuf sb = STRBUF_INIT;

	while (st && sqlite3_step(st) == SQLITE_ROW)
		strbuf_addstr(&sb, db_col_text(st, 0));
	sqlite3_finalize(st);
	if (!sb.len) {
		strbuf_release(&sb);
		err_set(ERR_NOTFOUND, "revert %lld: no revert patch (drops only,"
				      " or no such revert)",
			revert_id);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/* ---- override ---- */

int revert_override(struct app *app, long long patch_id, const char *reason)
{
	enum patch_state s;
	long long ev;
	int ret;

	if (!reason || !*reason)
		return err_set(ERR_INVALID, "a reason is required");
	if ((ret = db_begin(app->db)) < 0)
		return ret;
	if ((ret = patch_get_state(app->db, patch_id, &s)) < 0)
		goto fail;
	if (s != PS_HELD && s != PS_CHECKED && s != PS_REJECTED) {
		ret = err_set(ERR_CONFLICT,
			      "patch %lld is %s: only held, checked or rejected"
			      " patches can be overridden",
			      patch_id, patch_state_name(s));
		goto fail;
	}
	char *detail = xstrfmt("overridden by %s: %s", app->actor, reason);
	ret = verdict_add(app->db, patch_id, "fixup", "overridden", detail);
	if (ret >= 0 && s != PS_HELD)
		ret = verdict_add(app->db, patch_id, "human", "accepted", detail);
	free(detail);
	if (ret < 0)
		goto fail;
	if ((ev = patch_set_state(app->db, patch_id, PS_QUEUED, reason,
				  app->actor)) < 0) {
		ret = (int)ev;
		goto fail;
	}
	if ((ev = event_add(app->db, app->actor, "patch", patch_id, "override",
			    "%s", reason)) < 0) {
		ret = (int)ev;
		goto fail;
	}
	return db_commit(app->db);
fail:
	db_rollback(app->db);
	return ret;
}

/* ---- release ---- */

int release_queue(struct app *app, int force, size_t *n)
{
	long long *ids = NULL, ok = 0;
	size_t nids = 0;
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE], parent[REPO_HEX_SIZE], tree[REPO_HEX_SIZE];
	char **commits = NULL;
	int ret;

	*n = 0;
	if ((ret = release_resume(app)) < 0)
		return ret;
	if ((ret = queue_ids(app->db, PS_QUEUED, &ids, &nids)) < 0)
		return ret;
	if (!nids) {
		free(ids);
		return 0;
	}
	if (!force &&
	    db_query_int(app->db, &ok,
			 "SELECT id FROM candidates WHERE purpose IN ('queue',"
			 "'confirm') AND verdict = 'pass' AND patch_ids = (SELECT"
			 " json_group_array(id) FROM (SELECT id FROM patches WHERE"
			 " state = 'queued' ORDER BY queue_pos)) ORDER BY id DESC"
			 " LIMIT 1",
			 NULL) < 0) {
		free(ids);
		return err_set(ERR_CONFLICT,
			       "the %zu queued patches have not passed a"
			       " candidate together: run `stableq candidate`"
			       " first",
			       nids);
	}
	commits = xcalloc(nids, sizeof(*commits));
	if ((ret = repo_open(&r, app->cfg.tree_dir)) < 0 ||
	    (ret = repo_branch_tip(r, app->cfg.branch, tip)) < 0 ||
	    (ret = repo_tree_of(r, tip, tree)) < 0)
		goto out;
	memcpy(parent, tip, sizeof(parent));
	for (size_t i = 0; i < nids; i++) {
		sqlite3_stmt *st = db_prepare(app->db,
					      "SELECT diff, message, author_name,"
					      " author_email, date FROM patches"
					      " WHERE id = ?",
					      "i", ids[i]);
		struct repo_apply_result res = { 0 };
		char next[REPO_HEX_SIZE], c[REPO_HEX_SIZE];

		if (!st || sqlite3_step(st) != SQLITE_ROW) {
			sqlite3_finalize(st);
			ret = ERR_IO;
			goto out;
		}
		ret = repo_apply(r, tree, db_col_text(st, 0), next, &res);
		if (ret >= 0 && res.status != REPO_APPLY_CLEAN)
			ret = err_set(ERR_CONFLICT, "patch %lld does not apply: %s",
				      ids[i], res.detail ? res.detail : "?");
		repo_apply_result_release(&res);
		if (ret >= 0)
			ret = repo_commit(r, parent, next, db_col_text(st, 2),
					  db_col_text(st, 3), db_col_text(st, 4),
					  db_col_text(st, 1), c);
		sqlite3_finalize(st);
		if (ret < 0)
			goto out;
		commits[i] = xstrdup(c);
		memcpy(parent, c, sizeof(parent));
		memcpy(tree, next, sizeof(tree));
	}
	/* The store first: a crash before the branch moves is completed by
	 * release_resume(), which moves the branch to the recorded commits. */
	if ((ret = db_begin(app->db)) < 0)
		goto out;
	for (size_t i = 0; i < nids; i++) {
		long long ev = patch_set_state(app->db, ids[i], PS_RELEASED,
					       commits[i], app->actor);
		if (ev < 0 ||
		    db_exec(app->db,
			    "UPDATE patches SET released_commit = ? WHERE id = ?",
			    "ti", commits[i], ids[i]) < 0) {
			ret = ev < 0 ? (int)ev : ERR_IO;
			db_rollback(app->db);
			goto out;
		}
	}
	if ((ret = queue_link_dependencies(app->db)) < 0 ||
	    (ret = (int)event_add(app->db, app->actor, "branch", 0, "released",
				  "%zu patches onto %s: %.12s..%.12s", nids,
				  app->cfg.branch, tip, parent)) < 0 ||
	    (ret = db_commit(app->db)) < 0) {
		db_rollback(app->db);
		goto out;
	}
	crash_point("release-before-branch");
	if ((ret = repo_set_branch(r, app->cfg.branch, parent, tip)) < 0)
		goto out;
	*n = nids;
	log_info("released %zu patches onto %s (%.12s)", nids, app->cfg.branch,
		 parent);
out:
	for (size_t i = 0; commits && i < nids; i++)
		free(commits[i]);
	free(commits);
	free(ids);
	repo_free(r);
	return ret < 0 ? ret : 0;
}

int release_resume(struct app *app)
{
	char *newest = NULL;
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE];
	int ret;

	if (db_query_text(app->db, &newest,
			  "SELECT released_commit FROM patches WHERE state IN"
			  " ('released','broken') AND released_commit IS NOT NULL"
			  " ORDER BY queue_pos DESC LIMIT 1",
			  NULL) < 0 ||
	    !newest)
		return 0;
	if ((ret = repo_open(&r, app->cfg.tree_dir)) < 0 ||
	    (ret = repo_branch_tip(r, app->cfg.branch, tip)) < 0)
		goto out;
	/* released in the store but the branch never moved: move it now */
	if (repo_commit_in_history(r, tip, newest) == 0 &&
	    repo_commit_in_history(r, newest, tip) > 0) {
		log_info("release: completing an interrupted release (%.12s)",
			 newest);
		ret = repo_set_branch(r, app->cfg.branch, newest, tip);
	}
out:
	free(newest);
	repo_free(r);
	return ret < 0 ? ret : 0;
}
