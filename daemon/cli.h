/* cli.h: the subcommands. Each is thin: it parses arguments and calls modules. */
#ifndef STABLEQ_CLI_H
#define STABLEQ_CLI_H

#include "app.h"

int cmd_import(struct app *app, int argc, char **argv);
int cmd_check(struct app *app, int argc, char **argv);
int cmd_queue(struct app *app, int argc, char **argv);
int cmd_show(struct app *app, int argc, char **argv);
int cmd_config(struct app *app, int argc, char **argv);

#endif
