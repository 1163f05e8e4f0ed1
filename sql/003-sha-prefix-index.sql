-- 003-sha-prefix-index.sql: SHAs are matched on their first 12 digits
-- (abbreviations), then as prefixes of each other; index those 12 digits so
-- dedupe and dependency links stay O(log n) per patch.
CREATE INDEX patches_up12 ON patches(substr(upstream, 1, 12));
CREATE INDEX patches_rel12 ON patches(substr(released_commit, 1, 12));
CREATE INDEX patch_tags_v12 ON patch_tags(kind, substr(value, 1, 12));
CREATE INDEX patches_pos ON patches(queue_pos);
