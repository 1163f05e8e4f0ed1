/* coverage.c: build coverage: the guest build, else a broad config object by object, else why not. */
#include "coverage.h"
#include "coverage-int.h"
#include "candidate.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "file.h"
#include "kbuild.h"
#include "log.h"
#include "queue.h"
#include "spawn.h"
#include "strbuf.h"
#include "strvec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DIAG (1u << 20)
#define MAX_CMD_FILE (4u << 20)
#define MAX_WARN_TEXT 4096

enum kind { K_C, K_ASM, K_HEADER, K_KCONFIG, K_MAKEFILE, K_DTS, K_OTHER };
static const char *const kind_names[] = { "c",	      "asm", "header",
					  "kconfig",  "makefile", "dts",
					  "other" };

/* The architectures stableq can compile for, and Debian's cross compilers. */
static const struct arch {
	const char *dir;   /* under arch/ */
	const char *karch; /* ARCH= */
	const char *cross; /* CROSS_COMPILE=; "" for the machine's own gcc */
	const char *pkg;
	const char *label;
} arches[] = {
	{ "x86", "x86_64", "", "build-essential", "x86_64 allmodconfig" },
	{ "arm64", "arm64", "aarch64-linux-gnu-", "gcc-aarch64-linux-gnu",
	  "arm64 allmodconfig" },
	{ "arm", "arm", "arm-linux-gnueabihf-", "gcc-arm-linux-gnueabihf",
	  "arm allmodconfig" },
	{ "powerpc", "powerpc", "powerpc64le-linux-gnu-",
	  "gcc-powerpc64le-linux-gnu", "powerpc allmodconfig" },
	{ "riscv", "riscv", "riscv64-linux-gnu-", "gcc-riscv64-linux-gnu",
	  "riscv allmodconfig" },
	{ "s390", "s390", "s390x-linux-gnu-", "gcc-s390x-linux-gnu",
	  "s390 allmodconfig" },
	{ "mips", "mips", "mips-linux-gnu-", "gcc-mips-linux-gnu",
	  "mips allmodconfig" },
};
#define NARCH (sizeof(arches) / sizeof(arches[0]))

/* Files no kernel config compiles, and why (first matching prefix wins). */
static const struct {
	const char *prefix;
	const char *why;
} not_code[] = {
	{ "Documentation/", "documentation" },
	{ "tools/", "tools/ is built by its own makefiles, not kbuild" },
	{ "scripts/", "a host script or program of the build" },
	{ "samples/", "samples are not built by these configs" },
	{ "LICENSES/", "licence text" },
	{ "MAINTAINERS", "the maintainers file" },
	{ "CREDITS", "the credits file" },
	{ "README", "documentation" },
	{ "usr/", "the initramfs builder" },
};

/* One touched file of one patch, and what became of it. */
struct entry {
	long long patch_id;
	char *path;
	enum kind kind;
	int arch; /* index into arches */
	const char *status; /* static strings */
	const char *config;
	struct strbuf detail;
	struct strbuf warnings;
	char **objs;
	size_t nobjs;
	int config_step; /* covered by the config step */
};

enum ostate { O_UNKNOWN, O_OK, O_FAILED, O_NOTBUILT };
static const char *const ostate_names[] = { "unknown", "ok", "failed",
					    "not-built" };

/* One object of one broad config: before the queue and with it. */
struct obj {
	char *target;
	int arch;
	int need_before; /* it failed or warned: how was it before the queue? */
	enum ostate before, after;
	char *before_warn, *after_warn;
	char *before_err, *after_err;
};

struct cov {
	struct app *app;
	struct repo *r;
	long long id;
	const char *base, *commit;
	char base_tree[REPO_HEX_SIZE];
	char cand_tree[REPO_HEX_SIZE]; /* the candidate's tree */
	struct entry *e;
	size_t ne, cap;
	struct obj *o;
	size_t no, ocap;
	char *src;       /* absolute worktree */
	char *log_path;
	double deadline;
	int prepare_failed[NARCH]; /* at the candidate, not before */
	char *prepare_err[NARCH];
	void (*progress)(const char *, void *);
	void *ctx;
};

__attribute__((format(printf, 2, 3))) static void say(struct cov *c,
						      const char *fmt, ...)
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

void coverage_result_release(struct coverage_result *res)
{
	if (!res)
		return;
	free(res->error);
	free(res->summary);
	memset(res, 0, sizeof(*res));
}

