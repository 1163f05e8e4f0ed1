-- 016-executed-lines.sql: which of a patch's lines ran. A coverage boot
-- (coverage_boot = yes) boots a kernel with gcov on the objects the
-- queue's C files build and runs the test set; per patch and file, the
-- lines the patch adds or changes, those gcov counts as code
-- (executable), and of those the ones the test set executed. Written by
-- kernel-queue/candidates/gcov.c.
CREATE TABLE patch_lines (
	candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	path TEXT NOT NULL,
	changed INTEGER NOT NULL,           -- lines the patch adds or changes
	executable INTEGER NOT NULL,        -- of those, code to gcov
	executed INTEGER NOT NULL,          -- of those, run by the test set
	missed TEXT,                        -- JSON array: code lines not run
	detail TEXT,                        -- not counted: why (not profiled)
	PRIMARY KEY (candidate_id, patch_id, path)
);
CREATE INDEX patch_lines_patch ON patch_lines(patch_id, candidate_id);
-- one coverage boot per candidate: what it found in a line, the objects
-- it profiled, its console
CREATE TABLE coverage_boots (
	candidate_id INTEGER PRIMARY KEY REFERENCES candidates(id) ON DELETE CASCADE,
	summary TEXT NOT NULL,              -- "exercised 35 of 40 changed lines (...)"
	objects TEXT NOT NULL DEFAULT '[]', -- JSON array: "lib/test_user_copy.o"
	log_path TEXT,
	seconds REAL
);
