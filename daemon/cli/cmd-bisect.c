/* cmd-bisect.c: `stableq bisect`: the first failing patch of a failing candidate. */
#include "bisect.h"
#include "candidate.h"
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

const struct option bisect_opts[] = {
	{ "steps", required_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 },
};

int cmd_bisect(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long cid = 0, bid = 0, steps = -1;
	json_t *j;

	if (argc > 2 || (argc == 2 && cli_parse_id(argv[1], &cid) < 0) ||
	    (o->v['n'] && cli_parse_id(o->v['n'], &steps) < 0)) {
		fprintf(stderr, "usage: stableq bisect [CANDIDATE-ID]"
				" [--steps N] [--json]\n");
		return 2;
	}
	if (!cid &&
	    candidate_last_failed(app->bc.db, app->bc.branch_id, &cid) < 0) {
		fprintf(stderr, "stableq bisect: no failing candidate\n");
		return 1;
	}
	cli_on_terminal();
	if (candidate_follow(&app->bc, cid) < 0 ||
	    bisect_run(&app->bc, cid,
		       steps > 0 && steps < 1000 ? (int)steps : -1, &bid,
		       cli_progress, app) < 0)
		return cli_fail("bisect");
	j = bisect_json(app->bc.db, bid);
	if (app->json) {
		cli_print_json(j);
	} else {
		char *line = bisect_summary(app->bc.db, bid);
		printf("%s\n", line);
		free(line);
		if (json_string_value(json_object_get(j, "detail")))
			printf("  %s\n",
			       json_string_value(json_object_get(j, "detail")));
	}
	json_decref(j);
	return 0;
}
