/* mailin.c: maildirs and public-inbox epochs read incrementally; series stored as b4 sees them; replies handed to review. */
#include "mailin.h"
#include "address.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "intake.h"
#include "log.h"
#include "queue.h"
#include "rc.h"
#include "reply.h"
#include "repo.h"
#include "revert.h"
#include "strbuf.h"
#include "thread.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

/*
 * A maildir file younger than this that does not parse may still be being
 * written (a writer that writes straight into new/): it is read again on
 * the next pass instead of being stored invalid.
 */
#define SETTLE_SECONDS 60
/* Messages stored per transaction: short enough for the API's writers. */
#define CHUNK 256
#define INCOMPLETE REPLY_SERIES_INCOMPLETE

/* A maildir file read this pass: recorded once the pass is done. */
struct mfile {
	char *key;              /* the name before ':' */
	long long size;
	char *mtime;            /* "SEC.NSEC" */
	int again;              /* young and unparsable: not recorded */
};

/* A source read this pass, and where it stopped. */
struct source {
	long long id;
	char *path;
	char *position;         /* the new position, recorded at the end */
	struct mfile *files;
	size_t nfiles, afiles;
	int unsettled;          /* a file to read again: no new position */
};

struct msg {
	char *raw;
	size_t len;
	char *name;             /* where it came from, for messages */
	long long source_id;
	size_t src;             /* index in pass.src */
	long file;              /* maildir: index in its files, else -1 */
	time_t mtime;           /* a file in a maildir's new/: its mtime, else 0 */
	struct patch *p;        /* NULL when invalid */
	char *error;
	int skip;               /* a duplicate, or done */
	int pending;            /* a reply a pass stored and did not apply */
};

struct pass {
	struct branch_ctx *bc;
	struct msg *v;
	size_t n, alloc;
	struct source *src;
	size_t nsrc;
	char *own_addr;         /* mail_from's address */
	struct mailin_result *res;
	long long *check;       /* patches to check at the end of the pass */
	size_t ncheck;
	int in_tx, added;       /* the transaction of the series step */
	size_t tx_msgs;
};

static void pass_check(struct pass *ps, long long id)
{
	for (size_t i = 0; i < ps->ncheck; i++)
		if (ps->check[i] == id)
			return;
	ps->check = xrealloc(ps->check, (ps->ncheck + 1) * sizeof(*ps->check));
	ps->check[ps->ncheck++] = id;
}

static struct msg *pass_push(struct pass *ps, size_t src, char *name,
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
	m->src = src;
	m->source_id = ps->src[src].id;
	m->file = -1;
	ps->res->read++;
	return m;
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
		for (size_t k = 0; k < ps->src[i].nfiles; k++) {
			free(ps->src[i].files[k].key);
			free(ps->src[i].files[k].mtime);
		}
		free(ps->src[i].files);
	}
	free(ps->src);
	free(ps->own_addr);
	free(ps->check);
}

/*
 * A store error (locked, disk full, I/O) is the pass's, not the
 * message's: the pass stops and the message is read again next time.
 */
static int transient(int ret)
{
	return ret == ERR_IO;
}

