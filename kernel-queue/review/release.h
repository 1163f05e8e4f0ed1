/* release.h: patches onto the stable branch as commits, with their trailers, sign-off and version bump. */
#ifndef STABLEQ_RELEASE_H
#define STABLEQ_RELEASE_H

#include "ctx.h"
#include "repo.h"

#include <jansson.h>
#include <stddef.h>

struct strbuf;

/*
 * Applies the queued patches to the branch as commits, one per patch, with
 * the patch's message (release_message()) and author (like git
 * quiltimport). The queue must have passed a candidate with exactly these
 * patches (ERR_CONFLICT otherwise, unless force). Sets *n to the number
 * released. This is the release of a branch without a review cycle; a
 * branch with one releases its rc (rc_release() in review/rc.h).
 */
int release_queue(struct branch_ctx *bc, int force, size_t *n);
/* Moves the branch to releases the store recorded before a crash. */
int release_resume(struct branch_ctx *bc);

/*
 * The commit message a release gives a patch (p: queue_patch_json(db, id,
 * 1), borrowed), as `b4 am -t -s` makes it of the patch's thread: its own
 * message; then the Reviewed-by, Acked-by and Tested-by trailers its
 * replies gave that it does not carry yet, in the order they came; then
 * "Signed-off-by: <signoff>" at the bottom (moved there when the message
 * had it already). signoff NULL or "": none. Appends to out.
 */
void release_message(struct strbuf *out, const json_t *p, const char *signoff);

/*
 * Applies the patches ids, in order, onto the commit parent as one commit
 * each (author and date the patch's, message messages[i], or the patch's
 * own when messages is NULL): (*commits)[i] gets each commit (caller frees
 * each and the array), tip the last (parent when n is 0). Only objects
 * are written: no ref moves. ERR_CONFLICT naming the patch that does not
 * apply.
 */
int release_commits(struct branch_ctx *bc, struct repo *r, const char *parent,
		    const long long *ids, size_t n, char *const *messages,
		    char ***commits, char tip[REPO_HEX_SIZE]);

/*
 * The version bump a stable release ends with: parent's Makefile with
 * SUBLEVEL the third number of version ("6.1.193") and EXTRAVERSION extra
 * ("-rc1", or "" for the release; added after SUBLEVEL when the Makefile
 * has none and extra is not ""), committed as "Linux 6.1.193-rc1" by who
 * ("Name <addr>"; NULL or "": mail_from). out gets the commit.
 */
int release_bump(struct branch_ctx *bc, struct repo *r, const char *parent,
		 const char *version, const char *extra, const char *who,
		 char out[REPO_HEX_SIZE]);

/*
 * Inside the caller's transaction: each patch released with its commit,
 * the dependencies linked again.
 */
int release_record(struct branch_ctx *bc, const long long *ids, size_t n,
		   char *const *commits);

/* "Name <addr>" (NULL, "": cfg mail_from) as its two parts; caller frees. */
int release_who(const struct branch_ctx *bc, const char *who, char **name,
		char **email);

#endif
