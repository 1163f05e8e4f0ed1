/* rc.h: the -rc review cycle: the review series mailed to the list, its window, its testers. */
#ifndef STABLEQ_RC_H
#define STABLEQ_RC_H

#include <jansson.h>
#include <sqlite3.h>

struct branch_ctx;

/*
 * Prepares the next review series of the selected branch, as stable
 * maintainers send it, into the outbox (to rc_list) in one transaction:
 * the cover "[PATCH 6.1 00/N] 6.1.11-rc1 review" (00 as wide as N, at
 * least two digits, as stable maintainers number them: the version, the
 * deadline = now + rc_window, where to fetch it, the patches by author,
 * a diffstat) and each queued patch as "[PATCH 6.1 NNN/N] subject",
 * In-Reply-To the cover. The version is the tree's next (6.1.10 -> 6.1.11,
 * after a release the one after that); N of -rcN counts the rcs of that
 * version. The previous open rc of the branch is superseded. Held patches
 * are not queued, so a patch held in -rc1 leaves -rc2. Refuses (ERR_INVALID)
 * without rc_list, (ERR_CONFLICT) with nothing queued. *id: the rc.
 */
int rc_prepare(struct branch_ctx *bc, long long *id);

/*
 * 0 when the selected branch may be released; ERR_CONFLICT naming why
 * when its open rc's window has not ended (the deadline) or a patch of it
 * is held. A branch without an rc is not held back. rc_released() marks
 * the open rc released (inside the caller's transaction).
 */
int rc_release_check(struct branch_ctx *bc);
int rc_released(sqlite3 *db, long long branch);

/*
 * A reply's target among the rc's mails: 1 and *rc (and *patch for a
 * patch mail, 0 for the cover) when message_id is one of them, else 0.
 */
int rc_by_message_id(sqlite3 *db, const char *message_id, long long *rc,
		     long long *patch);
/* A tester's Tested-by on an rc (once per tester): 1 added, 0 known. */
int rc_add_tested(sqlite3 *db, long long rc, const char *tester,
		  const char *name, const char *message_id);

/* An rc (id 0: the branch's newest) as JSON: version, deadline, state,
 * open, patches [{pos, id, subject, state}], tested [{tester, name}]. */
json_t *rc_json(sqlite3 *db, long long branch, long long id);

#endif
