/* t-reply-read.c: review_read() over replies shaped like the list's: NAKs, drop requests, regzbot, retractions, testers' reports. */
#include "err.h"
#include "review.h"
#include "strbuf.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static struct patch *mail(const char *subject, const char *body)
{
	struct strbuf sb = STRBUF_INIT;
	struct patch *p = NULL;

	strbuf_addf(&sb,
		    "From: Rita Reviewer <rita@example.org>\n"
		    "Subject: %s\n"
		    "Message-Id: <r1@example.org>\n"
		    "In-Reply-To: <p1@example.org>\n\n%s",
		    subject, body);
	if (patch_parse_at(&p, sb.buf, sb.len, "reply", 0, 1,
			   PATCH_ANY_MESSAGE) < 0)
		diag("reply: %s", err_msg());
	strbuf_release(&sb);
	return p;
}

/* reads body as a reply; the review is the caller's to release */
static void read_body(struct review *r, const char *body)
{
	struct patch *p = mail("Re: [PATCH 6.1 2/3] lib: fix line 2", body);

	memset(r, 0, sizeof(*r));
	if (p)
		review_read(r, p);
	patch_free(p);
}

static const char *says_name(unsigned says, char *buf, size_t n)
{
	static const char *const names[] = { "NAK", "REGRESSION", "DROP",
					     "WITHDRAW", "REPORT" };
	buf[0] = '\0';
	for (int i = 0; i < 5; i++)
		if (says & (1u << i))
			snprintf(buf + strlen(buf), n - strlen(buf), "%s%s",
				 buf[0] ? "|" : "", names[i]);
	if (!buf[0])
		snprintf(buf, n, "nothing");
	return buf;
}

