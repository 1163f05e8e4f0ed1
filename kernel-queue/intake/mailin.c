/* mailin.c: maildirs and public-inbox epochs read incrementally; patches imported, replies applied. */
#include "mailin.h"
#include "address.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "intake.h"
#include "log.h"
#include "queue.h"
#include "rc.h"
#include "repo.h"
#include "review.h"
#include "revert.h"
#include "strbuf.h"
#include "thread.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* Steps up a thread from a reply to the patch it is about. */
#define MAX_THREAD_DEPTH 64

struct msg {
	char *raw;
	size_t len;
	char *name;             /* where it came from, for messages */
	long long source_id;
	struct patch *p;        /* NULL when invalid */
	char *error;
	int skip;               /* a duplicate, or stored already */
};

/* A source read this pass, and where it stopped. */
struct source {
	long long id;
	char *path;
	char *position;         /* the new position, recorded at the end */
	char **files;           /* maildir: names read (the part before ':') */
	size_t nfiles, afiles;
};

struct pass {
	struct branch_ctx *bc;
	struct msg *v;
	size_t n, alloc;
	struct source *src;
	size_t nsrc;
	char *own_addr;         /* mail_from's address */
	struct mailin_result *res;
	struct intake_result imported; /* ids the pass imported, to check */
};

/* The patches r imported: checked at the end of the pass. */
static void pass_imported(struct pass *ps, const struct intake_result *r)
{
	struct intake_result *all = &ps->imported;

	if (!r->added)
		return;
	all->ids = xrealloc(all->ids, (all->nids + r->nids) * sizeof(*all->ids));
	memcpy(all->ids + all->nids, r->ids, r->nids * sizeof(*r->ids));
	all->nids += r->nids;
	all->added += r->added;
}

static void pass_push(struct pass *ps, long long source_id, char *name,
		      const char *buf, size_t len)
{
	if (ps->n == ps->alloc) {
		ps->alloc = ps->alloc ? ps->alloc * 2 : 64;
		ps->v = xrealloc(ps->v, ps->alloc * sizeof(*ps->v));
	}
	struct msg *m = &ps->v[ps->n++];
	memset(m, 0, sizeof(*m));
	m->raw = xstrndup(buf, len);
	m->len = len;
	m->name = name;
	m->source_id = source_id;
	ps->res->read++;
}

static void pass_free(struct pass *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->v[i].raw);
		free(ps->v[i].name);
		free(ps->v[i].error);
		patch_free(ps->v[i].p);
	}
	free(ps->v);
	for (size_t i = 0; i < ps->nsrc; i++) {
		free(ps->src[i].path);
		free(ps->src[i].position);
		for (size_t k = 0; k < ps->src[i].nfiles; k++)
			free(ps->src[i].files[k]);
		free(ps->src[i].files);
	}
	free(ps->src);
	free(ps->own_addr);
	intake_result_release(&ps->imported);
}

/* The mail_sources row of path, made when new; its position (may be NULL). */
static int source_open(struct pass *ps, const char *kind, const char *path,
		       struct source **out)
{
	sqlite3 *db = ps->bc->db;
	struct source *s;

	if (db_exec(db,
		    "INSERT OR IGNORE INTO mail_sources (kind, path) VALUES"
		    " (?, ?)",
		    "tt", kind, path) < 0)
		return ERR_IO;
	ps->src = xrealloc(ps->src, (ps->nsrc + 1) * sizeof(*ps->src));
	s = &ps->src[ps->nsrc++];
	memset(s, 0, sizeof(*s));
	s->path = xstrdup(path);
	if (db_query_int(db, &s->id, "SELECT id FROM mail_sources WHERE path = ?",
			 "t", path) < 0)
		return ERR_IO;
	*out = s;
	return 0;
}

static char *source_position(sqlite3 *db, const char *path)
{
	char *pos = NULL;

	db_query_text(db, &pos, "SELECT position FROM mail_sources WHERE path = ?",
		      "t", path);
	return pos;
}

/* "new:SEC.NSEC cur:SEC.NSEC": a maildir changed when this does. */
static char *maildir_stamp(const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	static const char *const subs[] = { "new", "cur" };

	for (int i = 0; i < 2; i++) {
		char *p = xstrfmt("%s/%s", dir, subs[i]);
		struct stat st;
		if (stat(p, &st) == 0)
			strbuf_addf(&sb, "%s%s:%lld.%09ld", i ? " " : "",
				    subs[i], (long long)st.st_mtim.tv_sec,
				    st.st_mtim.tv_nsec);
		free(p);
	}
	return strbuf_detach(&sb, NULL);
}

