/* repo-import.c: the stable tree from the linux-source tarball, in git. */
#include "repo-int.h"
#include "err.h"
#include "file.h"
#include "spawn.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IMPORT_NAME "stableq"
#define IMPORT_EMAIL "stableq@localhost"
#define IMPORT_RECORD "stableq-import"
#define TAR_TIMEOUT_MS (30 * 60 * 1000)
#define MAX_THREADS 8

/*
 * One file system entry of the extracted tree. Children of a directory are
 * contiguous in the node array (first_child, nchildren), sorted by name.
 */
struct node {
	char *name;
	char *path; /* relative to the tree root; files only */
	unsigned mode; /* git mode: 0100644, 0100755, 0120000, 040000 */
	struct stat st;
	git_oid oid;
	int empty; /* a directory with nothing to track */
	size_t first_child, nchildren;
};

struct import {
	const char *root;
	struct node *nodes;
	size_t n, alloc;
	size_t *files; /* indices of blobs to write */
	size_t nfiles;
	char *objects_dir;
	atomic_size_t next;
	atomic_size_t done;
	atomic_int failed;
	char errmsg[512];
	pthread_mutex_t lock;
};

static size_t node_add(struct import *im, const char *name)
{
	if (im->n == im->alloc) {
		im->alloc = im->alloc ? im->alloc * 2 : 4096;
		im->nodes = xrealloc(im->nodes, im->alloc * sizeof(*im->nodes));
	}
	memset(&im->nodes[im->n], 0, sizeof(im->nodes[0]));
	im->nodes[im->n].name = xstrdup(name);
	return im->n++;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads directory rel (node dir) and, recursively, its subdirectories. */
static int walk(struct import *im, size_t dir, const char *rel)
{
	char *abs = *rel ? xstrfmt("%s/%s", im->root, rel) : xstrdup(im->root);
	char **names = NULL;
	size_t nn = 0, an = 0, first;
	struct dirent *de;
	int ret = 0, dfd;
	DIR *d = opendir(abs);

	if (!d) {
		ret = err_set(ERR_IO, "%s: %s", abs, strerror(errno));
		free(abs);
		return ret;
	}
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!*rel && !strcmp(de->d_name, ".git"))
			continue;
		if (nn == an) {
			an = an ? an * 2 : 32;
			names = xrealloc(names, an * sizeof(*names));
		}
		names[nn++] = xstrdup(de->d_name);
	}
	if (nn)
		qsort(names, nn, sizeof(*names), name_cmp);

	first = im->n;
	for (size_t i = 0; i < nn; i++) {
		size_t k = node_add(im, names[i]);
		struct node *e = &im->nodes[k];

		if (fstatat(dfd, names[i], &e->st, AT_SYMLINK_NOFOLLOW) < 0) {
			ret = err_set(ERR_IO, "%s/%s: %s", abs, names[i],
				      strerror(errno));
			goto out;
		}
		if (S_ISDIR(e->st.st_mode)) {
			e->mode = 040000;
		} else if (S_ISLNK(e->st.st_mode)) {
			e->mode = 0120000;
		} else if (S_ISREG(e->st.st_mode)) {
			e->mode = (e->st.st_mode & S_IXUSR) ? 0100755 : 0100644;
		} else {
			e->empty = 1; /* sockets, fifos: nothing git can hold */
			continue;
		}
		if (e->mode != 040000)
			e->path = *rel ? xstrfmt("%s/%s", rel, names[i])
				       : xstrdup(names[i]);
	}
	im->nodes[dir].first_child = first;
	im->nodes[dir].nchildren = nn;
	for (size_t i = 0; i < nn && !ret; i++) {
		if (im->nodes[first + i].mode != 040000)
			continue;
		char *sub = *rel ? xstrfmt("%s/%s", rel, names[i])
				 : xstrdup(names[i]);
		ret = walk(im, first + i, sub);
		free(sub);
	}
out:
	closedir(d);
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(abs);
	return ret;
}

