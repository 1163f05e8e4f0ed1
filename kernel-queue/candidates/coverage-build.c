/* coverage-build.c: build coverage's builds: a broad config per architecture, object by object, before the queue and with it, and the warnings the queue adds. */
#include "coverage.h"
#include "coverage-int.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "kbuild.h"
#include "sandbox.h"
#include "spawn.h"
#include "log.h"
#include "strvec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const ostate_names[] = { "unknown", "ok", "failed",
					    "not-built" };

/* ---- the broad builds ---- */

static char *arch_dir(struct cov *c, int a, int clang)
{
	return xstrfmt("%s/%s%s", c->bc->cfg.coverage_build_dir,
		       karch_table[a].make_arch, clang ? "-clang" : "");
}

/* The configuration key: label and a hash of the fragment. */
static char *config_key(struct cov *c, int a, int clang)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned long h = 5381;

	if (strbuf_read_file(&sb, c->bc->cfg.coverage_config, 1u << 20) < 0)
		err_clear();
	for (size_t i = 0; i < sb.len; i++)
		h = h * 33 + (unsigned char)sb.buf[i];
	strbuf_release(&sb);
	return xstrfmt("%s %08lx", cov_label(c, a, clang), h & 0xffffffffUL);
}

static const char wrapper_fmt[] =
	"#!/bin/sh\n"
	"# written by stableq (build coverage): the compiler, keeping each\n"
	"# object's diagnostics in OBJ.diag\n"
	"out=; prev=\n"
	"for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\n"
	"case $out in\n"
	"*.o)\n"
	"\t%s \"$@\" 2> \"$out.diag\"; rc=$?\n"
	"\tcat \"$out.diag\" >&2; exit $rc ;;\n"
	"esac\n"
	"exec %s \"$@\"\n";

struct mk {
	struct kbuild_opts ko;
	struct sandbox sb; /* ko.sandbox */
	char *dir, *odir, *arch, *cross, *cc, *jobs;
	char *nm; /* NM=...gcc-nm, or NULL (kbuild_nm_var()) */
	int clang;
	struct strvec xargs; /* clang's: kbuild_cell_vars() (LLVM=1, ARCH=) */
	const char *label;   /* cov_label() */
};

static void mk_release(struct mk *m)
{
	free(m->dir);
	free(m->odir);
	free(m->arch);
	free(m->cross);
	free(m->cc);
	free(m->jobs);
	free(m->nm);
	strvec_clear(&m->xargs);
	sandbox_release(&m->sb);
}

/*
 * The make of arch a's broad build. With clang, kbuild_cell_vars() says
 * what LLVM=1 needs and whether it can run here (ERR_NOTFOUND: the tools
 * missing or clang older than the tree's minimum).
 */
static int mk_init(struct cov *c, int a, int clang, struct mk *m)
{
	char *wrapper, *text, *real, *cc = NULL;
	long nj;
	int ret;

	memset(m, 0, sizeof(*m));
	m->xargs = (struct strvec)STRVEC_INIT;
	m->clang = clang;
	m->label = cov_label(c, a, clang);
	if (clang) {
		struct kbuild_opts ko = { .src_dir = c->src,
					  .arch = karch_table[a].name,
					  .compiler = "clang" };
		if ((ret = kbuild_cell_vars(&ko, &m->xargs, &cc)) < 0)
			return ret;
	}
	nj = c->bc->cfg.make_jobs > 0 ? c->bc->cfg.make_jobs
				      : sysconf(_SC_NPROCESSORS_ONLN);
	m->dir = arch_dir(c, a, clang);
	if ((ret = mkdir_p(m->dir)) < 0) {
		free(cc);
		return ret;
	}
	char *abs = realpath(m->dir, NULL);
	if (!abs) {
		free(cc);
		return err_set(ERR_IO, "%s: %s", m->dir, strerror(errno));
	}
	free(m->dir);
	m->dir = abs;
	wrapper = xstrfmt("%s/stableq-cc", m->dir);
	/* kbuild's "CC=ccache clang" */
	real = cc ? xstrdup(cc + 3) : xstrfmt("ccache %sgcc", karch_table[a].cross);
	free(cc);
	text = xstrfmt(wrapper_fmt, real, real);
	ret = write_file_atomic(wrapper, text, strlen(text));
	if (ret >= 0 && chmod(wrapper, 0755) < 0)
		ret = err_set(ERR_IO, "%s: %s", wrapper, strerror(errno));
	free(text);
	free(real);
	m->odir = xstrfmt("O=%s", m->dir);
	m->arch = xstrfmt("ARCH=%s", karch_table[a].make_arch);
	m->cross = xstrfmt("CROSS_COMPILE=%s", karch_table[a].cross);
	m->cc = xstrfmt("CC=%s", wrapper);
	m->nm = clang ? NULL : kbuild_nm_var(karch_table[a].cross);
	m->jobs = xstrfmt("-j%ld", nj > 0 ? nj : 1);
	free(wrapper);
	m->ko = (struct kbuild_opts){
		.src_dir = c->src,
		.build_dir = m->dir,
		.ccache_dir = c->bc->cfg.ccache_dir,
		.icecc = c->bc->cfg.icecc,
		.log_path = c->log_path,
		.sandbox = &m->sb,
	};
	if (ret >= 0)
		ret = sandbox_from_config(&m->sb, &c->bc->cfg);
	return ret < 0 ? ret : 0;
}

