/* rc-release.c: `stableq release` of a branch with a review cycle: the open rc's frozen set, checked and released in one transaction. */
#include "rc-int.h"
#include "candidate.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "log.h"
#include "mailhdr.h"
#include "queue.h"
#include "release.h"
#include "repo.h"
#include "sha256.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void rc_release_free(struct rc_release *out)
{
	if (!out)
		return;
	free(out->version);
	free(out->rc);
	free(out->next);
	memset(out, 0, sizeof(*out));
}

/*
 * A release the store recorded whose branch never moved (a crash between
 * the commit and the ref): the branch goes to its version bump, the tag is
 * made.
 */
static int rc_resume(struct branch_ctx *bc, struct repo *r)
{
	json_t *row = db_row_json(bc->db,
				  "SELECT version, release_commit FROM rcs WHERE"
				  " branch_id = ? AND state = 'released' AND"
				  " release_commit IS NOT NULL ORDER BY id DESC"
				  " LIMIT 1",
				  "i", bc->branch_id);
	const char *bump = json_string_value(json_object_get(row, "release_commit"));
	const char *version = json_string_value(json_object_get(row, "version"));
	char tip[REPO_HEX_SIZE];
	int ret = 0;

	err_clear();
	if (!bump || (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0)
		goto out;
	if (strcmp(tip, bump) && repo_commit_in_history(r, bump, tip) > 0) {
		size_t n = strcspn(version, "-");
		char *tag = xstrfmt("v%.*s", (int)n, version);
		char *msg = xstrfmt("Linux %.*s\n", (int)n, version);
		log_info("release: completing an interrupted release (%s)", tag);
		if ((ret = repo_set_branch(r, bc->cfg.branch, bump, tip)) >= 0 &&
		    repo_tag_create(r, tag, bump, "stableq",
				    "stableq@localhost", msg, 0) == ERR_EXISTS)
			err_clear();
		free(tag);
		free(msg);
	}
out:
	json_decref(row);
	return ret < 0 ? ret : 0;
}

/* The rc's set as it was sent. */
struct frozen {
	long long id, deadline;
	char *version, *base;
	int number; /* N of -rcN */
	long long *ids;
	char **hash;
	size_t n;
};

static void frozen_release(struct frozen *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->hash[i]);
	free(f->hash);
	free(f->ids);
	free(f->version);
	free(f->base);
	memset(f, 0, sizeof(*f));
}

static int frozen_load(sqlite3 *db, long long rc, struct frozen *f)
{
	json_t *row = db_row_json(db,
				  "SELECT version, deadline FROM rcs WHERE id = ?",
				  "i", rc);
	sqlite3_stmt *st;
	const char *v, *dash;
	int ret = 0;

	memset(f, 0, sizeof(*f));
	if (!row)
		return err_last();
	f->id = rc;
	v = json_string_value(json_object_get(row, "version"));
	f->version = xstrdup(v ? v : "?");
	dash = strstr(f->version, "-rc");
	f->base = xstrndup(f->version, dash ? (size_t)(dash - f->version)
					    : strlen(f->version));
	f->number = dash ? atoi(dash + 3) : 0;
	f->deadline = json_integer_value(json_object_get(row, "deadline"));
	json_decref(row);
	st = db_prepare(db,
			"SELECT patch_id, diff_hash FROM rc_patches WHERE rc_id"
			" = ? ORDER BY pos",
			"i", rc);
	if (!st)
		return ERR_IO;
	while ((ret = db_step(st)) > 0) {
		f->ids = xrealloc(f->ids, (f->n + 1) * sizeof(*f->ids));
		f->hash = xrealloc(f->hash, (f->n + 1) * sizeof(*f->hash));
		f->ids[f->n] = sqlite3_column_int64(st, 0);
		f->hash[f->n] = db_col_text(st, 1) ? xstrdup(db_col_text(st, 1))
						   : NULL;
		f->n++;
	}
	sqlite3_finalize(st);
	return ret < 0 ? ret : 0;
}

/* The queued patches of the branch that are not in the rc. */
static size_t waiting_count(sqlite3 *db, long long branch,
			    const struct frozen *f)
{
	long long *q = NULL;
	size_t nq = 0, w = 0;

	if (queue_ids(db, branch, PS_QUEUED, &q, &nq) < 0) {
		err_clear();
		return 0;
	}
	for (size_t i = 0; i < nq; i++) {
		size_t k = 0;
		while (k < f->n && f->ids[k] != q[i])
			k++;
		w += k == f->n;
	}
	free(q);
	return w;
}

