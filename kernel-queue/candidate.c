/* candidate.c: apply a queue prefix with libgit2, build it, boot it, store the verdict. */
#include "candidate.h"
#include "coverage.h"
#include "db.h"
#include "err.h"
#include "kbuild.h"
#include "log.h"
#include "queue.h"
#include "repo.h"
#include "runner.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

long long candidate_create(sqlite3 *db, const long long *patch_ids, size_t n,
			   long long upto, const char *purpose,
			   long long bisection_id, const char *actor)
{
	json_t *arr = json_array();
	char *ids;
	long long id;
	int ret;

	if (patch_ids) {
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, json_integer(patch_ids[i]));
	} else {
		long long *q = NULL;
		size_t nq = 0, i;
		enum patch_state s;
		if (upto > 0) {
			if ((ret = patch_get_state(db, upto, &s)) < 0) {
				json_decref(arr);
				return ret;
			}
			if (s != PS_QUEUED) {
				json_decref(arr);
				return err_set(ERR_CONFLICT,
					       "patch %lld is %s, not queued",
					       upto, patch_state_name(s));
			}
		}
		if ((ret = queue_ids(db, PS_QUEUED, &q, &nq)) < 0) {
			json_decref(arr);
			return ret;
		}
		for (i = 0; i < nq; i++) {
			json_array_append_new(arr, json_integer(q[i]));
			if (q[i] == upto)
				break;
		}
		free(q);
	}
	ids = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	/* row and event together, inside a caller's transaction or not */
	if ((ret = db_exec_script(db, "SAVEPOINT candidate_create")) < 0) {
		free(ids);
		return ret;
	}
	/* json_group_array() writes "[1,2]": compare equal to it */
	ret = db_exec(db,
		      "INSERT INTO candidates (purpose, patch_ids, upto_patch_id,"
		      " bisection_id) VALUES (?, ?, NULLIF(?, 0), NULLIF(?, 0))",
		      "ttii", purpose, ids, upto, bisection_id);
	free(ids);
	if (ret >= 0) {
		id = db_last_id(db);
		ret = (int)event_add(db, actor, "candidate", id, "created",
				     "%s", purpose);
	}
	if (ret < 0) {
		db_exec_script(db, "ROLLBACK TO candidate_create;"
				   " RELEASE candidate_create");
		return ret;
	}
	if ((ret = db_exec_script(db, "RELEASE candidate_create")) < 0)
		return ret;
	return id;
}

long long candidate_next_pending(sqlite3 *db)
{
	long long id = 0;

	if (db_query_int(db, &id,
			 "SELECT id FROM candidates WHERE step = 'pending' ORDER"
			 " BY id LIMIT 1",
			 NULL) < 0)
		return 0;
	return id;
}

char *candidate_verdict(sqlite3 *db, long long id)
{
	char *v = NULL;

	db_query_text(db, &v, "SELECT verdict FROM candidates WHERE id = ?",
		      "i", id);
	return v;
}

__attribute__((format(printf, 3, 4))) static void
say(void (*progress)(const char *, void *), void *ctx, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (progress)
		progress(sb.buf, ctx);
	log_debug("%s", sb.buf);
	strbuf_release(&sb);
}

static int set_step(sqlite3 *db, long long id, const char *step)
{
	return db_exec(db, "UPDATE candidates SET step = ? WHERE id = ?", "ti",
		       step, id);
}

static int finish(sqlite3 *db, long long id, const char *verdict,
		  const char *detail)
{
	int ret = db_exec(db,
			  "UPDATE candidates SET step = 'done', verdict = ?,"
			  " detail = ?, finished_at ="
			  " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
			  "tti", verdict, detail, id);
	if (ret >= 0)
		event_add(db, "candidate", "candidate", id, "verdict", "%s%s%s",
			  verdict, detail ? ": " : "", detail ? detail : "");
	log_info("candidate %lld: %s%s%s", id, verdict, detail ? ": " : "",
		 detail ? detail : "");
	return ret < 0 ? ret : 0;
}

