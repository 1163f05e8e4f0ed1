/* repo-keep.c: an overlay's tree kept on disk, and text hashed as git does. */
#include "repo-int.h"
#include "err.h"
#include "strbuf.h"

#include <git2/sys/odb_backend.h>
#include <string.h>

/*
 * Copies id (a tree with what it names, or a blob) from `from` to `to`
 * unless `to` has it: a tree there has all it names already, so only the
 * directories an overlay changed are walked. Children first, so a tree on
 * disk never names an object that is not. Written through write (loose
 * objects, repo_fast_odb()), asked of to (packs too).
 */
static int keep_object(struct repo *r, git_odb *from, git_odb *to,
		       git_odb *write, const git_oid *id)
{
	git_odb_object *o = NULL;
	git_tree *t = NULL;
	git_oid out;
	int ret;

	if (git_odb_exists(to, id))
		return 0;
	if ((ret = git_odb_read(&o, from, id)) < 0)
		return repo_git_err(ret, "reading an object to keep");
	if (git_odb_object_type(o) == GIT_OBJECT_TREE) {
		if ((ret = git_tree_lookup(&t, r->git, id)) < 0) {
			ret = repo_git_err(ret, "reading a tree to keep");
			goto out;
		}
		for (size_t i = 0; i < git_tree_entrycount(t); i++) {
			const git_tree_entry *e = git_tree_entry_byindex(t, i);
			git_object_t type = git_tree_entry_type(e);
			if (type != GIT_OBJECT_TREE && type != GIT_OBJECT_BLOB)
				continue; /* a submodule's commit */
			if ((ret = keep_object(r, from, to, write,
					       git_tree_entry_id(e))) < 0)
				goto out;
		}
	}
	if ((ret = git_odb_write(&out, write, git_odb_object_data(o),
				 git_odb_object_size(o),
				 git_odb_object_type(o))) < 0)
		ret = repo_git_err(ret, "writing a kept object");
out:
	git_tree_free(t);
	git_odb_object_free(o);
	return ret < 0 ? ret : 0;
}

int repo_overlay_keep(struct repo *r, const char *base,
		      const struct repo_overlay *ov, char hex[REPO_HEX_SIZE])
{
	git_odb *from = NULL, *to = NULL, *write = NULL;
	char *dir = NULL;
	git_oid id;
	int ret;

	if ((ret = repo_overlay_tree(r, base, ov, NULL, hex)) < 0)
		return ret;
	dir = xstrfmt("%sobjects", git_repository_commondir(r->git));
	if ((ret = git_repository_odb(&from, r->git)) < 0 ||
	    (ret = git_odb_open(&to, dir)) < 0 ||
	    (ret = repo_fast_odb(&write, dir)) < 0) {
		ret = repo_git_err(ret, "the object database %s", dir);
		goto out;
	}
	if ((ret = git_oid_fromstr(&id, hex)) < 0) {
		ret = repo_git_err(ret, "tree %s", hex);
		goto out;
	}
	ret = keep_object(r, from, to, write, &id);
out:
	git_odb_free(write);
	git_odb_free(from);
	git_odb_free(to);
	free(dir);
	return ret < 0 ? ret : 0;
}

int repo_tree_kept(struct repo *r, const char *hex)
{
	git_odb *to = NULL;
	char *dir = xstrfmt("%sobjects", git_repository_commondir(r->git));
	git_odb_object *o = NULL;
	git_oid id;
	int found = 0;

	if (git_oid_fromstrn(&id, hex, strlen(hex)) == 0 && strlen(hex) == 40 &&
	    git_odb_open(&to, dir) == 0 && git_odb_read(&o, to, &id) == 0)
		found = git_odb_object_type(o) == GIT_OBJECT_TREE;
	git_odb_object_free(o);
	git_odb_free(to);
	free(dir);
	return found;
}

void repo_text_hash(const char *text, size_t len, char hex[REPO_HEX_SIZE])
{
	git_oid id;

	if (git_odb_hash(&id, text ? text : "", text ? len : 0,
			 GIT_OBJECT_BLOB) < 0)
		memset(&id, 0, sizeof(id));
	git_oid_tostr(hex, REPO_HEX_SIZE, &id);
}
