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
	return o->v[c] ? parse_id(o->v[c], id) : 0;
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
	on_terminal();
	/* a stored candidate (or --upto's patch) decides the branch */
	if ((run && queue_follow_candidate(&app->bc, run) < 0) ||
	    (upto && queue_follow_patch(&app->bc, upto) < 0))
		return fail("candidate");
	id = run ? run
		 : candidate_create_on(app->bc.db, app->bc.branch_id, NULL, 0,
				       upto, "queue", 0, app->bc.actor);
	if (id < 0)
		return fail("candidate");
	if (candidate_run(&app->bc, id, 1, progress, app) < 0)
		return fail("candidate");
	return show_candidate(app, id);
}

const struct option bisect_opts[] = {
	{ "steps", required_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 },
};

int cmd_bisect(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long cid = 0, bid = 0, steps = -1;
	json_t *j;

	if (argc > 2 || (argc == 2 && parse_id(argv[1], &cid) < 0) ||
	    (o->v['n'] && parse_id(o->v['n'], &steps) < 0)) {
		fprintf(stderr, "usage: stableq bisect [CANDIDATE-ID]"
				" [--steps N] [--json]\n");
		return 2;
	}
	if (!cid &&
	    candidate_last_failed(app->bc.db, app->bc.branch_id, &cid) < 0) {
		fprintf(stderr, "stableq bisect: no failing candidate\n");
		return 1;
	}
	on_terminal();
	if (queue_follow_candidate(&app->bc, cid) < 0 ||
	    bisect_run(&app->bc, cid,
		       steps > 0 && steps < 1000 ? (int)steps : -1, &bid,
		       progress, app) < 0)
		return fail("bisect");
	j = bisect_json(app->bc.db, bid);
	if (app->json) {
		print_json(j);
	} else {
		char *line = bisect_summary(app->bc.db, bid);
		printf("%s\n", line);
		free(line);
		if (json_string_value(json_object_get(j, "detail")))
			printf("  %s\n",
			       json_string_value(json_object_get(j, "detail")));
	}
	json_decref(j);
	return 0;
}

const struct option reason_opts[] = {
	{ "reason", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 },
};

/* The one operand of flag, override and revert: a patch id, else 0. */
static long long patch_arg(int argc, char **argv)
{
	long long id = 0;

	return argc == 2 && parse_id(argv[1], &id) == 0 ? id : 0;
}

int cmd_flag(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long id = patch_arg(argc, argv);
	const char *reason = o->v['r'];

	if (!reason || !id || !*reason) {
		fprintf(stderr, "usage: stableq flag ID --reason TEXT\n");
		return 2;
	}
	if (flag_patch(&app->bc, id, reason, NULL) < 0)
		return fail("flag");
	printf("patch %lld flagged broken: %s\n", id, reason);
	return 0;
}

int cmd_override(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long id = patch_arg(argc, argv);
	const char *reason = o->v['r'];

	if (!reason || !id || !*reason) {
		fprintf(stderr, "usage: stableq override ID --reason TEXT\n");
		return 2;
	}
	if (override_patch(&app->bc, id, reason) < 0)
		return fail("override");
	printf("patch %lld queued by override: %s\n", id, reason);
	return 0;
}

/* A revert's confirmation: what `stableq revert ID` runs at once and the
 * daemon runs as `revert --confirm ID` (revert_run()). */
static int confirm(struct app *app, long long rid)
{
	long long cid = 0;
	int ok = revert_confirm(&app->bc, rid, &cid, progress, app);
	char *v;

	if (ok < 0)
		return fail("revert");
	v = candidate_verdict(app->bc.db, cid);
	printf("confirmation candidate %lld: %s\n", cid, v ? v : "?");
	free(v);
	return ok ? 0 : 3;
}

const struct option revert_opts[] = {
	{ "reason", required_argument, NULL, 'r' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "plan", no_argument, NULL, 'p' },
	{ "no-confirm", no_argument, NULL, 'N' },
	{ "auto", no_argument, NULL, 'a' },
	{ "propose", no_argument, NULL, 'P' },
	{ "confirm", required_argument, NULL, 'C' },
	{ "resume", no_argument, NULL, 'R' },
	{ NULL, 0, NULL, 0 },
};

/*
 * stableq revert ID [--dry-run] [--reason TEXT] [--no-confirm]
 *       | --confirm REVERT-ID | --resume
 */
int cmd_revert(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long id = patch_arg(argc, argv), rid = 0, cid = 0;
	const char *reason = o->v['r'] ? o->v['r'] : "";
	json_t *plan;
	size_t i;
	json_t *it;

	if (o->v['R'])
		return revert_resume(&app->bc) < 0 ? fail("revert") : 0;
	if (o->v['C']) {
		if (argc > 1 || parse_id(o->v['C'], &rid) < 0) {
			fprintf(stderr, "usage: stableq revert --confirm REVERT-ID\n");
			return 2;
		}
		return confirm(app, rid);
	}
	if (id && o->v['P']) {
		/* auto_revert = propose: the author hears first */
		return revert_propose(&app->bc, id) < 0 ? fail("revert") : 0;
	}
	if (id && o->v['a']) {
		/* the daemon's own revert, within the guards */
		int r = revert_auto(&app->bc, id, &rid, &cid);
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
	if (!id) {
		fprintf(stderr, "usage: stableq revert ID [--dry-run|--plan]"
				" [--reason TEXT] [--no-confirm] | ID --auto|"
				"--propose | --confirm REVERT-ID | --resume\n");
		return 2;
	}
	if (o->v['p']) {
		/* auto_revert = plan: stored, waiting for a maintainer */
		if (revert_store_plan(&app->bc, id,
				      *reason ? reason
					      : "found broken; waiting"
						" for a maintainer") < 0)
			return fail("revert");
		printf("patch %lld: revert plan stored, waiting for a"
		       " maintainer\n",
		       id);
		return 0;
	}
	plan = revert_plan(&app->bc, id);
	if (!plan)
		return fail("revert");
	if (app->json && o->v['n']) {
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
	if (o->v['n'])
		return 0;
	if (!*reason)
		reason = "reverted by a maintainer";
	on_terminal();
	if (revert_run(&app->bc, id, reason, !o->v['N'], &rid, &cid) < 0)
		return fail("revert");
	printf("revert %lld: done\n", rid);
	return cid ? confirm(app, rid) : 0;
}

const struct option release_opts[] = {
	{ "force", no_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

int cmd_release(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	size_t n = 0;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq release [--force]\n");
		return 2;
	}
	if (release_queue(&app->bc, o->v['f'] != NULL, &n) < 0)
		return fail("release");
	printf("released %zu patch%s onto %s (%s-stable)\n", n,
	       n == 1 ? "" : "es", app->bc.cfg.branch, app->bc.cfg.branch_key);
	return 0;
}

/* stableq verify ID: the fix's Regression-test decides (verify.h). */
int cmd_verify(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long id = 0;
	char *line;

	if (argc != 2 || parse_id(argv[1], &id) < 0) {
		fprintf(stderr, "usage: stableq verify PATCH-ID\n");
		return 2;
	}
	on_terminal();
	if (verify_fix(&app->bc, id, progress, app) < 0)
		return fail("verify");
	line = verify_summary(app->bc.db, id);
	printf("%s\n", line ? line : "?");
	free(line);
	return 0;
}
