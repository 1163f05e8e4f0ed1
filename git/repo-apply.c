/* repo-apply.c: a patch on a tree: clean, conflict or already applied. */
#include "repo-int.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * libgit2's git_apply_to_tree() wants "diff --git" headers and applies a
 * hunk only at the line its header names. Patches in a stable queue come
 * as mails, quilt diffs, and against trees where the context moved. So the
 * diff is parsed here first: each hunk is located in the file as
 * `git apply` does (nearest position where all its context matches, no
 * fuzz), the diff is rewritten with git headers and corrected line numbers,
 * and libgit2 applies that. A hunk that cannot be located is the conflict
 * we report; the same search on the reversed diff tells "already applied".
 */

/* Locating hunks, as `git apply` does ---------------------------------- */

/* 16 bytes: a big file's lines are copied and moved as arrays */
struct fline {
	const char *s;
	uint32_t len;
	uint8_t nl;
	uint8_t diff; /* s points into the diff being applied: copy to keep */
};
#define FLINE_MAX UINT32_MAX

/*
 * What lines point into: a blob read from the tree, or the lines the
 * patches of a run added, copied. Shared by the files (and images) whose
 * lines point into it; gone with the last of them.
 */
struct lbuf {
	int refs;
	git_blob *blob;
	git_odb_object *obj;
	char *own;
};

static struct lbuf *lbuf_new(git_blob *blob, git_odb_object *obj, char *own)
{
	struct lbuf *b = xcalloc(1, sizeof(*b));

	b->refs = 1;
	b->blob = blob;
	b->obj = obj;
	b->own = own;
	return b;
}

static void lbuf_unref(struct lbuf *b)
{
	if (!b || --b->refs)
		return;
	git_blob_free(b->blob);
	git_odb_object_free(b->obj);
	free(b->own);
	free(b);
}

/* A file's lines and the buffers they point into (references held). */
struct lines {
	struct fline *l;
	size_t n, alloc;
	struct lbuf **bufs;
	size_t nbufs;
};

static void lines_add_buf(struct lines *x, struct lbuf *b)
{
	x->bufs = xrealloc(x->bufs, (x->nbufs + 1) * sizeof(*x->bufs));
	x->bufs[x->nbufs++] = b;
}

/* x (emptied first) becomes a copy of y: its lines, y's buffers shared. */
static void lines_copy(struct lines *x, const struct lines *y)
{
	free(x->l);
	x->alloc = y->n ? y->n : 1;
	x->l = xmalloc(x->alloc * sizeof(*x->l));
	if (y->n)
		memcpy(x->l, y->l, y->n * sizeof(*x->l));
	x->n = y->n;
	for (size_t i = 0; i < y->nbufs; i++) {
		y->bufs[i]->refs++;
		lines_add_buf(x, y->bufs[i]);
	}
}

static void lines_release(struct lines *x)
{
	free(x->l);
	for (size_t i = 0; i < x->nbufs; i++)
		lbuf_unref(x->bufs[i]);
	free(x->bufs);
	memset(x, 0, sizeof(*x));
}

/* The image of a file: what the overlay keeps between patches. */
struct repo_image {
	struct lines x;
};

void repo_image_free(struct repo_image *img)
{
	if (!img)
		return;
	lines_release(&img->x);
	free(img);
}

char *repo_image_text(const struct repo_image *img, size_t *len)
{
	const struct lines *x = &img->x;
	size_t n = 0;
	char *buf, *p;

	for (size_t j = 0; j < x->n; j++)
		n += x->l[j].len + (size_t)x->l[j].nl;
	p = buf = xmalloc(n + 1);
	/* lines that follow each other in what they point into (the blob,
	 * the lines added) are copied as one run */
	for (size_t j = 0; j < x->n;) {
		const char *run = x->l[j].s;
		size_t k = j, m = 0;
		while (k < x->n && x->l[k].s == run + m && x->l[k].nl &&
		       x->l[k].s[x->l[k].len] == '\n')
			m += x->l[k++].len + 1;
		if (k == j) { /* a line of its own: its newline added */
			memcpy(p, x->l[j].s, x->l[j].len);
			p += x->l[j].len;
			if (x->l[j].nl)
				*p++ = '\n';
			k = j + 1;
		} else {
			memcpy(p, run, m);
			p += m;
		}
		j = k;
	}
	*p = '\0';
	*len = n;
	return buf;
}