static void worker_fail(struct import *im, const char *fmt, const char *path,
			const char *why)
{
	pthread_mutex_lock(&im->lock);
	if (!atomic_load(&im->failed))
		snprintf(im->errmsg, sizeof(im->errmsg), fmt, path, why);
	atomic_store(&im->failed, 1);
	pthread_mutex_unlock(&im->lock);
}

/*
 * Writes the blobs of im->files. Each worker has its own object database
 * on the same objects directory (repo_fast_odb(): zlib level 1, no fsync,
 * as `git add` writes loose objects).
 */
static void *hash_worker(void *arg)
{
	struct import *im = arg;
	git_odb *odb = NULL;
	struct strbuf buf = STRBUF_INIT;

	if (repo_fast_odb(&odb, im->objects_dir) < 0) {
		worker_fail(im, "%s: %s", im->objects_dir, err_msg());
		goto out;
	}
	for (;;) {
		size_t i = atomic_fetch_add(&im->next, 1);
		struct node *f;
		long long size;
		char *abs;

		if (i >= im->nfiles || atomic_load(&im->failed))
			break;
		f = &im->nodes[im->files[i]];
		abs = xstrfmt("%s/%s", im->root, f->path);
		if (repo_write_file_blob(odb, abs, f->mode == 0120000, &buf,
					 &f->oid, &size) < 0) {
			worker_fail(im, "%s%s", "", err_msg());
			free(abs);
			break;
		}
		free(abs);
		atomic_fetch_add(&im->done, 1);
	}
out:
	strbuf_release(&buf);
	git_odb_free(odb); /* frees the backend too */
	return NULL;
}

/* git's tree order: names compared as if directories ended in '/'. */
static int tree_cmp(const struct node *a, const struct node *b)
{
	size_t la = strlen(a->name), lb = strlen(b->name);
	size_t l = la < lb ? la : lb;
	int c = memcmp(a->name, b->name, l);
	unsigned char ca, cb;

	if (c)
		return c;
	ca = la > l ? (unsigned char)a->name[l] : (a->mode == 040000 ? '/' : 0);
	cb = lb > l ? (unsigned char)b->name[l] : (b->mode == 040000 ? '/' : 0);
	return (int)ca - (int)cb;
}

static struct import *sort_ctx;
static int child_cmp(const void *a, const void *b)
{
	return tree_cmp(&sort_ctx->nodes[*(const size_t *)a],
			&sort_ctx->nodes[*(const size_t *)b]);
}

/* Writes the tree of directory node d (children first). */
static int write_tree(struct import *im, git_odb *odb, size_t d)
{
	struct node *dir = &im->nodes[d];
	size_t n = dir->nchildren, first = dir->first_child, *order;
	struct strbuf sb = STRBUF_INIT;
	size_t used = 0;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		if (im->nodes[first + i].mode == 040000 &&
		    (ret = write_tree(im, odb, first + i)) < 0)
			return ret;
	}
	order = xmalloc((n ? n : 1) * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = first + i;
	sort_ctx = im;
	qsort(order, n, sizeof(*order), child_cmp);
	for (size_t i = 0; i < n; i++) {
		struct node *e = &im->nodes[order[i]];
		if (e->empty)
			continue;
		strbuf_addf(&sb, "%o %s", e->mode, e->name);
		strbuf_addch(&sb, '\0');
		strbuf_add(&sb, e->oid.id, GIT_OID_RAWSZ);
		used++;
	}
	free(order);
	dir = &im->nodes[d];
	if (!used) {
		dir->empty = 1;
	} else if (git_odb_write(&dir->oid, odb, sb.buf, sb.len,
				 GIT_OBJECT_TREE) < 0) {
		ret = repo_git_err(-1, "writing tree of %s", dir->name);
	}
	strbuf_release(&sb);
	return ret;
}

static struct import *path_ctx;
static int path_cmp(const void *a, const void *b)
{
	return strcmp(path_ctx->nodes[*(const size_t *)a].path,
		      path_ctx->nodes[*(const size_t *)b].path);
}

