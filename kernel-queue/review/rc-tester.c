/* rc-tester.c: stableq as the first tester of its own rc: its candidate's results as a reply to the cover, in the list's format. */
#include "rc-int.h"
#include "bisect.h"
#include "candidate.h"
#include "compose.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "log.h"
#include "mime.h"
#include "queue.h"
#include "revert.h"
#include "strbuf.h"
#include "testcase.h"

#include <stdlib.h>
#include <string.h>

/* The candidate of exactly rc's patches (0: none), and the rc's row. */
static long long rc_candidate(sqlite3 *db, long long branch, long long rc)
{
	char *ids = db_text(db,
			    "SELECT json_group_array(patch_id) FROM (SELECT"
			    " patch_id FROM rc_patches WHERE rc_id = ? ORDER BY"
			    " pos)",
			    "i", rc);
	long long cid = 0;

	if (!ids || candidate_with_patches(db, branch, ids, 0, &cid) < 0)
		cid = 0;
	err_clear();
	free(ids);
	return cid;
}

int rc_report_due(struct branch_ctx *bc, long long *id)
{
	long long rc, cid, bid = 0;
	enum cand_verdict v;

	*id = 0;
	if (!*bc->cfg.tester_identity || !*bc->cfg.rc_list)
		return 0;
	rc = db_int(bc->db, 1,
		    "SELECT id FROM rcs WHERE branch_id = ? AND state = 'open'"
		    " AND report_message_id IS NULL ORDER BY id DESC LIMIT 1",
		    "i", bc->branch_id);
	if (rc <= 0 || !(cid = rc_candidate(bc->db, bc->branch_id, rc)))
		return 0;
	v = candidate_verdict_of(bc->db, cid);
	if (v == CV_NONE)
		return 0;
	/* a failure waits for its bisection to name the culprit */
	if (v != CV_PASS && !bisect_culprit_of(bc->db, cid) &&
	    bisect_due(bc, &bid) > 0 && bid == cid)
		return 0;
	err_clear();
	*id = rc;
	return 1;
}

/* The tests of a kind: the candidate's test cases whose name starts so. */
struct tally {
	const char *title;  /* "KUnit test results" */
	const char *prefix; /* "kunit." or NULL: the rest */
	long long total, pass, regression, known, flaky, skip;
};

static void tally_add(struct tally *t, size_t nt, const char *name,
		      const char *status)
{
	size_t k = 0;

	while (k + 1 < nt && (!t[k].prefix ||
			      strncmp(name, t[k].prefix, strlen(t[k].prefix))))
		k++;
	if (t[k].prefix && strncmp(name, t[k].prefix, strlen(t[k].prefix)))
		return;
	t[k].total++;
	if (!strcmp(status, "pass"))
		t[k].pass++;
	else if (!strcmp(status, "regression"))
		t[k].regression++;
	else if (!strcmp(status, "known"))
		t[k].known++;
	else if (!strcmp(status, "flaky"))
		t[k].flaky++;
	else
		t[k].skip++;
}

/* The report's body (no quote, no greeting): the list's format. */
static int report_text(struct branch_ctx *bc, long long cid,
		       struct strbuf *b, int *pass)
{
	struct tally t[] = {
		{ "KUnit test results", "kunit.", 0 },
		{ "kselftest results", "kselftest.", 0 },
		{ "Qemu test results", NULL, 0 },
	};
	enum cand_verdict v = candidate_verdict_of(bc->db, cid);
	json_t *cases = testcase_list_json(bc->db, cid, NULL);
	const json_t *c;
	size_t i;
	int built = v != CV_BUILD_FAILED && v != CV_APPLY_FAILED;
	long long culprit;

