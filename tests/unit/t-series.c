/* t-series.c: series_parse() and series_load() on real temp queues. */
#include "err.h"
#include "file.h"
#include "series.h"
#include "strbuf.h"
#include "tap.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/t-series.XXXXXX";

static void put(const char *rel, const char *text)
{
	char *path = xstrfmt("%s/%s", tmp, rel);
	if (write_file_atomic(path, text, strlen(text)) < 0)
		diag("write %s: %s", path, err_msg());
	free(path);
}

static char *dir(const char *rel)
{
	char *path = xstrfmt("%s/%s", tmp, rel);
	mkdir(path, 0755);
	return path;
}

static void test_parse(void)
{
	static const char text[] =
		"# stable queue for 6.1\n"
		"\n"
		"0001-first.patch\n"
		"  0002-second.patch -p1   # trailing comment\n"
		"# 0003-dropped.patch\n"
		"#0004-also-dropped.patch\n"
		"sub/0005-fifth.patch\r\n"
		"name#with-hash.patch\n"
		"\t\n"
		"0006-last.patch -p1 --fuzz=0";
	struct series_entry *e = NULL;
	size_t n = 0;
	int ret = series_parse(&e, &n, text, sizeof(text) - 1, "q");

	is_int(ret, 0, "series parses");
	is_int(n, 5, "five entries (comments, blanks, # name lines skipped)");
	if (n == 5) {
		is_str(e[0].name, "0001-first.patch", "1: name");
		is_int(e[0].line, 3, "1: line");
		is_str(e[0].path, "q/0001-first.patch", "1: path");
		is_str(e[1].name, "0002-second.patch",
		       "2: -p1 and comment dropped");
		is_int(e[1].line, 4, "2: line");
		is_str(e[2].name, "sub/0005-fifth.patch",
		       "3: subdirectory, CR dropped");
		is_str(e[3].name, "name#with-hash.patch", "4: # inside a name");
		is_str(e[4].name, "0006-last.patch",
		       "5: last line without newline");
		is_int(e[4].line, 10, "5: line 10");
	}
	series_free(e, n);

	ret = series_parse(&e, &n, "", 0, NULL);
	ok(ret == 0 && n == 0, "an empty text parses to no entries");
	series_free(e, n);
	ret = series_parse(&e, &n, "a.patch\n", 8, NULL);
	if (ok(ret == 0 && n == 1, "no dir"))
		is_str(e[0].path, "a.patch", "path without dir");
	series_free(e, n);
}

static void parse_fails(const char *text, const char *needle)
{
	struct series_entry *e = (struct series_entry *)1;
	size_t n = 7;
	int ret = series_parse(&e, &n, text, strlen(text), "q");

	is_int(ret, ERR_INVALID, "rejected: %s", needle);
	ok(e == NULL && n == 0, "nothing returned: %s", needle);
	like(err_msg(), needle, "message: %s", needle);
}

static void test_parse_bad(void)
{
	parse_fails("a.patch\n../x.patch\n",
		    "q/series:2: ../x.patch: path leaves the queue directory");
	parse_fails("/etc/passwd\n",
		    "series:1: /etc/passwd: path leaves the queue directory");
	parse_fails(
		"ok.patch\nsub/../../x.patch -p1\n",
		"series:2: sub/../../x.patch: path leaves the queue directory");
	parse_fails("sub/..\n", "series:1: sub/..: path leaves");
	parse_fails("a.patch -p0\n",
		    "series:1: a.patch: option -p0 is not supported");
	parse_fails("a.patch\nb.patch\na.patch\n",
		    "series:3: a.patch: listed twice (first at line 1)");
	struct series_entry *e = NULL;
	size_t n = 0;
	is_int(series_parse(&e, &n, "a\0b\n", 4, "q"), ERR_INVALID,
	       "NUL byte rejected");
	like(err_msg(), "series:1: NUL byte", "NUL message");
	/* ".." inside a name is fine; only a ".." component leaves */
	is_int(series_parse(&e, &n, "a..b.patch\n", 11, "q"), 0,
	       "a..b.patch is a name");
	series_free(e, n);
}

static void load_fails(const char *d, int code, const char *needle)
{
	struct series_entry *e = (struct series_entry *)1;
	size_t n = 7;
	int ret = series_load(&e, &n, d);

	is_int(ret, code, "load fails: %s", needle);
	ok(e == NULL && n == 0, "nothing returned: %s", needle);
	like(err_msg(), needle, "message: %s", needle);
}

