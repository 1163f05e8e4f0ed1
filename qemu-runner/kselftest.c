/* kselftest.c: kselftests of the candidate's tree: build, cache, guest tests, the files they need. */
#include "kselftest.h"
#include "err.h"
#include "file.h"
#include "karch.h"
#include "log.h"
#include "sandbox.h"
#include "spawn.h"
#include "strbuf.h"
#include "strvec.h"

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MANIFEST "manifest"
#define ERROR_MAX 4096
#define MAX_TESTS_PER_TARGET 500


/*
 * The arches kselftests are built for: the rows of lib/karch.h that boot,
 * their ksft_* fields. x86_64 is the host's: plain make and gcc, the
 * host's loader and libraries, bash. Another arch is cross-built (ARCH=,
 * CROSS_COMPILE=; its uapi headers installed for it) and its programs take
 * their loader and libraries from the cross compiler's sysroot (Debian's
 * libc6-ARCH-cross), put in the guest's /lib; bash and its libtinfo come
 * from the arch's Debian packages that `make deps` unpacks into the guest
 * userland's root (KARCH_ARM64_ROOT, as busybox). ksft_target is the
 * arch's own selftests directory: a section's target that is another
 * arch's own is built as this arch's (x86 as arm64).
 */

/* The row of name (NULL or "": x86_64); NULL with err_msg() if none. */
static const struct karch *ksft_arch_find(const char *name)
{
	const struct karch *a = karch_boot_find(name);

	if (!a)
		err_set(ERR_INVALID, "kselftest: no cross build for arch '%s'",
			name);
	return a;
}

/* The target a section's name is built as for a: another arch's own
 * directory becomes a's own. */
static const char *target_for(const struct karch *a, const char *name)
{
	for (size_t i = 0; a && i < KARCH_N && karch_table[i].image; i++)
		if (&karch_table[i] != a &&
		    !strcmp(karch_table[i].ksft_target, name))
			return a->ksft_target;
	return name;
}

/* 1 when a's guest can have bash: the host's, or the arch's unpacked */
static int has_bash(const struct karch *a)
{
	return !a->ksft_bash || access(a->ksft_bash, R_OK) == 0;
}

/* 1 when a's cross build has its libraries' headers (`make deps`) */
static int has_include(const struct karch *a)
{
	struct stat st;

	return a->ksft_include && stat(a->ksft_include, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

static void test_free(struct kselftest_test *t)
{
	free(t->name);
	free(t->why);
}

static void target_free(struct kselftest_target *t)
{
	free(t->name);
	free(t->error);
	for (size_t i = 0; i < t->ntests; i++)
		test_free(&t->tests[i]);
	free(t->tests);
}

void kselftest_build_release(struct kselftest_build *b)
{
	if (!b)
		return;
	free(b->dir);
	free(b->note);
	for (size_t i = 0; i < b->ntargets; i++)
		target_free(&b->targets[i]);
	free(b->targets);
	memset(b, 0, sizeof(*b));
}

/* --- the key ------------------------------------------------------------ */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file under path (sorted, symlinks as their target) into md. */
static int hash_tree(EVP_MD_CTX *md, const char *root, const char *rel)
{
	char *path = xstrfmt("%s/%s", root, rel);
	struct stat st;
	int ret = 0;

	if (lstat(path, &st) < 0) {
		/* an older tree may not have every path: that is its state */
		EVP_DigestUpdate(md, "-", 1);
		EVP_DigestUpdate(md, rel, strlen(rel) + 1);
		goto out;
	}
	EVP_DigestUpdate(md, rel, strlen(rel) + 1);
	if (S_ISLNK(st.st_mode)) {
		char t[PATH_MAX];
		ssize_t l = readlink(path, t, sizeof(t));
		if (l > 0)
			EVP_DigestUpdate(md, t, (size_t)l);
		EVP_DigestUpdate(md, "L", 1);
	} else if (S_ISREG(st.st_mode)) {
		char buf[65536], sz[32];
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t r;
		if (fd < 0) {
			ret = err_set(ERR_IO, "%s: %s", path, strerror(errno));
			goto out;
		}
		snprintf(sz, sizeof(sz), "%lld%c", (long long)st.st_size,
			 (st.st_mode & 0111) ? 'x' : 'f');
		EVP_DigestUpdate(md, sz, strlen(sz) + 1);
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			EVP_DigestUpdate(md, buf, (size_t)r);
		close(fd);
	} else if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		char **names = NULL;
		size_t n = 0;
		if (!d) {
			ret = err_set(ERR_IO, "%s: %s", path, strerror(errno));
			goto out;
		}
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xstrdup(de->d_name);
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp_names);
		EVP_DigestUpdate(md, "D", 1);
		for (size_t i = 0; i < n; i++) {
			char *sub = xstrfmt("%s/%s", rel, names[i]);
			if (ret == 0)
				ret = hash_tree(md, root, sub);
			free(sub);
			free(names[i]);
		}
		free(names);
	}
out:
	free(path);
	return ret;
}

