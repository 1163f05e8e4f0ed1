/* diff.c: a patch's diff: files, hunk checks, flags, patch-id. */
#include "err.h"
#include "patch-int.h"
#include "patch.h"
#include "strbuf.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bytes that patch-id ignores (white space of any kind). */
static const unsigned char is_ws[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1,
};

struct idhash {
	EVP_MD_CTX *ctx;
	size_t n;
	unsigned char buf[4096];
};

static void idh_flush(struct idhash *h)
{
	if (h->n)
		EVP_DigestUpdate(h->ctx, h->buf, h->n);
	h->n = 0;
}

static void idh_add(struct idhash *h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_ws[c])
			continue;
		if (h->n == sizeof(h->buf))
			idh_flush(h);
		h->buf[h->n++] = c;
	}
}

struct fstate {
	int active;
	int git; /* started by "diff --git" */
	int minus_plus; /* saw its ---/+++ lines */
	int hunks;
	int binary;
	int kconfig;
	char change;
	size_t line;
	struct strbuf old_path, new_path;
};

struct dparse {
	struct patch *p;
	const char *name;
	struct fstate f;
	struct idhash h;
	/* the line being read, its number, where the diff ends so far */
	const char *s, *end, *diff_end;
	size_t lineno;
	/* the open hunk: its header line (NULL: none), the lines it still counts */
	const char *hunk;
	size_t hunk_line, hunk_len;
	long old, new;
	int after_hunk; /* the line before ended a hunk */
};

int diff_is_start(const char *s, size_t n, const char *nx, size_t nn)
{
	if (has_prefix(s, n, "diff --git "))
		return 1;
	return has_prefix(s, n, "--- ") && nx && has_prefix(nx, nn, "+++ ");
}

/* Unquotes a C-style quoted git path ("a/f\303\266o") into out. */
static void unquote_path(struct strbuf *out, const char *s, size_t n)
{
	for (size_t i = 1; i < n && s[i] != '"'; i++) {
		if (s[i] != '\\' || i + 1 >= n) {
			strbuf_addch(out, s[i]);
			continue;
		}
		char c = s[++i];
		if (c >= '0' && c <= '3' && i + 2 < n) {
			int v = (c - '0') * 64 + (s[i + 1] - '0') * 8 +
				(s[i + 2] - '0');
			strbuf_addch(out, v & 0xff);
			i += 2;
			continue;
		}
		switch (c) {
		case 'n':
			c = '\n';
			break;
		case 't':
			c = '\t';
			break;
		case 'a':
			c = '\a';
			break;
		case 'b':
			c = '\b';
			break;
		case 'f':
			c = '\f';
			break;
		case 'r':
			c = '\r';
			break;
		case 'v':
			c = '\v';
			break;
		default:
			break;
		}
		strbuf_addch(out, c);
	}
}

/*
 * Sets out to the path in a ---/+++ (or rename) value: quoted paths
 * unquoted, a timestamp after a tab dropped, and the first component
 * ("a/", "linux.orig/") stripped when strip is set.
 */
static void set_path(struct strbuf *out, const char *s, size_t n, int strip)
{
	strbuf_reset(out);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
		n--;
	if (n && s[0] == '"') {
		unquote_path(out, s, n);
	} else {
		const char *tab = memchr(s, '\t', n);
		if (tab)
			n = (size_t)(tab - s);
		strbuf_add(out, s, n);
	}
	if (strip && strcmp(out->buf, "/dev/null")) {
		char *slash = strchr(out->buf, '/');
		if (slash && slash[1]) {
			size_t k = (size_t)(slash + 1 - out->buf);
			memmove(out->buf, out->buf + k, out->len - k);
			strbuf_setlen(out, out->len - k);
		}
	}
}

