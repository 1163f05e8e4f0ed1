/* t-matrix-cell.c: the matrix's cells: config keys, per-cell build dirs and fragments, the verdict's failing cell, the lines shown. */
#include "buildcache.h"
#include "candidate.h"
#include "cell.h"
#include "config.h"
#include "db.h"
#include "file.h"
#include "karch.h"
#include "kbuild.h"
#include "qemu.h"
#include "tap.h"
#include "tqueue.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Loads a config of these lines; 0 or the error. */
static int load(const char *dir, const char *text, struct config *c)
{
	char *path = xstrfmt("%s/m.conf", dir);
	int ret = write_file_atomic(path, text, strlen(text));

	if (ret >= 0)
		ret = config_load(c, path);
	free(path);
	return ret;
}

static void matrix_keys(const char *dir)
{
	struct config c;
	struct cell *cells = NULL;
	size_t n = 0;

	ok(load(dir, "", &c) == 0, "defaults load");
	is_str(c.arches, "x86_64", "arches defaults to x86_64");
	is_str(c.compilers, "gcc", "compilers defaults to gcc");
	ok(cell_matrix(&c, &cells, &n) == 0 && n == 1 &&
		   cell_is_default(&cells[0]),
	   "the default matrix is one cell, x86_64/gcc");
	free(cells);
	config_free(&c);

	ok(load(dir, "arches = x86_64 arm64\ncompilers = gcc clang\n", &c) ==
		   0,
	   "arches and compilers of two words each");
	ok(cell_matrix(&c, &cells, &n) == 0 && n == 4, "... four cells");
	if (n == 4) {
		is_str(cells[0].arch, "x86_64", "... first x86_64");
		is_str(cells[0].compiler, "gcc", "... with gcc");
		is_str(cells[1].compiler, "clang", "... then x86_64/clang");
		is_str(cells[2].arch, "arm64", "... then arm64/gcc");
		is_str(cells[3].compiler, "clang", "... then arm64/clang");
	}
	free(cells);
	config_free(&c);

	ok(load(dir, "arches = x86_64 mips\n", &c) < 0,
	   "an arch that is not in the table is refused");
	like(err_msg(), "arches must be one of x86_64|arm64, not 'mips'",
	     "... naming the key, the choices and the word");
	config_free(&c);
	ok(load(dir, "compilers = gcc gcc\n", &c) < 0,
	   "a compiler named twice is refused");
	like(err_msg(), "compilers names gcc twice", "... saying so");
	config_free(&c);
	ok(load(dir, "arches =\n", &c) < 0, "no arch at all is refused");
	config_free(&c);
	ok(load(dir,
		"[branch 6.1]\nbranch = linux-6.1.y\narches = arm64 x86_64\n"
		"compilers = clang\n",
		&c) == 0,
	   "arches and compilers per branch");
	ok(cell_matrix(&c, &cells, &n) == 0 && n == 2 &&
		   !strcmp(cells[0].arch, "arm64") &&
		   !strcmp(cells[0].compiler, "clang"),
	   "... the branch's first cell is its first arch and compiler");
	free(cells);
	config_free(&c);
	ok(load(dir, "[branch 6.1]\nbranch = linux-6.1.y\narches = sparc\n",
		&c) < 0,
	   "a bad arch in a branch section is refused too");
	config_free(&c);
}

