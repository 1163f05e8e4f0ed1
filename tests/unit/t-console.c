/* t-console.c: real guest consoles (tests/fixtures/console/) -> results. */
#include "console.h"
#include "err.h"
#include "strbuf.h"
#include "tap.h"
#include "tconsole.h"
#include "testset.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FIX "tests/fixtures/console/"

static const char *excerpt_of(const struct console_report *r, const char *name)
{
	const struct test_result *t = find(r, name);

	return t && t->excerpt ? t->excerpt : "(none)";
}

struct fixture {
	struct test_def *tests;
	size_t n;
	struct console_report rep;
};

static int load(struct fixture *f, const char *conf, const char *log,
		int killed)
{
	int ret = testset_load(conf, &f->tests, &f->n);

	if (!ok(ret == 0, "%s loads: %s", conf, ret ? err_msg() : ""))
		return -1;
	ret = console_parse_file(log, f->tests, f->n, killed, NULL, &f->rep);
	if (!ok(ret == 0, "%s parses: %s", log, ret ? err_msg() : ""))
		return -1;
	return 0;
}

static void release(struct fixture *f)
{
	console_report_release(&f->rep);
	testset_free(f->tests, f->n);
}

static void test_pass(void)
{
	struct fixture f;
	size_t kunit = 0, kunit_pass = 0;

	if (load(&f, FIX "testset.conf", FIX "pass.log", 0) < 0)
		return;
	is_str(run_verdict_name(f.rep.verdict), "pass", "pass.log: pass");
	is_str(f.rep.reason, "", "no reason");
	ok(f.rep.userspace && f.rep.done && !f.rep.killed,
	   "userspace, done, not killed");
	is_str(f.rep.kernel_release, "6.1.192+", "the kernel release");
	ok(f.rep.problem == NULL, "no kernel problem");
	for (size_t i = 0; i < f.n; i++)
		is_str(status_of(&f.rep, f.tests[i].name), "pass",
		       "pass.log: %s passes", f.tests[i].name);
	for (size_t i = 0; i < f.rep.nresults; i++)
		if (!strncmp(f.rep.results[i].name, "kunit.", 6)) {
			kunit++;
			kunit_pass += f.rep.results[i].status == TEST_PASS;
		}
	is_int(kunit, 93, "93 KUnit cases recorded (7 suites)");
	is_int(kunit_pass, kunit, "all of them pass");
	is_str(status_of(&f.rep, "kunit.list-kunit-test.list_test_list_init"),
	       "pass", "kunit.<suite>.<case> naming");
	is_str(status_of(&f.rep, "kunit.overflow.shift_sane_test"), "pass",
	       "a case after '# ...' diagnostics");
	like(detail_of(&f.rep, "kunit"), "93 KUnit cases ok", "ktap detail");
	ok(find(&f.rep, "kernel-log") == NULL, "no kernel-log result");
	/* results: declared tests in file order, the cases after kunit */
	is_str(f.rep.results[0].name, f.tests[0].name, "file order");
	release(&f);
}

static void test_user_copy_stale(void)
{
	struct fixture f;

	if (load(&f, FIX "testset.conf", FIX "user-copy-stale.log", 0) < 0)
		return;
	is_str(run_verdict_name(f.rep.verdict), "fail",
	       "user-copy-stale.log: fail");
	is_str(status_of(&f.rep, "user-copy"), "fail", "user-copy fails");
	like(detail_of(&f.rep, "user-copy"), "exit status 22\n",
	     "detail starts with the exit status");
	like(detail_of(&f.rep, "user-copy"),
	     "unsafe_get_user fault left stale value 0x5a5a5a5a5a5a5a5a (u64)",
	     "detail quotes the stale value");
	like(detail_of(&f.rep, "user-copy"),
	     "insmod: can't insert '/lib/modules/test_user_copy.ko'",
	     "and insmod's complaint");
	ok(!strstr(detail_of(&f.rep, "user-copy"), "@@stableq"),
	   "no markers in the detail");
	like(excerpt_of(&f.rep, "user-copy"), "@@stableq begin user-copy",
	     "the excerpt shows the markers");
	like(f.rep.reason,
	     "user-copy failed: exit status 22; test_user_copy:"
	     " unsafe_get_user fault left stale value",
	     "the reason names the test and the stale value");
	const char *others[] = {"boot",		 "dmesg-clean", "kunit",
				"module-reload", "badptr",	"proc-sanity"};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		is_str(status_of(&f.rep, others[i]), "pass", "%s still passes",
		       others[i]);
	release(&f);
}

