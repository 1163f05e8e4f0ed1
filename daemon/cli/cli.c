/* cli.c: what the commands share: ids, progress lines, JSON, errors. */
#include "cli.h"
#include "err.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void cli_progress(const char *line, void *ctx)
{
	struct app *app = ctx;

	progress_interrupt();
	fprintf(app->json ? stderr : stdout, "%s\n", line);
	fflush(app->json ? stderr : stdout);
}

int cli_parse_id(const char *s, long long *id)
{
	char *end;

	*id = s ? strtoll(s, &end, 10) : 0;
	return s && *s && !*end && *id > 0 ? 0 : -1;
}

long long cli_patch_arg(int argc, char **argv)
{
	long long id = 0;

	return argc == 2 && cli_parse_id(argv[1], &id) == 0 ? id : 0;
}

long long cli_patch_reason(const struct cli_opts *o, int argc, char **argv,
			   const char **reason)
{
	long long id = cli_patch_arg(argc, argv);

	*reason = o->v['r'];
	if (!id || !*reason || !**reason) {
		fprintf(stderr, "usage: stableq %s ID --reason TEXT\n", argv[0]);
		return 0;
	}
	return id;
}

void cli_on_terminal(void)
{
	if (isatty(2))
		progress_terminal(2);
}

int cli_print_json(json_t *j)
{
	char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;

	if (!s)
		return 1;
	puts(s);
	free(s);
	return 0;
}

int cli_fail(const char *cmd)
{
	fprintf(stderr, "stableq %s: %s\n", cmd, err_msg());
	return 1;
}
