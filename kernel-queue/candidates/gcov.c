/* gcov.c: a coverage boot: a gcov kernel, its counters off the console, each patch's executed lines. */
#include "gcov.h"
#include "candidate.h"
#include "coverage.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "kbuild.h"
#include "sandbox.h"
#include "kconfig.h"
#include "log.h"
#include "mime.h"
#include "patch.h"
#include "queue.h"
#include "runner.h"
#include "spawn.h"
#include "strvec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the guest's configuration gets on top of its fragments. */
#define GCOV_FRAGMENT                                                        \
	"# stableq coverage boot (kernel-queue/candidates/gcov.c): gcov in the"   \
	" guest,\n# its counters under /sys/kernel/debug/gcov\n"            \
	"CONFIG_DEBUG_FS=y\nCONFIG_GCOV_KERNEL=y\n"
#define GCDA_MAX (64u << 20)

static struct gcov_file *file_get(struct gcov_file **files, size_t *n,
				  long long pid, const char *path)
{
	for (size_t i = 0; i < *n; i++)
		if ((*files)[i].patch_id == pid && !strcmp((*files)[i].path, path))
			return &(*files)[i];
	*files = xrealloc(*files, (*n + 1) * sizeof(**files));
	struct gcov_file *f = &(*files)[(*n)++];
	memset(f, 0, sizeof(*f));
	f->patch_id = pid;
	f->path = xstrdup(path);
	return f;
}

struct add_ctx {
	struct gcov_file **files;
	size_t *n;
	long long pid;
};

static void add_line(void *vctx, const char *path, long line)
{
	struct add_ctx *a = vctx;
	struct gcov_file *f = file_get(a->files, a->n, a->pid, path);

	if (f->n == f->alloc) {
		f->alloc = f->alloc ? 2 * f->alloc : 16;
		f->lines = xrealloc(f->lines, f->alloc * sizeof(*f->lines));
		f->state = xrealloc(f->state, f->alloc);
	}
	f->lines[f->n] = line;
	f->state[f->n++] = GCOV_NOT_CODE;
}

int gcov_files_add(struct gcov_file **files, size_t *n, long long patch_id,
		   const char *diff)
{
	struct add_ctx a = { files, n, patch_id };
	long ret = patch_added_lines(diff, strlen(diff), add_line, &a);

	return ret < 0 ? (int)ret : 0;
}

/* gcov names a source as the compiler saw it: absolute or ../linux/x.c */
static int same_file(const char *gcov_name, const char *path)
{
	size_t g = strlen(gcov_name), p = strlen(path);

	if (!strcmp(gcov_name, path))
		return 1;
	return g > p && gcov_name[g - p - 1] == '/' &&
	       !strcmp(gcov_name + g - p, path);
}

int gcov_merge_json(struct gcov_file *files, size_t n, const char *text)
{
	json_t *root = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
	json_t *gfiles = json_object_get(root, "files"), *gf;
	size_t i;
	int counted = 0;

	if (!json_is_array(gfiles)) {
		json_decref(root);
		return err_set(ERR_INVALID, "not gcov's JSON output");
	}
	json_array_foreach(gfiles, i, gf)
	{
		const char *name = json_string_value(json_object_get(gf, "file"));
		json_t *lines = json_object_get(gf, "lines"), *l;
		size_t k;

		if (!name || !json_is_array(lines))
			continue;
		for (size_t f = 0; f < n; f++) {
			if (!same_file(name, files[f].path))
				continue;
			files[f].seen = 1;
			json_array_foreach(lines, k, l)
			{
				json_int_t no = json_integer_value(
					json_object_get(l, "line_number"));
				json_int_t cnt = json_integer_value(
					json_object_get(l, "count"));
				for (size_t j = 0; j < files[f].n; j++) {
					if (files[f].lines[j] != no)
						continue;
					unsigned char s = cnt > 0 ? GCOV_RAN
								  : GCOV_MISSED;
					if (files[f].state[j] == GCOV_NOT_CODE)
						counted++;
					if (s > files[f].state[j])
						files[f].state[j] = s;
				}
			}
		}
	}
	json_decref(root);
	return counted;
}

