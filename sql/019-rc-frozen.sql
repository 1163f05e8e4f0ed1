-- 019-rc-frozen.sql: an rc is a frozen set. `stableq rc` records each
-- patch it sends with the hash of its diff as sent, the tree it made (the
-- commits on the branch's tip, the "Linux 6.1.193-rc1" bump, the tag
-- v6.1.193-rc1) and the patch file; `stableq release` releases that set
-- and nothing else, refusing when one of them changed since. An unchanged
-- queue is the open rc again (set_hash), not a new one. Replies to the
-- cover that hold the release (a NAK, a tester's failing report without a
-- Tested-by) are rc_reports rows; a maintainer's `stableq rc override`
-- lifts the holds up to override_upto. Written by kernel-queue/review/rc*.c.
ALTER TABLE rc_patches ADD COLUMN diff_hash TEXT;  -- sha256 of the diff sent
ALTER TABLE rc_patches ADD COLUMN rc_commit TEXT;  -- its commit under the rc's tag
ALTER TABLE rcs ADD COLUMN set_hash TEXT;          -- sha256 of "id diff_hash" lines
ALTER TABLE rcs ADD COLUMN base_commit TEXT;       -- the branch's tip it was made on
ALTER TABLE rcs ADD COLUMN rc_commit TEXT;         -- the "Linux 6.1.193-rc1" commit
ALTER TABLE rcs ADD COLUMN tag TEXT;               -- v6.1.193-rc1
ALTER TABLE rcs ADD COLUMN patch_file TEXT;        -- path of patch-6.1.193-rc1.gz
ALTER TABLE rcs ADD COLUMN release_commit TEXT;    -- the "Linux 6.1.193" commit
ALTER TABLE rcs ADD COLUMN released_at INTEGER;    -- unix seconds
ALTER TABLE rcs ADD COLUMN override_reason TEXT;   -- `stableq rc override --reason`
ALTER TABLE rcs ADD COLUMN override_actor TEXT;
ALTER TABLE rcs ADD COLUMN override_upto INTEGER;  -- rc_reports.id it covers
ALTER TABLE rcs ADD COLUMN report_message_id TEXT; -- stableq's own tester reply
CREATE TABLE rc_reports (
	id INTEGER PRIMARY KEY,
	rc_id INTEGER NOT NULL REFERENCES rcs(id) ON DELETE CASCADE,
	message_id TEXT NOT NULL,           -- the reply
	kind TEXT NOT NULL CHECK (kind IN ('nak','report','withdrawn')),
	tester TEXT NOT NULL,               -- its From address, lower-case
	name TEXT,
	tested INTEGER NOT NULL DEFAULT 0,  -- it carried a Tested-by
	blocks INTEGER NOT NULL DEFAULT 0,  -- holds the release until an override
	build_total INTEGER, build_pass INTEGER, build_fail INTEGER,
	qemu_total INTEGER, qemu_pass INTEGER, qemu_fail INTEGER,
	summary TEXT,                       -- one safe line
	quote TEXT,                         -- the reply's own lines, made safe
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	UNIQUE (rc_id, message_id, kind)
);
