/* rc.c: `stableq rc`: the review series out to the list, its window and testers. */
#include "rc.h"
#include "ctx.h"
#include "check.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "repo.h"
#include "log.h"
#include "mailhdr.h"
#include "mime.h"
#include "compose.h"
#include "outbox.h"
#include "patch.h"
#include "queue.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* "6.1.10" -> "6.1.11"; NULL when it is not X.Y.Z */
static char *next_version(const char *v)
{
	int a, b, c;

	if (!v || sscanf(v, "%d.%d.%d", &a, &b, &c) != 3)
		return NULL;
	return xstrfmt("%d.%d.%d", a, b, c + 1);
}

/* The version the next release will have, and its rc number. */
static int rc_version(struct branch_ctx *bc, char **out)
{
	char *tree = repo_dir_branch_version(bc->cfg.tree_dir, bc->cfg.branch);
	char *next = next_version(tree), *released = NULL;
	long long n = 0;

	free(tree);
	if (!next)
		return err_set(
			ERR_NOTFOUND,
			"branch %s: no X.Y.Z version for %s in %s (stableq"
			" tree init)",
			bc->cfg.branch_key, bc->cfg.branch, bc->cfg.tree_dir);
	/* released already: the one after it */
	db_query_text(
		bc->db, &released,
		"SELECT substr(version, 1, instr(version, '-rc') - 1) FROM"
		" rcs WHERE branch_id = ? AND state = 'released' ORDER BY"
		" id DESC LIMIT 1",
		"i", bc->branch_id);
	while (released && !strcmp(released, next)) {
		char *n2 = next_version(next);
		free(next);
		next = n2;
	}
	free(released);
	char *like = xstrfmt("%s-rc%%", next);
	db_query_int(bc->db, &n,
		     "SELECT count(*) FROM rcs WHERE branch_id = ? AND version"
		     " LIKE ?",
		     "it", bc->branch_id, like);
	free(like);
	*out = xstrfmt("%s-rc%lld", next, n + 1);
	free(next);
	return 0;
}

/* "+a -b" per file of a diff, and the totals, in git's diffstat form. */
struct dstat {
	char *path;
	long add, del;
};

static void diffstat_add(struct dstat **v, size_t *n, const char *diff)
{
	const char *s = diff ? diff : "";
	struct dstat *cur = NULL;

	while (*s) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len > 11 && !strncmp(s, "diff --git ", 11)) {
			const char *b = NULL;
			for (size_t i = len; i-- > 11;)
				if (!strncmp(s + i, " b/", 3)) {
					b = s + i + 3;
					break;
				}
			*v = xrealloc(*v, (*n + 1) * sizeof(**v));
			cur = &(*v)[(*n)++];
			cur->path = b ? xstrndup(b, (size_t)(s + len - b))
				      : xstrndup(s + 11, len - 11);
			cur->add = cur->del = 0;
		} else if (cur && len && s[0] == '+' && strncmp(s, "+++ ", 4)) {
			cur->add++;
		} else if (cur && len && s[0] == '-' && strncmp(s, "--- ", 4)) {
			cur->del++;
		}
		s = e ? e + 1 : s + len;
	}
}

