/* t-verdict-phases.c: a candidate's phases, the branch's estimate, and one pending candidate per queue. */
#include "candidate.h"
#include "db.h"
#include "file.h"
#include "strbuf.h"
#include "tap.h"
#include "tqueue.h"

#include <math.h>
#include <unistd.h>

static long long queue_candidate(struct branch_ctx *bc)
{
	return candidate_create_on(bc->db, bc->branch_id, NULL, 0, 0, "queue",
				   0, "test");
}

/* One finished queue candidate whose build took build_s. */
static long long finished(struct branch_ctx *bc, double build_s)
{
	long long id = queue_candidate(bc);

	candidate_phase_store(bc->db, id, bc->branch_id, "queue", "apply", 1,
			      NULL);
	candidate_phase_store(bc->db, id, bc->branch_id, "queue", "build",
			      build_s, NULL);
	candidate_phase_store(bc->db, id, bc->branch_id, "queue", "boot", 10,
			      NULL);
	/* a phase in two parts (two boots) is one phase */
	candidate_phase_store(bc->db, id, bc->branch_id, "queue", "tests", 20,
			      NULL);
	candidate_phase_store(bc->db, id, bc->branch_id, "queue", "tests", 20,
			      NULL);
	db_exec(bc->db,
		"UPDATE candidates SET step = 'done', verdict = 'pass',"
		" finished_at = '2026-01-01T00:00:00Z' WHERE id = ?",
		"i", id);
	return id;
}

static json_t *phase_of(json_t *phases, const char *name)
{
	size_t i;
	json_t *p;

	json_array_foreach(phases, i, p)
		if (!strcmp(json_string_value(json_object_get(p, "phase")),
			    name))
			return p;
	return NULL;
}

static void test_estimate(struct branch_ctx *bc)
{
	is_int((int)candidate_phase_estimate(bc->db, bc->branch_id, "queue",
					     "build"),
	       -1, "no history: no estimate");
	finished(bc, 200);
	finished(bc, 240);
	finished(bc, 2000); /* one cold build */
	ok(fabs(candidate_phase_estimate(bc->db, bc->branch_id, "queue",
					 "build") - 240) < 0.01,
	   "the estimate is the median of the branch's builds: a cold one"
	   " does not skew it");
	ok(fabs(candidate_phase_estimate(bc->db, bc->branch_id, "queue",
					 "tests") - 40) < 0.01,
	   "a phase in two parts counts as their sum");
	is_int((int)candidate_phase_estimate(bc->db, bc->branch_id,
					     "baseline", "build"),
	       -1, "... of candidates of the same purpose only");
	for (int i = 0; i < 12; i++)
		finished(bc, 100);
	ok(fabs(candidate_phase_estimate(bc->db, bc->branch_id, "queue",
					 "build") - 100) < 0.01,
	   "the estimate reads the branch's last ten");
}

static void test_json(struct branch_ctx *bc)
{
	long long id = queue_candidate(bc);
	long long row;
	json_t *j, *p;

	candidate_phase_store(bc->db, id, bc->branch_id, "queue", "apply", 0.5,
			      NULL);
	row = candidate_phase_open(bc->db, id, bc->branch_id, "queue",
				   "build");
	ok(row > 0, "a phase opens");
	j = candidate_phases_json(bc->db, id, bc->branch_id, "queue", 0);
	ok(j != NULL, "the phases of a running candidate");
	p = phase_of(json_object_get(j, "phases"), "apply");
	ok(p && fabs(json_number_value(json_object_get(p, "seconds")) - 0.5) <
			0.01,
	   "apply: its time");
	p = phase_of(json_object_get(j, "phases"), "build");
	ok(p && json_is_true(json_object_get(p, "running")) &&
		   json_is_null(json_object_get(p, "seconds")) &&
		   json_is_number(json_object_get(p, "elapsed")),
	   "build runs: no time yet, the time so far");
	ok(p && fabs(json_number_value(json_object_get(p, "estimate")) - 100) <
			0.01,
	   "... and the branch's usual");
	p = phase_of(json_object_get(j, "phases"), "tests");
	ok(p && json_is_null(json_object_get(p, "seconds")) &&
		   !json_is_true(json_object_get(p, "running")),
	   "the phases to come are listed, with their estimate");
	ok(!phase_of(json_object_get(j, "phases"), "retry"),
	   "a retry is not (it comes with a failure)");
	ok(json_number_value(json_object_get(j, "estimate_left")) > 40,
	   "what is left, from the branch's history: %.1f s",
	   json_number_value(json_object_get(j, "estimate_left")));
	json_decref(j);
	candidate_phase_close(bc->db, row, 12.5, "from the build cache");
	candidate_phase_record(bc->db, id, "retry", 30, "1 boot, 1 test");
	j = candidate_phases_json(bc->db, id, bc->branch_id, "queue", 1);
	p = phase_of(json_object_get(j, "phases"), "build");
	ok(p && fabs(json_number_value(json_object_get(p, "seconds")) - 12.5) <
			0.01 &&
		   !strcmp(json_string_value(json_object_get(p, "detail")),
			   "from the build cache"),
	   "build ended: its time and detail");
	ok(phase_of(json_object_get(j, "phases"), "retry") &&
		   !phase_of(json_object_get(j, "phases"), "tests"),
	   "done: the phases it went through (a retry, recorded by id)");
	ok(json_is_null(json_object_get(j, "estimate_left")),
	   "... and nothing left");
	json_decref(j);

	j = candidate_phase_totals(bc->db);
	size_t i;
	int found = 0;
	json_array_foreach(j, i, p)
		if (!strcmp(json_string_value(json_object_get(p, "phase")),
			    "build") &&
		    !strcmp(json_string_value(json_object_get(p, "purpose")),
			    "queue"))
			found = json_integer_value(json_object_get(p, "count"));
	is_int(found, 16, "the totals count every finished build phase");
	json_decref(j);
	ok(candidate_phase_valid("bisection") && !candidate_phase_valid("x") &&
		   !candidate_phase_valid(NULL),
	   "phase names");
}

