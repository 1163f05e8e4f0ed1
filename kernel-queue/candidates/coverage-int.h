/* coverage-int.h: what the coverage files share: the plan (coverage-plan.c), the builds (coverage-build.c), the verdict (coverage.c) and the report (coverage-report.c). No API. */
#ifndef STABLEQ_COVERAGE_INT_H
#define STABLEQ_COVERAGE_INT_H

#include "ctx.h"
#include "karch.h"
#include "repo.h"
#include "strbuf.h"

#include <stddef.h>

/* A patch's coverage status from its files' rows: the worst one wins. */
#define PATCH_STATUS_SQL \
	"CASE WHEN SUM(status = 'failed') THEN 'failed'" \
	" WHEN SUM(status = 'booted') THEN 'booted'" \
	" WHEN SUM(status = 'compiled') THEN 'compiled'" \
	" WHEN SUM(status = 'not-built') THEN 'not-built'" \
	" ELSE 'no-code' END"

#define MAX_DIAG (1u << 20)
#define MAX_CMD_FILE (4u << 20)
#define MAX_WARN_TEXT 4096

enum kind { K_C, K_ASM, K_HEADER, K_KCONFIG, K_MAKEFILE, K_DTS, K_OTHER };
extern const char *const kind_names[];

/*
 * What became of a touched file: its coverage verdict, compared as this
 * enum; the names are what the store and the API say. CS_NONE: not decided
 * yet.
 */
enum cov_status {
	CS_NONE,
	CS_BOOTED,
	CS_COMPILED,
	CS_FAILED,
	CS_NOT_BUILT,
	CS_NO_CODE,
	CS_COUNT
};
extern const char *const cov_status_names[CS_COUNT];
/* The status a name says (coverage_route()'s), CS_NONE for another. */
enum cov_status cov_status_parse(const char *name);

/* One touched file of one patch, and what became of it. */
struct entry {
	long long patch_id;
	char *path;
	enum kind kind;
	int arch; /* index into karch_table (karch.h) */
	int clang; /* compiled with clang (LLVM=1): a gcc entry's twin */
	int booted; /* a clang twin of a file in the booted kernel */
	enum cov_status status;
	const char *config;
	struct strbuf detail;
	struct strbuf warnings;
	char **objs;
	size_t nobjs;
	int config_step; /* covered by the config step */
};

enum ostate { O_UNKNOWN, O_OK, O_FAILED, O_NOTBUILT };

/* One object of one broad config: before the queue and with it. */
struct obj {
	char *target;
	int arch;
	int clang; /* LLVM=1 */
	int need_before; /* it failed or warned: how was it before the queue? */
	enum ostate before, after;
	char *before_warn, *after_warn;
	char *before_err, *after_err;
};

struct cov {
	struct branch_ctx *bc;
	struct repo *r;
	long long id;
	const char *base, *commit;
	char base_tree[REPO_HEX_SIZE];
	char cand_tree[REPO_HEX_SIZE]; /* the candidate's tree */
	struct entry *e;
	size_t ne, cap;
	struct obj *o;
	size_t no, ocap;
	char *src;       /* absolute worktree */
	char *log_path;
	double deadline;
	int clang; /* the branch's compilers name clang */
	int clang_cell[KARCH_N]; /* the matrix has an ARCH/clang cell */
	/* per compiler (0 gcc, 1 clang) and arch */
	int prepare_failed[2][KARCH_N]; /* at the candidate, not before */
	char *prepare_err[2][KARCH_N];
	char *label[2][KARCH_N];     /* "x86_64 allmodconfig clang" */
	char *not_run[KARCH_N];      /* clang cannot run for arch: why */
	void (*progress)(const char *, void *);
	void *ctx;
};

/* A line of progress: to the caller's progress, and the debug log. */
void cov_say(struct cov *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* 1 when s ends with suffix. */
int cov_ends_with(const char *s, const char *suffix);
/* What became of e: a status, the config that built it, why (fmt may be NULL). */
void cov_entry_set(struct entry *e, enum cov_status status, const char *config,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * coverage-plan.c: decides, for each entry, what builds it (objects of
 * which architecture's broad config, c->o) or why nothing does, from the
 * guest build in build_dir (what it linked) and the tree.
 */
int cov_plan(struct cov *c, const char *build_dir);
/* The object target of arch and compiler, or NULL when the plan did not
 * want it. */
struct obj *cov_obj_find(struct cov *c, int arch, int clang,
			 const char *target);
/*
 * Build coverage with clang (c->clang): after cov_plan(), every entry of
 * an arch kbuild builds with clang (cov_clang_arch()) that has objects to
 * compile gets a twin right
 * after it, compiled under ARCH allmodconfig with LLVM=1 in a build
 * directory of its own (coverage_build_dir/ARCH-clang); its objects are
 * wanted (c->o, clang set). The twins are judged and stored as gcc's
 * entries are: a new clang warning counts as a new gcc warning does. A
 * file in the booted kernel gets one too (booted set), for its warnings:
 * its failure is the x86_64/clang cell's to judge (cov_fails()).
 */
void cov_plan_clang(struct cov *c);
/*
 * 1 when e's status fails the candidate: a failed entry, except the clang
 * twin of a file in the booted kernel when the matrix has that arch's
 * clang cell, whose own build compiles the file with clang and fails as
 * "build-failed (clang)" (bisected there); its row says so (cov_judge()).
 */
int cov_fails(const struct cov *c, const struct entry *e);
/* 1 when clang coverage compiles arch a (kbuild knows it: x86, arm64). */
int cov_clang_arch(int a);
/* The label of arch a's broad config: "x86_64 allmodconfig", with clang
 * "x86_64 allmodconfig clang" (c's, borrowed). */
const char *cov_label(struct cov *c, int a, int clang);
/* Each entry's status, from the builds (coverage.c). */
void cov_judge(struct cov *c);
/* Frees what c owns (entries, objects, labels, src, log_path). */
void cov_release(struct cov *c);

/*
 * coverage-build.c: one architecture's broad build of the objects the plan
 * wants, before the queue (when an object failed or warned) and with it;
 * each object's result kept per tree (object_builds). *on_base is set
 * when the tree was checked out at the base (the caller checks the
 * candidate out again).
 */
int cov_build_arch(struct cov *c, int a, int clang, int *on_base);
/* Warnings of after that before lacks, or NULL (caller frees). */
char *cov_new_warnings(const char *before, const char *after, const char *src);

#endif