static void diffstat_print(struct strbuf *b, struct dstat *v, size_t n)
{
	long add = 0, del = 0;

	for (size_t i = 0; i < n; i++) {
		struct strbuf line = STRBUF_INIT;
		mime_clean_line(&line, v[i].path, strlen(v[i].path));
		strbuf_addf(b, " %s | %ld ", line.buf, v[i].add + v[i].del);
		for (long k = 0; k < v[i].add && k < 40; k++)
			strbuf_addch(b, '+');
		for (long k = 0; k < v[i].del && k < 40; k++)
			strbuf_addch(b, '-');
		strbuf_addch(b, '\n');
		add += v[i].add;
		del += v[i].del;
		strbuf_release(&line);
		free(v[i].path);
	}
	strbuf_addf(b, " %zu files changed, %ld insertions(+), %ld deletions(-)\n",
		    n, add, del);
	free(v);
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* The cover letter's body. */
static void cover_body(struct strbuf *b, struct branch_ctx *bc,
		       const char *version, time_t deadline, long long rc,
		       json_t *patches)
{
	struct dstat *ds = NULL;
	size_t nds = 0, n = json_array_size(patches);
	char base[64];
	const char *url = *bc->cfg.public_url ? bc->cfg.public_url : NULL;
	char *fallback = url ? NULL : xstrfmt("http://%s", bc->cfg.listen);

	snprintf(base, sizeof(base), "%.*s", (int)strcspn(version, "-"), version);
	strbuf_addf(b,
		    "This is the start of the stable review cycle for the %s"
		    " release.\nThere are %zu patches in this series, all will"
		    " be posted as a response\nto this one.  If anyone has any"
		    " issues with these being applied, please\nlet me know.\n\n"
		    "Responses should be made by ",
		    base, n);
	rfc5322_date(b, deadline);
	strbuf_addf(b,
		    ".\nAnything received after that time might be too"
		    " late.\n\nThe patches, their checks and this rc can be"
		    " fetched from stableq at:\n\t%s/api/v1/rc?branch=%s\n"
		    "and each patch at %s/api/v1/patches/ID\n\nthanks,\n\n"
		    "stableq (rc %lld)\n\n-------------\nPseudo-Shortlog of"
		    " commits:\n",
		    url ? url : fallback, bc->cfg.branch_key,
		    url ? url : fallback, rc);
	free(fallback);
	/* by author, in queue order of each author's first patch */
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(patches, i);
		const char *mail = jstr(p, "author_email");
		int first = 1;
		for (size_t k = 0; k < i && first; k++)
			first = strcasecmp(jstr(json_array_get(patches, k),
						"author_email"),
					   mail) != 0;
		if (!first)
			continue;
		strbuf_addf(b, "\n%s <%s>\n", jstr(p, "author_name"), mail);
		for (size_t k = i; k < n; k++) {
			const json_t *q = json_array_get(patches, k);
			if (!strcasecmp(jstr(q, "author_email"), mail))
				strbuf_addf(b, "    %s\n", jstr(q, "subject"));
		}
	}
	strbuf_addstr(b, "\n-------------\n\nDiffstat:\n\n");
	for (size_t i = 0; i < n; i++)
		diffstat_add(&ds, &nds, jstr(json_array_get(patches, i), "diff"));
	diffstat_print(b, ds, nds);
}

/* One patch mail's body: the stable review note, the author, the patch. */
static void patch_body(struct strbuf *b, const char *key, const json_t *p)
{
	const char *msg = jstr(p, "message");
	const char *nl = strchr(msg, '\n');

	strbuf_addf(b, "%s-stable review patch.  If anyone has any objections,"
		       " please let me know.\n\n------------------\n\n"
		       "From: %s <%s>\n\n",
		    key, jstr(p, "author_name"), jstr(p, "author_email"));
	/* the message without its subject line, made safe */
	patch_safe_message(b, nl ? nl + 1 : "");
	strbuf_addstr(b, "\n---\n");
	strbuf_addstr(b, jstr(p, "diff"));
}