/* The mail_sources row of path, made when new; *out its index in ps->src. */
static int source_open(struct pass *ps, const char *kind, const char *path,
		       size_t *out)
{
	sqlite3 *db = ps->bc->db;
	struct source *s;

	if (db_exec(db,
		    "INSERT OR IGNORE INTO mail_sources (kind, path) VALUES"
		    " (?, ?)",
		    "tt", kind, path) < 0)
		return ERR_IO;
	ps->src = xrealloc(ps->src, (ps->nsrc + 1) * sizeof(*ps->src));
	s = &ps->src[ps->nsrc];
	memset(s, 0, sizeof(*s));
	s->path = xstrdup(path);
	if (db_query_int(db, &s->id, "SELECT id FROM mail_sources WHERE path = ?",
			 "t", path) < 0) {
		free(s->path);
		return ERR_IO;
	}
	*out = ps->nsrc++;
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

/*
 * 1 when the file key was read before as it is now (its size and mtime,
 * or a row from before they were kept), 0 when it is new or changed.
 */
static int file_known(sqlite3 *db, long long source_id, const char *key,
		      long long size, const char *mtime)
{
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT size IS NULL OR (size = ? AND mtime ="
				   " ?) FROM mail_files WHERE source_id = ? AND"
				   " name = ?",
				   "itit", size, mtime, source_id, key);
	int known = st && db_step(st) > 0 && sqlite3_column_int(st, 0);

	db_stmt_done(st);
	return known;
}

static void source_file(struct source *src, char *key, long long size,
			char *mtime)
{
	if (src->nfiles == src->afiles) {
		src->afiles = src->afiles ? 2 * src->afiles : 64;
		src->files = xrealloc(src->files,
				      src->afiles * sizeof(*src->files));
	}
	src->files[src->nfiles++] =
		(struct mfile){ .key = key, .size = size, .mtime = mtime };
}

static int read_maildir(struct pass *ps, const char *dir)
{
	static const char *const subs[] = { "new", "cur" };
	size_t max = (size_t)ps->bc->cfg.max_patch_bytes, si;
	struct stat st;
	int ret;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(ERR_NOTFOUND,
			       "intake_maildir %s: not a directory", dir);
	if ((ret = source_open(ps, "maildir", dir, &si)) < 0)
		return ret;
	/* the stamp before reading: a file written meanwhile changes it */
	ps->src[si].position = maildir_stamp(dir);
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
			struct source *src = &ps->src[si];
			struct msg *m;
			char *key, *path, *mtime;
			if (de->d_name[0] == '.')
				continue;
			path = xstrfmt("%s/%s", sub, de->d_name);
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
				/* moved to cur/ meanwhile: read it there */
				free(path);
				continue;
			}
			key = xstrndup(de->d_name, strcspn(de->d_name, ":"));
			mtime = xstrfmt("%lld.%09ld",
					(long long)st.st_mtim.tv_sec,
					st.st_mtim.tv_nsec);
			if (file_known(ps->bc->db, src->id, key,
				       (long long)st.st_size, mtime)) {
				free(key);
				free(mtime);
				free(path);
				continue;
			}
			if (max && (size_t)st.st_size > max) {
				m = pass_push(ps, si, path, "", 0);
				m->error = xstrfmt(
					"%s: %lld bytes is over the limit of %zu"
					" bytes (max_patch_bytes)",
					path, (long long)st.st_size, max);
			} else if (strbuf_read_file(&sb, path, max) < 0) {
				free(key);
				free(mtime);
				free(path);
				strbuf_release(&sb);
				continue; /* gone meanwhile: next pass */
			} else {
				m = pass_push(ps, si, path, sb.buf ? sb.buf : "",
					      sb.len);
			}
			strbuf_release(&sb);
			/* cur/: a reader moved it there, so it was whole */
			m->mtime = i == 0 ? st.st_mtim.tv_sec : 0;
			m->file = (long)src->nfiles;
			source_file(src, key, (long long)st.st_size, mtime);
		}
		closedir(d);
		free(sub);
	}
	return 0;
}

struct epoch_ctx {
	struct pass *ps;
	size_t src;
	const char *gitdir;
};

static int epoch_message(void *ctx, const char *commit, const char *buf,
			 size_t len)
{
	struct epoch_ctx *e = ctx;
	size_t max = (size_t)e->ps->bc->cfg.max_patch_bytes;
	char *name = xstrfmt("%s@%.12s", e->gitdir, commit);

	if (max && len > max) {
		pass_push(e->ps, e->src, name, "", 0)->error =
			xstrfmt("%s: %zu bytes is over the limit of %zu bytes"
				" (max_patch_bytes)",
				name, len, max);
		return 0;
	}
	pass_push(e->ps, e->src, name, buf, len);
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
		size_t src;
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
		ps->src[src].position = tip[0] ? xstrdup(tip) : NULL;
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

/*
 * What the store knows of a Message-Id: 0 nothing, or a message read
 * invalid (read again: it may have been half-written), 1 done (a copy),
 * 2 a reply stored by a pass that did not apply it. Negative on a store
 * error.
 */
static int message_status(sqlite3 *db, const char *id)
{
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT kind, action IS NULL FROM"
				   " mail_messages WHERE message_id = ?",
				   "t", id);
	int ret = st ? db_step(st) : ERR_IO;

	if (ret > 0)
		ret = !strcmp(db_col_text(st, 0), "invalid") ? 0
		      : !strcmp(db_col_text(st, 0), "reply") &&
				      sqlite3_column_int(st, 1)
			      ? 2
			      : 1;
	db_stmt_done(st);
	return ret;
}

