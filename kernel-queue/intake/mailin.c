/* mailin.c: a pass over maildirs and public-inbox epochs: read, parse, record, replies handed to review, checks. */
#include "mailin-int.h"
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
/*
 * A transaction of the pass ends after this many messages or this many
 * seconds, whichever comes first: the API's writers wait for the store at
 * most their busy timeout (10 s), and each chunk links the queue's
 * dependencies once.
 */
#define CHUNK 1024
#define CHUNK_SECONDS 2

void mailin_check_later(struct pass *ps, long long id)
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
int mailin_transient(int ret)
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

/* stableq's report on its own rc is a tester's: read back like one */
static int own_rc_report(const struct msg *m)
{
	static const char hdr[] = "\nX-Stableq-Kind: rc-report";

	return m->p->in_reply_to && memmem(m->raw, m->len, hdr, strlen(hdr));
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
int mailin_record(struct pass *ps, const struct msg *m, const char *kind,
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

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int mailin_tx_begin(struct pass *ps)
{
	int ret = ps->in_tx ? 0 : db_begin(ps->bc->db);

	if (ret >= 0 && !ps->in_tx) {
		ps->in_tx = 1;
		ps->added = 0;
		ps->tx_msgs = 0;
		ps->tx_start = seconds();
	}
	return ret;
}

int mailin_tx_commit(struct pass *ps)
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

void mailin_tx_abort(struct pass *ps)
{
	if (ps->in_tx)
		db_rollback(ps->bc->db);
	ps->in_tx = 0;
}

/* After n more messages: commit the chunk when it is full. */
int mailin_tx_count(struct pass *ps, size_t n)
{
	ps->tx_msgs += n;
	if (ps->tx_msgs < CHUNK && seconds() - ps->tx_start < CHUNK_SECONDS)
		return 0;
	int ret = mailin_tx_commit(ps);
	return ret < 0 ? ret : mailin_tx_begin(ps);
}

int mailin_savepoint(sqlite3 *db, const char *verb)
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
		} else if (!own_rc_report(m) &&
			   (has_own_header(m->raw, m->len) ||
			    (ps->own_addr && m->p->author_email &&
			     !strcasecmp(ps->own_addr, m->p->author_email)))) {
			ps->res->ignored++;
			kind = "ignored";
			why = "stableq's own mail";
		} else {
			continue;
		}
		m->skip = 1;
		if ((ret = mailin_tx_begin(ps)) < 0 ||
		    (ret = mailin_record(ps, m, kind, 0, NULL, why, 0, 0)) < 0 ||
		    (ret = mailin_tx_count(ps, 1)) < 0)
			break;
	}
	if (ret < 0) {
		mailin_tx_abort(ps);
		return ret;
	}
	return mailin_tx_commit(ps);
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
		if ((ret = mailin_tx_begin(ps)) < 0 ||
		    (ret = mailin_record(ps, m, "reply", 0, NULL, NULL, 0, 0)) < 0)
			break;
		if (!ret) { /* a copy delivered twice in this pass */
			m->skip = 1;
			ps->res->duplicates++;
		}
		ret = mailin_tx_count(ps, 1);
	}
	if (ret < 0) {
		mailin_tx_abort(ps);
		goto out;
	}
	if ((ret = mailin_tx_commit(ps)) < 0)
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
		if ((ret = mailin_tx_begin(ps)) < 0 ||
		    (ret = reply_pending(db, m->p->message_id)) <= 0) {
			strbuf_release(&action);
			continue; /* applied by a copy, or another pass */
		}
		ps->res->replies++;
		if (stops[i])
			strbuf_addstr(&action, stops[i]);
		if ((ret = mailin_savepoint(db, "SAVEPOINT reply")) >= 0 &&
		    (ret = reply_apply(ps->bc, m->p, &n, &action, &target)) < 0 &&
		    !mailin_transient(ret)) {
			/* bad in itself: said, and not tried again */
			strbuf_addf(&action, "%snot applied: %s",
				    action.len ? ", " : "", err_msg());
			log_warnx("mail %s: %s", m->p->message_id, err_msg());
			err_clear();
			ret = mailin_savepoint(db, "ROLLBACK TO reply");
		}
		if (ret >= 0)
			ret = db_exec(db,
				      "UPDATE mail_messages SET action = ?,"
				      " patch_id = NULLIF(?, 0) WHERE message_id"
				      " = ?",
				      "tit", action.len ? action.buf : "none",
				      target, m->p->message_id);
		if (ret >= 0)
			ret = mailin_savepoint(db, "RELEASE reply");
		if (ret >= 0)
			ret = mailin_tx_count(ps, 1);
		strbuf_release(&action);
	}
	if (ret < 0)
		mailin_tx_abort(ps);
	else
		ret = mailin_tx_commit(ps);
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
				mailin_check_later(ps, left[i]);
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
	    (ret = mailin_store_series(&ps)) < 0 || (ret = store_replies(&ps)) < 0 ||
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
