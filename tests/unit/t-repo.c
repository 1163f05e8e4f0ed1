/* t-repo.c: repo.h on real git repositories, checked against git. */
#include "err.h"
#include "file.h"
#include "repo.h"
#include "stable-queue.h"
#include "spawn.h"
#include "strbuf.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

static char tmp[] = "/tmp/t-repo.XXXXXX";

/* A formatted string that need not be freed (a ring of 8 buffers). */
__attribute__((format(printf, 1, 2))) static const char *P(const char *fmt, ...)
{
	static char ring[8][1024];
	static int next;
	char *b = ring[next++ % 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(ring[0]), fmt, ap);
	va_end(ap);
	return b;
}
static const char *const git_env[] = {"GIT_AUTHOR_NAME=Ann Author",
				      "GIT_AUTHOR_EMAIL=ann@example.org",
				      "GIT_COMMITTER_NAME=Cy Committer",
				      "GIT_COMMITTER_EMAIL=cy@example.org",
				      "GIT_CONFIG_NOSYSTEM=1",
				      "GIT_CONFIG_GLOBAL=/dev/null",
				      "LC_ALL=C",
				      NULL};

#define UP_A "1c109fabbd51b3a6bbed8e7ee37f9a6aa2d1b1a1"
#define UP_B "2d2b5b5d8e9f0a1b2c3d4e5f60718293a4b5c6d7"
#define UP_C "3e3c6c6e9fa01b2c3d4e5f60718293a4b5c6d7e8"
#define UP_D "4f4d7d7fa0b12c3d4e5f60718293a4b5c6d7e8f9"
#define UP_E "5a5e8e8ab1c23d4e5f60718293a4b5c6d7e8f9a0"

/* Runs a command (argv NULL-terminated) in dir; its output, trimmed, or NULL if
 * it failed. */
static char *run_v(const char *dir, const char *stdin_path, const char **argv)
{
	struct spawn sp = SPAWN_INIT;
	char *out = NULL;

	sp.argv = argv;
	sp.env = git_env;
	sp.cwd = dir;
	sp.capture = 1;
	sp.stdin_path = stdin_path;
	sp.timeout_ms = 60000;
	if (spawn_run(&sp) == 0 && sp.status == 0) {
		strbuf_trim(&sp.out);
		out = strbuf_detach(&sp.out, NULL);
	} else {
		diag("%s failed: %s", argv[1],
		     sp.out.len ? sp.out.buf : err_msg());
	}
	spawn_release(&sp);
	return out;
}

static char *git(const char *dir, ...)
{
	const char *argv[32] = {"git"};
	va_list ap;
	int n = 1;

	va_start(ap, dir);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return run_v(dir, NULL, argv);
}

static void gitq(const char *dir, ...)
{
	const char *argv[32] = {"git"};
	va_list ap;
	int n = 1;

	va_start(ap, dir);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	free(run_v(dir, NULL, argv));
}

static void mkdirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	free(p);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *path = xstrfmt("%s/%s", dir, rel);
	mkdirs(path);
	if (write_file_atomic(path, text, strlen(text)) < 0)
		diag("write %s: %s", path, err_msg());
	free(path);
}

static char *slurp(const char *dir, const char *rel)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/%s", dir, rel);
	if (strbuf_read_file(&sb, path, 0) < 0) {
		free(path);
		strbuf_release(&sb);
		return NULL;
	}
	free(path);
	return strbuf_detach(&sb, NULL);
}

/* lib/foo.c: 60 numbered lines, with edits: "N=text" replaces line N. */
static char *foo_text(int shift, ...)
{
	struct strbuf sb = STRBUF_INIT;
	const char *edit[61] = {0};
	va_list ap;
	const char *e;

	va_start(ap, shift);
	while ((e = va_arg(ap, const char *))) {
		int n = atoi(e);
		if (n >= 1 && n <= 60)
			edit[n] = strchr(e, '=') + 1;
	}
	va_end(ap);
	for (int i = 0; i < shift; i++)
		strbuf_addf(&sb, "/* inserted line %d */\n", i + 1);
	for (int i = 1; i <= 60; i++) {
		if (edit[i])
			strbuf_addf(&sb, "%s\n", edit[i]);
		else
			strbuf_addf(&sb, "int foo_%d = %d;\n", i, i);
	}
	return strbuf_detach(&sb, NULL);
}

static char *bar_text(int changed_line, const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 1; i <= 20; i++) {
		if (i == changed_line)
			strbuf_addf(&sb, "%s\n", text);
		else
			strbuf_addf(&sb, "static int bar_%d;\n", i);
	}
	return strbuf_detach(&sb, NULL);
}

static void commit_all(const char *dir, const char *msg)
{
	gitq(dir, "add", "-A", NULL);
	gitq(dir, "commit", "-q", "-m", msg, NULL);
}

/* What `git apply --cached` makes of patch on base: the tree id. */
static char *git_apply_tree(const char *dir, const char *base,
			    const char *patch)
{
	char *idx = xstrfmt("%s/apply-index", tmp);
	char *pf = xstrfmt("%s/apply.patch", tmp);
	const char *env[] = {NULL, NULL};
	char *envs = xstrfmt("GIT_INDEX_FILE=%s", idx);
	char *out = NULL;
	struct spawn sp = SPAWN_INIT;
	const char *rt[] = {"git", "read-tree", base, NULL};
	const char *ap[] = {"git", "apply", "--cached", pf, NULL};
	const char *wt[] = {"git", "write-tree", NULL};
	const char *const *steps[] = {rt, ap, wt};

	env[0] = envs;
	write_file_atomic(pf, patch, strlen(patch));
	for (int i = 0; i < 3; i++) {
		sp = (struct spawn)SPAWN_INIT;
		sp.argv = steps[i];
		sp.env = env;
		sp.cwd = dir;
		sp.capture = 1;
		if (spawn_run(&sp) < 0 || sp.status) {
			if (i != 1) /* a refused patch is an answer */
				diag("git %s failed", steps[i][1]);
			spawn_release(&sp);
			break;
		}
		if (i == 2) {
			strbuf_trim(&sp.out);
			out = strbuf_detach(&sp.out, NULL);
		}
		spawn_release(&sp);
	}
	unlink(idx);
	free(idx);
	free(pf);
	free(envs);
	return out;
}

static char *fix; /* the fixture repository */
static char base[REPO_HEX_SIZE], bp1[REPO_HEX_SIZE], bp2[REPO_HEX_SIZE];
static char topic[REPO_HEX_SIZE];

static void rev(char out[REPO_HEX_SIZE], const char *dir, const char *spec)
{
	char *s = git(dir, "rev-parse", spec, NULL);
	snprintf(out, REPO_HEX_SIZE, "%s", s ? s : "");
	free(s);
}

static void make_fixture(void)
{
	char *t;

	fix = xstrfmt("%s/fix", tmp);
	mkdir(fix, 0755);
	gitq(fix, "init", "-q", "-b", "main", NULL);
	put(fix, "lib/foo.c", t = foo_text(0, NULL));
	free(t);
	put(fix, "lib/bar.c", t = bar_text(0, NULL));
	free(t);
	put(fix, "lib/gone.c", "int gone;\n");
	put(fix, "scripts/x.sh", "#!/bin/sh\necho x\n");
	chmod(P("%s/scripts/x.sh", fix), 0755);
	commit_all(fix, "base");
	rev(base, fix, "HEAD");
	gitq(fix, "tag", "v6.1.192", NULL);

	put(fix, "lib/bar.c",
	    t = bar_text(5, "static int bar_5 = 1; /* fixed */"));
	free(t);
	commit_all(fix, "lib: bar: fix the fifth\n\ncommit " UP_A
			" upstream.\n\nThe fifth was wrong.\n\n"
			"Signed-off-by: Ann Author <ann@example.org>");
	rev(bp1, fix, "HEAD");
	put(fix, "lib/bar.c", t = bar_text(15, "static int bar_15 = 1;"));
	free(t);
	commit_all(fix, "lib: bar: fix the fifteenth\n\n[ Upstream commit " UP_B
			" ]\n\nSigned-off-by: Ann Author <ann@example.org>");
	rev(bp2, fix, "HEAD");

	gitq(fix, "checkout", "-q", "-b", "topic", base, NULL);
	put(fix, "lib/topic.c", "int topic;\n");
	commit_all(fix, "topic only");
	rev(topic, fix, "HEAD");
	gitq(fix, "checkout", "-q", "main", NULL);
}

