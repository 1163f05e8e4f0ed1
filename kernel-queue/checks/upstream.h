/* upstream.h: the configured upstream clone as a commit-to-release index in the store: follow-ups, reverts and soak of a patch. */
#ifndef STABLEQ_UPSTREAM_H
#define STABLEQ_UPSTREAM_H

#include "strbuf.h"

#include <sqlite3.h>

struct repo;

/*
 * The index (sql/011) holds, per clone path, every commit reachable from
 * a version tag or HEAD: its subject, the first version tag that contains
 * it (version order: v6.8-rc1 before v6.8 before v6.8.1), the upstream
 * commit it names when it is a stable backport ("commit X upstream."), and
 * the commits its Fixes: tags and "This reverts commit X." lines name. It
 * is the kernel CVE team's question ("is this fix in release X? what
 * fixes it?") asked of commits, never of subjects.
 *
 * upstream_index_update: builds it the first time, then only adds the tags
 * and commits new since (the last HEAD and the tags indexed are kept), in
 * one transaction of its own (call it outside one). A commit first seen
 * untagged gets its release when a tag comes to contain it. *added (may be
 * NULL) gets the commits added now. ERR_* from the walk or the store.
 */
int upstream_index_update(sqlite3 *db, struct repo *up, const char *path,
			  long *added);

/*
 * The upstream commits whose Fixes: names sha (prefix match both ways, 12
 * digits indexed), newest release last. For each, fn gets its SHA, subject
 * and release (NULL when untagged). Returns how many, or negative.
 */
typedef int upstream_commit_fn(void *ctx, const char *sha, const char *subject,
			       const char *release);
int upstream_fixes_of(sqlite3 *db, const char *path, const char *sha,
		      upstream_commit_fn *fn, void *ctx);
/* The same for the commits that revert sha. */
int upstream_reverts_of(sqlite3 *db, const char *path, const char *sha,
			upstream_commit_fn *fn, void *ctx);

/*
 * The first release of sha (or of the upstream commit it is a backport
 * of): 1 with tag ("v6.9", caller frees) and *released_at (epoch); 0 when
 * sha is indexed but untagged (*tag NULL); ERR_NOTFOUND when the index does
 * not know sha.
 */
int upstream_release_of(sqlite3 *db, const char *path, const char *sha,
			char **tag, long long *released_at);

/*
 * Is a commit first released in tag ("v6.0", "v6.1-rc3", "v6.1.5") in a
 * tree of version ("6.1.10")? 1 when tag is an earlier series, the
 * series' own mainline release, or one of its stable releases up to
 * version; else 0 (also when either is no version).
 */
int upstream_release_in(const char *tag, const char *version);

/*
 * A stable backport of sha (an indexed commit whose "commit X upstream."
 * names it) released in version's series up to version (a linux-stable
 * clone's v6.1.5): 1 with its tag (caller frees), 0 none, negative on a
 * store error.
 */
int upstream_backport_in(sqlite3 *db, const char *path, const char *sha,
			 const char *version, char **tag);

#endif
