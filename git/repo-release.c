/* repo-release.c: what a release writes and shows: a file put in a tree, an annotated tag, the diffstat and the diff between two commits. */
#include "repo-int.h"
#include "err.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int repo_tree_put_file(struct repo *r, const char *base, const char *path,
		       const char *data, size_t len,
		       char out_hex[REPO_HEX_SIZE])
{
	git_object *tree = NULL;
	git_tree_update up = { 0 };
	git_oid blob, out;
	git_tree_entry *e = NULL;
	int ret;

	if ((ret = repo_lookup(r, &tree, base, GIT_OBJECT_TREE)) < 0)
		return ret;
	if ((ret = git_blob_create_from_buffer(&blob, r->git, data, len)) < 0) {
		ret = repo_git_err(ret, "writing %s", path);
		goto out;
	}
	up.action = GIT_TREE_UPDATE_UPSERT;
	up.id = blob;
	up.path = path;
	/* the file keeps its mode (an executable stays one) */
	up.filemode = git_tree_entry_bypath(&e, (git_tree *)tree, path) == 0
			      ? git_tree_entry_filemode(e)
			      : GIT_FILEMODE_BLOB;
	if ((ret = git_tree_create_updated(&out, r->git, (git_tree *)tree, 1,
					   &up)) < 0) {
		ret = repo_git_err(ret, "writing the tree with %s", path);
		goto out;
	}
	git_oid_tostr(out_hex, REPO_HEX_SIZE, &out);
	ret = 0;
out:
	git_tree_entry_free(e);
	git_object_free(tree);
	return ret;
}

int repo_tag_create(struct repo *r, const char *name, const char *commit_hex,
		    const char *tagger_name, const char *tagger_email,
		    const char *message, int force)
{
	git_object *commit = NULL;
	git_signature *sig = NULL;
	git_oid id;
	int ret;

	if ((ret = repo_lookup(r, &commit, commit_hex, GIT_OBJECT_COMMIT)) < 0)
		return ret;
	if ((ret = git_signature_now(&sig, tagger_name, tagger_email)) < 0) {
		ret = repo_git_err(ERR_INVALID, "tagger '%s <%s>'", tagger_name,
				   tagger_email);
		goto out;
	}
	ret = git_tag_create(&id, r->git, name, commit, sig, message, force);
	if (ret == GIT_EEXISTS)
		ret = err_set(ERR_EXISTS, "tag %s exists already", name);
	else if (ret < 0)
		ret = repo_git_err(ret, "tagging %s", name);
out:
	git_signature_free(sig);
	git_object_free(commit);
	return ret < 0 ? ret : 0;
}

/* The diff of the trees of two commits, renames found as `git diff` finds them. */
static int tree_diff(struct repo *r, const char *from, const char *to,
		     git_diff **diff)
{
	git_object *a = NULL, *b = NULL;
	git_diff_options o;
	git_diff_find_options f;
	int ret;

	*diff = NULL;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.flags = GIT_DIFF_SHOW_BINARY;
	git_diff_find_options_init(&f, GIT_DIFF_FIND_OPTIONS_VERSION);
	f.flags = GIT_DIFF_FIND_RENAMES;
	if ((ret = repo_lookup(r, &a, from, GIT_OBJECT_TREE)) < 0 ||
	    (ret = repo_lookup(r, &b, to, GIT_OBJECT_TREE)) < 0)
		goto out;
	if ((ret = git_diff_tree_to_tree(diff, r->git, (git_tree *)a,
					 (git_tree *)b, &o)) < 0 ||
	    (ret = git_diff_find_similar(*diff, &f)) < 0)
		ret = repo_git_err(ret, "diff %.12s..%.12s", from, to);
out:
	if (ret < 0) {
		git_diff_free(*diff);
		*diff = NULL;
	}
	git_object_free(a);
	git_object_free(b);
	return ret < 0 ? ret : 0;
}

int repo_diff_text(struct repo *r, const char *from, const char *to,
		   struct strbuf *out)
{
	git_diff *diff = NULL;
	git_buf buf = { 0 };
	int ret;

	if ((ret = tree_diff(r, from, to, &diff)) < 0)
		return ret;
	if ((ret = git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH)) < 0)
		ret = repo_git_err(ret, "diff %.12s..%.12s", from, to);
	else
		strbuf_add(out, buf.ptr, buf.size);
	git_buf_dispose(&buf);
	git_diff_free(diff);
	return ret < 0 ? ret : 0;
}

/* ---- git diff --stat, as git's diff.c show_stats() prints it ---------- */

struct stat_file {
	struct strbuf name; /* as git prints it: quoted, "{a => b}" */
	size_t width;       /* its columns */
	unsigned long long added, deleted; /* lines, or bytes when binary */
	int binary;
	char summary[16];   /* "create", "delete" or "" */
	unsigned mode;
	char *path;         /* for the summary line */
};

