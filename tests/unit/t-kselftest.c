/* t-kselftest.c: kselftest sections, their build and cache (real make on a small tree), guest tests, TAP results, ELF needs. */
#include "console.h"
#include "err.h"
#include "file.h"
#include "kselftest.h"
#include "sandbox.h"
#include "strbuf.h"
#include "tap.h"
#include "tconsole.h"
#include "testset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_parse(void)
{
	struct test_def *t = NULL;
	size_t n = 0;
	const char *good = "[test ks]\nkind = kselftest\n"
			   "targets = timers size  # two\ntimeout = 30\n"
			   "[test ks2]\nkind = kselftest\ntargets = futex\n";
	static const struct {
		const char *conf, *msg;
	} bad[] = {
		{"[test k]\nkind = kselftest\n", "kselftest without targets"},
		{"[test k]\nkind = kselftest\ntargets = ../net\n",
		 "bad kselftest target '../net'"},
		{"[test k]\nkind = kselftest\ntargets = a b a\n",
		 "kselftest target 'a' given twice"},
		{"[test k]\nkind = kselftest\ntargets = a\n[test l]\nkind = "
		 "kselftest\ntargets = b a\n",
		 "kselftest target 'a' given twice"},
		{"[test k]\nkind = kselftest\ntargets = a\nguest_config = "
		 "broad\n[test l]\nkind = kselftest\ntargets = a\n",
		 "test l: kselftest target 'a' given twice (also in test k)"},
		{"[test k]\nkind = kselftest\ntargets = a\nguest_config = "
		 "broad\n[test l]\nkind = kselftest\ntargets = a\n"
		 "guest_config = broad\n",
		 "c:7: test l: kselftest target 'a' given twice (also in test k)"},
		{"[test k]\nkind = kselftest\ntargets = a\ncommand = x\n",
		 "'command' does not apply to kind kselftest"},
		{"[test k]\nkind = guest\ncommand = x\ntargets = a\n",
		 "'targets' does not apply to kind guest"},
		{"[test k]\nkind = kselftest\ntargets = A\n",
		 "bad kselftest target 'A'"},
	};

	is_int(testset_parse(good, strlen(good), "c", &t, &n), 0,
	       "a kselftest section parses");
	is_int((long)n, 2, "two sections");
	is_str(test_kind_name(t[0].kind), "kselftest", "its kind");
	is_int((long)t[0].ntargets, 2, "two targets, the comment dropped");
	is_str(t[0].targets[1], "size", "in order");
	is_int(t[0].timeout, 30, "a timeout per test");
	is_int(t[1].timeout, TESTSET_DEFAULT_TIMEOUT, "the default timeout");
	testset_free(t, n);
	/* the quick and the broad guest never run together: a target may be
	 * in a section of each (guest_config after the targets, too) */
	const char *guests = "[test k]\nkind = kselftest\ntargets = a b\n"
			     "guest_config = broad\n[test l]\nkind = "
			     "kselftest\ntargets = a\nguest_config = quick\n";
	is_int(testset_parse(guests, strlen(guests), "c", &t, &n), 0,
	       "a target in a broad and a quick section parses");
	is_int((long)n, 2, "... two sections");
	testset_free(t, n);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = testset_parse(bad[i].conf, strlen(bad[i].conf), "c",
					&t, &n);
		is_int(ret, ERR_INVALID, "bad section %zu is refused", i);
		like(err_msg(), bad[i].msg, "... saying %s", bad[i].msg);
		ok(t == NULL && n == 0, "... and gives nothing");
	}
}

