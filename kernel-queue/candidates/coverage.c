/* coverage.c: build coverage's verdict: what each touched file and patch became, from the plan (coverage-plan.c) and the builds (coverage-build.c), stored; coverage_run() runs the three. */
#include "coverage.h"
#include "coverage-int.h"
#include "candidate.h"
#include "cell.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "queue.h"
#include "spawn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const cov_status_names[CS_COUNT] = {
	[CS_NONE] = "none",	      [CS_BOOTED] = "booted",
	[CS_COMPILED] = "compiled",   [CS_FAILED] = "failed",
	[CS_NOT_BUILT] = "not-built", [CS_NO_CODE] = "no-code",
};

enum cov_status cov_status_parse(const char *name)
{
	for (int i = CS_NONE + 1; name && i < CS_COUNT; i++)
		if (!strcmp(name, cov_status_names[i]))
			return (enum cov_status)i;
	return CS_NONE;
}

const char *const kind_names[] = { "c",	      "asm", "header",
				   "kconfig",  "makefile", "dts",
				   "other" };

void cov_say(struct cov *c, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (c->progress)
		c->progress(sb.buf, c->ctx);
	log_debug("candidate %lld: %s", c->id, sb.buf);
	strbuf_release(&sb);
}

int cov_ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), m = strlen(suffix);

	return l >= m && !strcmp(s + l - m, suffix);
}

void cov_entry_set(struct entry *e, enum cov_status status, const char *config,
		   const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	e->config = config;
	strbuf_reset(&e->detail);
	if (fmt) {
		va_start(ap, fmt);
		strbuf_vaddf(&e->detail, fmt, ap);
		va_end(ap);
	}
}

const char *cov_label(struct cov *c, int a, int clang)
{
	if (!clang)
		return karch_table[a].cov_config;
	if (!c->label[1][a])
		c->label[1][a] = xstrfmt("%s clang", karch_table[a].cov_config);
	return c->label[1][a];
}

void coverage_result_release(struct coverage_result *res)
{
	if (!res)
		return;
	free(res->error);
	free(res->summary);
	memset(res, 0, sizeof(*res));
}

/* ---- verdicts ---- */

void cov_judge(struct cov *c)
{
	for (size_t i = 0; i < c->ne; i++) {
		struct entry *e = &c->e[i];
		size_t ok = 0, failed = 0, notbuilt = 0;
		const char *label = cov_label(c, e->arch, e->clang);
		struct strbuf why = STRBUF_INIT;

		if (e->status)
			continue;
		if (e->clang && c->not_run[e->arch]) {
			/* never a pass: what kept clang from running */
			cov_entry_set(e, CS_NOT_BUILT, label,
				      "not run (clang): %s",
				      c->not_run[e->arch]);
			continue;
		}
		if (c->prepare_failed[e->clang][e->arch]) {
			cov_entry_set(e, CS_FAILED, label, "%s",
				  c->prepare_err[e->clang][e->arch]);
			continue;
		}
		for (size_t j = 0; j < e->nobjs; j++) {
			struct obj *o = cov_obj_find(c, e->arch, e->clang,
						     e->objs[j]);
			if (!o)
				continue;
			if (o->after == O_OK) {
				ok++;
				char *nw = cov_new_warnings(o->before_warn,
							o->after_warn, c->src);
				if (nw) {
					strbuf_addf(&e->warnings, "%s%s%s: %s",
						    e->warnings.len ? "\n" : "",
						    o->target,
						    e->clang ? " (clang)" : "",
						    nw);
					free(nw);
				}
			} else if (o->after == O_FAILED &&
				   o->before != O_FAILED) {
				if (!failed++)
					strbuf_addf(&why, "%s: %s", o->target,
						    o->after_err
							    ? o->after_err
							    : "failed");
			} else {
				notbuilt++;
				if (!why.len && !failed)
					strbuf_addf(
						&why, "%s: %s%s", o->target,
						o->after == O_FAILED
							? "does not compile"
							  " before the queue"
							  " either: "
							: "",
						o->after == O_FAILED
							? (o->before_err
								   ? o->before_err
								   : "?")
							: (o->after_err
								   ? o->after_err
								   : "not built"));
			}
		}
		if (failed)
			cov_entry_set(e, CS_FAILED, label, "%s", why.buf);
		else if (ok)
			cov_entry_set(e, CS_COMPILED, label, NULL);
		else if (e->config_step &&
			 !c->prepare_failed[e->clang][e->arch])
			cov_entry_set(e, CS_COMPILED, label, "the config step");
		else
			cov_entry_set(e, CS_NOT_BUILT, NULL, "%s",
				  why.len ? why.buf : "nothing builds it here");
		strbuf_release(&why);
	}
	/* a failure left to the clang cell says so on its row */
	for (size_t i = 0; i < c->ne; i++)
		if (c->e[i].status == CS_FAILED && !cov_fails(c, &c->e[i]))
			strbuf_addf(&c->e[i].detail, " (in the booted kernel:"
				    " the %s/clang cell's build decides)",
				    karch_table[c->e[i].arch].name);
}

