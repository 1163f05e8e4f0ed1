/* revert.h: flag broken patches, revert or drop them with their dependents, confirm, override held fix-ups. */
#ifndef STABLEQ_REVERT_H
#define STABLEQ_REVERT_H

#include "ctx.h"
#include "flag.h"

#include <jansson.h>

/*
 * What a flag leads to (the flag itself is store/flag.h's flag_locked()):
 * flag_patch_locked() flags inside the caller's transaction (event id or
 * negative); FLAG_UNTRUSTED also stores the plan, in that transaction, as
 * a revert 'planned' whose reason names who flagged and that a maintainer
 * (admin) must run it. A trusted flag whose evidence is a bisection that
 * named this patch and was confirmed both ways is reported to
 * regressions_list (when set) with "#regzbot introduced: <upstream sha>",
 * in the same transaction (bisect_report_culprit()). flag_patch_as(): the
 * same in a transaction of its own; flag_patch(): flag_patch_as() trusted.
 */
long long flag_patch_locked(struct branch_ctx *bc, long long patch_id,
			    const char *reason, const struct evidence *ev,
			    enum flag_trust trust);
int flag_patch_as(struct branch_ctx *bc, long long patch_id,
		  const char *reason, const struct evidence *ev,
		  enum flag_trust trust);
int flag_patch(struct branch_ctx *bc, long long patch_id, const char *reason,
	       const struct evidence *ev);

/*
 * The plan for taking a patch out: itself and every patch that goes with
 * it (dependencies table, transitively), newest first, each 'drop' (still
 * queued) or 'revert' (released). Returns a JSON object {patch_id, items:
 * [{patch_id, subject, action, why}]} or NULL (unknown id, already
 * reverted: err_msg()).
 */
json_t *revert_plan(struct branch_ctx *bc, long long patch_id);

/*
 * Stores the plan as a revert in state 'planned' (auto_revert = plan): it
 * waits there for a maintainer, who runs it with revert_run().
 */
int revert_store_plan(struct branch_ctx *bc, long long patch_id,
		      const char *reason);
/*
 * The one way to take a broken patch out, for the CLI, the daemon and the
 * API alike: the plan carried out, then (confirm) the request for its
 * confirmation recorded: a pending 'confirm' candidate of the branch and
 * what is left of the queue, linked to the revert (*confirm_id). Every
 * door confirms it the same way, with revert_confirm(): the CLI at once,
 * the daemon as its next step after the API or its own revert (the
 * `confirm` job, revert_confirm_due(), runs `stableq revert --confirm`).
 */
int revert_run(struct branch_ctx *bc, long long patch_id, const char *reason,
	       int confirm, long long *revert_id, long long *confirm_id);
/*
 * Runs the revert's confirmation candidate (*confirm_id) if it has no
 * verdict yet, then records the outcome: state 'confirmed' when it
 * passes, an 'unconfirmed' event (state stays 'done') when not. Returns 1
 * confirmed, 0 not, negative when the candidate could not be run
 * (ERR_NOTFOUND: no such revert, or none with a confirmation).
 */
int revert_confirm(struct branch_ctx *bc, long long revert_id,
		   long long *confirm_id,
		   void (*progress)(const char *line, void *ctx), void *ctx);
/* A revert whose confirmation is still to be run or recorded (1, *id). */
int revert_confirm_due(struct branch_ctx *bc, long long *revert_id);
/*
 * Jobs of the daemon's: a broken patch still to take out (*id), with
 * auto_revert = yes (revert_due) or waiting for a maintainer's plan
 * (revert_plan_due: auto_revert = plan); a revert to complete after a
 * crash (revert_resume_due).
 */
int revert_due(struct branch_ctx *bc, long long *id);
int revert_plan_due(struct branch_ctx *bc, long long *id);
int revert_resume_due(struct branch_ctx *bc, long long *id);
/* Completes reverts interrupted by a crash. Safe to call at every start. */
int revert_resume(struct branch_ctx *bc);
json_t *revert_json(sqlite3 *db, long long revert_id);
json_t *revert_list_json(sqlite3 *db);
/* The revert patches of a revert, concatenated (text/x-patch); caller frees. */
char *revert_patch_text(sqlite3 *db, long long revert_id);

/*
 * A maintainer overrides a held fix-up (or a patch waiting for a human)
 * with a reason: it is queued, the override recorded as a verdict and an
 * event.
 */
int override_patch(struct branch_ctx *bc, long long patch_id,
		   const char *reason);

/*
 * Guarded automatic reverts (revert-guard.c). revert_guard(): 1 when the
 * daemon may revert patch_id by itself, else 0 with *why (caller frees):
 * its author added the trailer "Stable-no-autorevert: <why>", the bisection
 * that named it was not confirmed both ways, or revert_daily_limit
 * automatic reverts of the branch were made today (UTC).
 *
 * revert_auto(): the daemon's revert (auto_revert = yes, or a proposal
 * whose grace ran out): revert_run() when the guard allows it (1), else
 * the plan stored for a maintainer with the guard's reason (0).
 *
 * revert_propose() (auto_revert = propose): the guard first (refused: the
 * plan for a maintainer); then the author is mailed the evidence and the
 * plan, and the revert is due revert_grace seconds later
 * (revert_grace_due()). revert_proposal_stop(): a reply to that mail
 * (message_id: the mail it answers; by: who and which reply) stops it and
 * stores the plan for the maintainer; 1 when it stopped one, 0 when
 * message_id is no waiting proposal's.
 */
int revert_auto(struct branch_ctx *bc, long long patch_id, long long *revert_id,
		long long *confirm_id);
int revert_propose(struct branch_ctx *bc, long long patch_id);
/*
 * The intake's door to revert_proposal_stop(): reply is a mail answering
 * reply->in_reply_to. An automatic reply (reply->auto_reply: an
 * out-of-office answer, RFC 3834) is no objection: the proposal keeps
 * waiting (0, an event on the patch says it came). Else
 * revert_proposal_stop(reply->in_reply_to, by).
 */
struct patch;
int revert_proposal_answer(struct branch_ctx *bc, const struct patch *reply,
			   const char *by);
int revert_propose_due(struct branch_ctx *bc, long long *id);
int revert_grace_due(struct branch_ctx *bc, long long *id);

/* {"revert id": its culprit's patch id} of the ids (a JSON array text). */
json_t *revert_patch_ids(sqlite3 *db, const char *ids);
/* 0 when revert id exists, ERR_NOTFOUND or negative. */
int revert_exists(sqlite3 *db, long long id);
/*
 * The reverts that took patch_id out, oldest first: {id, state, reason,
 * actor, created_at, finished_at, action, why, revert_commit,
 * culprit_patch_id}.
 */
json_t *revert_items_of_json(sqlite3 *db, long long patch_id);

#endif
