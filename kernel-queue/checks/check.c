/* check.c: fixes / applies / fixup / flags verdicts, and the state they lead to. */
#include "changelog.h"
#include "check-int.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "compose.h"
#include "outbox.h"
#include "patch.h"
#include "prefix.h"
#include "origin.h"
#include "queue.h"
#include "repo.h"
#include "stable-queue.h"
#include "strbuf.h"
#include "upstream.h"

#include <stdlib.h>
#include <string.h>


/*
 * Patches checked per transaction: a commit per patch cost more than the
 * checks themselves (bench/checks.sh).
 */
#define CHECK_BATCH 64

/* The names stored in verdicts and shown by the CLI, the API and the dashboard. */
static const char *const kind_names[CHECK_KIND_COUNT] = {
	[CHECK_FIXES] = "fixes",
	[CHECK_APPLIES] = "applies",
	[CHECK_FIXUP] = "fixup",
	[CHECK_FLAGS] = "flags",
	[CHECK_FOLLOWUPS] = "followups",
};

static const char *const result_names[CR_COUNT] = {
	[CR_PRESENT] = "present",     [CR_ABSENT] = "absent",
	[CR_UNKNOWN] = "unknown",     [CR_MISSING] = "missing",
	[CR_CLEAN] = "clean",         [CR_CONFLICT] = "conflict",
	[CR_ALREADY] = "already-applied",
	[CR_OK] = "ok",               [CR_HELD] = "held",
	[CR_OVERRIDDEN] = "overridden",
	[CR_NONE] = "none",           [CR_FEATURE_LIKE] = "feature-like",
	[CR_FOUND] = "found",
};

/* The names stored and shown ("fixes", "already-applied"); "?" if out of range. */
static const char *check_kind_name(enum check_kind k)
{
	return (unsigned)k < CHECK_KIND_COUNT ? kind_names[k] : "?";
}

const char *check_result_name(enum check_result r)
{
	return (unsigned)r < CR_COUNT ? result_names[r] : "?";
}

int check_result_parse(const char *name)
{
	for (int i = 0; name && i < CR_COUNT; i++)
		if (!strcmp(result_names[i], name))
			return i;
	return -1;
}

/* "6.12: text" when several branches are configured, else NULL. */
static char *branch_said(const struct branch_ctx *bc, const char *text)
{
	if (bc->cfg.nbranches < 2)
		return NULL;
	return xstrfmt("%s: %s", bc->cfg.branch_key, text);
}

/* queue_verdict_add() of one check's result: the strings are made here. */
static int check_verdict_add(sqlite3 *db, long long patch_id, enum check_kind k,
		      enum check_result r, const char *detail)
{
	return queue_verdict_add(db, patch_id, check_kind_name(k),
			   check_result_name(r), detail);
}

/* ---- fixup ---- */

static enum check_result fixup_check(struct check_ctx *c,
				     const struct check_row *p,
				     const struct strbuf *reverted,
				     struct strbuf *detail)
{
	json_t *targets, *t;
	enum check_result res = CR_OK;
	char *last = NULL;
	size_t i;

	if (queue_verdict_latest(c->bc->db, p->id, "fixup", &last) == 0 &&
	    check_result_parse(last) == CR_OVERRIDDEN) {
		free(last);
		strbuf_addstr(detail, "a maintainer released this fix-up");
		return CR_OVERRIDDEN;
	}
	free(last);
	if (reverted->len) {
		/* released, then reverted: queueing it again silently would
		 * bring back what a maintainer took out */
		strbuf_addf(detail,
			    "reverted-after-release: %s; find out why it was"
			    " reverted before queueing it again",
			    reverted->buf);
		res = CR_HELD;
	}
	targets = queue_broken_fix_targets_json(c->bc->db, p->id);
	json_array_foreach(targets, i, t)
	{
		strbuf_addf(
			detail,
			"%ssuperseded-by-revert: Fixes: %.12s names patch"
			" %lld \"%s\", which is %s; revert first, do not"
			" queue a fix-up",
			detail->len ? "; " : "", queue_field(t, "fixes"),
			(long long)json_integer_value(json_object_get(t, "id")),
			queue_field(t, "subject"), queue_field(t, "state"));
		res = CR_HELD;
	}
	json_decref(targets);
	if (res == CR_OK)
		strbuf_addstr(detail, "not a fix-up of a broken patch, not"
				      " reverted after a release");
	return res;
}

/* ---- flags ---- */

static enum check_result flags_check(struct check_ctx *c,
				     const struct check_row *p,
				     struct strbuf *detail)
{
	long long added = 0, uapi = 0;
	const char *s;
	struct strbuf links = STRBUF_INIT;