static void test_panic(void)
{
	struct fixture f;

	if (load(&f, FIX "panic.conf", FIX "panic.log", 0) < 0)
		return;
	is_str(run_verdict_name(f.rep.verdict), "fail", "panic.log: fail");
	ok(f.rep.userspace && !f.rep.done, "userspace reached, not done");
	is_str(status_of(&f.rep, "dmesg-clean"), "fail", "dmesg-clean fails");
	like(detail_of(&f.rep, "dmesg-clean"),
	     "BUG: kernel NULL pointer dereference, address: 0000000000000010",
	     "it quotes the first offending line");
	like(detail_of(&f.rep, "dmesg-clean"), "console line ",
	     "with its line number");
	like(excerpt_of(&f.rep, "dmesg-clean"), "Oops: 0002",
	     "the excerpt holds the Oops");
	like(f.rep.problem, "BUG: kernel NULL pointer", "the problem line");
	is_str(status_of(&f.rep, "oops"), "fail", "the guest test fails");
	like(detail_of(&f.rep, "oops"), "did not finish: the guest stopped",
	     "it did not finish");
	like(detail_of(&f.rep, "oops"), "sq_oops", "its output is kept");
	is_str(status_of(&f.rep, "after"), "fail", "the next test fails");
	like(detail_of(&f.rep, "after"), "not run", "as not run");
	ok(find(&f.rep, "kernel-log") == NULL,
	   "no kernel-log result: the console test covers it");
	like(f.rep.reason, "dmesg-clean failed: console line",
	     "the reason is the first failure");
	/* what runner_boot() boots again past */
	is_str(f.rep.stopped_in ? f.rep.stopped_in : "(null)", "oops",
	       "the guest stopped in test oops");
	ok(!f.rep.stopped_in_kunit, "... not in built-in KUnit");
	ok(find(&f.rep, "after") && find(&f.rep, "after")->not_run,
	   "after is marked not run");
	ok(find(&f.rep, "oops") && !find(&f.rep, "oops")->not_run,
	   "oops ran: not marked");
	ok(find(&f.rep, "boot") && !find(&f.rep, "boot")->not_run,
	   "boot is not marked");
	release(&f);
}

/* A panic in built-in KUnit, before /init: the guest tests never ran. */
static void test_kunit_stop(void)
{
	static const char log[] =
		"[    0.500000] KTAP version 1\n"
		"[    0.500001] 1..2\n"
		"[    0.500002]     KTAP version 1\n"
		"[    0.500003]     # Subtest: good\n"
		"[    0.500004]     1..1\n"
		"[    0.500005]     ok 1 works\n"
		"[    0.500006] ok 1 good\n"
		"[    0.500007]     KTAP version 1\n"
		"[    0.500008]     # Subtest: bad\n"
		"[    0.500009]     1..1\n"
		"[    0.500010] BUG: kernel NULL pointer dereference, address: 0\n"
		"[    0.500011] Kernel panic - not syncing: Fatal exception\n";
	struct test_def *tests = NULL;
	size_t n = 0;
	struct console_report rep;
	char conf[] = "/tmp/t-console-kstop.XXXXXX";
	int fd = mkstemp(conf);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!ok(f != NULL, "a test set file"))
		return;
	fputs("[test boot]\nkind = boot\n[test kunit]\nkind = ktap\n"
	      "[test g]\nkind = guest\ncommand = true\n",
	      f);
	fclose(f);
	if (!ok(testset_load(conf, &tests, &n) == 0, "it loads: %s",
		err_msg()))
		return;
	unlink(conf);
	ok(console_parse(log, sizeof(log) - 1, tests, n, 0, &rep) == 0,
	   "the console parses");
	ok(rep.stopped_in_kunit, "the guest stopped in built-in KUnit");
	ok(rep.stopped_in == NULL, "... not in a guest test");
	is_str(status_of(&rep, "kunit.good.works"), "pass",
	       "the suite before it is kept");
	is_str(status_of(&rep, "kunit"), "fail", "the kunit test fails");
	like(detail_of(&rep, "kunit"), "1 of 2 KUnit cases not ok: kunit.bad",
	     "... naming the suite that stopped the guest");
	is_str(status_of(&rep, "kunit.bad"), "fail",
	       "the suite it stopped in fails: kunit.bad");
	like(detail_of(&rep, "kunit.bad"),
	     "did not finish: the guest stopped during this suite",
	     "... and says why");
	ok(find(&rep, "g") && find(&rep, "g")->not_run,
	   "g: not run (the runner boots it again, KUnit off)");
	like(detail_of(&rep, "g"), "not run: the guest never reached userspace",
	     "... and says why");
	console_report_release(&rep);
	/* killed at the deadline: not a stop, nothing to boot again */
	ok(console_parse(log, sizeof(log) - 1, tests, n, 1, &rep) == 0,
	   "the console parses, killed");
	ok(!rep.stopped_in_kunit && !rep.stopped_in, "killed: no stop");
	is_str(status_of(&rep, "kunit.bad"), "hang",
	       "killed: the suite it was in hung");
	console_report_release(&rep);
	testset_free(tests, n);
}

