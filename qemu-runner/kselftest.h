/* kselftest.h: kselftests built from a candidate's own tools/testing/selftests, cached by their state, run as guest tests. */
#ifndef STABLEQ_KSELFTEST_H
#define STABLEQ_KSELFTEST_H

#include "initramfs.h"
#include "testset.h"

#include <stddef.h>

/*
 * A "[test NAME]" section of kind kselftest names targets (directories of
 * tools/testing/selftests) and a timeout per test. kselftest_prepare()
 * builds them from the kernel tree as it is checked out (the candidate's
 * own tree: a patch that changes a selftest is tested by its own version):
 *
 *   make O=BUILD/hdr headers_install          the candidate's uapi headers
 *   make -C tools/testing/selftests/TARGET OUTPUT=BUILD/out/TARGET
 *        KHDR_INCLUDES="-isystem BUILD/hdr/usr/include"
 *        INSTALL_PATH=ENTRY/TARGET install    one target at a time, so one
 *                                             that fails does not stop the
 *                                             others; its error is kept
 *   make ... emit_tests                       the target's tests
 *
 * The result is kept in CACHE/KEY, KEY a sha256 of what determines it: the
 * files of tools/testing/selftests and tools/include, the uapi headers'
 * sources (include/uapi, arch/x86/include/uapi, the syscall tables,
 * scripts/headers_install.sh), the targets and the compiler's identity. An
 * unchanged state is not built again. An entry is written into a temp
 * directory and renamed into place; the CACHE keeps its newest
 * KSELFTEST_CACHE_KEEP entries.
 *
 * In the guest every test is a guest test of its own, named
 * "kselftest.TARGET.TEST" (the runner turns the section into them:
 * kselftest_expand()), run as "cd /kselftest/TARGET && ./TEST" under the
 * section's timeout; exit status 4 (KSFT_SKIP) is a skip, and each line
 * "ok N name" / "not ok N name [# SKIP]" the test prints at the start of a
 * line is a result "kselftest.TARGET.TEST.NAME" (console.h). A test the
 * guest cannot run (a python or perl script) is a skip that says why.
 * Each target is a result too, "kselftest.TARGET": pass when it built, fail
 * carrying the compiler's error when it did not (against the tip: a
 * regression when the tip built it, a known failure when it never built).
 * Programs are linked dynamically against the host's glibc: the runner
 * copies each program's interpreter and the libraries its ELF needs
 * (DT_NEEDED, resolved as the loader would, never by running ldd on a
 * program from a patch), and bash when a test script asks for it.
 *
 * For arch arm64 (an arm64 cell, cell.h) every make above gets ARCH=arm64
 * CROSS_COMPILE=aarch64-linux-gnu- (Debian's gcc-aarch64-linux-gnu): the
 * headers installed are arm64's, the programs aarch64 ELF, linked against
 * the cross libc (libc6-arm64-cross), whose loader and libraries go in the
 * guest's /lib. The key holds the arch and arm64's uapi sources
 * (x86_64's key is as it was). A section's x86 target is built as arm64
 * (the build's note says so: "x86 built as arm64"), and its results are
 * kselftest.arm64.*. The arm64 guest's bash is Debian's bash:arm64 (with
 * libtinfo6:arm64) that `make deps` unpacks beside its busybox; without
 * it a bash script is a test the guest cannot run (a skip saying so), and
 * the key says which. The libraries some targets link against (libcap,
 * libcap-ng, libpopt, libnuma) are Debian's arm64 packages `make deps`
 * unpacks there too: each target's make gets their headers and library
 * dirs (USERCFLAGS, USERLDFLAGS: lib/karch.h's ksft_include, ksft_libs)
 * and MACHINE=arm64 (6.1's vm), the guest their .so files, and the key
 * their headers when they are there (without them it is as it was).
 */

#define KSELFTEST_CACHE_KEEP 6

struct kselftest_test {
	char *name; /* the program's file name: [A-Za-z0-9._+-] */
	char *why;  /* NULL: runnable; else why the guest cannot run it */
};

