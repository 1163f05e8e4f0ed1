/* repo-lines.c: a patch's own lines looked for in a tree: already there, or nowhere. */
#include "repo-int.h"
#include "err.h"
#include "mime.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/*
 * The applies check asks whether a diff applies forwards or in reverse;
 * neither answers for a patch whose lines a later release moved or whose
 * context it changed. These answers look at the lines themselves. They
 * are used where a wrong yes costs the least: a line a patch adds must be
 * telling (long enough to be that patch's, not any function's "return 0;")
 * before it counts as found.
 */

/* Lines shorter than this (white space off) say nothing about a patch. */
#define TELLING_MIN 8
/* One line this long is telling enough alone. */
#define STRONG_MIN 24
/* A run found away from its neighbours: this many telling lines, */
#define RUN_ALONE 3
/* or one line this long that the file has once. */
#define UNIQUE_MIN 40
/* "Nowhere" needs this many telling lines to have looked for. */
#define NOWHERE_MIN 3

struct text {
	struct diff_line *l; /* s, len (trailing white space off) */
	size_t n;
};

static void text_split(struct text *t, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	size_t alloc = 0;

	t->l = NULL;
	t->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (t->n == alloc) {
			alloc = alloc ? alloc * 2 : 256;
			t->l = xrealloc(t->l, alloc * sizeof(*t->l));
		}
		while (n && isspace((unsigned char)p[n - 1]))
			n--;
		t->l[t->n].s = p;
		t->l[t->n].len = n;
		t->l[t->n].op = ' ';
		t->n++;
		p = nl ? nl + 1 : end;
	}
}

static size_t rtrim(const char *s, size_t n)
{
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return n;
}

static const char *ltrim(const char *s, size_t *n)
{
	while (*n && isspace((unsigned char)*s)) {
		s++;
		(*n)--;
	}
	return s;
}

static int same(const char *a, size_t na, const char *b, size_t nb)
{
	na = rtrim(a, na);
	nb = rtrim(b, nb);
	return na == nb && !memcmp(a, b, na);
}

/* Equal once white space around them is off: moved code may be re-indented. */
static int same_trimmed(const char *a, size_t na, const char *b, size_t nb)
{
	a = ltrim(a, &na);
	b = ltrim(b, &nb);
	return same(a, na, b, nb);
}

static size_t telling_len(const char *s, size_t n)
{
	int alnum = 0;

	s = ltrim(s, &n);
	n = rtrim(s, n);
	for (size_t i = 0; i < n && !alnum; i++)
		alnum = isalnum((unsigned char)s[i]);
	return alnum ? n : 0;
}

/*
 * Where the block run[0..k) starts in t, from 0; -1 when nowhere. White
 * space around lines is not compared: a later release that wrapped the
 * code in a block re-indented it.
 */
static long block_find(const struct text *t, const struct diff_line *run,
		       size_t k, long from)
{
	for (long i = from; k && (size_t)i + k <= t->n; i++) {
		size_t j = 0;
		while (j < k && same_trimmed(t->l[i + j].s, t->l[i + j].len,
					     run[j].s, run[j].len))
			j++;
		if (j == k)
			return i;
	}
	return -1;
}

/*
 * Does run[0..k) stand in t with exactly one of its lines different, right
 * after before and right before after (both needed)? A later release that
 * edited one line of what a patch added leaves the rest where it put it.
 */
static int block_edited(const struct text *t, const struct diff_line *run,
			size_t k, const struct diff_line *before,
			const struct diff_line *after)
{
	if (!before || !after || k < 2)
		return 0;
	for (size_t i = 1; i + k < t->n; i++) {
		size_t miss = 0;
		if (!same_trimmed(t->l[i - 1].s, t->l[i - 1].len, before->s,
				  before->len) ||
		    !same_trimmed(t->l[i + k].s, t->l[i + k].len, after->s,
				  after->len))
			continue;
		for (size_t j = 0; j < k && miss < 2; j++)
			miss += !same_trimmed(t->l[i + j].s, t->l[i + j].len,
					      run[j].s, run[j].len);
		if (miss == 1)
			return 1;
	}
	return 0;
}

