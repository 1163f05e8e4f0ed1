/* bisect.c: binary search of a failing candidate's queue prefixes for the culprit. */
#include "bisect.h"
#include "cell.h"
#include "testcase.h"
#include "candidate.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "progress.h"
#include "queue.h"
#include "flag.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

enum outcome { GOOD, BAD, FLAKY };
static const char *const outcome_name[] = { "good", "bad", "flaky" };

struct bis {
	struct branch_ctx *bc;
	long long id;          /* bisection */
	long long candidate;   /* the failing candidate it bisects */
	long long *patches;    /* the failing candidate's patch list */
	size_t n;
	int by_build;          /* steered by the build, not by tests */
	int by_hang;
	json_t *steer;         /* names of the tests that steer */
	void (*progress)(const char *, void *);
	void *ctx;
	long long last_candidate;
	long steps_done, steps_total; /* for progress: step k of about m */
	int budget;            /* evaluations left in this run; -1: no limit */
	long long *done;       /* a resumed bisection's stored step candidates */
	size_t ndone, next;    /* ... and the next of them to replay */
	int replaying;
	long long cell_src;    /* the candidate whose cell the steps run in
				* (cell.h: the failing cell of the matrix) */
};

/* ceil(log2(n)): the search steps over n possible answers. */
long bisect_search_steps(long n)
{
	long k = 0;

	while ((1L << k) < n)
		k++;
	return k;
}

void bisect_window_init(struct bisect_window *w, size_t n)
{
	w->good = -1;
	w->bad = (long)n;
}

long bisect_window_next(const struct bisect_window *w)
{
	return w->bad - w->good > 1 ? w->good + (w->bad - w->good) / 2 : -1;
}

void bisect_window_record(struct bisect_window *w, long prefix, int bad)
{
	if (bad)
		w->bad = prefix;
	else
		w->good = prefix;
}

static void step_progress(struct bis *b)
{
	char *label = xstrfmt("bisection %lld", b->id);

	progress_set(b->bc->db, "bisection", b->id, label, b->steps_done,
		     b->steps_total, "steps");
	/* progress only: a step not counted is no harm */
	if (db_exec(b->bc->db,
		    "UPDATE bisections SET steps_done = ?, steps_total = ?"
		    " WHERE id = ?",
		    "iii", (long long)b->steps_done, (long long)b->steps_total,
		    b->id) < 0)
		log_warnx("bisection %lld: progress: %s", b->id, err_msg());
	free(label);
}

static void say(struct bis *b, const char *line)
{
	if (b->progress)
		b->progress(line, b->ctx);
	log_info("bisection %lld: %s", b->id, line);
}

/* Per test across runs: every run failed -> fail, mixed -> flaky. */
static enum outcome classify(struct bis *b, long long cid, struct strbuf *why)
{
	enum cand_verdict verdict = candidate_verdict_of(b->bc->db, cid);
	enum outcome o = GOOD;
	size_t i;
	json_t *t;

	if (b->by_build) {
		o = verdict == CV_BUILD_FAILED ? BAD : GOOD;
		strbuf_addf(why, "build %s", o == BAD ? "failed" : "ok");
		return o;
	}
	if (verdict == CV_BUILD_FAILED || verdict == CV_APPLY_FAILED) {
		/* cannot tell: treat as bad so the search stays on the safe
		 * side, and say so */
		strbuf_addf(why, "%s (counted as bad)",
			    candidate_verdict_name(verdict));
		return BAD;
	}
	if (b->by_hang) {
		o = verdict == CV_HANG ? BAD : GOOD;
		strbuf_addf(why, "guest %s", o == BAD ? "hung" : "finished");
		return o;
	}
	for (i = 0; i < json_array_size(b->steer);) {
		long long fails = 0, passes = 0;
		t = json_array_get(b->steer, i);
		testcase_results(b->bc->db, cid, json_string_value(t), &fails,
				 &passes);
		if (fails && passes) {
			/* mixed results on one build: it stops steering */
			strbuf_addf(why, "%s%s is flaky, no longer steers",
				    why->len ? ", " : "", json_string_value(t));
			if (!b->replaying)
				event_add(b->bc->db, b->bc->actor,
					  "bisection", b->id, "flaky",
					  "%s: passes and fails on candidate"
					  " %lld",
					  json_string_value(t), cid);
			json_array_remove(b->steer, i);
			continue;
		}
		i++;
		if (fails) {
			strbuf_addf(why, "%s%s fails", why->len ? ", " : "",
				    json_string_value(t));
			o = BAD;
		}
	}
	if (!json_array_size(b->steer))
		return FLAKY; /* nothing deterministic is left to steer by */
	if (o == GOOD)
		strbuf_addstr(why, "steering tests pass");
	return o;
}