/* The cache key of the state of src_dir (see above); 0 or negative. */
static int kselftest_key(const char *src_dir, const struct karch *a,
			 const char *const *targets, size_t ntargets,
			 const char *compiler_id, char key[65])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned int hl = 0;
	int ret = 0;

	key[0] = '\0';
	if (!md)
		return err_set(ERR_IO, "kselftest: no sha256 context");
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	EVP_DigestUpdate(md, "stableq kselftest 1", 20);
	/* x86_64's key is as it was before other arches */
	if (!karch_is_host(a)) {
		/* and whether its bash scripts run: see cannot_run() */
		EVP_DigestUpdate(md, a->name, strlen(a->name) + 1);
		EVP_DigestUpdate(md, has_bash(a) ? "bash" : "-", 2);
		/* the libraries' headers (libcap, ...: which targets link),
		 * when unpacked; a key without them is as it was */
		if (has_include(a))
			ret = hash_tree(md, a->ksft_include, ".");
	}
	EVP_DigestUpdate(md, compiler_id ? compiler_id : "",
			 strlen(compiler_id ? compiler_id : "") + 1);
	for (size_t i = 0; i < ntargets; i++)
		EVP_DigestUpdate(md, targets[i], strlen(targets[i]) + 1);
	/* what determines the build, besides the targets and the compiler
	 * (in this order: the keys of builds made before stay) */
	const char *const paths[] = {
		"tools/testing/selftests",    "tools/include",
		"include/uapi",		      a->ksft_uapi[0],
		a->ksft_uapi[1],	      "scripts/headers_install.sh",
		"scripts/unifdef.c",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && ret == 0;
	     i++)
		ret = hash_tree(md, src_dir, paths[i]);
	EVP_DigestFinal_ex(md, h, &hl);
	EVP_MD_CTX_free(md);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < hl && i < 32; i++)
		snprintf(key + 2 * i, 3, "%02x", h[i]);
	return 0;
}

/* --- the manifest: what an entry holds ------------------------------------ */

/*
 * One line each, tab-separated (names never hold tabs; an error's newlines
 * are kept in TARGET.error beside it):
 *   target NAME ok|failed
 *   test NAME PROGRAM [WHY]
 */
static struct kselftest_target *target_add(struct kselftest_build *b,
					   const char *name)
{
	struct kselftest_target *t;

	b->targets = xrealloc(b->targets,
			      (b->ntargets + 1) * sizeof(*b->targets));
	t = &b->targets[b->ntargets++];
	memset(t, 0, sizeof(*t));
	t->name = xstrdup(name);
	return t;
}

static struct kselftest_target *target_find(const struct kselftest_build *b,
					    const char *name)
{
	for (size_t i = 0; b && i < b->ntargets; i++)
		if (!strcmp(b->targets[i].name, name))
			return &b->targets[i];
	return NULL;
}

static void test_add(struct kselftest_target *t, const char *name,
		     const char *why)
{
	t->tests = xrealloc(t->tests, (t->ntests + 1) * sizeof(*t->tests));
	t->tests[t->ntests].name = xstrdup(name);
	t->tests[t->ntests].why = why && *why ? xstrdup(why) : NULL;
	t->ntests++;
}

static int manifest_write(const char *dir, const struct kselftest_build *b)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/" MANIFEST, dir);
	int ret = 0;

	for (size_t i = 0; i < b->ntargets && ret == 0; i++) {
		const struct kselftest_target *t = &b->targets[i];
		strbuf_addf(&sb, "target\t%s\t%s\n", t->name,
			    t->built ? "ok" : "failed");
		for (size_t k = 0; k < t->ntests; k++)
			strbuf_addf(&sb, "test\t%s\t%s\t%s\n", t->name,
				    t->tests[k].name,
				    t->tests[k].why ? t->tests[k].why : "");
		if (!t->built) {
			char *e = xstrfmt("%s/%s.error", dir, t->name);
			ret = write_file_atomic(e, t->error ? t->error : "",
						t->error ? strlen(t->error) : 0);
			free(e);
		}
	}
	if (ret == 0)
		ret = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	free(path);
	return ret;
}

static int manifest_read(const char *dir, struct kselftest_build *b)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/" MANIFEST, dir);
	int ret = 0;

	if (strbuf_read_file(&sb, path, 8u << 20) < 0) {
		ret = err_set(ERR_NOTFOUND, "%s: %s", path, strerror(errno));
		goto out;
	}
	for (char *line = sb.buf, *nl; line && *line; line = nl) {
		char *f[4] = {0};
		size_t nf = 0;
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		for (char *s = line; s && nf < 4; nf++) {
			f[nf] = s;
			s = strchr(s, '\t');
			if (s)
				*s++ = '\0';
		}
		if (nf >= 3 && !strcmp(f[0], "target")) {
			struct kselftest_target *t = target_add(b, f[1]);
			t->built = !strcmp(f[2], "ok");
			if (!t->built) {
				struct strbuf e = STRBUF_INIT;
				char *ep = xstrfmt("%s/%s.error", dir, f[1]);
				if (strbuf_read_file(&e, ep, ERROR_MAX * 2) < 0)
					strbuf_addstr(&e, "(its error is lost)");
				t->error = strbuf_detach(&e, NULL);
				free(ep);
			}
		} else if (nf >= 3 && !strcmp(f[0], "test")) {
			struct kselftest_target *t = target_find(b, f[1]);
			if (t)
				test_add(t, f[2], nf > 3 ? f[3] : NULL);
		}
	}
out:
	strbuf_release(&sb);
	free(path);
	return ret;
}

/* --- building ------------------------------------------------------------- */

/* The row of name, the host's when there is none: the arch o builds for
 * (kselftest_prepare() refused an unknown one) or a build was made for. */
static const struct karch *arch_or_host(const char *name)
{
	const struct karch *a = karch_boot_find(name);

	if (!a)
		err_clear();
	return a ? a : &karch_table[0];
}