/*
 * Is run[0..k) a block inside the lines of f's hunks whose op is op? White
 * space around lines is not compared, as block_find() does not: a fix that
 * drops a guard and dedents its statement moves that statement.
 */
static int block_in_patch(const struct diff_file *f, const struct diff_line *run,
			  size_t k, char op)
{
	for (size_t h = 0; h < f->nhunks; h++) {
		const struct diff_hunk *hk = &f->hunks[h];
		for (size_t i = 0; i + k <= hk->nlines; i++) {
			size_t j = 0;
			while (j < k && hk->lines[i + j].op == op &&
			       same_trimmed(hk->lines[i + j].s,
					    hk->lines[i + j].len, run[j].s,
					    run[j].len))
				j++;
			if (j == k)
				return 1;
		}
	}
	return 0;
}

static int read_file(struct repo *r, const char *base,
		     const struct repo_overlay *ov, const char *path,
		     struct strbuf *buf, struct text *t)
{
	int ret;

	strbuf_reset(buf);
	free(t->l);
	t->l = NULL;
	t->n = 0;
	ret = repo_file_overlay(r, base, ov, path, buf);
	if (ret > 0)
		text_split(t, buf->buf, buf->len);
	return ret;
}

static int blank(const struct diff_line *l)
{
	return !rtrim(l->s, l->len);
}

/*
 * Where the hunk's old side (the lines it keeps and removes, in order)
 * stands in t exactly (white space at the ends of lines aside), nearest
 * its own line number: where applying it would change the file. -1 when
 * nowhere; *len gets its length.
 */
static long preimage_at(const struct text *t, const struct diff_hunk *hk,
			size_t *len)
{
	long best = -1, want = hk->os > 0 ? hk->os - 1 : 0;
	size_t n = 0;

	for (size_t i = 0; i < hk->nlines; i++)
		n += hk->lines[i].op != '+';
	*len = n;
	if (!n)
		return -1;
	for (size_t at = 0; at + n <= t->n; at++) {
		size_t j = 0, m = 0;
		for (; j < hk->nlines; j++) {
			const struct diff_line *l = &hk->lines[j];
			if (l->op == '+')
				continue;
			if (!same(t->l[at + m].s, t->l[at + m].len, l->s, l->len))
				break;
			m++;
		}
		if (j < hk->nlines)
			continue;
		if (best < 0 || labs((long)at - want) < labs(best - want))
			best = (long)at;
	}
	return best;
}

/* The nearest line of t before at (after: from at on) that is not blank. */
static long nonblank(const struct text *t, long at, int after)
{
	if (after) {
		while ((size_t)at < t->n && !rtrim(t->l[at].s, t->l[at].len))
			at++;
		return (size_t)at < t->n ? at : -1;
	}
	while (--at >= 0 && !rtrim(t->l[at].s, t->l[at].len))
		;
	return at;
}

/*
 * Does l (a telling line the patch keeps) stand in t at line i? Blank lines
 * anchor nothing: every function has them.
 */
static int anchors(const struct text *t, long i, const struct diff_line *l)
{
	return l && i >= 0 && telling_len(l->s, l->len) >= TELLING_MIN &&
	       same_trimmed(t->l[i].s, t->l[i].len, l->s, l->len);
}

/*
 * The hunk's own region in t, where applying it would change the file,
 * and how far around it a line a later change moved may stand.
 */
struct region {
	long at;
	size_t len, near;
};

