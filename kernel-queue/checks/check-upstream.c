/* check-upstream.c: the followups verdict, upstream reverts and soak, asked of the upstream index. */
#include "changelog.h"
#include "check-int.h"
#include "err.h"
#include "upstream.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct seen {
	struct check_ctx *c;
	struct strbuf *out;
	int n;
};

/*
 * Are the lines of upstream commit sha in the running tree? Its diff (the
 * upstream clone's) applies there in reverse, or every line it adds stands
 * in it (repo_lines_placed()).
 */
static int content_in(struct check_ctx *c, const char *sha)
{
	char *mail = NULL, base[REPO_HEX_SIZE], out[REPO_HEX_SIZE];
	struct repo_apply_result res = { 0 };
	int in = 0;

	if (!c->upstream || repo_format_patch(c->upstream, sha, NULL, &mail) < 0)
		return 0;
	if (check_running_tree(c, base) == 0 &&
	    repo_apply_reverse(c->repo, base, mail, out, &res) == 0 &&
	    res.status == REPO_APPLY_CLEAN)
		in = 1;
	repo_apply_result_release(&res);
	if (!in)
		in = repo_lines_placed(c->repo, c->running, &c->queued, mail, 0,
				       NULL) > 0;
	free(mail);
	return in;
}

/*
 * A follow-up that is neither queued nor in the tree. In the tree, asked in
 * this order: the branch's history (the commit, a backport of it), the
 * upstream index (first released up to the branch's version, or a
 * backport of it released in the branch's series), Debian's changelog
 * (its subject listed up to the tree's version), the tree's content (its
 * lines are there). A tree without history (a tarball's) has only the
 * last three.
 */
static int followup(void *ctx, const char *sha, const char *subject,
		    const char *release)
{
	struct seen *s = ctx;
	struct check_ctx *c = s->c;
	char found[REPO_HEX_SIZE], *tag = NULL;
	struct changelog_hit hit;
	int in = queue_find_upstream(c->bc->db, c->bc->branch_id, sha, NULL) >
			 0 ||
		 check_in_history(c, sha) ||
		 repo_find_backport(c->repo, c->tip, sha, found) > 0 ||
		 (release && upstream_release_in(release, c->version)) ||
		 upstream_backport_in(c->bc->db, c->bc->cfg.upstream_repo, sha,
				      c->version, &tag) > 0 ||
		 (c->changelog && subject &&
		  changelog_lookup(c->bc->db, c->changelog, c->series,
				   c->sublevel, subject, &hit) > 0) ||
		 content_in(c, sha);

	free(tag);
	err_clear();
	if (in)
		return 0;
	strbuf_addf(s->out, "%s%.12s (\"%s\", %s)", s->n++ ? ", " : "", sha,
		    subject, release ? release : "not in a tagged release yet");
	return 0;
}

static int revert(void *ctx, const char *sha, const char *subject,
		  const char *release)
{
	struct seen *s = ctx;

	strbuf_addf(s->out, "%sreverted upstream by %.12s (\"%s\"%s%s)",
		    s->out->len ? "; " : "", sha, subject,
		    release ? ", in " : "", release ? release : "");
	s->n++;
	return 0;
}

enum check_result check_upstream(struct check_ctx *c, const struct check_row *p,
				 struct strbuf *reverted, struct strbuf *soak,
				 struct strbuf *detail)
{
	const char *path = c->bc->cfg.upstream_repo;
	struct strbuf list = STRBUF_INIT;
	struct seen fu = { c, &list, 0 }, rv = { c, reverted, 0 };
	char *tag = NULL;
	long long at = 0;
	int min = c->bc->cfg.min_soak_days, r;

	if (!p->upstream || strlen(p->upstream) < 8) {
		strbuf_addstr(detail, "no upstream commit named: nothing to"
				      " follow");
		return CR_NONE;
	}
	upstream_reverts_of(c->bc->db, path, p->upstream, revert, &rv);
	upstream_fixes_of(c->bc->db, path, p->upstream, followup, &fu);
	if (fu.n)
		strbuf_addf(detail,
			    "upstream follow-up%s of %.12s not in the queue or"
			    " %s: %s",
			    fu.n > 1 ? "s" : "", p->upstream, c->bc->cfg.branch,
			    list.buf);
	else
		strbuf_addf(detail,
			    "no upstream commit fixes %.12s outside the queue"
			    " and %s",
			    p->upstream, c->bc->cfg.branch);
	r = upstream_release_of(c->bc->db, path, p->upstream, &tag, &at);
	if (r > 0) {
		long long days = ((long long)time(NULL) - at) / 86400;
		strbuf_addf(detail, "; upstream in %s for %lld day%s", tag, days,
			    days == 1 ? "" : "s");
		if (min > 0 && days < min)
			strbuf_addf(soak,
				    "soaking: upstream %.12s is in %s for %lld"
				    " day%s, min_soak_days is %d",
				    p->upstream, tag, days, days == 1 ? "" : "s",
				    min);
	} else if (r == 0) {
		strbuf_addstr(detail, "; upstream in no tagged release yet");
		if (min > 0)
			strbuf_addf(soak,
				    "soaking: upstream %.12s is in no tagged"
				    " release yet, min_soak_days is %d",
				    p->upstream, min);
	} else {
		strbuf_addstr(detail, "; not in the upstream clone");
	}
	err_clear();
	free(tag);
	strbuf_release(&list);
	return fu.n ? CR_FOUND : CR_NONE;
}
