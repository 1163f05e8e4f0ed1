/* review.h: what a reply on the list says about a patch, and what it does to it. */
#ifndef STABLEQ_REVIEW_H
#define STABLEQ_REVIEW_H

#include "patch.h"

#include <sqlite3.h>

/*
 * A reply's verdict on the patch it answers, read from its own lines (not
 * the quoted "> " ones, nor after the "-- " signature line):
 *   REVIEW_NAK         a "Nacked-by:" trailer, or NAK / NACK as a word
 *   REVIEW_REGRESSION  "#regzbot introduced: <sha>" (regression holds the
 *                      sha, lower-case): the patch whose upstream commit
 *                      that is, wherever the reply sits
 *   REVIEW_DROP        asks to drop it: "please drop", "drop this",
 *                      "please don't apply", "do not apply", "please revert"
 * quote: the reply's own lines (its first 20 lines, 2 KiB), each
 * as "> line", made safe (one line each, no control characters), for the
 * reason a held patch shows. Strings owned: review_release().
 */
enum { REVIEW_NAK = 1, REVIEW_REGRESSION = 2, REVIEW_DROP = 4 };
struct review {
	unsigned says;
	char *regression;
	char *quote;
};

void review_read(struct review *r, const struct patch *reply);
void review_release(struct review *r);

/*
 * Applies a reply to patch_id (inside the caller's transaction): its
 * Reviewed-by, Acked-by and Tested-by trailers become tags of the patch
 * (each once); a NAK, regression report or drop request holds a patch that
 * is imported, checked or queued, with a reason naming the reply's author
 * and Message-Id and quoting it (queue_set_state(): its event names actor).
 * A held patch stays held; a released one is not touched (a reply there
 * is for the maintainer's `flag`/`revert`). *held is set when it held the
 * patch, *trailers to the number of tags added. Never sends mail: stableq
 * does not answer the list.
 */
struct branch_ctx;
int review_apply(struct branch_ctx *bc, long long patch_id,
		 const struct patch *reply, const struct review *r,
		 int *held, int *trailers);   /* inside the caller's transaction */

#endif
