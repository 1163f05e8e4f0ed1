/* reply.c: a reply read from the list acts on the patches its thread leads to. */
#include "reply.h"
#include "ctx.h"
#include "db.h"
#include "log.h"
#include "queue.h"
#include "rc.h"
#include "review.h"
#include "revert.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

/* Steps up a thread from a reply to the patch it is about. */
#define MAX_THREAD_DEPTH 64

static void add_target(long long **out, size_t *n, long long id)
{
	for (size_t i = 0; i < *n; i++)
		if ((*out)[i] == id)
			return;
	*out = xrealloc(*out, (*n + 1) * sizeof(**out));
	(*out)[(*n)++] = id;
}

/* The first column of each row of st (finalized) as targets. */
static void add_rows(sqlite3_stmt *st, long long **out, size_t *n)
{
	while (st && sqlite3_step(st) == SQLITE_ROW)
		add_target(out, n, sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
}

/* The patches a mail of the list became, on every branch it went to. */
static void mail_patches(sqlite3 *db, const char *message_id, long long **out,
			 size_t *n)
{
	add_rows(db_prepare(db,
			    "SELECT patch_id FROM mail_patches WHERE"
			    " message_id = ? ORDER BY branch_id",
			    "t", message_id),
		 out, n);
}

/*
 * The patches a reply is about: up its thread to a patch or a cover (of a
 * series on the list, or of stableq's own -rc: then *rc is set).
 */
static size_t reply_targets(sqlite3 *db, const char *irt, long long **out,
			    long long *rc)
{
	char *cur = irt ? xstrdup(irt) : NULL;
	size_t n = 0;

	*out = NULL;
	*rc = 0;
	for (int depth = 0; cur && depth < MAX_THREAD_DEPTH; depth++) {
		long long id = 0, rc_patch = 0;
		sqlite3_stmt *st;
		char *next = NULL;
		if (rc_by_message_id(db, cur, rc, &rc_patch) > 0) {
			if (rc_patch)
				add_target(out, &n, rc_patch);
			break;
		}
		mail_patches(db, cur, out, &n);
		if (n)
			break;
		if (queue_by_message_id(db, cur, &id) > 0) {
			add_target(out, &n, id);
			break;
		}
		st = db_prepare(db,
				"SELECT kind, in_reply_to, series_id FROM"
				" mail_messages WHERE message_id = ?",
				"t", cur);
		if (st && sqlite3_step(st) == SQLITE_ROW) {
			const char *kind = db_col_text(st, 0);
			if (!strcmp(kind, "reply") && db_col_text(st, 1))
				next = xstrdup(db_col_text(st, 1));
			else if (!strcmp(kind, "cover") &&
				 sqlite3_column_type(st, 2) != SQLITE_NULL)
				/* the whole series: its patches answer it */
				add_rows(db_prepare(
						 db,
						 "SELECT p.patch_id FROM"
						 " mail_messages m JOIN"
						 " mail_patches p ON"
						 " p.message_id = m.message_id"
						 " WHERE m.series_id = ? AND"
						 " m.kind = 'patch' ORDER BY"
						 " m.part, p.branch_id",
						 "i", sqlite3_column_int64(st, 2)),
					 out, &n);
			else if (!strcmp(kind, "cover"))
				/* a cover read before series were kept */
				add_rows(db_prepare(
						 db,
						 "SELECT patch_id FROM"
						 " mail_messages WHERE"
						 " in_reply_to = ? AND kind ="
						 " 'patch' AND patch_id IS NOT"
						 " NULL",
						 "t", cur),
					 out, &n);
		}
		sqlite3_finalize(st);
		free(cur);
		cur = next;
	}
	free(cur);
	return n;
}

/*
 * A patch held only until its series is whole is held for the review's
 * reason instead (through checked, the one way from held to held), so
 * the series completing does not let a NAKed patch go.
 */
static int take_over_hold(struct branch_ctx *bc, long long id,
			  const struct patch *reply)
{
	enum patch_state st;
	char *reason = NULL, *why;
	long long ev = 0;
	int ret = queue_get_row(bc->db, id, &st, &reason, NULL);

	if (ret >= 0 && st == PS_HELD && reason &&
	    !strncmp(reason, REPLY_SERIES_INCOMPLETE,
		     strlen(REPLY_SERIES_INCOMPLETE))) {
		why = xstrfmt("a review of it came while its series was"
			      " incomplete (Message-Id <%s>)",
			      reply->message_id);
		ev = queue_set_state(bc->db, id, PS_CHECKED, why, bc->actor);
		free(why);
	}
	free(reason);
	return ret < 0 ? ret : ev < 0 ? (int)ev : 0;
}

int reply_stop_proposal(struct branch_ctx *bc, const struct patch *reply,
			struct reply_counts *res, struct strbuf *action)
{
	struct review r;
	char *by;
	int ret;

	if (!reply->in_reply_to)
		return 0;
	review_read(&r, reply);
	by = xstrfmt("a reply from %s <%s>, Message-Id <%s>:\n%s",
		     reply->author_name ? reply->author_name : "",
		     reply->author_email ? reply->author_email : "?",
		     reply->message_id, r.quote ? r.quote : "");
	ret = revert_proposal_answer(bc, reply, by);
	free(by);
	review_release(&r);
	if (ret > 0) {
		res->stopped++;
		strbuf_addf(action, "%sstopped a proposed revert",
			    action->len ? ", " : "");
	}
	return ret;
}

int reply_apply(struct branch_ctx *bc, const struct patch *reply,
		struct reply_counts *res, struct strbuf *action,
		long long *patch_id)
{
	sqlite3 *db = bc->db;
	struct review r;
	long long *targets = NULL, *reg = NULL, rc = 0;
	size_t nt, nreg = 0;
	int held = 0, tr = 0, ret = 0;

	*patch_id = 0;
	review_read(&r, reply);
	nt = reply_targets(db, reply->in_reply_to, &targets, &rc);
	if (r.regression &&
	    (ret = queue_by_upstream(db, r.regression, &reg, &nreg)) < 0)
		goto out;
	for (size_t i = 0; i < nt + nreg; i++) {
		long long id = i < nt ? targets[i] : reg[i - nt];
		struct review only = r;
		int h = 0, t = 0;
		/* a regression report holds the patch it names, not the thread */
		if (i < nt && r.says == REVIEW_REGRESSION)
			only.says = 0;
		if ((only.says & (REVIEW_NAK | REVIEW_REGRESSION | REVIEW_DROP)) &&
		    (ret = take_over_hold(bc, id, reply)) < 0)
			goto out;
		if ((ret = review_apply(bc, id, reply, &only, &h, &t)) < 0)
			goto out;
		if (h)
			strbuf_addf(action, "%sheld %lld", action->len ? ", " : "",
				    id);
		if (t)
			strbuf_addf(action, "%s%d trailers on %lld",
				    action->len ? ", " : "", t, id);
		held += h;
		tr += t;
	}
	/* an answer to the -rc cover: Tested-by, a NAK, a tester's report */
	if (rc && !nt) {
		if ((ret = rc_reply(db, rc, reply, &r, action)) < 0)
			goto out;
		if (ret && (r.says & (REVIEW_NAK | REVIEW_DROP)))
			held++;
		else if (ret)
			res->tested++;
	}
	ret = 0;
	*patch_id = nt ? targets[0] : nreg ? reg[0] : 0;
	res->held += (size_t)held;
	res->trailers += (size_t)tr;
	if (held)
		log_info("mail %s: %s", reply->message_id, action->buf);
out:
	review_release(&r);
	free(targets);
	free(reg);
	return ret < 0 ? ret : 0;
}
