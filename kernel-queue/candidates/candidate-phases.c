/* candidate-phases.c: how long each phase of a candidate took, and how long the branch's usually take. */
#include "candidate.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many of the branch's recent phases an estimate reads. */
#define ESTIMATE_OF 10

static const char *const phase_names[] = { "apply", "build",    "boot",
					   "tests", "retry",    "baseline",
					   "bisection", NULL };

int candidate_phase_valid(const char *phase)
{
	for (size_t i = 0; phase && phase_names[i]; i++)
		if (!strcmp(phase, phase_names[i]))
			return 1;
	return 0;
}

long long candidate_phase_open(sqlite3 *db, long long id, long long branch,
			       const char *purpose, const char *phase)
{
	/* a report: a busy store skips it, the work goes on */
	if (db_exec(db,
		    "INSERT INTO candidate_phases (candidate_id, branch_id,"
		    " purpose, phase) VALUES (?, NULLIF(?, 0), ?, ?)",
		    "iitt", id, branch, purpose, phase) < 0) {
		log_warnx("candidate %lld: phase %s: %s", id, phase, err_msg());
		err_clear();
		return 0;
	}
	return db_last_id(db);
}

void candidate_phase_close(sqlite3 *db, long long row, double seconds,
			   const char *detail)
{
	if (row > 0 &&
	    db_exec(db,
		    "UPDATE candidate_phases SET seconds = ?, detail = ? WHERE"
		    " id = ?",
		    "fti", seconds < 0 ? 0 : seconds, detail, row) < 0) {
		log_warnx("phase %lld: %s", row, err_msg());
		err_clear();
	}
}

void candidate_phase_store(sqlite3 *db, long long id, long long branch,
			   const char *purpose, const char *phase,
			   double seconds, const char *detail)
{
	candidate_phase_close(
		db, candidate_phase_open(db, id, branch, purpose, phase),
		seconds, detail);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double candidate_phase_estimate(sqlite3 *db, long long branch,
				const char *purpose, const char *phase)
{
	double v[ESTIMATE_OF];
	size_t n = 0;
	/* a candidate's phase may come in parts (two boots): summed */
	sqlite3_stmt *st = db_prepare(
		db,
		"SELECT SUM(seconds) FROM candidate_phases WHERE branch_id IS"
		" NULLIF(?, 0) AND purpose = ? AND phase = ? AND seconds IS"
		" NOT NULL GROUP BY candidate_id ORDER BY MAX(id) DESC LIMIT ?",
		"itti", branch, purpose, phase, (long long)ESTIMATE_OF);

	while (st && sqlite3_step(st) == SQLITE_ROW && n < ESTIMATE_OF)
		v[n++] = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	err_clear();
	if (!n)
		return -1;
	/* the median: one cold build among warm ones does not skew it */
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

char *candidate_duration_text(double s)
{
	long t;

	if (s < 0)
		return xstrdup("?");
	if (s < 10)
		return xstrfmt("%.1f s", s);
	t = (long)(s + 0.5);
	if (t < 60)
		return xstrfmt("%ld s", t);
	if (t < 3600)
		return t % 60 ? xstrfmt("%ld min %ld s", t / 60, t % 60)
			      : xstrfmt("%ld min", t / 60);
	return xstrfmt("%ld h %ld min", t / 3600, (t % 3600) / 60);
}

/* The phases every run goes through; the others come with a failure. */
static int always(const char *phase)
{
	return !strcmp(phase, "apply") || !strcmp(phase, "build") ||
	       !strcmp(phase, "boot") || !strcmp(phase, "tests");
}

json_t *candidate_phases_json(sqlite3 *db, long long id, long long branch,
			      const char *purpose, int finished)
{
	json_t *rows = db_rows_json(
		db,
		"SELECT phase, SUM(seconds) AS seconds, MAX(seconds IS NULL) AS"
		" running, MAX(CASE WHEN seconds IS NULL THEN"
		" (julianday('now') - julianday(started_at)) * 86400 END) AS"
		" elapsed, group_concat(detail, '; ') AS detail, MIN(id) AS"
		" first FROM candidate_phases WHERE candidate_id = ? GROUP BY"
		" phase ORDER BY first",
		"i", id);
	json_t *out, *r, *list;
	double left = 0;
	int known = 1;
	size_t i;

	if (!rows)
		return NULL;
	out = json_object();
	list = json_array();
	for (size_t k = 0; phase_names[k]; k++) {
		const char *phase = phase_names[k];
		json_t *row = NULL;
		json_array_foreach(rows, i, r)
			if (!strcmp(json_string_value(json_object_get(r,
						"phase")) ?: "", phase))
				row = r;
		if (!row && (finished || !always(phase)))
			continue;
		double est = candidate_phase_estimate(db, branch, purpose,
						      phase);
		int running = row && json_integer_value(
					     json_object_get(row, "running"));
		json_t *p = json_pack("{s:s, s:b, s:o}", "phase", phase,
				      "running", running, "estimate",
				      est >= 0 ? json_real(est) : json_null());
		if (row) {
			json_t *sec = json_object_get(row, "seconds");
			json_t *el = json_object_get(row, "elapsed");
			json_object_set(p, "seconds",
					running ? json_null() : sec);
			json_object_set(p, "elapsed",
					running ? el : json_null());
			json_object_set(p, "detail",
					json_object_get(row, "detail"));
			if (running && est >= 0 && json_is_number(el) &&
			    est > json_number_value(el))
				left += est - json_number_value(el);
		} else {
			json_object_set_new(p, "seconds", json_null());
			json_object_set_new(p, "elapsed", json_null());
			json_object_set_new(p, "detail", json_null());
			if (est >= 0)
				left += est;
			else
				known = 0;
		}
		json_array_append_new(list, p);
	}
	json_decref(rows);
	json_object_set_new(out, "phases", list);
	/* what is left, from the branch's history: null once done, or
	 * while a phase to come has no history */
	json_object_set_new(out, "estimate_left",
			    !finished && known ? json_real(left) : json_null());
	return out;
}

json_t *candidate_phase_totals(sqlite3 *db)
{
	return db_rows_json(db,
			    "SELECT phase, purpose, COUNT(*) AS count,"
			    " SUM(seconds) AS seconds FROM candidate_phases"
			    " WHERE seconds IS NOT NULL GROUP BY phase,"
			    " purpose ORDER BY phase, purpose",
			    NULL);
}