static void test_load(void)
{
	struct series_entry *e = NULL;
	size_t n = 0;
	char *q = dir("queue"), *sub = dir("queue/sub"), *msg;

	put("queue/0001-a.patch", "x");
	put("queue/sub/0002-b.patch", "y");
	put("outside.patch", "z");
	put("queue/series", "# comment\n0001-a.patch\nsub/0002-b.patch -p1\n# "
			    "0003-gone.patch\n");
	is_int(series_load(&e, &n, q), 0, "queue loads");
	is_int(n, 2, "two patches");
	if (n == 2) {
		msg = xstrfmt("%s/sub/0002-b.patch", q);
		is_str(e[1].path, msg, "path under the directory");
		free(msg);
	}
	series_free(e, n);

	/* a symlink inside the queue pointing inside is fine */
	msg = xstrfmt("%s/link.patch", q);
	symlink("0001-a.patch", msg);
	free(msg);
	put("queue/series", "link.patch\n");
	is_int(series_load(&e, &n, q), 0, "a symlink staying inside is fine");
	series_free(e, n);

	msg = xstrfmt("%s/escape.patch", q);
	symlink("../outside.patch", msg);
	free(msg);
	put("queue/series", "0001-a.patch\nescape.patch\n");
	load_fails(q, ERR_INVALID,
		   "series:2: escape.patch: path leaves the queue directory");

	put("queue/series", "0001-a.patch\n\n0009-missing.patch\n");
	load_fails(q, ERR_NOTFOUND,
		   "queue/series:3: 0009-missing.patch: no such file");

	put("queue/series", "../outside.patch\n");
	load_fails(q, ERR_INVALID,
		   "queue/series:1: ../outside.patch: path leaves the queue "
		   "directory");

	put("queue/series", "sub\n");
	load_fails(q, ERR_INVALID, "series:1: sub: not a regular file");

	put("queue/series", "# nothing here\n\n# 0001-a.patch\n");
	msg = xstrfmt("%s: empty series", q);
	load_fails(q, ERR_INVALID, msg);
	free(msg);

	char *empty = dir("empty");
	msg = xstrfmt("%s: empty directory", empty);
	load_fails(empty, ERR_INVALID, msg);
	ok(series_dir_empty(empty) == 1,
	   "an empty directory is a queue not begun (the daemon imports nothing)");
	ok(series_dir_empty(q) == 0, "a queue with files is not empty");
	free(msg);

	char *noseries = dir("noseries");
	put("noseries/0001-a.patch", "x");
	load_fails(noseries, ERR_NOTFOUND, "noseries: no series file");

	msg = xstrfmt("%s/does-not-exist", tmp);
	load_fails(msg, ERR_NOTFOUND, "does-not-exist: cannot open");
	free(msg);

	free(q);
	free(sub);
	free(empty);
	free(noseries);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

static char *read_series(const char *d)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/series", d);

	strbuf_read_file(&sb, path, 0);
	free(path);
	return strbuf_detach(&sb, NULL);
}

static void test_leave_out(void)
{
	char *d = dir("lo");
	char *text;
	struct series_entry *e = NULL;
	size_t n = 0;

	put("lo/series", "# the queue\n1.patch\n1.patch.orig -p1\n  2.patch -p1 # why not\n3.patch");
	is_int(series_leave_out(d, "1.patch", "dropped: it\nbreaks"), 1, "1.patch left out");
	is_int(series_leave_out(d, "2.patch", "dropped"), 1, "2.patch (indented, with -p1 and a comment) left out");
	is_int(series_leave_out(d, "3.patch", "dropped"), 1, "3.patch (the last line, no newline) left out");
	text = read_series(d);
	is_str(text, "# the queue\n# 1.patch  # dropped: it breaks\n1.patch.orig -p1\n"
		     "#   2.patch -p1 # why not  # dropped\n# 3.patch  # dropped",
	       "the entries are comments, the note on one line, the rest as it was");
	free(text);
	is_int(series_leave_out(d, "1.patch", "again"), 0, "a name already left out: nothing to do");
	is_int(series_leave_out(d, "4.patch", "x"), 0, "a name not in the series: nothing to do");
	ok(series_parse(&e, &n, "# 1.patch  # dropped\n1.patch.orig -p1\n", 38, d) == 0 && n == 1 &&
		   !strcmp(e[0].name, "1.patch.orig"),
	   "the series parses to what is left");
	series_free(e, n);
	free(d);
	d = xstrfmt("%s/nowhere", tmp);
	ok(series_leave_out(d, "1.patch", "x") < 0, "no series file: an error (%s)", err_msg());
	free(d);
}