static void test_hang(void)
{
	struct fixture f;

	if (load(&f, FIX "hang.conf", FIX "hang.log", 1) < 0)
		return;
	is_str(run_verdict_name(f.rep.verdict), "hang", "hang.log: hang");
	ok(f.rep.killed && !f.rep.done, "killed, not done");
	is_str(f.rep.reason, "killed at the deadline during test sleeper",
	       "the reason names the test");
	is_str(status_of(&f.rep, "boot"), "pass", "boot passes");
	is_str(status_of(&f.rep, "sleeper"), "hang", "the sleeper hangs");
	like(detail_of(&f.rep, "sleeper"),
	     "killed at its deadline\ngoing to "
	     "sleep",
	     "detail: why, then the output so far");
	like(detail_of(&f.rep, "after"), "killed at its deadline before",
	     "the next test was never reached");
	release(&f);

	/* the same log, QEMU not killed: a guest that stopped is a failure */
	if (load(&f, FIX "hang.conf", FIX "hang.log", 0) < 0)
		return;
	is_str(run_verdict_name(f.rep.verdict), "fail", "not killed: fail");
	is_str(status_of(&f.rep, "sleeper"), "fail", "the sleeper fails");
	like(detail_of(&f.rep, "sleeper"), "did not finish", "did not finish");
	is_str(f.rep.stopped_in ? f.rep.stopped_in : "(null)", "sleeper",
	       "it stopped in the sleeper");
	release(&f);
}

static void test_kunit_fail(void)
{
	struct fixture f;

	if (load(&f, FIX "kunit-fail.conf", FIX "kunit-fail.log", 0) < 0)
		return;
	is_str(run_verdict_name(f.rep.verdict), "fail", "kunit-fail.log: fail");
	is_str(status_of(&f.rep, "kunit"), "fail", "the ktap test fails");
	like(detail_of(&f.rep, "kunit"),
	     "1 of 96 KUnit cases not ok: kunit.stableq-fixture.sq_fail",
	     "its detail names the failing case");
	is_str(status_of(&f.rep, "kunit.stableq-fixture.sq_pass"), "pass",
	       "sq_pass passes");
	is_str(status_of(&f.rep, "kunit.stableq-fixture.sq_fail"), "fail",
	       "sq_fail fails");
	like(detail_of(&f.rep, "kunit.stableq-fixture.sq_fail"),
	     "# sq_fail: EXPECTATION FAILED at", "with KUnit's message");
	like(detail_of(&f.rep, "kunit.stableq-fixture.sq_fail"), "stale == 90",
	     "and the values");
	ok(!strstr(detail_of(&f.rep, "kunit.stableq-fixture.sq_fail"),
		   "ok 1 sq_pass"),
	   "but not the previous case's result");
	is_str(status_of(&f.rep, "kunit.stableq-fixture.sq_skip"), "skip",
	       "sq_skip is a skip");
	is_str(detail_of(&f.rep, "kunit.stableq-fixture.sq_skip"),
	       "not on this machine", "with its reason");
	is_str(status_of(&f.rep, "kunit.hash.test_string_or"), "pass",
	       "boot-time cases are recorded too");
	is_str(status_of(&f.rep, "kunit-module"), "pass",
	       "insmod itself succeeded");
	is_str(status_of(&f.rep, "dmesg-clean"), "pass",
	       "a failing KUnit case is no kernel problem");
	like(f.rep.reason, "kunit failed: 1 of 96", "the reason");
	release(&f);
}

