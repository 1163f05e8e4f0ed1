/* revert-guard.c: the limits of automatic reverts, and reverts proposed to the author first. */
#include "revert-int.h"
#include "bisect.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "mailhdr.h"
#include "compose.h"
#include "outbox.h"
#include "patch.h"
#include "queue.h"
#include "strbuf.h"

#include <stdlib.h>
#include <strings.h>
#include <time.h>

static int revert_proposal_stop(struct branch_ctx *bc, const char *message_id,
			 const char *by);

/* The trailer an author adds to refuse automatic reverts of a patch. */
#define NO_AUTOREVERT "Stable-no-autorevert:"

static int has_opt_out(sqlite3 *db, long long patch_id)
{
	json_t *p = queue_patch_json(db, patch_id, 1);
	const char *msg = p ? json_string_value(json_object_get(p, "message"))
			    : NULL;
	int found = 0;
	size_t k = strlen(NO_AUTOREVERT);

	for (const char *s = msg; s && *s && !found;) {
		const char *e = strchr(s, '\n');
		found = !strncasecmp(s, NO_AUTOREVERT, k);
		s = e ? e + 1 : NULL;
	}
	json_decref(p);
	return found;
}

/* Why the guard refused: the limit passes with the day, the rest do not. */
enum refusal { ALLOWED = 0, REFUSED, LIMITED };

/*
 * revert_guard() with the kind of refusal. The plan is the one the revert
 * would carry out: every patch in it is checked for the opt-out, and the
 * limit counts the patches it takes out.
 */
static enum refusal guard(struct branch_ctx *bc, long long patch_id,
			  char **why)
{
	long long today = 0, unconfirmed = 0;
	struct plan p;
	json_t *flags;
	int ret, trust;

	*why = NULL;
	trust = flag_trust_of(bc->db, patch_id);
	flags = flag_list_json(bc->db, patch_id);
	if (trust == FLAG_UNTRUSTED) {
		json_t *f = json_array_get(flags, json_array_size(flags) - 1);
		const char *by = json_string_value(json_object_get(f, "actor"));
		*why = xstrfmt("flagged by %s, whose flag is not trusted to"
			       " revert by itself: an admin runs it",
			       by ? by : "?");
		json_decref(flags);
		return REFUSED;
	}
	if (flags) {
		json_t *f;
		size_t i;
		json_array_foreach(flags, i, f)
		{
			long long b = json_integer_value(
				json_object_get(f, "bisection_id"));
			if (b && bisect_found(bc->db, b) == 0)
				unconfirmed++;
		}
		json_decref(flags);
	}
	err_clear();
	if (unconfirmed) {
		*why = xstrdup("the bisection that named it was not confirmed"
			       " both ways");
		return REFUSED;
	}
	if (plan_build(bc, patch_id, &p) < 0) {
		*why = xstrfmt("its plan cannot be made: %s", err_msg());
		return REFUSED;
	}
	for (size_t i = 0; i < p.n && !*why; i++) {
		if (!has_opt_out(bc->db, p.v[i].id))
			continue;
		if (p.v[i].id == patch_id)
			*why = xstrdup("its author refused automatic reverts"
				       " (" NO_AUTOREVERT " trailer)");
		else
			*why = xstrfmt("patch %lld, which goes with it (%s),"
				       " carries the " NO_AUTOREVERT " trailer:"
				       " its author refused automatic reverts",
				       p.v[i].id, p.v[i].why);
	}
	if (*why) {
		plan_free(&p);
		return REFUSED;
	}
	ret = revert_auto_patches_today(bc, &today);
	if (ret == 0 && today + (long long)p.n > bc->cfg.revert_daily_limit)
		*why = xstrfmt("%lld patch%s taken out by automatic reverts"
			       " today on %s already, and this one takes out"
			       " %zu (revert_daily_limit = %d patches a day)",
			       today, today == 1 ? "" : "es",
			       bc->cfg.branch_key, p.n,
			       bc->cfg.revert_daily_limit);
	else if (ret < 0)
		*why = xstrfmt("the daily limit cannot be counted: %s",
			       err_msg());
	plan_free(&p);
	return !*why ? ALLOWED : ret == 0 ? LIMITED : REFUSED;
}

static int revert_guard(struct branch_ctx *bc, long long patch_id, char **why)
{
	return guard(bc, patch_id, why) == ALLOWED;
}

/* Refused: the plan waits for a maintainer, saying why. */
static int ask_maintainer(struct branch_ctx *bc, long long patch_id,
			  const char *why)
{
	char *reason = xstrfmt("found broken; not reverted automatically: %s;"
			       " waiting for a maintainer",
			       why);
	int ret = revert_store_plan(bc, patch_id, reason);

	if (ret >= 0)
		log_info("patch %lld: %s", patch_id, reason);
	free(reason);
	return ret;
}

