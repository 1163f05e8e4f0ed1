/* fuzz-review-read.c: review_read() on replies parsed from arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "patch.h"
#include "review.h"

/*
 * The input is one message, parsed as the intake parses mail
 * (PATCH_ANY_MESSAGE), then read as a reply. What comes back must be what
 * review.h promises: a quote of "> " lines without control characters, a
 * one-line summary, a regression of the characters a sha or a range has,
 * counts absent (-1) or not negative, REVIEW_REPORT exactly when a count
 * was read.
 */
static void check_text(const char *s, int lines)
{
	for (; s && *s; s++)
		if (((unsigned char)*s < 0x20 && !(lines && *s == '\n')) ||
		    *s == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch *p = NULL;
	struct review r;

	if (patch_parse_at(&p, (const char *)data, size, "fuzz", 1 << 20, 1,
			   PATCH_ANY_MESSAGE) < 0 || !p) {
		err_clear();
		return 0;
	}
	review_read(&r, p);
	check_text(r.quote, 1);
	for (const char *l = r.quote; l && *l; l = strchr(l, '\n') + 1) {
		if (strncmp(l, "> ", 2) || !strchr(l, '\n'))
			abort();
	}
	check_text(r.report.summary, 0);
	if (r.regression &&
	    strspn(r.regression, "0123456789abcdefghijklmnopqrstuvwxyz"
				 "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-_^~") !=
		    strlen(r.regression))
		abort();
	const int c[] = { r.report.build_total, r.report.build_pass,
			  r.report.build_fail, r.report.qemu_total,
			  r.report.qemu_pass, r.report.qemu_fail };
	for (int i = 0; i < 6; i++)
		if (c[i] < -1)
			abort();
	if (!!(r.says & REVIEW_REPORT) !=
	    (r.report.build_total >= 0 || r.report.qemu_total >= 0))
		abort();
	(void)review_is_negative(&r);
	review_release(&r);
	patch_free(p);
	return 0;
}
