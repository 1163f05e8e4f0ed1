-- 015-check-prefix.sql: the running tree of a branch's queue, kept by the
-- checks (kernel-queue/checks/prefix.c) so the next import starts from it
-- instead of applying every queued patch again.
--
-- prefix_key names what the tree is: a hash of the branch tip and the
-- queued patches in queue order, each by id and the hash of its diff. A
-- run whose queued prefix hashes the same starts from `tree` (written to
-- the stable tree's object database); anything else applies as before.
CREATE TABLE check_prefix (
	branch_id INTEGER PRIMARY KEY REFERENCES branches(id) ON DELETE CASCADE,
	prefix_key TEXT NOT NULL,
	tree TEXT NOT NULL,
	patches INTEGER NOT NULL,           -- how many queued patches it holds
	kept_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
