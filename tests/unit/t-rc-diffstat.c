/* t-rc-diffstat.c: repo_diffstat() against `git diff --stat` and git format-patch on real repositories. */
#include "err.h"
#include "file.h"
#include "repo.h"
#include "spawn.h"
#include "strbuf.h"
#include "tap.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/t-rc-diffstat.XXXXXX";

static const char *const git_env[] = { "GIT_AUTHOR_NAME=Ann Author",
				       "GIT_AUTHOR_EMAIL=ann@example.org",
				       "GIT_COMMITTER_NAME=Cy Committer",
				       "GIT_COMMITTER_EMAIL=cy@example.org",
				       "GIT_CONFIG_NOSYSTEM=1",
				       "GIT_CONFIG_GLOBAL=/dev/null",
				       "COLUMNS=",
				       "LC_ALL=C",
				       NULL };

/* git's output, untouched (NULL when it failed). */
static char *git(const char *dir, ...)
{
	const char *argv[32] = { "git" };
	struct spawn sp = SPAWN_INIT;
	char *out = NULL;
	va_list ap;
	int n = 1;

	va_start(ap, dir);
	while (n < 31 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	sp.argv = argv;
	sp.env = git_env;
	sp.cwd = dir;
	sp.capture = 1;
	sp.timeout_ms = 60000;
	if (spawn_run(&sp) == 0 && sp.status == 0)
		out = strbuf_detach(&sp.out, NULL);
	else
		diag("git %s failed: %s", argv[1],
		     sp.out.len ? sp.out.buf : err_msg());
	spawn_release(&sp);
	return out;
}

static void put(const char *rel, const char *text)
{
	char *path = xstrfmt("%s/%s", tmp, rel);
	for (char *s = path + strlen(tmp) + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(path, 0755);
			*s = '/';
		}
	if (write_file_atomic(path, text, strlen(text)) < 0)
		diag("write %s: %s", path, err_msg());
	free(path);
}

static char *lines(int n, const char *fmt)
{
	struct strbuf sb = STRBUF_INIT;

	for (int i = 1; i <= n; i++) {
		strbuf_addf(&sb, fmt, i);
		strbuf_addch(&sb, '\n');
	}
	return strbuf_detach(&sb, NULL);
}

/* Commits what the worktree holds; its id. */
static void commit(const char *msg, char out[REPO_HEX_SIZE])
{
	char *o;

	free(git(tmp, "add", "-A", NULL));
	free(git(tmp, "commit", "-q", "--allow-empty", "-m", msg, NULL));
	o = git(tmp, "rev-parse", "HEAD", NULL);
	snprintf(out, REPO_HEX_SIZE, "%.40s", o ? o : "");
	free(o);
}

/* repo_diffstat(from, to, width) against git diff --stat=width. */
static void same(struct repo *r, const char *from, const char *to, int width,
		 const char *what)
{
	struct strbuf sb = STRBUF_INIT;
	char w[32];
	char *want;

	snprintf(w, sizeof(w), "--stat=%d", width);
	want = git(tmp, "diff", w, from, to, NULL);
	if (repo_diffstat(r, from, to, width, 0, &sb) < 0)
		diag("repo_diffstat: %s", err_msg());
	is_str(sb.buf, want, "%s: as git diff %s", what, w);
	free(want);
	strbuf_release(&sb);
}

int main(void)
{
	struct repo *r = NULL;
	char c0[REPO_HEX_SIZE], c1[REPO_HEX_SIZE], c2[REPO_HEX_SIZE],
		c3[REPO_HEX_SIZE], c4[REPO_HEX_SIZE], c5[REPO_HEX_SIZE];
	char *t;

	if (!mkdtemp(tmp))
		return 1;
	free(git(tmp, "init", "-q", "-b", "master", NULL));
	t = lines(50, "line %d");
	put("lib.c", t);
	free(t);
	put("Makefile", "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n"
			"EXTRAVERSION =\nNAME = Curry Ramen\n");
	t = lines(400, "big %d");
	put("drivers/net/ethernet/intel/ice/ice_main.c", t);
	free(t);
	put("docs/old-name.txt", "one\ntwo\nthree\nfour\nfive\nsix\n");
	put("gone.c", "a\nb\n");
	commit("base", c0);
	if (repo_open(&r, tmp) < 0) {
		diag("repo_open: %s", err_msg());
		return 1;
	}

	/* one line of one file */
	t = lines(50, "line %d");
	*strstr(t, "line 8\n") = 'L';
	put("lib.c", t);
	free(t);
	commit("one", c1);
	same(r, c0, c1, 80, "one file, one line");
	{
		struct strbuf sb = STRBUF_INIT;
		repo_diffstat(r, c0, c1, 0, 0, &sb);
		is_str(sb.buf, " lib.c | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n",
		       "the singular forms, width 0 as 80");
		strbuf_release(&sb);
	}

	/* several files: sorted by path, aligned, a large change scaled */
	put("Makefile", "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 193\n"
			"EXTRAVERSION = -rc1\nNAME = Curry Ramen\n");
	t = lines(400, "BIG %d");
	put("drivers/net/ethernet/intel/ice/ice_main.c", t);
	free(t);
	put("a-new-file.h", "#define X 1\n");
	{
		char *gone = xstrfmt("%s/gone.c", tmp);
		unlink(gone);
		free(gone);
	}
	commit("many", c2);
	same(r, c1, c2, 80, "sorted, aligned, scaled, created and deleted");
	same(r, c0, c2, 80, "two commits together");
	same(r, c1, c2, 72, "the same at 72 columns");
	same(r, c1, c2, 40, "the same at 40 columns");

	/* a path longer than the width: "..." and the rest from a slash */
	{
		const char *deep = "arch/arm64/boot/dts/freescale/"
				   "imx8mp-very-long-board-name-with-many-"
				   "words-in-it-evk.dts";
		put(deep, "x\n");
		commit("deep", c3);
		same(r, c2, c3, 80, "a long path cut with ...");
		same(r, c2, c3, 60, "... at 60 columns");
	}

	/* a rename with an edit: dir/{a => b} */
	free(git(tmp, "mv", "docs/old-name.txt", "docs/new-name.txt", NULL));
	put("docs/new-name.txt", "one\ntwo\nthree\nfour\nfive\nsix!\n");
	commit("rename", c4);
	same(r, c3, c4, 80, "a rename: docs/{old-name.txt => new-name.txt}");

	/* a binary file and a name git quotes */
	{
		char *path = xstrfmt("%s/blob.bin", tmp);
		static const char bin[] = { 0, 1, 2, 3, 0, 5, 6, 7, 0 };
		write_file_atomic(path, bin, sizeof(bin));
		free(path);
		put("caf\xc3\xa9.c", "x\n");
		commit("binary", c5);
		same(r, c4, c5, 80, "a binary file (Bin) and a quoted name");
	}

	/* the per-patch diffstat is format-patch's: 72 columns and --summary */
	{
		struct strbuf sb = STRBUF_INIT;
		char *fp = git(tmp, "format-patch", "--stdout", "-1", c2, NULL);
		const char *s = fp ? strstr(fp, "\n---\n") : NULL;
		const char *e = s ? strstr(s, "\n\ndiff --git") : NULL;
		char *want = s && e ? xstrndup(s + 5, (size_t)(e - s - 4)) : NULL;
		repo_diffstat(r, c1, c2, 72, 1, &sb);
		is_str(sb.buf, want, "with summary at 72: as git format-patch");
		free(want);
		free(fp);
		strbuf_release(&sb);
	}

	/* the diff itself: what `git diff` gives, applied by git apply */
	{
		struct strbuf sb = STRBUF_INIT;
		char *want = git(tmp, "diff", c1, c2, NULL);
		repo_diff_text(r, c1, c2, &sb);
		ok(want && sb.len > 100 && strstr(sb.buf, "diff --git a/Makefile b/Makefile"),
		   "repo_diff_text: a git diff of the two commits");
		free(want);
		strbuf_release(&sb);
	}
	repo_free(r);
	rm_rf(tmp);
	return done_testing();
}
