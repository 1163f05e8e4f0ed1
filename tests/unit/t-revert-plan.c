/* t-revert-plan.c: the plan for taking a patch out: it and what goes with it, newest first. */
#include "db.h"
#include "file.h"
#include "revert.h"
#include "tap.h"
#include "tqueue.h"

#include <unistd.h>

#define UA "1111111111111111111111111111111111111111"
#define UB "2222222222222222222222222222222222222222"

static const char *item_str(json_t *plan, size_t i, const char *key)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(plan, "items"), i), key));
}

static long long item_id(json_t *plan, size_t i)
{
	return json_integer_value(json_object_get(
		json_array_get(json_object_get(plan, "items"), i), "patch_id"));
}

int main(void)
{
	char dir[] = "/tmp/t-revert-plan.XXXXXX";
	struct branch_ctx bc;
	long long a, b, c, d, e, f;
	json_t *plan;

	if (!mkdtemp(dir))
		return 1;
	tq_open(&bc, dir, "");
	/*
	 * a (queued) is broken; b fixes a and was released; c fixes b and
	 * is part 1 of a series whose part 2 is d; e is unrelated; f fixes
	 * a but was dropped already.
	 */
	a = tq_add(&bc, "a", "[PATCH] lib: a", "commit " UA " upstream.\n\n",
		   "lib.c", 2);
	b = tq_add(&bc, "b", "[PATCH] lib: b",
		   "commit " UB
		   " upstream.\n\nFixes: 111111111111 (\"lib: a\")\n",
		   "lib.c", 3);
	e = tq_add(&bc, "e", "[PATCH] other: e", "", "other.c", 5);
	c = tq_add(&bc, "c", "[PATCH 1/2] lib: c",
		   "Fixes: 222222222222 (\"lib: b\")\n", "lib.c", 7);
	d = tq_add(&bc, "d", "[PATCH 2/2] lib: d", "", "lib.c", 9);
	f = tq_add(&bc, "f", "[PATCH] lib: f",
		   "Fixes: 111111111111 (\"lib: a\")\n", "lib.c", 11);
	ok(a > 0 && b > a && e > b && c > e && d > c && f > d, "six patches in queue order");
	ok(queue_set_state(bc.db, a, PS_QUEUED, NULL, "t") > 0 &&
		   queue_set_state(bc.db, b, PS_RELEASED, NULL, "t") > 0 &&
		   queue_set_state(bc.db, c, PS_QUEUED, NULL, "t") > 0 &&
		   queue_set_state(bc.db, d, PS_QUEUED, NULL, "t") > 0 &&
		   queue_set_state(bc.db, e, PS_QUEUED, NULL, "t") > 0 &&
		   queue_set_state(bc.db, f, PS_DROPPED, NULL, "t") > 0,
	   "their states");
	db_exec(bc.db, "UPDATE patches SET released_commit = ? WHERE id = ?",
		"ti", "3333333333333333333333333333333333333333", b);
	ok(queue_link_dependencies(bc.db) == 0, "queue_link_dependencies");

	plan = revert_plan(&bc, a);
	ok(plan, "the plan of a");
	is_int(json_integer_value(json_object_get(plan, "patch_id")), a, "... names a");
	is_int(json_array_size(json_object_get(plan, "items")), 4,
	       "... takes out a, b, c and d: not e (unrelated), not f (dropped)");
	is_int(item_id(plan, 0), d, "newest first: d");
	is_int(item_id(plan, 1), c, "... c");
	is_int(item_id(plan, 2), b, "... b");
	is_int(item_id(plan, 3), a, "... a last");
	is_str(item_str(plan, 0, "action"), "drop", "d is queued: drop");
	like(item_str(plan, 0, "why"), "later part of the series", "... as a later part of c's series");
	is_str(item_str(plan, 1, "action"), "drop", "c is queued: drop");
	like(item_str(plan, 1, "why"), "Fixes: names patch", "... it fixes b");
	is_str(item_str(plan, 2, "action"), "revert", "b is released: revert");
	is_str(item_str(plan, 2, "commit"), "3333333333333333333333333333333333333333",
	       "... naming its commit");
	is_str(item_str(plan, 3, "why"), "the broken patch", "a: the broken patch");
	json_decref(plan);

	plan = revert_plan(&bc, c);
	is_int(json_array_size(json_object_get(plan, "items")), 2,
	       "the plan of c: c and d, not what c fixes");
	json_decref(plan);
	plan = revert_plan(&bc, e);
	is_int(json_array_size(json_object_get(plan, "items")), 1, "the plan of e: e alone");
	json_decref(plan);

	ok(!revert_plan(&bc, f), "a dropped patch has no plan");
	like(err_msg(), "nothing to revert", "... saying there is nothing to revert");
	ok(!revert_plan(&bc, 9999), "an unknown patch has no plan");
	like(err_msg(), "9999", "... naming it");

	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