static void test_resolve(struct repo *r)
{
	char hex[REPO_HEX_SIZE], abbrev[13];

	is_int(repo_resolve(r, "main", hex), 0, "resolve a branch");
	is_str(hex, bp2, "  to its tip");
	is_int(repo_resolve(r, "v6.1.192", hex), 0, "resolve a tag");
	is_str(hex, base, "  peeled to the commit");
	snprintf(abbrev, sizeof(abbrev), "%.10s", bp1);
	is_int(repo_resolve(r, abbrev, hex), 0, "resolve an abbreviated SHA");
	is_str(hex, bp1, "  to the full SHA");
	is_int(repo_resolve(r, "no-such-ref", hex), ERR_NOTFOUND,
	       "unknown revision: not found");
	like(err_msg(), "no-such-ref", "  message names it");
}

static void test_history(struct repo *r)
{
	char hex[REPO_HEX_SIZE], abbrev[REPO_HEX_SIZE];

	is_int(repo_commit_in_history(r, "main", base), 1,
	       "base (full SHA) is in main's history");
	snprintf(abbrev, sizeof(abbrev), "%.8s", base);
	is_int(repo_commit_in_history(r, "main", abbrev), 1,
	       "base (8 digits) is in main's history");
	is_int(repo_commit_in_history(r, "main", bp2), 1, "the tip itself");
	is_int(repo_commit_in_history(r, "main", topic), 0,
	       "a commit on another branch is not");
	is_int(repo_commit_in_history(r, "main", UP_A), 0,
	       "an absent SHA is not");
	is_int(repo_commit_in_history(r, "main", "deadbeefdeadbeef"), 0,
	       "an absent abbreviated SHA is not");
	snprintf(abbrev, sizeof(abbrev), "%.7s", base);
	is_int(repo_commit_in_history(r, "main", abbrev), ERR_INVALID,
	       "7 digits: too short");
	is_int(repo_commit_in_history(r, "main", "xyz12345678"), ERR_INVALID,
	       "not hex: invalid");
	is_int(repo_commit_in_history(r, "nope", base), ERR_NOTFOUND,
	       "unknown tip: not found");
	is_int(repo_object_exists(r, base), 1, "base exists (full SHA)");
	snprintf(abbrev, sizeof(abbrev), "%.8s", topic);
	is_int(repo_object_exists(r, abbrev), 1,
	       "a commit on another branch exists (8 digits)");
	is_int(repo_object_exists(r, "deadbeefdeadbeef"), 0,
	       "an absent SHA does not");
	is_int(repo_object_exists(r, "xyz12345678"), ERR_INVALID,
	       "not hex: invalid");

	is_int(repo_find_backport(r, "main", UP_A, hex), 1,
	       "backport found by 'commit X upstream.'");
	is_str(hex, bp1, "  the backport commit");
	is_int(repo_find_backport(r, "main", UP_B, hex), 1,
	       "backport found by '[ Upstream commit X ]'");
	is_str(hex, bp2, "  the backport commit");
	is_int(repo_find_backport(r, "main", "1C109FABBD51", hex), 1,
	       "abbreviated (12, upper case) query matches a full SHA");
	is_int(repo_find_backport(r, "main", UP_C, hex), 0,
	       "no backport of an unknown commit");
	is_int(repo_find_backport(r, "v6.1.192", UP_A, hex), 0,
	       "not reachable from the base tag");

	/* a later tip: the cache walks only the new commit */
	{
		char *t = bar_text(3, "static int bar_3 = 3;");
		put(fix, "lib/bar.c", t);
		free(t);
		commit_all(fix, "lib: bar: third\n\ncommit 3e3c6c6e9fa0 "
				"upstream.\n");
		is_int(repo_find_backport(r, "main", UP_C, hex), 1,
		       "a message naming an abbreviated SHA matches the full "
		       "one");
		is_int(repo_find_backport(r, "main", UP_A, hex), 1,
		       "older backports still found after the cache grew");
		is_str(hex, bp1, "  the same commit");
		gitq(fix, "reset", "-q", "--hard", "HEAD^", NULL);
		is_int(repo_find_backport(r, "main", UP_C, hex), 0,
		       "a tip that went back forgets the dropped commit");
	}
}

static void test_stable_queue(void)
{
	char *sq = xstrfmt("%s/stable-queue", tmp);
	char *where = NULL;

	put(sq, "releases/6.1.2/lib-fix.patch",
	    "From x\nSubject: [PATCH] lib: fix\n\ncommit " UP_C
	    " upstream.\n\nbody\n---\n diff --git a/x b/x\n");
	put(sq, "releases/6.1.10/other.patch",
	    "Subject: other\n\n[ Upstream commit " UP_E " ]\n\n---\n");
	put(sq, "releases/6.10.1/not-ours.patch",
	    "Subject: other series\n\ncommit " UP_D " upstream.\n");
	put(sq, "releases/6.1.2/notes.txt", "commit " UP_D " upstream.\n");

	is_int(stable_queue_find(sq, "6.1", UP_C, &where), 1,
	       "stable queue: 'commit X upstream' in a 6.1 release");
	is_str(where, "releases/6.1.2/lib-fix.patch", "  where it is");
	free(where);
	is_int(stable_queue_find(sq, "6.1", "5a5e8e8ab1c2", &where), 1,
	       "stable queue: abbreviated query, [ Upstream commit ] form");
	is_str(where, "releases/6.1.10/other.patch", "  in 6.1.10");
	free(where);
	is_int(stable_queue_find(sq, "6.1", UP_D, &where), 0,
	       "6.10.x and non-.patch files are not 6.1 releases");
	ok(!where, "  where stays NULL");
	put(sq, "releases/6.1.10/late.patch", "commit " UP_D " upstream.\n");
	is_int(stable_queue_find(sq, "6.1", UP_D, &where), 1,
	       "a patch added later is seen (cache refreshed)");
	free(where);
	{
		char *none = xstrfmt("%s/no-queue", tmp);
		is_int(stable_queue_find(none, "6.1", UP_D, NULL), ERR_NOTFOUND,
		       "no releases/ directory: not found");
		free(none);
	}
	/* the later releases' patches of a file, newest first, in each
	 * release's series order */
	put(sq, "releases/6.1.2/b-later.patch",
	    "Subject: [PATCH] lib: later in 6.1.2\n\n---\n--- a/lib.c\n"
	    "+++ b/lib.c\n@@ -1 +1 @@\n-a\n+b\n");
	put(sq, "releases/6.1.2/a-first.patch",
	    "Subject: lib: first in 6.1.2\n\ncommit " UP_A " upstream.\n\n"
	    "---\n--- a/lib.c\n+++ b/lib.c\n@@ -1 +1 @@\n-x\n+a\n");
	put(sq, "releases/6.1.2/series", "# 6.1.2\nlib-fix.patch\n"
	    "a-first.patch\nb-later.patch\n");
	put(sq, "releases/6.1.5/gone.patch",
	    "Subject: lib: remove it\n\n---\n--- a/lib.c\n+++ /dev/null\n"
	    "@@ -1 +0,0 @@\n-b\n");
	put(sq, "releases/6.1.5/elsewhere.patch",
	    "Subject: other: a file of its own\n\n---\n--- a/other.c\n"
	    "+++ b/other.c\n@@ -1 +1 @@\n-o\n+p\n");
	put(sq, "releases/6.1.30/too-late.patch",
	    "Subject: lib: after the tree\n\n---\n--- a/lib.c\n"
	    "+++ b/lib.c\n@@ -1 +1 @@\n-c\n+d\n");
	{
		const char *paths[] = { "lib.c" };
		struct stable_queue_patch *v = NULL;
		size_t nv = 0;
		is_int(stable_queue_touching(sq, "6.1", 2, 10,
					     "releases/6.1.2/a-first.patch",
					     NULL, paths, 1, 64, &v, &nv),
		       2, "two later patches change lib.c up to 6.1.10");
		if (nv == 2) {
			is_str(v[0].where, "releases/6.1.5/gone.patch",
			       "  the newest first (a deletion counts)");
			is_str(v[1].where, "releases/6.1.2/b-later.patch",
			       "  then the one after it in its own release's"
			       " series");
			is_int(v[1].sublevel, 2, "  with its release");
		}
		stable_queue_patches_free(v, nv);
		is_int(stable_queue_touching(sq, "6.1", 2, 10, NULL,
					     "lib: first in 6.1.2", paths, 1,
					     64, &v, &nv),
		       2, "  the patch found by its subject as well");
		stable_queue_patches_free(v, nv);
		is_int(stable_queue_touching(sq, "6.1", 2, 10, NULL, NULL,
					     paths, 1, 64, &v, &nv),
		       1, "  neither: only the later releases'");
		stable_queue_patches_free(v, nv);
	}
	free(sq);
}

/* Builds branch name from main's tip with lib/foo.c as given; its tree. */
static void foo_branch(char tree[REPO_HEX_SIZE], const char *name, char *text,
		       const char *from)
{
	gitq(fix, "checkout", "-q", "-B", name, from, NULL);
	put(fix, "lib/foo.c", text);
	free(text);
	commit_all(fix, name);
	rev(tree, fix, "HEAD^{tree}");
	gitq(fix, "checkout", "-q", "main", NULL);
}

