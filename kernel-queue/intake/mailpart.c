/* mailpart.c: one part of a series on one branch: kept, replaced, stored apart and held; a posted revert of a released patch flagged. */
#include "mailin-int.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "intake.h"
#include "log.h"
#include "queue.h"
#include "rc.h"
#include "reply.h"
#include "revert.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Appends ", what" to *notes (what happened to a part, for its mail row). */
__attribute__((format(printf, 2, 3)))
static int mailin_note(char **notes, const char *fmt, ...);

/* Who sent a mail (its From:, not an in-body From:'s author). */
const char *mailin_sender(const struct patch *p)
{
	return p->sender_email ? p->sender_email
	       : p->author_email ? p->author_email
				 : "";
}

/* The open rc of branch that patch is in: its version (caller frees), or NULL. */
static char *open_rc_of(sqlite3 *db, long long branch, long long patch)
{
	json_t *rc = rc_json(db, branch, 0), *v;
	char *version = NULL;
	size_t i;

	err_clear();
	if (!rc || strcmp(json_string_value(json_object_get(rc, "state"))
				  ? json_string_value(json_object_get(rc, "state"))
				  : "",
			  "open")) {
		json_decref(rc);
		return NULL;
	}
	json_array_foreach(json_object_get(rc, "patches"), i, v)
		if (json_integer_value(json_object_get(v, "id")) == patch)
			version = xstrdup(json_string_value(
				json_object_get(rc, "version")));
	json_decref(rc);
	return version;
}

int mailin_live(enum patch_state st)
{
	return st == PS_IMPORTED || st == PS_CHECKED || st == PS_QUEUED ||
	       st == PS_HELD;
}

/*
 * The live patch of the earlier version on branch that part p replaces:
 * the one with p's diff, else the one with p's subject (0: none); *same
 * when the diff is the same.
 */
static int counterpart(struct group *g, long long branch, const struct patch *p,
		       long long *out, int *same)
{
	sqlite3 *db = g->ps->bc->db;
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT p.patch_id FROM mail_messages m"
				      " JOIN mail_patches p ON p.message_id ="
				      " m.message_id WHERE m.series_id = ? AND"
				      " m.kind = 'patch' AND p.branch_id = ?"
				      " ORDER BY m.part",
				      "ii", g->prev.id, branch);
	long long by_subject = 0;
	int ret = 0;

	*out = 0;
	*same = 0;
	if (!st)
		return ERR_IO;
	while (!*same && (ret = db_step(st)) > 0) {
		long long id = sqlite3_column_int64(st, 0);
		enum patch_state state;
		char hash[41], *subject = NULL;
		if ((ret = queue_get_state(db, id, &state)) < 0 ||
		    (ret = queue_patch_hash(db, id, hash)) < 0)
			break;
		if (!mailin_live(state))
			continue;
		if (!strcmp(hash, p->patch_id)) {
			*out = id;
			*same = 1;
		} else if (!by_subject &&
			   (ret = queue_patch_subject(db, id, &subject, NULL)) >=
				   0 &&
			   !strcmp(subject, p->subject)) {
			by_subject = id;
		}
		free(subject);
		if (ret < 0)
			break;
	}
	sqlite3_finalize(st);
	if (ret < 0)
		return ret;
	if (!*same)
		*out = by_subject;
	return 0;
}

/* A review's trailers in a resent patch, added to the patch it keeps. */
static int add_trailers(sqlite3 *db, long long id, const struct patch *p)
{
	static const char *const kinds[] = { "reviewed_by", "acked_by",
					     "tested_by", NULL };
	int ret = 0;

	for (size_t i = 0; i < p->ntags && ret >= 0; i++)
		for (int k = 0; kinds[k] && ret >= 0; k++)
			if (!strcmp(p->tags[i].kind, kinds[k]))
				ret = queue_add_trailer(db, id, p->tags[i].kind,
							p->tags[i].value,
							p->tags[i].extra);
	return ret < 0 ? ret : 0;
}

