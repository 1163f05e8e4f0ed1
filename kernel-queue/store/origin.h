/* origin.h: where a patch came from, and whether that lets it be built before a maintainer queues it (intake_build). */
#ifndef STABLEQ_ORIGIN_H
#define STABLEQ_ORIGIN_H

#include <sqlite3.h>

/*
 * Building a patch runs its code (in the sandbox, sandbox.h, but still),
 * so what anyone can send to the list is not built on its own say-so.
 * A patch the mail intake imports is marked as list mail with its From:
 * address (origin_set_list(), in the import's transaction: a patch is
 * never stored unmarked). Its checks then leave it `checked`, waiting,
 * instead of `queued` (origin_waits()), until a maintainer queues it
 * (`stableq override`), unless `intake_build = trusted` and its sender is
 * in intake_trusted. Every build takes queued patches only, so a waiting
 * patch is built by nothing: no queue candidate, no verify, no bisection.
 * Quilt imports and API patches (a token's) carry no origin: they are
 * queued by their checks as before.
 */

/* Marks patch_id as list mail from sender (NULL: unknown). 0 or negative. */
int origin_set_list(sqlite3 *db, long long patch_id, const char *sender);


struct branch_ctx;
struct strbuf;
/*
 * 1 when the patch waits for a maintainer before it may be queued: list
 * mail, intake_build = none (or its sender not trusted), and no
 * maintainer's override on it; why gets the reason, naming the command.
 * 0 when it may be queued; negative on a database error.
 */
int origin_waits(struct branch_ctx *bc, long long patch_id,
		 struct strbuf *why);

#endif
