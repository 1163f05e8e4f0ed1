/* release.c: the passing queue onto the branch, one commit per patch, resumable after a crash. */
#include "release.h"
#include "candidate.h"
#include "crash.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "queue.h"
#include "rc.h"
#include "repo.h"
#include "strbuf.h"

static int release_resume(struct branch_ctx *bc);

int release_queue(struct branch_ctx *bc, int force, size_t *n)
{
	long long *ids = NULL, ok = 0;
	size_t nids = 0;
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE], parent[REPO_HEX_SIZE], tree[REPO_HEX_SIZE];
	char **commits = NULL;
	int ret;

	*n = 0;
	if ((ret = release_resume(bc)) < 0)
		return ret;
	/* the review cycle first: its window, its held patches */
	if ((ret = rc_release_check(bc)) < 0)
		return ret;
	if ((ret = queue_ids(bc->db, bc->branch_id, PS_QUEUED, &ids, &nids)) <
	    0)
		return ret;
	char *queued;
	if (!nids) {
		free(ids);
		return 0;
	}
	queued = force ? NULL : queue_queued_ids(bc->db, bc->branch_id);
	if (!force && (!queued || candidate_with_patches(bc->db, bc->branch_id,
							 queued, 1, &ok) < 0)) {
		free(queued);
		free(ids);
		return err_set(ERR_CONFLICT,
			       "the %zu queued patches have not passed a"
			       " candidate together: run `stableq candidate`"
			       " first",
			       nids);
	}
	free(queued);
	commits = xcalloc(nids, sizeof(*commits));
	if ((ret = repo_open(&r, bc->cfg.tree_dir)) < 0 ||
	    (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0 ||
	    (ret = repo_tree_of(r, tip, tree)) < 0)
		goto out;
	memcpy(parent, tip, sizeof(parent));
	for (size_t i = 0; i < nids; i++) {
		json_t *pt = queue_patch_content_json(bc->db, ids[i]);
		struct repo_apply_result res = { 0 };
		char next[REPO_HEX_SIZE], c[REPO_HEX_SIZE];

		if (!pt) {
			ret = ERR_IO;
			goto out;
		}
		ret = repo_apply(r, tree, queue_field(pt, "diff"), next, &res);
		if (ret >= 0 && res.status != REPO_APPLY_CLEAN)
			ret = err_set(ERR_CONFLICT, "patch %lld does not apply: %s",
				      ids[i], res.detail ? res.detail : "?");
		repo_apply_result_release(&res);
		if (ret >= 0)
			ret = repo_commit(r, parent, next,
					  queue_field(pt, "author_name"),
					  queue_field(pt, "author_email"),
					  queue_field(pt, "date"),
					  queue_field(pt, "message"), c);
		json_decref(pt);
		if (ret < 0)
			goto out;
		commits[i] = xstrdup(c);
		memcpy(parent, c, sizeof(parent));
		memcpy(tree, next, sizeof(tree));
	}
	/* The store first: a crash before the branch moves is completed by
	 * release_resume(), which moves the branch to the recorded commits. */
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	for (size_t i = 0; i < nids; i++) {
		long long ev = queue_set_state(bc->db, ids[i], PS_RELEASED,
					       commits[i], bc->actor);
		ret = ev < 0 ? (int)ev
			     : queue_set_released_commit(bc->db, ids[i],
							 commits[i]);
		if (ret < 0)
			break;
	}
	if (ret >= 0 && (ret = queue_link_dependencies(bc->db)) >= 0 &&
	    (ret = rc_released(bc->db, bc->branch_id)) >= 0)
		ret = (int)event_add(
			bc->db, bc->actor, "branch", 0, "released",
			"%zu patches onto %s (%s-stable): %.12s..%.12s", nids,
			bc->cfg.branch, bc->cfg.branch_key, tip, parent);
	if ((ret = db_end(bc->db, ret)) < 0)
		goto out;
	crash_point("release-before-branch");
	if ((ret = repo_set_branch(r, bc->cfg.branch, parent, tip)) < 0)
		goto out;
	*n = nids;
	log_info("released %zu patches onto %s (%.12s)", nids, bc->cfg.branch,
		 parent);
out:
	for (size_t i = 0; commits && i < nids; i++)
		free(commits[i]);
	free(commits);
	free(ids);
	repo_free(r);
	return ret < 0 ? ret : 0;
}

/* Moves the branch to releases the store recorded before a crash. */
static int release_resume(struct branch_ctx *bc)
{
	char *newest = NULL;
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE];
	int ret;

	if (queue_newest_released(bc->db, bc->branch_id, &newest) < 0 ||
	    !newest)
		return 0;
	if ((ret = repo_open(&r, bc->cfg.tree_dir)) < 0 ||
	    (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0)
		goto out;
	/* released in the store but the branch never moved: move it now */
	if (repo_commit_in_history(r, tip, newest) == 0 &&
	    repo_commit_in_history(r, newest, tip) > 0) {
		log_info("release: completing an interrupted release (%.12s)",
			 newest);
		ret = repo_set_branch(r, bc->cfg.branch, newest, tip);
	}
out:
	free(newest);
	repo_free(r);
	return ret < 0 ? ret : 0;
}
