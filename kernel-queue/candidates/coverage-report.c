/* coverage-report.c: build coverage as JSON and text: per candidate, per patch, per file. */
#include "coverage.h"
#include "coverage-int.h"
#include "candidate.h"
#include "db.h"
#include "err.h"
#include "gcov.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *files_json(sqlite3 *db, long long cid, long long pid)
{
	json_t *rows = db_rows_json(db,
				    "SELECT path, kind, compiler, status, config,"
				    " objects, detail, warnings FROM coverage"
				    " WHERE candidate_id = ? AND patch_id = ?"
				    " ORDER BY id",
				    "ii", cid, pid);
	size_t i;
	json_t *f;

	json_array_foreach(rows, i, f)
	{
		const char *t = json_string_value(json_object_get(f, "objects"));
		json_t *a = t ? json_loads(t, 0, NULL) : NULL;
		json_object_set_new(f, "objects", a ? a : json_array());
	}
	return rows ? rows : json_array();
}

json_t *coverage_candidate_json(sqlite3 *db, long long cid)
{
	char *summary = NULL;
	json_t *o, *patches;
	size_t i;
	json_t *p;

	if (candidate_coverage(db, cid, &summary) < 0 || !summary) {
		err_clear();
		free(summary);
		return json_null();
	}
	patches = db_rows_json(db,
			       "SELECT patch_id, " PATCH_STATUS_SQL " AS status"
			       " FROM coverage WHERE candidate_id = ? GROUP BY"
			       " patch_id ORDER BY MIN(id)",
			       "i", cid);
	if (!patches)
		patches = json_array();
	int code = 0, comp = 0, boot = 0;
	json_array_foreach(patches, i, p)
	{
		enum cov_status s = cov_status_parse(
			json_string_value(json_object_get(p, "status")));
		code += s != CS_NO_CODE;
		comp += s == CS_BOOTED || s == CS_COMPILED;
		boot += s == CS_BOOTED;
		long long pid = json_integer_value(json_object_get(p, "patch_id"));
		json_object_set_new(p, "files", files_json(db, cid, pid));
		/* which of its lines ran, when a coverage boot ran */
		json_object_set_new(p, "lines", gcov_patch_json(db, cid, pid));
	}
	char *logp = NULL;
	candidate_coverage_log(db, cid, &logp);
	err_clear();
	o = json_pack("{s:s, s:i, s:i, s:i, s:o, s:s?, s:o}", "summary",
		      summary, "with_code", code, "compiled", comp, "booted",
		      boot, "patches", patches, "log_path", logp, "lines",
		      gcov_candidate_json(db, cid));
	free(summary);
	free(logp);
	return o;
}

json_t *coverage_patch_json(sqlite3 *db, long long pid)
{
	long long cid = 0;
	char *status = NULL;
	json_t *o;

	if (db_query_int(db, &cid,
			 "SELECT MAX(candidate_id) FROM coverage WHERE"
			 " patch_id = ?",
			 "i", pid) < 0 ||
	    cid <= 0) {
		err_clear();
		return json_null();
	}
	db_query_text(db, &status,
		      "SELECT " PATCH_STATUS_SQL " FROM coverage WHERE"
		      " candidate_id = ? AND patch_id = ?",
		      "ii", cid, pid);
	o = json_pack("{s:I, s:s, s:o, s:o}", "candidate_id", (json_int_t)cid,
		      "status", status ? status : "no-code", "files",
		      files_json(db, cid, pid), "lines",
		      gcov_patch_json(db, 0, pid));
	free(status);
	return o;
}

char *coverage_file_text(const json_t *f)
{
#define S(k) json_string_value(json_object_get(f, k))
	struct strbuf sb = STRBUF_INIT;
	json_t *objs = json_object_get(f, "objects");
	size_t i;
	json_t *o;

	strbuf_addf(&sb, "%s: %s", S("path") ? S("path") : "?",
		    S("status") ? S("status") : "?");
	if (S("config") || json_array_size(objs)) {
		strbuf_addf(&sb, " (%s", S("config") ? S("config") : "");
		json_array_foreach(objs, i, o)
			strbuf_addf(&sb, "%s%s", i ? ", " : S("config") ? ": " : "",
				    json_string_value(o));
		strbuf_addch(&sb, ')');
	}
	if (S("detail"))
		strbuf_addf(&sb, ": %s", S("detail"));
	if (S("warnings"))
		strbuf_addf(&sb, "\n      new warnings: %s", S("warnings"));
#undef S
	return strbuf_detach(&sb, NULL);
}

