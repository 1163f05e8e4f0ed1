/* cmd-candidate.c: `stableq candidate`: make, run or show a candidate (the queue built, booted, tested). */
#include "candidate.h"
#include "cli.h"
#include "strbuf.h"
#include "sandbox.h"
#include "coverage.h"
#include "queue.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line per patch of the candidate's build coverage, files below it. */
static void print_coverage(json_t *cov)
{
	size_t i, k;
	json_t *p, *f;

	json_array_foreach(json_object_get(cov, "patches"), i, p) {
		printf("  coverage: patch %lld: %s\n",
		       (long long)json_integer_value(json_object_get(p, "patch_id")),
		       json_string_value(json_object_get(p, "status")));
		json_array_foreach(json_object_get(p, "files"), k, f) {
			char *line = coverage_file_text(f);
			printf("    %s\n", line);
			free(line);
		}
		json_t *l = json_object_get(p, "lines");
		if (json_is_object(l))
			printf("    lines: %s\n",
			       json_string_value(json_object_get(l, "text")));
	}
	json_t *boot = json_object_get(cov, "lines");
	if (json_is_object(boot))
		printf("  coverage boot: %s\n",
		       json_string_value(json_object_get(boot, "summary")));
}

/* "  phases: apply 0.1 s, build 4 min 3 s (built), ..." */
static void print_phases(json_t *phases)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	json_t *p;

	json_array_foreach(phases, i, p) {
		json_t *sec = json_object_get(p, "seconds");
		const char *d = json_string_value(json_object_get(p, "detail"));
		char *t;
		if (!json_is_number(sec))
			continue;
		t = candidate_duration_text(json_number_value(sec));
		strbuf_addf(&sb, "%s%s %s%s%s%s", sb.len ? ", " : "",
			    json_string_value(json_object_get(p, "phase")), t,
			    d ? " (" : "", d ? d : "", d ? ")" : "");
		free(t);
	}
	if (sb.len)
		printf("  phases: %s\n", sb.buf);
	strbuf_release(&sb);
}

static int show_candidate(struct app *app, long long id)
{
	json_t *j = candidate_json(app->bc.db, id);
	size_t i;
	json_t *t;

	if (!j)
		return cli_fail("candidate");
	if (app->json) {
		cli_print_json(j);
	} else {
		json_t *b = json_object_get(j, "build");
		printf("candidate %lld: %s\n", id,
		       json_string_value(json_object_get(j, "summary")) ?: "(running)");
		if (json_is_object(b))
			printf("  build %lld: %s in %.1f s\n",
			       (long long)json_integer_value(json_object_get(b, "id")),
			       json_string_value(json_object_get(b, "result")),
			       json_number_value(json_object_get(b, "seconds")));
		/* what failed first; the passes as a count */
		size_t passed = 0;
		json_array_foreach(json_object_get(j, "tests"), i, t) {
			const char *d = json_string_value(json_object_get(t, "detail"));
			const char *r = json_string_value(json_object_get(t, "result"));
			if (r && !strcmp(r, "pass")) {
				passed++;
				continue;
			}
			printf("  %-5s %s%s%s\n", r,
			       json_string_value(json_object_get(t, "name")),
			       d && *d ? ": " : "", d && *d ? d : "");
		}
		if (passed)
			printf("  %zu passed\n", passed);
		if (json_string_value(json_object_get(j, "detail")))
			printf("  %s\n", json_string_value(json_object_get(j, "detail")));
		print_phases(json_object_get(j, "phases"));
		print_coverage(json_object_get(j, "coverage"));
	}
	const char *v = json_string_value(json_object_get(j, "verdict"));
	int rc = candidate_verdict_parse(v) == CV_PASS ? 0 : 3;
	json_decref(j);
	return rc;
}

const struct option candidate_opts[] = {
	{ "upto", required_argument, NULL, 'u' },
	{ "show", required_argument, NULL, 's' },
	{ "run", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 },
};

/* An option's id: 0 when not given, -1 when not an id. */
static int opt_id(const struct cli_opts *o, int c, long long *id)
{
	*id = 0;
	return o->v[c] ? cli_parse_id(o->v[c], id) : 0;
}

/* stableq candidate [--upto ID] [--run ID] [--json]: exit 0 pass, 3 otherwise. */
int cmd_candidate(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long upto, run, shown, id;

	if (argc > 1 || opt_id(o, 'u', &upto) < 0 ||
	    opt_id(o, 's', &shown) < 0 || opt_id(o, 'r', &run) < 0) {
		fprintf(stderr, "usage: stableq candidate [--upto ID] [--json]\n"
				"       stableq candidate --show ID [--json]\n");
		return 2;
	}
	if (shown) /* a stored candidate: its verdict, tests and coverage */
		return show_candidate(app, shown);
	cli_on_terminal();
	/* a stored candidate (or --upto's patch) decides the branch */
	if ((run && candidate_follow(&app->bc, run) < 0) ||
	    (upto && queue_follow_patch(&app->bc, upto) < 0))
		return cli_fail("candidate");
	/* a build that would be refused (sandbox.h) makes no candidate */
	if (sandbox_config_check(&app->bc.cfg) < 0)
		return cli_fail("candidate");
	id = run ? run
		 : candidate_create_on(app->bc.db, app->bc.branch_id, NULL, 0,
				       upto, "queue", 0, app->bc.actor);
	if (id < 0)
		return cli_fail("candidate");
	if (candidate_run(&app->bc, id, 1, cli_progress, app) < 0)
		return cli_fail("candidate");
	return show_candidate(app, id);
}