static const struct karch *arch_of(const struct kselftest_opts *o)
{
	return arch_or_host(o->arch);
}

/* ARCH= and CROSS_COMPILE= of a cross build; nothing for the host's. */
static void arch_vars(const struct karch *a, struct strvec *argv)
{
	if (karch_is_host(a))
		return;
	strvec_pushf(argv, "ARCH=%s", a->make_arch);
	strvec_pushf(argv, "CROSS_COMPILE=%s", a->cross);
}

/*
 * A target's make, for a: ARCH= and CROSS_COMPILE= (arch_vars()), and for a
 * cross build where it finds the libraries its targets link against
 * (-lcap, -lcap-ng, -lpopt, -lnuma): their headers, and the dirs the
 * guest's loader takes them from, through lib.mk's USERCFLAGS and
 * USERLDFLAGS (a target's own CFLAGS and LDLIBS stay; a dir not there is
 * skipped by gcc and ld), and MACHINE= for 6.1's vm, which otherwise
 * takes the host's `uname -m`.
 */
static void target_vars(const struct karch *a, struct strvec *argv)
{
	struct strbuf sb = STRBUF_INIT;

	arch_vars(a, argv);
	if (karch_is_host(a))
		return;
	if (a->ksft_machine)
		strvec_pushf(argv, "MACHINE=%s", a->ksft_machine);
	if (a->ksft_include)
		strvec_pushf(argv, "USERCFLAGS=-isystem %s", a->ksft_include);
	for (size_t i = 0; i < sizeof(a->ksft_libs) / sizeof(*a->ksft_libs) &&
			   a->ksft_libs[i];
	     i++)
		strbuf_addf(&sb, "%s-L%s", i ? " " : "", a->ksft_libs[i]);
	if (sb.len)
		strvec_pushf(argv, "USERLDFLAGS=%s", sb.buf);
	strbuf_release(&sb);
}

/*
 * The kselftest sections' targets as built for a (another arch's own
 * directory as a's: *note says so) and their timeouts, in file order.
 */
static int section_targets(const char *tests_file, const char *guest,
			   const struct karch *a, struct strvec *names,
			   int **timeouts, char **note)
{
	struct test_def *tests = NULL;
	size_t n = 0;
	int ret = testset_load(tests_file, &tests, &n);

	*timeouts = NULL;
	if (ret < 0)
		return ret;
	testset_for_guest(tests, &n, guest);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; tests[i].kind == TEST_KSELFTEST &&
				   k < tests[i].ntargets;
		     k++) {
			const char *t = target_for(a, tests[i].targets[k]);
			int dup = 0;
			if (t != tests[i].targets[k] && !*note)
				*note = xstrfmt("%s built as %s",
						tests[i].targets[k], t);
			for (size_t j = 0; j < names->nr; j++)
				dup |= !strcmp(names->v[j], t);
			if (dup)
				continue; /* x86 and arm64 both named */
			*timeouts = xrealloc(*timeouts, (names->nr + 1) *
							       sizeof(**timeouts));
			(*timeouts)[names->nr] = tests[i].timeout;
			strvec_push(names, t);
		}
	testset_free(tests, n);
	return 0;
}

/* The lines of make's output that say what broke, at most ERROR_MAX bytes. */
static char *error_excerpt(const struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s = out->buf;

	while (s && *s && sb.len < ERROR_MAX) {
		const char *nl = strchr(s, '\n');
		size_t l = nl ? (size_t)(nl - s) : strlen(s);
		if (memmem(s, l, "error", 5) || memmem(s, l, "Error", 5) ||
		    memmem(s, l, "undefined reference", 19))
			strbuf_addf(&sb, "%.*s\n", (int)(l > 400 ? 400 : l), s);
		s = nl ? nl + 1 : NULL;
	}
	if (!sb.len) {
		/* no line says error: the tail says what happened */
		size_t from = out->len > 1500 ? out->len - 1500 : 0;
		strbuf_add(&sb, out->buf + from, out->len - from);
	}
	strbuf_rtrim(&sb);
	return strbuf_detach(&sb, NULL);
}

/* make, in o->sandbox: writing build_dir, stage (may be NULL), the ccache */
static int run_make(const struct kselftest_opts *o, const char *stage,
		    const char *const *argv, struct strbuf *out, int *status)
{
	struct spawn s = SPAWN_INIT;
	struct strvec env = STRVEC_INIT;
	struct sandbox_bind binds[5] = { { o->build_dir, NULL, 0 },
					 { o->src_dir, NULL, 1 } };
	size_t nb = 2;
	int ret;

	if ((ret = sandbox_check(o->sandbox, "kselftest build")) < 0)
		return ret;
	if (o->ccache_dir && *o->ccache_dir) {
		if (sandbox_on(o->sandbox)) {
			strvec_push(&env, "CCACHE_DIR=" SANDBOX_CCACHE);
			binds[nb++] = (struct sandbox_bind){ o->ccache_dir,
							     SANDBOX_CCACHE, 0 };
		} else {
			strvec_pushf(&env, "CCACHE_DIR=%s", o->ccache_dir);
		}
	}
	if (stage)
		binds[nb++] = (struct sandbox_bind){ stage, NULL, 0 };
	if (nb > 2 && binds[2].at &&
	    (ret = sandbox_own(o->sandbox, o->ccache_dir, 1)) < 0)
		return ret;
	s.sandbox = o->sandbox;
	s.binds = binds;
	s.argv = argv;
	s.env = env.v;
	s.capture = 1;
	s.capture_max = 256 * 1024;
	s.timeout_ms = (o->timeout_s > 0 ? o->timeout_s : 1800) * 1000;
	ret = spawn_run(&s);
	if (ret == ERR_NOTFOUND && !sandbox_on(o->sandbox))
		err_set(ret, "make not found: install the Debian package "
			     "build-essential (`make deps`)");
	if (ret == 0) {
		*status = s.timed_out ? 124 : s.status;
		if (o->log_path) {
			FILE *f = fopen(o->log_path, "a");
			if (f) {
				char *cmd = spawn_cmdline(argv);
				fprintf(f, "$ %s\n%s\n", cmd, s.out.buf);
				free(cmd);
				fclose(f);
			}
		}
		if (s.timed_out)
			strbuf_addf(&s.out, "\nstopped after %d s\n",
				    o->timeout_s > 0 ? o->timeout_s : 1800);
		strbuf_addbuf(out, &s.out);
	}
	spawn_release(&s);
	strvec_clear(&env);
	return ret;
}

