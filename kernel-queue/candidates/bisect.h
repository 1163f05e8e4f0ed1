/* bisect.h: find the first failing queue prefix of a failing candidate. */
#ifndef STABLEQ_BISECT_H
#define STABLEQ_BISECT_H

#include "ctx.h"

#include <jansson.h>

/*
 * Binary search over the prefixes of the failing candidate's patch list,
 * steered by the tests that failed in it (or by the build, if it failed to
 * build), in at most ceil(log2(N+1)) candidate builds (the branch alone
 * is one of the N+1 answers, not assumed good); then confirms the culprit:
 * its prefix fails and the one before passes, each booted
 * cfg.bisect_confirm times. Every state the confirmation boots was built
 * before (by the search or the failing candidate): with the build cache
 * it costs boots, no build. builds_used counts real builds, boots_used
 * boots. The flag is raised by "bisection:ID". A test with mixed results on one build is
 * recorded flaky and stops steering. On success the culprit is flagged
 * broken with the evidence. Every step is stored. *bisection_id is set as
 * soon as the row exists.
 *
 * budget: the steps (builds and boots of one prefix) this run may take;
 * -1 to the end. A run that spends it returns 0 with the bisection still
 * 'running'; the next run of the same candidate goes on from its stored
 * steps (replayed from their stored results, not built again). The daemon
 * bisects one step at a time, so another branch's step can come between.
 */
int bisect_run(struct branch_ctx *bc, long long candidate_id, int budget,
	       long long *bisection_id,
	       void (*progress)(const char *line, void *ctx), void *ctx);
json_t *bisect_json(sqlite3 *db, long long id);

/*
 * What bisection bisection_id found (detail says it), as bisect_run() ends
 * it: the 'found' event and the culprit flagged broken, both by
 * "bisection:ID". The reason names the tests that steered (steer: a JSON
 * array of names, the first six), the evidence the most specific of them
 * (a KUnit case rather than its ktap test) and its log in candidate
 * bad_cid (the culprit's prefix); by is "build" or "hang" when those
 * steered instead (the log then the build's error). flag_patch() mails
 * the author, naming the test and quoting the log. A culprit already
 * broken is not flagged again. 0 or negative.
 */
int bisect_flag_culprit(struct branch_ctx *bc, long long bisection_id,
			long long culprit, long long bad_cid,
			const json_t *steer, const char *by,
			const char *detail);

/*
 * The search itself, without builds: the first bad prefix of n patches is
 * one of 0..n (0: the branch alone fails; n is known bad). The window
 * holds it in (good, bad]; bisect_window_next() names the prefix to try
 * next, or -1 once bad is the answer; bisect_window_record() narrows the
 * window by that prefix's outcome. bisect_search_steps(n + 1) bounds the
 * tries: ceil(log2(n + 1)).
 */
struct bisect_window {
	long good, bad;
};
void bisect_window_init(struct bisect_window *w, size_t n);
long bisect_window_next(const struct bisect_window *w);
void bisect_window_record(struct bisect_window *w, long prefix, int bad);
long bisect_search_steps(long answers);
/*
 * What a bisection found, in one line for logs: "bisection 3: patch 5,
 * confirmed (4 builds, 9 boots)", "bisection 4: step 2 of about 7 (...)",
 * "bisection 5: failed: ...". Caller frees.
 */
char *bisect_summary(sqlite3 *db, long long id);
/* The summary of the newest bisection of a candidate; NULL if none. */
char *bisect_summary_of(sqlite3 *db, long long candidate_id);

/*
 * Jobs of the daemon's: the newest queue or confirm candidate of the branch
 * failed and nobody bisected it, or its bisection is still running (*id:
 * the candidate); a bisection of it that a stop interrupted is marked so
 * (state failed, "interrupted: ...") and does not count, so it is bisected
 * again.
 */
int bisect_due(struct branch_ctx *bc, long long *id);
int bisect_interrupted(struct branch_ctx *bc, long long candidate_id);

/* The culprit of candidate_id's newest finished bisection (0: none). */
long long bisect_culprit_of(sqlite3 *db, long long candidate_id);
/*
 * The running bisections, newest first: {id, candidate_id, good, bad,
 * builds_used, boots_used, steps_done, steps_total, started_at}.
 */
json_t *bisect_running_json(sqlite3 *db);
/* 0 when bisection id exists, ERR_NOTFOUND or negative. */
int bisect_exists(sqlite3 *db, long long id);
/*
 * The newest bisections of branch (0: all) as /bisections lists them;
 * "branch" holds the branches.id (branch_fill() shows it).
 */
json_t *bisect_list_json(sqlite3 *db, long long branch, long long limit);

/* 1 when bisection id found its culprit, 0 if not (yet), or negative. */
int bisect_found(sqlite3 *db, long long id);
/*
 * stableq's own confirmed culprit told to the regressions list as regzbot
 * reads it ("#regzbot introduced: <upstream sha>"), inside the caller's
 * transaction: only when ev names a bisection that found patch id and
 * confirmed it both ways, regressions_list is set and the patch names its
 * upstream commit; else 0 and nothing is written.
 */
struct evidence;
int bisect_report_culprit(struct branch_ctx *bc, long long id,
			  const char *reason, const struct evidence *ev);

#endif
