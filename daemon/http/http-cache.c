/* http-cache.c: pooled SQLite connections for reads and the answers they keep. */
#include "http.h"
#include "http-int.h"

#include "err.h"
#include "log.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

/*
 * Reads take a SQLite connection from a small pool for the length of one
 * request (WAL lets them run beside the writer and the daemon's children),
 * so connections are opened once, not once per request. A read runs in one
 * read transaction: its queries see one snapshot.
 *
 * Cache: the dashboard and scripts poll the same reads while the store
 * rarely changes, so each pooled connection keeps the answers of cacheable
 * routes (api_cacheable) with the stamp of the store they were made at:
 * its WAL-index header, read from shared memory (dbwatch.c), or PRAGMA
 * data_version when that cannot be read. Both change when any connection
 * commits (the writer thread, the daemon's loop and children, the CLI),
 * and pooled connections never write, so an answer is reused only while
 * nothing has changed.
 * STABLEQ_HTTP_CACHE=0 in the environment turns it off (for benchmarks).
 */

/* ---- connections ---- */

static void cache_clear(struct conn *c)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		free(c->cache[i].key);
		/* Answers being sent keep their own reference. */
		if (c->cache[i].r)
			MHD_destroy_response(c->cache[i].r);
		if (c->cache[i].rz)
			MHD_destroy_response(c->cache[i].rz);
		memset(&c->cache[i], 0, sizeof(c->cache[i]));
	}
	c->next = c->bytes = 0;
}

void http_conn_close(struct conn *c)
{
	if (!c)
		return;
	cache_clear(c);
	sqlite3_finalize(c->begin);
	sqlite3_finalize(c->commit);
	sqlite3_finalize(c->version);
	db_close(c->db);
	free(c);
}

static struct conn *conn_open(const char *path)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	if (db_open(&c->db, path) < 0 ||
	    !(c->begin = db_prepare(c->db, "BEGIN", NULL)) ||
	    !(c->commit = db_prepare(c->db, "COMMIT", NULL)) ||
	    !(c->version = db_prepare(c->db, "PRAGMA data_version", NULL))) {
		log_warnx("http: %s", err_msg());
		http_conn_close(c);
		return NULL;
	}
	return c;
}

/* Runs a prepared statement without results; 0 or -1. */
static int run_stmt(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/* The store's data_version as this connection sees it, -1 on error. */
static long long data_version(struct conn *c)
{
	long long v = -1;

	if (sqlite3_step(c->version) == SQLITE_ROW)
		v = sqlite3_column_int64(c->version, 0);
	sqlite3_reset(c->version);
	return v;
}

/* The store's stamp now, as seen through c; -1 on error. */
static int stamp_now(struct http_server *s, struct conn *c, struct stamp *st)
{
	if (s->watch && !db_watch_stamp(s->watch, &st->hdr)) {
		st->kind = STAMP_HDR;
		return 0;
	}
	st->kind = STAMP_VERSION;
	return (st->version = data_version(c)) < 0 ? -1 : 0;
}

static int stamp_same(const struct stamp *a, const struct stamp *b)
{
	if (a->kind != b->kind || !a->kind)
		return 0;
	return a->kind == STAMP_HDR
		       ? !memcmp(&a->hdr, &b->hdr, sizeof(a->hdr))
		       : a->version == b->version;
}

struct conn *http_pool_get(struct http_server *s)
{
	struct conn *c = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->nidle)
		c = s->idle[--s->nidle];
	pthread_mutex_unlock(&s->lock);
	return c ? c : conn_open(s->app->bc.cfg.db);
}

void http_pool_put(struct http_server *s, struct conn *c)
{
	if (!c)
		return;
	/* A handler that failed halfway must not leave its transaction open. */
	db_rollback(c->db);
	pthread_mutex_lock(&s->lock);
	if (s->nidle < POOL_MAX) {
		s->idle[s->nidle++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	http_conn_close(c);
}

/* "/patches?state=queued&limit=50": what a cached answer is found by. */
static char *cache_key(const struct api_request *req)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, req->path);
	for (size_t i = 0; i < req->nargs; i++)
		strbuf_addf(&sb, "%c%s=%s", i ? '&' : '?', req->arg_names[i],
			    req->arg_values[i] ? req->arg_values[i] : "");
	return strbuf_detach(&sb, NULL);
}

static struct cached *cache_find(struct conn *c, const char *key)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (c->cache[i].key && !strcmp(c->cache[i].key, key))
			return &c->cache[i];
	return NULL;
}

/* Keeps r and rz (their references) under key (taken); the entry. */
static struct cached *cache_put(struct conn *c, char *key,
				struct MHD_Response *r,
				struct MHD_Response *rz, size_t len,
				unsigned long long tag)
{
	struct cached *e;

	if (c->bytes + len > CACHE_BYTES)
		cache_clear(c);
	e = &c->cache[c->next];
	c->next = (c->next + 1) % CACHE_SLOTS;
	c->bytes -= e->len;
	free(e->key);
	if (e->r)
		MHD_destroy_response(e->r);
	if (e->rz)
		MHD_destroy_response(e->rz);
	e->key = key;
	e->r = r;
	e->rz = rz;
	e->len = len;
	http_etag_of(e->etag[0], sizeof(e->etag[0]), tag, 0);
	http_etag_of(e->etag[1], sizeof(e->etag[1]), tag, 1);
	c->bytes += len;
	return e;
}

/*
 * Answers a read: from the cache when the store has not changed since the
 * answer was made, else in one read transaction. The stamp is read
 * before the transaction begins, so an answer may be newer than the stamp
 * it is kept under, never older: the next request sees a new stamp and
 * makes it again.
 *
 * Returns a response kept in db's cache, to be queued before db goes back
 * to the pool (the cache may drop it then), or NULL: the answer is in
 * c->res.
 */
struct MHD_Response *http_run_read(struct http_server *s, struct conn *db,
				     struct req_ctx *c)
{
	struct api_response *res = &c->res;
	struct MHD_Response *r, *rz;
	struct cached *e;
	struct stamp now;
	char *key = NULL;

	if (s->cache_on && api_cacheable(&c->req) &&
	    !stamp_now(s, db, &now)) {
		if (!stamp_same(&now, &db->seen)) {
			cache_clear(db);
			db->seen = now;
		}
		key = cache_key(&c->req);
		if ((e = cache_find(db, key))) {
			free(key);
			c->etag = e->etag[c->gzip && e->rz];
			return c->gzip && e->rz ? e->rz : e->r;
		}
	}
	if (run_stmt(db->begin) < 0) {
		api_error(res, 503, "unavailable", "the database is busy: %s",
			  sqlite3_errmsg(db->db));
		free(key);
		return NULL;
	}
	api_run(&c->req, res);
	run_stmt(db->commit);
	if (key && res->status == 200 && res->fd < 0 &&
	    res->body.len <= CACHE_ENTRY_MAX) {
		size_t len = res->body.len;
		unsigned long long tag = http_hash_of(res->body.buf, len);
		/* Both forms now: the next client may want the other. */
		c->revalidate = 1;
		if ((r = http_make_responses(c, GZIP_LEVEL, &rz))) {
			http_set_etag(r, tag, 0);
			if (rz)
				http_set_etag(rz, tag, 1);
			/* bytes held: the gzipped form is under 7/8 of len */
			e = cache_put(db, key, r, rz,
				      len + (rz ? len - len / 8 : 0), tag);
			c->etag = e->etag[c->gzip && rz];
			return c->gzip && rz ? rz : r;
		}
		c->revalidate = 0;
	}
	free(key);
	return NULL;
}