static void test_warn(void)
{
	struct fixture f;

	if (load(&f, FIX "warn.conf", FIX "warn.log", 0) < 0)
		return;
	is_str(run_verdict_name(f.rep.verdict), "fail",
	       "warn.log: fail although every declared test passes");
	is_str(status_of(&f.rep, "warn"), "pass", "the warn test passes");
	is_str(status_of(&f.rep, "after"), "pass", "the next one too");
	is_str(status_of(&f.rep, "kernel-log"), "fail",
	       "a kernel-log result is added");
	like(detail_of(&f.rep, "kernel-log"),
	     "WARNING: CPU: 0 PID:", "quoting the WARNING");
	like(excerpt_of(&f.rep, "kernel-log"), "stableq fixture warning",
	     "the excerpt has the lines around it");
	like(f.rep.reason, "kernel-log failed: console line", "the reason");
	release(&f);
}

static int parse_text(const char *conf, const char *log, int killed,
		      struct fixture *f)
{
	int ret = testset_parse(conf, strlen(conf), "inline", &f->tests, &f->n);
	if (ret < 0) {
		diag("%s", err_msg());
		return ret;
	}
	return console_parse(log, strlen(log), f->tests, f->n, killed, &f->rep);
}

/* Small synthetic consoles for the cases the fixtures do not show. */
static void test_edges(void)
{
	struct fixture f;
	const char *conf = "[test boot]\nkind = boot\n"
			   "[test t]\nkind = guest\ncommand = x\n"
			   "[test k]\nkind = ktap\n";

	/* timestamps, CRLF, escapes, a marker sharing a line */
	is_int(parse_text(conf,
			  "\x1b[2J\x1b"
			  "c[    0.000000] Linux version 6.1\r\n"
			  "[    0.100000] KTAP version 1\r\n"
			  "[    0.100001] 1..1\r\n"
			  "[    0.100002]     KTAP version 1\r\n"
			  "[    0.100003]     # Subtest: s\r\n"
			  "[    0.100004]     1..2\r\n"
			  "[    0.100005]     ok 1 - a\r\n"
			  "[    0.100006]     # b: param 1\r\n"
			  "[    0.100007]         ok 1 p1\r\n"
			  "[    0.100008]     ok 2 b\r\n"
			  "[    0.100009] ok 1 s\r\n"
			  "@@stableq userspace\r\n"
			  "@@stableq begin t\r\n"
			  "WARNING: this is a user program's text\r\n"
			  "[    1.000000] random: crng init done@@stableq end "
			  "t 0\r\n"
			  "@@stableq done\r\n",
			  0, &f),
	       0, "stamped console parses");
	is_str(run_verdict_name(f.rep.verdict), "pass", "stamped: pass");
	is_str(status_of(&f.rep, "t"), "pass",
	       "a marker after a kernel message on the same line");
	is_str(status_of(&f.rep, "kunit.s.a"), "pass", "'ok 1 - a' (dash)");
	is_str(status_of(&f.rep, "kunit.s.b"), "pass",
	       "a parameterised case counts once");
	ok(find(&f.rep, "kunit.s.p1") == NULL, "params are not cases");
	ok(f.rep.problem == NULL,
	   "with timestamps, unstamped userspace text is no kernel problem");
	release(&f);

	/* the guest's own timeout marker */
	is_int(parse_text(conf,
			  "@@stableq userspace\n@@stableq begin t\nslow\n"
			  "@@stableq timeout t 5\n@@stableq end t 137\n"
			  "@@stableq done\n",
			  0, &f),
	       0, "guest timeout parses");
	is_str(status_of(&f.rep, "t"), "hang", "a guest timeout is a hang");
	like(detail_of(&f.rep, "t"), "after its timeout of 5 s", "detail");
	is_str(run_verdict_name(f.rep.verdict), "fail",
	       "the guest survived: the run fails, it did not hang");
	like(f.rep.reason, "t hung: killed by the guest", "reason");
	is_str(status_of(&f.rep, "k"), "fail", "no KTAP: the ktap test fails");
	like(detail_of(&f.rep, "k"), "no KTAP", "and says so");
	release(&f);

	/* nothing at all */
	is_int(parse_text(conf, "", 1, &f), 0, "empty console parses");
	is_str(run_verdict_name(f.rep.verdict), "hang", "empty+killed: hang");
	is_str(f.rep.reason,
	       "killed at the deadline: the guest printed "
	       "nothing",
	       "reason");
	is_str(status_of(&f.rep, "boot"), "fail", "boot fails");
	is_str(detail_of(&f.rep, "boot"), "the console is empty", "detail");
	like(detail_of(&f.rep, "t"), "never reached userspace", "t not run");
	release(&f);

	/* a suite that is not ok without a failing case */
	is_int(parse_text(conf,
			  "KTAP version 1\n1..1\n    KTAP version 1\n"
			  "    # Subtest: broken\n    1..0\n"
			  "    # broken: init failed\nnot ok 1 broken\n"
			  "@@stableq userspace\n@@stableq begin t\n"
			  "@@stableq end t 0\n@@stableq done\n",
			  0, &f),
	       0, "failed suite parses");
	is_str(status_of(&f.rep, "kunit.broken"), "fail",
	       "the suite itself is recorded");
	is_str(status_of(&f.rep, "k"), "fail", "the ktap test fails");
	release(&f);

	/* the first case fails: its detail is its diagnostics only */
	is_int(parse_text(conf,
			  "KTAP version 1\n1..1\n    KTAP version 1\n"
			  "    # Subtest: s\n    1..2\n"
			  "    # c1: EXPECTATION FAILED at x.c:3\n"
			  "    not ok 1 c1\n    ok 2 c2\nnot ok 1 s\n",
			  0, &f),
	       0, "first case failing parses");
	is_str(detail_of(&f.rep, "kunit.s.c1"),
	       "    # c1: EXPECTATION FAILED at x.c:3",
	       "no header or plan in the detail");
	is_str(status_of(&f.rep, "kunit.s.c2"), "pass", "c2 passes");
	ok(find(&f.rep, "kunit.s") == NULL,
	   "a suite with a failing case adds no suite result");
	release(&f);

	/* a long output is trimmed, its head and tail kept */
	struct strbuf log = STRBUF_INIT;
	strbuf_addstr(&log, "@@stableq userspace\n@@stableq begin t\nFIRST\n");
	for (int i = 0; i < 2000; i++)
		strbuf_addf(&log, "line %d of a long output\n", i);
	strbuf_addstr(&log, "LAST\n@@stableq end t 1\n@@stableq done\n");
	is_int(parse_text(conf, log.buf, 0, &f), 0, "long output parses");
	const char *d = detail_of(&f.rep, "t");
	ok(strlen(d) < CONSOLE_DETAIL_MAX + 200, "detail trimmed (%zu bytes)",
	   strlen(d));
	like(d, "FIRST", "head kept");
	like(d, "LAST", "tail kept");
	like(d, "bytes cut ...]", "cut marked");
	release(&f);
	strbuf_release(&log);

	/* a long TAP output failing in the middle: the failure stays */
	strbuf_addstr(&log, "@@stableq userspace\n@@stableq begin t\n1..400\n");
	for (int i = 1; i <= 400; i++)
		strbuf_addf(&log, "%sok %d - efault: check number %d\n",
			    i == 200 ? "not " : "", i, i);
	strbuf_addstr(&log, "# 1 of 400 checks failed\n@@stableq end t 1\n"
			    "@@stableq done\n");
	is_int(parse_text(conf, log.buf, 0, &f), 0, "long TAP parses");
	d = detail_of(&f.rep, "t");
	ok(strlen(d) < CONSOLE_DETAIL_MAX + 200, "detail trimmed (%zu bytes)",
	   strlen(d));
	like(d, "failures:\nnot ok 200 - efault: check number 200\noutput:\n",
	     "the 'not ok' line is kept, first");
	like(d, "# 1 of 400 checks failed", "the tail too");
	release(&f);
	strbuf_release(&log);

	/* markers of unknown tests are ignored; a test never begun fails */
	is_int(parse_text(conf,
			  "@@stableq userspace\n@@stableq begin zz\n"
			  "@@stableq end zz 0\n@@stableq done\n",
			  0, &f),
	       0, "unknown marker parses");
	like(detail_of(&f.rep, "t"), "never started", "t never started");
	ok(find(&f.rep, "zz") == NULL, "no result for an undeclared test");
	release(&f);

	struct console_report r;
	is_int(console_parse(NULL, 5, NULL, 0, 0, &r), ERR_INVALID,
	       "NULL log with a length");
	is_int(console_parse_file("/nonexistent.log", NULL, 0, 0, NULL, &r),
	       ERR_NOTFOUND, "missing log");
	console_report_release(NULL);
	ok(1, "console_report_release(NULL)");
}

