/* outbox.h: mail to patch authors, written with the event that causes it, sent later. */
#ifndef STABLEQ_OUTBOX_H
#define STABLEQ_OUTBOX_H

#include "config.h"

#include <jansson.h>
#include <sqlite3.h>

/* What the mail tells the author. All strings borrowed. */
struct notice {
	long long patch_id;
	long long event_id;      /* the event this mail reports */
	const char *kind;        /* flagged, dropped, reverted, held, rejected, proposed */
	const char *what;        /* one line: "Your patch was dropped from the 6.1 queue" */
	const char *why;         /* the reason, several lines allowed */
	const char *log_excerpt; /* the failing test's log lines, or NULL */
	const char *revert_patch;/* the revert as a mail-format patch, or NULL */
	/*
	 * The patch, as the mail names it: {subject, subject_prefix,
	 * author_name, author_email, message_id, in_reply_to, upstream,
	 * branch (its queue's git branch), signoffs: [{name, email}] in
	 * trailer order}. mail/ never reads the queue's tables: the caller
	 * gives it (queue_notify() in kernel-queue builds it). Borrowed.
	 */
	const json_t *patch;
};

/*
 * Builds a plain-text RFC 5322 mail about a patch (To: its author; Cc: the
 * Signed-off-by chain and cfg->mail_cc; In-Reply-To/References: the patch's
 * Message-Id; a fresh Message-Id) and writes it into the outbox, inside
 * the caller's transaction, so the mail exists iff the event does.
 * A malformed author address stores the mail as 'invalid' with the reason
 * (reported, never sent). Returns the mail id (> 0) or negative.
 *
 * One mail per patch per chain of events: while the patch's last mail is
 * still 'queued' (no relay has taken it), n amends that mail instead of
 * adding one: it is composed again telling every event of its chain
 * (mail.chain, oldest first), keeps its id and Message-Id, and an
 * 'amended' event is logged. Flagged then dropped is one mail.
 *
 * Subject, as stable maintainers write it: Patch "<subject>" has been
 * dropped from the 6.1-stable queue (reverted from ... tree, is held in
 * ..., flagged as broken in ..., rejected for ...), for the last event;
 * the patch's subject without Re: or [PATCH ...] in front, and
 * "6.1-stable" from cfg->branch (linux-6.1.y).
 *
 * Addresses are parsed by address_parse() (address.h). Malformed
 * Signed-off-by or mail_cc addresses are left out (logged), an address
 * that recurs (in any case) is named once, the author never in Cc. An
 * invalid mail_from also makes the mail 'invalid'. The log excerpt keeps
 * its last 32 KiB; a revert over 1 MiB is not quoted. Outside text is
 * made valid UTF-8, control characters in header text become spaces (no
 * text from a patch can end a header line); header text is RFC 2047
 * encoded when not ASCII or when it holds "=?"; body lines longer than
 * 998 octets are broken (8bit transfer encoding). The message is stored
 * as sent: CRLF line ends.
 */
long long outbox_add(sqlite3 *db, const struct config *cfg,
		     const struct notice *n);

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
struct app;
int outbox_due(struct app *app, long long *id);

/*
 * A mail to a list (the -rc review series), not about one author: From
 * mail_from, To m->to (an address list), the subject and body given (made
 * safe as outbox_add() does), In-Reply-To/References m->in_reply_to when
 * set, a fresh Message-Id (into *message_id, caller frees) and an
 * X-Stableq-Kind header, so the intake knows its own mail when the list
 * sends it back. Written into the outbox inside the caller's transaction;
 * a malformed address stores it 'invalid'. Returns the mail id or
 * negative.
 */
struct list_mail {
	const char *kind;       /* "rc" */
	long long patch_id;     /* the patch it carries, or 0 */
	const char *to;
	const char *subject;
	const char *in_reply_to; /* without <>, or NULL */
	const char *body;
};
long long outbox_add_list(sqlite3 *db, const struct config *cfg,
			  const struct list_mail *m, char **message_id);

/* The Message-Id (without <>) of mail mail_id, or NULL. Caller frees. */
char *outbox_message_id(sqlite3 *db, long long mail_id);

#endif
