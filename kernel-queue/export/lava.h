/* lava.h: a candidate as a LAVA job definition (qemu device type), for labs that run LAVA. */
#ifndef STABLEQ_LAVA_H
#define STABLEQ_LAVA_H

#include "config.h"

#include <jansson.h>
#include <sqlite3.h>

/*
 * The job boots what stableq booted: the candidate's bzImage from the build
 * directory and the initramfs of its boot (VAR_DIR/guest/initramfs.cpio:
 * /init, busybox, the test programs and modules), both copied to out_dir
 * with their sha256, on LAVA's `qemu` device type (deploy to tmpfs, boot
 * method qemu, the kernel parameters stableq's runner uses).
 *
 * The test set becomes one test action of LAVA monitors, which read the
 * console as stableq's parser does (qemu-runner/guest/README.md), one
 * after the other in the order the console prints:
 *   ktap tests    "kunit": KUnit's "ok N case" / "not ok N case" lines at
 *                 boot
 *   guest tests   "stableq-guest": each "@@stableq end NAME STATUS";
 *                 status 0 passes, any other fails
 *   kselftests    "kselftest": each "@@stableq end kselftest.T.P STATUS"
 *                 after them; 0 passes, 4 (KSFT_SKIP) skips, any other
 *                 fails
 *   console tests (without guest tests) a fail per fail_on substring seen
 *                 before "@@stableq done", a pass at "userspace"
 *
 * The metadata carries the whole test set of tests_file: per test
 * (a kselftest section as each target, kselftest.TARGET) what it is,
 * stableq.test.NAME, and, when the candidate was compared with a run of
 * the branch tip (testcase.h), its result there, stableq.tip.NAME; cases
 * below them that fail or are flaky on the tip too, a known failure
 * marked "fail, expected"; stableq.tip names the tip's run and counts
 * its results.
 *
 * The build directory holds one kernel, the last one built: a candidate
 * whose build is not the last is refused (ERR_CONFLICT, saying to run the
 * candidate again), as is one that was never built (ERR_CONFLICT) or an
 * unknown one (ERR_NOTFOUND).
 */
struct lava_opts {
	long long candidate;
	const char *out_dir;  /* NULL: VAR_DIR/lava/candidate-N (made) */
	const char *url_base; /* where out_dir is served; NULL: file://out_dir */
};

/*
 * Writes out_dir/bzImage, out_dir/initramfs.cpio and out_dir/job.yaml and
 * returns the job's YAML text in *yaml (caller frees). 0 or negative with
 * err_msg().
 */
int lava_job(sqlite3 *db, const struct config *cfg, const struct lava_opts *o,
	     char **yaml);

/*
 * A JSON tree as YAML (block style; strings double-quoted with JSON's
 * escapes, which YAML reads the same). Appended to out.
 */
struct strbuf;

#endif
