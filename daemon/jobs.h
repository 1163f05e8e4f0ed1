/* jobs.h: the daemon's work as a table: what each step is, when it is due, how it runs. */
#ifndef STABLEQ_JOBS_H
#define STABLEQ_JOBS_H

#include "app.h"

/*
 * One kind of step. The daemon walks the table in order and starts the
 * first job that is due and not backing off, as `stableq <argv>` in a
 * child with a deadline. Everything it decides comes from the store, so a
 * restart resumes where the last process stopped.
 *
 * due() lives in the module the job belongs to: 1 when due (setting *id
 * when the step is about one row), 0 when not. In argv, "{id}" is that id
 * and "{queue_dir}" the configured queue directory. The deadline is
 * `seconds` plus `builds` times the time one candidate may take (build,
 * four boots, slack). once: at most once a start of the daemon. idle:
 * the job runs only when no branch has anything else due.
 * interrupted (may be NULL): records that a stop ended the step early, so
 * the store says what to run again. summary (may be NULL): after the step,
 * what it found ("candidate 12: fail: user-copy (first bad patch 5)"), for
 * the daemon's log.
 */
struct job {
	const char *name;
	int (*due)(struct branch_ctx *bc, long long *id);
	const char *argv[8];
	int seconds;
	int builds;
	int once;
	int (*interrupted)(struct branch_ctx *bc, long long id);
	/* may be NULL: what the step found, one line for the log */
	char *(*summary)(sqlite3 *db, long long id);
	/* 1: only when no branch has any other job due (a tip's baseline) */
	int idle;
};

/* The table, in priority order, ended by a NULL name. */
extern const struct job jobs[];

#endif