	/* a link is not a file: built, it points where the patch says */
	if (repo_diff_links(p->diff, &links) > 0) {
		strbuf_addf(detail,
			    "link: %s; stableq queues files, not links: a"
			    " maintainer applies it by hand, or overrides",
			    links.buf);
		strbuf_release(&links);
		return CR_HELD;
	}
	strbuf_release(&links);
	err_clear();
	queue_file_counts(c->bc->db, p->id, &added, &uapi);
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
		return CR_NONE;
	}
	return CR_FEATURE_LIKE;
}

/* ---- applies ---- */

/* The files p names (new and old paths), for stable_queue_touching(). */
static size_t patch_paths(struct check_ctx *c, const struct check_row *p,
			  char ***out)
{
	json_t *files = queue_patch_files_json(c->bc->db, p->id), *f;
	size_t i, n = 0;

	*out = NULL;
	json_array_foreach(files, i, f)
	{
		const char *k[2] = { queue_field(f, "path"),
				     queue_field(f, "old_path") };
		for (int j = 0; j < 2 && n < 256; j++) {
			if (!k[j])
				continue;
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			(*out)[n++] = xstrdup(k[j]);
		}
	}
	json_decref(files);
	return n;
}

/*
 * The later releases' patches (the stable-queue checkout's) that touch p's
 * files taken out of base, newest first, each only if it comes out
 * cleanly: how many; edits names them ("6.1.12 (releases/6.1.12/x.patch)").
 */
static int take_out_releases(struct check_ctx *c, const struct check_row *p,
			     char base[REPO_HEX_SIZE], struct strbuf *edits)
{
	const char *sq_dir = c->bc->cfg.stable_queue_repo;
	struct stable_queue_patch *v = NULL;
	struct strbuf text = STRBUF_INIT;
	char **paths = NULL, out[REPO_HEX_SIZE];
	size_t np = patch_paths(c, p, &paths), nv = 0;
	int n = 0;

	if (np && stable_queue_touching(sq_dir, c->series, c->rel_first,
					c->sublevel, c->rel_sq, p->subject,
					(const char *const *)paths, np, 64, &v,
					&nv) > 0)
		for (size_t i = 0; i < nv; i++) {
			struct repo_apply_result res = { 0 };
			char *path = xstrfmt("%s/%s", sq_dir, v[i].where);
			strbuf_reset(&text);
			if (strbuf_read_file(&text, path, 64u << 20) == 0 &&
			    repo_apply_reverse(c->repo, base, text.buf, out,
					       &res) == 0 &&
			    res.status == REPO_APPLY_CLEAN) {
				memcpy(base, out, REPO_HEX_SIZE);
				if (n < 4)
					strbuf_addf(edits, "%s%s.%ld (%s)",
						    n ? ", " : "", c->series,
						    v[i].sublevel, v[i].where);
				n++;
			}
			repo_apply_result_release(&res);
			free(path);
		}
	if (n > 4)
		strbuf_addf(edits, " and %d more", n - 4);
	err_clear();
	stable_queue_patches_free(v, nv);
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	strbuf_release(&text);
	return n;
}

/* Does p come out in reverse of the upstream clone's tree at commit? */
static int out_at(struct check_ctx *c, const struct check_row *p,
		  const char *commit)
{
	struct repo_apply_result res = { 0 };
	char out[REPO_HEX_SIZE];
	int ok = repo_apply_reverse(c->upstream, commit, p->diff, out, &res) ==
			 0 &&
		 res.status == REPO_APPLY_CLEAN;

	repo_apply_result_release(&res);
	err_clear();
	return ok;
}

/* Are p's files in the tree what the upstream clone has at commit? */
static int same_files(struct check_ctx *c, const struct check_row *p,
		      const char *commit)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	char tree[REPO_HEX_SIZE], **paths = NULL;
	size_t np = patch_paths(c, p, &paths);
	int same = np && repo_tree_of(c->upstream, commit, tree) == 0;

	for (size_t i = 0; i < np; i++) {
		strbuf_reset(&a);
		strbuf_reset(&b);
		if (same && (repo_file_overlay(c->repo, c->tip, NULL, paths[i],
					       &a) !=
				     repo_file_overlay(c->upstream, tree, NULL,
						       paths[i], &b) ||
			     a.len != b.len || memcmp(a.buf, b.buf, a.len)))
			same = 0;
		free(paths[i]);
	}
	free(paths);
	strbuf_release(&a);
	strbuf_release(&b);
	err_clear();
	return same;
}

/*
 * The same question asked of a linux-stable clone (upstream_repo with the
 * branch's stable tags): the patch comes out in reverse of its tag of the
 * release that names it, and the tree's files are the clone's at the
 * tree's version; the first later tag where it no longer comes out is the
 * release that changed its lines (bisected over the tags). 1 with that
 * release in edits, else 0 (a series whose later patch of the same
 * release edited it is not told apart: the stable-queue checkout is).
 */