/* A program name from a Makefile is safe on a shell line and in a path. */
static int valid_program(const char *s)
{
	size_t len = strlen(s);

	if (!len || len > 100 || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._+-", s[i]))
			return 0;
	return 1;
}

/* NULL if the guest runs path; else why not. Sets *bash for bash scripts. */
static char *cannot_run(const struct karch *a, const char *path, int *bash)
{
	char head[128] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return xstrdup("not installed as a file");
	}
	r = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (r < 0)
		r = 0;
	head[r] = '\0';
	if (r >= 4 && !memcmp(head, ELFMAG, SELFMAG))
		return NULL;
	if (strncmp(head, "#!", 2))
		return xstrdup("neither a program nor a script");
	char *interp = head + 2;
	interp += strspn(interp, " \t");
	interp[strcspn(interp, "\n")] = '\0';
	if (!strncmp(interp, "/usr/bin/env", 12) &&
	    (interp[12] == ' ' || interp[12] == '\t')) {
		interp += 12;
		interp += strspn(interp, " \t");
	}
	char *word = interp;
	word[strcspn(word, " \t")] = '\0';
	const char *base = strrchr(word, '/') ? strrchr(word, '/') + 1 : word;
	if (!strcmp(base, "sh"))
		return NULL;
	if (!strcmp(base, "bash") && !has_bash(a))
		return xstrfmt("a bash script: the %s guest has no bash (`make "
			       "deps` unpacks Debian's bash:%s)", a->name,
			       a->name);
	if (!strcmp(base, "bash")) {
		*bash = 1;
		return NULL;
	}
	return xstrfmt("a %.40s script: the guest has no %.40s", base, base);
}

/* The target's tests, from `make emit_tests`, checked against what got
 * installed. */
static void list_tests(const struct kselftest_opts *o, const char *tdir,
		       const char *outdir, const char *entry,
		       struct kselftest_target *t, int *bash)
{
	struct strbuf out = STRBUF_INIT;
	struct strvec argv = STRVEC_INIT;
	const struct karch *a = arch_of(o);
	int status = 0;

	strvec_pushl(&argv, "make", "-s", "--no-print-directory", "-C", tdir,
		     NULL);
	target_vars(a, &argv); /* the arch's list of tests */
	strvec_pushf(&argv, "OUTPUT=%s", outdir);
	strvec_push(&argv, "emit_tests");
	if (run_make(o, NULL, argv.v, &out, &status) < 0 || status != 0) {
		err_clear();
		goto out;
	}
	for (char *line = out.buf, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		char *name = strrchr(line, ':');
		name = name ? name + 1 : line;
		if (strrchr(name, '/'))
			name = strrchr(name, '/') + 1;
		if (!valid_program(name) || t->ntests >= MAX_TESTS_PER_TARGET)
			continue;
		int dup = 0;
		for (size_t k = 0; k < t->ntests; k++)
			dup |= !strcmp(t->tests[k].name, name);
		if (dup)
			continue;
		char *path = xstrfmt("%s/%s/%s", entry, t->name, name);
		char *why = cannot_run(a, path, bash);
		test_add(t, name, why);
		free(why);
		free(path);
	}
out:
	strbuf_release(&out);
	strvec_clear(&argv);
}

