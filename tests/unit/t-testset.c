/* t-testset.c: the config/tests.conf parser, its defaults and every error. */
#include "err.h"
#include "strbuf.h"
#include "tap.h"
#include "testset.h"

#include <stdlib.h>
#include <unistd.h>

static int parse(const char *text, struct test_def **t, size_t *n)
{
	return testset_parse(text, strlen(text), "tests.conf", t, n);
}

/* The input must fail with ERR_INVALID and a message holding want. */
static void bad(const char *text, const char *want, const char *what)
{
	struct test_def *t = (struct test_def *)1;
	size_t n = 99;
	int ret = parse(text, &t, &n);

	is_int(ret, ERR_INVALID, "%s: rejected", what);
	like(err_msg(), want, "%s: message", what);
	ok(t == NULL && n == 0, "%s: nothing returned", what);
}

static void test_shipped_set(void)
{
	struct test_def *t;
	size_t n, guest = 0;
	int ret = testset_load("config/tests.conf", &t, &n);

	is_int(ret, 0, "config/tests.conf loads: %s", ret ? err_msg() : "");
	ok(n >= 6, "config/tests.conf: at least six tests (%zu)", n);
	ok(testset_find(t, n, "boot") &&
		   testset_find(t, n, "boot")->kind == TEST_BOOT,
	   "a boot test");
	ok(testset_find(t, n, "user-copy") &&
		   testset_find(t, n, "user-copy")->kind == TEST_GUEST,
	   "the user-copy guest test");
	for (size_t i = 0; i < n; i++)
		if (t[i].kind == TEST_GUEST) {
			guest++;
			ok(t[i].command && *t[i].command && t[i].timeout > 0,
			   "guest test %s has a command and a timeout",
			   t[i].name);
		}
	ok(guest >= 3, "several guest tests (%zu)", guest);
	testset_free(t, n);
}

static void test_good(void)
{
	const char *text =
		"# a comment\n"
		"\n"
		"[test boot]\n"
		"kind = boot            # host side: the userspace marker\n"
		"  description = boots\r\n"
		"[test log]\n"
		"kind=console\n"
		"[test custom]\n"
		"kind = console\n"
		"fail_on = Oops| BUG: |\n"
		"[ test user-copy ]\n"
		"kind = guest\n"
		"command = insmod /lib/modules/test_user_copy.ko # '#' is "
		"data\n"
		"modules = lib/test_user_copy.ko  lib/x/test_module.ko # both\n"
		"[test t2]\n"
		"kind = guest\n"
		"command = echo $# ${#x}\n"
		"modules = lib/test_user_copy.ko\n"
		"timeout = 7 # seconds\n"
		"[test kunit]\n"
		"kind = ktap\n";
	struct test_def *t;
	size_t n;
	int ret = parse(text, &t, &n);

	is_int(ret, 0, "a good set parses: %s", ret ? err_msg() : "");
	if (ret)
		return;
	is_int(n, 6, "six tests");
	is_str(t[0].name, "boot", "first name");
	is_int(t[0].kind, TEST_BOOT, "kind with a trailing comment");
	is_str(t[0].description, "boots", "description, CR stripped");
	is_int(t[0].line, 3, "line of the header");
	is_int(t[1].kind, TEST_CONSOLE, "kind=console without blanks");
	ok(t[1].nfail_on >= 5,
	   "a console test without fail_on gets the "
	   "default list (%zu)",
	   t[1].nfail_on);
	is_int(t[2].nfail_on, 2, "fail_on split on '|', empties dropped");
	is_str(t[2].fail_on[1], " BUG: ", "fail_on keeps inner blanks");
	is_str(t[3].name, "user-copy", "blanks inside the brackets");
	is_str(t[3].command,
	       "insmod /lib/modules/test_user_copy.ko # '#' is data",
	       "a command keeps '#'");
	is_int(t[3].timeout, TESTSET_DEFAULT_TIMEOUT, "default timeout");
	is_int(t[3].nmodules, 2, "two modules");
	is_str(t[3].modules[1], "lib/x/test_module.ko", "module path");
	is_str(t[4].command, "echo $# ${#x}", "shell '#' kept");
	is_int(t[4].timeout, 7, "timeout with a comment");
	is_int(t[5].kind, TEST_KTAP, "ktap");
	is_str(test_kind_name(t[5].kind), "ktap", "kind name");
	ok(testset_find(t, n, "nope") == NULL, "find: absent name");
	testset_free(t, n);
}

