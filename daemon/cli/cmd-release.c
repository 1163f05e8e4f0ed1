/* cmd-release.c: `stableq release`: the passing queue onto the branch. */
#include "cli.h"
#include "release.h"

#include <stdio.h>

const struct option release_opts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

int cmd_release(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	size_t n = 0;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq release [--force]\n");
		return 2;
	}
	if (release_queue(&app->bc, o->v['f'] != NULL, &n) < 0)
		return cli_fail("release");
	printf("released %zu patch%s onto %s (%s-stable)\n", n,
	       n == 1 ? "" : "es", app->bc.cfg.branch, app->bc.cfg.branch_key);
	return 0;
}
