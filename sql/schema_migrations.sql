-- schema_migrations.sql: which migrations the store has, by file name. Not a
-- migration itself: lib/db.c runs it before any, every time a store opens.
-- Names, not a position counter: two branches that each add a migration
-- both get theirs applied once merged, and a store holding a migration
-- this binary does not know is refused instead of migrated past it.
-- (PRAGMA user_version still counts the applied migrations, for the
-- binaries that counted.)
CREATE TABLE IF NOT EXISTS schema_migrations (
	name TEXT PRIMARY KEY,              -- 009-branches.sql
	-- NULL: applied before names were kept (recorded from user_version)
	applied_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