static int build_target(const struct kselftest_opts *o, const char *hdr,
			const char *stage, struct kselftest_target *t,
			int *bash)
{
	char *tdir = xstrfmt("%s/tools/testing/selftests/%s", o->src_dir,
			     t->name);
	char *outdir = xstrfmt("%s/out/%s", o->build_dir, t->name);
	const struct karch *a = arch_of(o);
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	struct stat st;
	int status = 0, ret = 0;

	if (stat(tdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		t->error = xstrfmt("no tools/testing/selftests/%s in this tree",
				   t->name);
		goto out;
	}
	/* a clean OUTPUT: make's mtimes do not see a header's change;
	 * ccache makes the rebuild cheap */
	if ((ret = rm_rf(outdir)) < 0 || (ret = mkdir_p(outdir)) < 0 ||
	    (ret = sandbox_own(o->sandbox, outdir, 0)) < 0)
		goto out;
	strvec_pushf(&argv, "make");
	strvec_pushf(&argv, "-j%d", o->jobs > 0 ? o->jobs : 2);
	strvec_pushl(&argv, "-C", tdir, NULL);
	target_vars(a, &argv);
	strvec_pushf(&argv, "OUTPUT=%s", outdir);
	strvec_pushf(&argv, "KHDR_INCLUDES=-isystem %s", hdr);
	strvec_pushf(&argv, "INSTALL_PATH=%s/%s", stage, t->name);
	if (o->ccache_dir && *o->ccache_dir)
		strvec_pushf(&argv, "CC=ccache %s", a->cc);
	strvec_push(&argv, "install");
	if ((ret = run_make(o, stage, argv.v, &out, &status)) < 0)
		goto out;
	if (status != 0) {
		t->error = error_excerpt(&out);
		goto out;
	}
	t->built = 1;
	list_tests(o, tdir, outdir, stage, t, bash);
out:
	strbuf_release(&out);
	strvec_clear(&argv);
	free(tdir);
	free(outdir);
	return ret;
}

/* Keeps the newest KSELFTEST_CACHE_KEEP entries (and stale temp dirs go). */
static void cache_trim(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct ent {
		char *path;
		time_t mtime;
	} *v = NULL;
	size_t n = 0;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		char *p;
		if (de->d_name[0] == '.' && strncmp(de->d_name, ".tmp.", 5))
			continue;
		p = xstrfmt("%s/%s", dir, de->d_name);
		if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    !strcmp(de->d_name, keep)) {
			free(p);
			continue;
		}
		if (!strncmp(de->d_name, ".tmp.", 5)) {
			/* another process's temp dir: only when it is dead */
			long pid = strtol(de->d_name + 5, NULL, 10);
			if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
				rm_rf(p);
			free(p);
			continue;
		}
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n].path = p;
		v[n++].mtime = st.st_mtime;
	}
	closedir(d);
	/* newest first; the one just used is not in v */
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (v[k].mtime > v[i].mtime) {
				struct ent t = v[i];
				v[i] = v[k];
				v[k] = t;
			}
	for (size_t i = 0; i < n; i++) {
		if (i + 1 >= KSELFTEST_CACHE_KEEP)
			rm_rf(v[i].path);
		free(v[i].path);
	}
	free(v);
	err_clear();
}

static int build_all(const struct kselftest_opts *o, const struct strvec *names,
		     const int *timeouts, const char *entry,
		     struct kselftest_build *b)
{
	char *stage = xstrfmt("%s/.tmp.%ld.%s", o->cache_dir, (long)getpid(),
			      b->key);
	char *hdr_o = xstrfmt("O=%s/hdr", o->build_dir);
	char *hdr_path = xstrfmt("INSTALL_HDR_PATH=%s/hdr/usr", o->build_dir);
	char *hdr = xstrfmt("%s/hdr/usr/include", o->build_dir);
	char *jobs = xstrfmt("-j%d", o->jobs > 0 ? o->jobs : 2);
	struct strvec argv = STRVEC_INIT;
	struct strbuf out = STRBUF_INIT;
	int status = 0, ret;

	rm_rf(stage);
	if ((ret = mkdir_p(stage)) < 0 || (ret = mkdir_p(o->build_dir)) < 0 ||
	    (ret = sandbox_own(o->sandbox, stage, 0)) < 0 ||
	    (ret = sandbox_own(o->sandbox, o->build_dir, 0)) < 0)
		goto out;
	strvec_pushl(&argv, "make", jobs, "-C", o->src_dir, NULL);
	arch_vars(arch_of(o), &argv); /* the arch's uapi headers */
	strvec_pushl(&argv, hdr_o, hdr_path, "headers_install", NULL);
	if ((ret = run_make(o, stage, argv.v, &out, &status)) < 0)
		goto out;
	for (size_t i = 0; i < names->nr; i++) {
		struct kselftest_target *t = target_add(b, names->v[i]);
		t->timeout = timeouts[i];
		if (status != 0) {
			/* the tree's headers do not install: no target
			 * builds, each says why */
			char *e = error_excerpt(&out);
			t->error = xstrfmt("make headers_install failed:\n%s",
					   e);
			free(e);
			continue;
		}
		if ((ret = build_target(o, hdr, stage, t, &b->needs_bash)) < 0)
			goto out;
	}
	if ((ret = manifest_write(stage, b)) < 0)
		goto out;
	if (rename(stage, entry) < 0) {
		/* another process stored the same key first: keep its entry */
		if (errno != ENOTEMPTY && errno != EEXIST) {
			ret = err_set(ERR_IO, "%s: %s", entry, strerror(errno));
			goto out;
		}
	}
out:
	rm_rf(stage);
	if (ret >= 0)
		err_clear();
	strbuf_release(&out);
	strvec_clear(&argv);
	free(stage);
	free(hdr_o);
	free(hdr_path);
	free(hdr);
	free(jobs);
	return ret;
}

int kselftest_prepare(const struct kselftest_opts *o,
		      struct kselftest_build *out)
{
	struct strvec names = STRVEC_INIT;
	const struct karch *a = ksft_arch_find(o->arch);
	int *timeouts = NULL;
	char *entry = NULL, *note = NULL, key[65];
	struct stat st;
	double t0 = now_monotonic();
	int ret;

