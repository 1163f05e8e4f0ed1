/* t-patch.c: patch_parse() on every intake format and every bad input. */
#include "err.h"
#include "mime.h"
#include "patch.h"
#include "strbuf.h"
#include "tap.h"

#include <time.h>

#define FIX "tests/fixtures/intake/"
#define MAXB (8u << 20)

static char *slurp(const char *name, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt(FIX "%s", name);

	if (strbuf_read_file(&sb, path, 0) < 0) {
		diag("%s", err_msg());
		exit(1);
	}
	free(path);
	return strbuf_detach(&sb, len);
}

static struct patch *parse_fixture(const char *name)
{
	size_t len;
	char *buf = slurp(name, &len);
	struct patch *p = NULL;
	int ret = patch_parse(&p, buf, len, name, MAXB);

	if (!ok(ret == 0 && p, "%s parses", name))
		diag("  %d: %s", ret, err_msg());
	free(buf);
	return p;
}

/* The n-th tag of a kind ("" when absent) and its extra ("" when NULL). */
static const char *tag(const struct patch *p, const char *kind, size_t n,
		       const char **extra)
{
	const struct patch_tag *t[32];
	size_t k = patch_tags_of(p, kind, t, 32);

	if (n >= k || n >= 32) {
		if (extra)
			*extra = "";
		return "";
	}
	if (extra)
		*extra = t[n]->extra ? t[n]->extra : "";
	return t[n]->value;
}

static size_t ntags(const struct patch *p, const char *kind)
{
	return patch_tags_of(p, kind, NULL, 0);
}

/* len (size_t)-1: strlen(buf) */
static void expect_error(const char *what, const char *buf, size_t len,
			 size_t max, int code, const char *needle)
{
	struct patch *p = (struct patch *)1;
	int ret;

	if (len == (size_t)-1)
		len = strlen(buf);
	ret = patch_parse(&p, buf, len, "bad.patch", max);

	is_int(ret, code, "%s: error code", what);
	ok(p == NULL, "%s: no patch returned", what);
	like(err_msg(), needle, "%s: message", what);
	ok(!strchr(err_msg(), '\n'), "%s: message is one line", what);
}

static void expect_fixture_error(const char *name, const char *needle)
{
	size_t len;
	char *buf = slurp(name, &len);
	struct patch *p = (struct patch *)1;
	int ret = patch_parse(&p, buf, len, name, MAXB);

	is_int(ret, ERR_INVALID, "%s: rejected", name);
	ok(p == NULL, "%s: no patch returned", name);
	like(err_msg(), needle, "%s: message", name);
	like(err_msg(), name, "%s: message names the file", name);
	free(buf);
}

static void test_format_patch(void)
{
	struct patch *p = parse_fixture("format-patch-single.patch");
	const char *x;

	if (!p)
		return;
	is_str(p->subject,
	       "net: foo: return an error from bar() instead of a bogus value "
	       "that confuses callers in the receive path",
	       "folded subject unfolded, [PATCH] stripped");
	is_str(p->subject_prefix, "PATCH", "subject prefix");
	is_int(p->series_part, 0, "no n/m");
	is_str(p->author_name, "Jörg Rödel", "RFC 2047 Q UTF-8 author name");
	is_str(p->author_email, "joro@8bytes.org", "author email");
	is_str(p->date, "Thu, 3 Dec 2026 07:45:12 +0000", "date");
	is_str(tag(p, "fixes", 0, &x), "1c109fabbd51", "Fixes sha");
	is_str(x, "fix minor infoleak in get_user_ex()", "Fixes subject");
	is_str(tag(p, "stable", 0, &x), "stable@vger.kernel.org", "stable Cc");
	is_str(x, "5.10+", "stable annotation 5.10+");
	is_str(tag(p, "reported_by", 0, NULL),
	       "syzbot+0123456789abcdef@syzkaller.appspotmail.com",
	       "Reported-by bare address");
	is_str(tag(p, "link", 0, NULL),
	       "https://lore.kernel.org/r/"
	       "20240101000000.1234-1-joro@8bytes.org",
	       "Link");
	is_str(tag(p, "signed_off_by", 0, &x), "joro@8bytes.org",
	       "SoB address");
	is_str(x, "Jörg Rödel", "SoB name");
	ok(p->upstream == NULL, "no upstream for a plain upstream patch");
	ok(!strncmp(p->message,
		    "net: foo: return an error from bar() instead of a bogus "
		    "value that confuses callers in the receive path\n\nbar() "
		    "returned 1",
		    120),
	   "message: subject, blank line, body");
	ok(strstr(p->message,
		  "Signed-off-by: Jörg Rödel <joro@8bytes.org>\n") &&
		   !strstr(p->message, "1 file changed") &&
		   !strstr(p->message, "---"),
	   "message keeps trailers, drops the diffstat");
	is_int(p->nfiles, 1, "one file");
	if (p->nfiles == 1) {
		is_str(p->files[0].path, "drivers/net/foo.c", "file path");
		is_int(p->files[0].change, 'M', "modified");
	}
	ok(!strncmp(p->diff, "diff --git a/drivers/net/foo.c", 30),
	   "diff starts at diff --git");
	ok(!strstr(p->diff, "-- \n") && !strstr(p->diff, "2.39") &&
		   !strstr(p->diff, "2.4"),
	   "diff stops before the signature");
	is_int(strlen(p->patch_id), 40, "patch_id is 40 hex");
	ok(!p->adds_file && !p->adds_kconfig && !p->touches_uapi, "no flags");
	patch_free(p);
}

