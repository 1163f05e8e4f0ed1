/* cell.c: a candidate's matrix of (arch, compiler) cells: the children that run them and the verdict over them. */
#include "cell.h"
#include "db.h"
#include "err.h"
#include "karch.h"
#include "kbuild.h"
#include "log.h"
#include "strbuf.h"
#include "repo.h"
#include "spawn.h"
#include "strvec.h"
#include "testcase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The compilers a cell may use (config: compilers). */
static const char *const compilers[] = { "gcc", "clang" };

static const char *compiler_find(const char *name)
{
	for (size_t i = 0; i < sizeof(compilers) / sizeof(*compilers); i++)
		if (name && !strcmp(name, compilers[i]))
			return compilers[i];
	return NULL;
}

/* The words of a key's value, each looked up by find (static names). */
static int words(const char *key, const char *val,
		 const char *(*find)(const char *), const char ***out,
		 size_t *n)
{
	char *dup = xstrdup(val ? val : ""), *save = NULL;

	*out = NULL;
	*n = 0;
	for (char *w = strtok_r(dup, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save)) {
		const char *name = find(w);
		if (!name) {
			free(dup);
			free(*out);
			*out = NULL;
			return err_set(ERR_INVALID, "%s: '%s' is not one of %s",
				       key, w,
				       find == compiler_find
					       ? "gcc clang"
					       : karch_boot_names());
		}
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = name;
	}
	free(dup);
	return 0;
}

/* The name of the row that boots named name (NULL or "": x86_64), or NULL. */
static const char *arch_find(const char *name)
{
	const struct karch *g = karch_boot_find(name);

	err_clear();
	return g ? g->name : NULL;
}

int cell_matrix(const struct config *c, struct cell **cells, size_t *n)
{
	const char **a = NULL, **cc = NULL;
	size_t na = 0, ncc = 0;
	int ret;

	*cells = NULL;
	*n = 0;
	if ((ret = words("arches", c->arches, arch_find, &a, &na)) < 0 ||
	    (ret = words("compilers", c->compilers, compiler_find, &cc,
			 &ncc)) < 0)
		goto out;
	if (!na || !ncc) {
		ret = err_set(ERR_INVALID, "arches and compilers must name at"
					   " least one each");
		goto out;
	}
	*cells = xcalloc(na * ncc, sizeof(**cells));
	for (size_t i = 0; i < na; i++)
		for (size_t k = 0; k < ncc; k++) {
			(*cells)[*n].arch = a[i];
			(*cells)[(*n)++].compiler = cc[k];
		}
out:
	free(a);
	free(cc);
	return ret;
}

int cell_first(const struct config *c, struct cell *first)
{
	struct cell *cells = NULL;
	size_t n = 0;
	int ret = cell_matrix(c, &cells, &n);

	if (ret >= 0)
		*first = cells[0];
	free(cells);
	return ret < 0 ? ret : 0;
}

int cell_is_default(const struct cell *c)
{
	return !strcmp(c->arch, "x86_64") && !strcmp(c->compiler, "gcc");
}

char *cell_name(const struct cell *c)
{
	return xstrfmt("%s/%s", c->arch, c->compiler);
}

/* The stored names, as the table's static ones; x86_64/gcc for NULL. */
static int cell_from(const char *arch, const char *compiler, struct cell *c)
{
	c->arch = arch_find(arch);
	c->compiler = compiler_find(compiler && *compiler ? compiler : "gcc");
	if (!c->arch || !c->compiler)
		return err_set(ERR_INVALID, "unknown cell %s/%s",
			       arch ? arch : "?", compiler ? compiler : "?");
	return 0;
}

int cell_of_row(sqlite3 *db, long long id, struct cell *c)
{
	char *arch = db_text(db, "SELECT arch FROM candidates WHERE id = ?",
			     "i", id);
	char *compiler = db_text(db,
				 "SELECT compiler FROM candidates WHERE id = ?",
				 "i", id);
	int ret;

	err_clear();
	ret = cell_from(arch, compiler, c);
	free(arch);
	free(compiler);
	return ret;
}

