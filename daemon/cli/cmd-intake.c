/* cmd-intake.c: `stableq intake`: one pass over the configured mail sources. */
#include "cli.h"
#include "err.h"
#include "mailin.h"

#include <jansson.h>
#include <stdio.h>

int cmd_intake(struct app *app, const struct cli_opts *opts, int argc, char **argv)
{
	struct mailin_result r;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq intake [--json]\n");
		return 2;
	}
	if (!*app->bc.cfg.intake_maildir && !*app->bc.cfg.intake_inbox) {
		fprintf(stderr, "stableq: intake: no mail source configured"
				" (intake_maildir, intake_inbox)\n");
		return 1;
	}
	if (mailin_run(&app->bc, &r) < 0) {
		fprintf(stderr, "stableq: intake: %s\n", err_msg());
		return 1;
	}
	if (app->json) {
		json_t *o = json_pack(
			"{sIsIsIsIsIsIsIsIsIsIsIsI}", "read", (json_int_t)r.read,
			"duplicates", (json_int_t)r.duplicates, "series",
			(json_int_t)r.series, "patches", (json_int_t)r.patches,
			"superseded", (json_int_t)r.superseded, "replies",
			(json_int_t)r.replies, "held", (json_int_t)r.held,
			"trailers", (json_int_t)r.trailers, "stopped",
			(json_int_t)r.stopped, "tested",
			(json_int_t)r.tested, "ignored",
			(json_int_t)r.ignored, "invalid", (json_int_t)r.invalid,
			"ok", (json_int_t)1);
		json_object_set_new(o, "incomplete", json_integer((json_int_t)r.incomplete));
		json_object_set_new(o, "completed", json_integer((json_int_t)r.completed));
		json_object_set_new(o, "flagged", json_integer((json_int_t)r.flagged));
		json_dumpf(o, stdout, JSON_SORT_KEYS);
		putchar('\n');
		json_decref(o);
		return 0;
	}
	printf("intake: %zu messages read (%zu seen before): %zu patches in %zu"
	       " series, %zu superseded; %zu replies: %zu held, %zu trailers,"
	       " %zu tested, %zu reverts stopped; %zu ignored, %zu invalid;"
	       " %zu series incomplete, %zu completed; %zu released patches"
	       " flagged\n",
	       r.read, r.duplicates, r.patches, r.series, r.superseded,
	       r.replies, r.held, r.trailers, r.tested, r.stopped, r.ignored,
	       r.invalid, r.incomplete, r.completed, r.flagged);
	return 0;
}
