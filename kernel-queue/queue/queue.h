/* queue.h: the stable queue in SQLite: patches, their tags, files, states and dependencies. */
#ifndef STABLEQ_QUEUE_H
#define STABLEQ_QUEUE_H

#include "compose.h"
#include "patch.h"

#include <jansson.h>
#include <sqlite3.h>

/*
 * A patch's life (DESIGN.md). Each arrow is one transaction that writes the
 * new state, an event and, where the author must hear of it, a mail.
 *
 *   imported -> checked -> queued -> released -> reverted
 *                  |  \-> held (fix-up of a broken patch; override queues it)
 *                  |         \-> broken (bisection or a maintainer) -> dropped
 *                  \-> rejected (Fixes: target absent, already applied)
 */
enum patch_state {
	PS_IMPORTED,
	PS_CHECKED,
	PS_QUEUED,
	PS_HELD,
	PS_REJECTED,
	PS_BROKEN,
	PS_DROPPED,
	PS_RELEASED,
	PS_REVERTED,
	PS_COUNT
};

const char *queue_state_name(enum patch_state s);
/* -1 if name is not a state. */
int queue_state_parse(const char *name);

/*
 * Inserts a parsed patch at the end of branch's queue (branches.id; inside
 * the caller's transaction) with its tags and files. Duplicates (same
 * Message-Id, upstream SHA or patch-id as a patch of that branch) are not
 * inserted: returns 0 and sets *id to the existing patch; a new patch
 * returns 1 and its id. The same fix queued for another branch is a row of
 * its own.
 */
int queue_add(sqlite3 *db, long long branch, const struct patch *p,
	      long long source_id, long long *id);
/* The default (first configured) branch's id, or negative. */
long long queue_default_branch(sqlite3 *db);

/*
 * Recomputes the "goes with" edges of the dependencies table for all
 * patches: if depends_on is reverted or dropped, patch_id goes with it
 * (Stable-dep-of either way, later parts of a [PATCH n/m] series, Fixes:).
 */
int queue_link_dependencies(sqlite3 *db);

/*
 * Moves a patch to a new state: checks the transition is allowed (else
 * ERR_CONFLICT naming both states), writes state, reason, an event by actor
 * and returns the event id (> 0). Caller holds the transaction.
 */
long long queue_set_state(sqlite3 *db, long long id, enum patch_state to,
			  const char *reason, const char *actor);
int queue_get_state(sqlite3 *db, long long id, enum patch_state *out);

/*
 * What a mail about patch id names (struct notice's patch: subject,
 * authors, Message-Id, upstream, its queue's branch, the Signed-off-by
 * chain). A new reference, or NULL (ERR_NOTFOUND for an unknown id).
 */
json_t *queue_notice_patch(sqlite3 *db, long long id);
/* compose_notice() of n with its patch filled in from the store. */
struct notice;
struct config;
long long queue_notify(sqlite3 *db, const struct config *cfg,
		       const struct notice *n);

/* Stores a verdict (history: never overwrites). */
int queue_verdict_add(sqlite3 *db, long long patch_id, const char *check,
		const char *result, const char *detail);
/* The newest result of a check on a patch (*result: caller frees);
 * ERR_NOTFOUND when it has none. */
int queue_verdict_latest(sqlite3 *db, long long patch_id, const char *check,
		   char **result);

/*
 * Ids of branch's patches (0: every branch's) in a state (or all with
 * state < 0), in queue order.
 */
int queue_ids(sqlite3 *db, long long branch, int state, long long **ids,
	      size_t *n);

/*
 * JSON for one patch: id, subject, author_name, author_email, message_id,
 * in_reply_to, upstream, fixes, stable_versions, stable_dep_of, prereqs,
 * state, state_reason, verdicts {check: {result, detail, at}}, checks
 * {check: result}, files,
 * queue_pos, released_commit, flags (adds_file...). full adds tags, message,
 * diff, depends_on, dependents, verdict history, flags and events.
 * Returns a new reference or NULL (ERR_NOTFOUND for an unknown id).
 */
json_t *queue_patch_json(sqlite3 *db, long long id, int full);
/*
 * What a list holds of each patch. LIST_FULL: the patch object (not full)
 * above. LIST_SUMMARY: id, subject, subject_prefix, author_name,
 * author_email, upstream, state, state_reason, queue_pos, series_part,
 * series_total, updated_at, fixes and checks {check: result}: a third of
 * the bytes, for a queue at a glance (GET /api/v1/patches).
 */
enum list_view { LIST_SUMMARY, LIST_FULL };

/*
 * An array of patches by state (NULL: all), limit/offset, in queue order,
 * of every branch (each row names its "branch" key) ...
 */
json_t *queue_list_json(sqlite3 *db, const char *state, long long limit,
			long long offset, long long *total,
			enum list_view view);
/* The LIST_FULL objects of the patches ids, in queue order (one query
 * each for the rows, tags, verdicts and files, whatever n is). */
json_t *queue_patches_json(sqlite3 *db, const long long *ids, size_t n);
/* ... or of one branch's queue (branches.id; 0: every branch). */
json_t *queue_list_json_branch(sqlite3 *db, long long branch,
			       const char *state, long long limit,
			       long long offset, long long *total,
			       enum list_view view);
/*
 * The branch a patch (or a candidate) belongs to, by key; caller frees.
 * ERR_NOTFOUND for an unknown id.
 */
int queue_patch_branch(sqlite3 *db, long long patch_id, char **key);
int queue_candidate_branch(sqlite3 *db, long long candidate_id, char **key);
/*
 * The patch of branch's queue (branches.id) whose upstream SHA (or released
 * commit) is sha, prefix match both ways, unless it was rejected or
 * dropped: 1 with *state (caller frees; may be NULL), 0 none, negative on
 * a store error.
 */
int queue_find_upstream(sqlite3 *db, long long branch, const char *sha,
			char **state);

/*
 * What acts on a patch (or a candidate) acts on its branch: selects that
 * branch in app (its tree, queue directory, ...) unless app->branch_given
 * named another (then an error naming both). Negative for an unknown id.
 */
struct app;
int queue_follow_patch(struct app *app, long long patch_id);
int queue_follow_candidate(struct app *app, long long candidate_id);

/*
 * What the mail intake asks of the queue (queue-mail.c). queue_by_message_id:
 * 1 and *id when a patch has that Message-Id, else 0. queue_by_upstream: the
 * live patches (not dropped, reverted or rejected) of every branch whose
 * upstream SHA matches sha (>= 8 hex digits, either one a prefix of the
 * other); *ids owned by the caller. queue_add_trailer: a Reviewed-by/
 * Acked-by/Tested-by ... from a reply as a tag of the patch, 1 when added,
 * 0 when the patch had it already (same kind and value). queue_rerolled:
 * the live patches (imported, checked, queued, held) of branch with subject
 * from author_email: what a v2 of them supersedes (dropped with a reason
 * "superseded by ...", they are no longer duplicates of the v2: same
 * upstream SHA). queue_patch_subject: its subject and upstream
 * (may be NULL), caller frees.
 */
int queue_by_message_id(sqlite3 *db, const char *message_id, long long *id);
int queue_by_upstream(sqlite3 *db, const char *sha, long long **ids,
		      size_t *n);
int queue_add_trailer(sqlite3 *db, long long patch_id, const char *kind,
		      const char *value, const char *extra);
int queue_rerolled(sqlite3 *db, long long branch, const char *subject,
		   const char *author_email, long long **ids, size_t *n);
int queue_patch_subject(sqlite3 *db, long long id, char **subject,
			char **upstream);

#endif
