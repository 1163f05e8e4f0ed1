/* repo-checkout.c: the worktree made one commit, rewriting what differs. */
#include "repo-int.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * .git/stableq-worktree records "<commit> <state>" after each checkout:
 * the commit the worktree holds, and HEAD and the index as they were left
 * ("ref:refs/heads/x" or a SHA; the index's mtime and size). Git commands
 * that change the worktree (checkout, reset, merge, am) move HEAD or rewrite
 * the index, which voids the record. It is removed while a checkout runs,
 * so an interrupted one leaves no record and the next checkout compares
 * every file.
 */
#define WT_RECORD "stableq-worktree"

static char *head_state(git_repository *git)
{
	git_reference *head = NULL;
	struct stat st;
	char *idx = xstrfmt("%s/index", git_repository_path(git));
	char *s = NULL, *ix;

	if (stat(idx, &st) == 0)
		ix = xstrfmt("index:%lld.%09ld:%lld",
			     (long long)st.st_mtim.tv_sec,
			     (long)st.st_mtim.tv_nsec, (long long)st.st_size);
	else
		ix = xstrdup("index:none");
	free(idx);
	if (git_reference_lookup(&head, git, "HEAD") < 0) {
		free(ix);
		return NULL;
	}
	if (git_reference_type(head) == GIT_REFERENCE_SYMBOLIC)
		s = xstrfmt("ref:%s %s", git_reference_symbolic_target(head),
			    ix);
	else if (git_reference_target(head))
		s = xstrfmt("%s %s",
			    git_oid_tostr_s(git_reference_target(head)), ix);
	git_reference_free(head);
	free(ix);
	return s;
}

/* For the import, which writes the first record. */
int repo_record_worktree(git_repository *git, const git_oid *commit)
{
	char *path = xstrfmt("%s/" WT_RECORD, git_repository_path(git));
	char *head = head_state(git);
	char *line =
		xstrfmt("%s %s\n", git_oid_tostr_s(commit), head ? head : "?");
	int ret = write_file_atomic(path, line, strlen(line));

	free(path);
	free(head);
	free(line);
	return ret;
}

/* The commit the worktree holds, if the record can be trusted. */
static int worktree_commit(struct repo *r, git_oid *out)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xstrfmt("%s/" WT_RECORD, git_repository_path(r->git));
	char *head = NULL;
	int ok = 0;

	if (strbuf_read_file(&sb, path, 4096) == 0) {
		strbuf_trim(&sb);
		head = head_state(r->git);
		ok = sb.len > REPO_HEXSZ + 1 && sb.buf[REPO_HEXSZ] == ' ' &&
		     head && !strcmp(sb.buf + REPO_HEXSZ + 1, head) &&
		     git_oid_fromstrn(out, sb.buf, REPO_HEXSZ) == 0;
	}
	err_clear();
	strbuf_release(&sb);
	free(path);
	free(head);
	return ok;
}

struct paths {
	char **s;
	size_t n, alloc;
};

static void paths_add(struct paths *p, const char *s)
{
	if (p->n && !strcmp(p->s[p->n - 1], s))
		return;
	if (p->n == p->alloc) {
		p->alloc = p->alloc ? p->alloc * 2 : 16;
		p->s = xrealloc(p->s, p->alloc * sizeof(*p->s));
	}
	p->s[p->n++] = xstrdup(s);
}

static void paths_free(struct paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
}

static int is_tree(const git_tree_entry *e)
{
	return git_tree_entry_type(e) == GIT_OBJECT_TREE;
}

/* git's tree order: a directory sorts as if its name ended in '/'. */
static int entry_cmp(const git_tree_entry *a, const git_tree_entry *b)
{
	const char *na = git_tree_entry_name(a), *nb = git_tree_entry_name(b);
	size_t la = strlen(na), lb = strlen(nb), l = la < lb ? la : lb;
	int c = memcmp(na, nb, l);
	unsigned char ca, cb;

	if (c)
		return c;
	ca = la > l ? (unsigned char)na[l] : is_tree(a) ? '/' : 0;
	cb = lb > l ? (unsigned char)nb[l] : is_tree(b) ? '/' : 0;
	return (int)ca - (int)cb;
}

static int add_all(git_repository *git, const git_tree_entry *e,
		   const char *prefix, struct paths *out);

/*
 * The paths where trees a and b differ (either may be NULL: empty). Equal
 * subtrees are skipped by id, so a one-file change reads only the trees on
 * its path, where libgit2's tree-to-tree diff visits all 78k kernel files.
 */
