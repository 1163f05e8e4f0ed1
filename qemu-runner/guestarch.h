/* guestarch.h: what booting a guest of one architecture takes (x86_64, arm64), in one table. */
#ifndef STABLEQ_GUESTARCH_H
#define STABLEQ_GUESTARCH_H

/*
 * A branch tests the architectures its `arches` names (kernel-queue/candidates/
 * cell.h); each is a row here with what QEMU, the console and the guest's
 * userland need. The build side (make ARCH=, CROSS_COMPILE=, the image)
 * is kbuild's (kbuild.h). Rows are static; NULL arch means x86_64.
 *
 *   x86_64  qemu-system-x86_64 (KVM when the probe allows), ttyS0,
 *           Debian's busybox-static, the guest programs built with gcc
 *   arm64   qemu-system-aarch64 -M virt -cpu max under TCG, ttyAMA0 (the
 *           virt board's PL011), busybox-static:arm64 unpacked by
 *           `make deps`, the guest programs built with
 *           aarch64-linux-gnu-gcc -static
 */
struct guestarch {
	const char *name;       /* "x86_64", "arm64": the arches key */
	const char *image;      /* the kernel image in a build directory */
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
	const char *cc_pkg;     /* its Debian package */
	const char *kcidb;      /* KCIDB's architecture name */
};

/* The row named name (NULL: x86_64); NULL with err_msg() naming the rows. */
const struct guestarch *guestarch_find(const char *name);
/* The names, space-separated (static). */
const char *guestarch_names(void);

#endif