static const struct {
	const char *body;
	unsigned says;
	const char *regression;
	const char *what;
} cases[] = {
	/* a NAK says so, at the start of a line */
	{ "NAK.\n", REVIEW_NAK, NULL, "\"NAK.\"" },
	{ "NAK: this breaks suspend on my laptop.\n", REVIEW_NAK, NULL,
	  "\"NAK: reason\"" },
	{ "NACK, because the backport misses its prerequisite.\n", REVIEW_NAK,
	  NULL, "\"NACK, because ...\"" },
	{ "Nack.\n\nThe fix upstream needs 1234567890ab first.\n", REVIEW_NAK,
	  NULL, "\"Nack.\" in mixed case" },
	{ "Hi Greg,\n\n  NAK\n\nIt breaks the frobnicator.\n", REVIEW_NAK,
	  NULL, "an indented NAK on its own line" },
	{ "Nacked-by: Nina Nak <nina@example.org>\n", REVIEW_NAK, NULL,
	  "a Nacked-by: trailer" },
	{ "NAKed: the same bug as last week.\n", REVIEW_NAK, NULL,
	  "\"NAKed:\"" },
	/* ... not a negated, quoted or embedded mention */
	{ "No NAK from me, this is fine.\n", 0, NULL,
	  "\"No NAK from me, this is fine\"" },
	{ "I won't NAK this, but please test it on arm64.\n", 0, NULL,
	  "\"I won't NAK this\"" },
	{ "This is not a NAK, just a question about the locking.\n", 0, NULL,
	  "\"not a NAK\"" },
	{ "NAK? No, it is fine: the lock is taken by the caller.\n", 0, NULL,
	  "\"NAK?\" asked, not said" },
	{ "> NAK\n\nThanks, I will send a v2.\n", 0, NULL, "\"> NAK\" quoted" },
	{ " > NAK\n\nThanks.\n", 0, NULL,
	  "\" > NAK\": a quote indented by a space" },
	{ ">> NAK\nAgreed with the above, with a new version it is fine.\n", 0,
	  NULL, "\">> NAK\": quoted twice" },
	{ "  >NAK\nOk.\n", 0, NULL, "\"  >NAK\": indented, no space" },
	{ "On Mon, 1 Sep 2025, Nina wrote:\n> NAK: bad.\n> Nacked-by: Nina "
	  "<nina@example.org>\n\nI disagree, the test was wrong.\n",
	  0, NULL, "a quoted NAK and Nacked-by: under an attribution" },
	{ "SNAKE oil.\n", 0, NULL, "NAK inside a word" },
	{ "Naked pointers are fine here.\n", 0, NULL, "\"Naked\" is not NAKed" },
	{ "Looks good.\n\n-- \nNAK is my middle name.\nPlease drop me a line.\n",
	  0, NULL, "NAK and \"please drop\" after the \"-- \" signature" },
	/* drop requests */
	{ "Please drop this patch, it needs a prerequisite.\n", REVIEW_DROP,
	  NULL, "\"Please drop this patch\"" },
	{ "Greg, please don't apply this one, it is wrong for 6.1.\n",
	  REVIEW_DROP, NULL, "\"please don't apply\"" },
	{ "Do not apply: it breaks the build on arm.\n", REVIEW_DROP, NULL,
	  "\"Do not apply:\"" },
	{ "Please revert this in 6.1.y, it breaks boot.\n", REVIEW_DROP, NULL,
	  "\"Please revert\"" },
	{ "In this version we drop this lock before calling the callback,\n"
	  "which is what upstream does.\n",
	  0, NULL, "\"we drop this lock\" in a review" },
	{ "We drop the reference in the error path, so this is right.\n", 0,
	  NULL, "\"We drop the reference\"" },
	{ "Please don't drop this, it is needed.\n", 0, NULL,
	  "\"Please don't drop this\"" },
	/* regzbot */
	{ "The box stopped booting.\n\n#regzbot introduced: 1234567890ab\n",
	  REVIEW_REGRESSION, "1234567890ab", "#regzbot introduced: <sha>" },
	{ "#regzbot ^introduced: ABCDEF1\n", REVIEW_REGRESSION, "abcdef1",
	  "#regzbot ^introduced: with 7 digits, upper case" },
	{ "#regzbot ^introduced 0123456789abcdef0123456789abcdef01234567\n",
	  REVIEW_REGRESSION, "0123456789abcdef0123456789abcdef01234567",
	  "#regzbot ^introduced <sha> without a colon, 40 digits" },
	{ "#regzbot introduced 1234567890ab\n", REVIEW_REGRESSION,
	  "1234567890ab", "#regzbot introduced <sha> without a colon" },
	{ "#regzbot introduced: v6.1.192..v6.1.193\n", REVIEW_REGRESSION,
	  "v6.1.192..v6.1.193", "a version range: recorded as written" },
	{ "> #regzbot introduced: 1234567890ab\nThat is not it.\n", 0, NULL,
	  "a quoted regzbot line" },
	{ "#regzbot introduced: 123456\n", 0, NULL, "six digits: not a sha" },
	{ "#regzbot introduced: 1234567890abxyz\n", 0, NULL,
	  "hex followed by letters: not a sha" },
	/* a retraction */
	{ "NAK withdrawn, the fix is in the series already.\n",
	  REVIEW_WITHDRAW, NULL, "\"NAK withdrawn\"" },
	{ "Please ignore my NAK, I tested the wrong tree.\n", REVIEW_WITHDRAW,
	  NULL, "\"ignore my NAK\"" },
	{ "I withdraw my NAK.\n", REVIEW_WITHDRAW, NULL,
	  "\"I withdraw my NAK\"" },
	{ "I do not withdraw my NAK: it still breaks.\n", 0, NULL,
	  "\"I do not withdraw my NAK\"" },
	/* several at once */
	{ "NAK: breaks boot on arm64.\n\nTested-by: Tom Tester "
	  "<tom@example.org>\n",
	  REVIEW_NAK, NULL, "a NAK with a Tested-by line is a NAK" },
};

static void test_cases(void)
{
	char got[64], want[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct review r;
		read_body(&r, cases[i].body);
		if (!ok(r.says == cases[i].says, "%s: %s", cases[i].what,
			says_name(cases[i].says, want, sizeof(want))))
			diag("  got %s", says_name(r.says, got, sizeof(got)));
		if (cases[i].regression)
			is_str(r.regression, cases[i].regression,
			       "... regression: %s", cases[i].regression);
		review_release(&r);
	}
}

