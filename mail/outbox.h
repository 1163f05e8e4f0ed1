/* outbox.h: the outbox delivered: mail composed into it (compose.h) goes out over SMTP, with retries. */
#ifndef STABLEQ_OUTBOX_H
#define STABLEQ_OUTBOX_H

#include "config.h"

#include <jansson.h>
#include <sqlite3.h>

/*
 * Delivers due mail over SMTP (libcurl, cfg->smtp_url) one at a time, the
 * oldest first, each at most once per call: a mail is due when it is
 * 'queued' with next_attempt_at <= now, or 'sending' (left by a process
 * that died while sending it). Each is marked 'sending' with attempts + 1
 * in its own committed transaction before the SMTP conversation, then
 * 'sent' (sent_at) or, with the error in last_error, back to 'queued'
 * with next_attempt_at = now + outbox_backoff(cfg->mail_backoff,
 * attempts), or 'failed' once attempts reach cfg->mail_max_attempts.
 * A failure of the relay as a whole (unreachable, timed out, refusing
 * logins) ends the pass: the other mail stays queued, untouched.
 *
 * Empty cfg->smtp_url: nothing is sent, one log line says how much waits.
 * One deliverer per database: a lock file next to it ("<db>-outbox.lock",
 * flock) makes a second concurrent call return 0 at once; the kernel
 * drops the lock of a killed process, so its 'sending' mail is retried
 * on the next call.
 *
 * The duplicate window: a mail can reach its recipients twice only if the
 * process dies (or the store cannot be written) after the relay answered
 * 250 to the end of DATA and before the 'sent' commit that follows
 * immediately -- one SQLite commit; QUIT is said after it. A crash at any
 * other point loses nothing and sends nothing twice: before DATA ends the
 * relay has not taken the mail, and the retry sends it once.
 *
 * Must be called outside a transaction. Returns the number sent, or
 * negative (the store failed).
 */
int outbox_deliver(sqlite3 *db, const struct config *cfg, int max);

/* What happened to one mail in a delivery pass. Strings borrowed. */
struct outbox_report {
	long long mail_id;
	long long patch_id;
	const char *state;         /* sent, queued (will retry), failed */
	int attempts;              /* including this one */
	long long next_attempt_at; /* unix seconds, when queued */
	const char *rcpt;          /* the first recipient (the author) */
	const char *error;         /* NULL when sent */
};
typedef void outbox_report_fn(const struct outbox_report *r, void *arg);

/*
 * outbox_deliver(), calling fn for each mail tried instead of logging it
 * (`stableq mail send` prints a line per mail). max <= 0: no limit.
 */
int outbox_deliver_report(sqlite3 *db, const struct config *cfg, int max,
			  outbox_report_fn *fn, void *arg);

/* Longest wait between two attempts, in seconds. */
#define OUTBOX_BACKOFF_MAX 86400
/*
 * Seconds to wait after the attempts-th failed attempt: base *
 * 2^(attempts - 1), at most OUTBOX_BACKOFF_MAX; 0 when base <= 0.
 */
long long outbox_backoff(int base, int attempts);

/* A job of the daemon's: smtp_url is set and a mail is due now. */
struct branch_ctx;
int outbox_due(struct branch_ctx *bc, long long *id);

/*
 * What the outbox holds. outbox_list_json: the newest limit mails in state
 * (NULL: any) of the patches (a JSON array text of ids; NULL: any mail),
 * with "branch" null for the caller to fill from patch_id and "head" the
 * first 4 KiB of the message. outbox_all_json: every mail in state, oldest
 * first, without the message. outbox_patch_json: one patch's mail.
 */
json_t *outbox_list_json(sqlite3 *db, const char *state, const char *patches,
			 long long limit);
json_t *outbox_all_json(sqlite3 *db, const char *state);
json_t *outbox_patch_json(sqlite3 *db, long long patch_id);
/* The message as it goes out (*text: caller frees); ERR_NOTFOUND. */
int outbox_text(sqlite3 *db, long long id, char **text);
/*
 * Cancels the mail whose Message-Id is message_id while no relay has taken
 * it (state 'queued', held or not), inside the caller's transaction: it
 * becomes 'failed' with last_error "cancelled: <reason>" (never sent, kept
 * for the record) and an event 'cancelled' by actor. A superseded -rc's
 * series that is still waiting goes this way. 1 when cancelled, 0 when it
 * was sent, is being sent or is not there, negative on error.
 */
int outbox_cancel(sqlite3 *db, const char *message_id, const char *reason,
		  const char *actor);
/* {state: count}. */
json_t *outbox_state_counts(sqlite3 *db);
/* How many mails are due at now (or being sent). */
int outbox_waiting(sqlite3 *db, long long now, long long *n);

#endif
