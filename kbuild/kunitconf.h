/* kunitconf.h: every KUnit suite of a tree, found from its Kconfig files, as a config fragment. */
#ifndef STABLEQ_KUNITCONF_H
#define STABLEQ_KUNITCONF_H

#include <stddef.h>

struct strbuf;

/*
 * CONFIG_KUNIT_ALL_TESTS turns on the tests whose Kconfig entry says
 * "default KUNIT_ALL_TESTS"; the others (no default, or another one) stay
 * off unless named, and most hide their prompt behind "if
 * !KUNIT_ALL_TESTS", so with it on they cannot be turned off either.
 * kunitconf_scan() reads every Kconfig file of the tree at src_dir (arch/
 * only for x86) and finds the KUnit test symbols: a bool or tristate entry
 * whose "depends on" names KUNIT, or inside an "if" that names it. The
 * fragment gets CONFIG_KUNIT=y, "# CONFIG_KUNIT_ALL_TESTS is not set",
 * then each of them as "CONFIG_SYM=y" in file order, or as "# CONFIG_SYM is
 * not set" when deny (a NULL-terminated list of symbols without CONFIG_,
 * may be NULL) names it, so that a build of the fragment holds every suite
 * that builds for x86_64 but the denied.
 *
 * *all_tests (those with "default KUNIT_ALL_TESTS"), *extra (the others)
 * and *ndenied (may be NULL) get the counts; denied ones count only there.
 * Returns 0, or a negative code with err_msg() (the tree cannot be read,
 * or holds no KUnit test).
 */
int kunitconf_scan(const char *src_dir, const char *const *deny,
		   struct strbuf *fragment, size_t *all_tests, size_t *extra,
		   size_t *ndenied);

#endif
