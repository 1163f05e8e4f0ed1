/* runner.h: the boot+tests step of a candidate, from build dir to verdict. */
#ifndef STABLEQ_RUNNER_H
#define STABLEQ_RUNNER_H

#include "console.h"
#include "kselftest.h"
#include "strvec.h"
#include "testset.h"

/*
 * runner_boot() loads the test set, compiles the guest's static test program
 * (badptr, `gcc -static -O2`, only when missing or older than its source),
 * writes the initramfs:
 *
 *   /init                  GUEST_DIR/init
 *   /bin/busybox, /bin/sh  /bin/busybox (Debian busybox-static); sh links to it
 *   /bin/badptr            WORK_DIR/badptr
 *   /lib/modules/X.ko      BUILD_DIR/.../X.ko for each module of a guest test
 *   /etc/stableq/tests     "name<TAB>timeout<TAB>command" per guest test
 *   /etc/stableq/token     a new random token per boot, which /init deletes
 *                          and appends to its markers (console.h)
 *   /kselftest/TARGET/     the built kselftests (kselftest.h), with the
 *                          interpreter and libraries they need at their
 *                          host paths, and /bin/bash if a script needs it
 *   /dev/console (c 5 1), /dev /proc /sys /tmp /etc/stableq /lib/modules /bin
 *
 * chooses the accelerator (qemu_choose_accel(): a cached KVM probe under
 * auto), boots with the hard deadline, and parses the console.
 *
 * Strings in the opts are borrowed. Relative paths are taken from the
 * current directory. One runner at a time per work_dir: the initramfs and
 * the default console log live there.
 */
struct karch;
struct runner_opts {
	const struct karch *arch; /* lib/karch.h; NULL: x86_64. Its
				   * busybox, its compiler for badptr
				   * (WORK_DIR/badptr-ARCH), its QEMU */
	const char *build_dir;   /* the kernel build (O=): modules */
	const char *kernel;      /* NULL: BUILD_DIR/ the arch's image */
	const char *tests_file;  /* config/tests.conf */
	const char *guest_config; /* its sections for this guest only
				   * (testset_for_guest); NULL: all */
	const char *guest_dir;   /* NULL: qemu-runner/guest (init, badptr.c) */
	const char *busybox;     /* NULL: the arch's (/bin/busybox) */
	const char *work_dir;    /* initramfs.cpio, badptr, kvm-probe; made
				  * if missing */
	const char *log_path;    /* the console; NULL: WORK_DIR/console.log */
	const char *accel;       /* auto | tcg | kvm; NULL: auto */
	const char *accel_cache; /* NULL: WORK_DIR/kvm-probe */
	const char *append;      /* more kernel parameters, or NULL */
	const char *const *only; /* boot only these guest tests (and the
				  * host-side ones): testset_select(); NULL:
				  * the whole set */
	size_t nonly;
	const struct kselftest_build *kselftests; /* the kselftest sections'
						   * build, or NULL */
	int memory_mb;           /* 0: 256 */
	int timeout_s;           /* the guest's hard deadline; 0: 300; the
				  * kselftests' timeouts are added to it */
	int probe_timeout_s;     /* the KVM probe's; 0: 20 */
	int boots_max;           /* boots again past a test that stopped
				  * the guest, up to this many boots in all;
				  * 0: RUNNER_BOOTS_MAX, 1: never */
};

/* A guest that stops by itself is booted again at most this often. */
#define RUNNER_BOOTS_MAX 4

/* Owned by the result: runner_result_release() frees it. */
struct runner_result {
	enum run_verdict verdict;
	char *reason;                 /* one line; "" on pass */
	struct console_report report; /* per-test results (report.results) */
	double seconds;               /* the whole step */
	double boot_seconds;          /* QEMU alone */
	double userspace_seconds;     /* of which the kernel's boot, to
				       * "@@stableq userspace" (the rest is
				       * the tests); 0 if never reached */
	double probe_seconds;         /* the KVM probe, 0 when cached */
	int boots;                    /* QEMU boots: 1, more when a test
				       * stopped the guest (runner_boot) */
	const char *accel;            /* "tcg" or "kvm" (static) */
	char *accel_why;              /* how the accelerator was chosen */
	char *log_path;               /* the console log */
	char *initramfs;              /* the archive booted */
	char *qemu_cmdline;
	char token[17];               /* the boot's marker token (console.h):
				       * /init's other blocks, a coverage
				       * boot's gcov data, end with it */
};

/*
 * Returns 0 when the guest ran: r->verdict says pass, fail or hang (a
 * kernel's failure is a verdict, not an error). Returns a negative code when
 * the step could not run, with err_msg() saying why: the test set does not
 * parse (ERR_INVALID, "file:line: ..."), the bzImage, busybox, a module
 * named by the test set or the guest sources are missing (ERR_NOTFOUND;
 * busybox and qemu name their Debian package), badptr does not compile, or
 * QEMU failed before the kernel printed anything (ERR_IO, QEMU's message).
 * r is always initialized; release it.
 */
int runner_boot(const struct runner_opts *o, struct runner_result *r);
void runner_result_release(struct runner_result *r);

/*
 * A retry: the tests that failed run again alone, all of them in one short
 * boot. runner_retry_plan() reads what that boot runs from the names of
 * the failing results (o gives the test set, the guest and the kselftests
 * built, as runner_boot() reads them):
 *
 *   a guest test ("user-copy")              itself
 *   a kselftest's result ("kselftest.T.P",  its test kselftest.T.P, by
 *     "kselftest.T.P.SUB")                  target and name
 *   a KUnit case or suite ("kunit.S.C",     its suite, through
 *     "kunit.S")                            kunit.filter_glob=S (several
 *                                           suites: the glob of their
 *                                           common prefix, "drm_*")
 *   a ktap test ("kunit")                   with the failing suites, or
 *                                           all of built-in KUnit
 *
 * Without a KUnit name, built-in KUnit is off in that boot (as in a resumed
 * boot). Not retried (p->skipped): the boot test, console tests and
 * "kernel-log" judge a whole boot, which a boot of a few tests is not; a
 * kselftest target that did not build is the host's build, not a run.
 * Returns 0 (p filled; runner_retry_release() it) or the test set's error.
 */
struct runner_retry {
	struct strvec only;    /* the guest tests it boots */
	struct strvec suites;  /* the KUnit suites it runs */
	struct strvec ktap;    /* the ktap tests it retries */
	struct strvec retried; /* the failing names it retries */
	struct strvec skipped; /* the failing names it cannot retry alone */
	char *append;          /* kernel parameters (o->append first) */
};
int runner_retry_plan(const struct runner_opts *o, const char *const *failing,
		      size_t n, struct runner_retry *p);
/*
 * 1 if a result of the retry boot is one of what it retried (a retried
 * name, a result of a retried guest test or KUnit suite): only those are
 * its results; the rest of that boot says nothing about the candidate.
 */
int runner_retry_covers(const struct runner_retry *p, const char *name);
/* "user-copy, kunit.list_sort (kunit.filter_glob=list_sort)"; caller frees. */
char *runner_retry_text(const struct runner_retry *p);
void runner_retry_release(struct runner_retry *p);

#endif
