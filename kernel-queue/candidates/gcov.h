/* gcov.h: a coverage boot: which of the lines each patch adds or changes the test set ran. */
#ifndef STABLEQ_GCOV_H
#define STABLEQ_GCOV_H

#include "ctx.h"
#include "repo.h"
#include "strbuf.h"

#include <jansson.h>

/*
 * Build coverage says a patch's file is in the booted kernel; a coverage
 * boot says which of the lines it adds or changes the test set executed.
 * With coverage_boot = yes (per branch), after the candidate's verdict:
 *
 *  1. The objects to profile: each .c file of the candidate's patches that
 *     build coverage found in the booted kernel ('booted'), as its .o,
 *     unless its directory's Makefile turns gcov off for it
 *     (`GCOV_PROFILE := n`, `GCOV_PROFILE_x.o := n`: early boot, vdso,
 *     code that runs before gcov can; forcing it would break the boot).
 *  2. A kernel of its own in coverage_build_dir/gcov: the guest's fragments
 *     plus CONFIG_DEBUG_FS=y and CONFIG_GCOV_KERNEL=y, built with
 *     `GCOV_PROFILE_x.o=y` on make's command line for each object (a
 *     command-line variable reaches every directory's Makefile, so the
 *     candidate's tree is built as it is, and only those objects carry
 *     gcov's counters; kbuild matches the name without its directory, so
 *     a same-named object elsewhere is profiled too and ignored). The
 *     directory is reused, so a second coverage boot of the same objects
 *     rebuilds only what changed (and ccache serves the rest).
 *  3. One boot of the whole test set with `stableq.gcov` on the command
 *     line: after the tests /init mounts debugfs and prints each
 *     every .gcda under /sys/kernel/debug/gcov on the console, base64 between
 *     `@@stableq gcov-file PATH TOKEN` and `@@stableq gcov-end TOKEN`
 *     (the boot's random token: no test can forge a block). The boot's
 *     own results are not the candidate's (its verdict came before).
 *  4. Each block whose path names a profiled object is written next to
 *     the object's .gcno and `gcov --json-format --stdout` reads them;
 *     a line gcov lists is executable, executed when its count is not 0.
 *  5. Each patch's added lines (post-image line numbers of its own diff,
 *     patch_added_lines()) are looked up in every profiled object's
 *     output for that file (headers through the objects that include
 *     them): "exercised 12 of 14 changed lines", 14 being the changed
 *     lines gcov counts (comments, declarations and macro bodies are not
 *     code to it: a macro runs on the line that uses it).
 * Stored in patch_lines (per patch and file) and coverage_boots (per
 * candidate), both owned here.
 */

enum gcov_state { GCOV_NOT_CODE, GCOV_MISSED, GCOV_RAN };

/* One file of one patch: the lines it adds and what gcov said of each. */
struct gcov_file {
	long long patch_id;
	char *path;              /* owned */
	long *lines;             /* post-image line numbers, diff order */
	unsigned char *state;    /* per line: enum gcov_state */
	size_t n, alloc;
	int seen;                /* some profiled object's gcov output has it */
	char *why;               /* not profiled: why (owned), or NULL */
};

/*
 * Adds the lines patch_id's diff adds, one gcov_file per path (files and
 * n grow; free with gcov_files_free()). Negative for a malformed diff.
 */
int gcov_files_add(struct gcov_file **files, size_t *n, long long patch_id,
		   const char *diff);
/*
 * Merges one object's `gcov --json-format` output into files: a line it
 * lists for a file (its "file" equal to the path or ending in "/path") is
 * executable, and executed when its count is not 0. Returns how many
 * lines of files it counted, or ERR_INVALID when text is not gcov's JSON.
 */
int gcov_merge_json(struct gcov_file *files, size_t n, const char *text);
/* Executable and executed lines of one file. */
void gcov_file_counts(const struct gcov_file *f, long *executable,
		      long *executed);
void gcov_files_free(struct gcov_file *files, size_t n);

/* One .gcda file /init printed: its debugfs path and bytes. */
struct gcov_gcda {
	char *path;
	struct strbuf data;
};
/*
 * The gcov blocks of a console (text[0..len)) whose markers end with
 * token (needed: without one nothing counts). Lines inside a block that
 * are not base64 alone (a kernel message) are skipped; a block without
 * its end marker is dropped. At most 64 MiB in all. Free with
 * gcov_gcda_free().
 */
int gcov_console_gcda(const char *text, size_t len, const char *token,
		      struct gcov_gcda **out, size_t *n);
void gcov_gcda_free(struct gcov_gcda *g, size_t n);

/*
 * "exercised 12 of 14 changed lines"; "none of its 9 changed lines is
 * code gcov counts"; caller frees.
 */
char *gcov_lines_text(long executed, long executable, long changed);

/*
 * Runs the coverage boot of candidate id (built and verdict given; its
 * commit checked out in cfg.tree_dir) and stores what it found. Returns
 * 0 when it ran or had nothing to profile, negative when it could not
 * (err_msg(); stored as the coverage boot's summary too).
 */
int gcov_boot(struct branch_ctx *bc, struct repo *r, long long id,
	      const char *commit, void (*progress)(const char *line, void *ctx),
	      void *ctx);

/*
 * The patch's lines in candidate cid (cid 0: the newest candidate with a
 * coverage boot that has them): {candidate_id, changed, executable,
 * executed, text, files: [{path, changed, executable, executed, missed:
 * [line...], detail}]}, or JSON null.
 */
json_t *gcov_patch_json(sqlite3 *db, long long cid, long long pid);
/* One file of gcov_patch_json(): "lib/x.c: 12 of 14 code lines ran (not
 * run: 40, 41)" or "lib/x.h: not counted: why". Caller frees. */
char *gcov_file_line(const json_t *file);
/* The candidate's coverage boot: {summary, changed, executable, executed,
 * objects: [...], log_path, seconds}, or JSON null. */
json_t *gcov_candidate_json(sqlite3 *db, long long cid);

#endif
