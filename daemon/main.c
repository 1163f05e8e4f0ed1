/* main.c: `stableq COMMAND`: global options, then the command table. */
#include "app.h"
#include "cli.h"
#include "db.h"
#include "err.h"
#include "guard.h"
#include "log.h"
#include "spawn.h"

#include <getopt.h>

#include <signal.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct command commands[] = {
	{ "import", cmd_import, 1, "import PATH...            (quilt dir, mbox or patch file)" },
	{ "intake", cmd_intake, 1, "intake [--json]           (mail from intake_maildir, intake_inbox: patches, replies)" },
	{ "check", cmd_check, 1, "check [ID...]" },
	{ "queue", cmd_queue, 1, "queue [--json] [--state S]", queue_opts },
	{ "show", cmd_show, 1, "show [--json] ID" },
	{ "tree", cmd_tree, 0, "tree init|status|checkout REV   (the branch's stable tree from its linux-source tarball)" },
	{ "candidate", cmd_candidate, 1, "candidate [--upto ID] [--json]", candidate_opts },
	{ "verify", cmd_verify, 1, "verify PATCH-ID           (does the fix's Regression-test fail without it?)" },
	{ "bisect", cmd_bisect, 1, "bisect [CANDIDATE-ID] [--steps N] [--json]", bisect_opts },
	{ "flag", cmd_flag, 1, "flag ID --reason TEXT [--bisection BISECTION-ID]", flag_opts },
	{ "revert", cmd_revert, 1, "revert ID [--dry-run|--plan] [--reason TEXT] [--no-confirm] | ID --auto|--propose | --confirm REVERT-ID | --resume", revert_opts },
	{ "override", cmd_override, 1, "override ID --reason TEXT", reason_opts },
	{ "rc", cmd_rc, 1, "rc [--show] [--json] | override [ID] --reason TEXT | report [ID]   (the -rc review series to rc_list; --show: the newest)", rc_opts },
	{ "release", cmd_release, 1, "release [--force]         (the open rc's patches, once its window is over)", release_opts },
	{ "mail", cmd_mail, 1, "mail list|show|send|release", mail_opts },
	{ "token", cmd_token, 1, "token add NAME [--scope read|write|admin] | list | remove NAME", token_opts },
	{ "kcidb", cmd_kcidb, 1, "kcidb [--since TIME]       (results in KernelCI's KCIDB v4 JSON)", kcidb_opts },
	{ "lava-job", cmd_lava_job, 1, "lava-job CANDIDATE [--out DIR] [--url URL]   (a LAVA job: qemu, kernel, initramfs, tests)", lava_opts },
	{ "serve", cmd_serve, 0, "serve [-d] [-n] [-v]", NULL, "dnv" },
	{ "config", cmd_config, 0, "config            (print the settings in force)" },
	{ "branches", cmd_branches, 1, "branches [--json]  (each branch: git branch, version, tree, queue, what it waits for)" },
	{ NULL, NULL, 0, NULL },
};

/*
 * A command stopped by a signal (the daemon ending its step, ^C) takes the
 * children it runs (make, QEMU) with it, then dies of that signal.
 */
static void on_stop(int sig)
{
	spawn_kill_all(2000); /* the daemon waits 3 s before its SIGKILL */
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Who the CLI acts as, in flags, reverts and events: "user:NAME", the
 * local user (the password database, else $USER, else the uid); the
 * daemon's steps (STABLEQ_ACTOR=daemon, set by `stableq serve`) act as
 * "daemon".
 */
static const char *local_actor(void)
{
	static char actor[64];
	const char *env = getenv("STABLEQ_ACTOR");

	if (env && !strcmp(env, "daemon"))
		return "daemon";
	const struct passwd *pw = getpwuid(getuid());
	const char *name = pw && pw->pw_name && *pw->pw_name ? pw->pw_name
							     : getenv("USER");

	if (name && *name && strlen(name) < sizeof(actor) - 6 &&
	    !strpbrk(name, " \t\r\n"))
		snprintf(actor, sizeof(actor), "user:%s", name);
	else
		snprintf(actor, sizeof(actor), "user:%ld", (long)getuid());
	return actor;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: stableq [-c FILE] [--db FILE] [--branch KEY] [-v] COMMAND [ARGS]\n\n"
		   "commands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  stableq %s\n", c->usage);
}

/*
 * The global options, before or after the command's name; their vals are
 * above any char so that they never meet a command's ('r' for --reason).
 */
enum { OPT_DB = 256, OPT_BRANCH, OPT_JSON };
static const struct option global_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "db", required_argument, NULL, OPT_DB },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
};
#define NGLOBAL (sizeof(global_opts) / sizeof(global_opts[0]))

struct globals {
	const char *conf, *db, *branch;
	int json, help, verbose;
};

/*
 * What getopt_long() returned, taken: a global option into g, a command's
 * into o. 0, or 2 after saying which option was wrong (argv[optind - 1]
 * or optopt) and how, with the usage of cmd (NULL: of stableq).
 */
static int take(int c, char **argv, struct globals *g, struct cli_opts *o,
		const struct command *cmd)
{
	switch (c) {
	case 'c': g->conf = optarg; return 0;
	case OPT_DB: g->db = optarg; return 0;
	case OPT_BRANCH: g->branch = optarg; return 0;
	case OPT_JSON: g->json = 1; return 0;
	case 'h': g->help = 1; return 0;
	case '?':
	case ':':
		break;
	default:
		if (o && c > 0 && c < (int)(sizeof(o->v) / sizeof(o->v[0]))) {
			o->v[c] = optarg ? optarg : "";
			return 0;
		}
		break;
	}
	/* a missing value ends its word; an unknown short option has optopt */
	if (c == '?' && optopt > 0 && optopt < 128)
		fprintf(stderr, "stableq%s%s: unknown option '-%c'\n",
			cmd ? " " : "", cmd ? cmd->name : "", optopt);
	else
		fprintf(stderr, "stableq%s%s: %s '%s'\n", cmd ? " " : "",
			cmd ? cmd->name : "",
			c == ':' ? "no value given to option" : "unknown option",
			argv[optind - 1]);
	if (cmd)
		fprintf(stderr, "usage: stableq %s\n", cmd->usage);
	else
		usage(stderr);
	return 2;
}