static int edited_upstream(struct check_ctx *c, const struct check_row *p,
			   struct strbuf *edits)
{
	struct repo_tag *tags = NULL;
	size_t n = 0, m = 0, lo, hi;
	char want[64];
	long *sub = NULL;
	int found = 0;

	if (!c->upstream || c->rel_first < 0)
		goto out;
	if (!c->up_tags_done) {
		c->up_tags_done = 1;
		if (repo_version_tags(c->upstream, &c->up_tags, &c->up_ntags) <
		    0)
			c->up_ntags = 0;
	}
	n = c->up_ntags;
	tags = xcalloc(n + 1, sizeof(*tags));
	if (n)
		memcpy(tags, c->up_tags, n * sizeof(*tags));
	/* the branch's stable tags from the release that names it to the
	 * tree's version, in order */
	sub = xcalloc(n + 1, sizeof(*sub));
	snprintf(want, sizeof(want), "v%s.", c->series);
	for (size_t i = 0; i < n; i++) {
		const char *v = tags[i].name;
		char *e;
		long l;
		if (strncmp(v, want, strlen(want)))
			continue;
		l = strtol(v + strlen(want), &e, 10);
		if (*e || l < c->rel_first || l > c->sublevel)
			continue;
		tags[m] = tags[i];
		sub[m++] = l;
	}
	if (m < 2 || sub[0] != c->rel_first || sub[m - 1] != c->sublevel ||
	    !c->upstream_mem)
		goto out;
	if (!same_files(c, p, tags[m - 1].commit) ||
	    !out_at(c, p, tags[0].commit) || out_at(c, p, tags[m - 1].commit))
		goto out;
	for (lo = 0, hi = m - 1; hi - lo > 1;) {
		size_t mid = lo + (hi - lo) / 2;
		if (out_at(c, p, tags[mid].commit))
			lo = mid;
		else
			hi = mid;
	}
	strbuf_addf(edits,
		    "%s.%ld (the upstream clone: it comes out in reverse of"
		    " %s, not of %s)",
		    c->series, sub[hi], tags[lo].name, tags[hi].name);
	found = 1;
out:
	err_clear();
	free(tags);
	free(sub);
	return found;
}

/*
 * A released patch that later changes edited no longer applies in reverse
 * by itself: take those back out of the running tree, newest first, each
 * only if it comes out cleanly: the later queued patches touching its
 * files, then, when a release names it and a stable-queue checkout is
 * configured, the later releases' patches touching them (a series whose
 * later patches edited the first, a later fix of the same lines). 1 when
 * it then comes out (taken lists the queued patches, edits the releases),
 * else 0. Without either, a linux-stable clone's tags may tell the release
 * (edited_upstream(): *by_clone set).
 */
static int reverse_after_later(struct check_ctx *c, const struct check_row *p,
			       int released, struct strbuf *taken,
			       struct strbuf *edits, int *by_clone)
{
	json_t *later, *l;
	char base[REPO_HEX_SIZE], out[REPO_HEX_SIZE];
	struct strbuf ids = STRBUF_INIT;
	int n = 0, found = 0, nrel = 0;
	size_t i;

	if (check_running_tree(c, base) < 0)
		return 0;
	later = queue_later_touching_json(c->bc->db, p->id);
	json_array_foreach(later, i, l)
	{
		struct repo_apply_result res = { 0 };
		if (repo_apply_reverse(c->repo, base, queue_field(l, "diff"),
				       out, &res) == 0 &&
		    res.status == REPO_APPLY_CLEAN) {
			memcpy(base, out, sizeof(base));
			strbuf_addf(&ids, "%s%lld", n++ ? ", " : "",
				    (long long)json_integer_value(
					    json_object_get(l, "id")));
		}
		repo_apply_result_release(&res);
	}
	json_decref(later);
	for (int pass = 0; pass < 2 && !found; pass++) {
		struct repo_apply_result res = { 0 };
		if (pass && (!released || !*c->bc->cfg.stable_queue_repo ||
			     c->rel_first < 0 ||
			     !(nrel = take_out_releases(c, p, base, edits))))
			break;
		if (!pass && !n)
			continue;
		found = repo_apply_reverse(c->repo, base, p->diff, out, &res) ==
				0 &&
			res.status == REPO_APPLY_CLEAN;
		repo_apply_result_release(&res);
	}
	/* no checkout, or it did not tell: a linux-stable clone's tags */
	if (!found && released) {
		strbuf_reset(edits);
		found = *by_clone = edited_upstream(c, p, edits);
	}
	if (found && n)
		strbuf_addf(taken, "patch%s %s", n > 1 ? "es" : "", ids.buf);
	if (!found)
		strbuf_reset(edits);
	strbuf_release(&ids);
	err_clear();
	return found;
}