/*
 * Parses each message; marks Message-Ids seen before. A maildir file that
 * does not parse while it is young is left for the next pass (a writer
 * may still be writing it): nothing of it is stored.
 */
static int parse_all(struct pass *ps)
{
	size_t max = (size_t)ps->bc->cfg.max_patch_bytes;
	time_t now = time(NULL);

	for (size_t i = 0; i < ps->n; i++) {
		struct msg *m = &ps->v[i];
		const char *buf = m->raw;
		size_t len = m->len;
		int st;

		if (m->error)
			continue;
		/* an mbox's separator line before the headers */
		if (len > 5 && !memcmp(buf, "From ", 5)) {
			const char *nl = memchr(buf, '\n', len);
			len -= nl ? (size_t)(nl + 1 - buf) : len;
			buf = nl ? nl + 1 : buf + m->len;
		}
		if (patch_parse_at(&m->p, buf, len, m->name, max, 1,
				   PATCH_ANY_MESSAGE) < 0)
			m->error = xstrdup(err_msg());
		else if (!m->p->message_id)
			m->error = xstrfmt("%s: no Message-Id header", m->name);
		if (m->error) {
			err_clear();
			if (m->file >= 0 && now - m->mtime < SETTLE_SECONDS) {
				struct source *src = &ps->src[m->src];
				src->files[m->file].again = 1;
				src->unsettled = 1;
				m->skip = 1;
				log_info("mail %s: not whole yet (%s): read"
					 " again on the next pass",
					 m->name, m->error);
			}
			continue;
		}
		if ((st = message_status(ps->bc->db, m->p->message_id)) < 0)
			return st;
		if (st == 1) {
			m->skip = 1;
			ps->res->duplicates++;
		}
		m->pending = st == 2;
	}
	return 0;
}

/*
 * Records what a message did (its Message-Id once: a copy is a no-op; a
 * message read invalid before, now whole, takes its row). 1 when it
 * stored the row, 0 for a copy, negative on error.
 */
static int record(struct pass *ps, const struct msg *m, const char *kind,
		  long long patch_id, const char *action, const char *error,
		  long long series, int part)
{
	const struct patch *p = m->p;
	char *key = p && p->message_id ? NULL : xstrfmt("invalid:%s", m->name);
	int ret = db_exec(ps->bc->db,
			  "INSERT INTO mail_messages (message_id, source_id,"
			  " in_reply_to, subject, author_email, kind, patch_id,"
			  " action, error, series_id, part) VALUES (?, ?, ?, ?,"
			  " ?, ?, NULLIF(?, 0), ?, ?, NULLIF(?, 0), ?) ON"
			  " CONFLICT (message_id) DO UPDATE SET source_id ="
			  " excluded.source_id, in_reply_to ="
			  " excluded.in_reply_to, subject = excluded.subject,"
			  " author_email = excluded.author_email, kind ="
			  " excluded.kind, patch_id = excluded.patch_id, action"
			  " = excluded.action, error = excluded.error, series_id"
			  " = excluded.series_id, part = excluded.part, read_at"
			  " = excluded.read_at WHERE kind = 'invalid'",
			  "titttt"
			  "ittid",
			  key ? key : p->message_id, m->source_id,
			  p ? p->in_reply_to : NULL, p ? p->subject : "",
			  p ? p->author_email : NULL, kind, patch_id, action,
			  error, series, part);
	free(key);
	return ret;
}

