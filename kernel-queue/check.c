/* check.c: fixes / applies / fixup / flags verdicts, and the state they lead to. */
#include "check.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "outbox.h"
#include "patch.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

struct ctx {
	struct app *app;
	struct repo *repo;
	struct repo *upstream; /* optional */
	char tip[41];
	char running[41]; /* tree: branch + patches queued so far */
	char *version;    /* 6.1.192 */
	char *series;     /* 6.1 */
};

struct row {
	long long id;
	char *subject, *diff, *upstream;
	enum patch_state state;
};

static void row_free(struct row *r)
{
	free(r->subject);
	free(r->diff);
	free(r->upstream);
}

/* ---- fixes ---- */

/* One Fixes: target: 1 present, 0 absent, -1 unknown (detail says why). */
static int fixes_one(struct ctx *c, long long self, const char *sha,
		     struct strbuf *why)
{
	char found[41];
	char *where = NULL;
	long long qid = 0;
	int r;

	r = repo_commit_in_history(c->repo, c->tip, sha);
	if (r > 0) {
		strbuf_addf(why, "%.12s is in %s", sha, c->app->cfg.branch);
		return 1;
	}
	r = repo_find_backport(c->repo, c->tip, sha, found);
	if (r > 0) {
		strbuf_addf(why, "%.12s is in %s as backport %.12s", sha,
			    c->app->cfg.branch, found);
		return 1;
	}
	if (db_query_int(c->app->db, &qid,
			 "SELECT id FROM patches WHERE id != ? AND state IN"
			 " ('imported','checked','queued','held','released',"
			 "'broken') AND upstream IS NOT NULL AND"
			 " substr(upstream, 1, min(12, length(?))) ="
			 " substr(?, 1, min(12, length(upstream)))"
			 " ORDER BY queue_pos LIMIT 1",
			 "itt", self, sha, sha) == 0) {
		strbuf_addf(why, "%.12s is in the queue as patch %lld", sha,
			    qid);
		return 1;
	}
	if (*c->app->cfg.stable_queue_repo) {
		r = stable_queue_find(c->app->cfg.stable_queue_repo, c->series,
				      sha, &where);
		if (r > 0) {
			strbuf_addf(why, "%.12s was released in %s", sha, where);
			free(where);
			return 1;
		}
	}
	if (c->upstream) {
		char base[64];
		snprintf(base, sizeof(base), "v%s", c->version);
		if (repo_resolve(c->upstream, base, found) < 0)
			snprintf(base, sizeof(base), "v%s", c->series);
		r = repo_commit_in_history(c->upstream, base, sha);
		if (r > 0) {
			strbuf_addf(why, "%.12s is upstream before %s", sha,
				    base);
			return 1;
		}
		if (r == 0 && repo_resolve(c->upstream, sha, found) == 0) {
			strbuf_addf(why,
				    "%.12s came upstream after %s and is not in"
				    " %s: the bug is not in this tree",
				    sha, base, c->app->cfg.branch);
			return 0;
		}
		strbuf_addf(why, "%.12s is unknown to the upstream repository",
			    sha);
		return -1;
	}
	strbuf_addf(why,
		    "%.12s is not in %s and no upstream repository or"
		    " stable-queue checkout is configured to tell",
		    sha, c->app->cfg.branch);
	return -1;
}

static const char *fixes_check(struct ctx *c, struct row *p,
			       struct strbuf *detail)
{
	sqlite3_stmt *st;
	int nfix = 0, present = 0, absent = 0, cover = 0, nocover = 0,
	    unread = 0;
	struct strbuf annot = STRBUF_INIT;
	const char *res;

