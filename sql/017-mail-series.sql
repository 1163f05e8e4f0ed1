-- 017-mail-series.sql: series as `b4 am` sees them, across passes; maildir
-- files read again when they change.
--
-- A series on the list, whichever pass each of its mails came in: its
-- cover and parts point at it (mail_messages.series_id). root is the
-- Message-Id its parts hang from: the cover's (seen or not yet: parts
-- answer it), else its first part's. A series missing a part (2/3 of 1/3,
-- 3/3) is 'incomplete' and its patches are held until the part arrives;
-- a vN that its author sent in the thread of an earlier version
-- supersedes that one ('superseded', replaced_by), patch by patch.
CREATE TABLE mail_series (
	id INTEGER PRIMARY KEY,
	root TEXT NOT NULL UNIQUE,
	author_email TEXT,
	subject TEXT NOT NULL DEFAULT '',   -- the cover's, else the first part's
	version INTEGER NOT NULL DEFAULT 1, -- vN of the prefix
	total INTEGER NOT NULL DEFAULT 0,   -- m of n/m (0: a lone patch)
	state TEXT NOT NULL DEFAULT 'complete'
		CHECK (state IN ('complete','incomplete','superseded')),
	replaced_by INTEGER REFERENCES mail_series(id),
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX mail_series_subject ON mail_series(subject, version);

ALTER TABLE mail_messages ADD COLUMN series_id INTEGER REFERENCES mail_series(id);
ALTER TABLE mail_messages ADD COLUMN part INTEGER;   -- n of n/m, 0 for the cover
CREATE INDEX mail_messages_series ON mail_messages(series_id);

-- Which patch a mail became on each branch it went to ([PATCH 6.1/6.6]
-- goes to two; an unchanged part of a v2 keeps the v1's patch).
CREATE TABLE mail_patches (
	message_id TEXT NOT NULL,
	branch_id INTEGER NOT NULL REFERENCES branches(id),
	patch_id INTEGER NOT NULL REFERENCES patches(id) ON DELETE CASCADE,
	PRIMARY KEY (message_id, branch_id)
) WITHOUT ROWID;
CREATE INDEX mail_patches_patch ON mail_patches(patch_id);

-- A maildir file as it was read: a file that changes (a writer that wrote
-- it straight into new/, read half-written) is read again.
ALTER TABLE mail_files ADD COLUMN size INTEGER;
ALTER TABLE mail_files ADD COLUMN mtime TEXT;       -- "SEC.NSEC"
