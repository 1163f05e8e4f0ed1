/* flag.c: a patch found broken: the flag with its evidence and trust, its event and the author's mail. */
#include "flag.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "compose.h"
#include "outbox.h"
#include "queue.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

long long flag_locked(struct branch_ctx *bc, long long id, const char *reason,
		      const struct evidence *ev, enum flag_trust trust)
{
	enum patch_state s;
	long long evid;
	int ret;

	if (!reason || !*reason)
		return err_set(ERR_INVALID, "a reason is required");
	if ((ret = queue_get_state(bc->db, id, &s)) < 0)
		return ret;
	if (s == PS_BROKEN || s == PS_DROPPED || s == PS_REVERTED)
		return err_set(ERR_CONFLICT, "patch %lld is already %s", id,
			       queue_state_name(s));
	ret = db_exec(bc->db,
		      "INSERT INTO flags (patch_id, reason, evidence, build_id,"
		      " bisection_id, actor, trust) VALUES (?, ?, ?,"
		      " NULLIF(?, 0), NULLIF(?, 0), ?, ?)",
		      "ittiitt", id, reason, ev && ev->test ? ev->test : NULL,
		      ev && ev->build_id ? ev->build_id : 0LL,
		      ev && ev->bisection_id ? ev->bisection_id : 0LL,
		      bc->actor,
		      trust == FLAG_UNTRUSTED ? "untrusted" : "trusted");
	if (ret < 0)
		return ret;
	evid = queue_set_state(bc->db, id, PS_BROKEN, reason, bc->actor);
	if (evid < 0)
		return evid;
	struct strbuf why = STRBUF_INIT;
	strbuf_addstr(&why, reason);
	if (ev && ev->test)
		strbuf_addf(&why, "\nFailing test: %s", ev->test);
	if (ev && ev->build_id)
		strbuf_addf(&why, "\nBuild: %lld", ev->build_id);
	if (ev && ev->bisection_id)
		strbuf_addf(&why, "\nBisection: %lld", ev->bisection_id);
	/* the branch, as the stable maintainers' mail names it */
	char *what = xstrfmt("Your patch was flagged broken in the %s-stable"
			     " queue",
			     bc->cfg.branch_key);
	long long m = queue_notify(bc->db, &bc->cfg,
				 &(struct notice){
					 .patch_id = id,
					 .event_id = evid,
					 .kind = "flagged",
					 .what = what,
					 .why = why.buf,
					 .log_excerpt = ev ? ev->log_excerpt : NULL,
					 .test = ev ? ev->test : NULL,
				 });
	free(what);
	strbuf_release(&why);
	return m < 0 ? m : evid;
}

int flag_trust_of(sqlite3 *db, long long patch_id)
{
	char *t = NULL;
	int ret = db_query_text(db, &t,
				"SELECT trust FROM flags WHERE patch_id = ?"
				" ORDER BY id DESC LIMIT 1",
				"i", patch_id);

	if (ret == ERR_NOTFOUND) {
		err_clear();
		return FLAG_TRUSTED;
	}
	if (ret < 0)
		return ret;
	ret = t && !strcmp(t, "untrusted") ? FLAG_UNTRUSTED : FLAG_TRUSTED;
	free(t);
	return ret;
}

int patch_action_begin(struct branch_ctx *bc, long long patch_id,
		       const char *reason)
{
	int ret;

	if (!reason || !*reason)
		return err_set(ERR_INVALID, "a reason is required");
	if ((ret = queue_follow_patch(bc, patch_id)) < 0)
		return ret;
	return db_begin(bc->db);
}

json_t *flag_list_json(sqlite3 *db, long long patch_id)
{
	return db_rows_json(db,
			    "SELECT id, reason, evidence, build_id,"
			    " bisection_id, actor, trust, created_at FROM flags"
			    " WHERE"
			    " patch_id = ? ORDER BY id",
			    "i", patch_id);
}
