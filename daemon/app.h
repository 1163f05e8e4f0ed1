/* app.h: what every command of the daemon gets: a branch context for the
 * domain, and the output mode, which stays in daemon/. */
#ifndef STABLEQ_APP_H
#define STABLEQ_APP_H

#include "ctx.h"

struct app {
	struct branch_ctx bc; /* what domain code gets */
	int json;             /* --json */
	int verbose;
};

#endif