/*
 * Content decides: the diff applies in reverse, or comes out once the later
 * queued patches are taken out, or every line it adds stands in the tree
 * (repo_lines_placed()); never when it applies forward and removes a line
 * (the lines it removes stand at its place). That a release lists its subject (released,
 * where) only names the release; without the lines it is unknown, never
 * already-applied.
 */
static enum check_result applies_check(struct check_ctx *c,
				       const struct check_row *p, int released,
				       const struct strbuf *where,
				       struct strbuf *detail)
{
	struct repo_apply_result res = { 0 };
	struct strbuf taken = STRBUF_INIT, placed = STRBUF_INIT,
		      rel = STRBUF_INIT, edits = STRBUF_INIT;
	const char *branch = c->bc->cfg.branch;
	enum check_result out;
	int by_clone = 0;
	int r = repo_apply_overlay(c->repo, c->running, &c->queued, p->diff,
				   &c->delta, &res);

	if (released)
		strbuf_addf(&rel, ": released in %s", where->buf);
	if (r < 0) {
		strbuf_addf(detail, "cannot apply: %s", err_msg());
		out = CR_CONFLICT;
	} else if (res.status == REPO_APPLY_CLEAN) {
		/* it applies where the lines it removes stand: applying it
		 * changes the tree, whatever else the tree has */
		if (!check_removes_lines(p->diff) &&
		    repo_lines_placed(c->repo, c->running, &c->queued, p->diff,
				      0, NULL) > 0) {
			strbuf_addf(detail,
				    "already in %s%s; every line it adds is in"
				    " the tree already, where a later change"
				    " moved it: applying it would add them"
				    " twice",
				    branch, rel.buf);
			out = CR_ALREADY;
		} else {
			strbuf_addstr(detail, "applies cleanly on the branch"
					      " and the patches queued before"
					      " it");
			out = CR_CLEAN;
		}
	} else if (res.status == REPO_APPLY_ALREADY) {
		strbuf_addf(detail, "already in %s%s; the diff applies in"
				    " reverse",
			    branch, rel.buf);
		out = CR_ALREADY;
	} else if (reverse_after_later(c, p, released, &taken, &edits,
				       &by_clone)) {
		strbuf_addf(detail, "already in %s%s", branch, rel.buf);
		if (edits.len)
			strbuf_addf(detail, ", its lines changed later in %s",
				    edits.buf);
		if (released)
			strbuf_addf(detail,
				    "; later releases changed the same lines"
				    " (%s)",
				    res.detail ? res.detail : "");
		if (!by_clone)
			strbuf_addf(detail,
				    "%s the diff applies in reverse once ",
				    released ? ";" : ":");
		if (taken.len)
			strbuf_addf(detail,
				    "the later queued %s touching the same"
				    " files %s taken out%s",
				    taken.buf,
				    strchr(taken.buf, ',') ? "are" : "is",
				    edits.len ? " and " : "");
		if (edits.len && !by_clone)
			strbuf_addstr(detail,
				      "those releases' patches (the"
				      " stable-queue checkout's) are taken"
				      " out");
		out = CR_ALREADY;
	} else if (repo_lines_placed(c->repo, c->running, &c->queued, p->diff,
				     released, &placed) > 0) {
		strbuf_addf(detail,
			    "already in %s%s; later releases changed the same"
			    " lines (%s), and every line it adds is in the"
			    " tree where they left it",
			    branch, rel.buf, res.detail ? res.detail : "");
		out = CR_ALREADY;
	} else if (released) {
		strbuf_addf(detail,
			    "a patch of this subject is in %s, but its lines"
			    " are not in the tree (%s; %s): it may need a"
			    " backport",
			    where->buf, res.detail ? res.detail : "conflict",
			    placed.len ? placed.buf : "its lines differ");
		/* what would tell a later release's edit from a backport */
		if (!*c->bc->cfg.stable_queue_repo)
			strbuf_addstr(detail,
				      ", or a later release edited them: no"
				      " stable-queue checkout says which"
				      " (set stable_queue_repo to a clone of"
				      " the stable-queue repository,"
				      " releases/X.Y.N/*.patch, or"
				      " upstream_repo to a linux-stable"
				      " clone)");
		else
			strbuf_addstr(detail,
				      "; taking the later releases' patches"
				      " of its files (the stable-queue"
				      " checkout's) out of the tree does not"
				      " bring it back");
		out = CR_UNKNOWN;
	} else {
		strbuf_addstr(detail, res.detail ? res.detail : "conflict");
		out = CR_CONFLICT;
	}
	err_clear();
	repo_apply_result_release(&res);
	strbuf_release(&taken);
	strbuf_release(&placed);
	strbuf_release(&rel);
	strbuf_release(&edits);
	return out;
}

/* ---- the run ---- */

