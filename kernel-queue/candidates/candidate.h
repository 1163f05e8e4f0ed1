/* candidate.h: branch + a queue prefix, materialized as a commit, built, booted, tested. */
#ifndef STABLEQ_CANDIDATE_H
#define STABLEQ_CANDIDATE_H

#include "ctx.h"

#include <jansson.h>

/*
 * A candidate row is created 'pending' (by the CLI, the API or the daemon)
 * and then run: apply -> build -> boot -> done. The verdict is pass, fail,
 * build-failed, apply-failed or hang, with per-test rows.
 *
 * patch_ids: the patches to apply in order (NULL: branch's queued patches,
 * up to and including upto if upto > 0; a patch of another branch's queue
 * is refused). purpose: queue, bisect, confirm, baseline. branch:
 * branches.id; the row always names it.
 */
long long candidate_create_on(sqlite3 *db, long long branch,
			      const long long *patch_ids, size_t n,
			      long long upto, const char *purpose,
			      long long bisection_id, const char *actor);
/*
 * A queue candidate asked for (POST /candidates) by actor ("token:ci"):
 * when the branch has a queue candidate of exactly the patches it would
 * apply that has no verdict yet, that one (*created 0: the queue did not
 * change, the work is the same); else a new pending one (*created 1),
 * unless actor has max_pending pending candidates already (ERR_TOOBIG,
 * naming the limit; max_pending 0: no limit). One transaction: concurrent
 * requests of one queue make one candidate.
 */
long long candidate_request(sqlite3 *db, long long branch, long long upto,
			    const char *actor, int max_pending, int *created);
/*
 * 0 when candidate id is on bc's selected branch, else negative with
 * "candidate 12 is on branch 6.12, not 6.1 (--branch 6.12)".
 */
int candidate_on_branch(struct branch_ctx *bc, long long id);
/*
 * Runs a pending candidate to its verdict (runs: boots of the same build,
 * >= 1; a test with mixed results across runs is recorded 'flaky').
 * progress (may be NULL) gets one line per step. Returns 0 when a verdict
 * was stored (look at it with candidate_verdict()), negative when the
 * candidate could not be run at all (the tree is missing...).
 */
int candidate_run(struct branch_ctx *bc, long long id, int runs,
		  void (*progress)(const char *line, void *ctx), void *ctx);
/*
 * Boot only these tests (names: a JSON array, borrowed; NULL: the whole set):
 * a bisection's search step runs only its steering tests, guest tests by
 * name, KUnit cases by their suite (kunit.filter_glob when it is one suite).
 */
int candidate_set_tests_only(sqlite3 *db, long long id, json_t *names);
/*
 * After its first boot of the whole set, boot only these tests (a
 * bisection's confirmation repeats its steering tests alone): the runs
 * past the first take them as tests_only.
 */
int candidate_set_repeat_only(sqlite3 *db, long long id, json_t *names);

/*
 * The patches candidate id applies, in order: a JSON array of ids (a new
 * reference), or NULL with ERR_NOTFOUND ("candidate N: no such
 * candidate"), ERR_INVALID (the stored list is not a list of ids) or the
 * store's error. The one reader of candidates.patch_ids; the same as a
 * C array (*ids: caller frees; *n may be 0).
 */
json_t *candidate_patch_list(sqlite3 *db, long long id);
int candidate_patch_ids(sqlite3 *db, long long id, long long **ids,
			size_t *n);
/* The stored verdict ("pass", ...) or NULL while it runs; caller frees. */
char *candidate_verdict(sqlite3 *db, long long id);
/*
 * The verdicts as code compares them. CV_NONE: no verdict yet (or no
 * such candidate). The names are what the store, the API and the CLI say.
 */
enum cand_verdict {
	CV_NONE,
	CV_PASS,
	CV_FAIL,
	CV_HANG,
	CV_BUILD_FAILED,
	CV_APPLY_FAILED,
	CV_COUNT
};
/* "pass", "build-failed"...; "none" for CV_NONE, "?" out of range. */
const char *candidate_verdict_name(enum cand_verdict v);
/* CV_NONE for NULL or a name that is not a verdict. */
enum cand_verdict candidate_verdict_parse(const char *name);
/* The stored verdict of candidate id (CV_NONE while it runs). */
enum cand_verdict candidate_verdict_of(sqlite3 *db, long long id);
/*
 * What a candidate found, in one line for logs: "candidate 12: fail:
 * user-copy (first bad patch 5)", "candidate 13: pass (7 patches, 96 tests
 * passed, build 9 from the cache, 1 boot)". Caller frees.
 */
