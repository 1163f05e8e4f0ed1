/* t-evidence-lines.c: a property test of repo_lines_placed() on patches made from real C code. */
#include "err.h"
#include "file.h"
#include "repo.h"
#include "spawn.h"
#include "strbuf.h"
#include "tap.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Fixes that change a tree but whose lines a naive content check finds in
 * it already (issue 34): a guard dropped and its statement dedented, two
 * statements swapped, a statement doubled, a statement re-indented. Each
 * is made from real code (the 6.1 tree at var/linux when it is there, and
 * always a C file of our own), applies cleanly at its place, and would
 * change the tree: none may come out "placed" (the checks' already-applied,
 * which releases a patch without building it).
 */

#define OWN "tests/fixtures/evidence/guards.c"
static const char *const real_files[] = {
	"kernel/fork.c",	  "kernel/sched/core.c", "mm/memory.c",
	"net/ipv4/tcp.c",	  "fs/namei.c",		 "drivers/base/core.c",
	"net/core/dev.c",	  "fs/ext4/super.c",	 "drivers/usb/core/hub.c",
	"sound/core/pcm_native.c",
};
/* Mutations of one kind per file, spread over it. */
#define PER_FILE 12

enum kind { K_GUARD, K_BRACED, K_SWAP, K_DOUBLE, K_DEDENT, K_COUNT };
static const char *const kind_name[K_COUNT] = {
	"a guard dropped, its statement dedented",
	"a braced guard dropped, its block dedented",
	"two statements swapped",
	"a statement doubled",
	"a statement re-indented",
};

static const char *const git_env[] = { "GIT_AUTHOR_NAME=Ann Author",
				       "GIT_AUTHOR_EMAIL=ann@example.org",
				       "GIT_COMMITTER_NAME=Cy Committer",
				       "GIT_COMMITTER_EMAIL=cy@example.org",
				       "GIT_CONFIG_NOSYSTEM=1",
				       "GIT_CONFIG_GLOBAL=/dev/null",
				       "LC_ALL=C",
				       NULL };

static int git(const char *dir, const char *a, const char *b, const char *c)
{
	const char *argv[] = { "git", "-C", dir, a, b, c, NULL };
	struct spawn sp = SPAWN_INIT;
	int ret;

	sp.argv = argv;
	sp.env = git_env;
	sp.capture = 1;
	sp.timeout_ms = 120000;
	ret = spawn_run(&sp) == 0 && sp.status == 0 ? 0 : -1;
	if (ret)
		diag("git %s: %s", a, sp.out.buf ? sp.out.buf : err_msg());
	spawn_release(&sp);
	return ret;
}

struct lines {
	char **l;
	size_t n;
};

static void lines_split(struct lines *t, const char *buf)
{
	const char *p = buf;

	t->l = NULL;
	t->n = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		t->l = xrealloc(t->l, (t->n + 1) * sizeof(*t->l));
		t->l[t->n++] = xstrndup(p, n);
		p = nl ? nl + 1 : p + n;
	}
}

static void lines_free(struct lines *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->l[i]);
	free(t->l);
}

static size_t indent(const char *s)
{
	size_t n = 0;
	while (s[n] == '\t')
		n++;
	return n;
}

static int ends(const char *s, const char *w)
{
	size_t n = strlen(s), k = strlen(w);
	return n >= k && !strcmp(s + n - k, w);
}

/* Does s, past ind characters, start with w? */
static int word_at(const char *s, size_t ind, const char *w)
{
	return strlen(s) >= ind && !strncmp(s + ind, w, strlen(w));
}

/* A statement of its own: "\t\tfoo(bar);", telling, no label or macro. */
static int statement(const char *s)
{
	size_t i = indent(s);
	return i && s[i] != ' ' && s[i] != '}' && ends(s, ";") &&
	       strlen(s + i) >= 10 && !strchr(s, '"') &&
	       strncmp(s + i, "return", 6) && strncmp(s + i, "break", 5) &&
	       strncmp(s + i, "goto", 4);
}

