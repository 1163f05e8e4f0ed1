/* kbuild.c: candidate kernel builds: fragments -> checked .config -> make. */
#include "kbuild.h"
#include "buildcache.h"
#include "kconfig.h"
#include "guestconf.h"
#include "err.h"
#include "file.h"
#include "icecc.h"
#include "karch.h"
#include "sandbox.h"
#include "spawn.h"
#include "strbuf.h"
#include "strvec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HASH_FILE ".stableq-config-hash"
#define KUNIT_FILE ".stableq-kunit.config" /* the broad guest's KUnit part */
#define OBJECTS_FILE ".stableq-objects" /* objects of the last full build */
#define EXCERPT_ERRORS 8
#define EXCERPT_MAX 4096
#define TERM_GRACE_MS 10000 /* make cleans up after SIGTERM, then SIGKILL */

/* Reproducible outputs: the same sources give the same bzImage. */
static const char *const repro_env[] = {
	"KBUILD_BUILD_TIMESTAMP=Sun Jan  1 00:00:00 UTC 2023",
	"KBUILD_BUILD_USER=stableq",
	"KBUILD_BUILD_HOST=stableq",
	"KBUILD_BUILD_VERSION=1",
	/* set, even empty: no "+" appended to the release for a dirty tree */
	"LOCALVERSION=",
};

/* The tools a kernel build runs, and the Debian package of each. */
static const struct tool {
	const char *prog;
	const char *pkg;
} tools[] = {
	{"make", "make"},     {"gcc", "build-essential"},
	{"flex", "flex"},     {"bison", "bison"},
	{"bc", "bc"},	      {"perl", "perl"},
	{"ccache", "ccache"},
};

/* Log lines that mean a missing package, and the package. */
static const struct hint {
	const char *needle;
	const char *pkg;
} hints[] = {
	{"gelf.h: No such file", "libelf-dev"},
	{"libelf.h: No such file", "libelf-dev"},
	{"openssl/", "libssl-dev"},
	{"flex: not found", "flex"},
	{"bison: not found", "bison"},
	{"bc: not found", "bc"},
	{"ccache: not found", "ccache"},
	{"ccache: No such file", "ccache"},
	{"perl: not found", "perl"},
	{"gcc: not found", "build-essential"},
	{"gcc: No such file", "build-essential"},
	{"libcrypto", "libssl-dev"},
	{"cpio: not found", "cpio"},
	{"xz: not found", "xz-utils"},
	{"icecc: not found", "icecc"},
	{"icecc: No such file", "icecc"},
};

/* What LLVM=1 runs, and their Debian packages. */
static const char *const llvm_tools[] = { "clang", "ld.lld", "llvm-ar",
					  "llvm-nm", "llvm-objcopy" };
#define LLVM_PKGS "clang lld llvm"

/* The row of a cell's arch (karch.h), or NULL naming the ones kbuild builds. */
static const struct karch *arch_row(const char *name)
{
	const struct karch *a = karch_boot_find(name);

	if (!a)
		err_set(ERR_INVALID,
			"kernel build: arch '%s' is not one of: %s", name,
			karch_boot_names());
	return a;
}

static int is_clang(const char *compiler)
{
	return compiler && !strcmp(compiler, "clang");
}

void kbuild_result_release(struct kbuild_result *r)
{
	if (!r)
		return;
	free(r->bzimage);
	free(r->log_path);
	free(r->error);
	memset(r, 0, sizeof(*r));
}

char *kbuild_default_ccache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	const char *h = getenv("HOME");

	/* root builds as the build user, who cannot reach root's home */
	if (geteuid() == 0)
		return xstrdup("/var/cache/stableq/ccache");
	if (x && *x == '/')
		return xstrfmt("%s/stableq/ccache", x);
	return xstrfmt("%s/.cache/stableq/ccache", h && *h ? h : "/tmp");
}

static int in_path(const char *prog)
{
	return file_in_path(prog);
}

int kbuild_outputs_safe(const char *build, const char *const *files,
			size_t nfiles)
{
	for (size_t i = 0; i < nfiles; i++) {
		struct stat st;
		int fd = file_open_beneath(build, files[i], O_RDONLY);
		if (fd < 0)
			return err_prefix(fd, "the build's output");
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return err_set(ERR_INVALID,
				       "the build's output %s is not a file",
				       files[i]);
		}
		close(fd);
	}
	return 0;
}

int kbuild_have_tool(const char *prog)
{
	return in_path(prog);
}

