/* repo.h: the stable tree's git repository, through libgit2. */
#ifndef STABLEQ_REPO_H
#define STABLEQ_REPO_H

#include <stddef.h>

/*
 * Conventions for every function here:
 * - Out-params first after the repo; return 0 (or 1 for "yes / already")
 *   on success and a negative ERR_* code (err.h) on failure, with the human
 *   message in err_msg() (libgit2's own message appended where it helps).
 * - Object ids go in and out as 40-digit lower-case hex strings: callers
 *   pass a `char out[REPO_HEX_SIZE]` buffer. "spec" arguments accept what
 *   `git rev-parse` does: a ref or branch name, a tag ("v6.1.192"), a full or
 *   abbreviated SHA; tags are peeled to the object they point at.
 * - Strings returned through `char **` are owned by the caller (free()).
 *   Everything else is borrowed for the duration of the call.
 * - A struct repo is not thread-safe: use it from one thread at a time.
 */

#define REPO_HEXSZ 40
#define REPO_HEX_SIZE (REPO_HEXSZ + 1)
/* Shortest abbreviated SHA accepted where a prefix is allowed. */
#define REPO_MIN_ABBREV 8

struct repo;

/*
 * Progress: phase is "extracting", "scanning", "importing", "writing
 * index"; total is 0 while unknown. Called from the calling thread only;
 * phase is a string literal.
 */
typedef void repo_progress_fn(void *ctx, const char *phase, size_t done,
			      size_t total);

/*
 * Makes dir a git repository holding the Debian linux-source tarball:
 * extracts it (tar, through spawn; its one top directory is stripped),
 * imports every file whatever the tarball's own .gitignore says, keeping
 * executable bits and symlinks, commits it as "Linux <version>" with a fixed
 * author, committer and date (the Makefile's mtime, so the same tarball
 * gives the same commit), tags it v<version> (annotated), creates branch on
 * it and points HEAD at branch. The version comes from the Makefile's
 * VERSION, PATCHLEVEL, SUBLEVEL (and EXTRAVERSION).
 *
 * The work happens in "<dir>.import-tmp", renamed to dir at the end, so an
 * interrupted import leaves no half tree behind (a rerun starts over).
 * While tar extracts, worker threads (one per CPU, at most 8; the
 * STABLEQ_IMPORT_THREADS environment variable overrides) write the blobs of
 * the files tar has finished, as loose objects at zlib level 1 without
 * fsync (what `git add` does); the rest is written after tar, then trees
 * and an index with stat data, so git sees a clean tree. On the kernel tree
 * this takes about as long as tar alone (bench/tree-import.sh).
 *
 * Returns 0 after an import, 1 when dir already holds this tarball's tag
 * (nothing is changed), or negative: ERR_NOTFOUND for a missing tarball (the
 * message names the Debian package linux-source-6.1), ERR_EXISTS when dir
 * is in the way (not empty and not a stableq tree, or a tree of another
 * version). *version (may be NULL) receives "6.1.192"; the caller frees it.
 * progress may be NULL.
 */
/*
 * 0 when the kernel source tarball is there; else an error naming the
 * Debian package it comes with ("/usr/src/linux-source-6.12.tar.xz: no
 * such file; it comes with the Debian package linux-source-6.12 ...").
 */
int repo_source_check(const char *tarball);
int repo_init_from_tarball(const char *tarball, const char *dir,
			   const char *branch, char **version,
			   repo_progress_fn *progress, void *ctx);

/* Opens the repository whose worktree (or .git) is dir. *out: repo_free(). */
int repo_open(struct repo **out, const char *dir);
void repo_free(struct repo *r);
/* The worktree path (borrowed from r). */
const char *repo_workdir(const struct repo *r);
/*
 * Makes dir a linked worktree of the repository at main_dir, named name in
 * its .git/worktrees, with a branch of that name at main_dir's HEAD (the
 * first repo_checkout() writes its files: it is made without any). Once
 * made it is kept: 0 at once when dir is already a worktree of main_dir.
 * Refused when dir is another repository, or holds files and is none; a
 * worktree registered under name whose directory is gone is pruned first.
 */