static int file_known(sqlite3 *db, long long source_id, const char *name)
{
	long long n = 0;

	return db_query_int(db, &n,
			    "SELECT count(*) FROM mail_files WHERE source_id = ?"
			    " AND name = ?",
			    "it", source_id, name) == 0 &&
	       n > 0;
}

static int read_maildir(struct pass *ps, const char *dir)
{
	static const char *const subs[] = { "new", "cur" };
	size_t max = (size_t)ps->bc->cfg.max_patch_bytes;
	struct source *src;
	struct stat st;
	int ret;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(ERR_NOTFOUND,
			       "intake_maildir %s: not a directory", dir);
	if ((ret = source_open(ps, "maildir", dir, &src)) < 0)
		return ret;
	/* the stamp before reading: a file written meanwhile changes it */
	src->position = maildir_stamp(dir);
	for (int i = 0; i < 2; i++) {
		char *sub = xstrfmt("%s/%s", dir, subs[i]);
		DIR *d = opendir(sub);
		struct dirent *de;

		if (!d) {
			ret = errno == ENOENT ? 0
					      : err_set(ERR_IO, "%s: %s", sub,
							strerror(errno));
			free(sub);
			if (ret < 0)
				return ret;
			continue;
		}
		while ((de = readdir(d))) {
			struct strbuf sb = STRBUF_INIT;
			char *key, *path;
			if (de->d_name[0] == '.')
				continue;
			key = xstrndup(de->d_name, strcspn(de->d_name, ":"));
			if (file_known(ps->bc->db, src->id, key)) {
				free(key);
				continue;
			}
			path = xstrfmt("%s/%s", sub, de->d_name);
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
				/* moved to cur/ meanwhile: read it there */
				free(key);
				free(path);
				continue;
			}
			if (max && (size_t)st.st_size > max) {
				pass_push(ps, src->id, path, "", 0);
				ps->v[ps->n - 1].error = xstrfmt(
					"%s: %lld bytes is over the limit of %zu"
					" bytes (max_patch_bytes)",
					path, (long long)st.st_size, max);
			} else if (strbuf_read_file(&sb, path, max) < 0) {
				free(key);
				free(path);
				strbuf_release(&sb);
				continue; /* gone meanwhile: next pass */
			} else {
				pass_push(ps, src->id, path, sb.buf ? sb.buf : "",
					  sb.len);
			}
			strbuf_release(&sb);
			if (src->nfiles == src->afiles) {
				src->afiles = src->afiles ? 2 * src->afiles : 64;
				src->files = xrealloc(src->files,
						      src->afiles *
							      sizeof(*src->files));
			}
			src->files[src->nfiles++] = key;
		}
		closedir(d);
		free(sub);
	}
	return 0;
}

struct epoch_ctx {
	struct pass *ps;
	struct source *src;
	const char *gitdir;
};

static int epoch_message(void *ctx, const char *commit, const char *buf,
			 size_t len)
{
	struct epoch_ctx *e = ctx;
	size_t max = (size_t)e->ps->bc->cfg.max_patch_bytes;
	char *name = xstrfmt("%s@%.12s", e->gitdir, commit);

	if (max && len > max) {
		pass_push(e->ps, e->src->id, name, "", 0);
		e->ps->v[e->ps->n - 1].error =
			xstrfmt("%s: %zu bytes is over the limit of %zu bytes"
				" (max_patch_bytes)",
				name, len, max);
		return 0;
	}
	pass_push(e->ps, e->src->id, name, buf, len);
	return 0;
}

static char *epoch_dir(const char *inbox, int n)
{
	return xstrfmt("%s/git/%d.git", inbox, n);
}

