-- 010-test-cases.sql: each test case of a candidate, standing against the
-- branch tip: a regression (passes on the tip, fails here; or fails here
-- and the tip never ran it), a known failure (fails on the tip too), flaky
-- (passed and failed here), pass or skip. test_results keeps every boot's
-- result; test_cases says what they amount to. Written by
-- kernel-queue/testcase.c, once per verdict.
CREATE TABLE test_cases (
	candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	status TEXT NOT NULL CHECK (status IN
		('regression','known','flaky','pass','skip')),
	tip TEXT,                           -- the tip's result, NULL: not run there
	runs INTEGER NOT NULL,              -- boots that ran it here
	fails INTEGER NOT NULL,             -- of which it failed
	PRIMARY KEY (candidate_id, name)
);
CREATE INDEX test_cases_status ON test_cases(candidate_id, status);
-- the tip's run a candidate was compared with (a 'baseline' candidate of
-- no patches), NULL when none was (no failure, or test_baseline = no)
ALTER TABLE candidates ADD COLUMN tip_candidate_id INTEGER REFERENCES candidates(id);
-- the test set a candidate ran (sha256 of tests_file): a tip run is reused
-- only for the same tree, kernel configuration and test set
ALTER TABLE candidates ADD COLUMN testset_hash TEXT;
-- a bisection's search step boots only the tests that steer it (a JSON
-- array of names: guest tests by name, KUnit cases by suite); NULL: the
-- whole set
ALTER TABLE candidates ADD COLUMN tests_only TEXT;
