/* t-coverage-clang.c: build coverage with clang: which files get a clang twin, how a twin is judged (its new warnings, its failure, clang not run) and clang's diagnostics compared. */
#include "coverage.h"
#include "coverage-int.h"
#include "file.h"
#include "kbuild.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void entry_add(struct cov *c, long long pid, const char *path,
		      enum kind kind, int arch, enum cov_status st,
		      const char *obj)
{
	if (c->ne == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->e = xrealloc(c->e, c->cap * sizeof(*c->e));
	}
	struct entry *e = &c->e[c->ne++];
	*e = (struct entry){ .patch_id = pid,
			     .path = xstrdup(path),
			     .kind = kind,
			     .arch = arch,
			     .status = st,
			     .detail = STRBUF_INIT,
			     .warnings = STRBUF_INIT };
	if (obj) {
		e->objs = xcalloc(1, sizeof(*e->objs));
		e->objs[e->nobjs++] = xstrdup(obj);
	}
}

/* Which entries get a twin, where it goes, and what it wants compiled. */
static void twins(void)
{
	struct cov c = { .clang = 1 };

	ok(cov_clang_arch(0), "x86: clang coverage compiles it");
	ok(cov_clang_arch(1), "arm64: clang coverage compiles it (LLVM=1 ARCH=arm64)");
	for (int a = 2; a < KARCH_N; a++)
		ok(!cov_clang_arch(a), "%s: not with clang (kbuild does not know it)",
		   karch_table[a].make_arch);
	ok(!cov_clang_arch(-1) && !cov_clang_arch(KARCH_N), "out of range: no");

	entry_add(&c, 1, "drivers/misc/ds1682.c", K_C, 0, CS_NONE,
		  "drivers/misc/ds1682.o");
	entry_add(&c, 1, "Documentation/x.rst", K_OTHER, 0, CS_NO_CODE, NULL);
	entry_add(&c, 2, "lib/ctype.c", K_C, 0, CS_BOOTED, "lib/ctype.o");
	entry_add(&c, 2, "arch/arm64/kernel/cpuinfo.c", K_C, 1, CS_NONE,
		  "arch/arm64/kernel/cpuinfo.o");
	entry_add(&c, 3, "arch/riscv/kernel/x.c", K_C, 4, CS_NONE,
		  "arch/riscv/kernel/x.o");
	entry_add(&c, 3, "arch/arm64/boot/dts/x.dts", K_DTS, 1, CS_NONE, "x.dtb");
	entry_add(&c, 3, "drivers/net/Kconfig", K_KCONFIG, 0, CS_NONE, NULL);
	c.e[6].config_step = 1;
	entry_add(&c, 3, "include/linux/x.h", K_HEADER, 0, CS_NOT_BUILT, NULL);
	cov_plan_clang(&c);
	is_int((int)c.ne, 12, "four twins: 8 entries become 12");
	static const struct {
		const char *path;
		int clang;
	} want[] = {
		{ "drivers/misc/ds1682.c", 0 },
		{ "drivers/misc/ds1682.c", 1 },
		{ "Documentation/x.rst", 0 },
		{ "lib/ctype.c", 0 },
		{ "lib/ctype.c", 1 },
		{ "arch/arm64/kernel/cpuinfo.c", 0 },
		{ "arch/arm64/kernel/cpuinfo.c", 1 },
		{ "arch/riscv/kernel/x.c", 0 },
		{ "arch/arm64/boot/dts/x.dts", 0 },
		{ "drivers/net/Kconfig", 0 },
		{ "drivers/net/Kconfig", 1 },
		{ "include/linux/x.h", 0 },
	};
	for (size_t i = 0; i < c.ne && i < 12; i++) {
		is_str(c.e[i].path, want[i].path, "entry %zu: %s", i, want[i].path);
		is_int(c.e[i].clang, want[i].clang, "... %s", want[i].clang ? "clang's twin, right after gcc's" : "gcc's");
	}
	/* a patch's entries stay together: the store counts a patch once */
	int grouped = 1;
	for (size_t i = 1; i < c.ne; i++)
		grouped &= c.e[i].patch_id >= c.e[i - 1].patch_id;
	ok(grouped, "each patch's entries stay together, in order");
	ok(c.e[10].config_step, "the twin of a Kconfig file has the config step");
	is_int(c.e[3].status, CS_BOOTED, "the booted file's gcc entry stays booted");
	is_int(c.e[4].status, CS_NONE, "... its clang twin is to be compiled");
	ok(c.e[4].booted, "... marked as the twin of a booted file");
	ok(!c.e[1].booted && !c.e[6].booted, "... the other twins are not");
	ok(cov_obj_find(&c, 0, 1, "drivers/misc/ds1682.o") != NULL, "the twin's object is wanted with clang");
	ok(cov_obj_find(&c, 0, 1, "lib/ctype.o") != NULL,
	   "a file in the booted kernel: its object is wanted with clang too");
	ok(cov_obj_find(&c, 1, 1, "arch/arm64/kernel/cpuinfo.o") != NULL, "... arm64's under arm64");
	ok(cov_obj_find(&c, 0, 0, "lib/ctype.o") == NULL, "gcc does not compile the booted object again");
	ok(cov_obj_find(&c, 4, 1, "arch/riscv/kernel/x.o") == NULL, "no clang object for riscv");
	is_str(cov_label(&c, 0, 1), "x86_64 allmodconfig clang", "the clang label says clang");
	is_str(cov_label(&c, 1, 1), "arm64 allmodconfig clang", "... arm64's too");
	is_str(cov_label(&c, 0, 0), "x86_64 allmodconfig", "gcc's label is as before");
	cov_release(&c);

	/* without clang in compilers: nothing changes */
	memset(&c, 0, sizeof(c));
	entry_add(&c, 1, "drivers/misc/ds1682.c", K_C, 0, CS_NONE,
		  "drivers/misc/ds1682.o");
	cov_plan_clang(&c);
	is_int((int)c.ne, 1, "compilers = gcc: no twin");
	is_int((int)c.no, 0, "... and no clang object");
	cov_release(&c);
}

