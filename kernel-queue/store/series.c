/* series.c: a quilt stable-queue directory: series file and its patches. */
#include "series.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A series file bigger than this is not a stable queue. */
#define SERIES_MAX_BYTES (16u << 20)

void series_free(struct series_entry *e, size_t n)
{
	if (!e)
		return;
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].path);
	}
	free(e);
}

int series_is_own(const char *buf, size_t len)
{
	static const char date[] = " Mon Sep 17 00:00:00 2001\n";
	static const char from[] =
		"From: " SERIES_OWN_NAME " <" SERIES_OWN_EMAIL ">\n";
	size_t dl = sizeof(date) - 1, fl = sizeof(from) - 1;

	if (len < 5 + 40 + dl + fl || memcmp(buf, "From ", 5))
		return 0;
	for (size_t i = 5; i < 45; i++)
		if (!isxdigit((unsigned char)buf[i]))
			return 0;
	return !memcmp(buf + 45, date, dl) && !memcmp(buf + 45 + dl, from, fl);
}

/* "dir/series" for messages, or "series" without a directory. */
static const char *where(struct strbuf *sb, const char *dir)
{
	strbuf_reset(sb);
	if (dir && *dir)
		strbuf_addf(sb, "%s/", dir);
	strbuf_addstr(sb, "series");
	return sb->buf;
}

static int leaves_dir(const char *name, size_t n)
{
	if (n && name[0] == '/')
		return 1;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && name[j] != '/')
			j++;
		if (j - i == 2 && name[i] == '.' && name[i + 1] == '.')
			return 1;
		i = j + 1;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct series_entry *x = *(const struct series_entry *const *)a;
	const struct series_entry *y = *(const struct series_entry *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* A name listed twice would be imported twice: sort and compare neighbours. */
static int check_duplicates(struct series_entry *e, size_t n, const char *w)
{
	struct series_entry **v;
	int ret = 0;

	if (n < 2)
		return 0;
	v = xmalloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = &e[i];
	qsort(v, n, sizeof(*v), cmp_entry);
	for (size_t i = 1; i < n; i++) {
		if (!strcmp(v[i]->name, v[i - 1]->name)) {
			ret = err_set(ERR_INVALID,
				      "%s:%d: %s: listed twice (first at "
				      "line %d)",
				      w, v[i]->line, v[i]->name,
				      v[i - 1]->line);
			break;
		}
	}
	free(v);
	return ret;
}

int series_parse(struct series_entry **out, size_t *n, const char *buf,
		 size_t len, const char *dir)
{
	struct series_entry *v = NULL;
	struct strbuf w = STRBUF_INIT;
	size_t nv = 0;
	const char *s = buf, *end = buf + len;
	int line = 0, ret = 0;

	*out = NULL;
	*n = 0;
	where(&w, dir);
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		const char *name, *q, *le;

		if (!e)
			e = end;
		le = e;
		line++;
		if (memchr(s, '\0', (size_t)(e - s))) {
			ret = err_set(ERR_INVALID, "%s:%d: NUL byte", w.buf,
				      line);
			goto fail;
		}
		/* a comment ("# name" is a patch left out) ends the line */
		for (q = s; q < le; q++)
			if (*q == '#' &&
			    (q == s || isspace((unsigned char)q[-1])))
				le = q;
		while (s < le && isspace((unsigned char)*s))
			s++;
		while (le > s && isspace((unsigned char)le[-1]))
			le--;
		if (s == le) {
			s = e < end ? e + 1 : end;
			continue;
		}
		name = s;
		while (s < le && !isspace((unsigned char)*s))
			s++;
		size_t nlen = (size_t)(s - name);
		if (leaves_dir(name, nlen)) {
			ret = err_set(ERR_INVALID,
				      "%s:%d: %.*s: path leaves the queue "
				      "directory",
				      w.buf, line,
				      (int)(nlen > 200 ? 200 : nlen), name);
			goto fail;
		}
		/* quilt options: only -p1 (the default) is supported */
		while (s < le) {
			const char *o;
			while (s < le && isspace((unsigned char)*s))
				s++;
			o = s;
			while (s < le && !isspace((unsigned char)*s))
				s++;
			if (s - o >= 2 && o[0] == '-' && o[1] == 'p' &&
			    !(s - o == 3 && o[2] == '1')) {
				ret = err_set(ERR_INVALID,
					      "%s:%d: %.*s: option %.*s is not "
					      "supported (only -p1)",
					      w.buf, line, (int)nlen, name,
					      (int)(s - o > 20 ? 20 : s - o),
					      o);
				goto fail;
			}
		}
		if (!(nv & (nv - 1)))
			v = xrealloc(v, (nv ? nv * 2 : 16) * sizeof(*v));
		v[nv].name = xstrndup(name, nlen);
		v[nv].path = dir && *dir ? xstrfmt("%s/%s", dir, v[nv].name)
					 : xstrdup(v[nv].name);
		v[nv].line = line;
		nv++;
		s = e < end ? e + 1 : end;
	}
	if ((ret = check_duplicates(v, nv, w.buf)) < 0)
		goto fail;
	strbuf_release(&w);
	*out = v;
	*n = nv;
	return 0;
fail:
	strbuf_release(&w);
	series_free(v, nv);
	return ret;
}