static void test_apply(struct repo *r)
{
	char p_tree[REPO_HEX_SIZE], shifted[REPO_HEX_SIZE], conf[REPO_HEX_SIZE];
	char out[REPO_HEX_SIZE], main_tree[REPO_HEX_SIZE];
	struct repo_apply_result res;
	char *patch, *want, *mail;

	rev(main_tree, fix, "main^{tree}");
	foo_branch(p_tree, "p",
		   foo_text(0, "10=int foo_10 = 100;", "45=int foo_45 = 450;",
			    NULL),
		   "main");
	foo_branch(shifted, "shifted", foo_text(5, NULL), "main");
	foo_branch(conf, "conf", foo_text(0, "44=int foo_44 = -1;", NULL),
		   "main");
	{
		/* run_v() trims: git's diff ends in a newline */
		char *d = git(fix, "diff", "main", "p", NULL);
		patch = xstrfmt("%s\n", d ? d : "");
		free(d);
	}

	/* clean */
	is_int(repo_apply(r, "main", patch, out, &res), 0, "apply: runs");
	is_int(res.status, REPO_APPLY_CLEAN, "apply: clean");
	is_str(out, p_tree, "  the tree git made");
	is_int(res.files, 1, "  one file");
	is_int(res.offsets, 0, "  no offsets");
	repo_apply_result_release(&res);

	/* with offsets: 5 lines inserted above both hunks */
	is_int(repo_apply(r, "shifted", patch, out, &res), 0,
	       "apply with offset: runs");
	is_int(res.status, REPO_APPLY_CLEAN, "apply with offset: clean");
	is_int(res.offsets, 2, "  both hunks moved");
	want = git_apply_tree(fix, "shifted", patch);
	is_str(out, want, "  same tree as git apply");
	free(want);
	repo_apply_result_release(&res);

	/* conflict in the second hunk's context */
	is_int(repo_apply(r, "conf", patch, out, &res), 0,
	       "apply conflict: runs");
	is_int(res.status, REPO_APPLY_CONFLICT, "apply: conflict");
	is_str(res.file, "lib/foo.c", "  names the file");
	is_int(res.hunk, 2, "  and the hunk");
	is_str(res.detail,
	       "lib/foo.c: hunk #2 (@@ -42,7 +42,7 @@) does not "
	       "apply",
	       "  detail");
	repo_apply_result_release(&res);

	/* already applied */
	is_int(repo_apply(r, "p", patch, out, &res), 0,
	       "apply on itself: runs");
	is_int(res.status, REPO_APPLY_ALREADY, "apply: already-applied");
	like(res.detail, "already applied", "  says so");
	repo_apply_result_release(&res);

	/* the same as a mail: headers and message before the diff */
	mail = xstrfmt("From 1234 Mon Sep 17 00:00:00 2001\n"
		       "From: Ann Author <ann@example.org>\n"
		       "Subject: [PATCH] lib: foo: two fixes\n\n"
		       "commit " UP_A " upstream.\n\n--- a/not/a/diff\n"
		       "quoted\n---\n lib/foo.c | 4 ++--\n\n%s-- \n2.39.5\n\n",
		       patch);
	is_int(repo_apply(r, main_tree, mail, out, &res), 0,
	       "apply a whole mail (base given as a tree)");
	is_int(res.status, REPO_APPLY_CLEAN, "  clean");
	is_str(out, p_tree, "  same tree");
	repo_apply_result_release(&res);
	free(mail);

	/* quilt: no diff --git lines, timestamps, a new file, Index: lines */
	{
		static const char quilt[] =
			"Subject: quilt style\n\n"
			"Index: linux/lib/foo.c\n"
			"===================================================\n"
			"--- linux.orig/lib/foo.c\t2016-08-04 "
			"12:00:00.000000000 +0200\n"
			"+++ linux/lib/foo.c\t2016-08-04 12:00:00.000000000 "
			"+0200\n"
			"@@ -9,3 +9,3 @@\n"
			" int foo_9 = 9;\n"
			"-int foo_10 = 10;\n"
			"+int foo_10 = 100;\n"
			" int foo_11 = 11;\n"
			"--- /dev/null\n"
			"+++ b/lib/new.c\n"
			"@@ -0,0 +1,2 @@\n"
			"+int new_1;\n"
			"+int new_2;\n"
			"--- a/lib/gone.c\n"
			"+++ /dev/null\n"
			"@@ -1 +0,0 @@\n"
			"-int gone;\n";
		is_int(repo_apply(r, "main", quilt, out, &res), 0,
		       "quilt-style diff: runs");
		is_int(res.status, REPO_APPLY_CLEAN, "quilt-style diff: clean");
		is_int(res.files, 3, "  three files");
		want = git_apply_tree(fix, "main", quilt);
		is_str(out, want, "  same tree as git apply");
		free(want);
		repo_apply_result_release(&res);

		/* the new file is there now: creating it again conflicts,
		 * but all of it applies in reverse: already applied */
		char tree2[REPO_HEX_SIZE];
		memcpy(tree2, out, sizeof(tree2));
		is_int(repo_apply(r, tree2, quilt, out, &res), 0,
		       "quilt diff twice: runs");
		is_int(res.status, REPO_APPLY_ALREADY,
		       "quilt diff twice: already applied");
		repo_apply_result_release(&res);
	}

	/* a file the tree does not have */
	{
		static const char missing[] =
			"diff --git a/lib/none.c b/lib/none.c\n"
			"--- a/lib/none.c\n+++ b/lib/none.c\n"
			"@@ -1,1 +1,1 @@\n-a\n+b\n";
		is_int(repo_apply(r, "main", missing, out, &res), 0,
		       "missing file: runs");
		is_int(res.status, REPO_APPLY_CONFLICT,
		       "missing file: conflict");
		is_int(res.hunk, 0, "  no hunk: the file");
		like(res.detail, "lib/none.c: does not exist", "  detail");
		repo_apply_result_release(&res);
	}

	/* a git diff with a mode change, a new file and a deletion */
	{
		char *d;
		gitq(fix, "checkout", "-q", "-B", "modes", "main", NULL);
		chmod(P("%s/lib/bar.c", fix), 0755);
		put(fix, "lib/added.c", "int added;\n");
		unlink(P("%s/lib/gone.c", fix));
		commit_all(fix, "modes");
		char *d0 = git(fix, "diff", "main", "modes", NULL);
		d = xstrfmt("%s\n", d0 ? d0 : "");
		free(d0);
		rev(want = xmalloc(REPO_HEX_SIZE), fix, "modes^{tree}");
		gitq(fix, "checkout", "-q", "main", NULL);
		is_int(repo_apply(r, "main", d, out, &res), 0,
		       "git diff with mode change, new and deleted file");
		is_int(res.status, REPO_APPLY_CLEAN, "  clean");
		is_str(out, want, "  the tree git made");
		repo_apply_result_release(&res);
		free(want);
		free(d);
	}

	/* bad input */
	is_int(repo_apply(r, "main", "just words\n", out, &res), ERR_INVALID,
	       "no diff: invalid");
	like(err_msg(), "no diff", "  says so");
	is_int(repo_apply(r, "main",
			  "--- a/lib/foo.c\n+++ b/lib/foo.c\n@@ -1,3 +1,3 @@\n"
			  " int foo_1 = 1;\n",
			  out, &res),
	       ERR_INVALID, "truncated hunk: invalid");
	like(err_msg(), "truncated", "  says so");
	is_int(repo_apply(r, "no-such-base", patch, out, &res), ERR_NOTFOUND,
	       "unknown base: not found");
	free(patch);
}

/*
 * Applies the diff of branch name (made by edit from main) to base, and
 * checks that stableq and `git apply --cached` agree: same tree, or both
 * refuse.
 */
static void same_as_git(struct repo *r, const char *onto, const char *diff,
			const char *what)
{
	struct repo_apply_result res;
	char out[REPO_HEX_SIZE];
	char *want = git_apply_tree(fix, onto, diff);
	int ret = repo_apply(r, onto, diff, out, &res);

	if (want) {
		ok(ret == 0 && res.status == REPO_APPLY_CLEAN &&
			   !strcmp(out, want),
		   "%s: clean, same tree as git apply", what);
	} else {
		ok(ret == 0 && res.status != REPO_APPLY_CLEAN,
		   "%s: refused, as git apply does", what);
	}
	if (ret < 0)
		diag("  %s", err_msg());
	else if (res.detail)
		diag("  %s", res.detail);
	repo_apply_result_release(&res);
	free(want);
}

static char *branch_diff(const char *from, const char *to, int renames)
{
	char *d = git(fix, "diff", renames ? "-M" : "--no-renames", from, to,
		      NULL);
	char *out = xstrfmt("%s\n", d ? d : "");
	free(d);
	return out;
}