/* Applies the candidate's patches onto the branch: one commit, one tree. */
static int apply_all(struct app *app, struct repo *r, long long id,
		     json_t *ids, char commit[REPO_HEX_SIZE],
		     char tree[REPO_HEX_SIZE], struct strbuf *fail)
{
	char tip[REPO_HEX_SIZE];
	struct strbuf msg = STRBUF_INIT;
	size_t i;
	json_t *v;
	int ret;

	if ((ret = repo_branch_tip(r, app->cfg.branch, tip)) < 0 ||
	    (ret = repo_tree_of(r, tip, tree)) < 0)
		return ret;
	strbuf_addf(&msg, "stableq candidate %lld: %s + %zu patches\n\n", id,
		    app->cfg.branch, json_array_size(ids));
	json_array_foreach(ids, i, v)
	{
		long long pid = json_integer_value(v);
		char *diff = NULL, *subject = NULL;
		struct repo_apply_result res = { 0 };
		char next[REPO_HEX_SIZE];

		db_query_text(app->db, &diff,
			      "SELECT diff FROM patches WHERE id = ?", "i", pid);
		db_query_text(app->db, &subject,
			      "SELECT subject FROM patches WHERE id = ?", "i",
			      pid);
		if (!diff) {
			strbuf_addf(fail, "patch %lld: no such patch", pid);
			free(subject);
			return 1;
		}
		ret = repo_apply(r, tree, diff, next, &res);
		if (ret < 0 || res.status != REPO_APPLY_CLEAN) {
			strbuf_addf(fail, "patch %lld \"%s\" does not apply: %s",
				    pid, subject ? subject : "?",
				    ret < 0 ? err_msg()
					    : res.detail ? res.detail
							 : "already applied");
			repo_apply_result_release(&res);
			free(diff);
			free(subject);
			strbuf_release(&msg);
			return 1;
		}
		repo_apply_result_release(&res);
		memcpy(tree, next, REPO_HEX_SIZE);
		strbuf_addf(&msg, "  %lld %s\n", pid, subject);
		free(diff);
		free(subject);
	}
	ret = repo_commit(r, tip, tree, "stableq", "stableq@localhost", NULL,
			  msg.buf, commit);
	strbuf_release(&msg);
	return ret;
}

/* One build directory, one worktree: one candidate at a time. */
static int lock_builds(struct app *app, int *fd)
{
	char *path = xstrfmt("%s/.stableq-candidate.lock", app->cfg.build_dir);
	int ret = 0;

	mkdir_p(app->cfg.build_dir);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0)
		ret = err_set(ERR_IO, "%s: %s", path, strerror(errno));
	else if (flock(*fd, LOCK_EX) < 0)
		ret = err_set(ERR_IO, "%s: lock: %s", path, strerror(errno));
	free(path);
	return ret;
}