/* Paths from "diff --git a/X b/Y" (both halves equal, or split at " b/"). */
static void git_line_paths(struct fstate *f, const char *s, size_t n)
{
	const char *b = NULL;

	if (n && s[0] == '"') {
		const char *q = s + 1;
		while (q < s + n && *q != '"')
			q += *q == '\\' ? 2 : 1;
		if (q < s + n) {
			set_path(&f->old_path, s, (size_t)(q + 1 - s), 1);
			const char *r = q + 1;
			while (r < s + n && *r == ' ')
				r++;
			set_path(&f->new_path, r, (size_t)(s + n - r), 1);
		}
		return;
	}
	if (n % 2 == 1 && s[n / 2] == ' ' && n > 5 &&
	    !memcmp(s + 2, s + n / 2 + 3, n / 2 - 2)) {
		b = s + n / 2 + 1;
	} else {
		for (const char *q = s; q + 3 <= s + n; q++)
			if (!memcmp(q, " b/", 3))
				b = q + 1;
	}
	if (!b)
		return;
	set_path(&f->old_path, s, (size_t)(b - 1 - s), 1);
	set_path(&f->new_path, b, (size_t)(s + n - b), 1);
}

static int is_kconfig_path(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "Kconfig", 7);
}

static int is_uapi_path(const char *path)
{
	if (!strncmp(path, "include/uapi/", 13))
		return 1;
	if (!strncmp(path, "arch/", 5)) {
		const char *slash = strchr(path + 5, '/');
		return slash && !strncmp(slash, "/include/uapi/", 14);
	}
	return 0;
}

