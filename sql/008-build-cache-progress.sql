-- 008-build-cache-progress.sql: builds served from the build cache (no
-- compile), boots counted apart from builds, and the progress of long steps.
ALTER TABLE builds ADD COLUMN cache_key TEXT;       -- the state: tree, config, compiler
ALTER TABLE builds ADD COLUMN cached INTEGER NOT NULL DEFAULT 0; -- 1: artifacts from the cache
CREATE INDEX builds_cache_key ON builds(cache_key, cached);
ALTER TABLE candidates ADD COLUMN boots INTEGER NOT NULL DEFAULT 0; -- QEMU boots it took
ALTER TABLE bisections ADD COLUMN boots_used INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bisections ADD COLUMN steps_done INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bisections ADD COLUMN steps_total INTEGER; -- about how many, known at the start

-- One row per step at work, rewritten as it goes, deleted when it ends.
CREATE TABLE progress (
	kind TEXT NOT NULL,                 -- tree, build, bisection
	subject_id INTEGER NOT NULL DEFAULT 0, -- candidate or bisection, 0 for the tree
	label TEXT NOT NULL,                -- "candidate 12: building", ...
	done INTEGER NOT NULL DEFAULT 0,
	total INTEGER,                      -- NULL while not known
	unit TEXT NOT NULL DEFAULT '',      -- files, objects, steps
	pid INTEGER,
	updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	PRIMARY KEY (kind, subject_id)
);
