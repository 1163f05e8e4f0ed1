-- 012-token-scopes.sql: what a token may do. read: the reads; write: also
-- import, flag, override, candidates; admin: also revert and release mail.
-- Tokens made before scopes keep working as they did: admin.
ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'admin'
	CHECK (scope IN ('read', 'write', 'admin'));
