/* branch-status.c: what each branch is doing and what it waits for, from the store alone. */
#include "branch-status.h"
#include "bisect.h"
#include "branch.h"
#include "candidate.h"
#include "config.h"
#include "err.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct busy {
	long long cand, bisection;
	char cand_step[32], cand_branch[64], cand_purpose[32];
};

struct bisecting {
	long long id, branch_id, done, total;
	char key[64];
};

static void copy_str(char *dst, size_t n, json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	snprintf(dst, n, "%s", s ? s : "");
}

static long long int_of(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static int load_active(sqlite3 *db, struct busy *b)
{
	json_t *c = candidate_at_work_json(db);

	memset(b, 0, sizeof(*b));
	if (!c)
		return ERR_IO;
	if (json_is_object(c) &&
	    branch_fill(db, c, "branch_id", BRANCH_KEY) < 0) {
		json_decref(c);
		return ERR_IO;
	}
	if (json_is_object(c)) {
		b->cand = int_of(c, "id");
		copy_str(b->cand_purpose, sizeof(b->cand_purpose), c,
			 "purpose");
		copy_str(b->cand_step, sizeof(b->cand_step), c, "step");
		b->bisection = int_of(c, "bisection_id");
		copy_str(b->cand_branch, sizeof(b->cand_branch), c,
			 "branch_id");
	}
	json_decref(c);
	return 0;
}

static int load_bisecting(sqlite3 *db, struct bisecting **out, size_t *n)
{
	json_t *rows = bisect_running_json(db), *o;
	struct bisecting *v;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!rows)
		return ERR_IO;
	v = xcalloc(json_array_size(rows) + 1, sizeof(*v));
	json_array_foreach(rows, i, o)
	{
		v[i].id = int_of(o, "id");
		v[i].branch_id =
			candidate_branch_id(db, int_of(o, "candidate_id"));
		json_object_set_new(o, "key", json_integer(v[i].branch_id));
		if (branch_fill(db, o, "key", BRANCH_KEY) < 0) {
			json_decref(rows);
			free(v);
			return ERR_IO;
		}
		copy_str(v[i].key, sizeof(v[i].key), o, "key");
		v[i].done = int_of(o, "steps_done");
		v[i].total = int_of(o, "steps_total");
	}
	*n = json_array_size(rows);
	*out = v;
	json_decref(rows);
	return 0;
}

/*
 * What one branch does and what it waits for, from the store alone: the
 * daemon runs one step at a time for every branch (one build lock), so a
 * branch with work waits for the candidate at work on another branch, or
 * for another branch's bisection between its steps.
 */
static void branch_wait(sqlite3 *db, json_t *o, long long id,
			const char *key, const struct busy *b,
			const struct bisecting *bis, size_t nbis)
{
	long long pending = candidate_next_pending(db, id);
	long long imported = queue_count(db, id, PS_IMPORTED);
	const struct bisecting *mine = NULL, *other = NULL;
	char *doing = NULL, *waits = NULL;

	if (imported < 0)
		imported = 0;
	for (size_t i = 0; i < nbis; i++) {
		if (bis[i].branch_id == id && !mine)
			mine = &bis[i];
		else if (bis[i].branch_id != id && !other)
			other = &bis[i];
	}
	int own = b->cand && key && !strcmp(b->cand_branch, key);
	int work = pending || imported || mine;

	if (own)
		doing = xstrfmt("candidate %lld (%s) at step %s", b->cand,
				b->cand_purpose, b->cand_step);
	else if (mine)
		doing = xstrfmt("bisection %lld, step %lld of about %lld",
				mine->id, mine->done,
				mine->total ? mine->total : mine->done + 1);
	if (!work && !own)
		waits = xstrdup("nothing");
	else if (own)
		waits = xstrdup("nothing: it holds the build lock");
	else if (b->cand && b->bisection)
		waits = xstrfmt("bisection %lld running on %s (its candidate"
				" %lld holds the build lock)",
				b->bisection, b->cand_branch, b->cand);
	else if (b->cand)
		waits = xstrfmt("build lock held by %s candidate %lld",
				b->cand_branch, b->cand);
	else if (other && (pending || imported))
		waits = xstrfmt("bisection %lld running on %s (one step at a"
				" time, in turn)",
				other->id, other->key);
	else if (mine)
		waits = xstrfmt("the next step of bisection %lld", mine->id);
	else if (pending)
		waits = xstrfmt("its turn: candidate %lld is pending", pending);
	else
		waits = xstrfmt("its turn: %lld patch%s to check", imported,
				imported == 1 ? "" : "es");
	json_object_set_new(o, "doing", doing ? json_string(doing) : json_null());
	json_object_set_new(o, "waits_for", json_string(waits));
	free(doing);
	free(waits);
}

/* {state: count} of branch id's patches, every state present. */
static json_t *state_counts(sqlite3 *db, long long id)
{
	json_t *got = queue_state_counts(db, id), *o, *v;

	if (!got)
		return NULL;
	o = json_object();
	for (int s = 0; s < PS_COUNT; s++) {
		const char *name = queue_state_name((enum patch_state)s);
		v = json_object_get(got, name);
		json_object_set_new(o, name, v ? json_incref(v)
					       : json_integer(0));
	}
	json_decref(got);
	return o;
}

static json_t *conf_text(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *branch_status_json(const struct branch_ctx *bc)
{
	sqlite3 *db = bc->db;
	struct bisecting *bis = NULL;
	struct busy b;
	size_t nbis = 0, i;
	json_t *rows, *o;

	if (!(rows = branch_list_json(db)) || load_active(db, &b) < 0 ||
	    load_bisecting(db, &bis, &nbis) < 0) {
		json_decref(rows);
		err_set(ERR_IO, "branches: cannot read the store");
		return NULL;
	}
	json_array_foreach(rows, i, o)
	{
		long long id = json_integer_value(json_object_get(o, "id"));
		const char *key = json_string_value(json_object_get(o, "key"));
		json_t *cnt = state_counts(db, id);
		json_t *lc = candidate_latest_json(db, id);
		json_t *lv = candidate_last_verdict_json(db, id);
		/* NULL: a branch of the store the config no longer has */
		const struct branch_conf *c =
			key ? config_branch(&bc->cfg, key) : NULL;

		err_clear();
		json_object_set_new(o, "tree", conf_text(c ? c->tree_dir : NULL));
		json_object_set_new(o, "queue_dir",
				    conf_text(c ? c->queue_dir : NULL));
		json_object_set_new(o, "patches", cnt ? cnt : json_object());
		json_object_set_new(o, "latest_candidate",
				    lc ? lc : json_null());
		json_object_set_new(o, "last_verdict", lv ? lv : json_null());
		branch_wait(db, o, id, key, &b, bis, nbis);
		json_object_del(o, "id");
	}
	free(bis);
	return json_pack("{s:o}", "branches", rows);
}

int branch_status_refresh(struct branch_ctx *bc)
{
	for (int i = 0; i < bc->cfg.nbranches; i++) {
		const struct branch_conf *b = &bc->cfg.branches[i];
		char *version = repo_dir_branch_version(b->tree_dir, b->branch);
		int ret;

		if (!version) {
			err_clear(); /* no tree yet: nothing to record */
			continue;
		}
		ret = branch_ctx_set_version(bc->db, b->key, version);
		free(version);
		if (ret < 0)
			return err_prefix(ret, "branch %s", b->key);
	}
	return 0;
}
