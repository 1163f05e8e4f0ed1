/* repo-diff.c: a diff as data: parsed, reversed, written as a git diff. */
#include "repo-int.h"
#include "err.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hunk_release(struct diff_hunk *h);

static void fdiff_release(struct diff_file *f)
{
	free(f->old_path);
	free(f->new_path);
	strbuf_release(&f->ext);
	strbuf_release(&f->bindata);
	for (size_t i = 0; i < f->nhunks; i++)
		hunk_release(&f->hunks[i]);
	free(f->hunks);
}

void repo_diff_release(struct diff_set *p)
{
	for (size_t i = 0; i < p->n; i++)
		fdiff_release(&p->f[i]);
	free(p->f);
	p->f = NULL;
	p->n = 0;
}

/* Parsing -------------------------------------------------------------- */

struct lines {
	const char *p, *end;
};

/* The next line (without '\n') or NULL at the end. */
static const char *next_line(struct lines *l, size_t *len)
{
	const char *s = l->p, *nl;

	if (s >= l->end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(l->end - s));
	*len = nl ? (size_t)(nl - s) : (size_t)(l->end - s);
	l->p = nl ? nl + 1 : l->end;
	return s;
}

static const char *peek_line(const struct lines *l, size_t *len)
{
	struct lines c = *l;
	return next_line(&c, len);
}

static int starts(const char *s, size_t len, const char *w)
{
	size_t n = strlen(w);
	return len >= n && !memcmp(s, w, n);
}

/*
 * A path from a ---/+++ line or a git header: unquotes "..." C quoting,
 * cuts a tab-separated timestamp, strips strip leading components.
 * NULL for /dev/null.
 */
static char *clean_path(const char *s, size_t len, int strip)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;

	while (len && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	if (len && *s == '"') {
		size_t i = 1;
		for (; i < len && s[i] != '"'; i++) {
			if (s[i] == '\\' && i + 1 < len) {
				char c = s[++i];
				if (c >= '0' && c <= '7' && i + 2 < len) {
					strbuf_addch(&sb,
						     (s[i] - '0') * 64 +
							     (s[i + 1] - '0') *
								     8 +
							     (s[i + 2] - '0'));
					i += 2;
					continue;
				}
				strbuf_addch(&sb, c == 'n'   ? '\n'
						  : c == 't' ? '\t'
							     : c);
			} else {
				strbuf_addch(&sb, s[i]);
			}
		}
	} else {
		const char *tab = memchr(s, '\t', len);
		if (tab)
			len = (size_t)(tab - s);
		strbuf_add(&sb, s, len);
		strbuf_rtrim(&sb);
	}
	if (!strcmp(sb.buf, "/dev/null")) {
		strbuf_release(&sb);
		return NULL;
	}
	p = sb.buf;
	for (int i = 0; i < strip; i++) {
		const char *slash = strchr(p, '/');
		if (!slash)
			break; /* lenient: a bare name stays as it is */
		p = slash + 1;
	}
	char *out = xstrdup(p);
	strbuf_release(&sb);
	return out;
}

static long num(const char **p)
{
	char *end;
	long v = strtol(*p, &end, 10);
	*p = end;
	return v;
}

/* "@@ -a[,b] +c[,d] @@ section" */
static int parse_hunk_header(struct diff_hunk *h, const char *s, size_t len)
{
	char *line = xstrndup(s, len);
	const char *p = line + 3, *close;
	int ret = -1;

	h->ol = h->nl = 1;
	if (*p != '-')
		goto out;
	p++;
	if (!isdigit((unsigned char)*p))
		goto out;
	h->os = num(&p);
	if (*p == ',') {
		p++;
		h->ol = num(&p);
	}
	if (*p++ != ' ' || *p++ != '+' || !isdigit((unsigned char)*p))
		goto out;
	h->ns = num(&p);
	if (*p == ',') {
		p++;
		h->nl = num(&p);
	}
	if (strncmp(p, " @@", 3) || h->os < 0 || h->ol < 0 || h->ns < 0 ||
	    h->nl < 0)
		goto out;
	close = p + 3;
	h->section = xstrdup(close);
	h->header = xstrndup(line, (size_t)(close - line));
	ret = 0;
out:
	free(line);
	return ret;
}

static void hunk_release(struct diff_hunk *h)
{
	free(h->section);
	free(h->header);
	free(h->lines);
}

