/* cmd-verify.c: `stableq verify`: a fix's own regression test decides whether its bug is in the branch. */
#include "cli.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>

/* stableq verify ID: the fix's Regression-test decides (verify.h). */
int cmd_verify(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long id = 0;
	char *line;

	if (argc != 2 || cli_parse_id(argv[1], &id) < 0) {
		fprintf(stderr, "usage: stableq verify PATCH-ID\n");
		return 2;
	}
	cli_on_terminal();
	if (verify_fix(&app->bc, id, cli_progress, app) < 0)
		return cli_fail("verify");
	line = verify_summary(app->bc.db, id);
	printf("%s\n", line ? line : "?");
	free(line);
	return 0;
}