static void test_errors(void)
{
	bad("[test a]\nkind = boot\ncolour = red\n",
	    "tests.conf:3: unknown key 'colour'", "unknown key");
	bad("[test a]\nkind = bogus\n",
	    "tests.conf:2: test a: unknown kind "
	    "'bogus'",
	    "unknown kind");
	bad("[test a]\nkind = guest\ntimeout = 5\n",
	    "tests.conf:1: test a: guest test without command",
	    "guest test without command");
	bad("[test a]\nkind = boot\n\n[test a]\nkind = boot\n",
	    "tests.conf:4: test a defined twice (first at line 1)",
	    "duplicate name");
	bad("[test a]\nkind = guest\ncommand = true\ntimeout = 0\n",
	    "tests.conf:4: test a: timeout must be", "timeout 0");
	bad("[test a]\nkind = guest\ncommand = true\ntimeout = 1m\n",
	    "tests.conf:4: test a: timeout must be", "timeout 1m");
	bad("[test a]\nkind = guest\ncommand = true\ntimeout = -5\n",
	    "tests.conf:4:", "negative timeout");
	bad("[test a]\nkind = guest\ncommand = true\ntimeout = 99999999999\n",
	    "tests.conf:4:", "huge timeout");
	bad("kind = boot\n", "tests.conf:1: 'kind = boot' outside a [test",
	    "key outside a section");
	bad("[suite a]\nkind = boot\n", "tests.conf:1: unknown section",
	    "unknown section");
	bad("[test a\nkind = boot\n",
	    "tests.conf:1: section header without "
	    "closing",
	    "unclosed header");
	bad("[test a b]\nkind = boot\n", "tests.conf:1: bad test name 'a b'",
	    "name with a blank");
	bad("[test ]\nkind = boot\n", "tests.conf:1:", "empty name");
	bad("[test a]\nkind = boot\nkind = boot\n",
	    "tests.conf:3: test a: 'kind' given twice", "key twice");
	bad("[test a]\nkind = boot\ncommand = true\n",
	    "tests.conf:1: test a: 'command' does not apply to kind boot",
	    "command on a boot test");
	bad("[test a]\nkind = guest\ncommand = true\nfail_on = x\n",
	    "'fail_on' does not apply to kind guest", "fail_on on guest");
	bad("[test a]\ndescription = x\n", "tests.conf:1: test a: no kind",
	    "no kind");
	bad("[test a]\nkind = guest\ncommand = a\tb\n",
	    "tests.conf:3: test a: command holds a tab", "tab in command");
	bad("[test a]\nkind = guest\ncommand = true\nmodules = ../x.ko\n",
	    "tests.conf:4: test a: module '../x.ko'",
	    "module leaves the "
	    "build dir");
	bad("[test a]\nkind = guest\ncommand = true\nmodules = /lib/x.ko\n",
	    "module '/lib/x.ko'", "absolute module");
	bad("[test a]\nkind = guest\ncommand = true\nmodules = lib/x.o\n",
	    "module 'lib/x.o'", "not a .ko");
	bad("[test a]\nkind = guest\ncommand = true\nmodules = lib/x.ko\n"
	    "[test b]\nkind = guest\ncommand = true\nmodules = drivers/x.ko\n",
	    "tests.conf:8: test b: module 'drivers/x.ko' has the same name",
	    "two modules with one guest name");
	bad("[test a]\nkind = guest\ncommand = true\nmodules = lib/x.ko\n"
	    "guest_config = broad\n[test b]\nkind = guest\ncommand = true\n"
	    "modules = drivers/x.ko\n",
	    "tests.conf:9: test b: module 'drivers/x.ko' has the same name in "
	    "the guest as 'lib/x.ko' (test a)",
	    "a section of no guest_config shares the broad guest's modules");
	bad("[test a]\nkind = guest\ncommand = true\nmodules = lib/x.ko "
	    "drivers/x.ko\n",
	    "tests.conf:4: test a: module 'drivers/x.ko' has the same name in "
	    "the guest as 'lib/x.ko'",
	    "two modules of one name in one section");
	{
		/* the quick and the broad guest never run together: each
		 * may have a module of the name (guest_config after the
		 * modules, too) */
		const char *two = "[test a]\nkind = guest\ncommand = true\n"
				  "modules = lib/x.ko\nguest_config = broad\n"
				  "[test b]\nkind = guest\ncommand = true\n"
				  "modules = drivers/x.ko\n"
				  "guest_config = quick\n";
		struct test_def *t2 = NULL;
		size_t n2 = 0;
		int r2 = parse(two, &t2, &n2);
		is_int(r2, 0, "one module name in the quick and the broad "
			      "guest's sections: %s",
		       r2 ? err_msg() : "parses");
		testset_free(t2, n2);
	}
	bad("[test a]\nkind = guest\ncommand =\n",
	    "tests.conf:3: test a: "
	    "empty command",
	    "empty command");
	bad("[test a]\nkind = console\nfail_on = ||\n",
	    "fail_on lists no substring", "empty fail_on");
	bad("[test a]\nkind\n", "tests.conf:2: expected 'key = value'",
	    "no '='");
	bad("# nothing\n\n", "tests.conf:2: no [test NAME] section",
	    "empty set");
	bad("", "no [test NAME] section", "empty file");
	{
		static const char nul[] = "[test a]\nkind = boot\n"
					  "description = a\0b\n";
		struct test_def *t;
		size_t n;
		is_int(testset_parse(nul, sizeof(nul) - 1, "tests.conf", &t,
				     &n),
		       ERR_INVALID, "NUL byte: rejected");
		like(err_msg(), "tests.conf:3: NUL byte", "NUL byte: message");
	}
	{
		/* a line past the limit */
		size_t len = 9000;
		char *big = malloc(len + 32);
		strcpy(big, "[test a]\ndescription = ");
		memset(big + strlen(big), 'x', len);
		strcpy(big + 23 + len, "\n");
		bad(big, "tests.conf:2: line longer than", "overlong line");
		free(big);
	}
	/* an error on the last line of a file without a final newline */
	bad("[test a]\nkind = boot\nnope = 1", "tests.conf:3: unknown key",
	    "no final newline");
}

