/* check.h: the stable-rules checks of each patch, stored as verdicts with reasons. */
#ifndef STABLEQ_CHECK_H
#define STABLEQ_CHECK_H

#include "app.h"

#include <jansson.h>
#include <stdio.h>

/*
 * Checks, one verdict row each:
 *   fixes   present | absent | unknown | missing
 *   applies clean | conflict | already-applied
 *   fixup   ok | held | overridden
 *   flags   none | adds-file,new-kconfig,uapi (informational)
 * and the move that follows: absent or already-applied -> rejected (author
 * mailed), held -> held (mailed), conflict, unknown or missing -> checked
 * (needs a human: `stableq override`), else queued.
 */
struct check_summary {
	size_t checked, queued, held, rejected, waiting;
	json_t *json; /* [{id, subject, state, verdicts{}}]; owned by the caller */
};

/*
 * Checks the given patches (NULL/0: every patch not yet released, dropped
 * or reverted), in queue order against the branch plus the patches queued
 * before each. One transaction per patch. ERR_NOTFOUND if the stable tree
 * is not there (`stableq tree init`).
 */
int check_run(struct app *app, const long long *ids, size_t n,
	      struct check_summary *sum);
struct repo;
/* "6.1.192" from the v6.1.192 tag the tip descends from; caller frees. */
int branch_version(struct repo *r, const char *tip, char **version);
void check_summary_print(const struct check_summary *s, FILE *f);

/* A job of the daemon's: patches imported and not checked yet. */
int check_due(struct app *app, long long *id);

#endif