/*
 * One run of lines of file f (run[0..k), all of one op), whose neighbours
 * in the patch (the nearest non-blank lines it keeps beside it) are
 * before/after (NULL: none): 1 when it stands in t, 0 not, -1 when it
 * tells nothing (the patch moves it within its files). *place gets where
 * it stands.
 * A fix often adds a line its file has elsewhere already (the unlock its
 * error path lacked): a block found away from the patch's neighbours counts
 * only when it is long (RUN_ALONE telling lines) or one telling line of
 * UNIQUE_MIN characters that the file holds once (away: placed set; a run
 * of removed lines never counts away from its place). When own is set
 * (the hunk's old side stands: it applies there), a block found inside it
 * is the hunk's own kept line, not the run, and one farther than own->near
 * lines from it is another function's: only a change nearby moved it;
 * and a run the hunk also keeps is that kept line (a doubled statement).
 * *strong is set when the run alone is evidence.
 * With edited, a run of RUN_ALONE telling lines one of whose lines a later
 * release changed counts too (block_edited()).
 */
static int run_placed(const struct diff_file *f, const struct text *t,
		      const struct diff_line *run, size_t k,
		      const struct diff_line *before,
		      const struct diff_line *after, const struct region *own,
		      int edited, int away, int *strong, long *place)
{
	size_t telling = 0, longest = 0, seen = 0, outside = 0;
	long anchored = -1, lone = -1;

	*place = -1;
	for (size_t i = 0; i < k; i++) {
		size_t n = telling_len(run[i].s, run[i].len);
		telling += n >= TELLING_MIN;
		longest = n > longest ? n : longest;
	}
	/* code the patch moves within its files is where it was already */
	if (block_in_patch(f, run, k, run[0].op == '+' ? '-' : '+'))
		return -1;
	*strong = telling >= 2 || longest >= STRONG_MIN;
	/* applying it doubles a line it keeps: the tree's copy is that one */
	if (own && own->at >= 0 && block_in_patch(f, run, k, ' '))
		return 0;
	for (long at = block_find(t, run, k, 0); at >= 0;
	     at = block_find(t, run, k, at + 1)) {
		seen++;
		if (own && own->at >= 0 &&
		    ((at < own->at + (long)own->len && at + (long)k > own->at) ||
		     at + (long)k + (long)own->near < own->at ||
		     at > own->at + (long)(own->len + own->near)))
			continue;
		outside++;
		lone = at;
		if (anchored < 0 &&
		    (anchors(t, nonblank(t, at, 0), before) ||
		     anchors(t, nonblank(t, at + (long)k, 1), after)))
			anchored = at;
	}
	if (anchored >= 0) {
		*place = anchored;
		return 1;
	}
	if (!seen && edited && telling >= RUN_ALONE &&
	    block_edited(t, run, k, before, after))
		return 1;
	if (!away || !outside)
		return 0;
	if (telling >= RUN_ALONE || (longest >= UNIQUE_MIN && seen == 1)) {
		*place = lone;
		return 1;
	}
	return 0;
}

/*
 * The kept lines nearest hunk line i (before) and i + k (after) that are
 * not blank, or NULL.
 */
static void neighbours(const struct diff_hunk *hk, size_t i, size_t k,
		       const struct diff_line **before,
		       const struct diff_line **after)
{
	const struct diff_line *l;

	*before = *after = NULL;
	for (size_t b = i; b-- > 0 && !*before;) {
		l = &hk->lines[b];
		if (l->op == ' ' && !blank(l))
			*before = l;
	}
	for (size_t a = i + k; a < hk->nlines && !*after; a++) {
		l = &hk->lines[a];
		if (l->op == ' ' && !blank(l))
			*after = l;
	}
}

static size_t run_telling(const struct diff_line *run, size_t k)
{
	size_t n = 0;

	for (size_t j = 0; j < k; j++)
		n += telling_len(run[j].s, run[j].len) >= TELLING_MIN;
	return n;
}

/*
 * A run of removed lines, by where it is: 1 still at the hunk's place
 * (between the lines the patch keeps beside it, or among the lines the
 * hunk adds where they stand, span->at >= 0); 0 gone from there (found
 * elsewhere in the file or not at all: a released patch that took out
 * "unsigned long i;" leaves the other functions' ones, "remove duplicate
 * cleanup" removes code that stands elsewhere by definition). *gone is set
 * when the lines the patch keeps on both sides of it now stand next to
 * each other: where the lines went is seen.
 */
