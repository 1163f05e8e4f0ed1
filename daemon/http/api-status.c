/* api-status.c: /mail, /events, /health, /metrics, /routes, /openapi.json: how things stand. */
#include "api-int.h"
#include "db.h"
#include "embed.h"
#include "err.h"
#include "queue.h"
#include "serve.h"

#include <stdlib.h>
#include <string.h>

#define MAIL_DEFAULT 100
#define EVENTS_DEFAULT 100
#define LIST_MAX 1000

/* In api.c: the answered requests by status, for /metrics. */
void api_status_counts(void (*emit)(const char *code, unsigned long long n,
				    void *ctx),
		       void *ctx);

/* ---- mail ---- */

static const char *const mail_states[] = { "queued", "sending", "sent",
					   "failed", "invalid", NULL };

static const char sql_mail[] =
	"SELECT m.id, m.patch_id, b.key AS branch, m.event_id, m.kind,"
	" m.message_id, m.mail_from, m.rcpt_to, m.state, m.attempts,"
	" m.next_attempt_at, m.last_error, m.created_at, m.sent_at, m.hold,"
	" substr(m.headers_and_body, 1, 4096) AS head FROM mail m LEFT JOIN"
	" patches p ON p.id = m.patch_id LEFT JOIN branches b ON b.id ="
	" p.branch_id WHERE (? IS NULL OR m.state = ?) AND (? = 0 OR"
	" p.branch_id = ?) ORDER BY m.id DESC LIMIT ?";

/*
 * The Subject: of a message's header block, unfolded (a long subject goes
 * on over continuation lines that start with white space), or NULL.
 */
static json_t *mail_subject(const char *m)
{
	while (m && *m && *m != '\n' && *m != '\r') {
		const char *eol = strchr(m, '\n');
		if (!strncasecmp(m, "Subject:", 8)) {
			struct strbuf sb = STRBUF_INIT;
			const char *s = m + 8;
			json_t *j;
			for (;;) {
				size_t n = eol ? (size_t)(eol - s) : strlen(s);
				while (n && (*s == ' ' || *s == '\t'))
					s++, n--;
				while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
					n--;
				if (sb.len && n)
					strbuf_addch(&sb, ' ');
				strbuf_add(&sb, s, n);
				if (!eol || (eol[1] != ' ' && eol[1] != '\t'))
					break;
				s = eol + 1;
				eol = strchr(s, '\n');
			}
			j = json_stringn(sb.buf, sb.len);
			strbuf_release(&sb);
			return j;
		}
		m = eol ? eol + 1 : NULL;
	}
	return NULL;
}

void api_get_mail(struct api_request *req, struct api_response *res,
		  json_t *body)
{
	const char *state = api_arg(req, "state");
	sqlite3_stmt *st;
	long long limit, branch;
	json_t *arr;
	size_t i;
	int rc;

	for (i = 0; state && mail_states[i] && strcmp(mail_states[i], state);
	     i++)
		;
	if (state && !mail_states[i]) {
		api_error(res, 400, "bad-request",
			  "state must be queued, sending, sent, failed or"
			  " invalid");
		return;
	}
	if (api_branch_arg(req, res, &branch) < 0 ||
	    api_arg_int(req, res, "limit", MAIL_DEFAULT, 1, LIST_MAX, &limit) <
		    0)
		return;
	if (!(st = db_prepare(req->app.db, sql_mail, "ttiii", state, state,
			      branch, branch, limit))) {
		api_fail(res, ERR_IO);
		return;
	}
	arr = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *o = json_object(), *subj;
		int n = sqlite3_column_count(st);
		/* Bodies stay out of the list: only the subject is shown. */
		for (int c = 0; c < n - 1; c++) {
			const char *name = sqlite3_column_name(st, c);
			if (!strcmp(name, "rcpt_to"))
				json_object_set_new(
					o, name,
					api_json_text(db_col_text(st, c)));
			else
				json_object_set_new(o, name,
						    db_col_json(st, c));
		}
		subj = mail_subject(db_col_text(st, n - 1));
		json_object_set_new(o, "subject", subj ? subj : json_null());
		json_array_append_new(arr, o);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		api_fail(res, err_set(ERR_IO, "db: %s",
				      sqlite3_errmsg(req->app.db)));
		return;
	}
	api_json(res, 200, json_pack("{s:o}", "mail", arr));
}

/* ---- events ---- */

static const char sql_events_since[] =
	"SELECT id, at, actor, subject_kind, subject_id, kind, detail FROM"
	" events WHERE id > ? ORDER BY id LIMIT ?";
