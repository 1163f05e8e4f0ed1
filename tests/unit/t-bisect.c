/* t-bisect.c: bisection's search over queue prefixes, steered by a known culprit; the culprit's mail. */
#include "bisect.h"
#include "compose.h"
#include "tap.h"
#include "tqueue.h"

#include <unistd.h>

/*
 * Runs the search over n patches whose first bad prefix is k (prefix p:
 * the branch plus the first p patches; it fails from k on). Returns the
 * answer; *tries counts the prefixes tried, *bad_try is set when one was
 * tried twice or outside 0..n-1.
 */
static long search(size_t n, long k, long *tries, int *bad_try, long *order)
{
	struct bisect_window w;
	unsigned char seen[256] = { 0 };
	long p;

	*tries = 0;
	bisect_window_init(&w, n);
	while ((p = bisect_window_next(&w)) >= 0) {
		if (p >= (long)n || seen[p]++)
			*bad_try = 1;
		if (order)
			order[*tries] = p;
		if (++*tries > 64)
			break;
		bisect_window_record(&w, p, p >= k);
	}
	return w.bad;
}

/* The store's text of a query with one integer parameter, or "". */
static char *text_of(sqlite3 *db, const char *sql, long long id)
{
	char *v = NULL;

	if (db_query_text(db, &v, sql, "i", id) < 0) {
		err_clear();
		return xstrdup("");
	}
	return v ? v : xstrdup("");
}

/* Lines (CRLF) from the first line holding from to the first holding to. */
static int lines_between(const char *msg, const char *from, const char *to)
{
	const char *a = strstr(msg, from), *b = a ? strstr(a, to) : NULL;
	int n = 0;

	for (const char *c = a; c && c < b; c++)
		n += *c == '\n';
	return b ? n - 1 : -1;
}

/*
 * The culprit's mail, composed from rows in a real store as a bisection
 * leaves them: the confirmation candidate's results, one with a long and
 * hostile console log.
 */