/* Where make writes a target: objects under O=, a .dtb under its dts tree. */
static char *out_path(const struct mk *m, const struct obj *o)
{
	if (cov_ends_with(o->target, ".dtb"))
		return xstrfmt("%s/arch/%s/boot/dts/%s", m->dir,
			       karch_table[o->arch].srcarch, o->target);
	return xstrfmt("%s/%s", m->dir, o->target);
}

/* make [-k] TARGET...: 0 ok, 1 failed, negative could not run */
static int mk_run(struct cov *c, struct mk *m, const char *const *targets,
		  size_t n, int keep_going)
{
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	int to, ret;

	if (m->clang)
		strvec_pushl(&argv, "make", m->odir, NULL);
	else
		strvec_pushl(&argv, "make", m->odir, m->arch, m->cross, NULL);
	strvec_pushv(&argv, (const char *const *)m->xargs.v);
	strvec_pushl(&argv, m->cc, m->jobs, NULL);
	if (m->nm)
		strvec_push(&argv, m->nm);
	if (keep_going)
		strvec_push(&argv, "-k");
	for (size_t i = 0; i < n; i++)
		strvec_push(&argv, targets[i]);
	if (n == 1 && !strcmp(targets[0], "allmodconfig")) {
		char *frag = realpath(c->bc->cfg.coverage_config, NULL);
		if (frag)
			strvec_pushf(&env, "KCONFIG_ALLCONFIG=%s", frag);
		free(frag);
	}
	ret = kbuild_make(&m->ko, argv.v, env.v, c->deadline, &to);
	strvec_clear(&argv);
	strvec_clear(&env);
	return ret;
}

/* allmodconfig when the directory has no .config or the fragment changed */
static int configure(struct cov *c, struct mk *m, const char *key)
{
	char *dot = xstrfmt("%s/.config", m->dir);
	char *stamp = xstrfmt("%s/.stableq-coverage-config", m->dir);
	struct strbuf old = STRBUF_INIT;
	const char *t[] = { "allmodconfig" };
	int ret = 0;

	if (access(dot, F_OK) == 0 && strbuf_read_file(&old, stamp, 256) == 0) {
		strbuf_trim(&old);
		if (!strcmp(old.buf, key))
			goto out;
	}
	err_clear();
	unlink(stamp);
	cov_say(c, "coverage: make allmodconfig (%s) in %s", m->label, m->dir);
	if ((ret = mk_run(c, m, t, 1, 0)) != 0) {
		if (ret > 0)
			ret = err_set(ERR_IO,
				      "coverage: make allmodconfig failed in %s"
				      " (see %s)",
				      m->dir, c->log_path);
		goto out;
	}
	{
		char *line = xstrfmt("%s\n", key);
		ret = write_file_atomic(stamp, line, strlen(line));
		free(line);
	}
out:
	strbuf_release(&old);
	free(dot);
	free(stamp);
	return ret;
}

/*
 * The compiler names sources as ccache hands them over: relative to the
 * build directory ("../../linux/drivers/x.c", CCACHE_BASEDIR) or absolute.
 * Both become "drivers/x.c", as in the tree. Caller frees.
 */
static char *tree_paths(const char *text, const char *src, const char *build)
{
	struct strbuf rel = STRBUF_INIT, out = STRBUF_INIT;
	size_t i = 0, last = 0;
	char *abs = xstrfmt("%s/", src);

	/* "../" for each component of build below the common parent, then
	 * src below it */
	while (src[i] && src[i] == build[i]) {
		if (src[i] == '/')
			last = i;
		i++;
	}
	if (!src[i] && build[i] == '/')
		last = i;
	for (const char *p = build + last; *p; p++)
		if (*p == '/')
			strbuf_addstr(&rel, "../");
	strbuf_addf(&rel, "%s/", src[last] ? src + last + 1 : "");
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, abs, strlen(abs)))
			p += strlen(abs);
		else if (rel.len > 1 && !strncmp(p, rel.buf, rel.len))
			p += rel.len;
		else
			strbuf_addch(&out, *p++);
	}
	strbuf_release(&rel);
	free(abs);
	return strbuf_detach(&out, NULL);
}