static void test_seed(void)
{
	struct patch *p = parse_fixture("001-commit-1c109fabbd51-fix-minor-"
					"infoleak-in-get-user-ex.patch");

	if (!p)
		return;
	is_str(p->upstream, "1c109fabbd51863475cd12ac206bdd249aee35af",
	       "seed: commit line is the upstream sha");
	is_str(tag(p, "upstream", 0, NULL), p->upstream, "seed: upstream tag");
	is_str(p->subject, "fix minor infoleak in get_user_ex()",
	       "seed: subject");
	is_str(p->author_name, "Al Viro", "seed: author without address");
	ok(p->author_email == NULL, "seed: no author email");
	is_str(p->date, "2016-09-15", "seed: date");
	like(p->message, "\n\n[ This sat in different branch", "seed: body");
	ok(!strstr(p->message, "uaccess.h |"), "seed: no diffstat in message");
	is_int(p->nfiles, 1, "seed: one file");
	if (p->nfiles)
		is_str(p->files[0].path, "arch/x86/include/asm/uaccess.h",
		       "seed: path");
	ok(!p->touches_uapi, "seed: asm/ is not uapi");
	patch_free(p);
}

static void test_git_show(void)
{
	struct patch *p = parse_fixture("git-show.txt");
	struct patch *q = parse_fixture("format-patch-single.patch");

	if (!p || !q)
		goto out;
	is_str(p->upstream, "f96e306653ff3fc9991515373a8deb88ea769515",
	       "git show: commit sha");
	is_str(p->author_email, "joro@8bytes.org", "git show: author email");
	is_str(p->date, "Thu Dec 3 07:45:12 2026 +0000", "git show: date");
	is_str(p->subject, q->subject,
	       "git show: subject from the indented message");
	is_str(p->message, q->message, "git show: same message as the mail");
	is_str(p->patch_id, q->patch_id, "git show: same patch_id as the mail");
	is_str(tag(p, "fixes", 0, NULL), "1c109fabbd51", "git show: Fixes");
out:
	patch_free(p);
	patch_free(q);
}

static void test_stable_backport(void)
{
	struct patch *p = parse_fixture("stable-backport.patch");
	const char *x;

	if (!p)
		return;
	is_str(p->subject, "net: foo: fix a use-after-free in foo_rx()",
	       "backport subject");
	is_str(p->subject_prefix, "PATCH 6.1 2/3", "prefix with version");
	is_int(p->series_part, 2, "part 2");
	is_int(p->series_total, 3, "of 3");
	is_str(p->message_id, "20240115090000.12345-2-sashal@kernel.org",
	       "Message-ID without <>");
	is_str(p->in_reply_to, "20240115090000.12345-1-sashal@kernel.org",
	       "In-Reply-To");
	is_str(p->upstream, "3c1e4b1c5fa6dba1d2b3a4d5e6f708192a3b4c5d",
	       "[ Upstream commit ] line");
	is_int(ntags(p, "stable"), 2, "two distinct stable annotations");
	tag(p, "stable", 0, &x);
	is_str(x, "4.19.x-5.15.x", "range annotation");
	tag(p, "stable", 1, &x);
	is_str(x, "6.1.x", "prerequisite note's version (deduplicated)");
	is_str(tag(p, "prereq", 0, &x), "a1f84a3", "prereq sha");
	is_str(x, "net: foo: prepare rx", "prereq subject");
	is_str(tag(p, "stable_dep_of", 0, &x), "0123456789ab", "Stable-dep-of");
	is_str(x, "net: foo: rework rx", "Stable-dep-of subject");
	is_str(tag(p, "reviewed_by", 0, NULL), "kuba@kernel.org",
	       "Reviewed-by");
	is_int(ntags(p, "signed_off_by"), 2, "two SoBs");
	is_str(tag(p, "signed_off_by", 1, &x), "sashal@kernel.org",
	       "second SoB");
	is_str(p->author_email, "edumazet@google.com", "in-body From:");
	ok(!strstr(p->message, "From: Eric"),
	   "in-body From: not in the message");
	ok(!strstr(p->diff, "2.43.0"), "signature not in the diff");
	patch_free(p);
}

static void test_commit_upstream(void)
{
	struct patch *p = parse_fixture("stable-queue-commit-upstream.patch");

	if (!p)
		return;
	is_str(p->upstream, "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b",
	       "commit X upstream.");
	is_str(p->subject, "usb: core: fix a refcount leak in usb_hub_probe()",
	       "subject without [PATCH]");
	ok(p->subject_prefix == NULL, "no prefix");
	is_str(tag(p, "stable", 0, NULL), "stable@kernel.org",
	       "Cc: stable <stable@kernel.org>");
	is_int(p->nfiles, 1, "---/+++ diff without diff --git");
	if (p->nfiles)
		is_str(p->files[0].path, "drivers/usb/core/hub.c",
		       "a/ stripped");
	like(p->message, "\n\ncommit 9a8b7c6d5e4f",
	     "upstream line kept in message");
	patch_free(p);
}