/* "; 4 patches queued after 6.1.193-rc3 wait for -rc4" (or ""). */
static char *waiting_note(size_t waiting, const struct frozen *f,
			  const char *next)
{
	if (!waiting)
		return xstrdup("");
	return xstrfmt("; %zu patch%s queued after %s wait%s for %s", waiting,
		       waiting == 1 ? "" : "es", f->version,
		       waiting == 1 ? "s" : "", next);
}

/* Why the rc may not be released now (inside the transaction): 0 or negative. */
static int frozen_check(struct branch_ctx *bc, const struct frozen *f,
			int force, const char *note)
{
	char *why = NULL;
	int ret = 0;

	if ((long long)time(NULL) < f->deadline) {
		struct strbuf d = STRBUF_INIT;
		rfc5322_date(&d, (time_t)f->deadline);
		ret = err_set(ERR_CONFLICT,
			      "the review window of %s is open until %s (rc"
			      " %lld): release after it%s",
			      f->version, d.buf, f->id, note);
		strbuf_release(&d);
		return ret;
	}
	for (size_t i = 0; i < f->n; i++) {
		json_t *pc = queue_patch_content_json(bc->db, f->ids[i]);
		const char *diff = queue_field(pc, "diff");
		const char *subject = queue_field(pc, "subject");
		char now[SHA256_HEX_SIZE];
		enum patch_state ps;

		if (!pc || (ret = queue_get_state(bc->db, f->ids[i], &ps)) < 0) {
			ret = err_set(ERR_CONFLICT,
				      "patch %lld of %s is no longer stored:"
				      " send the next rc (stableq rc)",
				      f->ids[i], f->version);
			json_decref(pc);
			return ret;
		}
		sha256_hex(diff ? diff : "", diff ? strlen(diff) : 0, now);
		if (ps == PS_HELD)
			ret = err_set(ERR_CONFLICT,
				      "patch %lld (\"%s\") of %s is held: send"
				      " the next rc without it (stableq rc) or"
				      " override it",
				      f->ids[i], subject ? subject : "?",
				      f->version);
		else if (ps != PS_QUEUED)
			ret = err_set(ERR_CONFLICT,
				      "patch %lld (\"%s\") of %s is %s now: send"
				      " the next rc (stableq rc)",
				      f->ids[i], subject ? subject : "?",
				      f->version, queue_state_name(ps));
		else if (!f->hash[i] || strcmp(f->hash[i], now))
			ret = err_set(ERR_CONFLICT,
				      "patch %lld (\"%s\") was edited after %s"
				      " was sent (its diff is not the one"
				      " reviewed): the rc is stale; send the"
				      " next rc (stableq rc)",
				      f->ids[i], subject ? subject : "?",
				      f->version);
		json_decref(pc);
		if (ret < 0)
			return ret;
	}
	if ((ret = rc_first_hold(bc->db, f->id, &why)) > 0) {
		ret = err_set(ERR_CONFLICT,
			      "%s holds the release of %s: the maintainer"
			      " decides (stableq rc override --reason TEXT, or"
			      " the next rc)",
			      why, f->version);
		free(why);
		return ret;
	}
	if (ret < 0)
		return ret;
	if (!force) {
		json_t *a = json_array();
		char *ids;
		long long ok = 0;
		for (size_t i = 0; i < f->n; i++)
			json_array_append_new(a, json_integer(f->ids[i]));
		ids = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		ret = candidate_with_patches(bc->db, bc->branch_id, ids, 1, &ok);
		free(ids);
		if (ret < 0)
			return err_set(ERR_CONFLICT,
				       "the %zu patches of %s have not passed a"
				       " candidate together: run `stableq"
				       " candidate` first (or --force)",
				       f->n, f->version);
	}
	return 0;
}

/* The set as commits on the branch's tip, then "Linux 6.1.193". */
static int frozen_commits(struct branch_ctx *bc, struct repo *r,
			  const struct frozen *f, const char *tip,
			  char ***commits, char bump[REPO_HEX_SIZE])
{
	char **msgs = xcalloc(f->n + 1, sizeof(*msgs));
	char last[REPO_HEX_SIZE];
	int ret = 0;

	for (size_t i = 0; i < f->n && ret >= 0; i++) {
		json_t *p = queue_patch_json(bc->db, f->ids[i], 1);
		struct strbuf sb = STRBUF_INIT;
		if (!p) {
			ret = err_last() ? err_last() : ERR_IO;
			break;
		}
		release_message(&sb, p, bc->cfg.release_signoff);
		msgs[i] = strbuf_detach(&sb, NULL);
		json_decref(p);
	}
	if (ret >= 0 &&
	    (ret = release_commits(bc, r, tip, f->ids, f->n, msgs, commits,
				   last)) >= 0)
		ret = release_bump(bc, r, last, f->base, "",
				   bc->cfg.release_signoff, bump);
	for (size_t i = 0; i < f->n; i++)
		free(msgs[i]);
	free(msgs);
	return ret;
}