static const char sql_events_recent[] =
	"SELECT * FROM (SELECT id, at, actor, subject_kind, subject_id, kind,"
	" detail FROM events ORDER BY id DESC LIMIT ?) ORDER BY id";

void api_get_events(struct api_request *req, struct api_response *res,
		    json_t *body)
{
	long long since, limit;
	json_t *rows;

	if (api_arg_int(req, res, "since", -1, 0, 1LL << 62, &since) < 0 ||
	    api_arg_int(req, res, "limit", EVENTS_DEFAULT, 1, LIST_MAX,
			&limit) < 0)
		return;
	if (since >= 0)
		rows = db_rows_json(req->app.db, sql_events_since, "ii", since,
				    limit);
	else
		rows = db_rows_json(req->app.db, sql_events_recent, "i", limit);
	if (!rows) {
		api_fail(res, ERR_IO);
		return;
	}
	api_json(res, 200, json_pack("{s:o}", "events", rows));
}

/* ---- health ---- */

static const char *state_names[PS_COUNT];

static void fill_state_names(void)
{
	for (int i = 0; i < PS_COUNT; i++)
		state_names[i] = queue_state_name((enum patch_state)i);
}

static const char sql_patch_counts[] =
	"SELECT state, COUNT(*) FROM patches GROUP BY state";
static const char sql_mail_counts[] =
	"SELECT state, COUNT(*) FROM mail GROUP BY state";
static const char sql_current_candidate[] =
	"SELECT c.id, c.purpose, c.step, c.upto_patch_id,"
	" json_array_length(c.patch_ids) AS patches, c.started_at FROM"
	" candidates c WHERE c.step NOT IN ('pending', 'done') ORDER BY c.id"
	" DESC LIMIT 1";
static const char sql_running_bisection[] =
	"SELECT id, candidate_id, good, bad, builds_used, boots_used,"
	" steps_done, steps_total, started_at FROM"
	" bisections WHERE state = 'running' ORDER BY id DESC LIMIT 1";

/* Long work at hand; a row not rewritten for ten minutes is a dead step's. */
static const char sql_progress[] =
	"SELECT kind, subject_id, label, done, total, unit, updated_at FROM"
	" progress WHERE updated_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now',"
	" '-10 minutes') ORDER BY kind, subject_id";

/* The first row of rows, or null. */
static json_t *first(json_t *rows)
{
	json_t *o = json_array_get(rows, 0);

	o = o ? json_incref(o) : json_null();
	json_decref(rows);
	return o;
}

void api_get_health(struct api_request *req, struct api_response *res,
		    json_t *body)
{
	sqlite3 *db = req->app.db;
	struct serve_status ss;
	long long last_event = 0, pending = 0;
	json_t *queue, *mail, *o;

	fill_state_names();
	serve_get_status(&ss);
	queue = api_counts(db, state_names, PS_COUNT, sql_patch_counts, NULL, 0);
	mail = api_counts(db, mail_states, 5, sql_mail_counts, NULL, 0);
	if (!queue || !mail ||
	    db_query_int(db, &last_event, "SELECT COALESCE(MAX(id), 0) FROM"
					  " events",
			 NULL) < 0 ||
	    db_query_int(db, &pending, "SELECT COUNT(*) FROM candidates WHERE"
				       " step = 'pending'",
			 NULL) < 0) {
		json_decref(queue);
		json_decref(mail);
		api_json(res, 503,
			 json_pack("{s:b, s:s, s:s}", "ok", 0, "db", "error",
				   "message", *err_msg() ? err_msg() : "db"));
		return;
	}
	o = json_pack("{s:b, s:s, s:s, s:I, s:i, s:o, s:o, s:I, s:I}", "ok",
		      1, "db", "ok", "step", ss.step, "step_started",
		      (json_int_t)ss.started, "child_pid", ss.child_pid,
		      "queue", queue, "mail", mail, "pending_candidates",
		      (json_int_t)pending, "last_event_id",
		      (json_int_t)last_event);
	/* Whether the file on disk is the config the daemon holds. */
	json_object_set_new(o, "config",
			    json_pack("{s:b, s:s?}", "file_ok",
				      !ss.config_error[0], "file_error",
				      ss.config_error[0] ? ss.config_error
							 : NULL));
	/* What runs now, for the dashboard's "in progress" line. */
	json_object_set_new(o, "candidate",
			    first(db_rows_json(db, sql_current_candidate,
					       NULL)));
	json_object_set_new(o, "bisection",
			    first(db_rows_json(db, sql_running_bisection,
					       NULL)));
	json_t *prog = db_rows_json(db, sql_progress, NULL);
	json_object_set_new(o, "progress", prog ? prog : json_array());
	api_json(res, 200, o);
}

