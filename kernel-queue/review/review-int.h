/* review-int.h: what review.c and review-report.c share: a tester's report read line by line. */
#ifndef STABLEQ_REVIEW_INT_H
#define STABLEQ_REVIEW_INT_H

#include "review.h"
#include "strbuf.h"

#include <stddef.h>

/*
 * A report being read: the section the last heading opened ("Build
 * results:", "## Test result summary", ...) and the failed builds and
 * tests listed under "Failed builds:" / "Failed tests:".
 */
struct report_reader {
	int section;
	struct strbuf failed;
	int lkft_builds;       /* "## Build Summary" rows summed */
};

void report_reader_init(struct report_reader *rr, struct review_report *rep);
/*
 * One of the reply's own lines (not quoted, before the signature), as
 * written (its indent tells a list entry): 1 when it was part of a report.
 */
int report_reader_line(struct report_reader *rr, struct review_report *rep,
		       const char *s, size_t n);
/* Sets rep->summary when anything was read; 1 then, else 0. Frees rr. */
int report_reader_finish(struct report_reader *rr, struct review_report *rep);

#endif
