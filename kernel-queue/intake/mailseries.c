/* mailseries.c: the mail intake's series: found across passes, stored part by part, held while a part is missing, put in n/m order. */
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

#define INCOMPLETE REPLY_SERIES_INCOMPLETE

static void sseries_release(struct sseries *s)
{
	free(s->author);
	free(s->subject);
	free(s->state);
	memset(s, 0, sizeof(*s));
}

/* The series whose root (where = "root") or id (where = "id") is key: 1, 0 none. */
static int sseries_get(sqlite3 *db, const char *where, const char *key,
		       long long id, struct sseries *out)
{
	sqlite3_stmt *st =
		!strcmp(where, "root")
			? db_prepare(db,
				     "SELECT id, version, total, author_email,"
				     " subject, state FROM mail_series WHERE"
				     " root = ?",
				     "t", key)
			: db_prepare(db,
				     "SELECT id, version, total, author_email,"
				     " subject, state FROM mail_series WHERE"
				     " id = ?",
				     "i", id);
	int ret = st ? db_step(st) : ERR_IO;

	memset(out, 0, sizeof(*out));
	if (ret > 0) {
		out->id = sqlite3_column_int64(st, 0);
		out->version = sqlite3_column_int(st, 1);
		out->total = sqlite3_column_int(st, 2);
		out->author = xstrdup(db_col_text(st, 3) ? db_col_text(st, 3) : "");
		out->subject = xstrdup(db_col_text(st, 4));
		out->state = xstrdup(db_col_text(st, 5));
	}
	sqlite3_finalize(st);
	return ret;
}

/* The series a stored message belongs to (*id 0: none). */
static int series_of_message(sqlite3 *db, const char *message_id, long long *id)
{
	*id = 0;
	if (!message_id)
		return 0;
	*id = db_int(db, 1,
		     "SELECT series_id FROM mail_messages WHERE message_id = ?"
		     " AND kind IN ('patch','cover') AND series_id IS NOT NULL",
		     "t", message_id);
	return *id < 0 ? (int)*id : 0;
}


static struct msg *gmsg(const struct group *g, size_t i)
{
	return &g->ps->v[g->idx[i]];
}

/* The configured branches a series is for: its prefix, else Cc: stable # X.Y. */
static size_t series_branches(struct pass *ps, struct patch *const *msgs,
			      const struct thread_series *s, long long *ids,
			      size_t max)
{
	const struct config *c = &ps->bc->cfg;
	const struct patch *head =
		msgs[s->cover != THREAD_NONE ? s->cover : s->parts[0]];
	char ver[8][INTAKE_VERSION_SIZE];
	int nv = intake_prefix_versions(head->subject_prefix, ver, 8);
	size_t n = 0;

	if (!nv && s->nparts)
		nv = intake_prefix_versions(msgs[s->parts[0]]->subject_prefix,
					    ver, 8);
	if (nv) {
		for (int b = 0; b < c->nbranches && n < max; b++)
			for (int k = 0; k < nv; k++)
				if (!strcmp(c->branches[b].key, ver[k]) &&
				    branch_ctx_branch_id(ps->bc, ver[k],
							 &ids[n]) == 0) {
					n++;
					break;
				}
		return n;
	}
	for (int b = 0; b < c->nbranches && n < max; b++) {
		char *v = xstrfmt("%s.0", c->branches[b].key);
		int covers = 0;
		for (size_t k = 0; k < s->nparts && !covers; k++) {
			const struct patch *p = msgs[s->parts[k]];
			for (size_t t = 0; t < p->ntags && !covers; t++)
				covers = !strcmp(p->tags[t].kind, "stable") &&
					 p->tags[t].extra && *p->tags[t].extra &&
					 stable_version_covers(p->tags[t].extra,
							       v) > 0;
		}
		free(v);
		if (covers && branch_ctx_branch_id(ps->bc, c->branches[b].key,
						   &ids[n]) == 0)
			n++;
	}
	return n;
}

/*
 * The stored series g continues (a part, or the cover, of a series read
 * in an earlier pass: the same version from the same address), and the
 * earlier version it was sent in the thread of (prev).
 */
