/* cmd-revert.c: `stableq revert`: a broken patch taken out with its dependents, and confirmed. */
#include "candidate.h"
#include "cli.h"
#include "revert.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/* A revert's confirmation: what `stableq revert ID` runs at once and the
 * daemon runs as `revert --confirm ID` (revert_run()). */
static int confirm(struct app *app, long long rid)
{
	long long cid = 0;
	int ok = revert_confirm(&app->bc, rid, &cid, cli_progress, app);
	char *v;

	if (ok < 0)
		return cli_fail("revert");
	v = candidate_verdict(app->bc.db, cid);
	printf("confirmation candidate %lld: %s\n", cid, v ? v : "?");
	free(v);
	return ok ? 0 : 3;
}

const struct option revert_opts[] = {
	{ "reason", required_argument, NULL, 'r' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "plan", no_argument, NULL, 'p' },
	{ "no-confirm", no_argument, NULL, 'N' },
	{ "auto", no_argument, NULL, 'a' },
	{ "propose", no_argument, NULL, 'P' },
	{ "confirm", required_argument, NULL, 'C' },
	{ "resume", no_argument, NULL, 'R' },
	{ NULL, 0, NULL, 0 },
};

/*
 * stableq revert ID [--dry-run] [--reason TEXT] [--no-confirm]
 *       | --confirm REVERT-ID | --resume
 */
int cmd_revert(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long id = cli_patch_arg(argc, argv), rid = 0, cid = 0;
	const char *reason = o->v['r'] ? o->v['r'] : "";
	json_t *plan;
	size_t i;
	json_t *it;

	if (o->v['R'])
		return revert_resume(&app->bc) < 0 ? cli_fail("revert") : 0;
	if (o->v['C']) {
		if (argc > 1 || cli_parse_id(o->v['C'], &rid) < 0) {
			fprintf(stderr, "usage: stableq revert --confirm REVERT-ID\n");
			return 2;
		}
		return confirm(app, rid);
	}
	if (id && o->v['P']) {
		/* auto_revert = propose: the author hears first */
		return revert_propose(&app->bc, id) < 0 ? cli_fail("revert") : 0;
	}
	if (id && o->v['a']) {
		/* the daemon's own revert, within the guards */
		int r = revert_auto(&app->bc, id, &rid, &cid);
		if (r < 0)
			return cli_fail("revert");
		if (!r) {
			printf("patch %lld: not reverted automatically: the"
			       " plan waits for a maintainer\n",
			       id);
			return 0;
		}
		printf("revert %lld: done\n", rid);
		return cid ? confirm(app, rid) : 0;
	}
	if (!id) {
		fprintf(stderr, "usage: stableq revert ID [--dry-run|--plan]"
				" [--reason TEXT] [--no-confirm] | ID --auto|"
				"--propose | --confirm REVERT-ID | --resume\n");
		return 2;
	}
	if (o->v['p']) {
		/* auto_revert = plan: stored, waiting for a maintainer */
		if (revert_store_plan(&app->bc, id,
				      *reason ? reason
					      : "found broken; waiting"
						" for a maintainer") < 0)
			return cli_fail("revert");
		printf("patch %lld: revert plan stored, waiting for a"
		       " maintainer\n",
		       id);
		return 0;
	}
	plan = revert_plan(&app->bc, id);
	if (!plan)
		return cli_fail("revert");
	if (app->json && o->v['n']) {
		cli_print_json(plan);
		json_decref(plan);
		return 0;
	}
	printf("plan for patch %lld (newest first):\n", id);
	json_array_foreach(json_object_get(plan, "items"), i, it)
		printf("  %-6s patch %lld \"%s\" (%s): %s\n",
		       json_string_value(json_object_get(it, "action")),
		       (long long)json_integer_value(json_object_get(it, "patch_id")),
		       json_string_value(json_object_get(it, "subject")),
		       json_string_value(json_object_get(it, "state")),
		       json_string_value(json_object_get(it, "why")));
	json_decref(plan);
	if (o->v['n'])
		return 0;
	if (!*reason)
		reason = "reverted by a maintainer";
	cli_on_terminal();
	if (revert_run(&app->bc, id, reason, !o->v['N'], &rid, &cid) < 0)
		return cli_fail("revert");
	printf("revert %lld: done\n", rid);
	return cid ? confirm(app, rid) : 0;
}