int repo_worktree_ensure(const char *main_dir, const char *dir,
			 const char *name);

/*
 * Resolves spec to an object id (tags peeled). ERR_NOTFOUND if nothing
 * matches, ERR_INVALID if an abbreviated SHA is ambiguous.
 */
int repo_resolve(struct repo *r, const char *spec, char out_hex[REPO_HEX_SIZE]);
/* The tree of the commit (or tree) spec names. */
int repo_tree_of(struct repo *r, const char *spec, char out_hex[REPO_HEX_SIZE]);
/* The full message of a commit. *message: caller frees. */
int repo_commit_message(struct repo *r, const char *spec, char **message);
/*
 * `git describe --tags` of spec: "v6.1.192" on the tag, or
 * "v6.1.192-3-g0123456789ab" past it. ERR_NOTFOUND if no tag is reachable.
 */
int repo_describe(struct repo *r, const char *spec, char **out);

/*
 * The `fixes` check, presence questions. sha is hex, REPO_MIN_ABBREV to 40
 * digits (ERR_INVALID otherwise); abbreviated SHAs match as prefixes.
 *
 * repo_commit_in_history: is a commit whose id starts with sha reachable
 * from tip_spec (tip included)? 1 yes, 0 no, negative on error.
 */
int repo_commit_in_history(struct repo *r, const char *tip_spec,
			   const char *sha);
/*
 * repo_object_exists: how many objects' ids start with sha? 1 one (what
 * repo_resolve() finds for a SHA, without trying it as a ref name first: a
 * dozen failed file lookups a call), 0 none, 2 several (repo_resolve()
 * refuses it as ambiguous), negative on error.
 */
int repo_object_exists(struct repo *r, const char *sha);
/*
 * Finds a commit reachable from tip_spec whose message names upstream_sha
 * in a "commit <sha> upstream." line or a "[ Upstream commit <sha> ]" line
 * (prefix match both ways: either side may be abbreviated). 1 found
 * (out_hex, may be NULL, gets the newest such commit), 0 none, negative on
 * error. The upstream SHAs named along a tip's history are cached in r;
 * a later tip that descends from the cached one only walks the new commits.
 */
int repo_find_backport(struct repo *r, const char *tip_spec,
		       const char *upstream_sha, char out_hex[REPO_HEX_SIZE]);
/*
 * Finds a commit reachable from tip_spec whose summary is
 * `Revert "<subject>"` (git's own form): 1 (out_hex, may be NULL, gets it),
 * 0 none, negative on error. Cached with repo_find_backport()'s walk.
 */
int repo_find_revert(struct repo *r, const char *tip_spec,
		     const char *subject, char out_hex[REPO_HEX_SIZE]);
/*
 * A repository as an index of releases (repo-walk.c). repo_version_tags:
 * the tags that name a version (v6.8, v6.1.5, v6.9-rc1; others are left
 * out), each with its commit and that commit's time, in version order
 * (v6.1-rc1, v6.1, v6.1.5, v6.2-rc1). *tags: caller frees.
 */
struct repo_tag {
	char name[64];
	char commit[REPO_HEX_SIZE];
	long long time;
};
int repo_version_tags(struct repo *r, struct repo_tag **tags, size_t *n);
/*
 * repo_walk: the commits reachable from push and not from hide (NULL:
 * none), newest first; fn gets each (strings borrowed for the call:
 * summary, the raw message, the upstream commit a stable backport names or
 * NULL). A nonzero return of fn stops the walk and is returned.
 */
struct repo_walk_commit {
	char sha[REPO_HEX_SIZE];
	const char *summary, *message, *backport_of;
};
typedef int repo_walk_fn(void *ctx, const struct repo_walk_commit *c);
int repo_walk(struct repo *r, const char *push, const char *hide,
	      repo_walk_fn *fn, void *ctx);