static int find_link(struct group *g)
{
	sqlite3 *db = g->ps->bc->db;
	const struct thread_series *s = g->s;
	int ret = 0;

	for (size_t k = 0; k <= s->nparts && !g->ser.id; k++) {
		size_t i = k == 0 ? s->cover : s->parts[k - 1];
		const struct patch *p;
		if (i == THREAD_NONE)
			continue;
		p = g->msgs[i];
		for (int how = 0; how < 3 && !g->ser.id; how++) {
			struct sseries x;
			long long id = 0;
			if (how == 0)
				ret = sseries_get(db, "root", p->message_id, 0,
						  &x);
			else if (how == 1 && p->in_reply_to)
				ret = sseries_get(db, "root", p->in_reply_to, 0,
						  &x);
			else if (how == 2 &&
				 (ret = series_of_message(db, p->in_reply_to,
							  &id)) >= 0 &&
				 id)
				ret = sseries_get(db, "id", NULL, id, &x);
			else
				continue;
			if (ret < 0)
				return ret;
			if (!ret)
				continue;
			if (x.version == s->version && x.total == s->total &&
			    !strcasecmp(x.author, mailin_sender(g->head))) {
				g->ser = x;
				continue;
			}
			if (x.version < s->version && !g->prev.id &&
			    strcmp(x.state, "superseded"))
				g->prev = x;
			else
				sseries_release(&x);
		}
	}
	return 0;
}

/* A new mail_series row for g, rooted where its parts hang from. */
static int series_make(struct group *g)
{
	sqlite3 *db = g->ps->bc->db;
	const struct thread_series *s = g->s;
	const struct patch *first = s->nparts ? g->msgs[s->parts[0]] : g->head;
	const char *roots[2] = {
		s->cover != THREAD_NONE ? g->head->message_id
		: first->in_reply_to && s->total > 0 ? first->in_reply_to
						      : first->message_id,
		g->head->message_id,
	};

	for (int r = 0; r < 2; r++) {
		long long have = db_int(db, 1,
					"SELECT count(*) FROM mail_series WHERE"
					" root = ?",
					"t", roots[r]);
		int ret;
		if (have < 0)
			return (int)have;
		if (have)
			continue; /* another author's series claims it */
		if ((ret = db_exec(db,
				   "INSERT INTO mail_series (root, author_email,"
				   " subject, version, total) VALUES (?, ?, ?,"
				   " ?, ?)",
				   "tttdd", roots[r], mailin_sender(g->head),
				   g->head->subject, s->version, s->total)) < 0)
			return ret;
		return sseries_get(db, "id", NULL, db_last_id(db), &g->ser) < 0
			       ? ERR_IO
			       : 0;
	}
	return err_set(ERR_CONFLICT, "mail %s: its series is stored already",
		       g->head->message_id);
}

/* The live patches of series on branch, in n/m order: *ids, *parts (caller frees). */
static int series_patches(sqlite3 *db, long long series, long long branch,
			  long long **ids, int **parts, size_t *n)
{
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT p.patch_id, m.part FROM"
				      " mail_messages m JOIN mail_patches p ON"
				      " p.message_id = m.message_id WHERE"
				      " m.series_id = ? AND m.kind = 'patch'"
				      " AND p.branch_id = ? ORDER BY m.part,"
				      " m.read_at",
				      "ii", series, branch);
	int ret = 0;

	*ids = NULL;
	*parts = NULL;
	*n = 0;
	if (!st)
		return ERR_IO;
	while ((ret = db_step(st)) > 0) {
		long long id = sqlite3_column_int64(st, 0);
		enum patch_state state;
		if ((ret = queue_get_state(db, id, &state)) < 0)
			break;
		if (!mailin_live(state) ||
		    (*n && (*ids)[*n - 1] == id))
			continue;
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		*parts = xrealloc(*parts, (*n + 1) * sizeof(**parts));
		(*ids)[*n] = id;
		(*parts)[(*n)++] = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	return ret < 0 ? ret : 0;
}

/* The series' patches on branch in n/m order in the queue (a late part moves in). */
static int series_order(sqlite3 *db, long long series, long long branch)
{
	long long *ids;
	int *parts;
	size_t n;
	double *pos;
	int ret = series_patches(db, series, branch, &ids, &parts, &n);

	if (ret < 0 || n < 2)
		goto out;
	pos = xcalloc(n, sizeof(*pos));
	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = queue_get_row(db, ids[i], NULL, NULL, &pos[i]);
	if (ret >= 0 && pos[0] > pos[1] &&
	    (ret = queue_place_before(db, ids[0], ids[1])) >= 0)
		ret = queue_get_row(db, ids[0], NULL, NULL, &pos[0]);
	for (size_t i = 1; i < n && ret >= 0; i++) {
		int behind = pos[i] <= pos[i - 1];
		int beyond = i + 1 < n && pos[i] > pos[i + 1] &&
			     pos[i + 1] > pos[i - 1];
		if ((behind || beyond) &&
		    (ret = queue_place_after(db, ids[i], ids[i - 1])) >= 0)
			ret = queue_get_row(db, ids[i], NULL, NULL, &pos[i]);
	}
	free(pos);
out:
	free(ids);
	free(parts);
	return ret < 0 ? ret : 0;
}

