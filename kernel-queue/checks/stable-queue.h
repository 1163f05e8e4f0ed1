/* stable-queue.h: a stable-queue checkout (releases/X.Y.N/, queue-X.Y/) as evidence: where an upstream commit was released or is queued. */
#ifndef STABLEQ_STABLE_QUEUE_H
#define STABLEQ_STABLE_QUEUE_H

#include <stddef.h>

/*
 * Looks through sq_dir/releases/<series>.N/ *.patch of a stable-queue
 * checkout (plain files) for a patch whose "commit X upstream" or
 * "[ Upstream commit X ]" line names upstream_sha (prefix match both ways).
 * 1 found (*where = "releases/6.1.5/foo.patch", caller frees; where may be
 * NULL), 0 none, negative on error (ERR_NOTFOUND: no releases/ directory).
 * The scan is cached per (sq_dir, series) in the process and redone when a
 * release directory changes.
 */
int stable_queue_find(const char *sq_dir, const char *series,
		      const char *upstream_sha, char **where);

/*
 * The patches of later releases (stable-queue.c's cache; release order is
 * each releases/<series>.N/series file's, names it lacks after it) that
 * name one of paths[0..npaths) in their diffs: those of release first
 * after the patch itself (after: its where, "releases/6.1.9/x.patch"; else
 * the one whose Subject: is subject; neither: none of release first), then
 * of each release up to last. At most max, newest first: the order in
 * which they come out of a tree of release last. *out (caller frees with
 * stable_queue_patches_free()) and *nout; returns *nout or negative
 * (ERR_NOTFOUND: no releases/ directory).
 */
struct stable_queue_patch {
	char *where;   /* "releases/6.1.12/foo.patch", under sq_dir */
	long sublevel; /* 12 */
};
int stable_queue_touching(const char *sq_dir, const char *series, long first,
			  long last, const char *after,
			  const char *subject, const char *const *paths,
			  size_t npaths, size_t max,
			  struct stable_queue_patch **out, size_t *nout);
void stable_queue_patches_free(struct stable_queue_patch *v, size_t n);

#endif
