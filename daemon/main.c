/* main.c: `stableq COMMAND`: global options, then the command table. */
#include "app.h"
#include "cli.h"
#include "db.h"
#include "err.h"
#include "guard.h"
#include "log.h"
#include "spawn.h"

#include <signal.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct command commands[] = {
	{ "import", cmd_import, 1, "import PATH...            (quilt dir, mbox or patch file)" },
	{ "intake", cmd_intake, 1, "intake [--json]           (mail from intake_maildir, intake_inbox: patches, replies)" },
	{ "check", cmd_check, 1, "check [ID...]" },
	{ "queue", cmd_queue, 1, "queue [--json] [--state S]" },
	{ "show", cmd_show, 1, "show [--json] ID" },
	{ "tree", cmd_tree, 0, "tree init|status|checkout REV   (the branch's stable tree from its linux-source tarball)" },
	{ "candidate", cmd_candidate, 1, "candidate [--upto ID] [--json]" },
	{ "verify", cmd_verify, 1, "verify PATCH-ID           (does the fix's Regression-test fail without it?)" },
	{ "bisect", cmd_bisect, 1, "bisect [CANDIDATE-ID] [--steps N] [--json]" },
	{ "flag", cmd_flag, 1, "flag ID --reason TEXT" },
	{ "revert", cmd_revert, 1, "revert ID [--dry-run|--plan] [--reason TEXT] [--no-confirm] | ID --auto|--propose | --confirm REVERT-ID | --resume" },
	{ "override", cmd_override, 1, "override ID --reason TEXT" },
	{ "rc", cmd_rc, 1, "rc [--show] [--json]      (the -rc review series to rc_list; --show: the newest)" },
	{ "release", cmd_release, 1, "release [--force]" },
	{ "mail", cmd_mail, 1, "mail list|show|send|release" },
	{ "token", cmd_token, 1, "token add NAME [--scope read|write|admin] | list | remove NAME" },
	{ "kcidb", cmd_kcidb, 1, "kcidb [--since TIME]       (results in KernelCI's KCIDB v4 JSON)" },
	{ "lava-job", cmd_lava_job, 1, "lava-job CANDIDATE [--out DIR] [--url URL]   (a LAVA job: qemu, kernel, initramfs, tests)" },
	{ "serve", cmd_serve, 0, "serve [-d] [-n] [-v]" },
	{ "config", cmd_config, 0, "config            (print the settings in force)" },
	{ "branches", cmd_branches, 1, "branches [--json]  (each branch: git branch, version, tree, queue)" },
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

int main(int argc, char **argv)
{
	struct app app = { .actor = local_actor() };
	const char *conf = NULL, *dbpath = NULL, *branch = NULL;
	const struct command *cmd = NULL;
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int nargs = 0, ret;

	app.self = argv[0];
	/* Global options may stand before or after the command name. */
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) &&
		    i + 1 < argc) {
			conf = argv[++i];
		} else if (!strcmp(argv[i], "--db") && i + 1 < argc) {
			dbpath = argv[++i];
		} else if (!strcmp(argv[i], "--branch") && i + 1 < argc) {
			branch = argv[++i];
		} else if (!strcmp(argv[i], "--json")) {
			app.json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			ret = 0;
			goto out;
		} else if (!strcmp(argv[i], "-v") && !nargs) {
			app.verbose++;
		} else {
			args[nargs++] = argv[i];
		}
	}
	if (!nargs) {
		usage(stderr);
		ret = 2;
		goto out;
	}
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(c->name, args[0]))
			cmd = c;
	if (!cmd) {
		fprintf(stderr, "stableq: unknown command '%s'\n", args[0]);
		usage(stderr);
		ret = 2;
		goto out;
	}
	if (!conf && !getenv("STABLEQ_NO_DEFAULT_CONFIG") &&
	    access("config/stableq.conf", R_OK) == 0)
		conf = "config/stableq.conf";
	if (config_load(&app.cfg, conf) < 0 ||
	    config_select_branch(&app.cfg, branch) < 0) {
		fprintf(stderr, "stableq: %s\n", err_msg());
		ret = 2;
		goto out;
	}
	app.branch_given = branch != NULL;
	if (dbpath) {
		free(app.cfg.db);
		app.cfg.db = strdup(dbpath);
	}
	log_init(app.verbose, 0);
	if (cmd->needs_db && app_open_db(&app) < 0) {
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
	long long mark = app.db ? guard_mark(app.db) : 0;
	ret = cmd->run(&app, nargs, args);
	if (app.db && cmd->run != cmd_serve &&
	    guard_apply(app.db, &app.cfg, mark, cmd->name, app.actor) < 0)
		fprintf(stderr, "stableq: bulk-mail guard: %s\n", err_msg());
out:
	db_close(app.db);
	config_free(&app.cfg);
	free(args);
	return ret;
}