/*
 * An incomplete series holds its patches ("missing 2/3", as b4 am says
 * it); once the last part is in, the patches it held go on to the checks.
 */
static int series_complete(struct group *g)
{
	struct pass *ps = g->ps;
	sqlite3 *db = ps->bc->db;
	int total = g->ser.total, ret = 0;
	char *have;
	struct strbuf missing = STRBUF_INIT;
	sqlite3_stmt *st;

	if (total < 2 || total > 1000)
		return 0;
	have = xcalloc((size_t)total + 1, 1);
	st = db_prepare(db,
			"SELECT DISTINCT part FROM mail_messages WHERE"
			" series_id = ? AND kind = 'patch' AND part > 0",
			"i", g->ser.id);
	if (!st) {
		free(have);
		return ERR_IO;
	}
	while ((ret = db_step(st)) > 0) {
		int part = sqlite3_column_int(st, 0);
		if (part >= 1 && part <= total)
			have[part] = 1;
	}
	sqlite3_finalize(st);
	for (int i = 1; ret >= 0 && i <= total; i++)
		if (!have[i])
			strbuf_addf(&missing, "%s%d/%d", missing.len ? ", " : "",
				    i, total);
	free(have);
	for (size_t b = 0; ret >= 0 && b < g->nb; b++) {
		long long *ids;
		int *parts;
		size_t n;
		if ((ret = series_patches(db, g->ser.id, g->branches[b], &ids,
					  &parts, &n)) < 0)
			break;
		for (size_t i = 0; i < n && ret >= 0; i++) {
			enum patch_state state;
			char *reason = NULL, *why;
			long long ev = 0;
			if ((ret = queue_get_row(db, ids[i], &state, &reason,
						 NULL)) < 0)
				break;
			int ours = state == PS_HELD && reason &&
				   !strncmp(reason, INCOMPLETE,
					    strlen(INCOMPLETE));
			if (missing.len && state != PS_HELD) {
				why = xstrfmt(INCOMPLETE "%s of \"%s\" from %s"
					      " (b4 am: missing [%s]); its"
					      " patches wait here until the"
					      " part arrives",
					      missing.buf, g->ser.subject,
					      g->ser.author, missing.buf);
				ev = queue_set_state(db, ids[i], PS_HELD, why,
						     ps->bc->actor);
				free(why);
			} else if (!missing.len && ours) {
				why = xstrfmt("series complete: its missing"
					      " part arrived (%s)",
					      g->name);
				ev = queue_set_state(db, ids[i], PS_CHECKED,
						     why, ps->bc->actor);
				free(why);
				mailin_check_later(ps, ids[i]);
			}
			free(reason);
			if (ev < 0)
				ret = (int)ev;
		}
		free(ids);
		free(parts);
	}
	if (ret >= 0) {
		const char *state = missing.len ? "incomplete" : "complete";
		if (strcmp(state, g->ser.state)) {
			ret = db_exec(db, "UPDATE mail_series SET state = ?"
				      " WHERE id = ?", "ti", state, g->ser.id);
			if (ret >= 0 && missing.len)
				ps->res->incomplete++;
			else if (ret >= 0)
				ps->res->completed++;
		}
		if (ret >= 0 && missing.len)
			log_info("mail %s: series \"%s\" incomplete: missing"
				 " %s; held", g->head->message_id,
				 g->ser.subject, missing.buf);
	}
	strbuf_release(&missing);
	return ret < 0 ? ret : 0;
}

static void group_free(struct group *g)
{
	size_t n = g->s->nparts;

	sseries_release(&g->ser);
	sseries_release(&g->prev);
	free(g->name);
	free(g->ids);
	for (size_t k = 0; k < n; k++) {
		free(g->notes ? g->notes[k] : NULL);
		free(g->errors ? g->errors[k] : NULL);
	}
	free(g->notes);
	free(g->errors);
}

