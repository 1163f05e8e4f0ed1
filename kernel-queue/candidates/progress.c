/* progress.c: progress of long steps, in the store and on a terminal line. */
#include "progress.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "spawn.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORE_EVERY 1.0 /* seconds between rows written for one kind */
#define PAINT_EVERY 0.1

static int term_fd = -1;
static int painted;
static double last_paint;

/* The last store of each kind (few kinds: a linear table is enough). */
static struct {
	char kind[16];
	long long id;
	double at;
} stored[4];

void progress_terminal(int fd)
{
	term_fd = fd;
}

char *progress_text(long long done, long long total, const char *unit)
{
	if (total > 0)
		return xstrfmt("%lld/%lld %s (%lld%%)", done < total ? done : total,
			       total, unit, (done < total ? done : total) * 100 /
						    total);
	return xstrfmt("%lld %s", done, unit);
}

static int due(const char *kind, long long id, int last)
{
	double now = now_monotonic();
	size_t i, free_slot = 0;

	for (i = 0; i < sizeof(stored) / sizeof(stored[0]); i++) {
		if (!strcmp(stored[i].kind, kind) && stored[i].id == id)
			break;
		if (!stored[i].kind[0] || stored[i].at < stored[free_slot].at)
			free_slot = i;
	}
	if (i == sizeof(stored) / sizeof(stored[0])) {
		i = free_slot;
		snprintf(stored[i].kind, sizeof(stored[i].kind), "%s", kind);
		stored[i].id = id;
		stored[i].at = 0;
	} else if (!last && now - stored[i].at < STORE_EVERY) {
		return 0;
	}
	stored[i].at = now;
	return 1;
}

void progress_set(sqlite3 *db, const char *kind, long long subject_id,
		  const char *label, long long done, long long total,
		  const char *unit)
{
	int last = total > 0 && done >= total;
	char *text = progress_text(done, total, unit);

	/* progress is a hint: a write that fails (a busy store) is skipped */
	if (db && due(kind, subject_id, last) &&
	    db_exec(db,
			"INSERT INTO progress (kind, subject_id, label, done,"
			" total, unit, pid) VALUES (?, ?, ?, ?, NULLIF(?, 0), ?,"
			" ?) ON CONFLICT (kind, subject_id) DO UPDATE SET label"
			" = excluded.label, done = excluded.done, total ="
			" excluded.total, unit = excluded.unit, pid ="
			" excluded.pid, updated_at ="
			" strftime('%Y-%m-%dT%H:%M:%SZ','now')",
			"titiitd", kind, subject_id,
			label, done, total, unit, (int)getpid()) < 0)
		log_debug("progress %s %lld: %s", kind, subject_id, err_msg());
	if (term_fd >= 0 &&
	    (last || now_monotonic() - last_paint >= PAINT_EVERY)) {
		dprintf(term_fd, "\r%s: %s\033[K", label, text);
		painted = 1;
		last_paint = now_monotonic();
	}
	free(text);
}

void progress_interrupt(void)
{
	if (term_fd >= 0 && painted)
		dprintf(term_fd, "\r\033[K");
	painted = 0;
	last_paint = 0;
}

void progress_clear(sqlite3 *db, const char *kind, long long subject_id)
{
	if (db && db_exec(db, "DELETE FROM progress WHERE kind = ? AND"
			      " subject_id = ?",
			      "ti", kind, subject_id) < 0)
		log_warnx("progress %s %lld: %s", kind, subject_id, err_msg());
	for (size_t i = 0; i < sizeof(stored) / sizeof(stored[0]); i++)
		if (!strcmp(stored[i].kind, kind) && stored[i].id == subject_id)
			stored[i].kind[0] = '\0';
	progress_interrupt();
}

/* Long work at hand; a row not rewritten for ten minutes is a dead step's. */
json_t *progress_recent_json(sqlite3 *db)
{
	return db_rows_json(db,
			    "SELECT kind, subject_id, label, done, total, unit,"
			    " updated_at FROM progress WHERE updated_at >="
			    " strftime('%Y-%m-%dT%H:%M:%SZ', 'now',"
			    " '-10 minutes') ORDER BY kind, subject_id",
			    NULL);
}

json_t *progress_of_json(sqlite3 *db, const char *kind, long long subject_id)
{
	json_t *o = db_row_json(db,
				"SELECT label, done, total, unit, updated_at"
				" FROM progress WHERE kind = ? AND subject_id"
				" = ?",
				"ti", kind, subject_id);

	if (!o)
		err_clear();
	return o ? o : json_null();
}
