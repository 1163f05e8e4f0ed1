/* check-fixes.c: the fixes verdict: is the bug a patch fixes in this tree? Each answer names its evidence. */
#include "changelog.h"
#include "stable-queue.h"
#include "check-int.h"
#include "db.h"
#include "err.h"
#include "patch.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Stable-dep-of chains are short; a loop in hostile tags must end. */
#define DEP_DEPTH 4

enum ev { EV_UNKNOWN = -1, EV_ABSENT = 0, EV_PRESENT = 1 };

/* Debian's changelog on a subject: EV_PRESENT (listed up to the tree's
 * version), EV_ABSENT (listed, then reverted), EV_UNKNOWN. */
static enum ev changelog_ev(struct check_ctx *c, const char *subject,
			    struct changelog_hit *hit)
{
	hit->first = hit->last = hit->reverted = -1;
	if (!c->changelog || !subject || !*subject)
		return EV_UNKNOWN;
	int r = changelog_lookup(c->bc->db, c->changelog, c->series,
				 c->sublevel, subject, hit);
	if (r > 0)
		return EV_PRESENT;
	if (r == 0 && hit->reverted >= 0)
		return EV_ABSENT;
	return EV_UNKNOWN;
}

int check_in_history(struct check_ctx *c, const char *sha)
{
	if (!c->history_small)
		return repo_commit_in_history(c->repo, c->tip, sha) > 0;
	size_t n = strlen(sha);
	for (size_t i = 0; i < c->nhistory; i++)
		if (!strncasecmp(c->history[i], sha, n))
			return n >= REPO_MIN_ABBREV && n <= REPO_HEXSZ;
	return 0;
}

/*
 * The upstream clone's tag of the tree's version (v6.1.192), else of its
 * series (v6.1): its name in name, its commit returned (NULL when neither
 * resolves). Resolved once per run, not per Fixes: tag.
 */
static const char *upstream_base(struct check_ctx *c, char *name, size_t size)
{
	if (!c->up_base_done) {
		c->up_base_done = 1;
		snprintf(c->up_base, sizeof(c->up_base), "v%s", c->version);
		if (repo_resolve(c->upstream, c->up_base, c->up_base_hex) < 0) {
			snprintf(c->up_base, sizeof(c->up_base), "v%s",
				 c->series);
			if (repo_resolve(c->upstream, c->up_base,
					 c->up_base_hex) < 0)
				*c->up_base_hex = '\0';
		}
		err_clear();
	}
	snprintf(name, size, "%s", c->up_base);
	return *c->up_base_hex ? c->up_base_hex : NULL;
}

