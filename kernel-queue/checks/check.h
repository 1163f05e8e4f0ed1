/* check.h: the stable-rules checks of each patch, stored as verdicts with reasons. */
#ifndef STABLEQ_CHECK_H
#define STABLEQ_CHECK_H

#include "ctx.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>

/*
 * Checks, one verdict row each:
 *   fixes   present | absent | unknown | missing
 *   applies clean | conflict | already-applied | unknown (a release lists
 *           its subject, its lines are not in the tree)
 *   fixup   ok | held (a fix-up of a broken patch; released and reverted)
 *           | overridden
 *   flags   none | feature-like (adds-file,new-kconfig,uapi: informational)
 *           | held (it makes a symlink or a gitlink: not a file)
 *   followups none | found (with an upstream index only: upstream fixes of
 *           it outside the queue and the tree; informational, mailed). In
 *           the tree: its history, the index (released up to the tree's
 *           version, or a backport in its series), Debian's changelog, the
 *           tree's content, in that order (check-upstream.c)
 * and the move that follows:
 *   held                      -> held (the author is mailed: revert first;
 *                                for a link: a maintainer applies it)
 *   already-applied           -> released: the change is in the tree already
 *                                (nobody's problem, no mail)
 *   absent                    -> rejected (no mail: nothing to act on)
 *   conflict, unknown, missing -> checked (waits for a human: `stableq override`)
 *   soaking (min_soak_days)   -> checked
 *   else                      -> queued
 *
 * The evidence, in the order it is asked (each verdict's reason names the
 * one it rests on first, then what else was learnt):
 *   fixes: for each Fixes: target, the branch's history and its backports
 *   ("commit X upstream."), the queue, a configured stable-queue checkout,
 *   a configured upstream clone (when it finds the target before the base),
 *   Debian's changelog (the target's subject listed in a 6.1.N release up to
 *   the tree's), and the upstream clone (after the base: absent). When no
 *   target is known: the patch it is a Stable-dep-of (its standing), the
 *   tree (every file it changes is missing: absent), the stable annotation
 *   (stable-kernel-rules.rst; an unversioned Cc: stable is every tree), the
 *   tree again (the lines it removes are there: present).
 *   An unversioned annotation gives way to the code: when none of the
 *   lines the patch removes or keeps as context is in its files, absent.
 *   applies: the patch's own lines decide, a subject only points: the
 *   branch plus the patches queued before it; in reverse (already-applied);
 *   in reverse once the later queued patches touching the same files are
 *   taken out, and (a release names it, stable_queue_repo set) the later
 *   releases' patches of its files; every line it adds standing in the
 *   tree where later changes left it (repo_lines_placed(): already-applied,
 *   even when it applies, unless it removes a line: then the lines it
 *   removes stand at its place and applying it changes the tree).
 *   A release that lists it (Debian's changelog, the stable-queue checkout)
 *   is named; without its lines in the tree that is unknown.
 */
enum check_kind { CHECK_FIXES, CHECK_APPLIES, CHECK_FIXUP, CHECK_FLAGS,
		  CHECK_FOLLOWUPS, CHECK_KIND_COUNT };

enum check_result {
	CR_PRESENT,
	CR_ABSENT,
	CR_UNKNOWN,
	CR_MISSING,
	CR_CLEAN,
	CR_CONFLICT,
	CR_ALREADY,
	CR_OK,
	CR_HELD,
	CR_OVERRIDDEN,
	CR_NONE,
	CR_FEATURE_LIKE,
	CR_FOUND,
	CR_COUNT
};

const char *check_result_name(enum check_result r);
/* The enum of a stored name, or -1. */
int check_result_parse(const char *name);

struct check_summary {
	size_t checked, queued, held, rejected, waiting, released;
	json_t *json; /* [{id, subject, state, verdicts{}}]; owned by the caller */
};

/*
 * Checks the given patches (NULL/0: every patch not yet released, dropped
 * or reverted), in queue order against the branch plus the patches queued
 * before each. A patch's verdicts, state, event and mail are written
 * together; patches are committed in batches of 64, so a failure rolls back
 * its batch (those patches are checked again next time). ERR_NOTFOUND if
 * the stable tree
 * is not there (`stableq tree init`). Debian's changelog (debian_changelog)
 * is indexed first when the store's index is not current; a missing one
 * is logged and the checks go on without it.
 */
int check_run(struct branch_ctx *bc, const long long *ids, size_t n,
	      struct check_summary *sum);
void check_summary_print(const struct check_summary *s, FILE *f);

/* A job of the daemon's: patches imported and not checked yet. */
int check_due(struct branch_ctx *bc, long long *id);

#endif