/* Says what a step found (unless storing it failed: ret < 0); frees why. */
static void say_outcome(struct bis *b, size_t prefix, enum outcome o,
			struct strbuf *why, int ret)
{
	char line[512];

	if (ret >= 0) {
		snprintf(line, sizeof(line), "prefix %zu is %s: %s", prefix,
			 outcome_name[o], why->buf);
		say(b, line);
	}
	strbuf_release(why);
}

static int store_step(struct bis *b, size_t prefix, long long cid,
		      enum outcome o, const char *kind)
{
	return db_exec(b->bc->db,
		       "INSERT INTO bisection_steps (bisection_id, prefix_len,"
		       " candidate_id, result, kind) VALUES (?, ?, ?, ?, ?)",
		       "iiitt", b->id, (long long)prefix, cid, outcome_name[o],
		       kind);
}

/*
 * A confirmation of prefix that the run of the same state answers (the
 * failing candidate for all its patches, the tip's run for none: see
 * candidate_same_state()), when each steering test ran there at least
 * runs times: that run is the step, no boot. 1 when it was, 0 when the
 * step must boot, negative on error.
 */
static int reuse_state(struct bis *b, size_t prefix, int runs,
		       enum outcome *out)
{
	struct strbuf why = STRBUF_INIT;
	long long cid, seen = -1;
	char line[512];
	size_t i;
	int ret;

	if (b->by_build || b->by_hang || !json_array_size(b->steer))
		return 0;
	cid = candidate_same_state(b->bc, b->candidate, prefix, b->n);
	if (cid <= 0)
		return 0;
	for (i = 0; i < json_array_size(b->steer); i++) {
		long long fails = 0, passes = 0;
		testcase_results(b->bc->db, cid,
				 json_string_value(json_array_get(b->steer, i)),
				 &fails, &passes);
		if (seen < 0 || fails + passes < seen)
			seen = fails + passes;
	}
	if (seen < runs)
		return 0;
	snprintf(line, sizeof(line),
		 "confirm: prefix %zu/%zu is the state candidate %lld ran (the"
		 " whole set, the steering tests %lld time%s): its results, no"
		 " boot",
		 prefix, b->n, cid, seen, seen == 1 ? "" : "s");
	say(b, line);
	b->steps_done++;
	step_progress(b);
	b->last_candidate = cid;
	*out = classify(b, cid, &why);
	ret = store_step(b, prefix, cid, *out, "confirm");
	say_outcome(b, prefix, *out, &why, ret);
	return ret < 0 ? ret : 1;
}

/*
 * One step: the prefix built and booted, its outcome stored. A resumed
 * bisection first replays its stored steps (their outcomes classified
 * again from the stored results: the same answers, the same tests dropped
 * as flaky). 1, nothing done, when the run's budget is spent: the
 * bisection stays running and the next run goes on from here.
 */
static int evaluate(struct bis *b, size_t prefix, int runs, const char *kind,
		    enum outcome *out)
{
	struct strbuf why = STRBUF_INIT;
	long long cid, builds, boots;
	char line[512];
	int ret;

	if (b->next < b->ndone) {
		cid = b->last_candidate = b->done[b->next++];
		b->replaying = 1;
		*out = classify(b, cid, &why);
		b->replaying = 0;
		b->steps_done++;
		strbuf_release(&why);
		return 0;
	}
	if (b->budget == 0)
		return 1;
	if (b->budget > 0)
		b->budget--;