/* One Fixes: target, its reason in why. */
static enum ev fixes_one(struct check_ctx *c, long long self, const char *sha,
			 const char *subject, struct strbuf *why)
{
	const char *branch = c->bc->cfg.branch;
	char found[REPO_HEX_SIZE], base[64] = "";
	char *where = NULL, older[16];
	long long qid = 0;
	long at;
	struct changelog_hit hit;
	int up = EV_UNKNOWN;
	enum ev cl;

	if (check_in_history(c, sha)) {
		strbuf_addf(why, "Fixes: %.12s is in %s", sha, branch);
		return EV_PRESENT;
	}
	if (repo_find_backport(c->repo, c->tip, sha, found) > 0) {
		strbuf_addf(why, "Fixes: %.12s is in %s as backport %.12s", sha,
			    branch, found);
		return EV_PRESENT;
	}
	if (queue_sibling_of(c->bc->db, self, sha, 1, &qid) == 0) {
		strbuf_addf(why, "Fixes: %.12s is in the queue as patch %lld",
			    sha, qid);
		return EV_PRESENT;
	}
	if (*c->bc->cfg.stable_queue_repo &&
	    stable_queue_find(c->bc->cfg.stable_queue_repo, c->series, sha,
			      &where) > 0) {
		strbuf_addf(why, "Fixes: %.12s was released in %s", sha, where);
		free(where);
		return EV_PRESENT;
	}
	if (c->upstream) {
		/* one lookup for a SHA the clone lacks (each miss rescans
		 * its packs), the walk only for one it has */
		const char *at_base = upstream_base(c, base, sizeof(base));
		int have = repo_object_exists(c->upstream, sha);
		int r = have <= 0 ? have
			: at_base ? repo_commit_in_history(c->upstream,
							   at_base, sha)
				  : ERR_NOTFOUND;
		if (r > 0) {
			strbuf_addf(why, "Fixes: %.12s is upstream before %s",
				    sha, base);
			return EV_PRESENT;
		}
		if (r == 0 && have == 1)
			up = EV_ABSENT;
		err_clear();
	}
	/* Upstream after the base may still have been backported: the
	 * changelog is asked before the upstream clone's "after". */
	cl = changelog_ev(c, subject, &hit);
	if (cl == EV_PRESENT) {
		strbuf_addf(why,
			    "Fixes: %.12s (\"%s\") is in %s: Debian's changelog"
			    " lists it in %s.%ld",
			    sha, subject, branch, c->series, hit.first);
		return EV_PRESENT;
	}
	if (cl == EV_ABSENT) {
		strbuf_addf(why,
			    "Fixes: %.12s (\"%s\") was released in %s.%ld and"
			    " reverted in %s.%ld (Debian's changelog): the bug"
			    " is not in this tree",
			    sha, subject, c->series, hit.first, c->series,
			    hit.reverted);
		return EV_ABSENT;
	}
	/* the changelog keeps the older series' sections too */
	if (c->changelog && subject &&
	    changelog_find_older(c->bc->db, c->changelog, c->series, subject,
				 older, &at) > 0) {
		strbuf_addf(why,
			    "Fixes: %.12s (\"%s\") is in %s: Debian's changelog"
			    " lists it in %s.%ld, before %s",
			    sha, subject, branch, older, at, c->series);
		return EV_PRESENT;
	}
	if (up == EV_ABSENT) {
		strbuf_addf(why,
			    "Fixes: %.12s came upstream after %s and is not in"
			    " %s: the bug is not in this tree",
			    sha, base, branch);
		return EV_ABSENT;
	}
	strbuf_addf(why, "Fixes: %.12s%s%s%s is unknown here (not in %s's"
			 " history",
		    sha, subject ? " (\"" : "", subject ? subject : "",
		    subject ? "\")" : "", branch);
	strbuf_addf(why, c->changelog ? ", not listed in Debian's changelog"
					" up to %s"
				      : ", no Debian changelog%.0s",
		    c->version);
	strbuf_addstr(why, *c->bc->cfg.stable_queue_repo
				   ? ", not in the stable-queue checkout"
				   : ", no stable-queue checkout");
	strbuf_addstr(why, !c->upstream ? ", no upstream clone)"
			   : *base ? ", unknown to the upstream clone)"
				   : ")");
	return EV_UNKNOWN;
}

struct tag {
	char *kind, *value, *extra;
};

struct tags {
	struct tag *v;
	size_t n;
};

static void tags_free(struct tags *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].kind);
		free(t->v[i].value);
		free(t->v[i].extra);
	}
	free(t->v);
}

static int tags_load(sqlite3 *db, long long id, struct tags *t)
{
	json_t *rows = queue_tags_json(db, id), *r;
	size_t i;

	memset(t, 0, sizeof(*t));
	if (!rows)
		return err_set(ERR_IO, "tags of patch %lld", id);
	json_array_foreach(rows, i, r)
	{
		const char *extra = queue_field(r, "extra");
		t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
		struct tag *g = &t->v[t->n++];
		g->kind = xstrdup(queue_field(r, "kind"));
		g->value = xstrdup(queue_field(r, "value"));
		g->extra = extra ? xstrdup(extra) : NULL;
	}
	json_decref(rows);
	return 0;
}

/*
 * The files p modifies or deletes that the running tree lacks: 1 when it
 * has none of them (listed in out), 0 otherwise.
 */
static int files_all_missing(struct check_ctx *c, long long id,
			     struct strbuf *out)
{
	json_t *files = queue_patch_files_json(c->bc->db, id), *f;
	char **paths = NULL;
	size_t n = 0, k;
	int all = 0;

