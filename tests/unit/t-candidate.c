/* t-candidate.c: a candidate's patch list and verdict names, through candidate.c alone. */
#include "file.h"
#include "candidate.h"
#include "db.h"
#include "tap.h"
#include "tqueue.h"

#include <unistd.h>

int main(void)
{
	char dir[] = "/tmp/t-candidate.XXXXXX";
	struct branch_ctx bc;
	long long a, b, cid, *ids = NULL;
	size_t n = 9;
	json_t *list;

	if (!mkdtemp(dir))
		return 1;
	tq_open(&bc, dir, "");
	a = tq_add(&bc, "a", "[PATCH] lib: a", "", "lib.c", 2);
	b = tq_add(&bc, "b", "[PATCH] lib: b", "", "lib.c", 5);
	{
		long long want[] = { b, a };
		cid = candidate_create_on(bc.db, bc.branch_id, want, 2, 0,
					  "queue", 0, "test");
	}
	ok(cid > 0, "a candidate of patches b, a");
	ok(candidate_patch_ids(bc.db, cid, &ids, &n) == 0,
	   "candidate_patch_ids");
	ok(n == 2 && ids[0] == b && ids[1] == a, "... b then a, as created");
	free(ids);
	list = candidate_patch_list(bc.db, cid);
	ok(json_array_size(list) == 2 && json_integer_value(json_array_get(list, 0)) == b,
	   "candidate_patch_list: the same as JSON");
	json_decref(list);
	is_int(candidate_patch_ids(bc.db, 999, &ids, &n), ERR_NOTFOUND,
	       "an unknown candidate: ERR_NOTFOUND");
	like(err_msg(), "candidate 999: no such candidate", "... saying so");
	ok(!ids && n == 0, "... and no list");
	db_exec(bc.db, "ALTER TABLE candidates RENAME COLUMN patch_ids TO gone",
		NULL);
	ok(candidate_patch_ids(bc.db, cid, &ids, &n) < 0 &&
		   err_last() != ERR_NOTFOUND,
	   "a store error is not 'no such candidate'");

	is_int(candidate_verdict_parse("build-failed"), CV_BUILD_FAILED, "verdict names parse");
	is_int(candidate_verdict_parse("nonsense"), CV_NONE, "... an unknown one is CV_NONE");
	is_int(candidate_verdict_parse(NULL), CV_NONE, "... NULL too");
	for (int v = CV_NONE + 1; v < CV_COUNT; v++)
		is_int(candidate_verdict_parse(candidate_verdict_name(v)), v,
		       "%s round-trips", candidate_verdict_name(v));
	is_int(candidate_verdict_of(bc.db, cid), CV_NONE,
	       "a pending candidate has no verdict");
	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