/* "+config FOO" / "+menuconfig FOO" (any indentation). */
static int adds_config(const char *s, size_t n)
{
	size_t i = 1;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (has_prefix(s + i, n - i, "menuconfig"))
		i += 10;
	else if (has_prefix(s + i, n - i, "config"))
		i += 6;
	else
		return 0;
	if (i >= n || (s[i] != ' ' && s[i] != '\t'))
		return 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i < n &&
	       (s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		(s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'));
}

static void file_start(struct dparse *d, int git, size_t line)
{
	struct fstate *f = &d->f;

	f->active = 1;
	f->git = git;
	f->minus_plus = f->hunks = f->binary = f->kconfig = 0;
	f->change = 'M';
	f->line = line;
	strbuf_reset(&f->old_path);
	strbuf_reset(&f->new_path);
}

/* An absolute path, or one with a ".." component: it leaves the tree. */
static int leaves_tree(const struct strbuf *path)
{
	const char *s = path->buf;

	if (!path->len || !strcmp(s, "/dev/null"))
		return 0;
	if (*s == '/')
		return 1;
	for (;;) {
		size_t n = strcspn(s, "/");
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return 1;
		if (!s[n])
			return 0;
		s += n + 1;
	}
}

/* The diff's word for where a file comes from: "copy from" names it. */
static const char *source_word(const struct fstate *f)
{
	if (f->change == 'R')
		return "rename from";
	return f->change == 'A' ? "copy from" : "the old file";
}

static int file_finish(struct dparse *d)
{
	struct fstate *f = &d->f;
	struct patch *p = d->p;
	struct patch_file *pf;
	const char *path;

	if (!f->active)
		return 0;
	f->active = 0;
	if (f->minus_plus && !f->hunks && !f->binary)
		return err_set(ERR_INVALID,
			       "%s:%zu: %s: file header without a hunk "
			       "(truncated diff?)",
			       d->name, f->line,
			       f->new_path.len ? f->new_path.buf : "?");
	/* The source first: a copy of ../../etc/passwd is about the source. */
	if (leaves_tree(&f->old_path))
		return err_set(ERR_INVALID,
			       "%s:%zu: %s %.200s: the source leaves the tree"
			       " (an absolute path or a '..' component)",
			       d->name, f->line, source_word(f),
			       f->old_path.buf);
	if (leaves_tree(&f->new_path))
		return err_set(ERR_INVALID,
			       "%s:%zu: %.200s: the target leaves the tree"
			       " (an absolute path or a '..' component)",
			       d->name, f->line, f->new_path.buf);
	path = f->change == 'D' || !f->new_path.len ||
			       !strcmp(f->new_path.buf, "/dev/null")
		       ? f->old_path.buf
		       : f->new_path.buf;
	if (!*path)
		return err_set(ERR_INVALID, "%s:%zu: diff names no file",
			       d->name, f->line);
	if (!(p->nfiles & (p->nfiles - 1)))
		p->files = xrealloc(p->files, (p->nfiles ? p->nfiles * 2 : 4) *
						      sizeof(*p->files));
	pf = &p->files[p->nfiles++];
	pf->path = xstrdup(path);
	pf->change = f->change;
	pf->binary = f->binary;
	pf->old_path = NULL;
	if ((f->change == 'R' || (f->change == 'A' && f->old_path.len &&
				  strcmp(f->old_path.buf, "/dev/null") &&
				  strcmp(f->old_path.buf, path))))
		pf->old_path = xstrdup(f->old_path.buf);
	if (f->change == 'A')
		p->adds_file = 1;
	if (is_uapi_path(path) || (pf->old_path && is_uapi_path(pf->old_path)))
		p->touches_uapi = 1;
	idh_add(&d->h, "F", 1);
	idh_add(&d->h, &pf->change, 1);
	idh_add(&d->h, path, strlen(path));
	return 0;
}

static int parse_count(const char **s, const char *end, long *v)
{
	long n = 0;
	const char *q = *s;

	if (q >= end || *q < '0' || *q > '9')
		return -1;
	while (q < end && *q >= '0' && *q <= '9') {
		n = n * 10 + (*q - '0');
		if (n > 100000000)
			return -1;
		q++;
	}
	*s = q;
	*v = n;
	return 0;
}

/* "@@ -a[,b] +c[,d] @@": fills the counts b and d (and c in *start when
 * not NULL); returns the header's length. */
static size_t hunk_header_at(const char *s, size_t n, long *old, long *new,
			     long *start);

static size_t hunk_header(const char *s, size_t n, long *old, long *new)
{
	return hunk_header_at(s, n, old, new, NULL);
}

static size_t hunk_header_at(const char *s, size_t n, long *old, long *new,
			     long *start)
{
	const char *q = s + 4, *end = s + n;
	long a, c;

	*old = *new = 1;
	if (!has_prefix(s, n, "@@ -") || parse_count(&q, end, &a) < 0)
		return 0;
	if (q < end && *q == ',' && (q++, parse_count(&q, end, old) < 0))
		return 0;
	if (end - q < 2 || q[0] != ' ' || q[1] != '+')
		return 0;
	q += 2;
	if (parse_count(&q, end, &c) < 0)
		return 0;
	if (q < end && *q == ',' && (q++, parse_count(&q, end, new) < 0))
		return 0;
	if (end - q < 3 || memcmp(q, " @@", 3))
		return 0;
	if (start)
		*start = c;
	return (size_t)(q + 3 - s);
}

long patch_added_lines(const char *diff, size_t len,
		       void (*fn)(void *ctx, const char *path, long line),
		       void *ctx)
{
	const char *s = diff, *end = diff + len;
	struct strbuf path = STRBUF_INIT;
	long old = 0, new = 0, at = 0, count = 0;

	while (s < end) {
		const char *e = line_end(s, end);
		const char *next = e < end ? e + 1 : end;
		size_t nc = line_len_nocr(s, (size_t)(e - s));
		char c = nc ? s[0] : ' ';

		if (old > 0 || new > 0) { /* inside a hunk */
			if (c == ' ') {
				old--, new--, at++;
			} else if (c == '-') {
				old--;
			} else if (c == '+') {
				if (path.len && strcmp(path.buf, "/dev/null"))
					fn(ctx, path.buf, at), count++;
				new--, at++;
			} else if (c != '\\') {
				old = new = 0; /* cut short: the parser said why */
			}
		} else if (has_prefix(s, nc, "+++ ")) {
			set_path(&path, s + 4, nc - 4, 1);
		} else if (has_prefix(s, nc, "diff --git ")) {
			strbuf_reset(&path);
		} else if (has_prefix(s, nc, "@@ ") &&
			   !hunk_header_at(s, nc, &old, &new, &at)) {
			strbuf_release(&path);
			return err_set(ERR_INVALID, "malformed hunk header"
				       " '%.*s'", (int)(nc > 60 ? 60 : nc), s);
		}
		s = next;
	}
	strbuf_release(&path);
	return count;
}

static int is_b85_line(const char *s, size_t n)
{
	if (n < 6 ||
	    !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return 0;
	return (n - 1) % 5 == 0;
}

/* Git's extended header lines, valid between "diff --git" and the hunks. */
static int ext_header(struct fstate *f, const char *s, size_t n)
{
	if (has_prefix(s, n, "new file mode ")) {
		f->change = 'A';
	} else if (has_prefix(s, n, "deleted file mode ")) {
		f->change = 'D';
	} else if (has_prefix(s, n, "rename from ")) {
		f->change = 'R';
		set_path(&f->old_path, s + 12, n - 12, 0);
	} else if (has_prefix(s, n, "rename to ")) {
		f->change = 'R';
		set_path(&f->new_path, s + 10, n - 10, 0);
	} else if (has_prefix(s, n, "copy from ")) {
		f->change = 'A';
		set_path(&f->old_path, s + 10, n - 10, 0);
	} else if (has_prefix(s, n, "copy to ")) {
		f->change = 'A';
		set_path(&f->new_path, s + 8, n - 8, 0);
	} else if (has_prefix(s, n, "Binary files ")) {
		f->binary = 1;
	} else if (!has_prefix(s, n, "old mode ") &&
		   !has_prefix(s, n, "new mode ") &&
		   !has_prefix(s, n, "index ") &&
		   !has_prefix(s, n, "similarity index ") &&
		   !has_prefix(s, n, "dissimilarity index ")) {
		return 0;
	}
	return 1;
}

/*
 * The phases of diff_parse(), each on the line at d->s (n bytes, nc
 * without a CR; next: the line after it). Each returns 1 when the line was
 * its (d->s moved on), 0 when not, negative on an error.
 */

/* The open hunk ended before its header's count: where says where. */
static int truncated(const struct dparse *d, const char *where)
{
	return err_set(ERR_INVALID,
		       "%s:%zu: %s: truncated hunk '%.*s' (%ld old and %ld new"
		       " lines missing%s)",
		       d->name, d->hunk_line,
		       d->f.new_path.len ? d->f.new_path.buf : d->f.old_path.buf,
		       (int)d->hunk_len, d->hunk, d->old, d->new, where);
}

/* On to next; the hunk ends once it has every line its header counts. */
static int hunk_next(struct dparse *d, const char *next)
{
	d->diff_end = d->s = next;
	if (!d->old && !d->new) {
		d->hunk = NULL;
		d->after_hunk = 1;
	}
	return 1;
}

/* A line of the open hunk: context, removed, added or "\ No newline". */
static int hunk_body(struct dparse *d, size_t n, size_t nc, const char *next)
{
	const char *s = d->s;
	char c = nc ? s[0] : ' ';

	if (c == ' ') {
		d->old--, d->new --;
	} else if (c == '-') {
		d->old--;
	} else if (c == '+') {
		d->new --;
	} else if (c != '\\') {
		return truncated(d, "");
	}
	if (d->old < 0 || d->new < 0)
		return err_set(ERR_INVALID,
			       "%s:%zu: %s: hunk '%.*s' has more "
			       "lines than its header counts",
			       d->name, d->hunk_line, d->f.new_path.buf,
			       (int)d->hunk_len, d->hunk);
	if (c != '\\') {
		idh_add(&d->h, s, n);
		if (c == '+' && d->f.kconfig && adds_config(s, nc))
			d->p->adds_kconfig = 1;
	}
	return hunk_next(d, next);
}

/* A file's header: "diff --git a/x b/x", or a "--- a/x" "+++ b/x" pair. */
static int file_header(struct dparse *d, size_t nc, const char *next)
{
	const char *s = d->s, *end = d->end;
	int ret;

	if (has_prefix(s, nc, "diff --git ")) {
		if ((ret = file_finish(d)) < 0)
			return ret;
		file_start(d, 1, d->lineno);
		git_line_paths(&d->f, s + 11, nc - 11);
		d->f.kconfig = is_kconfig_path(d->f.new_path.buf);
		d->diff_end = d->s = next;
		d->after_hunk = 0;
		return 1;
	}
	if (!has_prefix(s, nc, "--- ") || next >= end ||
	    !has_prefix(next, (size_t)(end - next), "+++ "))
		return 0;
	const char *e2 = line_end(next, end);
	size_t n2 = line_len_nocr(next, (size_t)(e2 - next));

	if (!d->f.active || !d->f.git || d->f.minus_plus || d->f.hunks ||
	    d->f.binary) {
		if ((ret = file_finish(d)) < 0)
			return ret;
		file_start(d, 0, d->lineno);
	}
	d->f.minus_plus = 1;
	set_path(&d->f.old_path, s + 4, nc - 4, 1);
	set_path(&d->f.new_path, next + 4, n2 - 4, 1);
	if (!strcmp(d->f.old_path.buf, "/dev/null"))
		d->f.change = 'A';
	else if (!strcmp(d->f.new_path.buf, "/dev/null"))
		d->f.change = 'D';
	d->f.kconfig = is_kconfig_path(d->f.new_path.buf);
	d->lineno++;
	d->diff_end = d->s = e2 < end ? e2 + 1 : end;
	d->after_hunk = 0;
	return 1;
}

/* A hunk's header, "@@ -a,b +c,d @@", which opens the hunk. */
static int hunk_start(struct dparse *d, size_t nc, const char *next)
{
	const char *s = d->s;

	if (!has_prefix(s, nc, "@@ "))
		return 0;
	if (!d->f.active || !d->f.minus_plus)
		return err_set(ERR_INVALID,
			       "%s:%zu: hunk without a ---/+++ file header",
			       d->name, d->lineno);
	d->hunk_len = hunk_header(s, nc, &d->old, &d->new);
	if (!d->hunk_len)
		return err_set(ERR_INVALID,
			       "%s:%zu: %s: malformed hunk header '%.*s'",
			       d->name, d->lineno, d->f.new_path.buf,
			       (int)(nc > 60 ? 60 : nc), s);
	d->hunk = s;
	d->hunk_line = d->lineno;
	d->f.hunks++;
	idh_add(&d->h, "@@", 2);
	return hunk_next(d, next);
}

/* A "GIT binary patch" and its literal/delta blocks of base85 lines. */
static int binary_patch(struct dparse *d, size_t nc, const char *next)
{
	const char *s = d->s, *end = d->end;
	size_t blocks = 0;

	if (!has_prefix(s, nc, "GIT binary patch"))
		return 0;
	d->f.binary = 1;
	d->diff_end = s = next;
	d->lineno++;
	while (s < end) {
		const char *be = line_end(s, end);
		size_t bn = line_len_nocr(s, (size_t)(be - s));
		const char *bnext = be < end ? be + 1 : end;
		if (has_prefix(s, bn, "literal ") ||
		    has_prefix(s, bn, "delta ")) {
			blocks++;
		} else if (!bn) {
			if (!blocks)
				break;
		} else if (!blocks || !is_b85_line(s, bn)) {
			break;
		}
		idh_add(&d->h, s, bn);
		d->diff_end = s = bnext;
		d->lineno++;
	}
	d->s = s;
	if (!blocks)
		return err_set(ERR_INVALID,
			       "%s:%zu: %s: malformed binary patch", d->name,
			       d->lineno, d->f.new_path.buf);
	d->lineno--;
	return 1;
}

/* The end: the patch-id (SHA-1 of the diff without whitespace) and the diff. */
static int diff_finish(struct dparse *d, const char *buf, size_t first_line)
{
	struct patch *p = d->p;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	int ret;

	if (d->hunk)
		return truncated(d, " at the end");
	if ((ret = file_finish(d)) < 0)
		return ret;
	if (!p->nfiles)
		return err_set(ERR_INVALID, "%s:%zu: no file in the diff",
			       d->name, first_line);
	idh_flush(&d->h);
	if (!EVP_DigestFinal_ex(d->h.ctx, md, &mdlen) || mdlen != 20)
		return err_set(ERR_GENERIC, "%s: SHA-1 failed", d->name);
	for (unsigned i = 0; i < 20; i++) {
		static const char hex[] = "0123456789abcdef";
		p->patch_id[2 * i] = hex[md[i] >> 4];
		p->patch_id[2 * i + 1] = hex[md[i] & 15];
	}
	p->patch_id[40] = '\0';
	free(p->diff);
	p->diff = xstrndup(buf, (size_t)(d->diff_end - buf));
	return 0;
}

int diff_parse(struct patch *p, const char *buf, size_t len, const char *name,
	       size_t first_line)
{
	struct dparse d = {.p = p, .name = name, .s = buf, .end = buf + len,
			   .diff_end = buf, .lineno = first_line};
	int ret = 0;

	strbuf_init(&d.f.old_path, 0);
	strbuf_init(&d.f.new_path, 0);
	d.h.ctx = EVP_MD_CTX_new();
	if (!d.h.ctx || !EVP_DigestInit_ex(d.h.ctx, EVP_sha1(), NULL)) {
		ret = err_set(ERR_GENERIC, "%s: cannot initialize SHA-1", name);
		goto out;
	}

	for (; d.s < d.end; d.lineno++) {
		const char *s = d.s, *e = line_end(s, d.end);
		const char *next = e < d.end ? e + 1 : d.end;
		size_t n = (size_t)(e - s), nc = line_len_nocr(s, n);

		if (d.hunk) {
			if ((ret = hunk_body(&d, n, nc, next)) < 0)
				goto out;
			continue;
		}
		if ((ret = file_header(&d, nc, next)) != 0 ||
		    (ret = hunk_start(&d, nc, next)) != 0) {
			if (ret < 0)
				goto out;
			continue;
		}
		if (d.after_hunk && nc && s[0] == '\\') {
			d.diff_end = d.s = next;
			continue;
		}
		/* a mail signature ends the diff */
		if ((nc == 3 && !memcmp(s, "-- ", 3)) ||
		    (nc == 2 && !memcmp(s, "--", 2)))
			break;
		if (d.after_hunk && nc &&
		    (s[0] == '+' || s[0] == '-' || s[0] == ' ')) {
			ret = err_set(ERR_INVALID,
				      "%s:%zu: %s: more lines than the hunk "
				      "header before them counts",
				      name, d.lineno, d.f.new_path.buf);
			goto out;
		}
		d.after_hunk = 0;
		if (d.f.active && d.f.git && !d.f.minus_plus && !d.f.hunks) {
			if ((ret = binary_patch(&d, nc, next)) != 0) {
				if (ret < 0)
					goto out;
				continue;
			}
			if (ext_header(&d.f, s, nc)) {
				d.diff_end = d.s = next;
				continue;
			}
		}
		/* anything else ("Index:", "====", "diff -u"): between files */
		if (d.f.active && d.f.minus_plus && !d.f.hunks &&
		    (ret = file_finish(&d)) < 0)
			goto out;
		d.s = next;
	}
	ret = diff_finish(&d, buf, first_line);
out:
	EVP_MD_CTX_free(d.h.ctx);
	strbuf_release(&d.f.old_path);
	strbuf_release(&d.f.new_path);
	return ret;
}