static void test_negative(void)
{
	struct review r;

	read_body(&r, "NAK: breaks boot on arm64.\n\nTested-by: Tom Tester "
		      "<tom@example.org>\n");
	ok(review_is_negative(&r), "a NAK is negative: its Tested-by counts for"
				   " nothing");
	review_release(&r);
	read_body(&r, "Please ignore my NAK.\n\nTested-by: Tom <tom@example.org>\n");
	ok(!review_is_negative(&r), "a retraction is not negative");
	review_release(&r);
	read_body(&r, "Build results:\n\ttotal: 10 pass: 9 fail: 1\n");
	ok(!review_is_negative(&r), "a report with a failure is not a NAK");
	review_release(&r);
}

static void test_guenter(void)
{
	struct review r;

	read_body(&r,
		  "On Mon, Sep 01, 2025 at 10:00:00AM +0200, Greg Kroah-Hartman"
		  " wrote:\n"
		  "> This is the start of the stable review cycle for the"
		  " 6.1.193 release.\n"
		  "> There are 172 patches in this series, all will be posted"
		  " as a response\n"
		  "> to this one.  If anyone has any issues with these being"
		  " applied, please\n"
		  "> let me know.\n"
		  ">\n"
		  "> Responses should be made by Wed, 03 Sep 2025 10:00:00"
		  " +0000.\n"
		  "> Anything received after that time might be too late.\n"
		  ">\n\n"
		  "Build results:\n"
		  "\ttotal: 158 pass: 156 fail: 2\n"
		  "Failed builds:\n"
		  "\tarm:allmodconfig\n"
		  "\tm68k:allmodconfig\n"
		  "Qemu test results:\n"
		  "\ttotal: 528 pass: 528 fail: 0\n\n"
		  "Guenter\n");
	is_int(r.says, REVIEW_REPORT, "Guenter Roeck's report: REPORT only");
	is_int(r.report.build_total, 158, "... builds: total 158");
	is_int(r.report.build_pass, 156, "... pass 156");
	is_int(r.report.build_fail, 2, "... fail 2");
	is_int(r.report.qemu_total, 528, "... qemu: total 528");
	is_int(r.report.qemu_pass, 528, "... pass 528");
	is_int(r.report.qemu_fail, 0, "... fail 0");
	like(r.report.summary, "arm:allmodconfig", "... the summary names the"
						   " failed builds");
	ok(r.report.summary && !strchr(r.report.summary, '\n') &&
		   !strchr(r.report.summary, '\t'),
	   "... on one line");
	review_release(&r);

	read_body(&r, "> Build results:\n> \ttotal: 158 pass: 156 fail: 2\n\n"
		      "Thanks for testing.\n");
	is_int(r.says, 0, "a quoted report is not a report");
	is_int(r.report.build_total, -1, "... its counts absent (-1)");
	review_release(&r);
}

static void test_lkft(void)
{
	struct review r;

	read_body(&r,
		  "Results from Linaro's test farm.\n"
		  "No regressions on arm64, arm, x86_64, and i386.\n\n"
		  "Tested-by: Linux Kernel Functional Testing <lkft@linaro.org>\n\n"
		  "## Build\n"
		  "* kernel: 6.1.193-rc1\n"
		  "* git branch: linux-6.1.y\n\n"
		  "## Test Regressions (compared to v6.1.192)\n\n"
		  "## Test result summary\n"
		  "total: 91992, pass: 69255, fail: 3591, skip: 19028, xfail: 118\n\n"
		  "## Build Summary\n"
		  "* arc: 10 total, 10 passed, 0 failed\n"
		  "* arm: 201 total, 200 passed, 1 failed\n"
		  "* arm64: 42 total, 41 passed, 1 failed\n\n"
		  "## Test suites summary\n"
		  "* boot\n"
		  "* kselftest-rtc\n\n"
		  "--\n"
		  "Linaro LKFT\n"
		  "https://lkft.linaro.org\n");
	is_int(r.says, REVIEW_REPORT, "LKFT's report: REPORT");
	is_int(r.report.qemu_total, 91992, "... tests: total 91992");
	is_int(r.report.qemu_pass, 69255, "... pass 69255");
	is_int(r.report.qemu_fail, 3591, "... fail 3591");
	is_int(r.report.build_total, 253, "... builds summed over the"
					  " architectures: 253");
	is_int(r.report.build_pass, 251, "... 251 passed");
	is_int(r.report.build_fail, 2, "... 2 failed");
	review_release(&r);

	read_body(&r, "## Test results summary\n"
		      "pass: 120 fail: 3 skip: 7\n");
	is_int(r.says, REVIEW_REPORT, "\"## Test results summary\" without"
				      " total or commas");
	is_int(r.report.qemu_total, 130, "... total: the sum, 130");
	is_int(r.report.qemu_fail, 3, "... fail 3");
	review_release(&r);
}

