/* ctx.h: a branch context: one branch chosen in the config, store, actor. */
#ifndef STABLEQ_CTX_H
#define STABLEQ_CTX_H

#include "config.h"

#include <sqlite3.h>

/*
 * What the domain (kernel-queue/ and the layers below daemon/) works on:
 * no output mode, no verbosity. Its variable is called bc throughout, as
 * ctx is taken by callbacks' opaque pointers. cfg selects one branch;
 * acting on another branch takes a context of its own (branch_ctx_for).
 */
struct branch_ctx {
	struct config cfg;
	sqlite3 *db; /* owned; opened by branch_ctx_open_db() */
	long long branch_id; /* branches.id of cfg's selected branch */
	int branch_given; /* --branch named it: acting on another
			   * branch's patch is refused, not followed */
	const char *actor; /* "user:NAME" (the CLI), "daemon", "token:NAME",
			    * "bisection:ID" (borrowed) */
	const char *self; /* path of the stableq binary, for child steps */
};

/*
 * Opens cfg.db (creating var/ if needed), writes the configured branches
 * into its branches table (key, git branch name, order:
 * branch_ctx_sync_branches) and sets branch_id to the selected one's row.
 */
int branch_ctx_open_db(struct branch_ctx *bc);
/* The store's id of configured branch key, or negative (ERR_NOTFOUND). */
int branch_ctx_branch_id(struct branch_ctx *bc, const char *key, long long *id);
/*
 * Records the version branch key's tree holds ("6.1.10"; base_tag
 * "v6.1.10"). 0 or negative.
 */
int branch_ctx_set_version(sqlite3 *db, const char *key, const char *version);
/*
 * Selects branch key (NULL: the first) in bc's cfg and branch_id: bc is
 * rewritten in place, so only its owner should call this (the daemon
 * between steps, a command on its own context). To act on another branch
 * for a while, make a context of its own with branch_ctx_for().
 */
int branch_ctx_select(struct branch_ctx *bc, const char *key);
/*
 * *out becomes a shallow copy of from with branch key (NULL: the first)
 * selected: the same store, actor and config (the copy borrows them all;
 * nothing to free, and from must outlive out). branch_given is kept.
 * from is not changed. 0, or negative for an unknown key (out then
 * unusable).
 */
int branch_ctx_for(const struct branch_ctx *from, const char *key,
		   struct branch_ctx *out);
/*
 * What acts on a row (a patch, a candidate: "<what> <id>") acts on its
 * branch, whose key get() finds: selects that branch in bc (its tree,
 * queue directory, ...) unless bc->branch_given named another (then an
 * error naming both). Negative for an unknown id. This rewrites bc in
 * place (branch_ctx_select()): only a context's owner calls it, a command
 * on the context it made for itself; code that is handed a context and
 * acts on another branch makes its own with branch_ctx_for().
 */
int branch_ctx_follow(struct branch_ctx *bc, const char *what, long long id,
		      int (*get)(sqlite3 *db, long long id, char **key));

#endif
