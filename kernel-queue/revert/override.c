/* override.c: a maintainer queues a held fix-up or a patch waiting for a human, with a reason. */
#include "revert-int.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "queue.h"
#include "strbuf.h"

/* The override inside the caller's transaction. */
static int override_locked(struct branch_ctx *bc, long long patch_id,
			   const char *reason)
{
	enum patch_state s;
	long long ev;
	int ret;

	if ((ret = queue_get_state(bc->db, patch_id, &s)) < 0)
		return ret;
	if (s != PS_HELD && s != PS_CHECKED && s != PS_REJECTED)
		return err_set(ERR_CONFLICT,
			       "patch %lld is %s: only held, checked or rejected"
			       " patches can be overridden",
			       patch_id, queue_state_name(s));
	char *detail = xstrfmt("overridden by %s: %s", bc->actor, reason);
	ret = queue_verdict_add(bc->db, patch_id, "fixup", "overridden",
				detail);
	if (ret >= 0 && s != PS_HELD)
		ret = queue_verdict_add(bc->db, patch_id, "human", "accepted",
					detail);
	free(detail);
	if (ret < 0)
		return ret;
	if ((ev = queue_set_state(bc->db, patch_id, PS_QUEUED, reason,
				  bc->actor)) < 0)
		return (int)ev;
	ev = event_add(bc->db, bc->actor, "patch", patch_id, "override", "%s",
		       reason);
	return ev < 0 ? (int)ev : 0;
}

int override_patch(struct branch_ctx *bc, long long patch_id,
		   const char *reason)
{
	int ret;

	if ((ret = patch_action_begin(bc, patch_id, reason)) < 0)
		return ret;
	return db_end(bc->db, override_locked(bc, patch_id, reason));
}
