/* revert-plan.c: the plan for taking a broken patch out: it and its dependents, newest first. */
#include "revert-int.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "queue.h"
#include "strbuf.h"

void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].subject);
		free(p->v[i].state);
		free(p->v[i].released_commit);
		free(p->v[i].upstream);
		free(p->v[i].why);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

static int plan_has(const struct plan *p, long long id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].id == id)
			return 1;
	return 0;
}

/* A copy of o's string field, or NULL. */
static char *dup_of(json_t *o, const char *field)
{
	const char *s = json_string_value(json_object_get(o, field));

	return s ? xstrdup(s) : NULL;
}

static int plan_add(sqlite3 *db, struct plan *p, long long id, char *why)
{
	json_t *row = queue_patch_brief_json(db, id);

	if (!row) {
		free(why);
		return err_last() < 0 ? err_last() : ERR_IO;
	}
	if (p->n == p->alloc)
		p->v = xrealloc(p->v, (p->alloc = p->alloc ? p->alloc * 2 : 8) *
					      sizeof(*p->v));
	struct item *it = &p->v[p->n++];
	memset(it, 0, sizeof(*it));
	it->id = id;
	/* queue_pos is REAL: its integer part orders the plan */
	it->pos =
		(long long)json_number_value(json_object_get(row, "queue_pos"));
	it->subject = dup_of(row, "subject");
	it->state = dup_of(row, "state");
	it->released_commit = dup_of(row, "released_commit");
	it->upstream = dup_of(row, "upstream");
	it->why = why;
	enum patch_state ps = (enum patch_state)queue_state_parse(it->state);
	it->revert = ps == PS_RELEASED ||
		     (ps == PS_BROKEN && it->released_commit);
	json_decref(row);
	return 0;
}

static int cmp_newest_first(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	return x->pos < y->pos ? 1 : x->pos > y->pos ? -1 : 0;
}

/* The patch and, transitively, every patch that goes with it. */
int plan_build(struct branch_ctx *bc, long long root, struct plan *p)
{
	enum patch_state s;
	int ret = queue_get_state(bc->db, root, &s);

	memset(p, 0, sizeof(*p));
	if (ret < 0)
		return ret;
	if (s == PS_DROPPED || s == PS_REVERTED || s == PS_REJECTED)
		return err_set(ERR_CONFLICT,
			       "patch %lld is %s: there is nothing to revert",
			       root, queue_state_name(s));
	if ((ret = plan_add(bc->db, p, root, xstrdup("the broken patch"))) < 0)
		return ret;
	for (size_t i = 0; i < p->n; i++) {
		json_t *deps = queue_dependents_json(bc->db, p->v[i].id), *d;
		size_t k;
		if (!deps) {
			plan_free(p);
			return ERR_IO;
		}
		json_array_foreach(deps, k, d)
		{
			long long dep = json_integer_value(
				json_object_get(d, "patch_id"));
			const char *kind =
				json_string_value(json_object_get(d, "kind"));
			if (plan_has(p, dep))
				continue;
			char *why = xstrfmt(
				!strcmp(kind, "stable-dep-of")
					? "Stable-dep-of: brought in for patch %lld"
				: !strcmp(kind, "prereq")
					? "needs patch %lld (its prerequisite)"
				: !strcmp(kind, "series")
					? "later part of the series of patch %lld"
					: "Fixes: names patch %lld",
				p->v[i].id);
			if ((ret = plan_add(bc->db, p, dep, why)) < 0) {
				json_decref(deps);
				plan_free(p);
				return ret;
			}
		}
		json_decref(deps);
	}
	qsort(p->v, p->n, sizeof(*p->v), cmp_newest_first);
	return 0;
}

static json_t *plan_json(long long root, const struct plan *p)
{
	json_t *o = json_object(), *items = json_array();

	json_object_set_new(o, "patch_id", json_integer(root));
	for (size_t i = 0; i < p->n; i++) {
		json_t *it = json_object();
		json_object_set_new(it, "patch_id", json_integer(p->v[i].id));
		json_object_set_new(it, "subject", json_string(p->v[i].subject));
		json_object_set_new(it, "state", json_string(p->v[i].state));
		json_object_set_new(it, "action",
				    json_string(p->v[i].revert ? "revert" : "drop"));
		json_object_set_new(it, "why", json_string(p->v[i].why));
		if (p->v[i].released_commit)
			json_object_set_new(it, "commit",
					    json_string(p->v[i].released_commit));
		json_array_append_new(items, it);
	}
	json_object_set_new(o, "items", items);
	return o;
}

json_t *revert_plan(struct branch_ctx *bc, long long patch_id)
{
	struct plan p;
	json_t *o;

	if (queue_follow_patch(bc, patch_id) < 0 ||
	    plan_build(bc, patch_id, &p) < 0)
		return NULL;
	o = plan_json(patch_id, &p);
	plan_free(&p);
	return o;
}

int plan_store_locked(struct branch_ctx *bc, long long patch_id,
		      const char *reason, long long *revert_id)
{
	struct plan p;
	char *was = NULL;
	long long id = 0;
	int ret;

	*revert_id = 0;
	ret = db_query_int(bc->db, &id,
			   "SELECT id FROM reverts WHERE patch_id = ? AND state"
			   " = 'planned' ORDER BY id LIMIT 1",
			   "i", patch_id);
	if (ret == 0) {
		/* one plan per patch: asking again (the daemon's guard, each
		 * time it looks) adds nothing */
		*revert_id = id;
		if ((ret = db_query_text(bc->db, &was,
					 "SELECT reason FROM reverts WHERE id"
					 " = ?",
					 "i", id)) < 0 ||
		    (was && !strcmp(was, reason)))
			goto out;
		ret = db_exec(bc->db,
			      "UPDATE reverts SET reason = ? WHERE id = ?",
			      "ti", reason, id);
		if (ret >= 0)
			ret = (int)event_add(bc->db, bc->actor, "revert", id,
					     "replanned", "%s", reason);
		goto out;
	}
	if (ret != ERR_NOTFOUND)
		return ret;
	err_clear();
	if ((ret = plan_build(bc, patch_id, &p)) < 0)
		return ret;
	ret = insert_revert(bc, patch_id, reason, &p, "planned", NULL, NULL, 0,
			    revert_id);
	plan_free(&p);
out:
	free(was);
	return ret < 0 ? ret : 0;
}

int revert_store_plan(struct branch_ctx *bc, long long patch_id,
		      const char *reason)
{
	long long id;
	int ret = queue_follow_patch(bc, patch_id);

	if (ret < 0 || (ret = db_begin(bc->db)) < 0)
		return ret;
	return db_end(bc->db, plan_store_locked(bc, patch_id, reason, &id));
}
