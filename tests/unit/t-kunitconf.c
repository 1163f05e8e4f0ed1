/* t-kunitconf.c: KUnit test symbols from Kconfig files, on a tree made here and on the real one. */
/* check: serial (reads var/linux while the kernel tests switch it) */
#include "err.h"
#include "kunitconf.h"
#include "strbuf.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(const char *dir, const char *rel, const char *text)
{
	char *p = xstrfmt("%s/%s", dir, rel), *slash = strrchr(p, '/');
	char *cmd;
	*slash = '\0';
	cmd = xstrfmt("mkdir -p '%s'", p);
	if (system(cmd) != 0)
		abort();
	*slash = '/';
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	free(cmd);
	free(p);
}

int main(void)
{
	char dir[] = "/tmp/t-kunitconf.XXXXXX";
	struct strbuf sb = STRBUF_INIT;
	size_t all = 0, extra = 0;

	if (!mkdtemp(dir))
		return 1;
	put(dir, "lib/Kconfig.debug",
	    "config KUNIT\n\ttristate \"KUnit\"\n"
	    "config LIST_KUNIT_TEST\n\ttristate \"list\" if !KUNIT_ALL_TESTS\n"
	    "\tdepends on KUNIT\n\tdefault KUNIT_ALL_TESTS\n"
	    "config HASH_KUNIT_TEST\n\ttristate \"hash\"\n\tdepends on KUNIT\n"
	    "\thelp\n\t  depends on nothing, this is help text\n"
	    "config NOT_A_TEST\n\tbool \"x\"\n\tdepends on KUNIT_ALL_TESTS\n"
	    "menu \"m\"\n"
	    "config MEMCPY_KUNIT_TEST\n\ttristate \"memcpy\"\n"
	    "\tdepends on KUNIT && !UML\n\tdefault n\n"
	    "endmenu\n");
	put(dir, "drivers/gpu/Kconfig",
	    "menuconfig DRM_KUNIT_TEST\n\ttristate \"drm\" if !KUNIT_ALL_TESTS\n"
	    "\tdepends on DRM && KUNIT=y\n\tdefault KUNIT_ALL_TESTS\n");
	put(dir, "arch/x86/Kconfig.debug",
	    "config X86_FOO_TEST\n\tbool \"foo\"\n\tdepends on KUNIT\n");
	put(dir, "arch/arm64/Kconfig",
	    "config ARM64_FOO_TEST\n\tbool \"foo\"\n\tdepends on KUNIT\n");
	/* lib/kunit/Kconfig's shape: suites inside "if KUNIT", no depends */
	put(dir, "lib/kunit/Kconfig",
	    "menuconfig KUNIT\n\ttristate \"KUnit\"\nif KUNIT\n"
	    "config KUNIT_TEST\n\ttristate \"t\" if !KUNIT_ALL_TESTS\n"
	    "\tdefault KUNIT_ALL_TESTS\n"
	    "if X86\nconfig KUNIT_X86_ONLY\n\tbool \"x\"\nendif\n"
	    "config KUNIT_FAULT_TEST\n\tbool \"f\"\n"
	    "\tdefault KUNIT_ALL_TESTS\nendif\n"
	    "config AFTER_IF\n\tbool \"a\"\n");

	is_int(kunitconf_scan(dir, NULL, &sb, &all, &extra, NULL), 0,
	       "a made tree scans");
	is_int((long)all, 4, "four tests default to KUNIT_ALL_TESTS");
	is_int((long)extra, 4, "four that it misses");
	is_str(sb.buf,
	       "CONFIG_KUNIT=y\n# CONFIG_KUNIT_ALL_TESTS is not set\n"
	       "CONFIG_X86_FOO_TEST=y\nCONFIG_DRM_KUNIT_TEST=y\n"
	       "CONFIG_LIST_KUNIT_TEST=y\nCONFIG_HASH_KUNIT_TEST=y\n"
	       "CONFIG_MEMCPY_KUNIT_TEST=y\nCONFIG_KUNIT_TEST=y\n"
	       "CONFIG_KUNIT_X86_ONLY=y\nCONFIG_KUNIT_FAULT_TEST=y\n",
	       "the fragment names every suite, x86 first, file order, those"
	       " inside \"if KUNIT\" too; no other architecture's, nothing"
	       " after the endif");
	strbuf_release(&sb);

	const char *deny[] = { "KUNIT_FAULT_TEST", "MEMCPY_KUNIT_TEST",
			       "NOT_IN_THE_TREE", NULL };
	size_t ndenied = 0;
	is_int(kunitconf_scan(dir, deny, &sb, &all, &extra, &ndenied), 0,
	       "scans with a deny list");
	is_int((long)ndenied, 2, "two denied (a symbol the tree lacks is no"
				 " error)");
	is_int((long)(all + extra), 6, "six left");
	like(sb.buf, "# CONFIG_MEMCPY_KUNIT_TEST is not set\n",
	     "a denied suite is set off");
	like(sb.buf, "# CONFIG_KUNIT_FAULT_TEST is not set\n",
	     "so is one that defaults to KUNIT_ALL_TESTS");
	ok(!strstr(sb.buf, "CONFIG_MEMCPY_KUNIT_TEST=y"), "and is not on");
	strbuf_release(&sb);

	char *empty = xstrfmt("%s/empty", dir);
	mkdir(empty, 0755);
	is_int(kunitconf_scan(empty, NULL, &sb, NULL, NULL, NULL), ERR_NOTFOUND,
	       "a tree without KUnit tests");
	like(err_msg(), "no KUnit test", "says so");
	strbuf_release(&sb);
	free(empty);
	char *cmd = xstrfmt("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	free(cmd);

	/* the real 6.1 tree, when `stableq tree init` made it */
	if (access("var/linux/lib/Kconfig.debug", R_OK) == 0) {
		is_int(kunitconf_scan("var/linux", NULL, &sb, &all, &extra,
				      NULL),
		       0, "var/linux scans");
		ok(all > 40 && extra > 0, "6.1: %zu tests default to KUNIT_ALL_TESTS, %zu more found", all, extra);
		diag("6.1: %zu tests by KUNIT_ALL_TESTS, %zu more found", all,
		     extra);
		strbuf_release(&sb);
	}
	return done_testing();
}