int cell_get(struct branch_ctx *bc, long long id, struct cell *c)
{
	long long stored = 0;
	int ret;

	if ((ret = db_query_int(bc->db, &stored,
				"SELECT arch IS NOT NULL FROM candidates WHERE"
				" id = ?",
				"i", id)) < 0)
		return ret;
	if (stored)
		return cell_of_row(bc->db, id, c);
	if ((ret = cell_first(&bc->cfg, c)) < 0)
		return ret;
	ret = db_exec(bc->db,
		      "UPDATE candidates SET arch = ?, compiler = ? WHERE id = ?",
		      "tti", c->arch, c->compiler, id);
	return ret < 0 ? ret : 0;
}

int cell_copy(sqlite3 *db, long long from, long long to)
{
	int ret = db_exec(db,
			  "UPDATE candidates SET (arch, compiler) = (SELECT"
			  " arch, compiler FROM candidates WHERE id = ?)"
			  " WHERE id = ?",
			  "ii", from, to);

	return ret < 0 ? ret : 0;
}

char *cell_path(const char *base, const struct cell *c)
{
	size_t n = strlen(base);

	if (cell_is_default(c))
		return xstrdup(base);
	while (n > 1 && base[n - 1] == '/')
		n--;
	return xstrfmt("%.*s-%s-%s", (int)n, base, c->arch, c->compiler);
}

char *cell_build_dir(const struct branch_ctx *bc, const struct cell *c)
{
	return cell_path(bc->cfg.build_dir, c);
}

char *cell_fragments(const char *fragments, const struct cell *c)
{
	if (!strcmp(c->arch, "x86_64"))
		return xstrdup(fragments);
	return xstrfmt("%s/%s", fragments, c->arch);
}

int cell_compiler_id(const struct cell *c, char **out)
{
	return kbuild_compiler_id(c->arch, c->compiler, out);
}

/* One line of progress (line: owned, freed here) and the log's. */
static void tell(void (*progress)(const char *, void *), void *ctx,
		 char *line)
{
	if (progress)
		progress(line, ctx);
	log_info("%s", line);
	free(line);
}

/* How a cell is named against the first: "clang", "arm64", "arm64/clang". */
static char *cell_label(const struct cell *first, const struct cell *c)
{
	int arch = strcmp(first->arch, c->arch) != 0;
	int cc = strcmp(first->compiler, c->compiler) != 0;

	if (arch && !cc)
		return xstrdup(c->arch);
	if (cc && !arch)
		return xstrdup(c->compiler);
	return cell_name(c);
}

/* c is the branch's first cell: the candidate's own, in the tree itself. */
static int is_first(const struct config *cfg, const struct cell *c)
{
	struct cell first;

	if (cell_first(cfg, &first) < 0) {
		err_clear();
		first.arch = "x86_64";
		first.compiler = "gcc";
	}
	return !strcmp(first.arch, c->arch) &&
	       !strcmp(first.compiler, c->compiler);
}

int cell_tree_ready(const struct branch_ctx *bc, const struct cell *c,
		    char **dir)
{
	const char *tree = bc->cfg.branches[bc->cfg.selected].tree_dir;
	size_t n = strlen(tree);
	char *name;
	int ret;

	if (is_first(&bc->cfg, c)) {
		*dir = xstrdup(tree);
		return 0;
	}
	while (n > 1 && tree[n - 1] == '/')
		n--;
	*dir = xstrfmt("%.*s-%s-%s", (int)n, tree, c->arch, c->compiler);
	name = xstrfmt("stableq-cell-%s-%s", c->arch, c->compiler);
	ret = repo_worktree_ensure(tree, *dir, name);
	free(name);
	if (ret < 0) {
		err_prefix(ret, "the %s/%s cell's worktree", c->arch,
			   c->compiler);
		free(*dir);
		*dir = NULL;
	}
	return ret;
}

