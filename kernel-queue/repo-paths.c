/* repo-paths.c: the tree as evidence for the checks: which paths it has, a diff taken back out of it. */
#include "repo-int.h"

#include "err.h"

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <stdlib.h>
#include <string.h>

int repo_objects_in_memory(struct repo *r)
{
	git_odb *odb = NULL;
	git_odb_backend *mem = NULL;
	int ret;

	if ((ret = git_repository_odb(&odb, r->git)) < 0)
		return repo_git_err(ret, "the object database");
	/* the highest priority: every write lands in memory */
	if ((ret = git_mempack_new(&mem)) < 0 ||
	    (ret = git_odb_add_backend(odb, mem, 1000)) < 0) {
		if (mem)
			mem->free(mem);
		git_odb_free(odb);
		return repo_git_err(ret, "an in-memory object store");
	}
	git_odb_free(odb);
	return 0;
}

int repo_paths_exist(struct repo *r, const char *spec, const char *const *paths,
		     size_t n, unsigned char *exists)
{
	git_object *tree = NULL;
	int ret;

	if ((ret = repo_lookup(r, &tree, spec, GIT_OBJECT_TREE)) < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		git_tree_entry *e = NULL;
		exists[i] = git_tree_entry_bypath(&e, (git_tree *)tree,
						  paths[i]) == 0;
		git_tree_entry_free(e);
	}
	git_object_free(tree);
	return 0;
}

int repo_apply_reverse(struct repo *r, const char *base, const char *diff_text,
		       char new_tree_hex[REPO_HEX_SIZE],
		       struct repo_apply_result *res)
{
	struct diff_set fwd = { 0 }, rev = { 0 };
	struct strbuf text = STRBUF_INIT;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!diff_text)
		return err_set(ERR_INVALID, "apply: no diff");
	if ((ret = repo_diff_parse(&fwd, diff_text, strlen(diff_text),
				   "patch")) < 0)
		return ret;
	repo_diff_reverse(&rev, &fwd);
	/* the header's place: repo_apply() locates each hunk by its context */
	for (size_t i = 0; i < rev.n; i++)
		for (size_t j = 0; j < rev.f[i].nhunks; j++) {
			struct diff_hunk *h = &rev.f[i].hunks[j];
			h->pos = h->ns > 0 ? h->ns - 1 : 0;
		}
	repo_diff_emit(&text, &rev);
	ret = repo_apply(r, base, text.buf, new_tree_hex, res);
	strbuf_release(&text);
	repo_diff_release(&rev);
	repo_diff_release(&fwd);
	return ret;
}

int repo_history_small(struct repo *r, const char *tip_spec, size_t max,
		       char (**ids)[REPO_HEX_SIZE], size_t *n)
{
	git_object *tip = NULL;
	git_revwalk *walk = NULL;
	git_oid id;
	int ret;

	*ids = NULL;
	*n = 0;
	if ((ret = repo_lookup(r, &tip, tip_spec, GIT_OBJECT_COMMIT)) < 0)
		return ret;
	if ((ret = git_revwalk_new(&walk, r->git)) < 0 ||
	    (ret = git_revwalk_push(walk, git_object_id(tip))) < 0) {
		ret = repo_git_err(ret, "walking %s", tip_spec);
		goto out;
	}
	while ((ret = git_revwalk_next(&id, walk)) == 0) {
		if (*n == max) {
			ret = 0; /* too many: not small */
			goto out;
		}
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		git_oid_tostr((*ids)[(*n)++], REPO_HEX_SIZE, &id);
	}
	if (ret != GIT_ITEROVER) {
		ret = repo_git_err(ret, "walking %s", tip_spec);
		goto out;
	}
	ret = 1;
out:
	if (ret != 1) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	git_revwalk_free(walk);
	git_object_free(tip);
	return ret;
}