char *kbuild_nm_var(const char *cross)
{
	char *nm = xstrfmt("%sgcc-nm", cross ? cross : "");
	char *var = in_path(nm) ? xstrfmt("NM=%s", nm) : NULL;

	free(nm);
	return var;
}

/* "14.0.6" >= "11.0.0", number by number. */
static int version_at_least(const char *have, const char *need)
{
	while (*have || *need) {
		long a = strtol(have, (char **)&have, 10);
		long b = strtol(need, (char **)&need, 10);
		if (a != b)
			return a > b;
		have += *have == '.';
		need += *need == '.';
		if ((*have && !(*have >= '0' && *have <= '9')) ||
		    (*need && !(*need >= '0' && *need <= '9')))
			break;
	}
	return 1;
}

/* The first line a command prints (its stdout), or NULL. */
static char *output_line(const char *const *argv, const char *const *env,
			 const char *cwd)
{
	struct spawn s = SPAWN_INIT;
	char *line = NULL;

	s.argv = argv;
	s.env = env;
	s.cwd = cwd;
	s.capture = 1;
	s.timeout_ms = 30000;
	if (spawn_run(&s) == 0 && s.status == 0)
		line = xstrndup(s.out.buf, strcspn(s.out.buf, "\n"));
	spawn_release(&s);
	err_clear();
	return line;
}

int kbuild_cell_vars(const struct kbuild_opts *o, struct strvec *xargs,
		     char **cc)
{
	const char *src = o->src_dir;
	const struct karch *a = arch_row(o->arch);
	const char *prefix = o->no_ccache ? "" : "ccache ";
	char *gcc;

	*cc = NULL;
	if (!a)
		return ERR_INVALID;
	if (o->compiler && *o->compiler && strcmp(o->compiler, "gcc") &&
	    !is_clang(o->compiler))
		return err_set(ERR_INVALID, "kernel build: compiler '%s' is "
					    "not one of: gcc clang",
			       o->compiler);
	if (!karch_is_host(a))
		strvec_pushf(xargs, "ARCH=%s", a->make_arch);
	if (!is_clang(o->compiler)) {
		gcc = xstrfmt("%sgcc", a->cross);
		if (!in_path(gcc)) {
			int ret = err_set(ERR_NOTFOUND,
					  "kernel build (%s/gcc): %s not found:"
					  " install the Debian package %s "
					  "(`make deps`)",
					  a->name, gcc, a->cross_pkg);
			free(gcc);
			return ret;
		}
		if (*a->cross)
			strvec_pushf(xargs, "CROSS_COMPILE=%s", a->cross);
		*cc = xstrfmt("CC=%s%s", prefix, gcc);
		free(gcc);
		return 0;
	}
	for (size_t i = 0; i < sizeof(llvm_tools) / sizeof(*llvm_tools); i++)
		if (!in_path(llvm_tools[i]))
			return err_set(ERR_NOTFOUND,
				       "kernel build (%s/clang): %s not found:"
				       " install the Debian packages " LLVM_PKGS
				       " (`make deps`)",
				       a->name, llvm_tools[i]);
	{
		const char *ver[] = { "clang", "-dumpversion", NULL };
		const char *min[] = { "sh", "scripts/min-tool-version.sh",
				      "llvm", NULL };
		char *srcarch = xstrfmt("SRCARCH=%s", a->srcarch);
		const char *env[] = { srcarch, NULL };
		char *have = output_line(ver, NULL, NULL);
		char *need = output_line(min, env, src);
		int ret = 0;
		if (have && need && !version_at_least(have, need))
			ret = err_set(ERR_NOTFOUND,
				      "kernel build (%s/clang): clang %s is "
				      "older than %s, this tree's minimum "
				      "(scripts/min-tool-version.sh llvm): "
				      "install a newer clang (Debian 12 has "
				      "14)",
				      a->name, have, need);
		free(srcarch);
		free(have);
		free(need);
		if (ret < 0)
			return ret;
	}
	strvec_push(xargs, "LLVM=1");
	*cc = xstrfmt("CC=%sclang", prefix);
	return 0;
}

int kbuild_compiler_id(const char *arch, const char *compiler, char **out)
{
	const struct karch *a = arch_row(arch);
	char *id = NULL, *cc;
	int ret;

	*out = NULL;
	if (!a)
		return ERR_INVALID;
	if (karch_is_host(a) && !is_clang(compiler))
		return buildcache_compiler_id(out);
	cc = is_clang(compiler) ? xstrdup("clang") : xstrfmt("%sgcc", a->cross);
	ret = buildcache_compiler_id_of(cc, &id);
	free(cc);
	if (ret < 0)
		return ret;
	*out = xstrfmt("%sarch %s%s\n", id, a->name,
		       is_clang(compiler) ? " LLVM=1" : "");
	free(id);
	return 0;
}

