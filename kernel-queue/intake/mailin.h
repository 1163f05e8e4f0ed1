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
	size_t incomplete;        /* series held for a missing part */
	size_t completed;         /* series a late part completed: let go */
	size_t flagged;           /* released patches a posted revert flagged */
};

/*
 * One pass over the configured sources (intake_maildir, intake_inbox):
 * every message not read before is parsed; patches for a configured
 * branch (a "[PATCH 6.1 ...]" prefix, every branch a multi-tree prefix
 * names, "[PATCH 6.1/6.6]", "[PATCH 6.1.y,6.6.y]", "[PATCH 5.15 6.1]";
 * else a "Cc: stable # 6.1" annotation covering it) are assembled into
 * series as b4 am takes a thread (thread.h), across passes (mail_series:
 * a part or a cover that answers a series read before joins it), and
 * stored part by part (intake_store_locked()):
 *   - a vN its author sent in the thread of the earlier version
 *     supersedes it patch by patch: the same diff keeps the stored patch
 *     and its checks, another diff replaces it in its place; a patch in
 *     an open rc is not replaced: the vN is stored beside it and held,
 *     naming the rc;
 *   - a vN from another address, or outside the earlier version's thread,
 *     replaces nothing: a part that would replace a live patch is stored
 *     beside it and held until a maintainer confirms it;
 *   - a series missing a part is held ("series incomplete: missing 2/3",
 *     as b4 am says it) until the part arrives, which then goes in n/m
 *     order in the queue, and the held patches go on to the checks;
 *   - a posted revert (Revert "...", with Fixes: or "This reverts commit
 *     <sha>") of a released patch flags that patch broken, as untrusted
 *     evidence (flag_patch_locked(), FLAG_UNTRUSTED).
 * A mail that fails in itself is recorded invalid; the rest of its series
 * goes on. Replies then act on the patches their thread leads to
 * (reply.h). The patches stored are checked at the end of the pass as
 * every intake checks them (intake_check()), with those an earlier pass
 * stored and did not get to check, unless a reply or the series held
 * them. stableq's own mail (From: mail_from, or an X-Stableq- header) is
 * ignored: it never acts on what it sent and never answers.
 *
 * Nothing is lost when a pass is cut short (a crash, kill -9, a store
 * locked longer than the busy timeout, a full disk): every message gets
 * its row in mail_messages (by Message-Id) in the same transaction as
 * what it did, a reply's row first without an action and its effect with
 * its action after, so a reply whose row has no action is applied by the
 * next pass; where each source stopped is recorded last, so the next
 * pass reads the same mail again and the rows make that a no-op. A store
 * error stops the pass (negative, err_msg() says why): only a message
 * bad in itself (no Message-Id, broken MIME, a malformed patch, over
 * max_patch_bytes) is counted invalid, logged with its source and what
 * was wrong, and stored as nothing else; its file or commit stays where
 * it is. A file in a maildir's new/ that does not parse while it is
 * younger than a minute may still be being written: it is read again on
 * the next pass; a file that changes (size, mtime) is read again. A
 * maildir is read, never changed: tmp/ is not read, and a file that moves
 * from new/ to cur/ while it is read is read once.
 */
int mailin_run(struct branch_ctx *bc, struct mailin_result *res);

/* The daemon's job: a source changed since the last pass (first branch only). */
int mailin_due(struct branch_ctx *bc, long long *id);

#endif
