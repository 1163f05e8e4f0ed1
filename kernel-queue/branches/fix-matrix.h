/* fix-matrix.h: the fix x branch matrix: each fix, and its patch on every branch. */
#ifndef STABLEQ_FIX_MATRIX_H
#define STABLEQ_FIX_MATRIX_H

#include <jansson.h>
#include <sqlite3.h>

/*
 * A page of the fixes (limit from offset; branch_key "" for every
 * branch's, else only the fixes queued for that one), as {total, limit,
 * offset, branches: [key...], fixes: [{fix, upstream, subject, patch_id,
 * branches: {key: null or {id, state, state_reason, subject, checks,
 * verdicts, candidate}}}]}: one fix a row (keyed by its upstream SHA, else
 * its patch-id), a cell per branch, with the patch's latest verdicts and
 * the newest candidate it was in. GET /fixes answers it. A new reference,
 * or NULL (err_msg()).
 */
json_t *fix_matrix_json(sqlite3 *db, const char *branch_key, long long limit,
			long long offset);

#endif
