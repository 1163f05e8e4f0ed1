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

#endif
