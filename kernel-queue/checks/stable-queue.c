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

/* One patch of a release: where, its release, its subject, the files. */
struct sq_patch {
	char *where;
	long sublevel;
	char *subject;
	char *files; /* "path\0path\0...\0" */
	size_t files_len;
};

struct sq_cache {
	char *dir, *series;
	struct sq_stamp *stamps;
	size_t nstamps;
	struct sq_entry *e;
	size_t n, alloc;
	struct sq_patch *p; /* in release order: oldest release first, each
			     * in its series file's order */
	size_t np, palloc;
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
	for (size_t i = 0; i < c->np; i++) {
		free(c->p[i].where);
		free(c->p[i].subject);
		free(c->p[i].files);
	}
	free(c->p);
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

/*
 * The order of a release's patches: its series file's, the patches it does
 * not name after them by name. files (nf of them, sorted) is reordered.
 */
static void sq_series_order(const char *dir, char **files, size_t nf)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/series", dir);
	size_t at = 0;

	if (strbuf_read_file(&sb, path, 1 << 20) == 0)
		for (char *l = sb.buf; l && *l && at < nf;) {
			char *nl = strchr(l, '\n');
			if (nl)
				*nl = '\0';
			l += strspn(l, " \t");
			l[strcspn(l, " \t#")] = '\0';
			for (size_t k = at; *l && k < nf; k++)
				if (!strcmp(files[k], l)) {
					char *t = files[k];
					memmove(files + at + 1, files + at,
						(k - at) * sizeof(*files));
					files[at++] = t;
					break;
				}
			l = nl ? nl + 1 : NULL;
		}
	strbuf_release(&sb);
	free(path);
}

/*
 * A release patch's subject (its Subject: without "[PATCH ...]") and the
 * files its diff names ("--- a/x", "+++ b/x", both sides), kept.
 */
static void sq_patch_add(struct sq_cache *c, const char *where, long sublevel,
			 const char *text, size_t len)
{
	struct sq_patch *p;
	struct strbuf files = STRBUF_INIT;
	const char *end = text + len;

	if (c->np == c->palloc) {
		c->palloc = c->palloc ? c->palloc * 2 : 256;
		c->p = xrealloc(c->p, c->palloc * sizeof(*c->p));
	}
	p = &c->p[c->np++];
	memset(p, 0, sizeof(*p));
	p->where = xstrdup(where);
	p->sublevel = sublevel;
	for (const char *l = text; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		if (!p->subject && n > 9 && !strncmp(l, "Subject: ", 9)) {
			const char *sj = l + 9;
			size_t k = n - 9;
			if (k && *sj == '[') {
				const char *close = memchr(sj, ']', k);
				if (close) {
					k -= (size_t)(close + 1 - sj);
					sj = close + 1;
				}
			}
			while (k && *sj == ' ')
				sj++, k--;
			p->subject = xstrndup(sj, k);
		} else if (n > 6 && (!strncmp(l, "--- a/", 6) ||
				     !strncmp(l, "+++ b/", 6))) {
			size_t k = strcspn(l + 6, "\t\n");
			k = k < n - 6 ? k : n - 6;
			strbuf_add(&files, l + 6, k);
			strbuf_addch(&files, '\0');
		}
		l = nl ? nl + 1 : end;
	}
	p->files_len = files.len;
	p->files = strbuf_detach(&files, NULL);
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
		sq_series_order(p, files, nf);
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
				sq_patch_add(c, where,
					     strtol(dirs[i] + strlen(series) + 1,
						    NULL, 10),
					     buf.buf, buf.len);
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

/* The cache made current for (sq_dir, series); called with sq_lock held. */
static int sq_current(const char *sq_dir, const char *series)
{
	char *rel = NULL, **dirs = NULL;
	size_t ndirs = 0;
	int ret;

	if (!sq_dir || !*sq_dir || !series || !*series || strchr(series, '/'))
		return err_set(ERR_INVALID, "stable queue: directory and "
					    "series (\"6.1\") are required");
	rel = xstrfmt("%s/releases", sq_dir);
	if ((ret = sq_release_dirs(rel, series, &dirs, &ndirs)) < 0)
		goto out;
	if (!sq.dir || strcmp(sq.dir, sq_dir) || strcmp(sq.series, series) ||
	    !sq_fresh(&sq, rel, dirs, ndirs))
		ret = sq_scan(&sq, sq_dir, series, rel, dirs, ndirs);
out:
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	free(rel);
	return ret;
}

int stable_queue_find(const char *sq_dir, const char *series,
		      const char *upstream_sha, char **where)
{
	char want[REPO_HEX_SIZE];
	size_t n, lo = 0, hi;
	int ret;

	if (where)
		*where = NULL;
	if ((ret = repo_sha_arg(want, upstream_sha)) < 0)
		return ret;
	n = strlen(want);
	pthread_mutex_lock(&sq_lock);
	if ((ret = sq_current(sq_dir, series)) < 0)
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
	return ret;
}

static int sq_touches(const struct sq_patch *p, const char *const *paths,
		      size_t n)
{
	for (const char *f = p->files; f && f < p->files + p->files_len;
	     f += strlen(f) + 1)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(f, paths[i]))
				return 1;
	return 0;
}

int stable_queue_touching(const char *sq_dir, const char *series, long first,
			  long last, const char *after,
			  const char *subject, const char *const *paths,
			  size_t npaths, size_t max,
			  struct stable_queue_patch **out, size_t *nout)
{
	size_t from = 0, to = 0;
	int ret;

	*out = NULL;
	*nout = 0;
	pthread_mutex_lock(&sq_lock);
	if ((ret = sq_current(sq_dir, series)) < 0)
		goto out;
	/* the patches after it in its release, or after that release */
	for (from = 0; from < sq.np && sq.p[from].sublevel <= first; from++)
		;
	for (size_t i = 0; i < sq.np && sq.p[i].sublevel <= first; i++)
		if (sq.p[i].sublevel == first &&
		    ((after && !strcmp(sq.p[i].where, after)) ||
		     (!after && subject && sq.p[i].subject &&
		      !strcasecmp(sq.p[i].subject, subject)))) {
			from = i + 1;
			break;
		}
	for (to = from; to < sq.np && sq.p[to].sublevel <= last; to++)
		;
	/* newest first: the order they come out in */
	for (size_t i = to; i-- > from && *nout < max;) {
		struct stable_queue_patch *v;
		if (!sq_touches(&sq.p[i], paths, npaths))
			continue;
		*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
		v = &(*out)[(*nout)++];
		v->where = xstrdup(sq.p[i].where);
		v->sublevel = sq.p[i].sublevel;
	}
	ret = (int)*nout;
out:
	pthread_mutex_unlock(&sq_lock);
	return ret;
}

void stable_queue_patches_free(struct stable_queue_patch *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].where);
	free(v);
}
