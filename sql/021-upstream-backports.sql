-- 021-upstream-backports.sql: the upstream index (sql/011) looked up by the
-- upstream commit a stable backport names ("commit X upstream."): is a
-- follow-up released in this branch's series? (kernel-queue/checks/
-- upstream.c, upstream_backport_in). On its first 12 digits, as the SHAs.
CREATE INDEX upstream_commits_backport12
	ON upstream_commits(substr(backport_of, 1, 12));
