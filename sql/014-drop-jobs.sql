-- 014-drop-jobs.sql: the jobs table of 001 was never used: the daemon's
-- jobs are a table in daemon/jobs.c and each finds its work in the rows
-- of the tables it acts on, so a restart resumes without a queue of its own.
DROP TABLE IF EXISTS jobs;