	/* a confirmation of a state whose whole set ran already (the
	 * failing candidate, the tip's run) reads those results */
	if (!strcmp(kind, "confirm") && (ret = reuse_state(b, prefix, runs,
							   out)) != 0)
		return ret < 0 ? ret : 0;
	cid = candidate_create_on(
		b->bc->db, b->bc->branch_id, b->patches, prefix, 0,
		!strcmp(kind, "confirm") ? "confirm" : "bisect", b->id,
		b->bc->actor);
	if (cid < 0)
		return (int)cid;
	/* a bisect 'confirm' candidate is not the queue's confirmation; it
	 * runs in the failing cell alone */
	if ((ret = candidate_set_purpose(b->bc->db, cid, "bisect")) < 0 ||
	    (ret = cell_copy(b->bc->db, b->cell_src, cid)) < 0)
		return ret;
	/* a search step boots only the steering tests; the confirmation runs
	 * the whole set */
	if (!strcmp(kind, "search") && !b->by_build && !b->by_hang &&
	    json_array_size(b->steer) &&
	    (ret = candidate_set_tests_only(b->bc->db, cid, b->steer)) < 0)
		return ret;
	/* ... once: its repeats boot the steering tests alone */
	if (!strcmp(kind, "confirm") && !b->by_build && !b->by_hang &&
	    json_array_size(b->steer) &&
	    (ret = candidate_set_repeat_only(b->bc->db, cid, b->steer)) < 0)
		return ret;
	snprintf(line, sizeof(line), "%s: prefix %zu/%zu (candidate %lld, %d run%s)",
		 kind, prefix, b->n, cid, runs, runs == 1 ? "" : "s");
	say(b, line);
	b->steps_done++;
	step_progress(b);
	if ((ret = candidate_run(b->bc, cid, runs, b->progress, b->ctx)) < 0)
		return ret;
	b->last_candidate = cid;
	*out = classify(b, cid, &why);
	/* the steps are what a resumed bisection replays */
	ret = store_step(b, prefix, cid, *out, kind);
	/* a state the cache held cost a boot, not a build */
	if (ret >= 0)
		ret = candidate_cost(b->bc->db, cid, &builds, &boots);
	if (ret >= 0)
		ret = db_exec(b->bc->db,
			      "UPDATE bisections SET builds_used = builds_used"
			      " + ?, boots_used = boots_used + ? WHERE id = ?",
			      "iii", builds, boots, b->id);
	say_outcome(b, prefix, *out, &why, ret);
	return ret < 0 ? ret : 0;
}

static int end(struct bis *b, const char *state, long long culprit,
	       const char *detail)
{
	return db_exec(b->bc->db,
		       "UPDATE bisections SET state = ?, culprit_patch_id ="
		       " NULLIF(?, 0), detail = ?, finished_at ="
		       " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
		       "titi", state, culprit, detail, b->id);
}

static char *excerpt_of(sqlite3 *db, long long cid, const char *test)
{
	char *e = NULL;

	e = testcase_fail_excerpt(db, cid, test);
	if (!e)
		e = candidate_build_error(db, cid);
	/* the guest kernel built but a touched object did not (coverage):
	 * the candidate's detail names the object and its first error */
	if (!e)
		e = candidate_coverage_failure(db, cid);
	return e;
}