	st = db_prepare(c->app->db,
			"SELECT kind, value, extra FROM patch_tags WHERE"
			" patch_id = ? AND kind IN ('fixes','stable') ORDER BY id",
			"i", p->id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *kind = db_col_text(st, 0);
		const char *value = db_col_text(st, 1);
		const char *extra = db_col_text(st, 2);
		if (!strcmp(kind, "fixes")) {
			struct strbuf why = STRBUF_INIT;
			int r = fixes_one(c, p->id, value, &why);
			nfix++;
			present += r > 0;
			absent += r == 0;
			strbuf_addf(detail, "%sFixes: %s", detail->len ? "; " : "",
				    why.buf);
			strbuf_release(&why);
		} else if (extra && *extra) {
			int r = stable_version_covers(extra, c->version);
			if (r > 0)
				cover++;
			else if (r == 0)
				nocover++;
			else
				unread++;
			strbuf_addf(&annot, "%sCc: stable # %s %s %s",
				    annot.len ? "; " : "", extra,
				    r > 0 ? "covers" :
				    r == 0 ? "does not cover" :
					     "cannot be read for",
				    c->version);
		}
	}
	sqlite3_finalize(st);
	if (nfix) {
		/* A Fixes: tag outranks the annotation: it says where the bug is. */
		if (present) {
			res = "present";
			goto out;
		}
		if (absent == nfix) {
			res = "absent";
			goto out;
		}
		/*
		 * Nothing here knows the Fixes: target (the tarball has no
		 * history), but whoever tagged it for stable said this
		 * version has the bug: that is an answer, and it is recorded.
		 */
		if (cover) {
			strbuf_addf(detail, "; %s", annot.buf);
			res = "present";
			goto out;
		}
		res = "unknown";
		goto out;
	}
	strbuf_reset(detail);
	if (cover) {
		strbuf_addf(detail,
			    "no Fixes: tag; the stable annotation covers %s",
			    c->version);
		res = "present";
		goto out;
	}
	if (nocover) {
		strbuf_addf(detail,
			    "no Fixes: tag; the stable annotation names other"
			    " versions than %s",
			    c->version);
		res = "absent";
		goto out;
	}
	if (unread) {
		strbuf_addstr(detail, "no Fixes: tag and the stable annotation"
				      " cannot be read: needs a human");
		res = "unknown";
		goto out;
	}
	strbuf_addstr(detail, "neither a Fixes: tag nor a stable version"
			      " annotation: nobody said this bug is in this"
			      " tree");
	res = "missing";
	goto out;
out:
	strbuf_release(&annot);
	return res;
}

/* ---- fixup ---- */

static const char *fixup_check(struct ctx *c, struct row *p,
			       struct strbuf *detail)
{
	sqlite3_stmt *st;
	const char *res = "ok";
	char *last = NULL;

	if (db_query_text(c->app->db, &last,
			  "SELECT result FROM verdicts WHERE patch_id = ? AND"
			  " check_name = 'fixup' ORDER BY id DESC LIMIT 1",
			  "i", p->id) == 0 &&
	    last && !strcmp(last, "overridden")) {
		free(last);
		strbuf_addstr(detail, "a maintainer released this fix-up");
		return "overridden";
	}
	free(last);
	st = db_prepare(c->app->db,
			"SELECT x.id, x.subject, x.state, t.value FROM patch_tags t"
			" JOIN patches x ON x.id != t.patch_id AND ("
			" (x.upstream IS NOT NULL AND"
			"  substr(x.upstream, 1, min(12, length(t.value))) ="
			"  substr(t.value, 1, min(12, length(x.upstream))))"
			" OR (x.released_commit IS NOT NULL AND"
			"  substr(x.released_commit, 1, min(12, length(t.value))) ="
			"  substr(t.value, 1, min(12, length(x.released_commit)))))"
			" WHERE t.patch_id = ? AND t.kind = 'fixes' AND"
			" x.state IN ('broken','dropped','reverted')",
			"i", p->id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		strbuf_addf(detail,
			    "%ssuperseded-by-revert: Fixes: %.12s names patch"
			    " %lld \"%s\", which is %s; revert first, do not"
			    " queue a fix-up",
			    detail->len ? "; " : "", db_col_text(st, 3),
			    (long long)sqlite3_column_int64(st, 0),
			    db_col_text(st, 1), db_col_text(st, 2));
		res = "held";
	}
	sqlite3_finalize(st);
	if (!strcmp(res, "ok"))
		strbuf_addstr(detail, "not a fix-up of a broken patch");
	return res;
}

/* ---- flags ---- */

static const char *flags_check(struct ctx *c, struct row *p,
			       struct strbuf *detail)
{
	long long added = 0, uapi = 0;
	const char *s;