int series_dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int empty = 1;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

int series_load(struct series_entry **out, size_t *n, const char *dir)
{
	struct strbuf sb = STRBUF_INIT, w = STRBUF_INIT;
	struct series_entry *v = NULL;
	size_t nv = 0, rlen;
	char *rdir = NULL, *rp = NULL;
	struct stat st;
	int ret;

	*out = NULL;
	*n = 0;
	if (stat(dir, &st) < 0)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			       "%s: cannot open: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return err_set(ERR_INVALID, "%s: not a directory", dir);
	where(&w, dir);
	if (stat(w.buf, &st) < 0) {
		if (series_dir_empty(dir))
			ret = err_set(ERR_INVALID,
				      "%s: empty directory (no series file)",
				      dir);
		else
			ret = err_set(ERR_NOTFOUND,
				      "%s: no series file in the directory",
				      dir);
		goto out;
	}
	if (strbuf_read_file(&sb, w.buf, SERIES_MAX_BYTES) < 0) {
		ret = ERR_IO;
		goto out;
	}
	if ((ret = series_parse(&v, &nv, sb.buf, sb.len, dir)) < 0)
		goto out;
	if (!nv) {
		ret = err_set(ERR_INVALID,
			      "%s: empty series (no patch named in "
			      "%s)",
			      dir, w.buf);
		goto out;
	}
	if (!(rdir = realpath(dir, NULL))) {
		ret = err_set(ERR_IO, "%s: %s", dir, strerror(errno));
		goto out;
	}
	rlen = strlen(rdir);
	for (size_t i = 0; i < nv; i++) {
		if (lstat(v[i].path, &st) < 0 || stat(v[i].path, &st) < 0) {
			ret = err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
				      "%s:%d: %s: %s", w.buf, v[i].line,
				      v[i].name,
				      errno == ENOENT ? "no such file in the "
							"queue directory"
						      : strerror(errno));
			goto out;
		}
		free(rp);
		rp = realpath(v[i].path, NULL);
		if (!rp || strncmp(rp, rdir, rlen) ||
		    (rlen > 1 && rp[rlen] != '/')) {
			ret = err_set(ERR_INVALID,
				      "%s:%d: %s: path leaves the queue "
				      "directory (symlink)",
				      w.buf, v[i].line, v[i].name);
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			ret = err_set(ERR_INVALID,
				      "%s:%d: %s: not a regular file", w.buf,
				      v[i].line, v[i].name);
			goto out;
		}
	}
	*out = v;
	*n = nv;
	v = NULL;
	nv = 0;
	ret = 0;
out:
	free(rp);
	free(rdir);
	series_free(v, nv);
	strbuf_release(&sb);
	strbuf_release(&w);
	return ret;
}

