/* t-version.c: stable_version_covers() on stable Cc: annotations, and whole Cc: lines. */
#include "patch.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *annotation, *version;
	int want;
} cases[] = {
	{"6.1.x", "6.1.192", 1},
	/* stable-kernel-rules.rst: "# 3.3.x" is every tree starting with 3.3 */
	{"6.1.x", "6.6.10", 1},
	{"5.15.x", "6.1.192", 1},
	{"5.15", "6.1.192", 1},
	{"3.3", "6.1.192", 1},
	{"3.3.x", "6.1.192", 1},
	{"v5.15", "6.1.192", 1},
	{"6.6.x", "6.1.192", 0},
	{"6.6", "6.1.192", 0},
	{"v6.6+", "6.1.192", 0},
	{"6.1.200", "6.1.192", 0},
	{"5.4 - 6.1", "6.1.192", 1},
	{"5.4 - 5.15", "6.1.192", 0},
	{"5.4-6.1.x", "6.1.1", 1},
	{"6.1 only", "6.6.1", 0},
	{"5.15 only", "6.1.192", 0},
	{"6.1", "6.1.192", 1},
	{"v6.1", "6.1.192", 1},
	{"v6.1+", "6.6.1", 1},
	{"6.1.y", "6.1.3", 1},
	{"6.1.x", "v6.1.192", 1},
	{"5.10+", "6.1.192", 1},
	{"5.10+", "5.10.0", 1},
	{"5.10+", "5.4.260", 0},
	{"5.10.x+", "5.15.1", 1},
	{"6.1.50+", "6.1.49", 0},
	{"6.1.50+", "6.1.50", 1},
	{"4.19.x-5.15.x", "5.10.200", 1},
	{"4.19.x-5.15.x", "4.19.1", 1},
	{"4.19.x-5.15.x", "5.15.140", 1},
	{"4.19.x-5.15.x", "6.1.192", 0},
	{"4.19.x-5.15.x", "4.14.300", 0},
	{"4.19 - 5.15", "5.4.1", 1},
	{"5.4.x, 5.10.x", "5.10.3", 1},
	{"5.4.x, 5.10.x", "5.15.3", 1},
	{"6.6 only, 6.12 only", "6.1.3", 0},
	{">= 5.15", "6.1.1", 1},
	{"5.15 and later", "6.1.1", 1},
	{"6.1 only", "6.1.1", 1},
	{"6.x", "6.6.1", 1},
	{"6.x", "5.15.1", 0},
	{"6.1.x", "6.1", 1},
	{"needs a backport", "6.1.192", -1},
	{"", "6.1.192", -1},
	{"6.1.x", "linux", -1},
	{"6.1.x", "6", -1},
	{"6.1.x-", "6.1.1", -1},
	{"5.10+ foo", "6.1.1", -1},
	{"99999999999999999999", "6.1.1", -1},
};

/*
 * The annotation forms of stable-kernel-rules.rst as written in a mail, each
 * parsed by patch_parse() and judged for 6.1.192 as the fixes check does.
 */
static const struct {
	const char *cc;
	int want;
	const char *prereq; /* the prerequisite note's SHA, if any */
} lines[] = {
	{"Cc: stable@vger.kernel.org # 3.3.x", 1, NULL},
	{"Cc: stable@vger.kernel.org # 3.3", 1, NULL},
	{"Cc: <stable@vger.kernel.org> # 5.15.x", 1, NULL},
	{"Cc: stable@vger.kernel.org # 5.15+", 1, NULL},
	{"Cc: stable@vger.kernel.org # v6.1+", 1, NULL},
	{"Cc: stable@vger.kernel.org # 5.4 - 6.1", 1, NULL},
	{"Cc: stable@vger.kernel.org # 4.19.x: abcdef123456: prereq", 1,
	 "abcdef123456"},
	{"Cc: stable@vger.kernel.org", 1, NULL},
	{"Cc: <stable@vger.kernel.org>", 1, NULL},
	{"Cc: stable@kernel.org", 1, NULL},
	{"Cc: stable@vger.kernel.org # 6.6.x", 0, NULL},
	{"Cc: stable@vger.kernel.org # v6.6+", 0, NULL},
	{"Cc: stable@vger.kernel.org # 5.4 - 5.15", 0, NULL},
	{"Cc: stable@vger.kernel.org # 5.10 only", 0, NULL},
	{"Cc: stable@vger.kernel.org # after a week in mainline", -1, NULL},
};

static void cc_line(const char *cc, int want, const char *prereq)
{
	char mail[1024];
	struct patch *p = NULL;
	const struct patch_tag *t[4], *pr[2];
	size_t n, npr;
	int got = -2;

	snprintf(mail, sizeof(mail),
		 "From: A <a@example.org>\nSubject: [PATCH] x: fix y\n\n"
		 "Fix y.\n\n%s\nSigned-off-by: A <a@example.org>\n---\n"
		 "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n"
		 "@@ -1 +1 @@\n-a\n+b\n",
		 cc);
	if (patch_parse(&p, mail, strlen(mail), "t", 1 << 20) < 0) {
		ok(0, "%s: parses", cc);
		return;
	}
	n = patch_tags_of(p, "stable", t, 4);
	/* several stable tags: any that covers decides, as the check does */
	for (size_t i = 0; i < n; i++) {
		int r = stable_cc_covers(t[i]->extra, "6.1.192");
		if (r > got)
			got = r;
	}
	is_int(n >= 1, 1, "%s: a stable tag", cc);
	is_int(got, want, "%s: covers 6.1.192: %d", cc, want);
	npr = patch_tags_of(p, "prereq", pr, 2);
	if (prereq)
		ok(npr == 1 && !strcmp(pr[0]->value, prereq),
		   "%s: the prerequisite %s is noted", cc, prereq);
	else
		is_int((int)npr, 0, "%s: no prerequisite", cc);
	patch_free(p);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(stable_version_covers(cases[i].annotation,
					     cases[i].version),
		       cases[i].want, "'%s' covers %s: %d", cases[i].annotation,
		       cases[i].version, cases[i].want);
	is_int(stable_version_covers(NULL, "6.1.1"), -1, "NULL annotation");
	is_int(stable_version_covers("6.1.x", NULL), -1, "NULL version");
	is_int(stable_cc_covers(NULL, "6.1.1"), 1,
	       "an unversioned Cc: stable covers every tree");
	is_int(stable_cc_covers("  ", "6.1.1"), 1, "... so does a blank note");
	is_int(stable_cc_covers("6.6+", "6.1.1"), 0, "a versioned one is read");
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		cc_line(lines[i].cc, lines[i].want, lines[i].prereq);
	return done_testing();
}
