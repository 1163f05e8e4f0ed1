/* t-dbwatch.c: the store's stamp off the WAL index: changes with every commit (any process), only then. */
#include "db.h"
#include "dbwatch.h"
#include "err.h"
#include "strbuf.h"
#include "tap.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int stamp(struct db_watch *w, struct db_stamp *s)
{
	for (int i = 0; i < 1000; i++)
		if (!db_watch_stamp(w, s))
			return 0;
	return -1;
}

static int same(const struct db_stamp *a, const struct db_stamp *b)
{
	return !memcmp(a, b, sizeof(*a));
}

struct writer {
	const char *path;
	int n;
};

static void *write_rows(void *arg)
{
	struct writer *wr = arg;
	sqlite3 *db;

	if (db_open(&db, wr->path) < 0)
		return NULL;
	for (int i = 0; i < wr->n; i++)
		db_exec(db, "INSERT INTO t(v) VALUES (?)", "d", i);
	db_close(db);
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/t-dbwatch.XXXXXX";
	struct db_stamp a, b, c;
	struct db_watch *w;
	sqlite3 *db, *other;
	char *path, *plain_path;

	if (!mkdtemp(dir))
		return 1;
	path = xstrfmt("%s/t.db", dir);
	ok(db_open(&db, path) == 0, "a store in WAL mode");
	db_exec_script(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)");
	w = db_watch_open(db, path);
	if (!ok(w != NULL, "db_watch_open maps its WAL index")) {
		diag("%s", err_msg());
		return done_testing() | 1;
	}
	ok(stamp(w, &a) == 0 && stamp(w, &b) == 0 && same(&a, &b),
	   "nothing committed: the same stamp twice");
	/*
	 * SQLite's hold on the index stays: another process sees this one's
	 * shared lock on its "DMS" byte (120 + 8), without which it would
	 * truncate the file that this process has mapped (SIGBUS).
	 */
	{
		char *shm = xstrfmt("%s-shm", path);
		pid_t parent = getpid(), pid = fork();
		if (pid == 0) {
			struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
					    .l_start = 128, .l_len = 1 };
			int fd = open(shm, O_RDWR);
			_exit(fd >= 0 && fcntl(fd, F_GETLK, &fl) == 0 &&
					      fl.l_type == F_RDLCK && fl.l_pid == parent
				      ? 0
				      : 1);
		}
		int st = -1;
		waitpid(pid, &st, 0);
		ok(WIFEXITED(st) && !WEXITSTATUS(st),
		   "the watch leaves SQLite's locks on the index alone (another process sees them)");
		free(shm);
	}

	ok(db_open(&other, path) == 0, "another connection");
	db_exec(other, "INSERT INTO t(v) VALUES (1)", NULL);
	ok(stamp(w, &b) == 0 && !same(&a, &b), "a commit by another connection changes it");
	db_exec_script(other, "BEGIN; INSERT INTO t(v) VALUES (2); ROLLBACK");
	ok(stamp(w, &c) == 0 && same(&b, &c), "a rolled-back transaction does not");
	db_exec(other, "SELECT COUNT(*) FROM t", NULL);
	ok(stamp(w, &c) == 0 && same(&b, &c), "a read does not");
	db_exec(db, "UPDATE t SET v = v + 1", NULL);
	ok(stamp(w, &c) == 0 && !same(&b, &c), "a commit by the watching connection does");

	/* a checkpoint that empties the WAL, then a commit that starts it over */
	db_exec_script(other, "PRAGMA wal_checkpoint(TRUNCATE)");
	ok(stamp(w, &a) == 0, "a stamp after a checkpoint (TRUNCATE)");
	db_exec(other, "INSERT INTO t(v) VALUES (3)", NULL);
	ok(stamp(w, &b) == 0 && !same(&a, &b),
	   "a commit that restarts the WAL from its first frame changes it");
	db_exec_script(other, "PRAGMA wal_checkpoint(TRUNCATE)");
	stamp(w, &a);
	db_exec(other, "INSERT INTO t(v) VALUES (3)", NULL);
	ok(stamp(w, &c) == 0 && !same(&a, &c) && !same(&b, &c),
	   "... and the next such commit (same frame count, new salt) changes it again");
	db_close(other);

	/* another process */
	stamp(w, &a);
	{
		pid_t pid = fork();
		if (pid == 0) {
			sqlite3 *cdb;
			if (db_open(&cdb, path) < 0)
				_exit(1);
			_exit(db_exec(cdb, "INSERT INTO t(v) VALUES (4)", NULL) < 0);
		}
		int st = -1;
		waitpid(pid, &st, 0);
		ok(WIFEXITED(st) && !WEXITSTATUS(st), "a child process commits");
	}
	ok(stamp(w, &b) == 0 && !same(&a, &b), "... and the stamp has changed when it is gone");

	/*
	 * Under a writer committing as fast as it can: whenever two stamps
	 * around a read are equal, that read belongs to the stamp, and one
	 * stamp never belongs to two different counts.
	 */
	{
		struct writer wr = { path, 2000 };
		pthread_t th;
		struct db_stamp seen[64];
		long long counts[64], n;
		int nseen = 0, torn = 0, reads = 0, bad = 0;

		pthread_create(&th, NULL, write_rows, &wr);
		for (int i = 0; i < 20000; i++) {
			struct db_stamp s1, s2;
			if (db_watch_stamp(w, &s1)) {
				torn++;
				continue;
			}
			if (db_query_int(db, &n, "SELECT COUNT(*) FROM t", NULL) < 0 ||
			    db_watch_stamp(w, &s2) || !same(&s1, &s2))
				continue;
			reads++;
			int k;
			for (k = 0; k < nseen && !same(&seen[k], &s1); k++)
				;
			if (k < nseen)
				bad += counts[k] != n;
			else {
				k = nseen < 64 ? nseen++ : i % 64;
				seen[k] = s1;
				counts[k] = n;
			}
		}
		pthread_join(th, NULL);
		ok(reads > 0 && !bad, "%d reads while another thread committed: equal stamps, equal"
		   " contents (%d mismatches, %d torn headers seen)", reads, bad, torn);
		ok(db_query_int(db, &n, "SELECT COUNT(*) FROM t", NULL) == 0 && n == 2004,
		   "all the writer's rows are in (%lld)", n);
	}
	db_watch_close(w);
	db_close(db);

	/* not WAL: the watch refuses, so that callers ask SQLite */
	plain_path = xstrfmt("%s/plain.db", dir);
	{
		sqlite3 *p;
		sqlite3_open(plain_path, &p);
		db_exec_script(p, "PRAGMA journal_mode = DELETE; CREATE TABLE x(a)");
		w = db_watch_open(p, plain_path);
		ok(!w, "a store not in WAL mode: no watch");
		like(err_msg(), "not wal", "... says why: %s", err_msg());
		db_watch_close(w);
		sqlite3_close(p);
	}

	{
		struct strbuf cmd = STRBUF_INIT;
		strbuf_addf(&cmd, "rm -rf %s", dir);
		if (system(cmd.buf) != 0)
			diag("could not remove %s", dir);
		strbuf_release(&cmd);
	}
	free(path);
	free(plain_path);
	return done_testing();
}