	memset(out, 0, sizeof(*out));
	if (!o->tests_file || !o->src_dir || !o->build_dir || !o->cache_dir)
		return err_set(ERR_INVALID, "kselftest: tests_file, src_dir, "
					    "build_dir and cache_dir are needed");
	if (!a)
		return ERR_INVALID;
	if ((ret = section_targets(o->tests_file, o->guest_config, a, &names,
				   &timeouts, &note)) < 0 ||
	    !names.nr)
		goto out;
	if (stat(o->src_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		ret = err_set(ERR_NOTFOUND, "kselftest: no kernel tree at %s",
			      o->src_dir);
		goto out;
	}
	if ((ret = sandbox_check(o->sandbox, "kselftest build")) < 0 ||
	    (ret = sandbox_reach(o->sandbox, o->src_dir)) < 0)
		goto out;
	if ((ret = kselftest_key(o->src_dir, a, names.v, names.nr,
				 o->compiler_id, out->key)) < 0 ||
	    (ret = mkdir_p(o->cache_dir)) < 0)
		goto out;
	memcpy(key, out->key, sizeof(key));
	entry = xstrfmt("%s/%s", o->cache_dir, key);
	if (manifest_read(entry, out) == 0) {
		out->cached = 1;
		utimensat(AT_FDCWD, entry, NULL, 0); /* used: trimmed last */
	} else {
		err_clear();
		kselftest_build_release(out);
		memcpy(out->key, key, sizeof(key));
		ret = build_all(o, &names, timeouts, entry, out);
		/* the entry that won, ours or a twin's */
		kselftest_build_release(out);
		memcpy(out->key, key, sizeof(key));
		if (ret < 0 || (ret = manifest_read(entry, out)) < 0)
			goto out;
		cache_trim(o->cache_dir, key);
	}
	/* timeouts come from the set as it is now, not from the entry */
	for (size_t i = 0; i < out->ntargets; i++)
		for (size_t k = 0; k < names.nr; k++)
			if (!strcmp(out->targets[i].name, names.v[k]))
				out->targets[i].timeout = timeouts[k];
	for (size_t i = 0; i < out->ntargets; i++)
		for (size_t k = 0; k < out->targets[i].ntests; k++) {
			char *p = xstrfmt("%s/%s/%s", entry,
					  out->targets[i].name,
					  out->targets[i].tests[k].name);
			int bash = 0;
			free(cannot_run(a, p, &bash));
			out->needs_bash |= bash;
			free(p);
		}
	out->dir = entry;
	entry = NULL;
out:
	out->arch = a->name;
	out->note = note;
	out->seconds = now_monotonic() - t0;
	strvec_clear(&names);
	free(timeouts);
	free(entry);
	return ret;
}

/* --- the guest's tests ---------------------------------------------------- */

/* The arch b was built for (x86_64 when nothing was built). */
static const struct karch *arch_built(const struct kselftest_build *b)
{
	return arch_or_host(b ? b->arch : NULL);
}

void kselftest_expand(struct test_def **tests, size_t *n,
		      const struct kselftest_build *b)
{
	size_t before = *n;

	for (size_t i = 0; i < before; i++) {
		const struct test_def *d = &(*tests)[i];
		if (d->kind != TEST_KSELFTEST)
			continue;
		for (size_t k = 0; k < d->ntargets; k++) {
			const struct kselftest_target *t = target_find(
				b, target_for(arch_built(b),
					      (*tests)[i].targets[k]));
			int timeout = (*tests)[i].timeout;
			for (size_t j = 0; t && t->built && j < t->ntests; j++) {
				const struct kselftest_test *x = &t->tests[j];
				char *name = xstrfmt("kselftest.%s.%s", t->name,
						     x->name);
				/* '.' only between the parts of a name */
				for (char *c = name + 11 + strlen(t->name);
				     *c; c++)
					if (*c == '.' || *c == '+')
						*c = '_';
				if (strlen(name) > 64)
					name[64] = '\0';
				char *cmd =
					x->why ? xstrfmt("echo 'not run: %s'; "
							 "exit 4",
							 x->why)
					       : xstrfmt("cd /kselftest/%s && "
							 "./%s",
							 t->name, x->name);
				if (!testset_find(*tests, *n, name))
					testset_add_guest(tests, n, name, cmd,
							  timeout)
						->kselftest = 1;
				free(name);
				free(cmd);
			}
			d = &(*tests)[i]; /* *tests moved */
		}
	}
	for (size_t i = 0; i < *n;)
		if ((*tests)[i].kind == TEST_KSELFTEST)
			testset_remove(*tests, n, i);
		else
			i++;
}

size_t kselftest_results(const struct test_def *tests, size_t n,
			 const struct kselftest_build *b,
			 const char *const *only, size_t nonly,
			 struct kselftest_result **out)
{
	size_t nr = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		if (tests[i].kind != TEST_KSELFTEST)
			continue;
		for (size_t k = 0; k < tests[i].ntargets; k++) {
			const char *tn =
				target_for(arch_built(b), tests[i].targets[k]);
			const struct kselftest_target *t = target_find(b, tn);
			char *name = xstrfmt("kselftest.%s", tn);
			int keep = !only;
			for (size_t j = 0; j < nonly && !keep; j++)
				keep = !strcmp(only[j], name);
			if (!keep) {
				free(name);
				continue;
			}
			*out = xrealloc(*out, (nr + 1) * sizeof(**out));
			struct kselftest_result *r = &(*out)[nr++];
			r->name = name;
			if (!t) {
				r->built = -1;
				r->detail = xstrdup("not built for this boot");
			} else if (t->built) {
				r->built = 1;
				r->detail = xstrfmt("built: %zu tests", t->ntests);
			} else {
				r->built = 0;
				r->detail = xstrfmt("does not build:\n%s",
						    t->error ? t->error : "");
			}
		}
	}
	return nr;
}