static void test_kernelci(void)
{
	struct review r;

	read_body(&r,
		  "stable-rc/linux-6.1.y build: 167 builds: 2 failed, 165"
		  " passed, 6 errors, 9 warnings (v6.1.192-172-g0bacaadb448b)\n\n"
		  "Full Build Summary: https://kernelci.org/build/stable-rc/"
		  "branch/linux-6.1.y/kernel/v6.1.192-172-g0bacaadb448b/\n\n"
		  "Tree: stable-rc\n"
		  "Branch: linux-6.1.y\n");
	is_int(r.says, REVIEW_REPORT, "KernelCI's build report: REPORT");
	is_int(r.report.build_total, 167, "... builds 167");
	is_int(r.report.build_pass, 165, "... 165 passed");
	is_int(r.report.build_fail, 2, "... 2 failed");
	is_int(r.report.qemu_total, -1, "... no run-time results");
	review_release(&r);

	read_body(&r, "stable-rc/linux-6.1.y boot: 130 boots: 0 failed, 122"
		      " passed with 8 offline (v6.1.192-22-g6073f0ee406c)\n");
	is_int(r.says, REVIEW_REPORT, "KernelCI's boot report: REPORT");
	is_int(r.report.qemu_total, 130, "... boots 130");
	is_int(r.report.qemu_pass, 122, "... 122 passed");
	is_int(r.report.qemu_fail, 0, "... 0 failed");
	review_release(&r);

	read_body(&r, "stable-rc/linux-6.1.y baseline: 147 runs, 3 regressions"
		      " (v6.1.192-37-gf52b4f86deb4)\n");
	is_int(r.says, REVIEW_REPORT, "KernelCI's baseline report: REPORT");
	is_int(r.report.qemu_total, 147, "... runs 147");
	is_int(r.report.qemu_fail, 3, "... 3 regressions count as failures");
	review_release(&r);

	read_body(&r, "Test results:\ntotal: 12 pass: 11 fail: 1\n");
	is_int(r.says, REVIEW_REPORT, "a bare \"total: N pass: N fail: N\"");
	is_int(r.report.qemu_fail, 1, "... a run-time failure");
	review_release(&r);

	read_body(&r, "Build results:\n\ttotal: 99999999999999999999 pass: 1"
		      " fail: 0\n");
	is_int(r.report.build_total, -1, "a count that overflows is not read");
	review_release(&r);
}

static void test_quote(void)
{
	struct review r;

	read_body(&r, "> quoted, not ours\n"
		      "This breaks the frobnicator, \033[31mred\033[0m.\r\n"
		      "NAK\n");
	is_int(r.says, REVIEW_NAK, "a NAK after an ESC-laden line");
	like(r.quote, "> This breaks the frobnicator, [31mred[0m.",
	     "the quote: the reply's own line, its ESC dropped");
	ok(r.quote && !strchr(r.quote, '\033') && !strchr(r.quote, '\r'),
	   "... no ESC, no CR");
	ok(r.quote && !strstr(r.quote, "not ours"), "... the quoted line left out");
	review_release(&r);
	review_release(NULL);
	ok(1, "review_release(NULL) is a no-op");
}

int main(void)
{
	test_cases();
	test_negative();
	test_guenter();
	test_lkft();
	test_kernelci();
	test_quote();
	return done_testing();
}