/* The mail of a move, for the author: only what they can act on. */
static int notify(struct check_ctx *c, long long id, long long event,
		  const char *kind, const char *what, const char *why)
{
	struct notice n = {
		.patch_id = id,
		.event_id = event,
		.kind = kind,
		.what = what,
		.why = why,
	};
	long long r = queue_notify(c->bc->db, &c->bc->cfg, &n);
	return r < 0 ? (int)r : 0;
}

/*
 * 1, with the verdict's detail in *detail (caller frees), when the
 * patch's own test last said it is not needed here (not-present).
 */
static int test_not_present(sqlite3 *db, long long id, char **detail)
{
	char *result = NULL;

	if (queue_verdict_latest_full(db, id, "test", &result, detail) < 0 ||
	    !result || strcmp(result, "not-present")) {
		free(result);
		free(*detail);
		*detail = NULL;
		return 0;
	}
	free(result);
	return 1;
}

/*
 * Checks one patch inside the caller's transaction. *advance is set when
 * the patch stays in (or enters) the queue, so the running tree moves on
 * with it.
 */
static int check_one(struct check_ctx *c, struct check_row *p,
		     struct check_summary *sum, int *advance)
{
	struct strbuf d[CHECK_KIND_COUNT], reason = STRBUF_INIT,
		      where = STRBUF_INIT, reverted = STRBUF_INIT,
		      soak = STRBUF_INIT;
	enum check_result v[CHECK_KIND_COUNT];
	enum patch_state to;
	long long ev = 0;
	char *tested = NULL;
	int ret;

	for (int k = 0; k < CHECK_KIND_COUNT; k++)
		strbuf_init(&d[k], 128);
	*advance = 0;
	c->with_ok = 0;
	c->with[0] = '\0';
	int released = check_released_where(c, p, &where, &reverted) > 0;
	v[CHECK_APPLIES] = applies_check(c, p, released, &where,
					 &d[CHECK_APPLIES]);
	c->with_ok = v[CHECK_APPLIES] == CR_CLEAN;
	v[CHECK_FIXES] = check_fixes(c, p, v[CHECK_APPLIES], 0,
				     &d[CHECK_FIXES]);
	v[CHECK_FOLLOWUPS] = CR_NONE;
	if (c->up_indexed)
		v[CHECK_FOLLOWUPS] = check_upstream(c, p, &reverted, &soak,
						    &d[CHECK_FOLLOWUPS]);
	v[CHECK_FIXUP] = fixup_check(c, p, &reverted, &d[CHECK_FIXUP]);
	v[CHECK_FLAGS] = flags_check(c, p, &d[CHECK_FLAGS]);

	if (test_not_present(c->bc->db, p->id, &tested) && tested) {
		/* its own test passed without it here (verify.h) */
		to = PS_REJECTED;
		strbuf_addf(&reason, "not-present: %s", tested);
	} else if (v[CHECK_FIXUP] == CR_HELD) {
		to = PS_HELD;
		strbuf_addbuf(&reason, &d[CHECK_FIXUP]);
	} else if (v[CHECK_FLAGS] == CR_HELD &&
		   v[CHECK_FIXUP] != CR_OVERRIDDEN) {
		to = PS_HELD; /* a symlink or gitlink */
		strbuf_addbuf(&reason, &d[CHECK_FLAGS]);
	} else if (v[CHECK_APPLIES] == CR_ALREADY) {
		/* in the tree already: nobody's problem */
		to = PS_RELEASED;
		strbuf_addbuf(&reason, &d[CHECK_APPLIES]);
	} else if (v[CHECK_FIXES] == CR_ABSENT) {
		to = PS_REJECTED;
		strbuf_addbuf(&reason, &d[CHECK_FIXES]);
	} else if (v[CHECK_APPLIES] == CR_CONFLICT) {
		to = PS_CHECKED;
		strbuf_addf(&reason, "does not apply: %s", d[CHECK_APPLIES].buf);
	} else if (v[CHECK_APPLIES] == CR_UNKNOWN) {
		/* a release names it, its lines do not say so */
		to = PS_CHECKED;
		strbuf_addf(&reason, "needs a human (applies unknown): %s",
			    d[CHECK_APPLIES].buf);
	} else if (v[CHECK_FIXES] == CR_UNKNOWN ||
		   v[CHECK_FIXES] == CR_MISSING) {
		to = PS_CHECKED;
		strbuf_addf(&reason, "needs a human (fixes %s): %s",
			    check_result_name(v[CHECK_FIXES]),
			    d[CHECK_FIXES].buf);
	} else if (soak.len) {
		/* younger upstream than the maintainer wants: it waits */
		to = PS_CHECKED;
		strbuf_addbuf(&reason, &soak);
	} else if ((ret = origin_waits(c->bc, p->id, &reason)) != 0) {
		/* list mail: a maintainer queues it before it is built */
		if (ret < 0)
			goto out;
		to = PS_CHECKED;
	} else {
		to = PS_QUEUED;
		*advance = 1;
	}
	/* a hold the checks did not make (a reply's NAK, drop request or
	 * regzbot report) stays, its reason too: a maintainer lifts it */
	if (p->state == PS_HELD &&
	    queue_held_by(c->bc->db, p->id) != QUEUE_HOLD_CHECK) {
		to = PS_HELD;
		*advance = 0;
	}