void gcov_file_counts(const struct gcov_file *f, long *executable,
		      long *executed)
{
	*executable = *executed = 0;
	for (size_t j = 0; j < f->n; j++) {
		*executable += f->state[j] != GCOV_NOT_CODE;
		*executed += f->state[j] == GCOV_RAN;
	}
}

void gcov_files_free(struct gcov_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(files[i].path);
		free(files[i].lines);
		free(files[i].state);
		free(files[i].why);
	}
	free(files);
}

/* The argument of "@@stableq WHAT ARG TOKEN" (ARG may be empty), or NULL. */
static const char *marker(const char *s, size_t n, const char *what,
			  const char *token, size_t *arglen)
{
	size_t w = strlen(what), t = strlen(token);
	const char *p = s + 10;

	if (n < 10 + w + 1 + t || memcmp(s, "@@stableq ", 10) ||
	    memcmp(p, what, w) || memcmp(s + n - t, token, t) ||
	    s[n - t - 1] != ' ')
		return NULL;
	p += w;
	if (p == s + n - t - 1) {
		*arglen = 0;
		return p;
	}
	if (*p != ' ')
		return NULL;
	p++;
	*arglen = (size_t)(s + n - t - 1 - p);
	return p;
}

static int b64_line(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= 'A' && s[i] <= 'Z') && !(s[i] >= 'a' && s[i] <= 'z') &&
		    !(s[i] >= '0' && s[i] <= '9') && s[i] != '+' && s[i] != '/' &&
		    s[i] != '=')
			return 0;
	return 1;
}

int gcov_console_gcda(const char *text, size_t len, const char *token,
		      struct gcov_gcda **out, size_t *n)
{
	const char *s = text, *end = text + len;
	struct strbuf b64 = STRBUF_INIT;
	char *path = NULL;
	size_t total = 0;

	*out = NULL;
	*n = 0;
	if (!token || !*token)
		return 0;
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		const char *next = e ? e + 1 : end;
		size_t l = (size_t)((e ? e : end) - s), al;
		const char *arg;

		while (l && (s[l - 1] == '\r' || s[l - 1] == ' '))
			l--;
		if ((arg = marker(s, l, "gcov-file", token, &al)) && al) {
			free(path);
			path = xstrndup(arg, al);
			strbuf_reset(&b64);
		} else if (path && marker(s, l, "gcov-end", token, &al) && !al) {
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			struct gcov_gcda *g = &(*out)[(*n)++];
			g->path = path;
			path = NULL;
			strbuf_init(&g->data, 0);
			base64_decode(&g->data, b64.buf, b64.len);
			strbuf_reset(&b64);
		} else if (path && b64_line(s, l)) {
			total += l;
			if (total > GCDA_MAX) {
				strbuf_release(&b64);
				free(path);
				gcov_gcda_free(*out, *n);
				*out = NULL;
				*n = 0;
				return err_set(ERR_INVALID,
					       "gcov data on the console is over"
					       " %u MiB",
					       GCDA_MAX >> 20);
			}
			strbuf_add(&b64, s, l);
		}
		s = next;
	}
	free(path);
	strbuf_release(&b64);
	return 0;
}

void gcov_gcda_free(struct gcov_gcda *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].path);
		strbuf_release(&g[i].data);
	}
	free(g);
}

char *gcov_lines_text(long executed, long executable, long changed)
{
	if (executable > 0)
		return xstrfmt("exercised %ld of %ld changed line%s", executed,
			       executable, executable == 1 ? "" : "s");
	return xstrfmt("none of its %ld changed line%s is code gcov counts",
		       changed, changed == 1 ? "" : "s");
}

/* ---- the coverage boot ---- */

struct boot {
	struct branch_ctx *bc;
	long long id;
	struct gcov_file *files;
	size_t nfiles;
	struct strvec objects;  /* profiled objects: "lib/x.o" */
	char *dir;              /* coverage_build_dir/gcov */
	char *build;            /* its build directory */
	void (*progress)(const char *line, void *ctx);
	void *ctx;
};

__attribute__((format(printf, 2, 3))) static void
say(struct boot *b, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (b->progress)
		b->progress(sb.buf, b->ctx);
	else
		log_info("%s", sb.buf);
	strbuf_release(&sb);
}