/* The mode of path in tree_hex, as `git ls-tree` says it ("" if absent). */
static char *mode_in(const char *tree_hex, const char *path)
{
	char *s = git(fix, "ls-tree", tree_hex, "--", path, NULL);
	char *sp = s ? strchr(s, ' ') : NULL;

	if (sp)
		*sp = '\0';
	return s ? s : xstrdup("");
}

/* diff applied on the keepmode branch leaves path with mode want. */
static void mode_after(struct repo *r, const char *diff, const char *path,
		       const char *want, const char *what)
{
	struct repo_apply_result res;
	char out[REPO_HEX_SIZE];
	char *m;

	is_int(repo_apply(r, "keepmode", diff, out, &res), 0,
	       "modes: %s applies", what);
	is_str(m = mode_in(out, path), want, "  %s is %s after it", path, want);
	free(m);
	repo_apply_result_release(&res);
}

/* The existing mode stays unless the patch changes it (issue 11, item 5). */
static void test_apply_modes(struct repo *r)
{
	static const char *const plain_x =
		"--- a/scripts/x.sh\n+++ b/scripts/x.sh\n"
		"@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo x\n+echo y\n";
	static const char *const git_x_noindex =
		"diff --git a/scripts/x.sh b/scripts/x.sh\n"
		"--- a/scripts/x.sh\n+++ b/scripts/x.sh\n"
		"@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo x\n+echo y\n";
	static const char *const plain_link =
		"--- a/lib/link\n+++ b/lib/link\n@@ -1 +1 @@\n-foo.c\n"
		"\\ No newline at end of file\n+bar.c\n"
		"\\ No newline at end of file\n";
	static const char *const to_644 =
		"diff --git a/scripts/x.sh b/scripts/x.sh\nold mode 100755\n"
		"new mode 100644\n--- a/scripts/x.sh\n+++ b/scripts/x.sh\n"
		"@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo x\n+echo y\n";
	static const char *const renamed =
		"diff --git a/scripts/x.sh b/scripts/y.sh\nsimilarity index 60%\n"
		"rename from scripts/x.sh\nrename to scripts/y.sh\n"
		"--- a/scripts/x.sh\n+++ b/scripts/y.sh\n"
		"@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo x\n+echo y\n";

	gitq(fix, "checkout", "-q", "-B", "keepmode", "main", NULL);
	if (symlink("foo.c", P("%s/lib/link", fix)) < 0)
		diag("symlink: %s", strerror(errno));
	commit_all(fix, "a symlink");
	gitq(fix, "checkout", "-q", "main", NULL);

	mode_after(r, plain_x, "scripts/x.sh", "100755",
		   "a plain diff of an executable script");
	mode_after(r, plain_link, "lib/link", "120000",
		   "a plain diff of a symlink");
	mode_after(r, to_644, "scripts/x.sh", "100644",
		   "a patch that changes the mode");
	same_as_git(r, "keepmode", plain_x, "modes: plain diff of a 100755 file");
	same_as_git(r, "keepmode", git_x_noindex,
		    "modes: git diff without index or mode lines");
	same_as_git(r, "keepmode", plain_link, "modes: plain diff of a symlink");
	same_as_git(r, "keepmode", to_644, "modes: old mode/new mode");
	same_as_git(r, "keepmode", renamed, "modes: a rename keeps the mode");
	same_as_git(r, "keepmode",
		    "diff --git a/scripts/x.sh b/scripts/z.sh\n"
		    "similarity index 100%\nrename from scripts/x.sh\n"
		    "rename to scripts/z.sh\n",
		    "modes: a pure rename keeps the mode");
}

/*
 * A path cannot be a file and a directory at once: `git apply` refuses a
 * file over a directory, a file under a file, a symlink over a directory,
 * and takes a directory emptied by the same patch (issue 11, item 6).
 */
static void test_apply_file_dir(struct repo *r)
{
	struct repo_apply_result res;
	char out[REPO_HEX_SIZE];
	static const char *const file_over_dir =
		"diff --git a/lib b/lib\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/lib\n@@ -0,0 +1 @@\n+x\n";
	static const char *const plain_over_dir =
		"--- /dev/null\n+++ b/lib\n@@ -0,0 +1 @@\n+x\n";
	static const char *const under_file =
		"diff --git a/scripts/x.sh/evil b/scripts/x.sh/evil\n"
		"new file mode 100644\n--- /dev/null\n"
		"+++ b/scripts/x.sh/evil\n@@ -0,0 +1 @@\n+x\n";
	static const char *const link_over_dir =
		"diff --git a/scripts b/scripts\nnew file mode 120000\n"
		"--- /dev/null\n+++ b/scripts\n@@ -0,0 +1 @@\n+/etc\n"
		"\\ No newline at end of file\n";
	static const char *const two_new =
		"diff --git a/new b/new\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/new\n@@ -0,0 +1 @@\n+x\n"
		"diff --git a/new/x b/new/x\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/new/x\n@@ -0,0 +1 @@\n+x\n";
	static const char *const emptied =
		"diff --git a/scripts/x.sh b/scripts/x.sh\n"
		"deleted file mode 100755\n--- a/scripts/x.sh\n+++ /dev/null\n"
		"@@ -1,2 +0,0 @@\n-#!/bin/sh\n-echo x\n"
		"diff --git a/scripts b/scripts\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/scripts\n@@ -0,0 +1 @@\n+x\n";
	static const char *const emptied_late =
		"diff --git a/scripts b/scripts\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/scripts\n@@ -0,0 +1 @@\n+x\n"
		"diff --git a/scripts/x.sh b/scripts/x.sh\n"
		"deleted file mode 100755\n--- a/scripts/x.sh\n+++ /dev/null\n"
		"@@ -1,2 +0,0 @@\n-#!/bin/sh\n-echo x\n";

	is_int(repo_apply(r, "main", file_over_dir, out, &res), 0,
	       "file/dir: adding a file over a directory runs");
	is_int(res.status, REPO_APPLY_CONFLICT, "  a conflict");
	like(res.detail ? res.detail : "", "lib: appears as both a file and a directory",
	     "  naming the path");
	repo_apply_result_release(&res);
	is_int(repo_apply(r, "main", under_file, out, &res), 0,
	       "file/dir: adding dir/x where dir is a file runs");
	is_int(res.status, REPO_APPLY_CONFLICT, "  a conflict");
	like(res.detail ? res.detail : "", "scripts/x.sh", "  naming the file");
	repo_apply_result_release(&res);
	same_as_git(r, "main", file_over_dir, "file/dir: a file over a directory");
	same_as_git(r, "main", plain_over_dir,
		    "file/dir: a plain diff adding a file over a directory");
	same_as_git(r, "main", under_file, "file/dir: a file under a file");
	same_as_git(r, "main", link_over_dir,
		    "file/dir: a symlink over a directory");
	same_as_git(r, "main", two_new, "file/dir: new and new/x in one patch");
	same_as_git(r, "main", emptied,
		    "file/dir: a file over a directory the patch empties");
	same_as_git(r, "main", emptied_late,
		    "file/dir: the same, the deletion last");
}

/*
 * The checks' running tree: patches applied one after another on a tree
 * with the files of those before on top (repo_apply_overlay), never
 * writing the whole tree, must give what chaining repo_apply() gives.
 */
