/* repo-paths.c: the tree as evidence for the checks: which paths it has, a diff taken back out of it. */
#include "repo-int.h"

#include "err.h"

#include <string.h>

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