/* A bisection of the candidate that a run left to go on (0: none). */
static long long resumable(struct bis *b, long long candidate_id)
{
	long long id = 0;
	sqlite3_stmt *st;

	if (db_query_int(b->bc->db, &id,
			 "SELECT id FROM bisections WHERE candidate_id = ? AND"
			 " state = 'running' ORDER BY id DESC LIMIT 1",
			 "i", candidate_id) < 0) {
		err_clear();
		return 0;
	}
	st = db_prepare(
		b->bc->db,
		"SELECT candidate_id FROM bisection_steps WHERE"
		" bisection_id = ? AND candidate_id IS NOT NULL ORDER BY"
		" id",
		"i", id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		b->done = xrealloc(b->done, (b->ndone + 1) * sizeof(*b->done));
		b->done[b->ndone++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return id;
}

int bisect_flag_culprit(struct branch_ctx *bc, long long bisection_id,
			long long culprit, long long bad_cid,
			const json_t *steer, const char *by, const char *detail)
{
	/* the flag and its events say who raised it: this bisection */
	const char *caller = bc->actor;
	char *actor = xstrfmt("bisection:%lld", bisection_id);
	const char *test = NULL;
	struct strbuf failing = STRBUF_INIT;
	char *excerpt = NULL, *reason = NULL, *object = NULL;
	long long build_id;
	enum patch_state cs;
	json_t *v;
	size_t i;
	int ret = 0;

	bc->actor = actor;
	event_add(bc->db, bc->actor, "bisection", bisection_id, "found", "%s",
		  detail);
	/* the evidence names the most specific failing test (a KUnit case
	 * rather than its ktap test), the reason all of them */
	json_array_foreach(steer, i, v)
	{
		const char *name = json_string_value(v);
		if (!name)
			continue;
		if (!test || (strchr(name, '.') && strlen(name) > strlen(test)))
			test = name;
		if (i < 6)
			strbuf_addf(&failing, "%s%s", i ? ", " : "", name);
		else if (i == 6)
			strbuf_addstr(&failing, ", ...");
	}
	excerpt = excerpt_of(bc->db, bad_cid, by ? NULL : test);
	build_id = candidate_build_id(bc->db, bad_cid);
	if (build_id < 0) {
		build_id = 0;
		err_clear();
	}
	reason = xstrfmt("bisection %lld: %s%s", bisection_id,
			 !by ? "regression tests fail from this"
			       " patch on: "
			 : !strcmp(by, "build") ? "the build fails from this"
						  " patch on"
						: "the guest hangs from this"
						  " patch on",
			 by ? "" : failing.buf);
	/* a touched object that does not compile while the guest kernel
	 * built (coverage): the evidence names the object and its error */
	if (by && !strcmp(by, "build"))
		object = candidate_object_failure(bc->db, bad_cid);
	struct evidence ev = {
		.test = object ? object
			: by   ? by
			       : test,
		.log_excerpt = excerpt,
		.build_id = build_id,
		.bisection_id = bisection_id,
	};
	/* the flag and, when confirmed both ways, regzbot's report: one
	 * transaction (a bisection's flag is trusted) */
	if (queue_get_state(bc->db, culprit, &cs) == 0 && cs != PS_BROKEN &&
	    (ret = patch_action_begin(bc, culprit, reason)) >= 0) {
		long long evid = flag_locked(bc, culprit, reason, &ev,
					     FLAG_TRUSTED);
		if (evid >= 0)
			evid = bisect_report_culprit(bc, culprit, reason, &ev);
		ret = db_end(bc->db, evid < 0 ? (int)evid : 0);
		if (ret >= 0)
			log_info("patch %lld: flagged broken: %s", culprit,
				 reason);
	}
	bc->actor = caller;
	free(actor);
	strbuf_release(&failing);
	free(reason);
	free(excerpt);
	free(object);
	return ret;
}

/* The bisection's time, from its start to its end, as a phase of the
 * candidate it bisected (candidate.h). */
static void phase_of(struct branch_ctx *bc, long long id, long long cid)
{
	sqlite3_stmt *st = db_prepare(
		bc->db,
		"SELECT (julianday(COALESCE(finished_at, strftime("
		"'%Y-%m-%dT%H:%M:%SZ','now'))) - julianday(started_at)) *"
		" 86400, steps_done, builds_used, boots_used FROM bisections"
		" WHERE id = ? AND state != 'running'",
		"i", id);

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		char *d = xstrfmt("bisection %lld: %lld steps, %lld builds,"
				  " %lld boots",
				  id, (long long)sqlite3_column_int64(st, 1),
				  (long long)sqlite3_column_int64(st, 2),
				  (long long)sqlite3_column_int64(st, 3));
		candidate_phase_record(bc->db, cid, "bisection",
				       sqlite3_column_double(st, 0), d);
		free(d);
	}
	sqlite3_finalize(st);
	err_clear();
}

int bisect_run(struct branch_ctx *bc, long long candidate_id, int budget,
	       long long *bisection_id,
	       void (*progress)(const char *line, void *ctx), void *ctx)
{
	struct bis b = { .bc = bc, .progress = progress, .ctx = ctx,
			 .budget = budget, .candidate = candidate_id };
	enum cand_verdict verdict = candidate_verdict_of(bc->db, candidate_id);
	json_t *v;
	size_t i;
	enum outcome o;
	int ret, confirm = bc->cfg.bisect_confirm > 0 ? bc->cfg.bisect_confirm
						      : 1;

	*bisection_id = 0;
	if (verdict != CV_NONE &&
	    (ret = candidate_on_branch(bc, candidate_id)) < 0)
		return ret;
	if (verdict == CV_NONE)
		return err_set(ERR_NOTFOUND,
			       "candidate %lld: no such candidate, or it has no"
			       " verdict yet",
			       candidate_id);
	if (verdict == CV_PASS || verdict == CV_APPLY_FAILED)
		return err_set(ERR_CONFLICT,
			       "candidate %lld is %s: there is nothing to bisect",
			       candidate_id, candidate_verdict_name(verdict));
	/* a failure of one cell of the matrix is bisected in that cell, by
	 * its failure: its verdict, its regressions (cell.h) */
	b.cell_src = cell_failing(bc->db, candidate_id);
	verdict = candidate_verdict_of(bc->db, b.cell_src);
	b.by_build = verdict == CV_BUILD_FAILED;
	b.by_hang = verdict == CV_HANG;
	if ((ret = candidate_patch_ids(bc->db, candidate_id, &b.patches,
				       &b.n)) < 0)
		return ret;
	if (!b.n) {
		free(b.patches);
		return err_set(ERR_CONFLICT,
			       "candidate %lld has no patches: the branch alone"
			       " fails, no patch is to blame",
			       candidate_id);
	}
	/* a candidate classified against the tip steers by its regressions
	 * alone: a known failure fails on every prefix */
	json_t *regressions =
		b.by_build || b.by_hang
			? NULL
			: testcase_regressions(bc->db, b.cell_src);
	b.steer = b.by_build || b.by_hang
			  ? json_array()
			  : testcase_failed_names(bc->db, b.cell_src);
	if (b.steer && regressions) {
		json_t *keep = json_array();
		json_array_foreach(b.steer, i, v)
		{
			size_t k;
			json_t *r;
			json_array_foreach(regressions, k, r)
				if (json_equal(json_object_get(v, "name"), r))
					json_array_append(keep, v);
		}
		json_decref(b.steer);
		b.steer = keep;
	}
	json_decref(regressions);
	if (!b.steer) {
		free(b.patches);
		return ERR_IO;
	}
	/* rows -> names */
	json_t *names = json_array();
	json_array_foreach(b.steer, i, v)
		json_array_append(names, json_object_get(v, "name"));
	json_decref(b.steer);
	b.steer = names;
	if (!b.by_build && !b.by_hang && !json_array_size(b.steer)) {
		ret = err_set(ERR_CONFLICT,
			      "candidate %lld failed but no test failed in it",
			      candidate_id);
		goto out;
	}
	if ((b.id = *bisection_id = resumable(&b, candidate_id))) {
		log_info("bisection %lld: going on after %zu step%s", b.id,
			 b.ndone, b.ndone == 1 ? "" : "s");
	} else {
		char *steer_text = json_dumps(b.steer, JSON_COMPACT);
		ret = db_exec(bc->db,
			      "INSERT INTO bisections (candidate_id,"
			      " failing_tests, good, bad) VALUES (?, ?, -1, ?)",
			      "iti", candidate_id,
			      b.by_build  ? "[\"build\"]"
			      : b.by_hang ? "[\"hang\"]"
					  : steer_text,
			      (long long)b.n);
		free(steer_text);
		if (ret < 0)
			goto out;
		b.id = *bisection_id = db_last_id(bc->db);
		event_add(bc->db, bc->actor, "bisection", b.id, "started",
			  "candidate %lld, %zu patches", candidate_id, b.n);
	}

	/*
	 * The first bad prefix is one of 0..n (0: the branch alone fails), n
	 * known bad: ceil(log2(n + 1)) search steps tell which, and every
	 * state the confirmation boots was built by the search or by the
	 * failing candidate, so the build cache makes it reboots only.
	 */
	struct bisect_window w;
	long mid;
	bisect_window_init(&w, b.n);
	b.steps_total = bisect_search_steps(w.bad - w.good) + 2;
	step_progress(&b);
	while ((mid = bisect_window_next(&w)) >= 0) {
		if ((ret = evaluate(&b, (size_t)mid, 1, "search", &o)) != 0)
			goto out;
		if (o == FLAKY) {
			end(&b, "flaky", 0, "a steering test gave mixed results");
			ret = 0;
			goto out;
		}
		bisect_window_record(&w, mid, o == BAD);
		if ((ret = db_exec(bc->db,
				   "UPDATE bisections SET good = ?, bad = ?"
				   " WHERE id = ?",
				   "iii", (long long)w.good, (long long)w.bad,
				   b.id)) < 0)
			goto out;
	}
	long hi = w.bad;
	if (hi == 0) {
		ret = end(&b, "failed", 0,
			  "the branch alone fails: no queued patch is to blame");
		goto out;
	}
	/* confirm: prefix hi fails, prefix hi-1 passes, each `confirm` boots */
	long long bad_cid;
	if ((ret = evaluate(&b, (size_t)hi, confirm, "confirm", &o)) != 0)
		goto out;
	bad_cid = b.last_candidate;
	if (o != BAD) {
		ret = end(&b, o == FLAKY ? "flaky" : "failed", 0,
			  o == FLAKY ? "the culprit's prefix gave mixed results:"
				       " recorded as flaky"
				     : "the culprit's prefix passed when repeated");
		if (o == FLAKY && ret >= 0)
			ret = testcase_mark_flaky(bc->db, bad_cid);
		goto out;
	}
	if ((ret = evaluate(&b, hi - 1, confirm, "confirm", &o)) != 0)
		goto out;
	if (o != GOOD) {
		ret = end(&b, o == FLAKY ? "flaky" : "failed", 0,
			  hi - 1 == 0 ? "the branch alone fails: no queued"
					" patch is to blame"
				      : "the prefix before the culprit fails too");
		goto out;
	}
	long long culprit = b.patches[hi - 1];
	char *detail = xstrfmt("patch %lld is the first bad patch (prefix %zu"
			       " of %zu), confirmed %d times each way",
			       culprit, (size_t)hi, b.n, confirm);
	end(&b, "found", culprit, detail);
	ret = bisect_flag_culprit(bc, b.id, culprit, bad_cid, b.steer,
				  b.by_build  ? "build"
				  : b.by_hang ? "hang"
					      : NULL,
				  detail);
	say(&b, detail);
	free(detail);
out:
	if (b.id) {
		/* paused (ret 1): it runs on, its progress stays */
		if (ret != 1)
			progress_clear(bc->db, "bisection", b.id);
		if (ret == 0)
			phase_of(bc, b.id, candidate_id);
		char *line = bisect_summary(bc->db, b.id);
		log_info("%s", line);
		free(line);
	}
	json_decref(b.steer);
	free(b.patches);
	free(b.done);
	return ret < 0 ? ret : 0;
}

char *bisect_summary(sqlite3 *db, long long id)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st = db_prepare(
		db,
		"SELECT state, culprit_patch_id, detail, builds_used,"
		" boots_used, steps_done, steps_total FROM bisections WHERE id"
		" = ?",
		"i", id);

	strbuf_addf(&sb, "bisection %lld: ", id);
	int ret = st ? db_step(st) : ERR_IO;
	if (ret <= 0) {
		strbuf_addstr(&sb, ret ? err_msg() : "no such bisection");
		goto out;
	}
	const char *state = db_col_text(st, 0), *detail = db_col_text(st, 2);
	long long builds = sqlite3_column_int64(st, 3);
	long long boots = sqlite3_column_int64(st, 4);

	if (!strcmp(state, "found"))
		strbuf_addf(&sb, "patch %lld, confirmed",
			    (long long)sqlite3_column_int64(st, 1));
	else if (!strcmp(state, "running"))
		strbuf_addf(&sb, "step %lld of about %lld",
			    (long long)sqlite3_column_int64(st, 5),
			    (long long)sqlite3_column_int64(st, 6));
	else
		strbuf_addf(&sb, "%s%s%s", state, detail ? ": " : "",
			    detail ? detail : "");
	strbuf_addf(&sb, " (%lld build%s, %lld boot%s)", builds,
		    builds == 1 ? "" : "s", boots, boots == 1 ? "" : "s");
out:
	sqlite3_finalize(st);
	return strbuf_detach(&sb, NULL);
}