/* The lines of a diagnostics text that say "warning:", made comparable. */
static char *warning_lines(const char *diag)
{
	struct strbuf out = STRBUF_INIT;

	for (const char *p = diag; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (memmem(p, l, "warning:", 8)) {
			strbuf_add(&out, p, l);
			strbuf_addch(&out, '\n');
		}
		p = nl ? nl + 1 : NULL;
	}
	return strbuf_detach(&out, NULL);
}

/*
 * "../linux/drivers/x.c:12:5: warning: msg [-Wflag]" -> "drivers/x.c:
 * warning: msg [-Wflag]": without the build's path prefix and the line
 * and column, which move when any patch adds a line above.
 */
static char *warning_key(const char *line, size_t l, const char *src)
{
	struct strbuf sb = STRBUF_INIT;
	const char *w = memmem(line, l, ": warning:", 10);
	const char *file_end = w;
	size_t sl = strlen(src);

	if (!w)
		return xstrndup(line, l);
	/* back over ":12:5" */
	for (int k = 0; k < 2; k++) {
		const char *q = file_end;
		while (q > line && q[-1] >= '0' && q[-1] <= '9')
			q--;
		if (q > line && q < file_end && q[-1] == ':')
			file_end = q - 1;
	}
	if ((size_t)(file_end - line) > sl && !strncmp(line, src, sl) &&
	    line[sl] == '/')
		line += sl + 1;
	while (file_end - line > 3 && !strncmp(line, "../", 3))
		line += 3;
	strbuf_add(&sb, line, (size_t)(file_end - line));
	strbuf_add(&sb, w, l - (size_t)(w - line));
	return strbuf_detach(&sb, NULL);
}

/* Warnings of after that before lacks (by warning_key), or NULL. */
char *cov_new_warnings(const char *before, const char *after,
			  const char *src)
{
	struct strbuf out = STRBUF_INIT;

	for (const char *p = after; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char *k = warning_key(p, l, src);
		int seen = 0;
		for (const char *q = before; q && *q && !seen;) {
			const char *nq = strchr(q, '\n');
			size_t ql = nq ? (size_t)(nq - q) : strlen(q);
			char *kq = warning_key(q, ql, src);
			seen = !strcmp(k, kq);
			free(kq);
			q = nq ? nq + 1 : NULL;
		}
		if (!seen && out.len + l < MAX_WARN_TEXT) {
			strbuf_add(&out, p, l);
			strbuf_addch(&out, '\n');
		}
		free(k);
		p = nl ? nl + 1 : NULL;
	}
	strbuf_rtrim(&out);
	if (!out.len) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out, NULL);
}

