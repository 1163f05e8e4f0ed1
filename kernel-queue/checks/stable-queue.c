/* stable-queue.c: a stable-queue checkout as evidence, scanned once and cached until its series files change. */
#include "stable-queue.h"
#include "err.h"
#include "repo.h"
#include "strbuf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* A stable-queue checkout ---------------------------------------------- */

struct sq_entry {
	char sha[REPO_HEX_SIZE];
	char *where;
	size_t seq; /* scan order: oldest release first */
};

struct sq_stamp {
	char *name;
	struct timespec mtime;
};

struct sq_cache {
	char *dir, *series;
	struct sq_stamp *stamps;
	size_t nstamps;
	struct sq_entry *e;
	size_t n, alloc;
	const char *cur; /* while scanning: the file being read */
};

static struct sq_cache sq;
static pthread_mutex_t sq_lock = PTHREAD_MUTEX_INITIALIZER;

static void sq_clear(struct sq_cache *c)
{
	for (size_t i = 0; i < c->nstamps; i++)
		free(c->stamps[i].name);
	for (size_t i = 0; i < c->n; i++)
		free(c->e[i].where);
	free(c->stamps);
	free(c->e);
	free(c->dir);
	free(c->series);
	memset(c, 0, sizeof(*c));
}

static void sq_add(void *vctx, const char *sha, size_t n)
{
	struct sq_cache *c = vctx;
	struct sq_entry *e;

	if (c->n == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 256;
		c->e = xrealloc(c->e, c->alloc * sizeof(*c->e));
	}
	e = &c->e[c->n++];
	for (size_t i = 0; i < n; i++)
		e->sha[i] = (char)tolower((unsigned char)sha[i]);
	e->sha[n] = '\0';
	e->where = xstrdup(c->cur);
	e->seq = c->n;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ver_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* By SHA prefix, then the oldest release first. */
static int sq_entry_cmp(const void *a, const void *b)
{
	const struct sq_entry *x = a, *y = b;
	int c = strncmp(x->sha, y->sha, REPO_MIN_ABBREV);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The release directories of series ("6.1.1", "6.1.2", ...), sorted. */
static int sq_release_dirs(const char *rel, const char *series, char ***out,
			   size_t *n)
{
	DIR *d = opendir(rel);
	struct dirent *de;
	size_t sl = strlen(series), a = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			       "%s: %s", rel, strerror(errno));
	while ((de = readdir(d))) {
		const char *v = de->d_name + sl + 1;
		if (strncmp(de->d_name, series, sl) || de->d_name[sl] != '.' ||
		    !*v || strspn(v, "0123456789.") != strlen(v))
			continue;
		if (*n == a) {
			a = a ? a * 2 : 64;
			*out = xrealloc(*out, a * sizeof(**out));
		}
		(*out)[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), ver_cmp);
	return 0;
}

static int sq_fresh(const struct sq_cache *c, const char *rel, char **dirs,
		    size_t n)
{
	if (c->nstamps != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		char *p = xstrfmt("%s/%s", rel, dirs[i]);
		int ok = stat(p, &st) == 0 &&
			 !strcmp(c->stamps[i].name, dirs[i]) &&
			 st.st_mtim.tv_sec == c->stamps[i].mtime.tv_sec &&
			 st.st_mtim.tv_nsec == c->stamps[i].mtime.tv_nsec;
		free(p);
		if (!ok)
			return 0;
	}
	return 1;
}

static int sq_scan(struct sq_cache *c, const char *sq_dir, const char *series,
		   const char *rel, char **dirs, size_t n)
{
	struct strbuf buf = STRBUF_INIT;
	int ret = 0;

	sq_clear(c);
	c->dir = xstrdup(sq_dir);
	c->series = xstrdup(series);
	c->stamps = xcalloc(n ? n : 1, sizeof(*c->stamps));
	for (size_t i = 0; i < n; i++) {
		char *p = xstrfmt("%s/%s", rel, dirs[i]);
		struct stat st;
		DIR *d;
		struct dirent *de;
		char **files = NULL;
		size_t nf = 0, af = 0;

		c->stamps[c->nstamps].name = xstrdup(dirs[i]);
		if (stat(p, &st) == 0)
			c->stamps[c->nstamps].mtime = st.st_mtim;
		c->nstamps++;
		d = opendir(p);
		if (!d) {
			free(p);
			continue; /* a plain file named like a release */
		}
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (l < 7 || strcmp(de->d_name + l - 6, ".patch"))
				continue;
			if (nf == af) {
				af = af ? af * 2 : 64;
				files = xrealloc(files, af * sizeof(*files));
			}
			files[nf++] = xstrdup(de->d_name);
		}
		closedir(d);
		if (nf)
			qsort(files, nf, sizeof(*files), str_cmp);
		for (size_t k = 0; k < nf; k++) {
			char *fp = xstrfmt("%s/%s", p, files[k]);
			char *where =
				xstrfmt("releases/%s/%s", dirs[i], files[k]);
			const char *stop;

			strbuf_reset(&buf);
			if (strbuf_read_file(&buf, fp, 64u << 20) == 0) {
				/* the message ends where the diff starts */
				stop = strstr(buf.buf, "\ndiff --git ");
				c->cur = where;
				repo_upstream_lines(
					buf.buf,
					stop ? (size_t)(stop - buf.buf)
					     : buf.len,
					sq_add, c);
				c->cur = NULL;
			}
			free(fp);
			free(where);
			free(files[k]);
		}
		free(files);
		free(p);
	}
	if (c->n)
		qsort(c->e, c->n, sizeof(*c->e), sq_entry_cmp);
	strbuf_release(&buf);
	return ret;
}

int stable_queue_find(const char *sq_dir, const char *series,
		      const char *upstream_sha, char **where)
{
	char want[REPO_HEX_SIZE];
	char *rel = NULL, **dirs = NULL;
	size_t ndirs = 0, n, lo = 0, hi;
	int ret;

	if (where)
		*where = NULL;
	if ((ret = repo_sha_arg(want, upstream_sha)) < 0)
		return ret;
	if (!sq_dir || !*sq_dir || !series || !*series || strchr(series, '/'))
		return err_set(ERR_INVALID, "stable queue: directory and "
					    "series (\"6.1\") are required");
	n = strlen(want);
	rel = xstrfmt("%s/releases", sq_dir);
	pthread_mutex_lock(&sq_lock);
	if ((ret = sq_release_dirs(rel, series, &dirs, &ndirs)) < 0)
		goto out;
	if (!sq.dir || strcmp(sq.dir, sq_dir) || strcmp(sq.series, series) ||
	    !sq_fresh(&sq, rel, dirs, ndirs))
		if ((ret = sq_scan(&sq, sq_dir, series, rel, dirs, ndirs)) < 0)
			goto out;
	hi = sq.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(sq.e[mid].sha, want, REPO_MIN_ABBREV) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	ret = 0;
	for (size_t i = lo; i < sq.n; i++) {
		if (strncmp(sq.e[i].sha, want, REPO_MIN_ABBREV))
			break;
		if (repo_sha_prefix_match(sq.e[i].sha, strlen(sq.e[i].sha),
					  want, n)) {
			if (where)
				*where = xstrdup(sq.e[i].where);
			ret = 1;
			break;
		}
	}
out:
	pthread_mutex_unlock(&sq_lock);
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	free(rel);
	return ret;
}
