/* t-kbuild.c: config hash, fragment checks, error excerpts, refusals. */
#include "err.h"
#include "file.h"
#include "kbuild.h"
#include "kconfig.h"
#include "sandbox.h"
#include "spawn.h"
#include "strbuf.h"
#include "tap.h"

#include <stdlib.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static struct sandbox box; /* every make runs in it (sandbox.h) */

static char *at(const char *name)
{
	return xstrfmt("%s/%s", dir, name);
}

static void put(const char *name, const char *text)
{
	char *p = at(name);

	/* make the parents */
	for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	if (write_file_atomic(p, text, strlen(text)) < 0)
		diag("%s", err_msg());
	free(p);
}

static void hash_of(const char *src, const char *cfg, char out[65])
{
	char *s = src ? at(src) : NULL, *c = at(cfg);
	int ret = kconfig_hash(s, c, out);

	if (ret < 0)
		diag("hash: %s", err_msg());
	free(s);
	free(c);
}

static void test_hash(void)
{
	char h1[65], h2[65], h3[65];
	int hex = 1;

	put("cfg/a.config", "CONFIG_A=y\n");
	put("cfg/b.config", "CONFIG_B=m\n");
	put("cfg/README", "not a fragment\n");
	put("src/kernel/configs/tiny.config", "CONFIG_EMBEDDED=y\n");
	hash_of("src", "cfg", h1);
	is_int(strlen(h1), 64, "64 hex digits");
	for (int i = 0; i < 64; i++)
		hex &= !!strchr("0123456789abcdef", h1[i]);
	ok(hex, "lower-case hex");
	hash_of("src", "cfg", h2);
	is_str(h2, h1, "stable for the same inputs");

	put("cfg/README", "still not a fragment\n");
	hash_of("src", "cfg", h2);
	is_str(h2, h1, "other files do not count");

	put("cfg/b.config", "CONFIG_B=y\n");
	hash_of("src", "cfg", h2);
	ok(strcmp(h2, h1), "a fragment's contents count");
	put("cfg/b.config", "CONFIG_B=m\n");
	hash_of("src", "cfg", h2);
	is_str(h2, h1, "back to the same contents, the same hash");

	put("src/kernel/configs/tiny.config", "CONFIG_EMBEDDED=n\n");
	hash_of("src", "cfg", h2);
	ok(strcmp(h2, h1), "the tinyconfig base counts");
	put("src/kernel/configs/tiny.config", "CONFIG_EMBEDDED=y\n");

	/* a name counts: the same text under another name is another config */
	put("cfg2/a.config", "CONFIG_A=y\n");
	put("cfg2/c.config", "CONFIG_B=m\n");
	hash_of("src", "cfg2", h3);
	ok(strcmp(h3, h1), "fragment names count");
	/* creation order does not: name order does */
	put("cfg3/b.config", "CONFIG_B=m\n");
	put("cfg3/a.config", "CONFIG_A=y\n");
	hash_of("src", "cfg3", h3);
	is_str(h3, h1, "independent of creation order");

	char *empty = at("empty");
	mkdir(empty, 0755);
	is_int(kconfig_hash(NULL, empty, h3), ERR_NOTFOUND,
	       "no fragment: not found");
	like(err_msg(), "no *.config fragment", "says so");
	free(empty);
	is_int(kconfig_hash(NULL, "/nonexistent", h3), ERR_NOTFOUND,
	       "missing config dir");
}

static int verify(const char *dotconfig_text, const char *src)
{
	char *cfg = at("vcfg"), *dot = at("dot.config");
	char *s = src ? at(src) : NULL;
	int ret;

	write_file_atomic(dot, dotconfig_text, strlen(dotconfig_text));
	ret = kconfig_verify(cfg, dot, s);
	free(cfg);
	free(dot);
	free(s);
	return ret;
}

