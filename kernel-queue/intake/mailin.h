/* mailin.h: the list's mail read in: a maildir and public-inbox archives, each message once. */
#ifndef STABLEQ_MAILIN_H
#define STABLEQ_MAILIN_H

#include <stddef.h>

struct branch_ctx;

/*
 * What one pass found. read: messages taken from the sources (new files of
 * a maildir, commits of an epoch after the last one read); duplicates: a
 * Message-Id seen before (a second delivery, the same mail in the maildir
 * and the archive): nothing changes.
 */
struct mailin_result {
	size_t read, duplicates;
	size_t series, patches;   /* imported, through intake */
	size_t superseded;        /* earlier versions a v2 replaced */
	size_t replies, held, trailers;
	size_t tested;            /* Tested-by on an -rc cover */
	size_t stopped;           /* proposed reverts a reply stopped */
	size_t ignored;           /* not for a configured branch, stableq's own */
	size_t invalid;           /* named in the log with what was wrong */
};

/*
 * One pass over the configured sources (intake_maildir, intake_inbox):
 * every message not read before is parsed; patches for a configured
 * branch (a "[PATCH 6.1 ...]" prefix, else a "Cc: stable # 6.1"
 * annotation covering it) are assembled into series (thread.h: the cover,
 * n/m order, a v2 drops the earlier version's live patches) and imported
 * through intake_import_buffer_to(), a series in one transaction; replies
 * then act on the patch their thread leads to (review.h: trailers, holds),
 * and a "#regzbot introduced:" line on the patch with that upstream SHA.
 * The patches imported are checked at the end of the pass as every intake
 * checks them (intake_submit(), intake_check()), those no reply held.
 * stableq's own mail (From: mail_from, or an X-Stableq- header) is
 * ignored: it never acts on what it sent and never answers.
 *
 * Every message gets a row in mail_messages (by Message-Id) in the same
 * transaction as what it did; where each source stopped is recorded last,
 * so a crash reads some mail again and the Message-Ids make that a no-op.
 * A bad message (no Message-Id, broken MIME, a malformed patch, over
 * max_patch_bytes) is counted invalid, logged with its source and what was
 * wrong, and stored as nothing else; its file or commit stays where it is.
 * A maildir is read, never changed: tmp/ is not read, and a file that
 * moves from new/ to cur/ while it is read is read once.
 */
int mailin_run(struct branch_ctx *bc, struct mailin_result *res);

/* The daemon's job: a source changed since the last pass (first branch only). */
int mailin_due(struct branch_ctx *bc, long long *id);

#endif
