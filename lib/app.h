/* app.h: what every command gets: the config, the open store and who acts. */
#ifndef STABLEQ_APP_H
#define STABLEQ_APP_H

#include "config.h"

#include <sqlite3.h>

struct app {
	struct config cfg;
	sqlite3 *db;          /* owned; opened by app_open_db() */
	const char *actor;    /* "user:NAME" (the CLI), "daemon", "token:NAME",
			       * "bisection:ID" (borrowed) */
	const char *self;     /* path of the stableq binary, for child steps */
	int json;             /* --json */
	int verbose;
};

/* Opens cfg.db (creating var/ if needed). */
int app_open_db(struct app *app);

#endif
