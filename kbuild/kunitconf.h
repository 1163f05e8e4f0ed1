/* kunitconf.h: every KUnit suite of a tree, found from its Kconfig files, as a config fragment. */
#ifndef STABLEQ_KUNITCONF_H
#define STABLEQ_KUNITCONF_H

#include <stddef.h>

struct strbuf;

/*
 * CONFIG_KUNIT_ALL_TESTS turns on the tests whose Kconfig entry says
 * "default KUNIT_ALL_TESTS"; the others (no default, or another one) stay
 * off unless named. kunitconf_scan() reads every Kconfig file of the
 * tree at src_dir (arch/ only for x86) and finds the KUnit test symbols:
 * a bool or tristate entry whose "depends on" names KUNIT. Each of them
 * without that default is written to fragment as "CONFIG_SYM=y", after
 * CONFIG_KUNIT=y and CONFIG_KUNIT_ALL_TESTS=y, in file order, so that a
 * build of the fragment holds all of them that build for x86_64.
 *
 * *all_tests and *extra (may be NULL) get the counts. Returns 0, or a
 * negative code with err_msg() (the tree cannot be read).
 */
int kunitconf_scan(const char *src_dir, struct strbuf *fragment,
		   size_t *all_tests, size_t *extra);

#endif
