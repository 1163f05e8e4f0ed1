/* candidate.c: apply a queue prefix with libgit2, build it, boot it, store the verdict. */
#include "candidate.h"
#include "buildcache.h"
#include "cell.h"
#include "coverage.h"
#include "gcov.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "file.h"
#include "guestconf.h"
#include "karch.h"
#include "kbuild.h"
#include "log.h"
#include "progress.h"
#include "queue.h"
#include "repo.h"
#include "sandbox.h"
#include "runner.h"
#include "spawn.h"
#include "strbuf.h"
#include "testcase.h"
#include "testset.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/*
 * The patches a new candidate applies, as the JSON text the row stores
 * ("[1,2]", as json_group_array() writes it): patch_ids, else the branch's
 * queued patches up to and including upto. Caller frees; NULL with the
 * error in *ret.
 */
static char *patch_list_text(sqlite3 *db, long long branch,
			     const long long *patch_ids, size_t n,
			     long long upto, int *ret)
{
	json_t *arr;
	char *ids;
	long long on = 0;

	*ret = 0;
	/* the patches (and upto, the last) must be this branch's */
	for (size_t i = 0; i <= (patch_ids ? n : 0); i++) {
		long long pid = patch_ids && i < n ? patch_ids[i] : upto;
		if (pid > 0 && (on = queue_branch_of(db, pid)) >= 0 &&
		    on != branch) {
			*ret = err_set(ERR_INVALID,
				       "patch %lld is not in this branch's"
				       " queue",
				       pid);
			return NULL;
		}
	}
	arr = json_array();
	if (patch_ids) {
		for (size_t i = 0; i < n; i++)
			json_array_append_new(arr, json_integer(patch_ids[i]));
	} else {
		long long *q = NULL;
		size_t nq = 0, i;
		enum patch_state s;
		if (upto > 0) {
			if ((*ret = queue_get_state(db, upto, &s)) < 0) {
				json_decref(arr);
				return NULL;
			}
			if (s != PS_QUEUED) {
				json_decref(arr);
				*ret = err_set(ERR_CONFLICT,
					       "patch %lld is %s, not queued",
					       upto, queue_state_name(s));
				return NULL;
			}
		}
		if ((*ret = queue_ids(db, branch, PS_QUEUED, &q, &nq)) < 0) {
			json_decref(arr);
			return NULL;
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
	return ids;
}

/* The row and its event, inside a caller's transaction or not. */
static long long insert_candidate(sqlite3 *db, long long branch,
				  const char *ids, long long upto,
				  const char *purpose, long long bisection_id,
				  const char *actor)
{
	long long id = 0;
	int ret;

	if ((ret = db_exec_script(db, "SAVEPOINT candidate_create")) < 0)
		return ret;
	ret = db_exec(db,
		      "INSERT INTO candidates (branch_id, purpose, patch_ids,"
		      " upto_patch_id, bisection_id, created_by) VALUES (?, ?,"
		      " ?, NULLIF(?, 0), NULLIF(?, 0), ?)",
		      "ittiit", branch, purpose, ids, upto, bisection_id,
		      actor);
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

long long candidate_create_on(sqlite3 *db, long long branch,
			      const long long *patch_ids, size_t n,
			      long long upto, const char *purpose,
			      long long bisection_id, const char *actor)
{
	int ret;
	char *ids = patch_list_text(db, branch, patch_ids, n, upto, &ret);
	long long id;

	if (!ids)
		return ret < 0 ? ret : ERR_IO;
	id = insert_candidate(db, branch, ids, upto, purpose, bisection_id,
			      actor);
	free(ids);
	return id;
}

long long candidate_request(sqlite3 *db, long long branch, long long upto,
			    const char *actor, int max_pending, int *created)
{
	long long id = 0, pending = 0;
	char *ids = NULL;
	int ret;

	*created = 0;
	/* one writer from the look to the insert: concurrent requests of
	 * one queue make one candidate */
	if ((ret = db_begin(db)) < 0)
		return ret;
	if (!(ids = patch_list_text(db, branch, NULL, 0, upto, &ret)))
		goto out;
	ret = db_query_int(db, &id,
			   "SELECT id FROM candidates WHERE branch_id = ? AND"
			   " purpose = 'queue' AND patch_ids = ? AND verdict IS"
			   " NULL AND step != 'done' AND cell_of IS NULL"
			   " ORDER BY id LIMIT 1",
			   "it", branch, ids);
	if (ret >= 0 && id > 0)
		goto out; /* the queue's pending candidate: the same work */
	if (ret < 0 && ret != ERR_NOTFOUND)
		goto out;
	err_clear();
	id = 0;
	if ((ret = db_query_int(db, &pending,
				"SELECT COUNT(*) FROM candidates WHERE step ="
				" 'pending' AND created_by = ?",
				"t", actor)) < 0)
		goto out;
	if (max_pending > 0 && pending >= max_pending) {
		ret = err_set(ERR_TOOBIG,
			      "%s has %lld pending candidates"
			      " (candidates_pending_max = %d): one more is"
			      " refused until the daemon has run them",
			      actor, pending, max_pending);
		goto out;
	}
	if ((id = insert_candidate(db, branch, ids, upto, "queue", 0, actor)) <
	    0) {
		ret = (int)id;
		goto out;
	}
	*created = 1;
	ret = 0;
out:
	free(ids);
	ret = db_end(db, ret < 0 ? ret : 0);
	if (ret < 0) {
		*created = 0;
		return ret;
	}
	return id;
}

long long candidate_next_pending(sqlite3 *db, long long branch)
{
	long long id = 0;

	/* a tip's baseline runs when nothing else is to do
	 * (candidate_baseline_due); a cell of the matrix runs inside its
	 * candidate's run, never alone (cell.h) */
	if (db_query_int(db, &id,
			 "SELECT id FROM candidates WHERE step = 'pending' AND"
			 " purpose != 'baseline' AND cell_of IS NULL AND (?1 ="
			 " 0 OR branch_id = ?1) ORDER BY id LIMIT 1",
			 "i", branch) < 0)
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

json_t *candidate_patch_list(sqlite3 *db, long long id)
{
	char *text = NULL;
	json_t *ids, *v;
	size_t i;
	int ret = db_query_text(db, &text,
				"SELECT patch_ids FROM candidates WHERE id = ?",
				"i", id);

	if (ret == ERR_NOTFOUND)
		err_set(ret, "candidate %lld: no such candidate", id);
	if (ret < 0)
		return NULL;
	ids = json_loads(text ? text : "", 0, NULL);
	free(text);
	json_array_foreach(ids, i, v) if (!json_is_integer(v)) break;
	if (!json_is_array(ids) || i < json_array_size(ids)) {
		json_decref(ids);
		err_set(ERR_INVALID, "candidate %lld: bad patch list", id);
		return NULL;
	}
	return ids;
}

int candidate_patch_ids(sqlite3 *db, long long id, long long **ids,
			size_t *n)
{
	json_t *arr = candidate_patch_list(db, id), *v;
	size_t i;

	*ids = NULL;
	*n = 0;
	if (!arr)
		return err_last() < 0 ? err_last() : ERR_IO;
	*ids = xcalloc(json_array_size(arr) + 1, sizeof(**ids));
	json_array_foreach(arr, i, v) (*ids)[(*n)++] = json_integer_value(v);
	json_decref(arr);
	return 0;
}

static const char *const verdict_names[CV_COUNT] = {
	[CV_NONE] = "none",
	[CV_PASS] = "pass",
	[CV_FAIL] = "fail",
	[CV_HANG] = "hang",
	[CV_BUILD_FAILED] = "build-failed",
	[CV_APPLY_FAILED] = "apply-failed",
};

const char *candidate_verdict_name(enum cand_verdict v)
{
	return (unsigned)v < CV_COUNT ? verdict_names[v] : "?";
}

enum cand_verdict candidate_verdict_parse(const char *name)
{
	for (int i = CV_NONE + 1; name && i < CV_COUNT; i++)
		if (!strcmp(name, verdict_names[i]))
			return (enum cand_verdict)i;
	return CV_NONE;
}

enum cand_verdict candidate_verdict_of(sqlite3 *db, long long id)
{
	char *v = candidate_verdict(db, id);
	enum cand_verdict cv = candidate_verdict_parse(v);

	free(v);
	return cv;
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

/* The verdict, by whoever ran the candidate (the daemon, user:NAME). */
static int finish(struct branch_ctx *bc, long long id, enum cand_verdict v,
		  const char *detail)
{
	sqlite3 *db = bc->db;
	const char *verdict = candidate_verdict_name(v);
	int ret = db_exec(db,
			  "UPDATE candidates SET step = 'done', verdict = ?,"
			  " detail = ?, finished_at ="
			  " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
			  "tti", verdict, detail, id);
	if (ret >= 0)
		event_add(db, bc->actor, "candidate", id, "verdict", "%s%s%s",
			  verdict, detail ? ": " : "", detail ? detail : "");
	char *line = candidate_summary(db, id);
	log_info("%s", line);
	free(line);
	return ret < 0 ? ret : 0;
}

/* Applies the candidate's patches onto the branch: one commit, one tree. */
static int apply_all(struct branch_ctx *bc, struct repo *r, long long id,
		     json_t *ids, char base[REPO_HEX_SIZE],
		     char commit[REPO_HEX_SIZE], char tree[REPO_HEX_SIZE],
		     struct strbuf *fail)
{
	char tip[REPO_HEX_SIZE];
	struct strbuf msg = STRBUF_INIT;
	size_t i;
	json_t *v;
	int ret;

	if ((ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0 ||
	    (ret = repo_tree_of(r, tip, tree)) < 0)
		return ret;
	memcpy(base, tree, REPO_HEX_SIZE);
	strbuf_addf(&msg, "stableq candidate %lld: %s + %zu patches\n\n", id,
		    bc->cfg.branch, json_array_size(ids));
	json_array_foreach(ids, i, v)
	{
		long long pid = json_integer_value(v);
		json_t *pt = queue_patch_content_json(bc->db, pid);
		const char *d = queue_field(pt, "diff");
		const char *s = queue_field(pt, "subject");
		char *diff = d ? xstrdup(d) : NULL;
		char *subject = s ? xstrdup(s) : NULL;
		struct repo_apply_result res = { 0 };
		char next[REPO_HEX_SIZE];

		json_decref(pt);
		err_clear();
		if (!diff) {
			strbuf_addf(fail, "patch %lld: no such patch", pid);
			free(subject);
			strbuf_release(&msg);
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

/* One cell's build directory and worktree: one candidate at a time. */
static int lock_builds(struct branch_ctx *bc, const struct cell *c, int *fd)
{
	char *dir = cell_build_dir(bc, c);
	char *path = xstrfmt("%s/.stableq-candidate.lock", dir);
	int ret = 0;

	mkdir_p(dir);
	free(dir);
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

static enum cand_verdict aggregate(sqlite3 *db, long long id,
				   struct strbuf *detail, int hung)
{
	/* a test that failed and, run again, did not (it passed, or it ran
	 * to its end and skipped: the first run's timeout under a loaded
	 * host) is flaky: the failure did not repeat */
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT name, SUM(result = 'pass'),"
				      " SUM(result = 'fail'), SUM(result ="
				      " 'skip') FROM test_results WHERE"
				      " candidate_id = ? GROUP BY name ORDER BY"
				      " MIN(id)",
				      "i", id);
	int fails = 0, flaky = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *name = db_col_text(st, 0);
		long long p = sqlite3_column_int64(st, 1);
		long long f = sqlite3_column_int64(st, 2);
		long long sk = sqlite3_column_int64(st, 3);
		if (f && (p || sk)) {
			flaky++;
			strbuf_addf(detail, "%s%s flaky (%lld pass, ",
				    detail->len ? "; " : "", name, p);
			if (sk)
				strbuf_addf(detail, "%lld skip, ", sk);
			strbuf_addf(detail, "%lld fail)", f);
		} else if (f) {
			fails++;
			strbuf_addf(detail, "%s%s failed", detail->len ? "; " : "",
				    name);
		}
	}
	sqlite3_finalize(st);
	if (flaky &&
	    db_exec(db,
			"UPDATE test_results SET result = 'flaky' WHERE"
			" candidate_id = ? AND name IN (SELECT name FROM"
			" test_results WHERE candidate_id = ? GROUP BY name"
			" HAVING SUM(result IN ('pass','skip')) > 0 AND"
			" SUM(result = 'fail') > 0)",
			"ii", id, id) < 0)
		log_warnx("candidate %lld: flaky tests not marked: %s", id,
			  err_msg());
	if (hung)
		return CV_HANG;
	return fails ? CV_FAIL : CV_PASS;
}

/* What a candidate boots: a build cache entry or the build directory. */
struct built {
	int ok;
	char *dir;    /* the runner's build_dir */
	char *kernel; /* the bzImage in it */
	char *error;  /* when !ok */
	int cached;   /* from the build cache: nothing compiled */
	int kept;     /* dir is a build cache entry: no other build overwrites it */
	struct kselftest_build ksft; /* the tree's kselftests */
	struct cell cell; /* what it is built with and booted on (cell.h) */
};

static void built_release(struct built *b)
{
	free(b->dir);
	free(b->kernel);
	free(b->error);
	kselftest_build_release(&b->ksft);
}

/* The files a boot takes from a build: the image and the tests' modules. */
static size_t boot_files(const char *tests_file, const char *guest,
			 const char *image, const char ***files,
			 struct test_def **tests, size_t *ntests)
{
	size_t n = 0;

	*files = NULL;
	if (testset_load(tests_file, tests, ntests) < 0) {
		err_clear(); /* the boot says what is wrong with it */
		return 0;
	}
	testset_for_guest(*tests, ntests, guest);
	for (size_t i = 0; i < *ntests; i++)
		n += (*tests)[i].nmodules;
	*files = xcalloc(n + 1, sizeof(**files));
	n = 0;
	(*files)[n++] = image;
	for (size_t i = 0; i < *ntests; i++)
		for (size_t m = 0; m < (*tests)[i].nmodules; m++)
			(*files)[n++] = (*tests)[i].modules[m];
	return n;
}

/* The branch's guest configuration (guest_config, guestconf.h). */
static const struct guestconf *guest_of(const struct branch_ctx *bc)
{
	const struct guestconf *g = guestconf_find(bc->cfg.guest_config);

	return g ? g : guestconf_find("quick");
}

/* The guest configuration's identity: with src, what comes from the tree. */
static int config_hash(const struct branch_ctx *bc, const struct cell *c,
		       const char *src, char out[65])
{
	const struct guestconf *g = guest_of(bc);
	char *frags = cell_fragments(guestconf_fragments(g, &bc->cfg), c);
	int ret = guestconf_hash(g, c->arch, src, frags, bc->cfg.kunit_deny,
				 out);

	free(frags);
	return ret;
}

static char *cache_dir(const struct config *c)
{
	return *c->build_cache_dir ? xstrdup(c->build_cache_dir)
				   : xstrfmt("%s/build-cache", c->var_dir);
}

struct build_progress {
	sqlite3 *db;
	long long id;
	char *label;
};

static void build_progress(void *vctx, long done, long total)
{
	struct build_progress *p = vctx;

	progress_set(p->db, "build", p->id, p->label, done, total, "objects");
}

/* The cache key of a state: tree, configuration, compiler. "" if unknown. */
static void state_key(const struct branch_ctx *bc, const struct cell *c,
		      const char *tree, char key[65], char chash[65])
{
	char *cc = NULL;

	key[0] = '\0';
	/*
	 * The fragments alone: the tinyconfig base is part of the tree, and
	 * the worktree holds another state until checked out.
	 */
	if (config_hash(bc, c, NULL, chash) < 0 ||
	    cell_compiler_id(c, &cc) < 0 ||
	    buildcache_key(tree, chash, cc, key) < 0) {
		log_warnx("build cache: %s: building", err_msg());
		key[0] = '\0';
		err_clear();
	}
	free(cc);
}

/*
 * A state already in the build cache boots from there, with a builds row
 * marked cached (its log is the one of the build that made it); any other
 * is checked out, built, and stored in the cache.
 */
static int build_state(struct branch_ctx *bc, struct repo *r, long long id,
		       const char *commit, const char *tree, struct built *out,
		       void (*progress)(const char *, void *), void *ctx)
{
	struct kbuild_result kb = { 0 };
	struct sandbox sb = { 0 };
	struct test_def *tests = NULL;
	size_t ntests = 0, nfiles;
	const char **files = NULL;
	char key[65] = "", chash[65] = "";
	char *cdir = cache_dir(&bc->cfg), *entry = NULL;
	char *blog = NULL, *bdir = cell_build_dir(bc, &out->cell);
	char *frags = cell_fragments(
		guestconf_fragments(guest_of(bc), &bc->cfg), &out->cell);
	const struct karch *ka = karch_boot_find(out->cell.arch);
	const char *image = ka ? ka->image : NULL;
	double t0 = now_monotonic();
	long long build_id;
	int ret;

	nfiles = boot_files(bc->cfg.tests_file, bc->cfg.guest_config, image,
			    &files, &tests, &ntests);
	if (bc->cfg.build_cache_mb > 0 && nfiles)
		state_key(bc, &out->cell, tree, key, chash);
	if (key[0] && buildcache_lookup(cdir, key, files, nfiles, &entry)) {
		char *orig_log = NULL;
		db_query_text(bc->db, &orig_log,
			      "SELECT log_path FROM builds WHERE cache_key = ?"
			      " AND cached = 0 ORDER BY id DESC LIMIT 1",
			      "t", key);
		err_clear();
		ret = db_exec(bc->db,
			      "INSERT INTO builds (commit_sha, tree_sha,"
			      " config_hash, result, seconds, log_path,"
			      " cache_key, cached) VALUES (?, ?, ?, 'ok', ?, ?,"
			      " ?, 1)",
			      "tttftt", commit, tree, chash,
			      now_monotonic() - t0, orig_log, key);
		free(orig_log);
		if (ret < 0)
			goto out;
		build_id = db_last_id(bc->db);
		if ((ret = db_exec(bc->db,
				   "UPDATE candidates SET build_id = ? WHERE"
				   " id = ?",
				   "ii", build_id, id)) < 0)
			goto out;
		say(progress, ctx,
		    "candidate %lld: state %.12s is in the build cache (build"
		    " %lld): no build",
		    id, key, build_id);
		out->ok = 1;
		out->cached = 1;
		out->kept = 1;
		out->dir = entry;
		out->kernel = xstrfmt("%s/%s", entry, image);
		entry = NULL;
		ret = 0;
		goto out;
	}

	if ((ret = sandbox_from_config(&sb, &bc->cfg)) < 0 ||
	    (ret = repo_checkout(r, commit)) < 0)
		goto out;
	struct build_progress bp = {
		.db = bc->db,
		.id = id,
		.label = xstrfmt("candidate %lld: building", id),
	};
	struct kbuild_opts ko = {
		.src_dir = bc->cfg.tree_dir,
		.build_dir = bdir,
		.config_dir = frags,
		.arch = out->cell.arch,
		.compiler = out->cell.compiler,
		.guest = guest_of(bc),
		.kunit_deny = bc->cfg.kunit_deny,
		.ccache_dir = bc->cfg.ccache_dir,
		.icecc = bc->cfg.icecc,
		.jobs = bc->cfg.make_jobs,
		.timeout_s = bc->cfg.build_timeout,
		.progress = build_progress,
		.progress_ctx = &bp,
		.sandbox = &sb,
	};
	{
		/* the next build's number; a cell's build beside it may have
		 * taken it: the log is made, never shared */
		long long next = 0;
		db_query_int(bc->db, &next,
			     "SELECT COALESCE(MAX(id), 0) + 1 FROM builds",
			     NULL);
		for (int fd = -1; fd < 0; next++) {
			free(blog);
			blog = xstrfmt("%s/log/build-%lld.log",
				       bc->cfg.var_dir, next);
			fd = open(blog, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
				  0644);
			if (fd >= 0)
				close(fd);
			else if (errno != EEXIST)
				break; /* kbuild says why it cannot write it */
		}
	}
	ko.log_path = blog;
	say(progress, ctx, "candidate %lld: building %.12s (log %s)", id, commit,
	    blog);
	ret = kbuild_run(&ko, &kb);
	/* the build user wrote them: what boots is files, not symlinks */
	if (ret >= 0 && kb.ok &&
	    kbuild_outputs_safe(bdir, files, nfiles) < 0) {
		kb.ok = 0;
		free(kb.error);
		kb.error = xstrdup(err_msg());
		err_clear();
	}
	progress_clear(bc->db, "build", id);
	free(bp.label);
	if (ret < 0 && !kb.config_hash[0])
		goto out;
	ret = db_exec(bc->db,
		      "INSERT INTO builds (commit_sha, tree_sha, config_hash,"
		      " result, seconds, log_path, error_excerpt, cache_key)"
		      " VALUES (?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''))",
		      "tttt"
		      "fttt",
		      commit, tree, kb.config_hash,
		      kb.ok ? "ok" : kb.timed_out ? "error" : "failed",
		      kb.seconds, blog,
		      kb.ok ? NULL : (kb.error ? kb.error : err_msg()), key);
	if (ret < 0)
		goto out;
	build_id = db_last_id(bc->db);
	if ((ret = db_exec(bc->db,
			   "UPDATE candidates SET build_id = ? WHERE id = ?",
			   "ii", build_id, id)) < 0)
		goto out;
	say(progress, ctx, "candidate %lld: build %lld %s in %.1f s", id,
	    build_id, kb.ok ? "ok" : "FAILED", kb.seconds);
	if (!kb.ok && kb.timed_out) {
		/* the machine's time ran out, not the patches': no verdict
		 * (nothing bisects, no one is blamed); what make compiled
		 * stays in the build directory and ccache for the next run */
		ret = err_set(ERR_IO,
			      "build %lld killed at the build deadline"
			      " (build_timeout = %d s) after %.0f s: not a"
			      " verdict on the patches; running it again goes"
			      " on from what was compiled (or raise"
			      " build_timeout)",
			      build_id, bc->cfg.build_timeout, kb.seconds);
		goto out;
	}
	ret = 0;
	out->ok = kb.ok;
	if (!kb.ok) {
		out->error = xstrdup(kb.error ? kb.error : err_msg());
		goto out;
	}
	if (key[0] &&
	    buildcache_store(cdir, key, bdir, files, nfiles,
			     (unsigned long long)bc->cfg.build_cache_mb << 20,
			     &entry) < 0) {
		log_warnx("candidate %lld: build cache: %s", id, err_msg());
		err_clear();
	}
	if (entry) {
		out->kept = 1;
		out->dir = entry;
		out->kernel = xstrfmt("%s/%s", entry, image);
		entry = NULL;
	} else {
		out->dir = xstrdup(bdir);
		out->kernel = xstrdup(kb.bzimage);
	}
out:
	kbuild_result_release(&kb);
	sandbox_release(&sb);
	testset_free(tests, ntests);
	free(files);
	free(cdir);
	free(entry);
	free(blog);
	free(bdir);
	free(frags);
	return ret;
}

/* The kselftests of the state checked out at commit (kselftest.h). */
static int build_kselftests(struct branch_ctx *bc, struct repo *r, long long id,
			    const char *commit, struct built *bs,
			    void (*progress)(const char *, void *), void *ctx)
{
	/* beside the cell's kernel build directory: shared like it (x86_64's
	 * is the branch's build_dir-kselftest, as it always was) */
	char *cc = NULL, *kdir = cell_build_dir(bc, &bs->cell);
	char *bdir = xstrfmt("%s-kselftest", kdir);
	char *cdir = xstrfmt("%s-cache", bdir);
	struct kselftest_opts ko = {
		.tests_file = bc->cfg.tests_file,
		.guest_config = bc->cfg.guest_config,
		.src_dir = bc->cfg.tree_dir,
		.arch = bs->cell.arch,
		.build_dir = bdir,
		.cache_dir = cdir,
		.ccache_dir = bc->cfg.ccache_dir,
		.jobs = bc->cfg.make_jobs,
		.timeout_s = bc->cfg.build_timeout,
	};
	struct sandbox sb;
	int ret;

	free(kdir);
	if ((ret = sandbox_from_config(&sb, &bc->cfg)) < 0) {
		free(bdir);
		free(cdir);
		return ret;
	}
	ko.sandbox = &sb;
	/* x86_64/gcc's is buildcache_compiler_id(): its keys as they were */
	if (cell_compiler_id(&bs->cell, &cc) < 0)
		err_clear();
	ko.compiler_id = cc;
	ko.log_path = xstrfmt("%s/log/kselftest-%lld.log", bc->cfg.var_dir, id);
	if ((ret = repo_checkout(r, commit)) == 0 &&
	    (ret = kselftest_prepare(&ko, &bs->ksft)) == 0 && bs->ksft.ntargets) {
		size_t built = 0, tests = 0;
		for (size_t i = 0; i < bs->ksft.ntargets; i++) {
			built += bs->ksft.targets[i].built;
			tests += bs->ksft.targets[i].ntests;
		}
		say(progress, ctx, "candidate %lld: kselftests %.12s: %zu of %zu"
		    " targets built, %zu tests (%s, %.1f s)%s%s%s%s", id,
		    bs->ksft.key, built, bs->ksft.ntargets, tests,
		    bs->ksft.cached ? "cached" : "built", bs->ksft.seconds,
		    cell_is_default(&bs->cell) ? "" : " for ",
		    cell_is_default(&bs->cell) ? "" : bs->cell.arch,
		    bs->ksft.note ? "; " : "",
		    bs->ksft.note ? bs->ksft.note : "");
	}
	free((char *)ko.log_path);
	free(cc);
	free(bdir);
	free(cdir);
	sandbox_release(&sb);
	return ret;
}

/*
 * Build coverage of the patches' files beyond the guest kernel: a touched
 * object that no longer compiles makes the candidate build-failed (1). When
 * coverage itself cannot run (a broken toolchain), the candidate goes on
 * and says so in its coverage line.
 */
static int run_coverage(struct branch_ctx *bc, struct repo *r, long long id,
			const char *commit,
			void (*progress)(const char *line, void *ctx),
			void *ctx)
{
	struct coverage_result cr = { 0 };
	char tip[REPO_HEX_SIZE];
	int ret;

	set_step(bc->db, id, "coverage");
	/* a state from the build cache was not checked out: coverage
	 * compiles from the worktree (only changed files are written) */
	if ((ret = repo_checkout(r, commit)) < 0 ||
	    (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0)
		return ret;
	ret = coverage_run(bc, r, id, tip, commit, &cr, progress, ctx);
	if (ret < 0) {
		char *msg = xstrfmt("not measured: %s", err_msg());
		log_warnx("candidate %lld: coverage %s", id, msg);
		ret = db_exec(bc->db,
			      "UPDATE candidates SET coverage = ? WHERE id = ?",
			      "ti", msg, id);
		free(msg);
		if (ret > 0)
			ret = 0;
	} else if (cr.failed) {
		ret = finish(bc, id, CV_BUILD_FAILED, cr.error);
		ret = ret < 0 ? ret : 1;
	}
	coverage_result_release(&cr);
	return ret;
}

int candidate_on_branch(struct branch_ctx *bc, long long id)
{
	char *key = NULL;
	int ret = candidate_branch(bc->db, id, &key);

	if (ret < 0)
		return ret;
	if (strcmp(key, bc->cfg.branch_key))
		ret = err_set(ERR_INVALID,
			      "candidate %lld is on branch %s, not %s"
			      " (--branch %s)",
			      id, key, bc->cfg.branch_key, key);
	free(key);
	return ret;
}

/* What a bisection's search step boots: the tests that steer it. */
struct only {
	char **names;  /* guest tests */
	size_t n;
	char *append;  /* "kunit.filter_glob=SUITE" for one KUnit suite */
};

static void only_release(struct only *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->names[i]);
	free(o->names);
	free(o->append);
}

/*
 * 1 if the candidate boots a part of the set (tests_only): guest tests by
 * name; KUnit cases ("kunit.SUITE.CASE") all of one suite run alone with
 * kunit.filter_glob (cases of several suites: every suite, as built).
 */
static int tests_only(sqlite3 *db, long long id, int run, struct only *o)
{
	char *text = NULL, *suite = NULL;
	json_t *arr, *v;
	size_t i;
	int several = 0;

	memset(o, 0, sizeof(*o));
	/* a confirmation repeats only its steering tests after its first
	 * boot of the whole set (repeat_only) */
	if (db_query_text(db, &text,
			  "SELECT x FROM (SELECT COALESCE(tests_only, CASE"
			  " WHEN ?1 > 1 THEN repeat_only END) AS x FROM"
			  " candidates WHERE id = ?2) WHERE x IS NOT NULL",
			  "ii", (long long)run, id) < 0) {
		err_clear();
		return 0;
	}
	arr = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_array(arr)) {
		json_decref(arr);
		return 0;
	}
	o->names = xcalloc(json_array_size(arr) + 1, sizeof(*o->names));
	json_array_foreach(arr, i, v)
	{
		const char *name = json_string_value(v);
		if (!name)
			continue;
		if (!strncmp(name, "kunit.", 6)) {
			size_t l = strcspn(name + 6, ".");
			if (!suite)
				suite = xstrndup(name + 6, l);
			else if (strlen(suite) != l ||
				 strncmp(suite, name + 6, l))
				several = 1;
			continue;
		}
		o->names[o->n++] = xstrdup(name);
	}
	json_decref(arr);
	/* a suite name travels on the kernel command line: plain ones only */
	if (suite && !several && suite[strspn(suite,
					      "abcdefghijklmnopqrstuvwxyz"
					      "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789_-")] == '\0')
		o->append = xstrfmt("kunit.filter_glob=%s", suite);
	free(suite);
	return 1;
}

int candidate_set_repeat_only(sqlite3 *db, long long id, json_t *names)
{
	char *text = names ? json_dumps(names, JSON_COMPACT) : NULL;
	int ret = db_exec(db,
			  "UPDATE candidates SET repeat_only = ? WHERE id = ?",
			  "ti", text, id);

	free(text);
	return ret < 0 ? ret : 0;
}

int candidate_set_tests_only(sqlite3 *db, long long id, json_t *names)
{
	char *text = names ? json_dumps(names, JSON_COMPACT) : NULL;
	int ret = db_exec(db, "UPDATE candidates SET tests_only = ? WHERE id = ?",
			  "ti", text, id);

	free(text);
	return ret < 0 ? ret : 0;
}

/* How the runner boots a built state on this branch. */
static void runner_opts_of(struct branch_ctx *bc, const struct built *bs,
			   char *work, char *clog, struct runner_opts *ro)
{
	struct runner_opts o = {
		.arch = karch_boot_find(bs->cell.arch),
		.build_dir = bs->dir,
		.kernel = bs->kernel,
		.tests_file = bc->cfg.tests_file,
		.guest_config = bc->cfg.guest_config,
		.accel = bc->cfg.qemu_accel,
		.memory_mb = bc->cfg.qemu_memory > guest_of(bc)->memory_mb
				     ? bc->cfg.qemu_memory
				     : guest_of(bc)->memory_mb,
		.timeout_s = bc->cfg.boot_timeout > guest_of(bc)->boot_timeout_s
				     ? bc->cfg.boot_timeout
				     : guest_of(bc)->boot_timeout_s,
		.work_dir = work,
		.log_path = clog,
		.kselftests = &bs->ksft,
	};
	*ro = o;
}

/* The time of a candidate's boots: the guest to userspace, the tests. */
struct boot_times {
	double boot, tests;
	int boots;
};

/*
 * One boot of the built state, its results stored as run `run`. With a
 * retry plan, only the failing tests it names boot, and only their results
 * are stored: the rest of that boot ran a part of the set.
 */
static int boot_once(struct branch_ctx *bc, long long id,
		     const struct built *bs, int run, int runs, int *hung,
		     const struct runner_retry *retry, struct boot_times *bt,
		     void (*progress)(const char *line, void *ctx), void *ctx)
{
	/* a cell's own: cells side by side write their initramfs there */
	char *guest = xstrfmt("%s/guest", bc->cfg.var_dir);
	char *work = cell_path(guest, &bs->cell);
	char *clog =
		xstrfmt("%s/log/console-%lld-%d.log", bc->cfg.var_dir, id, run);
	struct runner_opts ro;
	struct runner_result rr = { 0 };
	struct only only = { 0 };
	int ret;

	runner_opts_of(bc, bs, work, clog, &ro);
	if (retry) {
		ro.only = retry->only.v;
		ro.nonly = retry->only.nr;
		ro.append = retry->append;
	} else if (tests_only(bc->db, id, run, &only)) {
		ro.only = (const char *const *)only.names;
		ro.nonly = only.n;
		ro.append = only.append;
		say(progress, ctx,
		    "candidate %lld: only the steering tests: %zu guest test%s%s%s",
		    id, only.n, only.n == 1 ? "" : "s",
		    only.append ? ", " : "", only.append ? only.append : "");
	}
	if (!retry)
		say(progress, ctx, "candidate %lld: booting (run %d of %d)",
		    id, run, runs);
	ret = runner_boot(&ro, &rr);
	only_release(&only);
	free(work);
	free(guest);
	/* the candidate's log is the console of its last boot */
	if (db_exec(bc->db,
		    "UPDATE candidates SET boots = boots + ?,"
		    " log_path = ? WHERE id = ?",
		    "iti", (long long)(rr.boots > 1 ? rr.boots : 1), clog,
		    id) < 0 &&
	    ret >= 0)
		ret = ERR_IO;
	free(clog);
	if (bt) {
		double tests = rr.userspace_seconds > 0
				       ? rr.boot_seconds - rr.userspace_seconds
				       : 0;
		bt->tests += tests;
		bt->boot += rr.seconds - tests;
		bt->boots += rr.boots > 1 ? rr.boots : 1;
	}
	if (ret < 0) {
		runner_result_release(&rr);
		return ret;
	}
	*hung |= rr.verdict == VERDICT_HANG;
	if (retry) {
		/* its results are those of the tests it retried: the rest of
		 * that boot (a console test, KUnit switched off) says nothing */
		size_t kept = 0, failed = 0;
		for (size_t i = 0; i < rr.report.nresults; i++) {
			struct test_result *t = &rr.report.results[i];
			if (!runner_retry_covers(retry, t->name) || t->not_run) {
				free(t->name);
				free(t->detail);
				free(t->excerpt);
				continue;
			}
			failed += t->status == TEST_FAIL || t->status == TEST_HANG;
			rr.report.results[kept++] = *t;
		}
		rr.report.nresults = kept;
		say(progress, ctx,
		    "candidate %lld: run %d (the retry): %zu result%s, %zu"
		    " failed again, in %.1f s (%s)%s",
		    id, run, kept, kept == 1 ? "" : "s", failed, rr.seconds,
		    rr.accel ? rr.accel : "?",
		    rr.verdict == VERDICT_HANG ? ", killed at its deadline" : "");
	} else {
		say(progress, ctx,
		    "candidate %lld: run %d: %s, %zu results in %.1f s (%s)%s%s",
		    id, run, run_verdict_name(rr.verdict), rr.report.nresults,
		    rr.seconds, rr.accel ? rr.accel : "?",
		    rr.reason && *rr.reason ? ": " : "",
		    rr.reason ? rr.reason : "");
	}
	ret = store_tests(bc->db, id, run, &rr);
	runner_result_release(&rr);
	return ret;
}

/*
 * The tests of the candidate that failed in every boot so far (none
 * passed or ran to a skip), and are no
 * known failure of the tip's run tip_id (0: none known): what a retry
 * runs again. A JSON array of names, first failure first.
 */
static json_t *failing_names(sqlite3 *db, long long id, long long tip_id)
{
	json_t *rows = db_rows_json(
		db,
		"SELECT name FROM test_results WHERE candidate_id = ?1 GROUP"
		" BY name HAVING SUM(result = 'fail') > 0 AND SUM(result IN"
		" ('pass','skip')) = 0 AND name NOT IN (SELECT name FROM"
		" test_results WHERE candidate_id = ?2 AND result IN"
		" ('fail','flaky'))"
		" ORDER BY MIN(id)",
		"ii", id, tip_id);
	json_t *names = json_array(), *v;
	size_t i;

	json_array_foreach(rows, i, v)
		json_array_append(names, json_object_get(v, "name"));
	json_decref(rows);
	err_clear();
	return names;
}

/* 1 when a test of the candidate failed in every run so far. */
static int has_failures(sqlite3 *db, long long id)
{
	json_t *names = failing_names(db, id, 0);
	int n = json_array_size(names) > 0;

	json_decref(names);
	return n;
}

/*
 * Retries are for the queue's candidates and the tip's run made ahead of
 * time; a bisection step is judged by its steering tests alone, and
 * `verify` reads its one test's first result. The tip's run that a
 * failing candidate made on demand (created by "candidate") is not
 * retried: a tip's failure is known whether a retry passes it (flaky) or
 * not (testcase_classify), so its retries would decide nothing and cost
 * a boot of every failure of the tip.
 */
static int retries_apply(sqlite3 *db, long long id)
{
	long long n = 0;

	db_query_int(db, &n,
		     "SELECT purpose IN ('queue','confirm') OR (purpose ="
		     " 'baseline' AND patch_ids = '[]' AND"
		     " COALESCE(created_by, '') != 'candidate') FROM"
		     " candidates WHERE id = ?",
		     "i", id);
	err_clear();
	return n > 0;
}

/* A queue or confirm candidate (of patches, if with_patches). */
static int of_queue_with(sqlite3 *db, long long id, int with_patches)
{
	long long n = 0;

	db_query_int(db, &n,
		     "SELECT purpose IN ('queue','confirm') AND (? = 0 OR"
		     " patch_ids != '[]') FROM candidates WHERE id = ?",
		     "ii", (long long)with_patches, id);
	err_clear();
	return n > 0;
}

/* Its cases are classified (against the tip or not): the queue's. */
static int of_queue(sqlite3 *db, long long id)
{
	return of_queue_with(db, id, 0);
}

/* A tip's run: a baseline candidate of no patches. */
static int is_baseline(sqlite3 *db, long long id)
{
	long long n = 0;

	db_query_int(db, &n,
		     "SELECT purpose = 'baseline' AND patch_ids = '[]' FROM"
		     " candidates WHERE id = ?",
		     "i", id);
	err_clear();
	return n > 0;
}

/* Compared with the tip: a queue candidate of patches, test_baseline. */
static int tip_applies(struct branch_ctx *bc, long long id)
{
	return !strcmp(bc->cfg.test_baseline, "yes") &&
	       of_queue_with(bc->db, id, 1);
}

static int testset_hash(struct branch_ctx *bc, long long id)
{
	char h[65];
	int ret = testcase_set_hash(bc->cfg.tests_file, h);

	if (ret < 0)
		return ret;
	return db_exec(bc->db,
		       "UPDATE candidates SET testset_hash = ? WHERE id = ?",
		       "ti", h, id);
}

/*
 * What a tip's run is the run of: the tree, the guest configuration's
 * fragments and the test set ("TREE CONFIG TESTS", caller frees), and a
 * cell other than x86_64/gcc (" arm64/gcc": cell.h). The same key is the
 * same run: once per tip state and cell.
 */
static char *tip_key(struct branch_ctx *bc, const struct cell *c,
		     const char *tree)
{
	char chash[65], thash[65];
	char *cn;
	char *key;

	if (config_hash(bc, c, NULL, chash) < 0 ||
	    testcase_set_hash(bc->cfg.tests_file, thash) < 0)
		return NULL;
	if (cell_is_default(c))
		return xstrfmt("%s %s %s", tree, chash, thash);
	cn = cell_name(c);
	key = xstrfmt("%s %s %s %s", tree, chash, thash, cn);
	free(cn);
	return key;
}

/* The key of the branch tip as it is now in cell c, or NULL (no tree yet). */
static char *tip_key_now(struct branch_ctx *bc, const struct cell *c)
{
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE], tree[REPO_HEX_SIZE];
	char *key = NULL;

	if (repo_open(&r, bc->cfg.tree_dir) < 0)
		return NULL;
	if (repo_branch_tip(r, bc->cfg.branch, tip) >= 0 &&
	    repo_tree_of(r, tip, tree) >= 0)
		key = tip_key(bc, c, tree);
	repo_free(r);
	return key;
}

/* The branch's finished run of the tip state key (0: none yet). */
static long long tip_done(struct branch_ctx *bc, const char *key)
{
	long long tip = 0;

	if (key && db_query_int(bc->db, &tip,
				"SELECT id FROM candidates WHERE branch_id = ?"
				" AND purpose = 'baseline' AND patch_ids ="
				" '[]' AND baseline_of = ? AND verdict IN"
				" ('pass','fail','hang') ORDER BY id DESC"
				" LIMIT 1",
				"it", bc->branch_id, key) < 0) {
		err_clear();
		tip = 0;
	}
	return tip;
}

int candidate_baseline_due(struct branch_ctx *bc, long long *id)
{
	long long n = 0;
	char *key;

	*id = 0;
	if (strcmp(bc->cfg.baseline_idle, "yes") ||
	    strcmp(bc->cfg.test_baseline, "yes"))
		return 0;
	/* one that a stop interrupted runs again first */
	if (db_query_int(bc->db, id,
			 "SELECT id FROM candidates WHERE branch_id = ? AND"
			 " purpose = 'baseline' AND step = 'pending' ORDER BY"
			 " id LIMIT 1",
			 "i", bc->branch_id) >= 0 &&
	    *id > 0)
		return 1;
	err_clear();
	*id = 0;
	/* the candidate's own cell: the others' tips run when one needs them */
	struct cell first;
	if (cell_first(&bc->cfg, &first) < 0 ||
	    !(key = tip_key_now(bc, &first))) {
		err_clear();
		return 0;
	}
	/* run once per state: a build that failed is its answer too */
	if (db_query_int(bc->db, &n,
			 "SELECT COUNT(*) FROM candidates WHERE branch_id = ?"
			 " AND purpose = 'baseline' AND baseline_of = ? AND"
			 " step = 'done'",
			 "it", bc->branch_id, key) < 0 ||
	    n > 0) {
		err_clear();
		free(key);
		return 0;
	}
	*id = candidate_create_on(bc->db, bc->branch_id, (long long[]){ 0 },
				  0, 0, "baseline", 0, "daemon");
	if (*id > 0 && db_exec(bc->db,
			       "UPDATE candidates SET baseline_of = ? WHERE"
			       " id = ?",
			       "ti", key, *id) < 0)
		*id = -1;
	free(key);
	if (*id <= 0) {
		log_warnx("baseline: %s", err_msg());
		err_clear();
		*id = 0;
		return 0;
	}
	log_info("candidate %lld: the tip's baseline, run while the daemon"
		 " is idle", *id);
	return 1;
}

long long candidate_same_state(struct branch_ctx *bc, long long failing,
				size_t prefix, size_t n)
{
	struct cell cell;
	char *key = NULL;
	long long id = 0;

	if (cell_of_row(bc->db, failing, &cell) >= 0)
		key = tip_key_now(bc, &cell);
	if (!key) {
		err_clear();
		return 0;
	}
	if (prefix == 0) {
		id = tip_done(bc, key);
	} else if (prefix == n &&
		   db_query_int(bc->db, &id,
				"SELECT id FROM candidates WHERE id = ? AND"
				" baseline_of = ? AND tests_only IS NULL AND"
				" verdict IN ('pass','fail')",
				"it", failing, key) < 0) {
		err_clear();
		id = 0;
	}
	free(key);
	return id;
}

/*
 * The revert's confirmation of a state a bisection's confirmation booted
 * already (the same patches on the same tip state, the whole set): that
 * run's results are its own, no build, no boot. 0 when there is none.
 */
static long long same_state_run(struct branch_ctx *bc, long long id,
				const char *key)
{
	long long src = 0;

	if (!key || db_query_int(bc->db, &src,
				 "SELECT s.id FROM candidates c JOIN candidates"
				 " s ON s.branch_id = c.branch_id AND"
				 " s.baseline_of = ?2 AND s.patch_ids ="
				 " c.patch_ids AND s.id != c.id WHERE c.id = ?1"
				 " AND c.purpose = 'confirm' AND s.purpose ="
				 " 'bisect' AND s.tests_only IS NULL AND"
				 " s.verdict IN ('pass','fail') ORDER BY s.id"
				 " DESC LIMIT 1",
				 "it", id, key) < 0) {
		err_clear();
		return 0;
	}
	return src;
}

/* Candidate src's results (every boot) and build, as id's own. */
static int take_results(sqlite3 *db, long long id, long long src)
{
	int ret = db_exec(db,
			  "INSERT INTO test_results (candidate_id, run, name,"
			  " result, detail, log_excerpt) SELECT ?, run, name,"
			  " result, detail, log_excerpt FROM test_results WHERE"
			  " candidate_id = ? ORDER BY id",
			  "ii", id, src);

	if (ret >= 0)
		ret = db_exec(db,
			      "UPDATE candidates SET build_id = (SELECT"
			      " build_id FROM candidates WHERE id = ?2),"
			      " log_path = (SELECT log_path FROM candidates"
			      " WHERE id = ?2) WHERE id = ?1",
			      "ii", id, src);
	return ret < 0 ? ret : 0;
}

/* A phase of candidate id: its branch and purpose from its row. */
void candidate_phase_record(sqlite3 *db, long long id, const char *phase,
			    double seconds, const char *detail)
{
	char *purpose = NULL;

	db_query_text(db, &purpose,
		      "SELECT purpose FROM candidates WHERE id = ?", "i", id);
	err_clear();
	candidate_phase_store(db, id, candidate_branch_id(db, id),
			      purpose ? purpose : "queue", phase, seconds,
			      detail);
	free(purpose);
}

/* A phase at work: its row, and when it began. */
struct phase {
	const char *name;
	long long row;
	double t0;
};

static void phase_begin(struct branch_ctx *bc, long long id,
			const char *purpose, const char *name,
			struct phase *ph,
			void (*progress)(const char *line, void *ctx),
			void *ctx)
{
	double est = candidate_phase_estimate(bc->db, bc->branch_id, purpose,
					      name);

	ph->name = name;
	ph->t0 = now_monotonic();
	ph->row = candidate_phase_open(bc->db, id, bc->branch_id, purpose,
				       name);
	if (est >= 0) {
		char *t = candidate_duration_text(est);
		say(progress, ctx, "candidate %lld: phase %s (usually %s on"
		    " this branch)", id, name, t);
		free(t);
	} else {
		say(progress, ctx, "candidate %lld: phase %s", id, name);
	}
}

static void phase_end(struct branch_ctx *bc, long long id, struct phase *ph,
		      double seconds, const char *detail,
		      void (*progress)(const char *line, void *ctx),
		      void *ctx)
{
	char *t;

	if (!ph->row)
		return;
	if (seconds < 0)
		seconds = now_monotonic() - ph->t0;
	candidate_phase_close(bc->db, ph->row, seconds, detail);
	t = candidate_duration_text(seconds);
	say(progress, ctx, "candidate %lld: phase %s: %s%s%s%s", id, ph->name, t,
	    detail ? " (" : "", detail ? detail : "", detail ? ")" : "");
	free(t);
	ph->row = 0;
}

/* What the whole run usually takes, said once at its start. */
static void say_estimate(struct branch_ctx *bc, long long id,
			 const char *purpose,
			 void (*progress)(const char *line, void *ctx),
			 void *ctx)
{
	static const char *const phases[] = { "apply", "build", "boot",
					      "tests" };
	struct strbuf sb = STRBUF_INIT;
	double sum = 0;

	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		double e = candidate_phase_estimate(bc->db, bc->branch_id,
						    purpose, phases[i]);
		char *t;
		if (e < 0) {
			strbuf_release(&sb);
			return; /* no history yet: no figure to give */
		}
		t = candidate_duration_text(e);
		strbuf_addf(&sb, "%s%s %s", i ? ", " : "", phases[i], t);
		free(t);
		sum += e;
	}
	char *t = candidate_duration_text(sum);
	say(progress, ctx, "candidate %lld: a %s candidate usually takes %s on"
	    " this branch (%s)", id, purpose, t, sb.buf);
	free(t);
	strbuf_release(&sb);
}

/*
 * The failing tests alone, one short boot for all of them, up to
 * test_retries times while some still fail in every boot; the tip's known
 * failures (tip_id's) are not retried: they decide nothing.
 */
static int retry_failing(struct branch_ctx *bc, long long id,
			 const struct built *bs, long long tip_id, int *run,
			 int *hung, const char *purpose,
			 void (*progress)(const char *line, void *ctx),
			 void *ctx)
{
	struct phase ph = { 0 };
	double t0 = now_monotonic();
	int ret = 0, retries = 0;
	size_t retried = 0;

	for (int retry = 0; retry < bc->cfg.test_retries && !*hung; retry++) {
		json_t *names = failing_names(bc->db, id, tip_id), *v;
		struct strvec failing = STRVEC_INIT;
		struct runner_retry plan;
		struct runner_opts ro;
		size_t i;

		json_array_foreach(names, i, v)
			strvec_push(&failing, json_string_value(v));
		json_decref(names);
		if (!failing.nr) {
			strvec_clear(&failing);
			break;
		}
		runner_opts_of(bc, bs, NULL, NULL, &ro);
		ret = runner_retry_plan(&ro, failing.v, failing.nr, &plan);
		strvec_clear(&failing);
		if (ret < 0)
			break;
		if (plan.skipped.nr && !retry) {
			struct strbuf sk = STRBUF_INIT;
			for (i = 0; i < plan.skipped.nr; i++)
				strbuf_addf(&sk, "%s%s", i ? ", " : "",
					    plan.skipped.v[i]);
			say(progress, ctx,
			    "candidate %lld: not retried alone: %s (they"
			    " judge a whole boot, or the host's build)",
			    id, sk.buf);
			strbuf_release(&sk);
		}
		if (!plan.retried.nr) {
			runner_retry_release(&plan);
			break;
		}
		if (!ph.row)
			phase_begin(bc, id, purpose, "retry", &ph, progress,
				    ctx);
		char *what = runner_retry_text(&plan);
		say(progress, ctx,
		    "candidate %lld: retry %d of %d: %zu failing test%s alone,"
		    " in one boot: %s",
		    id, retry + 1, bc->cfg.test_retries, plan.retried.nr,
		    plan.retried.nr == 1 ? "" : "s", what);
		free(what);
		retried = plan.retried.nr > retried ? plan.retried.nr : retried;
		retries++;
		ret = boot_once(bc, id, bs, *run, *run, hung, &plan, NULL,
				progress, ctx);
		(*run)++;
		runner_retry_release(&plan);
		if (ret < 0)
			break;
	}
	if (ph.row) {
		char *d = xstrfmt("%d boot%s, %zu test%s", retries,
				  retries == 1 ? "" : "s", retried,
				  retried == 1 ? "" : "s");
		phase_end(bc, id, &ph, now_monotonic() - t0, d,
			  progress, ctx);
		free(d);
	}
	return ret;
}

/*
 * The run of the test set on the branch tip the candidate was applied on
 * (key): the branch's finished baseline of that state, run ahead of time
 * by the daemon (candidate_baseline_due) or for an earlier candidate;
 * else, when on_demand, a new one run now (its build from the build cache
 * when the state was built before). *tip_id 0 when there is none.
 */
static int tip_run(struct branch_ctx *bc, long long id, const char *key,
		   int on_demand, long long *tip_id,
		   void (*progress)(const char *line, void *ctx), void *ctx)
{
	long long branch = bc->branch_id;
	int ret;

	if ((*tip_id = tip_done(bc, key))) {
		say(progress, ctx,
		    "candidate %lld: the tip's run is candidate %lld (same"
		    " tree, configuration and test set, run before)",
		    id, *tip_id);
		return 0;
	}
	if (!on_demand)
		return 0;
	long long cid = candidate_create_on(bc->db, branch, (long long[]){ 0 },
					    0, 0, "baseline", 0, "candidate");
	if (cid < 0)
		return (int)cid;
	if ((ret = cell_copy(bc->db, id, cid)) < 0) /* the same cell's tip */
		return ret;
	say(progress, ctx, "candidate %lld: running the test set on the tip"
	    " (candidate %lld)", id, cid);
	if ((ret = candidate_run(bc, cid, 1, progress, ctx)) < 0)
		return ret;
	enum cand_verdict v = candidate_verdict_of(bc->db, cid);

	if (v != CV_PASS && v != CV_FAIL && v != CV_HANG)
		return err_set(ERR_CONFLICT,
			       "the tip's run (candidate %lld) did not boot",
			       cid);
	*tip_id = cid;
	return 0;
}

/*
 * A tip's run is its own reference: its failures are the tip's known
 * failures, recorded once (as test cases of status 'known', with their
 * detail) and named in an event, for every candidate of that tip to
 * point at.
 */
static int record_known(struct branch_ctx *bc, long long id,
			struct strbuf *detail)
{
	struct testcase_counts tc;
	json_t *known;
	size_t i;
	json_t *v;
	int ret;

	if ((ret = testcase_classify(bc->db, id, id, &tc, NULL)) < 0)
		return ret;
	if (!tc.known && !tc.flaky)
		return 0;
	known = testcase_list_json(bc->db, id, "known");
	strbuf_reset(detail);
	strbuf_addf(detail, "the tip's known failures (%lld):",
		    (long long)tc.known);
	json_array_foreach(known, i, v)
	{
		const char *d = json_string_value(json_object_get(v, "detail"));
		size_t l = d ? strcspn(d, "\n") : 0;
		if (i == 8) {
			strbuf_addstr(detail, " ...");
			break;
		}
		strbuf_addf(detail, "%s %s%s%.*s", i ? ";" : "",
			    json_string_value(json_object_get(v, "name")),
			    l ? ": " : "", (int)(l > 160 ? 160 : l), d ? d : "");
	}
	if (tc.flaky)
		strbuf_addf(detail, "; %lld flaky", (long long)tc.flaky);
	json_decref(known);
	event_add(bc->db, bc->actor, "candidate", id, "baseline", "%s",
		  detail->buf);
	return 0;
}

int candidate_run(struct branch_ctx *bc, long long id, int runs,
		  void (*progress)(const char *line, void *ctx), void *ctx)
{
	struct repo *r = NULL;
	struct strbuf why = STRBUF_INIT;
	struct cell_runs *cells = NULL;
	char commit[REPO_HEX_SIZE], tree[REPO_HEX_SIZE], base[REPO_HEX_SIZE];
	char *logdir, *purpose = NULL, *key = NULL, *cell_tree = NULL;
	char *branch_tree = bc->cfg.tree_dir;
	json_t *ids = NULL;
	struct built bs = { 0 };
	struct phase ph = { 0 };
	struct boot_times bt = { 0 };
	long long tip_id = 0;
	double tip_secs = -1; /* >= 0: the tip's run was made now, first */
	int ret, lockfd = -1, hung = 0, baseline;

	if (runs < 1)
		runs = 1;
	if ((ret = candidate_on_branch(bc, id)) < 0)
		return ret;
	if (!(ids = candidate_patch_list(bc->db, id))) {
		ret = err_last() < 0 ? err_last() : ERR_IO;
		goto out;
	}
	if (db_query_text(bc->db, &purpose,
			  "SELECT purpose FROM candidates WHERE id = ?", "i",
			  id) < 0 || !purpose) {
		ret = err_last() < 0 ? err_last() : ERR_IO;
		goto out;
	}
	baseline = is_baseline(bc->db, id);
	if ((ret = cell_get(bc, id, &bs.cell)) < 0 ||
	    (ret = lock_builds(bc, &bs.cell, &lockfd)) < 0)
		goto out;
	/* a cell other than the branch's first builds in a worktree of its
	 * own, so cells side by side each check their states out alone */
	if ((ret = cell_tree_ready(bc, &bs.cell, &cell_tree)) < 0)
		goto out;
	bc->cfg.tree_dir = cell_tree;
	logdir = xstrfmt("%s/log", bc->cfg.var_dir);
	mkdir_p(logdir);
	free(logdir);
	/* the other cells of the matrix start beside this one (cell.h) */
	if ((ret = cell_runs_start(bc, id, &cells, progress, ctx)) < 0)
		goto out;
	say_estimate(bc, id, purpose, progress, ctx);

	/* apply */
	set_step(bc->db, id, "apply");
	phase_begin(bc, id, purpose, "apply", &ph, progress, ctx);
	say(progress, ctx, "candidate %lld: applying %zu patches onto %s", id,
	    json_array_size(ids), bc->cfg.branch);
	if ((ret = repo_open(&r, bc->cfg.tree_dir)) < 0) {
		err_prefix(ret, "the stable tree (run `stableq tree init`)");
		goto out;
	}
	ret = apply_all(bc, r, id, ids, base, commit, tree, &why);
	if (ret < 0)
		goto out;
	phase_end(bc, id, &ph, -1, NULL, progress, ctx);
	if (ret > 0) {
		ret = finish(bc, id, CV_APPLY_FAILED, why.buf);
		goto out;
	}
	if ((ret = db_exec(bc->db,
			   "UPDATE candidates SET commit_sha = ? WHERE id = ?",
			   "ti", commit, id)) < 0)
		goto out;
	/* the tip state it stands on: a baseline is the run of it */
	key = tip_key(bc, &bs.cell, base);
	if (!key)
		err_clear();
	if (key && (ret = db_exec(bc->db,
				  "UPDATE candidates SET baseline_of = ? WHERE"
				  " id = ?",
				  "ti", key, id)) < 0)
		goto out;
	/* a revert's confirmation of a state that a bisection confirmed */
	long long src = same_state_run(bc, id, key);
	if (src > 0) {
		say(progress, ctx,
		    "candidate %lld: the same state as candidate %lld (the same"
		    " patches on the same tip, the whole set run): its results,"
		    " no build, no boot",
		    id, src);
		if ((ret = take_results(bc->db, id, src)) < 0)
			goto out;
		char *d = xstrfmt("the results of candidate %lld", src);
		candidate_phase_store(bc->db, id, bc->branch_id, purpose,
				      "boot", 0, d);
		free(d);
		goto judge;
	}
	/* build, or take the state from the build cache */
	set_step(bc->db, id, "build");
	phase_begin(bc, id, purpose, "build", &ph, progress, ctx);
	if ((ret = build_state(bc, r, id, commit, tree, &bs, progress, ctx)) <
	    0)
		goto out;
	if (!bs.ok) {
		phase_end(bc, id, &ph, -1, "failed", progress, ctx);
		ret = finish(bc, id, CV_BUILD_FAILED, bs.error);
		goto out;
	}
	int cached = bs.cached;
	/* build coverage is x86_64/gcc's; kselftests are built with each
	 * arch's gcc, and run in its gcc cell only (cell.h) */
	if (cell_is_default(&bs.cell) &&
	    (ret = run_coverage(bc, r, id, commit, progress, ctx)) != 0) {
		phase_end(bc, id, &ph, -1, "coverage", progress, ctx);
		goto out; /* build-failed (1) or could not run */
	}
	if (!strcmp(bs.cell.compiler, "gcc") &&
	    (ret = build_kselftests(bc, r, id, commit, &bs, progress, ctx)) < 0)
		goto out;
	phase_end(bc, id, &ph, -1,
		  cached ? "from the build cache" : "built", progress, ctx);

	/* boot and test, runs times on the same build */
	set_step(bc->db, id, "boot");
	int run; /* after the loop: the next run's number (a retry's) */
	double t0 = now_monotonic();
	for (run = 1; run <= runs; run++)
		if ((ret = boot_once(bc, id, &bs, run, runs, &hung, NULL, &bt,
				     progress, ctx)) < 0)
			goto out;
	{
		char *d = xstrfmt("%d boot%s", bt.boots, bt.boots == 1 ? "" : "s");
		double wall = now_monotonic() - t0;
		candidate_phase_store(bc->db, id, bc->branch_id, purpose,
				      "boot", wall - bt.tests, d);
		candidate_phase_store(bc->db, id, bc->branch_id, purpose,
				      "tests", bt.tests, NULL);
		say(progress, ctx, "candidate %lld: phase boot: %.1f s, phase"
		    " tests: %.1f s (%s)", id, wall - bt.tests, bt.tests, d);
		free(d);
	}
	/*
	 * The tip's run, when it was made ahead of time: its known failures
	 * need no retry, and the verdict needs no other boot than the
	 * retries of the rest.
	 */
	if (!hung && tip_applies(bc, id) && key)
		tip_id = tip_done(bc, key);
	/*
	 * None was: when the candidate failed anything, the tip runs first
	 * (its build from the build cache when it was built before), so that
	 * only the failures that pass on the tip are retried. Not when the
	 * candidate's build lies in the shared build directory (no build
	 * cache), which the tip's build would overwrite before the retry.
	 */
	if (!hung && !tip_id && key && tip_applies(bc, id) && bs.kept &&
	    bc->cfg.test_retries > 0 && retries_apply(bc->db, id) &&
	    has_failures(bc->db, id)) {
		double tb = now_monotonic();
		close(lockfd); /* the tip's run takes the lock itself */
		lockfd = -1;
		say(progress, ctx,
		    "candidate %lld: no run of its tip is known: the tip runs"
		    " first, then only the failures that pass on it are"
		    " retried", id);
		if (tip_run(bc, id, key, 1, &tip_id, progress, ctx) < 0) {
			log_warnx("candidate %lld: no run of the tip: %s", id,
				  err_msg());
			err_clear();
			tip_id = 0;
		}
		tip_secs = now_monotonic() - tb;
		if ((ret = lock_builds(bc, &bs.cell, &lockfd)) < 0)
			goto out;
	}
	/* a test that only failed runs again alone before the verdict */
	if (!hung && retries_apply(bc->db, id) &&
	    (ret = retry_failing(bc, id, &bs, tip_id, &run, &hung, purpose,
				 progress, ctx)) < 0)
		goto out;
judge:;
	enum cand_verdict verdict = aggregate(bc->db, id, &why, hung);
	if (testset_hash(bc, id) < 0)
		err_clear();
	/* failures are measured against the tip: only regressions fail it */
	if (verdict != CV_PASS && !hung && tip_applies(bc, id)) {
		double tb = now_monotonic();
		int ahead = tip_id > 0 && tip_secs < 0;
		close(lockfd); /* the tip's run takes the lock itself */
		lockfd = -1;
		if (tip_secs >= 0) {
			/* run first, above: no second try */
		} else if (!tip_id &&
			   tip_run(bc, id, key, 1, &tip_id, progress, ctx) < 0) {
			log_warnx("candidate %lld: no run of the tip: %s", id,
				  err_msg());
			err_clear();
			tip_id = 0;
		} else if (ahead) {
			say(progress, ctx,
			    "candidate %lld: judged against the tip's run,"
			    " candidate %lld, made before it", id, tip_id);
		}
		char *d = tip_id ? xstrfmt("candidate %lld%s", tip_id,
					   ahead ? ", run before" : ", run now")
				 : xstrdup("none");
		candidate_phase_store(bc->db, id, bc->branch_id, purpose,
				      "baseline",
				      ahead ? 0
				      : tip_secs >= 0 ? tip_secs
						      : now_monotonic() - tb,
				      d);
		free(d);
		strbuf_reset(&why);
		struct testcase_counts tc;
		if ((ret = testcase_classify(bc->db, id, tip_id, &tc, &why)) <
		    0)
			goto out;
		verdict = tc.regressions ? CV_FAIL : CV_PASS;
	} else if (of_queue(bc->db, id)) {
		struct strbuf unused = STRBUF_INIT;
		ret = testcase_classify(bc->db, id, 0, NULL, &unused);
		strbuf_release(&unused);
		if (ret < 0)
			goto out;
	} else if (baseline && !hung) {
		if ((ret = record_known(bc, id, &why)) < 0)
			goto out;
	}
	/* the branch's other cells, each a child candidate (cell.h) */
	if (lockfd >= 0)
		close(lockfd);
	lockfd = -1;
	ret = cell_run_matrix(bc, cells, &verdict, &why);
	cells = NULL; /* freed by it */
	if (ret < 0)
		goto out;
	ret = finish(bc, id, verdict, why.len ? why.buf : NULL);
	/* which of the patches' lines ran: after the verdict, never
	 * changing it (gcov.h) */
	if (ret >= 0 && !strcmp(bc->cfg.coverage_boot, "yes") &&
	    cell_is_default(&bs.cell) &&
	    verdict != CV_HANG && of_queue_with(bc->db, id, 1)) {
		if (lockfd >= 0 || lock_builds(bc, &bs.cell, &lockfd) >= 0)
			gcov_boot(bc, r, id, commit, progress, ctx);
		err_clear(); /* a failure is the coverage boot's summary */
	}
out:
	if (ph.row)
		phase_end(bc, id, &ph, -1, "stopped", NULL, NULL);
	if (ret < 0) {
		/* could not run at all: say so on the row, never leave it pending */
		char *msg = xstrdup(err_msg());
		if (db_exec(bc->db,
			    "UPDATE candidates SET step = 'done', verdict ="
			    " NULL, detail = ?, finished_at ="
			    " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = "
			    "?",
			    "ti", msg, id) < 0)
			log_warnx("candidate %lld: cannot record the failure:"
				  " %s", id, err_msg());
		err_set(ret, "%s", msg);
		free(msg);
	}
	if (cells) {
		/* its own cell ended first: no verdict waits for the others */
		enum cand_verdict own = candidate_verdict_of(bc->db, id);
		char *keep = ret < 0 ? xstrdup(err_msg()) : NULL;
		char *stop = own != CV_NONE
				     ? xstrfmt("candidate %lld's own cell was"
					       " %s first",
					       id, candidate_verdict_name(own))
				     : xstrfmt("candidate %lld's own cell could"
					       " not run",
					       id);
		err_clear();
		cell_runs_end(bc, cells, stop);
		free(stop);
		if (keep)
			err_set(ret, "%s", keep);
		free(keep);
	}
	built_release(&bs);
	if (lockfd >= 0)
		close(lockfd);
	bc->cfg.tree_dir = branch_tree;
	free(cell_tree);
	json_decref(ids);
	strbuf_release(&why);
	repo_free(r);
	free(purpose);
	free(key);
	return ret < 0 ? ret : 0;
}

int candidate_pending_due(struct branch_ctx *bc, long long *id)
{
	return (*id = candidate_next_pending(bc->db, bc->branch_id)) > 0;
}

int candidate_queue_due(struct branch_ctx *bc, long long *id)
{
	char *queued;
	long long c;
	int ret;

	*id = 0;
	if (queue_count(bc->db, bc->branch_id, PS_QUEUED) <= 0 ||
	    !(queued = queue_queued_ids(bc->db, bc->branch_id)))
		return 0;
	/* no queue or confirm candidate of exactly these patches yet */
	ret = candidate_with_patches(bc->db, bc->branch_id, queued, 0, &c);
	free(queued);
	if (ret != ERR_NOTFOUND)
		return 0;
	err_clear();
	*id = 1;
	return 1;
}

int candidate_interrupted(struct branch_ctx *bc, long long id)
{
	int ret = db_exec(
		bc->db,
		"UPDATE candidates SET step = 'pending' WHERE id = ? AND"
		" verdict IS NULL",
		"i", id);

	if (ret >= 0)
		ret = (int)event_add(bc->db, bc->actor, "candidate", id,
				     "interrupted",
				     "stopped while it ran; it runs again");
	return ret < 0 ? ret : 0;
}

