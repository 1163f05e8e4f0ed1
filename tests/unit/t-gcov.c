/* t-gcov.c: a coverage boot's parts: a patch's added lines, gcov's JSON, the console's gcov blocks. */
#include "gcov.h"
#include "mime.h"
#include "patch.h"
#include "tap.h"

/* Two files; a changed line (one - and one +), an added block, a context
 * line in between, a deleted file (no lines) and a "\ No newline" line. */
static const char *diff =
	"diff --git a/lib/x.c b/lib/x.c\n"
	"index 1..2 100644\n"
	"--- a/lib/x.c\n"
	"+++ b/lib/x.c\n"
	"@@ -10,4 +10,6 @@ int f(void)\n"
	" {\n"
	"-\treturn 0;\n"
	"+\tint a = g();\n"
	"+\treturn a;\n"
	" }\n"
	"+/* a comment */\n"
	"+int h;\n"
	" int z;\n"
	"@@ -40,2 +42,2 @@\n"
	"--- not a header: a removed line\n"
	"+++ not a header either\n"
	" y\n"
	"diff --git a/include/x.h b/include/x.h\n"
	"--- a/include/x.h\n"
	"+++ b/include/x.h\n"
	"@@ -0,0 +1,2 @@\n"
	"+static inline int g(void)\n"
	"+{ return 1; }\n"
	"\\ No newline at end of file\n"
	"diff --git a/old.c b/old.c\n"
	"deleted file mode 100644\n"
	"--- a/old.c\n"
	"+++ /dev/null\n"
	"@@ -1,1 +0,0 @@\n"
	"-int gone;\n";

struct seen {
	char buf[512];
};

static void collect(void *ctx, const char *path, long line)
{
	struct seen *s = ctx;
	size_t l = strlen(s->buf);
	snprintf(s->buf + l, sizeof(s->buf) - l, "%s:%ld ", path, line);
}

/* gcov --json-format of an object: x.c seen as the compiler named it. */
static const char *json =
	"{\"format_version\":\"1\",\"gcc_version\":\"12.2.0\",\"files\":["
	"{\"file\":\"/work/var/linux/lib/x.c\",\"lines\":["
	"{\"line_number\":11,\"count\":5},{\"line_number\":12,\"count\":0},"
	"{\"line_number\":15,\"count\":0},{\"line_number\":42,\"count\":3}]},"
	"{\"file\":\"../linux/include/x.h\",\"lines\":["
	"{\"line_number\":2,\"count\":7}]},"
	"{\"file\":\"/work/var/linux/lib/other.c\",\"lines\":["
	"{\"line_number\":11,\"count\":9}]}]}\n";

int main(void)
{
	struct seen s = { "" };
	long n = patch_added_lines(diff, strlen(diff), collect, &s);

	is_int(n, 7, "seven lines added (the deleted file gives none)");
	is_str(s.buf,
	       "lib/x.c:11 lib/x.c:12 lib/x.c:14 lib/x.c:15 lib/x.c:42 "
	       "include/x.h:1 include/x.h:2 ",
	       "each at its line in the new file, '+++' inside a hunk is a line");
	ok(patch_added_lines("@@ -1 +x @@\n", 12, collect, &s) < 0,
	   "a malformed hunk header is an error");

	struct gcov_file *f = NULL;
	size_t nf = 0;
	ok(gcov_files_add(&f, &nf, 7, diff) == 0 && nf == 2,
	   "one entry per file with lines");
	is_str(f[0].path, "lib/x.c", "the first is lib/x.c");
	is_int(gcov_merge_json(f, nf, json), 5,
	       "gcov's JSON counts five of the lines (lib/other.c is not ours)");
	long ex, run;
	gcov_file_counts(&f[0], &ex, &run);
	is_int(ex, 4, "lib/x.c: 4 of its 5 lines are code (the comment is not)");
	is_int(run, 2, "... of which 2 ran");
	ok(f[0].seen && f[1].seen, "both files are in the output");
	gcov_file_counts(&f[1], &ex, &run);
	ok(ex == 1 && run == 1, "the header's line 2 ran in the object that includes it");
	/* a second object that runs line 12: executed wins over missed */
	is_int(gcov_merge_json(f, nf,
			       "{\"files\":[{\"file\":\"lib/x.c\",\"lines\":"
			       "[{\"line_number\":12,\"count\":1}]}]}"),
	       0, "a line already counted is not counted twice");
	gcov_file_counts(&f[0], &ex, &run);
	ok(ex == 4 && run == 3, "merged: 3 of 4 ran");
	ok(gcov_merge_json(f, nf, "not json") < 0, "text that is not gcov's JSON is refused");
	gcov_files_free(f, nf);

	char *t = gcov_lines_text(12, 14, 20);
	is_str(t, "exercised 12 of 14 changed lines", "the per-patch line");
	free(t);
	t = gcov_lines_text(0, 0, 9);
	is_str(t, "none of its 9 changed lines is code gcov counts",
	       "a patch of comments or macros");
	free(t);

	/* the console: blocks with the boot's token count, forged ones not */
	const char *console =
		"[    1.0] booting\n"
		"@@stableq gcov-file /b/lib/x.gcda 0123456789abcdef\r\n"
		"aGVsbG8g\r\n"
		"[    2.0] a kernel message: in the middle\n"
		"d29ybGQ=\n"
		"@@stableq gcov-end 0123456789abcdef\n"
		"@@stableq gcov-file /b/lib/forged.gcda ffffffffffffffff\n"
		"Zm9yZ2Vk\n"
		"@@stableq gcov-end ffffffffffffffff\n"
		"@@stableq gcov-file /b/lib/cut.gcda 0123456789abcdef\n"
		"Y3V0\n";
	struct gcov_gcda *g = NULL;
	size_t ng = 0;
	ok(gcov_console_gcda(console, strlen(console), "0123456789abcdef", &g,
			     &ng) == 0,
	   "the console parses");
	is_int(ng, 1, "one block: the forged one and the unfinished one are not");
	if (ng == 1) {
		is_str(g[0].path, "/b/lib/x.gcda", "its path");
		ok(g[0].data.len == 11 && !memcmp(g[0].data.buf, "hello world", 11),
		   "its bytes, decoded across a kernel message");
	}
	gcov_gcda_free(g, ng);
	ok(gcov_console_gcda(console, strlen(console), "", &g, &ng) == 0 &&
		   ng == 0,
	   "without a token nothing counts");
	return done_testing();
}
