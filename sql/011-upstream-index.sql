-- 011-upstream-index.sql: the configured upstream clone (upstream_repo) as a
-- commit-to-release index, built once and then only for what is new
-- (kernel-queue/upstream.c owns these tables). Each commit: its subject, the
-- first version tag that contains it (NULL until one does), the upstream
-- commit it names when it is a stable backport; and the commits it names in
-- its Fixes: tags and "This reverts commit X." lines.
CREATE TABLE upstream_tags (
	repo TEXT NOT NULL,
	name TEXT NOT NULL,              -- v6.8, v6.1.5, v6.9-rc1
	commit_sha TEXT NOT NULL,
	released_at INTEGER NOT NULL,    -- the tagged commit's time (epoch)
	PRIMARY KEY (repo, name)
);
CREATE TABLE upstream_commits (
	repo TEXT NOT NULL,
	sha TEXT NOT NULL,               -- 40 hex digits
	subject TEXT NOT NULL,
	release TEXT,                    -- the first tag containing it, or NULL
	backport_of TEXT,                -- "commit X upstream." of a backport
	PRIMARY KEY (repo, sha)
);
CREATE INDEX upstream_commits_sha12 ON upstream_commits(substr(sha, 1, 12));
CREATE TABLE upstream_refs (
	repo TEXT NOT NULL,
	sha TEXT NOT NULL,               -- the commit that names target
	kind TEXT NOT NULL CHECK (kind IN ('fixes', 'reverts')),
	target TEXT NOT NULL             -- lower-case hex as written (8-40)
);
CREATE INDEX upstream_refs_target12 ON upstream_refs(substr(target, 1, 12));
-- where the last build stopped: the clone's HEAD then
CREATE TABLE upstream_index_state (
	repo TEXT PRIMARY KEY,
	head TEXT NOT NULL,
	commits INTEGER NOT NULL,
	indexed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
