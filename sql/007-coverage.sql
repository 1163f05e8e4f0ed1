-- 007-coverage.sql: build coverage. Every file a candidate's patches touch,
-- and what built it: the guest kernel (booted), a broad config (compiled),
-- nothing here (not-built, with why), or the compile broke (failed).
CREATE TABLE coverage (
	id INTEGER PRIMARY KEY,
	candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	path TEXT NOT NULL,                 -- the touched file
	kind TEXT NOT NULL,                 -- c, asm, header, kconfig, makefile, dts, other
	status TEXT NOT NULL CHECK (status IN ('booted','compiled','failed','not-built','no-code')),
	config TEXT,                        -- guest, x86_64 allmodconfig, arm64 allmodconfig
	objects TEXT NOT NULL DEFAULT '[]', -- JSON array of the objects compiled for it
	detail TEXT,                        -- why not built; the first error
	warnings TEXT                       -- warnings the object did not have before the queue
);
CREATE INDEX coverage_candidate ON coverage(candidate_id, patch_id);
CREATE INDEX coverage_patch ON coverage(patch_id, candidate_id);
ALTER TABLE candidates ADD COLUMN coverage TEXT;     -- "58 of 62 patches compiled, 4 in the booted kernel"
ALTER TABLE candidates ADD COLUMN coverage_log TEXT; -- the broad builds' log

-- One object compiled in one tree under one broad config: the branch tip's
-- results are compiled once and kept (what a patch's object was before it).
CREATE TABLE object_builds (
	tree_sha TEXT NOT NULL,
	config TEXT NOT NULL,               -- label and fragment hash
	object TEXT NOT NULL,
	result TEXT NOT NULL CHECK (result IN ('ok','failed','not-built')),
	warnings TEXT,
	error TEXT,
	PRIMARY KEY (tree_sha, config, object)
);