struct kselftest_target {
	char *name;
	int timeout; /* seconds per test, from its section */
	int built;
	char *error; /* !built: the first errors of make's output */
	struct kselftest_test *tests;
	size_t ntests;
};

/* Owned by the build; kselftest_build_release() frees it. */
struct kselftest_build {
	char *dir;     /* the cache entry: DIR/TARGET/ as installed */
	char key[65];
	int cached;    /* taken from the cache: nothing built */
	int needs_bash;
	const char *arch; /* built for (static): "x86_64", "arm64" */
	char *note;    /* NULL, or a target the arch built as its own:
			* "x86 built as arm64" */
	double seconds;
	struct kselftest_target *targets;
	size_t ntargets;
};

struct kselftest_opts {
	const char *tests_file;  /* its kselftest sections say what to build */
	const char *guest_config; /* only the sections for this guest
				   * (testset_for_guest); NULL: all */
	const char *src_dir;     /* the kernel tree, checked out */
	const char *arch;        /* NULL or "x86_64": the host's gcc;
				  * "arm64": cross-built (see above) */
	const char *build_dir;   /* headers and objects; made if missing */
	const char *cache_dir;   /* entries; made if missing */
	const char *compiler_id; /* part of the key (buildcache) */
	const char *ccache_dir;  /* NULL or "": no ccache */
	const char *log_path;    /* make's output appended, or NULL */
	int jobs;                /* make -j; 0: 2 */
	int timeout_s;           /* per make; 0: 1800 */
	/* every make runs here (sandbox.h), writing only build_dir, the
	 * entry being made and the ccache; NULL or off: refused as root */
	const struct sandbox *sandbox;
};

/*
 * Builds (or finds in the cache) the targets of the test set's kselftest
 * sections. A test set without one gives an empty build (no targets, no
 * dir) and returns 0 at once. A target that does not build is no error:
 * its error is in the build. Returns 0, or negative with err_msg() when
 * nothing could be built (the tree is missing, headers_install failed, a
 * file cannot be written). out is always initialized; release it.
 */
int kselftest_prepare(const struct kselftest_opts *o,
		      struct kselftest_build *out);
void kselftest_build_release(struct kselftest_build *b);

/*
 * Replaces each kselftest section of tests[0..*n) by a guest test per test
 * of its targets (kselftest set, timeout the section's), in place. b may be
 * NULL (nothing was built: the sections only go).
 */
void kselftest_expand(struct test_def **tests, size_t *n,
		      const struct kselftest_build *b);

/* One result of a target: "kselftest.TARGET", its status and detail. */
struct kselftest_result {
	char *name;
	int built;    /* 1 pass, 0 fail (detail: the error), -1 not built
		       * for this boot (skip) */
	char *detail;
};
/*
 * The targets' own results for the sections of tests_def[0..n) (before
 * kselftest_expand()); when only is given, those named in it alone.
 */
size_t kselftest_results(const struct test_def *tests, size_t n,
			 const struct kselftest_build *b,
			 const char *const *only, size_t nonly,
			 struct kselftest_result **out);
void kselftest_results_free(struct kselftest_result *r, size_t n);

/* A file the guest needs: "kselftest/T/...", a library, bash. Owned. */
struct kselftest_file {
	enum initramfs_kind kind; /* DIR, FILE or SYMLINK */
	char *path;               /* in the archive */
	char *host_path;          /* FILE */
	char *target;             /* SYMLINK */
	unsigned mode;
};
/*
 * The files of the built targets under "kselftest/", the interpreter and
 * libraries their programs need, bash if a script needs it. 0, or negative
 * with err_msg() (a library the loader would not find names the program).
 */
int kselftest_files(const struct kselftest_build *b,
		    struct kselftest_file **out, size_t *n);
void kselftest_files_free(struct kselftest_file *f, size_t n);

/* The DT_NEEDED names and PT_INTERP of an ELF file; 1 if it is a dynamic
 * ELF, 0 if not (static, no ELF), negative on a broken ELF. Owned. */
int kselftest_elf_needs(const char *path, char ***needed, size_t *nneeded,
			char **interp);

#endif