static int tree_changes(git_repository *git, git_tree *a, git_tree *b,
			const char *prefix, struct paths *out)
{
	size_t na = a ? git_tree_entrycount(a) : 0;
	size_t nb = b ? git_tree_entrycount(b) : 0;
	size_t i = 0, j = 0;
	int ret = 0;

	while (!ret && (i < na || j < nb)) {
		const git_tree_entry *ea =
			i < na ? git_tree_entry_byindex(a, i) : NULL;
		const git_tree_entry *eb =
			j < nb ? git_tree_entry_byindex(b, j) : NULL;
		int c = !ea ? 1 : !eb ? -1 : entry_cmp(ea, eb);

		if (c < 0) {
			ret = add_all(git, ea, prefix, out);
			i++;
			continue;
		}
		if (c > 0) {
			ret = add_all(git, eb, prefix, out);
			j++;
			continue;
		}
		i++;
		j++;
		if (git_oid_equal(git_tree_entry_id(ea),
				  git_tree_entry_id(eb)) &&
		    git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb))
			continue;
		if (is_tree(ea) && is_tree(eb)) {
			git_tree *ta = NULL, *tb = NULL;
			char *sub = xstrfmt("%s%s/", prefix,
					    git_tree_entry_name(ea));
			if (git_tree_lookup(&ta, git, git_tree_entry_id(ea)) <
				    0 ||
			    git_tree_lookup(&tb, git, git_tree_entry_id(eb)) <
				    0)
				ret = repo_git_err(-1, "tree %s", sub);
			else
				ret = tree_changes(git, ta, tb, sub, out);
			git_tree_free(ta);
			git_tree_free(tb);
			free(sub);
		} else {
			ret = add_all(git, ea, prefix, out);
			if (!ret)
				ret = add_all(git, eb, prefix, out);
		}
	}
	return ret;
}

/* A blob's path, or every path under a tree. */
static int add_all(git_repository *git, const git_tree_entry *e,
		   const char *prefix, struct paths *out)
{
	char *path = xstrfmt("%s%s", prefix, git_tree_entry_name(e));
	int ret = 0;

	if (is_tree(e)) {
		git_tree *t = NULL;
		char *sub = xstrfmt("%s/", path);
		if (git_tree_lookup(&t, git, git_tree_entry_id(e)) < 0)
			ret = repo_git_err(-1, "tree %s", path);
		else
			ret = tree_changes(git, NULL, t, sub, out);
		git_tree_free(t);
		free(sub);
	} else if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
		paths_add(out, path);
	}
	free(path);
	return ret;
}

/* rm of path, then of the directories it leaves empty (up to the root). */
static int remove_path(const char *root, const char *path)
{
	char *abs = xstrfmt("%s/%s", root, path);
	struct stat st;
	char *slash;
	int ret = 0;

	if (lstat(abs, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			/* a file of the old tree became a directory by hand */
			if (rmdir(abs) < 0 && errno != ENOTEMPTY &&
			    errno != EEXIST)
				ret = err_set(ERR_IO, "%s: %s", abs,
					      strerror(errno));
		} else if (unlink(abs) < 0 && errno != ENOENT) {
			ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		}
	}
	while (!ret && (slash = strrchr(abs, '/')) &&
	       (size_t)(slash - abs) > strlen(root)) {
		*slash = '\0';
		if (rmdir(abs) < 0)
			break; /* not empty: the others stay */
	}
	free(abs);
	return ret;
}

/* Creates the directories above path; a file in the way goes. */
static int make_parents(const char *root, const char *path)
{
	char *abs = xstrfmt("%s/%s", root, path);
	size_t rl = strlen(root);
	int ret = 0;

	for (char *s = abs + rl + 1; *s && !ret; s++) {
		struct stat st;
		if (*s != '/')
			continue;
		*s = '\0';
		if (lstat(abs, &st) == 0 && !S_ISDIR(st.st_mode))
			unlink(abs);
		if (mkdir(abs, 0777) < 0 && errno != EEXIST)
			ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		*s = '/';
	}
	free(abs);
	return ret;
}

/*
 * Writes path as tree holds it: a file (mode 0666 or 0777 less the umask,
 * as git does) or a symlink, replacing whatever was there. No checkout
 * filters (eol, ident): the kernel tree asks for none.
 */
