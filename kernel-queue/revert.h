/* revert.h: flag broken patches, revert or drop them with their dependents, hold fix-ups, release. */
#ifndef STABLEQ_REVERT_H
#define STABLEQ_REVERT_H

#include "app.h"

#include <jansson.h>

/* Evidence stored with a flag (all optional, borrowed). */
struct evidence {
	const char *test;        /* failing test name */
	const char *log_excerpt;
	long long build_id;
	long long bisection_id;
};

/*
 * Flags a patch broken (queued, released, held, checked...) with the
 * reason and evidence, writes the event and mails the author, in one
 * transaction. ERR_NOTFOUND for an unknown id, ERR_CONFLICT if it is
 * already broken, dropped or reverted.
 */
int revert_flag(struct app *app, long long patch_id, const char *reason,
		const struct evidence *ev);

/*
 * The plan for taking a patch out: itself and every patch that goes with
 * it (dependencies table, transitively), newest first, each 'drop' (still
 * queued) or 'revert' (released). Returns a JSON object {patch_id, items:
 * [{patch_id, subject, action, why}]} or NULL (unknown id, already
 * reverted: err_msg()).
 */
json_t *revert_plan(struct app *app, long long patch_id);

/*
 * Carries out the plan (flagging the patch broken first if it is not):
 * drops in one transaction; reverts as libgit2 revert commits on the
 * branch (message in the stable style), each also written as a mail-format
 * patch into the queue directory; patches go to dropped/reverted, authors
 * are mailed. A revert that conflicts changes nothing (ERR_CONFLICT). A
 * crash at any point leaves either nothing done or a state that
 * revert_resume() completes. Sets *revert_id.
 */
int revert_execute(struct app *app, long long patch_id, const char *reason,
		   long long *revert_id);
/*
 * Stores the plan as a revert in state 'planned' (auto_revert = plan): it
 * waits there for a maintainer, who runs it with revert_execute().
 */
int revert_store_plan(struct app *app, long long patch_id, const char *reason);
/* Completes reverts interrupted by a crash. Safe to call at every start. */
int revert_resume(struct app *app);
json_t *revert_json(sqlite3 *db, long long revert_id);
json_t *revert_list_json(sqlite3 *db);
/* The revert patches of a revert, concatenated (text/x-patch); caller frees. */
char *revert_patch_text(sqlite3 *db, long long revert_id);

/*
 * A maintainer overrides a held fix-up (or a patch waiting for a human)
 * with a reason: it is queued, the override recorded as a verdict and an
 * event.
 */
int revert_override(struct app *app, long long patch_id, const char *reason);

/*
 * Applies the queued patches to the branch as commits, one per patch, with
 * the patch's message and author (like git quiltimport). The queue must
 * have passed a candidate with exactly these patches (ERR_CONFLICT
 * otherwise, unless force). Sets *n to the number released.
 */
int release_queue(struct app *app, int force, size_t *n);
int release_resume(struct app *app);

#endif