static int ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), m = strlen(suffix);

	return l >= m && !strcmp(s + l - m, suffix);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? xstrndup(path, (size_t)(s - path)) : xstrdup("");
}

static void entry_set(struct entry *e, const char *status, const char *config,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void entry_set(struct entry *e, const char *status, const char *config,
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

static void entry_add_obj(struct entry *e, const char *target)
{
	for (size_t i = 0; i < e->nobjs; i++)
		if (!strcmp(e->objs[i], target))
			return;
	e->objs = xrealloc(e->objs, (e->nobjs + 1) * sizeof(*e->objs));
	e->objs[e->nobjs++] = xstrdup(target);
}

static struct obj *obj_find(struct cov *c, int arch, const char *target)
{
	for (size_t i = 0; i < c->no; i++)
		if (c->o[i].arch == arch && !strcmp(c->o[i].target, target))
			return &c->o[i];
	return NULL;
}

static void obj_want(struct cov *c, int arch, const char *target)
{
	if (obj_find(c, arch, target))
		return;
	if (c->no == c->ocap) {
		c->ocap = c->ocap ? 2 * c->ocap : 16;
		c->o = xrealloc(c->o, c->ocap * sizeof(*c->o));
	}
	c->o[c->no++] = (struct obj){ .target = xstrdup(target), .arch = arch };
}

/* "drivers/x/y.c" -> "drivers/x/y.o" (caller frees) */
static char *object_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	return xstrfmt("%.*s.o", (int)(dot - path), path);
}

/* ---- classification ---- */

static enum kind kind_of(const char *path)
{
	const char *b = base_name(path);

	if (!strncmp(b, "Kconfig", 7))
		return K_KCONFIG;
	if (!strncmp(b, "Makefile", 8) || !strcmp(b, "Kbuild"))
		return K_MAKEFILE;
	if (ends_with(b, ".c"))
		return K_C;
	if (ends_with(b, ".S") && !ends_with(b, ".lds.S"))
		return K_ASM;
	if (ends_with(b, ".h"))
		return K_HEADER;
	if (ends_with(b, ".dts") || ends_with(b, ".dtsi"))
		return K_DTS;
	return K_OTHER;
}

/* The arches index of arch/X/..., 0 (x86) for the rest; -1: unknown X. */
static int arch_of(const char *path, const char **name, size_t *len)
{
	const char *s, *e;

	*name = NULL;
	*len = 0;
	if (strncmp(path, "arch/", 5))
		return 0;
	s = path + 5;
	e = strchr(s, '/');
	if (!e)
		return 0;
	*name = s;
	*len = (size_t)(e - s);
	for (size_t i = 0; i < NARCH; i++)
		if (strlen(arches[i].dir) == *len &&
		    !strncmp(arches[i].dir, s, *len))
			return (int)i;
	if (*len == 2 && !strncmp(s, "um", 2))
		return -1;
	return -1;
}

static int arch_usable(int a)
{
	char *gcc;
	int ok;

	if (!a)
		return 1;
	gcc = xstrfmt("%sgcc", arches[a].cross);
	ok = kbuild_have_tool(gcc);
	free(gcc);
	return ok;
}

/* ---- the guest build: what it linked ---- */

struct guest {
	char **objs; /* linked objects, sorted */
	size_t n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void guest_add(struct guest *g, const char *s, size_t len)
{
	if (!len)
		return;
	g->objs = xrealloc(g->objs, (g->n + 1) * sizeof(*g->objs));
	g->objs[g->n++] = xstrndup(s, len);
}

static void guest_add_lines(struct guest *g, const struct strbuf *sb,
			    const char *only_suffix)
{
	for (const char *p = sb->buf; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		while (l && (p[l - 1] == '\r' || p[l - 1] == ' '))
			l--;
		if (l > 2 && (!only_suffix ||
			      (l >= 2 && !strncmp(p + l - 2, only_suffix, 2))))
			guest_add(g, p, l);
		p = nl ? nl + 1 : NULL;
	}
}

/*
 * vmlinux.a lists every object linked into vmlinux, lib/lib.a and
 * arch/x86/lib/lib.a the library objects linked with it (thin archives:
 * `ar t`, run in the build directory so members are named from there);
 * modules.order the modules, and each module's .mod its objects.
 */
static int guest_load(struct guest *g, const char *build)
{
	static const char *const archives[] = { "vmlinux.a", "lib/lib.a",
						"arch/x86/lib/lib.a" };
	struct strbuf order = STRBUF_INIT, mod = STRBUF_INIT;
	char *op = xstrfmt("%s/modules.order", build);
	int ret = 0;

	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < sizeof(archives) / sizeof(archives[0]); i++) {
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "ar", "t", archives[i], NULL };
		char *a = xstrfmt("%s/%s", build, archives[i]);
		int there = access(a, R_OK) == 0;
		free(a);
		if (!there)
			continue;
		s.argv = argv;
		s.cwd = build;
		s.capture = 1;
		s.capture_max = 16u << 20;
		s.timeout_ms = 60000;
		ret = spawn_run(&s);
		if (ret == 0 && s.status == 0)
			guest_add_lines(g, &s.out, ".o");
		spawn_release(&s);
		if (ret < 0)
			goto out;
	}
	if (strbuf_read_file(&order, op, 16u << 20) == 0) {
		for (char *p = order.buf; p && *p;) {
			char *nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			if (ends_with(p, ".ko")) {
				char *mp = xstrfmt("%s/%.*s.mod", build,
						   (int)strlen(p) - 3, p);
				strbuf_reset(&mod);
				if (strbuf_read_file(&mod, mp, 1u << 20) == 0) {
					/* one object a line, or spaces */
					for (char *q = mod.buf; *q; q++)
						if (*q == ' ')
							*q = '\n';
					guest_add_lines(g, &mod, ".o");
				}
				free(mp);
			}
			p = nl ? nl + 1 : NULL;
		}
	}
	err_clear();
	if (g->n)
		qsort(g->objs, g->n, sizeof(*g->objs), cmp_str);
out:
	strbuf_release(&order);
	strbuf_release(&mod);
	free(op);
	return ret;
}