/* A file's lines as the patch so far left them. */
struct simfile {
	char *path;
	int exists;
	unsigned mode;
	struct lines x;
};

struct sim {
	struct repo *r;
	git_tree *tree;
	const struct repo_overlay *ov; /* changes on top of tree, or NULL */
	struct simfile *f;
	size_t n;
};

static void sim_release(struct sim *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->f[i].path);
		lines_release(&s->f[i].x);
	}
	free(s->f);
	memset(s, 0, sizeof(*s));
}

/* 0, or -1 for a line of more than FLINE_MAX bytes */
static int split_lines(struct lines *x, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	/* about a line in 30 bytes in C: few reallocs of a big file */
	x->n = 0;
	x->alloc = len / 24 + 64;
	x->l = xrealloc(x->l, x->alloc * sizeof(*x->l));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (x->n == x->alloc) {
			x->alloc *= 2;
			x->l = xrealloc(x->l, x->alloc * sizeof(*x->l));
		}
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n > FLINE_MAX)
			return -1;
		x->l[x->n].s = p;
		x->l[x->n].len = (uint32_t)n;
		x->l[x->n].nl = nl != NULL;
		x->l[x->n].diff = 0;
		x->n++;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* Overlays: the tree with file updates on top ------------------------- */

/* files read from the checkout: smaller ones are cheaper to inflate
 * than to open below the tree (a syscall per directory) and hash;
 * bigger ones are read from their objects only */
#define CHECKOUT_MIN (32u << 10)
#define CHECKOUT_MAX (64u << 20)

/*
 * The content of blob id, as r's checkout holds it at path when it is
 * that blob (hashed to id): reading and hashing a big file costs a
 * fraction of inflating its object (bench/checks.sh). A file changed
 * there (of another size: not read), being written, or not a regular
 * file hashes otherwise, or is not read: NULL, and the object is read.
 * So is a file under CHECKOUT_MIN (one stat to know). *len gets the
 * length.
 */
static char *checkout_blob(struct repo *r, const char *path, unsigned mode,
			   const git_oid *id, size_t *len)
{
	const char *wd = git_repository_workdir(r->git);
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	git_odb *odb = NULL;
	git_object_t type;
	size_t size = 0;
	git_oid got;
	char *full;
	int fd, known, small;

	if (!wd || (mode & 0170000) != 0100000)
		return NULL;
	/* the size first, without opening it (its content counts only
	 * once its hash is known) */
	full = xstrfmt("%s%s", wd, path);
	small = lstat(full, &st) < 0 || !S_ISREG(st.st_mode) ||
		(unsigned long long)st.st_size < CHECKOUT_MIN;
	free(full);
	if (small)
		return NULL;
	/* O_NONBLOCK: a fifo put there since the lstat does not hang us */
	if ((fd = file_open_beneath(wd, path, O_RDONLY | O_NONBLOCK)) < 0) {
		err_clear();
		return NULL;
	}
	/* the object's size from its header: no inflating it all */
	known = git_repository_odb(&odb, r->git) == 0 &&
		git_odb_read_header(&size, &type, odb, id) == 0;
	git_odb_free(odb);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size > CHECKOUT_MAX ||
	    (known && (unsigned long long)st.st_size != size))
		goto no;
	/* room for the read that finds the end: no realloc */
	strbuf_init(&sb, (size_t)st.st_size + 8192);
	if (strbuf_read_fd(&sb, fd, CHECKOUT_MAX) < 0 ||
	    repo_blob_id(&got, sb.buf, sb.len) < 0 || !git_oid_equal(&got, id))
		goto no;
	close(fd);
	return strbuf_detach(&sb, len);
no:
	close(fd);
	strbuf_release(&sb);
	return NULL;
}


/*
 * The file's current state, read from the tree on first use: *out gets its
 * index in s->f (pointers move as the array grows).
 */
