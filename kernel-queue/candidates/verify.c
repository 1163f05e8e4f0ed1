/* verify.c: build the queue without a fix and let the fix's own test say whether its bug is there. */
#include "verify.h"
#include "candidate.h"
#include "check.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"
#include "testcase.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define TRAILER "Regression-test:"

/* The name a patch's message gives, validated; NULL if none. Caller frees. */
static char *verify_test_of(const char *message)
{
	const char *p = message;
	size_t n;

	/* a line of its own; the text is hostile: a test name or nothing */
	while (p && *p) {
		if (!strncasecmp(p, TRAILER, strlen(TRAILER))) {
			p += strlen(TRAILER);
			p += strspn(p, " \t");
			n = strspn(p, "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
			if (n && n <= 128 && (!p[n] || p[n] == '\n' ||
					      isspace((unsigned char)p[n])))
				return xstrndup(p, n);
			return NULL;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* The queued patches of the fix's branch before it, as a candidate. */
static long long baseline(struct branch_ctx *bc, long long patch_id)
{
	long long *ids = NULL, cid;
	size_t n = 0;
	int ret = queue_ids_before(bc->db, bc->branch_id, patch_id, &ids, &n);

	if (ret < 0)
		return ret;
	cid = candidate_create_on(bc->db, bc->branch_id, ids ? ids : &cid, n, 0,
				  "baseline", 0, bc->actor);
	free(ids);
	return cid;
}

int verify_fix(struct branch_ctx *bc, long long patch_id,
	       void (*progress)(const char *line, void *ctx), void *ctx)
{
	const char *message;
	char *test = NULL, *result = NULL, *verdict = NULL;
	char *version = NULL, *det = NULL;
	struct strbuf why = STRBUF_INIT, prefix = STRBUF_INIT;
	enum patch_state s;
	const char *res;
	long long cid, n = 0, ev;
	int ret;

	if ((ret = queue_follow_patch(bc, patch_id)) < 0 ||
	    (ret = queue_get_state(bc->db, patch_id, &s)) < 0)
		return ret;
	if (s != PS_QUEUED)
		return err_set(ERR_CONFLICT, "patch %lld is %s, not queued",
			       patch_id, queue_state_name(s));
	json_t *pt = queue_patch_content_json(bc->db, patch_id);
	message = queue_field(pt, "message");
	test = message ? verify_test_of(message) : NULL;
	json_decref(pt);
	if (!test)
		return err_set(ERR_INVALID,
			       "patch %lld names no test (a line \"" TRAILER
			       " NAME\" in its message)",
			       patch_id);
	if ((cid = baseline(bc, patch_id)) < 0) {
		ret = (int)cid;
		goto out;
	}
	log_info("patch %lld: does %s fail without it? candidate %lld",
		 patch_id, test, cid);
	if ((ret = candidate_run(bc, cid, 1, progress, ctx)) < 0)
		goto out;
	verdict = candidate_verdict(bc->db, cid);
	result = testcase_result(bc->db, cid, test);
	candidate_patch_count(bc->db, cid, &n);
	version = repo_dir_branch_version(bc->cfg.tree_dir, bc->cfg.branch);
	strbuf_addf(&prefix, "candidate %lld (%s%s%s + %lld patch%s before it)",
		    cid, bc->cfg.branch, version && *version ? " " : "",
		    version ? version : "", n, n == 1 ? "" : "es");
	if (result && !strcmp(result, "pass")) {
		res = "not-present";
		strbuf_addf(&why,
			    "%s passes without this patch in %s: the bug it"
			    " fixes is not in this tree",
			    test, prefix.buf);
	} else if (result && !strcmp(result, "fail")) {
		res = "present";
		strbuf_addf(&why,
			    "%s fails without this patch in %s: the bug is in"
			    " this tree",
			    test, prefix.buf);
	} else {
		res = "unknown";
		strbuf_addf(&why,
			    "%s has no result in %s (verdict %s): the test did"
			    " not decide",
			    test, prefix.buf, verdict ? verdict : "none");
	}
	det = bc->cfg.nbranches > 1
		      ? xstrfmt("%s: %s", bc->cfg.branch_key, why.buf)
		      : xstrdup(why.buf);
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	ret = queue_verdict_add(bc->db, patch_id, "test", res, det);
	if (ret >= 0 && !strcmp(res, "not-present")) {
		char *reason = xstrfmt("not-present: %s", det);
		ev = queue_set_state(bc->db, patch_id, PS_REJECTED, reason,
				     bc->actor);
		free(reason);
		if (ev < 0)
			ret = (int)ev;
	}
	if ((ret = db_end(bc->db, ret)) >= 0)
		log_info("patch %lld: test %s: %s", patch_id, res, det);
out:
	free(test);
	free(result);
	free(verdict);
	free(version);
	free(det);
	strbuf_release(&why);
	strbuf_release(&prefix);
	return ret < 0 ? ret : 0;
}

int verify_due(struct branch_ctx *bc, long long *id)
{
	/* the step validates the name; a patch whose name is bad gets no
	 * verdict and its step fails: the daemon backs off from it */
	return queue_first_marked(bc->db, bc->branch_id, TRAILER, "test", id) ==
	       0;
}

char *verify_summary(sqlite3 *db, long long id)
{
	char *result = NULL, *detail = NULL, *line = NULL;

	if (queue_verdict_latest_full(db, id, "test", &result, &detail) < 0)
		err_clear();
	else if (result && detail)
		line = xstrfmt("patch %lld: test %s: %s", id, result, detail);
	free(result);
	free(detail);
	return line;
}