static int guest_has(const struct guest *g, const char *obj)
{
	return g->n && bsearch(&obj, g->objs, g->n, sizeof(*g->objs), cmp_str);
}

static void guest_free(struct guest *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->objs[i]);
	free(g->objs);
}

/*
 * The first linked guest object whose kbuild dependency list (.OBJ.cmd)
 * names src/header; caller frees, NULL if none. Headers are few per queue,
 * so each reads the .cmd files once.
 */
static char *guest_includer(const struct guest *g, const char *build,
			    const char *src, const char *header)
{
	struct strbuf sb = STRBUF_INIT;
	char *needle = xstrfmt("%s/%s", src, header);
	char *found = NULL;

	for (size_t i = 0; i < g->n && !found; i++) {
		const char *o = g->objs[i];
		const char *b = base_name(o);
		char *cmd = xstrfmt("%s/%.*s.%s.cmd", build, (int)(b - o), o, b);
		strbuf_reset(&sb);
		if (strbuf_read_file(&sb, cmd, MAX_CMD_FILE) == 0 &&
		    (strstr(sb.buf, needle) || strstr(sb.buf, header)))
			found = xstrdup(o);
		free(cmd);
	}
	err_clear();
	strbuf_release(&sb);
	free(needle);
	return found;
}

/* ---- choosing objects for headers and directories ---- */

/* Up to max .c files of dir (worktree), in name order. */
static void dir_objects(struct cov *c, struct entry *e, const char *dir,
			size_t max)
{
	char *full = xstrfmt("%s/%s", c->src, dir);
	DIR *d = opendir(full);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !ends_with(de->d_name, ".c"))
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrfmt("%s%s%s", dir, *dir ? "/" : "",
				     de->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		if (i < max) {
			char *o = object_of(names[i]);
			entry_add_obj(e, o);
			free(o);
		}
		free(names[i]);
	}
	free(names);
	free(full);
}

/*
 * The name a .c file includes the header by: include/linux/x.h ->
 * "linux/x.h"; arch/A/include/asm/x.h -> "asm/x.h"; elsewhere its base
 * name (included with quotes from its own directory or near it).
 */
static const char *include_name(const char *path)
{
	const char *p;

	if (!strncmp(path, "include/", 8))
		return path + 8;
	if (!strncmp(path, "arch/", 5) && (p = strstr(path, "/include/")))
		return p + 9;
	return base_name(path);
}

