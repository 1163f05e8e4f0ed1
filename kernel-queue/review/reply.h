/* reply.h: what a reply read from the list does to the patches it is about. */
#ifndef STABLEQ_REPLY_H
#define STABLEQ_REPLY_H

#include "patch.h"

#include <stddef.h>

struct branch_ctx;

/* What replies did, added up over a pass. */
struct reply_counts {
	size_t held, trailers;
	size_t tested;            /* Tested-by on an -rc cover */
	size_t stopped;           /* proposed reverts a reply stopped */
};

struct strbuf;

/*
 * The start of the reason the mail intake holds an incomplete series'
 * patches with; it lets them go when the missing part arrives. A review
 * that holds such a patch (a NAK) takes the hold over, so that it stays
 * held when the series completes.
 */
#define REPLY_SERIES_INCOMPLETE "series incomplete: missing "

/*
 * A reply to the mail of a proposed revert stops it (revert_proposal_stop():
 * the plan waits for the maintainer). Runs its own transactions, so it is
 * called outside the caller's, before reply_apply(). 1 when it stopped
 * one (counted in res, said in action), 0 when reply answers no waiting
 * proposal, negative on error.
 */
int reply_stop_proposal(struct branch_ctx *bc, const struct patch *reply,
			struct reply_counts *res, struct strbuf *action);

/*
 * Acts on a reply the mail intake read, inside the caller's transaction
 * (the intake commits the reply's row with what it did, so that a pass
 * cut short applies it again): up its thread (mail_messages: replies to
 * replies; a patch mail's patches on each branch, mail_patches; a cover's
 * series; an -rc's mails) to the patches it is about, its review
 * (review.h: trailers, holds) is applied to each, a "#regzbot
 * introduced:" line to the patch with that upstream SHA, a Tested-by on
 * an -rc cover to the rc. What it did is appended to action ("held 12,
 * 1 trailers on 13"); *patch_id: the first patch it was about (0: none).
 * Adds to *res. Negative on error (nothing of it is to be kept).
 */
int reply_apply(struct branch_ctx *bc, const struct patch *reply,
		struct reply_counts *res, struct strbuf *action,
		long long *patch_id);

#endif
