/* cmd-queue.c: `stableq import`, `queue` and `show`: intake and reading the store. */
#include "check.h"
#include "cli.h"
#include "coverage.h"
#include "gcov.h"
#include "db.h"
#include "err.h"
#include "intake.h"
#include "queue.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Text from the store as it may go to a terminal: control characters in
 * caret form (ESC as ^[, DEL as ^?, the C1 CSI as M-^[), so that no stored
 * byte moves the cursor or rewrites the screen, whatever intake let in
 * before it cleaned headers. The result lives until eight more calls.
 */
static const char *tty(const char *s)
{
	static struct strbuf ring[8];
	static unsigned next;
	struct strbuf *sb = &ring[next++ % 8];

	if (!s)
		return NULL;
	strbuf_reset(sb);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f) {
			strbuf_addch(sb, '^');
			strbuf_addch(sb, c == 0x7f ? '?' : c + '@');
		} else if (c == 0xc2 && (unsigned char)s[1] >= 0x80 &&
			   (unsigned char)s[1] <= 0x9f) {
			strbuf_addstr(sb, "M-^");
			strbuf_addch(sb, (unsigned char)s[1] - 0x80 + '@');
			s++;
		} else {
			strbuf_addch(sb, c);
		}
	}
	return sb->buf ? sb->buf : "";
}

static int print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (!s)
		return 1;
	puts(s);
	free(s);
	return 0;
}

/* "applies=clean fixes=present" from a verdicts object. */
static void verdict_line(struct strbuf *sb, json_t *verdicts)
{
	const char *check;
	json_t *v;

	json_object_foreach(verdicts, check, v)
	{
		strbuf_addf(sb, "%s%s=%s", sb->len ? " " : "", check,
			    json_string_value(json_object_get(v, "result")));
	}
}

/* What the checks of an import found, branch by branch. */
static void print_checked(const char *key, int ret,
			  const struct check_summary *sum, void *ctx)
{
	struct app *app = ctx;

	if (!sum) {
		if (app->bc.cfg.nbranches > 1)
			printf("branch %s:\n", key);
	} else if (ret == ERR_NOTFOUND) {
		printf("checks not run: %s\n", tty(err_msg()));
	} else if (ret < 0) {
		fprintf(stderr, "stableq import: checks: %s\n", tty(err_msg()));
	} else {
		check_summary_print(sum, stdout);
	}
}

/* What the import stored, before its checks run. */
static void print_imported(const struct intake_result *res, void *ctx)
{
	(void)ctx;
	printf("imported %zu new patch%s, %zu already known", res->added,
	       res->added == 1 ? "" : "es", res->duplicates);
	if (res->own)
		printf(", %zu revert%s of stableq's own left alone", res->own,
		       res->own == 1 ? "" : "s");
	putchar('\n');
	for (char *l = res->notes, *nl; l && (nl = strchr(l, '\n'));
	     l = nl + 1) {
		*nl = '\0'; /* a line each, control bytes in caret form */
		printf("%s\n", tty(l));
		*nl = '\n';
	}
}

int cmd_import(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	struct intake_source src = { .paths = (const char *const *)argv + 1,
				     .npaths = (size_t)argc - 1 };
	struct intake_report rep = { print_imported, print_checked, app };
	struct intake_result res;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: stableq import PATH...\n");
		return 2;
	}
	if (intake_submit(&app->bc,
			  app->bc.branch_given ? app->bc.branch_id : 0, &src,
			  &rep, &res) < 0) {
		fprintf(stderr, "stableq import: %s\n", tty(err_msg()));
		return 1;
	}
	ret = res.checks < 0 ? 1 : 0;
	intake_result_release(&res);
	return ret;
}

int cmd_check(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	long long *ids = NULL;
	size_t n = 0;
	struct check_summary sum;
	int ret;

	if (argc > 1) {
		ids = xcalloc((size_t)argc, sizeof(*ids));
		for (int i = 1; i < argc; i++) {
			char *end;
			ids[n++] = strtoll(argv[i], &end, 10);
			if (*end || end == argv[i] || ids[n - 1] <= 0) {
				fprintf(stderr, "stableq check: '%s' is not a patch id\n",
					argv[i]);
				free(ids);
				return 2;
			}
		}
	}
	/* the patches named are checked on their branch */
	ret = n ? queue_follow_patch(&app->bc, ids[0]) : 0;
	if (ret >= 0)
		ret = check_run(&app->bc, ids, n, &sum);
	free(ids);
	if (ret < 0) {
		fprintf(stderr, "stableq check: %s\n", tty(err_msg()));
		return 1;
	}
	if (app->json)
		return print_json(sum.json);
	check_summary_print(&sum, stdout);
	json_decref(sum.json);
	return 0;
}

const struct option queue_opts[] = {
	{ "state", required_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 },
};