static size_t utf8_columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* git's quote_c_style() with core.quotePath: 1 when s needed quoting. */
static int quote_c(struct strbuf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int need = 0;

	for (; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f)
			need = 1;
	if (!need) {
		if (out)
			strbuf_addstr(out, s);
		return 0;
	}
	if (!out)
		return 1;
	strbuf_addch(out, '"');
	for (p = (const unsigned char *)s; *p; p++) {
		const char *esc = strchr("\a\b\t\n\v\f\r\"\\", *p);
		if (*p && esc) {
			strbuf_addch(out, '\\');
			strbuf_addch(out, "abtnvfr\"\\"[esc - "\a\b\t\n\v\f\r\"\\"]);
		} else if (*p < 0x20 || *p >= 0x7f) {
			strbuf_addf(out, "\\%03o", *p);
		} else {
			strbuf_addch(out, (char)*p);
		}
	}
	strbuf_addch(out, '"');
	return 1;
}

/* git's pprint_rename(): "dir/{a => b}/file". */
static void rename_name(struct strbuf *name, const char *a, const char *b)
{
	long len_a = (long)strlen(a), len_b = (long)strlen(b);
	long pfx = 0, sfx = 0, adj, a_mid, b_mid;
	const char *o = a, *n = b;

	if (quote_c(NULL, a) || quote_c(NULL, b)) {
		quote_c(name, a);
		strbuf_addstr(name, " => ");
		quote_c(name, b);
		return;
	}
	while (*o && *n && *o == *n) {
		if (*o == '/')
			pfx = o - a + 1;
		o++;
		n++;
	}
	o = a + len_a;
	n = b + len_b;
	adj = pfx ? 1 : 0;
	while (a + pfx - adj <= o && b + pfx - adj <= n && *o == *n) {
		if (*o == '/')
			sfx = len_a - (o - a);
		o--;
		n--;
	}
	a_mid = len_a - pfx - sfx;
	b_mid = len_b - pfx - sfx;
	if (a_mid < 0)
		a_mid = 0;
	if (b_mid < 0)
		b_mid = 0;
	if (pfx + sfx) {
		strbuf_add(name, a, (size_t)pfx);
		strbuf_addch(name, '{');
	}
	strbuf_add(name, a + pfx, (size_t)a_mid);
	strbuf_addstr(name, " => ");
	strbuf_add(name, b + pfx, (size_t)b_mid);
	if (pfx + sfx) {
		strbuf_addch(name, '}');
		strbuf_add(name, a + len_a - sfx, (size_t)sfx);
	}
}

static int decimal_width(unsigned long long n)
{
	int w = 1;

	for (; n >= 10; n /= 10)
		w++;
	return w;
}

/* "as if the allotted width is one column shorter, then add 1" (git) */
static unsigned long long scale_linear(unsigned long long it, long width,
				       unsigned long long max_change)
{
	if (!it)
		return 0;
	return 1 + (it * (unsigned long long)(width - 1) / max_change);
}