static int check_tools(int need_ccache)
{
	struct strbuf miss = STRBUF_INIT, pkgs = STRBUF_INIT;
	int ret = 0;

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (!need_ccache && !strcmp(tools[i].prog, "ccache"))
			continue;
		if (in_path(tools[i].prog))
			continue;
		strbuf_addf(&miss, "%s%s", miss.len ? ", " : "", tools[i].prog);
		if (!strstr(pkgs.buf, tools[i].pkg))
			strbuf_addf(&pkgs, " %s", tools[i].pkg);
	}
	if (miss.len)
		ret = err_set(ERR_NOTFOUND,
			      "kernel build: %s not found: install the Debian "
			      "package(s)%s (`make deps`)",
			      miss.buf, pkgs.buf);
	strbuf_release(&miss);
	strbuf_release(&pkgs);
	return ret;
}


static const char *hint_for(const char *line)
{
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if (strstr(line, hints[i].needle))
			return hints[i].pkg;
	return NULL;
}

char *kbuild_error_excerpt(const char *log, unsigned long offset)
{
	struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
	char *first_make = NULL, *last_make = NULL;
	const char *pkg = NULL;
	int nerr = 0, fd;

	fd = open(log, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (lseek(fd, (off_t)offset, SEEK_SET) == (off_t)offset)
			strbuf_read_fd(&text, fd, 64u << 20);
		close(fd);
	}
	for (char *p = text.buf; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (!pkg)
			pkg = hint_for(p);
		if (strstr(p, "make") && strstr(p, "*** ") &&
		    !strstr(p, "Waiting for unfinished jobs")) {
			if (!first_make)
				first_make = xstrdup(p);
			free(last_make);
			last_make = xstrdup(p);
		} else if ((strstr(p, "error:") || strstr(p, "Error:") ||
			    !strncmp(p, "bwrap: ", 7) ||
			    strstr(p, "undefined reference") ||
			    strstr(p, "is not clean")) &&
			   nerr < EXCERPT_ERRORS &&
			   out.len + strlen(p) < EXCERPT_MAX) {
			strbuf_addstr(&out, p);
			strbuf_addch(&out, '\n');
			nerr++;
		}
		p = nl ? nl + 1 : NULL;
	}
	/* the first names the target that failed, the last the exit */
	if (first_make && strcmp(first_make, last_make))
		strbuf_addf(&out, "%s\n", first_make);
	if (last_make)
		strbuf_addf(&out, "%s\n", last_make);
	if (pkg)
		strbuf_addf(
			&out,
			"hint: install the Debian package %s (`make deps`)\n",
			pkg);
	if (!out.len)
		strbuf_addstr(&out, "the build failed; see the log\n");
	strbuf_rtrim(&out);
	free(first_make);
	free(last_make);
	strbuf_release(&text);
	return strbuf_detach(&out, NULL);
}

/* The deepest directory holding both a and b (absolute paths). */
static char *common_parent(const char *a, const char *b)
{
	size_t i = 0, last = 0;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			last = i;
		i++;
	}
	if ((!a[i] || a[i] == '/') && (!b[i] || b[i] == '/'))
		last = i;
	return last ? xstrndup(a, last) : xstrdup("/");
}

/* The environment of every make: ccache and reproducible outputs. */
static void build_env(struct strvec *env, const struct kbuild_opts *o,
		      const char *ccdir, const char *base)
{
	/* in the sandbox the ccache is bound at a path of its own */
	strvec_pushf(env, "CCACHE_DIR=%s",
		     sandbox_on(o->sandbox) ? SANDBOX_CCACHE : ccdir);
	strvec_pushf(env, "CCACHE_BASEDIR=%s", base);
	strvec_pushl(env, "CCACHE_NOHASHDIR=true", "CCACHE_MAXSIZE=5G", NULL);
	/* on a farm, ccache hands its misses to icecc */
	if (icecc_enabled(o->icecc))
		strvec_push(env, "CCACHE_PREFIX=icecc");
	for (size_t i = 0; i < sizeof(repro_env) / sizeof(repro_env[0]); i++)
		strvec_push(env, repro_env[i]);
}

