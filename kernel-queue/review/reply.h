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

/*
 * Acts on a reply the mail intake read (its row in mail_messages is
 * stored): a reply to a proposed revert's mail stops it; up its thread
 * (mail_messages: replies to replies, a cover's patches, an -rc's mails)
 * to the patches it is about, its review (review.h: trailers, holds) is
 * applied to each, a "#regzbot introduced:" line to the patch with that
 * upstream SHA, a Tested-by on an -rc cover to the rc. What it did is
 * written as the row's action, in the same transaction. Adds to *res.
 */
int reply_apply(struct branch_ctx *bc, const struct patch *reply,
		struct reply_counts *res);

#endif