static int parse_marked(const char *conf, const char *log, const char *token,
			struct fixture *f)
{
	if (testset_parse(conf, strlen(conf), "conf", &f->tests, &f->n) < 0)
		return -1;
	return console_parse_marked(log, strlen(log), f->tests, f->n, 0, token,
				    &f->rep);
}

/* Hostile or odd KTAP and markers: no line forges another test's result. */
static void test_hostile(void)
{
	struct fixture f;
	const char *conf = "[test boot]\nkind = boot\n"
			   "[test t]\nkind = guest\ncommand = x\n"
			   "[test u]\nkind = guest\ncommand = y\n"
			   "[test k]\nkind = ktap\n";

	/* KUnit's parameterised cases, as 6.1 and 6.12 print them */
	is_int(parse_marked(conf,
			    "KTAP version 1\n1..1\n    KTAP version 1\n"
			    "    # Subtest: s\n    1..2\n    ok 1 plain\n"
			    "        KTAP version 1\n"
			    "        # Subtest: pc\n"
			    "        ok 1 1.5 MiB\n"
			    "        # pc: EXPECTATION FAILED at x.c:9\n"
			    "        not ok 2 <b>x</b>/../y\n"
			    "        ok 3 skipped # SKIP no hw\n"
			    "    not ok 2 pc\nnot ok 1 s\n"
			    "@@stableq userspace\n@@stableq done\n",
			    NULL, &f),
	       0, "parameterised KTAP parses");
	is_str(status_of(&f.rep, "kunit.s.plain"), "pass", "a plain case");
	is_str(status_of(&f.rep, "kunit.s.pc"), "fail", "the case itself");
	is_str(status_of(&f.rep, "kunit.s.pc.1.5_MiB"), "pass",
	       "a parameter is a result of its own, dots kept");
	is_str(status_of(&f.rep, "kunit.s.pc._b_x__b__.._y"), "fail",
	       "a hostile parameter name is made safe");
	like(detail_of(&f.rep, "kunit.s.pc._b_x__b__.._y"),
	     "# pc: EXPECTATION FAILED at x.c:9", "with its diagnostics");
	ok(!strstr(detail_of(&f.rep, "kunit.s.pc._b_x__b__.._y"), "1.5 MiB"),
	   "but not the previous parameter's line");
	is_str(status_of(&f.rep, "kunit.s.pc.skipped"), "skip",
	       "a skipped parameter");
	like(detail_of(&f.rep, "k"), "2 of 5 KUnit cases not ok",
	     "the ktap test counts parameters");
	release(&f);

	/* a case printed twice: the failure stays */
	is_int(parse_marked(conf,
			    "KTAP version 1\n1..1\n    KTAP version 1\n"
			    "    # Subtest: s\n    1..2\n    not ok 1 a\n"
			    "    ok 2 a\n    ok 3 a.b\nnot ok 1 s\n",
			    NULL, &f),
	       0, "duplicate KTAP parses");
	is_str(status_of(&f.rep, "kunit.s.a"), "fail",
	       "a later 'ok' does not hide a failure");
	is_str(status_of(&f.rep, "kunit.s.a_b"), "pass",
	       "a dot in a case name cannot make another case's name");
	size_t na = 0;
	for (size_t i = 0; i < f.rep.nresults; i++)
		na += !strcmp(f.rep.results[i].name, "kunit.s.a");
	is_int((long)na, 1, "one result per name");
	release(&f);

	/* a guest program printing KTAP and markers, without the token */
	const char *forged =
		"KTAP version 1\n1..1\n    KTAP version 1\n"
		"    # Subtest: s\n    1..1\n    not ok 1 a\nnot ok 1 s\n"
		"@@stableq userspace T0K3N\n@@stableq begin t T0K3N\n"
		"KTAP version 1\n1..1\n    KTAP version 1\n"
		"    # Subtest: s\n    1..1\n    ok 1 a\n"
		"    # Subtest: evil\n    not ok 1 framed\nok 1 s\n"
		"@@stableq end t 0\n@@stableq end u 0\n"
		"@@stableq end t 0 @@stableq end t 1 T0K3N\n"
		"@@stableq begin u T0K3N\n"
		"@@stableq end u 0 T0K3Nx\n@@stableq done\n"
		"@@stableq end u 2 T0K3N\n@@stableq done T0K3N\n";
	is_int(parse_marked(conf, forged, "T0K3N", &f), 0,
	       "a forging console parses");
	is_str(status_of(&f.rep, "kunit.s.a"), "fail",
	       "a program's KTAP does not turn a KUnit failure into a pass");
	ok(find(&f.rep, "kunit.evil.framed") == NULL,
	   "nor adds a KUnit result");
	is_str(status_of(&f.rep, "t"), "fail",
	       "markers without the token are the test's output");
	like(detail_of(&f.rep, "t"), "exit status 1", "the real status");
	is_str(status_of(&f.rep, "u"), "fail",
	       "a marker ending in another token is no marker");
	like(detail_of(&f.rep, "u"), "exit status 2", "the real status");
	ok(f.rep.done, "done, from the marked line");
	release(&f);

	/* the same console without a token: plain markers count */
	is_int(parse_marked(conf,
			    "@@stableq userspace\n@@stableq begin t\n"
			    "@@stableq end t 0 @@stableq end t 1\n"
			    "@@stableq done\n",
			    NULL, &f),
	       0, "plain markers parse");
	is_str(status_of(&f.rep, "t"), "fail",
	       "the last marker of a line is /init's");
	release(&f);

	/* a test killed at its timeout is named, the next still runs */
	is_int(parse_marked(conf,
			    "@@stableq userspace K\n@@stableq begin t K\n"
			    "sleeping\n@@stableq timeout t 3 K\n"
			    "@@stableq end t 137 K\n@@stableq begin u K\n"
			    "@@stableq end u 0 K\n@@stableq done K\n",
			    "K", &f),
	       0, "timeout console parses");
	is_str(status_of(&f.rep, "t"), "hang", "the hanging test is a hang");
	like(f.rep.reason, "t hung: killed by the guest after its timeout",
	     "named in the reason");
	is_str(status_of(&f.rep, "u"), "pass", "the next test ran and passed");
	release(&f);
}