struct ctx {
	const struct kbuild_opts *o;
	struct kbuild_result *r;
	const char *const *env;
	struct sandbox_bind binds[6]; /* tree, fragments, icecc; build, ccache */
	char *icecc_dir;              /* where the icecc client finds iceccd */
	double deadline;
	char *cc;
	const char *const *xargs; /* the cell's: ARCH=, CROSS_COMPILE=, LLVM=1 */
	int count_objects;     /* this step reports progress */
	long objects, total;   /* compiled so far; of the last full build */
	unsigned long scan_off; /* the log read up to here */
};

/* Counts the objects kbuild reported in the log since the last call. */
static void scan_objects(struct ctx *c)
{
	struct strbuf sb = STRBUF_INIT;
	int fd = open(c->r->log_path, O_RDONLY | O_CLOEXEC);
	char *p, *nl;

	if (fd < 0)
		return;
	if (lseek(fd, (off_t)c->scan_off, SEEK_SET) == (off_t)c->scan_off)
		strbuf_read_fd(&sb, fd, 16u << 20);
	close(fd);
	/* whole lines only: a half-written one is read again next time */
	for (p = sb.buf; (nl = memchr(p, '\n', sb.len - (size_t)(p - sb.buf)));
	     p = nl + 1)
		if (!strncmp(p, "  CC ", 5) || !strncmp(p, "  AS ", 5))
			c->objects++;
	c->scan_off += (unsigned long)(p - sb.buf);
	strbuf_release(&sb);
	c->o->progress(c->o->progress_ctx, c->objects, c->total);
}

static long nobjects;

static int count_object(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	size_t l = strlen(path + ftw->base);

	(void)st;
	if (type == FTW_F && l > 2 && !strcmp(path + ftw->base + l - 2, ".o"))
		nobjects++;
	return FTW_CONTINUE;
}

/* Remembers how many objects a full build of build_dir has. */
static void save_object_count(const char *build)
{
	char *path = xstrfmt("%s/%s", build, OBJECTS_FILE);
	char *line;

	nobjects = 0;
	if (nftw(build, count_object, 32, FTW_PHYS | FTW_ACTIONRETVAL) == 0) {
		line = xstrfmt("%ld\n", nobjects);
		write_file_atomic(path, line, strlen(line));
		free(line);
	}
	free(path);
	err_clear();
}

static long saved_object_count(const char *build)
{
	char *path = xstrfmt("%s/%s", build, OBJECTS_FILE);
	struct strbuf sb = STRBUF_INIT;
	long n = 0;

	if (strbuf_read_file(&sb, path, 64) == 0)
		n = atol(sb.buf);
	err_clear();
	strbuf_release(&sb);
	free(path);
	return n > 0 ? n : 0;
}

/* One step through spawn, output to the log. 0 ok; ERR_* with a message. */
int kbuild_drop_broken_cmd(const char *build, const char *log,
			   unsigned long off)
{
	struct strbuf sb = STRBUF_INIT;
	int n = 0;

	if (strbuf_read_file(&sb, log, 0) < 0 || off > sb.len) {
		err_clear();
		strbuf_release(&sb);
		return 0;
	}
	for (char *l = sb.buf + off; l && *l;) {
		char *nl = strchr(l, '\n'), *cmd;
		if (nl)
			*nl = '\0';
		cmd = strstr(l, ".cmd:");
		if (cmd && strstr(cmd, ": *** ") && !strstr(l, "..") &&
		    *l != '/') {
			char *name = xstrndup(l, (size_t)(cmd - l) + 4);
			char *base = strrchr(name, '/');
			char *path = xstrfmt("%s/%s", build, name);
			/* "dir/.x.o.cmd" is the dependency file of "dir/x.o" */
			if (base && base[1] == '.') {
				char *obj = xstrfmt("%s/%.*s%.*s", build,
						    (int)(base + 1 - name), name,
						    (int)strlen(base + 2) - 4,
						    base + 2);
				unlink(obj);
				free(obj);
			}
			if (unlink(path) == 0)
				n++;
			free(path);
			free(name);
		}
		l = nl ? nl + 1 : NULL;
	}
	strbuf_release(&sb);
	return n;
}

/* One step in o->src_dir (cwd NULL) or cwd, through the sandbox. */
static int step_in(struct ctx *c, const char *what, const char *const *argv,
		   const char *cwd);

static int step(struct ctx *c, const char *what, const char *const *argv)
{
	return step_in(c, what, argv, NULL);
}