/* ---- metrics ---- */

static void emit_status(const char *code, unsigned long long n, void *ctx)
{
	strbuf_addf(ctx, "stableq_http_requests_total{code=\"%s\"} %llu\n",
		    code, n);
}

/* One gauge line per row of "SELECT label, COUNT(*)", zeros for names. */
static int gauge(sqlite3 *db, struct strbuf *sb, const char *metric,
		 const char *label, const char *sql, const char *const *names,
		 size_t n)
{
	json_t *o = api_counts(db, names, n, sql, NULL, 0), *v;
	const char *k;

	if (!o)
		return ERR_IO;
	json_object_foreach(o, k, v)
	{
		strbuf_addf(sb, "%s{%s=\"%s\"} %lld\n", metric, label, k,
			    (long long)json_integer_value(v));
	}
	json_decref(o);
	return 0;
}

static const char *const verdicts[] = { "pass", "fail", "build-failed",
					"apply-failed", "hang", "none" };

void api_get_metrics(struct api_request *req, struct api_response *res,
		     json_t *body)
{
	sqlite3 *db = req->app.db;
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st;

	fill_state_names();
	strbuf_addstr(&sb, "# HELP stableq_patches Patches by state.\n"
			   "# TYPE stableq_patches gauge\n");
	if (gauge(db, &sb, "stableq_patches", "state", sql_patch_counts,
		  state_names, PS_COUNT) < 0)
		goto fail;
	strbuf_addstr(&sb, "# HELP stableq_candidates Candidates by verdict"
			   " (none: not finished).\n"
			   "# TYPE stableq_candidates gauge\n");
	if (gauge(db, &sb, "stableq_candidates", "verdict",
		  "SELECT COALESCE(verdict, 'none'), COUNT(*) FROM candidates"
		  " GROUP BY 1",
		  verdicts, 6) < 0)
		goto fail;
	strbuf_addstr(&sb, "# HELP stableq_mail Outbox mail by state.\n"
			   "# TYPE stableq_mail gauge\n");
	if (gauge(db, &sb, "stableq_mail", "state", sql_mail_counts,
		  mail_states, 5) < 0)
		goto fail;
	strbuf_addstr(&sb, "# HELP stableq_http_requests_total HTTP requests"
			   " answered, by status.\n"
			   "# TYPE stableq_http_requests_total counter\n");
	api_status_counts(emit_status, &sb);
	st = db_prepare(db,
			"SELECT COUNT(seconds), COALESCE(SUM(seconds), 0) FROM"
			" builds WHERE seconds IS NOT NULL",
			NULL);
	if (!st || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		goto fail;
	}
	strbuf_addf(&sb,
		    "# HELP stableq_build_seconds Time spent in kernel builds.\n"
		    "# TYPE stableq_build_seconds summary\n"
		    "stableq_build_seconds_sum %.3f\n"
		    "stableq_build_seconds_count %lld\n",
		    sqlite3_column_double(st, 1),
		    (long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	api_text(res, 200, "text/plain; version=0.0.4; charset=utf-8", sb.buf,
		 sb.len);
	strbuf_release(&sb);
	return;
fail:
	strbuf_release(&sb);
	api_fail(res, ERR_IO);
}

/* ---- the API about itself ---- */

void api_get_routes(struct api_request *req, struct api_response *res,
		    json_t *body)
{
	api_json(res, 200, json_pack("{s:s, s:o}", "base", "/api/v1",
				     "routes", api_routes_json()));
}

void api_get_openapi(struct api_request *req, struct api_response *res,
		     json_t *body)
{
	const char *root = req->app.cfg.web_root;
	size_t len;

	if (root && *root) {
		struct strbuf sb = STRBUF_INIT;
		char *path = xstrfmt("%s/openapi.json", root);
		int ret = strbuf_read_file(&sb, path, 1 << 22);
		free(path);
		if (ret < 0) {
			strbuf_release(&sb);
			api_error(res, 404, "not-found", "%s", err_msg());
			return;
		}
		api_text(res, 200, "application/json", sb.buf, sb.len);
		strbuf_release(&sb);
		return;
	}
	const struct embedded_file *f = embed_find("web/openapi.json", &len);
	if (!f) {
		api_error(res, 404, "not-found",
			  "web/openapi.json is not in this build");
		return;
	}
	api_text(res, 200, "application/json", f->start, len);
}