/* clang's diagnostics, as the wrapper keeps them (carets and all) */
static const char clang_before[] =
	"drivers/misc/ds1682.c:40:9: warning: old one [-Wfoo]\n";
static const char clang_after[] =
	"drivers/misc/ds1682.c:41:9: warning: old one [-Wfoo]\n"
	"drivers/misc/ds1682.c:57:15: warning: explicitly assigning value of"
	" variable of type 'int' to itself [-Wself-assign]\n";

/* A twin is judged as gcc's entry: new warnings, failures, not run. */
static void judge(void)
{
	struct cov c = { .clang = 1, .src = xstrdup("/src") };
	struct obj *g, *k;

	entry_add(&c, 1, "drivers/misc/ds1682.c", K_C, 0, CS_NONE,
		  "drivers/misc/ds1682.o");
	entry_add(&c, 2, "drivers/misc/isl29003.c", K_C, 0, CS_NONE,
		  "drivers/misc/isl29003.o");
	entry_add(&c, 3, "arch/arm64/kernel/cpuinfo.c", K_C, 1, CS_NONE,
		  "arch/arm64/kernel/cpuinfo.o");
	cov_plan_clang(&c);
	for (size_t i = 0; i < c.ne; i++)
		if (!c.e[i].clang)
			for (size_t j = 0; j < c.e[i].nobjs; j++) {
				/* what cov_plan() wants for gcc */
				c.o = xrealloc(c.o, (c.no + 1) * sizeof(*c.o));
				c.o[c.no++] = (struct obj){
					.target = xstrdup(c.e[i].objs[j]),
					.arch = c.e[i].arch };
			}
	/* ds1682: gcc clean, clang a new -Wself-assign */
	g = cov_obj_find(&c, 0, 0, "drivers/misc/ds1682.o");
	k = cov_obj_find(&c, 0, 1, "drivers/misc/ds1682.o");
	g->after = O_OK;
	k->after = O_OK;
	k->before = O_OK;
	k->before_warn = xstrdup(clang_before);
	k->after_warn = xstrdup(clang_after);
	/* isl29003: gcc compiles it, clang no longer does */
	g = cov_obj_find(&c, 0, 0, "drivers/misc/isl29003.o");
	k = cov_obj_find(&c, 0, 1, "drivers/misc/isl29003.o");
	g->after = O_OK;
	k->after = O_FAILED;
	k->before = O_OK;
	k->after_err = xstrdup("drivers/misc/isl29003.c:69:20: error: use of"
			       " undeclared identifier");
	/* arm64 with clang could not run */
	g = cov_obj_find(&c, 1, 0, "arch/arm64/kernel/cpuinfo.o");
	g->after = O_OK;
	c.not_run[1] = xstrdup("kernel build (arm64/clang): clang 10.0.0 is older than 11.0.0");
	cov_judge(&c);

	is_int((int)c.ne, 6, "three files, each with its twin");
	is_int(c.e[0].status, CS_COMPILED, "gcc: ds1682.c compiled");
	is_int((int)c.e[0].warnings.len, 0, "... with no new gcc warning");
	is_int(c.e[1].status, CS_COMPILED, "clang: ds1682.c compiled");
	is_str(c.e[1].config, "x86_64 allmodconfig clang", "... under clang's label");
	like(c.e[1].warnings.buf, "drivers/misc/ds1682.o (clang): ", "... its new warning names clang");
	like(c.e[1].warnings.buf, "[-Wself-assign]", "... the new one: -Wself-assign");
	ok(!strstr(c.e[1].warnings.buf, "old one"), "... not the one it had before (its line moved)");
	is_int(c.e[2].status, CS_COMPILED, "gcc: isl29003.c compiled");
	is_int(c.e[3].status, CS_FAILED, "clang: isl29003.c failed");
	like(c.e[3].detail.buf, "undeclared identifier", "... with clang's error");
	is_str(c.e[3].config, "x86_64 allmodconfig clang", "... under clang's label");
	is_int(c.e[4].status, CS_COMPILED, "gcc: arm64 compiled");
	is_int(c.e[5].status, CS_NOT_BUILT, "clang not run: never a pass");
	like(c.e[5].detail.buf, "not run (clang): kernel build (arm64/clang): clang 10.0.0 is older",
	     "... says why");
	cov_release(&c);
}

