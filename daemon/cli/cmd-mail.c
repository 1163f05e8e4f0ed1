/* cmd-mail.c: `stableq mail list|show|send|release`: the outbox and its delivery. */
#include "cli.h"
#include "db.h"
#include "err.h"
#include "guard.h"
#include "outbox.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAIL_USAGE                                                             \
	"usage: stableq mail list [--json] [--state STATE]\n"                  \
	"       stableq mail show ID\n"                                        \
	"       stableq mail send [--max N]\n"                                 \
	"       stableq mail release ID...|--all\n"

static const char *const mail_states[] = {"queued", "sending", "sent",
					  "failed", "invalid", NULL};

static void utc(char *out, size_t n, long long t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *jstr(json_t *row, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(row, key));
	return s ? s : def;
}

/* The first address of the stored JSON array, or "-". */
static const char *first_rcpt(json_t *arr)
{
	const char *s = json_string_value(json_array_get(arr, 0));
	return s ? s : "-";
}

const struct option mail_opts[] = {
	{ "state", required_argument, NULL, 's' },
	{ "max", required_argument, NULL, 'm' },
	{ "all", no_argument, NULL, 'a' },
	{ NULL, 0, NULL, 0 },
};

/* 1 when o holds none of mail_opts but those named in allowed. */
static int only(const struct cli_opts *o, const char *allowed)
{
	for (const struct option *opt = mail_opts; opt->name; opt++)
		if (o->v[opt->val] && !strchr(allowed, opt->val))
			return 0;
	return 1;
}

static int mail_list(struct app *app, const struct cli_opts *o, int argc,
		     char **argv)
{
	const char *state = NULL;
	json_t *rows;
	size_t i;
	json_t *row;

	if (argc > 1 || !only(o, "s")) {
		fputs(MAIL_USAGE, stderr);
		return 2;
	}
	state = o->v['s'];
	if (state) {
		int known = 0;
		for (const char *const *s = mail_states; *s; s++)
			known |= !strcmp(*s, state);
		if (!known) {
			fprintf(stderr,
				"stableq mail: unknown state '%s' (queued, "
				"sending, sent, failed, invalid)\n",
				state);
			return 2;
		}
	}
	rows = outbox_all_json(app->bc.db, state);
	if (!rows) {
		fprintf(stderr, "stableq mail: %s\n", err_msg());
		return 1;
	}
	/* rcpt_to is stored as JSON text: show it as the array it is */
	json_array_foreach(rows, i, row)
	{
		const char *t =
			json_string_value(json_object_get(row, "rcpt_to"));
		json_t *arr = t ? json_loads(t, 0, NULL) : NULL;
		json_object_set_new(row, "rcpt_to", arr ? arr : json_array());
	}
	if (app->json) {
		char *s = json_dumps(rows, JSON_INDENT(2));
		puts(s);
		free(s);
		json_decref(rows);
		return 0;
	}
	printf("%-5s %-8s %-5s %-20s %-6s %-9s %s\n", "ID", "STATE", "TRIES",
	       "NEXT ATTEMPT", "PATCH", "KIND", "TO");
	json_array_foreach(rows, i, row)
	{
		const char *st =
			json_string_value(json_object_get(row, "state"));
		const char *err =
			json_string_value(json_object_get(row, "last_error"));
		const char *hold =
			json_string_value(json_object_get(row, "hold"));
		char next[32] = "-";
		if (hold)
			st = "held"; /* queued, waiting for a maintainer */
		if (st && !strcmp(st, "queued"))
			utc(next, sizeof(next),
			    json_integer_value(
				    json_object_get(row, "next_attempt_at")));
		else if (st && !strcmp(st, "sent"))
			snprintf(next, sizeof(next), "sent %s",
				 jstr(row, "sent_at", ""));
		printf("%-5lld %-8s %-5lld %-20s %-6lld %-9s %s\n",
		       (long long)json_integer_value(
			       json_object_get(row, "id")),
		       st ? st : "?",
		       (long long)json_integer_value(
			       json_object_get(row, "attempts")),
		       next,
		       (long long)json_integer_value(
			       json_object_get(row, "patch_id")),
		       jstr(row, "kind", "?"),
		       first_rcpt(json_object_get(row, "rcpt_to")));
		if (err)
			printf("      error: %s\n", err);
		if (hold)
			printf("      held: %s\n", hold);
	}
	json_decref(rows);
	return 0;
}

