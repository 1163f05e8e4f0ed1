/* repo-overlay.c: the checks' overlay: a tree's changes kept as a sorted list on top of it, read, merged and written as a tree. */
#include "repo-int.h"
#include "err.h"
#include "strbuf.h"

#include <git2/sys/odb_backend.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first entry whose path is not below key[0..len) (strcmp order). */
static size_t ov_lower(const struct repo_overlay *ov, const char *key,
		       size_t len)
{
	size_t lo = 0, hi = ov->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *p = ov->e[mid].path;
		int c = strncmp(p, key, len);
		if (c == 0 && p[len])
			c = 1; /* longer: after the exact key */
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry for exactly key[0..len), or NULL. */
static const struct repo_overlay_entry *repo_overlay_get(const struct repo_overlay *ov,
					       const char *key, size_t len)
{
	size_t i;

	if (!ov || !ov->n)
		return NULL;
	i = ov_lower(ov, key, len);
	if (i < ov->n && !strncmp(ov->e[i].path, key, len) &&
	    !ov->e[i].path[len])
		return &ov->e[i];
	return NULL;
}

/* Inserts or replaces (path owned by the caller, copied). */
void repo_overlay_put(struct repo_overlay *ov, const char *path,
		   const git_oid *id, unsigned mode, int gone)
{
	size_t len = strlen(path), i = ov_lower(ov, path, len);
	struct repo_overlay_entry *e;

	if (i < ov->n && !strcmp(ov->e[i].path, path)) {
		e = &ov->e[i];
	} else {
		if (ov->n == ov->alloc) {
			ov->alloc = ov->alloc ? 2 * ov->alloc : 64;
			ov->e = xrealloc(ov->e, ov->alloc * sizeof(*ov->e));
		}
		memmove(&ov->e[i + 1], &ov->e[i],
			(ov->n - i) * sizeof(*ov->e));
		ov->n++;
		e = &ov->e[i];
		memset(e, 0, sizeof(*e));
		e->path = xstrdup(path);
	}
	memset(e->id, 0, sizeof(e->id));
	if (id)
		memcpy(e->id, id->id, sizeof(e->id));
	e->mode = mode;
	e->gone = gone;
	repo_image_free(e->image);
	e->image = NULL;
	free(e->text);
	e->text = NULL;
	e->len = 0;
	e->pending = 0;
}

void repo_overlay_put_image(struct repo_overlay *ov, const char *path,
			    struct repo_image *img, unsigned mode)
{
	struct repo_overlay_entry *e;

	repo_overlay_put(ov, path, NULL, mode, 0);
	e = (struct repo_overlay_entry *)repo_overlay_get(ov, path,
							  strlen(path));
	e->image = img;
	e->pending = 1;
}

const struct repo_image *repo_overlay_image(const struct repo_overlay *ov,
					    const char *path, unsigned *mode)
{
	const struct repo_overlay_entry *o =
		repo_overlay_get(ov, path, strlen(path));

	if (!o || o->gone || !o->image)
		return NULL;
	*mode = o->mode;
	return o->image;
}

/*
 * The entry's text, made from its image on first use: a cache like the
 * id, so a const overlay's entry gets it too. NULL: the entry has none.
 */
static const char *ov_text(const struct repo_overlay_entry *ce)
{
	struct repo_overlay_entry *e = (struct repo_overlay_entry *)ce;

	if (!e->text && e->image)
		e->text = repo_image_text(e->image, &e->len);
	return e->text;
}

/* The text made for a hash goes once the image can make it again. */
static void ov_text_drop(struct repo_overlay_entry *e)
{
	if (!e->image)
		return;
	free(e->text);
	e->text = NULL;
	e->len = 0;
}

void repo_overlay_release(struct repo_overlay *ov)
{
	if (!ov)
		return;
	for (size_t i = 0; i < ov->n; i++) {
		free(ov->e[i].path);
		repo_image_free(ov->e[i].image);
		free(ov->e[i].text);
	}
	free(ov->e);
	memset(ov, 0, sizeof(*ov));
}

void repo_overlay_merge(struct repo_overlay *ov, struct repo_overlay *delta)
{
	for (size_t i = 0; i < delta->n; i++) {
		struct repo_overlay_entry *d = &delta->e[i];
		git_oid id;
		memcpy(id.id, d->id, sizeof(d->id));
		repo_overlay_put(ov, d->path, &id, d->mode, d->gone);
		if (d->text || d->image) {
			/* the lines and the text move with it */
			struct repo_overlay_entry *e =
				(struct repo_overlay_entry *)repo_overlay_get(
					ov, d->path, strlen(d->path));
			e->image = d->image;
			e->text = d->text;
			e->len = d->len;
			e->pending = d->pending;
			d->image = NULL;
			d->text = NULL;
		}
	}
	repo_overlay_release(delta);
}

/*
 * Writes the blob of an entry whose id is pending. The overlay is a cache
 * of what its files are: writing the id does not change what it says,
 * so a const overlay's entry gets it too.
 */
static int ov_hash(git_repository *repo, const struct repo_overlay_entry *ce)
{
	struct repo_overlay_entry *e = (struct repo_overlay_entry *)ce;
	git_odb *odb = NULL;
	git_oid id;
	int ret;

	if (!e->pending)
		return 0;
	ov_text(e);
	if ((ret = git_repository_odb(&odb, repo)) < 0 ||
	    (ret = git_odb_write(&id, odb, e->text ? e->text : "", e->len,
				 GIT_OBJECT_BLOB)) < 0) {
		git_odb_free(odb);
		return repo_git_err(ret, "%s: writing the blob", e->path);
	}
	git_odb_free(odb);
	memcpy(e->id, id.id, sizeof(e->id));
	e->pending = 0;
	ov_text_drop(e);
	return 0;
}

int repo_blob_id(git_oid *out, const char *text, size_t len)
{
	char head[64];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int hl = snprintf(head, sizeof(head), "blob %zu", len) + 1;
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) &&
		 EVP_DigestUpdate(ctx, head, (size_t)hl) &&
		 EVP_DigestUpdate(ctx, text, len) &&
		 EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 20;

	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	memcpy(out->id, md, 20);
	return 0;
}