static int removed_there(const struct diff_file *f, const struct text *t,
			 const struct diff_hunk *hk, size_t i, size_t k,
			 const struct region *span, int *gone)
{
	const struct diff_line *run = &hk->lines[i], *before, *after;
	int strong = 0;
	long at;

	*gone = 0;
	neighbours(hk, i, k, &before, &after);
	if (run_placed(f, t, run, k, before, after, NULL, 0, 0, &strong,
		       &at) > 0)
		return 1;
	if (span->at >= 0)
		for (at = block_find(t, run, k, 0); at >= 0;
		     at = block_find(t, run, k, at + 1))
			if (at + (long)k >= span->at &&
			    at <= span->at + (long)span->len)
				return 1;
	/* its kept neighbours side by side: the run went from between them */
	if (before && after &&
	    telling_len(before->s, before->len) >= TELLING_MIN &&
	    telling_len(after->s, after->len) >= TELLING_MIN)
		for (at = block_find(t, before, 1, 0); at >= 0 && !*gone;
		     at = block_find(t, before, 1, at + 1))
			*gone = anchors(t, nonblank(t, at + 1, 1), after);
	return 0;
}

/* The hunks of f against t: 1 placed (*strong counts strong runs), 0 not. */
static int hunks_placed(const struct diff_file *f, const struct text *t,
			int edited, size_t *strong, struct strbuf *why)
{
	for (size_t h = 0; h < f->nhunks; h++) {
		const struct diff_hunk *hk = &f->hunks[h];
		struct region own, span = { -1, 0, 0 };
		size_t removes = 0;

		own.at = preimage_at(t, hk, &own.len);
		own.near = 3 * own.len;
		for (size_t i = 0; i < hk->nlines; i++)
			removes += hk->lines[i].op == '-' && !blank(&hk->lines[i]);
		if (own.at >= 0 && removes) {
			/* it applies there: what it removes is still there */
			if (why)
				strbuf_addf(why,
					    "%s: the lines hunk #%zu removes"
					    " stand at its place (line %ld)",
					    diff_file_path(f), h + 1,
					    own.at + 1);
			return 0;
		}
		for (size_t i = 0; i < hk->nlines;) {
			char op = hk->lines[i].op;
			size_t k = 1;
			while (i + k < hk->nlines && hk->lines[i + k].op == op)
				k++;
			if (op == '+') {
				const struct diff_line *before, *after;
				int s = 0;
				long at;
				neighbours(hk, i, k, &before, &after);
				int p = run_placed(f, t, &hk->lines[i], k,
						   before, after, &own, edited,
						   1, &s, &at);
				if (p <= 0) {
					if (why)
						strbuf_addf(why,
							    "%s: the lines hunk"
							    " #%zu adds are %s",
							    diff_file_path(f),
							    h + 1,
							    p < 0 ? "moved by"
								    " the patch"
								  : "not there");
					return 0;
				}
				/* where the hunk's added lines stand */
				if (span.at < 0) {
					span.at = at;
					span.len = k;
				} else if (at + (long)k > span.at + (long)span.len) {
					span.len = (size_t)(at + (long)k - span.at);
				}
				*strong += s;
			}
			i += k;
		}
		for (size_t i = 0; i < hk->nlines;) {
			char op = hk->lines[i].op;
			size_t k = 1;
			int gone = 0;
			while (i + k < hk->nlines && hk->lines[i + k].op == op)
				k++;
			if (op == '-' && run_telling(&hk->lines[i], k) &&
			    removed_there(f, t, hk, i, k, &span, &gone)) {
				if (why)
					strbuf_addf(why,
						    "%s: the lines hunk #%zu"
						    " removes are still there",
						    diff_file_path(f), h + 1);
				return 0;
			}
			/* a deletion whose place closed over it is evidence */
			if (op == '-' && gone) {
				const struct diff_line *r = &hk->lines[i];
				size_t tl = run_telling(r, k), longest = 0;
				for (size_t j = 0; j < k; j++) {
					size_t n = telling_len(r[j].s, r[j].len);
					longest = n > longest ? n : longest;
				}
				*strong += tl >= 2 || longest >= STRONG_MIN;
			}
			i += k;
		}
	}
	return 1;
}