int cov_fails(const struct cov *c, const struct entry *e)
{
	return e->status == CS_FAILED &&
	       !(e->booted && e->clang && c->clang_cell[e->arch]);
}

/* Per patch: failed > booted > compiled > not-built > no-code. */
static int store(struct cov *c, struct coverage_result *res)
{
	sqlite3 *db = c->bc->db;
	long long prev = -1;
	int patch_code = 0, patch_comp = 0, patch_boot = 0, patch_warn = 0;
	struct strbuf warn = STRBUF_INIT;
	int ret;

	if ((ret = db_begin(db)) < 0)
		return ret;
	if ((ret = db_exec(db, "DELETE FROM coverage WHERE candidate_id = ?",
			   "i", c->id)) < 0)
		goto fail;
	for (size_t i = 0; i <= c->ne; i++) {
		struct entry *e = i < c->ne ? &c->e[i] : NULL;
		if (!e || e->patch_id != prev) {
			if (prev > 0) {
				res->with_code += patch_code;
				res->compiled += patch_comp;
				res->booted += patch_boot;
				if (warn.len) {
					res->warned++;
					long long ev = event_add(
						db, "candidate", "patch", prev,
						"warnings",
						"candidate %lld: new compiler"
						" warnings",
						c->id);
					ret = ev < 0 ? (int)ev
						     : queue_verdict_add(db, prev,
								   "warnings",
								   "added",
								   warn.buf);
				} else if (patch_comp) {
					/* a patch that warned before and no
					 * longer does gets a 'none' */
					char *last = NULL;
					ret = queue_verdict_latest(db, prev, "warnings",
							     &last);
					if (ret == ERR_NOTFOUND)
						ret = 0;
					if (ret >= 0 && last &&
					    !strcmp(last, "added"))
						ret = queue_verdict_add(
							db, prev, "warnings",
							"none",
							"no new compiler"
							" warnings");
					free(last);
				}
				if (ret < 0)
					goto fail;
			}
			if (!e)
				break;
			prev = e->patch_id;
			patch_code = patch_comp = patch_boot = patch_warn = 0;
			strbuf_reset(&warn);
		}
		json_t *objs = json_array();
		for (size_t j = 0; j < e->nobjs; j++)
			json_array_append_new(objs, json_string(e->objs[j]));
		char *ot = json_dumps(objs, JSON_COMPACT);
		json_decref(objs);
		ret = db_exec(db,
			      "INSERT INTO coverage (candidate_id, patch_id, path,"
			      " kind, status, config, objects, detail, warnings,"
			      " compiler)"
			      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			      "iitttttt" "tt", c->id, e->patch_id, e->path,
			      kind_names[e->kind],
			      e->status ? cov_status_names[e->status] : NULL,
			      e->config, ot,
			      e->detail.len ? e->detail.buf : NULL,
			      e->warnings.len ? e->warnings.buf : NULL,
			      e->clang ? "clang" : "gcc");
		free(ot);
		if (ret < 0)
			goto fail;
		if (e->status != CS_NO_CODE)
			patch_code = 1;
		if (e->status == CS_BOOTED)
			patch_boot = patch_comp = 1;
		if (e->status == CS_COMPILED)
			patch_comp = 1;
		if (e->warnings.len && warn.len + e->warnings.len <
					       MAX_WARN_TEXT)
			strbuf_addf(&warn, "%s%s", warn.len ? "\n" : "",
				    e->warnings.buf);
	}
	{
		struct strbuf sum = STRBUF_INIT;
		strbuf_addf(&sum, "%d of %d patches compiled, %d in the booted"
			    " kernel",
			    res->compiled, res->with_code, res->booted);
		/* clang that could not run is said, never passed over */
		for (size_t a = 0; a < KARCH_N; a++)
			if (c->not_run[a])
				strbuf_addf(&sum, "; not run (clang): %s",
					    c->not_run[a]);
		res->summary = strbuf_detach(&sum, NULL);
	}
	ret = candidate_set_coverage(db, c->id, res->summary, c->log_path);
fail:
	strbuf_release(&warn);
	return db_end(db, ret < 0 ? ret : 0);
}

