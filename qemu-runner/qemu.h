/* qemu.h: one QEMU boot with a deadline, its console in a file; KVM probe. */
#ifndef STABLEQ_QEMU_H
#define STABLEQ_QEMU_H

/*
 * A boot is
 *   qemu-system-x86_64 -nodefaults -nographic -no-reboot -smp 1 -m MEM
 *     -accel ACCEL -cpu (host|max) -kernel BZIMAGE -initrd INITRD
 *     -append "console=ttyS0 panic=-1 oops=panic loglevel=7 EXTRA"
 *     -serial file:CONSOLE_LOG -monitor none
 * run through spawn (its own process group, killed at the deadline). The
 * serial console goes straight to its file, unmixed with QEMU's own messages,
 * which are kept apart in qemu_output. panic=-1 and -no-reboot turn a kernel
 * panic, and the guest's final reboot, into QEMU's exit.
 */
struct karch;
struct qemu_opts {
	const char *qemu;        /* the binary; NULL: the arch's */
	const struct karch *arch; /* lib/karch.h; NULL: x86_64. Another
				   * arch's guest (arm64) boots with its
				   * -M, its console, and TCG always */
	const char *kernel;      /* bzImage */
	const char *initrd;      /* an uncompressed cpio */
	const char *append;      /* more kernel parameters, or NULL */
	const char *accel;       /* "tcg" or "kvm" */
	int memory_mb;           /* 0: 256 */
	int timeout_s;           /* hard deadline; 0: 300 */
	const char *console_log; /* truncated first */
	/*
	 * If set, the boot ends (QEMU killed, on purpose) as soon as the
	 * console holds this text: the KVM probe needs only userspace.
	 */
	const char *stop_at;
	/*
	 * If set (and stop_at is not), the boot goes on when the console
	 * holds this text, and r->mark_seconds says when it did: the time
	 * to userspace of a boot, apart from its tests.
	 */
	const char *mark_at;
};

struct qemu_result {
	int status;        /* QEMU's exit status (128 + signal if killed) */
	int timed_out;     /* killed at the deadline: the guest hung */
	int stopped;       /* stop_at seen and QEMU ended for it */
	double seconds;
	double mark_seconds; /* mark_at seen this long after the start; 0:
			      * never */
	char *cmdline;     /* the command run, for logs (owned) */
	char *qemu_output; /* QEMU's own stdout+stderr, <= 64 KiB (owned) */
};

/*
 * Boots once. Returns 0 when QEMU ran (whatever the guest did: look at r and
 * the console), ERR_NOTFOUND when qemu-system-x86_64 is missing (the message
 * names the Debian package qemu-system-x86) or the kernel or initrd is, or
 * ERR_INVALID/ERR_IO. r is filled in either case; qemu_result_release() it.
 */
int qemu_boot(const struct qemu_opts *o, struct qemu_result *r);
void qemu_result_release(struct qemu_result *r);

/*
 * The accelerator for setting "tcg", "kvm" or "auto". auto probes KVM once:
 * /dev/kvm must open read-write, and a boot of o (with -accel kvm) must print
 * "@@stableq userspace" within probe_timeout_s (0: 20 s). Here /dev/kvm
 * exists but guests hang or abort, so a failed probe means TCG, not an error.
 *
 * The answer is cached in cache_path (NULL: no cache) as one line
 * "ACCEL<TAB>KEY<TAB>WHY", KEY naming the host kernel and the QEMU binary so
 * an upgrade of either probes again.
 *
 * *accel receives "kvm" or "tcg" (static string); *why, if not NULL, a
 * malloc'ed line saying how it was decided ("cached: ...", "probe: ...").
 * *probe_seconds, if not NULL, the probe's time (0 when cached or skipped).
 * Returns 0, or ERR_INVALID for an unknown setting, or what qemu_boot()
 * returns when QEMU itself is missing.
 */
int qemu_choose_accel(const char *setting, const struct qemu_opts *o,
		      int probe_timeout_s, const char *cache_path,
		      const char **accel, char **why, double *probe_seconds);

#endif
