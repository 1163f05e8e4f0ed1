/* flag.h: a patch found broken: the flag with its evidence, its event and the author's mail. */
#ifndef STABLEQ_FLAG_H
#define STABLEQ_FLAG_H

#include "ctx.h"

#include <jansson.h>

/* Evidence stored with a flag (all optional, borrowed). */
struct evidence {
	const char *test;        /* failing test name */
	const char *log_excerpt;
	long long build_id;
	long long bisection_id;
};

/*
 * Who raised a flag. FLAG_TRUSTED (a maintainer's CLI command, an admin
 * token, stableq's own confirmed bisection) may lead to an automatic
 * revert under auto_revert = yes/propose; FLAG_UNTRUSTED (a write-scope
 * API token, a mail from the list) never does by itself: the revert room
 * stores the plan for a maintainer (flag_patch_locked() in revert.h).
 */
enum flag_trust { FLAG_TRUSTED = 0, FLAG_UNTRUSTED = 1 };
/*
 * The flag itself, inside the caller's transaction: the flags row with
 * its trust, the patch broken (its event) and the author's mail; returns
 * the event id. ERR_INVALID without a reason, ERR_NOTFOUND for an unknown
 * id, ERR_CONFLICT if it is already broken, dropped or reverted. What a
 * flag leads to (a plan for an admin, a report for regzbot) is the revert
 * room's: flag_patch() and flag_patch_locked() in revert.h.
 */
long long flag_locked(struct branch_ctx *bc, long long id, const char *reason,
		      const struct evidence *ev, enum flag_trust trust);
/* The trust of the flag that made patch_id broken (its newest flag):
 * FLAG_TRUSTED when it has none; negative on a store error. */
int flag_trust_of(sqlite3 *db, long long patch_id);
/*
 * A maintainer's action on a patch: a reason is required, the patch's
 * branch is followed, then BEGIN (the caller ends it with db_end()).
 */
int patch_action_begin(struct branch_ctx *bc, long long patch_id,
		       const char *reason);

/*
 * The flags raised on patch_id, oldest first: {id, reason, evidence,
 * build_id, bisection_id, actor, trust, created_at}.
 */
json_t *flag_list_json(sqlite3 *db, long long patch_id);

#endif