/*
 * A diff of path replacing old lines [at, at + del) by add[0..nadd), with
 * three lines of context, as `diff -u` writes it.
 */
static char *make_diff(const char *path, const struct lines *t, size_t at,
		       size_t del, char **add, size_t nadd)
{
	struct strbuf d = STRBUF_INIT;
	size_t b = at >= 3 ? at - 3 : 0;
	size_t e = at + del + 3 <= t->n ? at + del + 3 : t->n;

	strbuf_addf(&d, "--- a/%s\n+++ b/%s\n@@ -%zu,%zu +%zu,%zu @@\n", path,
		    path, b + 1, e - b, b + 1, e - b - del + nadd);
	for (size_t i = b; i < at; i++)
		strbuf_addf(&d, " %s\n", t->l[i]);
	for (size_t i = at; i < at + del; i++)
		strbuf_addf(&d, "-%s\n", t->l[i]);
	for (size_t i = 0; i < nadd; i++)
		strbuf_addf(&d, "+%s\n", add[i]);
	for (size_t i = at + del; i < e; i++)
		strbuf_addf(&d, " %s\n", t->l[i]);
	return strbuf_detach(&d, NULL);
}

/* The mutation of kind k at line i of t, or NULL when it does not fit. */
static char *mutate(enum kind k, const char *path, const struct lines *t,
		    size_t i)
{
	char *add[8], *d = NULL;
	size_t n = 0, ind = indent(t->l[i]);
	const char *s = t->l[i];

	switch (k) {
	case K_GUARD:
		/* \tif (COND)\n\t\tstmt;\n, then not another line of it */
		if (i + 2 >= t->n || strncmp(s + ind, "if (", 4) ||
		    !ends(s, ")") || !ind || !statement(t->l[i + 1]) ||
		    indent(t->l[i + 1]) != ind + 1 ||
		    indent(t->l[i + 2]) > ind ||
		    word_at(t->l[i + 2], ind, "else"))
			return NULL;
		add[n++] = xstrdup(t->l[i + 1] + 1);
		d = make_diff(path, t, i, 2, add, n);
		break;
	case K_BRACED: {
		/* \tif (COND) {\n one to four lines \n\t}\n */
		size_t j = i + 1;
		if (!ind || strncmp(s + ind, "if (", 4) || !ends(s, ") {"))
			return NULL;
		while (j < t->n && j < i + 6 && indent(t->l[j]) > ind)
			j++;
		if (j == i + 1 || j >= t->n || j == i + 6 ||
		    indent(t->l[j]) != ind || strcmp(t->l[j] + ind, "}") ||
		    (j + 1 < t->n && word_at(t->l[j + 1], ind, "else")))
			return NULL;
		for (size_t m = i + 1; m < j; m++)
			add[n++] = xstrdup(*t->l[m] ? t->l[m] + 1 : "");
		d = make_diff(path, t, i, j - i + 1, add, n);
		break;
	}
	case K_SWAP:
		if (i + 1 >= t->n || !statement(s) || !statement(t->l[i + 1]) ||
		    indent(t->l[i + 1]) != ind || !strcmp(s, t->l[i + 1]))
			return NULL;
		add[n++] = xstrdup(t->l[i + 1]);
		add[n++] = xstrdup(s);
		d = make_diff(path, t, i, 2, add, n);
		break;
	case K_DOUBLE:
		if (!statement(s))
			return NULL;
		add[n++] = xstrdup(s);
		d = make_diff(path, t, i + 1, 0, add, n);
		break;
	case K_DEDENT:
		if (!statement(s) || ind < 2)
			return NULL;
		add[n++] = xstrdup(s + 1);
		d = make_diff(path, t, i, 1, add, n);
		break;
	default:
		return NULL;
	}
	for (size_t m = 0; m < n; m++)
		free(add[m]);
	return d;
}

