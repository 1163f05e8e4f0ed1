/* cmd-rc.c: `stableq rc [override|report]` and `stableq release`: the review cycle of the branch. */
#include "cli.h"
#include "err.h"
#include "rc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct option rc_opts[] = {
	{ "show", no_argument, NULL, 's' },
	{ "reason", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 },
};

#define RC_USAGE                                                               \
	"usage: stableq rc [--show] [--json]\n"                                \
	"       stableq rc override [RC-ID] --reason TEXT\n"                   \
	"       stableq rc report [RC-ID]\n"

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static long long jint(const json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static void print_rc(const json_t *o, int unchanged)
{
	const json_t *p;
	size_t i;

	printf("rc %lld: %s (%s), %zu patches, %s, %zu tested%s\n",
	       jint(o, "id"), jstr(o, "version"), jstr(o, "state"),
	       json_array_size(json_object_get(o, "patches")),
	       json_is_true(json_object_get(o, "window_open")) ? "window open"
							      : "window closed",
	       json_array_size(json_object_get(o, "tested")),
	       unchanged ? "; the queue is unchanged: no new rc" : "");
	if (*jstr(o, "tag"))
		printf("  tag %s, patch file %s\n", jstr(o, "tag"),
		       jstr(o, "patch_file"));
	json_array_foreach(json_object_get(o, "patches"), i, p)
		printf("  %03lld  %5lld  %-8s  %s%s\n", jint(p, "pos"),
		       jint(p, "id"), jstr(p, "state"), jstr(p, "subject"),
		       json_is_true(json_object_get(p, "stale"))
			       ? "  (edited since: stale)"
			       : "");
	json_array_foreach(json_object_get(o, "reports"), i, p)
		printf("  %s from %s%s: %s\n", jstr(p, "kind"), jstr(p, "tester"),
		       jint(p, "holds") ? " (holds the release)" : "",
		       *jstr(p, "summary") ? jstr(p, "summary") : "-");
	if (json_is_object(json_object_get(o, "override")))
		printf("  override by %s: %s\n",
		       jstr(json_object_get(o, "override"), "actor"),
		       jstr(json_object_get(o, "override"), "reason"));
	if (jint(o, "waiting"))
		printf("  %lld queued patches wait for the next rc\n",
		       jint(o, "waiting"));
}

static int show(struct app *app, long long id, int unchanged)
{
	json_t *o = rc_json(app->bc.db, app->bc.branch_id, id);

	if (!o) {
		fprintf(stderr, "stableq rc: %s\n", err_msg());
		return 1;
	}
	if (app->json) {
		json_dumpf(o, stdout, JSON_SORT_KEYS);
		putchar('\n');
	} else {
		print_rc(o, unchanged);
	}
	json_decref(o);
	return 0;
}

/* An rc id operand, or 0 (the branch's open rc). */
static int rc_arg(int argc, char **argv, long long *id)
{
	char *end;

	*id = 0;
	if (argc < 3)
		return 0;
	if (argc > 3 || (*id = strtoll(argv[2], &end, 10)) <= 0 || *end) {
		fputs(RC_USAGE, stderr);
		return -1;
	}
	return 0;
}

int cmd_rc(struct app *app, const struct cli_opts *opts, int argc, char **argv)
{
	long long id = 0;
	int ret;

	if (argc > 1 && !strcmp(argv[1], "override")) {
		if (rc_arg(argc, argv, &id) < 0 || !opts->v['r']) {
			fputs(RC_USAGE, stderr);
			return 2;
		}
		if (rc_override(&app->bc, id, opts->v['r'], &id) < 0) {
			fprintf(stderr, "stableq rc override: %s\n", err_msg());
			return 1;
		}
		printf("rc %lld: the holds on its release are lifted: %s\n", id,
		       opts->v['r']);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "report")) {
		if (rc_arg(argc, argv, &id) < 0)
			return 2;
		if (!id && (rc_report_due(&app->bc, &id) < 0 || !id)) {
			fprintf(stderr, "stableq rc report: no open rc whose"
					" candidate is done and not reported\n");
			return 1;
		}
		if (rc_report_send(&app->bc, id) < 0) {
			fprintf(stderr, "stableq rc report: %s\n", err_msg());
			return 1;
		}
		printf("rc %lld: stableq's own test report is in the outbox\n",
		       id);
		return 0;
	}
	if (argc > 1) {
		fputs(RC_USAGE, stderr);
		return 2;
	}
	if (opts->v['s'])
		return show(app, 0, 0);
	if ((ret = rc_prepare(&app->bc, &id)) < 0) {
		fprintf(stderr, "stableq rc: %s\n", err_msg());
		return 1;
	}
	return show(app, id, ret == 1);
}
