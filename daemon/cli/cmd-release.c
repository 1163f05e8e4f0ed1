/* cmd-release.c: `stableq release`: the open rc's patches onto the branch, once its window is over. */
#include "cli.h"
#include "err.h"
#include "rc.h"

#include <stdio.h>

const struct option release_opts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

int cmd_release(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	struct rc_release r;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq release [--force]\n");
		return 2;
	}
	if (rc_release(&app->bc, o->v['f'] != NULL, &r) < 0) {
		fprintf(stderr, "stableq release: %s\n", err_msg());
		return 1;
	}
	printf("released %zu patch%s onto %s (%s-stable)", r.released,
	       r.released == 1 ? "" : "es", app->bc.cfg.branch,
	       app->bc.cfg.branch_key);
	if (r.version)
		printf(" as %s (tag v%s), the patches of %s", r.version,
		       r.version, r.rc);
	if (r.waiting)
		printf("; %zu patch%s queued after %s wait%s for %s", r.waiting,
		       r.waiting == 1 ? "" : "es", r.rc, r.waiting == 1 ? "s" : "",
		       r.next);
	putchar('\n');
	rc_release_free(&r);
	return 0;
}