struct tally {
	size_t made[K_COUNT], clean[K_COUNT], placed[K_COUNT], after[K_COUNT];
};

static void try_file(struct repo *r, const char *base, const char *path,
		     const char *text, struct tally *ty)
{
	struct lines t;

	lines_split(&t, text);
	for (int k = 0; k < K_COUNT; k++) {
		size_t found = 0, cands = 0;
		/* the candidates first, to spread PER_FILE over the file */
		for (size_t i = 0; i < t.n; i++) {
			char *d = mutate(k, path, &t, i);
			cands += d != NULL;
			free(d);
		}
		size_t step = cands > PER_FILE ? cands / PER_FILE : 1, c = 0;
		for (size_t i = 0; i < t.n && found < PER_FILE; i++) {
			char *d = mutate(k, path, &t, i);
			struct repo_apply_result res = { 0 };
			char out[REPO_HEX_SIZE];
			struct strbuf why = STRBUF_INIT;

			if (!d)
				continue;
			if (c++ % step) {
				free(d);
				continue;
			}
			found++;
			ty->made[k]++;
			if (repo_apply(r, base, d, out, &res) == 0 &&
			    res.status == REPO_APPLY_CLEAN) {
				ty->clean[k]++;
				int p0 = repo_lines_placed(r, base, NULL, d, 0,
							   &why);
				int p1 = repo_lines_placed(r, base, NULL, d, 1,
							   NULL);
				if (p0 > 0 || p1 > 0) {
					ty->placed[k]++;
					if (ty->placed[k] <= 2)
						diag("placed (%s), %s line %zu:\n%s",
						     kind_name[k], path, i + 1,
						     d);
				}
				/* once applied, it is there */
				ty->after[k] += repo_lines_placed(r, out, NULL,
								  d, 0,
								  NULL) > 0;
			}
			err_clear();
			repo_apply_result_release(&res);
			strbuf_release(&why);
			free(d);
		}
	}
	lines_free(&t);
}

/*
 * Absent code is told by the lines a patch removes and its telling context,
 * not by generic lines the file has elsewhere (issue 34, item 4).
 */