/* Rows for every message of g with kind and why (not stored: ignored, invalid). */
static int group_record_all(struct group *g, const char *kind, const char *why)
{
	const struct thread_series *s = g->s;
	int ret = 0;

	for (size_t k = 0; k < s->nparts && ret >= 0; k++)
		ret = mailin_record(g->ps, gmsg(g, s->parts[k]), kind, 0, NULL, why, 0,
			     0);
	if (ret >= 0 && s->cover != THREAD_NONE)
		ret = mailin_record(g->ps, gmsg(g, s->cover), kind, 0, NULL, why, 0, 0);
	if (!strcmp(kind, "ignored"))
		g->ps->res->ignored += s->nparts;
	else
		g->ps->res->invalid += s->nparts;
	return ret < 0 ? ret : 0;
}

/* The mail rows of g and which patch each part became on each branch. */
static int group_record(struct group *g)
{
	struct pass *ps = g->ps;
	sqlite3 *db = ps->bc->db;
	const struct thread_series *s = g->s;
	long long first = 0;
	int ret = 0;

	for (size_t k = 0; k < s->nparts && ret >= 0; k++) {
		const struct msg *m = gmsg(g, s->parts[k]);
		if (g->errors[k]) {
			ret = mailin_record(ps, m, "invalid", 0, NULL, g->errors[k], 0,
				     0);
			ps->res->invalid++;
			continue;
		}
		if (!first)
			first = g->ids[k];
		if ((ret = mailin_record(ps, m, "patch", g->ids[k], g->notes[k], NULL,
				  g->ser.id, m->p->series_part)) < 0)
			break;
		ps->res->patches++;
	}
	if (ret >= 0 && s->cover != THREAD_NONE) {
		if (!first && g->ser.id)
			first = db_int(db, 1,
				       "SELECT patch_id FROM mail_messages WHERE"
				       " series_id = ? AND kind = 'patch' AND"
				       " patch_id IS NOT NULL ORDER BY part"
				       " LIMIT 1",
				       "i", g->ser.id);
		ret = mailin_record(ps, gmsg(g, s->cover), "cover", first, NULL, NULL,
			     g->ser.id, 0);
	}
	return ret < 0 ? ret : 0;
}

static int map_patch(sqlite3 *db, const char *message_id, long long branch,
		     long long patch)
{
	int ret = db_exec(db,
			  "INSERT OR REPLACE INTO mail_patches (message_id,"
			  " branch_id, patch_id) VALUES (?, ?, ?)",
			  "tii", message_id, branch, patch);

	return ret < 0 ? ret : 0;
}

/*
 * One series of the pass (inside the series step's transaction): its
 * stored series found or made, each part stored on each branch in a
 * savepoint of its own (a part that fails in itself is recorded invalid,
 * the rest go on), its earlier version superseded, its parts in n/m
 * order, held while a part is missing.
 */