static int step_in(struct ctx *c, const char *what, const char *const *argv,
		   const char *cwd)
{
	struct spawn s = SPAWN_INIT;
	double left = c->deadline - now_monotonic();
	char *cmd = spawn_cmdline(argv);
	int ret, fd;

	fd = open(c->r->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		  0644);
	if (fd >= 0) {
		dprintf(fd, "stableq: %s: %s\n", what, cmd);
		close(fd);
	}
	if (left < 1) {
		c->r->timed_out = 1;
		ret = err_set(ERR_IO, "%s: no time left before the deadline",
			      what);
		goto out;
	}
	if ((ret = sandbox_check(c->o->sandbox, what)) < 0)
		goto out;
	s.argv = argv;
	s.env = c->env;
	s.cwd = cwd ? cwd : c->o->src_dir;
	s.log_path = c->r->log_path;
	s.sandbox = c->o->sandbox;
	s.binds = c->binds;
	/*
	 * Our own deadline, not spawn's SIGKILL: SIGTERM lets make delete the
	 * half-written objects (.DELETE_ON_ERROR) that would otherwise look
	 * up to date to the next build.
	 */
	if ((ret = spawn_start(&s)) < 0)
		goto out;
	double next_scan = now_monotonic() + 1;
	while ((ret = spawn_poll(&s, 0)) == 0) {
		if (c->count_objects && c->o->progress &&
		    now_monotonic() >= next_scan) {
			scan_objects(c);
			next_scan = now_monotonic() + 1;
		}
		if (now_monotonic() > c->deadline) {
			spawn_kill(&s, TERM_GRACE_MS);
			if (s.pid > 0)
				spawn_poll(&s, 1);
			c->r->timed_out = 1;
			ret = err_set(ERR_IO,
				      "%s: killed at the build deadline", what);
			goto out;
		}
		usleep(100 * 1000);
	}
	if (ret < 0)
		goto out;
	ret = s.status != 0
		      ? err_set(ERR_IO, "%s failed (status %d)", what, s.status)
		      : 0;
out:
	spawn_release(&s);
	free(cmd);
	return ret;
}

static int configure(struct ctx *c, const char *build, const char *odir)
{
	const char *cc = c->cc;
	char **frags = NULL;
	size_t nfrags = 0;
	char *dot = xstrfmt("%s/.config", build);
	char *hashf = xstrfmt("%s/%s", build, HASH_FILE);
	struct strbuf old = STRBUF_INIT;
	struct strvec argv = STRVEC_INIT;
	int ret;

	if (access(dot, F_OK) == 0 && strbuf_read_file(&old, hashf, 256) == 0) {
		strbuf_trim(&old);
		if (!strcmp(old.buf, c->r->config_hash)) {
			ret = 0;
			goto out;
		}
	}
	err_clear();
	unlink(hashf);
	c->r->reconfigured = 1;
	{
		const char *base = c->o->guest ? c->o->guest->base
					       : "tinyconfig";
		char *what = xstrfmt("make %s", base);
		char *words = xstrdup(base), *save = NULL;
		strvec_pushl(&argv, "make", odir, cc, NULL);
		strvec_pushv(&argv, c->xargs);
		for (char *w = strtok_r(words, " ", &save); w;
		     w = strtok_r(NULL, " ", &save))
			strvec_push(&argv, w);
		ret = step(c, what, argv.v);
		strvec_clear(&argv);
		free(words);
		free(what);
		if (ret < 0)
			goto out;
	}
	if ((ret = kconfig_fragments(c->o->config_dir, &frags, &nfrags)) < 0)
		goto out;
	/* through sh: a worktree may have lost the executable bit */
	strvec_push(&argv, "sh");
	strvec_pushf(&argv, "%s/scripts/kconfig/merge_config.sh",
		     c->o->src_dir);
	strvec_pushl(&argv, "-m", "-O", build, dot, NULL);
	for (size_t i = 0; i < nfrags; i++)
		strvec_pushf(&argv, "%s/%s", c->o->config_dir, frags[i]);
	if (c->o->guest && c->o->guest->kunit_tree) {
		struct strbuf k = STRBUF_INIT;
		char *kpath = xstrfmt("%s/%s", build, KUNIT_FILE);
		ret = guestconf_kunit(c->o->src_dir, c->o->kunit_deny, &k,
				      NULL, NULL);
		if (ret >= 0)
			ret = write_file_atomic(kpath, k.buf, k.len);
		strvec_push(&argv, kpath);
		strbuf_release(&k);
		free(kpath);
		if (ret < 0)
			goto out;
	}
	/* in the build directory: it makes its temp files in the current one */
	if ((ret = step_in(c, "merge_config.sh", argv.v, build)) < 0)
		goto out;
	{
		struct strvec b = STRVEC_INIT;
		strvec_pushl(&b, "make", odir, cc, NULL);
		strvec_pushv(&b, c->xargs);
		strvec_push(&b, "olddefconfig");
		ret = step(c, "make olddefconfig", b.v);
		strvec_clear(&b);
		if (ret < 0)
			goto out;
	}
	if ((ret = kconfig_verify(c->o->config_dir, dot, c->o->src_dir)) <
	    0)
		goto out;
	{
		char *line = xstrfmt("%s\n", c->r->config_hash);
		ret = write_file_atomic(hashf, line, strlen(line));
		free(line);
	}
out:
	strvec_clear(&argv);
	kconfig_fragments_free(frags, nfrags);
	strbuf_release(&old);
	free(dot);
	free(hashf);
	return ret;
}