static void test_rfc2047_qp(void)
{
	struct patch *p = parse_fixture("rfc2047-qp.patch");

	if (!p)
		return;
	is_str(p->author_name, "Jörg Rödel", "ISO-8859-1 Q word -> UTF-8");
	is_str(p->author_email, "Joerg.Roedel@AMD.com", "email as written");
	is_str(p->subject, "iommu/amd: fix the café path for the über mode",
	       "B latin-1 + Q + B UTF-8 words over folded lines");
	is_str(p->subject_prefix, "PATCH v2 4.19", "[PATCH v2 4.19]");
	is_int(p->series_total, 0, "no n/m in [PATCH v2 4.19]");
	is_str(p->message_id, "20240103102233.4567-1-joro@8bytes.org",
	       "Message-Id folded onto the next line");
	like(p->message,
	     "The café path computes a = b wrongly; this line is long enough "
	     "that the mailer",
	     "quoted-printable body decoded, latin-1 -> UTF-8, soft break "
	     "joined");
	is_str(tag(p, "signed_off_by", 0, NULL), "joro@8bytes.org",
	       "QP trailer");
	like(p->diff, "+\treturn a != b;\n", "QP diff decoded");
	ok(!strstr(p->diff, "2.43.0"), "QP signature dropped");
	is_str(tag(p, "fixes", 0, NULL),
	       "0123456789abcdef0123456789abcdef01234567",
	       "Fixes with a full sha and no subject");
	patch_free(p);
}

static struct patch *parse_str(const char *what, const char *s)
{
	struct patch *p = NULL;
	int ret = patch_parse(&p, s, strlen(s), what, MAXB);

	if (!ok(ret == 0 && p, "%s parses", what))
		diag("  %d: %s", ret, err_msg());
	return p;
}

static void test_quilt(void)
{
	struct patch *p = parse_fixture("quilt-index.patch");

	if (p) {
		is_str(p->subject, "Fix the frobnicator timeout",
		       "quilt: first line is the subject");
		is_str(tag(p, "signed_off_by", 0, NULL), "jane@example.org",
		       "quilt: trailer");
		is_int(p->nfiles, 2, "quilt: two files");
		if (p->nfiles == 2) {
			is_str(p->files[0].path, "drivers/misc/frob.c",
			       "quilt: linux-6.1.orig/ stripped");
			is_int(p->files[1].change, 'A',
			       "quilt: --- /dev/null adds");
			is_str(p->files[1].path, "include/uapi/linux/frob.h",
			       "quilt: new path");
		}
		ok(p->adds_file && p->touches_uapi,
		   "quilt: adds_file, touches_uapi");
		ok(!strstr(p->message, "Index:"),
		   "quilt: Index: not in message");
		patch_free(p);
	}
	p = parse_str("quilt subject that looks like a header",
		      "net: sched: fix a leak\nin two lines\n\nMore.\n\n"
		      "Signed-off-by: Jane Hacker <jane@example.org>\n---\n"
		      "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
	if (p) {
		is_str(p->subject, "net: sched: fix a leak in two lines",
		       "\"net: ...\" first line is a subject, not a header");
		is_str(p->message,
		       "net: sched: fix a leak in two lines\n\nMore.\n\n"
		       "Signed-off-by: Jane Hacker <jane@example.org>\n",
		       "quilt message");
		patch_free(p);
	}
	p = parse_fixture("plain-diff.patch");
	if (p) {
		is_str(p->subject, "", "bare diff: empty subject");
		is_str(p->message, "", "bare diff: empty message");
		is_int(p->nfiles, 1, "bare diff: one file");
		like(p->diff, "\\ No newline at end of file",
		     "bare diff: \\ line kept");
		patch_free(p);
	}
}

static const char git_diff_head[] =
	"From: A <a@example.org>\nSubject: [PATCH] x\n\nBody.\n\n"
	"Signed-off-by: A <a@example.org>\n---\n";

static void test_diff_kinds(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct patch *p;

	strbuf_addstr(&sb, git_diff_head);
	strbuf_addstr(
		&sb,
		"diff --git a/drivers/Kconfig b/drivers/Kconfig\n"
		"index 1..2 100644\n--- a/drivers/Kconfig\n+++ "
		"b/drivers/Kconfig\n"
		"@@ -1,2 +1,5 @@\n menu \"x\"\n+\n+config NEW_THING\n+\tbool "
		"\"y\"\n endmenu\n"
		"diff --git a/old name.c b/new name.c\nsimilarity index 90%\n"
		"rename from old name.c\nrename to new name.c\n"
		"diff --git a/gone.c b/gone.c\ndeleted file mode 100644\n"
		"index 3..0\n--- a/gone.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
		"diff --git a/arch/arm64/include/uapi/asm/x.h "
		"b/arch/arm64/include/uapi/asm/x.h\n"
		"old mode 100644\nnew mode 100755\n"
		"diff --git a/fw.bin b/fw.bin\nnew file mode 100644\nindex "
		"0..1\n"
		"GIT binary patch\nliteral 5\nMcmZQzWMXCE0000\n\nliteral "
		"0\nHcmV?d00001\n\n"
		"diff --git a/blob b/blob\nindex 1..2 100644\nBinary files "
		"a/blob and b/blob differ\n"
		"diff --git a/empty b/empty\nnew file mode 100644\nindex "
		"0000000..e69de29\n"
		"-- \n2.43.0\n");
	p = parse_str("diff kinds", sb.buf);
	if (p) {
		static const struct {
			const char *path;
			char change;
		} want[] = {
			{"drivers/Kconfig", 'M'},
			{"new name.c", 'R'},
			{"gone.c", 'D'},
			{"arch/arm64/include/uapi/asm/x.h", 'M'},
			{"fw.bin", 'A'},
			{"blob", 'M'},
			{"empty", 'A'},
		};
		is_int(p->nfiles, 7, "seven files");
		for (size_t i = 0; i < 7 && i < p->nfiles; i++) {
			is_str(p->files[i].path, want[i].path, "file %zu path",
			       i);
			is_int(p->files[i].change, want[i].change,
			       "file %zu change", i);
		}
		if (p->nfiles == 7) {
			is_str(p->files[1].old_path, "old name.c",
			       "rename: old path");
			ok(p->files[4].binary && p->files[5].binary &&
				   !p->files[0].binary,
			   "binary files flagged");
		}
		ok(p->adds_kconfig, "adds_kconfig from +config in Kconfig");
		ok(p->touches_uapi, "arch/*/include/uapi is uapi");
		ok(p->adds_file, "adds_file");
		ok(!strstr(p->diff, "2.43.0"), "signature not in diff");
		patch_free(p);
	}
	strbuf_release(&sb);

	/* "config" in a C file or a context line is no new Kconfig symbol */
	p = parse_str("no kconfig", "--- a/x.c\n+++ b/x.c\n@@ -1 +1,2 @@\n "
				    "config FOO\n+config BAR\n");
	if (p) {
		ok(!p->adds_kconfig,
		   "+config outside Kconfig* is not a symbol");
		patch_free(p);
	}
}

static void test_patch_id(void)
{
	size_t len;
	char *buf = slurp("format-patch-single.patch", &len);
	struct strbuf sb = STRBUF_INIT;
	struct patch *a = NULL, *b = NULL, *c = NULL;
	const char *h = strstr(buf, "@@ -5,5 +5,5 @@ int foo(void)");

	if (!ok(h != NULL, "hunk header found"))
		goto out;
	patch_parse(&a, buf, len, "a", MAXB);
	/* regenerated at another offset and with other white space */
	strbuf_add(&sb, buf, (size_t)(h - buf));
	strbuf_addstr(&sb, "@@ -105,5 +107,5 @@ int other_func(void)");
	strbuf_addstr(&sb, h + strlen("@@ -5,5 +5,5 @@ int foo(void)"));
	patch_parse(&b, sb.buf, sb.len, "b", MAXB);
	strbuf_reset(&sb);
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\t' && (size_t)(h - buf) < i)
			strbuf_addstr(&sb, "        ");
		else
			strbuf_addch(&sb, buf[i]);
	}
	patch_parse(&c, sb.buf, sb.len, "c", MAXB);
	if (ok(a && b && c, "three variants parse")) {
		is_str(b->patch_id, a->patch_id,
		       "patch_id ignores line numbers");
		is_str(c->patch_id, a->patch_id,
		       "patch_id ignores white space");
	}
	patch_free(a);
	patch_free(b);
	patch_free(c);
	a = parse_fixture("stable-backport.patch");
	b = parse_fixture("format-patch-single.patch");
	if (a && b)
		ok(strcmp(a->patch_id, b->patch_id),
		   "different diffs, different ids");
	patch_free(a);
	patch_free(b);
out:
	strbuf_release(&sb);
	free(buf);
}

