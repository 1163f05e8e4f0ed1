/* cmd-override.c: `stableq override`: a held fix-up (or a patch waiting for a human) queued. */
#include "cli.h"
#include "revert.h"

#include <stdio.h>

const struct option reason_opts[] = {
	{ "reason", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 },
};

int cmd_override(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	const char *reason;
	long long id = cli_patch_reason(o, argc, argv, &reason);

	if (!id)
		return 2;
	if (override_patch(&app->bc, id, reason) < 0)
		return cli_fail("override");
	printf("patch %lld queued by override: %s\n", id, reason);
	return 0;
}