static int parse_hunk(struct diff_file *f, struct lines *l, const char *hdr,
		      size_t hlen, const char *name)
{
	struct diff_hunk h;
	long o = 0, n = 0;
	size_t alloc = 0, len;
	const char *s;
	int ret;

	memset(&h, 0, sizeof(h));
	if (parse_hunk_header(&h, hdr, hlen) < 0)
		return err_set(ERR_INVALID, "%s: %s: bad hunk header '%.*s'",
			       name, diff_file_path(f),
			       (int)(hlen > 60 ? 60 : hlen), hdr);
	while (o < h.ol || n < h.nl) {
		char op;

		s = next_line(l, &len);
		if (!s) {
			ret = err_set(ERR_INVALID,
				      "%s: %s: hunk #%zu (%s) is truncated",
				      name, diff_file_path(f), f->nhunks + 1,
				      h.header);
			goto fail;
		}
		op = len ? s[0] : ' '; /* mailers eat a lone space */
		if (op == '\\') {
			/* "\ No newline at end of file": the line before */
			if (h.nlines)
				h.lines[h.nlines - 1].nl = 0;
			continue;
		}
		if (op != ' ' && op != '-' && op != '+') {
			ret = err_set(ERR_INVALID,
				      "%s: %s: hunk #%zu (%s) ends early at "
				      "'%.*s'",
				      name, diff_file_path(f), f->nhunks + 1,
				      h.header, (int)(len > 40 ? 40 : len), s);
			goto fail;
		}
		if (h.nlines == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			h.lines = xrealloc(h.lines, alloc * sizeof(*h.lines));
		}
		h.lines[h.nlines].s = len ? s + 1 : s;
		h.lines[h.nlines].len = len ? len - 1 : 0;
		h.lines[h.nlines].op = op;
		h.lines[h.nlines].nl = 1;
		h.nlines++;
		if (op != '+')
			o++;
		if (op != '-')
			n++;
	}
	if (o != h.ol || n != h.nl) {
		ret = err_set(ERR_INVALID,
			      "%s: %s: hunk #%zu (%s): more lines than its "
			      "header says",
			      name, diff_file_path(f), f->nhunks + 1, h.header);
		goto fail;
	}
	s = peek_line(l, &len);
	if (s && len && s[0] == '\\') {
		next_line(l, &len);
		if (h.nlines)
			h.lines[h.nlines - 1].nl = 0;
	}
	f->hunks = xrealloc(f->hunks, (f->nhunks + 1) * sizeof(*f->hunks));
	f->hunks[f->nhunks++] = h;
	return 0;
fail:
	hunk_release(&h);
	return ret;
}

static unsigned mode_of(const char *s, size_t len, const char *key)
{
	size_t k = strlen(key);
	return len > k ? (unsigned)strtoul(s + k, NULL, 8) : 0;
}

/* Where does a file's diff start? */
static int is_quilt_start(const struct lines *l, const char *s, size_t len)
{
	size_t nlen;
	const char *n;

	if (!starts(s, len, "--- "))
		return 0;
	n = peek_line(l, &nlen);
	return n && starts(n, nlen, "+++ ");
}

/* "diff --git a/X b/Y": X when both halves name the same path. */
static char *git_line_path(const char *s, size_t len)
{
	const char *p = s + 11;
	size_t rest = len - 11, half;

	if (rest < 5 || rest % 2 == 0)
		return NULL;
	half = (rest - 1) / 2;
	if (p[half] != ' ' || memcmp(p, "a/", 2) ||
	    memcmp(p + half + 1, "b/", 2) ||
	    memcmp(p + 2, p + half + 3, half - 2))
		return NULL;
	return xstrndup(p + 2, half - 2);
}

static int parse_file_body(struct diff_file *f, struct lines *l,
			   const char *name)
{
	const char *s;
	size_t len;
	int ret;

	for (;;) {
		struct lines save = *l;
		s = next_line(l, &len);
		if (!s)
			return 0;
		if (starts(s, len, "@@ -")) {
			if ((ret = parse_hunk(f, l, s, len, name)) < 0)
				return ret;
			continue;
		}
		if (f->is_git && starts(s, len, "GIT binary patch")) {
			f->binary = 1;
			strbuf_add(&f->bindata, s, len);
			strbuf_addch(&f->bindata, '\n');
			/* literal/delta blocks, each ending in an empty line */
			int blank = 0;
			while ((s = peek_line(l, &len))) {
				if (starts(s, len, "diff --git ") ||
				    (blank && !starts(s, len, "literal ") &&
				     !starts(s, len, "delta ")))
					break;
				next_line(l, &len);
				blank = len == 0;
				strbuf_add(&f->bindata, s, len);
				strbuf_addch(&f->bindata, '\n');
			}
			continue;
		}
		if (starts(s, len, "Binary files ")) {
			f->binary = 2;
			continue;
		}
		/* anything else ends this file: the next one, or trailing junk
		 */
		*l = save;
		return 0;
	}
}