static void absent(struct repo *r, const char *base)
{
	static const struct {
		const char *hunk;
		int nowhere;
		const char *what;
	} c[] = {
		{ "@@ -120,7 +120,7 @@ static int gdev_setup_the_queue(struct gdev *g)\n"
		  " \tq = gdev_alloc_the_queue(g, GDEV_QUEUE_DEPTH);\n"
		  " \tif (!q)\n"
		  " \t\terr = -ENOMEM;\n"
		  "-\tgdev_queue_attach(g, q, GDEV_QUEUE_FLAGS);\n"
		  "+\tgdev_queue_attach(g, q, GDEV_QUEUE_FLAGS | GDEV_ONESHOT);\n"
		  " \t/*\n"
		  " \t * the queue is live from here on\n"
		  " \t */\n",
		  1, "code the file lacks, beside lines every file has (err ="
		     " -ENOMEM;, a comment's end) -> nowhere" },
		{ "@@ -27,4 +27,4 @@ static int gdev_open(struct gdev *g)\n"
		  " \tif (!g->buf)\n"
		  " \t\terr = -ENOMEM;\n"
		  "-\tgdev_note_the_open(g);\n"
		  "+\tgdev_note_the_open(g, 1);\n"
		  " \tgdev_count_the_user(g);\n",
		  0, "two kept lines standing together in the file -> there" },
		{ "@@ -98,4 +98,4 @@ static int gdev_probe(struct device *dev)\n"
		  " \tgdev_count_the_probe(dev);\n"
		  "-\tmutex_init(&g->lock);\n"
		  "+\tmutex_init(&g->lock2);\n"
		  " \tgdev_count_the_user(g);\n"
		  " \tgdev_note_the_open(g);\n",
		  0, "a removed line of its own in the file -> there" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *d = xstrfmt("--- a/own/guards.c\n+++ b/own/guards.c\n%s",
				  c[i].hunk);
		struct strbuf why = STRBUF_INIT;
		is_int(repo_lines_nowhere(r, base, NULL, d, &why), c[i].nowhere,
		       "%s", c[i].what);
		if (c[i].nowhere)
			like(why.buf, "none of the 4 lines it removes or keeps",
			     "... saying what it looked for");
		strbuf_release(&why);
		free(d);
	}
}

int main(void)
{
	char dir[] = "/tmp/t-evidence-lines.XXXXXX";
	struct tally ty = { 0 };
	struct repo *r = NULL;
	char base[REPO_HEX_SIZE];
	const char *paths[sizeof(real_files) / sizeof(real_files[0]) + 1];
	size_t npaths = 0;
	int have_real = 0;

	if (!mkdtemp(dir))
		return 1;
	/* the files, copied into a repository of their own */
	paths[npaths++] = "own/guards.c";
	for (size_t i = 0; i < sizeof(real_files) / sizeof(real_files[0]); i++) {
		char *src = xstrfmt("var/linux/%s", real_files[i]);
		if (access(src, R_OK) == 0)
			paths[npaths++] = real_files[i];
		free(src);
	}
	have_real = npaths > 1;
	for (size_t i = 0; i < npaths; i++) {
		struct strbuf text = STRBUF_INIT;
		char *src = i ? xstrfmt("var/linux/%s", paths[i]) : xstrdup(OWN);
		char *dst = xstrfmt("%s/%s", dir, paths[i]);
		char *slash = strrchr(dst, '/');
		*slash = '\0';
		char *mk = xstrfmt("mkdir -p '%s'", dst);
		(void)!system(mk);
		*slash = '/';
		ok(strbuf_read_file(&text, src, 16 << 20) == 0 &&
			   write_file_atomic(dst, text.buf, text.len) == 0,
		   "%s copied", src);
		strbuf_release(&text);
		free(mk);
		free(src);
		free(dst);
	}
	if (!have_real)
		diag("var/linux is not there: only %s", OWN);
	ok(git(dir, "init", "-q", ".") == 0 && git(dir, "add", "-A", ".") == 0 &&
		   git(dir, "commit", "-qm", "the tree") == 0,
	   "a repository of %zu C files", npaths);
	ok(repo_open(&r, dir) == 0 && repo_resolve(r, "HEAD", base) == 0 &&
		   repo_objects_in_memory(r) == 0,
	   "opened");
	for (size_t i = 0; i < npaths; i++) {
		struct strbuf text = STRBUF_INIT;
		char *p = xstrfmt("%s/%s", dir, paths[i]);
		if (strbuf_read_file(&text, p, 16 << 20) == 0)
			try_file(r, base, paths[i], text.buf, &ty);
		strbuf_release(&text);
		free(p);
	}
	absent(r, base);
	for (int k = 0; k < K_COUNT; k++) {
		diag("%s: %zu made, %zu apply cleanly, %zu placed; once"
		     " applied, %zu placed",
		     kind_name[k], ty.made[k], ty.clean[k], ty.placed[k],
		     ty.after[k]);
		ok(ty.clean[k] >= (have_real ? 20u : 2u),
		   "%s: %zu patches that apply cleanly", kind_name[k],
		   ty.clean[k]);
		is_int(ty.placed[k], 0,
		       "%s: none is taken for a patch already in the tree",
		       kind_name[k]);
		/* the other way: on the tree it made, its lines are seen
		 * (a moved statement is the reverse apply's to find) */
		if (k == K_SWAP || k == K_DOUBLE)
			ok(ty.after[k] * 2 >= ty.clean[k],
			   "%s: once applied, most are seen in the tree (%zu)",
			   kind_name[k], ty.after[k]);
	}
	repo_free(r);
	char *rm = xstrfmt("rm -rf '%s'", dir);
	(void)!system(rm);
	free(rm);
	return done_testing();
}
