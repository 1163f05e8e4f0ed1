/* crash.h: fault injection for the crash tests: STABLEQ_CRASH_AT=<point> kills -9 there. */
#ifndef STABLEQ_CRASH_H
#define STABLEQ_CRASH_H

#include "log.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

static inline void crash_point(const char *point)
{
	const char *at = getenv("STABLEQ_CRASH_AT");

	if (at && !strcmp(at, point)) {
		log_warnx("STABLEQ_CRASH_AT=%s: killing myself", point);
		raise(SIGKILL);
	}
}

#endif
