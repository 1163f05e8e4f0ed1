/* prefix.h: the queued prefix of a branch's queue, whose running tree the checks keep. */
#ifndef STABLEQ_PREFIX_H
#define STABLEQ_PREFIX_H

#include "repo.h"
#include "strbuf.h"

#include <sqlite3.h>

/*
 * The patches queued on a branch, in queue order, as the checks apply them
 * to the branch's tip: the running tree is a function of the tip and of
 * each one's id and diff, so their hash (prefix_key) names it. A check run
 * keeps the running tree it ends with (sql/015, the tree in the stable
 * tree's object database, repo_overlay_keep()); the next run whose patches
 * before the first one checked hash the same starts from that tree instead
 * of applying them all again: an import costs what it adds (issue 23).
 */
struct prefix {
	struct strbuf list; /* "id diffhash\n" per patch */
	size_t n;
};
#define PREFIX_INIT { STRBUF_INIT, 0 }

void prefix_add(struct prefix *p, long long id, const char *diff);
/* The key of p on tip: a hash of the tip and p's list. */
void prefix_key(const struct prefix *p, const char *tip,
		char key[REPO_HEX_SIZE]);
void prefix_release(struct prefix *p);

/* The tree kept for key on branch_id: 1 with tree, 0 none. */
int prefix_find(sqlite3 *db, long long branch_id, const char *key,
		char tree[REPO_HEX_SIZE]);
/* Remembers tree for key (n patches), replacing the branch's last one. */
int prefix_store(sqlite3 *db, long long branch_id, const char *key,
		 const char *tree, size_t n);

#endif