static void build_side(void)
{
	struct branch_ctx bc = { 0 };
	struct cell x86 = { "x86_64", "gcc" }, clang = { "x86_64", "clang" };
	struct cell arm = { "arm64", "gcc" };
	char *s;

	bc.cfg.build_dir = "var/build";
	s = cell_build_dir(&bc, &x86);
	is_str(s, "var/build", "x86_64/gcc builds where it always did");
	free(s);
	s = cell_build_dir(&bc, &clang);
	is_str(s, "var/build-x86_64-clang", "x86_64/clang has its own dir");
	free(s);
	s = cell_fragments("config/kernel/6.1/quick", &arm);
	is_str(s, "config/kernel/6.1/quick/arm64",
	       "arm64's fragments are its own dir");
	free(s);
	s = cell_fragments("config/kernel/6.1/quick", &clang);
	is_str(s, "config/kernel/6.1/quick", "clang's are x86_64's");
	free(s);
	ok(access("config/kernel/6.1/quick/arm64/base.config", R_OK) == 0 &&
		   access("config/kernel/6.1/quick/arm64/tests.config", R_OK) == 0 &&
		   access("config/kernel/6.12/quick/arm64/base.config", R_OK) == 0 &&
		   access("config/kernel/6.12/quick/arm64/tests.config", R_OK) == 0,
	   "the arm64 fragments exist for 6.1 and 6.12");
	is_str(karch_boot_find(NULL)->image, "arch/x86/boot/bzImage",
	       "x86_64: bzImage");
	is_str(karch_boot_find("arm64")->image, "arch/arm64/boot/Image",
	       "arm64: Image");

	const struct karch *g = karch_boot_find("arm64");
	ok(g && !strcmp(g->console, "ttyAMA0") && g->tcg_only &&
		   !strcmp(g->machine, "virt"),
	   "arm64 boots on -M virt, console ttyAMA0, under TCG");
	ok(karch_boot_find(NULL) && !strcmp(karch_boot_find(NULL)->console,
					    "ttyS0"),
	   "no arch is x86_64 on ttyS0");
	ok(!karch_boot_find("mips"), "an arch that does not boot is refused");
	like(err_msg(), "not one of: x86_64 arm64", "... naming the known");

	const char *accel = NULL;
	char *why = NULL;
	struct qemu_opts q = { .arch = g };
	ok(qemu_choose_accel("auto", &q, 1, NULL, &accel, &why, NULL) == 0 &&
		   !strcmp(accel, "tcg"),
	   "an arm64 guest is TCG without a KVM probe");
	like(why, "arm64 guests run under TCG", "... saying why");
	free(why);

	char *id = NULL;
	if (kbuild_have_tool("clang")) {
		ok(kbuild_compiler_id("x86_64", "clang", &id) == 0 &&
			   strstr(id, "clang") && strstr(id, "LLVM=1"),
		   "clang's compiler id names clang and LLVM=1 (the cache key)");
		free(id);
	} else {
		ok(kbuild_compiler_id("x86_64", "clang", &id) < 0,
		   "no clang: no compiler id");
	}
	char *gcc = NULL;
	ok(kbuild_compiler_id(NULL, NULL, &gcc) == 0 &&
		   buildcache_compiler_id(&id) == 0 && !strcmp(gcc, id),
	   "x86_64/gcc's id is the one of before: the cache keys stay");
	free(gcc);
	free(id);
	if (kbuild_have_tool("aarch64-linux-gnu-gcc")) {
		char *want = NULL;
		ok(kbuild_compiler_id("arm64", "gcc", &gcc) == 0 &&
			   buildcache_compiler_id_of("aarch64-linux-gnu-gcc",
						     &id) == 0,
		   "arm64/gcc has a compiler id");
		want = xstrfmt("%sarch arm64\n", id ? id : "");
		is_str(gcc, want, "... its cross gcc's and 'arch arm64': the"
				  " cache keys stay");
		free(want);
		free(gcc);
		free(id);
	}
}

/* A tree whose minimum clang is 99: the cell cannot run, and says so. */
static void toolchains(const char *dir)
{
	char *src = xstrfmt("%s/tree", dir), *bin = xstrfmt("%s/bin", dir);
	char *f = xstrfmt("%s/scripts/min-tool-version.sh", src);
	char *mk = xstrfmt("%s/Makefile", src), *frag = xstrfmt("%s/frag", dir);
	char *cfg = xstrfmt("%s/frag/a.config", dir);
	const char *script = "#!/bin/sh\ncase $1 in llvm) echo 99.0.0;; *) echo 1.0.0;; esac\n";
	struct kbuild_opts o = { .src_dir = src, .config_dir = frag,
				 .compiler = "clang", .config_only = 1 };
	struct kbuild_result r;
	char *oldpath = xstrdup(getenv("PATH"));

	mkdir_p(frag);
	write_file_atomic(cfg, "CONFIG_X=y\n", 11);
	o.build_dir = bin;
	mkdir_p(bin);
	{
		char *sd = xstrfmt("%s/scripts", src);
		mkdir_p(sd);
		free(sd);
	}
	write_file_atomic(mk, "all:\n", 5);
	write_file_atomic(f, script, strlen(script));
	if (kbuild_have_tool("clang") && kbuild_have_tool("ld.lld")) {
		is_int(kbuild_run(&o, &r), ERR_NOTFOUND,
		       "clang older than the tree's minimum: the cell cannot run");
		like(r.error, "clang 14", "... naming the clang there");
		like(r.error, "older than 99.0.0, this tree's minimum",
		     "... and the tree's minimum");
		kbuild_result_release(&r);
	}
	/* a PATH with the build tools but no cross compiler */
	const char *tools[] = { "make", "gcc", "flex", "bison", "bc", "perl",
				"ccache", "sh" };
	char *tb = xstrfmt("%s/tools", dir);
	mkdir_p(tb);
	for (size_t i = 0; i < sizeof(tools) / sizeof(*tools); i++) {
		char *to = xstrfmt("/usr/bin/%s", tools[i]);
		char *at = xstrfmt("%s/%s", tb, tools[i]);
		if (symlink(to, at) < 0)
			diag("symlink %s: missing", to);
		free(to);
		free(at);
	}
	setenv("PATH", tb, 1);
	o.compiler = "gcc";
	o.arch = "arm64";
	is_int(kbuild_run(&o, &r), ERR_NOTFOUND,
	       "no aarch64-linux-gnu-gcc: the arm64 cell cannot run");
	like(r.error, "install the Debian package gcc-aarch64-linux-gnu",
	     "... naming the package");
	kbuild_result_release(&r);
	o.arch = "mips";
	is_int(kbuild_run(&o, &r), ERR_INVALID, "an unknown arch is refused");
	is_str(err_msg(), "kernel build: arch 'mips' is not one of: x86_64 arm64",
	       "... naming the arches kbuild builds");
	kbuild_result_release(&r);
	setenv("PATH", oldpath, 1);
	free(oldpath);
	free(tb);
	free(src);
	free(bin);
	free(f);
	free(mk);
	free(frag);
	free(cfg);
}