static int group_store(struct pass *ps, struct patch *const *msgs,
		       const size_t *idx, const struct thread_series *s)
{
	sqlite3 *db = ps->bc->db;
	struct group g = { .ps = ps, .msgs = msgs, .idx = idx, .s = s };
	int ret = 0;

	g.head = msgs[s->cover != THREAD_NONE ? s->cover : s->parts[0]];
	g.ids = xcalloc(s->nparts + 1, sizeof(*g.ids));
	g.notes = xcalloc(s->nparts + 1, sizeof(*g.notes));
	g.errors = xcalloc(s->nparts + 1, sizeof(*g.errors));
	g.name = xstrfmt("mail: %s", idx && s->nparts
					     ? ps->v[idx[s->parts[0]]].name
					     : ps->v[idx[s->cover]].name);
	/* a posted revert of a released patch, whatever branch it names */
	for (size_t k = 0; k < s->nparts && ret >= 0; k++)
		ret = mailin_flag_reverted(&g, k);
	if (ret < 0)
		goto out;
	if (s->superseded) {
		ret = group_record_all(&g, "ignored",
				       "a later version of the series came in"
				       " the same pass");
		goto out;
	}
	g.nb = series_branches(ps, msgs, s, g.branches, 16);
	if (!g.nb) {
		ret = group_record_all(&g, "ignored",
				       s->nparts ? "not for a configured branch"
						 : "a cover letter without"
						   " patches");
		goto out;
	}
	if ((ret = find_link(&g)) < 0)
		goto out;
	if (!g.ser.id && (ret = series_make(&g)) < 0) {
		if (mailin_transient(ret))
			goto out;
		ret = group_record_all(&g, "invalid", err_msg());
		goto out;
	}
	if (g.prev.id)
		g.mode = !strcasecmp(g.prev.author, mailin_sender(g.head))
				 ? MODE_SUPERSEDE
				 : MODE_APART;
	for (size_t k = 0; k < s->nparts; k++) {
		const struct patch *p = msgs[s->parts[k]];
		if ((ret = mailin_savepoint(db, "SAVEPOINT part")) < 0)
			goto out;
		for (size_t b = 0; b < g.nb && ret >= 0; b++) {
			long long id = 0;
			if ((ret = mailin_store_part(&g, b, k, &id)) >= 0)
				ret = map_patch(db, p->message_id,
						g.branches[b], id);
			if (ret >= 0 && !b)
				g.ids[k] = id;
		}
		if (ret < 0 && mailin_transient(ret))
			goto out;
		if (ret < 0) {
			/* this mail is bad in itself: the others go on */
			g.errors[k] = xstrdup(err_msg());
			log_warnx("mail %s: %s", p->message_id, g.errors[k]);
			err_clear();
			free(g.notes[k]);
			g.notes[k] = NULL;
			if ((ret = mailin_savepoint(db, "ROLLBACK TO part")) < 0)
				goto out;
		}
		if ((ret = mailin_savepoint(db, "RELEASE part")) < 0)
			goto out;
	}
	if ((ret = group_record(&g)) < 0)
		goto out;
	for (size_t b = 0; b < g.nb && ret >= 0; b++)
		ret = series_order(db, g.ser.id, g.branches[b]);
	if (ret >= 0)
		ret = series_complete(&g);
	if (ret >= 0 && g.mode == MODE_SUPERSEDE)
		ret = db_exec(db,
			      "UPDATE mail_series SET state = 'superseded',"
			      " replaced_by = ? WHERE id = ?",
			      "ii", g.ser.id, g.prev.id);
	if (ret >= 0 && s->nparts)
		ps->res->series++;
out:
	group_free(&g);
	return ret < 0 ? ret : 0;
}

/* Patches and covers, assembled into series, stored series by series. */
int mailin_store_series(struct pass *ps)
{
	struct patch **sp = xcalloc(ps->n ? ps->n : 1, sizeof(*sp));
	size_t *idx = xcalloc(ps->n ? ps->n : 1, sizeof(*idx));
	size_t nsp = 0, ns;
	struct thread_series *series = NULL;
	int ret = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct msg *m = &ps->v[i];
		if (m->skip || m->pending)
			continue;
		if (m->p->diff || (m->p->series_total && !m->p->series_part &&
				   !m->p->reply)) {
			idx[nsp] = i;
			sp[nsp++] = m->p;
			m->skip = 1;
		}
	}
	ns = thread_assemble(&series, sp, nsp);
	for (size_t s = 0; s < ns && ret >= 0; s++) {
		size_t n = series[s].nparts + (series[s].cover != THREAD_NONE);
		if ((ret = mailin_tx_begin(ps)) < 0 ||
		    (ret = mailin_savepoint(ps->bc->db, "SAVEPOINT series")) < 0)
			break;
		ret = group_store(ps, sp, idx, &series[s]);
		if (ret < 0 && !mailin_transient(ret)) {
			/* the series as a whole failed in itself */
			char *why = xstrdup(err_msg());
			struct group g = { .ps = ps, .msgs = sp, .idx = idx,
					   .s = &series[s] };
			log_warnx("mail %s: %s",
				  sp[series[s].cover != THREAD_NONE
					     ? series[s].cover
					     : series[s].parts[0]]->message_id,
				  why);
			err_clear();
			if ((ret = mailin_savepoint(ps->bc->db,
					     "ROLLBACK TO series")) >= 0)
				ret = group_record_all(&g, "invalid", why);
			free(why);
		}
		if (ret >= 0)
			ret = mailin_savepoint(ps->bc->db, "RELEASE series");
		if (ret >= 0)
			ret = mailin_tx_count(ps, n);
	}
	if (ret < 0)
		mailin_tx_abort(ps);
	else
		ret = mailin_tx_commit(ps);
	thread_series_free(series, ns);
	free(sp);
	free(idx);
	return ret;
}