	/*
	 * With several branches each reason names the branch whose evidence
	 * (tree, changelog, queue) it rests on: one fix has a row per branch
	 * and the verdicts may differ.
	 */
	for (int k = 0; k < CHECK_KIND_COUNT; k++) {
		if (k == CHECK_FOLLOWUPS && !c->up_indexed)
			continue; /* nothing was asked */
		char *det = branch_said(c->bc, d[k].buf);
		ret = check_verdict_add(c->bc->db, p->id, k, v[k],
					det ? det : d[k].buf);
		free(det);
		if (ret < 0)
			goto out;
	}
	/*
	 * Every check is in the log as 'checked', by whoever ran it (the
	 * import's user or token, the daemon), and a change of state as
	 * 'state' after it: a patch has the same events whichever door it
	 * came through and whether or not the check moved it.
	 */
	ev = event_add(c->bc->db, c->bc->actor, "patch", p->id, "checked",
		       "fixes=%s applies=%s fixup=%s",
		       check_result_name(v[CHECK_FIXES]),
		       check_result_name(v[CHECK_APPLIES]),
		       check_result_name(v[CHECK_FIXUP]));
	if (ev < 0) {
		ret = (int)ev;
		goto out;
	}
	if (p->state != to) {
		/* a not-present reason names its branch already */
		char *why = reason.len && !tested
				    ? branch_said(c->bc, reason.buf)
				    : NULL;
		const char *r = why ? why : reason.len ? reason.buf : NULL;
		ev = to == PS_HELD ? queue_hold(c->bc->db, p->id,
						QUEUE_HOLD_CHECK, r, c->bc->actor)
				   : queue_set_state(c->bc->db, p->id, to, r,
						     c->bc->actor);
		free(why);
		if (ev < 0) {
			ret = (int)ev;
			goto out;
		}
		if (to == PS_HELD) {
			char *what = xstrfmt("Your patch was held back from the"
					     " %s queue by stableq's checks",
					     c->bc->cfg.branch);
			ret = notify(c, p->id, ev, "held", what, reason.buf);
			free(what);
			if (ret < 0)
				goto out;
		}
		/* queued now, with upstream fixes of it that are not: its
		 * author is told which */
		if (to == PS_QUEUED && v[CHECK_FOLLOWUPS] == CR_FOUND) {
			char *what = xstrfmt("Your patch was queued for %s;"
					     " upstream fixes of it are not",
					     c->bc->cfg.branch);
			ret = notify(c, p->id, ev, "followups", what,
				     d[CHECK_FOLLOWUPS].buf);
			free(what);
			if (ret < 0)
				goto out;
		}
	}
	log_info("patch %lld: fixes=%s applies=%s fixup=%s -> %s", p->id,
		 check_result_name(v[CHECK_FIXES]),
		 check_result_name(v[CHECK_APPLIES]),
		 check_result_name(v[CHECK_FIXUP]), queue_state_name(to));
	sum->checked++;
	sum->queued += to == PS_QUEUED;
	sum->held += to == PS_HELD;
	sum->rejected += to == PS_REJECTED;
	sum->waiting += to == PS_CHECKED;
	sum->released += to == PS_RELEASED;
	p->state = to;
	ret = 0;
out:
	for (int k = 0; k < CHECK_KIND_COUNT; k++)
		strbuf_release(&d[k]);
	strbuf_release(&reason);
	strbuf_release(&where);
	strbuf_release(&reverted);
	strbuf_release(&soak);
	free(tested);
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

/* Debian's changelog, indexed once per file in the store (not per patch). */
static void open_changelog(struct check_ctx *c)
{
	const char *path = c->bc->cfg.debian_changelog;
	long n = 0;

	if (!path || !*path)
		return;
	if (changelog_index(c->bc->db, path, &n, NULL) < 0) {
		log_warnx("checks without Debian's changelog: %s", err_msg());
		return;
	}
	c->changelog = path;
}

static int open_ctx(struct check_ctx *c, struct branch_ctx *bc)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->bc = bc;
	if ((ret = repo_open(&c->repo, bc->cfg.tree_dir)) < 0)
		return err_set(ERR_NOTFOUND,
			       "the stable tree %s is not there (run `stableq"
			       " tree init`): %s",
			       bc->cfg.tree_dir, err_msg());
	if ((ret = repo_branch_tip(c->repo, bc->cfg.branch, c->tip)) < 0)
		return err_prefix(ERR_NOTFOUND, "branch %s", bc->cfg.branch);
	if ((ret = repo_branch_version(c->repo, c->tip, &c->version)) < 0)
		return ret;
	c->series = xstrdup(c->version);
	char *dot = strchr(c->series, '.');
	if (dot && (dot = strchr(dot + 1, '.'))) {
		*dot = '\0';
		c->sublevel = strtol(dot + 1, NULL, 10);
	}
	memcpy(c->running, c->tip, sizeof(c->running));
	c->history_small = repo_history_small(c->repo, c->tip, 4096, &c->history,
					      &c->nhistory) > 0;
	/* the trees the checks make are thrown away: not one file each */
	if ((ret = repo_objects_in_memory(c->repo)) < 0)
		return ret;
	if (*bc->cfg.upstream_repo &&
	    repo_open(&c->upstream, bc->cfg.upstream_repo) < 0)
		return err_prefix(ERR_INVALID, "upstream_repo %s",
				  bc->cfg.upstream_repo);
	/* once, then what is new: its follow-ups, reverts and releases */
	if (c->upstream) {
		if (upstream_index_update(bc->db, c->upstream,
					  bc->cfg.upstream_repo, NULL) < 0)
			log_warnx("checks without the upstream index: %s",
				  err_msg());
		else
			c->up_indexed = 1;
		/* trying a patch on it (released-then-edited) writes blobs:
		 * in memory, never into the maintainer's clone */
		c->upstream_mem = repo_objects_in_memory(c->upstream) == 0;
		err_clear();
	}
	open_changelog(c);
	return 0;
}

