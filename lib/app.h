/* app.h: what every command gets: the config, the open store and who acts. */
#ifndef STABLEQ_APP_H
#define STABLEQ_APP_H

#include "config.h"

#include <sqlite3.h>

struct app {
	struct config cfg;
	sqlite3 *db;          /* owned; opened by app_open_db() */
	long long branch_id;  /* branches.id of cfg's selected branch */
	int branch_given;     /* --branch named it: acting on another
			       * branch's patch is refused, not followed */
	const char *actor;    /* "user:NAME" (the CLI), "daemon", "token:NAME",
			       * "bisection:ID" (borrowed) */
	const char *self;     /* path of the stableq binary, for child steps */
	int json;             /* --json */
	int verbose;
};

/*
 * Opens cfg.db (creating var/ if needed), writes the configured branches
 * into its branches table (key, git branch name, order: app_sync_branches)
 * and sets branch_id to the selected one's row.
 */
int app_open_db(struct app *app);
/*
 * The configured branches in the store: a row per key (name updated, ord
 * the config's order, 0 the default; branches no longer configured keep
 * their rows with ord NULL). Writes only when something changed.
 */
int app_sync_branches(struct app *app);
/* The store's id of configured branch key, or negative (ERR_NOTFOUND). */
int app_branch_id(struct app *app, const char *key, long long *id);
/*
 * Records the version branch key's tree holds ("6.1.10"; base_tag
 * "v6.1.10"). 0 or negative.
 */
int app_set_branch_version(sqlite3 *db, const char *key, const char *version);
/* Selects branch key (NULL: the first) in cfg and branch_id. */
int app_select_branch(struct app *app, const char *key);

#endif