/* One other cell of a candidate: its child candidate, and the process running it. */
struct cell_job {
	struct cell cell;
	long long child;
	struct strvec argv;
	struct spawn sp;
	char *log;
	int state; /* JOB_WAITING, JOB_RUNNING, JOB_ENDED */
};

enum { JOB_WAITING, JOB_RUNNING, JOB_ENDED };

struct cell_runs {
	long long id;
	struct cell first;
	struct cell_job *jobs;
	size_t n;
	int slots; /* cells at once, the candidate's own among them */
	void (*progress)(const char *line, void *ctx);
	void *ctx;
};

static int cell_slots(const struct config *c)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (c->cell_jobs > 0)
		return c->cell_jobs;
	return cpus > 1 ? (int)cpus : 1;
}

static int running(const struct cell_runs *cr)
{
	int n = 0;

	for (size_t i = 0; i < cr->n; i++)
		n += cr->jobs[i].state == JOB_RUNNING;
	return n;
}

/* A child that ran to no verdict: done, and why it was not run. */
static void not_run(sqlite3 *db, long long child, const char *why)
{
	if (db_exec(db,
		    "UPDATE candidates SET step = 'done', not_run = ?,"
		    " finished_at = COALESCE(finished_at,"
		    " strftime('%Y-%m-%dT%H:%M:%SZ','now')) WHERE id = ? AND"
		    " verdict IS NULL",
		    "ti", why, child) < 0) {
		log_warnx("candidate %lld: cannot record why its cell did not"
			  " run: %s", child, err_msg());
		err_clear();
	}
}

/* The cell's process: `stableq candidate --run CHILD`, its output in a log. */
static void job_start(struct branch_ctx *bc, struct cell_runs *cr,
		      struct cell_job *j)
{
	struct spawn init = SPAWN_INIT;
	char *name = cell_name(&j->cell), *why;

	j->state = JOB_ENDED;
	j->log = xstrfmt("%s/log/cell-%lld.log", bc->cfg.var_dir, j->child);
	j->sp = init;
	if (!bc->self) {
		err_set(ERR_INVALID, "no stableq binary to run the cell with");
		goto fail;
	}
	strvec_push(&j->argv, bc->self);
	if (bc->cfg.path)
		strvec_pushl(&j->argv, "-c", bc->cfg.path, NULL);
	strvec_pushl(&j->argv, "--db", bc->cfg.db, "--branch",
		     bc->cfg.branch_key, "candidate", "--run", NULL);
	strvec_pushf(&j->argv, "%lld", j->child);
	j->sp.argv = j->argv.v;
	j->sp.log_path = j->log;
	j->sp.die_with_parent = 1; /* never a cell with no one to wait for it */
	if (spawn_start(&j->sp) < 0)
		goto fail;
	j->state = JOB_RUNNING;
	tell(cr->progress, cr->ctx,
	     xstrfmt("candidate %lld: cell %s: candidate %lld runs (pid %ld,"
		     " log %s)",
		     cr->id, name, j->child, (long)j->sp.pid, j->log));
	free(name);
	return;
fail:
	why = xstrfmt("could not start: %s", err_msg());
	err_clear();
	tell(cr->progress, cr->ctx,
	     xstrfmt("candidate %lld: cell %s not run: %s", cr->id, name, why));
	not_run(bc->db, j->child, why);
	free(why);
	free(name);
}

/* The cell's process ended: its verdict, or why there is none. */
static void job_ended(struct branch_ctx *bc, struct cell_runs *cr,
		      struct cell_job *j)
{
	enum cand_verdict cv = candidate_verdict_of(bc->db, j->child);
	char *name = cell_name(&j->cell);