	json_array_foreach(files, k, f)
	{
		const char *change = queue_field(f, "change");
		if (n >= 4096)
			break;
		if (strcmp(change, "M") && strcmp(change, "D"))
			continue;
		paths = xrealloc(paths, (n + 1) * sizeof(*paths));
		paths[n++] = xstrdup(queue_field(f, "path"));
	}
	json_decref(files);
	if (n) {
		unsigned char *have = xcalloc(n, 1);
		if (repo_paths_exist_overlay(c->repo, c->running, &c->queued,
				     (const char *const *)paths, n, have) == 0) {
			all = 1;
			for (size_t i = 0; i < n; i++)
				all &= !have[i];
		}
		for (size_t i = 0; all && i < n; i++) {
			if (i == 8) {
				strbuf_addf(out, " and %zu more", n - 8);
				break;
			}
			strbuf_addf(out, "%s%s", i ? ", " : "", paths[i]);
		}
		free(have);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return all;
}

int check_removes_lines(const char *diff)
{
	for (const char *s = diff; s && *s;) {
		/* not a "--- a/x" header, not a "-- " mail signature */
		if (s[0] == '-' && strncmp(s, "--- ", 4) && strncmp(s, "-- \n", 4))
			return 1;
		s = strchr(s, '\n');
		s = s ? s + 1 : NULL;
	}
	return 0;
}

int check_row_load(sqlite3 *db, long long id, struct check_row *r)
{
	json_t *o = queue_patch_content_json(db, id);
	enum patch_state s;
	int ret;
	const char *up;

	memset(r, 0, sizeof(*r));
	r->id = id;
	if (!o)
		/* a database error is no "no such patch" */
		return err_last() < 0 ? err_last() : ERR_IO;
	if ((ret = queue_get_state(db, id, &s)) < 0) {
		json_decref(o);
		return ret;
	}
	up = queue_field(o, "upstream");
	r->subject = xstrdup(queue_field(o, "subject"));
	r->diff = xstrdup(queue_field(o, "diff"));
	r->upstream = up ? xstrdup(up) : NULL;
	r->state = s;
	json_decref(o);
	return 0;
}

void check_row_release(struct check_row *r)
{
	free(r->subject);
	free(r->diff);
	free(r->upstream);
}

/*
 * A prerequisite takes its standing from the patch that needs it (its
 * Stable-dep-of): that patch's latest fixes verdict, or, when it was not
 * checked yet (it comes later in the queue), its verdict now. CR_COUNT when
 * the patch is not in the store.
 */
static enum check_result dep_standing(struct check_ctx *c, long long self,
				      const char *sha, int depth,
				      struct strbuf *why)
{
	long long did = 0;
	char *last = NULL, *detail = NULL;
	struct check_row d;
	struct strbuf dw = STRBUF_INIT;
	enum check_result r;

	if (depth >= DEP_DEPTH ||
	    queue_sibling_of(c->bc->db, self, sha, 0, &did) < 0 ||
	    check_row_load(c->bc->db, did, &d) < 0)
		return CR_COUNT;
	if (queue_verdict_latest_full(c->bc->db, did, "fixes", &last,
				      &detail) == 0 &&
	    last && detail) {
		int k = check_result_parse(last);
		r = k < 0 ? CR_UNKNOWN : (enum check_result)k;
		strbuf_addstr(&dw, detail);
	} else {
		/* not checked yet: it comes later in the queue, on top of
		 * this patch */
		struct repo_apply_result ar = { 0 };
		char with[REPO_HEX_SIZE], out[REPO_HEX_SIZE];
		enum check_result applies = CR_COUNT;
		if (check_with_tree(c, with) == 0 &&
		    repo_apply(c->repo, with, d.diff, out, &ar) == 0)
			applies = ar.status == REPO_APPLY_CLEAN ? CR_CLEAN
								: CR_CONFLICT;
		repo_apply_result_release(&ar);
		r = check_fixes(c, &d, applies, depth + 1, &dw);
	}
	free(last);
	free(detail);
	strbuf_addf(why,
		    "Stable-dep-of: %.12s: patch %lld \"%s\" needs it, and its"
		    " fixes verdict is %s (%s)",
		    sha, did, d.subject, check_result_name(r), dw.buf);
	strbuf_release(&dw);
	check_row_release(&d);
	return r == CR_PRESENT || r == CR_ABSENT ? r : CR_UNKNOWN;
}

/* detail = lead, then "; " and the rest when there is any. */
static enum check_result say(struct strbuf *detail, enum check_result r,
			     const char *lead, const struct strbuf *rest)
{
	strbuf_addstr(detail, lead);
	if (rest && rest->len)
		strbuf_addf(detail, "%s%s", *lead ? "; " : "", rest->buf);
	return r;
}

enum check_result check_fixes(struct check_ctx *c, const struct check_row *p,
			      enum check_result applies, int depth,
			      struct strbuf *detail)
{
	struct tags t;
	struct strbuf by[2] = { STRBUF_INIT, STRBUF_INIT }, unk = STRBUF_INIT,
		      cover = STRBUF_INIT, nocover = STRBUF_INIT,
		      unread = STRBUF_INIT, other = STRBUF_INIT,
		      lead = STRBUF_INIT;
	int nfix = 0, nabsent = 0, ndep = 0, versioned = 0;
	enum check_result res, dep = CR_COUNT;
	const char *dep_sha = NULL;

