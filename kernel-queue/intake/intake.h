/* intake.h: importing quilt directories, mboxes and patch files into the queue. */
#ifndef STABLEQ_INTAKE_H
#define STABLEQ_INTAKE_H

#include "patch.h"

#include <sqlite3.h>
#include <stddef.h>

struct intake_result {
	size_t added;       /* new patches */
	size_t duplicates;  /* already in the store: nothing changed */
	size_t own;         /* stableq's own reverts in a queue directory, left
			     * alone (series_is_own()) */
	long long *ids;     /* every patch of the input, new or existing, in order (owned) */
	size_t nids;
	char *notes;        /* what was cut on intake, a line each ("x.patch: subject
			     * cut to 1000 bytes (was 409600)\n"), or NULL (owned) */
	int checks;         /* intake_submit(): intake_check()'s status (0, or
			     * the error that stopped the checks: the patches
			     * wait in 'imported' for the daemon's check step) */
};

void intake_result_release(struct intake_result *r);

/*
 * How a patch's [PATCH X.Y] subject prefix picks its branch. INTAKE_ROUTE:
 * it goes to the configured branch X.Y (a patch without one to the branch
 * given). INTAKE_STRICT: a prefix naming a branch that is not configured,
 * or (without INTAKE_ROUTE) another branch than the one given, is refused
 * and nothing is stored. 0: every patch goes to the branch given (one
 * branch configured: [PATCH 6.1] is not checked against its key).
 */
enum { INTAKE_ROUTE = 1, INTAKE_STRICT = 2 };

/*
 * Every stable version a subject prefix names, in order, each once, at
 * most max: "PATCH 6.1/6.6", "PATCH 6.1.y,6.6.y" and "PATCH 5.15 6.1 2/3"
 * name two (a posting for several trees). Returns how many.
 */
#define INTAKE_VERSION_SIZE 16
int intake_prefix_versions(const char *prefix,
			   char (*ver)[INTAKE_VERSION_SIZE], int max);
/*
 * The mail intake's store, inside the caller's transaction (mailin.c
 * assembles the series itself and stores them patch by patch): p into
 * branch's queue (queue_add_flags() with queue_flags) under a sources row
 * made on the first call for a series (*source_id 0: made and set; path
 * name), marked as list mail (origin_set_list()). 1 added, 0 the same
 * patch was there (*id: it), negative on error.
 * The caller links dependencies (queue_link_dependencies()) before its
 * commit.
 */
int intake_store_locked(sqlite3 *db, long long branch, long long *source_id,
			const char *name, const struct patch *p,
			unsigned queue_flags, const char *actor, long long *id);

/*
 * Import, then check: the checks of res's patches (new or known), branch
 * by branch on each patch's own branch (a context of its own,
 * branch_ctx_for()), each with its own evidence; bc is not changed. each
 * (may be NULL) hears of every branch with patches: with sum NULL before
 * its checks run, then with their result (ret: check_run()'s; ERR_NOTFOUND
 * when the branch's tree is not there, which does not stop the others).
 * Returns 0, or the first other error (the branches after it are not
 * checked).
 */
struct branch_ctx;
struct check_summary;
int intake_check(const struct branch_ctx *bc, const struct intake_result *res,
		 void (*each)(const char *key, int ret,
			      const struct check_summary *sum, void *ctx),
		 void *ctx);

/*
 * What one intake takes: paths (quilt directories, mboxes, patch files:
 * `stableq import`), or, with paths NULL, one buffer called name in errors
 * (an mbox or a patch: a request body).
 */
struct intake_source {
	const char *const *paths;
	size_t npaths;
	const char *buf;
	size_t len;
	const char *name;
};

/*
 * Who hears of an intake as it goes (each may be NULL): imported once the
 * import is stored, before any check runs; checked as intake_check()'s
 * each.
 */
struct intake_report {
	void (*imported)(const struct intake_result *res, void *ctx);
	void (*checked)(const char *key, int ret,
			const struct check_summary *sum, void *ctx);
	void *ctx;
};

/*
 * The one intake action, whichever door it comes through: `stableq import`
 * (the daemon's import of queue_dir runs it), POST /patches and the mail
 * intake (mailin.h) all import and then check this way. Imports src
 * (intake_import_paths() or intake_import_buffer_to(), max_patch_bytes and
 * bc's actor) into branch's queue (branches.id), or with branch 0 (none
 * named) where each patch's [PATCH X.Y] routes it when several branches
 * are configured, else the first branch's; a prefix naming another or an
 * unknown branch is refused (the intake flags are set here only). Then,
 * when something was added, checks the patches (intake_check()) and
 * records the checks' status in res->checks. rep may be NULL. Returns the
 * import's error (nothing stored) or 0.
 */
int intake_submit(struct branch_ctx *bc, long long branch,
		  const struct intake_source *src,
		  const struct intake_report *rep, struct intake_result *res);
/*
 * How many intake_submit() calls of this process are under way (any
 * thread): from before their import is stored until their checks are
 * done. The daemon's check step waits for them, or it would check the
 * patches a POST /patches imported a second time, as the daemon.
 */
int intake_running(void);

/*
 * The running queue is state, not source: when queue_dir does not exist
 * and queue_seed is set, the seed (the shipped queue) is copied there.
 * Returns 1 when it seeded, 0 when nothing was to do, negative on error.
 */
struct branch_ctx;
int intake_seed_queue(struct branch_ctx *bc);
/*
 * A job of the daemon's: queue_dir is configured and not an empty
 * directory (imported once a start).
 */
struct branch_ctx;
int intake_queue_due(struct branch_ctx *bc, long long *id);

#endif
