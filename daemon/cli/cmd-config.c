/* cmd-config.c: `stableq config`: the settings in force, one `key = value` a line. */
#include "cli.h"

#include <stdio.h>

static void emit(const char *line)
{
	puts(line);
}

int cmd_config(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	config_dump(&app->bc.cfg, emit);
	return 0;
}
