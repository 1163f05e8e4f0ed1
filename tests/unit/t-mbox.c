/* t-mbox.c: mbox_parse(): series, separators, quoting, cover letters. */
#include "err.h"
#include "patch.h"
#include "patch-int.h"
#include "strbuf.h"
#include "tap.h"

#define FIX "tests/fixtures/intake/"
#define MAXB (8u << 20)

static const char diff1[] = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";

static void free_all(struct patch **v, int n)
{
	for (int i = 0; i < n; i++)
		patch_free(v[i]);
	if (n > 0)
		free(v);
}

static void test_series_mbox(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct patch **v = NULL;
	int n;

	if (strbuf_read_file(&sb, FIX "series-3.mbox", 0) < 0) {
		ok(0, "read series-3.mbox: %s", err_msg());
		return;
	}
	n = mbox_parse(&v, sb.buf, sb.len, "series-3.mbox", MAXB);
	if (!ok(n == 3,
		"format-patch mbox: 3 patches, the cover letter skipped"))
		diag("  got %d: %s", n, err_msg());
	if (n == 3) {
		for (int i = 0; i < 3; i++) {
			is_int(v[i]->series_part, i + 1, "patch %d: part",
			       i + 1);
			is_int(v[i]->series_total, 3, "patch %d: total", i + 1);
			like(v[i]->in_reply_to, "cover.",
			     "patch %d: In-Reply-To the cover", i + 1);
			ok(v[i]->message_id && !strchr(v[i]->message_id, '<'),
			   "patch %d: Message-Id", i + 1);
		}
		is_str(v[0]->subject_prefix, "PATCH 6.1 1/3",
		       "[PATCH 6.1 1/3]");
		is_str(v[0]->author_name, "Jörg Rödel", "1: RFC 2047 name");
		is_str(v[1]->author_name, "Ñoño Pérez", "2: RFC 2047 name");
		is_str(v[1]->author_email, "Nono.Perez@Example.COM",
		       "2: email as written");
		is_str(v[1]->subject, "net: foo: add statistics (café)",
		       "2: encoded subject folded over two lines");
		ok(v[1]->adds_kconfig && v[1]->adds_file,
		   "2: new Kconfig file with a symbol");
		is_int(v[1]->nfiles, 3, "2: three files");
		if (v[1]->nfiles == 3) {
			is_int(v[1]->files[2].change, 'R', "2: rename");
			is_str(v[1]->files[2].path, "drivers/net/README.foo",
			       "2: rename target");
		}
		ok(v[2]->touches_uapi, "3: uapi change");
		is_int(v[2]->nfiles, 3, "3: three files");
		if (v[2]->nfiles == 3) {
			is_int(v[2]->files[0].change, 'A', "3: binary added");
			ok(v[2]->files[0].binary, "3: binary flagged");
			is_int(v[2]->files[1].change, 'D', "3: deleted");
		}
		{
			const struct patch_tag *t[2];
			is_int(patch_tags_of(v[2], "noautosel", t, 2), 1,
			       "3: noautosel tag");
			is_str(t[0]->extra, "needs a firmware update first",
			       "3: noautosel reason");
			is_int(patch_tags_of(v[1], "prereq", t, 2), 1,
			       "2: prereq tag");
			is_str(t[0]->value, "a1f84a3", "2: prereq sha");
		}
		ok(!strstr(v[0]->diff, "From ") && !strstr(v[0]->diff, "-- \n"),
		   "1: diff ends before the next message");
		ok(strcmp(v[0]->patch_id, v[1]->patch_id) &&
			   strcmp(v[1]->patch_id, v[2]->patch_id),
		   "distinct patch ids");
	}
	free_all(v, n);
	strbuf_release(&sb);
}

static void add_msg(struct strbuf *sb, const char *subject, const char *body,
		    const char *diff)
{
	strbuf_addstr(sb, "From 1234567890abcdef1234567890abcdef12345678 Mon "
			  "Sep 17 00:00:00 2001\n");
	strbuf_addf(sb, "From: A <a@example.org>\nSubject: %s\n\n%s---\n%s\n",
		    subject, body, diff);
}

static void test_quoting(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct patch **v = NULL;
	int n;

	add_msg(&sb, "[PATCH 1/2] one",
		">From the start, this was wrong.\n>>From here too.\n"
		"From now on a line that is no separator.\n",
		diff1);
	add_msg(&sb, "[PATCH 2/2] two", "Body.\n", diff1);
	n = mbox_parse(&v, sb.buf, sb.len, "q.mbox", MAXB);
	is_int(n, 2, "two messages");
	if (n == 2) {
		like(v[0]->message,
		     "\n\nFrom the start, this was wrong.\n>From here too.\n",
		     ">From unquoted (mboxrd)");
		like(v[0]->message,
		     "\nFrom now on a line that is no separator.\n",
		     "a From line without a date is body text");
		is_str(v[1]->subject, "two", "second message");
	}
	free_all(v, n);
	strbuf_release(&sb);
}