/*
 * ov_hash() of every pending entry, for a tree. With objects in memory
 * (the checks) the blob goes straight into the memory store, its id
 * hashed by OpenSSL (repo_blob_id()).
 */
static int ov_hash_all(struct repo *r, const struct repo_overlay *ov)
{
	int ret = 0;

	for (size_t i = 0; ov && i < ov->n && ret == 0; i++) {
		struct repo_overlay_entry *e =
			(struct repo_overlay_entry *)&ov->e[i];
		git_oid id;

		if (!e->pending)
			continue;
		if (!r->mem) {
			ret = ov_hash(r->git, e);
			continue;
		}
		ov_text(e);
		if (repo_blob_id(&id, e->text, e->len) < 0) {
			ret = ov_hash(r->git, e); /* the long way */
			continue;
		}
		if ((ret = r->mem->write(r->mem, &id, e->text, e->len,
					 GIT_OBJECT_BLOB)) < 0) {
			ret = repo_git_err(ret, "%s: writing the blob", e->path);
			break;
		}
		memcpy(e->id, id.id, sizeof(e->id));
		e->pending = 0;
		ov_text_drop(e);
	}
	return ret;
}

/* The text of path when the overlay holds it, or NULL (mode filled). */
static const char *repo_overlay_text(const struct repo_overlay *ov,
				     const char *path, size_t *len,
				     unsigned *mode)
{
	const struct repo_overlay_entry *o =
		repo_overlay_get(ov, path, strlen(path));

	if (!o || o->gone || !ov_text(o))
		return NULL;
	*len = o->len;
	*mode = o->mode;
	return o->text;
}

/* Does the overlay hold a file (not removed) below dir/? */
int repo_overlay_has_below(const struct repo_overlay *ov, const char *dir,
			int (*keep)(void *, const char *), void *arg)
{
	size_t n = strlen(dir);
	char *key;
	size_t i;
	int found = 0;

	if (!ov || !ov->n)
		return 0;
	key = xstrfmt("%s/", dir);
	for (i = ov_lower(ov, key, n + 1);
	     !found && i < ov->n && !strncmp(ov->e[i].path, key, n + 1); i++)
		found = !ov->e[i].gone && (!keep || keep(arg, ov->e[i].path));
	free(key);
	return found;
}

/*
 * What the tree with the overlay on top has at path: VIEW_FILE (id, when
 * not NULL, and mode filled), VIEW_DIR or VIEW_NONE.
 */
int repo_overlay_view(git_tree *tree, const struct repo_overlay *ov,
		      const char *path, git_oid *id, unsigned *mode)
{
	const struct repo_overlay_entry *o = repo_overlay_get(ov, path, strlen(path));
	git_tree_entry *e = NULL;
	int what = VIEW_NONE;

	if (o && !o->gone) {
		if (id && ov_hash(git_tree_owner(tree), o) < 0)
			return VIEW_NONE;
		if (id)
			memcpy(id->id, o->id, sizeof(o->id));
		*mode = o->mode;
		return VIEW_FILE;
	}
	/* under a path the overlay made a file: nothing there */
	for (const char *sl = strchr(path, '/'); ov && sl;
	     sl = strchr(sl + 1, '/')) {
		const struct repo_overlay_entry *a =
			repo_overlay_get(ov, path, (size_t)(sl - path));
		if (a && !a->gone)
			return VIEW_NONE;
	}
	if (git_tree_entry_bypath(&e, tree, path) == 0) {
		if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
			what = VIEW_DIR;
		} else if (!o) { /* a file the overlay removed is gone */
			if (id)
				git_oid_cpy(id, git_tree_entry_id(e));
			*mode = (unsigned)git_tree_entry_filemode(e);
			what = VIEW_FILE;
		}
		git_tree_entry_free(e);
	}
	if (what == VIEW_NONE && repo_overlay_has_below(ov, path, NULL, NULL))
		what = VIEW_DIR;
	return what;
}