static void test_culprit_mail(void)
{
	char dir[] = "/tmp/t-bisect.XXXXXX";
	struct branch_ctx bc;
	struct strbuf log = STRBUF_INIT;
	long long p, cid, bid, mail = 0;
	char *msg, *ev, *head;

	if (!mkdtemp(dir)) {
		ok(0, "a temp dir");
		return;
	}
	tq_open(&bc, dir, "");
	p = tq_add(&bc, "p1", "[PATCH] list: splice faster", "", "lib/list.c",
		   10);
	db_exec(bc.db,
		"INSERT INTO candidates (branch_id, purpose, patch_ids, step,"
		" verdict) VALUES (?, 'confirm', '[1]', 'done', 'fail')",
		"i", bc.branch_id);
	cid = db_last_id(bc.db);
	db_exec(bc.db,
		"INSERT INTO bisections (candidate_id, failing_tests) VALUES"
		" (?, '[]')",
		"i", cid);
	bid = db_last_id(bc.db);
	/* 100 lines from the guest; among them headers, terminal escapes, a
	 * bell, C1 and bidi controls, a lone CR */
	for (int i = 1; i <= 100; i++) {
		strbuf_addf(&log, "    # list_test_splice: line %d", i);
		if (i == 80)
			strbuf_addstr(&log, "\r\nBcc: evil@attacker.test\r\n"
					    "Subject: forged");
		if (i == 90)
			strbuf_addstr(&log, " \x1b[31mred\x1b[0m \a \xc2\x9b"
					    "2J \xe2\x80\xae"
					    "desrever");
		strbuf_addch(&log, '\n');
	}
	strbuf_addstr(&log, "    not ok 3 list_test_splice\n");
	db_exec(bc.db,
		"INSERT INTO test_results (candidate_id, name, result, detail,"
		" log_excerpt) VALUES (?1, 'kunit', 'fail', 'a case failed',"
		" NULL), (?1, 'kunit.list.list_test_splice', 'fail',"
		" 'EXPECTATION FAILED', ?2), (?1, 'user-copy', 'fail',"
		" 'exit 1', 'insmod: cannot insert')",
		"it", cid, log.buf);

	json_t *steer = json_pack("[sss]", "kunit",
				  "kunit.list.list_test_splice", "user-copy");
	is_int(bisect_flag_culprit(&bc, bid, p, cid, steer, NULL,
				   "patch 1 is the first bad patch"),
	       0, "the culprit is flagged");
	json_decref(steer);
	ev = text_of(bc.db, "SELECT evidence FROM flags WHERE patch_id = ?",
		     p);
	is_str(ev, "kunit.list.list_test_splice",
	       "... its evidence the most specific regressing test");
	free(ev);
	db_query_int(bc.db, &mail,
		     "SELECT id FROM mail WHERE patch_id = ? AND kind ="
		     " 'flagged'",
		     "i", p);
	ok(mail > 0, "the author's mail is in the outbox");
	msg = text_of(bc.db, "SELECT headers_and_body FROM mail WHERE id = ?",
		      mail);
	like(msg,
	     "regression tests fail from this patch on: kunit,"
	     " kunit.list.list_test_splice, user-copy",
	     "the mail names the regressing tests");
	like(msg, "Log of the failing test, kunit.list.list_test_splice:",
	     "... and whose log it quotes");
	like(msg, "line 100\r\n    not ok 3 list_test_splice\r\n",
	     "... the log's last lines");
	/* 103 lines: line 80 brought two more */
	like(msg, "[... 63 earlier lines (", "... saying what it left out");
	ok(!strstr(msg, "line 63\r\n") && strstr(msg, "line 64\r\n"),
	   "... its last %d lines alone", LOG_MAX_LINES);
	/* between the header and the last line: a blank line, the note */
	int quoted = lines_between(msg, "Log of the failing test", "not ok 3");
	is_int(quoted - 2 + 1, LOG_MAX_LINES, "%d lines quoted", LOG_MAX_LINES);
	{
		const char *eoh = strstr(msg, "\r\n\r\n");
		head = xstrndup(msg, eoh ? (size_t)(eoh - msg) : strlen(msg));
	}
	ok(!strstr(head, "Bcc:") && !strstr(head, "forged"),
	   "the console's lines add no header");
	free(head);
	like(msg, "line 80\r\nBcc: evil@attacker.test\r\nSubject: forged",
	     "... they stay lines of the body");
	ok(!strchr(msg, '\x1b') && !strchr(msg, '\a') &&
		   !strstr(msg, "\xc2\x9b") && !strstr(msg, "\xe2\x80\xae"),
	   "no escape, bell, C1 or bidi control reaches the mail");
	like(msg, "\xef\xbf\xbd[31mred\xef\xbf\xbd[0m \xef\xbf\xbd",
	     "... each is U+FFFD");
	{
		int bare = 0;
		for (const char *c = msg; *c; c++)
			bare += (*c == '\n' && (c == msg || c[-1] != '\r')) ||
				(*c == '\r' && c[1] != '\n');
		is_int(bare, 0, "no bare CR or LF");
	}
	free(msg);
	strbuf_release(&log);
	tq_close(&bc);
	char *rm = xstrfmt("rm -rf '%s'", dir);
	(void)!system(rm);
	free(rm);
}

int main(void)
{
	long tries, order[64], worst = 0;
	int bad_try = 0, wrong = 0, over = 0;

	is_int(bisect_search_steps(1), 0, "one possible answer: no step");
	is_int(bisect_search_steps(2), 1, "two: one step");
	is_int(bisect_search_steps(9), 4, "nine: four steps");
	is_int(bisect_search_steps(16), 4, "sixteen: four steps");
	is_int(bisect_search_steps(17), 5, "seventeen: five");

	is_int(search(8, 5, &tries, &bad_try, order), 5,
	       "8 patches, prefix 5 first bad: found");
	is_int(tries, 3, "... in 3 tries");
	ok(order[0] == 3 && order[1] == 5 && order[2] == 4, "... prefixes 3, 5, 4");

	is_int(search(1, 1, &tries, &bad_try, NULL), 1, "1 patch, it is bad");
	is_int(tries, 1, "... the branch alone is tried once (not assumed good)");
	is_int(search(1, 0, &tries, &bad_try, NULL), 0, "1 patch, the branch alone fails");

	for (size_t n = 1; n <= 200; n++) {
		for (long k = 0; k <= (long)n; k++) {
			long got = search(n, k, &tries, &bad_try, NULL);
			if (got != k) {
				wrong++;
				diag("n %zu, first bad %ld: found %ld", n, k, got);
			}
			if (tries > bisect_search_steps((long)n + 1)) {
				over++;
				diag("n %zu, first bad %ld: %ld tries", n, k, tries);
			}
			if (tries > worst)
				worst = tries;
		}
	}
	is_int(wrong, 0, "every culprit of queues of 1..200 patches is found");
	is_int(over, 0, "... each in at most ceil(log2(n + 1)) tries");
	ok(!bad_try, "... never trying a prefix twice, nor the known-bad whole queue");
	is_int(worst, 8, "200 patches: 8 tries at worst");
	test_culprit_mail();
	return done_testing();
}
