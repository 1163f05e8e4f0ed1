/* tqueue.h: a store in a temp dir and patches added through the queue, for unit tests. */
#ifndef STABLEQ_TQUEUE_H
#define STABLEQ_TQUEUE_H

#include "ctx.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "patch.h"
#include "queue.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * A config file in dir naming a store and var/ there, plus the lines of
 * conf ("" for none), loaded and opened; exits on failure.
 */
static inline void tq_open(struct branch_ctx *bc, const char *dir,
			   const char *conf)
{
	char *path = xstrfmt("%s/stableq.conf", dir);
	char *text = xstrfmt("db = %s/t.db\nvar_dir = %s/var\n%s", dir, dir,
			     conf);

	memset(bc, 0, sizeof(*bc));
	if (write_file_atomic(path, text, strlen(text)) < 0 ||
	    config_load(&bc->cfg, path) < 0)
		goto fail;
	bc->actor = "test";
	if (branch_ctx_open_db(bc) < 0 ||
	    db_exec(bc->db,
		    "INSERT INTO sources (kind, path) VALUES"
		    " ('patch', 'tqueue.h')",
		    NULL) < 0)
		goto fail;
	free(path);
	free(text);
	return;
fail:
	printf("Bail out! the store: %s\n", err_msg());
	exit(1);
}

static inline void tq_close(struct branch_ctx *bc)
{
	db_close(bc->db);
	config_free(&bc->cfg);
}

/*
 * Adds a patch to the selected branch's queue: its Subject: line as given
 * ("[PATCH 1/2] x: y"), trailers ("" for none; a "commit SHA upstream."
 * line may come first), the message id <tag@t> and diff; returns its id.
 */
static inline long long tq_add_diff(struct branch_ctx *bc, const char *tag,
				    const char *subject, const char *trailers,
				    const char *diff)
{
	struct patch *p = NULL;
	long long id = 0;
	char *mail = xstrfmt(
		"From: Jane Dev <jane@example.org>\n"
		"Subject: %s\n"
		"Message-Id: <%s@t>\n\n"
		"Body.\n\n%s%sSigned-off-by: Jane Dev <jane@example.org>\n"
		"---\n%s",
		subject, tag, trailers, *trailers ? "\n" : "", diff);

	if (patch_parse(&p, mail, strlen(mail), tag, 1 << 20) < 0 ||
	    queue_add(bc->db, bc->branch_id, p, 1, bc->actor, &id) < 0) {
		printf("Bail out! patch %s: %s\n", tag, err_msg());
		exit(1);
	}
	patch_free(p);
	free(mail);
	return id;
}

/*
 * ... whose diff changes file's line n (n > 1), "line N", to "line N
 * fixed", with a line of context either side.
 */
static inline long long tq_add(struct branch_ctx *bc, const char *tag,
			       const char *subject, const char *trailers,
			       const char *file, int n)
{
	char *diff = xstrfmt("--- a/%s\n+++ b/%s\n@@ -%d,3 +%d,3 @@\n"
			     " line %d\n-line %d\n+line %d fixed\n line %d\n",
			     file, file, n - 1, n - 1, n - 1, n, n, n + 1);
	long long id = tq_add_diff(bc, tag, subject, trailers, diff);

	free(diff);
	return id;
}

#endif