static void test_verify(void)
{
	put("vcfg/10-base.config", "# base\n"
				   "CONFIG_SERIAL_8250=y\n"
				   "# CONFIG_VT is not set\n"
				   "CONFIG_OFF=n\n"
				   "CONFIG_STR=\"ttyS0\"   \n");
	put("vcfg/20-tests.config", "\nCONFIG_TEST_USER_COPY=m\n"
				    "CONFIG_NOPE=y\n");
	put("ksrc/Kconfig", "source \"lib/Kconfig\"\n");
	put("ksrc/lib/Kconfig.debug", "config TEST_USER_COPY\n"
				      "\ttristate \"test\"\n"
				      "menuconfig SERIAL_8250\n"
				      "config NOPE_NOT_THIS\n");
	put("ksrc/.git/Kconfig", "config NOPE\n");

	const char *good = "CONFIG_SERIAL_8250=y\n"
			   "# CONFIG_VT is not set\n"
			   "CONFIG_STR=\"ttyS0\"\n"
			   "CONFIG_TEST_USER_COPY=m\n"
			   "CONFIG_NOPE=y\n";
	is_int(verify(good, "ksrc"), 0, "every requested value holds: %s",
	       err_msg());

	is_int(verify("CONFIG_SERIAL_8250=y\nCONFIG_STR=\"ttyS0\"\n"
		      "CONFIG_TEST_USER_COPY=m\n",
		      "ksrc"),
	       ERR_INVALID, "a symbol missing from .config");
	like(err_msg(),
	     "vcfg/20-tests.config:3: CONFIG_NOPE=y: unknown "
	     "symbol (no Kconfig file defines it)",
	     "unknown: file:line, symbol; .git and look-alikes ignored");

	is_int(verify("CONFIG_SERIAL_8250=y\nCONFIG_STR=\"ttyS0\"\n"
		      "CONFIG_NOPE=y\n",
		      "ksrc"),
	       ERR_INVALID, "a known symbol missing");
	like(err_msg(),
	     "20-tests.config:2: CONFIG_TEST_USER_COPY=m: not in "
	     "the resulting .config: its dependencies are not met",
	     "unsatisfiable");

	is_int(verify("CONFIG_SERIAL_8250=y\nCONFIG_STR=\"ttyS0\"\n"
		      "CONFIG_TEST_USER_COPY=y\nCONFIG_NOPE=y\n",
		      "ksrc"),
	       ERR_INVALID, "another value");
	like(err_msg(), "CONFIG_TEST_USER_COPY=m: olddefconfig made it y",
	     "the value it got");

	is_int(verify("CONFIG_SERIAL_8250=y\nCONFIG_VT=y\nCONFIG_STR="
		      "\"ttyS0\"\n"
		      "CONFIG_TEST_USER_COPY=m\nCONFIG_NOPE=y\n",
		      "ksrc"),
	       ERR_INVALID, "'is not set' that is set");
	like(err_msg(), "10-base.config:3: CONFIG_VT=n", "names it");

	is_int(verify("CONFIG_SERIAL_8250=y\nCONFIG_STR=\"ttyS1\"\n"
		      "CONFIG_TEST_USER_COPY=m\nCONFIG_NOPE=y\n",
		      "ksrc"),
	       ERR_INVALID, "a string value differs");
	like(err_msg(), "10-base.config:5: CONFIG_STR=\"ttyS0\"",
	     "trailing blanks of the fragment ignored");

	is_int(verify("CONFIG_SERIAL_8250=y\nCONFIG_OFF=y\nCONFIG_STR="
		      "\"ttyS0\"\n"
		      "CONFIG_TEST_USER_COPY=m\nCONFIG_NOPE=y\n",
		      "ksrc"),
	       ERR_INVALID, "=n that is y");
	like(err_msg(), "10-base.config:4: CONFIG_OFF=n", "names it");

	is_int(verify("CONFIG_SERIAL_8250=y\n", NULL), ERR_INVALID,
	       "without a source tree");
	like(err_msg(), "its dependencies are not met",
	     "no unknown/unsatisfiable distinction then");

	char *cfg = at("vcfg");
	is_int(kconfig_verify(cfg, "/nonexistent/.config", NULL),
	       ERR_NOTFOUND, "no .config");
	free(cfg);
}