char *candidate_summary(sqlite3 *db, long long id);
/* The summary of the newest queue or confirm candidate (id is ignored). */
char *candidate_newest_summary(sqlite3 *db, long long id);
/* {id, purpose, step, verdict, detail, patch_ids, commit, build{}, tests[],
 * coverage{} (coverage.h, or null), summary ("pass: 7 tests; 58 of 62
 * patches compiled, 4 in the booted kernel", null while it runs)} */
json_t *candidate_json(sqlite3 *db, long long id);
/* Oldest pending candidate of branch (0: any), 0 if none; not a tip's
 * baseline, which waits for candidate_baseline_due(). */
long long candidate_next_pending(sqlite3 *db, long long branch);
/* Jobs of the daemon's: a pending candidate to run (*id) ... */
int candidate_pending_due(struct branch_ctx *bc, long long *id);
/* ... the queued patches changed since their last candidate ... */
int candidate_queue_due(struct branch_ctx *bc, long long *id);
/* ... and a candidate whose run was stopped goes back to pending. */
int candidate_interrupted(struct branch_ctx *bc, long long id);

/*
 * A candidate's columns and lists, for the modules that show or steer
 * candidates (candidate-rows.c). Ids of no such candidate read as 0.
 */
/* 0 when candidate id exists, ERR_NOTFOUND or negative. */
int candidate_exists(sqlite3 *db, long long id);
/* Its branches.id (0: none). */
long long candidate_branch_id(sqlite3 *db, long long id);
/* Its branch's key (caller frees); ERR_NOTFOUND for an unknown id. */
int candidate_branch(sqlite3 *db, long long id, char **key);
/* What acts on a candidate acts on its branch (branch_ctx_follow()). */
int candidate_follow(struct branch_ctx *bc, long long id);
/* {"candidate id": branches.id} of the ids (a JSON array text). */
json_t *candidate_branch_ids(sqlite3 *db, const char *ids);
/*
 * The candidate at work (past pending, not done), newest: {id, purpose,
 * step, upto_patch_id, patches, started_at, bisection_id, branch_id}, json
 * null when none, NULL on error.
 */
json_t *candidate_at_work_json(sqlite3 *db);
/* Branch's newest candidate, and its newest with a verdict (ERR_NOTFOUND). */
json_t *candidate_latest_json(sqlite3 *db, long long branch);
json_t *candidate_last_verdict_json(sqlite3 *db, long long branch);
/*
 * The newest candidate that included each of patch_ids (a JSON array
 * text): rows {patch, id, purpose, step, verdict}.
 */
json_t *candidate_newest_of_json(sqlite3 *db, const char *patch_ids);
/*
 * The newest candidates (purpose NULL: all; branch 0: all), as /candidates
 * lists them; "branch" holds the branches.id (branch_fill() shows it).
 */
json_t *candidate_list_json(sqlite3 *db, const char *purpose, long long branch,
			    long long limit);
/* Ids of the newest candidates that included patch_id, newest first. */
json_t *candidate_ids_with(sqlite3 *db, long long patch_id, long long limit);
/* The tip candidate id's tests were classified against (0: none). */
long long candidate_tip(sqlite3 *db, long long id);
int candidate_set_tip(sqlite3 *db, long long id, long long tip);
int candidate_count_pending(sqlite3 *db, long long *n);
/* {verdict or "none": count}. */
json_t *candidate_verdict_counts(sqlite3 *db);
/* Branch's newest failed queue or confirm candidate (ERR_NOTFOUND). */
int candidate_last_failed(sqlite3 *db, long long branch, long long *id);
/* Branch's newest queue or confirm candidate when it failed with patches. */
long long candidate_failed_tip(sqlite3 *db, long long branch);
int candidate_set_purpose(sqlite3 *db, long long id, const char *purpose);
/* What it cost: builds not from the cache (0 or 1) and boots. */
int candidate_cost(sqlite3 *db, long long id, long long *builds,
		   long long *boots);
/* Its build's id (0: none yet), negative when there is no candidate. */
long long candidate_build_id(sqlite3 *db, long long id);
/*
 * Why it failed to build, or NULL (caller frees): its build's error
 * excerpt; its detail with the build coverage when a touched object did
 * not compile ("build-failed"); "build: <object's error>" when the guest
 * kernel built but an object did not.
 */
char *candidate_build_error(sqlite3 *db, long long id);
char *candidate_coverage_failure(sqlite3 *db, long long id);
char *candidate_object_failure(sqlite3 *db, long long id);
/*
 * The finished candidates since (NULL: all) of branch (0: all; -1: those
 * of no branch), oldest first: a statement of rows (id, purpose, verdict,
 * detail, patch_ids, commit_sha, started_at, build_id) the caller
 * finalizes.
 */