int series_leave_out(const char *dir, const char *name, const char *note)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	char *path = xstrfmt("%s/series", dir);
	size_t nlen = strlen(name);
	int ret, found = 0;

	if ((ret = strbuf_read_file(&in, path, SERIES_MAX_BYTES)) < 0)
		goto out;
	for (const char *s = in.buf, *end = in.buf + in.len; s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		const char *t = s, *le;
		if (!e)
			e = end;
		le = e;
		while (t < le && isspace((unsigned char)*t))
			t++;
		/* the entry: its name, then white space, a comment or the end */
		if (!found && (size_t)(le - t) >= nlen && !memcmp(t, name, nlen) &&
		    (t + nlen == le || isspace((unsigned char)t[nlen]))) {
			found = 1;
			strbuf_addstr(&out, "# ");
			strbuf_add(&out, s, (size_t)(le - s));
			strbuf_rtrim(&out);
			strbuf_addstr(&out, "  # ");
			/* one line: control characters become spaces */
			for (const char *q = note; *q; q++)
				strbuf_addch(&out, (unsigned char)*q < 0x20 ? ' ' : *q);
		} else {
			strbuf_add(&out, s, (size_t)(le - s));
		}
		if (e < end)
			strbuf_addch(&out, '\n');
		s = e < end ? e + 1 : end;
	}
	ret = found ? write_file_atomic(path, out.buf, out.len) : 0;
	if (!ret && found)
		ret = 1;
out:
	free(path);
	strbuf_release(&in);
	strbuf_release(&out);
	return ret;
}

int series_append(const char *dir, const char *name)
{
	struct strbuf in = STRBUF_INIT;
	struct series_entry *e = NULL;
	char *path = xstrfmt("%s/series", dir);
	size_t n = 0;
	int ret;

	if ((ret = strbuf_read_file(&in, path, SERIES_MAX_BYTES)) < 0) {
		if (errno != ENOENT)
			goto out;
		strbuf_reset(&in);
	}
	/* the name must be an entry the parser takes back */
	char *line = xstrfmt("%s\n", name);
	ret = strchr(name, '\n') || strchr(name, '#') || strchr(name, ' ')
		      ? err_set(ERR_INVALID, "series: bad patch name '%s'", name)
		      : series_parse(&e, &n, line, strlen(line), dir);
	free(line);
	series_free(e, n);
	e = NULL;
	n = 0;
	if (ret < 0 || (ret = series_parse(&e, &n, in.buf, in.len, dir)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].name, name)) {
			ret = 0;
			goto out;
		}
	if (in.len && in.buf[in.len - 1] != '\n')
		strbuf_addch(&in, '\n');
	strbuf_addf(&in, "%s\n", name);
	ret = write_file_atomic(path, in.buf, in.len);
	if (!ret)
		ret = 1;
out:
	series_free(e, n);
	free(path);
	strbuf_release(&in);
	return ret;
}

int series_copy(const char *from, const char *to)
{
	struct series_entry *e = NULL;
	struct strbuf buf = STRBUF_INIT;
	char *tmp = xstrfmt("%s.seeding", to), *p = NULL;
	size_t n = 0;
	int ret;

	struct stat st;

	if (stat(to, &st) == 0) {
		ret = err_set(ERR_CONFLICT, "%s exists already", to);
		goto out;
	}
	if ((ret = series_load(&e, &n, from)) < 0)
		goto out;
	if ((ret = mkdir_p(tmp)) < 0)
		goto out;
	for (size_t i = 0; i <= n; i++) {
		const char *name = i < n ? e[i].name : "series";
		char *slash;

		strbuf_reset(&buf);
		free(p);
		p = xstrfmt("%s/%s", from, name);
		if ((ret = strbuf_read_file(&buf, p, SERIES_MAX_BYTES)) < 0)
			goto out;
		free(p);
		p = xstrfmt("%s/%s", tmp, name);
		if ((slash = strrchr(p, '/')) && slash > p + strlen(tmp)) {
			*slash = '\0';
			ret = mkdir_p(p);
			*slash = '/';
			if (ret < 0)
				goto out;
		}
		if ((ret = write_file_atomic(p, buf.buf, buf.len)) < 0)
			goto out;
	}
	/* the directory appears whole or not at all */
	if (rename(tmp, to) < 0)
		ret = err_set(ERR_IO, "%s: %s", to, strerror(errno));
out:
	series_free(e, n);
	strbuf_release(&buf);
	free(p);
	free(tmp);
	return ret;
}