static void test_apply_overlay(struct repo *r)
{
	struct repo_overlay ov = {0}, delta = {0};
	struct repo_apply_result res;
	char out[REPO_HEX_SIZE], want[REPO_HEX_SIZE], main_tree[REPO_HEX_SIZE];
	char *to_dir = branch_diff("main", "df", 0);
	char *to_file = branch_diff("df", "main", 0);
	char *ren = branch_diff("main", "ren", 1);
	const char *paths[] = {"lib/gone.c/inner.c", "lib/gone.c", "lib/bar.c",
			       "lib/baz.c"};
	unsigned char have[4];

	rev(main_tree, fix, "main^{tree}");
	is_int(repo_apply_overlay(r, "main", &ov, to_dir, &delta, &res), 0,
	       "overlay: a file becomes a directory: runs");
	is_int(res.status, REPO_APPLY_CLEAN, "  clean");
	ok(delta.n == 2, "  its delta: the file gone, the new file (%zu)",
	   delta.n);
	repo_apply_result_release(&res);
	repo_overlay_merge(&ov, &delta);
	is_int(delta.n, 0, "  merged: the delta is empty");
	is_int(repo_overlay_tree(r, "main", &ov, NULL, out), 0,
	       "  the tree is written when asked");
	rev(want, fix, "df^{tree}");
	is_str(out, want, "  the tree git made");
	is_int(repo_paths_exist_overlay(r, "main", &ov, paths, 4, have), 0,
	       "  which paths exist: runs");
	ok(have[0] && have[1] && have[2] && !have[3],
	   "  the new file and its directory, not what is not there");

	is_int(repo_apply_overlay(r, "main", &ov, to_dir, &delta, &res), 0,
	       "overlay: the same again: runs");
	is_int(res.status, REPO_APPLY_ALREADY, "  already applied, on the overlay");
	repo_apply_result_release(&res);

	is_int(repo_apply_overlay(r, "main", &ov, ren, &delta, &res), 0,
	       "overlay: a rename on top: runs");
	is_int(res.status, REPO_APPLY_CLEAN, "  clean");
	repo_apply_result_release(&res);
	is_int(repo_overlay_tree(r, "main", &ov, &delta, out), 0,
	       "  the tree with it, not merged yet");
	{
		char step[REPO_HEX_SIZE], chained[REPO_HEX_SIZE];
		repo_apply(r, "df", ren, chained, &res);
		repo_apply_result_release(&res);
		is_str(out, chained, "  as repo_apply() on the tree before");
		is_int(repo_overlay_tree(r, "main", &ov, NULL, step), 0,
		       "  without the delta: runs");
		is_str(step, want, "  the tree before it");
	}
	repo_overlay_release(&delta);

	is_int(repo_apply_overlay(r, "main", &ov, to_file, &delta, &res), 0,
	       "overlay: the directory becomes a file again: runs");
	is_int(res.status, REPO_APPLY_CLEAN, "  clean");
	repo_apply_result_release(&res);
	repo_overlay_merge(&ov, &delta);
	is_int(repo_overlay_tree(r, "main", &ov, NULL, out), 0,
	       "  the tree is written");
	is_str(out, main_tree, "  back to main's tree");
	is_int(repo_paths_exist_overlay(r, "main", &ov, paths, 4, have), 0,
	       "  which paths exist: runs");
	ok(!have[0] && have[1] && have[2] && !have[3],
	   "  the file again, its old contents gone");
	repo_overlay_release(&ov);
	free(to_dir);
	free(to_file);
	free(ren);
}

/* lib/bar.c's lines, line k as lines[k - 1] (NULL: left out), no newline
 * after the last one unless nl_end */
static char *bar_lines(const char *const *lines, size_t n, int nl_end)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		if (!lines[i])
			continue;
		if (sb.len)
			strbuf_addch(&sb, '\n');
		strbuf_addstr(&sb, lines[i]);
	}
	if (nl_end)
		strbuf_addch(&sb, '\n');
	return strbuf_detach(&sb, NULL);
}

/* line k (1-based) of l becomes text */
static void set_line(const char **l, int k, const char *text)
{
	free((char *)l[k - 1]);
	l[k - 1] = xstrdup(text);
}

/* branch (made from the checkout's) with path holding l's 21 lines */
static void bar_commit(const char *branch, const char *path, const char **l,
		       int nl_end)
{
	char *t = bar_lines(l, 21, nl_end);

	gitq(fix, "checkout", "-q", "-B", branch, NULL);
	put(fix, path, t);
	free(t);
	commit_all(fix, branch);
}

/*
 * Patches of one run changing the same file one after another on the
 * overlay: each starts from the lines the one before left (its added
 * lines the next one's context, a last line losing its newline, a
 * rename), a conflict in between changes nothing, and every step gives
 * the tree git made.
 */
static void test_apply_overlay_chain(struct repo *r)
{
	struct repo_overlay ov = {0}, delta = {0};
	struct repo_apply_result res;
	struct strbuf text = STRBUF_INIT;
	char out[REPO_HEX_SIZE], want[REPO_HEX_SIZE];
	const char *l[22];
	const char *steps[] = {"c1", "c2", "c3", "c4"};
	char *t;

	for (int i = 0; i < 20; i++)
		l[i] = xstrfmt("static int bar_%d;", i + 1);
	l[20] = l[21] = NULL;
	gitq(fix, "checkout", "-q", "main", NULL);
	set_line(l, 5, "static long bar_5;");
	set_line(l, 21, "static int bar_added;"); /* after the last */
	bar_commit("c1", "lib/bar.c", l, 1);
	set_line(l, 21, "static int bar_added_changed;");
	set_line(l, 1, "static char bar_1;");
	bar_commit("c2", "lib/bar.c", l, 1);
	set_line(l, 10, "static short bar_10;");
	bar_commit("c3", "lib/bar.c", l, 0);
	gitq(fix, "checkout", "-q", "-B", "c4", NULL);
	gitq(fix, "mv", "lib/bar.c", "lib/bar2.c", NULL);
	set_line(l, 15, "static unsigned bar_15;");
	bar_commit("c4", "lib/bar2.c", l, 0);
	gitq(fix, "checkout", "-q", "main", NULL);
	/* the checkout's file is not the tree's blob (its line 5 would make
	 * c1 conflict): the object is read (test_apply_checkout()) */
	put(fix, "lib/bar.c", t = bar_text(5, "static int bar_5_edited;"));
	free(t);

	for (size_t i = 0; i < 4; i++) {
		char *d = branch_diff(i ? steps[i - 1] : "main", steps[i],
				      i == 3);
		is_int(repo_apply_overlay(r, "main", &ov, d, &delta, &res), 0,
		       "chain: %s on the overlay: runs", steps[i]);
		is_int(res.status, REPO_APPLY_CLEAN, "  clean");
		repo_apply_result_release(&res);
		repo_overlay_merge(&ov, &delta);
		free(d);
		is_int(repo_overlay_tree(r, "main", &ov, NULL, out), 0,
		       "  the tree: runs");
		t = xstrfmt("%s^{tree}", steps[i]);
		rev(want, fix, t);
		free(t);
		is_str(out, want, "  the tree git made");
		if (i != 1)
			continue;
		/* c1 once more: neither applies nor reverses now */
		d = branch_diff("main", "c1", 0);
		is_int(repo_apply_overlay(r, "main", &ov, d, &delta, &res), 0,
		       "chain: c1 again after c2: runs");
		is_int(res.status, REPO_APPLY_CONFLICT, "  a conflict");
		is_int(delta.n, 0, "  no delta");
		repo_apply_result_release(&res);
		free(d);
	}
	is_int(repo_file_overlay(r, "main", &ov, "lib/bar2.c", &text), 1,
	       "chain: the renamed file's text: there");
	t = git(fix, "show", "c4:lib/bar2.c", NULL);
	is_str(text.buf, t, "  as git has it, without a newline at the end");
	free(t);
	strbuf_release(&text);
	is_int(repo_file_overlay(r, "main", &ov, "lib/bar.c", &text), 0,
	       "  the old name: gone");
	strbuf_release(&text);
	repo_overlay_release(&ov);
	gitq(fix, "checkout", "-q", "--", "lib/bar.c", NULL);
	for (int i = 0; i < 22; i++)
		free((char *)l[i]);
}

/*
 * A file of 32 KiB or more is read from the checkout when it is the
 * tree's blob: then the same as from the object; one of the same size
 * but other content (a line edited there) is not used.
 */
static void test_apply_checkout(struct repo *r)
{
	struct repo_overlay delta = {0};
	struct repo_apply_result res;
	struct strbuf big = STRBUF_INIT;
	char out[REPO_HEX_SIZE], want[REPO_HEX_SIZE];
	char *d, *edited;

	for (int i = 1; i <= 3000; i++)
		strbuf_addf(&big, "static int big_%04d;\n", i);
	gitq(fix, "checkout", "-q", "-B", "bigf", "main", NULL);
	put(fix, "lib/big.c", big.buf);
	commit_all(fix, "a big file");
	edited = xstrdup(big.buf);
	memcpy(strstr(edited, "big_1500;"), "BIG", 3); /* the same size */
	gitq(fix, "checkout", "-q", "-B", "bigf2", NULL);
	put(fix, "lib/big.c", edited);
	commit_all(fix, "line 1500 changed");
	gitq(fix, "checkout", "-q", "bigf", NULL);
	d = branch_diff("bigf", "bigf2", 0);
	rev(want, fix, "bigf2^{tree}");
	for (int dirty = 0; dirty < 2; dirty++) {
		if (dirty) /* the checkout has the change already */
			put(fix, "lib/big.c", edited);
		is_int(repo_apply_overlay(r, "bigf", NULL, d, &delta, &res), 0,
		       "a big file, the checkout %s: runs",
		       dirty ? "edited to the same size" : "the tree's");
		is_int(res.status, REPO_APPLY_CLEAN, "  clean");
		repo_apply_result_release(&res);
		is_int(repo_overlay_tree(r, "bigf", &delta, NULL, out), 0,
		       "  the tree: runs");
		is_str(out, want, "  the tree git made");
		repo_overlay_release(&delta);
	}
	gitq(fix, "checkout", "-q", "-f", "main", NULL);
	free(d);
	free(edited);
	strbuf_release(&big);
}

