/* cmd-token.c: `stableq token add NAME | list | remove NAME`: API tokens. */
#include "cli.h"
#include "err.h"
#include "token.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "usage: stableq token add NAME [--scope read|write|admin]\n"
			"       stableq token list [--json]\n"
			"       stableq token remove NAME\n");
	return 2;
}

static int token_cmd_add(struct app *app, const char *name,
			 const char *scope_name)
{
	char *secret = NULL;
	int scope = scope_name ? token_scope_parse(scope_name) : TOKEN_ADMIN;

	if (scope < 0) {
		fprintf(stderr, "stableq token add: %s\n", err_msg());
		return 2;
	}
	if (token_add_scoped(app->bc.db, name, scope, app->bc.actor, &secret) <
	    0) {
		fprintf(stderr, "stableq token add: %s\n", err_msg());
		return 1;
	}
	/* The secret is printed once and never stored: keep it now. */
	printf("%s\n", secret);
	fflush(stdout);
	fprintf(stderr, "token '%s' (%s) added; it is shown only this once."
			" Use it as: Authorization: Bearer <token>\n",
		name, token_scope_name(scope));
	free(secret);
	return 0;
}

static int token_cmd_list(struct app *app)
{
	json_t *list = token_list_json(app->bc.db), *t;
	size_t i;

	if (!list) {
		fprintf(stderr, "stableq token list: %s\n", err_msg());
		return 1;
	}
	if (app->json) {
		char *s = json_dumps(list, JSON_INDENT(2));
		if (s)
			puts(s);
		free(s);
	} else {
		json_array_foreach(list, i, t)
		{
			printf("%-24s %-6s %s\n",
			       json_string_value(json_object_get(t, "name")),
			       json_string_value(json_object_get(t, "scope")),
			       json_string_value(
				       json_object_get(t, "created_at")));
		}
	}
	json_decref(list);
	return 0;
}

const struct option token_opts[] = {
	{ "scope", required_argument, NULL, 's' },
	{ NULL, 0, NULL, 0 },
};

int cmd_token(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (argc == 3 && !strcmp(what, "add"))
		return token_cmd_add(app, argv[2], o->v['s']);
	if (o->v['s'])
		return usage(); /* --scope belongs to add */
	if (argc == 2 && !strcmp(what, "list"))
		return token_cmd_list(app);
	if (argc == 3 && !strcmp(what, "remove")) {
		if (token_remove(app->bc.db, argv[2], app->bc.actor) < 0) {
			fprintf(stderr, "stableq token remove: %s\n", err_msg());
			return 1;
		}
		return 0;
	}
	return usage();
}
