/* fix-matrix.c: the fix x branch matrix: each fix, and its patch on every branch. */
#include "fix-matrix.h"
#include "branch.h"
#include "candidate.h"
#include "err.h"
#include "queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long long int_of(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/*
 * Adds rows (queue_latest_verdicts_json() or candidate_newest_of_json(),
 * whose "patch_id" / "patch" is the cell's patch) to the cells by id.
 */
static int fix_details(json_t *cells, json_t *rows, int verdicts)
{
	json_t *r;
	char num[24];
	size_t i;

	if (!rows)
		return ERR_IO;
	json_array_foreach(rows, i, r)
	{
		snprintf(num, sizeof(num), "%lld",
			 int_of(r, verdicts ? "patch_id" : "patch"));
		json_t *cell = json_object_get(cells, num);
		if (!cell)
			continue;
		if (verdicts) {
			const char *check = json_string_value(
				json_object_get(r, "check_name"));
			json_object_set(json_object_get(cell, "checks"), check,
					json_object_get(r, "result"));
			json_object_set_new(
				json_object_get(cell, "verdicts"), check,
				json_pack("{s:O, s:O, s:O}", "result",
					  json_object_get(r, "result"),
					  "detail",
					  json_object_get(r, "detail"), "at",
					  json_object_get(r, "created_at")));
		} else {
			json_object_del(r, "patch");
			json_object_set(cell, "candidate", r);
		}
	}
	json_decref(rows);
	return 0;
}

/* A fix's object with a null cell for every branch. */
static json_t *fix_new(const char *fk, json_t *keys)
{
	json_t *cells = json_object(), *k;
	size_t i;

	json_array_foreach(keys, i, k)
		json_object_set_new(cells, json_string_value(k), json_null());
	return json_pack("{s:s, s:n, s:n, s:n, s:o}", "fix", fk, "upstream",
			 "subject", "patch_id", "branches", cells);
}

json_t *fix_matrix_json(sqlite3 *db, const char *branch_key, long long limit,
			long long offset)
{
	long long total = 0;
	json_t *keys = NULL, *fixes = NULL, *cells = NULL, *ids = NULL;
	json_t *fix = NULL, *page = NULL, *r, *out = NULL;
	char *idtext = NULL, num[24];
	const char *last = NULL;
	size_t i;

	if (!(keys = branch_keys_json(db)) ||
	    queue_fix_count(db, branch_key, &total) < 0 ||
	    !(page = queue_fix_page(db, branch_key, limit, offset)))
		goto out;
	fixes = json_array();
	cells = json_object(); /* patch id -> its cell, for the details */
	ids = json_array();
	json_array_foreach(page, i, r)
	{
		const char *fk =
			json_string_value(json_object_get(r, "fix_key"));
		const char *on =
			json_string_value(json_object_get(r, "branch"));
		const char *up =
			json_string_value(json_object_get(r, "upstream"));
		long long pid = int_of(r, "id");
		json_t *cell, *known;

		if (!fk)
			fk = "";
		if (!fix || !last || strcmp(last, fk)) {
			fix = fix_new(fk, keys);
			json_array_append_new(fixes, fix);
			json_object_set(fix, "subject",
					json_object_get(r, "subject"));
			json_object_set(fix, "patch_id",
					json_object_get(r, "patch_id"));
			last = json_string_value(json_object_get(fix, "fix"));
		}
		/* the fullest spelling of the upstream SHA names the fix */
		known = json_object_get(fix, "upstream");
		if (up && (!json_is_string(known) ||
			   strlen(up) > json_string_length(known)))
			json_object_set_new(fix, "upstream", json_string(up));
		cell = json_pack(
			"{s:I, s:O, s:O, s:O, s:o, s:o, s:n}", "id",
			(json_int_t)pid, "state", json_object_get(r, "state"),
			"state_reason", json_object_get(r, "state_reason"),
			"subject", json_object_get(r, "subject"), "checks",
			json_object(), "verdicts", json_object(), "candidate");
		/* a fix queued twice on one branch: the newer row shows */
		json_object_set_new(json_object_get(fix, "branches"),
				    on ? on : "(none)", json_incref(cell));
		snprintf(num, sizeof(num), "%lld", pid);
		json_object_set_new(cells, num, cell);
		json_array_append_new(ids, json_integer(pid));
	}
	idtext = json_dumps(ids, JSON_COMPACT);
	if (fix_details(cells, queue_latest_verdicts_json(db, idtext), 1) < 0 ||
	    fix_details(cells, candidate_newest_of_json(db, idtext), 0) < 0)
		goto out;
	out = json_pack("{s:I, s:I, s:I, s:o, s:o}", "total", (json_int_t)total,
			"limit", (json_int_t)limit, "offset",
			(json_int_t)offset, "branches", keys, "fixes", fixes);
	keys = fixes = NULL;
out:
	if (!out)
		err_set(ERR_IO, "fixes: cannot read the store");
	json_decref(page);
	free(idtext);
	json_decref(keys);
	json_decref(fixes);
	json_decref(cells);
	json_decref(ids);
	return out;
}