/*
 * The running tree as a tree (hex), written from the branch's tree and the
 * queued patches' files; and the same with the patch being checked on top
 * (ERR_NOTFOUND when it does not apply). For the rare checks that need a
 * whole tree.
 */
int check_running_tree(struct check_ctx *c, char hex[REPO_HEX_SIZE])
{
	return repo_overlay_tree(c->repo, c->running, &c->queued, NULL, hex);
}

int check_with_tree(struct check_ctx *c, char hex[REPO_HEX_SIZE])
{
	if (!c->with_ok)
		return ERR_NOTFOUND;
	if (!*c->with && repo_overlay_tree(c->repo, c->running, &c->queued,
					   &c->delta, c->with) < 0)
		return -1;
	memcpy(hex, c->with, REPO_HEX_SIZE);
	return 0;
}

static void close_ctx(struct check_ctx *c)
{
	repo_overlay_release(&c->queued);
	repo_overlay_release(&c->delta);
	repo_free(c->repo);
	repo_free(c->upstream);
	free(c->history);
	free(c->version);
	free(c->series);
	free(c->rel_sq);
	free(c->up_tags);
}

/*
 * The running tree before the first patch checked: the one kept for the
 * same queued prefix (prefix.h), or the queued patches before it (ids,
 * in queue order) applied as they always were. *hit says which; key gets
 * the prefix's key.
 */
static int start_running(struct check_ctx *c, const struct prefix *before,
			 const long long *ids, size_t n, char key[REPO_HEX_SIZE],
			 int *hit)
{
	char tree[REPO_HEX_SIZE];
	int ret;

	prefix_key(before, c->tip, key);
	*hit = prefix_find(c->bc->db, c->bc->branch_id, key, tree) &&
	       repo_tree_kept(c->repo, tree);
	if (*hit) {
		log_info("checks start from the kept tree of the %zu queued"
			 " patches before them",
			 before->n);
		memcpy(c->running, tree, sizeof(c->running));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct repo_apply_result res = { 0 };
		struct check_row r;
		if ((ret = check_row_load(c->bc->db, ids[i], &r)) < 0)
			return ret;
		if (repo_apply_overlay(c->repo, c->running, &c->queued, r.diff,
				       &c->delta, &res) == 0 &&
		    res.status == REPO_APPLY_CLEAN)
			repo_overlay_merge(&c->queued, &c->delta);
		repo_overlay_release(&c->delta);
		repo_apply_result_release(&res);
		check_row_release(&r);
	}
	err_clear();
	return 0;
}

/*
 * Keeps the running tree the run ends with for the next one, unless it is
 * the one it started from. The cache is an aid: failing to keep it costs
 * the next run time, not a verdict.
 */