static int sim_get(struct sim *s, const char *path, size_t *out)
{
	git_blob *blob = NULL;
	struct simfile *f;
	git_oid id;
	unsigned mode = 0;

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].path, path)) {
			*out = i;
			return 0;
		}
	s->f = xrealloc(s->f, (s->n + 1) * sizeof(*s->f));
	*out = s->n;
	f = &s->f[s->n++];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	/* the lines an earlier patch of the run left: no blob to read,
	 * no text to split */
	const struct repo_image *img = repo_overlay_image(s->ov, path, &mode);
	if (img) {
		f->mode = mode;
		f->exists = 1;
		lines_copy(&f->x, &img->x);
		return 0;
	}
	if (repo_overlay_view(s->tree, s->ov, path, &id, &mode) != VIEW_FILE)
		return 0; /* absent, or a directory: no file there */
	f->mode = mode;
	size_t len;
	char *text = checkout_blob(s->r, path, mode, &id, &len);
	int split;
	if (text) {
		f->exists = 1;
		split = split_lines(&f->x, text, len);
		lines_add_buf(&f->x, lbuf_new(NULL, NULL, text));
		goto out;
	}
	/* from the disk's database: no copy into the layered one's */
	git_odb_object *obj = NULL;
	if (s->r->disk && git_odb_read(&obj, s->r->disk, &id) == 0 &&
	    git_odb_object_type(obj) == GIT_OBJECT_BLOB) {
		f->exists = 1;
		split = split_lines(&f->x, git_odb_object_data(obj),
				    git_odb_object_size(obj));
		lines_add_buf(&f->x, lbuf_new(NULL, obj, NULL));
		goto out;
	}
	git_odb_object_free(obj);
	err_clear();
	if (git_blob_lookup(&blob, s->r->git, &id) < 0)
		return repo_git_err(-1, "%s: reading the blob", path);
	f->exists = 1;
	split = split_lines(&f->x, git_blob_rawcontent(blob),
			    (size_t)git_blob_rawsize(blob));
	lines_add_buf(&f->x, lbuf_new(blob, NULL, NULL));
out:
	return split < 0 ? err_set(ERR_INVALID, "%s: a line of over 4 GiB",
				   path)
			 : 0;
}

static int match_at(const struct lines *f, const struct fline *pre, size_t np,
		    size_t at)
{
	if (at + np > f->n)
		return 0;
	for (size_t i = 0; i < np; i++) {
		const struct fline *a = &f->l[at + i], *b = &pre[i];
		if (a->len != b->len || a->nl != b->nl ||
		    memcmp(a->s, b->s, a->len))
			return 0;
	}
	return 1;
}

/*
 * git apply's find_pos(): the match nearest to line, forward first at each
 * distance. A hunk starting at line 1 must match at the beginning, one
 * without trailing context at the end (git's match_beginning/match_end).
 */
static long find_pos(const struct lines *f, const struct fline *pre,
		     size_t np, size_t line, int match_beginning, int match_end)
{
	if (np > f->n)
		return -1;
	if (match_beginning || match_end) {
		size_t at = match_beginning ? 0 : f->n - np;
		if (match_end && at + np != f->n)
			return -1;
		return match_at(f, pre, np, at) ? (long)at : -1;
	}
	if (line > f->n)
		line = f->n;
	if (match_at(f, pre, np, line))
		return (long)line;
	for (size_t d = 1;; d++) {
		int any = 0;
		if (line + d + np <= f->n) {
			any = 1;
			if (match_at(f, pre, np, line + d))
				return (long)(line + d);
		}
		if (d <= line) {
			any = 1;
			if (match_at(f, pre, np, line - d))
				return (long)(line - d);
		}
		if (!any)
			return -1;
	}
}

struct failure {
	const struct diff_file *f;
	int hunk; /* 1-based, 0: the file */
	char *why;
};

static int fail(struct failure *x, const struct diff_file *f, int hunk,
		const char *why)
{
	x->f = f;
	x->hunk = hunk;
	x->why = xstrdup(why);
	return 1;
}

/*
 * Applies one file's hunks to its simulated lines; fills each hunk's pos.
 * The lines a hunk keeps stay the file's own (they match), the ones it
 * adds point into the diff (marked: sim_delta() copies them).
 */
static int sim_hunks(struct simfile *simf, struct diff_file *f,
		     struct failure *x, int *offsets)
{
	struct lines *sf = &simf->x;
	struct fline *pre = NULL, *post = NULL;
	int ret = 0;