	db_query_int(c->app->db, &added,
		     "SELECT COUNT(*) FROM patch_files WHERE patch_id = ? AND"
		     " change = 'A'",
		     "i", p->id);
	db_query_int(c->app->db, &uapi,
		     "SELECT COUNT(*) FROM patch_files WHERE patch_id = ? AND"
		     " (path LIKE 'include/uapi/%' OR path LIKE"
		     " 'arch/%/include/uapi/%')",
		     "i", p->id);
	if (added)
		strbuf_addf(detail, "adds-file (%lld)", added);
	/* "+config FOO" in a Kconfig file: a new symbol, likely a feature */
	int in_kconfig = 0;
	for (s = p->diff; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
		if (!strncmp(s, "+++ ", 4)) {
			const char *eol = strchr(s, '\n');
			size_t len = eol ? (size_t)(eol - s) : strlen(s);
			char *line = xstrndup(s, len);
			in_kconfig = strstr(line, "Kconfig") != NULL;
			free(line);
		} else if (in_kconfig && (!strncmp(s, "+config ", 8) ||
					  !strncmp(s, "+menuconfig ", 12))) {
			strbuf_addf(detail, "%snew-kconfig", detail->len ? "," : "");
			break;
		}
	}
	if (uapi)
		strbuf_addf(detail, "%suapi", detail->len ? "," : "");
	if (!detail->len) {
		strbuf_addstr(detail, "no new files, Kconfig symbols or UAPI");
		return "none";
	}
	return "feature-like";
}

/* ---- applies ---- */

static const char *applies_check(struct ctx *c, struct row *p,
				 struct strbuf *detail, char new_tree[41])
{
	struct repo_apply_result res = { 0 };
	int r = repo_apply(c->repo, c->running, p->diff, new_tree, &res);
	const char *out;

	if (r < 0) {
		strbuf_addf(detail, "cannot apply: %s", err_msg());
		return "conflict";
	}
	switch (res.status) {
	case REPO_APPLY_CLEAN:
		strbuf_addstr(detail, "applies cleanly on the branch and the"
				      " patches queued before it");
		out = "clean";
		break;
	case REPO_APPLY_ALREADY:
		strbuf_addstr(detail, res.detail ? res.detail
					       : "already applied: the diff"
						 " applies in reverse");
		out = "already-applied";
		break;
	default:
		strbuf_addstr(detail, res.detail ? res.detail : "conflict");
		out = "conflict";
		break;
	}
	repo_apply_result_release(&res);
	return out;
}

/* ---- the run ---- */

static int load_row(sqlite3 *db, long long id, struct row *r)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT subject, diff, upstream, state FROM"
				      " patches WHERE id = ?",
				      "i", id);
	int ret = ERR_NOTFOUND;

	memset(r, 0, sizeof(*r));
	r->id = id;
	if (!st)
		return ERR_IO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		r->subject = xstrdup(db_col_text(st, 0));
		r->diff = xstrdup(db_col_text(st, 1));
		r->upstream = db_col_text(st, 2) ? xstrdup(db_col_text(st, 2))
						 : NULL;
		r->state = (enum patch_state)patch_state_parse(
			db_col_text(st, 3));
		ret = 0;
	} else {
		err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	}
	sqlite3_finalize(st);
	return ret;
}

/*
 * Checks one patch in its own transaction. *advance is set when the patch
 * stays in (or enters) the queue, so the running tree moves on with it.
 */
