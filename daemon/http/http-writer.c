/* http-writer.c: the writer thread: writes run one at a time on their own connection. */
#include "http.h"
#include "http-int.h"

#include "err.h"
#include "log.h"

/*
 * Writes can be slow (an 8 MB import, a libgit2 revert), so the connection
 * is suspended and the request handed to one writer thread with its own
 * SQLite connection; a slow write never stalls reads, and SQLite
 * serializes writers anyway.
 */

/* The body is in: hand the write to the writer thread. */
enum MHD_Result http_queue_write(struct req_ctx *c)
{
	struct http_server *s = c->srv;

	c->req.body = c->body.buf;
	c->req.body_len = c->body.len;
	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		api_error(&c->res, 503, "unavailable", "the server is stopping");
		return http_send_answer(c);
	}
	http_limit_received(c->conn);
	MHD_suspend_connection(c->conn);
	c->next = NULL;
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return MHD_YES;
}

void *http_writer_main(void *arg)
{
	struct http_server *s = arg;
	/* Its own connection: pooled ones never write (see the cache above). */
	sqlite3 *db = NULL;

	if (db_open(&db, s->app->bc.cfg.db) < 0) {
		log_warnx("http: writer: %s", err_msg());
		db = NULL;
	}
	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct req_ctx *c;

		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->wake, &s->lock);
		if (!s->head)
			break; /* stopping, and nothing left to do */
		c = s->head;
		s->head = c->next;
		if (!s->head)
			s->tail = NULL;
		pthread_mutex_unlock(&s->lock);

		if (!db && db_open(&db, s->app->bc.cfg.db) < 0)
			db = NULL;
		if (db) {
			c->req.app.bc.db = db;
			err_clear();
			api_run(&c->req, &c->res);
			db_rollback(db); /* a module that failed halfway */
			c->req.app.bc.db = NULL;
		} else {
			api_error(&c->res, 503, "unavailable",
				  "the database cannot be opened");
		}
		c->answered = 1;
		MHD_resume_connection(c->conn);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	db_close(db);
	return NULL;
}