static int write_path(git_repository *git, git_tree *tree, const char *root,
		      const char *path)
{
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	char *abs = xstrfmt("%s/%s", root, path);
	const char *data;
	size_t len, off = 0;
	git_filemode_t mode;
	int ret = 0, fd = -1;

	if (git_tree_entry_bypath(&e, tree, path) < 0) {
		ret = remove_path(root, path); /* not in the target: gone */
		goto out;
	}
	mode = git_tree_entry_filemode(e);
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		goto out; /* submodules: nothing to write */
	if (git_blob_lookup(&blob, git, git_tree_entry_id(e)) < 0) {
		ret = repo_git_err(ERR_IO, "%s: reading the blob", path);
		goto out;
	}
	data = git_blob_rawcontent(blob);
	len = (size_t)git_blob_rawsize(blob);
	if ((ret = make_parents(root, path)) < 0)
		goto out;
	if (unlink(abs) < 0 && errno != ENOENT && errno != EISDIR) {
		ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		goto out;
	}
	if (mode == GIT_FILEMODE_LINK) {
		char *target = xstrndup(data, len);
		if (symlink(target, abs) < 0)
			ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		free(target);
		goto out;
	}
	fd = open(abs, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		  mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0777 : 0666);
	if (fd < 0) {
		ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		goto out;
	}
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0)
		ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	git_blob_free(blob);
	git_tree_entry_free(e);
	free(abs);
	return ret;
}

int repo_checkout(struct repo *r, const char *spec)
{
	git_object *target = NULL;
	git_commit *old = NULL;
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_checkout_options co;
	git_oid have;
	struct paths paths = {0};
	char *rec = NULL;
	int ret, fast;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	if (git_repository_is_bare(r->git))
		return err_set(ERR_INVALID,
			       "%s: a bare repository has no "
			       "worktree",
			       r->workdir);
	if ((ret = repo_lookup(r, &target, spec, GIT_OBJECT_COMMIT)) < 0)
		return ret;
	if ((ret = git_commit_tree(&new_tree, (git_commit *)target)) < 0) {
		ret = repo_git_err(ret, "checkout %s", spec);
		goto out;
	}
	fast = worktree_commit(r, &have) &&
	       git_commit_lookup(&old, r->git, &have) == 0 &&
	       git_commit_tree(&old_tree, old) == 0;

	rec = xstrfmt("%s/" WT_RECORD, git_repository_path(r->git));
	if (unlink(rec) < 0 && errno != ENOENT) {
		ret = err_set(ERR_IO, "%s: %s", rec, strerror(errno));
		goto out;
	}
	if (fast) {
		/*
		 * The worktree is known to hold old: only the paths where the
		 * two trees differ need writing, and they are written here.
		 * libgit2's checkout would load the 78k-entry index first
		 * (0.1 to 1 s) and write it back; nothing in stableq reads
		 * the index, and a full checkout compares contents where its
		 * stat data differ. Removals first: a file may become a
		 * directory.
		 */
		if ((ret = tree_changes(r->git, old_tree, new_tree, "",
					&paths)) < 0)
			goto out;
		for (size_t i = paths.n; i-- > 0 && !ret;) {
			git_tree_entry *e = NULL;
			if (git_tree_entry_bypath(&e, new_tree, paths.s[i]) < 0)
				ret = remove_path(r->workdir, paths.s[i]);
			git_tree_entry_free(e);
		}
		err_clear();
		for (size_t i = 0; i < paths.n && !ret; i++)
			ret = write_path(r->git, new_tree, r->workdir,
					 paths.s[i]);
		if (ret < 0)
			goto out;
	} else {
		/*
		 * libgit2 leaves index entries alone where it writes
		 * nothing; `git checkout -f` (and we) want the index to be
		 * the commit: read the tree in (stat data of unchanged
		 * entries are kept, so git does not rehash them).
		 */
		git_index *idx = NULL;
		co.checkout_strategy = GIT_CHECKOUT_FORCE;
		if ((ret = git_checkout_tree(r->git, target, &co)) < 0 ||
		    (ret = git_repository_index(&idx, r->git)) < 0 ||
		    (ret = git_index_read_tree(idx, new_tree)) < 0 ||
		    (ret = git_index_write(idx)) < 0) {
			git_index_free(idx);
			ret = repo_git_err(ret, "checkout %s", spec);
			goto out;
		}
		git_index_free(idx);
	}
	if ((ret = git_repository_set_head_detached(
		     r->git, git_object_id(target))) < 0) {
		ret = repo_git_err(ret, "checkout %s: HEAD", spec);
		goto out;
	}
	ret = repo_record_worktree(r->git, git_object_id(target));
out:
	paths_free(&paths);
	git_tree_free(old_tree);
	git_tree_free(new_tree);
	git_commit_free(old);
	git_object_free(target);
	free(rec);
	return ret;
}
