/* repo-history.c: is a commit, or its backport, on the branch or queued? */
#include "repo-int.h"
#include "err.h"
#include "strbuf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int repo_sha_arg(char out[REPO_HEX_SIZE], const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < REPO_MIN_ABBREV || n > REPO_HEXSZ ||
	    strspn(s, "0123456789abcdefABCDEF") != n)
		return err_set(ERR_INVALID,
			       "'%s': not a SHA (%d to 40 hex digits)",
			       s ? s : "", REPO_MIN_ABBREV);
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[n] = '\0';
	return 0;
}

int repo_sha_prefix_match(const char *a, size_t la, const char *b, size_t lb)
{
	size_t l = la < lb ? la : lb;

	if (l < REPO_MIN_ABBREV)
		return 0;
	return !strncasecmp(a, b, l);
}

static size_t hex_run(const char *p, const char *end)
{
	size_t n = 0;

	while (p + n < end && isxdigit((unsigned char)p[n]))
		n++;
	return n;
}

static int word_at(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(end - p) >= n && !strncasecmp(p, w, n);
}

/*
 * Stable backports name their upstream commit in one of two ways:
 *   commit 1c109fabbd51b3a6bbed8e7ee37f9a6aa2d1b1a1 upstream.
 *   [ Upstream commit 1c109fabbd51b3a6bbed8e7ee37f9a6aa2d1b1a1 ]
 * Both are matched case-insensitively, leading white space allowed.
 */
void repo_upstream_lines(const char *msg, size_t len,
			 void (*fn)(void *ctx, const char *sha, size_t n),
			 void *ctx)
{
	const char *p = msg, *end = msg + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end, *q = p;
		size_t n;

		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (q < le && *q == '[') {
			q++;
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (word_at(q, le, "upstream commit ")) {
				q += 16;
				while (q < le && *q == ' ')
					q++;
				n = hex_run(q, le);
				if (n >= REPO_MIN_ABBREV && n <= REPO_HEXSZ &&
				    (q + n == le || q[n] == ' ' || q[n] == ']'))
					fn(ctx, q, n);
			}
		} else if (word_at(q, le, "commit ")) {
			q += 7;
			while (q < le && *q == ' ')
				q++;
			n = hex_run(q, le);
			if (n >= REPO_MIN_ABBREV && n <= REPO_HEXSZ &&
			    q + n < le && q[n] == ' ') {
				const char *w = q + n;
				while (w < le && *w == ' ')
					w++;
				if (word_at(w, le, "upstream"))
					fn(ctx, q, n);
			}
		}
		p = eol ? eol + 1 : end;
	}
}

/* Branch history ------------------------------------------------------- */

static int resolve_commit(struct repo *r, const char *spec, git_oid *out)
{
	git_object *obj;
	int ret = repo_lookup(r, &obj, spec, GIT_OBJECT_COMMIT);

	if (ret < 0)
		return ret;
	git_oid_cpy(out, git_object_id(obj));
	git_object_free(obj);
	return 0;
}

/*
 * The object whose id starts with sha (checked, lowered into want): *found
 * gets git_odb_exists_prefix()'s answer (0, GIT_ENOTFOUND, GIT_EAMBIGUOUS,
 * ...) and *odb the database, which the caller frees. Negative when sha is
 * no SHA or the database cannot be had.
 */
static int find_prefix(struct repo *r, const char *sha,
		       char want[REPO_HEX_SIZE], git_odb **odb, git_oid *id,
		       int *found)
{
	git_oid shortid;
	int ret;

	if ((ret = repo_sha_arg(want, sha)) < 0)
		return ret;
	if (git_oid_fromstrn(&shortid, want, strlen(want)) < 0)
		return err_set(ERR_INVALID, "'%s': not a SHA", sha);
	if (git_repository_odb(odb, r->git) < 0)
		return repo_git_err(-1, "object database");
	*found = git_odb_exists_prefix(id, *odb, &shortid, strlen(want));
	return 0;
}