/* ov's entries as tree updates, appended to up[*n]. */
static void ov_updates(const struct repo_overlay *ov, git_tree_update *up,
		       size_t *n)
{
	for (size_t i = 0; ov && i < ov->n; i++) {
		git_tree_update *u = &up[(*n)++];
		u->action = ov->e[i].gone ? GIT_TREE_UPDATE_REMOVE
					  : GIT_TREE_UPDATE_UPSERT;
		memcpy(u->id.id, ov->e[i].id, sizeof(ov->e[i].id));
		u->filemode = (git_filemode_t)ov->e[i].mode;
		u->path = ov->e[i].path;
	}
}

/* The long way, for a file that became a directory or back: an index. */
static int tree_by_index(struct repo *r, git_tree *tree,
			 const struct repo_overlay *ov, git_oid *out)
{
	git_index *idx = NULL;
	int ret;

	if ((ret = git_index_new(&idx)) < 0 ||
	    (ret = git_index_read_tree(idx, tree)) < 0)
		goto out;
	for (size_t i = 0; i < ov->n && ret >= 0; i++) {
		const struct repo_overlay_entry *o = &ov->e[i];
		git_index_entry ie;
		if (o->gone) {
			ret = git_index_remove_bypath(idx, o->path);
			continue;
		}
		memset(&ie, 0, sizeof(ie));
		ie.path = o->path;
		ie.mode = o->mode;
		memcpy(ie.id.id, o->id, sizeof(o->id));
		ret = git_index_add(idx, &ie);
	}
	if (ret >= 0)
		ret = git_index_write_tree_to(out, idx, r->git);
out:
	git_index_free(idx);
	return ret;
}

int repo_overlay_tree(struct repo *r, const char *base,
		      const struct repo_overlay *ov,
		      const struct repo_overlay *delta,
		      char hex[REPO_HEX_SIZE])
{
	git_object *tree = NULL;
	struct repo_overlay all = {0};
	git_tree_update *up;
	size_t n = 0;
	git_oid out;
	int ret;

	if ((ret = repo_lookup(r, &tree, base, GIT_OBJECT_TREE)) < 0)
		return ret;
	if ((ret = ov_hash_all(r, ov)) < 0 ||
	    (ret = ov_hash_all(r, delta)) < 0) {
		git_object_free(tree);
		return ret;
	}
	/* delta's entries win over ov's for the same path */
	for (size_t k = 0; k < 2; k++) {
		const struct repo_overlay *o = k ? delta : ov;
		for (size_t i = 0; o && i < o->n; i++) {
			git_oid id;
			memcpy(id.id, o->e[i].id, sizeof(id.id));
			repo_overlay_put(&all, o->e[i].path, &id, o->e[i].mode,
			       o->e[i].gone);
		}
	}
	up = xcalloc(all.n + 1, sizeof(*up));
	ov_updates(&all, up, &n);
	if (git_tree_create_updated(&out, r->git, (git_tree *)tree, n, up) <
		    0 &&
	    (ret = tree_by_index(r, (git_tree *)tree, &all, &out)) < 0)
		ret = repo_git_err(ret, "writing the tree");
	else
		git_oid_tostr(hex, REPO_HEX_SIZE, &out);
	free(up);
	repo_overlay_release(&all);
	git_object_free(tree);
	return ret < 0 ? ret : 0;
}

int repo_paths_exist_overlay(struct repo *r, const char *base,
			     const struct repo_overlay *ov,
			     const char *const *paths, size_t n,
			     unsigned char *exists)
{
	git_object *tree = NULL;
	int ret;

	if ((ret = repo_lookup(r, &tree, base, GIT_OBJECT_TREE)) < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		unsigned mode;
		exists[i] = repo_overlay_view((git_tree *)tree, ov, paths[i],
					      NULL, &mode) != VIEW_NONE;
	}
	git_object_free(tree);
	return 0;
}

int repo_file_overlay(struct repo *r, const char *base,
		      const struct repo_overlay *ov, const char *path,
		      struct strbuf *out)
{
	git_object *tree = NULL;
	git_blob *blob = NULL;
	git_oid id;
	unsigned mode = 0;
	size_t len;
	const char *text = repo_overlay_text(ov, path, &len, &mode);
	int ret;

	if (text) {
		strbuf_add(out, text, len);
		return 1;
	}
	if ((ret = repo_lookup(r, &tree, base, GIT_OBJECT_TREE)) < 0)
		return ret;
	if (repo_overlay_view((git_tree *)tree, ov, path, &id, &mode) != VIEW_FILE) {
		ret = 0;
	} else if (git_blob_lookup(&blob, r->git, &id) < 0) {
		ret = repo_git_err(-1, "%s: reading the blob", path);
	} else {
		strbuf_add(out, git_blob_rawcontent(blob),
			   (size_t)git_blob_rawsize(blob));
		ret = 1;
	}
	git_blob_free(blob);
	git_object_free(tree);
	return ret;
}

