-- 013-review-cycle.sql: mail read from the list (a maildir, a public-inbox
-- archive), each message once, and what it did.
--
-- A mail source is one configured maildir or one epoch of a public-inbox
-- v2 archive (its git/N.git). `position` says where the last pass stopped:
-- for an epoch the newest commit read (the next pass walks from the tip
-- down to it); a maildir's files are remembered one by one in mail_files,
-- since a maildir has no order and a file moves from new/ to cur/.
CREATE TABLE mail_sources (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL CHECK (kind IN ('maildir','inbox')),
	path TEXT NOT NULL UNIQUE,          -- the maildir, or the epoch's git dir
	position TEXT,                      -- inbox: the last commit read
	read_at TEXT
);

-- A maildir file read (its unique name, the part before ":2,"), so a
-- file moved from new/ to cur/ is not read again.
CREATE TABLE mail_files (
	source_id INTEGER NOT NULL REFERENCES mail_sources(id) ON DELETE CASCADE,
	name TEXT NOT NULL,
	PRIMARY KEY (source_id, name)
) WITHOUT ROWID;

-- Each message seen, by Message-Id: a second delivery changes nothing.
-- kind: patch (imported into patch_id's queue), cover (a series' 0/n),
-- reply (to a patch or cover: what it did is in action), ignored (not for
-- a configured branch, stableq's own mail), invalid (error says why; the
-- message stays in its source, nothing of it is stored).
CREATE TABLE mail_messages (
	message_id TEXT PRIMARY KEY,
	source_id INTEGER REFERENCES mail_sources(id),
	in_reply_to TEXT,
	subject TEXT NOT NULL DEFAULT '',
	author_email TEXT,
	kind TEXT NOT NULL CHECK (kind IN ('patch','cover','reply','ignored','invalid')),
	patch_id INTEGER REFERENCES patches(id) ON DELETE SET NULL,
	action TEXT,                        -- reply: held, trailers, none
	error TEXT,
	read_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX mail_messages_reply ON mail_messages(in_reply_to);
CREATE INDEX mail_messages_patch ON mail_messages(patch_id);