void kselftest_results_free(struct kselftest_result *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++) {
		free(r[i].name);
		free(r[i].detail);
	}
	free(r);
}

/* --- the files the guest needs -------------------------------------------- */

struct files {
	struct kselftest_file *v;
	size_t n;
	const struct karch *a; /* the programs' loader and libraries:
				* x86_64's the host's, else under its
				* roots (their /lib the guest's /lib) */
};

/* Where host file path goes in the guest (no leading '/'). */
static const char *guest_path(const struct files *f, const char *host)
{
	for (size_t i = 0; i < 2 && f->a->ksft_roots[i]; i++) {
		size_t l = strlen(f->a->ksft_roots[i]);
		if (!strncmp(host, f->a->ksft_roots[i], l) && host[l] == '/')
			return host + l + 1;
	}
	return host + 1;
}

static int files_has(const struct files *f, const char *path)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, path))
			return 1;
	return 0;
}

static struct kselftest_file *file_add(struct files *f,
				       enum initramfs_kind kind, char *path)
{
	struct kselftest_file *e;

	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	e = &f->v[f->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->path = path;
	return e;
}

void kselftest_files_free(struct kselftest_file *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i].path);
		free(f[i].host_path);
		free(f[i].target);
	}
	free(f);
}

/* A file in an ELF's image, at vaddr: its offset through the PT_LOADs. */
static int vaddr_off(const Elf64_Phdr *ph, size_t nph, Elf64_Addr va,
		     off_t *off)
{
	for (size_t i = 0; i < nph; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va < ph[i].p_vaddr + ph[i].p_filesz) {
			*off = (off_t)(ph[i].p_offset + (va - ph[i].p_vaddr));
			return 0;
		}
	return -1;
}

int kselftest_elf_needs(const char *path, char ***needed, size_t *nneeded,
			char **interp)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	Elf64_Dyn *dyn = NULL;
	size_t ndyn = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	struct stat st;

	*needed = NULL;
	*nneeded = 0;
	*interp = NULL;
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = err_set(ERR_IO, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		goto out; /* no ELF */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 512) {
		/* a 32-bit program (x86's *_32): static, or unrunnable */
		goto out;
	}
	ph = xcalloc(eh.e_phnum ? eh.e_phnum : 1, sizeof(*ph));
	if (pread(fd, ph, eh.e_phnum * sizeof(*ph), (off_t)eh.e_phoff) !=
	    (ssize_t)(eh.e_phnum * sizeof(*ph))) {
		ret = err_set(ERR_INVALID, "%s: truncated ELF", path);
		goto out;
	}
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP && ph[i].p_filesz > 1 &&
		    ph[i].p_filesz < PATH_MAX && !*interp) {
			char *s = xcalloc(1, ph[i].p_filesz + 1);
			if (pread(fd, s, ph[i].p_filesz, (off_t)ph[i].p_offset) !=
			    (ssize_t)ph[i].p_filesz) {
				free(s);
				ret = err_set(ERR_INVALID, "%s: truncated ELF",
					      path);
				goto out;
			}
			*interp = s;
		}
		if (ph[i].p_type == PT_DYNAMIC && !dyn &&
		    ph[i].p_filesz < (1u << 20) &&
		    ph[i].p_offset + ph[i].p_filesz <= (uint64_t)st.st_size) {
			ndyn = ph[i].p_filesz / sizeof(*dyn);
			dyn = xcalloc(ndyn ? ndyn : 1, sizeof(*dyn));
			if (pread(fd, dyn, ndyn * sizeof(*dyn),
				  (off_t)ph[i].p_offset) !=
			    (ssize_t)(ndyn * sizeof(*dyn)))
				ndyn = 0;
		}
	}
	if (!dyn)
		goto out; /* static */
	ret = 1;
	Elf64_Addr strtab = 0;
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++)
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
	off_t stroff;
	if (!strtab || vaddr_off(ph, eh.e_phnum, strtab, &stroff) < 0)
		goto out;
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		char name[256];
		ssize_t r;
		if (dyn[i].d_tag != DT_NEEDED)
			continue;
		r = pread(fd, name, sizeof(name) - 1,
			  stroff + (off_t)dyn[i].d_un.d_val);
		if (r <= 0)
			continue;
		name[r] = '\0';
		if (strlen(name) == (size_t)r || !name[0] || strchr(name, '/'))
			continue; /* unterminated, empty or a path */
		*needed = xrealloc(*needed, (*nneeded + 1) * sizeof(**needed));
		(*needed)[(*nneeded)++] = xstrdup(name);
	}
out:
	if (fd >= 0)
		close(fd);
	free(ph);
	free(dyn);
	return ret;
}

/* Adds a host file at the same path in the guest (a symlink as a symlink to
 * what it resolves to, so the loader finds it by either name). */
static int add_host_file(struct files *f, const char *host)
{
	char *real = realpath(host, NULL);

	if (!real)
		return err_set(ERR_NOTFOUND, "%s: %s", host, strerror(errno));
	if (!files_has(f, guest_path(f, host)) && strcmp(real, host)) {
		struct kselftest_file *l = file_add(
			f, INITRAMFS_SYMLINK, xstrdup(guest_path(f, host)));
		l->target = xstrfmt("/%s", guest_path(f, real));
	}
	if (!files_has(f, guest_path(f, real))) {
		struct kselftest_file *e = file_add(
			f, INITRAMFS_FILE, xstrdup(guest_path(f, real)));
		e->host_path = xstrdup(real);
		e->mode = 0755;
	}
	free(real);
	return 0;
}