/* A test's result over all runs: mixed results are 'flaky'. */
static int store_tests(sqlite3 *db, long long id, int run,
		       const struct runner_result *rr)
{
	for (size_t i = 0; i < rr->report.nresults; i++) {
		const struct test_result *t = &rr->report.results[i];
		const char *res = t->status == TEST_PASS   ? "pass"
				  : t->status == TEST_SKIP ? "skip"
							   : "fail";
		int ret = db_exec(db,
				  "INSERT INTO test_results (candidate_id, run,"
				  " name, result, detail, log_excerpt) VALUES"
				  " (?, ?, ?, ?, ?, ?)",
				  "idtttt", id, run, t->name, res, t->detail,
				  t->excerpt);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static const char *aggregate(sqlite3 *db, long long id, struct strbuf *detail,
			     int hung)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT name, SUM(result = 'pass'),"
				      " SUM(result = 'fail') FROM test_results"
				      " WHERE candidate_id = ? GROUP BY name"
				      " ORDER BY MIN(id)",
				      "i", id);
	int fails = 0, flaky = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = db_col_text(st, 0);
		long long p = sqlite3_column_int64(st, 1);
		long long f = sqlite3_column_int64(st, 2);
		if (f && p) {
			flaky++;
			strbuf_addf(detail, "%s%s flaky (%lld pass, %lld fail)",
				    detail->len ? "; " : "", name, p, f);
		} else if (f) {
			fails++;
			strbuf_addf(detail, "%s%s failed", detail->len ? "; " : "",
				    name);
		}
	}
	sqlite3_finalize(st);
	if (flaky)
		db_exec(db,
			"UPDATE test_results SET result = 'flaky' WHERE"
			" candidate_id = ? AND name IN (SELECT name FROM"
			" test_results WHERE candidate_id = ? GROUP BY name"
			" HAVING SUM(result = 'pass') > 0 AND SUM(result ="
			" 'fail') > 0)",
			"ii", id, id);
	if (hung)
		return "hang";
	return fails ? "fail" : "pass";
}

/*
 * Build coverage of the patches' files beyond the guest kernel: a touched
 * object that no longer compiles makes the candidate build-failed (1). When
 * coverage itself cannot run (a broken toolchain), the candidate goes on
 * and says so in its coverage line.
 */
static int run_coverage(struct app *app, struct repo *r, long long id,
			const char *commit,
			void (*progress)(const char *line, void *ctx), void *ctx)
{
	struct coverage_result cr = { 0 };
	char tip[REPO_HEX_SIZE];
	int ret;

	set_step(app->db, id, "coverage");
	if ((ret = repo_branch_tip(r, app->cfg.branch, tip)) < 0)
		return ret;
	ret = coverage_run(app, r, id, tip, commit, &cr, progress, ctx);
	if (ret < 0) {
		char *msg = xstrfmt("not measured: %s", err_msg());
		log_warnx("candidate %lld: coverage %s", id, msg);
		db_exec(app->db, "UPDATE candidates SET coverage = ? WHERE id = ?",
			"ti", msg, id);
		free(msg);
		ret = 0;
	} else if (cr.failed) {
		ret = finish(app->db, id, "build-failed", cr.error);
		ret = ret < 0 ? ret : 1;
	}
	coverage_result_release(&cr);
	return ret;
}