static void keep_running(struct check_ctx *c, const struct prefix *after,
			 const char *started, int hit)
{
	char key[REPO_HEX_SIZE], tree[REPO_HEX_SIZE];

	prefix_key(after, c->tip, key);
	if ((hit && !strcmp(key, started)) ||
	    (prefix_find(c->bc->db, c->bc->branch_id, key, tree) &&
	     repo_tree_kept(c->repo, tree)))
		return; /* kept already */
	if (repo_overlay_keep(c->repo, c->running, &c->queued, tree) < 0 ||
	    prefix_store(c->bc->db, c->bc->branch_id, key, tree, after->n) < 0)
		log_warnx("the running tree is not kept for the next checks:"
			  " %s",
			  err_msg());
	err_clear();
}

int check_run(struct branch_ctx *bc, const long long *ids, size_t n,
	      struct check_summary *sum)
{
	struct check_ctx c;
	long long *all = NULL, *done = NULL, *pending = NULL;
	size_t nall = 0, ndone = 0, batched = 0, npending = 0;
	struct prefix before = PREFIX_INIT, after = PREFIX_INIT;
	char started[REPO_HEX_SIZE] = "";
	int ret, in_tx = 0, hit = 0;

	memset(sum, 0, sizeof(*sum));
	if ((ret = open_ctx(&c, bc)) < 0)
		goto out;
	for (size_t i = 0; ids && i < n; i++) {
		char *key = NULL;
		if ((ret = queue_patch_branch(bc->db, ids[i], &key)) < 0)
			goto out;
		if (strcmp(key, bc->cfg.branch_key))
			ret = err_set(ERR_INVALID,
				      "patch %lld is in branch %s's queue, not"
				      " %s's (--branch %s)",
				      ids[i], key, bc->cfg.branch_key, key);
		free(key);
		if (ret < 0)
			goto out;
	}
	if ((ret = queue_ids(bc->db, bc->branch_id, -1, &all, &nall)) < 0)
		goto out;
	done = xcalloc(nall + 1, sizeof(*done));
	pending = xcalloc(nall + 1, sizeof(*pending));
	for (size_t i = 0; i < nall; i++) {
		struct check_row r;
		int advance = 0;

		if ((ret = check_row_load(bc->db, all[i], &r)) < 0)
			goto out;
		switch (r.state) {
		case PS_RELEASED: /* on the branch already */
		case PS_DROPPED:
		case PS_REVERTED:
		case PS_BROKEN:
			check_row_release(&r);
			continue;
		default:
			break;
		}
		if (wanted(ids, n, r.id)) {
			if (!*started &&
			    (ret = start_running(&c, &before, pending, npending,
						 started, &hit)) < 0) {
				check_row_release(&r);
				goto out;
			}
			if (!in_tx && (ret = db_begin(bc->db)) < 0) {
				check_row_release(&r);
				goto out;
			}
			in_tx = 1;
			ret = check_one(&c, &r, sum, &advance);
			if (ret < 0) {
				check_row_release(&r);
				goto out;
			}
			if (++batched == CHECK_BATCH) {
				in_tx = batched = 0;
				if ((ret = db_commit(bc->db)) < 0) {
					db_rollback(bc->db);
					check_row_release(&r);
					goto out;
				}
			}
			done[ndone++] = r.id;
			if (r.state == PS_QUEUED)
				prefix_add(&after, r.id, r.diff);
		} else if (r.state == PS_QUEUED && !*started) {
			/* applied once the first patch checked is known, unless
			 * the tree of them all is kept */
			prefix_add(&before, r.id, r.diff);
			prefix_add(&after, r.id, r.diff);
			pending[npending++] = r.id;
		} else if (r.state == PS_QUEUED) {
			struct repo_apply_result res = { 0 };
			prefix_add(&after, r.id, r.diff);
			advance = repo_apply_overlay(c.repo, c.running,
						     &c.queued, r.diff,
						     &c.delta, &res) == 0 &&
				  res.status == REPO_APPLY_CLEAN;
			repo_apply_result_release(&res);
		}
		/* the running tree moves on with the patch's files */
		if (advance)
			repo_overlay_merge(&c.queued, &c.delta);
		repo_overlay_release(&c.delta);
		check_row_release(&r);
	}
	ret = 0;
	if (in_tx && (ret = db_commit(bc->db)) == 0)
		in_tx = 0;
	if (!ret && *started)
		keep_running(&c, &after, started, hit);
	/* what the checked patches are now, in a few queries for them all */
	if (!ret && !(sum->json = queue_patches_json(bc->db, done, ndone)))
		ret = ERR_IO;
out:
	if (in_tx)
		db_rollback(bc->db);
	free(all);
	free(done);
	free(pending);
	prefix_release(&before);
	prefix_release(&after);
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
		" for a human, %zu already in the tree\n",
		s->checked, s->queued, s->held, s->rejected, s->waiting,
		s->released);
}

int check_due(struct branch_ctx *bc, long long *id)
{
	return queue_first_in_state(bc->db, bc->branch_id, PS_IMPORTED, id) ==
	       0;
}
