/* rc-int.h: what the rc modules share (rc.c, rc-text.c, rc-release.c, rc-reply.c, rc-tester.c); not for other callers. */
#ifndef STABLEQ_RC_INT_H
#define STABLEQ_RC_INT_H

#include "rc.h"

#include <jansson.h>
#include <time.h>

struct branch_ctx;
struct strbuf;

/*
 * The branch's rc lock (var_dir/rc-KEY.lock, flock): `stableq rc`, POST
 * /rc and `stableq release` of a branch run one at a time, across
 * processes and threads. Blocks; returns the fd (rc_unlock() it) or
 * negative.
 */
int rc_lock(struct branch_ctx *bc);
void rc_unlock(int fd);

/* The open rc of branch: its id, 0 when none, negative on error. */
long long rc_open_id(sqlite3 *db, long long branch);

/*
 * The first report of rc that holds its release now (a NAK, a failing
 * report without a Tested-by, newer than the override): 1 with *why
 * ("a NAK from Nina <n@x> (Message-Id <m>)", caller frees), 0 none.
 */
int rc_first_hold(sqlite3 *db, long long rc, char **why);

/* What the cover says (rc-text.c). Strings borrowed. */
struct rc_text {
	const char *key;        /* "6.1" */
	const char *base;       /* "6.1.193" */
	const char *version;    /* "6.1.193-rc1" */
	time_t deadline;
	const json_t *patches;  /* [{subject, author_name, author_email}] in order */
	const char *patch_url;  /* the patch file's URL, or NULL */
	const char *git_url;    /* rc_git_url, or NULL */
	const char *tag;        /* v6.1.193-rc1 */
	const char *signer_name, *signer_email; /* the version bump's author */
	const char *diffstat;   /* git diff --stat of the rc */
};
void rc_cover_body(struct strbuf *b, const struct rc_text *t);
/*
 * One patch mail's body: the stable review note, the in-body From:, the
 * message without its subject, "---", its diffstat, the diff.
 */
void rc_patch_body(struct strbuf *b, const char *key, const json_t *p,
		   const char *diffstat);
/*
 * The numbers of an rc of n patches as stable maintainers write them: as
 * wide as n, at least two digits (00/42, 000/123). rc_subject: the
 * cover's "[PATCH 6.1 00/N] 6.1.193-rc1 review" (pos 0) or a patch's
 * "[PATCH 6.1 NN/N] subject". Caller frees.
 */
char *rc_subject(const char *key, size_t pos, size_t n, const char *text);
/* X-KernelTest-Deadline's form: 2025-01-08T15:11+00:00. */
void rc_deadline_header(struct strbuf *b, time_t deadline);

#endif
