/* cmd-pending.c: commands whose modules are still being written answer so. */
#include "cli.h"

#include <stdio.h>

#define PENDING(fn)                                                            \
	__attribute__((weak)) int fn(struct app *app, int argc, char **argv)   \
	{                                                                      \
		fprintf(stderr, "stableq %s: not available in this build\n",  \
			argv[0]);                                              \
		return 2;                                                      \
	}

PENDING(cmd_import)
PENDING(cmd_check)
PENDING(cmd_queue)
PENDING(cmd_show)
PENDING(cmd_tree)
PENDING(cmd_candidate)
PENDING(cmd_bisect)
PENDING(cmd_flag)
PENDING(cmd_revert)
PENDING(cmd_override)
PENDING(cmd_release)
PENDING(cmd_mail)
PENDING(cmd_token)
PENDING(cmd_serve)
