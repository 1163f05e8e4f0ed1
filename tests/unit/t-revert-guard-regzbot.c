/* t-revert-guard-regzbot.c: flag trust in the caller's transaction, and stableq's own culprit told to regzbot. */
#include "bisect.h"
#include "compose.h"
#include "revert.h"
#include "tap.h"
#include "tqueue.h"

#include <unistd.h>

static long long count(sqlite3 *db, const char *sql)
{
	long long n = -1;

	if (db_query_int(db, &n, sql, NULL) < 0)
		err_clear();
	return n;
}

static char *text(sqlite3 *db, const char *sql)
{
	char *v = NULL;

	if (db_query_text(db, &v, sql, NULL) < 0)
		err_clear();
	return v ? v : xstrdup("");
}

#define UP "0123456789abcdef0123456789abcdef01234567"

/* A bisection as bisect.c leaves it once it found culprit, confirmed. */
static long long found(struct branch_ctx *bc, long long culprit,
		       long long *cid)
{
	db_exec(bc->db,
		"INSERT INTO candidates (branch_id, purpose, patch_ids, step,"
		" verdict) VALUES (?, 'queue', '[1,2]', 'done', 'fail')",
		"i", bc->branch_id);
	*cid = db_last_id(bc->db);
	db_exec(bc->db,
		"INSERT INTO bisections (candidate_id, failing_tests, state,"
		" culprit_patch_id) VALUES (?, '[\"user-copy\"]', 'found', ?)",
		"ii", *cid, culprit);
	return db_last_id(bc->db);
}

static void test_bisection_reports(const char *dir)
{
	struct branch_ctx bc;
	long long p, q, cid, bid;
	char *msg;

	tq_open(&bc, dir,
		"regressions_list = Regressions <regressions@example.org>\n");
	p = tq_add(&bc, "r1", "[PATCH] list: splice faster",
		   "commit " UP " upstream.\n\n", "lib/list.c", 10);
	q = tq_add(&bc, "r2", "[PATCH] list: no upstream", "", "lib/b.c", 10);
	bid = found(&bc, p, &cid);

	json_t *steer = json_pack("[s]", "user-copy");
	is_int(bisect_flag_culprit(&bc, bid, p, cid, steer, NULL,
				   "patch 1 is the first bad patch"),
	       0, "stableq's bisection flags its confirmed culprit");
	is_int(count(bc.db, "SELECT count(*) FROM mail WHERE kind ="
			    " 'regzbot'"),
	       1, "... and the regressions list gets one mail");
	msg = text(bc.db, "SELECT headers_and_body FROM mail WHERE kind ="
			  " 'regzbot'");
	like(msg, "\r\n\r\n#regzbot introduced: " UP "\r\n",
	     "... '#regzbot introduced: <upstream sha>' in a paragraph");
	like(msg, "To: Regressions <regressions@example.org>\r\n",
	     "... To: regressions_list");
	like(msg, "Failing test: user-copy", "... with the evidence");
	ok(!strstr(msg, "In-Reply-To:"), "... a new report");
	free(msg);
	msg = text(bc.db, "SELECT trust FROM flags WHERE patch_id = 1");
	is_str(msg, "trusted", "the bisection's flag is trusted");
	free(msg);

	/* a culprit naming no upstream commit: nothing to tell regzbot */
	bid = found(&bc, q, &cid);
	is_int(bisect_flag_culprit(&bc, bid, q, cid, steer, NULL, "patch 2"),
	       0, "a culprit without an upstream commit is flagged");
	is_int(count(bc.db, "SELECT count(*) FROM mail WHERE kind ="
			    " 'regzbot'"),
	       1, "... without a regzbot mail");
	json_decref(steer);
	tq_close(&bc);
}

