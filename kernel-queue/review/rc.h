/* rc.h: the -rc review cycle: a frozen set mailed to the list, its window, its testers, its release. */
#ifndef STABLEQ_RC_H
#define STABLEQ_RC_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>

struct branch_ctx;
struct config;
struct review;
struct patch;
struct strbuf;

/*
 * An rc is a frozen set: the queued patches of the branch when `stableq
 * rc` ran, each recorded with the hash of its diff as sent. It is made in
 * the tree and mailed as stable maintainers do it:
 *
 *   - the tree: one commit per patch on the branch's tip (its message and
 *     author), then "Linux 6.1.193-rc1" (the Makefile's SUBLEVEL and
 *     EXTRAVERSION bumped), tagged v6.1.193-rc1 (annotated); the branch
 *     itself does not move. The whole diff is written as
 *     var_dir/stable-review/patch-6.1.193-rc1.gz.
 *   - the mail, into the outbox in one transaction with the rc's rows: the
 *     cover "[PATCH 6.1 000/N] 6.1.193-rc1 review" (where to fetch it:
 *     rc_git_url and the tag, the patch file at public_url; the deadline;
 *     a Pseudo-Shortlog per commit, newest first, topped by the version
 *     bump; `git diff --stat` of the rc) To rc_list, Cc rc_cc, and each
 *     patch "[PATCH 6.1 NNN/N] subject" In-Reply-To the cover, Cc its
 *     author and Signed-off-by chain (within mail_max_recipients), the
 *     in-body From:, its message and a per-patch diffstat after "---".
 *     Every rc mail carries X-stable: review and X-Patchwork-Hint: ignore;
 *     the cover X-KernelTest-Version and X-KernelTest-Deadline too.
 *
 * One lock per branch (a file in var_dir) serializes `stableq rc`, POST
 * /rc and `stableq release` across processes and threads.
 *
 * rc_prepare: the next rc of the selected branch. The version is the
 * tree's next (6.1.192 -> 6.1.193), N of -rcN counts that version's rcs.
 * The open rc of the branch is superseded and its mail not yet sent is
 * cancelled. When the queued patches (ids and diffs) are the open rc's
 * already, nothing is made: returns 1 with *id the open rc. Refuses
 * (ERR_INVALID) without rc_list or with a loopback URL for a list
 * elsewhere (rc_config_check()), (ERR_CONFLICT) with nothing queued or a
 * patch that does not apply. Returns 0 with *id the new rc.
 */
int rc_prepare(struct branch_ctx *bc, long long *id);

/*
 * The config's rc keys, as `stableq serve -n` checks them: a URL the
 * cover would name (rc_git_url, public_url, else http://listen) that is
 * loopback while rc_list names an address elsewhere is refused
 * (ERR_INVALID, naming the key): testers could not fetch it. 0 when fine.
 */
int rc_config_check(const struct config *cfg);

/*
 * What a release did, for the caller to say. Strings owned (rc_release_free).
 */
struct rc_release {
	size_t released;   /* patches released */
	char *version;     /* "6.1.193", NULL without a bump */
	char *rc;          /* the rc released ("6.1.193-rc3"), NULL: no rc */
	size_t waiting;    /* queued patches not in that rc */
	char *next;        /* what they wait for: "6.1.194-rc1" */
	long long rc_id;
};
void rc_release_free(struct rc_release *out);

/*
 * `stableq release`. A branch with an rc (or rc_list set) releases its
 * open rc's set and nothing else, in one transaction with its checks: the
 * window is over (its deadline, --force or not); every patch of the set is
 * still queued (held, dropped...: refused naming it) with the diff it was
 * sent with (else the rc is stale: refused naming the patch); no NAK on
 * the cover and no tester's failing report without a Tested-by holds it
 * (`stableq rc override`); the set passed a candidate (unless force).
 * Each commit gets release_message() (trailers in b4 order, the
 * release_signoff), then "Linux 6.1.193" (release_bump()), tagged
 * v6.1.193; the branch moves after the commit. Patches queued after the
 * rc stay queued for the next one: out->waiting, and an error says so
 * too. A branch without a review cycle releases its queue
 * (release_queue()). Negative with err_msg() saying why, nothing changed.
 */
int rc_release(struct branch_ctx *bc, int force, struct rc_release *out);

/*
 * A reply to the rc's cover (inside the caller's transaction): its
 * Tested-by trailers (as rc_add_tested), a NAK (holds the release of this
 * rc until a maintainer's `stableq rc override`), a tester's report
 * (r->says & REVIEW_REPORT: stored; a failure without a Tested-by blocks
 * release until override). Returns 1 when it recorded something, 0 when
 * the reply said nothing for the rc, negative on error. *action gets a
 * short description appended ("tested rc 3 by a@b", "NAK on rc 3 by ...").
 */
int rc_reply(sqlite3 *db, long long rc, const struct patch *reply,
	     const struct review *r, struct strbuf *action);

/*
 * A maintainer lifts the holds of the branch's open rc (rc 0) or of rc:
 * the NAKs and failing reports recorded so far no longer hold its release
 * (later ones do again). reason is required; an event by bc->actor.
 * ERR_NOTFOUND without such an rc, ERR_CONFLICT when it holds nothing.
 * *id gets the rc.
 */
int rc_override(struct branch_ctx *bc, long long rc, const char *reason,
		long long *id);

/*
 * stableq as the first tester (rc_identity set). rc_report_due: a job of
 * the daemon's: an open rc of the branch whose own reply is not sent yet
 * and whose candidate (exactly its patches) is done (with a failure, once
 * its bisection ended): 1 with *id the rc. rc_report_send: that reply, to
 * the cover (In-Reply-To it), in the list's format ("Build results:" /
 * "Qemu test results:" total pass fail, the KUnit and kselftest counts
 * with regressions against the tip and known failures apart) with
 * "Tested-by: <tester_identity>" on a pass; a failure names the tests,
 * the culprit and its revert. Stored as the rc's report too. ERR_CONFLICT
 * when the candidate is not done; 0 when sent (or sent already).
 */
int rc_report_due(struct branch_ctx *bc, long long *id);
int rc_report_send(struct branch_ctx *bc, long long rc);

/*
 * A reply's target among the rc's mails: 1 and *rc (and *patch for a
 * patch mail, 0 for the cover) when message_id is one of them, else 0.
 */
int rc_by_message_id(sqlite3 *db, const char *message_id, long long *rc,
		     long long *patch);
/* A tester's Tested-by on an rc (once per tester): 1 added, 0 known. */
int rc_add_tested(sqlite3 *db, long long rc, const char *tester,
		  const char *name, const char *message_id);

/*
 * An rc (id 0: the branch's newest) as JSON: id, version, deadline, state,
 * window_open, tag, patch_file, patches [{pos, id, subject, state,
 * stale}], tested [{tester, name}], reports [{kind, tester, name, tested,
 * blocks, build_*, qemu_*, summary, quote}], holds (the reports that hold
 * its release now), override {reason, actor}, waiting (queued patches not
 * in it, for the open rc).
 */
json_t *rc_json(sqlite3 *db, long long branch, long long id);
/* The rc's patch file (*path: caller frees); ERR_NOTFOUND. */
int rc_patch_file(sqlite3 *db, long long id, char **path, char **version);

#endif