static int check_one(struct ctx *c, struct row *p, struct check_summary *sum,
		     char new_tree[41], int *advance)
{
	struct strbuf fd = STRBUF_INIT, ad = STRBUF_INIT, xd = STRBUF_INIT,
		      gd = STRBUF_INIT, reason = STRBUF_INIT;
	const char *fixes, *applies, *fixup, *flags;
	enum patch_state to;
	const char *mailkind = NULL;
	long long ev = 0;
	int ret;

	*advance = 0;
	fixes = fixes_check(c, p, &fd);
	applies = applies_check(c, p, &ad, new_tree);
	fixup = fixup_check(c, p, &xd);
	flags = flags_check(c, p, &gd);

	if (!strcmp(fixup, "held")) {
		to = PS_HELD;
		strbuf_addbuf(&reason, &xd);
		mailkind = "held";
	} else if (!strcmp(fixes, "absent")) {
		to = PS_REJECTED;
		strbuf_addf(&reason, "Fixes: target absent: %s", fd.buf);
		mailkind = "rejected";
	} else if (!strcmp(applies, "already-applied")) {
		to = PS_REJECTED;
		strbuf_addf(&reason, "%s", ad.buf);
		mailkind = "rejected";
	} else if (!strcmp(applies, "conflict")) {
		to = PS_CHECKED;
		strbuf_addf(&reason, "does not apply: %s", ad.buf);
	} else if (!strcmp(fixes, "unknown") || !strcmp(fixes, "missing")) {
		to = PS_CHECKED;
		strbuf_addf(&reason, "needs a human (fixes %s): %s", fixes,
			    fd.buf);
	} else {
		to = PS_QUEUED;
		*advance = 1;
	}

	if ((ret = db_begin(c->app->db)) < 0)
		goto out;
	if ((ret = verdict_add(c->app->db, p->id, "fixes", fixes, fd.buf)) < 0 ||
	    (ret = verdict_add(c->app->db, p->id, "applies", applies, ad.buf)) < 0 ||
	    (ret = verdict_add(c->app->db, p->id, "fixup", fixup, xd.buf)) < 0 ||
	    (ret = verdict_add(c->app->db, p->id, "flags", flags, gd.buf)) < 0)
		goto fail;
	if (p->state != to) {
		ev = patch_set_state(c->app->db, p->id, to,
				     reason.len ? reason.buf : NULL,
				     c->app->actor);
		if (ev < 0) {
			ret = (int)ev;
			goto fail;
		}
		if (mailkind) {
			char *what = xstrfmt("Your patch was %s from the %s queue"
					     " by stableq's checks",
					     !strcmp(mailkind, "held")
						     ? "held back"
						     : "rejected",
					     c->app->cfg.branch);
			long long m = outbox_add(c->app->db, &c->app->cfg,
						 &(struct notice){
							 .patch_id = p->id,
							 .event_id = ev,
							 .kind = mailkind,
							 .what = what,
							 .why = reason.buf,
						 });
			free(what);
			if (m < 0) {
				ret = (int)m;
				goto fail;
			}
		}
	} else {
		ev = event_add(c->app->db, c->app->actor, "patch", p->id,
			       "checked", "fixes=%s applies=%s fixup=%s", fixes,
			       applies, fixup);
		if (ev < 0) {
			ret = (int)ev;
			goto fail;
		}
	}
	if ((ret = db_commit(c->app->db)) < 0)
		goto fail;
	log_info("patch %lld: fixes=%s applies=%s fixup=%s -> %s", p->id,
		 fixes, applies, fixup, patch_state_name(to));
	sum->checked++;
	sum->queued += to == PS_QUEUED;
	sum->held += to == PS_HELD;
	sum->rejected += to == PS_REJECTED;
	sum->waiting += to == PS_CHECKED;
	p->state = to;
	goto out;
fail:
	db_rollback(c->app->db);
out:
	strbuf_release(&fd);
	strbuf_release(&ad);
	strbuf_release(&xd);
	strbuf_release(&gd);
	strbuf_release(&reason);
	return ret;
}

static int wanted(const long long *ids, size_t n, long long id)
{
	if (!ids || !n)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

int branch_version(struct repo *r, const char *tip, char **version)
{
	char *desc = NULL;
	int ret = repo_describe(r, tip, &desc);

	if (ret < 0)
		return err_prefix(ret, "the branch's base version (a v6.1.N tag)");
	/* "v6.1.192" or "v6.1.192-3-g0123456789ab" */
	char *p = desc + (desc[0] == 'v');
	size_t n = strspn(p, "0123456789.");
	*version = xstrndup(p, n);
	free(desc);
	if (!n)
		return err_set(ERR_INVALID, "the branch's tag does not name a"
					    " version");
	return 0;
}

static int open_ctx(struct ctx *c, struct app *app)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->app = app;
	if ((ret = repo_open(&c->repo, app->cfg.tree_dir)) < 0)
		return err_set(ERR_NOTFOUND,
			       "the stable tree %s is not there (run `stableq"
			       " tree init`): %s",
			       app->cfg.tree_dir, err_msg());
	if ((ret = repo_branch_tip(c->repo, app->cfg.branch, c->tip)) < 0)
		return err_prefix(ERR_NOTFOUND, "branch %s", app->cfg.branch);
	if ((ret = branch_version(c->repo, c->tip, &c->version)) < 0)
		return ret;
	c->series = xstrdup(c->version);
	char *dot = strchr(c->series, '.');
	if (dot && (dot = strchr(dot + 1, '.')))
		*dot = '\0';
	memcpy(c->running, c->tip, sizeof(c->running));
	if (*app->cfg.upstream_repo &&
	    repo_open(&c->upstream, app->cfg.upstream_repo) < 0)
		return err_prefix(ERR_INVALID, "upstream_repo %s",
				  app->cfg.upstream_repo);
	return 0;
}