	if (tags_load(c->bc->db, p->id, &t) < 0) {
		strbuf_addf(detail, "the tags cannot be read: %s", err_msg());
		return CR_UNKNOWN;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct tag *g = &t.v[i];
		if (!strcmp(g->kind, "fixes")) {
			struct strbuf why = STRBUF_INIT;
			enum ev e = fixes_one(c, p->id, g->value, g->extra, &why);
			struct strbuf *to = e == EV_UNKNOWN ? &unk : &by[e];
			nfix++;
			nabsent += e == EV_ABSENT;
			strbuf_addf(to, "%s%s", to->len ? "; " : "", why.buf);
			strbuf_release(&why);
		} else if (!strcmp(g->kind, "stable")) {
			int r = stable_cc_covers(g->extra, c->version);
			struct strbuf *to = r > 0 ? &cover : r == 0 ? &nocover
								   : &unread;
			versioned |= r > 0 && g->extra && *g->extra;
			if (g->extra && *g->extra)
				strbuf_addf(to, "%sCc: stable # %s", to->len ? ", " : "",
					    g->extra);
			else
				strbuf_addf(to, "%sCc: stable (unversioned: every"
						" tree)",
					    to->len ? ", " : "");
		} else if (!strcmp(g->kind, "stable_dep_of") && !ndep++) {
			dep_sha = g->value;
			dep = dep_standing(c, p->id, g->value, depth, &other);
		}
	}
	if (by[EV_PRESENT].len) {
		/* one target in the tree is enough: the bug is here */
		strbuf_addbuf(&other, &unk);
		res = say(detail, CR_PRESENT, by[EV_PRESENT].buf, &other);
		goto out;
	}
	if (nfix && nabsent == nfix) {
		res = say(detail, CR_ABSENT, by[EV_ABSENT].buf, NULL);
		goto out;
	}
	/* No target known here: what the patch's standing rests on. */
	if (unk.len)
		strbuf_addf(&other, "%s%s", other.len ? "; " : "", unk.buf);
	if (dep == CR_PRESENT || dep == CR_ABSENT) {
		/* other starts with the Stable-dep-of reason */
		res = say(detail, dep, "", &other);
		goto out;
	}
	if (dep == CR_COUNT && dep_sha)
		strbuf_addf(&other,
			    "%sStable-dep-of: %.12s: no patch of this branch's"
			    " queue is that commit, so nothing says whether it"
			    " is needed here",
			    other.len ? "; " : "", dep_sha);
	if (files_all_missing(c, p->id, &lead)) {
		struct strbuf s = STRBUF_INIT;
		strbuf_addf(&s,
			    "%s %s not in %s (%s): the bug cannot be in this"
			    " tree",
			    lead.buf, strchr(lead.buf, ',') ? "are" : "is",
			    c->bc->cfg.branch, c->version);
		res = say(detail, CR_ABSENT, s.buf, &other);
		strbuf_release(&s);
		goto out;
	}
	/* the code it changes is not here: an unversioned Cc: stable does not
	 * outweigh that; a versioned one does (it says which trees) */
	if (!versioned && applies == CR_CONFLICT &&
	    repo_lines_nowhere(c->repo, c->running, &c->queued, p->diff,
			       &lead) > 0) {
		struct strbuf s = STRBUF_INIT;
		strbuf_addf(&s,
			    "the code it changes is not in %s (%s): %s; the"
			    " bug cannot be in this tree",
			    c->bc->cfg.branch, c->version, lead.buf);
		if (cover.len)
			strbuf_addf(&s, " (%s does not outweigh that)",
				    cover.buf);
		res = say(detail, CR_ABSENT, s.buf, &other);
		strbuf_release(&s);
		goto out;
	}
	err_clear();
	strbuf_reset(&lead);
	if (cover.len) {
		strbuf_addf(&lead, "%s covers %s", cover.buf, c->version);
		res = say(detail, CR_PRESENT, lead.buf, &other);
		goto out;
	}
	if (nocover.len) {
		strbuf_addf(&lead, "%s does not cover %s: the bug is not in this"
				   " tree",
			    nocover.buf, c->version);
		res = say(detail, CR_ABSENT, lead.buf, &other);
		goto out;
	}
	if ((nfix || ndep) && applies == CR_CLEAN &&
	    check_removes_lines(p->diff)) {
		strbuf_addf(&lead,
			    "the lines it changes are in %s (%s): the"
			    " diff applies to it",
			    c->bc->cfg.branch, c->version);
		res = say(detail, CR_PRESENT, lead.buf, &other);
		goto out;
	}
	if (unread.len) {
		strbuf_addf(&lead, "%s cannot be read: needs a human",
			    unread.buf);
		res = say(detail, CR_UNKNOWN, lead.buf, &other);
		goto out;
	}
	if (nfix || ndep) {
		res = say(detail, CR_UNKNOWN, "", &other);
		goto out;
	}
	res = say(detail, CR_MISSING,
		  "neither a Fixes: tag, a stable annotation nor a"
		  " Stable-dep-of: nobody said this bug is in this tree",
		  NULL);
out:
	tags_free(&t);
	strbuf_release(&by[0]);
	strbuf_release(&by[1]);
	strbuf_release(&unk);
	strbuf_release(&cover);
	strbuf_release(&nocover);
	strbuf_release(&unread);
	strbuf_release(&other);
	strbuf_release(&lead);
	return res;
}

/* The N of a stable-queue file "releases/6.1.N/x.patch", or -1. */
static long sq_sublevel(const char *where)
{
	const char *v = where + 9, *dot = NULL;
	size_t vn = strcspn(v, "/");

	for (const char *s = v; s < v + vn; s++)
		if (*s == '.')
			dot = s;
	return dot ? strtol(dot + 1, NULL, 10) : -1;
}

int check_released_where(struct check_ctx *c, const struct check_row *p,
			 struct strbuf *where, struct strbuf *reverted)
{
	char *sq = NULL;
	char rev[REPO_HEX_SIZE];
	struct changelog_hit hit;
	enum ev cl = changelog_ev(c, p->subject, &hit);
	int ret = 0;