static int mailin_note(char **notes, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (*notes)
		strbuf_addf(&sb, "%s, ", *notes);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(*notes);
	*notes = strbuf_detach(&sb, NULL);
	return 0;
}

/* A new patch, held at once for a maintainer with why. */
static int store_held(struct group *g, size_t b, const struct patch *p,
		      const char *why, long long *id)
{
	struct pass *ps = g->ps;
	int ret = intake_store_locked(ps->bc->db, g->branches[b], &g->source[b],
				      g->name, p, QUEUE_ADD_APART, ps->bc->actor,
				      id);

	if (ret <= 0)
		return ret; /* the same patch is there: nothing to confirm */
	ps->added = 1;
	long long ev = queue_set_state(ps->bc->db, *id, PS_HELD, why,
				       ps->bc->actor);
	if (ev < 0)
		return (int)ev;
	ps->res->held++;
	return 1;
}

/*
 * Part p of g into branch b (inside the group's savepoint). A vN sent by
 * its author in the thread of the earlier version supersedes it patch by
 * patch: the same diff keeps the stored patch (and its checks), another
 * diff replaces it, in its place, unless it is in an open rc (then the vN
 * is stored beside it and held). A vN from another address, or outside
 * the earlier version's thread, replaces nothing: a part that would
 * replace a live patch is stored beside it and held for a maintainer.
 */
int mailin_store_part(struct group *g, size_t b, size_t k, long long *id)
{
	struct pass *ps = g->ps;
	sqlite3 *db = ps->bc->db;
	long long branch = g->branches[b], c = 0;
	const struct patch *p = g->msgs[g->s->parts[k]];
	int same = 0, ret;

	if (g->mode == MODE_SUPERSEDE &&
	    (ret = counterpart(g, branch, p, &c, &same)) < 0)
		return ret;
	if (c && same) {
		*id = c;
		if ((ret = add_trailers(db, c, p)) < 0 ||
		    (ret = (int)event_add(db, ps->bc->actor, "patch", c,
					  "resent",
					  "unchanged in v%d of its series"
					  " (Message-Id <%s>): kept, with its"
					  " checks",
					  g->s->version, p->message_id)) < 0)
			return ret;
		if (!b)
			mailin_note(&g->notes[k], "kept patch %lld (unchanged)", c);
		return 0;
	}
	if (c) {
		char *rc = open_rc_of(db, branch, c), *why;
		if (rc) {
			why = xstrfmt("v%d of patch %lld (Message-Id <%s>) would"
				      " replace it, but patch %lld is in the"
				      " open rc %s: not replaced; a maintainer"
				      " decides (override this one and drop"
				      " patch %lld, or drop this one)",
				      g->s->version, c, p->message_id, c, rc,
				      c);
			ret = store_held(g, b, p, why, id);
			if (ret > 0 && !b)
				mailin_note(&g->notes[k], "held: patch %lld is in"
				     " the open rc %s", c, rc);
			free(why);
			free(rc);
			return ret < 0 ? ret : 0;
		}
		why = xstrfmt("superseded by v%d of the series (Message-Id"
			      " <%s>)", g->s->version, p->message_id);
		long long ev = queue_set_state(db, c, PS_DROPPED, why,
					       ps->bc->actor);
		free(why);
		if (ev < 0)
			return (int)ev;
		ps->res->superseded++;
		ret = intake_store_locked(db, branch, &g->source[b], g->name, p,
					  0, ps->bc->actor, id);
		if (ret < 0 || (ret > 0 && (ret = queue_place_after(db, *id, c)) < 0))
			return ret;
		ps->added = 1;
		mailin_check_later(ps, *id);
		if (!b)
			mailin_note(&g->notes[k], "replaced patch %lld", c);
		return 0;
	}
	if (g->mode == MODE_APART || g->s->version > 1) {
		long long *live = NULL;
		size_t nlive = 0;
		char hash[41];
		if ((ret = queue_rerolled(db, branch, p->subject, NULL, &live,
					  &nlive)) < 0)
			return ret;
		for (size_t i = 0; i < nlive && !c; i++) {
			if ((ret = queue_patch_hash(db, live[i], hash)) < 0)
				break;
			if (!strcmp(hash, p->patch_id))
				c = live[i];
		}
		if (ret >= 0 && c) {
			*id = c; /* the same diff: the same patch */
		} else if (ret >= 0 && nlive) {
			char *why = xstrfmt(
				"v%d from %s (Message-Id <%s>) would replace"
				" patch %lld, but %s: stored apart and held"
				" until a maintainer confirms it (override"
				" this one and drop patch %lld)",
				g->s->version, mailin_sender(p), p->message_id,
				live[0],
				g->mode == MODE_APART
					? "another address sent it than the"
					  " earlier version's"
					: "it was not sent in the earlier"
					  " version's thread",
				live[0]);
			ret = store_held(g, b, p, why, id);
			if (ret > 0 && !b)
				mailin_note(&g->notes[k], "held apart from patch %lld",
				     live[0]);
			free(why);
			c = live[0];
		}
		free(live);
		if (ret < 0)
			return ret;
		if (c)
			return 0;
	}
	ret = intake_store_locked(db, branch, &g->source[b], g->name, p, 0,
				  ps->bc->actor, id);
	if (ret > 0) {
		ps->added = 1;
		mailin_check_later(ps, *id);
	}
	return ret < 0 ? ret : 0;
}