static void test_text(void)
{
	const struct {
		double s;
		const char *want;
	} c[] = { { 4.25, "4.2 s" }, { 38, "38 s" }, { 243, "4 min 3 s" },
		  { 120, "2 min" }, { 3725, "1 h 2 min" }, { -1, "?" } };

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *t = candidate_duration_text(c[i].s);
		is_str(t, c[i].want, "%.2f s reads %s", c[i].s, c[i].want);
		free(t);
	}
}

static void test_request(struct branch_ctx *bc)
{
	long long a, b, again, other;
	int created = -1;

	/* the queue: two patches */
	db_exec(bc->db, "UPDATE candidates SET step = 'done', verdict ="
			" 'pass' WHERE step != 'done'",
		NULL);
	a = candidate_request(bc->db, bc->branch_id, 0, "token:ci", 2,
			      &created);
	ok(a > 0 && created == 1, "a request makes a pending candidate");
	again = candidate_request(bc->db, bc->branch_id, 0, "token:ci", 2,
				  &created);
	ok(again == a && created == 0,
	   "the same queue again: the same candidate, none made");
	again = candidate_request(bc->db, bc->branch_id, 0, "token:other", 2,
				  &created);
	ok(again == a && created == 0, "... whoever asks");
	db_exec(bc->db, "UPDATE candidates SET step = 'build' WHERE id = ?",
		"i", a);
	again = candidate_request(bc->db, bc->branch_id, 0, "token:ci", 2,
				  &created);
	ok(again == a && created == 0, "... while it runs too");
	db_exec(bc->db, "UPDATE candidates SET step = 'pending' WHERE id = ?",
		"i", a);
	/* another queue (up to the first patch) is other work */
	long long first = 0;
	db_query_int(bc->db, &first,
		     "SELECT MIN(id) FROM patches WHERE state = 'queued'",
		     NULL);
	b = candidate_request(bc->db, bc->branch_id, first, "token:ci", 2,
			      &created);
	ok(b > 0 && b != a && created == 1, "another prefix: another one");
	other = candidate_request(bc->db, bc->branch_id, first, "token:ci", 2,
				  &created);
	ok(other == b && created == 0,
	   "... asked again: the same (the cap is not in the way)");
	/* the cap: token:ci has 2 pending; a third queue is refused */
	long long c = tq_add(bc, "c", "[PATCH] lib: c", "", "lib.c", 9);
	db_exec(bc->db, "UPDATE patches SET state = 'queued' WHERE id = ?",
		"i", c);
	long long n0 = 0, n1 = 0;
	db_query_int(bc->db, &n0, "SELECT COUNT(*) FROM candidates", NULL);
	other = candidate_request(bc->db, bc->branch_id, 0, "token:ci", 2,
				  &created);
	is_int((int)other, ERR_TOOBIG, "a third pending candidate of one token"
				       " is refused");
	like(err_msg(), "token:ci has 2 pending candidates"
			" (candidates_pending_max = 2)",
	     "... saying why");
	db_query_int(bc->db, &n1, "SELECT COUNT(*) FROM candidates", NULL);
	ok(n1 == n0 && created == 0, "... and nothing is made");
	other = candidate_request(bc->db, bc->branch_id, 0, "token:other", 2,
				  &created);
	ok(other > 0 && created == 1, "another token may");
	other = candidate_request(bc->db, bc->branch_id, 0, "token:ci", 2,
				  &created);
	ok(other > 0 && created == 0,
	   "... and then the first one gets that candidate back");
	db_exec(bc->db, "UPDATE candidates SET step = 'done', verdict ="
			" 'pass' WHERE id = ?",
		"i", a);
	long long d = tq_add(bc, "d", "[PATCH] lib: d", "", "lib.c", 12);
	db_exec(bc->db, "UPDATE patches SET state = 'queued' WHERE id = ?",
		"i", d);
	other = candidate_request(bc->db, bc->branch_id, 0, "token:ci", 2,
				  &created);
	ok(other > 0 && created == 1,
	   "once one ran, the token may ask for another");
	other = candidate_request(bc->db, bc->branch_id, 0, "token:x", 0,
				  &created);
	ok(other > 0, "max 0: no cap");
}

int main(void)
{
	char dir[] = "/tmp/t-verdict-phases.XXXXXX";
	struct branch_ctx bc;

	if (!mkdtemp(dir))
		return 1;
	char *conf = xstrfmt("tree_dir = %s/no-tree\n", dir);
	tq_open(&bc, dir, conf);
	free(conf);
	tq_add(&bc, "a", "[PATCH] lib: a", "", "lib.c", 2);
	tq_add(&bc, "b", "[PATCH] lib: b", "", "lib.c", 5);
	db_exec(bc.db, "UPDATE patches SET state = 'queued'", NULL);
	test_estimate(&bc);
	test_json(&bc);
	test_text();
	test_request(&bc);
	{
		long long id = -1;
		is_int(candidate_baseline_due(&bc, &id), 0,
		       "no tree: no baseline is due");
		ok(id == 0, "... and none is made");
	}
	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
