/* repo-paths.c: the tree as evidence for the checks: which paths it has, a diff taken back out of it. */
#include "repo-int.h"

#include "err.h"

#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <stdlib.h>
#include <string.h>

/*
 * The repository's own objects, read through a backend of a new object
 * database whose writes go to memory. Not the mempack added to the
 * repository's database: there, every write of a new object first asks
 * each backend whether it has it (a failed utimensat per object) and then
 * rescans the pack directory (git_odb_refresh) before writing: 7 times a
 * patch, more than half of what checking a queue cost. Here a new object
 * is looked for once, without a rescan (GIT_ODB_LOOKUP_NO_REFRESH).
 */
struct disk_backend {
	git_odb_backend parent;
	git_odb *disk; /* the repository's database, held */
};

static int copy_out(git_odb_backend *b, git_odb_object *o, void **data,
		    size_t *len, git_object_t *type)
{
	size_t n = git_odb_object_size(o);
	void *buf = git_odb_backend_data_alloc(b, n ? n : 1);

	if (!buf) {
		git_odb_object_free(o);
		return GIT_ERROR;
	}
	memcpy(buf, git_odb_object_data(o), n);
	*data = buf;
	*len = n;
	*type = git_odb_object_type(o);
	git_odb_object_free(o);
	return 0;
}

static int disk_read(void **data, size_t *len, git_object_t *type,
		     git_odb_backend *b, const git_oid *id)
{
	git_odb_object *o = NULL;
	int ret = git_odb_read(&o, ((struct disk_backend *)b)->disk, id);

	return ret < 0 ? ret : copy_out(b, o, data, len, type);
}

static int disk_read_prefix(git_oid *out, void **data, size_t *len,
			    git_object_t *type, git_odb_backend *b,
			    const git_oid *id, size_t n)
{
	git_odb_object *o = NULL;
	int ret = git_odb_read_prefix(&o, ((struct disk_backend *)b)->disk, id,
				      n);

	if (ret < 0)
		return ret;
	git_oid_cpy(out, git_odb_object_id(o));
	return copy_out(b, o, data, len, type);
}

static int disk_read_header(size_t *len, git_object_t *type,
			    git_odb_backend *b, const git_oid *id)
{
	return git_odb_read_header(len, type, ((struct disk_backend *)b)->disk,
				   id);
}

static int disk_exists(git_odb_backend *b, const git_oid *id)
{
	return git_odb_exists_ext(((struct disk_backend *)b)->disk, id,
				  GIT_ODB_LOOKUP_NO_REFRESH);
}

static int disk_exists_prefix(git_oid *out, git_odb_backend *b,
			      const git_oid *id, size_t n)
{
	return git_odb_exists_prefix(out, ((struct disk_backend *)b)->disk, id,
				     n);
}

/*
 * A write asks first whether some backend has the object ("freshen"): for
 * this one never, so a new object costs no failed file lookup. One the
 * disk has already is written to memory again, which changes no tree.
 */
static int disk_freshen(git_odb_backend *b, const git_oid *id)
{
	return GIT_ENOTFOUND;
}

static void disk_free(git_odb_backend *b)
{
	git_odb_free(((struct disk_backend *)b)->disk);
	free(b);
}

int repo_objects_in_memory(struct repo *r)
{
	git_odb *odb = NULL;
	git_odb_backend *mem = NULL;
	struct disk_backend *disk = xcalloc(1, sizeof(*disk));
	int ret;

	git_odb_init_backend(&disk->parent, GIT_ODB_BACKEND_VERSION);
	disk->parent.read = disk_read;
	disk->parent.read_prefix = disk_read_prefix;
	disk->parent.read_header = disk_read_header;
	disk->parent.exists = disk_exists;
	disk->parent.exists_prefix = disk_exists_prefix;
	disk->parent.freshen = disk_freshen;
	disk->parent.free = disk_free;
	if ((ret = git_repository_odb(&disk->disk, r->git)) < 0) {
		free(disk);
		return repo_git_err(ret, "the object database");
	}
	/* the highest priority: every write lands in memory */
	if ((ret = git_odb_new(&odb)) < 0 ||
	    (ret = git_odb_add_backend(odb, &disk->parent, 1)) < 0) {
		disk_free(&disk->parent);
		goto out;
	}
	if ((ret = git_mempack_new(&mem)) < 0 ||
	    (ret = git_odb_add_backend(odb, mem, 1000)) < 0) {
		if (mem)
			mem->free(mem);
		goto out;
	}
	if ((ret = git_repository_odb(&r->disk, r->git)) < 0)
		goto out;
	git_repository_set_odb(r->git, odb);
	r->mem = mem; /* the odb owns it */
out:
	git_odb_free(odb);
	return ret < 0 ? repo_git_err(ret, "an in-memory object store") : 0;
}

int repo_apply_reverse(struct repo *r, const char *base, const char *diff_text,
		       char new_tree_hex[REPO_HEX_SIZE],
		       struct repo_apply_result *res)
{
	struct diff_set fwd = { 0 }, rev = { 0 };
	struct strbuf text = STRBUF_INIT;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!diff_text)
		return err_set(ERR_INVALID, "apply: no diff");
	if ((ret = repo_diff_parse(&fwd, diff_text, strlen(diff_text),
				   "patch")) < 0)
		return ret;
	repo_diff_reverse(&rev, &fwd);
	/* the header's place: repo_apply() locates each hunk by its context */
	for (size_t i = 0; i < rev.n; i++)
		for (size_t j = 0; j < rev.f[i].nhunks; j++) {
			struct diff_hunk *h = &rev.f[i].hunks[j];
			h->pos = h->ns > 0 ? h->ns - 1 : 0;
		}
	repo_diff_emit(&text, &rev);
	ret = repo_apply(r, base, text.buf, new_tree_hex, res);
	strbuf_release(&text);
	repo_diff_release(&rev);
	repo_diff_release(&fwd);
	return ret;
}

int repo_history_small(struct repo *r, const char *tip_spec, size_t max,
		       char (**ids)[REPO_HEX_SIZE], size_t *n)
{
	git_object *tip = NULL;
	git_revwalk *walk = NULL;
	git_oid id;
	int ret;

	*ids = NULL;
	*n = 0;
	if ((ret = repo_lookup(r, &tip, tip_spec, GIT_OBJECT_COMMIT)) < 0)
		return ret;
	if ((ret = git_revwalk_new(&walk, r->git)) < 0 ||
	    (ret = git_revwalk_push(walk, git_object_id(tip))) < 0) {
		ret = repo_git_err(ret, "walking %s", tip_spec);
		goto out;
	}
	while ((ret = git_revwalk_next(&id, walk)) == 0) {
		if (*n == max) {
			ret = 0; /* too many: not small */
			goto out;
		}
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		git_oid_tostr((*ids)[(*n)++], REPO_HEX_SIZE, &id);
	}
	if (ret != GIT_ITEROVER) {
		ret = repo_git_err(ret, "walking %s", tip_spec);
		goto out;
	}
	ret = 1;
out:
	if (ret != 1) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	git_revwalk_free(walk);
	git_object_free(tip);
	return ret;
}
