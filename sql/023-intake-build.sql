-- 023-intake-build.sql: where a patch came from, where that decides whether
-- it is built before a maintainer queues it (intake_build, docs/sandbox.md):
-- a patch imported from the list's mail, and the From: address it came
-- from. Written in the import's own transaction (kernel-queue/store/origin.c).
CREATE TABLE patch_origins (
	patch_id INTEGER PRIMARY KEY REFERENCES patches(id) ON DELETE CASCADE,
	origin TEXT NOT NULL CHECK (origin IN ('list')),
	sender TEXT NOT NULL DEFAULT ''     -- lower case, '' when it had none
);
-- the list's patches imported before this migration
INSERT OR IGNORE INTO patch_origins (patch_id, origin, sender)
	SELECT patch_id, 'list', lower(COALESCE(author_email, ''))
	FROM mail_messages WHERE kind = 'patch' AND patch_id IS NOT NULL;