	free(c->rel_sq);
	c->rel_sq = NULL;
	c->rel_first = -1;
	/* its own file in the stable-queue checkout: where its release's
	 * later patches start */
	if (p->upstream && *c->bc->cfg.stable_queue_repo &&
	    stable_queue_find(c->bc->cfg.stable_queue_repo, c->series,
			      p->upstream, &sq) > 0 &&
	    strncmp(sq, "releases/", 9)) {
		free(sq);
		sq = NULL;
	}
	err_clear();

	if (cl == EV_ABSENT && reverted)
		strbuf_addf(reverted,
			    "released in %s.%ld and reverted in %s.%ld"
			    " (Debian's changelog lists \"%s\" and its"
			    " Revert)",
			    c->series, hit.first, c->series, hit.reverted,
			    p->subject);
	if (cl == EV_PRESENT) {
		if (hit.last > hit.first)
			strbuf_addf(where,
				    "%s.%ld and %s.%ld (Debian's changelog"
				    " lists \"%s\" in both)",
				    c->series, hit.first, c->series, hit.last,
				    p->subject);
		else
			strbuf_addf(where,
				    "%s.%ld (Debian's changelog lists \"%s\")",
				    c->series, hit.first, p->subject);
		c->rel_first = hit.first;
		ret = 1;
	} else if (sq) {
		strbuf_addf(where, "%.*s (the stable-queue checkout has %s)",
			    (int)strcspn(sq + 9, "/"), sq + 9, sq);
		c->rel_first = sq_sublevel(sq);
		ret = 1;
	}
	/* the release it is in names its file, not a later one's */
	if (sq && c->rel_first >= 0 && sq_sublevel(sq) == c->rel_first)
		c->rel_sq = xstrdup(sq);
	free(sq);
	if (!reverted || reverted->len)
		return ret;
	/* a revert commit: in the tree's history, or the upstream clone's */
	if (repo_find_revert(c->repo, c->tip, p->subject, rev) > 0)
		strbuf_addf(reverted,
			    "%s%s%sreverted by %.12s (Revert \"%s\") in %s's"
			    " history",
			    ret ? "released in " : "", ret ? where->buf : "",
			    ret ? " and " : "", rev, p->subject,
			    c->bc->cfg.branch);
	else if (c->upstream && !c->up_indexed &&
		 repo_find_revert(c->upstream, "HEAD", p->subject, rev) > 0)
		strbuf_addf(reverted,
			    "%s%s%sreverted upstream by %.12s (Revert \"%s\")",
			    ret ? "released in " : "", ret ? where->buf : "",
			    ret ? " and " : "", rev, p->subject);
	err_clear();
	if (reverted->len)
		ret = 0;
	return ret;
}