	for (size_t i = 0; i < f->nhunks; i++) {
		struct diff_hunk *h = &f->hunks[i];
		size_t np = 0, nq = 0, leading = 0, trailing = 0;
		long pos;
		int seen_change = 0;

		pre = xrealloc(pre, (h->nlines + 1) * sizeof(*pre));
		post = xrealloc(post, (h->nlines + 1) * sizeof(*post));
		for (size_t j = 0; j < h->nlines; j++) {
			if (h->lines[j].len > FLINE_MAX) {
				ret = fail(x, f, (int)i + 1,
					   "has a line of over 4 GiB");
				goto out;
			}
			struct fline fl = {h->lines[j].s,
					   (uint32_t)h->lines[j].len,
					   (uint8_t)h->lines[j].nl, 0};
			if (h->lines[j].op != '+')
				pre[np++] = fl;
			if (h->lines[j].op == ' ') {
				if (seen_change)
					trailing++;
				else
					leading++;
			} else {
				seen_change = 1;
				trailing = 0;
			}
		}
		if (np == 0) {
			/* pure addition: new files, or -U0 insertions */
			pos = h->os == 0 ? 0 : h->ns - 1;
			if (pos < 0 || (size_t)pos > sf->n) {
				ret = fail(x, f, (int)i + 1, "does not apply");
				goto out;
			}
		} else {
			size_t line = h->ns ? (size_t)(h->ns - 1) : 0;
			int mb = h->os == 0 || h->os == 1;
			int me = trailing == 0;
			pos = find_pos(sf, pre, np, line, mb, me);
			if (pos < 0) {
				ret = fail(x, f, (int)i + 1, "does not apply");
				goto out;
			}
			if ((size_t)pos != line)
				(*offsets)++;
		}
		h->pos = pos;
		/* the new side: kept lines as the file has them */
		for (size_t j = 0, k = 0; j < h->nlines; j++) {
			const struct diff_line *dl = &h->lines[j];
			if (dl->op == '+')
				post[nq++] = (struct fline){
					dl->s, (uint32_t)dl->len,
					(uint8_t)dl->nl, 1};
			else if (dl->op == ' ')
				post[nq++] = sf->l[(size_t)pos + k++];
			else
				k++;
		}
		/* splice, in place: lines [pos, pos+np) become post */
		size_t n2 = sf->n - np + nq;
		if (n2 > sf->alloc) {
			sf->alloc = n2 > 2 * sf->alloc ? n2 : 2 * sf->alloc;
			sf->l = xrealloc(sf->l, sf->alloc * sizeof(*sf->l));
		}
		if (sf->n - (size_t)pos - np)
			memmove(sf->l + pos + nq, sf->l + pos + np,
				(sf->n - (size_t)pos - np) * sizeof(*sf->l));
		if (nq)
			memcpy(sf->l + pos, post, nq * sizeof(*sf->l));
		sf->n = n2;
	}
out:
	free(pre);
	free(post);
	return ret;
}

/* Is there a file (or symlink) at path once the diff is applied? */
static int file_after(struct sim *s, const char *path)
{
	unsigned mode;

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].path, path))
			return s->f[i].exists;
	return repo_overlay_view(s->tree, s->ov, path, NULL, &mode) ==
	       VIEW_FILE;
}

static int stays(void *s, const char *path)
{
	return file_after(s, path);
}

struct dir_walk {
	struct sim *s;
	const char *dir;
	int found;
};

static int walk_file(const char *root, const git_tree_entry *e, void *payload)
{
	struct dir_walk *w = payload;
	char *path;

	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;
	path = xstrfmt("%s/%s%s", w->dir, root, git_tree_entry_name(e));
	w->found = file_after(w->s, path);
	free(path);
	return w->found ? -1 : 0; /* the first file that stays is enough */
}

/* Does the directory path hold a file once the diff is applied? */
static int dir_has_file(struct sim *s, const char *path)
{
	git_tree_entry *e = NULL;
	git_tree *t = NULL;
	size_t n = strlen(path);
	struct dir_walk w = {s, path, 0};

	for (size_t i = 0; i < s->n; i++)
		if (s->f[i].exists && !strncmp(s->f[i].path, path, n) &&
		    s->f[i].path[n] == '/')
			return 1;
	if (repo_overlay_has_below(s->ov, path, stays, s))
		return 1;
	if (git_tree_entry_bypath(&e, s->tree, path) < 0)
		return 0;
	if (git_tree_entry_type(e) == GIT_OBJECT_TREE &&
	    git_tree_lookup(&t, s->r->git, git_tree_entry_id(e)) == 0) {
		git_tree_walk(t, GIT_TREEWALK_PRE, walk_file, &w);
		git_tree_free(t);
	}
	git_tree_entry_free(e);
	return w.found;
}