/* "GCOV_PROFILE := n" or "GCOV_PROFILE_base.o := n" in the object's Makefile */
static int gcov_off(const char *tree, const char *object)
{
	const char *slash = strrchr(object, '/');
	char *dir = slash ? xstrndup(object, (size_t)(slash - object))
			  : xstrdup(".");
	const char *base = slash ? slash + 1 : object;
	char *mk = xstrfmt("%s/%s/Makefile", tree, dir);
	char *one = xstrfmt("GCOV_PROFILE_%s", base);
	struct strbuf sb = STRBUF_INIT;
	int off = 0;

	if (strbuf_read_file(&sb, mk, 1 << 20) >= 0) {
		const char *p = sb.buf;
		while (p && *p && !off) {
			const char *e = strchr(p, '\n');
			size_t l = e ? (size_t)(e - p) : strlen(p);
			char *line = xstrndup(p, l), *q = line;
			while (*q == ' ' || *q == '\t')
				q++;
			size_t nl = strlen(one);
			const char *rest = NULL;
			if (!strncmp(q, one, nl))
				rest = q + nl;
			else if (!strncmp(q, "GCOV_PROFILE", 12) &&
				 (q[12] == ' ' || q[12] == ':' || q[12] == '='))
				rest = q + 12;
			if (rest) {
				rest += strspn(rest, " \t:");
				if (*rest == '=') {
					rest++;
					rest += strspn(rest, " \t");
					off = *rest == 'n';
				}
			}
			free(line);
			p = e ? e + 1 : NULL;
		}
	}
	err_clear();
	strbuf_release(&sb);
	free(one);
	free(mk);
	free(dir);
	return off;
}

/* The patches' added lines, and which objects to profile. */
static int plan(struct boot *b)
{
	sqlite3 *db = b->bc->db;
	json_t *cov = coverage_candidate_json(db, b->id);
	json_t *patches = json_object_get(cov, "patches"), *p;
	size_t i;
	int ret = 0;

	json_array_foreach(patches, i, p)
	{
		long long pid = json_integer_value(json_object_get(p, "patch_id"));
		json_t *pj = queue_patch_json(db, pid, 1), *f;
		const char *diff = json_string_value(json_object_get(pj, "diff"));
		size_t k;

		if (diff && (ret = gcov_files_add(&b->files, &b->nfiles, pid,
						  diff)) < 0) {
			json_decref(pj);
			err_prefix(ret, "patch %lld", pid);
			break;
		}
		json_decref(pj);
		json_array_foreach(json_object_get(p, "files"), k, f)
		{
			const char *path =
				json_string_value(json_object_get(f, "path"));
			const char *kind =
				json_string_value(json_object_get(f, "kind"));
			const char *st =
				json_string_value(json_object_get(f, "status"));
			struct gcov_file *gf = NULL;
			for (size_t j = 0; path && j < b->nfiles; j++)
				if (b->files[j].patch_id == pid &&
				    !strcmp(b->files[j].path, path))
					gf = &b->files[j];
			if (!gf || !kind || !st)
				continue;
			if (!strcmp(kind, "header"))
				continue; /* through the objects that include it */
			if (strcmp(kind, "c")) {
				gf->why = xstrdup("not C: gcov counts C code");
				continue;
			}
			if (strcmp(st, "booted")) {
				gf->why = xstrfmt("not in the booted kernel"
						  " (%s)", st);
				continue;
			}
			char *obj = xstrfmt("%.*s.o", (int)strlen(path) - 2,
					    path);
			if (gcov_off(b->bc->cfg.tree_dir, obj)) {
				gf->why = xstrfmt("its Makefile turns gcov off"
						  " for %s", obj);
				free(obj);
				continue;
			}
			int have = 0;
			for (size_t j = 0; j < b->objects.nr; j++)
				have |= !strcmp(b->objects.v[j], obj);
			if (!have)
				strvec_push(&b->objects, obj);
			free(obj);
		}
	}
	json_decref(cov);
	return ret;
}