/* "6.1.193" -> "6.1.194-rc1" */
static char *next_rc(const char *base)
{
	int a, b, c;

	if (sscanf(base, "%d.%d.%d", &a, &b, &c) != 3)
		return xstrdup("the next rc");
	return xstrfmt("%d.%d.%d-rc1", a, b, c + 1);
}

int rc_release(struct branch_ctx *bc, int force, struct rc_release *out)
{
	struct frozen f = { 0 };
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE], bump[REPO_HEX_SIZE];
	char **commits = NULL, *note = NULL, *tag = NULL, *msg = NULL;
	long long rc, any = 0;
	int fd = -1, ret;

	memset(out, 0, sizeof(*out));
	if (db_query_int(bc->db, &any,
			 "SELECT count(*) FROM rcs WHERE branch_id = ?", "i",
			 bc->branch_id) < 0)
		return ERR_IO;
	/* a branch without a review cycle releases its queue as it is */
	if (!any && !*bc->cfg.rc_list)
		return release_queue(bc, force, &out->released);
	if ((fd = rc_lock(bc)) < 0)
		return fd;
	if ((ret = repo_open(&r, bc->cfg.tree_dir)) < 0 ||
	    (ret = rc_resume(bc, r)) < 0 || (ret = release_resume(bc)) < 0)
		goto out;
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	if ((rc = rc_open_id(bc->db, bc->branch_id)) <= 0) {
		long long queued = queue_count(bc->db, bc->branch_id, PS_QUEUED);
		ret = rc < 0 ? (int)rc
			     : err_set(ERR_CONFLICT,
				       "branch %s has no open rc to release:"
				       " %lld queued patches wait for one"
				       " (stableq rc)",
				       bc->cfg.branch_key, queued);
		goto fail;
	}
	if ((ret = frozen_load(bc->db, rc, &f)) < 0)
		goto fail;
	out->waiting = waiting_count(bc->db, bc->branch_id, &f);
	{
		char *again = xstrfmt("-rc%d", f.number + 1);
		note = waiting_note(out->waiting, &f, again);
		free(again);
	}
	if ((ret = frozen_check(bc, &f, force, note)) < 0 ||
	    (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0 ||
	    (ret = frozen_commits(bc, r, &f, tip, &commits, bump)) < 0 ||
	    (ret = release_record(bc, f.ids, f.n, commits)) < 0 ||
	    (ret = db_exec(bc->db,
			   "UPDATE rcs SET state = 'released', release_commit"
			   " = ?, released_at = ? WHERE id = ? AND state ="
			   " 'open'",
			   "tii", bump, (long long)time(NULL), rc)) < 0)
		goto fail;
	ret = (int)event_add(bc->db, bc->actor, "branch", 0, "released",
			     "%s: the %zu patches of %s onto %s (%s-stable):"
			     " %.12s..%.12s%s",
			     f.base, f.n, f.version, bc->cfg.branch,
			     bc->cfg.branch_key, tip, bump, note);
	if (ret >= 0)
		ret = (int)event_add(bc->db, bc->actor, "rc", rc, "released",
				     "as %s", f.base);
	if ((ret = db_end(bc->db, ret)) < 0)
		goto out;
	/* the store first: a crash here is completed by rc_resume() */
	tag = xstrfmt("v%s", f.base);
	msg = xstrfmt("Linux %s\n", f.base);
	if ((ret = repo_set_branch(r, bc->cfg.branch, bump, tip)) < 0)
		goto out;
	if ((ret = repo_tag_create(r, tag, bump, "stableq", "stableq@localhost",
				   msg, 0)) < 0)
		log_warnx("release %s: %s", f.base, err_msg());
	ret = 0;
	out->released = f.n;
	out->version = xstrdup(f.base);
	out->rc = xstrdup(f.version);
	out->next = next_rc(f.base);
	out->rc_id = rc;
	log_info("released %s (%s, %zu patches) onto %s (%.12s)", f.base,
		 f.version, f.n, bc->cfg.branch, bump);
	goto out;
fail:
	db_rollback(bc->db);
out:
	for (size_t i = 0; commits && i < f.n; i++)
		free(commits[i]);
	free(commits);
	frozen_release(&f);
	free(note);
	free(tag);
	free(msg);
	repo_free(r);
	rc_unlock(fd);
	return ret < 0 ? ret : 0;
}
