/* changelog.h: Debian's changelog of the tree's source package, indexed as evidence of what each X.Y.N release brought. */
#ifndef STABLEQ_CHANGELOG_H
#define STABLEQ_CHANGELOG_H

#include "strbuf.h"

#include <sqlite3.h>
#include <stddef.h>

/*
 * Debian's changelog.Debian.gz of linux-source-X.Y lists, under each
 * "  * New upstream stable update:" item, the kernel.org ChangeLog-X.Y.N
 * URLs and below each the subject of every upstream stable backport of
 * that release:
 *
 *   linux (6.1.192-1) bookworm-security; urgency=high
 *
 *     * New upstream stable update:
 *       https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.191
 *       - io-wq: order the exit bit against worker creation task work
 *       - [arm*] pinctrl: freescale: Fix a memory out of bounds when num_configs is
 *         1
 *       - apparmor: fix out-of-bounds write when null terminating a label vec
 *         (CVE-2026-89761)
 *
 * A tree made from that tarball holds every listed backport of the releases
 * up to its own version: a Fixes: target whose subject is listed is in the
 * tree, and a patch whose own subject is listed was already released.
 */

/*
 * One listed backport: series "6.1", sublevel 191, the subject with its
 * wrapped lines joined, white space collapsed, without the "[arch] "
 * prefix Debian adds or the trailing "(CVE-...)", "(Closes: #...)",
 * "(regression in X)" notes. A revert is listed in one form, 'Revert "x"',
 * whatever is written around it ('scsi: Revert "scsi: x" (CVE-...)',
 * 'Revert "x" on v6.6 and older'); x may quote ('Revert "Revert "y""').
 * Strings are borrowed for the call. A nonzero return stops the parse and
 * is returned.
 */
typedef int changelog_entry_fn(void *arg, const char *series, long sublevel,
			       const char *subject);

/*
 * Parses changelog text (already decompressed). Items outside "New upstream
 * stable update" (Debian's own patches, the -rt updates) are not upstream
 * stable backports and are left out. Returns the number of entries, or
 * fn's nonzero return. Text is hostile: lines of any length, any bytes.
 */
long changelog_parse(const char *text, size_t len, changelog_entry_fn *fn,
		     void *arg);

/*
 * The form a subject is compared in: white space runs become one space,
 * leading and trailing white space and surrounding quotes go. Appends to
 * out.
 */
void changelog_subject_key(struct strbuf *out, const char *subject);

/*
 * Makes the store's index of the changelog at path current: the file
 * (gzip or plain) is read only when it was never indexed or its size or
 * mtime changed since; then its entries replace the old ones in one
 * transaction (must be called outside one). *entries (may be NULL) gets
 * the number indexed; *rebuilt (may be NULL) is set when the file was read
 * now. ERR_NOTFOUND when the file is not there, ERR_INVALID when it is
 * not a changelog (no entry at all), ERR_IO on a read error.
 */
int changelog_index(sqlite3 *db, const char *path, long *entries,
		    int *rebuilt);

/*
 * Looks a subject up among the indexed entries of path for series with a
 * sublevel <= max_sublevel (the tree's own version): 1 found (*sublevel the
 * first release that lists it), 0 not listed, negative on a store error.
 * A release that lists `Revert "<subject>"` after it takes it out again
 * (0, *reverted the reverting release when reverted is not NULL), unless
 * a later one lists it again or the revert of that revert. The subject is
 * looked up in the same form as the entries (a revert's one form).
 */
int changelog_find(sqlite3 *db, const char *path, const char *series,
		   long max_sublevel, const char *subject, long *sublevel,
		   long *reverted);

/*
 * changelog_find() with all it learnt: the first and the last release
 * listing the subject (a subject can be listed twice: a second backport
 * of the same name), and the release listing its revert (-1: none; a
 * release listing it again after the revert brought it back). Subjects
 * are also looked up as Debian rewrites an architecture in them
 * (changelog_subject_unarched()). Returns as changelog_find().
 */
struct changelog_hit {
	long first, last, reverted;
};
int changelog_lookup(sqlite3 *db, const char *path, const char *series,
		     long max_sublevel, const char *subject,
		     struct changelog_hit *hit);

/*
 * Debian's changelog of a package keeps the sections of the series before
 * it (linux 6.1's lists 5.10's releases too): what an older series
 * released is in every later tree. 1 with older ("5.10") and *sublevel,
 * the oldest series listing subject; 0 none; negative on a store error.
 */
int changelog_find_older(sqlite3 *db, const char *path, const char *series,
			 const char *subject, char older[16], long *sublevel);

/*
 * "x86/bhi: x" as Debian lists it once its "[x86] " is off ("bhi: x"),
 * "arm64: x" as "x", appended to out: 1, or 0 when key starts with no
 * architecture.
 */
int changelog_subject_unarched(struct strbuf *out, const char *key);

#endif