static int load_entries(struct cov *c)
{
	json_t *ids = candidate_patch_list(c->bc->db, c->id), *v;
	size_t i;

	if (!ids)
		return err_last() < 0 ? err_last() : ERR_IO;
	json_array_foreach(ids, i, v)
	{
		json_t *files = queue_patch_files_json(c->bc->db,
						       json_integer_value(v));
		json_t *f;
		size_t k;
		json_array_foreach(files, k, f)
		{
			if (!strcmp(queue_field(f, "change"), "D"))
				continue;
			if (c->ne == c->cap) {
				c->cap = c->cap ? 2 * c->cap : 32;
				c->e = xrealloc(c->e, c->cap * sizeof(*c->e));
			}
			c->e[c->ne++] = (struct entry){
				.patch_id = json_integer_value(v),
				.path = xstrdup(queue_field(f, "path")),
				.detail = STRBUF_INIT,
				.warnings = STRBUF_INIT,
			};
		}
		json_decref(files);
	}
	json_decref(ids);
	return 0;
}

void cov_release(struct cov *c)
{
	for (size_t i = 0; i < c->ne; i++) {
		struct entry *e = &c->e[i];
		free(e->path);
		strbuf_release(&e->detail);
		strbuf_release(&e->warnings);
		for (size_t j = 0; j < e->nobjs; j++)
			free(e->objs[j]);
		free(e->objs);
	}
	free(c->e);
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		free(o->target);
		free(o->before_warn);
		free(o->after_warn);
		free(o->before_err);
		free(o->after_err);
	}
	free(c->o);
	for (size_t a = 0; a < KARCH_N; a++) {
		for (int k = 0; k < 2; k++) {
			free(c->prepare_err[k][a]);
			free(c->label[k][a]);
		}
		free(c->not_run[a]);
	}
	free(c->src);
	free(c->log_path);
}

/* Clang coverage runs when the branch's compilers name clang (cell.h);
 * which arches have a clang cell. */
static int clang_wanted(struct cov *c)
{
	struct cell *cells = NULL;
	size_t n = 0;
	int ret = cell_matrix(&c->bc->cfg, &cells, &n);

	for (size_t i = 0; ret >= 0 && i < n; i++) {
		if (strcmp(cells[i].compiler, "clang"))
			continue;
		c->clang = 1;
		for (size_t a = 0; a < KARCH_N; a++)
			c->clang_cell[a] |= !strcmp(cells[i].arch,
						    karch_table[a].name);
	}
	free(cells);
	return ret < 0 ? ret : 0;
}

int coverage_run(struct branch_ctx *bc, struct repo *r, long long id,
		 const char *base, const char *commit,
		 struct coverage_result *res,
		 void (*progress)(const char *line, void *ctx), void *ctx)
{
	struct cov c = { .bc = bc, .r = r, .id = id, .base = base,
			 .commit = commit, .progress = progress, .ctx = ctx };
	double t0 = now_monotonic();
	int ret, on_base = 0;

	memset(res, 0, sizeof(*res));
	c.src = realpath(bc->cfg.tree_dir, NULL);
	if (!c.src) {
		ret = err_set(ERR_NOTFOUND, "%s: %s", bc->cfg.tree_dir,
			      strerror(errno));
		goto out;
	}
	c.log_path = xstrfmt("%s/log/coverage-%lld.log", bc->cfg.var_dir, id);
	unlink(c.log_path);
	c.deadline = now_monotonic() +
		     (bc->cfg.build_timeout > 0 ? bc->cfg.build_timeout : 3600);
	if ((ret = repo_tree_of(r, base, c.base_tree)) < 0 ||
	    (ret = repo_tree_of(r, commit, c.cand_tree)) < 0 ||
	    (ret = load_entries(&c)) < 0 ||
	    (ret = clang_wanted(&c)) < 0 ||
	    (ret = cov_plan(&c, bc->cfg.build_dir)) < 0)
		goto out;
	cov_plan_clang(&c);
	for (int clang = 0; clang <= c.clang; clang++)
		for (size_t a = 0; a < KARCH_N; a++)
			if ((ret = cov_build_arch(&c, (int)a, clang,
						  &on_base)) < 0)
				goto out;
	cov_judge(&c);
	for (size_t i = 0; i < c.ne; i++)
		if (c.e[i].status == CS_FAILED && !cov_fails(&c, &c.e[i]))
			cov_say(&c, "coverage: patch %lld (clang): %s",
				c.e[i].patch_id, c.e[i].detail.buf);
	for (size_t i = 0; i < c.ne && !res->failed; i++)
		if (cov_fails(&c, &c.e[i])) {
			res->failed = 1;
			res->error = xstrfmt("patch %lld%s: %s",
					     c.e[i].patch_id,
					     c.e[i].clang ? " (clang)" : "",
					     c.e[i].detail.buf);
		}
	ret = store(&c, res);
	if (ret >= 0)
		cov_say(&c, "coverage: %s%s%s (%.1f s)", res->summary,
		    res->failed ? "; BUILD FAILED: " : "",
		    res->failed ? res->error : "", now_monotonic() - t0);
out:
	if (on_base && repo_checkout(r, commit) < 0 && ret >= 0)
		ret = ERR_IO;
	cov_release(&c);
	return ret < 0 ? ret : 0;
}

/* ---- reading it back ---- */
