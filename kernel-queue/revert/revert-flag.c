/* revert-flag.c: what a flag leads to: a plan for an admin when its door is not trusted, regzbot told of a confirmed culprit. */
#include "revert-int.h"
#include "bisect.h"
#include "db.h"
#include "err.h"
#include "flag.h"
#include "log.h"
#include "strbuf.h"

#include <stdlib.h>

/* Untrusted: the plan is stored for a maintainer, in this transaction. */
static int hold_for_admin(struct branch_ctx *bc, long long id)
{
	char *why = xstrfmt("flagged by %s, whose flag is not trusted to revert"
			    " by itself: not reverted automatically; an admin"
			    " runs it (`stableq revert %lld`, or POST"
			    " /api/v1/patches/%lld/revert with an admin"
			    " token)",
			    bc->actor, id, id);
	long long rid;
	int ret = plan_store_locked(bc, id, why, &rid);

	free(why);
	return ret;
}

long long flag_patch_locked(struct branch_ctx *bc, long long id,
			    const char *reason, const struct evidence *ev,
			    enum flag_trust trust)
{
	long long evid = flag_locked(bc, id, reason, ev, trust);
	int ret;

	if (evid < 0)
		return evid;
	ret = trust == FLAG_UNTRUSTED ? hold_for_admin(bc, id)
				      : bisect_report_culprit(bc, id, reason, ev);
	return ret < 0 ? ret : evid;
}

int flag_patch_as(struct branch_ctx *bc, long long patch_id,
		  const char *reason, const struct evidence *ev,
		  enum flag_trust trust)
{
	long long r;
	int ret;

	if ((ret = patch_action_begin(bc, patch_id, reason)) < 0)
		return ret;
	r = flag_patch_locked(bc, patch_id, reason, ev, trust);
	if ((ret = db_end(bc->db, r < 0 ? (int)r : 0)) < 0)
		return ret;
	log_info("patch %lld: flagged broken%s: %s", patch_id,
		 trust == FLAG_UNTRUSTED ? " by an untrusted door (the revert"
					   " plan waits for an admin)"
					 : "",
		 reason);
	return 0;
}

int flag_patch(struct branch_ctx *bc, long long patch_id, const char *reason,
	       const struct evidence *ev)
{
	return flag_patch_as(bc, patch_id, reason, ev, FLAG_TRUSTED);
}
