/* cell.h: the matrix of a candidate: one cell per (arch, compiler), each built, booted and judged. */
#ifndef STABLEQ_CELL_H
#define STABLEQ_CELL_H

#include "candidate.h"
#include "ctx.h"

#include <jansson.h>

struct strbuf;

/*
 * A branch tests the cells of its `arches` times its `compilers` (config:
 * `arches = x86_64 arm64`, `compilers = gcc clang`; defaults x86_64 and
 * gcc: one cell, as before). The first cell (first arch, first compiler)
 * is the candidate's own: its build, boot and tests are the candidate's
 * rows as they always were. Every other cell of a queue or confirm
 * candidate runs as a child candidate of the same patches (cell_of: the
 * parent) in its own build directory (BUILD_DIR-ARCH-COMPILER) with its
 * own build cache entries (the cache key holds the cell's compiler and
 * arch), its own boot (lib/karch.h) and its failures compared against the
 * same cell's run of the tip. The verdict over the matrix:
 *
 *   - the first cell's verdict, when it did not pass;
 *   - else the first other cell that failed: "build-failed (clang)",
 *     "fail (arm64)"... the candidate's verdict, the cell named in its
 *     detail (its failure follows);
 *   - a cell that could not run (its toolchain missing, clang older than
 *     the tree's minimum) is "not run" with why, never a pass, and does
 *     not fail the candidate.
 *
 * A failure in one cell bisects on that cell alone (bisect.c takes
 * cell_failing() and gives every step the cell: cell_copy()); the revert's
 * confirmation is a confirm candidate and runs the whole matrix.
 */
struct cell {
	const char *arch;     /* "x86_64", "arm64" (static) */
	const char *compiler; /* "gcc", "clang" (static) */
};

/* The branch's cells, first the candidate's own; *cells: caller frees. */
int cell_matrix(const struct config *c, struct cell **cells, size_t *n);
/* The branch's first cell: the candidate's own (and its idle baseline's). */
int cell_first(const struct config *c, struct cell *first);
/*
 * Candidate id's cell: the one stored on its row, else (a row from before
 * the matrix, or just created) the branch's first cell, stored now.
 */
int cell_get(struct branch_ctx *bc, long long id, struct cell *c);
/* The stored cell, read only; x86_64/gcc for a row without one. */
int cell_of_row(sqlite3 *db, long long id, struct cell *c);
/* Gives candidate to the cell of candidate from. 0 or negative. */
int cell_copy(sqlite3 *db, long long from, long long to);
/* 1 for x86_64/gcc: the build directory and cache keys of before. */
int cell_is_default(const struct cell *c);
/* "x86_64/gcc" (static buffer per call site is not needed: caller frees). */
char *cell_name(const struct cell *c);
/*
 * What a cell's build uses: its build directory (the branch's for
 * x86_64/gcc, else BUILD_DIR-ARCH-COMPILER) and fragment directory (an
 * arch's own: FRAGMENTS/arm64, with base.config and debug.config of its
 * own and tests.config shared). Caller frees.
 */
char *cell_build_dir(const struct branch_ctx *bc, const struct cell *c);
/* base for x86_64/gcc, else BASE-ARCH-COMPILER: a cell's own directory. */
char *cell_path(const char *base, const struct cell *c);
char *cell_fragments(const char *fragments, const struct cell *c);
/* kbuild_compiler_id() of the cell: the build cache key's compiler part. */
int cell_compiler_id(const struct cell *c, char **out);

/*
 * The worktree a cell builds from: the branch's tree_dir for its first
 * cell (the candidate's own), else TREE_DIR-ARCH-COMPILER, a linked
 * worktree of it (repo_worktree_ensure()), so that cells run side by side
 * each check their states out alone: *dir, made when it is not there yet.
 * Caller frees *dir.
 */
int cell_tree_ready(const struct branch_ctx *bc, const struct cell *c,
		    char **dir);

/*
 * The other cells of queue or confirm candidate id, each a child candidate
 * of the same patches run by a process of its own (`stableq candidate
 * --run CHILD`, its output in VAR_DIR/log/cell-CHILD.log), in its own
 * worktree and build directory. cell_runs_start() makes every child and
 * starts as many as cell_jobs allows beside the candidate's own cell
 * (*out NULL when there are no other cells, or id is a child or of another
 * purpose: bisect, baseline). Once the own cell gave *verdict (with *why
 * its detail), cell_run_matrix() runs the rest and waits for all: a cell
 * that failed fails the candidate by name ("build-failed (clang):
 * candidate N: ..."), the first in matrix order; a cell that could not run
 * is marked not run with why, never a pass; cr is freed. When the own
 * cell ended first, cell_runs_end() instead stops the cells still waiting
 * or running (each marked not run, why) and frees cr. Negative when the
 * store failed.
 */
struct cell_runs;
int cell_runs_start(struct branch_ctx *bc, long long id,
		    struct cell_runs **out,
		    void (*progress)(const char *line, void *ctx), void *ctx);
int cell_run_matrix(struct branch_ctx *bc, struct cell_runs *cr,
		    enum cand_verdict *verdict, struct strbuf *why);
void cell_runs_end(struct branch_ctx *bc, struct cell_runs *cr,
		   const char *why);

/*
 * The candidate whose failure a bisection of id should follow: the child
 * whose cell failed the matrix when id's own cell passed, else id.
 */
long long cell_failing(sqlite3 *db, long long id);

/*
 * The matrix of candidate id: [{arch, compiler, candidate, verdict,
 * detail, tests, not_run}], the failing cells first; [] without children.
 * And in one line: "x86_64/gcc 9 tests, x86_64/clang build-failed,
 * arm64/gcc 9" (NULL without children; caller frees).
 */
json_t *cell_list_json(sqlite3 *db, long long id);
char *cell_line(sqlite3 *db, long long id);

#endif
