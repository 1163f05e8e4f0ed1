/* check-int.h: what check.c and check-fixes.c share; not for other modules. */
#ifndef STABLEQ_CHECK_INT_H
#define STABLEQ_CHECK_INT_H

#include "check.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"

/* One run of the checks: the tree and the evidence it is judged by. */
struct check_ctx {
	struct branch_ctx *bc;
	struct repo *repo;
	struct repo *upstream; /* optional */
	int up_indexed;        /* its index in the store is current (upstream.h) */
	int upstream_mem;      /* what is written through it stays in memory */
	/* its version tags, listed on first use (check.c) */
	int up_tags_done;
	struct repo_tag *up_tags;
	size_t up_ntags;
	char tip[REPO_HEX_SIZE];
	/* the running tree (the branch + the patches queued so far): the
	 * branch's tree with the queued patches' files on top */
	char running[REPO_HEX_SIZE];
	struct repo_overlay queued;
	/* the files of the patch being checked, when it applies cleanly */
	struct repo_overlay delta;
	char *version;               /* 6.1.192 */
	char *series;                /* 6.1 */
	long sublevel;               /* 192 */
	const char *changelog;       /* the indexed Debian changelog, or NULL */
	/* the running tree with the patch being checked, when it applies:
	 * the patch its Stable-dep-of names is tried on it (written only
	 * when asked for: check_with_tree()) */
	int with_ok;
	char with[REPO_HEX_SIZE];
	/* the branch's whole history when it is short (a tarball import):
	 * asked in memory instead of one object lookup per Fixes: tag */
	int history_small;
	char (*history)[REPO_HEX_SIZE];
	size_t nhistory;
	/* the upstream clone's tag of the tree's version, resolved on first
	 * use (check-fixes.c): its name and commit, "" when none resolves */
	int up_base_done;
	char up_base[64];
	char up_base_hex[REPO_HEX_SIZE];
	/* the patch being checked as check_released_where() found it: the
	 * first release naming it (-1: none) and its file in the stable-queue
	 * checkout (NULL: not known) */
	long rel_first;
	char *rel_sq;
};

/*
 * Is a commit whose id starts with sha on the branch? From the history in
 * memory when it is short, else asked of the tree (repo_commit_in_history).
 */
int check_in_history(struct check_ctx *c, const char *sha);

int check_running_tree(struct check_ctx *c, char hex[REPO_HEX_SIZE]);
int check_with_tree(struct check_ctx *c, char hex[REPO_HEX_SIZE]);

/* Does the diff remove a line ("-" lines, not "--- " headers)? */
int check_removes_lines(const char *diff);

/* The patch being checked. Strings owned. */
struct check_row {
	long long id;
	char *subject, *diff, *upstream;
	enum patch_state state;
};

/* Loads patch id (ERR_NOTFOUND naming it); check_row_release() frees. */
int check_row_load(sqlite3 *db, long long id, struct check_row *r);
void check_row_release(struct check_row *r);

/*
 * The fixes verdict of p (check.h says which evidence, in which order).
 * applies is p's applies result on the running tree, or CR_COUNT when not
 * known (a patch judged for the Stable-dep-of it is). depth bounds that
 * recursion. The reason goes to detail: the evidence for the verdict first.
 */
enum check_result check_fixes(struct check_ctx *c, const struct check_row *p,
			      enum check_result applies, int depth,
			      struct strbuf *detail);

/*
 * What names p as released on this branch: its subject listed in Debian's
 * changelog up to the tree's version, or its upstream SHA in the
 * stable-queue checkout's releases/. 1 with where ("6.1.57 (Debian's
 * changelog lists \"...\")"; both releases when two list the subject), 0
 * no, negative on error. A pointer only: the applies check asks the lines.
 * When reverted is not NULL, a revert of it is looked for too (Debian's
 * changelog lists `Revert "<subject>"` after it, or a revert commit is in
 * the tree's history or the upstream clone's): reverted then says both
 * releases ("released in 6.1.104 and reverted in 6.1.113 ...") and 0 is
 * returned. c->rel_first and c->rel_sq get the release and the
 * stable-queue file (reverse_after_later() starts there).
 */
int check_released_where(struct check_ctx *c, const struct check_row *p,
			 struct strbuf *where, struct strbuf *reverted);

/*
 * The followups verdict, from the upstream index (upstream.h): the upstream
 * commits whose Fixes: names p's upstream commit and that are neither in
 * the queue nor in the tree (CR_FOUND, listed in detail) or none (CR_NONE).
 * Upstream reverts of it are appended to reverted (the fixup check holds
 * it); when min_soak_days is set and its upstream commit has been in a
 * tagged release for fewer days, soak gets why it waits.
 */
enum check_result check_upstream(struct check_ctx *c, const struct check_row *p,
				 struct strbuf *reverted, struct strbuf *soak,
				 struct strbuf *detail);

#endif