/* The interpreter and libraries of an ELF, recursively. */
static int add_needs(struct files *f, const char *path, const char *who,
		     int depth)
{
	char **needed = NULL, *interp = NULL;
	size_t n = 0;
	int ret = kselftest_elf_needs(path, &needed, &n, &interp);

	if (ret <= 0 || depth > 8)
		goto out;
	ret = 0;
	if (interp && interp[0] == '/' && !files_has(f, interp + 1)) {
		char *host = xstrfmt("%s%s", f->a->ksft_sysroot, interp);
		ret = add_host_file(f, host);
		free(host);
		if (ret < 0)
			goto out;
	}
	const char *const *dirs = f->a->ksft_libs;
	size_t ndirs = 0;
	while (ndirs < sizeof(f->a->ksft_libs) / sizeof(*dirs) && dirs[ndirs])
		ndirs++;
	for (size_t i = 0; i < n && ret == 0; i++) {
		char *found = NULL;
		for (size_t d = 0; d < ndirs; d++) {
			char *p = xstrfmt("%s/%s", dirs[d], needed[i]);
			if (!found && access(p, R_OK) == 0)
				found = p;
			else
				free(p);
		}
		if (!found) {
			const char *sl = strrchr(path, '/');
			char *beside = xstrfmt("%.*s/%s",
					       (int)(sl ? sl - path : 1),
					       sl ? path : ".", needed[i]);
			int there = access(beside, R_OK) == 0;
			free(beside);
			if (there)
				continue;
			/*
			 * Beside the program (rseq's librseq.so, found by its
			 * rpath) it is in the guest already; else the
			 * guest's loader says what is missing, in the test's
			 * output.
			 */
			log_warnx("kselftest %s: %s needs %s, not in the "
				  "loader's path here",
				  who, path, needed[i]);
			continue;
		}
		if (!files_has(f, guest_path(f, found))) {
			if ((ret = add_host_file(f, found)) == 0)
				ret = add_needs(f, found, who, depth + 1);
		}
		free(found);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(needed[i]);
	free(needed);
	free(interp);
	return ret < 0 ? ret : 0;
}

/* The installed tree of a target, as it is (symlinks stay symlinks). */
static int add_tree(struct files *f, const char *host, const char *guest,
		    const char *who, int depth)
{
	DIR *d = opendir(host);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return err_set(ERR_IO, "%s: %s", host, strerror(errno));
	if (depth > 16) {
		closedir(d);
		return 0;
	}
	file_add(f, INITRAMFS_DIR, xstrdup(guest))->mode = 0755;
	while ((de = readdir(d)) && ret == 0) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *hp = xstrfmt("%s/%s", host, de->d_name);
		char *gp = xstrfmt("%s/%s", guest, de->d_name);
		if (lstat(hp, &st) < 0) {
			free(hp);
			free(gp);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			ret = add_tree(f, hp, gp, who, depth + 1);
			free(gp);
		} else if (S_ISLNK(st.st_mode)) {
			char t[PATH_MAX];
			ssize_t l = readlink(hp, t, sizeof(t) - 1);
			if (l > 0) {
				t[l] = '\0';
				file_add(f, INITRAMFS_SYMLINK, gp)->target =
					xstrdup(t);
			} else {
				free(gp);
			}
		} else if (S_ISREG(st.st_mode)) {
			struct kselftest_file *e =
				file_add(f, INITRAMFS_FILE, gp);
			e->host_path = xstrdup(hp);
			e->mode = st.st_mode & 0777;
			ret = add_needs(f, hp, who, 0);
		} else {
			free(gp);
		}
		free(hp);
	}
	closedir(d);
	return ret;
}

int kselftest_files(const struct kselftest_build *b,
		    struct kselftest_file **out, size_t *n)
{
	struct files f = {0};
	int ret = 0;

	*out = NULL;
	*n = 0;
	f.a = arch_built(b);
	for (size_t i = 0; b && i < b->ntargets && ret == 0; i++) {
		const struct kselftest_target *t = &b->targets[i];
		char *host, *guest;
		if (!t->built)
			continue;
		host = xstrfmt("%s/%s", b->dir, t->name);
		guest = xstrfmt("kselftest/%s", t->name);
		if (access(host, F_OK) == 0)
			ret = add_tree(&f, host, guest, t->name, 0);
		free(host);
		free(guest);
	}
	if (ret == 0 && b && b->needs_bash) {
		const char *bash = f.a->ksft_bash ? f.a->ksft_bash
				   : access("/bin/bash", X_OK) == 0
					   ? "/bin/bash"
					   : "/usr/bin/bash";
		char *real = realpath(bash, NULL);
		if (!real) {
			ret = err_set(ERR_NOTFOUND,
				      "a kselftest script needs bash: %s: %s",
				      bash, strerror(errno));
		} else {
			if (!files_has(&f, "bin/bash")) {
				struct kselftest_file *e = file_add(
					&f, INITRAMFS_FILE, xstrdup("bin/bash"));
				e->host_path = xstrdup(real);
				e->mode = 0755;
			}
			ret = add_needs(&f, real, "bash", 0);
			free(real);
		}
	}
	if (ret < 0) {
		kselftest_files_free(f.v, f.n);
		return ret;
	}
	*out = f.v;
	*n = f.n;
	return 0;
}
