/* review.h: what a reply on the list says about a patch, and what it does to it. */
#ifndef STABLEQ_REVIEW_H
#define STABLEQ_REVIEW_H

#include "patch.h"

#include <sqlite3.h>

struct branch_ctx;

/*
 * A reply read as a person reads it: only its own lines count, not the
 * quoted ones ("> ", ">> ", " > " after any indent) and nothing after the
 * "-- " signature line.
 *   REVIEW_NAK         a line starting NAK or NACK (after white space: "NAK.",
 *                      "NAK:", "Nack, because ..."), or a Nacked-by: trailer.
 *                      Not a negated or quoted mention ("No NAK from me",
 *                      "I won't NAK this", "> NAK").
 *   REVIEW_REGRESSION  "#regzbot introduced: <sha>" or "#regzbot
 *                      ^introduced: <sha>" (the colon optional): regression
 *                      holds the sha (7..40 hex digits, lower-case), or a
 *                      version range ("v6.1.192..v6.1.193") recorded as
 *                      written: not a commit, nothing resolves it.
 *   REVIEW_DROP        asks to drop it: "please drop", "please don't apply",
 *                      "do not apply", "please revert", ... as a request
 *                      ("we drop this lock" is not one).
 *   REVIEW_WITHDRAW    "NAK withdrawn", "ignore my NAK", "I withdraw my
 *                      NAK": its author's earlier NAK taken back (such a
 *                      line is not a NAK itself). Whether the author NAKed
 *                      before is review_apply()'s to find out.
 *   REVIEW_REPORT      a tester's results, parsed into report: Guenter
 *                      Roeck's ("Build results:" / "Qemu test results:",
 *                      each "total: N pass: N fail: N"), LKFT's ("## Test
 *                      result summary" "total: N, pass: N, fail: N, ...",
 *                      "## Build Summary" "* arm: N total, N passed, N
 *                      failed") and KernelCI's ("<tree>/<branch> build: N
 *                      builds: N failed, N passed", "... boot: N boots: N
 *                      failed, N passed", "... baseline: N runs, N
 *                      regressions"). Build counts go to build_*, run-time
 *                      ones (Qemu, LKFT's tests, KernelCI's boots) to
 *                      qemu_*. A report holds nothing by itself: it is for
 *                      the rc (rc.h, rc_reply()).
 * quote: the reply's own lines (its first 20 lines, 2 KiB), each as
 * "> line", made safe (one line each, no control characters), for the
 * reason a held or flagged patch shows. Strings owned: review_release().
 */
enum {
	REVIEW_NAK = 1,         /* a real NAK: a line starting NAK/NACK, Nacked-by:, not negated or quoted */
	REVIEW_REGRESSION = 2,  /* #regzbot introduced: / #regzbot ^introduced: <sha> */
	REVIEW_DROP = 4,        /* "please drop", "please don't apply", ... */
	REVIEW_WITHDRAW = 8,    /* "NAK withdrawn", "ignore my NAK": the author's earlier NAK taken back */
	REVIEW_REPORT = 16,     /* a tester's results report was parsed into .report */
};
struct review_report {
	int build_total, build_pass, build_fail;  /* "Build results: total: N pass: N fail: N"; -1 when absent */
	int qemu_total, qemu_pass, qemu_fail;     /* "Qemu test results: total: N pass: N fail: N"; -1 when absent */
	char *summary;                            /* one safe line describing it, owned */
};
struct review {
	unsigned says;
	char *regression;
	char *quote;
	struct review_report report;
};

void review_read(struct review *r, const struct patch *reply);
void review_release(struct review *r);

/*
 * A reply that says no (a NAK, a drop request, a regression report) gives
 * no Tested-by, Reviewed-by or Acked-by, whatever trailers it carries: a
 * tester who NAKs has not tested it good. review_apply() adds none of its
 * trailers; the rc's reader (rc_reply()) counts no Tested-by from it.
 */
int review_is_negative(const struct review *r);

/*
 * Applies a reply to patch_id (inside the caller's transaction; bc gives
 * the store and the actor; a patch of another branch is acted on in a
 * context of its own):
 *  - its Reviewed-by, Acked-by and Tested-by trailers become tags of the
 *    patch (each once), unless the reply is negative (review_is_negative());
 *  - a NAK, regression report or drop request holds a patch that is
 *    imported, checked, queued or held by the checks, as a reply's hold
 *    (queue_hold(), QUEUE_HOLD_REPLY): the checks never lift it, only a
 *    maintainer's `stableq override ID --reason TEXT` does. The reason
 *    names the reply's author and Message-Id, quotes it and names that
 *    command. A patch held by a reply already gets the new reason beside
 *    the old;
 *  - the same against a released patch flags it broken (flag_patch_locked(),
 *    FLAG_UNTRUSTED: a mail from the list never reverts by itself; the
 *    revert path auto_revert configures takes it from there);
 *  - a withdrawal from an address that NAKed the patch before is recorded
 *    and shown beside the hold (the hold stays: the maintainer decides).
 * Each (patch, reply) is applied once (the reviews table): applying the
 * same reply again changes nothing. *held is set when it held or flagged
 * the patch, *trailers to the number of tags added. Never sends mail to
 * the list: stableq does not answer it (a flag mails the patch's author).
 */
int review_apply(struct branch_ctx *bc, long long patch_id,
		 const struct patch *reply, const struct review *r,
		 int *held, int *trailers);

#endif
