/* api-status.c: /mail, /events, /health, /metrics, /routes, /openapi.json: how things stand. */
#include "api-int.h"
#include "bisect.h"
#include "branch.h"
#include "candidate.h"
#include "db.h"
#include "embed.h"
#include "err.h"
#include "event.h"
#include "outbox.h"
#include "progress.h"
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
	long long limit, branch;
	json_t *arr, *rows = NULL, *r;
	char *in = NULL;
	size_t i;

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
	if (branch && !(in = queue_branch_patches(req->app.bc.db, branch))) {
		api_fail(res, ERR_IO);
		return;
	}
	if (!(rows = outbox_list_json(req->app.bc.db, state, in, limit)) ||
	    queue_fill_branch(req->app.bc.db, rows, "patch_id", "branch") < 0 ||
	    branch_fill(req->app.bc.db, rows, "branch", BRANCH_KEY) < 0) {
		free(in);
		json_decref(rows);
		api_fail(res, ERR_IO);
		return;
	}
	free(in);
	arr = json_array();
	json_array_foreach(rows, i, r)
	{
		json_t *o = json_object(), *subj, *v;
		const char *name;
		/* Bodies stay out of the list: only the subject is shown. */
		json_object_foreach(r, name, v)
		{
			if (!strcmp(name, "head"))
				continue;
			if (!strcmp(name, "rcpt_to"))
				json_object_set_new(
					o, name,
					api_json_text(json_string_value(v)));
			else
				json_object_set(o, name, v);
		}
		subj = mail_subject(
			json_string_value(json_object_get(r, "head")));
		json_object_set_new(o, "subject", subj ? subj : json_null());
		json_array_append_new(arr, o);
	}
	json_decref(rows);
	api_json(res, 200, json_pack("{s:o}", "mail", arr));
}

/* ---- events ---- */

void api_get_events(struct api_request *req, struct api_response *res,
		    json_t *body)
{
	long long since, limit;
	json_t *rows;

	if (api_arg_int(req, res, "since", -1, 0, 1LL << 62, &since) < 0 ||
	    api_arg_int(req, res, "limit", EVENTS_DEFAULT, 1, LIST_MAX,
			&limit) < 0)
		return;
	if (!(rows = event_list_json(req->app.bc.db, since, limit))) {
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
	sqlite3 *db = req->app.bc.db;
	struct serve_status ss;
	long long last_event = 0, pending = 0;
	json_t *queue, *mail, *o, *cand, *bis;

	fill_state_names();
	serve_get_status(&ss);
	queue = api_counts(state_names, PS_COUNT, queue_state_counts(db, 0));
	mail = api_counts(mail_states, 5, outbox_state_counts(db));
	if (!queue || !mail || (last_event = event_last_id(db)) < 0 ||
	    candidate_count_pending(db, &pending) < 0) {
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
	cand = candidate_at_work_json(db);
	json_object_del(cand, "bisection_id");
	json_object_del(cand, "branch_id");
	json_object_set_new(o, "candidate", cand ? cand : json_null());
	bis = bisect_running_json(db);
	json_object_set_new(o, "bisection", first(bis));
	json_t *prog = progress_recent_json(db);
	json_object_set_new(o, "progress", prog ? prog : json_array());
	api_json(res, 200, o);
}

/* ---- metrics ---- */

static void emit_status(const char *code, unsigned long long n, void *ctx)
{
	strbuf_addf(ctx, "stableq_http_requests_total{code=\"%s\"} %llu\n",
		    code, n);
}

/* One gauge line per count of got (an owner's), zeros for names. */
static int gauge(struct strbuf *sb, const char *metric, const char *label,
		 json_t *got, const char *const *names, size_t n)
{
	json_t *o = api_counts(names, n, got), *v;
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
	sqlite3 *db = req->app.bc.db;
	struct strbuf sb = STRBUF_INIT;
	long long nbuilds;
	double seconds;

	fill_state_names();
	strbuf_addstr(&sb, "# HELP stableq_patches Patches by state.\n"
			   "# TYPE stableq_patches gauge\n");
	if (gauge(&sb, "stableq_patches", "state", queue_state_counts(db, 0),
		  state_names, PS_COUNT) < 0)
		goto fail;
	strbuf_addstr(&sb, "# HELP stableq_candidates Candidates by verdict"
			   " (none: not finished).\n"
			   "# TYPE stableq_candidates gauge\n");
	if (gauge(&sb, "stableq_candidates", "verdict",
		  candidate_verdict_counts(db), verdicts, 6) < 0)
		goto fail;
	strbuf_addstr(&sb, "# HELP stableq_mail Outbox mail by state.\n"
			   "# TYPE stableq_mail gauge\n");
	if (gauge(&sb, "stableq_mail", "state", outbox_state_counts(db),
		  mail_states, 5) < 0)
		goto fail;
	strbuf_addstr(&sb, "# HELP stableq_http_requests_total HTTP requests"
			   " answered, by status.\n"
			   "# TYPE stableq_http_requests_total counter\n");
	api_status_counts(emit_status, &sb);
	if (candidate_build_seconds(db, &nbuilds, &seconds) < 0)
		goto fail;
	strbuf_addf(
		&sb,
		"# HELP stableq_build_seconds Time spent in kernel builds.\n"
		"# TYPE stableq_build_seconds summary\n"
		"stableq_build_seconds_sum %.3f\n"
		"stableq_build_seconds_count %lld\n",
		seconds, nbuilds);
	/* each phase of a candidate (candidate.h), by the candidates' purpose */
	json_t *phases = candidate_phase_totals(db), *p;
	size_t i;
	if (!phases)
		goto fail;
	strbuf_addstr(&sb, "# HELP stableq_candidate_phase_seconds Time spent"
			   " in each phase of the candidates (apply, build,"
			   " boot, tests, retry, baseline, bisection).\n"
			   "# TYPE stableq_candidate_phase_seconds summary\n");
	json_array_foreach(phases, i, p)
	{
		const char *ph = json_string_value(json_object_get(p, "phase"));
		const char *pu = json_string_value(json_object_get(p, "purpose"));
		/* a phase name is one of the table's (sql/022): no quoting */
		if (!candidate_phase_valid(ph) || !pu ||
		    pu[strspn(pu, "abcdefghijklmnopqrstuvwxyz")])
			continue;
		strbuf_addf(&sb,
			    "stableq_candidate_phase_seconds_sum{phase=\"%s\","
			    "purpose=\"%s\"} %.3f\n"
			    "stableq_candidate_phase_seconds_count{phase="
			    "\"%s\",purpose=\"%s\"} %lld\n",
			    ph, pu,
			    json_number_value(json_object_get(p, "seconds")),
			    ph, pu,
			    (long long)json_integer_value(
				    json_object_get(p, "count")));
	}
	json_decref(phases);
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
	const char *root = req->app.bc.cfg.web_root;
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