/* The guest's fragments and gcov's, in DIR/config (rewritten each time). */
static int write_config(struct boot *b, char **cfgdir)
{
	char **frags = NULL;
	size_t n = 0;
	int ret;

	*cfgdir = xstrfmt("%s/config", b->dir);
	rm_rf(*cfgdir);
	if ((ret = mkdir_p(*cfgdir)) < 0 ||
	    (ret = kconfig_fragments(b->bc->cfg.kernel_config_dir, &frags,
				     &n)) < 0)
		return ret;
	for (size_t i = 0; i < n && ret >= 0; i++) {
		struct strbuf sb = STRBUF_INIT;
		char *src = xstrfmt("%s/%s", b->bc->cfg.kernel_config_dir,
				    frags[i]);
		char *dst = xstrfmt("%s/%s", *cfgdir, frags[i]);
		ret = strbuf_read_file(&sb, src, 1 << 20);
		if (ret >= 0)
			ret = write_file_atomic(dst, sb.buf, sb.len);
		strbuf_release(&sb);
		free(src);
		free(dst);
	}
	kconfig_fragments_free(frags, n);
	if (ret >= 0) {
		char *dst = xstrfmt("%s/zzz-gcov.config", *cfgdir);
		ret = write_file_atomic(dst, GCOV_FRAGMENT,
					strlen(GCOV_FRAGMENT));
		free(dst);
	}
	return ret < 0 ? ret : 0;
}

static int build(struct boot *b, char **bzimage)
{
	struct strvec vars = STRVEC_INIT;
	struct kbuild_result kb = { 0 };
	struct sandbox sb;
	char *cfgdir = NULL;
	char *blog = xstrfmt("%s/log/gcov-build-%lld.log", b->bc->cfg.var_dir,
			     b->id);
	int ret;

	*bzimage = NULL;
	if ((ret = sandbox_from_config(&sb, &b->bc->cfg)) < 0 ||
	    (ret = write_config(b, &cfgdir)) < 0)
		goto out;
	for (size_t i = 0; i < b->objects.nr; i++) {
		const char *o = b->objects.v[i], *base = strrchr(o, '/');
		strvec_pushf(&vars, "GCOV_PROFILE_%s=y", base ? base + 1 : o);
	}
	struct kbuild_opts ko = {
		.src_dir = b->bc->cfg.tree_dir,
		.build_dir = b->build,
		.config_dir = cfgdir,
		.ccache_dir = b->bc->cfg.ccache_dir,
		.icecc = b->bc->cfg.icecc,
		.jobs = b->bc->cfg.make_jobs,
		.timeout_s = b->bc->cfg.build_timeout,
		.log_path = blog,
		.make_vars = (const char *const *)vars.v,
		.sandbox = &sb,
	};
	say(b, "candidate %lld: coverage boot: building with gcov on %zu"
	    " object%s (log %s)", b->id, b->objects.nr,
	    b->objects.nr == 1 ? "" : "s", blog);
	if ((ret = kbuild_run(&ko, &kb)) < 0)
		goto out;
	if (!kb.ok) {
		ret = err_set(ERR_IO, "the gcov kernel did not build: %s",
			      kb.error ? kb.error : "?");
		goto out;
	}
	say(b, "candidate %lld: coverage boot: built in %.1f s", b->id,
	    kb.seconds);
	*bzimage = xstrdup(kb.bzimage);
out:
	kbuild_result_release(&kb);
	sandbox_release(&sb);
	strvec_clear(&vars);
	free(cfgdir);
	free(blog);
	return ret;
}

/* The object a debugfs path (".../lib/x.gcda") is the data of, or NULL. */
static const char *object_of_gcda(const struct boot *b, const char *path)
{
	size_t pl = strlen(path);

	for (size_t i = 0; i < b->objects.nr; i++) {
		const char *o = b->objects.v[i];
		size_t ol = strlen(o) - 2; /* without ".o" */
		if (pl >= ol + 5 && !strcmp(path + pl - 5, ".gcda") &&
		    !strncmp(path + pl - 5 - ol, o, ol) &&
		    (pl == ol + 5 || path[pl - 6 - ol] == '/'))
			return o;
	}
	return NULL;
}