int candidate_run(struct app *app, long long id, int runs,
		  void (*progress)(const char *line, void *ctx), void *ctx)
{
	struct repo *r = NULL;
	struct strbuf why = STRBUF_INIT;
	char commit[REPO_HEX_SIZE], tree[REPO_HEX_SIZE];
	char *ids_text = NULL, *logdir;
	json_t *ids = NULL;
	struct kbuild_result kb = { 0 };
	long long build_id = 0;
	int ret, lockfd = -1, hung = 0;

	if (runs < 1)
		runs = 1;
	if ((ret = db_query_text(app->db, &ids_text,
				 "SELECT patch_ids FROM candidates WHERE id = ?",
				 "i", id)) < 0) {
		ret = err_set(ERR_NOTFOUND, "candidate %lld: no such candidate",
			      id);
		goto out;
	}
	ids = json_loads(ids_text, 0, NULL);
	if (!json_is_array(ids)) {
		ret = err_set(ERR_INVALID, "candidate %lld: bad patch list", id);
		goto out;
	}
	if ((ret = lock_builds(app, &lockfd)) < 0)
		goto out;
	logdir = xstrfmt("%s/log", app->cfg.var_dir);
	mkdir_p(logdir);
	free(logdir);

	/* apply */
	set_step(app->db, id, "apply");
	say(progress, ctx, "candidate %lld: applying %zu patches onto %s", id,
	    json_array_size(ids), app->cfg.branch);
	if ((ret = repo_open(&r, app->cfg.tree_dir)) < 0) {
		err_prefix(ret, "the stable tree (run `stableq tree init`)");
		goto out;
	}
	ret = apply_all(app, r, id, ids, commit, tree, &why);
	if (ret < 0)
		goto out;
	if (ret > 0) {
		ret = finish(app->db, id, "apply-failed", why.buf);
		goto out;
	}
	db_exec(app->db, "UPDATE candidates SET commit_sha = ? WHERE id = ?",
		"ti", commit, id);
	if ((ret = repo_checkout(r, commit)) < 0)
		goto out;

	/* build */
	set_step(app->db, id, "build");
	struct kbuild_opts ko = {
		.src_dir = app->cfg.tree_dir,
		.build_dir = app->cfg.build_dir,
		.config_dir = app->cfg.kernel_config_dir,
		.ccache_dir = app->cfg.ccache_dir,
		.jobs = app->cfg.make_jobs,
		.timeout_s = app->cfg.build_timeout,
		.log_path = NULL,
	};
	char *blog = NULL;
	{
		long long next = 0;
		db_query_int(app->db, &next,
			     "SELECT COALESCE(MAX(id), 0) + 1 FROM builds", NULL);
		blog = xstrfmt("%s/log/build-%lld.log", app->cfg.var_dir, next);
	}
	ko.log_path = blog;
	say(progress, ctx, "candidate %lld: building %.12s (log %s)", id, commit,
	    blog);
	ret = kbuild_run(&ko, &kb);
	if (ret < 0 && !kb.config_hash[0]) {
		free(blog);
		goto out;
	}
	db_exec(app->db,
		"INSERT INTO builds (commit_sha, tree_sha, config_hash, result,"
		" seconds, log_path, error_excerpt) VALUES (?, ?, ?, ?, ?, ?, ?)",
		"tttt" "ftt", commit, tree, kb.config_hash,
		kb.ok ? "ok" : "failed", kb.seconds, blog,
		kb.ok ? NULL : (kb.error ? kb.error : err_msg()));
	free(blog);
	build_id = db_last_id(app->db);
	db_exec(app->db, "UPDATE candidates SET build_id = ? WHERE id = ?",
		"ii", build_id, id);
	say(progress, ctx, "candidate %lld: build %lld %s in %.1f s", id,
	    build_id, kb.ok ? "ok" : "FAILED", kb.seconds);
	if (!kb.ok) {
		ret = finish(app->db, id, "build-failed",
			     kb.error ? kb.error : err_msg());
		goto out;
	}
	if ((ret = run_coverage(app, r, id, commit, progress, ctx)) != 0)
		goto out; /* build-failed (1) or could not run */

	/* boot and test, runs times on the same build */
	set_step(app->db, id, "boot");
	for (int run = 1; run <= runs; run++) {
		char *work = xstrfmt("%s/guest", app->cfg.var_dir);
		char *clog = xstrfmt("%s/log/console-%lld-%d.log",
				     app->cfg.var_dir, id, run);
		struct runner_opts ro = {
			.build_dir = app->cfg.build_dir,
			.kernel = kb.bzimage,
			.tests_file = app->cfg.tests_file,
			.accel = app->cfg.qemu_accel,
			.memory_mb = app->cfg.qemu_memory,
			.timeout_s = app->cfg.boot_timeout,
			.work_dir = work,
			.log_path = clog,
		};
		struct runner_result rr = { 0 };
		say(progress, ctx, "candidate %lld: booting (run %d of %d)", id,
		    run, runs);
		ret = runner_boot(&ro, &rr);
		free(work);
		/* the candidate's log is the console of its last boot */
		db_exec(app->db,
			"UPDATE candidates SET log_path = ? WHERE id = ?", "ti",
			clog, id);
		free(clog);
		if (ret < 0) {
			runner_result_release(&rr);
			goto out;
		}
		hung |= rr.verdict == VERDICT_HANG;
		say(progress, ctx,
		    "candidate %lld: run %d: %s, %zu results in %.1f s (%s)%s%s",
		    id, run, run_verdict_name(rr.verdict), rr.report.nresults,
		    rr.seconds, rr.accel ? rr.accel : "?",
		    rr.reason && *rr.reason ? ": " : "",
		    rr.reason ? rr.reason : "");
		ret = store_tests(app->db, id, run, &rr);
		runner_result_release(&rr);
		if (ret < 0)
			goto out;
	}
	const char *verdict = aggregate(app->db, id, &why, hung);
	ret = finish(app->db, id, verdict, why.len ? why.buf : NULL);
out:
	if (ret < 0) {
		/* could not run at all: say so on the row, never leave it pending */
		char *msg = xstrdup(err_msg());
		db_exec(app->db,
			"UPDATE candidates SET step = 'done', verdict = NULL,"
			" detail = ?, finished_at ="
			" strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
			"ti", msg, id);
		err_set(ret, "%s", msg);
		free(msg);
	}
	kbuild_result_release(&kb);
	if (lockfd >= 0)
		close(lockfd);
	json_decref(ids);
	free(ids_text);
	strbuf_release(&why);
	repo_free(r);
	return ret < 0 ? ret : 0;
}