/* Up to COVERAGE_HEADER_OBJS .c files including the header (git grep). */
static int header_objects(struct cov *c, struct entry *e)
{
	struct spawn s = SPAWN_INIT;
	char *dir = dir_of(e->path);
	const char *inc = include_name(e->path);
	char *pat = xstrfmt("#include [<\"]%s[>\"]", inc);
	const char *argv[] = { "git",	  "grep", "-l", "-E", pat,
			       c->commit, "--",	  "*.c", NULL };
	char **near = NULL, **far = NULL;
	size_t nn = 0, nf = 0;
	int ret;

	s.argv = argv;
	s.cwd = c->src;
	s.capture = 1;
	s.capture_max = 8u << 20;
	s.timeout_ms = 120000;
	if ((ret = spawn_run(&s)) < 0)
		goto out;
	/* "COMMIT:path" lines; status 1 is "nothing found" */
	for (char *p = s.out.buf; p && *p;) {
		char *nl = strchr(p, '\n');
		char *path = strchr(p, ':');
		if (nl)
			*nl = '\0';
		if (path && ends_with(path, ".c")) {
			path++;
			int a;
			const char *an;
			size_t al;
			a = arch_of(path, &an, &al);
			if (a == e->arch) {
				int is_near = *dir && !strncmp(path, dir,
							       strlen(dir));
				char ***v = is_near ? &near : &far;
				size_t *n = is_near ? &nn : &nf;
				*v = xrealloc(*v, (*n + 1) * sizeof(**v));
				(*v)[(*n)++] = xstrdup(path);
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	/* a bare name ("x.h") is only trusted near its directory */
	if (inc == base_name(e->path))
		for (size_t i = 0; i < nf; i++)
			free(far[i]), far[i] = NULL;
	for (size_t i = 0; i < nn + nf && e->nobjs < COVERAGE_HEADER_OBJS;
	     i++) {
		const char *p = i < nn ? near[i] : far[i - nn];
		if (!p)
			continue;
		char *o = object_of(p);
		entry_add_obj(e, o);
		free(o);
	}
	ret = 0;
out:
	for (size_t i = 0; i < nn; i++)
		free(near[i]);
	for (size_t i = 0; i < nf; i++)
		free(far[i]);
	free(near);
	free(far);
	spawn_release(&s);
	free(pat);
	free(dir);
	return ret;
}

/* Decides, for each entry, what builds it (objects) or why nothing does. */
/* coverage_route(), with the kind and arch index plan() goes on with. */
static int route(const char *path, struct coverage_route *rt, enum kind *kind,
		 int *arch)
{
	const char *an;
	size_t al, k;

	memset(rt, 0, sizeof(*rt));
	*kind = kind_of(path);
	*arch = 0;
	rt->kind = kind_names[*kind];
	rt->arch = arches[0].label;
	rt->config_step = *kind == K_KCONFIG || *kind == K_MAKEFILE;
	for (k = 0; k < sizeof(not_code) / sizeof(not_code[0]); k++)
		if (!strncmp(path, not_code[k].prefix,
			     strlen(not_code[k].prefix)))
			break;
	if (k < sizeof(not_code) / sizeof(not_code[0])) {
		rt->status = "no-code";
		rt->why = xstrdup(not_code[k].why);
		return -1;
	}
	if (*kind == K_OTHER) {
		const char *ext = strrchr(base_name(path), '.');
		rt->status = "no-code";
		rt->why = xstrfmt("not compiled code (no kernel config builds"
				  " a %s file)",
				  ext ? ext : base_name(path));
		return -1;
	}
	*arch = arch_of(path, &an, &al);
	if (*arch < 0) {
		*arch = 0;
		rt->status = "not-built";
		rt->why = xstrfmt("arch/%.*s: stableq knows no Debian cross"
				  " compiler for it",
				  (int)al, an);
		return -1;
	}
	rt->arch = arches[*arch].label;
	if (!arch_usable(*arch)) {
		rt->status = "not-built";
		rt->why = xstrfmt("arch/%s needs the cross compiler %sgcc:"
				  " the Debian package %s is not installed",
				  arches[*arch].dir, arches[*arch].cross,
				  arches[*arch].pkg);
		return -1;
	}
	if (*kind == K_C || *kind == K_ASM)
		rt->object = object_of(path);
	if (*kind == K_DTS) {
		const char *rel = strstr(path, "/boot/dts/");
		if (ends_with(path, ".dtsi") || !rel) {
			rt->status = "not-built";
			rt->why = xstrdup("a .dtsi is built through the .dts"
					  " files that include it; none is"
					  " chosen here");
			return -1;
		}
		rt->object = xstrfmt("%.*s.dtb", (int)strlen(rel + 10) - 4,
				     rel + 10);
	}
	return 0;
}

int coverage_route(const char *path, struct coverage_route *out)
{
	enum kind kind;
	int arch;

	return route(path, out, &kind, &arch);
}

void coverage_route_release(struct coverage_route *r)
{
	if (!r)
		return;
	free(r->why);
	free(r->object);
	memset(r, 0, sizeof(*r));
}

static int plan(struct cov *c, const struct guest *g)
{
	const char *guest_build = c->app->cfg.build_dir;
	char *gb = realpath(guest_build, NULL);
	struct coverage_route rt = { 0 };
	int ret = 0;

	for (size_t i = 0; i < c->ne; i++) {
		struct entry *e = &c->e[i];

		coverage_route_release(&rt);
		if (route(e->path, &rt, &e->kind, &e->arch) < 0) {
			entry_set(e, rt.status, NULL, "%s", rt.why);
			continue;
		}
		switch (e->kind) {
		case K_C:
		case K_ASM:
			if (!e->arch && guest_has(g, rt.object))
				entry_set(e, "booted", "guest", NULL);
			entry_add_obj(e, rt.object);
			break;
		case K_HEADER: {
			char *o = e->arch || !gb ? NULL
						 : guest_includer(g, gb, c->src,
								  e->path);
			if (o) {
				entry_set(e, "booted", "guest", NULL);
				entry_add_obj(e, o);
				free(o);
				break;
			}
			if ((ret = header_objects(c, e)) < 0)
				goto out;
			if (!e->nobjs)
				entry_set(e, "not-built", NULL,
					  "no .c file of %s includes it by the"
					  " name \"%s\"",
					  e->arch ? arches[e->arch].dir
						  : "the tree",
					  include_name(e->path));
			break;
		}
		case K_KCONFIG:
		case K_MAKEFILE: {
			char *d = dir_of(e->path);
			e->config_step = 1;
			if (*d)
				dir_objects(c, e, d, COVERAGE_DIR_OBJS);
			free(d);
			break;
		}
		case K_DTS:
			entry_add_obj(e, rt.object);
			break;
		case K_OTHER:
			break;
		}
		if (!e->status || !strcmp(e->status, "booted")) {
			/* booted objects are the guest build's; others wait */
			if (e->status)
				continue;
			for (size_t j = 0; j < e->nobjs; j++)
				obj_want(c, e->arch, e->objs[j]);
		}
	}
out:
	coverage_route_release(&rt);
	free(gb);
	return ret;
}

/* ---- the broad builds ---- */

static char *arch_dir(struct cov *c, int a)
{
	return xstrfmt("%s/%s", c->app->cfg.coverage_build_dir,
		       arches[a].karch);
}

/* The configuration key: label and a hash of the fragment. */
static char *config_key(struct cov *c, int a)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned long h = 5381;

	if (strbuf_read_file(&sb, c->app->cfg.coverage_config, 1u << 20) < 0)
		err_clear();
	for (size_t i = 0; i < sb.len; i++)
		h = h * 33 + (unsigned char)sb.buf[i];
	strbuf_release(&sb);
	return xstrfmt("%s %08lx", arches[a].label, h & 0xffffffffUL);
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
	char *dir, *odir, *arch, *cross, *cc, *jobs;
};

static void mk_release(struct mk *m)
{
	free(m->dir);
	free(m->odir);
	free(m->arch);
	free(m->cross);
	free(m->cc);
	free(m->jobs);
}

static int mk_init(struct cov *c, int a, struct mk *m)
{
	char *wrapper, *text, *real;
	long nj = c->app->cfg.make_jobs > 0 ? c->app->cfg.make_jobs
					    : sysconf(_SC_NPROCESSORS_ONLN);
	int ret;

	memset(m, 0, sizeof(*m));
	m->dir = arch_dir(c, a);
	if ((ret = mkdir_p(m->dir)) < 0)
		return ret;
	char *abs = realpath(m->dir, NULL);
	if (!abs)
		return err_set(ERR_IO, "%s: %s", m->dir, strerror(errno));
	free(m->dir);
	m->dir = abs;
	wrapper = xstrfmt("%s/stableq-cc", m->dir);
	real = xstrfmt("ccache %sgcc", arches[a].cross);
	text = xstrfmt(wrapper_fmt, real, real);
	ret = write_file_atomic(wrapper, text, strlen(text));
	if (ret >= 0 && chmod(wrapper, 0755) < 0)
		ret = err_set(ERR_IO, "%s: %s", wrapper, strerror(errno));
	free(text);
	free(real);
	m->odir = xstrfmt("O=%s", m->dir);
	m->arch = xstrfmt("ARCH=%s", arches[a].karch);
	m->cross = xstrfmt("CROSS_COMPILE=%s", arches[a].cross);
	m->cc = xstrfmt("CC=%s", wrapper);
	m->jobs = xstrfmt("-j%ld", nj > 0 ? nj : 1);
	free(wrapper);
	m->ko = (struct kbuild_opts){
		.src_dir = c->src,
		.build_dir = m->dir,
		.ccache_dir = c->app->cfg.ccache_dir,
		.icecc = c->app->cfg.icecc,
		.log_path = c->log_path,
	};
	return ret < 0 ? ret : 0;
}

/* Where make writes a target: objects under O=, a .dtb under its dts tree. */
static char *out_path(const struct mk *m, const struct obj *o)
{
	if (ends_with(o->target, ".dtb"))
		return xstrfmt("%s/arch/%s/boot/dts/%s", m->dir,
			       arches[o->arch].dir, o->target);
	return xstrfmt("%s/%s", m->dir, o->target);
}

/* make [-k] TARGET...: 0 ok, 1 failed, negative could not run */
static int mk_run(struct cov *c, struct mk *m, const char *const *targets,
		  size_t n, int keep_going)
{
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	int to, ret;

	strvec_pushl(&argv, "make", m->odir, m->arch, m->cross, m->cc, m->jobs,
		     NULL);
	if (keep_going)
		strvec_push(&argv, "-k");
	for (size_t i = 0; i < n; i++)
		strvec_push(&argv, targets[i]);
	if (n == 1 && !strcmp(targets[0], "allmodconfig")) {
		char *frag = realpath(c->app->cfg.coverage_config, NULL);
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
static int configure(struct cov *c, int a, struct mk *m, const char *key)
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
	say(c, "coverage: make allmodconfig (%s) in %s", arches[a].label,
	    m->dir);
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
static char *new_warnings(const char *before, const char *after,
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

/* The objects of arch a a build compiles: all of them for the candidate;
 * before the queue, those that failed or warned and are not known yet. */
static int wanted(const struct obj *o, int a, int before)
{
	if (o->arch != a)
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
		if (!wanted(o, a, before))
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
		} else if (!have_diag && ends_with(o->target, ".o")) {
			/* make went on without compiling it */
			st = O_NOTBUILT;
			err = xstrfmt("%s does not reach %s (its directory is"
				      " not built under this config)",
				      arches[a].label, o->target);
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
		if (!wanted(o, a, before))
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
	say(c, "coverage: %s: make prepare (%s)", arches[a].label,
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
			if (!wanted(o, a, before))
				continue;
			if (before) {
				o->before = O_FAILED;
				o->before_err = xstrfmt("make prepare failed: %s",
							fe ? fe : ex);
			}
		}
		if (!before) {
			c->prepare_failed[a] = 1;
			c->prepare_err[a] = xstrfmt("make prepare (%s): %s",
						    arches[a].label,
						    fe ? fe : ex);
		}
		free(ex);
		free(fe);
		ret = 0;
		goto out;
	}
	say(c, "coverage: %s: compiling %zu object%s (%s)", arches[a].label, n,
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
static void load_results(struct cov *c, int a, const char *key, int before)
{
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		enum ostate *res = before ? &o->before : &o->after;
		char **warn = before ? &o->before_warn : &o->after_warn;
		char **err = before ? &o->before_err : &o->after_err;
		sqlite3_stmt *st;

		if (o->arch != a || (before && !o->need_before) ||
		    *res != O_UNKNOWN)
			continue;
		st = db_stmt(c->app->db,
			     "SELECT result, warnings, error FROM"
			     " object_builds WHERE tree_sha = ? AND config"
			     " = ? AND object = ?",
			     "ttt", before ? c->base_tree : c->cand_tree, key,
			     o->target);
		if (st && sqlite3_step(st) == SQLITE_ROW) {
			const char *r = db_col_text(st, 0);
			*res = !strcmp(r, "ok")	      ? O_OK
			       : !strcmp(r, "failed") ? O_FAILED
						      : O_NOTBUILT;
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

static void store_results(struct cov *c, int a, const char *key, int before)
{
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		enum ostate res = before ? o->before : o->after;
		if (o->arch != a || res == O_UNKNOWN)
			continue;
		/* a cache of results: one not stored is compiled again */
		if (db_exec(c->app->db,
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

/* One architecture's broad build: config, the branch (once), the candidate. */
static int build_arch(struct cov *c, int a, int *on_base)
{
	struct mk m;
	char *key = NULL;
	int ret, lockfd = -1, need_before = 0, need = 0;

	for (size_t i = 0; i < c->no; i++)
		need |= c->o[i].arch == a;
	for (size_t i = 0; i < c->ne; i++)
		need |= c->e[i].config_step && c->e[i].arch == a &&
			!c->e[i].status;
	if (!need)
		return 0;
	if ((ret = mk_init(c, a, &m)) < 0)
		goto out;
	if ((ret = lock_dir(m.dir, &lockfd)) < 0)
		goto out;
	key = config_key(c, a);
	if ((ret = configure(c, a, &m, key)) < 0)
		goto out;
	load_results(c, a, key, 0);
	if ((ret = build_objects(c, a, &m, 0)) < 0)
		goto out;
	store_results(c, a, key, 0);
	/* only what failed or warned is compared with the branch: a clean
	 * object needs no "before" (the cold cost stays one compile each) */
	for (size_t i = 0; i < c->no; i++) {
		struct obj *o = &c->o[i];
		if (o->arch == a)
			o->need_before = o->after == O_FAILED ||
					 (o->after_warn && *o->after_warn);
	}
	load_results(c, a, key, 1);
	for (size_t i = 0; i < c->no; i++)
		need_before |= wanted(&c->o[i], a, 1);
	if (need_before) {
		if ((ret = repo_checkout(c->r, c->base)) < 0)
			goto out;
		*on_base = 1;
		ret = build_objects(c, a, &m, 1);
		if (ret >= 0)
			store_results(c, a, key, 1);
		if (ret >= 0 && (ret = repo_checkout(c->r, c->commit)) >= 0)
			*on_base = 0;
	}
out:
	if (lockfd >= 0)
		close(lockfd);
	free(key);
	if (m.dir)
		mk_release(&m);
	return ret;
}

/* ---- verdicts ---- */

static void judge(struct cov *c)
{
	for (size_t i = 0; i < c->ne; i++) {
		struct entry *e = &c->e[i];
		size_t ok = 0, failed = 0, notbuilt = 0;
		const char *label = arches[e->arch].label;
		struct strbuf why = STRBUF_INIT;

		if (e->status)
			continue;
		if (c->prepare_failed[e->arch]) {
			entry_set(e, "failed", label, "%s",
				  c->prepare_err[e->arch]);
			continue;
		}
		for (size_t j = 0; j < e->nobjs; j++) {
			struct obj *o = obj_find(c, e->arch, e->objs[j]);
			if (!o)
				continue;
			if (o->after == O_OK) {
				ok++;
				char *nw = new_warnings(o->before_warn,
							o->after_warn, c->src);
				if (nw) {
					strbuf_addf(&e->warnings, "%s%s: %s",
						    e->warnings.len ? "\n" : "",
						    o->target, nw);
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
			entry_set(e, "failed", label, "%s", why.buf);
		else if (ok)
			entry_set(e, "compiled", label, NULL);
		else if (e->config_step && !c->prepare_failed[e->arch])
			entry_set(e, "compiled", label, "the config step");
		else
			entry_set(e, "not-built", NULL, "%s",
				  why.len ? why.buf : "nothing builds it here");
		strbuf_release(&why);
	}
}

/* Per patch: failed > booted > compiled > not-built > no-code. */
static int store(struct cov *c, struct coverage_result *res)
{
	sqlite3 *db = c->app->db;
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
			      " kind, status, config, objects, detail, warnings)"
			      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			      "iitttttt" "t", c->id, e->patch_id, e->path,
			      kind_names[e->kind], e->status, e->config, ot,
			      e->detail.len ? e->detail.buf : NULL,
			      e->warnings.len ? e->warnings.buf : NULL);
		free(ot);
		if (ret < 0)
			goto fail;
		if (strcmp(e->status, "no-code"))
			patch_code = 1;
		if (!strcmp(e->status, "booted"))
			patch_boot = patch_comp = 1;
		if (!strcmp(e->status, "compiled"))
			patch_comp = 1;
		if (e->warnings.len && warn.len + e->warnings.len <
					       MAX_WARN_TEXT)
			strbuf_addf(&warn, "%s%s", warn.len ? "\n" : "",
				    e->warnings.buf);
	}
	res->summary = xstrfmt("%d of %d patches compiled, %d in the booted"
			       " kernel",
			       res->compiled, res->with_code, res->booted);
	ret = db_exec(db,
		      "UPDATE candidates SET coverage = ?, coverage_log = ?"
		      " WHERE id = ?",
		      "tti", res->summary, c->log_path, c->id);
fail:
	strbuf_release(&warn);
	return db_end(db, ret < 0 ? ret : 0);
}

static int load_entries(struct cov *c)
{
	json_t *ids = candidate_patch_list(c->app->db, c->id), *v;
	size_t i;

	if (!ids)
		return err_last() < 0 ? err_last() : ERR_IO;
	json_array_foreach(ids, i, v)
	{
		sqlite3_stmt *st = db_prepare(c->app->db,
					      "SELECT path FROM patch_files"
					      " WHERE patch_id = ? AND change"
					      " != 'D' ORDER BY path",
					      "i", json_integer_value(v));
		while (st && sqlite3_step(st) == SQLITE_ROW) {
			if (c->ne == c->cap) {
				c->cap = c->cap ? 2 * c->cap : 32;
				c->e = xrealloc(c->e, c->cap * sizeof(*c->e));
			}
			c->e[c->ne++] = (struct entry){
				.patch_id = json_integer_value(v),
				.path = xstrdup(db_col_text(st, 0)),
				.detail = STRBUF_INIT,
				.warnings = STRBUF_INIT,
			};
		}
		sqlite3_finalize(st);
	}
	json_decref(ids);
	return 0;
}

static void cov_release(struct cov *c)
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
	for (size_t a = 0; a < NARCH; a++)
		free(c->prepare_err[a]);
	free(c->src);
	free(c->log_path);
}

int coverage_run(struct app *app, struct repo *r, long long id,
		 const char *base, const char *commit,
		 struct coverage_result *res,
		 void (*progress)(const char *line, void *ctx), void *ctx)
{
	struct cov c = { .app = app, .r = r, .id = id, .base = base,
			 .commit = commit, .progress = progress, .ctx = ctx };
	struct guest g = { 0 };
	double t0 = now_monotonic();
	int ret, on_base = 0;

	memset(res, 0, sizeof(*res));
	c.src = realpath(app->cfg.tree_dir, NULL);
	if (!c.src) {
		ret = err_set(ERR_NOTFOUND, "%s: %s", app->cfg.tree_dir,
			      strerror(errno));
		goto out;
	}
	c.log_path = xstrfmt("%s/log/coverage-%lld.log", app->cfg.var_dir, id);
	unlink(c.log_path);
	c.deadline = now_monotonic() +
		     (app->cfg.build_timeout > 0 ? app->cfg.build_timeout : 3600);
	if ((ret = repo_tree_of(r, base, c.base_tree)) < 0 ||
	    (ret = repo_tree_of(r, commit, c.cand_tree)) < 0 ||
	    (ret = load_entries(&c)) < 0 ||
	    (ret = guest_load(&g, app->cfg.build_dir)) < 0 ||
	    (ret = plan(&c, &g)) < 0)
		goto out;
	for (size_t a = 0; a < NARCH; a++)
		if ((ret = build_arch(&c, (int)a, &on_base)) < 0)
			goto out;
	judge(&c);
	for (size_t i = 0; i < c.ne && !res->failed; i++)
		if (!strcmp(c.e[i].status, "failed")) {
			res->failed = 1;
			res->error = xstrfmt("patch %lld: %s", c.e[i].patch_id,
					     c.e[i].detail.buf);
		}
	ret = store(&c, res);
	if (ret >= 0)
		say(&c, "coverage: %s%s%s (%.1f s)", res->summary,
		    res->failed ? "; BUILD FAILED: " : "",
		    res->failed ? res->error : "", now_monotonic() - t0);
out:
	if (on_base && repo_checkout(r, commit) < 0 && ret >= 0)
		ret = ERR_IO;
	guest_free(&g);
	cov_release(&c);
	return ret < 0 ? ret : 0;
}

/* ---- reading it back ---- */