/* gcov's JSON of one object: the line of its output that is JSON. */
static int run_gcov(struct boot *b, const char *object)
{
	char *obj = xstrfmt("%s/%s", b->build, object);
	const char *argv[] = { "gcov", "--json-format", "--stdout", obj, NULL };
	struct spawn s = SPAWN_INIT;
	int ret;

	s.argv = argv;
	s.cwd = b->dir;
	s.capture = 1;
	s.capture_max = GCDA_MAX;
	s.timeout_ms = 120000;
	ret = spawn_run(&s);
	if (ret >= 0 && s.status != 0)
		ret = err_set(ERR_IO, "gcov %s: exit status %d: %.200s", obj,
			      s.status, s.out.buf);
	if (ret >= 0) {
		const char *j = s.out.buf;
		while (j && *j && *j != '{')
			j = (j = strchr(j, '\n')) ? j + 1 : NULL;
		if (!j || !*j)
			ret = err_set(ERR_IO, "gcov %s: no JSON output", obj);
		else
			ret = gcov_merge_json(b->files, b->nfiles, j);
	}
	spawn_release(&s);
	free(obj);
	return ret;
}

/* The counters off the console, next to each object's .gcno, then gcov. */
static int count(struct boot *b, const char *console, const char *token,
		 struct strvec *ran)
{
	struct strbuf text = STRBUF_INIT;
	struct gcov_gcda *g = NULL;
	size_t ng = 0;
	int ret;

	if ((ret = strbuf_read_file(&text, console, GCDA_MAX * 2)) < 0 ||
	    (ret = gcov_console_gcda(text.buf, text.len, token, &g, &ng)) < 0)
		goto out;
	for (size_t i = 0; i < ng; i++) {
		const char *o = object_of_gcda(b, g[i].path);
		if (!o)
			continue;
		char *dst = xstrfmt("%s/%.*s.gcda", b->build,
				    (int)strlen(o) - 2, o);
		ret = write_file_atomic(dst, g[i].data.buf, g[i].data.len);
		free(dst);
		if (ret < 0)
			goto out;
		if ((ret = run_gcov(b, o)) < 0)
			goto out;
		strvec_push(ran, o);
	}
	ret = 0;
out:
	gcov_gcda_free(g, ng);
	strbuf_release(&text);
	return ret;
}

static json_t *missed_json(const struct gcov_file *f)
{
	json_t *a = json_array();

	for (size_t j = 0; j < f->n; j++)
		if (f->state[j] == GCOV_MISSED)
			json_array_append_new(a, json_integer(f->lines[j]));
	return a;
}

static int store(struct boot *b, const char *summary, const char *log_path,
		 double seconds, int profiled)
{
	sqlite3 *db = b->bc->db;
	json_t *objs = json_array();
	char *ojson;
	int ret;

	for (size_t i = 0; i < b->objects.nr; i++)
		json_array_append_new(objs, json_string(b->objects.v[i]));
	ojson = json_dumps(objs, JSON_COMPACT);
	json_decref(objs);
	if ((ret = db_begin(db)) < 0)
		goto out;
	ret = db_exec(db, "DELETE FROM patch_lines WHERE candidate_id = ?",
		      "i", b->id);
	if (ret >= 0)
		ret = db_exec(db,
			      "INSERT OR REPLACE INTO coverage_boots"
			      " (candidate_id, summary, objects, log_path,"
			      " seconds) VALUES (?, ?, ?, ?, ?)",
			      "itttf", b->id,
			      summary, ojson, log_path, seconds);
	for (size_t i = 0; ret >= 0 && i < b->nfiles; i++) {
		const struct gcov_file *f = &b->files[i];
		long ex = 0, run = 0;
		gcov_file_counts(f, &ex, &run);
		int counted = profiled && (f->seen || !f->why);
		char *missed = NULL;
		if (counted) {
			json_t *m = missed_json(f);
			missed = json_dumps(m, JSON_COMPACT);
			json_decref(m);
		}
		const char *why = f->why;
		char *tmp = NULL;
		if (!f->why)
			why = tmp = xstrdup(
				profiled ? "no profiled object has code from"
					   " it (a header's macros run where"
					   " they are used)"
					 : "nothing was profiled");
		ret = db_exec(db,
			      "INSERT INTO patch_lines (candidate_id, patch_id,"
			      " path, changed, executable, executed, missed,"
			      " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			      "iitiiitt", b->id, f->patch_id, f->path,
			      (long long)f->n, (long long)(counted ? ex : 0),
			      (long long)(counted ? run : 0), missed,
			      counted && f->seen ? NULL : why);
		free(missed);
		free(tmp);
	}
	ret = db_end(db, ret < 0 ? ret : 0);
out:
	free(ojson);
	return ret;
}

