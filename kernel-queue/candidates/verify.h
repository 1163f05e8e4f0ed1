/* verify.h: a fix's own regression test decides whether its bug is in a branch. */
#ifndef STABLEQ_VERIFY_H
#define STABLEQ_VERIFY_H

#include "ctx.h"

/*
 * A fix may name the test that shows its bug, as a line of its message:
 *
 *     Regression-test: kunit.usercopy.usercopy_test_unsafe_get_user_fault
 *
 * (a result name of the branch's test set: config/tests.conf). Before the
 * branch's queue candidate builds it, the queued patches before the fix
 * are built and booted without it (a 'baseline' candidate) and the named
 * test decides, stored as the verdict `test`:
 *
 *   not-present  the test passes without the fix: the bug is not in this
 *                tree (the same fix may be needed on another branch); the
 *                patch is rejected, the reason names the test and the
 *                candidate
 *   present      the test fails without it: the fix stays queued
 *   unknown      the test did not run (or the candidate did not boot): it
 *                stays queued, the reason says why
 *
 * With several branches the reason starts with the branch key. A rejected
 * not-present patch stays rejected when it is checked again. Returns 0 with
 * the verdict stored, negative when the candidate could not be run at all.
 */
int verify_fix(struct branch_ctx *bc, long long patch_id,
	       void (*progress)(const char *line, void *ctx), void *ctx);
/* A job of the daemon's: a queued patch of the branch names its test and has no test verdict (*id). */
int verify_due(struct branch_ctx *bc, long long *id);
/* What verify_fix found for patch id, one line for the log; caller frees. */
char *verify_summary(sqlite3 *db, long long id);

#endif
