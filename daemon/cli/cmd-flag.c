/* cmd-flag.c: `stableq flag`: a maintainer says that a patch is broken. */
#include "cli.h"
#include "flag.h"

#include <stdio.h>

const struct option reason_opts[] = {
	{ "reason", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 },
};

int cmd_flag(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	const char *reason;
	long long id = cli_patch_reason(o, argc, argv, &reason);

	if (!id)
		return 2;
	if (flag_patch(&app->bc, id, reason, NULL) < 0)
		return cli_fail("flag");
	printf("patch %lld flagged broken: %s\n", id, reason);
	return 0;
}