int rc_prepare(struct branch_ctx *bc, long long *id)
{
	long long *ids = NULL;
	size_t n = 0;
	char *version = NULL, *cover_id = NULL;
	json_t *patches = json_array();
	struct strbuf body = STRBUF_INIT;
	time_t deadline = time(NULL) + bc->cfg.rc_window;
	int ret, width = 1;

	*id = 0;
	if (!*bc->cfg.rc_list) {
		ret = err_set(ERR_INVALID, "rc_list is not configured: where"
					   " would the review series go?");
		goto out;
	}
	if ((ret = queue_ids(bc->db, bc->branch_id, PS_QUEUED, &ids, &n)) < 0)
		goto out;
	if (!n) {
		ret = err_set(ERR_CONFLICT,
			      "branch %s: no queued patches to"
			      " review",
			      bc->cfg.branch_key);
		goto out;
	}
	if ((ret = rc_version(bc, &version)) < 0)
		goto out;
	/* NNN/N as stable maintainers number them: 00/42, 000/123 */
	for (size_t k = n; k >= 10; k /= 10)
		width++;
	if (width < 2)
		width = 2;
	for (size_t i = 0; i < n; i++) {
		json_t *p = queue_patch_json(bc->db, ids[i], 1);
		if (!p) {
			ret = ERR_IO;
			goto out;
		}
		json_array_append_new(patches, p);
	}
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	ret = db_exec(bc->db,
		      "UPDATE rcs SET state = 'superseded' WHERE branch_id = ?"
		      " AND state = 'open'",
		      "i", bc->branch_id);
	if (ret < 0 ||
	    (ret = db_exec(bc->db,
			   "INSERT INTO rcs (branch_id, version, deadline,"
			   " cover_message_id, actor) VALUES (?, ?, ?, '', ?)",
			   "itit", bc->branch_id, version, (long long)deadline,
			   bc->actor)) < 0)
		goto fail;
	*id = db_last_id(bc->db);
	cover_body(&body, bc, version, deadline, *id, patches);
	{
		char *subject = xstrfmt("[PATCH %s %0*d/%zu] %s review",
					bc->cfg.branch_key, width, 0, n,
					version);
		long long m = compose_list(
			bc->db, &bc->cfg,
			&(struct list_mail){ .kind = "rc", .to = bc->cfg.rc_list,
					     .subject = subject, .body = body.buf },
			&cover_id);
		free(subject);
		if (m < 0) {
			ret = (int)m;
			goto fail;
		}
	}
	if ((ret = db_exec(bc->db,
			   "UPDATE rcs SET cover_message_id = ? WHERE id = ?",
			   "ti", cover_id, *id)) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const json_t *p = json_array_get(patches, i);
		char *subject =
			xstrfmt("[PATCH %s %0*zu/%zu] %s", bc->cfg.branch_key,
				width, i + 1, n, jstr(p, "subject"));
		char *mid = NULL;
		strbuf_reset(&body);
		patch_body(&body, bc->cfg.branch_key, p);
		long long m = compose_list(
			bc->db, &bc->cfg,
			&(struct list_mail){ .kind = "rc", .patch_id = ids[i],
					     .to = bc->cfg.rc_list,
					     .subject = subject,
					     .in_reply_to = cover_id,
					     .body = body.buf },
			&mid);
		free(subject);
		if (m < 0) {
			ret = (int)m;
			goto fail;
		}
		ret = db_exec(bc->db,
			      "INSERT INTO rc_patches (rc_id, patch_id, pos,"
			      " message_id) VALUES (?, ?, ?, ?)",
			      "iiit", *id, ids[i], (long long)(i + 1), mid);
		free(mid);
		if (ret < 0)
			goto fail;
	}
	if ((ret = (int)event_add(bc->db, bc->actor, "rc", *id, "mailed",
				  "%s: %zu patches to %s, deadline %lld",
				  version, n, bc->cfg.rc_list,
				  (long long)deadline)) < 0 ||
	    (ret = db_commit(bc->db)) < 0)
		goto fail;
	log_info("rc %lld: %s: %zu patches to %s", *id, version, n,
		 bc->cfg.rc_list);
	ret = 0;
	goto out;
fail:
	db_rollback(bc->db);
	*id = 0;
out:
	strbuf_release(&body);
	json_decref(patches);
	free(ids);
	free(version);
	free(cover_id);
	return ret;
}

/* The first of rc's patches, by position, that is held (0: none). */
static long long first_held(sqlite3 *db, long long rc)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT patch_id FROM rc_patches WHERE"
				      " rc_id = ? ORDER BY pos",
				      "i", rc);
	long long held = 0;

	while (!held && st && sqlite3_step(st) == SQLITE_ROW) {
		enum patch_state ps;
		long long pid = sqlite3_column_int64(st, 0);
		if (queue_get_state(db, pid, &ps) == 0 && ps == PS_HELD)
			held = pid;
	}
	sqlite3_finalize(st);
	err_clear();
	return held;
}

