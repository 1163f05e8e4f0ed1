/* cmd-engine.c: `stableq candidate|bisect|flag|revert|override|release`. */
#include "bisect.h"
#include "candidate.h"
#include "cli.h"
#include "coverage.h"
#include "db.h"
#include "err.h"
#include "release.h"
#include "log.h"
#include "progress.h"
#include "queue.h"
#include "revert.h"
#include "verify.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void progress(const char *line, void *ctx)
{
	struct app *app = ctx;

	progress_interrupt();
	fprintf(app->json ? stderr : stdout, "%s\n", line);
	fflush(app->json ? stderr : stdout);
}

static int parse_id(const char *s, long long *id)
{
	char *end;

	*id = s ? strtoll(s, &end, 10) : 0;
	return s && *s && !*end && *id > 0 ? 0 : -1;
}

/* Long steps paint one updating line on a terminal. */
static void on_terminal(void)
{
	if (isatty(2))
		progress_terminal(2);
}

static int print_json(json_t *j)
{
	char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;

	if (!s)
		return 1;
	puts(s);
	free(s);
	return 0;
}

static int fail(const char *cmd)
{
	fprintf(stderr, "stableq %s: %s\n", cmd, err_msg());
	return 1;
}

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
	}
}

static int show_candidate(struct app *app, long long id)
{
	json_t *j = candidate_json(app->db, id);
	size_t i;
	json_t *t;

	if (!j)
		return fail("candidate");
	if (app->json) {
		print_json(j);
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
		print_coverage(json_object_get(j, "coverage"));
	}
	const char *v = json_string_value(json_object_get(j, "verdict"));
	int rc = v && !strcmp(v, "pass") ? 0 : 3;
	json_decref(j);
	return rc;
}

/* stableq candidate [--upto ID] [--run ID] [--json]: exit 0 pass, 3 otherwise. */
int cmd_candidate(struct app *app, int argc, char **argv)
{
	long long upto = 0, run = 0, shown = 0, id;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--upto") && i + 1 < argc &&
		    !parse_id(argv[i + 1], &upto))
			i++;
		else if (!strcmp(argv[i], "--show") && i + 1 < argc &&
			 !parse_id(argv[i + 1], &shown))
			i++;
		else if (!strcmp(argv[i], "--run") && i + 1 < argc &&
			 !parse_id(argv[i + 1], &run))
			i++;
		else {
			fprintf(stderr, "usage: stableq candidate [--upto ID] [--json]\n"
					"       stableq candidate --show ID [--json]\n");
			return 2;
		}
	}
	if (shown) /* a stored candidate: its verdict, tests and coverage */
		return show_candidate(app, shown);
	on_terminal();
	/* a stored candidate (or --upto's patch) decides the branch */
	if ((run && queue_follow_candidate(app, run) < 0) ||
	    (upto && queue_follow_patch(app, upto) < 0))
		return fail("candidate");
	id = run ? run
		 : candidate_create_on(app->db, app->branch_id, NULL, 0, upto,
				       "queue", 0, app->actor);
	if (id < 0)
		return fail("candidate");
	if (candidate_run(app, id, 1, progress, app) < 0)
		return fail("candidate");
	return show_candidate(app, id);
}

int cmd_bisect(struct app *app, int argc, char **argv)
{
	long long cid = 0, bid = 0, steps = -1;
	json_t *j;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps") && i + 1 < argc &&
		    !parse_id(argv[i + 1], &steps))
			i++;
		else if (cid || parse_id(argv[i], &cid) < 0) {
			fprintf(stderr, "usage: stableq bisect [CANDIDATE-ID]"
					" [--steps N] [--json]\n");
			return 2;
		}
	}
	if (!cid &&
	    db_query_int(app->db, &cid,
			 "SELECT id FROM candidates WHERE branch_id = ? AND"
			 " verdict IN ('fail','build-failed','hang') AND"
			 " purpose IN ('queue','confirm') ORDER BY id DESC"
			 " LIMIT 1",
			 "i", app->branch_id) < 0) {
		fprintf(stderr, "stableq bisect: no failing candidate\n");
		return 1;
	}
	on_terminal();
	if (queue_follow_candidate(app, cid) < 0 ||
	    bisect_run(app, cid, steps > 0 && steps < 1000 ? (int)steps : -1,
		       &bid, progress, app) < 0)
		return fail("bisect");
	j = bisect_json(app->db, bid);
	if (app->json) {
		print_json(j);
	} else {
		char *line = bisect_summary(app->db, bid);
		printf("%s\n", line);
		free(line);
		if (json_string_value(json_object_get(j, "detail")))
			printf("  %s\n",
			       json_string_value(json_object_get(j, "detail")));
	}
	json_decref(j);
	return 0;
}

static const char *reason_arg(int argc, char **argv, long long *id)
{
	const char *reason = NULL;

	*id = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reason") && i + 1 < argc)
			reason = argv[++i];
		else if (!*id && !parse_id(argv[i], id))
			;
		else if (strcmp(argv[i], "--dry-run") && strcmp(argv[i], "--resume") &&
			 strcmp(argv[i], "--no-confirm") && strcmp(argv[i], "--force") &&
			 strcmp(argv[i], "--plan") && strcmp(argv[i], "--auto") &&
			 strcmp(argv[i], "--propose"))
			return NULL;
	}
	return reason ? reason : "";
}

static int has(int argc, char **argv, const char *opt)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], opt))
			return 1;
	return 0;
}