/*
 * A path cannot be a file and a directory at once, once the whole diff is
 * applied (git apply removes first, then creates): a file the diff creates
 * must not sit over a directory that keeps files, nor under a file.
 */
static int file_or_dir(struct sim *s, const struct diff_file *f,
		       struct failure *x)
{
	const char *path = f->new_path;
	char *msg;

	if (!path || !(f->added || f->renamed || f->copied))
		return 0;
	for (const char *sl = strchr(path, '/'); sl; sl = strchr(sl + 1, '/')) {
		char *dir = xstrndup(path, (size_t)(sl - path));
		int has = file_after(s, dir);
		if (has) {
			msg = xstrfmt("is under %s, a file: a path cannot be "
				      "both a file and a directory",
				      dir);
			free(dir);
			fail(x, f, 0, msg);
			free(msg);
			return 1;
		}
		free(dir);
	}
	if (dir_has_file(s, path))
		return fail(x, f, 0, "appears as both a file and a directory");
	return 0;
}

/*
 * Tries the whole diff against the tree: 0 when every file and hunk
 * locates (hunk positions filled), 1 with x filled at the first failure,
 * negative on errors.
 */
static int locate(struct repo *r, git_tree *tree,
		  const struct repo_overlay *ov, struct diff_set *d,
		  struct failure *x, int *offsets, struct sim *keep)
{
	struct sim s = {r, tree, ov, NULL, 0};
	int ret = 0;

	*offsets = 0;
	for (size_t i = 0; i < d->n && !ret; i++) {
		struct diff_file *f = &d->f[i];
		struct simfile *src = NULL, *dst = NULL;
		size_t si = 0, di = 0;

		if (f->old_path && (ret = sim_get(&s, f->old_path, &si)) < 0)
			break;
		if (f->new_path && (ret = sim_get(&s, f->new_path, &di)) < 0)
			break;
		if (f->old_path)
			src = &s.f[si];
		if (f->new_path)
			dst = &s.f[di];
		if (f->added) {
			if (dst->exists) {
				ret = fail(x, f, 0, "already exists");
				break;
			}
			src = dst; /* an empty start */
		} else if (!src->exists) {
			ret = fail(x, f, 0, "does not exist in the tree");
			break;
		} else if ((f->renamed || f->copied) && dst != src &&
			   dst->exists) {
			ret = fail(x, f, 0, "already exists");
			break;
		}
		if (f->binary == 2) {
			ret = fail(x, f, 0, "binary change without data");
			break;
		}
		/* a diff without mode lines keeps the file's mode (git apply);
		 * binary patches keep their index line (libgit2 reads its ids) */
		if (!f->added && !f->deleted && !f->binary && !f->old_mode &&
		    !f->new_mode && src->mode) {
			f->old_mode = f->new_mode = src->mode;
			f->keep_mode = 1;
		}
		if (f->binary)
			continue; /* libgit2 checks binary patches itself */
		if ((ret = sim_hunks(src, f, x, offsets)) != 0)
			break;
		if (f->deleted) {
			if (src->x.n) {
				ret = fail(x, f, 0, "deletion leaves lines");
				break;
			}
			src->exists = 0;
			continue;
		}
		if (dst && dst != src) {
			lines_release(&dst->x);
			lines_copy(&dst->x, &src->x);
			dst->exists = 1;
			if (f->renamed) {
				src->exists = 0;
				src->x.n = 0;
			}
		}
		if (f->added)
			dst->exists = 1;
		if (dst)
			dst->mode = f->new_mode	 ? f->new_mode
				    : f->added ? 0100644
					       : src->mode;
	}
	for (size_t i = 0; i < d->n && !ret; i++)
		ret = file_or_dir(&s, &d->f[i], x);
	if (keep && !ret)
		*keep = s; /* the caller releases it */
	else
		sim_release(&s);
	return ret;
}

/*
 * The files a located diff leaves (the sim's) put into delta as their
 * lines (moved out of the sim), the lines the diff adds copied: what
 * libgit2's apply would give, without applying the diff once more,
 * copying each file through a write stream and hashing it, nor the next
 * patch of the run splitting the text again (the checks' cost on big
 * files, bench/checks.sh); the overlay writes a blob when a tree needs
 * it. Text diffs only.
 */