/*
 * A file in the booted kernel: its twin's new warnings count as any
 * file's; its failure is shown on its row, the x86_64/clang cell's build
 * deciding the candidate (cov_fails()) when the matrix has that cell.
 */
static void booted(void)
{
	struct cov c = { .clang = 1, .src = xstrdup("/src") };
	struct obj *k;

	c.clang_cell[0] = 1;
	entry_add(&c, 1, "lib/test_user_copy.c", K_C, 0, CS_BOOTED,
		  "lib/test_user_copy.o");
	entry_add(&c, 2, "lib/ctype.c", K_C, 0, CS_BOOTED, "lib/ctype.o");
	entry_add(&c, 3, "drivers/misc/isl29003.c", K_C, 0, CS_NONE,
		  "drivers/misc/isl29003.o");
	cov_plan_clang(&c);
	is_int((int)c.ne, 6, "each file with its twin");
	is_int((int)c.no, 3, "three objects wanted, all with clang (gcc's booted ones are the guest's)");
	k = cov_obj_find(&c, 0, 1, "lib/test_user_copy.o");
	k->after = O_OK;
	k->before = O_OK;
	k->after_warn = xstrdup("lib/test_user_copy.c:102:6: warning: explicitly"
				" assigning value of variable of type 'int' to"
				" itself [-Wself-assign]\n");
	k = cov_obj_find(&c, 0, 1, "lib/ctype.o");
	k->after = O_FAILED;
	k->before = O_OK;
	k->after_err = xstrdup("lib/ctype.c:11:2: error: \"clang only\"");
	k = cov_obj_find(&c, 0, 1, "drivers/misc/isl29003.o");
	k->after = O_FAILED;
	k->before = O_OK;
	k->after_err = xstrdup("drivers/misc/isl29003.c:17:2: error: \"clang only\"");
	cov_judge(&c);

	is_int(c.e[0].status, CS_BOOTED, "gcc: test_user_copy.c stays booted");
	is_int((int)c.e[0].warnings.len, 0, "... no gcc warning of its own");
	is_int(c.e[1].status, CS_COMPILED, "clang: test_user_copy.c compiled");
	is_str(c.e[1].config, "x86_64 allmodconfig clang", "... under clang's label");
	like(c.e[1].warnings.buf, "lib/test_user_copy.o (clang): ", "... its new warning names clang and the object");
	like(c.e[1].warnings.buf, "[-Wself-assign]", "... -Wself-assign");
	is_int(c.e[3].status, CS_FAILED, "clang: ctype.c failed, on its row");
	like(c.e[3].detail.buf, "lib/ctype.o: lib/ctype.c:11:2: error: ", "... the object and clang's error");
	like(c.e[3].detail.buf, "(in the booted kernel: the x86_64/clang cell's build decides)",
	     "... and who decides");
	ok(!cov_fails(&c, &c.e[3]), "... which does not fail the candidate by itself");
	ok(!cov_fails(&c, &c.e[2]), "gcc's booted row fails nothing");
	is_int(c.e[5].status, CS_FAILED, "clang: isl29003.c (not booted) failed");
	ok(!strstr(c.e[5].detail.buf, "cell"), "... its detail names no cell");
	ok(cov_fails(&c, &c.e[5]), "... and fails the candidate, as before");
	c.clang_cell[0] = 0;
	ok(cov_fails(&c, &c.e[3]), "without an x86_64/clang cell, the booted twin's failure fails it");
	cov_release(&c);
}