/* A build as kselftest_prepare() leaves it, made by hand. */
static void fake_build(struct kselftest_build *b)
{
	memset(b, 0, sizeof(*b));
	b->ntargets = 2;
	b->targets = xcalloc(2, sizeof(*b->targets));
	b->targets[0].name = xstrdup("timers");
	b->targets[0].built = 1;
	b->targets[0].ntests = 3;
	b->targets[0].tests = xcalloc(3, sizeof(*b->targets[0].tests));
	b->targets[0].tests[0].name = xstrdup("posix_timers");
	b->targets[0].tests[1].name = xstrdup("set-timer.lat");
	b->targets[0].tests[2].name = xstrdup("check.py");
	b->targets[0].tests[2].why =
		xstrdup("a python3 script: the guest has no python3");
	b->targets[1].name = xstrdup("bad");
	b->targets[1].error = xstrdup("bad.c:3:1: error: expected ';'");
}

static void test_expand_and_console(void)
{
	const char *conf = "[test boot]\nkind = boot\n"
			   "[test other]\nkind = guest\ncommand = true\n"
			   "[test ks]\nkind = kselftest\n"
			   "targets = timers bad missing\ntimeout = 20\n";
	struct test_def *t = NULL;
	size_t n = 0;
	struct kselftest_build b;
	struct kselftest_result *kr = NULL;
	struct console_report rep;
	size_t nkr;

	fake_build(&b);
	is_int(testset_parse(conf, strlen(conf), "c", &t, &n), 0, "parses");
	nkr = kselftest_results(t, n, &b, NULL, 0, &kr);
	is_int((long)nkr, 3, "a result per target");
	is_str(kr[0].name, "kselftest.timers", "named kselftest.TARGET");
	is_int(kr[0].built, 1, "timers built");
	like(kr[0].detail, "built: 3 tests", "... with its tests");
	is_int(kr[1].built, 0, "bad did not");
	like(kr[1].detail, "does not build:\nbad.c:3:1: error: expected ';'",
	     "... carrying its compiler error");
	is_int(kr[2].built, -1, "a target not in the build is not built here");
	kselftest_results_free(kr, nkr);
	const char *only[] = {"kselftest.bad", "kselftest.timers.posix_timers"};
	nkr = kselftest_results(t, n, &b, only, 2, &kr);
	is_int((long)nkr, 1, "a step's only list keeps the targets it names");
	kselftest_results_free(kr, nkr);

	kselftest_expand(&t, &n, &b);
	is_int((long)n, 5, "the section becomes a guest test per test");
	ok(testset_find(t, n, "ks") == NULL, "the section itself goes");
	const struct test_def *p = testset_find(t, n,
						"kselftest.timers.posix_timers");
	ok(p && p->kind == TEST_GUEST && p->kselftest && p->timeout == 20,
	   "a guest test with the section's timeout");
	is_str(p ? p->command : "", "cd /kselftest/timers && ./posix_timers",
	       "run from its directory");
	p = testset_find(t, n, "kselftest.timers.set-timer_lat");
	ok(p != NULL, "a dot in a program's name is no name separator");
	is_str(p ? p->command : "", "cd /kselftest/timers && ./set-timer.lat",
	       "... the program keeps its name");
	p = testset_find(t, n, "kselftest.timers.check_py");
	like(p ? p->command : "", "exit 4",
	     "a script the guest cannot run skips");

	/* the console: TAP subtests, a skip, a hang, forging */
	const char *log =
		"@@stableq userspace K\n"
		"@@stableq begin other K\n@@stableq end other 0 K\n"
		"@@stableq begin kselftest.timers.posix_timers K\n"
		"TAP version 13\n1..4\n"
		"# Testing posix timers\n"
		"ok 1 Check itimer virtual\n"
		"# clock_gettime went backwards\n"
		"not ok 2 Check itimer prof\n"
		"ok 2 Check itimer prof\n"
		"ok 3 timer_create # SKIP no CLOCK_TAI\n"
		"[    1.234567] ok 4 a kernel line\n"
		"    ok 5 indented: not this test's\n"
		"@@stableq end kselftest.timers.check_py 0 K\n"
		"@@stableq end kselftest.timers.posix_timers 1 K\n"
		"@@stableq begin kselftest.timers.set-timer_lat K\n"
		"ok 1 hi\n"
		"@@stableq timeout kselftest.timers.set-timer_lat 20 K\n"
		"@@stableq end kselftest.timers.set-timer_lat 137 K\n"
		"@@stableq begin kselftest.timers.check_py K\n"
		"not run: a python3 script: the guest has no python3\n"
		"ok 1 ../../kselftest.timers.posix_timers\n"
		"@@stableq end kselftest.timers.check_py 4 K\n"
		"@@stableq done K\n";
	is_int(console_parse_marked(log, strlen(log), t, n, 0, "K", &rep), 0,
	       "a kselftest console parses");
	static const struct {
		const char *name, *status, *why;
	} want[] = {
		{"kselftest.timers.posix_timers", "fail",
		 "a test's exit status is its result"},
		{"kselftest.timers.posix_timers.Check_itimer_virtual", "pass",
		 "each TAP line a result of its own"},
		{"kselftest.timers.posix_timers.Check_itimer_prof", "fail",
		 "a later 'ok' does not hide a failure"},
		{"kselftest.timers.posix_timers.timer_create", "skip",
		 "# SKIP is a skip"},
		{"kselftest.timers.posix_timers.a_kernel_line", "(absent)",
		 "a kernel message is no result"},
		{"kselftest.timers.posix_timers.indented__not_this_test_s",
		 "(absent)", "nor is an indented line (a nested runner's)"},
		{"kselftest.timers.set-timer_lat", "hang",
		 "a test killed at its timeout is a hang, named"},
		{"kselftest.timers.set-timer_lat.hi", "pass",
		 "what it printed before still counts"},
		{"kselftest.timers.check_py", "skip",
		 "exit status 4 (KSFT_SKIP) is a skip, and the next test ran"},
		{"kselftest.timers.check_py.______kselftest_timers_posix_timers",
		 "pass", "a test's TAP names stay under its own name"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		is_str(status_of(&rep, want[i].name), want[i].status, "%s",
		       want[i].why);
	is_str(detail_of(&rep, "kselftest.timers.posix_timers.timer_create"),
	       "no CLOCK_TAI", "a skip says why");
	like(detail_of(&rep, "kselftest.timers.check_py"),
	     "the guest has no python3", "so does a test's");
	is_str(status_of(&rep, "other"), "pass", "the other tests are there");
	console_report_add(&rep, "kselftest.bad", TEST_FAIL,
			   "does not build:\nbad.c:3:1: error");
	is_str(status_of(&rep, "kselftest.bad"), "fail",
	       "a host-side result is added");
	console_report_release(&rep);

	/* a test that floods TAP lines: bounded */
	struct strbuf flood = STRBUF_INIT;
	strbuf_addstr(&flood, "@@stableq userspace K\n"
			      "@@stableq begin kselftest.timers.posix_timers K\n");
	for (int i = 0; i < 5000; i++)
		strbuf_addf(&flood, "ok %d t%d\n", i, i);
	strbuf_addstr(&flood, "@@stableq end kselftest.timers.posix_timers 0 "
			      "K\n@@stableq done K\n");
	is_int(console_parse_marked(flood.buf, flood.len, t, n, 0, "K", &rep),
	       0, "a flood of TAP parses");
	size_t subs = 0;
	for (size_t i = 0; i < rep.nresults; i++)
		subs += !strncmp(rep.results[i].name,
				 "kselftest.timers.posix_timers.", 30);
	is_int((long)subs, 2000, "at most 2,000 results per test");
	console_report_release(&rep);
	strbuf_release(&flood);

	/* a bisection step: only the steering test's guest test boots */
	const char *keep[] = {"kselftest.timers.posix_timers.Check_itimer_prof"};
	testset_select(t, &n, keep, 1);
	ok(testset_find(t, n, "kselftest.timers.posix_timers") &&
		   !testset_find(t, n, "kselftest.timers.set-timer_lat") &&
		   !testset_find(t, n, "other"),
	   "a subtest's name selects its test alone");
	testset_free(t, n);
	kselftest_build_release(&b);
}

static void test_elf(void)
{
	char **needed = NULL, *interp = NULL;
	size_t n = 0;
	int libc = 0;

	is_int(kselftest_elf_needs("/bin/bash", &needed, &n, &interp), 1,
	       "bash is a dynamic ELF");
	for (size_t i = 0; i < n; i++) {
		libc |= !strcmp(needed[i], "libc.so.6");
		free(needed[i]);
	}
	free(needed);
	ok(libc, "it needs libc.so.6 (DT_NEEDED)");
	like(interp ? interp : "", "ld-linux-x86-64.so.2",
	     "and the loader (PT_INTERP)");
	free(interp);
	is_int(kselftest_elf_needs("/bin/busybox", &needed, &n, &interp), 0,
	       "busybox-static is no dynamic ELF");
	is_int(kselftest_elf_needs("tests/unit/t-kselftest.c", &needed, &n, &interp),
	       0, "a text file is no ELF");
	ok(kselftest_elf_needs("/nonexistent", &needed, &n, &interp) < 0,
	   "a missing file is an error");
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * A small kernel tree of real Makefiles: headers_install, a lib.mk with
 * kselftest's install and emit_tests rules, a target that builds (a C
 * program and a script), one that does not.
 */
static void make_tree(const char *d)
{
	char *p;

	p = xstrfmt("%s/tools/testing/selftests/good", d);
	mkdir_p(p);
	free(p);
	p = xstrfmt("%s/tools/testing/selftests/broken", d);
	mkdir_p(p);
	free(p);
	p = xstrfmt("%s/include/uapi/linux", d);
	mkdir_p(p);
	free(p);
	p = xstrfmt("%s/Makefile", d);
	write_text(p, "headers_install:\n"
		      "\tmkdir -p $(INSTALL_HDR_PATH)/include/linux\n"
		      "\tcp $(CURDIR)/include/uapi/linux/*.h "
		      "$(INSTALL_HDR_PATH)/include/linux/\n"
		      "\techo '#define HDR_ARCH_$(ARCH) 1' > "
		      "$(INSTALL_HDR_PATH)/include/linux/hdrarch.h\n");
	free(p);
	p = xstrfmt("%s/include/uapi/linux/answer.h", d);
	write_text(p, "#define ANSWER 42\n");
	free(p);
	p = xstrfmt("%s/tools/testing/selftests/lib.mk", d);
	write_text(p,
		   "CC := $(CROSS_COMPILE)gcc\n"
		   "TEST_GEN_PROGS := $(patsubst %,$(OUTPUT)/%,$(TEST_GEN_PROGS))\n"
		   "all: $(TEST_GEN_PROGS)\n"
		   "$(OUTPUT)/%: %.c\n\t$(CC) $(KHDR_INCLUDES) $< -o $@\n"
		   "install: all\n\tmkdir -p $(INSTALL_PATH)\n"
		   "\tcp $(TEST_GEN_PROGS) $(TEST_PROGS) $(INSTALL_PATH)/\n"
		   "emit_tests:\n\t@for T in $(TEST_GEN_PROGS) $(TEST_PROGS); do "
		   "echo \"x:$$(basename $$T)\"; done\n");
	free(p);
	p = xstrfmt("%s/tools/testing/selftests/good/Makefile", d);
	write_text(p, "TEST_GEN_PROGS := answer\nTEST_PROGS := run.sh "
		      "check.py\ninclude ../lib.mk\n");
	free(p);
	p = xstrfmt("%s/tools/testing/selftests/good/answer.c", d);
	write_text(p, "#include <linux/answer.h>\n"
		      "int main(void) { return ANSWER - 42; }\n");
	free(p);
	p = xstrfmt("%s/tools/testing/selftests/good/run.sh", d);
	write_text(p, "#!/bin/bash\necho ok 1 run\n");
	chmod(p, 0755);
	free(p);
	p = xstrfmt("%s/tools/testing/selftests/good/check.py", d);
	write_text(p, "#!/usr/bin/env python3\nprint('ok 1 x')\n");
	chmod(p, 0755);
	free(p);
	/* arm64's own target: built only with its headers */
	static const char *const arm64[][2] = {
		{ "Makefile", "TEST_GEN_PROGS := pac\nTEST_PROGS := run.sh\n"
			      "include ../lib.mk\n" },
		{ "pac.c", "#include <linux/hdrarch.h>\n#ifndef HDR_ARCH_arm64\n"
			   "#error not arm64's headers\n#endif\n"
			   "int main(void) { return 0; }\n" },
		{ "run.sh", "#!/bin/bash\necho ok 1 run\n" },
	};
	p = xstrfmt("%s/tools/testing/selftests/arm64", d);
	mkdir_p(p);
	free(p);
	for (size_t i = 0; i < sizeof(arm64) / sizeof(arm64[0]); i++) {
		p = xstrfmt("%s/tools/testing/selftests/arm64/%s", d,
			    arm64[i][0]);
		write_text(p, arm64[i][1]);
		chmod(p, 0755);
		free(p);
	}
	p = xstrfmt("%s/tools/testing/selftests/broken/Makefile", d);
	write_text(p, "TEST_GEN_PROGS := nope\ninclude ../lib.mk\n");
	free(p);
	p = xstrfmt("%s/tools/testing/selftests/broken/nope.c", d);
	write_text(p, "int main(void) { return undeclared_thing; }\n");
	free(p);
}

/* e_machine of an ELF file, 0 if none */
static int elf_machine(const char *path)
{
	unsigned char h[20] = "";
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(h, 1, sizeof(h), f) : 0;

	if (f)
		fclose(f);
	return n == sizeof(h) && !memcmp(h, "\177ELF", 4) ? h[18] | h[19] << 8
							  : 0;
}

#define ARM64_BASH "/usr/local/lib/stableq/arm64/bin/bash"

/* The same tree cross-built for arm64 (aarch64-linux-gnu-gcc). */
static void test_arm64(struct kselftest_opts *o, const char *conf,
		       const char *x86_key)
{
	struct kselftest_build b;
	struct kselftest_file *files = NULL;
	size_t nfiles = 0;

	o->arch = "mips";
	is_int(kselftest_prepare(o, &b), ERR_INVALID, "an arch without a row");
	like(err_msg(), "no cross build for arch 'mips'", "... is named");
	err_clear();
	kselftest_build_release(&b);
	o->arch = "arm64";
	write_text(conf, "[test ks]\nkind = kselftest\ntargets = good x86\n"
			 "timeout = 7\n");
	is_int(kselftest_prepare(o, &b), 0, "arm64: kselftests cross-build: %s",
	       err_msg());
	ok(!b.cached && strcmp(b.key, x86_key), "... under a key of their own");
	is_str(b.arch, "arm64", "... for arm64");
	is_str(b.note ? b.note : "", "x86 built as arm64",
	       "x86's own target is built as arm64's, and said");
	ok(b.ntargets == 2 && !strcmp(b.targets[1].name, "arm64") &&
		   b.targets[1].built,
	   "good and arm64 built (arm64's with the arm64 headers)");
	if (b.ntargets == 2 && b.targets[0].built) {
		char *p = xstrfmt("%s/good/answer", b.dir);
		is_int(elf_machine(p), 183, "good's program is aarch64 ELF");
		free(p);
	}
	/* `make deps` unpacks Debian's bash:arm64 beside the busybox */
	int have = access(ARM64_BASH, R_OK) == 0;
	if (b.ntargets == 2 && b.targets[1].ntests == 2) {
		ok(!b.targets[1].tests[0].why, "pac runs in the guest");
		if (have)
			ok(!b.targets[1].tests[1].why,
			   "so does the bash script (bash:arm64 is unpacked)");
		else
			like(b.targets[1].tests[1].why
				     ? b.targets[1].tests[1].why
				     : "",
			     "the arm64 guest has no bash",
			     "a bash script does not (no bash:arm64 unpacked), "
			     "saying why");
	}
	is_int(b.needs_bash, have, "the guest needs bash when it can have it");
	is_int(kselftest_files(&b, &files, &nfiles), 0, "the guest's files");
	int loader = 0, libc = 0, x86 = 0, bash = !have, tinfo = !have;
	for (size_t i = 0; i < nfiles; i++) {
		const char *hp = files[i].host_path ? files[i].host_path : "";
		loader |= !strcmp(files[i].path, "lib/ld-linux-aarch64.so.1") &&
			  !strncmp(hp, "/usr/aarch64-linux-gnu/", 23);
		libc |= !strcmp(files[i].path, "lib/libc.so.6") &&
			!strncmp(hp, "/usr/aarch64-linux-gnu/", 23);
		x86 |= strstr(hp, "x86_64") != NULL ||
		       !strcmp(hp, "/bin/bash") || !strcmp(hp, "/usr/bin/bash");
		bash |= !strcmp(files[i].path, "bin/bash") &&
			!strcmp(hp, ARM64_BASH);
		tinfo |= !strncmp(files[i].path,
				  "lib/aarch64-linux-gnu/libtinfo.so.6", 35);
	}
	ok(loader && libc, "the cross libc's loader and libc, in the "
			   "guest's /lib");
	ok(bash && tinfo, "bash:arm64 and its libtinfo, when unpacked");
	ok(!x86, "nothing of the host's");
	kselftest_files_free(files, nfiles);

	struct test_def *tests = NULL;
	size_t n = 0;
	struct kselftest_result *r = NULL;
	is_int(testset_load(conf, &tests, &n), 0, "the set");
	size_t nr = kselftest_results(tests, n, &b, NULL, 0, &r);
	ok(nr == 2 && !strcmp(r[1].name, "kselftest.arm64") && r[1].built == 1,
	   "the section's x86 is the result kselftest.arm64");
	kselftest_results_free(r, nr);
	kselftest_expand(&tests, &n, &b);
	ok(testset_find(tests, n, "kselftest.arm64.pac") != NULL,
	   "... and its tests kselftest.arm64.*");
	testset_free(tests, n);
	kselftest_build_release(&b);
	is_int(kselftest_prepare(o, &b), 0, "arm64 again");
	ok(b.cached, "... from the cache");
	is_str(b.note ? b.note : "", "x86 built as arm64", "... said again");
	kselftest_build_release(&b);
	o->arch = NULL;
	write_text(conf, "[test ks]\nkind = kselftest\ntargets = good broken "
			 "absent\ntimeout = 7\n");
}

static void test_prepare(void)
{
	char tmpl[] = "/tmp/t-kselftest.XXXXXX";
	char *d = mkdtemp(tmpl);
	struct kselftest_build b;
	struct kselftest_file *files = NULL;
	size_t nfiles = 0;
	char key1[65];

	if (!ok(d != NULL, "a temp dir"))
		return;
	char *tree = xstrfmt("%s/linux", d);
	char *conf = xstrfmt("%s/tests.conf", d);
	char *cache = xstrfmt("%s/cache", d);
	char *build = xstrfmt("%s/build", d);
	struct sandbox box;
	chmod(d, 0755); /* the build user reaches it */
	if (!ok(sandbox_init(&box, "bwrap", "stableq-build", 0) == 0,
		"the sandbox the builds run in"))
		diag("%s", err_msg());
	make_tree(tree);
	write_text(conf, "[test boot]\nkind = boot\n");
	struct kselftest_opts o = {
		.tests_file = conf, .src_dir = tree, .build_dir = build,
		.cache_dir = cache, .compiler_id = "gcc test",
		.sandbox = &box,
	};
	is_int(kselftest_prepare(&o, &b), 0, "a set without kselftests");
	is_int((long)b.ntargets, 0, "... builds nothing");
	kselftest_build_release(&b);

	write_text(conf, "[test ks]\nkind = kselftest\ntargets = good broken "
			 "absent\ntimeout = 7\n");
	is_int(kselftest_prepare(&o, &b), 0, "kselftests build: %s",
	       err_msg());
	is_int((long)b.ntargets, 3, "three targets");
	ok(!b.cached, "built, not cached");
	ok(b.ntargets == 3 && b.targets[0].built && b.targets[0].timeout == 7,
	   "good built, with the section's timeout");
	ok(b.ntargets == 3 && b.targets[0].ntests == 3, "three tests listed");
	if (b.ntargets == 3 && b.targets[0].ntests == 3) {
		is_str(b.targets[0].tests[0].name, "answer", "the program");
		ok(!b.targets[0].tests[0].why && !b.targets[0].tests[1].why,
		   "the program and the bash script run in the guest");
		like(b.targets[0].tests[2].why ? b.targets[0].tests[2].why : "",
		     "python3", "the python script does not, saying why");
	}
	ok(b.needs_bash, "a bash script: the guest needs bash");
	ok(b.ntargets == 3 && !b.targets[1].built, "broken did not build");
	like(b.ntargets == 3 && b.targets[1].error ? b.targets[1].error : "",
	     "undeclared_thing", "... its compiler error is kept");
	like(b.ntargets == 3 && b.targets[2].error ? b.targets[2].error : "",
	     "no tools/testing/selftests/absent",
	     "a target the tree lacks says so");
	memcpy(key1, b.key, sizeof(key1));
	is_int(kselftest_files(&b, &files, &nfiles), 0, "the guest's files");
	int prog = 0, libc = 0, bash = 0, loader = 0;
	for (size_t i = 0; i < nfiles; i++) {
		prog |= !strcmp(files[i].path, "kselftest/good/answer");
		libc |= strstr(files[i].path, "libc.so.6") != NULL;
		bash |= !strcmp(files[i].path, "bin/bash");
		loader |= strstr(files[i].path, "ld-linux-x86-64.so.2") != NULL;
	}
	ok(prog, "the built program");
	ok(libc && loader, "the libraries and loader it needs");
	ok(bash, "bash for the script");
	kselftest_files_free(files, nfiles);
	kselftest_build_release(&b);

	is_int(kselftest_prepare(&o, &b), 0, "again");
	ok(b.cached, "the same state comes from the cache");
	is_str(b.key, key1, "the same key");
	ok(b.ntargets == 3 && !b.targets[1].built && b.targets[1].error &&
		   strstr(b.targets[1].error, "undeclared_thing"),
	   "... with the failure and its error");
	kselftest_build_release(&b);
	o.arch = "x86_64";
	is_int(kselftest_prepare(&o, &b), 0, "x86_64 named");
	ok(b.cached && !strcmp(b.key, key1),
	   "the same key as without an arch (x86_64's keys are as they were)");
	ok(!b.note, "... and no note");
	kselftest_build_release(&b);
	test_arm64(&o, conf, key1);

	/* a header of the tree changes: another state */
	char *h = xstrfmt("%s/include/uapi/linux/answer.h", tree);
	write_text(h, "#define ANSWER 41\n");
	is_int(kselftest_prepare(&o, &b), 0, "a changed header");
	ok(!b.cached && strcmp(b.key, key1), "is built again, another key");
	kselftest_build_release(&b);

	char *out = xstrfmt("%s/cache/%s", d, key1);
	ok(access(out, F_OK) == 0, "the older entry is still kept");
	free(out);
	if (geteuid() == 0) {
		o.sandbox = NULL;
		write_text(h, "#define ANSWER 40\n");
		is_int(kselftest_prepare(&o, &b), ERR_INVALID,
		       "as root without the sandbox: refused");
		like(err_msg(), "refusing", "... saying so");
		kselftest_build_release(&b);
	}
	sandbox_release(&box);
	free(h);
	rm_rf(d);
	free(tree);
	free(conf);
	free(cache);
	free(build);
}

int main(void)
{
	test_parse();
	test_expand_and_console();
	test_elf();
	test_prepare();
	return done_testing();
}
