/* rc-reply.c: the replies to an rc's cover: Tested-by, NAKs and testers' reports, and the maintainer's override. */
#include "rc-int.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "mime.h"
#include "patch.h"
#include "review.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

/* A report's number as the store keeps it: NULL when absent (-1). */
static long long num(int v)
{
	return v < 0 ? -1 : v;
}

static int report_add(sqlite3 *db, long long rc, const struct patch *reply,
		      const char *kind, int tested, int blocks,
		      const struct review_report *rep, const char *summary,
		      const char *quote)
{
	int ret = db_exec(
		db,
		"INSERT OR IGNORE INTO rc_reports (rc_id, message_id, kind,"
		" tester, name, tested, blocks, build_total, build_pass,"
		" build_fail, qemu_total, qemu_pass, qemu_fail, summary, quote)"
		" VALUES (?, ?, ?, lower(?), ?, ?, ?, NULLIF(?, -1), NULLIF(?,"
		" -1), NULLIF(?, -1), NULLIF(?, -1), NULLIF(?, -1), NULLIF(?,"
		" -1), ?, ?)",
		"itttt" "ii" "iiiiii" "tt", rc, reply->message_id, kind,
		reply->author_email ? reply->author_email : "?",
		reply->author_name, (long long)tested, (long long)blocks,
		rep ? num(rep->build_total) : -1LL,
		rep ? num(rep->build_pass) : -1LL,
		rep ? num(rep->build_fail) : -1LL,
		rep ? num(rep->qemu_total) : -1LL,
		rep ? num(rep->qemu_pass) : -1LL,
		rep ? num(rep->qemu_fail) : -1LL, summary, quote);
	return ret < 0 ? ret : ret > 0;
}

static void act(struct strbuf *action, const char *fmt, const char *what,
		long long rc, const struct patch *reply)
{
	if (!action)
		return;
	if (action->len)
		strbuf_addstr(action, ", ");
	strbuf_addf(action, fmt, what, rc);
	strbuf_addstr(action, " by ");
	mime_clean_line(action, reply->author_email ? reply->author_email : "?",
			reply->author_email ? strlen(reply->author_email) : 1);
}

int rc_reply(sqlite3 *db, long long rc, const struct patch *reply,
	     const struct review *r, struct strbuf *action)
{
	int tested = 0, recorded = 0, ret;
	int nak = (r->says & (REVIEW_NAK | REVIEW_DROP)) != 0;

	if (!reply->message_id)
		return 0;
	for (size_t i = 0; i < reply->ntags; i++)
		tested |= !strcmp(reply->tags[i].kind, "tested_by");
	if (nak) {
		/* a NAK is no Tested-by, whatever else the reply says */
		if ((ret = report_add(db, rc, reply, "nak", 0, 1, NULL,
				      "NAK on the rc's cover", r->quote)) < 0)
			return ret;
		if (ret)
			act(action, "%s on rc %lld", "NAK", rc, reply);
		recorded |= ret;
	}
	if (r->says & REVIEW_WITHDRAW) {
		if ((ret = report_add(db, rc, reply, "withdrawn", 0, 0, NULL,
				      "NAK withdrawn (the maintainer still"
				      " decides: stableq rc override)",
				      r->quote)) < 0)
			return ret;
		if (ret)
			act(action, "%s on rc %lld", "NAK withdrawn", rc, reply);
		recorded |= ret;
	}
	if (r->says & REVIEW_REPORT) {
		const struct review_report *rep = &r->report;
		int failed = rep->build_fail > 0 || rep->qemu_fail > 0;
		/* failures without a Tested-by hold the release */
		if ((ret = report_add(db, rc, reply, "report", tested,
				      failed && !tested, rep, rep->summary,
				      r->quote)) < 0)
			return ret;
		if (ret)
			act(action, "%s on rc %lld",
			    failed && !tested ? "failing report" : "report", rc,
			    reply);
		recorded |= ret;
	}
	for (size_t i = 0; !nak && i < reply->ntags; i++) {
		const struct patch_tag *t = &reply->tags[i];
		if (strcmp(t->kind, "tested_by"))
			continue;
		if ((ret = rc_add_tested(db, rc, t->value, t->extra,
					 reply->message_id)) < 0)
			return ret;
		if (ret && action) {
			if (action->len)
				strbuf_addstr(action, ", ");
			strbuf_addf(action, "tested rc %lld by ", rc);
			mime_clean_line(action, t->value, strlen(t->value));
		}
		recorded |= ret;
	}
	return recorded;
}

