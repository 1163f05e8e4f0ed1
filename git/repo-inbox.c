/* repo-inbox.c: a public-inbox v2 epoch (git/N.git): one message per commit, in file `m`. */
#include "repo-int.h"
#include "err.h"

#include <string.h>

int repo_inbox_tip(const char *gitdir, char out[REPO_HEX_SIZE])
{
	git_repository *git = NULL;
	git_oid oid;
	int ret;

	out[0] = '\0';
	repo_lib_init();
	if ((ret = git_repository_open_bare(&git, gitdir)) < 0)
		return repo_git_err(ret, "%s: not a public-inbox epoch", gitdir);
	ret = git_reference_name_to_id(&oid, git, "HEAD");
	if (ret == GIT_ENOTFOUND || ret == GIT_EUNBORNBRANCH)
		ret = 0; /* an epoch without messages yet */
	else if (ret < 0)
		ret = repo_git_err(ret, "%s: HEAD", gitdir);
	else
		git_oid_tostr(out, REPO_HEX_SIZE, &oid);
	git_repository_free(git);
	return ret;
}

int repo_inbox_walk(const char *gitdir, const char *after,
		    repo_inbox_fn *fn, void *ctx, char tip[REPO_HEX_SIZE])
{
	git_repository *git = NULL;
	git_revwalk *walk = NULL;
	git_oid oid, stop;
	int ret;

	tip[0] = '\0';
	if ((ret = repo_inbox_tip(gitdir, tip)) < 0 || !tip[0])
		return ret;
	if (after && *after && !strcmp(after, tip))
		return 0;
	if ((ret = git_repository_open_bare(&git, gitdir)) < 0)
		return repo_git_err(ret, "%s", gitdir);
	if ((ret = git_revwalk_new(&walk, git)) < 0 ||
	    (ret = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL |
						     GIT_SORT_REVERSE)) < 0 ||
	    (ret = git_revwalk_push_head(walk)) < 0) {
		ret = repo_git_err(ret, "%s: walking its history", gitdir);
		goto out;
	}
	if (after && *after) {
		if (git_oid_fromstr(&stop, after) < 0 ||
		    git_revwalk_hide(walk, &stop) < 0) {
			/* rewritten history (public-inbox-purge): read it all
			 * again; Message-Ids make the second reading a no-op */
			git_revwalk_reset(walk);
			git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL |
							  GIT_SORT_REVERSE);
			git_revwalk_push_head(walk);
		}
	}
	while ((ret = git_revwalk_next(&oid, walk)) == 0) {
		git_commit *c = NULL;
		git_tree *t = NULL;
		git_tree_entry *e = NULL;
		git_blob *b = NULL;
		char hex[REPO_HEX_SIZE];

		git_oid_tostr(hex, sizeof(hex), &oid);
		/* a commit without `m` removes a message (`d`): nothing to read */
		if ((ret = git_commit_lookup(&c, git, &oid)) < 0 ||
		    (ret = git_commit_tree(&t, c)) < 0) {
			git_commit_free(c);
			ret = repo_git_err(ret, "%s: commit %s", gitdir, hex);
			goto out;
		}
		if (git_tree_entry_bypath(&e, t, "m") == 0 &&
		    git_blob_lookup(&b, git, git_tree_entry_id(e)) == 0)
			ret = fn(ctx, hex, git_blob_rawcontent(b),
				 (size_t)git_blob_rawsize(b));
		git_blob_free(b);
		git_tree_entry_free(e);
		git_tree_free(t);
		git_commit_free(c);
		if (ret < 0)
			goto out;
	}
	ret = ret == GIT_ITEROVER ? 0 : repo_git_err(ret, "%s: walk", gitdir);
out:
	git_revwalk_free(walk);
	git_repository_free(git);
	return ret;
}
