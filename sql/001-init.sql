-- 001-init.sql: the stableq store. Applied once, in a transaction, at start-up
-- (PRAGMA user_version counts the applied migrations).

-- A stable line in the project's git repository (made from linux-source-6.1).
CREATE TABLE branches (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,          -- linux-6.1.y
	version TEXT NOT NULL,              -- 6.1.192, read from the tree's Makefile
	base_tag TEXT NOT NULL,             -- v6.1.192
	head TEXT,                          -- commit the branch points at, as last seen
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);

-- Where patches came from: a quilt directory, an mbox, a single file, the API.
CREATE TABLE sources (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL CHECK (kind IN ('series','mbox','patch','api')),
	path TEXT NOT NULL,
	imported_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	actor TEXT NOT NULL DEFAULT 'cli'
);

-- One candidate change for the branch. queue_pos orders the queue.
CREATE TABLE patches (
	id INTEGER PRIMARY KEY,
	source_id INTEGER REFERENCES sources(id),
	queue_pos REAL NOT NULL,
	filename TEXT,                      -- name in the series file, if any
	subject TEXT NOT NULL,              -- without the [PATCH ...] prefix
	subject_prefix TEXT,                -- "PATCH 6.1 2/3"
	series_part INTEGER,                -- n of [PATCH n/m]
	series_total INTEGER,               -- m of [PATCH n/m]
	author_name TEXT,
	author_email TEXT,
	date TEXT,
	message_id TEXT UNIQUE,
	in_reply_to TEXT,
	upstream TEXT,                      -- full or abbreviated upstream SHA
	patch_id TEXT NOT NULL UNIQUE,      -- hash of the diff (whitespace-insensitive)
	message TEXT NOT NULL,              -- commit message body with trailers
	diff TEXT NOT NULL,
	state TEXT NOT NULL DEFAULT 'imported' CHECK (state IN
		('imported','checked','queued','held','rejected','broken',
		 'dropped','released','reverted')),
	state_reason TEXT,
	released_commit TEXT,               -- commit on the branch once released
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX patches_state ON patches(state, queue_pos);
CREATE INDEX patches_upstream ON patches(upstream);

-- Parsed trailers and notes. kind: fixes, stable (Cc: stable), stable_version,
-- prereq, stable_dep_of, upstream, signed_off_by, link, reported_by, noautosel, cc.
CREATE TABLE patch_tags (
	id INTEGER PRIMARY KEY,
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	kind TEXT NOT NULL,
	value TEXT NOT NULL,                -- sha, address, version range
	extra TEXT                          -- ("subject"), name, note
);
CREATE INDEX patch_tags_patch ON patch_tags(patch_id, kind);
CREATE INDEX patch_tags_value ON patch_tags(kind, value);

CREATE TABLE patch_files (
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	path TEXT NOT NULL,
	change TEXT NOT NULL CHECK (change IN ('A','M','D','R')),
	PRIMARY KEY (patch_id, path)
);

-- patch_id depends on depends_on: reverting depends_on takes patch_id with it.
CREATE TABLE dependencies (
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	depends_on INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	kind TEXT NOT NULL CHECK (kind IN ('stable-dep-of','series','fixes','prereq')),
	PRIMARY KEY (patch_id, depends_on, kind)
);

-- History of every check: a new check adds a row.
CREATE TABLE verdicts (
	id INTEGER PRIMARY KEY,
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	check_name TEXT NOT NULL,           -- fixes, applies, fixup, flags
	result TEXT NOT NULL,
	detail TEXT NOT NULL,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX verdicts_patch ON verdicts(patch_id, check_name, id);

-- Patches flagged broken, by bisection or a maintainer, with the evidence.
CREATE TABLE flags (
	id INTEGER PRIMARY KEY,
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	reason TEXT NOT NULL,
	evidence TEXT,                      -- failing test, log excerpt
	build_id INTEGER REFERENCES builds(id),
	bisection_id INTEGER REFERENCES bisections(id),
	actor TEXT NOT NULL,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);

-- One kernel build of one tree with one config.
CREATE TABLE builds (
	id INTEGER PRIMARY KEY,
	commit_sha TEXT NOT NULL,
	config_hash TEXT NOT NULL,
	result TEXT NOT NULL CHECK (result IN ('running','ok','failed','error')),
	seconds REAL,
	log_path TEXT,
	error_excerpt TEXT,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX builds_commit ON builds(commit_sha, config_hash);

-- Branch + a queue prefix, materialized as a commit, built, booted, tested.
CREATE TABLE candidates (
	id INTEGER PRIMARY KEY,
	branch_id INTEGER REFERENCES branches(id),
	purpose TEXT NOT NULL DEFAULT 'queue' CHECK (purpose IN ('queue','bisect','confirm','baseline')),
	patch_ids TEXT NOT NULL DEFAULT '[]', -- JSON array, in queue order
	upto_patch_id INTEGER REFERENCES patches(id),
	commit_sha TEXT,
	build_id INTEGER REFERENCES builds(id),
	step TEXT NOT NULL DEFAULT 'pending', -- pending, apply, build, boot, done
	verdict TEXT CHECK (verdict IN ('pass','fail','build-failed','apply-failed','hang')),
	detail TEXT,
	bisection_id INTEGER REFERENCES bisections(id),
	log_path TEXT,
	started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	finished_at TEXT
);

CREATE TABLE test_results (
	id INTEGER PRIMARY KEY,
	candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
	run INTEGER NOT NULL DEFAULT 1,     -- repeat number on the same build
	name TEXT NOT NULL,
	result TEXT NOT NULL CHECK (result IN ('pass','fail','skip','flaky')),
	detail TEXT,
	log_excerpt TEXT
);
CREATE INDEX test_results_candidate ON test_results(candidate_id);

CREATE TABLE bisections (
	id INTEGER PRIMARY KEY,
	candidate_id INTEGER NOT NULL REFERENCES candidates(id),
	state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running','found','failed','flaky')),
	failing_tests TEXT,                 -- JSON array of test names that steer it
	good INTEGER NOT NULL DEFAULT 0,    -- longest prefix known to pass
	bad INTEGER,                        -- shortest prefix known to fail
	culprit_patch_id INTEGER REFERENCES patches(id),
	builds_used INTEGER NOT NULL DEFAULT 0,
	detail TEXT,
	started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	finished_at TEXT
);

CREATE TABLE bisection_steps (
	id INTEGER PRIMARY KEY,
	bisection_id INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	prefix_len INTEGER NOT NULL,
	candidate_id INTEGER REFERENCES candidates(id),
	result TEXT NOT NULL,               -- good, bad, flaky, build-failed
	kind TEXT NOT NULL DEFAULT 'search' CHECK (kind IN ('search','confirm')),
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);

-- A revert plan: the broken patch and its dependents, newest first.
CREATE TABLE reverts (
	id INTEGER PRIMARY KEY,
	patch_id INTEGER NOT NULL REFERENCES patches(id),
	state TEXT NOT NULL CHECK (state IN ('planned','applying','done','failed','confirmed')),
	reason TEXT NOT NULL,
	actor TEXT NOT NULL,
	confirm_candidate_id INTEGER REFERENCES candidates(id),
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	finished_at TEXT
);

-- One line of a plan: drop (still queued) or revert (released).
CREATE TABLE revert_items (
	id INTEGER PRIMARY KEY,
	revert_id INTEGER NOT NULL REFERENCES reverts(id) ON DELETE CASCADE,
	ord INTEGER NOT NULL,
	patch_id INTEGER NOT NULL REFERENCES patches(id),
	action TEXT NOT NULL CHECK (action IN ('drop','revert')),
	why TEXT NOT NULL,                  -- "culprit", "Stable-dep-of #12", ...
	revert_commit TEXT,                 -- the commit made on the branch
	patch_text TEXT,                    -- the revert as a mail-format patch
	patch_path TEXT,                    -- where it was written in the queue dir
	done INTEGER NOT NULL DEFAULT 0
);

-- The outbox: written in the same transaction as the event it reports.
CREATE TABLE mail (
	id INTEGER PRIMARY KEY,
	patch_id INTEGER REFERENCES patches(id),
	event_id INTEGER REFERENCES events(id),
	kind TEXT NOT NULL,                 -- flagged, dropped, reverted, held, rejected
	message_id TEXT NOT NULL UNIQUE,
	mail_from TEXT NOT NULL,
	rcpt_to TEXT NOT NULL,              -- JSON array of envelope recipients
	headers_and_body TEXT NOT NULL,     -- the whole RFC 5322 message
	state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','sending','sent','failed','invalid')),
	attempts INTEGER NOT NULL DEFAULT 0,
	next_attempt_at INTEGER NOT NULL DEFAULT 0, -- unix seconds
	last_error TEXT,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	sent_at TEXT
);
CREATE INDEX mail_state ON mail(state, next_attempt_at);

-- Append-only log of every change and who made it.
CREATE TABLE events (
	id INTEGER PRIMARY KEY,
	at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f','now')),
	actor TEXT NOT NULL,                -- cli, daemon, token:<name>, bisection
	subject_kind TEXT NOT NULL,         -- patch, candidate, bisection, revert, mail, token
	subject_id INTEGER,
	kind TEXT NOT NULL,                 -- imported, checked, state, flagged, ...
	detail TEXT
);
CREATE INDEX events_subject ON events(subject_kind, subject_id);

CREATE TABLE tokens (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	hash TEXT NOT NULL,                 -- sha256 hex of the token
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);

-- Daemon work items, so a restart resumes where it stopped.
CREATE TABLE jobs (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL,                 -- check, candidate, bisect, revert, confirm
	arg TEXT,
	state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued','running','done','failed')),
	actor TEXT NOT NULL DEFAULT 'daemon',
	pid INTEGER,
	detail TEXT,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	started_at TEXT,
	finished_at TEXT
);