/* culprit_subject: the subject of the culprit patch, or null. */
static void set_culprit_subject(sqlite3 *db, json_t *o)
{
	long long p =
		json_integer_value(json_object_get(o, "culprit_patch_id"));
	char *subject = NULL, *up = NULL;

	if (p && queue_patch_subject(db, p, &subject, &up) < 0)
		err_clear();
	json_object_set_new(o, "culprit_subject",
			    subject ? json_string(subject) : json_null());
	free(subject);
	free(up);
}

json_t *bisect_json(sqlite3 *db, long long id)
{
	json_t *o =
		db_object_json(db, "bisection", id,
			       "SELECT *, NULL AS culprit_subject FROM"
			       " bisections WHERE id = ?",
			       "steps",
			       "SELECT id, prefix_len, candidate_id, result,"
			       " kind, created_at, candidate_id AS build_id"
			       " FROM bisection_steps WHERE bisection_id = ?"
			       " ORDER BY id");
	json_t *s;
	size_t i;

	if (!o)
		return NULL;
	set_culprit_subject(db, o);
	json_array_foreach(json_object_get(o, "steps"), i, s)
	{
		long long c =
			json_integer_value(json_object_get(s, "build_id"));
		long long b = c ? candidate_build_id(db, c) : 0;
		if (b < 0)
			err_clear();
		json_object_set_new(s, "build_id",
				    b > 0 ? json_integer(b) : json_null());
	}
	return o;
}

