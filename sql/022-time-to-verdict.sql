-- 022-time-to-verdict.sql: what a verdict waits for, and how long it took.
--
-- A branch tip's baseline (a 'baseline' candidate of no patches) is run
-- ahead of time, while the daemon is otherwise idle, and reused by every
-- candidate of that tip. baseline_of names the tip state a candidate was
-- applied on (the tree, the guest configuration's hash, the test set's
-- hash): a baseline's is the state it is the run of, run once per state
-- and found again by the candidates of that state; a bisection's
-- confirmation reuses a run of the same state instead of booting it again.
ALTER TABLE candidates ADD COLUMN baseline_of TEXT;
CREATE INDEX candidates_baseline ON candidates(branch_id, baseline_of);
-- a bisection's confirmation boots the whole set once, then repeats only
-- the tests that steer it (a JSON array of names, as tests_only)
ALTER TABLE candidates ADD COLUMN repeat_only TEXT;
-- who asked for it ("token:ci", "daemon", "user:NAME"): pending work is
-- capped per token (candidates_pending_max)
ALTER TABLE candidates ADD COLUMN created_by TEXT;
CREATE INDEX candidates_pending ON candidates(step, created_by);

-- The phases of a candidate, each with its time: apply, build, boot (the
-- kernel to userspace), tests (the test set in the guest), retry (the
-- failing tests alone), baseline (waiting for the tip's run: 0 when it was
-- there already), bisection (of this failing candidate). branch_id and
-- purpose are the candidate's, copied so the estimate of a phase (the
-- branch's recent ones) reads this table alone. Written by
-- kernel-queue/candidates/candidate-phases.c.
CREATE TABLE candidate_phases (
	id INTEGER PRIMARY KEY,
	candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
	branch_id INTEGER,
	purpose TEXT NOT NULL,
	phase TEXT NOT NULL CHECK (phase IN ('apply','build','boot','tests',
		'retry','baseline','bisection')),
	started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	seconds REAL,                       -- NULL while it runs
	detail TEXT                         -- "from the build cache", "2 tests"
);
CREATE INDEX candidate_phases_candidate ON candidate_phases(candidate_id);
CREATE INDEX candidate_phases_estimate ON candidate_phases(branch_id, purpose, phase, id);
