/* cli.h: the subcommands. Each is thin: it parses arguments and calls modules. */
#ifndef STABLEQ_CLI_H
#define STABLEQ_CLI_H

#include "app.h"

#include <getopt.h>
#include <jansson.h>

/*
 * A command's options as main.c parsed them with getopt_long(), from the
 * command's table (struct command) beside the global ones: the value of
 * each by its val ('r' for --reason), NULL when not given, "" for one that
 * takes none. The command's argv holds its name, then its operands.
 */
struct cli_opts {
	const char *v[128];
};

/*
 * One subcommand: argv[0] is its name, then its operands. Returns the
 * process exit status. opts: its long options (vals are chars), shortopts
 * its short ones (getopt syntax), each NULL when it has none; an unknown
 * option or one without its value is refused by main.c, naming it.
 */
struct command {
	const char *name;
	int (*run)(struct app *app, const struct cli_opts *o, int argc,
		   char **argv);
	int needs_db;
	const char *usage;
	const struct option *opts;
	const char *shortopts;
};

/* The commands' option tables, ending in a NULL name. */
extern const struct option queue_opts[], candidate_opts[], bisect_opts[],
	reason_opts[], flag_opts[], revert_opts[], rc_opts[], release_opts[], mail_opts[],
	token_opts[], kcidb_opts[], lava_opts[];

/*
 * What the commands share (cli.c). cli_parse_id: a positive decimal id, 0
 * or -1. cli_patch_arg: a command's one operand as a patch id, else 0.
 * cli_progress: a progress callback (ctx: the struct app) printing each
 * line (to stderr under --json). cli_on_terminal: long steps paint one
 * updating line when stderr is a terminal. cli_print_json: j indented with
 * sorted keys (1 when j is NULL). cli_fail: "stableq CMD: <err_msg()>",
 * returns 1, a command's exit status on an error.
 */
int cli_parse_id(const char *s, long long *id);
long long cli_patch_arg(int argc, char **argv);
/* flag's and override's operands: the id (0 after the usage) and --reason. */
long long cli_patch_reason(const struct cli_opts *o, int argc, char **argv,
			   const char **reason);
void cli_progress(const char *line, void *ctx);
void cli_on_terminal(void);
int cli_print_json(json_t *j);
int cli_fail(const char *cmd);


int cmd_import(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_check(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_queue(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_show(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_tree(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_candidate(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_bisect(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_flag(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_revert(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_override(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_release(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_mail(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_token(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_kcidb(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_lava_job(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_serve(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_config(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_branches(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_verify(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_intake(struct app *app, const struct cli_opts *o, int argc, char **argv);
int cmd_rc(struct app *app, const struct cli_opts *o, int argc, char **argv);

#endif
