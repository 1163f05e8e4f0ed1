/* kcidb.h: stableq's candidates, builds and tests in KernelCI's KCIDB format (schema v4). */
#ifndef STABLEQ_KCIDB_H
#define STABLEQ_KCIDB_H

#include "config.h"

#include <jansson.h>
#include <sqlite3.h>

/*
 * What a finished candidate becomes (config/kcidb-v4.schema.json is
 * the schema, written from the published KCIDB I/O schema v4.5):
 *
 *   checkout  "stableq:candidate-N": tree_name "stableq-6.1" (from the
 *             branch linux-6.1.y), the branch, git_commit_hash the commit
 *             the patches were applied to (the candidate's commit when the
 *             tree is not there to ask), patchset_hash the sha256 over the
 *             sha256 of each patch's diff, patchset_files the diffs
 *             (/api/v1/patches/{id}/diff), valid false for apply-failed.
 *   build     "stableq:build-B-candidate-N" (one build may serve several
 *             candidates), the config (tinyconfig + fragments, its hash),
 *             the log (/api/v1/builds/{id}/log) and its error excerpt.
 *   tests     "stableq:test-R" per stored result and run, paths as the test
 *             set names them (boot, dmesg-clean, kunit.<suite>.<case>,
 *             user-copy, ...), pass/fail/skip as PASS/FAIL/SKIP, flaky as
 *             FAIL (misc.stableq_result = "flaky"); a built candidate with
 *             no results gets one "boot" test: FAIL when the guest hung,
 *             MISS when the boot step could not run (harness failure).
 *
 * Every id is in the "stableq" origin. Text from patches (names, excerpts)
 * is passed as JSON strings; test paths keep only [.a-zA-Z0-9_-].
 */
#define KCIDB_ORIGIN "stableq"

/*
 * Normalizes a --since argument to the store's time form
 * ("YYYY-MM-DDTHH:MM:SSZ"): "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS][Z]" or
 * with a space for the T. *out: caller frees. ERR_INVALID naming the text.
 */
int kcidb_parse_since(const char *text, char **out);

/*
 * The candidates finished at or after since (NULL: all), as one KCIDB
 * object {version, checkouts, builds, tests}. base_url prefixes the links
 * ("http://127.0.0.1:8080"; NULL or "": no links). cfg gives the branch
 * (with several configured, its selected one's candidates only), the tree (for the base commit) and
 * the kernel config directory. A new
 * reference, or NULL with err_msg().
 */
json_t *kcidb_export(sqlite3 *db, const struct config *cfg, const char *since,
		     const char *base_url);

/* The base URL of links to this stableq: public_url, else http://LISTEN. */
char *kcidb_base_url(const struct config *cfg);

#endif