/* "pass: 7 tests; 58 of 62 patches compiled, 4 in the booted kernel" */
static json_t *candidate_summary(sqlite3 *db, long long id)
{
	char *verdict = candidate_verdict(db, id), *cov = NULL;
	long long tests = 0;
	json_t *s;

	if (!verdict)
		return json_null();
	db_query_int(db, &tests,
		     "SELECT COUNT(DISTINCT name) FROM test_results WHERE"
		     " candidate_id = ?",
		     "i", id);
	db_query_text(db, &cov, "SELECT coverage FROM candidates WHERE id = ?",
		      "i", id);
	err_clear();
	{
		/* no test ran (the build failed): no "0 tests" */
		char *t = tests ? xstrfmt("%s: %lld test%s%s%s", verdict, tests,
					  tests == 1 ? "" : "s",
					  cov ? "; " : "", cov ? cov : "")
				: xstrfmt("%s%s%s", verdict, cov ? "; " : "",
					  cov ? cov : "");
		s = json_string(t);
		free(t);
	}
	free(verdict);
	free(cov);
	return s ? s : json_null();
}

json_t *candidate_json(sqlite3 *db, long long id)
{
	json_t *o = db_row_json(db,
				"SELECT id, purpose, step, verdict, detail,"
				" patch_ids, upto_patch_id, commit_sha,"
				" build_id, bisection_id, log_path,"
				" started_at, finished_at FROM candidates"
				" WHERE id = ?",
				"i", id);
	json_t *b;

	if (!o) {
		if (err_last() == ERR_NOTFOUND)
			err_set(ERR_NOTFOUND, "candidate %lld: no such candidate",
				id);
		return NULL;
	}
	const char *pt = json_string_value(json_object_get(o, "patch_ids"));
	json_t *arr = pt ? json_loads(pt, 0, NULL) : NULL;
	json_object_set_new(o, "patch_ids", arr ? arr : json_array());
	b = db_row_json(db,
			"SELECT id, commit_sha, tree_sha, config_hash, result,"
			" seconds, log_path, error_excerpt, created_at FROM"
			" builds WHERE id = (SELECT build_id FROM candidates"
			" WHERE id = ?)",
			"i", id);
	json_object_set_new(o, "build", b ? b : json_null());
	json_object_set_new(o, "tests",
			    db_rows_json(db,
					 "SELECT run, name, result, detail,"
					 " log_excerpt FROM test_results WHERE"
					 " candidate_id = ? ORDER BY id",
					 "i", id));
	json_object_set_new(o, "coverage", coverage_candidate_json(db, id));
	json_object_set_new(o, "summary", candidate_summary(db, id));
	return o;
}