int repo_commit_in_history(struct repo *r, const char *tip_spec,
			   const char *sha)
{
	char want[REPO_HEX_SIZE];
	git_oid tip, id;
	git_odb *odb = NULL;
	git_revwalk *walk = NULL;
	size_t n;
	int ret, found;

	if ((ret = resolve_commit(r, tip_spec, &tip)) < 0 ||
	    (ret = find_prefix(r, sha, want, &odb, &id, &found)) < 0)
		return ret;
	n = strlen(want);
	ret = found;
	if (ret == GIT_ENOTFOUND) {
		ret = 0;
		goto out;
	}
	if (ret == 0) {
		size_t sz;
		git_object_t type;
		if (git_odb_read_header(&sz, &type, odb, &id) < 0 ||
		    type != GIT_OBJECT_COMMIT) {
			ret = 0;
			goto out;
		}
		if (git_oid_equal(&id, &tip)) {
			ret = 1;
			goto out;
		}
		ret = git_graph_descendant_of(r->git, &tip, &id);
		if (ret < 0)
			ret = repo_git_err(ret, "history of %s", tip_spec);
		goto out;
	}
	if (ret != GIT_EAMBIGUOUS) {
		ret = repo_git_err(ret, "looking up %s", want);
		goto out;
	}
	/* Several objects share the prefix: only commits on the branch count.
	 */
	if (git_revwalk_new(&walk, r->git) < 0 ||
	    git_revwalk_push(walk, &tip) < 0) {
		ret = repo_git_err(-1, "history of %s", tip_spec);
		goto out;
	}
	ret = 0;
	while (git_revwalk_next(&id, walk) == 0) {
		char hex[REPO_HEX_SIZE];
		git_oid_tostr(hex, sizeof(hex), &id);
		if (!strncmp(hex, want, n)) {
			ret = 1;
			break;
		}
	}
out:
	git_revwalk_free(walk);
	git_odb_free(odb);
	return ret;
}

int repo_object_exists(struct repo *r, const char *sha)
{
	char want[REPO_HEX_SIZE];
	git_odb *odb = NULL;
	git_oid id;
	int found = 0, ret = find_prefix(r, sha, want, &odb, &id, &found);

	git_odb_free(odb);
	if (ret < 0)
		return ret;
	ret = found;
	if (ret == GIT_ENOTFOUND)
		return 0;
	if (ret == GIT_EAMBIGUOUS)
		return 2;
	return ret < 0 ? repo_git_err(ret, "looking up %s", want) : 1;
}

struct add_ctx {
	struct repo *r;
	const git_oid *commit;
	size_t order;
};

static void add_upstream(void *vctx, const char *sha, size_t n)
{
	struct add_ctx *c = vctx;
	struct repo *r = c->r;
	struct repo_upstream *u;

	if (r->nups == r->aups) {
		r->aups = r->aups ? r->aups * 2 : 64;
		r->ups = xrealloc(r->ups, r->aups * sizeof(*r->ups));
	}
	u = &r->ups[r->nups++];
	for (size_t i = 0; i < n; i++)
		u->sha[i] = (char)tolower((unsigned char)sha[i]);
	u->sha[n] = '\0';
	git_oid_cpy(&u->commit, c->commit);
	u->order = c->order;
}

void repo_reverts_clear(struct repo *r)
{
	for (size_t i = 0; i < r->nrevs; i++)
		free(r->revs[i].subject);
	r->nrevs = 0;
}

/* A commit whose summary is Revert "<subject>": kept for repo_find_revert(). */
static void add_revert(struct repo *r, const git_oid *id, const char *summary)
{
	size_t n;

	if (!summary || strncmp(summary, "Revert \"", 8))
		return;
	summary += 8;
	n = strlen(summary);
	if (!n || summary[n - 1] != '"')
		return;
	if (r->nrevs == r->arevs) {
		r->arevs = r->arevs ? r->arevs * 2 : 64;
		r->revs = xrealloc(r->revs, r->arevs * sizeof(*r->revs));
	}
	r->revs[r->nrevs].subject = xstrndup(summary, n - 1);
	git_oid_cpy(&r->revs[r->nrevs].commit, id);
	r->nrevs++;
}

static int ups_cmp(const void *a, const void *b)
{
	const struct repo_upstream *x = a, *y = b;
	int c = strncmp(x->sha, y->sha, REPO_MIN_ABBREV);

	if (c)
		return c;
	/* newest first among the same prefix: higher order is newer */
	return x->order < y->order ? 1 : x->order > y->order ? -1 : 0;
}

/*
 * Brings the cache to tip: walks only the commits not reachable from the
 * cached tip when tip descends from it, else starts over. Entries of a
 * later walk get higher order numbers (newer); within a walk, the walk
 * (newest first) gives decreasing numbers.
 */
