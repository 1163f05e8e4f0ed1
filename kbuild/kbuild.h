/* kbuild.h: builds candidate kernels out of tree (O=) with ccache. */
#ifndef STABLEQ_KBUILD_H
#define STABLEQ_KBUILD_H

#include <stddef.h>

struct strvec;

/*
 * One build directory and one ccache serve every candidate, so a state built
 * before costs seconds. The configuration is `make tinyconfig` (or the
 * guest configuration's base, guestconf.h), then the fragments of
 * config_dir (every *.config, in name order) and, for the broad guest, the
 * tree's KUnit fragment (BUILD_DIR/.stableq-kunit.config) merged with
 * scripts/kconfig/merge_config.sh -m, then `make olddefconfig`; it is redone
 * only when missing or when the config hash changed. Every symbol a fragment
 * asks for must come out of olddefconfig with the value asked: anything else
 * is an error naming the fragment, line and symbol.
 *
 * Then `make -jN CC="ccache gcc" bzImage modules`, with fixed
 * KBUILD_BUILD_TIMESTAMP/USER/HOST/VERSION so the same sources give the same
 * bytes, and CCACHE_BASEDIR set to the common parent of the source and build
 * directories (with CCACHE_NOHASHDIR) so another worktree laid out the same
 * way hits the same cache. Every child goes through spawn, with one deadline
 * for the whole build (at the deadline make gets SIGTERM, so it deletes its
 * half-written objects, then SIGKILL); all output is appended to log_path.
 * Every make runs in o->sandbox: the source tree and config_dir read-only,
 * build_dir (given to the build user, sandbox_own()) and the ccache
 * writable; merge_config.sh runs in build_dir (its temp files go there).
 */
struct kbuild_opts {
	const char *src_dir;    /* the kernel worktree */
	const char *build_dir;  /* O=; made if missing */
	const char *config_dir; /* the *.config fragments */
	const struct guestconf *guest; /* what they go on (guestconf.h);
					* NULL: tinyconfig alone */
	const char *kunit_deny; /* the broad guest's KUnit deny list */
	int config_only;        /* configure (and check) only: r->ok
				 * without make (tests, bench) */
	const char *ccache_dir; /* NULL or "": kbuild_default_ccache_dir() */
	int jobs;               /* 0: the number of online CPUs */
	int timeout_s;          /* the whole build; 0: 3600 */
	const char *log_path;   /* appended; NULL: BUILD_DIR/stableq-build.log */
	int no_ccache;          /* build with plain gcc */
	const char *icecc;      /* NULL or "": local; "on" or the scheduler's
				 * address: compile on the icecream farm
				 * (CCACHE_PREFIX=icecc, make -j from the
				 * farm's slots unless jobs is set; icecc.h) */
	/*
	 * May be NULL: called about once a second while make compiles, with
	 * the objects compiled so far (kbuild's "  CC"/"  AS" lines) and the
	 * object count of the last complete build in build_dir (0: unknown).
	 */
	void (*progress)(void *ctx, long done, long total);
	void *progress_ctx;
	/*
	 * NULL, or "NAME=value" variables for make's command line of the
	 * bzImage and modules step (not the config steps), NULL-terminated:
	 * a coverage boot's GCOV_PROFILE_obj.o=y, which reaches every
	 * directory's Makefile without editing the tree.
	 */
	const char *const *make_vars;
	/*
	 * The cell (kernel-queue/candidates/cell.h). arch NULL or "x86_64": the
	 * host's, bzImage; another row of lib/karch.h that boots, e.g.
	 * "arm64": its ARCH=, CROSS_COMPILE= (Debian's cross gcc) and image.
	 * compiler NULL or "gcc";
	 * "clang": LLVM=1 (Debian's clang, lld and llvm), its version checked
	 * against the tree's minimum (scripts/min-tool-version.sh llvm).
	 */
	const char *arch;
	const char *compiler;
	/*
	 * Where make and the scripts it runs run (sandbox.h): bwrap as the
	 * build user, writing only build_dir and the ccache. NULL or off is
	 * refused when stableq is root (sandbox_check()).
	 */
	const struct sandbox *sandbox;
};

/* Owned by the result: kbuild_result_release() frees it. */
struct kbuild_result {
	int ok;               /* bzImage and modules built */
	int timed_out;        /* the deadline killed make */
	int reconfigured;     /* the .config was (re)made by this build */
	double seconds;
	char config_hash[65]; /* sha256 hex of the configuration inputs */
	char *bzimage;        /* the kernel image when ok:
			       * BUILD_DIR/arch/x86/boot/bzImage, or the
			       * arch's (karch.h's image) */
	char *log_path;
	char *error;          /* when !ok: the first "error:" lines of this
			       * build's log with file:line, the last make
			       * error line, or a missing-package message */
};

