/* branch.h: the store's branches as other modules read them (the branches
 * table's accessors; ctx.c writes them). */
#ifndef STABLEQ_BRANCH_H
#define STABLEQ_BRANCH_H

#include <jansson.h>
#include <sqlite3.h>

/*
 * The id of the branch row with key (configured: only a branch the config
 * still has). ERR_NOTFOUND, with no message set, when there is none.
 */
int branch_lookup(sqlite3 *db, const char *key, int configured, long long *id);
/* The key of branch row id (*key: caller frees). ERR_NOTFOUND when none. */
int branch_key(sqlite3 *db, long long id, char **key);
/*
 * The key of branch b, the branch of row "<what> <id>" (b: its branch id,
 * 0 or ERR_NOTFOUND when the row has none, another negative an error):
 * ERR_NOTFOUND says "<what> <id>: no such <what>". *key: caller frees.
 */
int branch_key_of_row(sqlite3 *db, long long b, const char *what,
		      long long id, char **key);
/*
 * The keys as one line, "6.1, 6.12", in the config's order (configured:
 * only those; else those no longer configured last). *keys is NULL when
 * there are none; caller frees.
 */
int branch_keys_text(sqlite3 *db, int configured, char **keys);
/* The same as a JSON array of strings (a new reference), or NULL. */
json_t *branch_keys_json(sqlite3 *db);
/* The first configured branch's id, or ERR_NOTFOUND. */
long long branch_first(sqlite3 *db);
/*
 * The branches as /branches shows them, in the config's order: id, key,
 * git_branch, version, base_tag, head, configured. A new reference or NULL.
 */
json_t *branch_list_json(sqlite3 *db);

/*
 * Other owners' rows name a branch by its id; these replace the id with
 * what is shown. In rows (an object, or an array of objects) the integer
 * of field becomes the branch's key (BRANCH_KEY) or git branch name
 * (BRANCH_NAME), null when there is no such branch. 0 or negative.
 */
enum branch_show { BRANCH_KEY, BRANCH_NAME };
int branch_fill(sqlite3 *db, json_t *rows, const char *field,
		enum branch_show show);

/*
 * The branches as a JSON text for another owner's query to join with
 * instead of naming the table, [[id, key, name], ...]: bound to the '?'
 * of BRANCH_ROWS, which reads as a table (id, key, name). Caller frees.
 */
#define BRANCH_ROWS                                                            \
	"(SELECT value->>0 AS id, value->>1 AS key, value->>2 AS name"         \
	" FROM json_each(?))"
char *branch_rows(sqlite3 *db);

#endif
