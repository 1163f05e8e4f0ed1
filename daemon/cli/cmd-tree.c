/* cmd-tree.c: `stableq tree init|status|checkout`. */
#include "cli.h"
#include "db.h"
#include "err.h"
#include "progress.h"
#include "repo.h"
#include "spawn.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct progress {
	sqlite3 *db; /* NULL: no progress row for the dashboard */
	int tty;
	const char *phase; /* borrowed: the repo module's string literals */
	size_t last_step, last_done;
	double last;
	double start;
};

/*
 * A live counter on a terminal; otherwise one line per phase and per 10%
 * (per 10,000 files when the total is not known yet).
 */
static void show_progress(void *vctx, const char *phase, size_t done,
			  size_t total)
{
	struct progress *p = vctx;
	size_t step = total ? done * 10 / total : done / 10000;
	double now = now_monotonic();
	int new_phase = !p->phase || strcmp(p->phase, phase);
	struct strbuf line = STRBUF_INIT;

	if (p->db) {
		char *label = xstrfmt("tree: %s", phase);
		progress_set(p->db, "tree", 0, label, (long long)done,
			     (long long)total, "files");
		free(label);
	}
	if (p->tty && !new_phase && now - p->last < 0.1 && done != total)
		return;
	if (!p->tty && !new_phase && step == p->last_step &&
	    !(total && done == total))
		return;
	if (!p->tty && !new_phase && total && done == total &&
	    p->last_done == done)
		return;
	strbuf_addf(&line, "tree: %s", phase);
	if (total)
		strbuf_addf(&line, ": %zu/%zu files (%zu%%)", done, total,
			    done * 100 / total);
	else if (done)
		strbuf_addf(&line, ": %zu files", done);
	else
		strbuf_addstr(&line, "...");
	strbuf_addf(&line, " [%.1f s]", now - p->start);
	if (p->tty)
		fprintf(stderr, "%s\r%s\033[K",
			new_phase && p->phase ? "\n" : "", line.buf);
	else
		fprintf(stderr, "%s\n", line.buf);
	fflush(stderr);
	strbuf_release(&line);
	p->phase = phase;
	p->last_step = step;
	p->last_done = done;
	p->last = now;
}

static int tree_init(struct app *app)
{
	double t0 = now_monotonic();
	struct progress p = {.tty = isatty(2), .start = t0};
	char *version = NULL;
	int ret;

	/* the dashboard shows the import when there is a store to tell */
	if (access(app->bc.cfg.db, F_OK) == 0 &&
	    branch_ctx_open_db(&app->bc) == 0)
		p.db = app->bc.db;
	err_clear();

	ret = repo_init_from_tarball(app->bc.cfg.linux_source,
				     app->bc.cfg.tree_dir, app->bc.cfg.branch,
				     &version, show_progress, &p);
	if (p.tty && p.phase)
		fputc('\n', stderr);
	if (p.db)
		progress_clear(p.db, "tree", 0);
	if (ret < 0) {
		fprintf(stderr, "stableq tree init: %s\n", err_msg());
		return 1;
	}
	if (p.db &&
	    branch_ctx_set_version(p.db, app->bc.cfg.branch_key, version) < 0) {
		fprintf(stderr, "stableq tree init: %s\n", err_msg());
		return 1;
	}
	if (ret == 1)
		printf("tree: %s already holds v%s (branch %s); nothing "
		       "changed\n",
		       app->bc.cfg.tree_dir, version, app->bc.cfg.branch);
	else
		printf("tree: imported %s into %s: tag v%s, branch %s "
		       "(%.1f s)\n",
		       app->bc.cfg.linux_source, app->bc.cfg.tree_dir, version,
		       app->bc.cfg.branch, now_monotonic() - t0);
	free(version);
	return 0;
}

static int tree_status(struct app *app)
{
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE];
	char *desc = NULL, *msg = NULL;
	int ret;

	if ((ret = repo_open(&r, app->bc.cfg.tree_dir)) < 0 ||
	    (ret = repo_branch_tip(r, app->bc.cfg.branch, tip)) < 0) {
		fprintf(stderr, "stableq tree status: %s\n", err_msg());
		repo_free(r);
		return 1;
	}
	printf("tree:   %s\n", repo_workdir(r));
	printf("branch: %s\n", app->bc.cfg.branch);
	if (repo_commit_message(r, tip, &msg) == 0)
		printf("tip:    %s %.*s\n", tip, (int)strcspn(msg, "\n"), msg);
	else
		printf("tip:    %s\n", tip);
	{
		char head[REPO_HEX_SIZE];
		if (repo_resolve(r, "HEAD", head) == 0 && strcmp(head, tip))
			printf("head:   %s (checked out)\n", head);
	}
	if (repo_describe(r, tip, &desc) == 0) {
		size_t n = strcspn(desc, "-");
		/* "v6.1.192-3-gabc": the tag, and how far past it */
		printf("tag:    %.*s%s%s\n", (int)n, desc, desc[n] ? " + " : "",
		       desc[n] ? desc + n + 1 : "");
	} else {
		printf("tag:    (none)\n");
	}
	free(desc);
	free(msg);
	repo_free(r);
	return 0;
}

static int tree_checkout(struct app *app, const char *spec)
{
	struct repo *r = NULL;
	char hex[REPO_HEX_SIZE];
	double t0 = now_monotonic();

	if (repo_open(&r, app->bc.cfg.tree_dir) < 0 ||
	    repo_resolve(r, spec, hex) < 0 || repo_checkout(r, hex) < 0) {
		fprintf(stderr, "stableq tree checkout: %s\n", err_msg());
		repo_free(r);
		return 1;
	}
	printf("tree: %s at %s (%.3f s)\n", repo_workdir(r), hex,
	       now_monotonic() - t0);
	repo_free(r);
	return 0;
}

int cmd_tree(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "init"))
		return tree_init(app);
	if (argc == 2 && !strcmp(argv[1], "status"))
		return tree_status(app);
	if (argc == 3 && !strcmp(argv[1], "checkout"))
		return tree_checkout(app, argv[2]);
	fprintf(stderr,
		"usage: stableq tree init      (import %s into %s)\n"
		"       stableq tree status\n"
		"       stableq tree checkout REV\n",
		app->bc.cfg.linux_source, app->bc.cfg.tree_dir);
	return 2;
}