/*
 * Configures if needed and builds. Returns 0 when the build ran, whatever
 * its outcome (r->ok; r->error says why not), or a negative code when it
 * could not start: ERR_NOTFOUND for a missing tool or source tree (err_msg()
 * names the Debian package: flex, bison, bc, libelf-dev, ...), ERR_CONFLICT
 * when another kbuild_run() holds the build directory (a flock), ERR_INVALID
 * for a fragment whose symbol is unknown or did not survive olddefconfig
 * ("config/kernel/6.1/quick/tests.config:12: CONFIG_X=y: ..."), or as root without a
 * sandbox, or a directory the build user cannot reach, ERR_IO otherwise.
 * r is always initialized; release it.
 */
int kbuild_run(const struct kbuild_opts *o, struct kbuild_result *r);
void kbuild_result_release(struct kbuild_result *r);

/*
 * The first few "error:" lines of a build log (from offset on), with their
 * file:line, then the last "make[N]: *** ..." line, or a hint naming a
 * Debian package when the log shows a missing tool or header. Caller frees.
 */
char *kbuild_error_excerpt(const char *log, unsigned long offset);

/*
 * Runs one command (argv, usually make) in o->src_dir with the environment
 * kbuild_run() gives make (ccache under o->ccache_dir, CCACHE_BASEDIR the
 * common parent of src_dir and build_dir, reproducible build variables),
 * plus extra_env; output appended to o->log_path (needed). At deadline
 * (now_monotonic() seconds) it gets SIGTERM, then SIGKILL: *timed_out.
 * 0 when it exited 0, 1 when it ran and failed, negative when it could
 * not run or was killed (err_msg()). For build coverage's object builds.
 */
int kbuild_make(const struct kbuild_opts *o, const char *const *argv,
		const char *const *extra_env, double deadline, int *timed_out);

/*
 * What the cell's compiler contributes to a build, for the build cache's
 * key: buildcache_compiler_id() for x86_64/gcc (the keys stay as they
 * were), else the cell's compiler's version and machine and the cell's
 * make variables. Caller frees *out. 0 or negative (err_msg()).
 */
int kbuild_compiler_id(const char *arch, const char *compiler, char **out);
/*
 * 0 when each of files (relative to build) is a regular file reached
 * without a symlink: what a build left for stableq to copy or boot (the
 * build user wrote it; a symlink to a host file would carry that file
 * into the guest). Else ERR_INVALID naming the file.
 */
int kbuild_outputs_safe(const char *build, const char *const *files,
			size_t nfiles);

/*
 * The cell o->arch/o->compiler's make variables, pushed on xargs (ARCH=,
 * CROSS_COMPILE=, LLVM=1) and its CC (*cc: "CC=ccache clang", without
 * ccache when o->no_ccache; owned), once its tools are there: ERR_NOTFOUND
 * naming the Debian packages when one is missing, or when clang is older
 * than the minimum of the tree in o->src_dir (scripts/min-tool-version.sh
 * llvm): the cell cannot run here, which is not a failure of what it
 * builds. ERR_INVALID for an arch or compiler kbuild does not know.
 */
int kbuild_cell_vars(const struct kbuild_opts *o, struct strvec *xargs,
		     char **cc);

/* 1 when prog is an executable in $PATH (a cross compiler, ...) */
int kbuild_have_tool(const char *prog);

/*
 * "NM=<cross>gcc-nm" when that is in $PATH, else NULL; caller frees. Plain
 * nm loads every plugin in /usr/lib/bfd-plugins, and with LLVM's installed
 * (llvm-*-linker-tools) each of kbuild's per-object nm calls (6.1's
 * check-local-export, kallsyms) maps libLLVM: about 70 ms an object here.
 * gcc-nm is the same nm with gcc's own plugin only, and lists the same.
 */
char *kbuild_nm_var(const char *cross);

/*
 * Removes the dependency files make reported as broken in the log from
 * byte off on ("lib/.bitmap.o.cmd:5: *** unterminated call ..."), left cut
 * short by a build that was killed, with their objects, so that the next
 * make makes them again. Returns how many it removed.
 */
int kbuild_drop_broken_cmd(const char *build, const char *log,
			   unsigned long off);

/*
 * For root /var/cache/stableq/ccache (root builds as the build user, who
 * cannot reach root's home), else $XDG_CACHE_HOME/stableq/ccache, else
 * ~/.cache/stableq/ccache; caller frees.
 */
char *kbuild_default_ccache_dir(void);

#endif
