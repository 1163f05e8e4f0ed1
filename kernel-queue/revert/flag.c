/* flag.c: a patch found broken: the flag with its evidence and trust, its event and the author's mail. */
#include "revert-int.h"
#include "bisect.h"
#include "db.h"
#include "err.h"
#include "compose.h"
#include "outbox.h"
#include "queue.h"
#include "strbuf.h"

/*
 * stableq's own confirmed culprit, told to the regressions list as regzbot
 * reads it: only when ev names a bisection that found this patch and
 * confirmed it both ways (bisect_found()), regressions_list is set and the
 * patch names its upstream commit. Inside the caller's transaction.
 */
static int regzbot_report(struct branch_ctx *bc, long long id,
			  const char *reason, const struct evidence *ev)
{
	json_t *b, *p;
	long long culprit, mail;
	const char *upstream;
	int ret;

	if (!ev || !ev->bisection_id || !bc->cfg.regressions_list ||
	    !*bc->cfg.regressions_list)
		return 0;
	if ((ret = bisect_found(bc->db, ev->bisection_id)) <= 0)
		return ret;
	if (!(b = bisect_json(bc->db, ev->bisection_id)))
		return err_last() < 0 ? err_last() : ERR_IO;
	culprit = json_integer_value(json_object_get(b, "culprit_patch_id"));
	json_decref(b);
	if (culprit != id)
		return 0;
	if (!(p = queue_patch_brief_json(bc->db, id)))
		return err_last() < 0 ? err_last() : ERR_IO;
	upstream = json_string_value(json_object_get(p, "upstream"));
	if (!upstream || !*upstream) {
		log_info("patch %lld: no upstream commit to name: the"
			 " regressions list is not told",
			 id);
		json_decref(p);
		return 0;
	}
	struct strbuf why = STRBUF_INIT;
	strbuf_addstr(&why, reason);
	if (ev->test)
		strbuf_addf(&why, "\nFailing test: %s", ev->test);
	strbuf_addf(&why, "\nBisection: %lld, confirmed both ways (the queue"
			  " up to this patch fails, the queue before it passes)",
		    ev->bisection_id);
	mail = compose_regzbot(
		bc->db, &bc->cfg,
		&(struct regzbot_report){
			.to = bc->cfg.regressions_list,
			.patch_id = id,
			.subject = json_string_value(json_object_get(p, "subject")),
			.introduced = upstream,
			.stable_commit = json_string_value(
				json_object_get(p, "released_commit")),
			.branch = bc->cfg.branch_key,
			.why = why.buf,
		},
		NULL);
	strbuf_release(&why);
	json_decref(p);
	if (mail > 0)
		log_info("patch %lld: a report for regzbot to %s (mail %lld)",
			 id, bc->cfg.regressions_list, mail);
	return mail < 0 ? (int)mail : 0;
}

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
	if (m < 0)
		return m;
	ret = trust == FLAG_UNTRUSTED ? hold_for_admin(bc, id)
				      : regzbot_report(bc, id, reason, ev);
	return ret < 0 ? ret : evid;
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

json_t *flag_list_json(sqlite3 *db, long long patch_id)
{
	return db_rows_json(db,
			    "SELECT id, reason, evidence, build_id,"
			    " bisection_id, actor, trust, created_at FROM flags"
			    " WHERE"
			    " patch_id = ? ORDER BY id",
			    "i", patch_id);
}