static int parse_git_file(struct diff_file *f, struct lines *l,
			  const char *first, size_t flen, const char *name)
{
	const char *s;
	size_t len;

	f->is_git = 1;
	{
		char *p = git_line_path(first, flen);
		f->old_path = p;
		f->new_path = p ? xstrdup(p) : NULL;
	}
	while ((s = peek_line(l, &len))) {
		if (starts(s, len, "old mode "))
			f->old_mode = mode_of(s, len, "old mode ");
		else if (starts(s, len, "new mode "))
			f->new_mode = mode_of(s, len, "new mode ");
		else if (starts(s, len, "deleted file mode ")) {
			f->deleted = 1;
			f->old_mode = mode_of(s, len, "deleted file mode ");
		} else if (starts(s, len, "new file mode ")) {
			f->added = 1;
			f->new_mode = mode_of(s, len, "new file mode ");
		} else if (starts(s, len, "rename from ")) {
			f->renamed = 1;
			free(f->old_path);
			f->old_path = clean_path(s + 12, len - 12, 0);
		} else if (starts(s, len, "rename to ")) {
			f->renamed = 1;
			free(f->new_path);
			f->new_path = clean_path(s + 10, len - 10, 0);
		} else if (starts(s, len, "copy from ")) {
			f->copied = 1;
			free(f->old_path);
			f->old_path = clean_path(s + 10, len - 10, 0);
		} else if (starts(s, len, "copy to ")) {
			f->copied = 1;
			free(f->new_path);
			f->new_path = clean_path(s + 8, len - 8, 0);
		} else if (starts(s, len, "similarity index ") ||
			   starts(s, len, "dissimilarity index ") ||
			   starts(s, len, "index ")) {
			/* kept as written; "index a..b MODE": the mode stays */
			const char *sp = starts(s, len, "index ")
						 ? memchr(s + 6, ' ', len - 6)
						 : NULL;
			if (sp && !f->old_mode && !f->new_mode)
				f->old_mode = f->new_mode = (unsigned)strtoul(
					sp + 1, NULL, 8);
		} else if (starts(s, len, "--- ")) {
			next_line(l, &len);
			char *o = clean_path(s + 4, len - 4, 1);
			s = next_line(l, &len);
			if (!s || !starts(s, len, "+++ ")) {
				free(o);
				return err_set(ERR_INVALID,
					       "%s: '---' without '+++' line",
					       name);
			}
			char *n = clean_path(s + 4, len - 4, 1);
			if (!f->renamed && !f->copied) {
				free(f->old_path);
				free(f->new_path);
				f->old_path = o;
				f->new_path = n;
				if (!o)
					f->added = 1;
				if (!n)
					f->deleted = 1;
			} else {
				free(o);
				free(n);
			}
			break;
		} else {
			break;
		}
		next_line(l, &len);
		strbuf_add(&f->ext, s, len);
		strbuf_addch(&f->ext, '\n');
	}
	if (f->added) {
		free(f->old_path);
		f->old_path = NULL;
	}
	if (f->deleted) {
		free(f->new_path);
		f->new_path = NULL;
	}
	if (!f->old_path && !f->new_path)
		return err_set(ERR_INVALID,
			       "%s: cannot tell the file of "
			       "'%.*s'",
			       name, (int)(flen > 80 ? 80 : flen), first);
	return parse_file_body(f, l, name);
}

static int parse_quilt_file(struct diff_file *f, struct lines *l,
			    const char *first, size_t flen, const char *name)
{
	const char *s;
	size_t len;
	int ret;

	f->old_path = clean_path(first + 4, flen - 4, 1);
	s = next_line(l, &len);
	f->new_path = clean_path(s + 4, len - 4, 1);
	if (!f->old_path && !f->new_path)
		return err_set(ERR_INVALID, "%s: /dev/null on both sides",
			       name);
	if ((ret = parse_file_body(f, l, name)) < 0)
		return ret;
	/* `diff -N` writes new and deleted files with their own names */
	if (f->old_path && f->new_path && f->nhunks == 1) {
		if (f->hunks[0].os == 0 && f->hunks[0].ol == 0)
			f->added = 1;
		else if (f->hunks[0].ns == 0 && f->hunks[0].nl == 0)
			f->deleted = 1;
	}
	if (!f->old_path)
		f->added = 1;
	if (!f->new_path)
		f->deleted = 1;
	if (f->added) {
		free(f->old_path);
		f->old_path = NULL;
	} else if (f->deleted) {
		free(f->new_path);
		f->new_path = NULL;
	} else if (strcmp(f->old_path, f->new_path)) {
		/* quilt names both sides the same after -p1; trust +++ */
		free(f->old_path);
		f->old_path = xstrdup(f->new_path);
	}
	return 0;
}