	err_clear();
	j->state = JOB_ENDED;
	if (cv == CV_NONE) {
		/* it could not run: say why, never a verdict */
		char *detail = db_text(bc->db,
				       "SELECT detail FROM candidates WHERE"
				       " id = ?",
				       "i", j->child);
		char *why = detail && *detail
				    ? xstrdup(detail)
				    : xstrfmt("its process ended with status %d"
					      " and no verdict (log %s)",
					      j->sp.status, j->log);
		err_clear();
		tell(cr->progress, cr->ctx,
		     xstrfmt("candidate %lld: cell %s not run: %s", cr->id,
			     name, why));
		not_run(bc->db, j->child, why);
		free(detail);
		free(why);
	} else {
		tell(cr->progress, cr->ctx,
		     xstrfmt("candidate %lld: cell %s: candidate %lld: %s in"
			     " %.1f s",
			     cr->id, name, j->child,
			     candidate_verdict_name(cv), j->sp.seconds));
	}
	free(name);
}

/* Starts waiting cells while fewer than max run. */
static void fill(struct branch_ctx *bc, struct cell_runs *cr, int max)
{
	for (size_t i = 0; i < cr->n && running(cr) < max; i++)
		if (cr->jobs[i].state == JOB_WAITING)
			job_start(bc, cr, &cr->jobs[i]);
}

int cell_runs_start(struct branch_ctx *bc, long long id,
		    struct cell_runs **out,
		    void (*progress)(const char *line, void *ctx), void *ctx)
{
	struct cell *cells = NULL;
	struct cell_runs *cr = NULL;
	long long parent = 0, *ids = NULL;
	size_t n = 0, nids = 0;
	char *purpose = NULL;
	int ret;

	*out = NULL;
	if ((ret = db_query_int(bc->db, &parent,
				"SELECT COALESCE(cell_of, 0) FROM candidates"
				" WHERE id = ?",
				"i", id)) < 0)
		return ret;
	purpose = db_text(bc->db, "SELECT purpose FROM candidates WHERE id = ?",
			  "i", id);
	if (parent || !purpose ||
	    (strcmp(purpose, "queue") && strcmp(purpose, "confirm"))) {
		err_clear();
		free(purpose);
		return 0;
	}
	if ((ret = cell_matrix(&bc->cfg, &cells, &n)) < 0 || n < 2)
		goto out;
	cr = xcalloc(1, sizeof(*cr));
	cr->id = id;
	cr->progress = progress;
	cr->ctx = ctx;
	cr->slots = cell_slots(&bc->cfg);
	cr->jobs = xcalloc(n - 1, sizeof(*cr->jobs));
	if ((ret = cell_get(bc, id, &cr->first)) < 0 ||
	    (ret = candidate_patch_ids(bc->db, id, &ids, &nids)) < 0)
		goto out;
	/* every cell's child now (the matrix shows them), of the same patches */
	for (size_t i = 1; i < n; i++) {
		struct cell_job *j = &cr->jobs[cr->n];
		long long child = candidate_create_on(bc->db, bc->branch_id,
						      ids, nids, 0, purpose, 0,
						      bc->actor);
		if (child < 0) {
			ret = (int)child;
			goto out;
		}
		struct spawn init = SPAWN_INIT;
		j->cell = cells[i];
		j->child = child;
		j->sp = init;
		strvec_init(&j->argv);
		cr->n++;
		if ((ret = db_exec(bc->db,
				   "UPDATE candidates SET arch = ?, compiler = ?,"
				   " cell_of = ? WHERE id = ?",
				   "ttii", cells[i].arch, cells[i].compiler, id,
				   child)) < 0)
			goto out;
	}
	tell(progress, ctx,
	     xstrfmt("candidate %lld: %zu cells, %d at once (cell_jobs)", id,
		     n, cr->slots < (int)n ? cr->slots : (int)n));
	/* beside the candidate's own cell, which takes a slot */
	fill(bc, cr, cr->slots - 1);
	*out = cr;
	cr = NULL;
	ret = 0;
out:
	if (cr)
		cell_runs_end(bc, cr, "the matrix could not start");
	free(cells);
	free(ids);
	free(purpose);
	return ret;
}