/* clang missing or too old: cov_build_arch() says so and builds nothing. */
static void not_run(const char *dir)
{
	char *src = xstrfmt("%s/tree", dir), *sd = xstrfmt("%s/tree/scripts", dir);
	char *f = xstrfmt("%s/min-tool-version.sh", sd);
	const char *script = "#!/bin/sh\ncase $1 in llvm) echo 99.0.0;; *) echo 1.0.0;; esac\n";
	struct cov c = { .clang = 1, .src = xstrdup(src) };
	int on_base = 0;

	mkdir_p(sd);
	write_file_atomic(f, script, strlen(script));
	entry_add(&c, 1, "drivers/misc/ds1682.c", K_C, 0, CS_NONE,
		  "drivers/misc/ds1682.o");
	cov_plan_clang(&c);
	if (!kbuild_have_tool("clang") || !kbuild_have_tool("ld.lld"))
		diag("clang or ld.lld missing: not run for the missing tool");
	is_int(cov_build_arch(&c, 0, 1, &on_base), 0,
	       "clang older than the tree's minimum: not an error");
	ok(c.not_run[0] != NULL, "... clang is not run for x86_64");
	like(c.not_run[0], "kernel build (x86_64/clang): ", "... why, in kbuild's words");
	if (kbuild_have_tool("clang") && kbuild_have_tool("ld.lld"))
		like(c.not_run[0], "older than 99.0.0, this tree's minimum",
		     "... the tree's minimum");
	ok(!on_base, "... the tree was not switched");
	cov_judge(&c);
	is_int(c.e[1].status, CS_NOT_BUILT, "the twin: not-built");
	like(c.e[1].detail.buf, "not run (clang): ", "... not run (clang): REASON");
	cov_release(&c);
	free(src);
	free(sd);
	free(f);
}

static void warnings(void)
{
	char *nw = cov_new_warnings(clang_before, clang_after, "/src");

	like(nw, "-Wself-assign", "clang's new warning is found by file and message");
	ok(nw && !strstr(nw, "old one"), "... an old one on a moved line is not new");
	free(nw);
	ok(cov_new_warnings(clang_after, clang_after, "/src") == NULL,
	   "the same diagnostics: nothing new");
}

int main(void)
{
	char dir[] = "/tmp/t-coverage-clang.XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	twins();
	judge();
	booted();
	not_run(dir);
	warnings();
	rm_rf(dir);
	return done_testing();
}