/* What the flag says: the evidence, as facts. */
static void evidence(sqlite3 *db, long long patch_id, struct strbuf *out)
{
	json_t *flags = flag_list_json(db, patch_id);
	json_t *f = json_array_get(flags, json_array_size(flags) - 1);

	if (f) {
		strbuf_addf(out, "Found: %s (by %s)\n",
			    json_string_value(json_object_get(f, "reason")),
			    json_string_value(json_object_get(f, "actor")));
		if (json_string_value(json_object_get(f, "evidence")))
			strbuf_addf(out, "Failing test: %s\n",
				    json_string_value(
					    json_object_get(f, "evidence")));
		if (json_integer_value(json_object_get(f, "bisection_id")))
			strbuf_addf(
				out,
				"Bisection: %lld (confirmed: the"
				" queue up to this patch fails, the"
				" queue before it passes)\n",
				(long long)json_integer_value(
					json_object_get(f, "bisection_id")));
	}
	json_decref(flags);
}

int revert_propose(struct branch_ctx *bc, long long patch_id)
{
	struct strbuf why = STRBUF_INIT, when = STRBUF_INIT;
	struct plan p;
	char *reason = NULL, *what = NULL, *msgid = NULL;
	time_t due = time(NULL) + bc->cfg.revert_grace;
	long long mail, ev;
	int ret;

	if ((ret = queue_follow_patch(bc, patch_id)) < 0)
		return ret;
	if (!revert_guard(bc, patch_id, &reason)) {
		ret = ask_maintainer(bc, patch_id, reason);
		free(reason);
		return ret;
	}
	if ((ret = plan_build(bc, patch_id, &p)) < 0)
		return ret;
	evidence(bc->db, patch_id, &why);
	strbuf_addstr(&why, "\nThe plan, newest first:\n");
	for (size_t i = 0; i < p.n; i++)
		strbuf_addf(&why, "  %s patch %lld \"%s\" (%s): %s\n",
			    p.v[i].revert ? "revert" : "drop", p.v[i].id,
			    p.v[i].subject, p.v[i].state, p.v[i].why);
	rfc5322_date(&when, due);
	strbuf_addf(&why,
		    "\nIt will be carried out at %s (revert_grace = %d s)"
		    " unless someone replies to this mail: a reply stops it"
		    " and leaves the decision to the maintainer. A patch whose"
		    " message carries the trailer \"" NO_AUTOREVERT " <why>\""
		    " is never reverted automatically.",
		    when.buf, bc->cfg.revert_grace);
	what = xstrfmt("An automatic revert of your patch is proposed in the"
		       " %s-stable queue",
		       bc->cfg.branch_key);
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	ev = event_add(bc->db, bc->actor, "patch", patch_id, "proposed",
		       "revert proposed to the author, due at %lld",
		       (long long)due);
	mail = ev < 0 ? ev
		      : queue_notify(bc->db, &bc->cfg,
				     &(struct notice){ .patch_id = patch_id,
						       .event_id = ev,
						       .kind = "proposed",
						       .what = what,
						       .why = why.buf });
	if (mail < 0) {
		ret = (int)mail;
		goto fail;
	}
	msgid = compose_message_id(bc->db, mail);
	if ((ret = db_exec(bc->db,
			   "INSERT INTO revert_proposals (patch_id, mail_id,"
			   " message_id, due_at) VALUES (?, ?, ?, ?)",
			   "iiti", patch_id, mail, msgid, (long long)due)) <
		    0 ||
	    (ret = db_commit(bc->db)) < 0)
		goto fail;
	log_info("patch %lld: revert proposed to the author (mail %lld),"
		 " due at %s",
		 patch_id, mail, when.buf);
	ret = 0;
	goto out;
fail:
	db_rollback(bc->db);
out:
	plan_free(&p);
	strbuf_release(&why);
	strbuf_release(&when);
	free(what);
	free(msgid);
	return ret;
}

/*
 * A waiting proposal the guard now refuses: a refusal that lasts (an
 * opt-out, an untrusted flag) ends it; the daily limit only moves it to
 * the next UTC day, when the limit counts afresh. Either way the daemon
 * finds nothing due until then: one plan, no loop.
 */
static int proposal_refused(struct branch_ctx *bc, long long proposal,
			    enum refusal r, const char *why)
{
	time_t now = time(NULL);
	long long next_day = (long long)(now - now % 86400 + 86400);

	if (r == LIMITED) {
		log_info("proposal %lld: the daily limit holds: it waits until"
			 " the next UTC day",
			 proposal);
		return db_exec(bc->db,
			       "UPDATE revert_proposals SET due_at = ? WHERE"
			       " id = ? AND state = 'waiting'",
			       "ii", next_day, proposal);
	}
	char *by = xstrfmt("the guard: %s", why);
	int ret = db_exec(bc->db,
			  "UPDATE revert_proposals SET state = 'stopped',"
			  " stopped_by = ? WHERE id = ? AND state = 'waiting'",
			  "ti", by, proposal);
	free(by);
	return ret;
}

