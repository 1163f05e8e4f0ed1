/* coverage-plan.c: build coverage's plan: for each touched file, the objects of which build compile it (the guest build, a broad config), or why none does. */
#include "coverage.h"
#include "coverage-int.h"
#include "err.h"
#include "kbuild.h"
#include "spawn.h"
#include "strbuf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void entry_add_obj(struct entry *e, const char *target)
{
	for (size_t i = 0; i < e->nobjs; i++)
		if (!strcmp(e->objs[i], target))
			return;
	e->objs = xrealloc(e->objs, (e->nobjs + 1) * sizeof(*e->objs));
	e->objs[e->nobjs++] = xstrdup(target);
}

struct obj *cov_obj_find(struct cov *c, int arch, int clang,
			 const char *target)
{
	for (size_t i = 0; i < c->no; i++)
		if (c->o[i].arch == arch && c->o[i].clang == clang &&
		    !strcmp(c->o[i].target, target))
			return &c->o[i];
	return NULL;
}

static void obj_want(struct cov *c, int arch, int clang, const char *target)
{
	if (cov_obj_find(c, arch, clang, target))
		return;
	if (c->no == c->ocap) {
		c->ocap = c->ocap ? 2 * c->ocap : 16;
		c->o = xrealloc(c->o, c->ocap * sizeof(*c->o));
	}
	c->o[c->no++] = (struct obj){ .target = xstrdup(target),
				      .arch = arch,
				      .clang = clang };
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
	if (cov_ends_with(b, ".c"))
		return K_C;
	if (cov_ends_with(b, ".S") && !cov_ends_with(b, ".lds.S"))
		return K_ASM;
	if (cov_ends_with(b, ".h"))
		return K_HEADER;
	if (cov_ends_with(b, ".dts") || cov_ends_with(b, ".dtsi"))
		return K_DTS;
	return K_OTHER;
}

/* The karch_table index of arch/X/..., 0 (x86) for the rest; -1: unknown X. */
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
	for (size_t i = 0; i < KARCH_N; i++)
		if (strlen(karch_table[i].srcarch) == *len &&
		    !strncmp(karch_table[i].srcarch, s, *len))
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
	gcc = xstrfmt("%sgcc", karch_table[a].cross);
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
			if (cov_ends_with(p, ".ko")) {
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
		if (de->d_name[0] == '.' || !cov_ends_with(de->d_name, ".c"))
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
		if (path && cov_ends_with(path, ".c")) {
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
	rt->arch = karch_table[0].cov_config;
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
	rt->arch = karch_table[*arch].cov_config;
	if (!arch_usable(*arch)) {
		rt->status = "not-built";
		rt->why = xstrfmt("arch/%s needs the cross compiler %sgcc:"
				  " the Debian package %s is not installed",
				  karch_table[*arch].srcarch,
				  karch_table[*arch].cross,
				  karch_table[*arch].cross_pkg);
		return -1;
	}
	if (*kind == K_C || *kind == K_ASM)
		rt->object = object_of(path);
	if (*kind == K_DTS) {
		const char *rel = strstr(path, "/boot/dts/");
		if (cov_ends_with(path, ".dtsi") || !rel) {
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
	const char *guest_build = c->bc->cfg.build_dir;
	char *gb = realpath(guest_build, NULL);
	struct coverage_route rt = { 0 };
	int ret = 0;

	for (size_t i = 0; i < c->ne; i++) {
		struct entry *e = &c->e[i];

		coverage_route_release(&rt);
		if (route(e->path, &rt, &e->kind, &e->arch) < 0) {
			cov_entry_set(e, cov_status_parse(rt.status), NULL,
				      "%s", rt.why);
			continue;
		}
		switch (e->kind) {
		case K_C:
		case K_ASM:
			if (!e->arch && guest_has(g, rt.object))
				cov_entry_set(e, CS_BOOTED, "guest", NULL);
			entry_add_obj(e, rt.object);
			break;
		case K_HEADER: {
			char *o = e->arch || !gb ? NULL
						 : guest_includer(g, gb, c->src,
								  e->path);
			if (o) {
				cov_entry_set(e, CS_BOOTED, "guest", NULL);
				entry_add_obj(e, o);
				free(o);
				break;
			}
			if ((ret = header_objects(c, e)) < 0)
				goto out;
			if (!e->nobjs)
				cov_entry_set(e, CS_NOT_BUILT, NULL,
					  "no .c file of %s includes it by the"
					  " name \"%s\"",
					  e->arch ? karch_table[e->arch].srcarch
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
		if (e->status == CS_NONE || e->status == CS_BOOTED) {
			/* booted objects are the guest build's; others wait */
			if (e->status)
				continue;
			for (size_t j = 0; j < e->nobjs; j++)
				obj_want(c, e->arch, 0, e->objs[j]);
		}
	}
out:
	coverage_route_release(&rt);
	free(gb);
	return ret;
}

int cov_plan(struct cov *c, const char *build_dir)
{
	struct guest g = { 0 };
	int ret = guest_load(&g, build_dir);

	if (ret >= 0)
		ret = plan(c, &g);
	guest_free(&g);
	return ret;
}

int cov_clang_arch(int a)
{
	return a >= 0 && a < KARCH_N && karch_table[a].image;
}

/*
 * Whether e gets a clang twin: an arch clang builds, objects to compile
 * (a .dtb is dtc's, not the compiler's) or the config step. A file in the
 * booted kernel too: the guest build compiled it with gcc only, and its
 * new clang warnings count as any file's (its failure: cov_fails()).
 */
static int wants_clang(const struct entry *e)
{
	if (e->kind == K_DTS || !cov_clang_arch(e->arch))
		return 0;
	if (e->status != CS_NONE && e->status != CS_BOOTED)
		return 0;
	return e->nobjs > 0 || e->config_step;
}

void cov_plan_clang(struct cov *c)
{
	struct entry *e;
	size_t n = 0, cap = 2 * c->ne + 1;

	if (!c->clang)
		return;
	e = xcalloc(cap, sizeof(*e));
	for (size_t i = 0; i < c->ne; i++) {
		struct entry *g = &c->e[i];
		e[n++] = *g; /* moved: the strbufs and objects go with it */
		if (!wants_clang(g))
			continue;
		struct entry *t = &e[n++];
		*t = (struct entry){
			.patch_id = g->patch_id,
			.path = xstrdup(g->path),
			.kind = g->kind,
			.arch = g->arch,
			.clang = 1,
			.booted = g->status == CS_BOOTED,
			.detail = STRBUF_INIT,
			.warnings = STRBUF_INIT,
			.config_step = g->config_step,
		};
		for (size_t j = 0; j < g->nobjs; j++) {
			entry_add_obj(t, g->objs[j]);
			obj_want(c, t->arch, 1, g->objs[j]);
		}
	}
	free(c->e);
	c->e = e;
	c->ne = n;
	c->cap = cap;
}
