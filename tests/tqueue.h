/* tqueue.h: a store in a temp dir and patches added through the queue, for unit tests. */
#ifndef STABLEQ_TQUEUE_H
#define STABLEQ_TQUEUE_H

#include "app.h"
#include "db.h"
#include "err.h"
#include "patch.h"
#include "queue.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>

/* The default config with its store and var/ under dir; exits on failure. */
static inline void tq_open(struct app *app, const char *dir)
{
	memset(app, 0, sizeof(*app));
	if (config_load(&app->cfg, NULL) < 0)
		goto fail;
	free(app->cfg.db);
	app->cfg.db = xstrfmt("%s/t.db", dir);
	free(app->cfg.var_dir);
	app->cfg.var_dir = xstrfmt("%s/var", dir);
	app->actor = "test";
	if (app_open_db(app) < 0 ||
	    db_exec(app->db, "INSERT INTO sources (kind, path) VALUES"
			     " ('patch', 'tqueue.h')", NULL) < 0)
		goto fail;
	return;
fail:
	printf("Bail out! the store: %s\n", err_msg());
	exit(1);
}

static inline void tq_close(struct app *app)
{
	db_close(app->db);
	config_free(&app->cfg);
}

/*
 * Adds a patch changing file's line n to the selected branch's queue, with
 * trailers ("" for none) and the message id <tag@t>; returns its id.
 */
static inline long long tq_add(struct app *app, const char *tag,
			       const char *subject, const char *trailers,
			       const char *file, int n)
{
	struct patch *p = NULL;
	long long id = 0;
	char *mail = xstrfmt(
		"From: Jane Dev <jane@example.org>\n"
		"Subject: [PATCH] %s\n"
		"Message-Id: <%s@t>\n\n"
		"Body of %s.\n\n%s%sSigned-off-by: Jane Dev <jane@example.org>\n"
		"---\n"
		"--- a/%s\n+++ b/%s\n@@ -%d,1 +%d,1 @@\n-line %d\n+line %d fixed\n",
		subject, tag, subject, trailers, *trailers ? "\n" : "", file,
		file, n, n, n, n);

	if (patch_parse(&p, mail, strlen(mail), tag, 1 << 20) < 0 ||
	    queue_add(app->db, app->branch_id, p, 1, &id) < 0) {
		printf("Bail out! patch %s: %s\n", tag, err_msg());
		exit(1);
	}
	patch_free(p);
	free(mail);
	return id;
}

#endif