int bisect_due(struct branch_ctx *bc, long long *id)
{
	long long c = candidate_failed_tip(bc->db, bc->branch_id), n = 1;

	if (!c ||
	    db_query_int(bc->db, &n,
			 "SELECT COUNT(*) FROM bisections WHERE"
			 " candidate_id = ? AND state != 'running' AND"
			 " NOT (state = 'failed' AND detail LIKE"
			 " 'interrupted:%')",
			 "i", c) < 0 ||
	    n)
		return 0;
	*id = c;
	return 1;
}

int bisect_interrupted(struct branch_ctx *bc, long long candidate_id)
{
	return db_exec(bc->db,
		       "UPDATE bisections SET state = 'failed', detail ="
		       " 'interrupted: stopped while it ran; bisected again',"
		       " finished_at = strftime('%Y-%m-%dT%H:%M:%SZ','now')"
		       " WHERE candidate_id = ? AND state = 'running'",
		       "i", candidate_id);
}

char *bisect_summary_of(sqlite3 *db, long long candidate_id)
{
	long long id = 0;

	if (db_query_int(db, &id,
			 "SELECT id FROM bisections WHERE candidate_id = ?"
			 " ORDER BY id DESC LIMIT 1",
			 "i", candidate_id) < 0)
		return NULL;
	return bisect_summary(db, id);
}