/* The `applies` check and candidate building. */
enum repo_apply_status {
	REPO_APPLY_CLEAN = 0,
	REPO_APPLY_CONFLICT = 1,
	REPO_APPLY_ALREADY = 2, /* the diff applies in reverse: already there */
};

struct repo_apply_result {
	enum repo_apply_status status;
	/*
	 * Owned, freed by repo_apply_result_release(). Conflict: the human
	 * reason, "lib/foo.c: hunk #2 (@@ -40,7 +40,8 @@) does not apply";
	 * file: the file that did not apply (NULL when clean); hunk: its
	 * 1-based number, 0 when the whole file is the problem (missing, or
	 * created but already there).
	 */
	char *detail;
	char *file;
	int hunk;
	int files; /* files the diff touches */
	int offsets; /* hunks that applied at an offset (as `git apply` does) */
};

/*
 * Applies diff_text (a git diff, a quilt/`diff -u` diff without
 * "diff --git" lines, or a whole mail / `git show` text: what comes before
 * the first diff is skipped) to the tree of base (a tree or commit spec),
 * with libgit2 (git_apply_to_tree). Hunks whose context has moved apply at
 * the nearest offset where all their context matches, as `git apply` does
 * (no fuzz; a hunk at line 1 must match at the start, one without trailing
 * context at the end). On REPO_APPLY_CLEAN new_tree_hex gets the resulting
 * tree; only the trees on the paths the diff names are rewritten, so a
 * patch costs milliseconds on the kernel tree.
 * Returns 0 when the diff was tried (look at res->status; release res), or
 * negative: ERR_INVALID when diff_text holds no diff or a malformed one,
 * ERR_NOTFOUND when base does not resolve.
 */
int repo_apply(struct repo *r, const char *base, const char *diff_text,
	       char new_tree_hex[REPO_HEX_SIZE], struct repo_apply_result *res);
void repo_apply_result_release(struct repo_apply_result *res);

/*
 * A tree and changes made to it since, kept as file updates rather than
 * written trees: the checks' running tree (the branch plus the patches
 * queued so far). Writing the whole tree back after each patch
 * (git_tree_create_updated: read, hash and write every tree on the path)
 * was a third of what checking a queue cost, for a tree that is only
 * read. Entries are sorted by path; a removed file has gone set.
 */
struct repo_image;
struct repo_overlay_entry {
	char *path;
	unsigned char id[20];
	unsigned mode;
	int gone;
	/* the file as lines when the checks' apply made it (owned): the
	 * next patch of the run starts from them, not from text split
	 * again; text: the same as text (owned), made when asked; pending:
	 * its id is not written yet (hashed when a tree needs it: a big
	 * file changed by several patches is hashed once, not each time) */
	struct repo_image *image;
	char *text;
	size_t len;
	int pending;
};
struct repo_overlay {
	struct repo_overlay_entry *e;
	size_t n, alloc;
};
void repo_overlay_release(struct repo_overlay *ov);
/* Moves delta's entries into ov (delta's win), leaving delta empty. */
void repo_overlay_merge(struct repo_overlay *ov, struct repo_overlay *delta);
/*
 * repo_apply() on the tree of base with ov's changes on top (ov NULL:
 * none). On a clean apply, delta (emptied first) gets the files the diff
 * changes; nothing is written but the new blobs.
 */
int repo_apply_overlay(struct repo *r, const char *base,
		       const struct repo_overlay *ov, const char *diff_text,
		       struct repo_overlay *delta,
		       struct repo_apply_result *res);
/* The tree of base with ov and then delta (either may be NULL) applied. */
int repo_overlay_tree(struct repo *r, const char *base,
		      const struct repo_overlay *ov,
		      const struct repo_overlay *delta,
		      char hex[REPO_HEX_SIZE]);