static void test_apply_like_git(struct repo *r)
{
	char tree[REPO_HEX_SIZE];
	char *d;

	/* a rename with a change */
	gitq(fix, "checkout", "-q", "-B", "ren", "main", NULL);
	gitq(fix, "mv", "lib/bar.c", "lib/baz.c", NULL);
	put(fix, "lib/baz.c", d = bar_text(20, "static int baz_20;"));
	free(d);
	commit_all(fix, "rename");
	gitq(fix, "checkout", "-q", "main", NULL);
	d = branch_diff("main", "ren", 1);
	like(d, "rename from lib/bar.c", "the diff has a rename");
	same_as_git(r, "main", d, "rename with a change");
	free(d);

	/* last lines without a newline, changed and then given one */
	gitq(fix, "checkout", "-q", "-B", "nonl", "main", NULL);
	put(fix, "lib/nonl.c", "a\nb\nc");
	commit_all(fix, "no newline");
	gitq(fix, "checkout", "-q", "-B", "nonl2", "nonl", NULL);
	put(fix, "lib/nonl.c", "a\nb\nC");
	commit_all(fix, "no newline, changed");
	gitq(fix, "checkout", "-q", "-B", "nonl3", "nonl2", NULL);
	put(fix, "lib/nonl.c", "a\nb\nC\n");
	commit_all(fix, "newline added");
	gitq(fix, "checkout", "-q", "main", NULL);
	d = branch_diff("nonl", "nonl2", 0);
	same_as_git(r, "nonl", d, "change a last line without newline");
	same_as_git(r, "nonl2", d, "  again: already applied");
	free(d);
	d = branch_diff("nonl2", "nonl3", 0);
	same_as_git(r, "nonl2", d, "add the newline at the end");
	free(d);

	/* a file becomes a directory */
	gitq(fix, "checkout", "-q", "-B", "df", "main", NULL);
	gitq(fix, "rm", "-q", "lib/gone.c", NULL);
	put(fix, "lib/gone.c/inner.c", "int inner;\n");
	commit_all(fix, "file to directory");
	gitq(fix, "checkout", "-q", "main", NULL);
	d = branch_diff("main", "df", 0);
	same_as_git(r, "main", d, "a file replaced by a directory");
	free(d);
	d = branch_diff("df", "main", 0);
	same_as_git(r, "df", d, "a directory replaced by a file");
	free(d);

	/* hunks at the very beginning and end must match there */
	foo_branch(tree, "first", foo_text(0, "1=int foo_1 = -1;", NULL),
		   "main");
	foo_branch(tree, "last", foo_text(0, "60=int foo_60 = -60;", NULL),
		   "main");
	d = branch_diff("main", "first", 0);
	same_as_git(r, "shifted", d, "first-line hunk on a shifted file");
	free(d);
	gitq(fix, "checkout", "-q", "-B", "longer", "main", NULL);
	{
		char *t = foo_text(0, NULL), *t2 = xstrfmt("%sint more;\n", t);
		put(fix, "lib/foo.c", t2);
		free(t);
		free(t2);
	}
	commit_all(fix, "longer");
	gitq(fix, "checkout", "-q", "main", NULL);
	d = branch_diff("main", "last", 0);
	same_as_git(r, "longer", d, "last-line hunk on a longer file");
	same_as_git(r, "shifted", d, "last-line hunk on a shifted file");
	free(d);
	test_apply_modes(r);
	test_apply_file_dir(r);
	test_apply_overlay(r);
	test_apply_overlay_chain(r);
	test_apply_checkout(r);
}

static void test_commit_and_branch(struct repo *r)
{
	char tree[REPO_HEX_SIZE], c1[REPO_HEX_SIZE], c2[REPO_HEX_SIZE];
	char c3[REPO_HEX_SIZE], tip[REPO_HEX_SIZE];
	char *s;

	rev(tree, fix, "p^{tree}");
	is_int(repo_commit(r, bp2, tree, "Ann Author", "ann@example.org",
			   "Thu, 4 Aug 2016 12:00:00 +0200",
			   "lib: foo: two fixes\n\nbody\n", c1),
	       0, "commit");
	s = git(fix, "log", "-1", "--format=%an <%ae>|%at %ad|%cn|%P|%T|%s",
		"--date=raw", c1, NULL);
	{
		char *want = xstrfmt("Ann Author <ann@example.org>|1470304800 "
				     "1470304800 +0200|stableq|%s|%s|lib: foo: "
				     "two fixes",
				     bp2, tree);
		is_str(s, want, "  author, date, committer, parent, tree");
		free(want);
	}
	free(s);
	is_int(repo_commit(r, bp2, tree, "A", "a@b",
			   "Thu Aug 4 12:00:00 2016 +0200", "m\n", c2),
	       0, "git-style date");
	s = git(fix, "log", "-1", "--format=%at", c2, NULL);
	is_str(s, "1470304800", "  read right");
	free(s);
	is_int(repo_commit(r, bp2, tree, "A", "a@b",
			   "2016-08-04 10:00:00 +0000", "m\n", c2),
	       0, "ISO date");
	s = git(fix, "log", "-1", "--format=%at", c2, NULL);
	is_str(s, "1470304800", "  read right");
	free(s);
	is_int(repo_commit(r, bp2, tree, "A", "a@b", "yesterday-ish", "m\n",
			   c2),
	       ERR_INVALID, "unreadable date: invalid");
	is_int(repo_commit(r, c1, tree, "A", "a@b", NULL, "second\n", c2), 0,
	       "commit on a commit");
	is_int(repo_commit(r, c2, tree, "A", "a@b", NULL, "third\n", c3), 0,
	       "and another");

	is_int(repo_set_branch(r, "cand", c1, ""), 0, "create a branch");
	is_int(repo_set_branch(r, "cand", c1, ""), ERR_CONFLICT,
	       "create again: conflict");
	is_int(repo_set_branch(r, "cand", c2, c1), 0, "CAS from the tip moves");
	is_int(repo_branch_tip(r, "cand", tip), 0, "branch tip");
	is_str(tip, c2, "  is the new commit");
	is_int(repo_set_branch(r, "cand", c3, c1), ERR_CONFLICT,
	       "CAS from a stale tip: conflict");
	like(err_msg(), "moved", "  says it moved");
	is_int(repo_branch_tip(r, "cand", tip), 0, "branch tip again");
	is_str(tip, c2, "  unchanged");
	is_int(repo_set_branch(r, "cand", c3, NULL), 0, "unconditional set");
	is_int(repo_branch_tip(r, "nope", tip), ERR_NOTFOUND,
	       "unknown branch: not found");
	is_int(repo_set_branch(r, "bad..name", c3, NULL), ERR_INVALID,
	       "bad branch name: invalid");
}

static long mtime_of(const char *dir, const char *rel)
{
	struct stat st;
	char *p = xstrfmt("%s/%s", dir, rel);
	long t = lstat(p, &st) == 0 ? (long)st.st_mtime : -1;
	free(p);
	return t;
}

static void set_old_mtimes(const char *dir, const char *const *files)
{
	for (size_t i = 0; files[i]; i++) {
		char *p = xstrfmt("%s/%s", dir, files[i]);
		struct utimbuf ut = {946684800, 946684800};
		utime(p, &ut);
		free(p);
	}
}