static void test_excerpt(void)
{
	const char *fixture = "tests/fixtures/kbuild/compile-error.log";
	struct strbuf log = STRBUF_INIT;
	char *p = at("build.log");
	const char *old = "old.c:1:1: error: an earlier build's error\n"
			  "make: *** [old] Error 1\n";
	char *ex;

	ok(strbuf_read_file(&log, fixture, 0) == 0, "fixture read");
	ex = kbuild_error_excerpt(fixture, 0);
	like(ex,
	     "../linux-source-6.1/lib/test_user_copy.c:180:21: error: "
	     "‘nope’ undeclared",
	     "the compiler error with its file:line");
	like(ex,
	     "make[3]: *** [/work/scratch-qemu/linux-source-6.1/scripts/"
	     "Makefile.build:255: lib/test_user_copy.o] Error 1",
	     "the first make error names the object");
	like(ex, "make: *** [Makefile:250: __sub-make] Error 2",
	     "the last make error");
	ok(!strstr(ex, "Waiting for unfinished jobs"), "no noise");
	ok(!strstr(ex, "warning:"), "no warnings");
	ok(!strstr(ex, "hint:"), "no package hint");
	free(ex);

	/* only this build's part of an appended log counts */
	struct strbuf both = STRBUF_INIT;
	strbuf_addstr(&both, old);
	strbuf_addbuf(&both, &log);
	write_file_atomic(p, both.buf, both.len);
	ex = kbuild_error_excerpt(p, strlen(old));
	ok(!strstr(ex, "earlier build") && !strstr(ex, "[old]"),
	   "lines before the offset are skipped");
	like(ex, "error: ‘nope’ undeclared", "this build's error is there");
	free(ex);
	ex = kbuild_error_excerpt(p, 0);
	like(ex, "earlier build", "offset 0 reads it all");
	free(ex);

	const char *elf =
		"  DESCEND objtool\n"
		"In file included from elf.c:22:\n"
		"tools/objtool/include/objtool/elf.h:10:10: fatal error: "
		"gelf.h: No such file or directory\n"
		"make[4]: *** [tools/build/Makefile.build:97: elf.o] Error 1\n";
	write_file_atomic(p, elf, strlen(elf));
	ex = kbuild_error_excerpt(p, 0);
	like(ex, "hint: install the Debian package libelf-dev",
	     "missing gelf.h names libelf-dev");
	like(ex, "elf.h:10:10: fatal error: gelf.h", "and quotes the line");
	free(ex);

	const char *flex = "  LEX     scripts/kconfig/lexer.lex.c\n"
			   "/bin/sh: 1: flex: not found\n"
			   "make[2]: *** [scripts/Makefile.host:9: "
			   "scripts/kconfig/lexer.lex.c] Error 127\n";
	write_file_atomic(p, flex, strlen(flex));
	ex = kbuild_error_excerpt(p, 0);
	like(ex, "hint: install the Debian package flex", "flex");
	free(ex);

	ex = kbuild_error_excerpt("/nonexistent/log", 0);
	like(ex, "see the log", "an unreadable log still gives a line");
	free(ex);

	strbuf_release(&both);
	strbuf_release(&log);
	free(p);
}

static void test_run_refusals(void)
{
	struct kbuild_result r;
	char *src = at("notakernel"), *build = at("b"), *cfg = at("cfg");
	struct kbuild_opts o = {.src_dir = src,
				.build_dir = build,
				.config_dir = cfg,
				.timeout_s = 60};
	const char *path = getenv("PATH");
	char *saved = xstrdup(path ? path : "/usr/bin:/bin");

	mkdir(src, 0755);
	is_int(kbuild_run(&o, &r), ERR_NOTFOUND, "not a kernel tree");
	like(err_msg(), "linux-source-6.1", "names the Debian package");
	ok(!r.ok && r.error, "the result says so too");
	kbuild_result_release(&r);

	/* a tree, but no tools on PATH */
	put("notakernel/Makefile", "all:\n");
	char *empty = at("emptybin");
	mkdir(empty, 0755);
	setenv("PATH", empty, 1);
	is_int(kbuild_run(&o, &r), ERR_NOTFOUND, "no tools");
	like(err_msg(), "make, gcc, flex, bison, bc, perl, ccache not found",
	     "names every missing tool");
	like(err_msg(), "build-essential flex bison bc perl ccache",
	     "and their Debian packages");
	kbuild_result_release(&r);
	setenv("PATH", saved, 1);
	free(empty);

	/* as root without the sandbox: refused before anything is made */
	if (geteuid() == 0) {
		is_int(kbuild_run(&o, &r), ERR_INVALID,
		       "as root without a sandbox: refused");
		like(err_msg(), "refusing to run code from a patch as root",
		     "... saying so");
		ok(access(build, F_OK) != 0, "... nothing made");
		kbuild_result_release(&r);
	}
	o.sandbox = &box;

	/* a build directory another build holds */
	mkdir(build, 0755);
	char *lock = at("b/.stableq-lock");
	int lfd = open(lock, O_RDWR | O_CREAT, 0644);
	ok(lfd >= 0 && flock(lfd, LOCK_EX) == 0, "lock held");
	is_int(kbuild_run(&o, &r), ERR_CONFLICT, "a busy build directory");
	like(err_msg(), "another build is using this directory", "says so");
	kbuild_result_release(&r);
	close(lfd);
	free(lock);

	struct kbuild_opts none = {0};
	is_int(kbuild_run(&none, &r), ERR_INVALID, "no options");
	kbuild_result_release(&r);
	kbuild_result_release(NULL);

	char *cc = kbuild_default_ccache_dir();
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	char *xdg = kbuild_default_ccache_dir();
	if (geteuid() == 0)
		is_str(xdg, "/var/cache/stableq/ccache",
		       "as root, /var/cache: the build user cannot reach"
		       " root's home");
	else
		is_str(xdg, "/x/cache/stableq/ccache", "$XDG_CACHE_HOME first");
	unsetenv("XDG_CACHE_HOME");
	like(cc, "/stableq/ccache", "else under ~/.cache");
	free(cc);
	free(xdg);
	free(saved);
	free(src);
	free(build);
	free(cfg);
}