int repo_diff_parse(struct diff_set *out, const char *text, size_t tlen,
		    const char *name)
{
	struct lines l = {text, text + tlen};
	const char *s;
	size_t len;
	int has_git = 0, ret = 0;

	memset(out, 0, sizeof(*out));
	/* With git headers present, a ---/+++ pair in the message is quoted. */
	for (struct lines c = l; (s = next_line(&c, &len));)
		if (starts(s, len, "diff --git ")) {
			has_git = 1;
			break;
		}
	while ((s = next_line(&l, &len))) {
		struct diff_file f;
		int git = starts(s, len, "diff --git ");

		if (!git && !(!has_git && is_quilt_start(&l, s, len)))
			continue;
		memset(&f, 0, sizeof(f));
		f.ext = (struct strbuf)STRBUF_INIT;
		f.bindata = (struct strbuf)STRBUF_INIT;
		ret = git ? parse_git_file(&f, &l, s, len, name)
			  : parse_quilt_file(&f, &l, s, len, name);
		if (ret < 0) {
			fdiff_release(&f);
			repo_diff_release(out);
			return ret;
		}
		out->f = xrealloc(out->f, (out->n + 1) * sizeof(*out->f));
		out->f[out->n++] = f;
	}
	if (!out->n)
		return err_set(ERR_INVALID, "%s: no diff found", name);
	return 0;
}

/* Reversing ------------------------------------------------------------ */

static void reverse_file(struct diff_file *r, const struct diff_file *f)
{
	memset(r, 0, sizeof(*r));
	r->ext = (struct strbuf)STRBUF_INIT;
	r->bindata = (struct strbuf)STRBUF_INIT;
	r->is_git = f->is_git;
	r->old_path = f->new_path ? xstrdup(f->new_path) : NULL;
	r->new_path = f->old_path ? xstrdup(f->old_path) : NULL;
	r->old_mode = f->new_mode;
	r->new_mode = f->old_mode;
	r->added = f->deleted;
	r->deleted = f->added;
	r->renamed = f->renamed;
	r->copied = f->copied;
	r->binary = f->binary ? 2 : 0; /* binary data is not reversed here */
	r->nhunks = f->nhunks;
	r->hunks = xcalloc(f->nhunks ? f->nhunks : 1, sizeof(*r->hunks));
	for (size_t i = 0; i < f->nhunks; i++) {
		const struct diff_hunk *h = &f->hunks[i];
		struct diff_hunk *rh = &r->hunks[i];
		rh->os = h->ns;
		rh->ol = h->nl;
		rh->ns = h->os;
		rh->nl = h->ol;
		rh->section = xstrdup(h->section);
		rh->header = xstrfmt("@@ -%ld,%ld +%ld,%ld @@", rh->os, rh->ol,
				     rh->ns, rh->nl);
		rh->nlines = h->nlines;
		rh->lines =
			xcalloc(h->nlines ? h->nlines : 1, sizeof(*rh->lines));
		/* deletions before additions within each change block */
		size_t k = 0;
		for (size_t j = 0; j < h->nlines;) {
			if (h->lines[j].op == ' ') {
				rh->lines[k++] = h->lines[j++];
				continue;
			}
			size_t e = j;
			while (e < h->nlines && h->lines[e].op != ' ')
				e++;
			for (size_t m = j; m < e; m++)
				if (h->lines[m].op == '+') {
					rh->lines[k] = h->lines[m];
					rh->lines[k++].op = '-';
				}
			for (size_t m = j; m < e; m++)
				if (h->lines[m].op == '-') {
					rh->lines[k] = h->lines[m];
					rh->lines[k++].op = '+';
				}
			j = e;
		}
	}
}

void repo_diff_reverse(struct diff_set *out, const struct diff_set *in)
{
	out->n = in->n;
	out->f = xcalloc(in->n ? in->n : 1, sizeof(*out->f));
	for (size_t i = 0; i < in->n; i++)
		reverse_file(&out->f[in->n - 1 - i], &in->f[i]);
}

/* Writing ---------------------------------------------------------------- */