static void verdicts(const char *dir)
{
	struct branch_ctx bc;
	long long p, parent, child, child2, base;
	char *line;
	json_t *cells;
	struct cell c;

	tq_open(&bc, dir,
		"arches = x86_64 arm64\ncompilers = gcc clang\n");
	p = tq_add(&bc, "a", "[PATCH] lib: a", "", "lib.c", 2);
	parent = candidate_create_on(bc.db, bc.branch_id, &p, 1, 0, "queue", 0,
				     "test");
	ok(cell_get(&bc, parent, &c) == 0 && cell_is_default(&c),
	   "a new candidate runs the branch's first cell");
	ok(db_int(bc.db, 0, "SELECT arch = 'x86_64' FROM candidates WHERE"
			    " id = ?", "i", parent) == 1,
	   "... stored on its row");
	child = candidate_create_on(bc.db, bc.branch_id, &p, 1, 0, "queue", 0,
				    "test");
	child2 = candidate_create_on(bc.db, bc.branch_id, &p, 1, 0, "queue", 0,
				     "test");
	db_exec(bc.db,
		"UPDATE candidates SET arch = 'x86_64', compiler = 'clang',"
		" cell_of = ?, step = 'done', verdict = 'build-failed', detail"
		" = 'lib.c:1: error: clang only' WHERE id = ?",
		"ii", parent, child);
	db_exec(bc.db,
		"UPDATE candidates SET arch = 'arm64', compiler = 'gcc',"
		" cell_of = ?, step = 'done', not_run = 'aarch64-linux-gnu-gcc"
		" not found' WHERE id = ?",
		"ii", parent, child2);
	line = xstrfmt("build-failed (clang): candidate %lld: lib.c:1: error:"
		       " clang only",
		       child);
	db_exec(bc.db,
		"UPDATE candidates SET step = 'done', verdict = 'build-failed',"
		" detail = ? WHERE id = ?",
		"ti", line, parent);
	free(line);
	db_exec(bc.db,
		"INSERT INTO test_results (candidate_id, run, name, result)"
		" VALUES (?, 1, 'boot', 'pass'), (?, 1, 'kunit', 'pass')",
		"ii", parent, parent);
	is_int(cell_failing(bc.db, parent), child,
	       "the clang cell's failure is the one to bisect");
	base = candidate_create_on(bc.db, bc.branch_id, &p, 1, 0, "queue", 0,
				   "test");
	db_exec(bc.db,
		"UPDATE candidates SET step = 'done', verdict = 'fail', detail"
		" = 'kunit failed' WHERE id = ?",
		"i", base);
	is_int(cell_failing(bc.db, base), base,
	       "a candidate failing in its own cell bisects itself");
	ok(cell_copy(bc.db, child, base) == 0 &&
		   cell_of_row(bc.db, base, &c) == 0 &&
		   !strcmp(c.compiler, "clang"),
	   "cell_copy gives a step the failing cell");

	line = cell_line(bc.db, parent);
	is_str(line, "x86_64/gcc 2 tests, x86_64/clang build-failed, arm64/gcc"
		     " not run",
	       "the matrix in one line, a cell not run said so");
	free(line);
	ok(cell_line(bc.db, child) == NULL, "a child has no matrix of its own");
	cells = cell_list_json(bc.db, parent);
	ok(json_array_size(cells) == 3, "three cells in the JSON");
	is_str(json_string_value(json_object_get(json_array_get(cells, 0),
						 "compiler")),
	       "clang", "the failing cell first");
	is_str(json_string_value(json_object_get(json_array_get(cells, 1),
						 "arch")),
	       "arm64", "... then the one not run");
	is_str(json_string_value(json_object_get(json_array_get(cells, 2),
						 "verdict")),
	       "pass", "... then x86_64/gcc, which passed");
	json_decref(cells);
	line = candidate_summary(bc.db, parent);
	like(line, "[x86_64/gcc 2 tests, x86_64/clang build-failed",
	     "candidate_summary carries the matrix");
	free(line);
	{
		json_t *j = candidate_json(bc.db, parent);
		like(json_string_value(json_object_get(j, "summary")),
		     "build-failed: x86_64/gcc 2 tests, x86_64/clang"
		     " build-failed, arm64/gcc not run",
		     "the JSON summary is per cell");
		json_decref(j);
	}
	long long last = 0;
	ok(candidate_last_failed(bc.db, bc.branch_id, &last) == 0 &&
		   last == base,
	   "a child is never the branch's newest failed candidate");
	tq_close(&bc);
}

int main(void)
{
	char dir[] = "/tmp/t-matrix-cell.XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	matrix_keys(dir);
	build_side();
	toolchains(dir);
	verdicts(dir);
	rm_rf(dir);
	return done_testing();
}
