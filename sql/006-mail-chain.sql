-- 006-mail-chain.sql: one mail per patch per chain of events. A mail not
-- yet taken by a relay is amended by the next event about its patch
-- (flagged, then dropped: one mail); chain holds what it reports, oldest
-- first, as a JSON array of {kind, event_id, what, why, log, revert}.
ALTER TABLE mail ADD COLUMN chain TEXT;
CREATE INDEX mail_patch ON mail(patch_id, state);