int cmd_flag(struct app *app, int argc, char **argv)
{
	long long id;
	const char *reason = reason_arg(argc, argv, &id);

	if (!reason || !id || !*reason) {
		fprintf(stderr, "usage: stableq flag ID --reason TEXT\n");
		return 2;
	}
	if (flag_patch(app, id, reason, NULL) < 0)
		return fail("flag");
	printf("patch %lld flagged broken: %s\n", id, reason);
	return 0;
}

int cmd_override(struct app *app, int argc, char **argv)
{
	long long id;
	const char *reason = reason_arg(argc, argv, &id);

	if (!reason || !id || !*reason) {
		fprintf(stderr, "usage: stableq override ID --reason TEXT\n");
		return 2;
	}
	if (override_patch(app, id, reason) < 0)
		return fail("override");
	printf("patch %lld queued by override: %s\n", id, reason);
	return 0;
}

static int confirm(struct app *app, long long rid)
{
	long long cid = 0;
	int ok = revert_confirm(app, rid, progress, app);
	char *v;

	if (ok < 0)
		return fail("revert");
	db_query_int(app->db, &cid,
		     "SELECT confirm_candidate_id FROM reverts WHERE id = ?", "i",
		     rid);
	v = candidate_verdict(app->db, cid);
	printf("confirmation candidate %lld: %s\n", cid, v ? v : "?");
	free(v);
	return ok ? 0 : 3;
}

/*
 * stableq revert ID [--dry-run] [--reason TEXT] [--no-confirm]
 *       | --confirm REVERT-ID | --resume
 */
int cmd_revert(struct app *app, int argc, char **argv)
{
	long long id, rid = 0, cid = 0;
	const char *reason = reason_arg(argc, argv, &id);
	json_t *plan;
	size_t i;
	json_t *it;

	if (has(argc, argv, "--resume"))
		return revert_resume(app) < 0 ? fail("revert") : 0;
	if (argc == 3 && !strcmp(argv[1], "--confirm")) {
		if (parse_id(argv[2], &rid) < 0) {
			fprintf(stderr, "usage: stableq revert --confirm REVERT-ID\n");
			return 2;
		}
		return confirm(app, rid);
	}
	if (id && has(argc, argv, "--propose")) {
		/* auto_revert = propose: the author hears first */
		return revert_propose(app, id) < 0 ? fail("revert") : 0;
	}
	if (id && has(argc, argv, "--auto")) {
		/* the daemon's own revert, within the guards */
		int r = revert_auto(app, id, &rid, &cid);
		if (r < 0)
			return fail("revert");
		if (!r) {
			printf("patch %lld: not reverted automatically: the"
			       " plan waits for a maintainer\n",
			       id);
			return 0;
		}
		printf("revert %lld: done\n", rid);
		return cid ? confirm(app, rid) : 0;
	}
	if (!reason || !id) {
		fprintf(stderr, "usage: stableq revert ID [--dry-run|--plan]"
				" [--reason TEXT] [--no-confirm] | ID --auto|"
				"--propose | --confirm REVERT-ID | --resume\n");
		return 2;
	}
	if (has(argc, argv, "--plan")) {
		/* auto_revert = plan: stored, waiting for a maintainer */
		if (revert_store_plan(app, id, *reason ? reason
						       : "found broken; waiting"
							 " for a maintainer") < 0)
			return fail("revert");
		printf("patch %lld: revert plan stored, waiting for a"
		       " maintainer\n",
		       id);
		return 0;
	}
	plan = revert_plan(app, id);
	if (!plan)
		return fail("revert");
	if (app->json && has(argc, argv, "--dry-run")) {
		print_json(plan);
		json_decref(plan);
		return 0;
	}
	printf("plan for patch %lld (newest first):\n", id);
	json_array_foreach(json_object_get(plan, "items"), i, it)
		printf("  %-6s patch %lld \"%s\" (%s): %s\n",
		       json_string_value(json_object_get(it, "action")),
		       (long long)json_integer_value(json_object_get(it, "patch_id")),
		       json_string_value(json_object_get(it, "subject")),
		       json_string_value(json_object_get(it, "state")),
		       json_string_value(json_object_get(it, "why")));
	json_decref(plan);
	if (has(argc, argv, "--dry-run"))
		return 0;
	if (!*reason)
		reason = "reverted by a maintainer";
	on_terminal();
	if (revert_run(app, id, reason, !has(argc, argv, "--no-confirm"), &rid,
		       &cid) < 0)
		return fail("revert");
	printf("revert %lld: done\n", rid);
	return cid ? confirm(app, rid) : 0;
}

int cmd_release(struct app *app, int argc, char **argv)
{
	size_t n = 0;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--force"))) {
		fprintf(stderr, "usage: stableq release [--force]\n");
		return 2;
	}
	if (release_queue(app, argc == 2, &n) < 0)
		return fail("release");
	printf("released %zu patch%s onto %s (%s-stable)\n", n,
	       n == 1 ? "" : "es", app->cfg.branch, app->cfg.branch_key);
	return 0;
}

/* stableq verify ID: the fix's Regression-test decides (verify.h). */
int cmd_verify(struct app *app, int argc, char **argv)
{
	long long id = 0;
	char *line;

	if (argc != 2 || parse_id(argv[1], &id) < 0) {
		fprintf(stderr, "usage: stableq verify PATCH-ID\n");
		return 2;
	}
	on_terminal();
	if (verify_fix(app, id, progress, app) < 0)
		return fail("verify");
	line = verify_summary(app->db, id);
	printf("%s\n", line ? line : "?");
	free(line);
	return 0;
}
