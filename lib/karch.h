/* karch.h: the kernel architectures stableq builds, boots and compiles for, one row each, in one table. */
#ifndef STABLEQ_KARCH_H
#define STABLEQ_KARCH_H

/*
 * A row is one architecture, with everything its users need of it:
 *
 *   kbuild (kbuild/kbuild.c)       builds a cell's kernel: make ARCH=,
 *                                  CROSS_COMPILE=, the image and its make
 *                                  target, the Debian package of the gcc,
 *                                  the defconfig the broad guest starts
 *                                  from (kbuild/guestconf.c)
 *   the runner (qemu-runner/)      boots it: the QEMU binary and package,
 *                                  -M, -cpu under TCG, the console, the
 *                                  guest's busybox and C compiler; its
 *                                  kselftests (kselftest.c): the arch's
 *                                  own selftests directory, its uapi
 *                                  sources, where the programs' loader,
 *                                  libraries and bash come from
 *   build coverage                 compiles the touched objects of every
 *   (kernel-queue/candidates/      row under allmodconfig (arch/DIR/ of a
 *   coverage*.c)                   path says which row builds it)
 *
 * and KCIDB's name of it for the export. Rows are static and never freed.
 *
 * The rows that boot (image set) come first, x86_64 before all: they are
 * what a branch's `arches` may name (config.c), the cells of the matrix
 * (kernel-queue/candidates/cell.h). x86_64 is the machine's own: kbuild
 * gives it no ARCH= and no CROSS_COMPILE=, and its gcc's compiler id is
 * the build cache's original one (kbuild_compiler_id()). The rest only
 * build coverage compiles for: their boot fields are NULL or 0.
 *
 *   x86_64  qemu-system-x86_64 (KVM when the probe allows), ttyS0,
 *           Debian's busybox-static, the guest programs built with gcc
 *   arm64   qemu-system-aarch64 -M virt -cpu max under TCG, ttyAMA0 (the
 *           virt board's PL011), busybox-static:arm64 unpacked by
 *           `make deps`, the guest programs built with
 *           aarch64-linux-gnu-gcc -static
 *   arm, powerpc, riscv, s390, mips: build coverage only
 *
 * To add an architecture: add its row to karch_table in lib/karch.c
 * (build coverage's order is the table's, so add it last) and bump
 * KARCH_N; the build side needs a Debian cross gcc (add its package to
 * config/debian-packages). One that boots goes after the last row that
 * boots, with all its boot, defconfig and ksft_* fields, its name added
 * to KARCH_BOOT_CHOICES and karch_boot_names(); outside the table it
 * needs only its kernel fragments in config/kernel/VERSION/quick/NAME
 * (and broad/NAME) and its guest's userland (busybox, bash) unpacked by
 * `make deps`. No other file holds a per-arch list: tests/unit/t-karch.c
 * checks that every row is whole and the lists and rows agree.
 */
struct karch {
	const char *name;       /* "x86_64", "arm64": the arches key, a
				 * cell's arch, kbuild's messages */
	const char *srcarch;    /* its directory under arch/: "x86" */
	const char *make_arch;  /* make ARCH=: "x86_64", "arm64" */
	const char *cross;      /* CROSS_COMPILE=; "" for the machine's gcc */
	const char *cross_pkg;  /* the Debian package of CROSSgcc */
	const char *cov_config; /* build coverage's config, as its rows name
				 * it: "arm64 allmodconfig" */

	/* booting it; NULL or 0 for a row build coverage only compiles */
	const char *image;      /* the kernel image in a build directory */
	const char *target;     /* make's target that builds image */
	const char *qemu;       /* the QEMU binary */
	const char *qemu_pkg;   /* its Debian package */
	const char *machine;    /* -M, or NULL for QEMU's default */
	int tcg_only;           /* no KVM probe: another arch's guest */
	const char *tcg_cpu;    /* -cpu under TCG: "max" (arm64's with
				 * QEMU's own pointer-auth algorithm,
				 * pauth-impdef: the same checks, far
				 * faster to emulate than QARMA) */
	const char *console;    /* the kernel's console= device */
	const char *busybox;    /* the static busybox the guest runs */
	const char *busybox_how; /* how to get it, for the error */
	const char *cc;         /* compiles the guest programs, -static */
	const char *cc_pkg;     /* its Debian packages */
	const char *kcidb;      /* KCIDB's architecture name */
	const char *defconfig;  /* its defconfig in a tree, the broad
				 * guest's base (kbuild/guestconf.c) */

	/* its kselftests (qemu-runner/kselftest.c), for a row that boots;
	 * the host's row has NULL where the host's own is meant */
	const char *ksft_target;  /* its own selftests directory, what
				   * another arch's own is built as: "x86" */
	const char *ksft_uapi[2]; /* its uapi sources, in the build's key */
	const char *ksft_sysroot; /* the programs' loader is under it; ""
				   * for the host's */
	const char *ksft_roots[2]; /* host dirs that are the guest's /;
				    * NULL: the host's / */
	const char *ksft_libs[8]; /* where its loader looks, on the host,
				   * NULL-terminated; a cross build's -L */
	const char *ksft_include; /* a cross build's -isystem: the headers
				   * of the libraries its programs link
				   * against (libcap, ...); NULL: none */
	const char *ksft_machine; /* a cross build's MACHINE=: the guest's
				   * `uname -m` as 6.1's vm Makefile spells
				   * it (else it builds the host's) */
	const char *ksft_bash;    /* the guest's bash; NULL: the host's */
};

/* Where `make deps` unpacks Debian's busybox-static:arm64, bash:arm64 and
 * the libraries kselftests link against with their -dev packages (libcap,
 * libcap-ng, libpopt): the arm64 guest's userland root. They are unpacked,
 * not installed: busybox-static and bash conflict with the amd64 packages
 * the x86_64 guest runs, and the guest's files stay in one place. */
#define KARCH_ARM64_ROOT "/usr/local/lib/stableq/arm64"

#define KARCH_N 7
/* Every row, the ones that boot first, x86_64 at [0]. */
extern const struct karch karch_table[KARCH_N];

/* The names of the rows that boot, as config.c's choices of `arches`. */
#define KARCH_BOOT_CHOICES "x86_64|arm64"
/* The same, space-separated, for messages (static). */
const char *karch_boot_names(void);

/*
 * The row that boots named name (NULL or "": x86_64); NULL with
 * err_msg() "arch 'NAME' is not one of: x86_64 arm64" for another name,
 * a row that only build coverage compiles included.
 */
const struct karch *karch_boot_find(const char *name);

/* 1 for the machine's own row (x86_64): no ARCH=, no CROSS_COMPILE=. */
static inline int karch_is_host(const struct karch *a)
{
	return a == &karch_table[0];
}

#endif
