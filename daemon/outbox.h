/* outbox.h: mail to patch authors, written with the event that causes it, sent later. */
#ifndef STABLEQ_OUTBOX_H
#define STABLEQ_OUTBOX_H

#include "config.h"

#include <sqlite3.h>

/* What the mail tells the author. All strings borrowed. */
struct notice {
	long long patch_id;
	long long event_id;      /* the event this mail reports */
	const char *kind;        /* flagged, dropped, reverted, held, rejected */
	const char *what;        /* one line: "Your patch was dropped from the 6.1 queue" */
	const char *why;         /* the reason, several lines allowed */
	const char *log_excerpt; /* the failing test's log lines, or NULL */
	const char *revert_patch;/* the revert as a mail-format patch, or NULL */
};

/*
 * Builds a plain-text RFC 5322 mail about a patch (To: its author; Cc: the
 * Signed-off-by chain and cfg->mail_cc; In-Reply-To/References: the patch's
 * Message-Id; a fresh Message-Id) and inserts it into the outbox, inside
 * the caller's transaction, so the mail exists iff the event does.
 * A malformed author address stores the mail as 'invalid' with the reason
 * (reported, never sent). Returns the mail id (> 0) or negative.
 */
long long outbox_add(sqlite3 *db, const struct config *cfg,
		     const struct notice *n);

/*
 * Delivers due mail over SMTP (libcurl, cfg->smtp_url) one at a time:
 * each is marked 'sending' in its own transaction before the SMTP
 * conversation and 'sent' or back to 'queued' with the error and a backoff
 * after it. Mail left 'sending' by a crash is retried (a duplicate is
 * possible only if the crash fell between the relay's acceptance and the
 * commit). Returns the number sent, or negative.
 */
int outbox_deliver(sqlite3 *db, const struct config *cfg, int max);

#endif