static void test_append(void)
{
	char *d = dir("ap"), *text;

	put("ap/series", "# the queue\n1.patch -p1\n# 2.patch  # dropped");
	is_int(series_append(d, "revert-1.patch"), 1, "a new name is appended");
	is_int(series_append(d, "revert-1.patch"), 0, "... once: appending it again changes nothing");
	is_int(series_append(d, "1.patch"), 0, "an entry written with quilt options counts as present");
	is_int(series_append(d, "2.patch"), 1, "a commented-out name is not an entry: appended");
	text = read_series(d);
	is_str(text, "# the queue\n1.patch -p1\n# 2.patch  # dropped\nrevert-1.patch\n2.patch\n",
	       "the series keeps its lines, the new names last");
	free(text);
	ok(series_append(d, "../escape.patch") < 0, "a name the parser would refuse is refused (%s)", err_msg());
	ok(series_append(d, "x.patch\ny.patch") < 0, "... and so is one that is two lines (%s)", err_msg());
	text = read_series(d);
	ok(!strstr(text, "escape") && !strstr(text, "y.patch"), "... leaving the series as it was");
	free(text);
	free(d);
	d = dir("ap-new");
	is_int(series_append(d, "a.patch"), 1, "no series file yet: one is made");
	text = read_series(d);
	is_str(text, "a.patch\n", "... naming the patch");
	free(text);
	free(d);
}

static void test_copy(void)
{
	char *from = dir("cp-from"), *to = xstrfmt("%s/cp-to", tmp);
	char *sub = dir("cp-from/sub"), *text;
	struct stat st;

	put("cp-from/series", "a.patch\nsub/b.patch\n# c.patch\n");
	put("cp-from/a.patch", "A");
	put("cp-from/sub/b.patch", "B");
	put("cp-from/stray.txt", "not in the series");
	is_int(series_copy(from, to), 0, "a queue directory is copied");
	text = read_series(to);
	is_str(text, "a.patch\nsub/b.patch\n# c.patch\n", "... its series as it was");
	free(text);
	char *b = xstrfmt("%s/sub/b.patch", to), *stray = xstrfmt("%s/stray.txt", to);
	ok(stat(b, &st) == 0 && st.st_size == 1, "... the patches it names, in their folders");
	ok(stat(stray, &st) < 0, "... and nothing else");
	free(b);
	free(stray);
	ok(series_copy(from, to) < 0, "copying onto an existing directory is an error (%s)", err_msg());
	char *bad = dir("cp-bad"), *to2 = xstrfmt("%s/cp-to2", tmp);
	put("cp-bad/series", "missing.patch\n");
	ok(series_copy(bad, to2) < 0, "a seed whose series names a missing file: an error (%s)", err_msg());
	ok(stat(to2, &st) < 0, "... and no directory appears");
	free(bad);
	free(to2);
	free(sub);
	free(from);
	free(to);
}

/* stableq's own revert files are recognized (issue 11, item 4). */
static void test_own(void)
{
	static const char own[] =
		"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 "
		"00:00:00 2001\nFrom: stableq <stableq@localhost>\n"
		"Date: Mon, 1 Sep 2025 10:00:00 +0000\n"
		"Subject: [PATCH] Revert \"x\"\n\n";
	static const char other[] =
		"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 "
		"00:00:00 2001\nFrom: Ann <ann@example.org>\n";
	static const char spoof_name[] =
		"From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 "
		"00:00:00 2001\nFrom: stableq <stableq@example.org>\n";
	static const char not_hex[] =
		"From 0123456789abcdef0123456789abcdef0123456x Mon Sep 17 "
		"00:00:00 2001\nFrom: stableq <stableq@localhost>\n";
	static const char mail_only[] =
		"From: stableq <stableq@localhost>\nSubject: Revert \"x\"\n\n";

	is_int(series_is_own(own, sizeof(own) - 1), 1,
	       "own: a revert stableq wrote (format-patch of its commit)");
	is_int(series_is_own(other, sizeof(other) - 1), 0,
	       "own: another author's format-patch is not");
	is_int(series_is_own(spoof_name, sizeof(spoof_name) - 1), 0,
	       "own: the name alone is not enough");
	is_int(series_is_own(not_hex, sizeof(not_hex) - 1), 0,
	       "own: a From line without a SHA is not");
	is_int(series_is_own(mail_only, sizeof(mail_only) - 1), 0,
	       "own: a mail without git's From line is not");
	is_int(series_is_own(own, 40), 0, "own: a cut header is not");
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	test_parse();
	test_parse_bad();
	test_load();
	test_leave_out();
	test_append();
	test_copy();
	test_own();
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return done_testing();
}
