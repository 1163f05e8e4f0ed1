/* repo-extract.c: tar extracts while threads write the finished blobs. */
#include "repo-int.h"
#include "err.h"
#include "spawn.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * `tar -xv` names each member as it starts extracting it, and finishes a
 * file before it reads the next header: once the next name is out, the
 * previous file is complete and its blob can be written while tar goes on
 * (xz and tar keep one CPU busy, hashing and zlib the others). Whatever
 * this misses or cannot trust (symlinks, which GNU tar may create last;
 * names seen twice; sizes that changed) the import hashes again after tar.
 */

#define CHUNK 4096
#define TAR_TIMEOUT_MS (30 * 60 * 1000)
#define MAX_WORKERS 8

struct early_blob {
	char *path;
	git_oid oid;
	long long size;
	int ok;
};

struct repo_early {
	struct early_blob **chunks; /* fixed chunks: addresses stay put */
	size_t nchunks;
	size_t n; /* queued (under mu) */
	size_t next; /* next to take (under mu) */
	int closed; /* no more will be queued */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *root;
	const char *objects_dir;
	atomic_size_t done;

	/* after extraction: path -> blob, open addressing */
	size_t *table;
	size_t tsize;
};

static struct early_blob *blob_at(struct repo_early *e, size_t i)
{
	return &e->chunks[i / CHUNK][i % CHUNK];
}

int repo_fast_odb(git_odb **out, const char *objects_dir)
{
	git_odb_backend *be = NULL;

	*out = NULL;
	if (git_odb_new(out) < 0 ||
	    git_odb_backend_loose(&be, objects_dir, 1, 0, 0, 0) < 0 ||
	    git_odb_add_backend(*out, be, 1) < 0) {
		git_odb_free(*out);
		*out = NULL;
		return repo_git_err(ERR_IO, "%s", objects_dir);
	}
	return 0;
}

int repo_write_file_blob(git_odb *odb, const char *abs, int is_link,
			 struct strbuf *buf, git_oid *oid, long long *size)
{
	strbuf_reset(buf);
	if (is_link) {
		strbuf_grow(buf, 4096);
		ssize_t n = readlink(abs, buf->buf, buf->alloc - 1);
		if (n < 0)
			return err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		strbuf_setlen(buf, (size_t)n);
	} else {
		int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		struct stat st;
		int rr;

		if (fd < 0)
			return err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		if (fstat(fd, &st) == 0 && st.st_size > 0)
			strbuf_grow(buf, (size_t)st.st_size);
		rr = strbuf_read_fd(buf, fd, 0);
		close(fd);
		if (rr < 0)
			return err_set(ERR_IO, "%s: %s", abs, strerror(errno));
	}
	if (git_odb_write(oid, odb, buf->buf, buf->len, GIT_OBJECT_BLOB) < 0)
		return repo_git_err(ERR_IO, "%s: writing the blob", abs);
	*size = (long long)buf->len;
	return 0;
}

static void *early_worker(void *arg)
{
	struct repo_early *e = arg;
	struct strbuf buf = STRBUF_INIT;
	git_odb *odb = NULL;

	if (repo_fast_odb(&odb, e->objects_dir) < 0)
		goto drain;
	for (;;) {
		struct early_blob *b;
		char *abs;

		pthread_mutex_lock(&e->mu);
		while (e->next >= e->n && !e->closed)
			pthread_cond_wait(&e->cv, &e->mu);
		if (e->next >= e->n) {
			pthread_mutex_unlock(&e->mu);
			break;
		}
		b = blob_at(e, e->next++);
		pthread_mutex_unlock(&e->mu);
		abs = xstrfmt("%s/%s", e->root, b->path);
		/* a failure here is no failure: the import hashes it again */
		b->ok = repo_write_file_blob(odb, abs, 0, &buf, &b->oid,
					     &b->size) == 0;
		free(abs);
		atomic_fetch_add(&e->done, 1);
	}
drain:
	git_odb_free(odb);
	strbuf_release(&buf);
	return NULL;
}