/* make -j from the farm's slots; the log says where the number came from. */
static long farm_jobs(const char *log_path, const char *icecc, int cores)
{
	char *why = NULL;
	int n = icecc_make_jobs(icecc, cores, &why);
	int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0) {
		dprintf(fd, "stableq: icecc farm (%s): make -j%d%s%s\n", icecc,
			n, why ? ": " : "", why ? why : "");
		close(fd);
	}
	free(why);
	return n;
}

/*
 * The sandbox's view: the build user must reach the tree and fragments
 * (read where they are), owns the build directory and the ccache's
 * directories, and may write those two only.
 */
static int sandbox_paths(struct ctx *c, const char *src, const char *cfgdir,
			 const char *build, const char *ccdir)
{
	const struct sandbox *sb = c->o->sandbox;
	int ret;

	if (!sandbox_on(sb))
		return 0;
	if ((ret = sandbox_reach(sb, src)) < 0 ||
	    (cfgdir && (ret = sandbox_reach(sb, cfgdir)) < 0) ||
	    (ret = sandbox_reach(sb, build)) < 0 ||
	    (!c->o->no_ccache && (ret = sandbox_reach(sb, ccdir)) < 0) ||
	    (ret = sandbox_own(sb, build, 0)) < 0)
		return ret;
	size_t n = 0;
	c->binds[n++] = (struct sandbox_bind){ src, NULL, 1 };
	if (cfgdir)
		c->binds[n++] = (struct sandbox_bind){ cfgdir, NULL, 1 };
	/* iceccd's socket (connecting needs no writable mount): the default
	 * one under /run is visible; one in a directory of its own (icecc's
	 * ICECC_TEST_SOCKET, under /tmp) is bound */
	const char *sock = getenv("ICECC_TEST_SOCKET");
	if (icecc_enabled(c->o->icecc) && sock && *sock == '/') {
		c->icecc_dir = xstrdup(sock);
		*strrchr(c->icecc_dir, '/') = '\0';
		if (*c->icecc_dir)
			c->binds[n++] =
				(struct sandbox_bind){ c->icecc_dir, NULL, 1 };
	}
	c->binds[n++] = (struct sandbox_bind){ build, NULL, 0 };
	if (!c->o->no_ccache) {
		if ((ret = sandbox_own(sb, ccdir, 1)) < 0)
			return ret;
		c->binds[n++] = (struct sandbox_bind){ ccdir, SANDBOX_CCACHE, 0 };
	}
	return 0;
}

