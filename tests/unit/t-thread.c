/* t-thread.c: thread_assemble() and review_read() on parsed mails. */
#include "err.h"
#include "review.h"
#include "strbuf.h"
#include "tap.h"
#include "thread.h"

#include <stdlib.h>
#include <string.h>

#define DIFF "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"

static struct patch *mail(const char *from, const char *subject,
			  const char *id, const char *irt, const char *body)
{
	struct strbuf sb = STRBUF_INIT;
	struct patch *p = NULL;

	strbuf_addf(&sb, "From: %s\nSubject: %s\nMessage-Id: <%s>\n", from,
		    subject, id);
	if (irt)
		strbuf_addf(&sb, "In-Reply-To: <%s>\n", irt);
	strbuf_addf(&sb, "\n%s", body);
	if (patch_parse_at(&p, sb.buf, sb.len, id, 0, 1, PATCH_ANY_MESSAGE) < 0)
		diag("%s: %s", id, err_msg());
	strbuf_release(&sb);
	return p;
}

static void test_series(void)
{
	const char *a = "A <a@example.org>", *e = "Eve <eve@example.org>";
	struct patch *v[] = {
		mail(a, "[PATCH 6.1 2/2] two", "p2", "c", "m\n---\n" DIFF),
		mail(a, "[PATCH 6.1 0/2] cover", "c", NULL, "cover\n"),
		mail(e, "[PATCH 6.1 1/2] forged", "f", "c", "m\n---\n" DIFF),
		mail(a, "Re: [PATCH 6.1 2/2] two", "r", "p2", "NAK\n"),
		mail(a, "[PATCH 6.1 1/2] one", "p1", "c", "m\n---\n" DIFF),
		mail(a, "[PATCH 6.1 1/2] one", "p1", "c", "m\n---\n" DIFF),
		mail(a, "[PATCH v2 6.1 1/1] solo", "s2", "s1", "m\n---\n" DIFF),
		mail(a, "[PATCH 6.1 1/1] solo", "s1", NULL, "m\n---\n" DIFF),
	};
	size_t n = sizeof(v) / sizeof(v[0]);
	struct thread_series *s = NULL;
	size_t ns = thread_assemble(&s, v, n);

	is_int(ns, 4, "four series: the threaded one, the forged patch alone, v2 and v1 of solo");
	is_int(s[0].cover, 1, "the first has its cover");
	is_int(s[0].nparts, 2, "... two parts: the reply is left out, the copy of 1/2 too");
	is_int(s[0].parts[0], 4, "... 1/2 first though it came later");
	is_int(s[0].parts[1], 0, "... then 2/2");
	is_int(s[1].nparts, 1, "a patch from another author claiming the thread is not taken in");
	is_int(s[1].parts[0], 2, "... it is a series of its own");
	is_int(s[2].version, 2, "v2 read from the prefix");
	ok(!s[2].superseded && s[3].superseded, "v1 is superseded by the v2 sent in its thread, not the other way");
	ok(!s[0].superseded, "the threaded series stands");
	thread_series_free(s, ns);
	for (size_t i = 0; i < n; i++)
		patch_free(v[i]);
	is_int(thread_version("PATCH v12 6.1 3/4"), 12, "thread_version: v12");
	is_int(thread_version("PATCH 6.1"), 1, "... none: 1");
}

/* A v2 outside the v1's thread, the cover not seen, parts from two passes. */
static void test_threads(void)
{
	const char *a = "A <a@example.org>";
	struct patch *v[] = {
		mail(a, "[PATCH 6.1 1/1] solo", "s1", NULL, "m\n---\n" DIFF),
		mail(a, "[PATCH v2 6.1 1/1] solo", "s2", NULL, "m\n---\n" DIFF),
		mail(a, "[PATCH 6.1 3/3] three", "t3", "tc", "m\n---\n" DIFF),
		mail(a, "[PATCH 6.1 1/3] one", "t1", "tc", "m\n---\n" DIFF),
		mail(a, "[PATCH v2 6.1 1/3] one", "u1", "tc", "m\n---\n" DIFF),
		/* Eve's mail naming A as the author (git am's in-body From:) */
		mail("Eve <eve@example.org>", "[PATCH 6.1 2/3] two", "e2", "tc",
		     "From: A <a@example.org>\n\nm\n---\n" DIFF),
	};
	size_t n = sizeof(v) / sizeof(v[0]);
	struct thread_series *s = NULL;
	size_t ns = thread_assemble(&s, v, n);

	is_str(v[5]->author_email, "a@example.org", "an in-body From: names the author");
	is_str(v[5]->sender_email, "eve@example.org", "... the mail's From: who sent it");
	is_int(ns, 5, "five series: v1 and v2 of solo, 1/3 and 3/3 of three, its v2, Eve's 2/3");
	is_int(s[4].nparts, 1, "a part sent by another address is not taken into the series");
	ok(!s[0].superseded && !s[1].superseded,
	   "a v2 outside the v1's thread supersedes nothing (another submission)");
	is_int(s[2].nparts, 2, "1/3 and 3/3 answering a cover not in the set: one series");
	is_int(s[2].parts[0], 3, "... 1/3 first");
	is_int(s[2].parts[1], 2, "... then 3/3");
	is_int(s[2].total, 3, "... of three");
	is_int(s[3].version, 2, "a v2 part answering the same cover is a series of its own");
	thread_series_free(s, ns);
	for (size_t i = 0; i < n; i++)
		patch_free(v[i]);
}

static void test_loop(void)
{
	const char *a = "A <a@example.org>";
	struct patch *v[] = {
		mail(a, "[PATCH 1/2] x", "x", "y", "m\n---\n" DIFF),
		mail(a, "[PATCH 2/2] y", "y", "x", "m\n---\n" DIFF),
	};
	struct thread_series *s = NULL;
	size_t ns = thread_assemble(&s, v, 2);

	ok(ns >= 1, "an In-Reply-To loop ends (%zu series)", ns);
	thread_series_free(s, ns);
	patch_free(v[0]);
	patch_free(v[1]);
	ns = thread_assemble(&s, NULL, 0);
	is_int(ns, 0, "no messages: no series");
	thread_series_free(s, ns);
}

static void test_review(void)
{
	struct {
		const char *body;
		unsigned says;
		const char *what;
	} cases[] = {
		{ "> NAK quoted\nLooks fine.\n", 0, "a quoted NAK does not count" },
		{ "NAK, it breaks suspend\n", REVIEW_NAK, "NAK as a word" },
		{ "Nacked-by: X <x@example.org>\n", REVIEW_NAK, "a Nacked-by: trailer" },
		{ "SNAKE oil\n", 0, "NAK inside a word does not count" },
		{ "Please drop this one.\n", REVIEW_DROP, "a drop request" },
		{ "#regzbot introduced: 0123456789ab\n", REVIEW_REGRESSION, "#regzbot introduced:" },
		{ "ok\n-- \nNAK in the signature\n", 0, "the signature does not count" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct patch *p = mail("R <r@example.org>", "Re: x", "r", "p",
				       cases[i].body);
		struct review r;
		review_read(&r, p);
		is_int(r.says, cases[i].says, "review: %s", cases[i].what);
		if (cases[i].says == REVIEW_REGRESSION)
			is_str(r.regression, "0123456789ab", "... the sha named");
		review_release(&r);
		patch_free(p);
	}
}

int main(void)
{
	test_series();
	test_threads();
	test_loop();
	test_review();
	return done_testing();
}