/* The first error line of a diagnostics text (or of the log excerpt). */
static char *first_error(const char *diag)
{
	for (const char *p = diag; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (memmem(p, l, "error:", 6) || memmem(p, l, "Error:", 6))
			return xstrndup(p, l);
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* The objects of arch a and m's compiler a build compiles: all of them for
 * the candidate; before the queue, those that failed or warned and are not
 * known yet. */
static int wanted(const struct obj *o, const struct mk *m, int a, int before)
{
	if (o->arch != a || o->clang != m->clang)
		return 0;
	return !before ? o->after == O_UNKNOWN
		       : o->need_before && o->before == O_UNKNOWN;
}

/* Reads what make left for each object of arch a: .o, OBJ.diag, the log. */
static void collect(struct cov *c, int a, struct mk *m, int before,
		    unsigned long log_off)
{
	char *excerpt = kbuild_error_excerpt(c->log_path, log_off);
	struct strbuf diag = STRBUF_INIT, logt = STRBUF_INIT;
	int fd = open(c->log_path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (lseek(fd, (off_t)log_off, SEEK_SET) == (off_t)log_off)
			strbuf_read_fd(&logt, fd, 64u << 20);
		close(fd);
	}
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		if (!wanted(o, m, a, before))
			continue;
		enum ostate st;
		char *warn = NULL, *err = NULL;
		char *out = out_path(m, o);
		char *dp = xstrfmt("%s.diag", out);
		char *norule = xstrfmt("No rule to make target '%s'", o->target);
		strbuf_reset(&diag);
		int have_diag = strbuf_read_file(&diag, dp, MAX_DIAG) == 0;
		err_clear();
		if (have_diag) {
			char *t = tree_paths(diag.buf, c->src, m->dir);
			strbuf_reset(&diag);
			strbuf_addstr(&diag, t);
			free(t);
		}
		if (access(out, F_OK) == 0) {
			st = O_OK;
			warn = have_diag ? warning_lines(diag.buf) : NULL;
		} else if (have_diag && (err = first_error(diag.buf))) {
			st = O_FAILED;
			warn = warning_lines(diag.buf);
		} else if (strstr(logt.buf, norule)) {
			st = O_NOTBUILT;
			err = xstrfmt("kbuild has no rule for %s", o->target);
		} else if (!have_diag && cov_ends_with(o->target, ".o")) {
			/* make went on without compiling it */
			st = O_NOTBUILT;
			err = xstrfmt("%s does not reach %s (its directory is"
				      " not built under this config)",
				      m->label, o->target);
		} else {
			st = O_FAILED;
			err = first_error(excerpt);
			if (!err)
				err = xstrdup("make failed; see the log");
		}
		if (before) {
			o->before = st;
			o->before_warn = warn;
			o->before_err = err;
		} else {
			o->after = st;
			o->after_warn = warn;
			o->after_err = err;
		}
		free(out);
		free(dp);
		free(norule);
	}
	free(excerpt);
	strbuf_release(&diag);
	strbuf_release(&logt);
}

static unsigned long log_size(struct cov *c)
{
	struct stat st;

	return stat(c->log_path, &st) == 0 ? (unsigned long)st.st_size : 0;
}

/* make prepare, then make -k the objects of arch a not yet known. */
static int build_objects(struct cov *c, int a, struct mk *m, int before)
{
	const char **t = xcalloc(c->no + 1, sizeof(*t));
	const char *prep[] = { "prepare" };
	size_t n = 0;
	unsigned long off;
	int ret;

	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		if (!wanted(o, m, a, before))
			continue;
		t[n++] = o->target;
		/* compiled again (a ccache hit when nothing changed), so its
		 * diagnostics are this tree's */
		char *p = out_path(m, o);
		char *d = xstrfmt("%s.diag", p);
		unlink(p);
		unlink(d);
		free(p);
		free(d);
	}
	ret = 0;
	if (!n)
		goto out; /* every object known for this tree: nothing to do */
	cov_say(c, "coverage: %s: make prepare (%s)", m->label,
	    before ? "the branch" : "the candidate");
	off = log_size(c);
	ret = mk_run(c, m, prep, 1, 0);
	if (ret < 0)
		goto out;
	if (ret > 0) {
		char *ex = kbuild_error_excerpt(c->log_path, off);
		char *fe = first_error(ex);
		for (size_t i = 0; i < c->no; i++) {
			struct obj *o = &c->o[i];
			if (!wanted(o, m, a, before))
				continue;
			if (before) {
				o->before = O_FAILED;
				o->before_err = xstrfmt("make prepare failed: %s",
							fe ? fe : ex);
			}
		}
		if (!before) {
			c->prepare_failed[m->clang][a] = 1;
			c->prepare_err[m->clang][a] = xstrfmt(
				"make prepare (%s): %s", m->label,
						    fe ? fe : ex);
		}
		free(ex);
		free(fe);
		ret = 0;
		goto out;
	}
	cov_say(c, "coverage: %s: compiling %zu object%s (%s)", m->label, n,
	    n == 1 ? "" : "s", before ? "the branch" : "the candidate");
	off = log_size(c);
	ret = mk_run(c, m, t, n, 1);
	if (ret < 0)
		goto out;
	collect(c, a, m, before, off);
	ret = 0;
out:
	free(t);
	return ret;
}

/*
 * An object's result is known once per tree, config and object: the
 * branch tip's (before) for the objects that failed or warned, and the
 * candidate's, so that the same queue again compiles nothing.
 */
