/* mailin-int.h: what the mail intake's files share: a pass, its messages, a series being stored. */
#ifndef STABLEQ_MAILIN_INT_H
#define STABLEQ_MAILIN_INT_H

#include "mailin.h"
#include "patch.h"
#include "queue.h"
#include "thread.h"

#include <sqlite3.h>
#include <stddef.h>
#include <time.h>

struct branch_ctx;

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
	int in_tx, added;       /* the pass's transaction: open, added patches */
	size_t tx_msgs;         /* ... its messages so far */
	double tx_start;        /* ... when it began (seconds, monotonic) */
};


/* A series as stored in mail_series. */
struct sseries {
	long long id;
	int version, total;
	char *author, *subject, *state;
};


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


/* mailin.c: the pass. */
/* id is checked at the end of the pass (if it is still to be checked). */
void mailin_check_later(struct pass *ps, long long id);
/* A store error (locked, full, I/O): the pass stops, the mail is read again. */
int mailin_transient(int ret);
/*
 * Records what a message did (its Message-Id once: a copy is a no-op; a
 * message read invalid before, now whole, takes its row). 1 when it
 * stored the row, 0 for a copy, negative on error.
 */
int mailin_record(struct pass *ps, const struct msg *m, const char *kind,
		  long long patch_id, const char *action, const char *error,
		  long long series, int part);
/*
 * The pass's transactions, a chunk of messages each (tx_count: n more;
 * it commits and begins the next when the chunk is full or old).
 */
int mailin_tx_begin(struct pass *ps);
int mailin_tx_commit(struct pass *ps);
void mailin_tx_abort(struct pass *ps);
int mailin_tx_count(struct pass *ps, size_t n);
/* "SAVEPOINT x", "RELEASE x", "ROLLBACK TO x". */
int mailin_savepoint(sqlite3 *db, const char *verb);

/* mailseries.c: patches and covers, as series, stored series by series. */
int mailin_store_series(struct pass *ps);

/* mailpart.c: one part of a series on one branch. */
int mailin_store_part(struct group *g, size_t b, size_t k, long long *id);
int mailin_flag_reverted(struct group *g, size_t k);
const char *mailin_sender(const struct patch *p);
int mailin_live(enum patch_state st);

#endif
