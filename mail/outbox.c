/* outbox.c: delivering the outbox over SMTP, with retries and one deliverer. */
#include "outbox.h"
#include "ctx.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "smtp.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

long long outbox_backoff(int base, int attempts)
{
	long long d;
	int shift;

	if (base <= 0)
		return 0;
	shift = attempts < 1 ? 0 : attempts - 1;
	if (shift > 30)
		shift = 30;
	d = (long long)base << shift;
	return d > OUTBOX_BACKOFF_MAX ? OUTBOX_BACKOFF_MAX : d;
}

/*
 * One deliverer per database: a 'sending' row seen while holding the lock
 * was left by a process that died, so it is retried at once. The lock is
 * a separate file: an flock() on the database itself could not coexist
 * with SQLite's own POSIX locks. Returns the fd, -1 for no lock needed
 * (in-memory database), ERR_CONFLICT when another process holds it.
 */
static int outbox_lock(sqlite3 *db)
{
	const char *path = sqlite3_db_filename(db, "main");
	char *lock;
	int fd;

	if (!path || !*path)
		return -1;
	lock = xstrfmt("%s-outbox.lock", path);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		int ret = err_set(ERR_IO, "%s: %s", lock, strerror(errno));
		free(lock);
		return ret;
	}
	free(lock);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int busy = errno == EWOULDBLOCK;
		int ret = err_set(busy ? ERR_CONFLICT : ERR_IO, "outbox: %s",
				  busy ? "another process is delivering mail"
				       : strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

/* A due mail: id, patch_id, attempts, mail_from, rcpt_to, headers_and_body. */
struct due {
	long long id, patch_id;
	int attempts;
	const char *from, *rcpt_json, *data; /* borrowed from row */
	json_t *row;
};

static void due_release(struct due *d)
{
	json_decref(d->row);
	memset(d, 0, sizeof(*d));
}

#define DUE_SELECT                                                             \
	"SELECT id, patch_id, attempts, mail_from, rcpt_to, headers_and_body"  \
	" FROM mail"

/* d from a row of DUE_SELECT, or NULL: 1 found, 0 none, negative error. */
static int due_fill(json_t *r, struct due *d)
{
	if (!r)
		return err_last() == ERR_NOTFOUND ? 0 : ERR_IO;
	due_release(d);
	d->row = r;
	d->id = json_integer_value(json_object_get(r, "id"));
	d->patch_id = json_integer_value(json_object_get(r, "patch_id"));
	d->attempts = (int)json_integer_value(json_object_get(r, "attempts"));
	d->from = json_string_value(json_object_get(r, "mail_from"));
	d->rcpt_json = json_string_value(json_object_get(r, "rcpt_to"));
	d->data = json_string_value(json_object_get(r, "headers_and_body"));
	return 1;
}

/* The next due mail after id `after`: 1 found, 0 none, negative error. */
static int next_due(sqlite3 *db, long long after, time_t now, struct due *d)
{
	return due_fill(db_row_json(db,
				    DUE_SELECT " WHERE id > ? AND ((state ="
					       " 'queued' AND hold IS NULL AND"
					       " next_attempt_at <= ?) OR state"
					       " = 'sending')"
					       " ORDER BY id LIMIT 1",
				    "ii", after, (long long)now),
			d);
}

/*
 * The mail read again once it is 'sending': until then the next event
 * about its patch may have amended it (compose.c), from then on none can,
 * so what goes to the relay is what the store holds.
 */
static int due_reload(sqlite3 *db, struct due *d)
{
	int r = due_fill(
		db_row_json(db, DUE_SELECT " WHERE id = ?", "i", d->id), d);
	return r == 0 ? err_set(ERR_IO, "mail %lld: gone while sending", d->id)
		      : r;
}

/* Runs one UPDATE (+ event) in a transaction of its own, retried when busy. */
static int record(sqlite3 *db, const struct due *d, const char *state,
		  long long next, const char *error, int tries)
{
	int ret = 0;

	for (int i = 0; i < tries; i++) {
		if ((ret = db_begin(db)) < 0)
			continue;
		if (!strcmp(state, "sent"))
			ret = db_exec(
				db,
				"UPDATE mail SET state = 'sent', last_error"
				" = NULL, sent_at = strftime("
				"'%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
				"i", d->id);
		else
			ret = db_exec(
				db,
				"UPDATE mail SET state = ?, next_attempt_at"
				" = ?, last_error = ? WHERE id = ?",
				"titi", state, next, error, d->id);
		if (ret >= 0 && strcmp(state, "queued"))
			ret = (int)event_add(db, "outbox", "mail", d->id, state,
					     "patch %lld, attempt %d%s%s",
					     d->patch_id, d->attempts,
					     error ? ": " : "",
					     error ? error : "");
		if ((ret = db_end(db, ret)) >= 0)
			return 0;
	}
	return ret;
}

static void report(outbox_report_fn *fn, void *arg, const struct due *d,
		   const char *state, long long next, const char *rcpt,
		   const char *error)
{
	struct outbox_report r = {d->id, d->patch_id, state, d->attempts,
				  next,	 rcpt,	      error};

	if (fn) {
		fn(&r, arg);
		return;
	}
	if (error)
		log_info("mail %lld: %s (patch %lld, attempt %d): %s", d->id,
			 state, d->patch_id, d->attempts, error);
	else
		log_info("mail %lld: sent to %s (patch %lld, attempt %d)",
			 d->id, rcpt, d->patch_id, d->attempts);
}

int outbox_deliver_report(sqlite3 *db, const struct config *cfg, int max,
			  outbox_report_fn *fn, void *arg)
{
	struct smtp *smtp = NULL;
	struct due d = {0};
	long long after = 0;
	int lock, sent = 0, tried = 0, ret = 0;
	int max_attempts =
		cfg->mail_max_attempts > 0 ? cfg->mail_max_attempts : 1;

	if (!sqlite3_get_autocommit(db))
		return err_set(ERR_CONFLICT, "outbox: delivery runs its own "
					     "transactions, not inside one");
	if (!cfg->smtp_url || !*cfg->smtp_url) {
		long long n = 0;
		if (db_query_int(db, &n,
				 "SELECT count(*) FROM mail WHERE state IN"
				 " ('queued','sending')",
				 NULL) < 0)
			return ERR_IO;
		if (n)
			log_info("mail: smtp_url is not set: %lld mail(s) stay "
				 "queued",
				 n);
		return 0;
	}
	lock = outbox_lock(db);
	if (lock == ERR_CONFLICT) {
		log_info("mail: %s; not delivering now", err_msg());
		return 0;
	}
	if (lock < -1)
		return lock;

	while (max <= 0 || tried < max) {
		time_t now = time(NULL);
		json_t *rj = NULL;
		const char **rcpt = NULL;
		size_t nrcpt = 0;
		int down = 0, r;

		due_release(&d);
		if ((r = next_due(db, after, now, &d)) <= 0) {
			ret = r;
			break;
		}
		after = d.id;
		tried++;
		/* Committed before the relay hears of it: a crash from here on
		 * leaves 'sending', which the next pass sends again. */
		if ((ret = db_begin(db)) < 0)
			break;
		r = db_exec(db,
			    "UPDATE mail SET state = 'sending', attempts ="
			    " attempts + 1 WHERE id = ? AND state IN"
			    " ('queued','sending')",
			    "i", d.id);
		if ((ret = db_end(db, r)) < 0)
			break;
		if (r == 0)
			continue;
		if ((ret = due_reload(db, &d)) < 0)
			break;

		rj = json_loads(d.rcpt_json ? d.rcpt_json : "", 0, NULL);
		nrcpt = json_is_array(rj) ? json_array_size(rj) : 0;
		rcpt = xcalloc(nrcpt + 1, sizeof(*rcpt));
		for (size_t i = 0; i < nrcpt; i++)
			rcpt[i] = json_string_value(json_array_get(rj, i));
		for (size_t i = 0; i < nrcpt; i++)
			if (!rcpt[i])
				nrcpt = 0;
		if (!nrcpt || !d.data || !d.from) {
			r = err_set(ERR_INVALID, "stored mail has no recipients"
						 " or no text");
			down = 0;
		} else {
			if (!smtp && !(smtp = smtp_open(cfg->smtp_url, NULL))) {
				r = ERR_IO;
				down = 1;
			} else {
				r = smtp_send(smtp, d.from, rcpt, nrcpt, d.data,
					      strlen(d.data), &down, NULL);
			}
		}
		if (r == 0) {
			/* The relay has it: record that before anything else
			 * (QUIT included), to keep the duplicate window small.
			 */
			if ((ret = record(db, &d, "sent", 0, NULL, 5)) < 0)
				log_warnx("mail %lld: sent, but not recorded "
					  "(it will be sent again): %s",
					  d.id, err_msg());
			else
				sent++;
			report(fn, arg, &d, "sent", 0, rcpt[0], NULL);
		} else {
			char *e = xstrdup(err_msg());
			int final =
				d.attempts >= max_attempts || r == ERR_INVALID;
			long long next =
				final ? 0
				      : (long long)time(NULL) +
						outbox_backoff(
							cfg->mail_backoff,
							d.attempts);
			ret = record(db, &d, final ? "failed" : "queued", next,
				     e, 5);
			report(fn, arg, &d, final ? "failed" : "queued", next,
			       nrcpt ? rcpt[0] : NULL, e);
			free(e);
		}
		free(rcpt);
		json_decref(rj);
		if (ret < 0 || down)
			break;
	}
	due_release(&d);
	smtp_close(smtp);
	if (lock >= 0)
		close(lock);
	return ret < 0 ? ret : sent;
}

int outbox_deliver(sqlite3 *db, const struct config *cfg, int max)
{
	return outbox_deliver_report(db, cfg, max, NULL, NULL);
}

int outbox_due(struct branch_ctx *bc, long long *id)
{
	return *bc->cfg.smtp_url &&
	       db_query_int(bc->db, id,
			    "SELECT id FROM mail WHERE ((state = 'queued' AND"
			    " hold IS NULL) OR state = 'sending') AND"
			    " next_attempt_at <= CAST(strftime('%s','now') AS"
			    " INTEGER) ORDER BY id LIMIT 1",
			    NULL) == 0;
}

/* ---- what the outbox holds, for the API and the CLI ---- */

json_t *outbox_list_json(sqlite3 *db, const char *state, const char *patches,
			 long long limit)
{
	return db_rows_json(db,
			    "SELECT id, patch_id, NULL AS branch, event_id,"
			    " kind, message_id, mail_from, rcpt_to, state,"
			    " attempts, next_attempt_at, last_error,"
			    " created_at, sent_at, hold,"
			    " substr(headers_and_body, 1, 4096) AS head FROM"
			    " mail WHERE (?1 IS NULL OR state = ?1) AND (?2"
			    " IS NULL OR patch_id IN (SELECT value FROM"
			    " json_each(?2))) ORDER BY id DESC LIMIT ?3",
			    "tti", state, patches, limit);
}

json_t *outbox_all_json(sqlite3 *db, const char *state)
{
	return db_rows_json(db,
			    "SELECT id, patch_id, event_id, kind, state,"
			    " attempts, next_attempt_at, last_error,"
			    " message_id, mail_from, rcpt_to, created_at,"
			    " sent_at, hold FROM mail WHERE ?1 IS NULL OR"
			    " state = ?1 ORDER BY id",
			    "t", state);
}

json_t *outbox_patch_json(sqlite3 *db, long long patch_id)
{
	return db_rows_json(db,
			    "SELECT id, kind, state, attempts, last_error,"
			    " created_at, sent_at FROM mail WHERE patch_id = ?"
			    " ORDER BY id",
			    "i", patch_id);
}

int outbox_text(sqlite3 *db, long long id, char **text)
{
	*text = NULL;
	return db_query_text(db, text,
			     "SELECT headers_and_body FROM mail WHERE id = ?",
			     "i", id);
}

int outbox_cancel(sqlite3 *db, const char *message_id, const char *reason,
		  const char *actor)
{
	long long id = 0;
	char *why = xstrfmt("cancelled: %s", reason);
	int ret;

	ret = db_query_int(db, &id,
			   "SELECT id FROM mail WHERE message_id = ? AND state"
			   " = 'queued'",
			   "t", message_id);
	if (ret == ERR_NOTFOUND) {
		err_clear();
		ret = 0;
		goto out;
	}
	if (ret < 0 ||
	    (ret = db_exec(db,
			   "UPDATE mail SET state = 'failed', last_error = ?"
			   " WHERE id = ? AND state = 'queued'",
			   "ti", why, id)) <= 0)
		goto out;
	ret = (int)event_add(db, actor, "mail", id, "cancelled", "%s", why);
	ret = ret < 0 ? ret : 1;
out:
	free(why);
	return ret;
}

json_t *outbox_state_counts(sqlite3 *db)
{
	return db_map_of(db_rows_json(
		db, "SELECT state, COUNT(*) FROM mail GROUP BY state", NULL));
}

int outbox_waiting(sqlite3 *db, long long now, long long *n)
{
	*n = 0;
	return db_query_int(db, n,
			    "SELECT count(*) FROM mail WHERE (state = 'queued'"
			    " AND hold IS NULL AND next_attempt_at <= ?) OR"
			    " state = 'sending'",
			    "i", now);
}
