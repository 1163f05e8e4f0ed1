/* t-verdict-retry.c: what a retry boots: the failing tests alone, and only their results count. */
#include "err.h"
#include "file.h"
#include "runner.h"
#include "strbuf.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const set =
	"[test boot]\nkind = boot\n"
	"[test dmesg-clean]\nkind = console\n"
	"[test kunit]\nkind = ktap\n"
	"[test user-copy]\nkind = guest\ncommand = insmod /x.ko\n"
	"[test badptr]\nkind = guest\ncommand = /bin/badptr\n"
	"[test broad-only]\nkind = guest\ncommand = true\n"
	"guest_config = broad\n"
	"[test kselftest]\nkind = kselftest\ntargets = x86 timers\n"
	"guest_config = broad\n";

static char *dir, *tests;

/* What the broad guest's kselftests built: x86 (two tests) and timers. */
static struct kselftest_test x86_tests[] = {
	{ "sysret_ss_attrs_64", NULL }, { "ldt_gdt_64", NULL } };
static struct kselftest_test timer_tests[] = { { "posix_timers", NULL } };
static struct kselftest_target targets[] = {
	{ "x86", 45, 1, NULL, x86_tests, 2 },
	{ "timers", 10, 1, NULL, timer_tests, 1 },
};
static struct kselftest_build ksft = { .targets = targets, .ntargets = 2 };

static int plan_of(const char *const *failing, size_t n,
		   struct runner_retry *p, const char *append,
		   const char *guest)
{
	struct runner_opts o = {
		.tests_file = tests,
		.guest_config = guest ? guest : "quick",
		.append = append,
		.kselftests = &ksft,
	};

	return runner_retry_plan(&o, failing, n, p);
}

static char *joined(const struct strvec *v)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < v->nr; i++)
		len += strlen(v->v[i]) + 1;
	s = calloc(1, len);
	for (size_t i = 0; i < v->nr; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, v->v[i]);
	}
	return s;
}

static void check(const struct strvec *v, const char *want, const char *what)
{
	char *got = joined(v);

	is_str(got, want, "%s", what);
	free(got);
}

static void test_guest_alone(void)
{
	const char *failing[] = { "user-copy", "dmesg-clean", "kernel-log",
				  "boot" };
	struct runner_retry p;

	is_int(plan_of(failing, 4, &p, NULL, NULL), 0, "a plan");
	check(&p.only, "user-copy", "a failing guest test boots by itself");
	check(&p.retried, "user-copy", "... it is what the retry retries");
	check(&p.skipped, "dmesg-clean kernel-log boot",
	      "boot, console tests and kernel-log are not retried alone");
	is_str(p.append, "kunit.filter_glob=stableq-resume stableq.resume",
	       "no KUnit name: built-in KUnit is off in the retry boot");
	ok(runner_retry_covers(&p, "user-copy"), "its result counts");
	ok(!runner_retry_covers(&p, "badptr"),
	   "a test the retry did not run is no result of it");
	ok(!runner_retry_covers(&p, "dmesg-clean"),
	   "... nor a console test of that partial boot");
	ok(!runner_retry_covers(&p, "user-copy-2"),
	   "... nor a name that only starts the same");
	char *text = runner_retry_text(&p);
	is_str(text, "user-copy", "the progress line names it");
	free(text);
	runner_retry_release(&p);
}

