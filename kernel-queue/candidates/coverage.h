/* coverage.h: build coverage: every file a candidate's patches touch goes to something that builds it. */
#ifndef STABLEQ_COVERAGE_H
#define STABLEQ_COVERAGE_H

#include "ctx.h"
#include "repo.h"

#include <jansson.h>

/*
 * The guest kernel (tinyconfig + fragments) compiles a small part of what
 * stable patches touch. After the candidate's guest build, every file of
 * every patch is sent to something that builds it, and the answer is
 * stored per patch and file (table coverage):
 *
 *   .c, .S     in the booted kernel when the guest build linked its object
 *              (vmlinux.a, lib/lib.a, arch/x86/lib/lib.a or a module of
 *              modules.order); else its object is
 *              compiled under a broad config (allmodconfig with
 *              cfg.coverage_config as KCONFIG_ALLCONFIG) in a build
 *              directory of its own, cfg.coverage_build_dir/ARCH.
 *   .h         in the booted kernel when a linked guest object depends on it
 *              (kbuild's .cmd dependency lists); else up to COVERAGE_HEADER_OBJS
 *              .c files that include it by name (`git grep` of the
 *              candidate's tree: its own directory first, then the rest in
 *              path order) are compiled as above.
 *   Kconfig*   the config step (allmodconfig, then `make prepare`, which
 *   Makefile   reruns Kconfig) and up to COVERAGE_DIR_OBJS .c files of its
 *   Kbuild     directory, in name order.
 *   arch/X/    with X's Debian cross compiler when it is installed (ARCH=X,
 *              CROSS_COMPILE=...), .dts as their .dtb; otherwise recorded
 *              'not-built' naming the missing package.
 *   the rest   (Documentation/, tools/, scripts/, ...) 'no-code', with why.
 *
 * Each broad build directory is configured once (again when the fragment
 * changes), `make prepare` runs once per tree state, then one
 * `make -k OBJ...` compiles the touched objects (removed first, so ccache
 * replays each one's diagnostics; what did not change is a cache hit). The
 * compiler is a small wrapper (BUILD/stableq-cc) that keeps each object's
 * diagnostics in OBJ.diag. An object that fails or warns is compiled
 * again at the branch tip (the tree before the queue; the worktree is
 * switched there and back, once per tip: those results are kept in table
 * object_builds); a clean one needs no comparison, so a cold run costs one
 * compile per object. An object that fails at the candidate but compiled
 * (or did not exist) before is a build failure; one that failed before too
 * is 'not-built' (it does not compile on its own under that config). A
 * warning (file and message, without line numbers) that the object did not
 * have before is a new warning of the patches touching the file.
 *
 * With clang in the branch's compilers, each file a broad config of
 * x86_64 or arm64 builds is compiled with clang too (LLVM=1, in
 * cfg.coverage_build_dir/ARCH-clang), stored as a row of its own
 * (compiler 'clang', config "x86_64 allmodconfig clang") and judged as
 * gcc's: its new warnings and its failures count as gcc's do. So is each
 * .c, .S and header in the booted kernel (its gcc row stays 'booted'):
 * its new clang warnings count the same; its clang failure is shown on its
 * row and left to the x86_64/clang cell, whose own build compiles that
 * file with clang and fails as "build-failed (clang)". Clang that
 * cannot run (missing, older than the tree's minimum) leaves those rows
 * 'not-built' with "not run (clang): why", and says so in the summary.
 */
#define COVERAGE_HEADER_OBJS 3
#define COVERAGE_DIR_OBJS 3

/* What coverage_run() found; owned, coverage_result_release() frees. */
struct coverage_result {
	int failed;      /* a touched object (or prepare) broke */
	char *error;     /* when failed: "patch N: OBJ: first error" */
	char *summary;   /* "58 of 62 patches compiled, 4 in the booted kernel" */
	int compiled;    /* patches with code compiled (booted included) */
	int booted;      /* patches with code in the booted kernel */
	int with_code;   /* patches that touch code */
	int warned;      /* patches flagged with new warnings */
};

/*
 * Computes and stores the coverage of candidate id, whose commit is
 * checked out in cfg.tree_dir and whose guest kernel was built in
 * cfg.build_dir; base is the branch tip it applies onto. The worktree may
 * be switched to base and back (only changed files are written). Adds a
 * 'warnings' verdict to each patch with new warnings. progress may be
 * NULL. Returns 0 when it ran (res says what it found), negative when it
 * could not (err_msg()).
 */
int coverage_run(struct branch_ctx *bc, struct repo *r, long long id,
		 const char *base, const char *commit,
		 struct coverage_result *res,
		 void (*progress)(const char *line, void *ctx), void *ctx);
void coverage_result_release(struct coverage_result *res);

/*
 * The first step of the plan, for one touched file, before anything is
 * built: its kind ("c", "asm", "header", "kconfig", "makefile", "dts",
 * "other"), the arch whose broad config builds it (its label: "x86_64
 * allmodconfig"), the object (.c, .S: "drivers/x.o", .dts: "x.dtb"; NULL
 * for the rest), config_step for Kconfig and Makefile files (the config
 * step builds them, with up to COVERAGE_DIR_OBJS objects of their
 * directory). Negative when it goes to no builder: status "no-code" or
 * "not-built" and why. A .c or .S of x86 the guest kernel linked is
 * 'booted' instead, and a header goes to what includes it (coverage_run()).
 * Release with coverage_route_release().
 */
struct coverage_route {
	const char *kind;
	const char *arch;
	const char *status;
	char *why;
	char *object;
	int config_step;
};
int coverage_route(const char *path, struct coverage_route *out);
void coverage_route_release(struct coverage_route *r);

/* {summary, with_code, compiled, booted, patches: [{patch_id, status,
 * files: [{path, kind, compiler, status, config, objects, detail,
 * warnings}]}]} */
json_t *coverage_candidate_json(sqlite3 *db, long long candidate_id);
/* The coverage of the patch in the latest candidate that covered it:
 * {candidate_id, status, files: [...]}, or JSON null. */
json_t *coverage_patch_json(sqlite3 *db, long long patch_id);

/* One file of those: "drivers/x.c: compiled (x86_64 allmodconfig:
 * drivers/x.o)", then its detail; new warnings on lines of their own,
 * indented for a listing indented by 4. Caller frees. */
char *coverage_file_text(const json_t *file);

#endif