static int has_index_line(const struct strbuf *ext)
{
	for (const char *s = ext->buf, *end = s + ext->len; ext->len && s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (starts(s, e ? (size_t)(e - s) : (size_t)(end - s), "index "))
			return 1;
		s = e ? e + 1 : end;
	}
	return 0;
}

static void emit_file(struct strbuf *sb, const struct diff_file *f)
{
	const char *o = f->old_path ? f->old_path : f->new_path;
	const char *n = f->new_path ? f->new_path : f->old_path;
	long delta = 0;

	strbuf_addf(sb, "diff --git a/%s b/%s\n", o, n);
	if (f->keep_mode && !f->nhunks) {
		/* a pure rename: mode lines first, as git writes them */
		strbuf_addf(sb, "old mode %o\nnew mode %o\n", f->old_mode,
			    f->new_mode);
		strbuf_addbuf(sb, &f->ext);
	} else if (f->keep_mode) {
		/*
		 * The diff says no mode: libgit2 would take 100644, so the
		 * file's own mode goes on an index line, as git writes it
		 * (no ids: libgit2 does not check them).
		 */
		for (const char *s = f->ext.buf, *end = s + f->ext.len;
		     f->ext.len && s < end;) {
			const char *e = memchr(s, '\n', (size_t)(end - s));
			size_t len = e ? (size_t)(e - s) : (size_t)(end - s);
			if (!starts(s, len, "index "))
				strbuf_add(sb, s, e ? len + 1 : len);
			s = e ? e + 1 : end;
		}
		strbuf_addf(sb, "index 0000000..0000000 %o\n", f->new_mode);
	} else if (f->is_git && f->ext.len) {
		strbuf_addbuf(sb, &f->ext);
		/* libgit2 wants an index line between a mode change and
		 * the hunks */
		if (f->nhunks && f->old_mode != f->new_mode && !f->added &&
		    !f->deleted && !has_index_line(&f->ext))
			strbuf_addstr(sb, "index 0000000..0000000\n");
	} else {
		if (f->added)
			strbuf_addf(sb, "new file mode %o\n",
				    f->new_mode ? f->new_mode : 0100644);
		if (f->deleted)
			strbuf_addf(sb, "deleted file mode %o\n",
				    f->old_mode ? f->old_mode : 0100644);
		if (!f->added && !f->deleted && f->old_mode && f->new_mode &&
		    f->old_mode != f->new_mode)
			strbuf_addf(sb, "old mode %o\nnew mode %o\n%s",
				    f->old_mode, f->new_mode,
				    f->nhunks ? "index 0000000..0000000\n" : "");
		if (f->renamed)
			strbuf_addf(sb, "rename from %s\nrename to %s\n",
				    f->old_path, f->new_path);
		if (f->copied)
			strbuf_addf(sb, "copy from %s\ncopy to %s\n",
				    f->old_path, f->new_path);
	}
	if (f->binary == 1) {
		strbuf_addbuf(sb, &f->bindata);
		return;
	}
	if (!f->nhunks)
		return;
	if (f->old_path)
		strbuf_addf(sb, "--- a/%s\n", f->old_path);
	else
		strbuf_addstr(sb, "--- /dev/null\n");
	if (f->new_path)
		strbuf_addf(sb, "+++ b/%s\n", f->new_path);
	else
		strbuf_addstr(sb, "+++ /dev/null\n");
	for (size_t i = 0; i < f->nhunks; i++) {
		const struct diff_hunk *h = &f->hunks[i];
		/*
		 * libgit2 applies a hunk at new_start - 1 of the file as
		 * patched so far: that is where it was located. old_start is
		 * for human eyes only.
		 */
		long ns = h->pos + 1;
		long os = h->pos + 1 - delta;

		if (h->ol == 0)
			os = f->added ? 0 : os - 1;
		if (os < 0)
			os = 0;
		strbuf_addf(sb, "@@ -%ld,%ld +%ld,%ld @@%s\n", os, h->ol, ns,
			    h->nl, h->section);
		for (size_t j = 0; j < h->nlines; j++) {
			strbuf_addch(sb, h->lines[j].op);
			strbuf_add(sb, h->lines[j].s, h->lines[j].len);
			strbuf_addch(sb, '\n');
			if (!h->lines[j].nl)
				strbuf_addstr(sb,
					      "\\ No newline at end of file\n");
		}
		delta += h->nl - h->ol;
	}
}

void repo_diff_emit(struct strbuf *sb, const struct diff_set *d)
{
	for (size_t i = 0; i < d->n; i++)
		emit_file(sb, &d->f[i]);
}
