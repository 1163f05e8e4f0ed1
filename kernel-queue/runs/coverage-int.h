/* coverage-int.h: what coverage.c and coverage-report.c share (no API). */
#ifndef STABLEQ_COVERAGE_INT_H
#define STABLEQ_COVERAGE_INT_H

/* A patch's coverage status from its files' rows: the worst one wins. */
#define PATCH_STATUS_SQL \
	"CASE WHEN SUM(status = 'failed') THEN 'failed'" \
	" WHEN SUM(status = 'booted') THEN 'booted'" \
	" WHEN SUM(status = 'compiled') THEN 'compiled'" \
	" WHEN SUM(status = 'not-built') THEN 'not-built'" \
	" ELSE 'no-code' END"

#endif
