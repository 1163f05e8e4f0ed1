/* cmd-rc.c: `stableq rc`: the -rc review series of the branch, into the outbox. */
#include "cli.h"
#include "err.h"
#include "rc.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

const struct option rc_opts[] = {
	{ "show", no_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 },
};

int cmd_rc(struct app *app, const struct cli_opts *opts, int argc, char **argv)
{
	long long id = 0;
	json_t *o;
	int show = opts->v['s'] != NULL;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq rc [--show] [--json]\n");
		return 2;
	}
	if (!show && rc_prepare(&app->bc, &id) < 0) {
		fprintf(stderr, "stableq: rc: %s\n", err_msg());
		return 1;
	}
	if (!(o = rc_json(app->bc.db, app->bc.branch_id, id))) {
		fprintf(stderr, "stableq: rc: %s\n", err_msg());
		return 1;
	}
	if (app->json) {
		json_dumpf(o, stdout, JSON_SORT_KEYS);
		putchar('\n');
	} else {
		json_t *p;
		size_t i;
		printf("rc %lld: %s (%s), %zu patches, %s, %zu tested\n",
		       (long long)json_integer_value(json_object_get(o, "id")),
		       json_string_value(json_object_get(o, "version")),
		       json_string_value(json_object_get(o, "state")),
		       json_array_size(json_object_get(o, "patches")),
		       json_is_true(json_object_get(o, "window_open"))
			       ? "window open"
			       : "window closed",
		       json_array_size(json_object_get(o, "tested")));
		json_array_foreach(json_object_get(o, "patches"), i, p)
			printf("  %03lld  %5lld  %-8s  %s\n",
			       (long long)json_integer_value(json_object_get(p, "pos")),
			       (long long)json_integer_value(json_object_get(p, "id")),
			       json_string_value(json_object_get(p, "state")),
			       json_string_value(json_object_get(p, "subject")));
	}
	json_decref(o);
	return 0;
}
