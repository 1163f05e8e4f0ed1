/* override.c: a maintainer queues a held fix-up or a patch waiting for a human, with a reason. */
#include "revert.h"
#include "db.h"
#include "err.h"
#include "queue.h"
#include "strbuf.h"

int revert_override(struct app *app, long long patch_id, const char *reason)
{
	enum patch_state s;
	long long ev;
	int ret;

	if (!reason || !*reason)
		return err_set(ERR_INVALID, "a reason is required");
	if ((ret = queue_follow_patch(app, patch_id)) < 0 ||
	    (ret = db_begin(app->db)) < 0)
		return ret;
	if ((ret = patch_get_state(app->db, patch_id, &s)) < 0)
		goto fail;
	if (s != PS_HELD && s != PS_CHECKED && s != PS_REJECTED) {
		ret = err_set(ERR_CONFLICT,
			      "patch %lld is %s: only held, checked or rejected"
			      " patches can be overridden",
			      patch_id, patch_state_name(s));
		goto fail;
	}
	char *detail = xstrfmt("overridden by %s: %s", app->actor, reason);
	ret = verdict_add(app->db, patch_id, "fixup", "overridden", detail);
	if (ret >= 0 && s != PS_HELD)
		ret = verdict_add(app->db, patch_id, "human", "accepted", detail);
	free(detail);
	if (ret < 0)
		goto fail;
	if ((ev = patch_set_state(app->db, patch_id, PS_QUEUED, reason,
				  app->actor)) < 0) {
		ret = (int)ev;
		goto fail;
	}
	if ((ev = event_add(app->db, app->actor, "patch", patch_id, "override",
			    "%s", reason)) < 0) {
		ret = (int)ev;
		goto fail;
	}
	return db_commit(app->db);
fail:
	db_rollback(app->db);
	return ret;
}