static void test_load_errors(void)
{
	struct test_def *t;
	size_t n;
	char path[] = "/tmp/t-testset-XXXXXX";
	int fd = mkstemp(path);
	const char text[] = "[test a]\nkind = boot\n[test b]\nkind = nope\n";

	is_int(testset_load("/nonexistent/tests.conf", &t, &n), ERR_NOTFOUND,
	       "missing file: not found");
	like(err_msg(), "/nonexistent/tests.conf", "the message names it");
	ok(fd >= 0 && write(fd, text, sizeof(text) - 1) ==
			      (ssize_t)(sizeof(text) - 1),
	   "temp file written");
	close(fd);
	is_int(testset_load(path, &t, &n), ERR_INVALID, "bad file rejected");
	char *want = xstrfmt("%s:4: test b: unknown kind 'nope'", path);
	like(err_msg(), want, "the message is file:line");
	free(want);
	unlink(path);
	testset_free(NULL, 0);
	ok(1, "testset_free(NULL) is fine");
}

/* A bisection step's part of the set: host-side tests, the named guest tests. */
static void test_select(void)
{
	static const char conf[] = "[test boot]\nkind = boot\n"
				   "[test a]\nkind = guest\ncommand = true\n"
				   "[test k]\nkind = ktap\n"
				   "[test b]\nkind = guest\ncommand = false\n"
				   "[test c]\nkind = guest\ncommand = x\n";
	const char *only[] = {"c", "kunit.s.x", "nosuch"};
	struct test_def *t = NULL;
	size_t n = 0;

	is_int(testset_parse(conf, sizeof(conf) - 1, "sel", &t, &n), 0,
	       "a set of five");
	testset_select(t, &n, only, 3);
	is_int((long)n, 3, "three kept");
	is_str(n > 2 ? t[0].name : "", "boot", "the boot test");
	is_str(n > 2 ? t[1].name : "", "k", "the ktap test");
	is_str(n > 2 ? t[2].name : "", "c", "the named guest test, in order");
	testset_select(t, &n, NULL, 0);
	is_int((long)n, 2, "nothing named: the host-side tests only");
	testset_free(t, n);
}

/* Sections for one guest configuration: the release set of the broad guest. */
static void test_for_guest(void)
{
	static const char conf[] = "[test boot]\nkind = boot\n"
				   "[test ks]\nkind = kselftest\n"
				   "targets = futex\nguest_config = broad\n"
				   "[test q]\nkind = guest\ncommand = true\n"
				   "guest_config = quick  # only there\n"
				   "[test k]\nkind = ktap\n";
	struct test_def *t = NULL;
	size_t n = 0;

	is_int(testset_parse(conf, sizeof(conf) - 1, "g", &t, &n), 0,
	       "guest_config parses");
	is_str(n > 2 ? t[1].guest_config : "", "broad", "... broad kept");
	is_str(n > 2 ? t[2].guest_config : "", "quick", "... comment cut");
	testset_for_guest(t, &n, NULL);
	is_int((long)n, 4, "no guest named: every test");
	testset_for_guest(t, &n, "quick");
	is_int((long)n, 3, "quick guest: the broad section left out");
	is_str(n > 2 ? t[1].name : "", "q", "... the quick section kept");
	testset_for_guest(t, &n, "broad");
	is_int((long)n, 2, "then broad: the quick one left out too");
	testset_free(t, n);
	bad("[test a]\nkind = boot\nguest_config = huge\n",
	    "tests.conf:3: test a: guest_config must be quick or broad, not "
	    "'huge'",
	    "unknown guest_config");
}

int main(void)
{
	test_shipped_set();
	test_good();
	test_errors();
	test_load_errors();
	test_select();
	test_for_guest();
	return done_testing();
}