/*
 * A revert posted to the list (Revert "...", naming the commit in a
 * Fixes: tag or "This reverts commit <sha>") of a released patch flags
 * that patch broken, as untrusted evidence: a maintainer decides.
 */
int mailin_flag_reverted(struct group *g, size_t k)
{
	struct pass *ps = g->ps;
	const struct patch *p = g->msgs[g->s->parts[k]];
	const char *m = p->message ? p->message : "", *at;
	char *shas[8];
	size_t ns = 0;
	int ret = 0;

	if (strncmp(p->subject, "Revert \"", 8))
		return 0;
	for (size_t i = 0; i < p->ntags && ns < 8; i++)
		if (!strcmp(p->tags[i].kind, "fixes"))
			shas[ns++] = xstrdup(p->tags[i].value);
	for (at = m; ns < 8 && (at = strstr(at, "This reverts commit "));) {
		size_t n;
		at += 20;
		n = strspn(at, "0123456789abcdefABCDEF");
		if (n >= 12 && n <= 40) {
			shas[ns] = xstrndup(at, n);
			for (char *c = shas[ns]; *c; c++)
				*c = (char)tolower((unsigned char)*c);
			ns++;
		}
	}
	for (size_t i = 0; i < ns && ret >= 0; i++) {
		long long *ids = NULL;
		size_t n = 0;
		if ((ret = queue_released_by_commit(ps->bc->db, shas[i], &ids,
						    &n)) < 0)
			break;
		for (size_t j = 0; j < n && ret >= 0; j++) {
			struct branch_ctx on;
			char *key = NULL, *why;
			if ((ret = queue_patch_branch(ps->bc->db, ids[j], &key)) <
				    0 ||
			    (ret = branch_ctx_for(ps->bc, key, &on)) < 0) {
				free(key);
				break;
			}
			why = xstrfmt("a revert of it was posted to the list by"
				      " %s <%s> (Message-Id <%s>): \"%s\"",
				      p->author_name ? p->author_name : "",
				      mailin_sender(p), p->message_id, p->subject);
			long long ev = flag_patch_locked(&on, ids[j], why, NULL,
							 FLAG_UNTRUSTED);
			free(why);
			free(key);
			if (ev == ERR_CONFLICT) {
				err_clear(); /* broken already */
				continue;
			}
			if (ev < 0) {
				ret = (int)ev;
				break;
			}
			ps->res->flagged++;
			mailin_note(&g->notes[k], "flagged patch %lld (released)",
			     ids[j]);
			log_info("mail %s: a revert of released patch %lld:"
				 " flagged broken", p->message_id, ids[j]);
		}
		free(ids);
	}
	for (size_t i = 0; i < ns; i++)
		free(shas[i]);
	return ret < 0 ? ret : 0;
}
