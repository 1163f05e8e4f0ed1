/* repo-worktree.c: a linked worktree of a repository, made once and kept. */
#include "repo-int.h"
#include "err.h"
#include "file.h"

#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The repository's common directory, resolved; NULL when it has none. */
static char *common_dir(git_repository *git)
{
	const char *d = git_repository_commondir(git);

	return d ? realpath(d, NULL) : NULL;
}

/* dir holds nothing, or only what an interrupted add leaves (.git). */
static int leftover(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int only = 1;

	if (!d)
		return errno == ENOENT ? 1 : 0;
	while (only && (de = readdir(d)))
		only = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		       !strcmp(de->d_name, ".git");
	closedir(d);
	return only;
}

int repo_worktree_ensure(const char *main_dir, const char *dir,
			 const char *name)
{
	git_repository *git = NULL, *wt = NULL;
	git_worktree *w = NULL;
	git_reference *head = NULL, *branch = NULL;
	git_commit *at = NULL;
	git_worktree_add_options wo = GIT_WORKTREE_ADD_OPTIONS_INIT;
	char *ref = xstrfmt("refs/heads/%s", name);
	char *mine = NULL, *theirs = NULL;
	int ret;

	repo_lib_init();
	if ((ret = git_repository_open_ext(&git, main_dir,
					   GIT_REPOSITORY_OPEN_NO_SEARCH,
					   NULL)) < 0) {
		ret = repo_git_err(ret, "%s", main_dir);
		goto out;
	}
	mine = common_dir(git);
	/* made before: a worktree of this repository (of another: refused) */
	if (git_repository_open_ext(&wt, dir, GIT_REPOSITORY_OPEN_NO_SEARCH,
				    NULL) == 0) {
		theirs = common_dir(wt);
		if (mine && theirs && !strcmp(mine, theirs))
			ret = 0;
		else
			ret = err_set(ERR_INVALID,
				      "%s: a repository other than %s's: move"
				      " it away (stableq makes a worktree of"
				      " %s there)",
				      dir, main_dir, main_dir);
		goto out;
	}
	err_clear();
	if (!leftover(dir)) {
		ret = err_set(ERR_INVALID,
			      "%s: there, and not a worktree of %s: move it"
			      " away (stableq makes one there)",
			      dir, main_dir);
		goto out;
	}
	/* registered, but its directory gone or half made: forget it */
	if (git_worktree_lookup(&w, git, name) == 0) {
		git_worktree_prune_options po = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
		po.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED;
		if ((ret = git_worktree_prune(w, &po)) < 0) {
			ret = repo_git_err(ret, "%s: prune worktree %s",
					   main_dir, name);
			goto out;
		}
		git_worktree_free(w);
		w = NULL;
	}
	if ((ret = rm_rf(dir)) < 0)
		goto out;
	/* its own branch at the repository's HEAD; checkouts detach it */
	if ((ret = git_repository_head(&head, git)) < 0 ||
	    (ret = git_reference_peel((git_object **)&at, head,
				      GIT_OBJECT_COMMIT)) < 0 ||
	    (ret = git_reference_create(&branch, git, ref,
					git_commit_id(at), 1,
					"stableq: a cell's worktree")) < 0) {
		ret = repo_git_err(ret, "%s: %s", main_dir, ref);
		goto out;
	}
	/* no files yet: the first checkout (repo_checkout) writes them all */
	wo.ref = branch;
	wo.checkout_options.checkout_strategy = GIT_CHECKOUT_NONE;
	if ((ret = git_worktree_add(&w, git, name, dir, &wo)) < 0) {
		ret = repo_git_err(ret, "%s: add worktree %s", main_dir, dir);
		goto out;
	}
	ret = 0;
out:
	git_worktree_free(w);
	git_reference_free(branch);
	git_reference_free(head);
	git_commit_free(at);
	git_repository_free(wt);
	git_repository_free(git);
	free(ref);
	free(mine);
	free(theirs);
	return ret < 0 ? ret : 0;
}