int kbuild_run(const struct kbuild_opts *o, struct kbuild_result *r)
{
	char *src = NULL, *build = NULL, *cfgdir = NULL, *ccdir = NULL;
	char *base = NULL, *odir = NULL, *jobs = NULL, *tmp = NULL;
	char *lockpath = NULL, *cellcc = NULL;
	int lockfd = -1;
	struct strvec env = STRVEC_INIT, xargs = STRVEC_INIT;
	const struct karch *ka = arch_row(o->arch);
	struct ctx c = {.o = o, .r = r};
	struct kbuild_opts abs;
	double t0 = now_monotonic();
	unsigned long log_off = 0;
	struct stat st;
	int ret;

	memset(r, 0, sizeof(*r));
	if (!o->src_dir || !o->build_dir || !o->config_dir)
		return err_set(ERR_INVALID, "kbuild: src_dir, build_dir and "
					    "config_dir are needed");
	tmp = xstrfmt("%s/Makefile", o->src_dir);
	if (access(tmp, R_OK) < 0) {
		ret = err_set(ERR_NOTFOUND,
			      "%s is not a kernel tree (no Makefile): run "
			      "`stableq tree init` (Debian package "
			      "linux-source-6.1)",
			      o->src_dir);
		goto out;
	}
	if ((ret = check_tools(!o->no_ccache)) < 0 ||
	    (ret = kbuild_cell_vars(o, &xargs, &cellcc)) < 0)
		goto out;
	if (icecc_enabled(o->icecc) && !in_path("icecc")) {
		ret = err_set(ERR_NOTFOUND,
			      "kernel build: icecc not found (the config sets "
			      "icecc = %s): install the Debian package icecc",
			      o->icecc);
		goto out;
	}
	if ((ret = sandbox_check(o->sandbox, "kernel build")) < 0)
		goto out;
	if ((ret = mkdir_p(o->build_dir)) < 0)
		goto out;
	src = realpath(o->src_dir, NULL);
	build = realpath(o->build_dir, NULL);
	cfgdir = realpath(o->config_dir, NULL);
	if (!src || !build || !cfgdir) {
		ret = err_set(ERR_NOTFOUND, "kbuild: %s: %s",
			      !src     ? o->src_dir
			      : !build ? o->build_dir
				       : o->config_dir,
			      strerror(errno));
		goto out;
	}
	abs = *o;
	abs.src_dir = src;
	abs.build_dir = build;
	abs.config_dir = cfgdir;
	c.o = &abs;
	/* two makes in one O= directory would corrupt it */
	lockpath = xstrfmt("%s/.stableq-lock", build);
	lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		ret = err_set(errno == EWOULDBLOCK ? ERR_CONFLICT : ERR_IO,
			      "%s: %s", lockpath,
			      errno == EWOULDBLOCK
				      ? "another build is using this directory"
				      : strerror(errno));
		goto out;
	}
	r->log_path = o->log_path ? xstrdup(o->log_path)
				  : xstrfmt("%s/stableq-build.log", build);
	{
		/* which worktree: a cell builds from its own (cell.h) */
		int lfd = open(r->log_path,
			       O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (lfd >= 0) {
			dprintf(lfd, "stableq: the source: %s\n", src);
			close(lfd);
		}
	}
	if (stat(r->log_path, &st) == 0)
		log_off = (unsigned long)st.st_size;
	if ((ret = guestconf_hash(o->guest ? o->guest
					    : guestconf_find("quick"),
				  o->arch, src, cfgdir, o->kunit_deny,
				  r->config_hash)) < 0)
		goto out;

	ccdir = o->ccache_dir && *o->ccache_dir ? xstrdup(o->ccache_dir)
						: kbuild_default_ccache_dir();
	if (!o->no_ccache && (ret = mkdir_p(ccdir)) < 0)
		goto out;
	if ((ret = sandbox_paths(&c, src, cfgdir, build, ccdir)) < 0)
		goto out;
	base = common_parent(src, build);
	build_env(&env, o, ccdir, base);
	c.env = env.v;
	c.deadline = t0 + (o->timeout_s > 0 ? o->timeout_s : 3600);
	c.cc = xstrdup(o->no_ccache ? (icecc_enabled(o->icecc) ? "CC=icecc gcc"
							      : "CC=gcc")
				    : "CC=ccache gcc");
	if (!karch_is_host(ka) || is_clang(o->compiler)) {
		free(c.cc); /* another cell's compiler, never on the farm */
		c.cc = cellcc;
		cellcc = NULL;
	}
	c.xargs = (const char *const *)xargs.v;
	odir = xstrfmt("O=%s", build);

	ret = configure(&c, build, odir);
	if (ret == ERR_INVALID)
		goto out; /* a fragment is wrong: the caller's error */
	if (ret < 0)
		goto failed;
	if (o->config_only) {
		r->ok = 1;
		goto out;
	}

	long nj = o->jobs > 0 ? o->jobs : sysconf(_SC_NPROCESSORS_ONLN);
	if (o->jobs <= 0 && icecc_enabled(o->icecc))
		nj = farm_jobs(r->log_path, o->icecc, (int)nj);
	jobs = xstrfmt("-j%ld", nj > 0 ? nj : 1);
	{
		struct strvec av = STRVEC_INIT;
		char *nm = is_clang(o->compiler) ? NULL
						 : kbuild_nm_var(ka->cross);
		strvec_pushl(&av, "make", odir, jobs, c.cc, NULL);
		strvec_pushv(&av, c.xargs);
		if (nm)
			strvec_push(&av, nm);
		free(nm);
		for (size_t i = 0; o->make_vars && o->make_vars[i]; i++)
			strvec_push(&av, o->make_vars[i]);
		strvec_pushl(&av, ka->target, "modules", NULL);
		const char *const *a = (const char *const *)av.v;
		struct stat lst;
		c.count_objects = 1;
		c.total = saved_object_count(build);
		c.scan_off = stat(r->log_path, &lst) == 0
				     ? (unsigned long)lst.st_size
				     : 0;
		unsigned long from = c.scan_off; /* scan_objects() moves it */
		char *what = xstrfmt("make %s modules", ka->target);
		ret = step(&c, what, a);
		/* a build killed while fixdep wrote a .cmd file leaves it cut
		 * short, and every later make stops on it: drop it, once */
		if (ret < 0 && !r->timed_out &&
		    kbuild_drop_broken_cmd(build, r->log_path, from) > 0)
		{
			char *again = xstrfmt("%s (again)", what);
			ret = step(&c, again, a);
			free(again);
		}
		free(what);
		c.count_objects = 0;
		strvec_clear(&av);
		if (o->progress)
			scan_objects(&c);
		if (ret < 0)
			goto failed;
	}
	r->bzimage = xstrfmt("%s/%s", build, ka->image);
	if (access(r->bzimage, R_OK) < 0) {
		free(r->bzimage);
		r->bzimage = NULL;
		err_set(ERR_IO, "make succeeded but left no %s", ka->target);
		goto failed;
	}
	r->ok = 1;
	if (o->progress)
		save_object_count(build);
	ret = 0;
	goto out;
failed:
	/* the build ran and failed: a result, not an error */
	{
		struct strbuf e = STRBUF_INIT;
		char *ex = kbuild_error_excerpt(r->log_path, log_off);
		strbuf_addf(&e, "%s\n%s", err_msg(), ex);
		r->error = strbuf_detach(&e, NULL);
		free(ex);
	}
	ret = 0;
out:
	r->seconds = now_monotonic() - t0;
	if (ret < 0 && !r->error)
		r->error = xstrdup(err_msg());
	free(src);
	free(build);
	free(cfgdir);
	free(ccdir);
	free(base);
	free(odir);
	free(jobs);
	free(tmp);
	strvec_clear(&env);
	strvec_clear(&xargs);
	free(cellcc);
	free(c.cc);
	free(c.icecc_dir);
	if (lockfd >= 0)
		close(lockfd); /* releases the lock */
	free(lockpath);
	return ret;
}

