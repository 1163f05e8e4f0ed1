/* revert-int.h: what the revert modules share (flag, plan, revert, release); not for other callers. */
#ifndef STABLEQ_REVERT_INT_H
#define STABLEQ_REVERT_INT_H

#include "revert.h"
#include "log.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Fault injection for the crash tests: STABLEQ_CRASH_AT=<point> kills -9 there. */
static inline void crash_point(const char *point)
{
	const char *at = getenv("STABLEQ_CRASH_AT");

	if (at && !strcmp(at, point)) {
		log_warnx("STABLEQ_CRASH_AT=%s: killing myself", point);
		raise(SIGKILL);
	}
}

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

/*
 * A maintainer's action on a patch: a reason is required, the patch's
 * branch is followed, then BEGIN (the caller ends it with db_end()).
 */
int patch_action_begin(struct branch_ctx *bc, long long patch_id,
		       const char *reason);
/* Flags inside the caller's transaction; returns the event id. */
long long flag_locked(struct branch_ctx *bc, long long id, const char *reason,
		      const struct evidence *ev);
/* Stores a revert and its items (in the caller's transaction). */
int insert_revert(struct branch_ctx *bc, long long root, const char *reason,
		  const struct plan *p, const char *state, const char *base,
		  const char *chain_tip, long long *revert_id);

#endif