int rc_release_check(struct branch_ctx *bc)
{
	sqlite3_stmt *st = db_prepare(bc->db,
				      "SELECT id, version, deadline FROM rcs"
				      " WHERE branch_id = ? AND state = 'open'"
				      " ORDER BY id DESC LIMIT 1",
				      "i", bc->branch_id);
	long long rc = 0, deadline = 0, held = 0;
	char *version = NULL, *subject = NULL;
	int ret = 0;

	if (!st)
		return ERR_IO;
	if (sqlite3_step(st) == SQLITE_ROW) {
		rc = sqlite3_column_int64(st, 0);
		version = xstrdup(db_col_text(st, 1));
		deadline = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (!rc)
		return 0;
	if ((long long)time(NULL) < deadline) {
		struct strbuf d = STRBUF_INIT;
		rfc5322_date(&d, (time_t)deadline);
		ret = err_set(ERR_CONFLICT,
			      "the review window of %s is open until %s (rc"
			      " %lld): release after it",
			      version, d.buf, rc);
		strbuf_release(&d);
	} else if ((held = first_held(bc->db, rc)) > 0) {
		queue_patch_subject(bc->db, held, &subject, NULL);
		ret = err_set(ERR_CONFLICT,
			      "patch %lld (\"%s\") of %s is held: send the next"
			      " rc without it (stableq rc) or override it",
			      held, subject ? subject : "?", version);
	}
	free(subject);
	free(version);
	return ret;
}

int rc_released(sqlite3 *db, long long branch)
{
	int ret = db_exec(db,
			  "UPDATE rcs SET state = 'released' WHERE branch_id = ?"
			  " AND state = 'open'",
			  "i", branch);
	return ret < 0 ? ret : 0;
}

int rc_by_message_id(sqlite3 *db, const char *message_id, long long *rc,
		     long long *patch)
{
	*rc = *patch = 0;
	if (!message_id)
		return 0;
	if (db_query_int(db, rc, "SELECT id FROM rcs WHERE cover_message_id = ?",
			 "t", message_id) == 0)
		return 1;
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT rc_id, patch_id FROM rc_patches"
				      " WHERE message_id = ?",
				      "t", message_id);
	int found = 0;

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		*rc = sqlite3_column_int64(st, 0);
		*patch = sqlite3_column_int64(st, 1);
		found = 1;
	}
	sqlite3_finalize(st);
	return found;
}

int rc_add_tested(sqlite3 *db, long long rc, const char *tester,
		  const char *name, const char *message_id)
{
	int ret = db_exec(db,
			  "INSERT OR IGNORE INTO rc_tested (rc_id, tester, name,"
			  " message_id) VALUES (?, lower(?), ?, ?)",
			  "itt" "t", rc, tester, name, message_id);
	return ret < 0 ? ret : ret > 0;
}

json_t *rc_json(sqlite3 *db, long long branch, long long id)
{
	sqlite3_stmt *st;
	json_t *o = NULL, *a;

	if (!id && db_query_int(db, &id,
				"SELECT id FROM rcs WHERE branch_id = ? ORDER BY"
				" id DESC LIMIT 1",
				"i", branch) < 0) {
		err_set(ERR_NOTFOUND, "no rc yet: stableq rc sends one");
		return NULL;
	}
	st = db_prepare(db,
			"SELECT id, version, deadline, state, cover_message_id,"
			" created_at, deadline > strftime('%s','now') FROM rcs"
			" WHERE id = ?",
			"i", id);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		o = json_pack("{sIsssIsssssssb}", "id",
			      (json_int_t)sqlite3_column_int64(st, 0),
			      "version", db_col_text(st, 1), "deadline",
			      (json_int_t)sqlite3_column_int64(st, 2), "state",
			      db_col_text(st, 3), "cover_message_id",
			      db_col_text(st, 4), "created_at",
			      db_col_text(st, 5), "window_open",
			      sqlite3_column_int(st, 6) &&
				      !strcmp(db_col_text(st, 3), "open"));
	sqlite3_finalize(st);
	if (!o) {
		err_set(ERR_NOTFOUND, "no rc %lld", id);
		return NULL;
	}
	a = json_array();
	st = db_prepare(db,
			"SELECT pos, patch_id FROM rc_patches WHERE rc_id = ?"
			" ORDER BY pos",
			"i", id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long pid = sqlite3_column_int64(st, 1);
		enum patch_state ps;
		char *subject = NULL;
		if (queue_get_state(db, pid, &ps) < 0 ||
		    queue_patch_subject(db, pid, &subject, NULL) < 0) {
			err_clear(); /* a patch no longer stored */
			free(subject);
			continue;
		}
		json_array_append_new(
			a, json_pack("{sIsIssss}", "pos",
				     (json_int_t)sqlite3_column_int64(st, 0),
				     "id", (json_int_t)pid, "subject", subject,
				     "state", queue_state_name(ps)));
		free(subject);
	}
	sqlite3_finalize(st);
	json_object_set_new(o, "patches", a);
	a = json_array();
	st = db_prepare(db,
			"SELECT tester, name FROM rc_tested WHERE rc_id = ?"
			" ORDER BY rowid",
			"i", id);
	while (st && sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(a, json_pack("{ssss?}", "tester",
						   db_col_text(st, 0), "name",
						   db_col_text(st, 1)));
	sqlite3_finalize(st);
	json_object_set_new(o, "tested", a);
	return o;
}