static void stat_lines(struct strbuf *out, struct stat_file *v, size_t n,
		       long width)
{
	unsigned long long max_change = 0, adds = 0, dels = 0;
	long max_len = 0, number_width = 0, bin_width = 0, name_width,
	     graph_width;

	for (size_t i = 0; i < n; i++) {
		unsigned long long change = v[i].added + v[i].deleted;
		if ((long)v[i].width > max_len)
			max_len = (long)v[i].width;
		if (v[i].binary) {
			long w = 14 + decimal_width(v[i].added) +
				 decimal_width(v[i].deleted);
			if (w > bin_width)
				bin_width = w;
			number_width = 3; /* counts align with "Bin" */
			continue;
		}
		if (change > max_change)
			max_change = change;
	}
	if (decimal_width(max_change) > number_width)
		number_width = decimal_width(max_change);
	if (width < 16 + 6 + number_width)
		width = 16 + 6 + number_width;
	graph_width = (long)max_change + 4 > bin_width ? (long)max_change
						       : bin_width - 4;
	name_width = max_len;
	if (name_width + number_width + 6 + graph_width > width) {
		if (graph_width > width * 3 / 8 - number_width - 6) {
			graph_width = width * 3 / 8 - number_width - 6;
			if (graph_width < 6)
				graph_width = 6;
		}
		if (name_width > width - number_width - 6 - graph_width)
			name_width = width - number_width - 6 - graph_width;
		else
			graph_width = width - number_width - 6 - name_width;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = v[i].name.buf, *prefix = "";
		long len = name_width, name_len = (long)v[i].width, padding;
		unsigned long long add = v[i].added, del = v[i].deleted;

		if (name_width < name_len) {
			const char *slash;
			prefix = "...";
			len -= 3;
			if (len < 0)
				len = 0;
			while (name_len > len) {
				/* one character off the front */
				name++;
				while (((unsigned char)*name & 0xc0) == 0x80)
					name++;
				name_len--;
			}
			if ((slash = strchr(name, '/')))
				name = slash;
		}
		padding = len - (long)utf8_columns(name);
		if (padding < 0)
			padding = 0;
		if (v[i].binary) {
			strbuf_addf(out, " %s%s%*s | %*s", prefix, name,
				    (int)padding, "", (int)number_width, "Bin");
			if (!add && !del)
				strbuf_addch(out, '\n');
			else
				strbuf_addf(out, " %llu -> %llu bytes\n", del,
					    add);
			continue;
		}
		adds += add;
		dels += del;
		if (graph_width <= (long)max_change) {
			unsigned long long total =
				scale_linear(add + del, graph_width, max_change);
			if (total < 2 && add && del)
				total = 2;
			if (add < del) {
				add = scale_linear(add, graph_width, max_change);
				del = total - add;
			} else {
				del = scale_linear(del, graph_width, max_change);
				add = total - del;
			}
		}
		strbuf_addf(out, " %s%s%*s | %*llu%s", prefix, name,
			    (int)padding, "", (int)number_width,
			    v[i].added + v[i].deleted,
			    v[i].added + v[i].deleted ? " " : "");
		for (unsigned long long k = 0; k < add; k++)
			strbuf_addch(out, '+');
		for (unsigned long long k = 0; k < del; k++)
			strbuf_addch(out, '-');
		strbuf_addch(out, '\n');
	}
	if (!n) {
		strbuf_addstr(out, " 0 files changed\n");
		return;
	}
	strbuf_addf(out, n == 1 ? " %zu file changed" : " %zu files changed", n);
	if (adds || !dels)
		strbuf_addf(out, adds == 1 ? ", %llu insertion(+)"
					   : ", %llu insertions(+)",
			    adds);
	if (dels || !adds)
		strbuf_addf(out, dels == 1 ? ", %llu deletion(-)"
					   : ", %llu deletions(-)",
			    dels);
	strbuf_addch(out, '\n');
}

int repo_diffstat(struct repo *r, const char *from, const char *to,
		  int width, int summary, struct strbuf *out)
{
	git_diff *diff = NULL;
	struct stat_file *v = NULL;
	size_t n = 0;
	int ret;

	if ((ret = tree_diff(r, from, to, &diff)) < 0)
		return ret;
	n = git_diff_num_deltas(diff);
	v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_patch *p = NULL;
		size_t ctx, add, del;

		strbuf_init(&v[i].name, 0);
		if (d->status == GIT_DELTA_RENAMED)
			rename_name(&v[i].name, d->old_file.path,
				    d->new_file.path);
		else
			quote_c(&v[i].name, d->new_file.path);
		v[i].width = utf8_columns(v[i].name.buf);
		v[i].path = xstrdup(d->new_file.path);
		v[i].mode = d->status == GIT_DELTA_DELETED ? d->old_file.mode
							   : d->new_file.mode;
		if (d->status == GIT_DELTA_ADDED)
			strcpy(v[i].summary, "create");
		else if (d->status == GIT_DELTA_DELETED)
			strcpy(v[i].summary, "delete");
		if ((ret = git_patch_from_diff(&p, diff, i)) < 0) {
			ret = repo_git_err(ret, "diffstat of %s", d->new_file.path);
			goto out;
		}
		if (d->flags & GIT_DIFF_FLAG_BINARY) {
			v[i].binary = 1;
			v[i].added = d->status == GIT_DELTA_DELETED
					     ? 0
					     : (unsigned long long)d->new_file.size;
			v[i].deleted = d->status == GIT_DELTA_ADDED
					       ? 0
					       : (unsigned long long)d->old_file.size;
		} else if ((ret = git_patch_line_stats(&ctx, &add, &del, p)) ==
			   0) {
			v[i].added = add;
			v[i].deleted = del;
		}
		git_patch_free(p);
		if (ret < 0) {
			ret = repo_git_err(ret, "diffstat of %s", d->new_file.path);
			goto out;
		}
	}
	stat_lines(out, v, n, width > 0 ? width : 80);
	/* git format-patch's --summary: new and deleted files */
	for (size_t i = 0; summary && i < n; i++)
		if (*v[i].summary) {
			struct strbuf q = STRBUF_INIT;
			quote_c(&q, v[i].path);
			strbuf_addf(out, " %s mode %06o %s\n", v[i].summary,
				    v[i].mode, q.buf);
			strbuf_release(&q);
		}
	ret = 0;
out:
	for (size_t i = 0; i < n; i++) {
		strbuf_release(&v[i].name);
		free(v[i].path);
	}
	free(v);
	git_diff_free(diff);
	return ret;
}