static void sim_delta(struct sim *s, struct repo_overlay *delta)
{
	for (size_t i = 0; i < s->n; i++) {
		struct simfile *f = &s->f[i];
		struct repo_image *img;
		size_t need = 0, nd = 0;
		unsigned mode;
		if (!f->exists) {
			if (repo_overlay_view(s->tree, s->ov, f->path, NULL,
					      &mode) == VIEW_FILE)
				repo_overlay_put(delta, f->path, NULL, 0, 1);
			continue;
		}
		for (size_t j = 0; j < f->x.n; j++)
			if (f->x.l[j].diff) {
				need += f->x.l[j].len + 1;
				nd++;
			}
		if (nd) {
			/* one buffer, each line with its newline: the lines
			 * added together stay one run of text */
			char *buf = xmalloc(need), *p = buf;
			for (size_t j = 0; j < f->x.n; j++) {
				struct fline *l = &f->x.l[j];
				if (!l->diff)
					continue;
				memcpy(p, l->s, l->len);
				p[l->len] = '\n';
				l->s = p;
				l->diff = 0;
				p += l->len + 1;
			}
			lines_add_buf(&f->x, lbuf_new(NULL, NULL, buf));
		}
		img = xcalloc(1, sizeof(*img));
		img->x = f->x;
		memset(&f->x, 0, sizeof(f->x));
		repo_overlay_put_image(delta, f->path, img,
				       f->mode ? f->mode : 0100644);
	}
}

/* Applying ------------------------------------------------------------- */

/*
 * The kernel tree has 78k files: git_apply_to_tree() on it reads all of
 * them into an index and writes every tree back (0.2 to 0.5 s a patch).
 * So libgit2 applies the diff to a small tree holding only the files the
 * diff names, and the result goes into the full tree as updates
 * (git_tree_create_updated(), which rewrites only the trees on those
 * paths). The small trees it writes are a few unreferenced objects.
 */
static int small_tree(struct repo *r, git_tree *base,
		      const struct repo_overlay *ov, const struct diff_set *d,
		      git_tree **out, git_index **had)
{
	git_index *idx = NULL;
	git_oid id;
	int ret;

	*out = NULL;
	*had = NULL;
	if ((ret = git_index_new(&idx)) < 0)
		return repo_git_err(ret, "apply");
	for (size_t i = 0; i < d->n; i++) {
		const char *paths[2] = {d->f[i].old_path, d->f[i].new_path};
		for (int k = 0; k < 2; k++) {
			git_index_entry ie;
			git_oid fid;
			unsigned mode;

			if (!paths[k] || repo_overlay_view(base, ov, paths[k], &fid,
						    &mode) != VIEW_FILE)
				continue;
			memset(&ie, 0, sizeof(ie));
			ie.path = paths[k];
			ie.mode = mode;
			git_oid_cpy(&ie.id, &fid);
			if ((ret = git_index_add(idx, &ie)) < 0)
				goto fail;
		}
	}
	err_clear();
	if ((ret = git_index_write_tree_to(&id, idx, r->git)) < 0 ||
	    (ret = git_tree_lookup(out, r->git, &id)) < 0)
		goto fail;
	*had = idx;
	return 0;
fail:
	git_index_free(idx);
	return repo_git_err(ret, "apply: the files of the diff");
}

/* base + (post - had): the full tree after the diff. */
static int merge_back(struct repo *r, git_tree *base, git_index *had,
		      git_index *post, git_oid *out)
{
	size_t np = git_index_entrycount(post), nh = git_index_entrycount(had);
	git_tree_update *up = xcalloc(np + nh + 1, sizeof(*up));
	size_t n = 0;
	int ret;

	for (size_t i = 0; i < np; i++) {
		const git_index_entry *e = git_index_get_byindex(post, i);
		up[n].action = GIT_TREE_UPDATE_UPSERT;
		git_oid_cpy(&up[n].id, &e->id);
		up[n].filemode = (git_filemode_t)e->mode;
		up[n++].path = e->path;
	}
	for (size_t i = 0; i < nh; i++) {
		const git_index_entry *e = git_index_get_byindex(had, i);
		if (git_index_get_bypath(post, e->path, 0))
			continue;
		up[n].action = GIT_TREE_UPDATE_REMOVE;
		up[n++].path = e->path;
	}
	ret = git_tree_create_updated(out, r->git, base, n, up);
	free(up);
	return ret;
}

