/* repo-walk.c: a repository's version tags and its commits walked between two of them. */
#include "repo-int.h"
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * "v6.1-rc1" < "v6.1" < "v6.1.5" < "v6.2-rc1": (major, minor, rc, sub)
 * with rc 1000 for a release. 0 when name is not a version tag.
 */
static int version_key(const char *name, long k[4])
{
	long a = 0, b = 0, c = 0, rc = 1000;
	int used = 0;

	if (sscanf(name, "v%ld.%ld%n", &a, &b, &used) != 2)
		return 0;
	name += used;
	if (*name == '.') {
		if (sscanf(name, ".%ld%n", &c, &used) != 1)
			return 0;
		name += used;
	}
	if (!strncmp(name, "-rc", 3)) {
		if (sscanf(name, "-rc%ld%n", &rc, &used) != 1 || rc >= 1000)
			return 0;
		name += used;
	}
	if (*name)
		return 0;
	k[0] = a;
	k[1] = b;
	k[2] = rc;
	k[3] = c;
	return 1;
}

struct tag_sort {
	struct repo_tag t;
	long k[4];
};

static int tag_cmp(const void *x, const void *y)
{
	const struct tag_sort *a = x, *b = y;

	for (int i = 0; i < 4; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return strcmp(a->t.name, b->t.name);
}

int repo_version_tags(struct repo *r, struct repo_tag **out, size_t *n)
{
	git_strarray names = { 0 };
	struct tag_sort *v = NULL;
	size_t nv = 0;
	int ret;

	*out = NULL;
	*n = 0;
	if ((ret = git_tag_list_match(&names, "v*", r->git)) < 0)
		return repo_git_err(ret, "listing tags");
	v = xcalloc(names.count + 1, sizeof(*v));
	for (size_t i = 0; i < names.count; i++) {
		struct tag_sort *s = &v[nv];
		git_object *tag = NULL, *obj = NULL;
		char ref[300];

		if (strlen(names.strings[i]) >= sizeof(s->t.name) ||
		    !version_key(names.strings[i], s->k))
			continue;
		snprintf(ref, sizeof(ref), "refs/tags/%s", names.strings[i]);
		ret = git_revparse_single(&tag, r->git, ref) < 0 ||
		      git_object_peel(&obj, tag, GIT_OBJECT_COMMIT) < 0;
		git_object_free(tag); /* an annotated tag's own object */
		if (ret) {
			git_object_free(obj);
			continue; /* a tag of a tree or blob: no release */
		}
		snprintf(s->t.name, sizeof(s->t.name), "%s", names.strings[i]);
		git_oid_tostr(s->t.commit, REPO_HEX_SIZE, git_object_id(obj));
		s->t.time = (long long)git_commit_time((git_commit *)obj);
		git_object_free(obj);
		nv++;
	}
	git_strarray_dispose(&names);
	qsort(v, nv, sizeof(*v), tag_cmp);
	*out = xcalloc(nv + 1, sizeof(**out));
	for (size_t i = 0; i < nv; i++)
		(*out)[i] = v[i].t;
	*n = nv;
	free(v);
	return 0;
}

struct first_up {
	char sha[REPO_HEX_SIZE];
};

static void first_upstream(void *ctx, const char *sha, size_t n)
{
	struct first_up *f = ctx;

	if (!*f->sha && n < REPO_HEX_SIZE) {
		memcpy(f->sha, sha, n);
		f->sha[n] = '\0';
	}
}

int repo_walk(struct repo *r, const char *push, const char *hide,
	      repo_walk_fn *fn, void *ctx)
{
	git_revwalk *walk = NULL;
	git_object *p = NULL, *h = NULL;
	git_oid id;
	int ret;

	if ((ret = repo_lookup(r, &p, push, GIT_OBJECT_COMMIT)) < 0)
		return ret;
	if (hide && (ret = repo_lookup(r, &h, hide, GIT_OBJECT_COMMIT)) < 0)
		goto out;
	if ((ret = git_revwalk_new(&walk, r->git)) < 0 ||
	    (ret = git_revwalk_push(walk, git_object_id(p))) < 0 ||
	    (h && (ret = git_revwalk_hide(walk, git_object_id(h))) < 0)) {
		ret = repo_git_err(ret, "walking %s", push);
		goto out;
	}
	while ((ret = git_revwalk_next(&id, walk)) == 0) {
		git_commit *c;
		struct repo_walk_commit wc = { 0 };
		struct first_up up = { "" };

		if (git_commit_lookup(&c, r->git, &id) < 0) {
			ret = repo_git_err(-1, "walking %s", push);
			goto out;
		}
		git_oid_tostr(wc.sha, REPO_HEX_SIZE, &id);
		wc.message = git_commit_message_raw(c);
		wc.summary = git_commit_summary(c);
		repo_upstream_lines(wc.message, strlen(wc.message),
				    first_upstream, &up);
		wc.backport_of = *up.sha ? up.sha : NULL;
		ret = fn(ctx, &wc);
		git_commit_free(c);
		if (ret)
			goto out;
	}
	ret = ret == GIT_ITEROVER ? 0 : repo_git_err(ret, "walking %s", push);
out:
	git_revwalk_free(walk);
	git_object_free(p);
	git_object_free(h);
	return ret;
}
