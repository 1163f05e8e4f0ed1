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

/* Stores a revert and its items (in the caller's transaction). */
int insert_revert(struct branch_ctx *bc, long long root, const char *reason,
		  const struct plan *p, const char *state, const char *base,
		  const char *chain_tip, long long *revert_id);

#endif