int repo_lines_placed(struct repo *r, const char *base,
		      const struct repo_overlay *ov, const char *diff_text,
		      int edited, struct strbuf *why)
{
	struct diff_set d = { 0 };
	struct strbuf buf = STRBUF_INIT;
	struct text t = { 0 };
	size_t strong = 0;
	int ret;

	if (!diff_text)
		return err_set(ERR_INVALID, "no diff");
	if ((ret = repo_diff_parse(&d, diff_text, strlen(diff_text), "patch")) <
	    0)
		return ret;
	ret = 1;
	for (size_t i = 0; i < d.n && ret == 1; i++) {
		const struct diff_file *f = &d.f[i];
		const char *path = diff_file_path(f);
		int have;

		if (f->binary) {
			ret = 0;
			break;
		}
		have = read_file(r, base, ov, path, &buf, &t);
		if (have < 0) {
			ret = have;
			break;
		}
		if (f->deleted || !f->new_path) {
			if (have)
				ret = 0;
			continue;
		}
		if (!have) {
			if (why)
				strbuf_addf(why, "%s is not there", path);
			ret = 0;
			break;
		}
		ret = hunks_placed(f, &t, edited, &strong, why);
	}
	if (ret == 1 && !strong) {
		if (why)
			strbuf_addstr(why, "the lines it adds are too plain to"
					   " tell");
		ret = 0;
	}
	free(t.l);
	strbuf_release(&buf);
	repo_diff_release(&d);
	return ret;
}

/* A removed line this long is that code's, not any function's. */
#define REMOVED_OWN 16

/*
 * Is the code a line of a hunk's old side (l, after prev, the old side's
 * non-blank line before it, or NULL) in t? Generic lines say nothing
 * ("err = -ENOMEM;", a comment's end): a removed line of REMOVED_OWN
 * characters, a kept one of STRONG_MIN, or the two lines standing
 * together (the shape of that code) are evidence.
 */
static int old_line_there(const struct text *t, const struct diff_line *l,
			  const struct diff_line *prev)
{
	size_t n = telling_len(l->s, l->len);
	int alone = n >= (l->op == '-' ? REMOVED_OWN : STRONG_MIN);
	int pair = prev && (n >= TELLING_MIN ||
			    telling_len(prev->s, prev->len) >= TELLING_MIN);

	if (!alone && !pair)
		return 0;
	for (long at = block_find(t, l, 1, 0); at >= 0;
	     at = block_find(t, l, 1, at + 1)) {
		long b;
		if (alone)
			return 1;
		b = nonblank(t, at, 0);
		if (b >= 0 && same_trimmed(t->l[b].s, t->l[b].len, prev->s,
					   prev->len))
			return 1;
	}
	return 0;
}

int repo_lines_nowhere(struct repo *r, const char *base,
		       const struct repo_overlay *ov, const char *diff_text,
		       struct strbuf *why)
{
	struct diff_set d = { 0 };
	struct strbuf buf = STRBUF_INIT, files = STRBUF_INIT;
	struct text t = { 0 };
	size_t looked = 0, found = 0, nfiles = 0;
	int ret;