int revert_auto(struct branch_ctx *bc, long long patch_id, long long *revert_id,
		long long *confirm_id)
{
	char *why = NULL;
	long long waiting = 0;
	enum refusal r;
	int ret;

	*revert_id = *confirm_id = 0;
	if ((ret = queue_follow_patch(bc, patch_id)) < 0)
		return ret;
	if (db_query_int(bc->db, &waiting,
			 "SELECT id FROM revert_proposals WHERE patch_id = ? AND"
			 " state = 'waiting'",
			 "i", patch_id) < 0)
		err_clear();
	if ((r = guard(bc, patch_id, &why)) != ALLOWED) {
		ret = ask_maintainer(bc, patch_id, why);
		if (ret >= 0 && waiting)
			ret = proposal_refused(bc, waiting, r, why);
		free(why);
		return ret < 0 ? ret : 0;
	}
	ret = revert_run_as(bc, patch_id,
			    waiting ? "found broken; proposed to the author, no"
				      " objection within revert_grace"
				    : "found broken; revert first",
			    1, 1, revert_id, confirm_id);
	if (ret >= 0 && waiting)
		ret = db_exec(bc->db,
			      "UPDATE revert_proposals SET state = 'done' WHERE"
			      " id = ?",
			      "i", waiting);
	return ret < 0 ? ret : 1;
}

static int revert_proposal_stop(struct branch_ctx *bc, const char *message_id,
			 const char *by)
{
	long long id = 0, patch = 0;
	int ret;

	if (!message_id ||
	    db_query_int(bc->db, &id,
			 "SELECT id FROM revert_proposals WHERE message_id = ?"
			 " AND state = 'waiting'",
			 "t", message_id) < 0 ||
	    db_query_int(bc->db, &patch,
			 "SELECT patch_id FROM revert_proposals WHERE id = ?",
			 "i", id) < 0)
		return 0;
	if ((ret = db_exec(bc->db,
			   "UPDATE revert_proposals SET state = 'stopped',"
			   " stopped_by = ? WHERE id = ? AND state = 'waiting'",
			   "ti", by, id)) <= 0)
		return ret;
	char *why = xstrfmt("the proposed revert was answered (%s)", by);
	ret = ask_maintainer(bc, patch, why);
	free(why);
	return ret < 0 ? ret : 1;
}

int revert_proposal_answer(struct branch_ctx *bc, const struct patch *reply,
			   const char *by)
{
	long long patch = 0;

	if (!reply->auto_reply)
		return revert_proposal_stop(bc, reply->in_reply_to, by);
	if (!reply->in_reply_to ||
	    db_query_int(bc->db, &patch,
			 "SELECT patch_id FROM revert_proposals WHERE message_id"
			 " = ? AND state = 'waiting'",
			 "t", reply->in_reply_to) < 0) {
		err_clear();
		return 0;
	}
	log_info("patch %lld: an automatic reply to the proposed revert (%s)"
		 " does not stop it",
		 patch, reply->message_id ? reply->message_id : "?");
	long long ev = event_add(bc->db, bc->actor, "patch", patch,
				 "auto-reply",
				 "an automatic reply (out of office) to the"
				 " proposed revert: it still waits");
	return ev < 0 ? (int)ev : 0;
}

/* The first of the patches ids (a JSON array text) that sql (bound: ids, then
 * now) finds due. */
static int first_due(sqlite3 *db, char *ids, const char *sql, long long *id)
{
	int ret = ids ? db_query_int(db, id, sql, "ti", ids,
				     (long long)time(NULL))
		      : ERR_IO;

	free(ids);
	return ret == 0;
}

int revert_propose_due(struct branch_ctx *bc, long long *id)
{
	return !strcmp(bc->cfg.auto_revert, "propose") &&
	       revert_first_trusted(
		       bc,
		       "SELECT value FROM json_each(?) WHERE NOT EXISTS"
		       " (SELECT 1 FROM reverts r WHERE r.patch_id = value)"
		       " AND NOT EXISTS (SELECT 1 FROM revert_proposals x"
		       " WHERE x.patch_id = value) ORDER BY value",
		       id);
}

int revert_grace_due(struct branch_ctx *bc, long long *id)
{
	return first_due(bc->db,
			 queue_state_ids(bc->db, bc->branch_id, PS_BROKEN),
			 "SELECT patch_id FROM revert_proposals WHERE patch_id"
			 " IN (SELECT value FROM json_each(?1)) AND state ="
			 " 'waiting' AND due_at <= ?2 ORDER BY id LIMIT 1",
			 id);
}
