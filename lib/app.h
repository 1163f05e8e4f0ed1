/* app.h: what every command gets: a branch context, the output mode. */
#ifndef STABLEQ_APP_H
#define STABLEQ_APP_H

#include "ctx.h"

struct app {
	struct branch_ctx bc; /* what domain code gets */
	int json;             /* --json */
	int verbose;
};

#endif
