/* review-report.c: a tester's results in a reply (Guenter Roeck's, LKFT's, KernelCI's) read into counts. */
#include "review-int.h"
#include "mime.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Counts above this are not a tester's: the line is not read. */
#define COUNT_MAX 999999999L
/* The failed builds and tests the summary names, at most. */
#define FAILED_BYTES 256
#define SUMMARY_BYTES 512

enum section {
	SEC_NONE,
	SEC_BUILD,         /* Guenter's "Build results:" */
	SEC_RUN,           /* "Qemu test results:", LKFT's test summary */
	SEC_FAILED_BUILDS, /* "Failed builds:", one per indented line */
	SEC_FAILED_TESTS,  /* "Failed tests:" */
	SEC_LKFT_BUILDS,   /* LKFT's "## Build Summary": "* arm: N total, ..." */
	SEC_OTHER,         /* under another heading: its counts are not read */
};

/* The headings a report's lines come under, matched without case. */
static const struct {
	const char *text;
	enum section sec;
} headings[] = {
	{ "Build results:", SEC_BUILD },
	{ "Qemu test results:", SEC_RUN },
	{ "Test results:", SEC_RUN },
	{ "Failed builds:", SEC_FAILED_BUILDS },
	{ "Failed tests:", SEC_FAILED_TESTS },
	{ "## Test result summary", SEC_RUN },
	{ "## Test results summary", SEC_RUN },
	{ "## Build Summary", SEC_LKFT_BUILDS },
};

void report_reader_init(struct report_reader *rr, struct review_report *rep)
{
	memset(rr, 0, sizeof(*rr));
	strbuf_init(&rr->failed, 0);
	rep->build_total = rep->build_pass = rep->build_fail = -1;
	rep->qemu_total = rep->qemu_pass = rep->qemu_fail = -1;
}

/* The digits at s[0..n): the number, -1 when there are none or too many. */
static long number(const char *s, size_t n, size_t *used)
{
	long v = 0;
	size_t i = 0;

	while (i < n && isdigit((unsigned char)s[i])) {
		if (v > COUNT_MAX / 10)
			return -1;
		v = v * 10 + (s[i] - '0');
		i++;
	}
	*used = i;
	return i && v <= COUNT_MAX ? v : -1;
}

static int at_word(const char *s, size_t n, size_t i, const char *w)
{
	size_t k = strlen(w);

	return i + k <= n && !strncasecmp(s + i, w, k) &&
	       (i + k == n || !isalnum((unsigned char)s[i + k]));
}

/*
 * "key: N" (a word of its own, then white space): 1 and *v, 0 when the
 * line has no such key, -1 when its number cannot be read.
 */
static int key_count(const char *s, size_t n, const char *key, long *v)
{
	size_t k = strlen(key), used;

	for (size_t i = 0; i + k < n; i++) {
		if ((i && isalnum((unsigned char)s[i - 1])) ||
		    strncasecmp(s + i, key, k) || s[i + k] != ':')
			continue;
		i += k + 1;
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		*v = number(s + i, n - i, &used);
		return *v < 0 ? -1 : 1;
	}
	return 0;
}

/* "N word" (word a word of its own): 1 and *v, 0 none, -1 unreadable. */
static int count_before(const char *s, size_t n, const char *word, long *v)
{
	for (size_t i = 1; i < n; i++) {
		size_t j = i - 1, used;
		if (s[j] != ' ' || !at_word(s, n, i, word) || !j ||
		    !isdigit((unsigned char)s[j - 1]))
			continue;
		while (j && isdigit((unsigned char)s[j - 1]))
			j--;
		*v = number(s + j, i - 1 - j, &used);
		return *v < 0 ? -1 : 1;
	}
	return 0;
}

static void set_counts(struct review_report *rep, int build, long total,
		       long pass, long fail)
{
	if (build) {
		rep->build_total = (int)total;
		rep->build_pass = (int)pass;
		rep->build_fail = (int)fail;
	} else {
		rep->qemu_total = (int)total;
		rep->qemu_pass = (int)pass;
		rep->qemu_fail = (int)fail;
	}
}

/* "total: N pass: N fail: N" (Guenter's), "total: N, pass: N, fail: N,
 * skip: N, xfail: N" (LKFT's): 1 when read */
static int counts_line(struct report_reader *rr, struct review_report *rep,
		       const char *s, size_t n)
{
	long total = -1, pass = -1, fail = -1, skip = 0;
	int t = key_count(s, n, "total", &total),
	    p = key_count(s, n, "pass", &pass),
	    f = key_count(s, n, "fail", &fail),
	    k = key_count(s, n, "skip", &skip);

	if (p != 1 || f != 1 || t < 0 || k < 0)
		return 0;
	if (t == 0)
		total = pass + fail + (k == 1 ? skip : 0);
	set_counts(rep, rr->section == SEC_BUILD, total, pass, fail);
	return 1;
}