sqlite3_stmt *candidate_done_rows(sqlite3 *db, const char *since,
				  long long branch);
/* Its tree's commit, or NULL; caller frees. */
char *candidate_commit(sqlite3 *db, long long id);
int candidate_patch_count(sqlite3 *db, long long id, long long *n);
/* Its build coverage (JSON text) and the log of it. */
int candidate_set_coverage(sqlite3 *db, long long id, const char *coverage,
			   const char *log);
int candidate_coverage(sqlite3 *db, long long id, char **coverage);
int candidate_coverage_log(sqlite3 *db, long long id, char **log);
/*
 * Branch's newest queue or confirm candidate of exactly the patches ids (a
 * JSON array text, queue_queued_ids()), passed ones only when passed:
 * ERR_NOTFOUND when there is none.
 */
int candidate_with_patches(sqlite3 *db, long long branch, const char *ids,
			   int passed, long long *id);
/*
 * Builds: the log's path; the row as KCIDB reads it (a statement of
 * result, seconds, error_excerpt, created_at, config_hash the caller
 * finalizes); the result ("ok").
 */
int candidate_build_log_path(sqlite3 *db, long long build, char **path);
sqlite3_stmt *candidate_build_row(sqlite3 *db, long long build);
char *candidate_build_result(sqlite3 *db, long long build);
/* The newest build's id (0: none): the kernel in the build directory. */
long long candidate_last_build(sqlite3 *db);
/* How many builds were timed, and their seconds together. */
int candidate_build_seconds(sqlite3 *db, long long *count, double *sum);

/*
 * The phases of a candidate, each with its time (sql/022,
 * candidate-phases.c): apply, build (with coverage and the kselftests),
 * boot (the guest to userspace), tests (the test set in the guest), retry
 * (the failing tests alone), baseline (waiting for the tip's run: 0 s when
 * it was run before), bisection (of this failing candidate). Like
 * progress, phases are a report: an error writing one is logged, never
 * fails the work.
 *
 * candidate_phase_open() starts one (its row, 0 when it could not be
 * written), candidate_phase_close() ends it with its seconds and a detail
 * (NULL: none); candidate_phase_store() records one timed elsewhere.
 */
int candidate_phase_valid(const char *phase);
long long candidate_phase_open(sqlite3 *db, long long id, long long branch,
			       const char *purpose, const char *phase);
void candidate_phase_close(sqlite3 *db, long long row, double seconds,
			   const char *detail);
void candidate_phase_store(sqlite3 *db, long long id, long long branch,
			   const char *purpose, const char *phase,
			   double seconds, const char *detail);
/* candidate_phase_store() for candidate id, its branch and purpose read
 * from its row (bisect.c records the bisection of a candidate). */
void candidate_phase_record(sqlite3 *db, long long id, const char *phase,
			    double seconds, const char *detail);
/*
 * How long phase usually takes on branch for candidates of purpose: the
 * median of the branch's last 10 (a candidate's parts summed), -1 when it
 * has none.
 */
double candidate_phase_estimate(sqlite3 *db, long long branch,
				const char *purpose, const char *phase);
/* "4.2 s", "38 s", "4 min 3 s", "1 h 2 min"; caller frees. */
char *candidate_duration_text(double seconds);
/*
 * {phases: [{phase, seconds (null while it runs), running, elapsed (while
 * it runs), estimate (the branch's usual, or null), detail}], estimate_left
 * (seconds to the verdict from the branch's history, null when done or
 * not known)}: the phases it went through, and while it runs the ones
 * every run has that are still to come. A new reference or NULL.
 */
json_t *candidate_phases_json(sqlite3 *db, long long id, long long branch,
			      const char *purpose, int finished);
/* [{phase, purpose, count, seconds}] of every finished phase: /metrics. */
json_t *candidate_phase_totals(sqlite3 *db);

/*
 * A finished run of the whole test set of the state that the first prefix
 * patches of candidate failing's n make, when there is one: failing itself
 * for all n, the tip's run for none; both only while the branch tip (and
 * the guest configuration and the test set) is the one failing was applied
 * on. 0 when there is none: a bisection's confirmation boots then.
 */
long long candidate_same_state(struct branch_ctx *bc, long long failing,
			       size_t prefix, size_t n);

/*
 * The daemon's job at the lowest priority: a branch tip whose state (tree,
 * guest configuration, test set) has no baseline yet gets one, a pending
 * 'baseline' candidate of no patches (*id), so that a failing candidate of
 * that tip is judged at once; an interrupted one is run again. 0 when
 * baseline_idle or test_baseline is no, the tree is not there yet, or the
 * state has its baseline.
 */
int candidate_baseline_due(struct branch_ctx *bc, long long *id);

#endif