static void test_compose(const char *dir)
{
	struct branch_ctx bc;
	char *msgid = NULL, *msg;
	long long id;

	tq_open(&bc, dir, "");
	db_begin(bc.db);
	id = compose_regzbot(bc.db, &bc.cfg,
			     &(struct regzbot_report){
				     .to = "regressions@example.org",
				     .subject = "x: y",
				     .introduced = "0123456789ab",
				     .branch = "6.1",
				     .why = "#REGZBOT fixed-by: 1234567\n"
					    "  #regzbot invalid: no",
				     .in_reply_to = "report-1@example.org",
			     },
			     &msgid);
	db_commit(bc.db);
	ok(id > 0 && msgid, "a regzbot mail answering a report");
	msg = text(bc.db, "SELECT headers_and_body FROM mail ORDER BY id DESC"
			  " LIMIT 1");
	like(msg, "In-Reply-To: <report-1@example.org>\r\n",
	     "... In-Reply-To the report");
	like(msg, "\r\n#regzbot ^introduced: 0123456789ab\r\n",
	     "... '#regzbot ^introduced:' (the mail it answers is the report)");
	ok(!strstr(msg, "#regzbot title:"), "... no title of its own");
	like(msg, "# REGZBOT fixed-by", "outside text cannot command regzbot");
	like(msg, "  # regzbot invalid", "... however indented");
	free(msg);
	free(msgid);

	long long before = count(bc.db, "SELECT count(*) FROM mail");
	id = compose_regzbot(bc.db, &bc.cfg,
			     &(struct regzbot_report){
				     .to = "regressions@example.org",
				     .subject = "x",
				     .introduced = "v6.1..v6.2",
				     .branch = "6.1",
				     .why = "",
			     },
			     NULL);
	is_int(id, ERR_INVALID, "an introduced that is no commit id: refused");
	is_int(count(bc.db, "SELECT count(*) FROM mail"), before,
	       "... nothing stored");
	tq_close(&bc);
}

/* An untrusted flag and its stored plan live and die with the transaction. */
static void test_untrusted_locked(const char *dir)
{
	struct branch_ctx bc;
	long long p, ev;

	tq_open(&bc, dir, "");
	bc.actor = "token:writer";
	p = tq_add(&bc, "u1", "[PATCH] u: one", "", "lib/u.c", 10);
	db_begin(bc.db);
	ev = flag_patch_locked(&bc, p, "fails on my box", NULL, FLAG_UNTRUSTED);
	ok(ev > 0, "flag_patch_locked(FLAG_UNTRUSTED) in the caller's"
		   " transaction");
	is_int(count(bc.db, "SELECT count(*) FROM reverts WHERE state ="
			    " 'planned'"),
	       1, "... stores the plan in it");
	db_rollback(bc.db);
	is_int(count(bc.db, "SELECT count(*) FROM flags") +
		       count(bc.db, "SELECT count(*) FROM reverts") +
		       count(bc.db, "SELECT count(*) FROM mail"),
	       0, "the caller rolls back: no flag, plan or mail is left");
	is_int(flag_patch_as(&bc, p, "fails on my box", NULL, FLAG_UNTRUSTED),
	       0, "flag_patch_as(FLAG_UNTRUSTED)");
	is_int(flag_trust_of(bc.db, p), FLAG_UNTRUSTED, "... its trust stored");
	char *why = text(bc.db, "SELECT reason FROM reverts");
	like(why, "flagged by token:writer", "... the plan says who flagged");
	free(why);
	long long due = 0;
	is_str(bc.cfg.auto_revert, "yes", "auto_revert = yes (the default)");
	is_int(revert_due(&bc, &due), 0,
	       "... the daemon has no revert due for it");
	is_int(flag_patch_locked(&bc, p, "", NULL, FLAG_TRUSTED), ERR_INVALID,
	       "a flag needs a reason");
	tq_close(&bc);
}

int main(void)
{
	char d1[] = "/tmp/t-revert-guard-regzbot.XXXXXX";
	char d2[] = "/tmp/t-revert-guard-regzbot.XXXXXX";
	char d3[] = "/tmp/t-revert-guard-regzbot.XXXXXX";

	if (!mkdtemp(d1) || !mkdtemp(d2) || !mkdtemp(d3)) {
		printf("Bail out! temp dirs\n");
		return 1;
	}
	test_bisection_reports(d1);
	test_compose(d2);
	test_untrusted_locked(d3);
	char *rm = xstrfmt("rm -rf '%s' '%s' '%s'", d1, d2, d3);
	(void)!system(rm);
	free(rm);
	return done_testing();
}