static void test_checkout(struct repo *r)
{
	static const char *const files[] = {"lib/foo.c", "lib/bar.c",
					    "lib/gone.c", "scripts/x.sh", NULL};
	char *s, *want;

	/* first checkout: no record yet, the full path */
	gitq(fix, "checkout", "-q", "main", NULL);
	is_int(repo_checkout(r, "main"), 0, "checkout main (full)");
	s = slurp(fix, ".git/HEAD");
	ok(s && strlen(s) == 41 && strncmp(s, "ref:", 4), "  HEAD detached");
	free(s);
	set_old_mtimes(fix, files);

	/* a commit changing foo.c, adding added.c, deleting gone.c */
	is_int(repo_checkout(r, "modes"), 0, "checkout a 3-file change");
	is_int(mtime_of(fix, "lib/foo.c"), 946684800, "  foo.c untouched");
	is_int(mtime_of(fix, "scripts/x.sh"), 946684800, "  x.sh untouched");
	ok(mtime_of(fix, "lib/bar.c") != 946684800, "  bar.c (mode) rewritten");
	ok(access(P("%s/lib/bar.c", fix), X_OK) == 0, "  bar.c executable now");
	is_int(mtime_of(fix, "lib/gone.c"), -1, "  gone.c removed");
	s = slurp(fix, "lib/added.c");
	is_str(s, "int added;\n", "  added.c written");
	free(s);
	s = git(fix, "rev-parse", "HEAD", NULL);
	want = git(fix, "rev-parse", "modes", NULL);
	is_str(s, want, "  HEAD at it");
	free(s);
	free(want);

	set_old_mtimes(fix, files);
	is_int(repo_checkout(r, "p"), 0, "checkout p (foo.c differs)");
	s = slurp(fix, "lib/foo.c");
	like(s, "int foo_45 = 450;", "  foo.c has p's content");
	free(s);
	is_int(mtime_of(fix, "lib/added.c"), -1, "  added.c removed again");
	ok(mtime_of(fix, "lib/gone.c") > 946684800, "  gone.c back");
	is_int(mtime_of(fix, "scripts/x.sh"), 946684800, "  x.sh untouched");
	s = git(fix, "diff", "HEAD", "--stat", NULL);
	is_str(s, "", "  worktree equals HEAD (git diff HEAD)");
	free(s);

	/* a file that becomes a directory, and back */
	is_int(repo_checkout(r, "df"), 0,
	       "checkout: a file becomes a directory");
	s = slurp(fix, "lib/gone.c/inner.c");
	is_str(s, "int inner;\n", "  the file inside it");
	free(s);
	is_int(repo_checkout(r, "p"), 0, "checkout: and back");
	s = slurp(fix, "lib/gone.c");
	is_str(s, "int gone;\n", "  the file again");
	free(s);

	/* a git command moves HEAD behind stableq's back: the full path */
	gitq(fix, "checkout", "-q", "main", NULL);
	put(fix, "lib/bar.c", "scribbled\n");
	is_int(repo_checkout(r, "p"), 0, "checkout after git moved HEAD");
	s = git(fix, "status", "--porcelain", NULL);
	is_str(s, "", "  worktree and index clean");
	free(s);
	s = slurp(fix, "lib/bar.c");
	like(s, "bar_15 = 1", "  a scribbled file restored");
	free(s);
	is_int(repo_checkout(r, "no-such"), ERR_NOTFOUND,
	       "checkout unknown: not found");
	gitq(fix, "checkout", "-q", "main", NULL);
}

static void test_revert(void)
{
	char *rv = xstrfmt("%s/rv", tmp), *cl = xstrfmt("%s/rv-cli", tmp);
	char c1[REPO_HEX_SIZE], c2[REPO_HEX_SIZE], tip[REPO_HEX_SIZE];
	char out[REPO_HEX_SIZE], now[REPO_HEX_SIZE];
	struct repo *r = NULL;
	char *t, *s, *want, *patch = NULL;

	mkdir(rv, 0755);
	gitq(rv, "init", "-q", "-b", "main", NULL);
	put(rv, "lib/foo.c", t = foo_text(0, NULL));
	free(t);
	put(rv, "lib/bar.c", t = bar_text(0, NULL));
	free(t);
	commit_all(rv, "base");
	put(rv, "lib/foo.c", t = foo_text(0, "10=int foo_10 = 1;", NULL));
	free(t);
	commit_all(rv, "lib: foo: ten");
	rev(c1, rv, "HEAD");
	put(rv, "lib/bar.c", t = bar_text(3, "static int bar_3 = 3;"));
	free(t);
	put(rv, "lib/foo.c",
	    t = foo_text(0, "10=int foo_10 = 1;", "50=int foo_50 = 5;", NULL));
	free(t);
	commit_all(rv, "lib: bar and foo");
	rev(c2, rv, "HEAD");
	put(rv, "lib/foo.c",
	    t = foo_text(0, "10=int foo_10 = 2;", "50=int foo_50 = 5;", NULL));
	free(t);
	commit_all(rv, "lib: foo: ten again");
	rev(tip, rv, "HEAD");
	free(git(tmp, "clone", "-q", rv, cl, NULL));

	if (repo_open(&r, rv) < 0) {
		ok(0, "open %s: %s", rv, err_msg());
		return;
	}
	is_int(repo_revert(r, "main", c2, NULL, "Ann Author", "ann@example.org",
			   out),
	       0, "revert c2");
	gitq(cl, "revert", "--no-edit", c2, NULL);
	s = git(rv, "rev-parse", P("%s^{tree}", out), NULL);
	want = git(cl, "rev-parse", "HEAD^{tree}", NULL);
	is_str(s, want, "  tree equals git revert's");
	free(s);
	free(want);
	is_int(repo_branch_tip(r, "main", now), 0, "branch tip");
	is_str(now, out, "  branch moved to the revert");
	s = git(rv, "log", "-1", "--format=%an|%P|%B", out, NULL);
	want = xstrfmt("Ann Author|%s|Revert \"lib: bar and foo\"\n\nThis "
		       "reverts commit %s.",
		       tip, c2);
	is_str(s, want, "  author, parent, git's message");
	free(s);
	free(want);

	/* c1's line was changed again since: reverting it conflicts */
	is_int(repo_revert(r, "main", c1, "Revert\n", "A", "a@b", NULL),
	       ERR_CONFLICT, "revert that conflicts");
	like(err_msg(), "lib/foo.c", "  names the file");
	is_int(repo_branch_tip(r, "main", now), 0, "branch tip");
	is_str(now, out, "  unchanged");
	{
		char root[REPO_HEX_SIZE];
		rev(root, rv, "HEAD~4");
		is_int(repo_revert(r, "main", root, NULL, "A", "a@b", NULL),
		       ERR_INVALID, "root commit: invalid");
	}

	/* the revert as a mail, and that mail applies back */
	is_int(repo_format_patch(r, out, "PATCH 6.1", &patch), 0,
	       "format-patch");
	if (patch) {
		char *first =
			xstrfmt("From %s Mon Sep 17 00:00:00 2001\n", out);
		ok(!strncmp(patch, first, strlen(first)), "  From line");
		free(first);
		like(patch, "\nFrom: Ann Author <ann@example.org>\n",
		     "  From:");
		like(patch, "\nDate: ", "  Date:");
		like(patch,
		     "\nSubject: [PATCH 6.1] Revert \"lib: bar and foo\"",
		     "  Subject with prefix");
		like(patch, "\n---\n lib/bar.c | 2 +-\n", "  diffstat");
		like(patch, "\ndiff --git a/lib/bar.c b/lib/bar.c\n", "  diff");
		struct repo_apply_result res;
		char t2[REPO_HEX_SIZE];
		is_int(repo_apply(r, tip, patch, t2, &res), 0,
		       "  applies to the parent");
		s = git(rv, "rev-parse", P("%s^{tree}", out), NULL);
		is_str(t2, s, "  giving the revert's tree");
		free(s);
		repo_apply_result_release(&res);
	}
	free(patch);
	repo_free(r);
	free(rv);
	free(cl);
}

static size_t progress_calls;
static void on_progress(void *ctx, const char *phase, size_t done, size_t total)
{
	progress_calls++;
}

