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

-- A -rc review series (`stableq rc`): the cover "[PATCH 6.1 000/N]
-- 6.1.11-rc1 review" and a mail per queued patch, sent to rc_list, with a
-- deadline. The newest rc of a branch is 'open' until released or
-- superseded by the next -rcN. Replies are read by the intake: Tested-by
-- on the cover goes to rc_tested, a NAK on a patch mail holds the patch.
CREATE TABLE rcs (
	id INTEGER PRIMARY KEY,
	branch_id INTEGER NOT NULL REFERENCES branches(id),
	version TEXT NOT NULL,              -- 6.1.11-rc1
	deadline INTEGER NOT NULL,          -- unix seconds
	cover_message_id TEXT NOT NULL UNIQUE,
	state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open','superseded','released')),
	actor TEXT NOT NULL,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE TABLE rc_patches (
	rc_id INTEGER NOT NULL REFERENCES rcs(id) ON DELETE CASCADE,
	patch_id INTEGER NOT NULL REFERENCES patches(id),
	pos INTEGER NOT NULL,               -- NNN of NNN/N
	message_id TEXT NOT NULL UNIQUE,
	PRIMARY KEY (rc_id, patch_id)
);
CREATE TABLE rc_tested (
	rc_id INTEGER NOT NULL REFERENCES rcs(id) ON DELETE CASCADE,
	tester TEXT NOT NULL,               -- the Tested-by address
	name TEXT,
	message_id TEXT,                    -- the reply that said it
	PRIMARY KEY (rc_id, tester)
);

-- auto_revert = propose: the plan mailed to the author, carried out after
-- revert_grace unless a reply to that mail stops it (then the maintainer
-- decides: the plan is stored as a 'planned' revert).
CREATE TABLE revert_proposals (
	id INTEGER PRIMARY KEY,
	patch_id INTEGER NOT NULL REFERENCES patches(id),
	mail_id INTEGER REFERENCES mail(id),
	message_id TEXT,                    -- the mail's, which a reply answers
	due_at INTEGER NOT NULL,            -- unix seconds: proposed + revert_grace
	state TEXT NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting','stopped','done')),
	stopped_by TEXT,                    -- the reply that stopped it
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX revert_proposals_msg ON revert_proposals(message_id);