/*
 * The command's part of the command line (argv[0] its name): its options
 * (cmd->opts, cmd->shortopts) into o, the global ones into g, and its
 * operands, in order, left in argv[1..*argc - 1]. 0, or 2 after saying
 * what was wrong.
 */
static int parse_command(const struct command *cmd, int *argc, char **argv,
			 struct globals *g, struct cli_opts *o)
{
	struct option *all;
	size_t n = 0, k = 0;
	char shortopts[64];
	int c, ret = 0;

	for (; cmd->opts && cmd->opts[n].name; n++)
		;
	all = calloc(NGLOBAL + n + 1, sizeof(*all));
	if (!all)
		return 1;
	for (size_t i = 0; i < NGLOBAL; i++)
		all[k++] = global_opts[i];
	for (size_t i = 0; i < n; i++) {
		/* a command's option with a global option's value would be
		 * taken as the global one (--confirm as -c FILE) */
		int v = cmd->opts[i].val;
		if (v == 'c' || v == 'h' || v >= OPT_DB) {
			fprintf(stderr,
				"stableq %s: option --%s takes the value of a"
				" global option (a bug)\n",
				cmd->name, cmd->opts[i].name);
			free(all);
			return 1;
		}
		all[k++] = cmd->opts[i];
	}
	snprintf(shortopts, sizeof(shortopts), ":c:h%s",
		 cmd->shortopts ? cmd->shortopts : "");
	optind = 0; /* from argv[1], afresh */
	while (!ret && (c = getopt_long(*argc, argv, shortopts, all, NULL)) != -1)
		ret = take(c, argv, g, o, cmd);
	if (!ret) {
		/* getopt_long() moved the operands to the end, in order */
		int from = optind;
		*argc = 1;
		for (int i = from; argv[i]; i++)
			argv[(*argc)++] = argv[i];
		argv[*argc] = NULL;
	}
	free(all);
	return ret;
}

int main(int argc, char **argv)
{
	struct app app = { .bc.actor = local_actor() };
	struct globals g = { 0 };
	struct cli_opts o = { { 0 } };
	const struct command *cmd = NULL;
	char **args = NULL;
	int nargs, c, ret;

	app.bc.self = argv[0];
	opterr = 0; /* take() says what was wrong, naming the command */
	/* the global options before the command; -v is global only here */
	while ((c = getopt_long(argc, argv, "+:c:hv", global_opts, NULL)) !=
	       -1) {
		if (c == 'v')
			g.verbose++;
		else if ((ret = take(c, argv, &g, NULL, NULL)))
			goto out;
	}
	if (!g.help && optind >= argc) {
		usage(stderr);
		ret = 2;
		goto out;
	}
	for (const struct command *k = commands; !g.help && k->name; k++)
		if (!strcmp(k->name, argv[optind]))
			cmd = k;
	if (!g.help && !cmd) {
		fprintf(stderr, "stableq: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		ret = 2;
		goto out;
	}
	nargs = argc - optind;
	args = calloc((size_t)nargs + 1, sizeof(*args));
	if (!args) {
		ret = 1;
		goto out;
	}
	for (int i = 0; i < nargs; i++)
		args[i] = argv[optind + i];
	if (cmd && (ret = parse_command(cmd, &nargs, args, &g, &o)))
		goto out;
	if (g.help) {
		usage(stdout);
		ret = 0;
		goto out;
	}
	app.json = g.json;
	app.verbose = g.verbose;
	if (!g.conf && !getenv("STABLEQ_NO_DEFAULT_CONFIG") &&
	    access("config/stableq.conf", R_OK) == 0)
		g.conf = "config/stableq.conf";
	if (config_load(&app.bc.cfg, g.conf) < 0 ||
	    config_select_branch(&app.bc.cfg, g.branch) < 0) {
		fprintf(stderr, "stableq: %s\n", err_msg());
		ret = 2;
		goto out;
	}
	app.bc.branch_given = g.branch != NULL;
	if (g.db) {
		free(app.bc.cfg.db);
		app.bc.cfg.db = strdup(g.db);
	}
	log_init(app.verbose, 0);
	if (cmd->needs_db && branch_ctx_open_db(&app.bc) < 0) {
		fprintf(stderr, "stableq: %s\n", err_msg());
		ret = 1;
		goto out;
	}
	if (cmd->run != cmd_serve) {
		struct sigaction sa = { .sa_handler = on_stop };
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	/* one command is one step for the bulk-mail guard (serve runs its
	 * steps as commands of their own) */
	long long mark = app.bc.db ? guard_mark(app.bc.db) : 0;
	ret = cmd->run(&app, &o, nargs, args);
	if (app.bc.db && cmd->run != cmd_serve &&
	    guard_apply(app.bc.db, &app.bc.cfg, mark, cmd->name, app.bc.actor) <
		    0)
		fprintf(stderr, "stableq: bulk-mail guard: %s\n", err_msg());
out:
	db_close(app.bc.db);
	config_free(&app.bc.cfg);
	free(args);
	return ret;
}