static void test_kunit(void)
{
	const char *one[] = { "kunit", "kunit.list.list_test_splice" };
	const char *two[] = { "kunit.drm_mm.drm_test_mm_frag",
			      "kunit.drm_buddy.drm_test_buddy_alloc",
			      "badptr" };
	const char *apart[] = { "kunit.list.x", "kunit.overflow.y" };
	struct runner_retry p;

	plan_of(one, 2, &p, NULL, NULL);
	check(&p.suites, "list", "a failing KUnit case: its suite");
	check(&p.ktap, "kunit", "the ktap test is retried with it");
	is_str(p.append, "kunit.filter_glob=list",
	       "the suite alone, through kunit.filter_glob");
	ok(p.only.nr == 0 && p.only.v != NULL,
	   "no guest test boots (an empty list, not the whole set)");
	ok(runner_retry_covers(&p, "kunit.list.list_test_splice") &&
		   runner_retry_covers(&p, "kunit.list.list_test_sort") &&
		   runner_retry_covers(&p, "kunit.list") &&
		   runner_retry_covers(&p, "kunit"),
	   "the suite's cases, the suite and the ktap test count");
	ok(!runner_retry_covers(&p, "kunit.list_sort.a") &&
		   !runner_retry_covers(&p, "kunit.hash.b"),
	   "another suite does not (even one whose name starts the same)");
	runner_retry_release(&p);

	plan_of(two, 3, &p, "quiet", NULL);
	check(&p.suites, "drm_mm drm_buddy", "two suites");
	is_str(p.append, "quiet kunit.filter_glob=drm_*",
	       "... through the glob of their common prefix, after the"
	       " candidate's own parameters");
	check(&p.only, "badptr", "... with the failing guest test");
	ok(!runner_retry_covers(&p, "kunit.drm_format.a"),
	   "a suite the glob ran but nothing failed in is not recorded");
	runner_retry_release(&p);

	plan_of(apart, 2, &p, NULL, NULL);
	ok(p.append == NULL,
	   "suites with nothing in common: all of built-in KUnit runs");
	runner_retry_release(&p);
}

static void test_kselftest_and_guest_config(void)
{
	const char *failing[] = { "broad-only" };
	struct runner_retry p;

	plan_of(failing, 1, &p, NULL, "quick");
	check(&p.skipped, "broad-only",
	      "a test of another guest's set is not retried here");
	runner_retry_release(&p);
	plan_of(failing, 1, &p, NULL, "broad");
	check(&p.only, "broad-only", "... and is on its own guest");
	runner_retry_release(&p);

	/* a kselftest result names its test: kselftest.T.P(.SUB) */
	const char *ks[] = { "kselftest.x86.sysret_ss_attrs_64",
			     "kselftest.timers.posix_timers.check_itimer",
			     "kselftest.x86", "kselftest.nope.x" };
	plan_of(ks, 4, &p, NULL, "broad");
	check(&p.only, "kselftest.x86.sysret_ss_attrs_64"
		       " kselftest.timers.posix_timers",
	      "a kselftest runs again by target and test name (a TAP line of"
	      " it: its test)");
	check(&p.skipped, "kselftest.x86 kselftest.nope.x",
	      "a target's build result, or a test not built, is not retried");
	ok(runner_retry_covers(&p, "kselftest.timers.posix_timers") &&
		   runner_retry_covers(
			   &p, "kselftest.timers.posix_timers.check_itimer") &&
		   !runner_retry_covers(&p, "kselftest.x86.ldt_gdt_64"),
	   "the retried tests' results count, another test's of the target"
	   " does not");
	runner_retry_release(&p);
}

static void test_bad_set(void)
{
	struct runner_opts o = { .tests_file = "/nonexistent/tests.conf" };
	struct runner_retry p;
	const char *failing[] = { "x" };

	ok(runner_retry_plan(&o, failing, 1, &p) < 0,
	   "a test set that cannot be read: an error");
	runner_retry_release(&p);
}

int main(void)
{
	char tmpl[] = "/tmp/t-verdict-retry.XXXXXX";

	if (!(dir = mkdtemp(tmpl)))
		return 1;
	tests = xstrfmt("%s/tests.conf", dir);
	if (write_file_atomic(tests, set, strlen(set)) < 0)
		return 1;
	test_guest_alone();
	test_kunit();
	test_kselftest_and_guest_config();
	test_bad_set();
	free(tests);
	rm_rf(dir);
	return done_testing();
}