int rc_first_hold(sqlite3 *db, long long rc, char **why)
{
	json_t *row = db_row_json(
		db,
		"SELECT kind, tester, name, message_id, summary FROM rc_reports"
		" WHERE rc_id = ?1 AND blocks = 1 AND id > coalesce((SELECT"
		" override_upto FROM rcs WHERE id = ?1), 0) ORDER BY id LIMIT 1",
		"i", rc);
	struct strbuf sb = STRBUF_INIT;
	const char *kind, *name, *summary;

	*why = NULL;
	if (!row) {
		int ret = err_last();
		err_clear();
		return ret == ERR_NOTFOUND ? 0 : ret;
	}
	kind = json_string_value(json_object_get(row, "kind"));
	name = json_string_value(json_object_get(row, "name"));
	summary = json_string_value(json_object_get(row, "summary"));
	strbuf_addstr(&sb, !strcmp(kind, "nak") ? "a NAK from "
						: "a failing report without"
						  " a Tested-by from ");
	if (name && *name) {
		mime_clean_line(&sb, name, strlen(name));
		strbuf_addch(&sb, ' ');
	}
	strbuf_addf(&sb, "<%s> (Message-Id <%s>)",
		    json_string_value(json_object_get(row, "tester")),
		    json_string_value(json_object_get(row, "message_id")));
	if (strcmp(kind, "nak") && summary && *summary)
		strbuf_addf(&sb, ": %s", summary);
	*why = strbuf_detach(&sb, NULL);
	json_decref(row);
	return 1;
}

int rc_override(struct branch_ctx *bc, long long rc, const char *reason,
		long long *id)
{
	long long upto = 0, have = 0;
	char *version = NULL;
	int ret;

	*id = 0;
	if (!reason || !*reason)
		return err_set(ERR_INVALID, "an override needs a reason"
					    " (--reason TEXT)");
	if ((ret = db_begin(bc->db)) < 0)
		return ret;
	if (!rc && (rc = rc_open_id(bc->db, bc->branch_id)) <= 0) {
		ret = rc < 0 ? (int)rc
			     : err_set(ERR_NOTFOUND, "branch %s has no open rc",
				       bc->cfg.branch_key);
		goto out;
	}
	if ((ret = db_query_text(bc->db, &version,
				 "SELECT version FROM rcs WHERE id = ?", "i",
				 rc)) < 0) {
		ret = err_set(ERR_NOTFOUND, "no rc %lld", rc);
		goto out;
	}
	upto = db_int(bc->db, 1,
		      "SELECT coalesce(max(id), 0) FROM rc_reports WHERE rc_id"
		      " = ? AND blocks = 1",
		      "i", rc);
	have = db_int(bc->db, 1,
		      "SELECT coalesce(override_upto, 0) FROM rcs WHERE id = ?",
		      "i", rc);
	if (upto <= have) {
		ret = err_set(ERR_CONFLICT, "rc %lld (%s): no NAK or failing"
					    " report holds its release",
			      rc, version);
		goto out;
	}
	if ((ret = db_exec(bc->db,
			   "UPDATE rcs SET override_reason = ?, override_actor"
			   " = ?, override_upto = ? WHERE id = ?",
			   "ttii", reason, bc->actor, upto, rc)) < 0)
		goto out;
	ret = (int)event_add(bc->db, bc->actor, "rc", rc, "override",
			     "%s: the holds so far lifted: %s", version, reason);
	*id = rc;
out:
	free(version);
	ret = db_end(bc->db, ret);
	if (ret < 0)
		*id = 0;
	return ret < 0 ? ret : 0;
}