static void stat_to_entry(git_index_entry *ie, const struct stat *st)
{
	ie->ctime.seconds = (int32_t)st->st_ctim.tv_sec;
	ie->ctime.nanoseconds = (uint32_t)st->st_ctim.tv_nsec;
	ie->mtime.seconds = (int32_t)st->st_mtim.tv_sec;
	ie->mtime.nanoseconds = (uint32_t)st->st_mtim.tv_nsec;
	ie->dev = (uint32_t)st->st_dev;
	ie->ino = (uint32_t)st->st_ino;
	ie->uid = (uint32_t)st->st_uid;
	ie->gid = (uint32_t)st->st_gid;
	ie->file_size = (uint32_t)st->st_size;
}

/* The index, with stat data, so that git and libgit2 see a clean tree. */
static int write_index(struct import *im, git_repository *repo,
		       repo_progress_fn *progress, void *ctx)
{
	git_index *idx = NULL;
	size_t *order = xmalloc((im->n ? im->n : 1) * sizeof(*order));
	size_t n = 0;
	int ret = 0;

	for (size_t i = 0; i < im->n; i++)
		if (im->nodes[i].path && !im->nodes[i].empty)
			order[n++] = i;
	path_ctx = im;
	qsort(order, n, sizeof(*order), path_cmp);
	if (git_repository_index(&idx, repo) < 0 || git_index_clear(idx) < 0) {
		ret = repo_git_err(-1, "index");
		goto out;
	}
	if (progress)
		progress(ctx, "writing index", 0, n);
	for (size_t i = 0; i < n; i++) {
		struct node *f = &im->nodes[order[i]];
		git_index_entry ie;

		memset(&ie, 0, sizeof(ie));
		stat_to_entry(&ie, &f->st);
		ie.mode = f->mode;
		ie.id = f->oid;
		ie.path = f->path;
		if (git_index_add(idx, &ie) < 0) {
			ret = repo_git_err(-1, "index: %s", f->path);
			goto out;
		}
	}
	if (git_index_write(idx) < 0)
		ret = repo_git_err(-1, "writing the index");
	if (progress)
		progress(ctx, "writing index", n, n);
out:
	git_index_free(idx);
	free(order);
	return ret;
}

static void import_release(struct import *im)
{
	for (size_t i = 0; i < im->n; i++) {
		free(im->nodes[i].name);
		free(im->nodes[i].path);
	}
	free(im->nodes);
	free(im->files);
	free(im->objects_dir);
	pthread_mutex_destroy(&im->lock);
}

static int nthreads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("STABLEQ_IMPORT_THREADS");

	if (env && atoi(env) > 0)
		n = atoi(env);
	if (n < 1)
		n = 1;
	return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/*
 * Imports the tree at root (already a git repository) into objects and
 * the index; *tree gets the root tree.
 */