	err_clear();
	*pass = v == CV_PASS;
	json_array_foreach(cases, i, c)
		tally_add(t, 3, json_string_value(json_object_get(c, "name")),
			  json_string_value(json_object_get(c, "status")));
	strbuf_addf(b, "Build results:\n\ttotal: 1 pass: %d fail: %d\n", built,
		    !built);
	/* Qemu: the guest's own tests; fail counts every failing one */
	strbuf_addf(b, "Qemu test results:\n\ttotal: %lld pass: %lld fail: %lld\n",
		    t[2].pass + t[2].regression + t[2].known + t[2].flaky,
		    t[2].pass, t[2].regression + t[2].known + t[2].flaky);
	for (size_t k = 0; k < 2; k++) {
		if (!t[k].total)
			continue;
		strbuf_addf(b,
			    "%s:\n\ttotal: %lld pass: %lld fail: %lld skip: %lld\n"
			    "\tregressions against the tip: %lld\n"
			    "\tknown failures (failing on the tip too): %lld\n"
			    "\tflaky: %lld\n",
			    t[k].title, t[k].total, t[k].pass,
			    t[k].regression + t[k].known + t[k].flaky,
			    t[k].skip, t[k].regression, t[k].known,
			    t[k].flaky);
	}
	if (!*pass) {
		size_t shown = 0;
		strbuf_addf(b, "\nThe candidate (stableq candidate %lld) says:"
			       " %s.\n",
			    cid, candidate_verdict_name(v));
		json_array_foreach(cases, i, c) {
			const char *st = json_string_value(
				json_object_get(c, "status"));
			const char *name = json_string_value(
				json_object_get(c, "name"));
			if (strcmp(st, "regression") || shown >= 20)
				continue;
			if (!shown++)
				strbuf_addstr(b, "Regressions:\n");
			strbuf_addch(b, '\t');
			mime_clean_line(b, name, strlen(name));
			strbuf_addch(b, '\n');
		}
		if ((culprit = bisect_culprit_of(bc->db, cid)) > 0) {
			char *subject = NULL;
			json_t *rv = revert_items_of_json(bc->db, culprit);
			const json_t *last =
				json_array_get(rv, json_array_size(rv) - 1);
			queue_patch_subject(bc->db, culprit, &subject, NULL);
			strbuf_addf(b, "The culprit, by bisection: patch %lld (\"",
				    culprit);
			mime_clean_line(b, subject ? subject : "?",
					subject ? strlen(subject) : 1);
			strbuf_addstr(b, "\").\n");
			if (last)
				strbuf_addf(b,
					    "Its revert: revert %lld (%s).\n",
					    (long long)json_integer_value(
						    json_object_get(last, "id")),
					    json_string_value(json_object_get(
						    last, "state")));
			else
				strbuf_addf(b,
					    "Its revert is not planned yet:"
					    " stableq revert %lld --plan.\n",
					    culprit);
			free(subject);
			json_decref(rv);
		} else {
			strbuf_addstr(b, "No culprit was found by bisection.\n");
		}
	}
	json_decref(cases);
	err_clear();
	return 0;
}

int rc_report_send(struct branch_ctx *bc, long long rc)
{
	json_t *row = db_row_json(bc->db,
				  "SELECT version, cover_message_id, state,"
				  " report_message_id, deadline, (SELECT count(*)"
				  " FROM rc_patches WHERE rc_id = ?1) AS n FROM"
				  " rcs WHERE id = ?1",
				  "i", rc);
	struct strbuf body = STRBUF_INIT;
	char *subject = NULL, *mid = NULL;
	const char *version, *cover;
	long long cid, n, m;
	int pass = 0, ret;

	if (!row)
		return err_set(ERR_NOTFOUND, "no rc %lld", rc);
	if (json_string_value(json_object_get(row, "report_message_id"))) {
		ret = 0; /* sent already */
		goto out;
	}
	if (!*bc->cfg.tester_identity) {
		ret = err_set(ERR_INVALID, "tester_identity is not configured:"
					   " stableq does not test its rcs");
		goto out;
	}
	version = json_string_value(json_object_get(row, "version"));
	cover = json_string_value(json_object_get(row, "cover_message_id"));
	n = json_integer_value(json_object_get(row, "n"));
	cid = rc_candidate(bc->db, bc->branch_id, rc);
	if (!cid || candidate_verdict_of(bc->db, cid) == CV_NONE) {
		ret = err_set(ERR_CONFLICT,
			      "rc %lld (%s): its candidate is not done yet", rc,
			      version);
		goto out;
	}
	strbuf_addf(&body,
		    "On the review cycle of %s: stableq built and booted the"
		    " rc's %lld patch%s\n(candidate %lld) and ran its test"
		    " set.\n\n",
		    version, n, n == 1 ? "" : "es", cid);
	report_text(bc, cid, &body, &pass);
	if (pass) {
		strbuf_addstr(&body, "\nTested-by: ");
		mime_clean_line(&body, bc->cfg.tester_identity,
				strlen(bc->cfg.tester_identity));
		strbuf_addch(&body, '\n');
	}
	{
		char *cs = rc_subject(bc->cfg.branch_key, 0, (size_t)n, version);
		subject = xstrfmt("Re: %s", cs);
		free(cs);
	}
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	m = compose_list(bc->db, &bc->cfg,
			 &(struct list_mail){ .kind = "rc-report",
					      .to = bc->cfg.rc_list,
					      .cc = bc->cfg.rc_cc,
					      .subject = subject,
					      .in_reply_to = cover,
					      .body = body.buf },
			 &mid);
	ret = m < 0 ? (int)m
		    : db_exec(bc->db,
			      "UPDATE rcs SET report_message_id = ? WHERE id = ?"
			      " AND report_message_id IS NULL",
			      "ti", mid, rc);
	if (ret >= 0)
		ret = (int)event_add(bc->db, bc->actor, "rc", rc, "tested",
				     "%s: candidate %lld %s; reply <%s>",
				     version, cid, pass ? "passed" : "failed",
				     mid);
	if ((ret = db_end(bc->db, ret)) < 0)
		goto out;
	log_info("rc %lld: stableq's own test of %s: %s", rc, version,
		 pass ? "pass (Tested-by)" : "failed");
	ret = 0;
out:
	json_decref(row);
	strbuf_release(&body);
	free(subject);
	free(mid);
	return ret;
}