int gcov_boot(struct branch_ctx *bc, struct repo *r, long long id,
	      const char *commit, void (*progress)(const char *line, void *ctx),
	      void *ctx)
{
	struct boot b = {
		.bc = bc,
		.id = id,
		.objects = STRVEC_INIT,
		.progress = progress,
		.ctx = ctx,
	};
	struct runner_result rr = { 0 };
	struct strvec ran = STRVEC_INIT;
	char *bzimage = NULL, *clog = NULL, *work = NULL, *summary = NULL;
	double t0 = now_monotonic();
	int ret;

	b.dir = xstrfmt("%s/gcov", bc->cfg.coverage_build_dir);
	b.build = xstrfmt("%s/build", b.dir);
	if ((ret = mkdir_p(b.build)) < 0 || (ret = plan(&b)) < 0)
		goto out;
	if (!b.objects.nr) {
		summary = xstrdup("no patch changes C code of the booted"
				  " kernel: nothing to profile");
		say(&b, "candidate %lld: coverage boot: %s", id, summary);
		ret = store(&b, summary, NULL, now_monotonic() - t0, 0);
		goto out;
	}
	if ((ret = repo_checkout(r, commit)) < 0 ||
	    (ret = build(&b, &bzimage)) < 0)
		goto out;
	/* stale counters of an earlier boot must not count */
	for (size_t i = 0; i < b.objects.nr; i++) {
		char *g = xstrfmt("%s/%.*s.gcda", b.build,
				  (int)strlen(b.objects.v[i]) - 2,
				  b.objects.v[i]);
		unlink(g);
		free(g);
	}
	work = xstrfmt("%s/guest-gcov", bc->cfg.var_dir);
	clog = xstrfmt("%s/log/gcov-console-%lld.log", bc->cfg.var_dir, id);
	/* the whole test set, as the candidate ran it, on the gcov kernel */
	struct runner_opts ro = {
		.append = "stableq.gcov",
		.build_dir = b.build,
		.kernel = bzimage,
		.work_dir = work,
		.log_path = clog,
		.tests_file = bc->cfg.tests_file,
		.accel = bc->cfg.qemu_accel,
		.timeout_s = bc->cfg.boot_timeout,
		.memory_mb = bc->cfg.qemu_memory,
	};
	say(&b, "candidate %lld: coverage boot: booting (console %s)", id,
	    clog);
	if ((ret = runner_boot(&ro, &rr)) < 0)
		goto out;
	if ((ret = count(&b, clog, rr.token, &ran)) < 0)
		goto out;
	{
		long ex = 0, run = 0, changed = 0;
		for (size_t i = 0; i < b.nfiles; i++) {
			long e, x;
			gcov_file_counts(&b.files[i], &e, &x);
			ex += e;
			run += x;
			changed += (long)b.files[i].n;
		}
		char *t = gcov_lines_text(run, ex, changed);
		summary = xstrfmt("%s (gcov on %zu object%s, data from %zu;"
				  " the boot: %s)", t, b.objects.nr,
				  b.objects.nr == 1 ? "" : "s", ran.nr,
				  run_verdict_name(rr.verdict));
		free(t);
	}
	say(&b, "candidate %lld: coverage boot: %s", id, summary);
	ret = store(&b, summary, clog, now_monotonic() - t0, 1);
out:
	if (ret < 0) {
		/* stored, so the candidate says why it has no line counts */
		char *msg = xstrdup(err_msg());
		log_warnx("candidate %lld: coverage boot: %s", id, msg);
		free(summary);
		summary = xstrfmt("not measured: %s", msg);
		if (store(&b, summary, clog, now_monotonic() - t0, 0) < 0)
			err_clear();
		err_set(ret, "%s", msg);
		free(msg);
	}
	runner_result_release(&rr);
	gcov_files_free(b.files, b.nfiles);
	strvec_clear(&b.objects);
	strvec_clear(&ran);
	free(b.dir);
	free(b.build);
	free(bzimage);
	free(clog);
	free(work);
	free(summary);
	return ret;
}

