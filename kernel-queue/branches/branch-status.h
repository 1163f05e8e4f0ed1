/* branch-status.h: what each branch is doing and what it waits for, as both doors show it. */
#ifndef STABLEQ_BRANCH_STATUS_H
#define STABLEQ_BRANCH_STATUS_H

#include "ctx.h"

#include <jansson.h>

/*
 * The branches of the store in the config's order (those it no longer
 * has last), from the store and the config alone, as
 * {"branches": [{key, git_branch, version, base_tag, head, configured,
 * tree, queue_dir, patches, latest_candidate, last_verdict, doing,
 * waits_for}]}: tree and queue_dir are the config's (null for a branch it
 * no longer has), patches counts every state (0 included),
 * latest_candidate and last_verdict are the newest candidate and the
 * newest finished one (or null), doing says what the branch does now (or
 * null) and waits_for what it waits for ("nothing" when idle). GET
 * /branches answers it and `stableq branches --json` prints it. A new
 * reference, or NULL (err_msg()).
 */
json_t *branch_status_json(const struct branch_ctx *bc);

/*
 * Records in the store the version each configured branch's tree holds now
 * (its git branch's Makefile), for the status to name: what `stableq
 * branches` does first. A tree that cannot be read is skipped (0); negative
 * on a store error.
 */
int branch_status_refresh(struct branch_ctx *bc);

#endif