static void close_ctx(struct ctx *c)
{
	repo_free(c->repo);
	repo_free(c->upstream);
	free(c->version);
	free(c->series);
}

int check_run(struct app *app, const long long *ids, size_t n,
	      struct check_summary *sum)
{
	struct ctx c;
	long long *all = NULL;
	size_t nall = 0;
	int ret;

	memset(sum, 0, sizeof(*sum));
	if ((ret = open_ctx(&c, app)) < 0)
		goto out;
	for (size_t i = 0; ids && i < n; i++) {
		enum patch_state s;
		if ((ret = patch_get_state(app->db, ids[i], &s)) < 0)
			goto out;
	}
	if ((ret = queue_ids(app->db, -1, &all, &nall)) < 0)
		goto out;
	sum->json = json_array();
	for (size_t i = 0; i < nall; i++) {
		struct row r;
		char new_tree[41] = "";
		int advance = 0;

		if ((ret = load_row(app->db, all[i], &r)) < 0)
			goto out;
		switch (r.state) {
		case PS_RELEASED: /* on the branch already */
		case PS_DROPPED:
		case PS_REVERTED:
		case PS_BROKEN:
			row_free(&r);
			continue;
		default:
			break;
		}
		if (wanted(ids, n, r.id)) {
			ret = check_one(&c, &r, sum, new_tree, &advance);
			if (ret < 0) {
				row_free(&r);
				goto out;
			}
			json_t *o = queue_patch_json(app->db, r.id, 0);
			if (o)
				json_array_append_new(sum->json, o);
		} else if (r.state == PS_QUEUED) {
			struct repo_apply_result res = { 0 };
			advance = repo_apply(c.repo, c.running, r.diff, new_tree,
					     &res) == 0 &&
				  res.status == REPO_APPLY_CLEAN;
			repo_apply_result_release(&res);
		}
		if (advance && *new_tree)
			memcpy(c.running, new_tree, sizeof(c.running));
		row_free(&r);
	}
	ret = 0;
out:
	free(all);
	close_ctx(&c);
	if (ret < 0) {
		json_decref(sum->json);
		sum->json = NULL;
	}
	return ret;
}

void check_summary_print(const struct check_summary *s, FILE *f)
{
	size_t i;
	json_t *p;

	json_array_foreach(s->json, i, p)
	{
		json_t *v = json_object_get(p, "verdicts");
		fprintf(f, "patch %lld: %s -> %s\n",
			(long long)json_integer_value(json_object_get(p, "id")),
			json_string_value(json_object_get(p, "subject")),
			json_string_value(json_object_get(p, "state")));
		const char *check;
		json_t *vv;
		json_object_foreach(v, check, vv)
			fprintf(f, "  %-8s %s: %s\n", check,
				json_string_value(json_object_get(vv, "result")),
				json_string_value(json_object_get(vv, "detail")));
	}
	fprintf(f,
		"checked %zu: %zu queued, %zu held, %zu rejected, %zu waiting"
		" for a human\n",
		s->checked, s->queued, s->held, s->rejected, s->waiting);
}

int check_due(struct app *app, long long *id)
{
	return db_query_int(app->db, id,
			    "SELECT id FROM patches WHERE state = 'imported'"
			    " ORDER BY id LIMIT 1",
			    NULL) == 0;
}
