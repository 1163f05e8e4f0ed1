/* revert.c: revert first: a broken patch and its dependents dropped from the queue or reverted on the branch, then confirmed. */
#include "revert-int.h"
#include "file.h"
#include "series.h"
#include "candidate.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "branch.h"
#include "source.h"
#include "compose.h"
#include "outbox.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"

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
static int write_queue_patch(struct branch_ctx *bc, const char *name,
			     const char *text, char **path_out)
{
	char *path = xstrfmt("%s/%s", bc->cfg.queue_dir, name);
	int ret = write_file_atomic(path, text, strlen(text));

	if (ret == 0 && (ret = series_append(bc->cfg.queue_dir, name)) > 0)
		ret = 0;
	*path_out = ret == 0 ? path : NULL;
	if (ret < 0)
		free(path);
	return ret;
}

/*
 * The dropped patches that came from the configured queue directory are
 * left out of its series file too (commented out, with why), so that the
 * directory is the queue stableq keeps. After the commit: the store is
 * what counts, and a failure here is only logged.
 */
static void leave_out_of_series(struct branch_ctx *bc, long long revert_id,
				const char *reason)
{
	char *qdir = bc->cfg.queue_dir && *bc->cfg.queue_dir
			     ? realpath(bc->cfg.queue_dir, NULL)
			     : NULL;
	sqlite3_stmt *st;

	if (!qdir)
		return;
	st = db_prepare(bc->db,
			"SELECT patch_id FROM revert_items WHERE revert_id = ?"
			" AND action = 'drop' ORDER BY ord",
			"i", revert_id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long pid = sqlite3_column_int64(st, 0), source = 0;
		char *file = NULL, *dir = NULL, *src = NULL;
		if (queue_patch_file(bc->db, pid, &file, &source) == 0 &&
		    file && source_series_path(bc->db, source, &dir) == 0)
			src = realpath(dir, NULL);
		err_clear();
		if (src && !strcmp(src, qdir)) {
			char *note =
				xstrfmt("dropped by stableq (revert %lld,"
					" patch %lld): %s",
					revert_id, pid, reason ? reason : "");
			if (series_leave_out(qdir, file, note) < 0)
				log_warnx("revert %lld: %s", revert_id,
					  err_msg());
			free(note);
		}
		free(src);
		free(dir);
		free(file);
	}
	sqlite3_finalize(st);
	free(qdir);
}