/* The series step's transactions: CHUNK messages each. */
static int tx_begin(struct pass *ps)
{
	int ret = ps->in_tx ? 0 : db_begin(ps->bc->db);

	if (ret >= 0 && !ps->in_tx) {
		ps->in_tx = 1;
		ps->added = 0;
		ps->tx_msgs = 0;
	}
	return ret;
}

static int tx_commit(struct pass *ps)
{
	int ret = 0;

	if (!ps->in_tx)
		return 0;
	/* one linking of dependencies for the chunk, as the importer does */
	if (ps->added && (ret = queue_link_dependencies(ps->bc->db)) < 0) {
		db_rollback(ps->bc->db);
		ps->in_tx = 0;
		return ret;
	}
	ps->in_tx = 0;
	return db_end(ps->bc->db, 0);
}

static void tx_abort(struct pass *ps)
{
	if (ps->in_tx)
		db_rollback(ps->bc->db);
	ps->in_tx = 0;
}

/* After n more messages: commit the chunk when it is full. */
static int tx_count(struct pass *ps, size_t n)
{
	ps->tx_msgs += n;
	if (ps->tx_msgs < CHUNK)
		return 0;
	int ret = tx_commit(ps);
	return ret < 0 ? ret : tx_begin(ps);
}

static int savepoint(sqlite3 *db, const char *verb)
{
	int ret = db_exec(db, verb, NULL);

	return ret < 0 ? ret : 0;
}

/* Rows for messages that are only recorded: invalid, stableq's own. */
static int record_plain(struct pass *ps)
{
	int ret = 0;

	for (size_t i = 0; i < ps->n && ret >= 0; i++) {
		struct msg *m = &ps->v[i];
		const char *kind, *why;
		if (m->skip)
			continue;
		if (m->error) {
			log_warnx("mail %s", m->error);
			ps->res->invalid++;
			kind = "invalid";
			why = m->error;
		} else if (m->pending) {
			continue;
		} else if (has_own_header(m->raw, m->len) ||
			   (ps->own_addr && m->p->author_email &&
			    !strcasecmp(ps->own_addr, m->p->author_email))) {
			ps->res->ignored++;
			kind = "ignored";
			why = "stableq's own mail";
		} else {
			continue;
		}
		m->skip = 1;
		if ((ret = tx_begin(ps)) < 0 ||
		    (ret = record(ps, m, kind, 0, NULL, why, 0, 0)) < 0 ||
		    (ret = tx_count(ps, 1)) < 0)
			break;
	}
	if (ret < 0) {
		tx_abort(ps);
		return ret;
	}
	return tx_commit(ps);
}

/* A series as stored in mail_series. */
struct sseries {
	long long id;
	int version, total;
	char *author, *subject, *state;
};

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

/* Who sent a mail (its From:, not an in-body From:'s author). */
static const char *addr_of(const struct patch *p)
{
	return p->sender_email ? p->sender_email
	       : p->author_email ? p->author_email
				 : "";
}

/* One series of the pass, stored part by part on each of its branches. */
struct group {
	struct pass *ps;
	struct patch *const *msgs;
	const size_t *idx;          /* msgs[i] is ps->v[idx[i]] */
	const struct thread_series *s;
	const struct patch *head;   /* its cover, else its first part */
	long long branches[16];
	size_t nb;
	struct sseries ser;         /* the stored series it is part of */
	struct sseries prev;        /* the version it was sent after (id 0: none) */
	enum { MODE_PLAIN, MODE_SUPERSEDE, MODE_APART } mode;
	long long source[16];       /* per branch: the sources row of this pass */
	char *name;
	long long *ids;             /* per part: its patch on the first branch */
	char **notes;               /* per part: what happened to it, or NULL */
	char **errors;              /* per part: why it is invalid, or NULL */
};

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
			    !strcasecmp(x.author, addr_of(g->head))) {
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
				   "tttdd", roots[r], addr_of(g->head),
				   g->head->subject, s->version, s->total)) < 0)
			return ret;
		return sseries_get(db, "id", NULL, db_last_id(db), &g->ser) < 0
			       ? ERR_IO
			       : 0;
	}
	return err_set(ERR_CONFLICT, "mail %s: its series is stored already",
		       g->head->message_id);
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

