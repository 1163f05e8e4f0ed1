/* bisect-report.c: stableq's own confirmed culprit, told to the regressions list as regzbot reads it. */
#include "bisect.h"
#include "compose.h"
#include "db.h"
#include "err.h"
#include "flag.h"
#include "log.h"
#include "queue.h"
#include "strbuf.h"

#include <stdlib.h>

/*
 * stableq's own confirmed culprit, told to the regressions list as regzbot
 * reads it: only when ev names a bisection that found this patch and
 * confirmed it both ways (bisect_found()), regressions_list is set and the
 * patch names its upstream commit. Inside the caller's transaction.
 */
int bisect_report_culprit(struct branch_ctx *bc, long long id,
			  const char *reason, const struct evidence *ev)
{
	json_t *b, *p;
	long long culprit, mail;
	const char *upstream;
	int ret;

	if (!ev || !ev->bisection_id || !bc->cfg.regressions_list ||
	    !*bc->cfg.regressions_list)
		return 0;
	if ((ret = bisect_found(bc->db, ev->bisection_id)) <= 0)
		return ret;
	if (!(b = bisect_json(bc->db, ev->bisection_id)))
		return err_last() < 0 ? err_last() : ERR_IO;
	culprit = json_integer_value(json_object_get(b, "culprit_patch_id"));
	json_decref(b);
	if (culprit != id)
		return 0;
	if (!(p = queue_patch_brief_json(bc->db, id)))
		return err_last() < 0 ? err_last() : ERR_IO;
	upstream = json_string_value(json_object_get(p, "upstream"));
	if (!upstream || !*upstream) {
		log_info("patch %lld: no upstream commit to name: the"
			 " regressions list is not told",
			 id);
		json_decref(p);
		return 0;
	}
	struct strbuf why = STRBUF_INIT;
	strbuf_addstr(&why, reason);
	if (ev->test)
		strbuf_addf(&why, "\nFailing test: %s", ev->test);
	strbuf_addf(&why, "\nBisection: %lld, confirmed both ways (the queue"
			  " up to this patch fails, the queue before it passes)",
		    ev->bisection_id);
	mail = compose_regzbot(
		bc->db, &bc->cfg,
		&(struct regzbot_report){
			.to = bc->cfg.regressions_list,
			.patch_id = id,
			.subject = json_string_value(json_object_get(p, "subject")),
			.introduced = upstream,
			.stable_commit = json_string_value(
				json_object_get(p, "released_commit")),
			.branch = bc->cfg.branch_key,
			.why = why.buf,
		},
		NULL);
	strbuf_release(&why);
	json_decref(p);
	if (mail > 0)
		log_info("patch %lld: a report for regzbot to %s (mail %lld)",
			 id, bc->cfg.regressions_list, mail);
	return mail < 0 ? (int)mail : 0;
}