/* kbuild_make: the environment kbuild_run gives make, 0 / 1 / deadline */
static void test_make(void)
{
	char *src = at("src"), *build = at("build"), *ccache = at("cc");
	char *log = at("make.log");
	struct kbuild_opts o = { .src_dir = src, .build_dir = build,
				 .ccache_dir = ccache, .log_path = log,
				 .sandbox = &box };
	const char *good[] = { "sh", "-c",
			       "echo \"dir=$CCACHE_DIR base=$CCACHE_BASEDIR"
			       " user=$KBUILD_BUILD_USER extra=$EXTRA\"; pwd;"
			       " echo uid=$(id -u); touch Makefile.new;"
			       " touch ../outside; echo built > $O/x",
			       NULL };
	const char *oenv[] = { "EXTRA=yes", NULL, NULL };
	const char *bad[] = { "sh", "-c", "echo broken >&2; exit 2", NULL };
	const char *slow[] = { "sleep", "30", NULL };
	struct strbuf sb = STRBUF_INIT;
	int to = -1;

	put("src/Makefile", "all:\n");
	mkdir(build, 0755);
	oenv[1] = xstrfmt("O=%s", build);
	is_int(kbuild_make(&o, good, oenv, now_monotonic() + 30, &to), 0,
	       "kbuild_make: a command that exits 0 gives 0");
	free((char *)oenv[1]);
	is_int(to, 0, "... not timed out");
	strbuf_read_file(&sb, log, 1 << 20);
	like(sb.buf, "user=stableq", "... with the reproducible build variables");
	like(sb.buf, "extra=yes", "... and the extra environment");
	like(sb.buf, "base=/tmp", "... and CCACHE_BASEDIR, the common parent");
	like(sb.buf, "/src\n", "... run in the source tree");
	{
		char *p = at("src/Makefile.new"), *q = at("outside");
		char *x = at("build/x");
		ok(access(p, F_OK) != 0 && access(q, F_OK) != 0,
		   "... which it cannot write, nor anything beside it");
		ok(access(x, F_OK) == 0, "... but the build directory");
		if (geteuid() == 0)
			ok(!strstr(sb.buf, "uid=0\n"),
			   "... as the build user, not root");
		free(p);
		free(q);
		free(x);
	}
	is_int(kbuild_make(&o, bad, NULL, now_monotonic() + 30, &to), 1,
	       "a command that fails gives 1 (it ran; the log says why)");
	ok(kbuild_make(&o, slow, NULL, now_monotonic() + 1.5, &to) < 0 && to,
	   "a command past the deadline is killed: negative, timed out");
	ok(kbuild_have_tool("sh") && !kbuild_have_tool("no-such-tool-here"),
	   "kbuild_have_tool finds sh and not a missing tool");
	strbuf_release(&sb);
	free(src);
	free(build);
	free(ccache);
	free(log);
}