static void early_queue(struct repo_early *e, const char *path, size_t len)
{
	struct early_blob *b;

	pthread_mutex_lock(&e->mu);
	if (e->n / CHUNK >= e->nchunks) {
		e->chunks = xrealloc(e->chunks,
				     (e->nchunks + 1) * sizeof(*e->chunks));
		e->chunks[e->nchunks++] = xcalloc(CHUNK, sizeof(**e->chunks));
	}
	b = blob_at(e, e->n);
	b->path = xstrndup(path, len);
	e->n++;
	pthread_cond_signal(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

static size_t hash_path(const char *s)
{
	size_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The lookup table; paths queued twice are dropped (not to be trusted). */
static void early_index(struct repo_early *e)
{
	e->tsize = 1024;
	while (e->tsize < e->n * 2)
		e->tsize *= 2;
	e->table = xmalloc(e->tsize * sizeof(*e->table));
	for (size_t i = 0; i < e->tsize; i++)
		e->table[i] = (size_t)-1;
	for (size_t i = 0; i < e->n; i++) {
		struct early_blob *b = blob_at(e, i);
		size_t h = hash_path(b->path) & (e->tsize - 1);
		while (e->table[h] != (size_t)-1) {
			struct early_blob *o = blob_at(e, e->table[h]);
			if (!strcmp(o->path, b->path)) {
				o->ok = b->ok = 0;
				break;
			}
			h = (h + 1) & (e->tsize - 1);
		}
		if (e->table[h] == (size_t)-1)
			e->table[h] = i;
	}
}

int repo_early_find(const struct repo_early *e, const char *path,
		    long long size, git_oid *oid)
{
	size_t h;

	if (!e || !e->table)
		return 0;
	h = hash_path(path) & (e->tsize - 1);
	while (e->table[h] != (size_t)-1) {
		const struct early_blob *b =
			&e->chunks[e->table[h] / CHUNK][e->table[h] % CHUNK];
		if (!strcmp(b->path, path)) {
			if (!b->ok || b->size != size)
				return 0;
			git_oid_cpy(oid, &b->oid);
			return 1;
		}
		h = (h + 1) & (e->tsize - 1);
	}
	return 0;
}

void repo_early_free(struct repo_early *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(blob_at(e, i)->path);
	for (size_t i = 0; i < e->nchunks; i++)
		free(e->chunks[i]);
	free(e->chunks);
	free(e->table);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	free(e);
}

/* "linux-source-6.1/lib/foo.c" -> "lib/foo.c"; NULL for directories. */
static const char *member_path(const char *line, size_t len, size_t *plen)
{
	const char *slash = memchr(line, '/', len);

	if (!slash || slash + 1 >= line + len || line[len - 1] == '/')
		return NULL;
	*plen = len - (size_t)(slash + 1 - line);
	return slash + 1;
}

/*
 * What tar and xz said among the member names (their lines start with
 * "tar: " or "xz: "), appended to sb as "; line; line".
 */
static void tar_complaints(struct strbuf *sb, const struct strbuf *out)
{
	const char *p = out->buf, *end = out->buf + out->len, *last = NULL;
	size_t lastlen = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if ((len > 5 && !strncmp(p, "tar: ", 5)) ||
		    (len > 4 && !strncmp(p, "xz: ", 4))) {
			/* the same complaint twice is said once */
			if (!last || lastlen != len || memcmp(last, p, len)) {
				strbuf_addstr(sb, "; ");
				strbuf_add(sb, p, len);
			}
			last = p;
			lastlen = len;
		}
		p = nl ? nl + 1 : end;
	}
}

int repo_extract(struct repo_early **out, const char *tarball, const char *dir,
		 const char *objects_dir, int nworkers,
		 repo_progress_fn *progress, void *ctx)
{
	struct repo_early *e = xcalloc(1, sizeof(*e));
	const char *argv[] = {"tar", "-xvf", tarball,
			      "-C",  dir,    "--strip-components=1",
			      NULL};
	struct spawn sp = SPAWN_INIT;
	pthread_t th[MAX_WORKERS];
	int started = 0, ret, reaped = 0;
	size_t off = 0, seen = 0;
	/* the last name seen, as an offset: sp.out moves as it grows */
	size_t prev_off = 0, prev_len = 0;
	int have_prev = 0;
	double last = 0;

	*out = NULL;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	e->root = dir;
	e->objects_dir = objects_dir;
	if (nworkers > MAX_WORKERS)
		nworkers = MAX_WORKERS;
	for (int i = 0; i < nworkers; i++) {
		if (pthread_create(&th[i], NULL, early_worker, e) != 0)
			break;
		started++;
	}

	sp.argv = argv;
	sp.capture = 1;
	sp.capture_max = (size_t)1 << 30; /* the names, all of them */
	sp.timeout_ms = TAR_TIMEOUT_MS;
	if ((ret = spawn_start(&sp)) < 0)
		goto out;
	while (!reaped) {
		if (sp.out_fd >= 0) {
			struct pollfd p = {.fd = sp.out_fd, .events = POLLIN};
			poll(&p, 1, 100);
		}
		ret = spawn_poll(&sp, 0);
		if (ret < 0)
			goto out;
		reaped = ret == 1;
		/* every complete line names a member; the one before is done */
		for (;;) {
			const char *nl = memchr(sp.out.buf + off, '\n',
						sp.out.len - off);
			const char *line = sp.out.buf + off, *path;
			size_t len, plen;

			if (!nl)
				break;
			len = (size_t)(nl - line);
			off += len + 1;
			if (have_prev)
				early_queue(e, sp.out.buf + prev_off, prev_len);
			have_prev = 0;
			path = member_path(line, len, &plen);
			if (path) {
				prev_off = (size_t)(path - sp.out.buf);
				prev_len = plen;
				have_prev = 1;
				seen++;
			}
		}
		if (progress && now_monotonic() - last > 0.2) {
			progress(ctx, "extracting", seen, 0);
			last = now_monotonic();
		}
	}
	if (sp.status != 0) {
		struct strbuf why = STRBUF_INIT;
		tar_complaints(&why, &sp.out);
		ret = err_set(ERR_IO, "tar -xf %s: %s%s", tarball,
			      sp.timed_out ? "timed out" : "failed", why.buf);
		strbuf_release(&why);
		goto out;
	}
	if (have_prev)
		early_queue(e, sp.out.buf + prev_off, prev_len);
	ret = 0;
out:
	pthread_mutex_lock(&e->mu);
	e->closed = 1;
	if (ret < 0)
		e->next = e->n; /* stop: nothing more to hash */
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (sp.pid > 0 && !reaped) {
		spawn_kill(&sp, 1000);
		spawn_poll(&sp, 1);
	}
	spawn_release(&sp);
	if (ret < 0) {
		repo_early_free(e);
		return ret;
	}
	if (progress)
		progress(ctx, "extracting", seen, seen);
	early_index(e);
	*out = e;
	return 0;
}