static int mail_show(struct app *app, const struct cli_opts *o, int argc,
		     char **argv)
{
	char *text = NULL, *end;
	long long id;
	int ret;

	if (argc != 2 || !only(o, "") ||
	    (id = strtoll(argv[1], &end, 10)) <= 0 || *end) {
		fputs(MAIL_USAGE, stderr);
		return 2;
	}
	ret = outbox_text(app->bc.db, id, &text);
	if (ret == ERR_NOTFOUND) {
		fprintf(stderr, "stableq mail: no mail %lld\n", id);
		return 1;
	}
	if (ret < 0) {
		fprintf(stderr, "stableq mail: %s\n", err_msg());
		return 1;
	}
	/* the terminal gets LF line ends; the relay gets CRLF */
	for (const char *p = text; p && *p; p++)
		if (!(p[0] == '\r' && p[1] == '\n'))
			putchar(*p);
	free(text);
	return 0;
}

struct send_tally {
	int sent, not_sent;
};

static void print_report(const struct outbox_report *r, void *arg)
{
	struct send_tally *t = arg;

	if (!strcmp(r->state, "sent")) {
		t->sent++;
		printf("mail %lld: sent to %s (patch %lld, attempt %d)\n",
		       r->mail_id, r->rcpt, r->patch_id, r->attempts);
	} else if (!strcmp(r->state, "queued")) {
		char next[32];
		t->not_sent++;
		utc(next, sizeof(next), r->next_attempt_at);
		printf("mail %lld: queued, attempt %d failed, next at %s: %s\n",
		       r->mail_id, r->attempts, next, r->error);
	} else {
		t->not_sent++;
		printf("mail %lld: failed after %d attempts: %s\n", r->mail_id,
		       r->attempts, r->error);
	}
	fflush(stdout);
}

static int mail_send(struct app *app, const struct cli_opts *o, int argc,
		     char **argv)
{
	struct send_tally t = {0, 0};
	long long waiting = 0;
	int max = 0, ret;
	char *end;

	if (argc > 1 || !only(o, "m")) {
		fputs(MAIL_USAGE, stderr);
		return 2;
	}
	if (o->v['m']) {
		long v = strtol(o->v['m'], &end, 10);
		if (*end || v <= 0 || v > 1000000) {
			fputs(MAIL_USAGE, stderr);
			return 2;
		}
		max = (int)v;
	}
	ret = outbox_deliver_report(app->bc.db, &app->bc.cfg, max, print_report,
				    &t);
	if (ret < 0) {
		fprintf(stderr, "stableq mail: %s\n", err_msg());
		return 1;
	}
	if (outbox_waiting(app->bc.db, (long long)time(NULL), &waiting) < 0) {
		fprintf(stderr, "stableq mail: %s\n", err_msg());
		return 1;
	}
	if (!t.sent && !t.not_sent)
		printf("mail: nothing sent; %lld due\n", waiting);
	if (guard_held_count(app->bc.db))
		printf("mail: %lld held by the bulk-mail guard: `stableq mail"
		       " release` sends them\n",
		       guard_held_count(app->bc.db));
	/* 1 tells a script that due mail is still waiting or failed */
	return t.not_sent || waiting ? 1 : 0;
}

/* A maintainer lets mail held by the bulk-mail guard go. */
static int mail_release_cmd(struct app *app, const struct cli_opts *o,
			    int argc, char **argv)
{
	long long *ids = xcalloc((size_t)argc, sizeof(*ids));
	size_t n = 0;
	int all = 0, ret;
	char *end;

	all = o->v['a'] != NULL;
	for (int a = 1; a < argc; a++) {
		if ((ids[n] = strtoll(argv[a], &end, 10)) > 0 && !*end) {
			n++;
		} else {
			fprintf(stderr, "stableq mail: '%s' is not a mail id\n",
				argv[a]);
			free(ids);
			return 2;
		}
	}
	if (all == !!n || !only(o, "a")) {
		fputs(MAIL_USAGE, stderr);
		free(ids);
		return 2;
	}
	ret = guard_release(app->bc.db, ids, n, app->bc.actor);
	free(ids);
	if (ret < 0) {
		fprintf(stderr, "stableq mail: %s\n", err_msg());
		return 1;
	}
	printf("mail: %d released; they go out with the next delivery\n", ret);
	return 0;
}

static const struct {
	const char *name;
	int (*run)(struct app *, const struct cli_opts *, int, char **);
} subcommands[] = {
	{"list", mail_list},
	{"show", mail_show},
	{"send", mail_send},
	{"release", mail_release_cmd},
};

int cmd_mail(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	if (argc >= 2)
		for (size_t i = 0;
		     i < sizeof(subcommands) / sizeof(*subcommands); i++)
			if (!strcmp(argv[1], subcommands[i].name))
				return subcommands[i].run(app, o, argc - 1,
							  argv + 1);
	fputs(MAIL_USAGE, stderr);
	return 2;
}