/* The text before " what: " is one word with a '/' ("stable-rc/linux-6.1.y"). */
static const char *kernelci_line(const char *s, size_t n, const char *what)
{
	size_t k = strlen(what);

	for (size_t i = 1; i + k + 2 < n; i++) {
		if (s[i] == ' ')
			break;
		if (s[i + 1] == ' ' && !strncmp(s + i + 2, what, k) &&
		    s[i + 2 + k] == ':' && memchr(s, '/', i + 1))
			return s + i + 3 + k;
	}
	return NULL;
}

/*
 * KernelCI's: "<tree>/<branch> build: N builds: F failed, P passed, ...",
 * "... boot: N boots: F failed, P passed with O offline", "... baseline:
 * N runs, R regressions": 1 when read.
 */
static int kernelci(struct review_report *rep, const char *s, size_t n)
{
	static const struct {
		const char *what, *unit;
		int build;
	} kinds[] = { { "build", "builds", 1 }, { "boot", "boots", 0 } };
	long total, pass, fail;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kernelci_line(s, n, kinds[i].what) &&
		    count_before(s, n, kinds[i].unit, &total) == 1 &&
		    count_before(s, n, "failed", &fail) == 1 &&
		    count_before(s, n, "passed", &pass) == 1) {
			set_counts(rep, kinds[i].build, total, pass, fail);
			return 1;
		}
	if (kernelci_line(s, n, "baseline") &&
	    count_before(s, n, "runs", &total) == 1 &&
	    count_before(s, n, "regressions", &fail) == 1 && fail <= total) {
		set_counts(rep, 0, total, total - fail, fail);
		return 1;
	}
	return 0;
}

/* LKFT's "* arm: 201 total, 200 passed, 1 failed", summed */
static int lkft_build(struct report_reader *rr, struct review_report *rep,
		      const char *s, size_t n)
{
	long total, pass, fail;

	if (n < 2 || s[0] != '*' || count_before(s, n, "total", &total) != 1 ||
	    count_before(s, n, "passed", &pass) != 1 ||
	    count_before(s, n, "failed", &fail) != 1)
		return 0;
	if (!rr->lkft_builds++)
		set_counts(rep, 1, 0, 0, 0);
	if (rep->build_total > COUNT_MAX - total ||
	    rep->build_pass > COUNT_MAX - pass ||
	    rep->build_fail > COUNT_MAX - fail)
		return 0;
	set_counts(rep, 1, rep->build_total + total, rep->build_pass + pass,
		   rep->build_fail + fail);
	return 1;
}

int report_reader_line(struct report_reader *rr, struct review_report *rep,
		       const char *s, size_t n)
{
	int indented = n && (s[0] == ' ' || s[0] == '\t');

	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n)
		return 0;
	for (size_t i = 0; i < sizeof(headings) / sizeof(headings[0]); i++)
		if (strlen(headings[i].text) == n &&
		    !strncasecmp(s, headings[i].text, n)) {
			rr->section = headings[i].sec;
			return 1;
		}
	if ((n > 3 && !memcmp(s, "## ", 3)) || (!indented && s[n - 1] == ':')) {
		/* another heading (LKFT's "## ...", "KUnit test results:"):
		 * its counts are not the builds' nor the boots' */
		rr->section = SEC_OTHER;
		return 0;
	}
	if (rr->section == SEC_FAILED_BUILDS ||
	    rr->section == SEC_FAILED_TESTS) {
		if (indented) {
			if (rr->failed.len < FAILED_BYTES) {
				strbuf_addstr(&rr->failed,
					      rr->failed.len ? ", " : "");
				strbuf_add(&rr->failed, s,
					   (size_t)utf8_cut(s, n, 64));
			}
			return 1;
		}
		rr->section = SEC_NONE;
	}
	if (rr->section == SEC_LKFT_BUILDS)
		return lkft_build(rr, rep, s, n);
	if (rr->section == SEC_OTHER)
		return 0;
	return counts_line(rr, rep, s, n) || kernelci(rep, s, n);
}

int report_reader_finish(struct report_reader *rr, struct review_report *rep)
{
	struct strbuf raw = STRBUF_INIT, safe = STRBUF_INIT;
	int any = rep->build_total >= 0 || rep->qemu_total >= 0;

	if (any) {
		if (rep->build_total >= 0)
			strbuf_addf(&raw, "builds: total %d, pass %d, fail %d",
				    rep->build_total, rep->build_pass,
				    rep->build_fail);
		if (rep->qemu_total >= 0)
			strbuf_addf(&raw, "%stests: total %d, pass %d, fail %d",
				    raw.len ? "; " : "", rep->qemu_total,
				    rep->qemu_pass, rep->qemu_fail);
		if (rr->failed.len)
			strbuf_addf(&raw, " (failed: %s)", rr->failed.buf);
		mime_clean_line(&safe, raw.buf,
				(size_t)utf8_cut(raw.buf, raw.len,
						 SUMMARY_BYTES));
		free(rep->summary);
		rep->summary = strbuf_detach(&safe, NULL);
	}
	strbuf_release(&raw);
	strbuf_release(&safe);
	strbuf_release(&rr->failed);
	return any;
}