int cell_run_matrix(struct branch_ctx *bc, struct cell_runs *cr,
		    enum cand_verdict *verdict, struct strbuf *why)
{
	if (!cr)
		return 0;
	/* the candidate's own cell is done: every slot is the others' */
	for (;;) {
		fill(bc, cr, cr->slots);
		if (!running(cr))
			break;
		int ended = 0;
		for (size_t i = 0; i < cr->n; i++) {
			struct cell_job *j = &cr->jobs[i];
			if (j->state != JOB_RUNNING)
				continue;
			int r = spawn_poll(&j->sp, 0);
			if (r < 0) {
				log_warnx("candidate %lld: %s", j->child,
					  err_msg());
				err_clear();
				spawn_kill(&j->sp, 5000);
				spawn_poll(&j->sp, 1);
				r = 1;
			}
			if (r == 1) {
				job_ended(bc, cr, j);
				ended = 1;
			}
		}
		if (!ended)
			usleep(200 * 1000);
	}
	/* the first failing cell, in matrix order, fails the candidate */
	for (size_t i = 0; i < cr->n && *verdict == CV_PASS; i++) {
		const struct cell_job *j = &cr->jobs[i];
		enum cand_verdict cv = candidate_verdict_of(bc->db, j->child);
		err_clear();
		if (cv == CV_NONE || cv == CV_PASS)
			continue;
		char *label = cell_label(&cr->first, &j->cell);
		char *detail = db_text(bc->db,
				       "SELECT detail FROM candidates WHERE"
				       " id = ?",
				       "i", j->child);
		err_clear();
		*verdict = cv;
		strbuf_reset(why);
		strbuf_addf(why, "%s (%s): candidate %lld%s%s",
			    candidate_verdict_name(cv), label, j->child,
			    detail ? ": " : "", detail ? detail : "");
		free(label);
		free(detail);
	}
	cell_runs_end(bc, cr, NULL); /* every cell has ended */
	return 0;
}

void cell_runs_end(struct branch_ctx *bc, struct cell_runs *cr,
		   const char *why)
{
	if (!cr)
		return;
	for (size_t i = 0; i < cr->n; i++) {
		struct cell_job *j = &cr->jobs[i];
		if (j->state == JOB_RUNNING) {
			spawn_kill(&j->sp, 5000);
			spawn_poll(&j->sp, 1);
			err_clear();
		}
		if (j->state != JOB_ENDED && why) {
			char *name = cell_name(&j->cell);
			tell(cr->progress, cr->ctx,
			     xstrfmt("candidate %lld: cell %s not run: %s",
				     cr->id, name, why));
			free(name);
			not_run(bc->db, j->child, why);
		}
		spawn_release(&j->sp);
		strvec_clear(&j->argv);
		free(j->log);
	}
	free(cr->jobs);
	free(cr);
}

long long cell_failing(sqlite3 *db, long long id)
{
	char *detail = db_text(db, "SELECT detail FROM candidates WHERE id = ?",
			       "i", id);
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT id, verdict FROM candidates"
				      " WHERE cell_of = ? AND verdict IS NOT"
				      " NULL AND verdict != 'pass' ORDER BY id",
				      "i", id);
	long long found = id;
	struct cell first;

	if (cell_of_row(db, id, &first) < 0)
		first = (struct cell){ "x86_64", "gcc" };
	while (detail && st && found == id && sqlite3_step(st) == SQLITE_ROW) {
		struct cell c;
		long long child = sqlite3_column_int64(st, 0);
		if (cell_of_row(db, child, &c) < 0)
			continue;
		char *label = cell_label(&first, &c);
		char *head = xstrfmt("%s (%s): candidate %lld",
				     db_col_text(st, 1), label, child);
		if (!strncmp(detail, head, strlen(head)))
			found = child;
		free(label);
		free(head);
	}
	sqlite3_finalize(st);
	free(detail);
	err_clear();
	return found;
}

