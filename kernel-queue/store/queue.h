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
 *                  |  \-> held (fix-up of a broken patch, or a reply's NAK,
 *                  |         drop request, regzbot report: queue_hold();
 *                  |         override queues it)
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
 * returns 1 and its id, with an 'imported' event by actor (who imported
 * it: user:NAME, token:NAME, daemon). The same fix queued for another
 * branch is a row of its own.
 */
int queue_add(sqlite3 *db, long long branch, const struct patch *p,
	      long long source_id, const char *actor, long long *id);
/*
 * queue_add() with flags. QUEUE_ADD_APART: a patch naming the same
 * upstream commit as a live patch of branch is a patch of its own (a v2
 * stored beside the patch it would replace, held for a maintainer); the
 * same Message-Id or the same diff is still the same patch.
 */
enum { QUEUE_ADD_APART = 1 };
int queue_add_flags(sqlite3 *db, long long branch, const struct patch *p,
		    long long source_id, const char *actor, unsigned flags,
		    long long *id);
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
 * Who holds a held patch (patches.hold). QUEUE_HOLD_CHECK: the checks'
 * own verdict (a fix-up of a broken patch ...), which a re-check may lift;
 * QUEUE_HOLD_REPLY: a NAK, drop request or regression report from the
 * list, which only a maintainer's override lifts. queue_hold() holds id
 * (queue_set_state() to held, inside the caller's transaction) on kind's
 * behalf and returns the event id. A patch held already stays held: reason
 * is added after its reason, a check's hold becomes a reply's (never the
 * other way round: then 0 and nothing changes), with a 'hold' event. Any
 * other move of state (queue_set_state()) ends the hold and clears who
 * held it. queue_held_by(): the kind holding id, 0 when it is not held or
 * held by someone else (a hold made before kinds were kept, or by another
 * module), negative on error.
 */
enum queue_hold { QUEUE_HOLD_CHECK = 1, QUEUE_HOLD_REPLY = 2 };
long long queue_hold(sqlite3 *db, long long id, enum queue_hold kind,
		     const char *reason, const char *actor);
int queue_held_by(sqlite3 *db, long long id);

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

/* The LIST_FULL objects of the patches ids, in queue order (one query
 * each for the rows, tags, verdicts and files, whatever n is). */
json_t *queue_patches_json(sqlite3 *db, const long long *ids, size_t n);
/*
 * An array of patches by state (NULL: all), limit/offset, in queue order,
 * of one branch's queue (branches.id; 0: every branch, each row naming its
 * "branch" key).
 */
json_t *queue_list_json_branch(sqlite3 *db, long long branch,
			       const char *state, long long limit,
			       long long offset, long long *total,
			       enum list_view view);
/*
 * The branch a patch belongs to, by key; caller frees. ERR_NOTFOUND for an
 * unknown id.
 */
int queue_patch_branch(sqlite3 *db, long long patch_id, char **key);
/*
 * The patch of branch's queue (branches.id) whose upstream SHA (or released
 * commit) is sha, prefix match both ways, unless it was rejected or
 * dropped: 1 with *state (caller frees; may be NULL), 0 none, negative on
 * a store error.
 */
int queue_find_upstream(sqlite3 *db, long long branch, const char *sha,
			char **state);

/*
 * What acts on a patch acts on its branch: branch_ctx_follow() (ctx.h)
 * with the patch's branch (candidate_follow() for a candidate).
 */
struct branch_ctx;
int queue_follow_patch(struct branch_ctx *bc, long long patch_id);

/*
 * What the mail intake asks of the queue (queue-mail.c). queue_by_message_id:
 * 1 and *id when a patch has that Message-Id, else 0. queue_by_upstream: the
 * live patches (not dropped, reverted or rejected) of every branch whose
 * upstream SHA, or the commit a release made of it on its branch
 * (released_commit), matches sha (>= 7 hex digits, either one a prefix of
 * the other); *ids owned by the caller. queue_add_trailer: a Reviewed-by/
 * Acked-by/Tested-by ... from a reply as a tag of the patch, 1 when added,
 * 0 when the patch had it already (same kind and value). queue_rerolled:
 * the live patches (imported, checked, queued, held) of branch with subject
 * from author_email (NULL: from anyone): what a v2 of them supersedes (dropped with a reason
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
/*
 * What the mail intake's series handling asks (queue-mail.c).
 * queue_patch_hash: the patch-id of its diff (41 bytes with the NUL).
 * queue_place_after / queue_place_before:
 * moves id to just after (before) other in the queue, between other and
 * its neighbour, so that a series' late part lands in n/m order.
 * queue_released_by_commit: the released patches whose upstream commit or
 * released commit is sha (>= 12 hex digits, prefix match both ways);
 * *ids owned by the caller.
 */
int queue_patch_hash(sqlite3 *db, long long id, char *hash);
/* Its state, state_reason (caller frees; NULL when none) and queue_pos;
 * each out-parameter may be NULL. */
int queue_get_row(sqlite3 *db, long long id, enum patch_state *state,
		  char **reason, double *pos);
int queue_place_after(sqlite3 *db, long long id, long long other);
int queue_place_before(sqlite3 *db, long long id, long long other);
int queue_released_by_commit(sqlite3 *db, const char *sha, long long **ids,
			     size_t *n);

/* {"patch id": branches.id or null} of the patches ids (a JSON array text). */
json_t *queue_branch_ids(sqlite3 *db, const char *ids);
/* {state: count} of branch's patches (0: every branch's); NULL on error. */
json_t *queue_state_counts(sqlite3 *db, long long branch);
/* How many of branch's patches are in state, or negative. */
long long queue_count(sqlite3 *db, long long branch, enum patch_state state);
/*
 * Fixes across branches (the view `fixes`: one fix, the patches with its
 * upstream commit or patch-id): how many there are on branch_key ("": all)
 * and a page of their rows, fix by fix, {fix_key, id, branch, state,
 * state_reason, subject, upstream, patch_id}.
 */
int queue_fix_count(sqlite3 *db, const char *branch_key, long long *total);
json_t *queue_fix_page(sqlite3 *db, const char *branch_key, long long limit,
		       long long offset);
/*
 * The latest verdict of each check of the patches ids (a JSON array text):
 * rows {patch_id, check_name, result, detail, created_at}.
 */
json_t *queue_latest_verdicts_json(sqlite3 *db, const char *ids);

/*
 * The ids of branch's patches as a JSON array text (every state), and of
 * its queued patches in queue order (what a candidate of the queue
 * applies). NULL on error; caller frees.
 */
char *queue_branch_patches(sqlite3 *db, long long branch);
char *queue_queued_ids(sqlite3 *db, long long branch);
/* The ids of branch's patches in state, by id (a JSON array text). */
char *queue_state_ids(sqlite3 *db, long long branch, enum patch_state state);
/* The branches.id of patch_id (0: none), or negative (ERR_NOTFOUND). */
long long queue_branch_of(sqlite3 *db, long long patch_id);
/*
 * For rows of another owner that name a patch in id_field: field becomes
 * the patch's branches.id (null: none), for branch_fill() to show.
 */
int queue_fill_branch(sqlite3 *db, json_t *rows, const char *id_field,
		      const char *field);

/*
 * For rows of another owner (an object or an array of objects) whose
 * field holds a patch id: it becomes the patch's subject (null: none).
 */
int queue_fill_subject(sqlite3 *db, json_t *rows, const char *field);
/* The file a patch came from in its source (*filename NULL: none; caller frees)
 * and the source's id. */
int queue_patch_file(sqlite3 *db, long long id, char **filename,
		     long long *source_id);

/*
 * What a revert plan needs of a patch: {queue_pos, subject, state,
 * released_commit, upstream}; NULL with ERR_NOTFOUND ("patch N: no such
 * patch").
 */
json_t *queue_patch_brief_json(sqlite3 *db, long long id);
/*
 * The patches that depend on id and are still in the queue, in queue
 * order: {patch_id, kind (stable-dep-of, prereq, series, fixes)}.
 */
json_t *queue_dependents_json(sqlite3 *db, long long id);

/*
 * A patch's own text: {subject, upstream, message, diff, author_name,
 * author_email, date}; NULL with ERR_NOTFOUND ("patch N: no such patch").
 * queue_field() reads one of them (NULL when null), borrowed from o.
 */
json_t *queue_patch_content_json(sqlite3 *db, long long id);
const char *queue_field(json_t *o, const char *field);
/* The commit a release made of patch id. */
int queue_set_released_commit(sqlite3 *db, long long id, const char *commit);
/* The newest commit a release made on branch (*commit NULL: none). */
int queue_newest_released(sqlite3 *db, long long branch, char **commit);

/* The files a patch touches, by path: {path, change (A, M, D, R)}. */
json_t *queue_patch_files_json(sqlite3 *db, long long id);

/* The latest verdict of check on patch_id, its result and detail (caller frees
 * both); ERR_NOTFOUND. */
int queue_verdict_latest_full(sqlite3 *db, long long patch_id,
			      const char *check, char **result, char **detail);
/* The queued patches of branch before patch_id, in queue order (*ids: caller
 * frees). */
int queue_ids_before(sqlite3 *db, long long branch, long long patch_id,
		     long long **ids, size_t *n);
/*
 * The first queued patch of branch, in queue order, with a line starting
 * with marker in its message and no verdict of check yet (ERR_NOTFOUND).
 */
int queue_first_marked(sqlite3 *db, long long branch, const char *marker,
		       const char *check, long long *id);

/*
 * The patches of id's branch that its Fixes: tags name (by upstream or
 * released commit, 12 digits) and that are broken, dropped or reverted:
 * {id, subject, state, fixes (the tag's value)}.
 */
json_t *queue_broken_fix_targets_json(sqlite3 *db, long long id);
/* How many files patch id adds, and how many are UAPI headers. */
int queue_file_counts(sqlite3 *db, long long id, long long *added,
		      long long *uapi);
/*
 * The later patches of id's branch still in play that touch one of its
 * files, newest first (at most 64): {id, diff}.
 */
json_t *queue_later_touching_json(sqlite3 *db, long long id);
/* The oldest (by id) of branch's patches in state (ERR_NOTFOUND). */
int queue_first_in_state(sqlite3 *db, long long branch, enum patch_state state,
			 long long *id);

/*
 * The first patch, in queue order, of self's branch other than self whose
 * upstream commit is sha (12 digits, or the shorter spelling); live_only:
 * one still in play (not rejected, dropped or reverted). ERR_NOTFOUND.
 */
int queue_sibling_of(sqlite3 *db, long long self, const char *sha,
		     int live_only, long long *id);
/* A patch's fixes, stable and stable_dep_of tags, in order: {kind, value,
 * extra}. */
json_t *queue_tags_json(sqlite3 *db, long long id);

#endif
