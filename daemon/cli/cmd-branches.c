/* cmd-branches.c: `stableq branches`: each branch, its tree, its queue and what it waits for. */
#include "branch-status.h"
#include "cli.h"
#include "err.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *text_of(json_t *o, const char *key, const char *none)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s && *s ? s : none;
}

/* "6.1    linux-6.1.y    6.1.10     var/linux   2 patches (1 queued, ...)" */
static void print_branch(json_t *o)
{
	struct strbuf sb = STRBUF_INIT;
	long long total = 0, n;
	const char *state;
	json_t *v;

	json_object_foreach(json_object_get(o, "patches"), state, v)
	{
		if (!(n = json_integer_value(v)))
			continue;
		strbuf_addf(&sb, "%s%lld %s", sb.len ? ", " : "", n, state);
		total += n;
	}
	printf("%-6s %-14s %-10s %-20s %lld patch%s%s%s%s\n",
	       text_of(o, "key", ""), text_of(o, "git_branch", ""),
	       text_of(o, "version", "(no tree)"),
	       text_of(o, "tree", "(not configured)"), total,
	       total == 1 ? "" : "es", sb.len ? " (" : "", sb.buf,
	       sb.len ? ")" : "");
	if (json_is_string(json_object_get(o, "doing")))
		printf("       doing: %s\n", text_of(o, "doing", ""));
	printf("       waits for: %s\n", text_of(o, "waits_for", ""));
	strbuf_release(&sb);
}

/* stableq branches [--json]: GET /branches's answer, or a line per branch. */
int cmd_branches(struct app *app, const struct cli_opts *opts, int argc, char **argv)
{
	json_t *all, *o;
	size_t i;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq branches [--json]\n");
		return 2;
	}
	if (branch_status_refresh(&app->bc) < 0 ||
	    !(all = branch_status_json(&app->bc))) {
		fprintf(stderr, "stableq branches: %s\n", err_msg());
		return 1;
	}
	if (app->json) {
		char *s = json_dumps(all, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
	} else {
		json_array_foreach(json_object_get(all, "branches"), i, o)
			print_branch(o);
	}
	json_decref(all);
	return 0;
}