/*
 * The tree of base with ov on top, written with every object it names into
 * the repository's object database on disk, also when r keeps what it
 * writes in memory (repo_objects_in_memory()): only what the disk lacks is
 * written, children before the trees naming them. hex gets the tree.
 * repo_tree_kept: 1 when hex is a tree on disk, else 0.
 */
int repo_overlay_keep(struct repo *r, const char *base,
		      const struct repo_overlay *ov, char hex[REPO_HEX_SIZE]);
int repo_tree_kept(struct repo *r, const char *hex);
/* The blob id git gives text (a content hash, hex). */
void repo_text_hash(const char *text, size_t len, char hex[REPO_HEX_SIZE]);
/* repo_paths_exist() on base with ov on top. */
int repo_paths_exist_overlay(struct repo *r, const char *base,
			     const struct repo_overlay *ov,
			     const char *const *paths, size_t n,
			     unsigned char *exists);

/*
 * From now on the objects r writes (the trees and blobs of repo_apply())
 * stay in memory and are gone with r: for the checks, whose trees are
 * answers, not results (a candidate applies its patches again). Commits,
 * branches and checkouts through r would name objects that are not on
 * disk: such an r is for reading and trying patches only.
 */
int repo_objects_in_memory(struct repo *r);
/*
 * The commits reachable from tip_spec when there are at most max (a tree
 * imported from a tarball has one): 1 with *ids (caller frees) and *n, 0
 * when there are more (ask repo_commit_in_history()), negative on error.
 */
int repo_history_small(struct repo *r, const char *tip_spec, size_t max,
		       char (**ids)[REPO_HEX_SIZE], size_t *n);
/*
 * repo_apply() of the diff that undoes diff_text (repo-paths.c), so
 * new_tree_hex is base without the change (REPO_APPLY_CLEAN), as the
 * revert of a patch would leave it.
 */
int repo_apply_reverse(struct repo *r, const char *base, const char *diff_text,
		       char new_tree_hex[REPO_HEX_SIZE],
		       struct repo_apply_result *res);

/*
 * A patch's own lines as evidence, in the tree of base with ov on top (ov
 * may be NULL); what was found or missed is appended to why (may be NULL).
 *
 * repo_file_overlay: appends the file at path to out: 1, or 0 when there
 * is no file there.
 *
 * repo_lines_placed (repo-lines.c): is the patch there by its content,
 * even where it neither applies nor applies in reverse (a later release
 * moved its lines or changed their context)? 1 when every run of lines it
 * adds stands in its file as one block, next to a telling line the patch
 * keeps beside it (blank lines anchor nothing), or anywhere when the run
 * has three telling lines (lines of at least 8 characters) or is one line
 * of 40 the file holds once (a fix often adds a line its file has
 * elsewhere: an unlock); no telling block it removes is still at its
 * place (a removed run found elsewhere in the file is other code), files
 * it deletes are gone, and at least one run is telling (two telling lines,
 * or one of 24; a removed run whose kept neighbours now stand side by side
 * counts too: a pure deletion); 0 otherwise (also for binary diffs and for
 * code the patch moves within its files, white space around lines aside:
 * a dropped guard's dedented statement).
 * A hunk whose old side stands in the file (it applies there) is never
 * placed when it removes a line: what it removes is still there; when it
 * only adds, its added lines count only away from that place, nearby (a
 * later change moved them), and never when they double a line it keeps.
 * With edited set (a release lists the patch), a run of three telling
 * lines also stands when all but one of its lines do, between both the
 * lines the patch keeps beside it: a later release edited one line of it.
 *
 * repo_lines_nowhere: is the code the patch changes missing? 1 when none
 * of the lines it removes or keeps as context is anywhere in the files it
 * changes (white space around lines ignored; at least 3 telling lines
 * looked for), why naming them; else 0. Generic lines do not count
 * ("err = -ENOMEM;", a comment's end): a removed line of 16 characters,
 * a kept one of 24, or two of its old lines standing together (one
 * telling) do.
 * ERR_INVALID for a malformed diff.
 */