int cmd_queue(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	const char *state = o->v['s'];
	json_t *list, *p;
	size_t i;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq queue [--json] [--state S]\n");
		return 2;
	}
	if (state && queue_state_parse(state) < 0) {
		fprintf(stderr, "stableq queue: unknown state '%s'\n", state);
		return 2;
	}
	list = queue_list_json_branch(app->bc.db, app->bc.branch_id, state, 0,
				      0, NULL, LIST_FULL);
	if (!list) {
		fprintf(stderr, "stableq queue: %s\n", tty(err_msg()));
		return 1;
	}
	if (app->json) {
		int r = print_json(list);
		json_decref(list);
		return r;
	}
	json_array_foreach(list, i, p)
	{
		struct strbuf v = STRBUF_INIT;
		verdict_line(&v, json_object_get(p, "verdicts"));
		printf("%4lld  %-9s %s\n      %s\n",
		       (long long)json_integer_value(json_object_get(p, "id")),
		       json_string_value(json_object_get(p, "state")),
		       tty(json_string_value(json_object_get(p, "subject"))),
		       v.len ? tty(v.buf) : "(not checked)");
		strbuf_release(&v);
	}
	json_decref(list);
	return 0;
}

int cmd_show(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	json_t *p, *v, *arr;
	const char *check;
	char *end;
	long long id;
	size_t i;

	if (argc != 2 || (id = strtoll(argv[1], &end, 10)) <= 0 || *end) {
		fprintf(stderr, "usage: stableq show [--json] ID\n");
		return 2;
	}
	p = queue_patch_json(app->bc.db, id, 1);
	if (!p) {
		fprintf(stderr, "stableq show: %s\n", tty(err_msg()));
		return 1;
	}
	json_object_set_new(p, "coverage", coverage_patch_json(app->bc.db, id));
	if (app->json) {
		int r = print_json(p);
		json_decref(p);
		return r;
	}
#define S(k) (tty(json_string_value(json_object_get(p, k))) ?: "-")
	printf("patch %lld: %s\n", id, S("subject"));
	printf("  state:      %s%s%s\n", S("state"),
	       json_is_string(json_object_get(p, "state_reason")) ? " - " : "",
	       json_is_string(json_object_get(p, "state_reason"))
		       ? S("state_reason")
		       : "");
	printf("  branch:     %s\n", S("branch"));
	printf("  author:     %s <%s>\n", S("author_name"), S("author_email"));
	printf("  message-id: %s\n  upstream:   %s\n", S("message_id"),
	       S("upstream"));
	json_array_foreach(json_object_get(p, "fixes"), i, v)
		printf("  fixes:      %s\n", tty(json_string_value(v)));
	json_array_foreach(json_object_get(p, "stable_versions"), i, v)
		printf("  stable:     %s\n", tty(json_string_value(v)));
	json_array_foreach(json_object_get(p, "stable_dep_of"), i, v)
		printf("  dep-of:     %s\n", tty(json_string_value(v)));
	json_array_foreach(json_object_get(p, "files"), i, v)
		printf("  file:       %s %s\n",
		       json_string_value(json_object_get(v, "change")),
		       tty(json_string_value(json_object_get(v, "path"))));
	json_object_foreach(json_object_get(p, "verdicts"), check, v)
		printf("  %-10s  %s: %s\n", check,
		       json_string_value(json_object_get(v, "result")),
		       tty(json_string_value(json_object_get(v, "detail"))));
	v = json_object_get(p, "coverage");
	if (json_is_object(v)) {
		json_t *f;
		printf("  coverage:   %s (candidate %lld)\n",
		       json_string_value(json_object_get(v, "status")),
		       (long long)json_integer_value(
			       json_object_get(v, "candidate_id")));
		json_array_foreach(json_object_get(v, "files"), i, f) {
			char *line = coverage_file_text(f);
			printf("    %s\n", tty(line));
			free(line);
		}
	}
	/* which of its changed lines the test set ran (a coverage boot) */
	v = json_object_get(v, "lines");
	if (json_is_object(v)) {
		json_t *f;
		printf("  lines:      %s (candidate %lld)\n",
		       tty(json_string_value(json_object_get(v, "text"))),
		       (long long)json_integer_value(
			       json_object_get(v, "candidate_id")));
		json_array_foreach(json_object_get(v, "files"), i, f) {
			char *line = gcov_file_line(f);
			printf("    %s\n", tty(line));
			free(line);
		}
	}
	arr = json_object_get(p, "events");
	json_array_foreach(arr, i, v)
		printf("  event %s %s %s: %s\n",
		       json_string_value(json_object_get(v, "at")),
		       tty(json_string_value(json_object_get(v, "actor"))),
		       json_string_value(json_object_get(v, "kind")),
		       tty(json_string_value(json_object_get(v, "detail"))) ?: "");
#undef S
	json_decref(p);
	return 0;
}