/* The effects of a plan, all in one transaction: states, events, mail. */
static int finish(struct branch_ctx *bc, long long revert_id)
{
	sqlite3_stmt *st;
	long long root = 0, ev;
	char *reason = NULL;
	int ret;

	if ((ret = db_query_int(bc->db, &root,
				"SELECT patch_id FROM reverts WHERE id = ?",
				"i", revert_id)) < 0 ||
	    (ret = db_query_text(bc->db, &reason,
				 "SELECT reason FROM reverts WHERE id = ?", "i",
				 revert_id)) < 0)
		return ret;
	/* files first: rewriting them is harmless if the transaction fails */
	st = db_prepare(bc->db,
			"SELECT id, patch_text, revert_commit, patch_id FROM"
			" revert_items WHERE revert_id = ? AND action ="
			" 'revert' AND done = 0",
			"i", revert_id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		char *subject = NULL;
		if (queue_patch_subject(bc->db, sqlite3_column_int64(st, 3),
					&subject, NULL) < 0)
			err_clear();
		char *sl = slug(subject);
		free(subject);
		char *name = xstrfmt("revert-%.12s-%s.patch",
				     db_col_text(st, 2), sl);
		free(sl);
		char *path = NULL;
		if (write_queue_patch(bc, name, db_col_text(st, 1), &path) <
			    0 ||
		    db_exec(bc->db,
			    "UPDATE revert_items SET patch_path = ? WHERE id = "
			    "?",
			    "ti", path,
			    (long long)sqlite3_column_int64(st, 0)) < 0)
			log_warnx("revert %lld: %s", revert_id, err_msg());
		free(name);
		free(path);
	}
	sqlite3_finalize(st);

	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	enum patch_state rs;
	if ((ret = queue_get_state(bc->db, root, &rs)) < 0)
		goto fail;
	/* a maintainer's (or a trusted automatic) revert of a patch not
	 * flagged yet: the flag is theirs */
	if (rs != PS_BROKEN &&
	    (ev = flag_patch_locked(bc, root, reason, NULL, FLAG_TRUSTED)) <
		    0) {
		ret = (int)ev;
		goto fail;
	}
	st = db_prepare(bc->db,
			"SELECT id, patch_id, action, why, patch_text FROM"
			" revert_items WHERE revert_id = ? AND done = 0 ORDER"
			" BY ord",
			"i", revert_id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long item = sqlite3_column_int64(st, 0);
		long long pid = sqlite3_column_int64(st, 1);
		int is_revert = !strcmp(db_col_text(st, 2), "revert");
		const char *why = db_col_text(st, 3);
		char *r = xstrfmt("%s%s%s", reason,
				  pid == root ? "" : "; goes with it: ",
				  pid == root ? "" : why);
		ev = queue_set_state(bc->db, pid,
				     is_revert ? PS_REVERTED : PS_DROPPED, r,
				     bc->actor);
		/* the branch, as the stable maintainers' mail names it */
		char *what =
			is_revert ? xstrfmt("Your patch was reverted from the"
					    " %s-stable branch (%s)",
					    bc->cfg.branch_key, bc->cfg.branch)
				  : xstrfmt("Your patch was dropped from the"
					    " %s-stable queue",
					    bc->cfg.branch_key);
		if (ev >= 0)
			ev = queue_notify(
				bc->db, &bc->cfg,
				&(struct notice){
					.patch_id = pid,
					.event_id = ev,
					.kind = is_revert ? "reverted"
							  : "dropped",
					.what = what,
					.why = r,
					.revert_patch =
						is_revert ? db_col_text(st, 4)
							  : NULL,
				});
		free(what);
		free(r);
		if (ev < 0 ||
		    db_exec(bc->db,
			    "UPDATE revert_items SET done = 1 WHERE id = ?",
			    "i", item) < 0) {
			ret = ev < 0 ? (int)ev : ERR_IO;
			sqlite3_finalize(st);
			goto fail;
		}
	}
	sqlite3_finalize(st);
	if ((ret = db_exec(bc->db,
			   "UPDATE reverts SET state = 'done', finished_at ="
			   " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
			   "i", revert_id)) < 0)
		goto fail;
	if ((ev = event_add(bc->db, bc->actor, "revert", revert_id, "done",
			    "patch %lld and its dependents taken out", root)) <
		    0 ||
	    (ret = queue_link_dependencies(bc->db)) < 0) {
		ret = ev < 0 ? (int)ev : ret;
		goto fail;
	}
	ret = 0;
fail:
	if ((ret = db_end(bc->db, ret)) < 0)
		goto out;
	log_info("revert %lld: done (patch %lld)", revert_id, root);
	leave_out_of_series(bc, revert_id, reason);
out:
	free(reason);
	return ret;
}

int insert_revert(struct branch_ctx *bc, long long root, const char *reason,
		  const struct plan *p, const char *state, const char *base,
		  const char *chain_tip, int automatic, long long *revert_id)
{
	int ret = db_exec(bc->db,
			  "INSERT INTO reverts (patch_id, state, reason, actor,"
			  " base_commit, chain_tip, automatic) VALUES (?, ?, ?,"
			  " ?, ?, ?, ?)",
			  "itttt"
			  "ti",
			  root, state, reason, bc->actor, base, chain_tip,
			  (long long)(automatic != 0));
	if (ret < 0)
		return ret;
	*revert_id = db_last_id(bc->db);
	for (size_t i = 0; i < p->n; i++) {
		const struct item *it = &p->v[i];
		ret = db_exec(
			bc->db,
			"INSERT INTO revert_items (revert_id, ord, patch_id,"
			" action, why, revert_commit, patch_text) VALUES"
			" (?, ?, ?, ?, ?, NULL, NULL)",
			"iditt", *revert_id, (int)i, it->id,
			it->revert ? "revert" : "drop", it->why);
		if (ret < 0)
			return ret;
	}
	return (int)event_add(bc->db, bc->actor, "revert", *revert_id, state,
			      "patch %lld: %zu patch(es) to take out: %s", root,
			      p->n, reason);
}

