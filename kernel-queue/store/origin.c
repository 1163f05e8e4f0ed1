/* origin.c: list mail waits for a maintainer before it is built (intake_build). */
#include "origin.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "queue.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int origin_set_list(sqlite3 *db, long long patch_id, const char *sender)
{
	char *low = xstrdup(sender ? sender : "");
	int ret;

	for (char *p = low; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	ret = db_exec(db,
		      "INSERT OR IGNORE INTO patch_origins (patch_id, origin,"
		      " sender) VALUES (?, 'list', ?)",
		      "it", patch_id, low);
	free(low);
	return ret < 0 ? ret : 0;
}

/*
 * 1 when sender is in the intake_trusted list (addresses in any case, or
 * "@domain"; ","- or space-separated), else 0.
 */
static int origin_trusted(const char *trusted, const char *sender)
{
	size_t sl = sender ? strlen(sender) : 0;
	const char *p = trusted;

	if (!sl || !p)
		return 0;
	while (*p) {
		size_t n;
		p += strspn(p, ", \t\n");
		n = strcspn(p, ", \t\n");
		if (!n)
			break;
		if (*p == '@' ? n < sl && !strncasecmp(sender + sl - n, p, n)
			      : n == sl && !strncasecmp(sender, p, n))
			return 1;
		p += n;
	}
	return 0;
}

/* 1 when a maintainer's override let the patch in (override.c). */
static int overridden(sqlite3 *db, long long patch_id)
{
	char *human = NULL, *fixup = NULL;
	int yes;

	if (queue_verdict_latest(db, patch_id, "human", &human) < 0)
		err_clear();
	if (queue_verdict_latest(db, patch_id, "fixup", &fixup) < 0)
		err_clear();
	yes = (human && !strcmp(human, "accepted")) ||
	      (fixup && !strcmp(fixup, "overridden"));
	free(human);
	free(fixup);
	return yes;
}

int origin_waits(struct branch_ctx *bc, long long patch_id,
		 struct strbuf *why)
{
	char *sender = NULL;
	int ret;

	ret = db_query_text(bc->db, &sender,
			    "SELECT sender FROM patch_origins WHERE patch_id ="
			    " ? AND origin = 'list'",
			    "i", patch_id);
	if (ret == ERR_NOTFOUND) {
		err_clear();
		return 0; /* not list mail */
	}
	if (ret < 0)
		return ret;
	ret = 0;
	if (!strcmp(bc->cfg.intake_build, "trusted") &&
	    origin_trusted(bc->cfg.intake_trusted, sender))
		goto out;
	if (overridden(bc->db, patch_id))
		goto out;
	ret = 1;
	strbuf_addf(why,
		    "from the list (%s): not built before a maintainer queues"
		    " it (intake_build = %s%s): stableq override %lld"
		    " --reason ...",
		    sender && *sender ? sender : "no sender",
		    bc->cfg.intake_build,
		    strcmp(bc->cfg.intake_build, "trusted")
			    ? ""
			    : ", the sender is not in intake_trusted",
		    patch_id);
out:
	free(sender);
	return ret;
}