/*
 * The broad guest's shape: every KUnit suite of a tree at boot, so dozens
 * of suites and hundreds of cases, 6.1's "ok 1 - name" and 6.12's "ok 1
 * name", parameterised cases, "# Totals" lines, skipped cases and suites,
 * and kernel messages (timestamped, unindented) between KTAP lines. Every
 * case and parameter is one result, counted exactly.
 */
static void test_broad_shape(void)
{
	struct fixture f;
	struct strbuf log = STRBUF_INIT;
	const char *conf = "[test boot]\nkind = boot\n[test k]\nkind = ktap\n";
	const int nsuites = 60, ncases = 14, nparams = 5;
	size_t want = 0, kunit = 0, skips = 0, fails = 0;

	strbuf_addf(&log, "KTAP version 1\n1..%d\n", nsuites);
	for (int s = 0; s < nsuites; s++) {
		const char *dash = s % 2 ? "" : "- "; /* 6.12 : 6.1 */
		strbuf_addf(&log,
			    "[    %d.000001]     KTAP version 1\n"
			    "[    %d.000002]     # Subtest: suite%d\n"
			    "[    %d.000003]     1..%d\n",
			    s, s, s, s, ncases + 1);
		for (int c = 0; c < ncases; c++) {
			if (c == 3)
				strbuf_addf(&log, "[    %d.5] EXT4-fs (loop0): "
						  "mounted filesystem\n", s);
			if (c == 5 && s == 7)
				strbuf_addf(&log, "    not ok %d %scase%d\n"
						  "    # case%d: EXPECTATION FAILED"
						  " at lib/x.c:1\n",
					    c + 1, dash, c, c);
			else if (c == 6)
				strbuf_addf(&log, "    ok %d %scase%d # SKIP no"
						  " hardware\n",
					    c + 1, dash, c);
			else
				strbuf_addf(&log, "    ok %d %scase%d\n", c + 1,
					    dash, c);
			want++;
		}
		/* a parameterised case */
		strbuf_addf(&log, "        KTAP version 1\n"
				  "        # Subtest: param_case\n");
		for (int p = 0; p < nparams; p++)
			strbuf_addf(&log, "        ok %d %sparam-%d\n", p + 1,
				    dash, p);
		strbuf_addf(&log, "    ok %d %sparam_case\n"
				  "    # suite%d: pass:%d fail:0 skip:1 total:%d\n"
				  "    # Totals: pass:%d fail:0 skip:1 total:%d\n",
			    ncases + 1, dash, s, ncases, ncases + 1, ncases,
			    ncases + 1);
		want += 1 + nparams;
		strbuf_addf(&log, "%s %d %ssuite%d\n", s == 7 ? "not ok" : "ok",
			    s + 1, dash, s);
	}
	strbuf_addstr(&log, "@@stableq userspace\n@@stableq done\n");
	is_int(parse_marked(conf, log.buf, NULL, &f), 0,
	       "the broad guest's KTAP parses");
	for (size_t i = 0; i < f.rep.nresults; i++)
		if (!strncmp(f.rep.results[i].name, "kunit.", 6)) {
			kunit++;
			skips += f.rep.results[i].status == TEST_SKIP;
			fails += f.rep.results[i].status == TEST_FAIL;
		}
	is_int(kunit, want, "one result per case and parameter (%zu)", want);
	is_int(skips, nsuites, "a skipped case per suite");
	is_int(fails, 1, "the one failing case, not its suite again");
	static const char *const named[][3] = {
		{ "kunit.suite7.case5", "fail", "the failing case is named" },
		{ "kunit.suite0.case2", "pass", "6.1's 'ok 1 - name' loses its dash" },
		{ "kunit.suite59.param_case.param-4", "pass",
		  "the last suite's last parameter" },
		{ "kunit.suite1.case4", "pass", "a case after a kernel message" },
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		is_str(status_of(&f.rep, named[i][0]), named[i][1], "%s",
		       named[i][2]);
	ok(find(&f.rep, "kunit.suite1.Totals:") == NULL &&
		   find(&f.rep, "kunit.suite1.suite1:") == NULL,
	   "totals are no cases");
	is_str(status_of(&f.rep, "k"), "fail", "the ktap test fails");
	release(&f);
	strbuf_release(&log);
}

int main(void)
{
	test_pass();
	test_user_copy_stale();
	test_panic();
	test_kunit_stop();
	test_hang();
	test_kunit_fail();
	test_warn();
	test_edges();
	test_hostile();
	test_broad_shape();
	return done_testing();
}