static int cache_update(struct repo *r, const git_oid *tip)
{
	git_revwalk *walk = NULL;
	git_oid id;
	size_t base, count = 0;
	int ret;

	if (r->cache_valid && git_oid_equal(&r->cache_tip, tip))
		return 0;
	if (r->cache_valid &&
	    git_graph_descendant_of(r->git, tip, &r->cache_tip) != 1) {
		r->cache_valid = 0;
		r->nups = 0;
		repo_reverts_clear(r);
	}
	if ((ret = git_revwalk_new(&walk, r->git)) < 0 ||
	    (ret = git_revwalk_push(walk, tip)) < 0 ||
	    (r->cache_valid &&
	     (ret = git_revwalk_hide(walk, &r->cache_tip)) < 0)) {
		ret = repo_git_err(ret, "history walk");
		goto out;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL);
	/* new commits rank above everything cached */
	base = r->nups ? r->ups[0].order : 0;
	for (size_t i = 0; i < r->nups; i++)
		if (r->ups[i].order > base)
			base = r->ups[i].order;
	base += (size_t)1 << 40;
	while ((ret = git_revwalk_next(&id, walk)) == 0) {
		git_commit *c;
		struct add_ctx ctx = {r, &id, base - count++};
		const char *msg;

		if (git_commit_lookup(&c, r->git, &id) < 0) {
			ret = repo_git_err(-1, "history walk");
			goto out;
		}
		msg = git_commit_message_raw(c);
		repo_upstream_lines(msg, strlen(msg), add_upstream, &ctx);
		add_revert(r, &id, git_commit_summary(c));
		git_commit_free(c);
	}
	if (ret != GIT_ITEROVER) {
		ret = repo_git_err(ret, "history walk");
		r->cache_valid = 0;
		r->nups = 0;
		repo_reverts_clear(r);
		goto out;
	}
	if (r->nups)
		qsort(r->ups, r->nups, sizeof(*r->ups), ups_cmp);
	r->ups_sorted = r->nups;
	git_oid_cpy(&r->cache_tip, tip);
	r->cache_valid = 1;
	ret = 0;
out:
	git_revwalk_free(walk);
	return ret;
}

int repo_find_backport(struct repo *r, const char *tip_spec,
		       const char *upstream_sha, char out_hex[REPO_HEX_SIZE])
{
	char want[REPO_HEX_SIZE];
	git_oid tip;
	size_t lo = 0, hi, n;
	int ret;

	if ((ret = repo_sha_arg(want, upstream_sha)) < 0)
		return ret;
	if ((ret = resolve_commit(r, tip_spec, &tip)) < 0)
		return ret;
	if ((ret = cache_update(r, &tip)) < 0)
		return ret;
	n = strlen(want);
	/* first entry whose first REPO_MIN_ABBREV digits are >= want's */
	hi = r->nups;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(r->ups[mid].sha, want, REPO_MIN_ABBREV) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < r->nups; i++) {
		const struct repo_upstream *u = &r->ups[i];
		if (strncmp(u->sha, want, REPO_MIN_ABBREV))
			break;
		if (repo_sha_prefix_match(u->sha, strlen(u->sha), want, n)) {
			if (out_hex)
				git_oid_tostr(out_hex, REPO_HEX_SIZE,
					      &u->commit);
			return 1;
		}
	}
	return 0;
}

int repo_find_revert(struct repo *r, const char *tip_spec,
		     const char *subject, char out_hex[REPO_HEX_SIZE])
{
	git_oid tip;
	int ret;

	if (!subject || !*subject)
		return 0;
	if ((ret = resolve_commit(r, tip_spec, &tip)) < 0)
		return ret;
	if ((ret = cache_update(r, &tip)) < 0)
		return ret;
	for (size_t i = 0; i < r->nrevs; i++)
		if (!strcmp(r->revs[i].subject, subject)) {
			if (out_hex)
				git_oid_tostr(out_hex, REPO_HEX_SIZE,
					      &r->revs[i].commit);
			return 1;
		}
	return 0;
}

char *repo_dir_branch_version(const char *tree_dir, const char *branch)
{
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE];
	char *version = NULL;

	if (repo_open(&r, tree_dir) == 0 &&
	    repo_branch_tip(r, branch, tip) == 0)
		repo_branch_version(r, tip, &version);
	repo_free(r);
	err_clear();
	return version;
}

int repo_branch_version(struct repo *r, const char *tip, char **version)
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