struct apply_track {
	const git_diff_delta *delta;
	int hunk;
	char header[128];
};

static int on_delta(const git_diff_delta *delta, void *payload)
{
	struct apply_track *t = payload;
	t->delta = delta;
	t->hunk = 0;
	t->header[0] = '\0';
	return 0;
}

static int on_hunk(const git_diff_hunk *hunk, void *payload)
{
	struct apply_track *t = payload;
	size_t n = hunk->header_len;

	t->hunk++;
	while (n && (hunk->header[n - 1] == '\n' || hunk->header[n - 1] == ' '))
		n--;
	if (n >= sizeof(t->header))
		n = sizeof(t->header) - 1;
	memcpy(t->header, hunk->header, n);
	t->header[n] = '\0';
	return 0;
}

static void set_conflict(struct repo_apply_result *res, const char *file,
			 int hunk, const char *header, const char *why)
{
	res->status = REPO_APPLY_CONFLICT;
	res->file = xstrdup(file);
	res->hunk = hunk;
	if (hunk)
		res->detail = xstrfmt("%s: hunk #%d (%s) %s", file, hunk,
				      header, why);
	else
		res->detail = xstrfmt("%s: %s", file, why);
}

static void conflict_from(struct repo_apply_result *res,
			  const struct failure *x)
{
	const struct diff_file *f = x->f;
	const char *hdr = x->hunk ? f->hunks[x->hunk - 1].header : "";

	set_conflict(res, diff_file_path(f), x->hunk, hdr, x->why);
}

void repo_apply_result_release(struct repo_apply_result *res)
{
	if (!res)
		return;
	free(res->detail);
	free(res->file);
	memset(res, 0, sizeof(*res));
}

/*
 * The diff on tree with ov on top: res says clean, conflict or already;
 * when clean, *post and *had hold the files after and before (in-memory
 * indexes) and *diff what libgit2 applied.
 */
static int apply_core(struct repo *r, git_tree *tree,
		      const struct repo_overlay *ov, const char *diff_text,
		      struct repo_apply_result *res, git_index **post,
		      git_index **had, git_diff **diff,
		      struct repo_overlay *delta)
{
	git_tree *small = NULL;
	git_apply_options ao;
	struct apply_track track = {0};
	struct diff_set fwd = {0}, rev = {0};
	struct failure xf = {0}, xr = {0};
	struct strbuf text = STRBUF_INIT;
	struct sim kept = {0};
	int ret, offsets = 0, roff, text_only = 1;

	memset(res, 0, sizeof(*res));
	*post = *had = NULL;
	*diff = NULL;
	git_apply_options_init(&ao, GIT_APPLY_OPTIONS_VERSION);
	if (!diff_text)
		return err_set(ERR_INVALID, "apply: no diff");
	if ((ret = repo_diff_parse(&fwd, diff_text, strlen(diff_text),
				   "patch")) < 0)
		goto out;
	res->files = (int)fwd.n;
	for (size_t i = 0; i < fwd.n; i++)
		text_only &= !fwd.f[i].binary;
	if ((ret = locate(r, tree, ov, &fwd, &xf, &offsets,
			  delta && text_only ? &kept : NULL)) < 0)
		goto out;
	if (ret == 1) {
		/* Does it apply in reverse? Then it is already there. */
		repo_diff_reverse(&rev, &fwd);
		if ((ret = locate(r, tree, ov, &rev, &xr, &roff, NULL)) < 0)
			goto out;
		if (ret == 0) {
			res->status = REPO_APPLY_ALREADY;
			res->detail = xstrdup("already applied: the diff "
					      "applies in reverse");
		} else {
			conflict_from(res, &xf);
		}
		ret = 0;
		goto out;
	}
	res->offsets = offsets;
	if (delta && text_only) {
		/* the located files are the result */
		sim_delta(&kept, delta);
		res->status = REPO_APPLY_CLEAN;
		ret = 0;
		goto out;
	}
	repo_diff_emit(&text, &fwd);
	if ((ret = git_diff_from_buffer(diff, text.buf, text.len)) < 0) {
		ret = repo_git_err(ERR_INVALID, "patch");
		goto out;
	}
	ao.delta_cb = on_delta;
	ao.hunk_cb = on_hunk;
	ao.payload = &track;
	if ((ret = small_tree(r, tree, ov, &fwd, &small, had)) < 0)
		goto out;
	ret = git_apply_to_tree(post, r->git, small, *diff, &ao);
	if (ret == GIT_EAPPLYFAIL || ret == GIT_ENOTFOUND) {
		/* located above but refused by libgit2: name what it was at */
		const git_error *e = git_error_last();
		const char *file =
			track.delta ? (track.delta->new_file.path
					       ? track.delta->new_file.path
					       : track.delta->old_file.path)
				    : "?";
		char *why = xstrfmt("does not apply (%s)",
				    e && e->message ? e->message : "libgit2");
		set_conflict(res, file, track.hunk, track.header, why);
		free(why);
		ret = 0;
		goto out;
	}
	if (ret < 0) {
		ret = repo_git_err(ret, "apply");
		goto out;
	}
	res->status = REPO_APPLY_CLEAN;
	ret = 0;
out:
	if (ret < 0 || res->status != REPO_APPLY_CLEAN) {
		git_index_free(*post);
		git_index_free(*had);
		git_diff_free(*diff);
		*post = *had = NULL;
		*diff = NULL;
	}
	free(xf.why);
	free(xr.why);
	sim_release(&kept); /* its lines point into fwd */
	repo_diff_release(&fwd);
	repo_diff_release(&rev);
	strbuf_release(&text);
	git_tree_free(small);
	return ret;
}

