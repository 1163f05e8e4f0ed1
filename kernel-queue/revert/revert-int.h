/* revert-int.h: what the revert modules share (plan, revert); not for other callers. */
#ifndef STABLEQ_REVERT_INT_H
#define STABLEQ_REVERT_INT_H

#include "revert.h"
#include "crash.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

/* One patch of a plan, and the plan: the broken patch and what goes with it. */
struct item {
	long long id;
	long long pos;
	char *subject;
	char *state;
	char *released_commit;
	char *upstream;
	char *why;
	int revert; /* 1 revert (released), 0 drop */
};

struct plan {
	struct item *v;
	size_t n, alloc;
};

/* The patch and, transitively, every patch that goes with it, newest first. */
int plan_build(struct branch_ctx *bc, long long root, struct plan *p);
void plan_free(struct plan *p);

/* Stores a revert and its items (in the caller's transaction); automatic:
 * made by revert_auto() (counted by the daily limit). */
int insert_revert(struct branch_ctx *bc, long long root, const char *reason,
		  const struct plan *p, const char *state, const char *base,
		  const char *chain_tip, int automatic, long long *revert_id);
/*
 * revert_store_plan() inside the caller's transaction. One 'planned'
 * revert per patch: when one waits already, it is kept (*revert_id) and
 * only its reason is brought up to date (an event when it changed).
 */
int plan_store_locked(struct branch_ctx *bc, long long patch_id,
		      const char *reason, long long *revert_id);
/* revert_run(), marking the revert automatic (revert_auto()). */
int revert_run_as(struct branch_ctx *bc, long long patch_id,
		  const char *reason, int confirm, int automatic,
		  long long *revert_id, long long *confirm_id);
/*
 * The patches taken out today (UTC) by automatic reverts of the branch:
 * the daily limit counts patches, not reverts. 0 or negative.
 */
int revert_auto_patches_today(struct branch_ctx *bc, long long *n);
/*
 * The daemon acts on trusted flags only: the first broken patch of the
 * branch that sql (a query whose one parameter is their ids, a JSON array
 * text; its first column a patch id) finds and whose flag is trusted: 1
 * with *id, else 0.
 */
int revert_first_trusted(struct branch_ctx *bc, const char *sql,
			 long long *id);

#endif