static int import_tree(git_repository *repo, const char *root,
		       const struct repo_early *early, git_oid *tree,
		       repo_progress_fn *progress, void *ctx)
{
	struct import im;
	pthread_t th[MAX_THREADS];
	int nt = nthreads(), started = 0, ret;
	git_odb *odb = NULL;
	size_t nearly = 0;

	memset(&im, 0, sizeof(im));
	pthread_mutex_init(&im.lock, NULL);
	im.root = root;
	if (progress)
		progress(ctx, "scanning", 0, 0);
	node_add(&im, "");
	im.nodes[0].mode = 040000;
	if ((ret = walk(&im, 0, "")) < 0)
		goto out;
	/* the files tar finished early are written already */
	im.files = xmalloc(im.n * sizeof(*im.files));
	for (size_t i = 0; i < im.n; i++) {
		struct node *f = &im.nodes[i];
		if (!f->path || f->empty)
			continue;
		if (f->mode != 0120000 &&
		    repo_early_find(early, f->path, (long long)f->st.st_size,
				    &f->oid)) {
			nearly++;
			continue;
		}
		im.files[im.nfiles++] = i;
	}
	im.objects_dir = xstrfmt("%s/objects", git_repository_path(repo));

	for (int t = 1; t < nt; t++) {
		if (pthread_create(&th[t], NULL, hash_worker, &im) != 0)
			break;
		started = t;
	}
	/* nt workers write; this thread reports progress */
	{
		pthread_t self;
		int have_self =
			pthread_create(&self, NULL, hash_worker, &im) == 0;
		size_t last = (size_t)-1;
		while (have_self) {
			size_t d = atomic_load(&im.done);
			if (progress && d != last)
				progress(ctx, "importing", nearly + d,
					 nearly + im.nfiles);
			last = d;
			if (d >= im.nfiles || atomic_load(&im.failed))
				break;
			usleep(100 * 1000);
		}
		if (have_self)
			pthread_join(self, NULL);
		else
			hash_worker(&im);
	}
	for (int t = 1; t <= started; t++)
		pthread_join(th[t], NULL);
	if (atomic_load(&im.failed)) {
		ret = err_set(ERR_IO, "import: %s", im.errmsg);
		goto out;
	}
	if (progress)
		progress(ctx, "importing", nearly + im.nfiles,
			 nearly + im.nfiles);

	if (git_repository_odb(&odb, repo) < 0) {
		ret = repo_git_err(-1, "object database");
		goto out;
	}
	if ((ret = write_tree(&im, odb, 0)) < 0)
		goto out;
	if (im.nodes[0].empty) {
		ret = err_set(ERR_INVALID, "%s: no files to import", root);
		goto out;
	}
	*tree = im.nodes[0].oid;
	ret = write_index(&im, repo, progress, ctx);
out:
	git_odb_free(odb);
	import_release(&im);
	return ret;
}