static void test_tarball(void)
{
	char *src = xstrfmt("%s/src/linux-source-6.1", tmp);
	char *tarball = xstrfmt("%s/linux-source-6.1.tar.xz", tmp);
	char *tree = xstrfmt("%s/var/linux", tmp);
	char *tree2 = xstrfmt("%s/var/linux2", tmp);
	char *ver = NULL, *s;
	struct repo *r = NULL;
	int ret;

	put(src, "Makefile",
	    "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\n"
	    "PATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION =\n"
	    "NAME = Curry Ramen\n");
	put(src, ".gitignore", "*\n");
	put(src, "scripts/run.sh", "#!/bin/sh\necho run\n");
	chmod(P("%s/scripts/run.sh", src), 0755);
	put(src, "lib/deep/er/file.c", "int deep;\n");
	put(src, "lib/.gitignore", "*.c\n");
	put(src, "empty.txt", "");
	symlink("scripts/run.sh", P("%s/run-link", src));
	mkdir(P("%s/emptydir", src), 0755);
	free(git(P("%s/src", tmp), "--version", NULL)); /* cwd exists */
	{
		const char *argv[] = {
			"tar", "-cJf",		 tarball,
			"-C",  P("%s/src", tmp), "linux-source-6.1",
			NULL};
		free(run_v(tmp, NULL, argv));
	}

	ret = repo_init_from_tarball(P("%s/missing.tar.xz", tmp), tree,
				     "linux-6.1.y", &ver, NULL, NULL);
	is_int(ret, ERR_NOTFOUND, "missing tarball: not found");
	like(err_msg(), "a Debian linux-source package",
	     "  says which kind of Debian package has it");
	ret = repo_init_from_tarball(P("%s/linux-source-6.12.tar.xz", tmp),
				     tree, "linux-6.12.y", &ver, NULL, NULL);
	is_int(ret, ERR_NOTFOUND, "missing 6.12 tarball: not found");
	like(err_msg(), "linux-source-6.12.tar.xz: no such file; it comes with"
			" the Debian package linux-source-6.12 (apt-get install"
			" linux-source-6.12",
	     "  names the Debian package to install");

	ret = repo_init_from_tarball(tarball, tree, "linux-6.1.y", &ver,
				     on_progress, NULL);
	is_int(ret, 0, "import the tarball");
	if (ret < 0)
		diag("%s", err_msg());
	is_str(ver, "6.1.192", "  version from the Makefile");
	free(ver);
	ver = NULL;
	ok(progress_calls > 0, "  progress shown");
	s = git(tree, "ls-tree", "-r", "--format=%(objectmode) %(path)",
		"linux-6.1.y", NULL);
	is_str(s,
	       "100644 .gitignore\n100644 Makefile\n100644 empty.txt\n"
	       "100644 lib/.gitignore\n100644 lib/deep/er/file.c\n"
	       "120000 run-link\n100755 scripts/run.sh",
	       "  every file, with modes and the symlink, despite .gitignore");
	free(s);
	s = git(tree, "cat-file", "-p", "linux-6.1.y:run-link", NULL);
	is_str(s, "scripts/run.sh", "  symlink target");
	free(s);
	s = git(tree, "log", "--format=%s|%an|%cn", "linux-6.1.y", NULL);
	is_str(s, "Linux 6.1.192|stableq|stableq",
	       "  one commit, fixed author");
	free(s);
	s = git(tree, "rev-parse", "v6.1.192^{commit}", NULL);
	{
		char *b = git(tree, "rev-parse", "linux-6.1.y", NULL);
		is_str(s, b, "  tag v6.1.192 on it");
		free(b);
	}
	free(s);
	s = git(tree, "cat-file", "-t", "v6.1.192", NULL);
	is_str(s, "tag", "  an annotated tag");
	free(s);
	s = git(tree, "symbolic-ref", "HEAD", NULL);
	is_str(s, "refs/heads/linux-6.1.y", "  HEAD on the branch");
	free(s);
	s = xstrfmt("%s.import-tmp", tree);
	ok(access(s, F_OK) < 0, "  no temp dir left");
	free(s);

	{
		char *before = git(tree, "rev-parse", "linux-6.1.y", NULL);
		ret = repo_init_from_tarball(tarball, tree, "linux-6.1.y", &ver,
					     NULL, NULL);
		is_int(ret, 1, "second import: already there");
		is_str(ver, "6.1.192", "  with its version");
		free(ver);
		ver = NULL;
		s = git(tree, "rev-parse", "linux-6.1.y", NULL);
		is_str(s, before, "  branch unchanged");
		free(s);
		ret = repo_init_from_tarball(tarball, tree2, "linux-6.1.y",
					     NULL, NULL, NULL);
		is_int(ret, 0, "import into another directory");
		s = git(tree2, "rev-parse", "linux-6.1.y", NULL);
		is_str(s, before, "  gives the same commit");
		free(s);
		free(before);
	}
	{
		/* a truncated tarball: tar's complaint, nothing left behind */
		struct strbuf sb = STRBUF_INIT;
		char *cut = xstrfmt("%s/cut/linux-source-6.1.tar.xz", tmp);
		char *where = xstrfmt("%s/var/cut", tmp);
		strbuf_read_file(&sb, tarball, 0);
		put(tmp, "cut/linux-source-6.1.tar.xz", "");
		write_file_atomic(cut, sb.buf, sb.len / 2);
		is_int(repo_init_from_tarball(cut, where, "linux-6.1.y", NULL,
					      NULL, NULL),
		       ERR_IO, "truncated tarball: an error");
		like(err_msg(), "tar -xf", "  naming tar");
		ok(access(where, F_OK) < 0 &&
			   access(P("%s.import-tmp", where), F_OK) < 0,
		   "  nothing left behind");
		strbuf_release(&sb);
		free(cut);
		free(where);
	}
	{
		char *junk = xstrfmt("%s/junk", tmp);
		put(junk, "file", "x\n");
		is_int(repo_init_from_tarball(tarball, junk, "linux-6.1.y",
					      NULL, NULL, NULL),
		       ERR_EXISTS, "a non-empty non-repository: in the way");
		free(junk);
	}

	if (repo_open(&r, tree) == 0) {
		is_str(repo_workdir(r), tree, "open: workdir");
		is_int(repo_describe(r, "linux-6.1.y", &s), 0, "describe");
		is_str(s, "v6.1.192", "  the tag");
		free(s);
		/* the import's record lets the first checkout skip the scan */
		char *mk = xstrfmt("%s/Makefile", tree);
		struct utimbuf ut = {946684800, 946684800};
		utime(mk, &ut);
		put(tree, "scripts/run.sh", "#!/bin/sh\necho changed\n");
		is_int(repo_checkout(r, "v6.1.192"), 0,
		       "checkout after import");
		is_int(mtime_of(tree, "Makefile"), 946684800,
		       "  Makefile untouched");
		s = slurp(tree, "scripts/run.sh");
		is_str(s, "#!/bin/sh\necho changed\n",
		       "  fast path: nothing differs, nothing scanned");
		free(s);
		/* (git status may rewrite the index, which voids the record) */
		put(tree, "scripts/run.sh", "#!/bin/sh\necho run\n");
		chmod(P("%s/scripts/run.sh", tree), 0755);
		s = git(tree, "status", "--porcelain", "--ignored", NULL);
		is_str(s, "", "  worktree and index clean for git");
		free(s);
		free(mk);
		repo_free(r);
	} else {
		ok(0, "open the imported tree: %s", err_msg());
	}
	free(src);
	free(tarball);
	free(tree);
	free(tree2);
}

static int rm_cb(const char *p, const struct stat *st, int flag,
		 struct FTW *ftw)
{
	return remove(p);
}

/* A cell's worktree: made once beside the tree, kept, checked out alone. */
static void test_worktree(struct repo *main_r)
{
	char *wt = xstrfmt("%s/fix-cell", tmp), *s, *want;
	struct repo *r = NULL;

	is_int(repo_worktree_ensure(fix, wt, "stableq-cell-t"), 0,
	       "worktree: made beside the repository");
	ok(access(P("%s/.git", wt), F_OK) == 0, "  its .git is there");
	is_int(repo_open(&r, wt), 0, "  it opens");
	is_int(repo_checkout(r, "modes"), 0, "  a checkout there (full)");
	s = slurp(wt, "lib/added.c");
	is_str(s, "int added;\n", "  writes the commit's files");
	free(s);
	s = git(wt, "rev-parse", "HEAD", NULL);
	want = git(fix, "rev-parse", "modes", NULL);
	is_str(s, want, "  its HEAD is its own: at the commit");
	free(s);
	free(want);
	s = git(fix, "rev-parse", "HEAD", NULL);
	want = git(fix, "rev-parse", "main", NULL);
	is_str(s, want, "  the repository's own worktree did not move");
	free(s);
	free(want);
	repo_free(r);
	r = NULL;
	is_int(repo_worktree_ensure(fix, wt, "stableq-cell-t"), 0,
	       "worktree: there already: kept");
	s = slurp(wt, "lib/added.c");
	is_str(s, "int added;\n", "  its files as they were");
	free(s);
	/* its directory removed: made again (the registration pruned) */
	gitq(fix, "worktree", "list", NULL);
	nftw(wt, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	is_int(repo_worktree_ensure(fix, wt, "stableq-cell-t"), 0,
	       "worktree: its directory gone: made again");
	is_int(repo_open(&r, wt), 0, "  it opens");
	is_int(repo_checkout(r, "main"), 0, "  and checks out");
	repo_free(r);
	/* a directory of other files, or another repository: refused */
	char *other = xstrfmt("%s/not-a-worktree", tmp);
	mkdir_p(other);
	write_file_atomic(P("%s/keep.txt", other), "mine\n", 5);
	is_int(repo_worktree_ensure(fix, other, "stableq-cell-u"),
	       ERR_INVALID, "a directory of other files: refused");
	like(err_msg(), "not-a-worktree: there, and not a worktree of",
	     "  naming it");
	ok(access(P("%s/keep.txt", other), F_OK) == 0, "  its files kept");
	free(other);
	free(wt);
	(void)main_r;
}

int main(void)
{
	struct repo *r = NULL;

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	make_fixture();
	if (repo_open(&r, fix) < 0) {
		ok(0, "open the fixture: %s", err_msg());
		return done_testing();
	}
	ok(1, "open the fixture repository");
	test_resolve(r);
	test_history(r);
	test_stable_queue();
	test_apply(r);
	test_apply_like_git(r);
	test_commit_and_branch(r);
	test_checkout(r);
	test_worktree(r);
	repo_free(r);
	test_revert();
	test_tarball();
	{
		struct repo *none = NULL;
		is_int(repo_open(&none, tmp), ERR_NOTFOUND,
		       "open a directory without a repository: not found");
	}
	if (!getenv("KEEP"))
		nftw(tmp, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	else
		diag("kept %s", tmp);
	return done_testing();
}