/* What a build leaves to be booted: files, not symlinks out of it. */
static void test_outputs_safe(void)
{
	const char *files[] = { "arch/x86/boot/bzImage", "lib/m.ko" };
	char *b = at("out"), *secret = at("secret"), *link = at("out/lib/m.ko");
	char *dirlink = at("out/arch"), *elsewhere = at("elsewhere");

	put("out/arch/x86/boot/bzImage", "kernel");
	put("out/lib/m.ko", "module");
	put("secret", "host file");
	is_int(kbuild_outputs_safe(b, files, 2), 0, "outputs that are files");
	unlink(link);
	ok(symlink(secret, link) == 0, "a module that is a symlink");
	is_int(kbuild_outputs_safe(b, files, 2), ERR_INVALID,
	       "... is refused");
	like(err_msg(), "lib/m.ko", "... naming it");
	unlink(link);
	put("out/lib/m.ko", "module");
	put("elsewhere/x86/boot/bzImage", "a host kernel");
	char *arch = at("out/arch/x86/boot/bzImage");
	unlink(arch);
	for (int k = 0; k < 2; k++) {
		char *d = at(k ? "out/arch/x86" : "out/arch/x86/boot");
		rmdir(d);
		free(d);
	}
	rmdir(dirlink);
	free(arch);
	ok(symlink(elsewhere, dirlink) == 0, "a directory on the way that is a"
					    " symlink");
	is_int(kbuild_outputs_safe(b, files, 2), ERR_INVALID,
	       "... is refused too");
	const char *up[] = { "../secret" };
	is_int(kbuild_outputs_safe(b, up, 1), ERR_INVALID,
	       "a path that leaves the build directory is refused");
	free(b);
	free(secret);
	free(link);
	free(dirlink);
	free(elsewhere);
}

/* A build killed while fixdep wrote lib/.x.o.cmd: the next one recovers. */
static void test_broken_cmd(void)
{
	char *b = xstrfmt("%s/broken", dir), *lib = xstrfmt("%s/lib", b);
	char *cmd = xstrfmt("%s/.x.o.cmd", lib), *obj = xstrfmt("%s/x.o", lib);
	char *other = xstrfmt("%s/.y.o.cmd", lib), *log = xstrfmt("%s/log", b);
	const char *text = "stableq: make bzImage modules: make\n"
			   "lib/.x.o.cmd:5: *** unterminated call to function"
			   " 'wildcard': missing ')'.  Stop.\n"
			   "../etc/.p.cmd:1: *** not inside the build\n";
	struct stat st;

	mkdir_p(lib);
	write_file_atomic(cmd, "cmd_lib/x.o := $(wildcard", 25);
	write_file_atomic(obj, "o", 1);
	write_file_atomic(other, "fine", 4);
	write_file_atomic(log, text, strlen(text));
	is_int(kbuild_drop_broken_cmd(b, log, strlen(text)), 0,
	       "broken .cmd: nothing after the offset, nothing removed");
	is_int(kbuild_drop_broken_cmd(b, log, 0), 1,
	       "broken .cmd: the file make named is removed");
	ok(stat(cmd, &st) < 0 && stat(obj, &st) < 0,
	   "... with its object, so make builds it again");
	ok(stat(other, &st) == 0, "... and nothing else (a path with .. is never followed)");
	free(b);
	free(lib);
	free(cmd);
	free(obj);
	free(other);
	free(log);
}

int main(void)
{
	strcpy(dir, "/tmp/t-kbuild-XXXXXX");
	if (!mkdtemp(dir)) {
		ok(0, "temp dir");
		return done_testing();
	}
	unsetenv("XDG_CACHE_HOME");
	chmod(dir, 0755); /* the build user reaches it */
	if (!ok(sandbox_init(&box, "bwrap", "stableq-build", 0) == 0,
		"the sandbox builds run in"))
		diag("%s", err_msg());
	test_hash();
	test_verify();
	test_excerpt();
	test_run_refusals();
	test_make();
	test_outputs_safe();
	test_broken_cmd();
	const char *rm[] = {"rm", "-rf", dir, NULL};
	struct spawn s = SPAWN_INIT;
	s.argv = rm;
	spawn_run(&s);
	spawn_release(&s);
	return done_testing();
}