int repo_apply(struct repo *r, const char *base, const char *diff_text,
	       char new_tree_hex[REPO_HEX_SIZE], struct repo_apply_result *res)
{
	git_object *tree = NULL;
	git_diff *diff = NULL;
	git_index *post = NULL, *had = NULL;
	git_oid out;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!diff_text)
		return err_set(ERR_INVALID, "apply: no diff");
	if ((ret = repo_lookup(r, &tree, base, GIT_OBJECT_TREE)) < 0)
		return ret;
	ret = apply_core(r, (git_tree *)tree, NULL, diff_text, res, &post,
			 &had, &diff, NULL);
	if (ret < 0 || res->status != REPO_APPLY_CLEAN)
		goto out;
	if (merge_back(r, (git_tree *)tree, had, post, &out) < 0) {
		/* a file that became a directory (or back): the long way */
		git_index_free(post);
		post = NULL;
		if ((ret = git_apply_to_tree(&post, r->git, (git_tree *)tree,
					     diff, NULL)) < 0 ||
		    (ret = git_index_write_tree_to(&out, post, r->git)) < 0) {
			ret = repo_git_err(ret, "apply: writing the tree");
			res->status = REPO_APPLY_CONFLICT;
			goto out;
		}
	}
	git_oid_tostr(new_tree_hex, REPO_HEX_SIZE, &out);
out:
	git_index_free(post);
	git_index_free(had);
	git_diff_free(diff);
	git_object_free(tree);
	return ret;
}

int repo_apply_overlay(struct repo *r, const char *base,
		       const struct repo_overlay *ov, const char *diff_text,
		       struct repo_overlay *delta,
		       struct repo_apply_result *res)
{
	git_object *tree = NULL;
	git_diff *diff = NULL;
	git_index *post = NULL, *had = NULL;
	int ret;

	repo_overlay_release(delta);
	memset(res, 0, sizeof(*res));
	if (!diff_text)
		return err_set(ERR_INVALID, "apply: no diff");
	if ((ret = repo_lookup(r, &tree, base, GIT_OBJECT_TREE)) < 0)
		return ret;
	ret = apply_core(r, (git_tree *)tree, ov, diff_text, res, &post, &had,
			 &diff, delta);
	if (ret == 0 && res->status == REPO_APPLY_CLEAN && post) {
		/* post - had, as merge_back() writes it into a tree */
		for (size_t i = 0; i < git_index_entrycount(post); i++) {
			const git_index_entry *e =
				git_index_get_byindex(post, i);
			repo_overlay_put(delta, e->path, &e->id, e->mode, 0);
		}
		for (size_t i = 0; i < git_index_entrycount(had); i++) {
			const git_index_entry *e =
				git_index_get_byindex(had, i);
			if (!git_index_get_bypath(post, e->path, 0))
				repo_overlay_put(delta, e->path, NULL, 0, 1);
		}
	}
	git_index_free(post);
	git_index_free(had);
	git_diff_free(diff);
	git_object_free(tree);
	return ret;
}