int kbuild_make(const struct kbuild_opts *o, const char *const *argv,
		const char *const *extra_env, double deadline, int *timed_out)
{
	struct kbuild_result r = { 0 };
	struct ctx c = { .o = o, .r = &r, .deadline = deadline };
	struct strvec env = STRVEC_INIT;
	char *ccdir = NULL, *base = NULL;
	char *src = realpath(o->src_dir, NULL), *build = NULL;
	int ret;

	*timed_out = 0;
	if (!src || mkdir_p(o->build_dir) < 0 ||
	    !(build = realpath(o->build_dir, NULL))) {
		ret = err_set(ERR_NOTFOUND, "kbuild: %s: %s",
			      src ? o->build_dir : o->src_dir, strerror(errno));
		goto out;
	}
	ccdir = o->ccache_dir && *o->ccache_dir ? xstrdup(o->ccache_dir)
						: kbuild_default_ccache_dir();
	if ((ret = sandbox_check(o->sandbox, argv[0])) < 0 ||
	    (ret = mkdir_p(ccdir)) < 0 ||
	    (ret = sandbox_paths(&c, src, NULL, build, ccdir)) < 0)
		goto out;
	base = common_parent(src, build);
	build_env(&env, o, ccdir, base);
	strvec_pushv(&env, extra_env);
	c.env = env.v;
	r.log_path = (char *)o->log_path;
	ret = step(&c, argv[0], argv);
	*timed_out = r.timed_out;
	if (ret < 0 && !r.timed_out && strstr(err_msg(), "failed (status"))
		ret = 1; /* it ran and failed: the caller reads the log */
out:
	free(src);
	free(build);
	free(ccdir);
	free(base);
	free(c.icecc_dir);
	strvec_clear(&env);
	return ret;
}
