/* repo-int.h: what the repo-*.c files share; not for other modules. */
#ifndef STABLEQ_REPO_INT_H
#define STABLEQ_REPO_INT_H

#include "repo.h"

#include "strbuf.h"

#include <git2.h>

/* An upstream SHA named by a branch commit ("commit X upstream."). */
struct repo_upstream {
	char sha[REPO_HEX_SIZE]; /* lower-case, as long as written (>= 8) */
	git_oid commit; /* the branch commit naming it */
	size_t order; /* walk order: lower is newer */
};

struct repo {
	git_repository *git;
	/* repo_objects_in_memory()'s store of what r writes, or NULL, and
	 * the database on disk under it (held), read without a copy */
	git_odb_backend *mem;
	git_odb *disk;
	char *workdir;
	char *committer_name;
	char *committer_email;

	/* Upstream SHAs named along cache_tip's history (repo-history.c). */
	int cache_valid;
	git_oid cache_tip;
	struct repo_upstream *ups;
	size_t nups, aups;
	size_t ups_sorted; /* ups[0..ups_sorted) is sorted by sha */
	/* The subjects reverted along cache_tip's history ("Revert \"x\""
	 * commits), with the reverting commit; newest first per walk. */
	struct repo_revert {
		char *subject;
		git_oid commit;
	} *revs;
	size_t nrevs, arevs;
};
/* Drops the subjects of the revert cache (repo-history.c). */
void repo_reverts_clear(struct repo *r);

/*
 * Sets err_msg() to "<what>: <libgit2's last message>" and returns the
 * ERR_* code matching libgit2's code (GIT_ENOTFOUND -> ERR_NOTFOUND ...).
 */
__attribute__((format(printf, 2, 3))) int repo_git_err(int gitcode,
						       const char *fmt, ...);

/* libgit2 reference counting for the process: init once, never shut down. */
void repo_lib_init(void);

/*
 * The import (repo-extract.c): an object database writing loose objects
 * at zlib level 1 without fsync, as `git add` does; a file's (or
 * symlink's) blob written through it; and the tarball extracted by tar
 * while workers write the blobs of the files tar has finished.
 * repo_early_find() gives the blob of path if it was written with that
 * size (1), else 0: hash it again.
 */
struct repo_early;
int repo_fast_odb(git_odb **out, const char *objects_dir);
int repo_write_file_blob(git_odb *odb, const char *abs, int is_link,
			 struct strbuf *buf, git_oid *oid, long long *size);
int repo_extract(struct repo_early **out, const char *tarball, const char *dir,
		 const char *objects_dir, int nworkers,
		 repo_progress_fn *progress, void *ctx);
int repo_early_find(const struct repo_early *e, const char *path,
		    long long size, git_oid *oid);
void repo_early_free(struct repo_early *e);

/* Records that the worktree holds commit (repo-checkout.c). */
int repo_record_worktree(git_repository *git, const git_oid *commit);

/* Resolves spec to an object peeled to type (GIT_OBJECT_ANY: tags peeled). */
int repo_lookup(struct repo *r, git_object **out, const char *spec,
		git_object_t type);

/*
 * A patch's diff as data (repo-diff.c). Strings are owned by the structs
 * (repo_diff_release()), except diff_line.s, which points into the text given
 * to repo_diff_parse() (or into the diff it was reversed from): keep that
 * alive.
 */
struct diff_line {
	const char *s; /* content, without the +/-/space and the newline */
	size_t len;
	char op; /* ' ', '-', '+' */
	int nl; /* ends with a newline ("\ No newline" clears it) */
};

struct diff_hunk {
	long os, ol, ns, nl; /* @@ -os,ol +ns,nl @@ */
	char *section; /* what follows the second "@@", or "" */
	char *header; /* "@@ -40,7 +40,8 @@" as written, for messages */
	struct diff_line *lines;
	size_t nlines;
	long pos; /* located 0-based line in the file as patched so far */
};

struct diff_file {
	char *old_path, *new_path; /* NULL: /dev/null */
	int is_git;
	struct strbuf ext; /* git extended header lines, as written */
	unsigned old_mode, new_mode;
	int keep_mode; /* the diff says no mode: old/new_mode are the file's
			* (set by the apply, emitted as mode lines) */
	int added, deleted, renamed, copied;
	int binary; /* 1: "GIT binary patch" data, 2: no data */
	struct strbuf bindata; /* the binary patch lines */
	struct diff_hunk *hunks;
	size_t nhunks;
};

struct diff_set {
	struct diff_file *f;
	size_t n;
};

static inline const char *diff_file_path(const struct diff_file *f)
{
	return f->new_path ? f->new_path : f->old_path;
}

/*
 * Parses every file diff in text: git diffs ("diff --git" and extended
 * headers, binary patches kept as they are), or, when there is none,
 * quilt / `diff -u` diffs ("---" and "+++" lines, -p1 paths, timestamps).
 * Text before the first diff (mail headers, message, diffstat) and after
 * the last hunk is skipped. name prefixes error messages. ERR_INVALID for
 * no diff, a bad hunk header, a truncated hunk.
 */
int repo_diff_parse(struct diff_set *out, const char *text, size_t len,
		    const char *name);
void repo_diff_release(struct diff_set *d);
/* The diff that undoes in: files in reverse order, +/- swapped. */
void repo_diff_reverse(struct diff_set *out, const struct diff_set *in);
/* As a git diff, hunks at their located pos (libgit2 applies there). */
void repo_diff_emit(struct strbuf *sb, const struct diff_set *d);

/*
 * The blob id git gives text (repo-overlay.c), hashed by OpenSSL:
 * libgit2's collision-detecting SHA-1 is a fifth of what checking
 * patches of big files costs (bench/checks.sh), and the ids are the
 * same. 0, or -1 when OpenSSL fails.
 */
int repo_blob_id(git_oid *out, const char *text, size_t len);

/* The overlay's internals, shared by repo-overlay.c and repo-apply.c. */
enum { VIEW_NONE, VIEW_FILE, VIEW_DIR };
void repo_overlay_put(struct repo_overlay *ov, const char *path,
		      const git_oid *id, unsigned mode, int gone);
/*
 * A file as git apply's image (repo-apply.c): its lines, each pointing
 * into a buffer the image holds a reference to (the blob read, the lines
 * the patches of the run added, copied). repo_image_text: the file as
 * text (*len bytes, the caller frees it).
 */
void repo_image_free(struct repo_image *img);
char *repo_image_text(const struct repo_image *img, size_t *len);
/* A file's new lines (img taken, freed with the overlay), its id pending. */
void repo_overlay_put_image(struct repo_overlay *ov, const char *path,
			    struct repo_image *img, unsigned mode);
/* The image of path when the overlay holds one, or NULL (mode filled). */
const struct repo_image *repo_overlay_image(const struct repo_overlay *ov,
					    const char *path, unsigned *mode);
int repo_overlay_has_below(const struct repo_overlay *ov, const char *dir,
			   int (*keep)(void *, const char *), void *arg);
/*
 * What the tree with the overlay on top has at path: VIEW_FILE (id and
 * mode filled), VIEW_DIR or VIEW_NONE.
 */
int repo_overlay_view(git_tree *tree, const struct repo_overlay *ov,
		      const char *path, git_oid *id, unsigned *mode);

#endif