static void test_trailer_forms(void)
{
	struct patch *p = parse_str(
		"trailer forms",
		"From: \"Doe, John \\\"JD\\\"\" <John.Doe@Example.org>\n"
		"Subject: Re: [PATCH 5.10 v3 04/12] fs: fix\n"
		"Message-ID: <abc@x>\n\n"
		"Body.\n\n"
		"Fixes: commit 0123456789ABCDEF (\"upper-case sha\")\n"
		"Cc: stable@vger.kernel.org # 5.4.x, 5.10.x\n"
		"Cc: Linus <torvalds@linux-foundation.org>, "
		"netdev@vger.kernel.org\n"
		"Cc: <stable@vger.kernel.org> [4.19+]\n"
		"Tested-by: nobody-with-no-address\n"
		"Link: <https://bugzilla.kernel.org/show_bug.cgi?id=1>\n"
		"  Fixes: not a trailer when indented\n"
		"---\n"
		"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
	const char *x;

	if (!p)
		return;
	is_str(p->subject, "fs: fix", "Re: and [PATCH ...] stripped");
	is_str(p->subject_prefix, "PATCH 5.10 v3 04/12", "prefix");
	is_int(p->series_part, 4, "04/12 -> 4");
	is_int(p->series_total, 12, "04/12 -> 12");
	is_str(p->author_name, "Doe, John \"JD\"", "quoted display name");
	is_str(p->author_email, "John.Doe@Example.org", "email as written");
	is_str(tag(p, "fixes", 0, &x), "0123456789abcdef",
	       "Fixes: commit X, lower-cased");
	is_str(x, "upper-case sha", "Fixes subject");
	tag(p, "stable", 0, &x);
	is_str(x, "5.4.x, 5.10.x", "list annotation kept");
	tag(p, "stable", 1, &x);
	is_str(x, "4.19+", "[4.19+] annotation");
	is_int(ntags(p, "cc"), 2, "two plain Cc addresses");
	is_str(tag(p, "cc", 0, &x), "torvalds@linux-foundation.org", "cc 1");
	is_str(x, "Linus", "cc 1 name");
	is_str(tag(p, "cc", 1, NULL), "netdev@vger.kernel.org", "cc 2");
	is_str(tag(p, "tested_by", 0, NULL), "nobody-with-no-address",
	       "trailer without an address keeps the text");
	is_str(tag(p, "link", 0, NULL),
	       "https://bugzilla.kernel.org/show_bug.cgi?id=1", "Link <url>");
	is_int(ntags(p, "fixes"), 1, "indented Fixes: is prose");
	patch_free(p);
}

/*
 * Addresses by the one RFC 5322 parser (mail/address.c): a display name
 * never becomes the address (issue 11, item 7), case is kept, and the
 * stable list is recognized without case.
 */
static void test_addresses(void)
{
	static const struct {
		const char *from, *name, *email;
	} froms[] = {
		{"\"Evil, <attacker@evil.example>\" <eve2@example.com>",
		 "Evil, <attacker@evil.example>", "eve2@example.com"},
		{"Evil (<attacker@evil.example>) <eve2@example.com>", "Evil",
		 "eve2@example.com"},
		{"eve2@example.com (Evil <attacker@evil.example>)",
		 "Evil <attacker@evil.example>", "eve2@example.com"},
		/* "Evil <attacker@evil.example>", B-encoded: decoded after */
		{"=?UTF-8?B?RXZpbCA8YXR0YWNrZXJAZXZpbC5leGFtcGxlPg==?= "
		 "<eve2@example.com>",
		 "Evil <attacker@evil.example>", "eve2@example.com"},
		{"\"Eve \\\"the\\\" <x@evil.example>\" <Eve@Example.COM>",
		 "Eve \"the\" <x@evil.example>", "Eve@Example.COM"},
	};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sizeof(froms) / sizeof(froms[0]); i++) {
		struct patch *p;
		strbuf_reset(&sb);
		strbuf_addf(&sb,
			    "From: %s\nSubject: x\n\nBody.\n\n"
			    "Signed-off-by: %s\n---\n--- a/f\n+++ b/f\n"
			    "@@ -1 +1 @@\n-a\n+b\n",
			    froms[i].from, froms[i].from);
		if (!(p = parse_str("hostile From", sb.buf)))
			continue;
		is_str(p->author_email, froms[i].email,
		       "From %zu: the address, not the name's", i);
		is_str(p->author_name, froms[i].name, "From %zu: the name", i);
		if (i != 3)
			is_str(tag(p, "signed_off_by", 0, NULL),
			       froms[i].email,
			       "Signed-off-by %zu: the same parser", i);
		patch_free(p);
	}

	struct patch *p = parse_str(
		"Cc forms",
		"From: A <a@b.org>\nSubject: x\n\nBody.\n\n"
		"Cc: \"Evil, <attacker@evil.example>\" <Eve@Example.com>, "
		"Team: t1@x.org, T2 <t2@x.org>; # 6.1.x\n"
		"Cc: <Stable@Vger.Kernel.org> # 5.15+\n"
		"Cc: STABLE+noautosel@kernel.org # reason\n"
		"Cc: \"unterminated <x@y.org>\n"
		"---\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
	const char *x;

	if (p) {
		is_int(ntags(p, "cc"), 4, "Cc: each mailbox, group members "
					  "too, and the text that is none");
		is_str(tag(p, "cc", 0, &x), "Eve@Example.com",
		       "Cc: the address, not the name's, case kept");
		is_str(x, "Evil, <attacker@evil.example>", "Cc: the name");
		is_str(tag(p, "cc", 1, NULL), "t1@x.org", "Cc: group member 1");
		is_str(tag(p, "cc", 2, &x), "t2@x.org", "Cc: group member 2");
		is_str(tag(p, "cc", 3, NULL), "\"unterminated <x@y.org>",
		       "Cc: unparsable text kept as text, no address");
		is_str(tag(p, "stable", 0, &x), "Stable@Vger.Kernel.org",
		       "the stable list recognized without case");
		is_str(x, "5.15+", "... with its annotation");
		is_int(ntags(p, "noautosel"), 1, "noautosel without case");
		patch_free(p);
	}
	expect_error("From: two addresses",
		     "From: Evil <attacker@evil.example> <eve2@example.com>\n"
		     "Subject: x\n\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "bad.patch:1: header From: a second <address>");
	expect_error("From: unterminated quote",
		     "From: \"Evil <attacker@evil.example>\n"
		     "Subject: x\n\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "bad.patch:1: header From: unterminated quoted string");
	strbuf_release(&sb);
}

static void test_crlf_and_8bit(void)
{
	struct patch *p = parse_str(
		"crlf",
		"From: A <a@b.c>\r\nSubject: [PATCH] crlf\r\n\r\nBody.\r\n\r\n"
		"Fixes: 0123456789ab (\"x\")\r\n---\r\n"
		"--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n");

	if (p) {
		is_str(p->subject, "crlf", "CRLF subject");
		is_str(tag(p, "fixes", 0, NULL), "0123456789ab",
		       "CRLF trailer");
		is_str(p->diff, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
		       "CRLF mail: diff with LF");
		patch_free(p);
	}
	p = parse_str(
		"raw utf-8 header",
		"From: Jörg Rödel <j@r.de>\nSubject: [PATCH] café\n\nx\n---\n"
		"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
	if (p) {
		is_str(p->author_name, "Jörg Rödel",
		       "raw UTF-8 header accepted");
		is_str(p->subject, "café", "raw UTF-8 subject");
		patch_free(p);
	}
	p = parse_str("8bit latin-1 body",
		      "From: A <a@b.c>\nSubject: [PATCH] x\n"
		      "Content-Type: text/plain; charset=ISO-8859-1\n"
		      "Content-Transfer-Encoding: 8bit\n\ncaf\xe9\n---\n"
		      "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n");
	if (p) {
		is_str(p->message, "x\n\ncafé\n", "8bit latin-1 body -> UTF-8");
		patch_free(p);
	}
}

/* Patches attached to their mail (MIME multipart). */
static void test_attachments(void)
{
	struct patch *p = parse_fixture("attach-format-patch.patch");
	static const char bnd[] = "Content-Type: multipart/mixed; boundary=XX\n\n";
	static const char msgpart[] = "--XX\nContent-Type: text/plain\n\nMsg.\n";
	struct strbuf sb = STRBUF_INIT;

	if (p) {
		is_str(p->subject, "lib: fix line 2", "git format-patch --attach: the subject");
		like(p->message, "Line 2 was wrong since the beginning.",
		     "... the message from the text part");
		ok(!strstr(p->message, "multi-part") && !strstr(p->message, "Content-Type"),
		   "... without the MIME preamble or part headers");
		is_str(tag(p, "fixes", 0, NULL), "0123456789ab", "... Fixes: from the text part");
		is_int(ntags(p, "stable"), 1, "... Cc: stable from the text part");
		like(p->diff, "-line 2\n+line two\n line 3\n", "... the diff from the attachment");
		ok(!strstr(p->diff, "--------------2.39.5"), "... without the closing boundary");
		patch_free(p);
	}
	p = parse_fixture("attach-signed-base64.patch");
	if (p) {
		is_str(p->author_name, "René Dev", "signed mail: the author");
		like(p->message, "The café path returned an unset value. Reported by Jörg.",
		     "... the quoted-printable ISO-8859-1 text part, in UTF-8");
		is_str(tag(p, "fixes", 0, NULL), "1c109fabbd51", "... its Fixes:");
		like(p->diff, "+\treturn a ? a : -EINVAL;\n",
		     "... the diff from a base64 octet-stream attachment (fix.patch), nested in multipart/signed");
		ok(!strstr(p->message, "PGP") && !strstr(p->diff, "PGP"),
		   "... the signature part left out");
		patch_free(p);
	}

	/* the text part carries the diff itself; the attachment is a log */
	strbuf_addf(&sb, "Subject: x\n%s--XX\nContent-Type: text/plain\n\nMsg.\n---\n"
		    "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--XX\n"
		    "Content-Type: text/plain\nContent-Disposition: attachment; filename=dmesg.txt\n\n"
		    "[    0.000000] Linux version 6.1\n--XX--\n", bnd);
	p = parse_str("an inline patch with a log attached", sb.buf);
	if (p) {
		like(p->diff, "-a\n+b\n", "... the diff of the text part");
		ok(!strstr(p->diff, "Linux version"), "... the attached log is not in it");
		patch_free(p);
	}
	strbuf_reset(&sb);
	/* CRLF line ends, the part open at the end (no closing delimiter) */
	strbuf_addstr(&sb, "Subject: y\r\nContent-Type: multipart/mixed; boundary=\"q\"\r\n\r\n"
		      "--q\r\nContent-Type: text/plain\r\n\r\nWhy.\r\n--q\r\n"
		      "Content-Type: text/x-diff\r\n\r\n--- a/f\r\n+++ b/f\r\n"
		      "@@ -1 +1 @@\r\n-a\r\n+b\r\n");
	p = parse_str("CRLF and no closing delimiter", sb.buf);
	if (p) {
		like(p->message, "Why.", "... the message");
		like(p->diff, "+b", "... the diff");
		patch_free(p);
	}
	strbuf_reset(&sb);

	expect_error("multipart without a boundary",
		     "Subject: x\nContent-Type: multipart/mixed\n\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "bad.patch:2: Content-Type 'multipart/mixed' has no boundary");
	expect_error("multipart whose boundary never comes",
		     "Subject: x\nContent-Type: multipart/mixed; boundary=ZZ\n\nhello\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "multipart body without a part (no \"--ZZ\" line)");
	strbuf_addf(&sb, "Subject: x\n%s%s", bnd, msgpart);
	for (int i = 1; i <= 2; i++)
		strbuf_addf(&sb, "--XX\nContent-Type: text/x-patch\n"
			    "Content-Disposition: attachment; filename=\"000%d.patch\"\n\n"
			    "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b%d\n", i, i);
	strbuf_addstr(&sb, "--XX--\n");
	expect_error("two patches attached to one mail", sb.buf, sb.len, MAXB, ERR_INVALID,
		     "2 patches attached to one mail (0001.patch, 0002.patch): send one patch per mail");
	strbuf_reset(&sb);
	strbuf_addf(&sb, "Subject: x\n%s%s--XX\nContent-Type: text/x-patch\n"
		    "Content-Transfer-Encoding: base64\n\nAAAA\n--XX--\n", bnd, msgpart);
	expect_error("a base64 part that decodes to NUL bytes", sb.buf, sb.len, MAXB,
		     ERR_INVALID, "bad.patch:9: NUL byte in the text/x-patch part");
	{
		struct strbuf nest = STRBUF_INIT;
		strbuf_addstr(&nest, "Subject: x\nContent-Type: multipart/mixed; boundary=b0\n\n");
		for (int i = 1; i < 6; i++)
			strbuf_addf(&nest, "--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n",
				    i - 1, i);
		strbuf_addstr(&nest, "--b5\nContent-Type: text/plain\n\nx\n");
		expect_error("multiparts nested 6 deep", nest.buf, nest.len, MAXB, ERR_INVALID,
			     "multipart parts nested over 4 deep");
		strbuf_release(&nest);
	}
	expect_error("a multipart mail with no diff anywhere",
		     "Subject: x\nContent-Type: multipart/mixed; boundary=XX\n\n"
		     "--XX\nContent-Type: text/plain\n\nJust words.\n--XX--\n",
		     (size_t)-1, MAXB, ERR_INVALID, "no diff in the message 'x'");
	strbuf_release(&sb);
}

static void test_bad_input(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *big;

	expect_fixture_error("bad-nodiff.patch", "no diff");
	expect_fixture_error(
		"bad-truncated-hunk.patch",
		":25: drivers/net/foo.c: truncated hunk '@@ -5,5 +5,5 @@'");
	expect_fixture_error("bad-fixes-nonhex.patch",
			     ":12: Fixes: '1c109fabXYZ1' is not a hex SHA");
	expect_fixture_error("bad-stable-dep-short.patch",
			     ":13: Stable-dep-of: 'abc123' is not a hex SHA");
	expect_fixture_error("bad-header-8bit.patch",
			     ":1: header From is not valid UTF-8");
	expect_fixture_error("bad-nul.patch", ":4: NUL byte");

	/* a 20 MB body against the default 8 MiB limit */
	big = xmalloc(20u << 20);
	memset(big, 'x', 20u << 20);
	memcpy(big, "From: a <a@b>\nSubject: big\n\n", 28);
	expect_error("20 MB body", big, 20u << 20, MAXB, ERR_TOOBIG,
		     "bad.patch: 20971520 bytes, over the limit of 8388608");
	free(big);

	/* issue 23: the reason names the source that leaves the tree */
	expect_error("copy from ../../../etc/passwd",
		     "From: Eve <eve@example.org>\nSubject: copy\n\n---\n"
		     "diff --git a/../../../etc/passwd b/lib/copied.c\n"
		     "similarity index 100%\n"
		     "copy from ../../../etc/passwd\ncopy to lib/copied.c\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "copy from ../../../etc/passwd: the source leaves the tree");
	expect_error("rename from /etc/shadow",
		     "From: Eve <eve@example.org>\nSubject: mv\n\n---\n"
		     "diff --git a/etc/shadow b/lib/x.c\n"
		     "similarity index 100%\n"
		     "rename from /etc/shadow\nrename to lib/x.c\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "rename from /etc/shadow: the source leaves the tree");
	expect_error("a target with ..",
		     "From: Eve <eve@example.org>\nSubject: up\n\n---\n"
		     "--- a/lib/x.c\n+++ b/lib/../../x.c\n@@ -1 +1 @@\n-a\n+b\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "lib/../../x.c: the target leaves the tree");
	expect_error("empty input", "", 0, MAXB, ERR_INVALID, "no diff");
	expect_error("encoded word with bad UTF-8",
		     "From: =?UTF-8?B?/w==?= <a@b>\nSubject: x\n\n--- a/f\n+++ "
		     "b/f\n@@ -1 +1 @@\n-a\n+b\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "header From is not valid UTF-8");
	expect_error(
		"raw 8-bit subject",
		"Subject: caf\xe9\n\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
		(size_t)-1, MAXB, ERR_INVALID, "bad.patch:1: header Subject");
	expect_error("hunk header lies (too many lines)",
		     "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n", (size_t)-1,
		     MAXB, ERR_INVALID,
		     "bad.patch:6: f: more lines than the hunk");
	expect_error("malformed hunk header",
		     "--- a/f\n+++ b/f\n@@ -x +1 @@\n-a\n", (size_t)-1, MAXB,
		     ERR_INVALID, "bad.patch:3: f: malformed hunk header");
	expect_error("file header without hunk",
		     "x\n\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n", (size_t)-1,
		     MAXB, ERR_INVALID,
		     "bad.patch:3: f: file header without a hunk");
	expect_error("hunk cut by the next file",
		     "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+b\ndiff --git "
		     "a/g b/g\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "bad.patch:3: f: truncated hunk '@@ -1,3 +1,3 @@'");
	expect_error("Fixes: without sha",
		     "Subject: x\n\nFixes:\n---\n--- a/f\n+++ b/f\n@@ -1 +1 "
		     "@@\n-a\n+b\n",
		     (size_t)-1, MAXB, ERR_INVALID,
		     "bad.patch:3: Fixes: '' is not a hex SHA");
	expect_error("Fixes: sha over 40",
		     "Subject: x\n\nFixes: "
		     "0123456789012345678901234567890123456789a\n---\n--- "
		     "a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
		     (size_t)-1, MAXB, ERR_INVALID, "is not a hex SHA");
	expect_error("binary patch without data",
		     "diff --git a/b b/b\nGIT binary patch\nnonsense\n",
		     (size_t)-1, MAXB, ERR_INVALID, "malformed binary patch");
	/* a long UTF-8 subject is cut on a character boundary */
	strbuf_addstr(&sb, "Subject: ");
	for (int i = 0; i < 40; i++)
		strbuf_addstr(&sb, "é");
	strbuf_addstr(&sb, "\n\nno diff\n");
	expect_error("long subject, no diff", sb.buf, sb.len, MAXB, ERR_INVALID,
		     "no diff in the message 'éé");
	ok(utf8_valid(err_msg(), strlen(err_msg())), "message is valid UTF-8");
	strbuf_release(&sb);
}

static void test_bench(void)
{
	size_t len;
	char *buf = slurp("stable-backport.patch", &len);
	struct strbuf sb = STRBUF_INIT;
	struct timespec t0, t1;
	int n = 2000, fails = 0;

	/* a typical ~5 KB patch: the fixture with a longer body */
	const char *body = strstr(buf, "foo_rx() dereferences");
	strbuf_add(&sb, buf, (size_t)(body - buf));
	for (int i = 0; i < 50; i++)
		strbuf_addstr(&sb, "Some more explanation of the bug in the "
				   "commit message body.\n");
	strbuf_addstr(&sb, body);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		struct patch *p;
		if (patch_parse(&p, sb.buf, sb.len, "bench", MAXB) < 0)
			fails++;
		patch_free(p);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) /
		    n;
	is_int(fails, 0, "bench patches parse");
	diag("parsing a %zu-byte patch: %.1f us (ASan build: a figure, "
	     "not a limit)",
	     sb.len, us);
	strbuf_release(&sb);
	free(buf);
}

/* No control character (C0, DEL, C1) in s. */
static int clean_str(const char *s)
{
	return s && !mime_has_control(s, strlen(s));
}

/*
 * Text from headers is cleaned on intake: encoded CR/LF/ESC, raw ESC,
 * folding (issue 11, item 3).
 */
static void test_control_chars(void)
{
	static const char mail[] =
		"From: =?UTF-8?B?RXZlG1szMW0gRXZpbA0KWA==?= <eve@example.org>\n"
		"Subject: =?UTF-8?Q?[PATCH]_fix_it=0D=0Adiff_--git_a/evil_b/evil"
		"=1B[2J?=\n =?UTF-8?Q?_and=07more?=\n"
		"Date: Mon, 1 Sep 2025 10:00:00 +0000\x1b[2J\n"
		"Message-Id: <x\x1b]0;title\x07@example.org>\n"
		"\n"
		"Body \x1b[31mred\x1b[0m\x7f\r line.\n"
		"\n"
		"Fixes: 1c109fabbd51 (\"old\x1b[2J subject\")\n"
		"Signed-off-by: Eve\x1b[8m Hidden <eve@example.org>\n"
		"---\n"
		"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n";
	struct patch *p = NULL;
	const char *extra;
	int ret = patch_parse(&p, mail, sizeof(mail) - 1, "ctl.patch", MAXB);

	if (!ok(ret == 0 && p, "control characters: the mail parses")) {
		diag("  %s", err_msg());
		return;
	}
	is_str(p->subject, "fix it diff --git a/evil b/evil[2J andmore",
	       "  subject: one line, encoded CR/LF a space, ESC and BEL gone");
	is_str(p->author_name, "Eve[31m Evil X",
	       "  author name: encoded ESC and CR/LF gone");
	ok(clean_str(p->date), "  date: no control character");
	ok(clean_str(p->message_id), "  message-id: no control character");
	{
		struct strbuf flat = STRBUF_INIT;
		for (const char *q = p->message; *q; q++)
			strbuf_addch(&flat, *q == '\n' || *q == '\t' ? ' ' : *q);
		ok(clean_str(flat.buf),
		   "  message: no control character but line breaks");
		strbuf_release(&flat);
	}
	like(p->message, "Body [31mred[0m line.\n\nFixes:",
	     "  message: lines kept");
	is_str(tag(p, "fixes", 0, &extra), "1c109fabbd51", "  Fixes: sha");
	is_str(extra, "old[2J subject", "  Fixes: subject without ESC");
	/* '[' may not stand in an unquoted display name (RFC 5322), so the
	 * one address parser keeps this trailer as its text: cleaned too */
	is_str(tag(p, "signed_off_by", 0, &extra),
	       "Eve[8m Hidden <eve@example.org>",
	       "  Signed-off-by: kept as text, without ESC");
	patch_free(p);
}

/* A revert's message made safe for patch form (issue 11, item 3). */
static void test_safe_message(void)
{
	static const char evil[] =
		"Revert \"fix\r\ndiff --git a/evil b/evil\x1b[2J\"\n\n"
		"This reverts commit abc.\n\nbreaks boot\n---\n"
		"diff --git a/evil b/evil\nnew file mode 100644\n"
		"--- /dev/null\n+++ b/evil\n@@ -0,0 +1 @@\n+x\n"
		"Index: evil\nFrom x Mon Sep 17 00:00:00 2001\n\tkept\n";
	struct strbuf sb = STRBUF_INIT, mail = STRBUF_INIT;
	struct patch *p = NULL;
	int ret;

	patch_safe_message(&sb, evil);
	like(sb.buf, "Revert \"fix\n diff --git a/evil b/evil[2J\"\n\n",
	     "safe message: a line break in the subject ends it, the rest is "
	     "body (indented)");
	ok(!mime_has_control(sb.buf, sb.len) || strchr(sb.buf, '\t'),
	   "safe message: only tabs and line breaks are control characters");
	ok(!strchr(sb.buf, '\r') && !strchr(sb.buf, '\x1b'),
	   "safe message: no CR, no ESC");
	like(sb.buf, "\n ---\n diff --git a/evil b/evil\nnew file mode 100644\n"
		     " --- /dev/null\n +++ b/evil\n @@ -0,0 +1 @@\n+x\n"
		     " Index: evil\n From x",
	     "safe message: lines that end a message or start a diff are "
	     "indented");
	like(sb.buf, "\n\tkept\n", "safe message: tabs kept");
	/* as a mail with the real diff after it: only the real diff */
	strbuf_addf(&mail, "From: stableq <stableq@localhost>\nSubject: %s---\n"
			   "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
		    sb.buf);
	ret = patch_parse(&p, mail.buf, mail.len, "safe.patch", MAXB);
	ok(ret == 0 && p && p->nfiles == 1 && !strcmp(p->files[0].path, "f"),
	   "safe message: parsed back, the only file is the real diff's");
	ok(p && strstr(p->message, "\n diff --git a/evil b/evil\n"),
	   "  the injected text stays in the message");
	patch_free(p);
	strbuf_release(&sb);
	strbuf_release(&mail);
}

int main(void)
{
	test_format_patch();
	test_seed();
	test_git_show();
	test_stable_backport();
	test_commit_upstream();
	test_rfc2047_qp();
	test_quilt();
	test_diff_kinds();
	test_patch_id();
	test_trailer_forms();
	test_addresses();
	test_crlf_and_8bit();
	test_attachments();
	test_bad_input();
	test_control_chars();
	test_safe_message();
	test_bench();
	return done_testing();
}