static int execute(struct branch_ctx *bc, long long patch_id,
		   const char *reason, int automatic, long long *revert_id)
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
	if ((ret = queue_follow_patch(bc, patch_id)) < 0 ||
	    (ret = revert_resume(bc)) < 0)
		return ret;
	if ((ret = plan_build(bc, patch_id, &p)) < 0)
		return ret;
	commits = xcalloc(p.n, sizeof(*commits));
	texts = xcalloc(p.n, sizeof(*texts));
	for (size_t i = 0; i < p.n; i++)
		nrev += p.v[i].revert;
	if (nrev) {
		/* The revert chain is made on a side branch first: a conflict
		 * changes nothing, and the stable branch moves in one step. */
		if ((ret = repo_open(&r, bc->cfg.tree_dir)) < 0 ||
		    (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0 ||
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
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	/* a stored plan (auto_revert = plan) is replaced by the real thing */
	ret = db_exec(bc->db,
		      "DELETE FROM revert_items WHERE revert_id IN (SELECT id"
		      " FROM reverts WHERE patch_id = ? AND state = 'planned')",
		      "i", patch_id);
	if (ret >= 0)
		ret = db_exec(
			bc->db,
			"DELETE FROM reverts WHERE patch_id = ? AND state ="
			" 'planned'",
			"i", patch_id);
	if (ret >= 0)
		ret = insert_revert(
			bc, patch_id, reason, &p, nrev ? "applying" : "done",
			nrev ? tip : NULL, nrev ? chain : NULL, automatic,
			revert_id);
	for (size_t i = 0; ret >= 0 && i < p.n; i++)
		if (commits[i])
			ret = db_exec(
				bc->db,
				"UPDATE revert_items SET revert_commit = ?,"
				" patch_text = ? WHERE revert_id = ? AND"
				" patch_id = ?",
				"ttii", commits[i], texts[i], *revert_id,
				p.v[i].id);
	if ((ret = db_end(bc->db, ret)) < 0) {
		*revert_id = 0;
		goto out;
	}
	if (!nrev) {
		/* drops only: the effects follow in their own transaction */
		ret = db_exec(
			bc->db,
			"UPDATE reverts SET state = 'applying' WHERE id = ?",
			"i", *revert_id);
		if (ret >= 0)
			ret = finish(bc, *revert_id);
		goto out;
	}
	crash_point("revert-before-branch");
	if ((ret = repo_set_branch(r, bc->cfg.branch, chain, tip)) < 0) {
		if (db_exec(bc->db,
			    "UPDATE reverts SET state = 'failed' WHERE id = ?",
			    "i", *revert_id) < 0)
			log_warnx("revert %lld: cannot mark it failed: %s",
				  *revert_id, err_msg());
		goto out;
	}
	crash_point("revert-after-branch");
	ret = finish(bc, *revert_id);
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

int revert_resume(struct branch_ctx *bc)
{
	char *ids = queue_branch_patches(bc->db, bc->branch_id);
	sqlite3_stmt *st =
		ids ? db_prepare(bc->db,
				 "SELECT id, base_commit, chain_tip"
				 " FROM reverts WHERE state ="
				 " 'applying' AND patch_id IN (SELECT"
				 " value FROM json_each(?)) ORDER BY"
				 " id",
				 "t", ids)
		    : NULL;
	struct repo *r = NULL;
	int ret = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);
		const char *base = db_col_text(st, 1);
		const char *chain = db_col_text(st, 2);
		char tip[REPO_HEX_SIZE];

		if (base && chain) {
			if (!r && (ret = repo_open(&r, bc->cfg.tree_dir)) < 0)
				break;
			if ((ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0)
				break;
			if (!strcmp(tip, base)) {
				ret = repo_set_branch(r, bc->cfg.branch, chain,
						      base);
			} else if (repo_commit_in_history(r, tip, chain) <= 0) {
				log_warnx("revert %lld: the branch moved since"
					  " it was planned; marked failed",
					  id);
				if ((ret = db_exec(bc->db,
						   "UPDATE reverts SET state ="
						   " 'failed' WHERE id = ?",
						   "i", id)) < 0)
					break;
				continue;
			}
			if (ret < 0)
				break;
		}
		log_info("revert %lld: resuming after an interruption", id);
		if ((ret = finish(bc, id)) < 0)
			break;
	}
	sqlite3_finalize(st);
	free(ids);
	repo_free(r);
	return ret;
}

/* A revert's row: "branch" and "subject" from its culprit patch. */
static json_t *revert_shown(sqlite3 *db, json_t *rows)
{
	if (rows && (queue_fill_branch(db, json_is_array(rows) ? rows : NULL,
				       "patch_id", "branch") < 0 ||
		     branch_fill(db, rows, "branch", BRANCH_KEY) < 0 ||
		     queue_fill_subject(db, rows, "subject") < 0)) {
		json_decref(rows);
		return NULL;
	}
	return rows;
}

json_t *revert_json(sqlite3 *db, long long id)
{
	json_t *o =
		db_object_json(db, "revert", id,
			       "SELECT id, patch_id, patch_id AS branch,"
			       " patch_id AS subject, state, reason, actor,"
			       " base_commit, chain_tip,"
			       " confirm_candidate_id, created_at,"
			       " finished_at FROM reverts WHERE id = ?",
			       "items",
			       "SELECT ord, patch_id, patch_id AS subject,"
			       " action, why, revert_commit, patch_path, done"
			       " FROM revert_items WHERE revert_id = ? ORDER"
			       " BY ord");
	json_t *one = json_array();

	if (!o) {
		json_decref(one);
		return NULL;
	}
	json_array_append(one, o);
	if (!revert_shown(db, one) ||
	    queue_fill_subject(db, json_object_get(o, "items"), "subject") <
		    0) {
		json_decref(o);
		return NULL;
	}
	json_decref(one);
	return o;
}

json_t *revert_list_json(sqlite3 *db)
{
	return revert_shown(
		db, db_rows_json(db,
				 "SELECT r.id, r.patch_id, r.patch_id AS"
				 " branch, r.patch_id AS subject,"
				 " r.state, r.reason, r.actor,"
				 " r.confirm_candidate_id, r.created_at,"
				 " r.finished_at, (SELECT COUNT(*) FROM"
				 " revert_items i WHERE i.revert_id ="
				 " r.id) AS items FROM reverts r ORDER BY"
				 " r.id DESC",
				 NULL));
}

char *revert_patch_text(sqlite3 *db, long long revert_id)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT patch_text FROM revert_items WHERE"
				      " revert_id = ? AND patch_text IS NOT NULL"
				      " ORDER BY ord",
				      "i", revert_id);
	struct strbuf sb = STRBUF_INIT;
	int ret = st ? 0 : ERR_IO;

	while (st && (ret = db_step(st)) > 0)
		strbuf_addstr(&sb, db_col_text(st, 0));
	sqlite3_finalize(st);
	if (ret < 0) { /* a database error, not a missing patch */
		strbuf_release(&sb);
		return NULL;
	}
	if (!sb.len) {
		strbuf_release(&sb);
		err_set(ERR_NOTFOUND, "revert %lld: no revert patch (drops only,"
				      " or no such revert)",
			revert_id);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

/* ---- confirming: the branch and what is left of the queue pass again ---- */

int revert_run(struct branch_ctx *bc, long long patch_id, const char *reason,
	       int confirm, long long *revert_id, long long *confirm_id)
{
	return revert_run_as(bc, patch_id, reason, confirm, 0, revert_id,
			     confirm_id);
}

int revert_run_as(struct branch_ctx *bc, long long patch_id,
		  const char *reason, int confirm, int automatic,
		  long long *revert_id, long long *confirm_id)
{
	long long cid;
	int ret;

	*confirm_id = 0;
	if ((ret = execute(bc, patch_id, reason, automatic, revert_id)) < 0)
		return ret;
	if (!confirm)
		return 0;
	if ((ret = db_begin(bc->db)) < 0)
		return ret;
	cid = candidate_create_on(bc->db, bc->branch_id, NULL, 0, 0, "confirm",
				  0, bc->actor);
	ret = cid < 0 ? (int)cid
		      : db_exec(bc->db,
				"UPDATE reverts SET confirm_candidate_id = ?"
				" WHERE id = ?",
				"ii", cid, *revert_id);
	if (ret >= 0)
		ret = (int)event_add(bc->db, bc->actor, "revert", *revert_id,
				     "confirming", "candidate %lld confirms it",
				     cid);
	if ((ret = db_end(bc->db, ret)) < 0)
		return ret;
	*confirm_id = cid;
	return 0;
}

int revert_confirm(struct branch_ctx *bc, long long revert_id,
		   long long *confirm_id,
		   void (*progress)(const char *line, void *ctx), void *ctx)
{
	long long cid = 0;
	enum cand_verdict v;
	int ok, ret;

	*confirm_id = 0;
	if ((ret = db_query_int(bc->db, &cid,
				"SELECT confirm_candidate_id FROM reverts WHERE"
				" id = ? AND confirm_candidate_id IS NOT NULL",
				"i", revert_id)) == ERR_NOTFOUND)
		return err_set(ERR_NOTFOUND,
			       "revert %lld: no such revert, or it has no"
			       " confirmation candidate",
			       revert_id);
	if (ret < 0)
		return ret;
	*confirm_id = cid;
	if ((ret = candidate_follow(bc, cid)) < 0)
		return ret;
	v = candidate_verdict_of(bc->db, cid);
	if (v == CV_NONE) {
		/* not run yet, or interrupted: run it now */
		if ((ret = candidate_run(bc, cid, 1, progress, ctx)) < 0)
			return ret;
		v = candidate_verdict_of(bc->db, cid);
	}
	ok = v == CV_PASS;
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	ret = db_exec(bc->db,
		      "UPDATE reverts SET state = ? WHERE id = ? AND state"
		      " IN ('done','confirmed')",
		      "ti", ok ? "confirmed" : "done", revert_id);
	if (ret >= 0)
		ret = (int)event_add(
			bc->db, bc->actor, "revert", revert_id,
			ok ? "confirmed" : "unconfirmed", "candidate %lld: %s",
			cid, v ? candidate_verdict_name(v) : "no verdict");
	if ((ret = db_end(bc->db, ret)) < 0)
		goto out;
	log_info("revert %lld: candidate %lld: %s", revert_id, cid,
		 ok ? "confirmed" : v ? candidate_verdict_name(v) : "no verdict");
	ret = ok;
out:
	return ret;
}

/* The first row sql finds for the patches ids (a JSON array text, taken). */
static int first_of(sqlite3 *db, char *ids, const char *sql, long long *id)
{
	int ret = ids ? db_query_int(db, id, sql, "t", ids) : ERR_IO;

	free(ids);
	return ret == 0;
}

int revert_confirm_due(struct branch_ctx *bc, long long *revert_id)
{
	/* a confirmation candidate whose outcome the revert has not recorded */
	sqlite3_stmt *st;
	char *ids = queue_branch_patches(bc->db, bc->branch_id);
	int found = 0;

	st = ids ? db_prepare(bc->db,
			      "SELECT id FROM reverts WHERE patch_id IN (SELECT"
			      " value FROM json_each(?)) AND state = 'done' AND"
			      " confirm_candidate_id IS NOT NULL ORDER BY id",
			      "t", ids)
		 : NULL;
	while (!found && st && sqlite3_step(st) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(st, 0);
		if (event_happened(bc->db, "revert", id, "confirmed",
				   "unconfirmed") == 0) {
			*revert_id = id;
			found = 1;
		}
	}
	sqlite3_finalize(st);
	free(ids);
	return found;
}

int revert_first_trusted(struct branch_ctx *bc, const char *sql,
			 long long *id)
{
	char *ids = queue_state_ids(bc->db, bc->branch_id, PS_BROKEN);
	sqlite3_stmt *st = ids ? db_prepare(bc->db, sql, "t", ids) : NULL;
	int found = 0, t;

	while (!found && st && db_step(st) > 0) {
		long long p = sqlite3_column_int64(st, 0);
		if ((t = flag_trust_of(bc->db, p)) == FLAG_TRUSTED) {
			*id = p;
			found = 1;
		} else if (t < 0) {
			break;
		}
	}
	sqlite3_finalize(st);
	free(ids);
	return found;
}

int revert_due(struct branch_ctx *bc, long long *id)
{
	return !strcmp(bc->cfg.auto_revert, "yes") &&
	       revert_first_trusted(
		       bc,
		       "SELECT value FROM json_each(?) WHERE NOT EXISTS"
		       " (SELECT 1 FROM reverts r WHERE r.patch_id = value"
		       " AND r.state != 'failed') ORDER BY value",
		       id);
}

int revert_auto_patches_today(struct branch_ctx *bc, long long *n)
{
	char *ids = queue_branch_patches(bc->db, bc->branch_id);
	int ret = ids ? db_query_int(bc->db, n,
				     "SELECT count(*) FROM revert_items i JOIN"
				     " reverts r ON r.id = i.revert_id WHERE"
				     " r.automatic = 1 AND r.state IN"
				     " ('applying','done','confirmed') AND"
				     " r.created_at >="
				     " strftime('%Y-%m-%dT00:00:00Z','now') AND"
				     " r.patch_id IN (SELECT value FROM"
				     " json_each(?))",
				     "t", ids)
		      : ERR_IO;

	free(ids);
	return ret;
}

int revert_plan_due(struct branch_ctx *bc, long long *id)
{
	return !strcmp(bc->cfg.auto_revert, "plan") &&
	       first_of(bc->db,
			queue_state_ids(bc->db, bc->branch_id, PS_BROKEN),
			"SELECT value FROM json_each(?) WHERE NOT EXISTS"
			" (SELECT 1 FROM reverts r WHERE r.patch_id = value)"
			" ORDER BY value LIMIT 1",
			id);
}

int revert_resume_due(struct branch_ctx *bc, long long *id)
{
	return first_of(bc->db, queue_branch_patches(bc->db, bc->branch_id),
			"SELECT id FROM reverts WHERE patch_id IN (SELECT value"
			" FROM json_each(?)) AND state = 'applying' ORDER BY id"
			" LIMIT 1",
			id);
}

json_t *revert_patch_ids(sqlite3 *db, const char *ids)
{
	return db_map_of(
		db_rows_json(db,
			     "SELECT id, patch_id FROM reverts WHERE id IN"
			     " (SELECT value FROM json_each(?))",
			     "t", ids));
}

int revert_exists(sqlite3 *db, long long id)
{
	long long one;

	return db_query_int(db, &one, "SELECT 1 FROM reverts WHERE id = ?", "i",
			    id);
}

json_t *revert_items_of_json(sqlite3 *db, long long patch_id)
{
	return db_rows_json(db,
			    "SELECT r.id, r.state, r.reason, r.actor,"
			    " r.created_at, r.finished_at, i.action, i.why,"
			    " i.revert_commit, r.patch_id AS culprit_patch_id"
			    " FROM revert_items i JOIN reverts r ON r.id ="
			    " i.revert_id WHERE i.patch_id = ? ORDER BY r.id",
			    "i", patch_id);
}
