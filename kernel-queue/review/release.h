/* release.h: the passing queue onto the stable branch. */
#ifndef STABLEQ_RELEASE_H
#define STABLEQ_RELEASE_H

#include "ctx.h"

#include <stddef.h>

/*
 * Applies the queued patches to the branch as commits, one per patch, with
 * the patch's message and author (like git quiltimport). The queue must
 * have passed a candidate with exactly these patches (ERR_CONFLICT
 * otherwise, unless force). Sets *n to the number released.
 */
int release_queue(struct branch_ctx *bc, int force, size_t *n);

#endif
