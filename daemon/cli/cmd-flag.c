/* cmd-flag.c: `stableq flag`: a maintainer says that a patch is broken. */
#include "bisect.h"
#include "cli.h"
#include "revert.h"

#include <jansson.h>
#include <stdio.h>

const struct option flag_opts[] = {
	{ "reason", required_argument, NULL, 'r' },
	{ "bisection", required_argument, NULL, 'b' },
	{ NULL, 0, NULL, 0 },
};

/* The flag's evidence: the bisection that named patch id (--bisection). */
static int bisection_arg(struct app *app, const char *arg, long long id,
			 struct evidence *ev)
{
	json_t *b;
	long long culprit;

	if (!arg)
		return 0;
	if (cli_parse_id(arg, &ev->bisection_id) < 0) {
		fprintf(stderr, "stableq flag: --bisection '%s' is not an id\n",
			arg);
		return -1;
	}
	if (!(b = bisect_json(app->bc.db, ev->bisection_id))) {
		cli_fail("flag");
		return -1;
	}
	culprit = json_integer_value(json_object_get(b, "culprit_patch_id"));
	json_decref(b);
	if (culprit != id) {
		fprintf(stderr, "stableq flag: bisection %lld did not name patch"
				" %lld\n",
			ev->bisection_id, id);
		return -1;
	}
	return 0;
}

/* A maintainer's flag: trusted (revert.h); --bisection cites its evidence. */
int cmd_flag(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	const char *reason;
	long long id = cli_patch_reason(o, argc, argv, &reason);
	struct evidence ev = { 0 };

	if (!id)
		return 2;
	if (bisection_arg(app, o->v['b'], id, &ev) < 0)
		return 1;
	if (flag_patch(&app->bc, id, reason, &ev) < 0)
		return cli_fail("flag");
	printf("patch %lld flagged broken: %s\n", id, reason);
	return 0;
}