struct strbuf;
int repo_file_overlay(struct repo *r, const char *base,
		      const struct repo_overlay *ov, const char *path,
		      struct strbuf *out);
int repo_lines_placed(struct repo *r, const char *base,
		      const struct repo_overlay *ov, const char *diff_text,
		      int edited, struct strbuf *why);
int repo_lines_nowhere(struct repo *r, const char *base,
		       const struct repo_overlay *ov, const char *diff_text,
		       struct strbuf *why);
/*
 * The files a diff makes symlinks (mode 120000) or gitlinks (160000):
 * how many, described in why (may be NULL): "x is a symlink pointing
 * outside the tree (../../etc)", "y is a gitlink (a submodule commit),
 * not a file". Text from the patch is made safe. ERR_INVALID for a
 * malformed diff.
 */
int repo_diff_links(const char *diff_text, struct strbuf *why);

/*
 * Creates a commit object (no ref changes): parent_hex may be NULL for a
 * root commit; author_date may be NULL (now), or a mail date
 * ("Thu, 4 Aug 2016 12:00:00 +0200"), a git date
 * ("Thu Aug 4 12:00:00 2016 +0200"), ISO ("2016-08-04 12:00:00 +0200") or
 * "@<epoch> [+zzzz]". The committer is r's (now).
 */
int repo_commit(struct repo *r, const char *parent_hex, const char *tree_hex,
		const char *author_name, const char *author_email,
		const char *author_date, const char *message,
		char out_hex[REPO_HEX_SIZE]);
/*
 * Points refs/heads/branch at commit_hex. expected_old_hex: NULL sets it
 * whatever it was; "" requires that the branch does not exist yet; a SHA
 * requires that the branch is still there (compare-and-swap under the ref
 * lock). ERR_CONFLICT when the branch moved or exists.
 */
int repo_set_branch(struct repo *r, const char *branch, const char *commit_hex,
		    const char *expected_old_hex);
/* The commit refs/heads/branch points at; ERR_NOTFOUND if no such branch. */
int repo_branch_tip(struct repo *r, const char *branch,
		    char out_hex[REPO_HEX_SIZE]);

/*
 * Makes the worktree exactly the commit spec names (force), HEAD detached
 * at it. Only the files that differ from what the worktree held are
 * written or removed (files the commit lacks are deleted, and directories
 * left empty), so mtimes of the others stay and kernel builds stay
 * incremental. Untracked files are left alone. No checkout filters
 * (eol, ident) are applied: the kernel tree asks for none.
 *
 * What the worktree holds is recorded in .git/stableq-worktree by every
 * checkout and by the import. While that record matches HEAD and the index
 * file, a checkout costs a tree diff that skips equal subtrees plus the
 * changed files: milliseconds on the kernel tree. That fast path does not
 * rewrite the index (78k entries: more than all the rest), so `git status`
 * in the tree shows the difference from the last full checkout; `git
 * reset -q` resyncs it. A git command that moves HEAD or writes the index
 * (checkout, reset, even status or diff, which refresh it) voids the record,
 * as does an interrupted checkout: the next checkout is then a full libgit2
 * checkout that compares every file (a few seconds on the kernel tree) and
 * makes the index the commit.
 */
int repo_checkout(struct repo *r, const char *spec);

/*
 * Reverts commit_hex on top of branch's tip (as `git revert --no-edit`,
 * same resulting tree), commits it (author given, committer r's) and moves
 * the branch with a compare-and-swap. message NULL: git's default
 * ("Revert \"<subject>\"\n\nThis reverts commit <sha>.\n"). On conflicts:
 * ERR_CONFLICT naming the conflicting files, nothing changed. out_hex (may
 * be NULL) gets the revert commit. The worktree is not touched. The
 * message is stored as patch_safe_message() makes it, since it goes out
 * as a patch file and in mail.
 */
int repo_revert(struct repo *r, const char *branch, const char *commit_hex,
		const char *message, const char *author_name,
		const char *author_email, char out_hex[REPO_HEX_SIZE]);