static void load_results(struct cov *c, int a, int clang, const char *key,
			 int before)
{
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		enum ostate *res = before ? &o->before : &o->after;
		char **warn = before ? &o->before_warn : &o->after_warn;
		char **err = before ? &o->before_err : &o->after_err;
		sqlite3_stmt *st;

		if (o->arch != a || o->clang != clang ||
		    (before && !o->need_before) ||
		    *res != O_UNKNOWN)
			continue;
		st = db_stmt(c->bc->db,
			     "SELECT result, warnings, error FROM"
			     " object_builds WHERE tree_sha = ? AND config"
			     " = ? AND object = ?",
			     "ttt", before ? c->base_tree : c->cand_tree, key,
			     o->target);
		if (st && sqlite3_step(st) == SQLITE_ROW) {
			const char *r = db_col_text(st, 0);
			*res = O_NOTBUILT;
			for (int k = O_OK; k <= O_NOTBUILT; k++)
				if (r && !strcmp(r, ostate_names[k]))
					*res = (enum ostate)k;
			free(*warn);
			free(*err);
			*warn = db_col_text(st, 1) ? xstrdup(db_col_text(st, 1))
						   : NULL;
			*err = db_col_text(st, 2) ? xstrdup(db_col_text(st, 2))
						  : NULL;
		}
		db_stmt_done(st);
	}
}

static void store_results(struct cov *c, int a, int clang, const char *key,
			  int before)
{
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		enum ostate res = before ? o->before : o->after;
		if (o->arch != a || o->clang != clang || res == O_UNKNOWN)
			continue;
		/* a cache of results: one not stored is compiled again */
		if (db_exec(c->bc->db,
			    "INSERT OR REPLACE INTO object_builds (tree_sha,"
			    " config, object, result, warnings, error) VALUES"
			    " (?, ?, ?, ?, ?, ?)",
			    "tttttt", before ? c->base_tree : c->cand_tree, key,
			    o->target, ostate_names[res],
			    before ? o->before_warn : o->after_warn,
			    before ? o->before_err : o->after_err) < 0)
			log_warnx("candidate %lld: %s not kept: %s", c->id,
				  o->target, err_msg());
	}
}

static int lock_dir(const char *dir, int *fd)
{
	char *p = xstrfmt("%s/.stableq-lock", dir);
	int ret = 0;

	*fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0 || flock(*fd, LOCK_EX) < 0)
		ret = err_set(ERR_IO, "%s: %s", p, strerror(errno));
	free(p);
	return ret;
}

/*
 * One architecture's broad build with one compiler: config, the branch
 * (once), the candidate. Clang that cannot run here leaves why in
 * c->not_run[a] (never a pass) and returns 0.
 */
int cov_build_arch(struct cov *c, int a, int clang, int *on_base)
{
	struct mk m;
	char *key = NULL;
	int ret, lockfd = -1, need_before = 0, need = 0;
	double t0 = now_monotonic();

	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < c->no; i++)
		need |= c->o[i].arch == a && c->o[i].clang == clang;
	for (size_t i = 0; i < c->ne; i++)
		need |= c->e[i].config_step && c->e[i].arch == a &&
			c->e[i].clang == clang && !c->e[i].status;
	if (!need)
		return 0;
	if ((ret = mk_init(c, a, clang, &m)) < 0) {
		if (clang && ret == ERR_NOTFOUND) {
			c->not_run[a] = xstrdup(err_msg());
			cov_say(c, "coverage: %s: not run (clang): %s", m.label,
				c->not_run[a]);
			err_clear();
			ret = 0;
		}
		goto out;
	}
	if ((ret = lock_dir(m.dir, &lockfd)) < 0)
		goto out;
	key = config_key(c, a, clang);
	if ((ret = configure(c, &m, key)) < 0)
		goto out;
	load_results(c, a, clang, key, 0);
	if ((ret = build_objects(c, a, &m, 0)) < 0)
		goto out;
	store_results(c, a, clang, key, 0);
	/* only what failed or warned is compared with the branch: a clean
	 * object needs no "before" (the cold cost stays one compile each) */
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		if (o->arch == a && o->clang == clang)
			o->need_before = o->after == O_FAILED ||
					 (o->after_warn && *o->after_warn);
	}
	load_results(c, a, clang, key, 1);
	for (size_t i = 0; i < c->no; i++)
		need_before |= wanted(&c->o[i], &m, a, 1);
	if (need_before) {
		if ((ret = repo_checkout(c->r, c->base)) < 0)
			goto out;
		*on_base = 1;
		ret = build_objects(c, a, &m, 1);
		if (ret >= 0)
			store_results(c, a, clang, key, 1);
		if (ret >= 0 && (ret = repo_checkout(c->r, c->commit)) >= 0)
			*on_base = 0;
	}
	if (ret >= 0)
		cov_say(c, "coverage: %s: done (%.1f s)", m.label,
			now_monotonic() - t0);
out:
	if (lockfd >= 0)
		close(lockfd);
	free(key);
	mk_release(&m);
	return ret;
}
