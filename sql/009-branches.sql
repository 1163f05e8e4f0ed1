-- 009-branches.sql: several stable branches in one store (6.1 and 6.12).
-- A branch is named by its key ("6.1", "6.12"), as config sections,
-- `--branch` and `?branch=` name it; rows are upserted from the config at
-- start. Each patch belongs to one branch's queue: the same fix queued for
-- two branches is two rows (one fix = the rows with the same upstream SHA,
-- else the same patch-id: the view `fixes`), so patch_id and message_id
-- are unique per branch, which takes a rebuild of patches (foreign keys are
-- off while migrations run; lib/db.c checks them before the commit).
-- Candidates always name their branch; bisections, reverts, releases,
-- flags and mail find theirs through the candidate or the patch.
ALTER TABLE branches ADD COLUMN key TEXT;
-- the config's order (0: the default branch); NULL: no longer configured
ALTER TABLE branches ADD COLUMN ord INTEGER;
CREATE UNIQUE INDEX branches_key ON branches(key);

-- A store made before branches: its queue is branch 6.1.
INSERT INTO branches (key, name, version, base_tag, ord)
	SELECT '6.1', 'linux-6.1.y', '', '', 0
	WHERE NOT EXISTS (SELECT 1 FROM branches)
	  AND (EXISTS (SELECT 1 FROM patches) OR EXISTS (SELECT 1 FROM candidates));
UPDATE branches SET key = '6.1' WHERE key IS NULL AND name = 'linux-6.1.y';

CREATE TABLE patches_new (
	id INTEGER PRIMARY KEY,
	source_id INTEGER REFERENCES sources(id),
	queue_pos REAL NOT NULL,
	filename TEXT,
	subject TEXT NOT NULL,
	subject_prefix TEXT,
	series_part INTEGER,
	series_total INTEGER,
	author_name TEXT,
	author_email TEXT,
	date TEXT,
	message_id TEXT,
	in_reply_to TEXT,
	upstream TEXT,
	patch_id TEXT NOT NULL,
	message TEXT NOT NULL,
	diff TEXT NOT NULL,
	state TEXT NOT NULL DEFAULT 'imported' CHECK (state IN
		('imported','checked','queued','held','rejected','broken',
		 'dropped','released','reverted')),
	state_reason TEXT,
	released_commit TEXT,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
	branch_id INTEGER REFERENCES branches(id),   -- whose queue it is in
	UNIQUE (branch_id, patch_id),
	UNIQUE (branch_id, message_id)
);
INSERT INTO patches_new (id, source_id, queue_pos, filename, subject,
	subject_prefix, series_part, series_total, author_name, author_email,
	date, message_id, in_reply_to, upstream, patch_id, message, diff, state,
	state_reason, released_commit, created_at, updated_at, branch_id)
SELECT id, source_id, queue_pos, filename, subject, subject_prefix,
	series_part, series_total, author_name, author_email, date, message_id,
	in_reply_to, upstream, patch_id, message, diff, state, state_reason,
	released_commit, created_at, updated_at,
	(SELECT id FROM branches WHERE key = '6.1')
FROM patches;
DROP TABLE patches;
ALTER TABLE patches_new RENAME TO patches;
CREATE INDEX patches_state ON patches(state, queue_pos);
CREATE INDEX patches_upstream ON patches(upstream);
CREATE INDEX patches_up12 ON patches(substr(upstream, 1, 12));
CREATE INDEX patches_rel12 ON patches(substr(released_commit, 1, 12));
CREATE INDEX patches_pos ON patches(queue_pos);
CREATE INDEX patches_branch ON patches(branch_id, state, queue_pos);

UPDATE candidates SET branch_id = (SELECT id FROM branches WHERE key = '6.1')
	WHERE branch_id IS NULL;
CREATE INDEX candidates_branch ON candidates(branch_id, id);

-- One fix across branches: its key is the upstream SHA's first 12 digits
-- (abbreviations match), else the patch-id of its diff.
CREATE VIEW fixes AS
	SELECT coalesce(lower(substr(p.upstream, 1, 12)), p.patch_id) AS fix_key,
	       p.id AS patch_row, b.key AS branch, p.state AS state
	FROM patches p LEFT JOIN branches b ON b.id = p.branch_id;