static int is_live(enum patch_state st)
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
		if (!is_live(state))
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

static int note(char **notes, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int note(char **notes, const char *fmt, ...)
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
static int store_part(struct group *g, size_t b, size_t k, long long *id)
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
			note(&g->notes[k], "kept patch %lld (unchanged)", c);
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
				note(&g->notes[k], "held: patch %lld is in"
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
		pass_check(ps, *id);
		if (!b)
			note(&g->notes[k], "replaced patch %lld", c);
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
				g->s->version, addr_of(p), p->message_id,
				live[0],
				g->mode == MODE_APART
					? "another address sent it than the"
					  " earlier version's"
					: "it was not sent in the earlier"
					  " version's thread",
				live[0]);
			ret = store_held(g, b, p, why, id);
			if (ret > 0 && !b)
				note(&g->notes[k], "held apart from patch %lld",
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
		pass_check(ps, *id);
	}
	return ret < 0 ? ret : 0;
}

/*
 * A revert posted to the list (Revert "...", naming the commit in a
 * Fixes: tag or "This reverts commit <sha>") of a released patch flags
 * that patch broken, as untrusted evidence: a maintainer decides.
 */
static int flag_reverted(struct group *g, size_t k)
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
				      addr_of(p), p->message_id, p->subject);
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
			note(&g->notes[k], "flagged patch %lld (released)",
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
		if (!is_live(state) ||
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
				pass_check(ps, ids[i]);
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
		ret = record(g->ps, gmsg(g, s->parts[k]), kind, 0, NULL, why, 0,
			     0);
	if (ret >= 0 && s->cover != THREAD_NONE)
		ret = record(g->ps, gmsg(g, s->cover), kind, 0, NULL, why, 0, 0);
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
			ret = record(ps, m, "invalid", 0, NULL, g->errors[k], 0,
				     0);
			ps->res->invalid++;
			continue;
		}
		if (!first)
			first = g->ids[k];
		if ((ret = record(ps, m, "patch", g->ids[k], g->notes[k], NULL,
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
		ret = record(ps, gmsg(g, s->cover), "cover", first, NULL, NULL,
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
		ret = flag_reverted(&g, k);
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
		if (transient(ret))
			goto out;
		ret = group_record_all(&g, "invalid", err_msg());
		goto out;
	}
	if (g.prev.id)
		g.mode = !strcasecmp(g.prev.author, addr_of(g.head))
				 ? MODE_SUPERSEDE
				 : MODE_APART;
	for (size_t k = 0; k < s->nparts; k++) {
		const struct patch *p = msgs[s->parts[k]];
		if ((ret = savepoint(db, "SAVEPOINT part")) < 0)
			goto out;
		for (size_t b = 0; b < g.nb && ret >= 0; b++) {
			long long id = 0;
			if ((ret = store_part(&g, b, k, &id)) >= 0)
				ret = map_patch(db, p->message_id,
						g.branches[b], id);
			if (ret >= 0 && !b)
				g.ids[k] = id;
		}
		if (ret < 0 && transient(ret))
			goto out;
		if (ret < 0) {
			/* this mail is bad in itself: the others go on */
			g.errors[k] = xstrdup(err_msg());
			log_warnx("mail %s: %s", p->message_id, g.errors[k]);
			err_clear();
			free(g.notes[k]);
			g.notes[k] = NULL;
			if ((ret = savepoint(db, "ROLLBACK TO part")) < 0)
				goto out;
		}
		if ((ret = savepoint(db, "RELEASE part")) < 0)
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
static int store_series(struct pass *ps)
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
		if ((ret = tx_begin(ps)) < 0 ||
		    (ret = savepoint(ps->bc->db, "SAVEPOINT series")) < 0)
			break;
		ret = group_store(ps, sp, idx, &series[s]);
		if (ret < 0 && !transient(ret)) {
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
			if ((ret = savepoint(ps->bc->db,
					     "ROLLBACK TO series")) >= 0)
				ret = group_record_all(&g, "invalid", why);
			free(why);
		}
		if (ret >= 0)
			ret = savepoint(ps->bc->db, "RELEASE series");
		if (ret >= 0)
			ret = tx_count(ps, n);
	}
	if (ret < 0)
		tx_abort(ps);
	else
		ret = tx_commit(ps);
	thread_series_free(series, ns);
	free(sp);
	free(idx);
	return ret;
}

/* 1 when the reply's row waits for its effect (none applied it yet). */
static int reply_pending(sqlite3 *db, const char *message_id)
{
	long long n = db_int(db, 0,
			     "SELECT count(*) FROM mail_messages WHERE"
			     " message_id = ? AND kind = 'reply' AND action IS"
			     " NULL",
			     "t", message_id);

	return n < 0 ? (int)n : n > 0;
}

/*
 * Replies: their rows first (a reply to a reply of this pass leads up
 * through them), without an action; then each reply's effect and its
 * action in one transaction, so that a pass cut short (a crash, a locked
 * or full store) leaves rows without an action, which the next pass
 * applies: their files and commits are read again, since where a source
 * stopped is recorded only at the end.
 */
static int store_replies(struct pass *ps)
{
	sqlite3 *db = ps->bc->db;
	struct reply_counts n = { 0 };
	char **stops = xcalloc(ps->n ? ps->n : 1, sizeof(*stops));
	int ret = 0;

	for (size_t i = 0; i < ps->n && ret >= 0; i++) {
		struct msg *m = &ps->v[i];
		if (m->skip || m->pending)
			continue;
		if ((ret = tx_begin(ps)) < 0 ||
		    (ret = record(ps, m, "reply", 0, NULL, NULL, 0, 0)) < 0)
			break;
		if (!ret) { /* a copy delivered twice in this pass */
			m->skip = 1;
			ps->res->duplicates++;
		}
		ret = tx_count(ps, 1);
	}
	if (ret < 0) {
		tx_abort(ps);
		goto out;
	}
	if ((ret = tx_commit(ps)) < 0)
		goto out;
	/* an answer to a proposed revert stops it: its own transactions */
	for (size_t i = 0; i < ps->n && ret >= 0; i++) {
		struct strbuf action = STRBUF_INIT;
		if (ps->v[i].skip)
			continue;
		ret = reply_stop_proposal(ps->bc, ps->v[i].p, &n, &action);
		stops[i] = action.len ? strbuf_detach(&action, NULL) : NULL;
		strbuf_release(&action);
	}
	for (size_t i = 0; i < ps->n && ret >= 0; i++) {
		struct msg *m = &ps->v[i];
		struct strbuf action = STRBUF_INIT;
		long long target = 0;
		if (m->skip)
			continue;
		if ((ret = tx_begin(ps)) < 0 ||
		    (ret = reply_pending(db, m->p->message_id)) <= 0) {
			strbuf_release(&action);
			continue; /* applied by a copy, or another pass */
		}
		ps->res->replies++;
		if (stops[i])
			strbuf_addstr(&action, stops[i]);
		if ((ret = savepoint(db, "SAVEPOINT reply")) >= 0 &&
		    (ret = reply_apply(ps->bc, m->p, &n, &action, &target)) < 0 &&
		    !transient(ret)) {
			/* bad in itself: said, and not tried again */
			strbuf_addf(&action, "%snot applied: %s",
				    action.len ? ", " : "", err_msg());
			log_warnx("mail %s: %s", m->p->message_id, err_msg());
			err_clear();
			ret = savepoint(db, "ROLLBACK TO reply");
		}
		if (ret >= 0)
			ret = db_exec(db,
				      "UPDATE mail_messages SET action = ?,"
				      " patch_id = NULLIF(?, 0) WHERE message_id"
				      " = ?",
				      "tit", action.len ? action.buf : "none",
				      target, m->p->message_id);
		if (ret >= 0)
			ret = savepoint(db, "RELEASE reply");
		if (ret >= 0)
			ret = tx_count(ps, 1);
		strbuf_release(&action);
	}
	if (ret < 0)
		tx_abort(ps);
	else
		ret = tx_commit(ps);
out:
	for (size_t i = 0; i < ps->n; i++)
		free(stops[i]);
	free(stops);
	ps->res->held += n.held;
	ps->res->trailers += n.trailers;
	ps->res->tested += n.tested;
	ps->res->stopped += n.stopped;
	return ret < 0 ? ret : 0;
}

/* Where each source stopped, once everything it gave is stored. */
static int record_positions(struct pass *ps)
{
	sqlite3 *db = ps->bc->db;
	int ret = db_begin(db);

	for (size_t i = 0; ret >= 0 && i < ps->nsrc; i++) {
		const struct source *s = &ps->src[i];
		/* a file to read again: the daemon comes back for it */
		ret = db_exec(db,
			      "UPDATE mail_sources SET position = ?, read_at ="
			      " strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
			      "ti", s->unsettled ? NULL : s->position, s->id);
		for (size_t k = 0; ret >= 0 && k < s->nfiles; k++)
			if (!s->files[k].again)
				ret = db_exec(db,
					      "INSERT INTO mail_files (source_id,"
					      " name, size, mtime) VALUES (?, ?,"
					      " ?, ?) ON CONFLICT (source_id,"
					      " name) DO UPDATE SET size ="
					      " excluded.size, mtime ="
					      " excluded.mtime",
					      "itit", s->id, s->files[k].key,
					      s->files[k].size,
					      s->files[k].mtime);
	}
	return db_end(db, ret < 0 ? ret : 0);
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
 * (intake_check()): its new patches a reply has not held since, the
 * patches a completed series let go, and those an earlier pass imported
 * from the list and did not get to check (it was cut short). A failing
 * check is logged; the patches wait in 'imported' for the daemon's check
 * step.
 */
static int check_pass(struct pass *ps)
{
	sqlite3 *db = ps->bc->db;
	struct intake_result all = { 0 };
	long long *left = NULL;
	size_t nleft = 0;
	int ret;

	if (queue_ids(db, 0, PS_IMPORTED, &left, &nleft) == 0)
		for (size_t i = 0; i < nleft; i++)
			if (db_int(db, 1,
				   "SELECT count(*) FROM mail_patches WHERE"
				   " patch_id = ?",
				   "i", left[i]) > 0)
				pass_check(ps, left[i]);
	free(left);
	err_clear();
	all.ids = xcalloc(ps->ncheck + 1, sizeof(*all.ids));
	for (size_t i = 0; i < ps->ncheck; i++) {
		enum patch_state st;
		if (queue_get_state(db, ps->check[i], &st) == 0 &&
		    (st == PS_IMPORTED || st == PS_CHECKED))
			all.ids[all.nids++] = ps->check[i];
	}
	all.added = all.nids;
	if (all.nids && (ret = intake_check(ps->bc, &all, NULL, NULL)) < 0)
		log_warnx("mail intake: checks: %s", err_msg());
	err_clear();
	intake_result_release(&all);
	return 0;
}

int mailin_run(struct branch_ctx *bc, struct mailin_result *res)
{
	struct pass ps = { .bc = bc, .res = res };
	int ret;

	memset(res, 0, sizeof(*res));
	ps.own_addr = own_address(bc->cfg.mail_from);
	if ((ret = each_path(&ps, bc->cfg.intake_maildir, read_maildir)) < 0 ||
	    (ret = each_path(&ps, bc->cfg.intake_inbox, read_inbox)) < 0 ||
	    (ret = parse_all(&ps)) < 0 || (ret = record_plain(&ps)) < 0 ||
	    (ret = store_series(&ps)) < 0 || (ret = store_replies(&ps)) < 0 ||
	    (ret = record_positions(&ps)) < 0)
		goto out;
	ret = check_pass(&ps);
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
