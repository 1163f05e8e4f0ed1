/* guard.h: the bulk-mail guard: mail of one step to too many people waits for a maintainer. */
#ifndef STABLEQ_GUARD_H
#define STABLEQ_GUARD_H

#include "config.h"

#include <sqlite3.h>
#include <stddef.h>

/*
 * A step (one `stableq` command run by hand or by the daemon, one write
 * through the API) that queued mail to more than cfg->mail_bulk_limit
 * authors has all that mail held: the rows keep state 'queued' with hold
 * set to the reason, and outbox_deliver() leaves them until a maintainer
 * releases them (`stableq mail release`, POST /api/v1/mail/release, the
 * dashboard). An import of a whole queue that somehow rejects every patch
 * mails nobody until someone has looked. The -rc review series (kind
 * 'rc': the cover to the list and each patch Cc its author and sign-offs,
 * at most mail_max_recipients each) is a maintainer's own step, `stableq
 * rc` or an admin's POST /rc, and is not held: its review window starts
 * when it is made.
 *
 * Usage: mark = guard_mark(db) before the step, guard_apply()
 * after it (outside a transaction). Mail another process queues in
 * between counts with the step's: the guard errs on the side of holding.
 * A deliverer that runs while the step is still going could send the
 * step's first mails before the guard sees them; the daemon runs its
 * steps and its deliveries one after the other, so it does not.
 */

/* The newest mail id now (0 for none): where a step's mail starts. */
long long guard_mark(sqlite3 *db);

/*
 * Holds the queued mail newer than mark when it goes to more authors (its
 * first recipient, in any case) than cfg->mail_bulk_limit. step names the
 * step in the reason and the event ("import", "POST /patches/{id}/revert").
 * Returns the number of mails held (0 when within the limit), or negative.
 */
int guard_apply(sqlite3 *db, const struct config *cfg, long long mark,
		     const char *step, const char *actor);

/*
 * Releases held mail: the given ids (each must be held: ERR_NOTFOUND
 * naming the first that is not, nothing changed), or every held mail when
 * n is 0. One transaction with an event per mail by actor. Returns the
 * number released, or negative.
 */
int guard_release(sqlite3 *db, const long long *ids, size_t n,
		 const char *actor);

/* How many mails wait for a release. */
long long guard_held_count(sqlite3 *db);

#endif
