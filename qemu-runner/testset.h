/* testset.h: the regression test set, parsed from config/tests.conf. */
#ifndef STABLEQ_TESTSET_H
#define STABLEQ_TESTSET_H

#include <stddef.h>

/*
 * config/tests.conf holds one "[test NAME]" section per test with
 * "key = value" lines (keys: kind, command, timeout, fail_on, modules,
 * targets, description). Lines starting with '#' (after blanks) are comments; a value
 * is the rest of the line, so '#' inside a command or a description is data.
 * Only kind, timeout and modules, whose values never hold '#', may end with
 * a " # comment".
 *
 * A test name is 1-64 of [A-Za-z0-9._-]: it travels through the guest's
 * tab-separated test list and the console markers.
 */
enum test_kind {
	TEST_BOOT,    /* host side: the console shows "@@stableq userspace" */
	TEST_CONSOLE, /* host side: no fail_on substring on the console */
	TEST_GUEST,   /* run by the guest's /init; pass iff exit status 0 */
	TEST_KTAP,    /* host side: KUnit's KTAP at boot, each case recorded */
	TEST_KSELFTEST, /* kselftest targets of the candidate's own tree: the
			 * runner turns each of their tests into a guest test
			 * (qemu-runner/kselftest.h) */
};

#define TESTSET_DEFAULT_TIMEOUT 60 /* seconds, guest tests */
/* fail_on of a console test that gives none. */
#define TESTSET_DEFAULT_FAIL_ON                                                \
	"Oops|BUG:|kernel BUG|WARNING:|KASAN|UBSAN:|Kernel panic|Call Trace|" \
	"general protection fault"

#define TESTSET_MAX_TIMEOUT 3600

/* Everything is owned by the test_def and freed by testset_free(). */
struct test_def {
	char *name;
	enum test_kind kind;
	char *command;      /* TEST_GUEST: one line of shell */
	int timeout;        /* TEST_GUEST: seconds, 1..TESTSET_MAX_TIMEOUT */
	char **fail_on;     /* TEST_CONSOLE: literal substrings, never empty */
	size_t nfail_on;
	char **modules;     /* TEST_GUEST: .ko paths, relative to the build */
	size_t nmodules;
	char **targets;     /* TEST_KSELFTEST: target directories of
			     * tools/testing/selftests, [a-z0-9_-] */
	size_t ntargets;
	int kselftest;      /* a guest test made from a kselftest: exit
			     * status 4 (KSFT_SKIP) is a skip, its TAP
			     * lines are results of their own */
	char *description;  /* may be NULL */
	char *guest_config; /* NULL: every guest; else only a branch whose
			     * guest_config is this ("broad": the release
			     * set that only the broad guest can run) */
	int line;           /* where its [test] header is */
};

/*
 * Reads the test set at path into a new array *out of *n tests, in file
 * order. Returns 0, or ERR_NOTFOUND/ERR_IO if the file cannot be read, or
 * ERR_INVALID with an err_msg() "path:line: ..." for: a line outside a
 * section, a bad section header or test name, an unknown key, a key given
 * twice, an unknown kind, a section without kind, a key that does not apply
 * to the kind, a guest test without command, a command holding a tab, a bad
 * timeout, a module path that leaves the build dir, a duplicate test name,
 * a kselftest section without targets, a bad target name or a target given
 * twice, a file without tests. On error *out is NULL and *n is 0.
 */
int testset_load(const char *path, struct test_def **out, size_t *n);
/* The same from memory; origin names the input in messages. */
int testset_parse(const char *buf, size_t len, const char *origin,
		  struct test_def **out, size_t *n);
/* Frees the array and what it holds; NULL is fine. */
void testset_free(struct test_def *tests, size_t n);

/*
 * Keeps, in place, the host-side tests (boot, console, ktap: they cost no
 * guest time) and the guest tests named in only[0..nonly) (or one of whose
 * results is: "kselftest.T.P.SUB" keeps kselftest.T.P); the others are
 * freed. *n is the new count. A name that is no test is ignored.
 */
void testset_select(struct test_def *tests, size_t *n,
		    const char *const *only, size_t nonly);

/*
 * Appends a guest test to *tests (reallocated), named name, its command and
 * timeout copied. Returns the new test (borrowed from *tests).
 */
struct test_def *testset_add_guest(struct test_def **tests, size_t *n,
				   const char *name, const char *command,
				   int timeout);
/*
 * Keeps, in place, the tests meant for guest configuration guest (quick,
 * broad): those without a guest_config key and those whose key names it;
 * the others are freed. *n is the new count. NULL keeps every test.
 */
void testset_for_guest(struct test_def *tests, size_t *n, const char *guest);
/* Removes tests[i] (freed), keeping the order. */
void testset_remove(struct test_def *tests, size_t *n, size_t i);

/* "boot", "console", "guest", "ktap", "kselftest". */
const char *test_kind_name(enum test_kind kind);
/* The test called name, or NULL. Borrowed from tests. */
const struct test_def *testset_find(const struct test_def *tests, size_t n,
				    const char *name);

#endif