static int read_inbox(struct pass *ps, const char *inbox)
{
	struct stat st;
	int ret = 0, n;

	if (stat(inbox, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(ERR_NOTFOUND, "intake_inbox %s: not a directory",
			       inbox);
	for (n = 0;; n++) {
		char *gitdir = epoch_dir(inbox, n), *after;
		char tip[REPO_HEX_SIZE];
		struct source *src;
		if (stat(gitdir, &st) < 0) {
			free(gitdir);
			break;
		}
		if ((ret = source_open(ps, "inbox", gitdir, &src)) < 0) {
			free(gitdir);
			return ret;
		}
		after = source_position(ps->bc->db, gitdir);
		struct epoch_ctx ctx = { ps, src, gitdir };
		ret = repo_inbox_walk(gitdir, after, epoch_message, &ctx, tip);
		free(after);
		free(gitdir);
		if (ret < 0)
			return ret;
		src->position = tip[0] ? xstrdup(tip) : NULL;
	}
	if (!n)
		return err_set(ERR_INVALID,
			       "intake_inbox %s: no git/0.git: not a public-inbox"
			       " v2 archive (public-inbox-init -V2 makes one)",
			       inbox);
	return 0;
}

/* Calls fn for each ","-separated path of list. */
static int each_path(struct pass *ps, const char *list,
		     int (*fn)(struct pass *, const char *))
{
	const char *p = list;
	int ret, any = 0;

	while (p && *p) {
		size_t n = strcspn(p, ",");
		char *one = xstrndup(p, n);
		char *t = one;
		while (*t == ' ')
			t++;
		for (size_t k = strlen(t); k && t[k - 1] == ' '; k--)
			t[k - 1] = '\0';
		ret = *t ? fn(ps, t) : 0;
		free(one);
		if (ret < 0)
			return ret;
		any |= ret > 0;
		p += n;
		if (*p == ',')
			p++;
	}
	return any;
}

/* A header of stableq's own mail in the header block of raw. */
static int has_own_header(const char *raw, size_t len)
{
	const char *end = raw + len;

	for (const char *s = raw; s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t n = e ? (size_t)(e - s) : (size_t)(end - s);
		if (!n || (n == 1 && s[0] == '\r'))
			return 0;
		if (n >= 10 && !strncasecmp(s, "X-Stableq-", 10))
			return 1;
		s = e ? e + 1 : end;
	}
	return 0;
}

/* Parses each message; marks Message-Ids seen before. */
static void parse_all(struct pass *ps)
{
	size_t max = (size_t)ps->bc->cfg.max_patch_bytes;

	for (size_t i = 0; i < ps->n; i++) {
		struct msg *m = &ps->v[i];
		const char *buf = m->raw;
		size_t len = m->len;
		long long seen = 0;

		if (m->error)
			continue;
		/* an mbox's separator line before the headers */
		if (len > 5 && !memcmp(buf, "From ", 5)) {
			const char *nl = memchr(buf, '\n', len);
			len -= nl ? (size_t)(nl + 1 - buf) : len;
			buf = nl ? nl + 1 : buf + m->len;
		}
		if (patch_parse_at(&m->p, buf, len, m->name, max, 1,
				   PATCH_ANY_MESSAGE) < 0) {
			m->error = xstrdup(err_msg());
			continue;
		}
		if (!m->p->message_id) {
			m->error = xstrfmt("%s: no Message-Id header", m->name);
			continue;
		}
		if (db_query_int(ps->bc->db, &seen,
				 "SELECT count(*) FROM mail_messages WHERE"
				 " message_id = ?",
				 "t", m->p->message_id) == 0 &&
		    seen) {
			m->skip = 1;
			ps->res->duplicates++;
		}
	}
}

/* Records what a message did (its Message-Id once: a copy is a no-op). */
static int record(struct pass *ps, const struct msg *m, const char *kind,
		  long long patch_id, const char *action, const char *error)
{
	const struct patch *p = m->p;
	char *key = p && p->message_id ? NULL : xstrfmt("invalid:%s", m->name);
	int ret = db_exec(ps->bc->db,
			  "INSERT OR IGNORE INTO mail_messages (message_id,"
			  " source_id, in_reply_to, subject, author_email,"
			  " kind, patch_id, action, error) VALUES (?, ?, ?,"
			  " ?, ?, ?, NULLIF(?, 0), ?, ?)",
			  "titttt"
			  "itt",
			  key ? key : p->message_id, m->source_id,
			  p ? p->in_reply_to : NULL, p ? p->subject : "",
			  p ? p->author_email : NULL, kind, patch_id, action,
			  error);
	free(key);
	return ret;
}

static int record_one(struct pass *ps, const struct msg *m, const char *kind,
		      const char *error)
{
	int ret = db_begin(ps->bc->db);

	if (ret < 0)
		return ret;
	if ((ret = record(ps, m, kind, 0, NULL, error)) < 0 ||
	    (ret = db_commit(ps->bc->db)) < 0)
		db_rollback(ps->bc->db);
	return ret < 0 ? ret : 0;
}

/* The configured branches a series is for: its prefix, else Cc: stable # X.Y. */
static size_t series_branches(struct pass *ps, struct patch *const *msgs,
			      const struct thread_series *s, long long *ids,
			      size_t max)
{
	const struct config *c = &ps->bc->cfg;
	const struct patch *head =
		msgs[s->cover != THREAD_NONE ? s->cover : s->parts[0]];
	char ver[32];
	size_t n = 0;

	if (intake_prefix_version(head->subject_prefix, ver, sizeof(ver)) ||
	    (s->nparts &&
	     intake_prefix_version(msgs[s->parts[0]]->subject_prefix, ver,
				   sizeof(ver)))) {
		for (int b = 0; b < c->nbranches && n < max; b++)
			if (!strcmp(c->branches[b].key, ver) &&
			    branch_ctx_branch_id(ps->bc, ver, &ids[n]) == 0)
				n++;
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

/* The raw messages of a series' patches as one mbox, for intake. */
static void series_mbox(struct strbuf *out, const struct pass *ps,
			const size_t *idx, const struct thread_series *s)
{
	for (size_t k = 0; k < s->nparts; k++) {
		const struct msg *m = &ps->v[idx[s->parts[k]]];
		const char *p = m->raw, *end = m->raw + m->len;
		if (m->len > 5 && !memcmp(p, "From ", 5)) {
			const char *nl = memchr(p, '\n', m->len);
			p = nl ? nl + 1 : end;
		}
		strbuf_addstr(out, "From mailin@stableq Thu Jan  1 00:00:00 1970\n");
		while (p < end) {
			const char *e = memchr(p, '\n', (size_t)(end - p));
			size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
			if (n >= 5 && !memcmp(p, "From ", 5))
				strbuf_addch(out, '>');
			strbuf_add(out, p, n);
			strbuf_addch(out, '\n');
			p = e ? e + 1 : end;
		}
	}
}

/*
 * A v2 drops the live patches of the earlier versions (the same subject
 * from the same author) before it is imported, in one transaction; the
 * series was parsed first, so a v2 that cannot be imported drops nothing.
 */
static int drop_rerolled(struct pass *ps, struct patch *const *msgs,
			 const struct thread_series *s, long long branch)
{
	sqlite3 *db = ps->bc->db;
	int ret = db_begin(db);

	for (size_t k = 0; ret >= 0 && k < s->nparts; k++) {
		const struct patch *p = msgs[s->parts[k]];
		long long *old = NULL;
		size_t n = 0;
		ret = queue_rerolled(db, branch, p->subject, p->author_email,
				     &old, &n);
		for (size_t i = 0; ret >= 0 && i < n; i++) {
			char *why = xstrfmt("superseded by v%d of the series"
					    " (Message-Id <%s>)",
					    s->version, p->message_id);
			long long ev = queue_set_state(db, old[i], PS_DROPPED,
						       why, ps->bc->actor);
			free(why);
			if (ev < 0)
				ret = (int)ev;
			else
				ps->res->superseded++;
		}
		free(old);
	}
	if (ret >= 0)
		ret = db_commit(db);
	if (ret < 0)
		db_rollback(db);
	return ret < 0 ? ret : 0;
}

static int import_series(struct pass *ps, struct patch *const *msgs,
			 const size_t *idx, const struct thread_series *s)
{
	sqlite3 *db = ps->bc->db;
	long long branches[16];
	size_t nb = s->nparts ? series_branches(ps, msgs, s, branches, 16) : 0;
	long long first = 0, *ids = NULL;
	struct strbuf mbox = STRBUF_INIT;
	char *error = NULL;
	const char *kind = "patch";
	int ret = 0;

	if (s->superseded) {
		error = xstrdup("a later version of the series came in the"
				" same pass");
		kind = "ignored";
		ps->res->ignored += s->nparts;
	} else if (!nb) {
		error = xstrdup(s->nparts ? "not for a configured branch"
					  : "a cover letter without patches");
		kind = "ignored";
		ps->res->ignored += s->nparts;
	} else {
		series_mbox(&mbox, ps, idx, s);
		ids = xcalloc(s->nparts, sizeof(*ids));
	}
	if (!error && s->version > 1) {
		struct patch **v = NULL;
		int np = mbox_parse(&v, mbox.buf, mbox.len, "series",
				    (size_t)ps->bc->cfg.max_patch_bytes *
					    s->nparts);
		for (int k = 0; k < np; k++)
			patch_free(v[k]);
		free(v);
		for (size_t b = 0; np >= 0 && b < nb; b++)
			if ((ret = drop_rerolled(ps, msgs, s, branches[b])) < 0)
				goto out;
	}
	for (size_t b = 0; b < nb && !error; b++) {
		struct intake_result r = { 0 };
		const struct patch *head = msgs[s->parts[0]];
		char *name = xstrfmt("mail: %s", ps->v[idx[s->parts[0]]].name);
		ret = intake_import_buffer_to(
			db, branches[b], INTAKE_LIST, mbox.buf, mbox.len, name,
			(size_t)ps->bc->cfg.max_patch_bytes * s->nparts,
			ps->bc->actor, &r);
		free(name);
		if (ret < 0) {
			error = xstrdup(err_msg());
			kind = "invalid";
			ps->res->invalid += s->nparts;
			log_warnx("mail %s: %s", head->message_id, error);
			break;
		}
		pass_imported(ps, &r);
		for (size_t k = 0; k < s->nparts && k < r.nids; k++)
			if (!b)
				ids[k] = r.ids[k];
		if (!b) {
			ps->res->series++;
			ps->res->patches += r.nids;
		}
		intake_result_release(&r);
	}
	strbuf_release(&mbox);
	if ((ret = db_begin(db)) < 0)
		goto out;
	for (size_t k = 0; k < s->nparts; k++) {
		const struct msg *m = &ps->v[idx[s->parts[k]]];
		if ((ret = record(ps, m, kind, ids ? ids[k] : 0, NULL, error)) < 0)
			goto fail;
		if (ids && ids[k] && !first)
			first = ids[k];
	}
	if (s->cover != THREAD_NONE &&
	    (ret = record(ps, &ps->v[idx[s->cover]], "cover", first, NULL,
			  error)) < 0)
		goto fail;
	ret = db_commit(db);
	if (ret >= 0)
		goto out;
fail:
	db_rollback(db);
out:
	strbuf_release(&mbox);
	free(ids);
	free(error);
	return ret < 0 ? ret : 0;
}

/*
 * The patches a reply is about: up its thread to a patch or a cover (of a
 * series on the list, or of stableq's own -rc: then *rc is set).
 */
static size_t reply_targets(sqlite3 *db, const char *irt, long long **out,
			    long long *rc)
{
	char *cur = irt ? xstrdup(irt) : NULL;
	size_t n = 0;

	*out = NULL;
	*rc = 0;
	for (int depth = 0; cur && depth < MAX_THREAD_DEPTH; depth++) {
		long long id = 0, rc_patch = 0;
		sqlite3_stmt *st;
		char *next = NULL;
		if (rc_by_message_id(db, cur, rc, &rc_patch) > 0) {
			if (rc_patch) {
				*out = xcalloc(1, sizeof(**out));
				(*out)[n++] = rc_patch;
			}
			break;
		}
		if (queue_by_message_id(db, cur, &id) > 0) {
			*out = xcalloc(1, sizeof(**out));
			(*out)[n++] = id;
			break;
		}
		st = db_prepare(db,
				"SELECT kind, in_reply_to FROM mail_messages"
				" WHERE message_id = ?",
				"t", cur);
		if (st && sqlite3_step(st) == SQLITE_ROW) {
			const char *kind = db_col_text(st, 0);
			if (!strcmp(kind, "reply") && db_col_text(st, 1))
				next = xstrdup(db_col_text(st, 1));
			else if (!strcmp(kind, "cover")) {
				/* the whole series: its patches answer it */
				sqlite3_stmt *q = db_prepare(
					db,
					"SELECT patch_id FROM mail_messages"
					" WHERE in_reply_to = ? AND kind ="
					" 'patch' AND patch_id IS NOT NULL",
					"t", cur);
				while (q && sqlite3_step(q) == SQLITE_ROW) {
					*out = xrealloc(*out,
							(n + 1) * sizeof(**out));
					(*out)[n++] = sqlite3_column_int64(q, 0);
				}
				sqlite3_finalize(q);
			}
		}
		sqlite3_finalize(st);
		free(cur);
		cur = next;
	}
	free(cur);
	return n;
}

static int apply_reply(struct pass *ps, const struct msg *m)
{
	sqlite3 *db = ps->bc->db;
	struct review r;
	long long *targets = NULL, *reg = NULL, rc = 0;
	size_t nt, nreg = 0;
	int held = 0, tr = 0, ret;
	struct strbuf action = STRBUF_INIT;

	review_read(&r, m->p);
	/* an answer to a proposed revert stops it: the maintainer decides */
	{
		char *by = xstrfmt("a reply from %s <%s>, Message-Id <%s>:\n%s",
				   m->p->author_name ? m->p->author_name : "",
				   m->p->author_email ? m->p->author_email : "?",
				   m->p->message_id, r.quote ? r.quote : "");
		ret = revert_proposal_stop(ps->bc, m->p->in_reply_to, by);
		free(by);
		if (ret < 0)
			goto out;
		if (ret) {
			ps->res->stopped++;
			strbuf_addstr(&action, "stopped a proposed revert");
		}
	}
	nt = reply_targets(db, m->p->in_reply_to, &targets, &rc);
	if (r.regression &&
	    (ret = queue_by_upstream(db, r.regression, &reg, &nreg)) < 0)
		goto out;
	if ((ret = db_begin(db)) < 0)
		goto out;
	for (size_t i = 0; i < nt + nreg; i++) {
		long long id = i < nt ? targets[i] : reg[i - nt];
		struct review only = r;
		int h = 0, t = 0;
		/* a regression report holds the patch it names, not the thread */
		if (i < nt && r.says == REVIEW_REGRESSION)
			only.says = 0;
		if ((ret = review_apply(db, id, m->p, &only, ps->bc->actor, &h,
					&t)) < 0)
			goto fail;
		if (h)
			strbuf_addf(&action, "%sheld %lld", action.len ? ", " : "",
				    id);
		if (t)
			strbuf_addf(&action, "%s%d trailers on %lld",
				    action.len ? ", " : "", t, id);
		held += h;
		tr += t;
	}
	/* a tester's answer to the -rc cover: Tested-by for the rc */
	for (size_t i = 0; rc && !nt && i < m->p->ntags; i++) {
		const struct patch_tag *t = &m->p->tags[i];
		if (strcmp(t->kind, "tested_by"))
			continue;
		if ((ret = rc_add_tested(db, rc, t->value, t->extra,
					 m->p->message_id)) < 0)
			goto fail;
		if (ret) {
			strbuf_addf(&action, "%stested rc %lld by %s",
				    action.len ? ", " : "", rc, t->value);
			ps->res->tested++;
		}
	}
	if ((ret = db_exec(db,
			   "UPDATE mail_messages SET action = ?, patch_id ="
			   " NULLIF(?, 0) WHERE message_id = ?",
			   "tit", action.len ? action.buf : "none",
			   nt ? targets[0] : nreg ? reg[0] : 0LL,
			   m->p->message_id)) < 0 ||
	    (ret = db_commit(db)) < 0)
		goto fail;
	ps->res->held += (size_t)held;
	ps->res->trailers += (size_t)tr;
	if (held)
		log_info("mail %s: %s", m->p->message_id, action.buf);
	goto out;
fail:
	db_rollback(db);
out:
	strbuf_release(&action);
	review_release(&r);
	free(targets);
	free(reg);
	return ret < 0 ? ret : 0;
}

static int is_own(const struct pass *ps, const struct msg *m)
{
	return has_own_header(m->raw, m->len) ||
	       (ps->own_addr && m->p->author_email &&
		!strcasecmp(ps->own_addr, m->p->author_email));
}

/*
 * The first versions of the series of one branch, imported by one call
 * of the importer (one transaction and one linking of dependencies for
 * the pass instead of one per series); when that call fails, nothing is
 * marked done and the series go one by one, so a bad one keeps only
 * itself out. done[s] is set for the series it stored.
 */
static int import_batch(struct pass *ps, struct patch *const *msgs,
			const size_t *idx, const struct thread_series *v,
			size_t ns, long long branch, char *done)
{
	sqlite3 *db = ps->bc->db;
	struct strbuf mbox = STRBUF_INIT;
	struct intake_result r = { 0 };
	char *in = xcalloc(ns ? ns : 1, 1);
	size_t nparts = 0, nseries = 0, k = 0;
	int ret = 0;

	for (size_t s = 0; s < ns; s++) {
		long long b[2];
		if (done[s] || v[s].superseded || v[s].version > 1 ||
		    !v[s].nparts ||
		    series_branches(ps, msgs, &v[s], b, 2) != 1 || b[0] != branch)
			continue;
		in[s] = 1;
		nseries++;
		nparts += v[s].nparts;
		series_mbox(&mbox, ps, idx, &v[s]);
	}
	if (nseries < 2)
		goto out; /* nothing to gain */
	if (intake_import_buffer_to(
		    db, branch, INTAKE_LIST, mbox.buf, mbox.len, "mail: the list",
		    (size_t)ps->bc->cfg.max_patch_bytes * nparts, ps->bc->actor,
		    &r) < 0 ||
	    r.nids != nparts)
		goto out; /* one by one */
	if ((ret = db_begin(db)) < 0)
		goto out;
	for (size_t s = 0; s < ns; s++) {
		long long first = 0;
		if (!in[s])
			continue;
		for (size_t j = 0; j < v[s].nparts; j++, k++) {
			if (!first)
				first = r.ids[k];
			if ((ret = record(ps, &ps->v[idx[v[s].parts[j]]], "patch",
					  r.ids[k], NULL, NULL)) < 0)
				goto fail;
		}
		if (v[s].cover != THREAD_NONE &&
		    (ret = record(ps, &ps->v[idx[v[s].cover]], "cover", first,
				  NULL, NULL)) < 0)
			goto fail;
	}
	if ((ret = db_commit(db)) < 0)
		goto fail;
	pass_imported(ps, &r);
	for (size_t s = 0; s < ns; s++)
		done[s] |= in[s];
	ps->res->series += nseries;
	ps->res->patches += nparts;
	goto out;
fail:
	db_rollback(db);
out:
	intake_result_release(&r);
	strbuf_release(&mbox);
	free(in);
	return ret < 0 ? ret : 0;
}

static int process(struct pass *ps)
{
	struct patch **sp = xcalloc(ps->n ? ps->n : 1, sizeof(*sp));
	size_t *idx = xcalloc(ps->n ? ps->n : 1, sizeof(*idx));
	size_t nsp = 0, ns;
	struct thread_series *series = NULL;
	int ret = 0;

	for (size_t i = 0; i < ps->n && ret >= 0; i++) {
		struct msg *m = &ps->v[i];
		if (m->skip)
			continue;
		if (m->error) {
			log_warnx("mail %s", m->error);
			ps->res->invalid++;
			ret = record_one(ps, m, "invalid", m->error);
			m->skip = 1;
		} else if (is_own(ps, m)) {
			ps->res->ignored++;
			ret = record_one(ps, m, "ignored", "stableq's own mail");
			m->skip = 1;
		} else if (m->p->diff || (m->p->series_total &&
					  !m->p->series_part && !m->p->reply)) {
			idx[nsp] = i;
			sp[nsp++] = m->p;
			m->skip = 1;
		}
	}
	ns = ret < 0 ? 0 : thread_assemble(&series, sp, nsp);
	char *done = xcalloc(ns ? ns : 1, 1);
	for (int b = 0; b < ps->bc->cfg.nbranches && ret >= 0; b++) {
		long long id;
		if (branch_ctx_branch_id(ps->bc, ps->bc->cfg.branches[b].key,
					 &id) == 0)
			ret = import_batch(ps, sp, idx, series, ns, id, done);
	}
	for (size_t s = 0; s < ns && ret >= 0; s++)
		if (!done[s])
			ret = import_series(ps, sp, idx, &series[s]);
	free(done);
	thread_series_free(series, ns);
	free(sp);
	free(idx);
	if (ret < 0)
		return ret;
	/* replies: all rows first, so a reply to a reply of this pass leads up */
	if ((ret = db_begin(ps->bc->db)) < 0)
		return ret;
	for (size_t i = 0; i < ps->n; i++) {
		if (ps->v[i].skip)
			continue;
		if ((ret = record(ps, &ps->v[i], "reply", 0, NULL, NULL)) < 0) {
			db_rollback(ps->bc->db);
			return ret;
		}
		if (!ret) { /* a copy delivered twice in this pass */
			ps->v[i].skip = 1;
			ps->res->duplicates++;
		}
	}
	if ((ret = db_commit(ps->bc->db)) < 0) {
		db_rollback(ps->bc->db);
		return ret;
	}
	for (size_t i = 0; i < ps->n && ret >= 0; i++)
		if (!ps->v[i].skip) {
			ps->res->replies++;
			ret = apply_reply(ps, &ps->v[i]);
		}
	return ret;
}

/* Where each source stopped, once everything it gave is stored. */
static int record_positions(struct pass *ps)
{
	sqlite3 *db = ps->bc->db;
	int ret = db_begin(db);

	for (size_t i = 0; ret >= 0 && i < ps->nsrc; i++) {
		const struct source *s = &ps->src[i];
		ret = db_exec(db,
			      "UPDATE mail_sources SET position = ?, read_at ="
			      " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
			      "ti", s->position, s->id);
		for (size_t k = 0; ret >= 0 && k < s->nfiles; k++)
			ret = db_exec(db,
				      "INSERT OR IGNORE INTO mail_files"
				      " (source_id, name) VALUES (?, ?)",
				      "it", s->id, s->files[k]);
	}
	if (ret >= 0)
		ret = db_commit(db);
	if (ret < 0)
		db_rollback(db);
	return ret < 0 ? ret : 0;
}

static char *own_address(const char *mail_from)
{
	struct mailboxes l = { 0 };
	char *addr = NULL;

	if (mail_from && address_parse(&l, mail_from, strlen(mail_from),
				       ADDRESS_ONE, NULL) == 0 &&
	    l.n && l.v[0].addr)
		addr = xstrdup(l.v[0].addr);
	mailboxes_release(&l);
	return addr;
}

/*
 * The checks of what the pass imported, as every intake runs them
 * (intake_check()), for the patches no reply has acted on since: a patch
 * a reply held waits for a human, not for the checks. A failing check is
 * logged; the patches wait in 'imported' for the daemon's check step.
 */
static int check_imported(struct pass *ps)
{
	struct intake_result *all = &ps->imported;
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < all->nids; i++) {
		enum patch_state st;
		if (queue_get_state(ps->bc->db, all->ids[i], &st) == 0 &&
		    st == PS_IMPORTED)
			all->ids[n++] = all->ids[i];
	}
	all->nids = n;
	if (!n)
		return 0;
	if ((ret = intake_check(ps->bc, all, NULL, NULL)) < 0)
		log_warnx("mail intake: checks: %s", err_msg());
	err_clear();
	return 0;
}

int mailin_run(struct branch_ctx *bc, struct mailin_result *res)
{
	struct pass ps = { .bc = bc, .res = res };
	int ret;

	memset(res, 0, sizeof(*res));
	ps.own_addr = own_address(bc->cfg.mail_from);
	if ((ret = each_path(&ps, bc->cfg.intake_maildir, read_maildir)) < 0 ||
	    (ret = each_path(&ps, bc->cfg.intake_inbox, read_inbox)) < 0)
		goto out;
	parse_all(&ps);
	if ((ret = process(&ps)) < 0 || (ret = record_positions(&ps)) < 0)
		goto out;
	ret = check_imported(&ps);
out:
	pass_free(&ps);
	return ret;
}

static int maildir_changed(struct pass *ps, const char *dir)
{
	char *now = maildir_stamp(dir),
	     *then = source_position(ps->bc->db, dir);
	int changed = !then || strcmp(now, then);

	free(now);
	free(then);
	return changed ? 1 : 0;
}

static int inbox_changed(struct pass *ps, const char *inbox)
{
	struct stat st;

	for (int n = 0;; n++) {
		char *gitdir = epoch_dir(inbox, n), *then;
		char tip[REPO_HEX_SIZE];
		int changed;
		if (stat(gitdir, &st) < 0) {
			free(gitdir);
			return 0;
		}
		then = source_position(ps->bc->db, gitdir);
		changed = repo_inbox_tip(gitdir, tip) == 0 && tip[0] &&
			  (!then || strcmp(then, tip));
		free(then);
		free(gitdir);
		if (changed)
			return 1;
	}
}

int mailin_due(struct branch_ctx *bc, long long *id)
{
	struct mailin_result r = { 0 };
	struct pass ps = { .bc = bc, .res = &r };
	int due;

	*id = 0;
	if (bc->cfg.selected != 0)
		return 0; /* the sources are global: the first branch reads them */
	due = each_path(&ps, bc->cfg.intake_maildir, maildir_changed) > 0 ||
	      each_path(&ps, bc->cfg.intake_inbox, inbox_changed) > 0;
	pass_free(&ps);
	return due;
}
