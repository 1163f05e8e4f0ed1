-- 018-reply-holds.sql: who holds a held patch, and what each reply said
-- about a patch.
--
-- A patch is held by the checks (a fix-up of a broken patch, reverted
-- after a release: a re-check may lift it) or by a reply on the list (a
-- NAK, a drop request, a #regzbot report: only a maintainer's override
-- lifts it). patches.hold says which: 'check' or 'reply' while the patch
-- is held, NULL otherwise (queue_hold() writes it, any other move of
-- state clears it). A hold of another kind, or of none, is not the
-- checks' to lift.
ALTER TABLE patches ADD COLUMN hold TEXT;

-- A store made before: the checks' holds are those whose newest fixup
-- verdict held the patch; every other hold came from a reply.
UPDATE patches SET hold = CASE
	WHEN (SELECT result FROM verdicts v WHERE v.patch_id = patches.id
	      AND v.check_name = 'fixup' ORDER BY v.id DESC LIMIT 1) = 'held'
	THEN 'check' ELSE 'reply' END
	WHERE state = 'held';

-- What a reply said about a patch and what it did (review_apply()): one
-- row per (patch, reply), so a reply applied again changes nothing. says
-- holds the REVIEW_* bits (review.h: 1 NAK, 2 regression, 4 drop, 8
-- withdraw, 16 report); effect: held, flagged (a released patch), noted
-- (beside a hold made already), withdrawn (a NAK of the same address
-- taken back: shown beside the hold, which stays) or recorded.
CREATE TABLE reviews (
	id INTEGER PRIMARY KEY,
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	message_id TEXT NOT NULL,
	author_email TEXT,
	says INTEGER NOT NULL,
	regression TEXT,                    -- the sha or range #regzbot named
	effect TEXT NOT NULL CHECK (effect IN
		('held','flagged','noted','withdrawn','recorded')),
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	UNIQUE (patch_id, message_id)
);
CREATE INDEX reviews_author ON reviews(patch_id, author_email);