/* ---- reports ---- */

json_t *gcov_patch_json(sqlite3 *db, long long cid, long long pid)
{
	json_t *files, *f;
	long changed = 0, ex = 0, run = 0;
	int counted = 0;
	size_t i;

	if (!cid &&
	    (db_query_int(db, &cid,
			  "SELECT MAX(candidate_id) FROM patch_lines WHERE"
			  " patch_id = ?",
			  "i", pid) < 0 ||
	     cid <= 0)) {
		err_clear();
		return json_null();
	}
	files = db_rows_json(db,
			     "SELECT path, changed, executable, executed,"
			     " missed, detail FROM patch_lines WHERE"
			     " candidate_id = ? AND patch_id = ? ORDER BY path",
			     "ii", cid, pid);
	if (!files || !json_array_size(files)) {
		json_decref(files);
		err_clear();
		return json_null();
	}
	json_array_foreach(files, i, f)
	{
		const char *m = json_string_value(json_object_get(f, "missed"));
		json_t *a = m ? json_loads(m, 0, NULL) : NULL;
		json_object_set_new(f, "missed", a ? a : json_null());
		changed += (long)json_integer_value(json_object_get(f, "changed"));
		ex += (long)json_integer_value(json_object_get(f, "executable"));
		run += (long)json_integer_value(json_object_get(f, "executed"));
		counted |= json_is_null(json_object_get(f, "detail"));
	}
	char *text;
	if (counted) {
		text = gcov_lines_text(run, ex, changed);
	} else {
		json_t *f0 = json_array_get(files, 0);
		text = xstrfmt("not profiled: %s: %s",
			       json_string_value(json_object_get(f0, "path")),
			       json_string_value(json_object_get(f0, "detail")));
	}
	json_t *o = json_pack("{s:I, s:i, s:i, s:i, s:s, s:o}", "candidate_id",
			      (json_int_t)cid, "changed", (int)changed,
			      "executable", (int)ex, "executed", (int)run,
			      "text", text, "files", files);
	free(text);
	return o ? o : json_null();
}

char *gcov_file_line(const json_t *f)
{
	struct strbuf sb = STRBUF_INIT;
	const char *path = json_string_value(json_object_get(f, "path"));
	const char *detail = json_string_value(json_object_get(f, "detail"));
	json_t *missed = json_object_get(f, "missed"), *m;
	size_t i;

	strbuf_addf(&sb, "%s: ", path ? path : "?");
	if (detail) {
		strbuf_addf(&sb, "not counted: %s", detail);
		return strbuf_detach(&sb, NULL);
	}
	strbuf_addf(&sb, "%lld of %lld code lines ran (%lld changed)",
		    (long long)json_integer_value(json_object_get(f, "executed")),
		    (long long)json_integer_value(
			    json_object_get(f, "executable")),
		    (long long)json_integer_value(json_object_get(f, "changed")));
	json_array_foreach(missed, i, m)
	{
		if (i == 10) {
			strbuf_addf(&sb, ", ... %zu in all",
				    json_array_size(missed));
			break;
		}
		strbuf_addf(&sb, "%s%lld", i ? ", " : "; not run: lines ",
			    (long long)json_integer_value(m));
	}
	return strbuf_detach(&sb, NULL);
}

json_t *gcov_candidate_json(sqlite3 *db, long long cid)
{
	json_t *o = db_row_json(db,
				"SELECT summary, objects, log_path, seconds,"
				" (SELECT COALESCE(SUM(changed), 0) FROM"
				" patch_lines WHERE candidate_id = ?1) AS"
				" changed, (SELECT COALESCE(SUM(executable),"
				" 0) FROM patch_lines WHERE candidate_id = ?1)"
				" AS executable, (SELECT COALESCE(SUM(executed),"
				" 0) FROM patch_lines WHERE candidate_id = ?1)"
				" AS executed FROM coverage_boots WHERE"
				" candidate_id = ?1",
				"i", cid);

	if (!o) {
		err_clear();
		return json_null();
	}
	const char *t = json_string_value(json_object_get(o, "objects"));
	json_t *a = t ? json_loads(t, 0, NULL) : NULL;
	json_object_set_new(o, "objects", a ? a : json_array());
	return o;
}
