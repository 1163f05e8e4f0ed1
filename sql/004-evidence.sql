-- 004-evidence.sql: what the checks know about a tree besides its git
-- history, and mail that waits for a maintainer.
--
-- Debian's changelog of the tree's source package (changelog.Debian.gz)
-- lists the subject of every upstream stable backport of each X.Y.N
-- release. It is indexed once (per file, redone when its size or mtime
-- changes), not read per patch.
CREATE TABLE changelog_sources (
	id INTEGER PRIMARY KEY,
	path TEXT NOT NULL UNIQUE,
	stamp TEXT NOT NULL,                -- "size:mtime" of the file indexed
	entries INTEGER NOT NULL,
	indexed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE TABLE changelog_entries (
	source_id INTEGER NOT NULL REFERENCES changelog_sources(id) ON DELETE CASCADE,
	series TEXT NOT NULL,               -- 6.1
	sublevel INTEGER NOT NULL,          -- 57: listed under ChangeLog-6.1.57
	subject TEXT NOT NULL               -- white space collapsed, no [arch] or (CVE-...)
);
CREATE INDEX changelog_subject ON changelog_entries(subject COLLATE NOCASE, series, sublevel);

-- The bulk-mail guard: a mail that would go out with more than
-- mail_bulk_limit others of one step waits here until a maintainer
-- releases it (NULL: free to go).
ALTER TABLE mail ADD COLUMN hold TEXT;