	if (!diff_text)
		return err_set(ERR_INVALID, "no diff");
	if ((ret = repo_diff_parse(&d, diff_text, strlen(diff_text), "patch")) <
	    0)
		return ret;
	for (size_t i = 0; i < d.n && !found; i++) {
		const struct diff_file *f = &d.f[i];
		size_t before = looked;

		if (!f->old_path || f->binary)
			continue;
		if ((ret = read_file(r, base, ov, f->old_path, &buf, &t)) < 0)
			goto out;
		for (size_t h = 0; h < f->nhunks && !found; h++) {
			const struct diff_hunk *hk = &f->hunks[h];
			const struct diff_line *prev = NULL;
			for (size_t j = 0; j < hk->nlines && !found; j++) {
				const struct diff_line *l = &hk->lines[j];
				if (l->op == '+' || blank(l))
					continue;
				if (telling_len(l->s, l->len) >= TELLING_MIN)
					looked++;
				found = old_line_there(&t, l, prev);
				prev = l;
			}
		}
		if (looked > before) {
			if (nfiles < 4)
				strbuf_addf(&files, "%s%s", nfiles ? ", " : "",
					    f->old_path);
			else if (nfiles == 4)
				strbuf_addstr(&files, ", ...");
			nfiles++;
		}
	}
	ret = !found && looked >= NOWHERE_MIN;
	if (ret && why)
		strbuf_addf(why,
			    "none of the %zu lines it removes or keeps as"
			    " context is in %s",
			    looked, files.buf);
out:
	free(t.l);
	strbuf_release(&buf);
	strbuf_release(&files);
	repo_diff_release(&d);
	return ret;
}

/*
 * Where a link at path pointing at target ends up: outside the tree when
 * it is absolute or climbs above the top.
 */
static int link_escapes(const char *path, const char *target, size_t n)
{
	long depth = 0;
	const char *p, *e = target + n;

	if (!n || *target == '/')
		return 1;
	for (p = path; (p = strchr(p, '/')); p++)
		depth++; /* the directories the link is in */
	for (p = target; p < e;) {
		const char *s = memchr(p, '/', (size_t)(e - p));
		size_t k = s ? (size_t)(s - p) : (size_t)(e - p);
		if (k == 2 && !memcmp(p, "..", 2)) {
			if (--depth < 0)
				return 1;
		} else if (k && !(k == 1 && *p == '.')) {
			depth++;
		}
		p += k + 1;
	}
	return 0;
}

int repo_diff_links(const char *diff_text, struct strbuf *why)
{
	struct diff_set d = { 0 };
	int ret, n = 0;

	if (!diff_text)
		return err_set(ERR_INVALID, "no diff");
	if ((ret = repo_diff_parse(&d, diff_text, strlen(diff_text), "patch")) <
	    0)
		return ret;
	for (size_t i = 0; i < d.n; i++) {
		const struct diff_file *f = &d.f[i];
		const char *path = diff_file_path(f);
		const struct diff_line *l = NULL;
		unsigned mode = f->deleted ? 0 : f->new_mode & 0170000;

		if (mode != 0120000 && mode != 0160000)
			continue;
		for (size_t h = 0; h < f->nhunks && !l; h++)
			for (size_t j = 0; j < f->hunks[h].nlines && !l; j++)
				if (f->hunks[h].lines[j].op == '+')
					l = &f->hunks[h].lines[j];
		if (why && n < 4) {
			strbuf_addf(why, "%s", n ? "; " : "");
			mime_clean_line(why, path, strlen(path));
			if (mode == 0160000)
				strbuf_addstr(why, " is a gitlink (a submodule"
						   " commit), not a file");
			else if (l && link_escapes(path, l->s, l->len))
				strbuf_addstr(why, " is a symlink pointing"
						   " outside the tree");
			else
				strbuf_addstr(why, " is a symlink, not a file");
			if (l && l->len) {
				strbuf_addstr(why, " (");
				mime_clean_line(why, l->s,
						l->len > 80 ? 80 : l->len);
				strbuf_addch(why, ')');
			}
		}
		n++;
	}
	if (why && n > 4)
		strbuf_addf(why, " and %d more", n - 4);
	repo_diff_release(&d);
	return n;
}
