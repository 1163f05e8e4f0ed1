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
 * Flags a patch broken (queued, released, held, checked...) with the
 * reason and evidence, writes the event and mails the author, in one
 * transaction. ERR_NOTFOUND for an unknown id, ERR_CONFLICT if it is
 * already broken, dropped or reverted.
 */
int flag_patch(struct branch_ctx *bc, long long patch_id, const char *reason,
	       const struct evidence *ev);
/* Flags inside the caller's transaction; returns the event id. */
long long flag_locked(struct branch_ctx *bc, long long id, const char *reason,
		      const struct evidence *ev);
/*
 * A maintainer's action on a patch: a reason is required, the patch's
 * branch is followed, then BEGIN (the caller ends it with db_end()).
 */
int patch_action_begin(struct branch_ctx *bc, long long patch_id,
		       const char *reason);

/*
 * The flags raised on patch_id, oldest first: {id, reason, evidence,
 * build_id, bisection_id, actor, created_at}.
 */
json_t *flag_list_json(sqlite3 *db, long long patch_id);

#endif
