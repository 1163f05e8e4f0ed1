/* cmd-branches.c: `stableq branches`: each configured branch, its tree and its queue. */
#include "branch.h"
#include "check.h"
#include "cli.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* {key, branch, version, tree_dir, queue_dir, patches, states {state: n}} */
static json_t *branch_json(struct app *app, const struct branch_conf *b)
{
	json_t *o = json_object(), *states = json_object();
	char *version = repo_dir_branch_version(b->tree_dir, b->branch);
	long long total = 0, bid = 0;
	json_t *got = branch_lookup(app->bc.db, b->key, 0, &bid) == 0
			      ? queue_states_by_pos(app->bc.db, bid)
			      : NULL,
	       *v;
	const char *k;

	if (got)
		json_object_foreach(got, k, v)
		{
			json_object_set(states, k, v);
			total += json_integer_value(v);
		}
	json_decref(got);
	json_object_set_new(o, "key", json_string(b->key));
	json_object_set_new(o, "branch", json_string(b->branch));
	json_object_set_new(o, "version",
			    version ? json_string(version) : json_null());
	json_object_set_new(o, "tree_dir", json_string(b->tree_dir));
	json_object_set_new(o, "queue_dir", json_string(b->queue_dir));
	json_object_set_new(o, "patches", json_integer(total));
	json_object_set_new(o, "states", states);
	/* the store learns the version the tree holds */
	if (version && branch_ctx_set_version(app->bc.db, b->key, version) < 0)
		log_warnx("branch %s: %s", b->key, err_msg());
	free(version);
	return o;
}

/* stableq branches [--json]: a line per branch. */
int cmd_branches(struct app *app, const struct cli_opts *opts, int argc, char **argv)
{
	json_t *all = json_array(), *o, *v;
	const char *state;
	size_t i;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq branches [--json]\n");
		json_decref(all);
		return 2;
	}
	for (int b = 0; b < app->bc.cfg.nbranches; b++)
		json_array_append_new(
			all, branch_json(app, &app->bc.cfg.branches[b]));
	if (app->json) {
		char *s = json_dumps(all, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
		json_decref(all);
		return 0;
	}
	json_array_foreach(all, i, o)
	{
		struct strbuf sb = STRBUF_INIT;
		json_object_foreach(json_object_get(o, "states"), state, v)
			strbuf_addf(&sb, "%s%lld %s", sb.len ? ", " : "",
				    (long long)json_integer_value(v), state);
		printf("%-6s %-14s %-10s %-20s %lld patch%s%s%s%s\n",
		       json_string_value(json_object_get(o, "key")),
		       json_string_value(json_object_get(o, "branch")),
		       json_string_value(json_object_get(o, "version"))
			       ?: "(no tree)",
		       json_string_value(json_object_get(o, "tree_dir")),
		       (long long)json_integer_value(json_object_get(o, "patches")),
		       json_integer_value(json_object_get(o, "patches")) == 1
			       ? ""
			       : "es",
		       sb.len ? " (" : "", sb.buf, sb.len ? ")" : "");
		strbuf_release(&sb);
	}
	json_decref(all);
	return 0;
}