/*
 * One row of the matrix: a child's, or the candidate's own cell (parent:
 * its verdict and detail its own cell's, pass when a child's failure is
 * the candidate's verdict).
 */
static json_t *cell_row(sqlite3 *db, long long cid, int parent)
{
	json_t *o = db_row_json(db,
				"SELECT id AS candidate, COALESCE(arch,"
				" 'x86_64') AS arch, COALESCE(compiler, 'gcc')"
				" AS compiler, verdict, detail, not_run FROM"
				" candidates WHERE id = ?",
				"i", cid);

	err_clear();
	if (o)
		json_object_set_new(o, "tests",
				    json_integer(testcase_count(db, cid)));
	if (o && parent && cell_failing(db, cid) != cid) {
		json_object_set_new(o, "verdict", json_string("pass"));
		json_object_set_new(o, "detail", json_null());
	}
	return o;
}

/* Failing cells first (a verdict other than pass), then not run, then pass. */
static int rank(json_t *row)
{
	const char *v = json_string_value(json_object_get(row, "verdict"));

	if (v && strcmp(v, "pass"))
		return 0;
	return v ? 2 : 1;
}

json_t *cell_list_json(sqlite3 *db, long long id)
{
	json_t *rows = json_array(), *ids, *v, *out;
	size_t i;

	ids = db_rows_json(db,
			   "SELECT id FROM candidates WHERE cell_of = ? ORDER BY"
			   " id",
			   "i", id);
	err_clear();
	if (!json_array_size(ids)) {
		json_decref(ids);
		return rows;
	}
	json_array_append_new(rows, cell_row(db, id, 1));
	json_array_foreach(ids, i, v)
	{
		json_t *row = cell_row(db,
				       json_integer_value(
					       json_object_get(v, "id")),
				       0);
		if (row)
			json_array_append_new(rows, row);
	}
	json_decref(ids);
	out = json_array();
	for (int r = 0; r <= 2; r++)
		json_array_foreach(rows, i, v) if (json_is_object(v) &&
						   rank(v) == r)
			json_array_append(out, v);
	json_decref(rows);
	return out;
}

char *cell_line(sqlite3 *db, long long id)
{
	json_t *rows = db_rows_json(db,
				    "SELECT id FROM candidates WHERE cell_of = ?"
				    " ORDER BY id",
				    "i", id),
	       *v;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	err_clear();
	if (!json_array_size(rows)) {
		json_decref(rows);
		return NULL;
	}
	json_array_insert_new(rows, 0, json_pack("{s:I}", "id", (json_int_t)id));
	json_array_foreach(rows, i, v)
	{
		long long cid = json_integer_value(json_object_get(v, "id"));
		json_t *r = cell_row(db, cid, i == 0);
		const char *verdict, *not_run;
		long long tests;
		if (!r)
			continue;
		verdict = json_string_value(json_object_get(r, "verdict"));
		not_run = json_string_value(json_object_get(r, "not_run"));
		tests = json_integer_value(json_object_get(r, "tests"));
		strbuf_addf(&sb, "%s%s/%s ", i ? ", " : "",
			    json_string_value(json_object_get(r, "arch")),
			    json_string_value(json_object_get(r, "compiler")));
		if (not_run || !verdict)
			strbuf_addstr(&sb, "not run");
		else if (strcmp(verdict, "pass") || !tests)
			strbuf_addstr(&sb, verdict);
		else {
			char *t = testcase_thousands(tests);
			strbuf_addf(&sb, "%s%s", t, i ? "" : " tests");
			free(t);
		}
		json_decref(r);
	}
	json_decref(rows);
	return strbuf_detach(&sb, NULL);
}
