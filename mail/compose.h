/* compose.h: mail composed into the outbox, in the caller's transaction: to a patch's author, or to a list. */
#ifndef STABLEQ_COMPOSE_H
#define STABLEQ_COMPOSE_H

#include "config.h"

#include <jansson.h>
#include <sqlite3.h>

/* The lines of a failing test's log a mail quotes: its last ones. */
#define LOG_MAX_LINES 40

/* What the mail tells the author. All strings borrowed. */
struct notice {
	long long patch_id;
	long long event_id;      /* the event this mail reports */
	const char *kind;        /* flagged, dropped, reverted, held, rejected, proposed */
	const char *what;        /* one line: "Your patch was dropped from the 6.1 queue" */
	const char *why;         /* the reason, several lines allowed */
	const char *log_excerpt; /* the failing test's log lines, or NULL */
	const char *test;        /* the test (or "build") the log is of, or NULL */
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
 * its last LOG_MAX_LINES lines and 32 KiB, its control characters made
 * harmless (text_clean_log()), under a line naming the test; a revert over
 * 1 MiB is not quoted. Outside text is
 * made valid UTF-8, control characters in header text become spaces (no
 * text from a patch can end a header line); header text is RFC 2047
 * encoded when not ASCII or when it holds "=?"; body lines longer than
 * 998 octets are broken (8bit transfer encoding). The message is stored
 * as sent: CRLF line ends.
 */
long long compose_notice(sqlite3 *db, const struct config *cfg,
		     const struct notice *n);

/*
 * A mail to a list (the -rc review series), not about one author: From
 * mail_from, To m->to (an address list), Cc m->cc (an address list) and,
 * for a mail carrying a patch (m->patch: {author_name, author_email,
 * signoffs: [{name, email}]}, queue_notice_patch()), its author and
 * Signed-off-by chain; malformed addresses are left out (logged), each
 * address named once, and the Cc list cut so that To and Cc stay within
 * mail_max_recipients (the series is not held for it). The subject and
 * body given (made safe as compose_notice() does), In-Reply-To/References
 * m->in_reply_to when set, the header lines m->headers ("X-stable:
 * review", made one line each), a fresh Message-Id (into *message_id,
 * caller frees) and an X-Stableq-Kind header, so the intake knows its own
 * mail when the list sends it back. Written into the outbox inside the
 * caller's transaction; a malformed list address stores it 'invalid'.
 * Returns the mail id or negative.
 */
struct list_mail {
	const char *kind;       /* "rc", "rc-report" */
	long long patch_id;     /* the patch it carries, or 0 */
	const char *to;
	const char *cc;         /* an address list, or NULL */
	const json_t *patch;    /* Cc its author and sign-offs, or NULL */
	const char *subject;
	const char *in_reply_to; /* without <>, or NULL */
	const char *const *headers; /* "Name: value", NULL-ended, or NULL */
	const char *body;
};
long long compose_list(sqlite3 *db, const struct config *cfg,
			  const struct list_mail *m, char **message_id);

/* The Message-Id (without <>) of mail mail_id, or NULL. Caller frees. */
char *compose_message_id(sqlite3 *db, long long mail_id);

/*
 * A regression stableq confirmed itself, reported to the regressions list
 * as regzbot reads it (Documentation/process/handling-regressions.rst):
 * a paragraph "#regzbot introduced: <sha>" in a new report, or
 * "#regzbot ^introduced: <sha>" when it answers a report (in_reply_to
 * set: the mail it answers is then the report), and "#regzbot title:" in
 * a new report. Sent with compose_list() (kind "regzbot", To r->to), so
 * the intake knows it as stableq's own. Text from the patch and the
 * evidence is made safe as compose_list() does, and cannot add regzbot
 * commands of its own ("#regzbot" in it is written "# regzbot"). An
 * introduced that is not a hex commit id (7 to 40 digits) is ERR_INVALID.
 * Inside the caller's transaction; the mail id or negative.
 */
struct regzbot_report {
	const char *to;            /* the regressions list (an address list) */
	long long patch_id;        /* the culprit */
	const char *subject;       /* its subject */
	const char *introduced;    /* the upstream commit it backports */
	const char *stable_commit; /* its commit on the stable branch, or NULL */
	const char *branch;        /* "6.1" */
	const char *why;           /* the evidence, several lines */
	const char *in_reply_to;   /* the report it answers (no <>), or NULL */
};
long long compose_regzbot(sqlite3 *db, const struct config *cfg,
			  const struct regzbot_report *r, char **message_id);

#endif