static void expect_fail(const char *what, const struct strbuf *sb, int code,
			const char *needle)
{
	struct patch **v = (struct patch **)1;
	int n = mbox_parse(&v, sb->buf, sb->len, "bad.mbox", MAXB);

	is_int(n, code, "%s: fails", what);
	ok(v == NULL, "%s: nothing returned", what);
	like(err_msg(), needle, "%s: message", what);
}

static void test_bad(void)
{
	struct strbuf sb = STRBUF_INIT;

	/* the second message has no diff: lines are counted in the file */
	add_msg(&sb, "[PATCH 1/2] one", "Body.\n", diff1);
	size_t second = 1;
	for (size_t i = 0; i < sb.len; i++)
		second += sb.buf[i] == '\n';
	add_msg(&sb, "[PATCH 2/2] two", "Body.\n", "");
	char *want =
		xstrfmt("bad.mbox:%zu: no diff in the message 'two'", second);
	expect_fail("one message without a diff", &sb, ERR_INVALID, want);
	free(want);

	strbuf_reset(&sb);
	add_msg(&sb, "[PATCH 1/2] one", "Body.\n", diff1);
	add_msg(&sb, "[PATCH 2/2] two", "Body.\n",
		"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+b\n");
	expect_fail("truncated hunk in the second message", &sb, ERR_INVALID,
		    "bad.mbox:21: f: truncated hunk '@@ -1,3 +1,3 @@'");

	strbuf_reset(&sb);
	add_msg(&sb, "[PATCH 1/2] one", "Body.\n", diff1);
	add_msg(&sb, "[PATCH 2/2] two", "Body with a NUL here: ", diff1);
	strstr(sb.buf, "NUL here: ")[9] = '\0';
	expect_fail("NUL byte in the second message", &sb, ERR_INVALID,
		    "bad.mbox:17: NUL byte");

	strbuf_reset(&sb);
	add_msg(&sb, "[PATCH 0/2] cover", "Blurb.\n", "");
	expect_fail("only a cover letter", &sb, ERR_INVALID,
		    "no patch in the file");

	strbuf_reset(&sb);
	add_msg(&sb, "[PATCH 1/2] one", "Body.\n", diff1);
	add_msg(&sb, "Re: [PATCH 1/2] one", "> quoted\nLooks good.\n", "");
	{
		/* a review in a thread's mbox is skipped, not an error */
		struct patch **v = NULL;
		int n = mbox_parse(&v, sb.buf, sb.len, "thread.mbox", MAXB);
		is_int(n, 1, "a reply without a diff is skipped");
		if (n == 1)
			is_str(v[0]->subject, "one", "... the patch stays");
		free_all(v, n);
	}
	strbuf_reset(&sb);
	add_msg(&sb, "Re: [PATCH 1/2] one", "> quoted\nLooks good.\n", "");
	expect_fail("only a reply", &sb, ERR_INVALID, "no patch in the file");

	strbuf_reset(&sb);
	strbuf_grow(&sb, 20u << 20);
	add_msg(&sb, "[PATCH] big", "", diff1);
	while (sb.len < (20u << 20))
		strbuf_addstr(&sb,
			      "+padding padding padding padding padding\n");
	expect_fail("20 MB mbox", &sb, ERR_TOOBIG, "bad.mbox: 20");
	strbuf_release(&sb);
}

static void test_single(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct patch **v = NULL;
	int n;

	strbuf_addf(
		&sb,
		"From: A <a@example.org>\nSubject: [PATCH] solo\n\nx\n---\n%s",
		diff1);
	n = mbox_parse(&v, sb.buf, sb.len, "solo.patch", MAXB);
	is_int(n, 1, "a single mail without a From line");
	if (n == 1)
		is_str(v[0]->subject, "solo", "its subject");
	free_all(v, n);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "\n\n");
	add_msg(&sb, "[PATCH] after blank lines", "x\n", diff1);
	n = mbox_parse(&v, sb.buf, sb.len, "lead.mbox", MAXB);
	is_int(n, 1, "blank lines before the first separator are ignored");
	free_all(v, n);
	strbuf_release(&sb);
	if (strbuf_read_file(&sb,
			     FIX "001-commit-1c109fabbd51-fix-minor-infoleak-"
				 "in-get-user-ex.patch",
			     0) == 0) {
		n = mbox_parse(&v, sb.buf, sb.len, "seed", MAXB);
		is_int(n, 1, "the seed through mbox_parse");
		free_all(v, n);
	}
	strbuf_release(&sb);
}

int main(void)
{
	test_series_mbox();
	test_quoting();
	test_bad();
	test_single();
	ok(mbox_is_from_line("From a592bc67 Mon Sep 17 00:00:00 2001", 38),
	   "format-patch separator");
	ok(mbox_is_from_line("From foo@baz Mon Jan 15 10:00:00 AM CET 2024",
			     44),
	   "stable-queue separator");
	ok(!mbox_is_from_line("From the start it was wrong: 12:30 is late", 42),
	   "prose is no separator");
	return done_testing();
}