/* "6.1.192" from the kernel Makefile's VERSION/PATCHLEVEL/SUBLEVEL lines. */
static int makefile_version(char **out, const char *text, const char *name)
{
	static const char *const keys[] = {"VERSION", "PATCHLEVEL", "SUBLEVEL",
					   "EXTRAVERSION"};
	char *val[4] = {NULL, NULL, NULL, NULL};
	const char *p = text;
	int ret = 0;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		for (int k = 0; k < 4; k++) {
			size_t kl = strlen(keys[k]);
			const char *q = p + kl;
			if (val[k] || len <= kl || strncmp(p, keys[k], kl))
				continue;
			while (q < p + len && (*q == ' ' || *q == '\t'))
				q++;
			if (q >= p + len || *q != '=')
				continue;
			q++;
			while (q < p + len && (*q == ' ' || *q == '\t'))
				q++;
			const char *e = p + len;
			while (e > q &&
			       (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			val[k] = xstrndup(q, (size_t)(e - q));
		}
		p = eol ? eol + 1 : NULL;
	}
	if (!val[0] || !*val[0] || !val[1] || !*val[1] ||
	    strspn(val[0], "0123456789") != strlen(val[0]) ||
	    strspn(val[1], "0123456789") != strlen(val[1]) ||
	    (val[2] && strspn(val[2], "0123456789") != strlen(val[2]))) {
		ret = err_set(ERR_INVALID,
			      "%s: no VERSION/PATCHLEVEL/SUBLEVEL lines", name);
		goto out;
	}
	if (val[2] && *val[2] && strcmp(val[2], "0"))
		*out = xstrfmt("%s.%s.%s%s", val[0], val[1], val[2],
			       val[3] ? val[3] : "");
	else
		*out = xstrfmt("%s.%s%s", val[0], val[1], val[3] ? val[3] : "");
out:
	for (int k = 0; k < 4; k++)
		free(val[k]);
	return ret;
}

static int run_tar(const char *const *argv, struct strbuf *out)
{
	struct spawn sp = SPAWN_INIT;
	int ret;

	sp.argv = argv;
	sp.capture = 1;
	sp.timeout_ms = TAR_TIMEOUT_MS;
	if ((ret = spawn_run(&sp)) < 0)
		goto out;
	if (sp.status != 0) {
		strbuf_rtrim(&sp.out);
		ret = err_set(ERR_IO, "tar %s: %s%s", argv[2],
			      sp.timed_out ? "timed out; " : "",
			      sp.out.len ? sp.out.buf : "failed");
		goto out;
	}
	if (out)
		strbuf_addbuf(out, &sp.out);
out:
	spawn_release(&sp);
	return ret;
}

/* The import record: which tarball (size, mtime) gave which version. */
static char *record_text(const struct stat *st, const char *version)
{
	return xstrfmt("size %lld\nmtime %lld\nversion %s\n",
		       (long long)st->st_size, (long long)st->st_mtim.tv_sec,
		       version);
}

/*
 * dir is already a repository: is this tarball's version tagged there?
 * 1 yes (*version set), or ERR_EXISTS.
 */
static int check_existing(const char *tarball, const struct stat *tst,
			  const char *dir, char **version)
{
	git_repository *repo = NULL;
	struct strbuf rec = STRBUF_INIT, mk = STRBUF_INIT;
	char *path = NULL, *ver = NULL, *tag = NULL, *want = NULL;
	git_object *obj = NULL;
	int ret;

	if (git_repository_open(&repo, dir) < 0)
		return repo_git_err(ERR_EXISTS,
				    "%s: exists but is not a usable git "
				    "repository; move it away",
				    dir);
	path = xstrfmt("%s/" IMPORT_RECORD, git_repository_path(repo));
	if (strbuf_read_file(&rec, path, 4096) == 0) {
		const char *v = strstr(rec.buf, "version ");
		if (v) {
			ver = xstrndup(v + 8, strcspn(v + 8, "\n"));
			want = record_text(tst, ver);
			if (strcmp(want, rec.buf)) {
				free(ver); /* another tarball: read it */
				ver = NULL;
			}
		}
	}
	if (!ver) {
		/* Debian's tarball holds linux-source-6.1/ for -6.1.tar.xz */
		const char *base = strrchr(tarball, '/');
		char *top = xstrdup(base ? base + 1 : tarball);
		char *dot = strstr(top, ".tar");
		if (dot)
			*dot = '\0';
		char *member = xstrfmt("%s/Makefile", top);
		const char *argv[] = {"tar",  "-xOf", tarball, "--occurrence=1",
				      member, NULL};
		ret = run_tar(argv, &mk);
		free(member);
		free(top);
		if (ret < 0 || makefile_version(&ver, mk.buf, tarball) < 0) {
			ret = err_prefix(ERR_EXISTS,
					 "%s: already a repository, and the "
					 "version of %s cannot be told",
					 dir, tarball);
			goto out;
		}
	}
	tag = xstrfmt("refs/tags/v%s", ver);
	if (git_revparse_single(&obj, repo, tag) < 0) {
		ret = err_set(ERR_EXISTS,
			      "%s: already holds another tree (no tag v%s); "
			      "move it away to import %s",
			      dir, ver, tarball);
		goto out;
	}
	ret = 1;
	if (version) {
		*version = ver;
		ver = NULL;
	}
out:
	git_object_free(obj);
	git_repository_free(repo);
	strbuf_release(&rec);
	strbuf_release(&mk);
	free(path);
	free(ver);
	free(tag);
	free(want);
	return ret;
}

static int dir_state(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *git;
	struct stat st;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1; /* 0: absent or empty */
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	if (!n)
		return 0;
	git = xstrfmt("%s/.git", dir);
	n = stat(git, &st) == 0 ? 2 : 1; /* 2: a repository, 1: in the way */
	free(git);
	return n;
}

int repo_source_check(const char *tarball)
{
	const char *base = strrchr(tarball, '/');
	struct stat st;
	char *pkg, *tar;
	int ret, missing;

	if (!tarball || !*tarball)
		return err_set(ERR_INVALID, "linux_source is not set");
	if (!(missing = stat(tarball, &st) < 0) && S_ISREG(st.st_mode))
		return 0;
	/* /usr/src/linux-source-6.12.tar.xz comes with linux-source-6.12 */
	pkg = xstrdup(base ? base + 1 : tarball);
	if ((tar = strstr(pkg, ".tar")))
		*tar = '\0';
	if (!strncmp(pkg, "linux-source-", 13) && pkg[13])
		ret = err_set(ERR_NOTFOUND,
			      "%s: %s; it comes with the Debian package %s"
			      " (apt-get install %s, or make deps)",
			      tarball, missing ? "no such file" : "not a file",
			      pkg, pkg);
	else
		ret = err_set(ERR_NOTFOUND,
			      "%s: %s; linux_source names the tarball of a"
			      " Debian linux-source package"
			      " (/usr/src/linux-source-X.Y.tar.xz from"
			      " linux-source-X.Y)",
			      tarball, missing ? "no such file" : "not a file");
	free(pkg);
	return ret;
}

int repo_init_from_tarball(const char *tarball, const char *dir_arg,
			   const char *branch, char **version,
			   repo_progress_fn *progress, void *ctx)
{
	char *dir = NULL;
	struct stat tst;
	char *tmp = NULL, *ver = NULL, *mkpath = NULL, *msg = NULL;
	char *refname = NULL, *tagname = NULL, *rec = NULL, *recpath = NULL;
	git_repository *repo = NULL;
	git_repository_init_options io;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit *commit = NULL;
	git_config *cfg = NULL;
	struct repo_early *early = NULL;
	char *objects = NULL;
	git_oid tree_id, commit_id, tag_id;
	struct strbuf mk = STRBUF_INIT;
	int ret, st;

	if (version)
		*version = NULL;
	if (!tarball || !*tarball || !dir_arg || !*dir_arg || !branch ||
	    !*branch)
		return err_set(ERR_INVALID, "tree init: tarball, directory "
					    "and branch are required");
	if ((ret = repo_source_check(tarball)) < 0 || stat(tarball, &tst) < 0)
		return ret < 0 ? ret : err_set(ERR_IO, "%s: %s", tarball,
					       strerror(errno));
	repo_lib_init();
	/* "var/linux/" would put the temp dir inside the tree */
	dir = xstrdup(dir_arg);
	for (size_t l = strlen(dir); l > 1 && dir[l - 1] == '/'; l--)
		dir[l - 1] = '\0';
	if (git_reference_is_valid_name(
		    refname = xstrfmt("refs/heads/%s", branch)) != 1) {
		ret = err_set(ERR_INVALID, "%s: not a valid branch name",
			      branch);
		goto out;
	}
	st = dir_state(dir);
	if (st < 0) {
		ret = err_set(ERR_IO, "%s: %s", dir, strerror(errno));
		goto out;
	}
	if (st == 2) {
		ret = check_existing(tarball, &tst, dir, version);
		goto out;
	}
	if (st == 1) {
		ret = err_set(ERR_EXISTS,
			      "%s: exists, is not empty and is not a git "
			      "repository; move it away",
			      dir);
		goto out;
	}

	tmp = xstrfmt("%s.import-tmp", dir);
	if ((ret = rm_rf(tmp)) < 0 || (ret = mkdir_p(tmp)) < 0)
		goto out;
	git_repository_init_options_init(&io,
					 GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	io.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_NO_REINIT;
	io.initial_head = branch;
	if (git_repository_init_ext(&repo, tmp, &io) < 0) {
		ret = repo_git_err(-1, "%s: git init", tmp);
		goto out;
	}
	/*
	 * 80k loose objects would make the first `git commit` a human runs
	 * here start a long automatic gc; stableq packs nothing either.
	 */
	if (git_repository_config(&cfg, repo) == 0)
		git_config_set_int32(cfg, "gc.auto", 0);

	/* tar extracts while blobs of the files it finished are written */
	objects = xstrfmt("%s/objects", git_repository_path(repo));
	if (progress)
		progress(ctx, "extracting", 0, 0);
	if ((ret = repo_extract(&early, tarball, tmp, objects, nthreads(),
				progress, ctx)) < 0)
		goto out;
	mkpath = xstrfmt("%s/Makefile", tmp);
	if (strbuf_read_file(&mk, mkpath, 1 << 20) < 0) {
		ret = err_set(ERR_INVALID,
			      "%s: no top-level Makefile after "
			      "extraction: not a kernel tarball",
			      tarball);
		goto out;
	}
	if ((ret = makefile_version(&ver, mk.buf, mkpath)) < 0)
		goto out;
	if ((ret = import_tree(repo, tmp, early, &tree_id, progress, ctx)) < 0)
		goto out;

	/* Fixed identity and date: the same tarball gives the same commit. */
	{
		struct stat mst;
		git_time_t when =
			stat(mkpath, &mst) == 0 ? mst.st_mtim.tv_sec : 0;
		if (git_signature_new(&sig, IMPORT_NAME, IMPORT_EMAIL, when,
				      0) < 0) {
			ret = repo_git_err(-1, "signature");
			goto out;
		}
	}
	msg = xstrfmt("Linux %s\n", ver);
	if (git_tree_lookup(&tree, repo, &tree_id) < 0 ||
	    git_commit_create(&commit_id, repo, NULL, sig, sig, NULL, msg, tree,
			      0, NULL) < 0) {
		ret = repo_git_err(-1, "committing the import");
		goto out;
	}
	{
		git_reference *ref = NULL;
		if (git_reference_create(&ref, repo, refname, &commit_id, 0,
					 "stableq tree init") < 0) {
			ret = repo_git_err(-1, "creating branch %s", branch);
			goto out;
		}
		git_reference_free(ref);
	}
	tagname = xstrfmt("v%s", ver);
	if (git_commit_lookup(&commit, repo, &commit_id) < 0 ||
	    git_tag_create(&tag_id, repo, tagname, (git_object *)commit, sig,
			   msg, 0) < 0) {
		ret = repo_git_err(-1, "tagging %s", tagname);
		goto out;
	}
	if (git_repository_set_head(repo, refname) < 0) {
		ret = repo_git_err(-1, "HEAD");
		goto out;
	}
	/* What the worktree holds, for repo_checkout(). */
	if ((ret = repo_record_worktree(repo, &commit_id)) < 0)
		goto out;
	rec = record_text(&tst, ver);
	recpath = xstrfmt("%s/" IMPORT_RECORD, git_repository_path(repo));
	if ((ret = write_file_atomic(recpath, rec, strlen(rec))) < 0)
		goto out;
	git_repository_free(repo);
	repo = NULL;

	/* dir is absent or empty here (dir_state); an empty one goes. */
	rmdir(dir);
	{
		char *parent = xstrdup(dir), *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			mkdir_p(parent);
		}
		free(parent);
	}
	if (rename(tmp, dir) < 0) {
		ret = err_set(ERR_IO, "rename %s to %s: %s", tmp, dir,
			      strerror(errno));
		goto out;
	}
	ret = 0;
	if (version) {
		*version = ver;
		ver = NULL;
	}
out:
	repo_early_free(early);
	free(objects);
	git_config_free(cfg);
	git_commit_free(commit);
	git_tree_free(tree);
	git_signature_free(sig);
	git_repository_free(repo);
	if (ret < 0 && tmp) {
		/* keep the message of the failure, not of the clean-up */
		char *keep = xstrdup(err_msg());
		rm_rf(tmp);
		err_set(ret, "%s", keep);
		free(keep);
	}
	strbuf_release(&mk);
	free(dir);
	free(tmp);
	free(ver);
	free(mkpath);
	free(msg);
	free(refname);
	free(tagname);
	free(rec);
	free(recpath);
	return ret;
}
