/* console.h: a guest's serial console -> per-test results and a verdict. */
#ifndef STABLEQ_CONSOLE_H
#define STABLEQ_CONSOLE_H

#include "testset.h"

#include <stddef.h>

/*
 * The console is what the kernel and the guest's /init printed on ttyS0
 * (qemu-runner/guest/init documents the markers):
 *
 *   @@stableq userspace                 /init runs
 *   @@stableq begin NAME                a guest test starts; its output follows
 *   @@stableq timeout NAME SECONDS      the guest killed it at its timeout
 *   @@stableq end NAME STATUS           it ended with exit status STATUS
 *   @@stableq done                      every test ran
 *
 * plus KUnit's KTAP ("KTAP version 1", "# Subtest: suite", "ok N case",
 * "not ok N case", "ok N case # SKIP why", nested by 4 spaces; a
 * parameterised case's parameters one level deeper) and ordinary kernel
 * messages. A marker is the last "@@stableq " of its line (a kernel message
 * or a test's unterminated output may come before it); "[ 1.234567] "
 * timestamps, carriage returns and terminal escapes are ignored. KTAP is
 * read as KUnit's before "@@stableq userspace" (built-in KUnit runs before
 * /init) and while a guest test that loads modules runs (a KUnit module):
 * what a guest program prints is no KUnit result. A kselftest guest test
 * (test_def.kselftest) exits 4 to skip, and the TAP lines it prints at the
 * start of a line between its markers are results of its own,
 * "kselftest.TARGET.TEST.NAME" (at most 2,000 per test).
 */

enum test_status {
	TEST_PASS,
	TEST_FAIL,
	TEST_SKIP, /* KTAP "# SKIP" */
	TEST_HANG, /* killed at a deadline: the guest's or the host's */
};

enum run_verdict {
	VERDICT_PASS,
	VERDICT_FAIL,
	VERDICT_HANG, /* the host killed the guest at its deadline */
};

/* All strings owned by the report. */
struct test_result {
	char *name;    /* the test's name; "kunit.<suite>.<case>" for KTAP
			* cases, "kunit.<suite>.<case>.<param>" for a
			* parameter's (KTAP names are sanitized to
			* [A-Za-z0-9_+:=,-], '.' in the parameter; a name
			* printed twice is one result, the worse status);
			* "kernel-log" for a kernel problem that no
			* console test of the set reported */
	enum test_status status;
	char *detail;  /* why, for humans, a few KB at most; "" on a pass */
	char *excerpt; /* the console lines around the failure, or NULL */
	int not_run;   /* a guest test that never began because the guest
			* stopped or was killed first: a later boot may run
			* it (runner_boot() does, after a stop) */
};

struct console_report {
	struct test_result *results; /* declared tests in file order, each
				      * ktap test followed by its cases */
	size_t nresults;
	int userspace;        /* "@@stableq userspace" seen */
	int done;             /* "@@stableq done" seen */
	int killed;           /* the host killed the guest at its deadline */
	char *kernel_release; /* from "@@stableq kernel X", or NULL */
	char *problem;        /* the first panic/Oops/BUG/WARNING/KASAN line,
			       * or NULL */
	char *stopped_in;     /* the guest stopped by itself (a panic: not
			       * killed, no "done") during this guest test,
			       * or NULL */
	int stopped_in_kunit; /* ... or before userspace, during built-in
			       * KUnit */
	enum run_verdict verdict;
	char *reason;         /* one line: why not pass; "" on pass */
};

/*
 * Worse ranks higher (hang, fail, pass, skip): where one name has two
 * results, the worse stands, so a repeat can add a failure, never hide one.
 */
int test_status_rank(enum test_status s);

/* How much of a guest test's output its detail keeps (head and tail). */
#define CONSOLE_DETAIL_MAX 4096

/*
 * Parses the console text log[0..len) against the test set tests[0..n)
 * (borrowed). killed: the host killed QEMU at its deadline (a hang).
 *
 * Rules: a boot test passes iff userspace was reached; a console test fails
 * on the first line holding one of its fail_on substrings (its detail quotes
 * the line); a guest test passes iff its end marker says status 0 (no end:
 * "did not finish", hang if the guest was killed; a guest timeout: hang); a
 * ktap test fails if there is no KTAP or any case or suite is "not ok", and
 * each case becomes a result of its own. A panic, Oops, BUG, WARNING, KASAN
 * or UBSAN report anywhere fails the run even if no console test covers it
 * (a "kernel-log" result is added then). The verdict is hang if the guest
 * was killed before "@@stableq done", fail if a test failed, a kernel
 * problem showed or "done" is missing, pass otherwise.
 *
 * Returns 0 (rep filled; console_report_release() it) or ERR_INVALID for
 * a NULL argument.
 */
int console_parse(const char *log, size_t len, const struct test_def *tests,
		  size_t n, int killed, struct console_report *rep);
/*
 * The same, reading only markers that end with " TOKEN" (the runner's
 * random token, which /init reads from /etc/stableq/token and deletes before
 * the first test): "@@stableq end user-copy 0 TOKEN". A test's output or a
 * kernel message cannot print another test's marker then. token NULL or "":
 * every marker counts (consoles of guests without a token file).
 */
int console_parse_marked(const char *log, size_t len,
			 const struct test_def *tests, size_t n, int killed,
			 const char *token, struct console_report *rep);
/* The same from a file (at most 64 MiB, the tail kept); token as above. */
int console_parse_file(const char *path, const struct test_def *tests,
		       size_t n, int killed, const char *token,
		       struct console_report *rep);
void console_report_release(struct console_report *rep);
/*
 * Appends a result found on the host (a kselftest target that does not
 * build); a failure turns a pass verdict into fail, naming it.
 */
void console_report_add(struct console_report *rep, const char *name,
			enum test_status status, const char *detail);

/* "pass", "fail", "skip", "hang". */
const char *test_status_name(enum test_status s);
/* "pass", "fail", "hang". */
const char *run_verdict_name(enum run_verdict v);

#endif
