/* cli.h: the subcommands. Each is thin: it parses arguments and calls modules. */
#ifndef STABLEQ_CLI_H
#define STABLEQ_CLI_H

#include "app.h"

/* One subcommand: argv[0] is its name. Returns the process exit status. */
struct command {
	const char *name;
	int (*run)(struct app *app, int argc, char **argv);
	int needs_db;
	const char *usage;
};

/* The table, terminated by a NULL name (main.c). */
extern const struct command commands[];

int cmd_import(struct app *app, int argc, char **argv);
int cmd_check(struct app *app, int argc, char **argv);
int cmd_queue(struct app *app, int argc, char **argv);
int cmd_show(struct app *app, int argc, char **argv);
int cmd_tree(struct app *app, int argc, char **argv);
int cmd_candidate(struct app *app, int argc, char **argv);
int cmd_bisect(struct app *app, int argc, char **argv);
int cmd_flag(struct app *app, int argc, char **argv);
int cmd_revert(struct app *app, int argc, char **argv);
int cmd_override(struct app *app, int argc, char **argv);
int cmd_release(struct app *app, int argc, char **argv);
int cmd_mail(struct app *app, int argc, char **argv);
int cmd_token(struct app *app, int argc, char **argv);
int cmd_kcidb(struct app *app, int argc, char **argv);
int cmd_lava_job(struct app *app, int argc, char **argv);
int cmd_serve(struct app *app, int argc, char **argv);
int cmd_config(struct app *app, int argc, char **argv);
int cmd_branches(struct app *app, int argc, char **argv);
int cmd_verify(struct app *app, int argc, char **argv);
int cmd_intake(struct app *app, int argc, char **argv);
int cmd_rc(struct app *app, int argc, char **argv);

#endif
