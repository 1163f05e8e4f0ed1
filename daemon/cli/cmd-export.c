/* cmd-export.c: `stableq kcidb` and `stableq lava-job`: results and boots for KernelCI and LAVA. */
#include "cli.h"
#include "err.h"
#include "kcidb.h"
#include "lava.h"
#include "queue.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KCIDB_USAGE "usage: stableq kcidb [--since TIME]\n"
#define LAVA_USAGE "usage: stableq lava-job CANDIDATE [--out DIR] [--url URL]\n"

int cmd_kcidb(struct app *app, int argc, char **argv)
{
	const char *since_arg = NULL;
	char *since = NULL, *base;
	json_t *j;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--since") && i + 1 < argc) {
			since_arg = argv[++i];
		} else {
			fputs(KCIDB_USAGE, stderr);
			return 2;
		}
	}
	if (since_arg && kcidb_parse_since(since_arg, &since) < 0) {
		fprintf(stderr, "stableq kcidb: %s\n", err_msg());
		return 2;
	}
	base = kcidb_base_url(&app->cfg);
	j = kcidb_export(app->db, &app->cfg, since, base);
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

int cmd_lava_job(struct app *app, int argc, char **argv)
{
	struct lava_opts o = { 0 };
	char *end, *yaml = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			o.out_dir = argv[++i];
		} else if (!strcmp(argv[i], "--url") && i + 1 < argc) {
			o.url_base = argv[++i];
		} else if (!o.candidate &&
			   (o.candidate = strtoll(argv[i], &end, 10)) > 0 &&
			   !*end) {
			continue;
		} else {
			fputs(LAVA_USAGE, stderr);
			return 2;
		}
	}
	if (o.candidate <= 0) {
		fputs(LAVA_USAGE, stderr);
		return 2;
	}
	/* the candidate's branch: its build directory and test set (a row
	 * without a branch, or no row, is lava_job()'s to judge) */
	if (queue_follow_candidate(app, o.candidate) < 0 &&
	    err_last() != ERR_NOTFOUND) {
		fprintf(stderr, "stableq lava-job: %s\n", err_msg());
		return 1;
	}
	if (lava_job(app->db, &app->cfg, &o, &yaml) < 0) {
		fprintf(stderr, "stableq lava-job: %s\n", err_msg());
		return 1;
	}
	fputs(yaml, stdout);
	free(yaml);
	return fflush(stdout) ? 1 : 0;
}