long long bisect_culprit_of(sqlite3 *db, long long candidate_id)
{
	return db_int(db, 1,
		      "SELECT culprit_patch_id FROM bisections WHERE"
		      " candidate_id = ? AND state = 'found' ORDER BY id DESC"
		      " LIMIT 1",
		      "i", candidate_id);
}

json_t *bisect_running_json(sqlite3 *db)
{
	return db_rows_json(db,
			    "SELECT id, candidate_id, good, bad, builds_used,"
			    " boots_used, steps_done, steps_total, started_at"
			    " FROM bisections WHERE state = 'running' ORDER BY"
			    " id DESC",
			    NULL);
}

int bisect_exists(sqlite3 *db, long long id)
{
	long long one;

	return db_query_int(db, &one, "SELECT 1 FROM bisections WHERE id = ?",
			    "i", id);
}

json_t *bisect_list_json(sqlite3 *db, long long branch, long long limit)
{
	json_t *rows = db_rows_json(db,
				    "SELECT id, candidate_id AS branch,"
				    " candidate_id, state, failing_tests, good,"
				    " bad, culprit_patch_id, NULL AS"
				    " culprit_subject, builds_used, boots_used,"
				    " detail, started_at, finished_at, (SELECT"
				    " COUNT(*) FROM bisection_steps s WHERE"
				    " s.bisection_id = bisections.id) AS steps"
				    " FROM bisections ORDER BY id DESC",
				    NULL);
	json_t *kept, *o;
	size_t i;

	if (!rows)
		return NULL;
	kept = json_array();
	json_array_foreach(rows, i, o)
	{
		long long c = json_integer_value(json_object_get(o, "branch"));
		long long b = candidate_branch_id(db, c);
		if ((long long)json_array_size(kept) >= limit)
			break;
		if (branch && b != branch)
			continue;
		json_object_set_new(o, "branch",
				    b ? json_integer(b) : json_null());
		set_culprit_subject(db, o);
		json_array_append(kept, o);
	}
	json_decref(rows);
	return kept;
}

int bisect_found(sqlite3 *db, long long id)
{
	char *state = NULL;
	int ret = db_query_text(db, &state,
				"SELECT state FROM bisections WHERE id = ?",
				"i", id);

	if (ret < 0)
		return ret;
	ret = state && !strcmp(state, "found");
	free(state);
	return ret;
}
