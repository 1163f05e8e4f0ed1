-- 020-revert-guards.sql: who raised a flag, and which reverts were automatic.
--
-- flags.trust: 'trusted' (a maintainer's CLI command, an admin token,
-- stableq's own bisection) may lead to an automatic revert; 'untrusted' (a
-- write-scope token, a mail from the list) never does by itself: the plan
-- is stored for a maintainer. Flags raised before this migration were
-- raised by the doors that are trusted now, or by a write token whose
-- revert already happened: 'trusted'.
ALTER TABLE flags ADD COLUMN trust TEXT NOT NULL DEFAULT 'trusted'
	CHECK (trust IN ('trusted', 'untrusted'));
-- reverts.automatic: made by revert_auto() (the daemon, `stableq revert ID
-- --auto`, a proposal whose grace ran out), whatever door started it. The
-- daily limit (revert_daily_limit) counts the patches these took out.
-- Reverts before this migration: those whose actor was the daemon.
ALTER TABLE reverts ADD COLUMN automatic INTEGER NOT NULL DEFAULT 0
	CHECK (automatic IN (0, 1));
UPDATE reverts SET automatic = 1 WHERE actor = 'daemon' AND state != 'planned';
