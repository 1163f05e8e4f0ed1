-- 002-build-tree.sql: builds are keyed by the tree they built, so a
-- candidate whose tree was built before reuses that build.
ALTER TABLE builds ADD COLUMN tree_sha TEXT;
CREATE INDEX builds_tree ON builds(tree_sha, config_hash, result);
ALTER TABLE reverts ADD COLUMN base_commit TEXT;  -- branch tip the reverts start from
ALTER TABLE reverts ADD COLUMN chain_tip TEXT;    -- last revert commit, before the branch moves
