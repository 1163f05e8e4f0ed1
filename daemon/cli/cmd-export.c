/* cmd-export.c: `stableq kcidb` and `stableq lava-job`: results and boots for KernelCI and LAVA. */
#include "cli.h"
#include "err.h"
#include "kcidb.h"
#include "lava.h"
#include "candidate.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KCIDB_USAGE "usage: stableq kcidb [--since TIME]\n"
#define LAVA_USAGE "usage: stableq lava-job CANDIDATE [--out DIR] [--url URL]\n"

const struct option kcidb_opts[] = {
	{ "since", required_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 },
};

int cmd_kcidb(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	const char *since_arg = o->v['s'];
	char *since = NULL, *base;
	json_t *j;
	int ret;

	if (argc > 1) {
		fputs(KCIDB_USAGE, stderr);
		return 2;
	}
	if (since_arg && kcidb_parse_since(since_arg, &since) < 0) {
		fprintf(stderr, "stableq kcidb: %s\n", err_msg());
		return 2;
	}
	base = kcidb_base_url(&app->bc.cfg);
	j = kcidb_export(app->bc.db, &app->bc.cfg, since, base);
	free(base);
	free(since);
	if (!j) {
		fprintf(stderr, "stableq kcidb: %s\n", err_msg());
		return 1;
	}
	ret = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	fputc('\n', stdout);
	json_decref(j);
	return ret < 0 || fflush(stdout) ? 1 : 0;
}

const struct option lava_opts[] = {
	{ "out", required_argument, NULL, 'o' },
	{ "url", required_argument, NULL, 'u' },
	{ NULL, 0, NULL, 0 },
};

int cmd_lava_job(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	struct lava_opts lo = { 0 };
	char *end, *yaml = NULL;

	lo.out_dir = o->v['o'];
	lo.url_base = o->v['u'];
	if (argc != 2 || (lo.candidate = strtoll(argv[1], &end, 10)) <= 0 ||
	    *end) {
		fputs(LAVA_USAGE, stderr);
		return 2;
	}
	/* the candidate's branch: its build directory and test set (a row
	 * without a branch, or no row, is lava_job()'s to judge) */
	if (candidate_follow(&app->bc, lo.candidate) < 0 &&
	    err_last() != ERR_NOTFOUND) {
		fprintf(stderr, "stableq lava-job: %s\n", err_msg());
		return 1;
	}
	if (lava_job(app->bc.db, &app->bc.cfg, &lo, &yaml) < 0) {
		fprintf(stderr, "stableq lava-job: %s\n", err_msg());
		return 1;
	}
	fputs(yaml, stdout);
	free(yaml);
	return fflush(stdout) ? 1 : 0;
}