/*
 * A `git format-patch` style mail of commit spec against its first parent:
 * "From <sha> Mon Sep 17 00:00:00 2001", From:, Date:,
 * "Subject: [<subject_prefix>] <subject>", body, "---", diffstat, diff.
 * subject_prefix NULL: "PATCH". *out: caller frees.
 */
int repo_format_patch(struct repo *r, const char *spec,
		      const char *subject_prefix, char **out);

/*
 * What a release writes and shows (repo-release.c).
 * repo_tree_put_file: the tree of base with path (an existing file keeps
 * its mode) holding data; out_hex gets the new tree (nothing else moves).
 * repo_tag_create: an annotated tag name on commit_hex by the tagger, with
 * message; force replaces a tag of that name, else ERR_EXISTS.
 * repo_diff_text: `git diff from to` (trees of two commits, renames found,
 * binary patches included), appended to out.
 * repo_diffstat: `git diff --stat=WIDTH from to` as git prints it (git's
 * show_stats(): names sorted by path, aligned, the graph scaled into
 * width, "1 file changed, 1 insertion(+)"), and with summary the lines of
 * --summary for created and deleted files (as git format-patch shows
 * them), appended to out. width 0: 80, what `git diff --stat` uses off a
 * terminal.
 */
int repo_tree_put_file(struct repo *r, const char *base, const char *path,
		       const char *data, size_t len,
		       char out_hex[REPO_HEX_SIZE]);
int repo_tag_create(struct repo *r, const char *name, const char *commit_hex,
		    const char *tagger_name, const char *tagger_email,
		    const char *message, int force);
int repo_diff_text(struct repo *r, const char *from, const char *to,
		   struct strbuf *out);
int repo_diffstat(struct repo *r, const char *from, const char *to,
		  int width, int summary, struct strbuf *out);

/*
 * The daemon's job table asks each module whether its step is due: 1 (and
 * *id when the step is about one row), 0 when not. Here: the stable tree
 * is missing (`stableq tree init`).
 */
struct branch_ctx;
int repo_init_due(struct branch_ctx *bc, long long *id);

/*
 * A public-inbox v2 epoch (gitdir: INBOX/git/N.git, bare): each commit adds
 * one message as the file `m`. repo_inbox_tip() puts its newest commit in
 * out ("" for an epoch without one). repo_inbox_walk() calls fn for every
 * message of the commits after `after` (NULL or "": all), oldest first,
 * with the commit's hex id and the message's bytes (borrowed for the
 * call); fn returning negative stops the walk with that value. tip gets
 * the newest commit walked, to pass as `after` next time. A history no
 * longer holding `after` (public-inbox-purge rewrote it) is walked whole.
 */
typedef int repo_inbox_fn(void *ctx, const char *commit, const char *buf,
			  size_t len);
int repo_inbox_tip(const char *gitdir, char out[REPO_HEX_SIZE]);
int repo_inbox_walk(const char *gitdir, const char *after,
		    repo_inbox_fn *fn, void *ctx, char tip[REPO_HEX_SIZE]);

/* "6.1.192" from the v6.1.192 tag the tip descends from; caller frees. */
int repo_branch_version(struct repo *r, const char *tip, char **version);
/* The same for a tree and branch by name; NULL when not there. Caller frees. */
char *repo_dir_branch_version(const char *tree_dir, const char *branch);

/* Is s between REPO_MIN_ABBREV and 40 hex digits? Lower-cases it into out. */
int repo_sha_arg(char out[REPO_HEX_SIZE], const char *s);
/* Extracts the upstream SHAs a message names; calls fn for each. */
void repo_upstream_lines(const char *msg, size_t len,
			 void (*fn)(void *ctx, const char *sha, size_t n),
			 void *ctx);
/* Is a (len la) a prefix of b or b of a, both at least REPO_MIN_ABBREV? */
int repo_sha_prefix_match(const char *a, size_t la, const char *b, size_t lb);

#endif
